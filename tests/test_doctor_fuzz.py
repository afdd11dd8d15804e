"""Hostile inputs for ``rocketlb doctor``, found by machine: each input kind it reads (client and
broker logs, the Go and gRPC Java clients' logs, message-trace dumps from ``data/live``; the
``mqadmin`` outputs of ``data/live/doctor``), mutated at the level of bytes, gzip, lines and
single fields (the mutations of ``tests/test_fuzz_importers.py``), then diagnosed, with and
without ``--skip-bad``.

The oracle: exit 0 (nothing found) or 3 (findings) with a report, or exit 2 with one line that
starts ``error:`` and names the file; never a traceback (exit 1) and never a hang (each case
runs under ``test_fuzz``'s alarm). More cases: ``ROCKETLB_FUZZ_EXAMPLES=5000``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketlb_core import data_path
from tests.test_fuzz import (  # noqa: F401  (the module's memory bound is a fixture)
    EXAMPLES,
    _memory_stays_bounded,
    refused,
    run_command,
)
from tests.test_fuzz_importers import KINDS, _mutate_file, _mutate_text

FUZZ = settings(max_examples=max(20, EXAMPLES // 10), derandomize=True, deadline=None,
                database=None, suppress_health_check=list(HealthCheck))
LOGS = ("membership-day-4/logs/broker-a/broker.log.gz",
        "membership-day-5/logs/broker-b/broker.log.gz",
        "membership-day-4/logs/dup-1/rocketmq_client.log.gz",
        "membership-day-5/logs/other/rocketmq_client.log.gz",
        "producer-outage-4/logs/p-on/rocketmq_client.log.gz",
        "producer-outage-5/msgtrace.jsonl.gz",
        "mixed-go-java-4/logs/gh1/rocketmq-client-go.log.gz",       # the Go client's (issue 47)
        "mixed-go-java-5/logs/g1/rocketmq-client-go.log.gz",
        # the gRPC Java client's, a push consumer of a group with remoting members (issue 47)
        "grpc/grpc-remoting-mixed-5/logs/p1/rocketmq-client.log.gz",
        "grpc/grpc-remoting-mixed-5.5/logs/p1/rocketmq-client.log.gz")
TEXT_KINDS = ["field", "field", "field", "bytes", "truncate", "duplicate", "reorder", "empty",
              "delete", "fifo", "link", "binary"]


def _mqadmin_files() -> list[Path]:
    root = data_path("live") / "doctor"
    return sorted(root.glob("capture-*/*.txt*")) if root.is_dir() else []


def check(family: str, status: int, stdout: str, stderr: str, folder: Path) -> None:
    assert "\x1b" not in stdout + stderr
    if not refused(family, status, stdout, stderr, folder, (0, 2, 3)):
        assert stdout.startswith("rocketlb doctor: read")


def _diagnose(folder: Path, skip_bad: bool, family: str) -> None:
    argv = ["doctor", str(folder)] + (["--skip-bad"] if skip_bad else [])
    status, stdout, stderr = run_command(argv)
    check(family, status, stdout, stderr, folder)


@FUZZ
@given(which=st.sampled_from(LOGS), rng=st.randoms(use_true_random=False),
       kind=st.sampled_from(KINDS), skip_bad=st.booleans())
def test_mutated_logs_and_dumps(which: str, rng: Any, kind: str, skip_bad: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-doctor-") as tmp:
        folder = Path(tmp) / "in"
        folder.mkdir()
        target = folder / Path(which).name
        shutil.copyfile(data_path("live", which), target)
        _mutate_file(rng, target, kind)
        _diagnose(folder, skip_bad, "doctor: logs and dumps")


DAY = ("producer-outage-4/logs/p-on/rocketmq_client.log.gz",
       "producer-outage-4/logs/p-off/rocketmq_client.log.gz",
       "producer-outage-4/msgtrace.jsonl.gz")


@FUZZ
@given(which=st.sampled_from(DAY), rng=st.randoms(use_true_random=False),
       kind=st.sampled_from(KINDS), skip_bad=st.booleans())
def test_mutated_producer_days(which: str, rng: Any, kind: str, skip_bad: bool) -> None:
    """A whole producer day (both producers' logs and the trace: what the doctor replays,
    ``doctor.replayed``), one file mutated: a finding, or one clear line, never a traceback;
    a day that cannot be rebuilt falls back to the core and says why."""
    _mutate_one_of(DAY, which, rng, kind, skip_bad, "doctor: producer days")


def _mutate_one_of(files: tuple[str, ...], which: str, rng: Any, kind: str, skip_bad: bool,
                   family: str) -> None:
    """``files`` (paths under ``data/live``) copied to a folder as they lie there, ``which`` of
    them mutated by ``kind``, and the folder diagnosed."""
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-doctor-") as tmp:
        folder = Path(tmp) / "in"
        for f in files:
            (folder / Path(f).parent).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(data_path("live", f), folder / f)
        _mutate_file(rng, folder / which, kind)
        _diagnose(folder, skip_bad, family)


LOST = Path(__file__).parent / "fixtures" / "live" / "trace-lost-batches-4"
LOST_FILES = ("msgtrace.jsonl.gz", "logs/p2-off/rocketmq_client.log.gz")


@FUZZ
@given(which=st.sampled_from(LOST_FILES), rng=st.randoms(use_true_random=False),
       kind=st.sampled_from(KINDS), skip_bad=st.booleans())
def test_mutated_lost_trace_batches(which: str, rng: Any, kind: str, skip_bad: bool) -> None:
    """A dump that lost most of a batch producer's records and the producer's log that holds
    them (``send trace data failed``: ``tests/fixtures/live/trace-lost-batches-4``), one of
    the two mutated: the lost batches' records are read with the dump's or refused naming the
    log, never a traceback."""
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-doctor-") as tmp:
        folder = Path(tmp) / "in"
        for f in LOST_FILES:
            (folder / Path(f).parent).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(LOST / f, folder / f)
        _mutate_file(rng, folder / which, kind)
        _diagnose(folder, skip_bad, "doctor: lost trace batches")


MIXED = ("grpc/grpc-remoting-mixed-5/logs/p1/rocketmq-client.log.gz",
         "grpc/grpc-remoting-mixed-5/logs/r1/rocketmq_client.log.gz",
         "grpc/grpc-remoting-mixed-5/logs/r2/rocketmq_client.log.gz")


@FUZZ
@given(which=st.sampled_from(MIXED), rng=st.randoms(use_true_random=False),
       kind=st.sampled_from(KINDS), skip_bad=st.booleans())
def test_mutated_mixed_groups(which: str, rng: Any, kind: str, skip_bad: bool) -> None:
    """A group of remoting and gRPC consumers (the gRPC push consumer's log and both remoting
    members', what ``grpc-beside-remoting`` reads; issue 47), one file mutated."""
    _mutate_one_of(MIXED, which, rng, kind, skip_bad, "doctor: mixed groups")


def _mutate_plain(rng: Any, path: Path, kind: str) -> None:
    import os

    if kind == "binary":
        path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4096))))
    elif kind in ("empty", "delete", "fifo", "link"):
        path.unlink()
        if kind == "empty":
            path.write_bytes(b"")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "link":
            path.symlink_to(rng.choice(["/dev/zero", "/dev/urandom", str(path)]))
    else:
        text = path.read_text("utf-8", "surrogateescape")
        path.write_text(_mutate_text(rng, text, kind), "utf-8", "surrogateescape")


@FUZZ
@given(rng=st.randoms(use_true_random=False), which=st.integers(0, 1000),
       kind=st.sampled_from(TEXT_KINDS), skip_bad=st.booleans(), alone=st.booleans())
def test_mutated_mqadmin_outputs(rng: Any, which: int, kind: str, skip_bad: bool,
                                 alone: bool) -> None:
    files = _mqadmin_files()
    if not files:
        return
    src = files[which % len(files)]
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-doctor-") as tmp:
        folder = Path(tmp) / "in"
        folder.mkdir()
        for f in [src] if alone else [g for g in files if g.parent == src.parent]:
            shutil.copyfile(f, folder / f.name)
        if src.name.endswith(".gz"):                       # capture-5's: gzip
            _mutate_file(rng, folder / src.name, rng.choice(KINDS))
        else:
            _mutate_plain(rng, folder / src.name, kind)
        _diagnose(folder, skip_bad, "doctor: mqadmin outputs")
