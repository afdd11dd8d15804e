"""Hostile inputs, found by machine: every input ends in exit 0 with a consistent result, or in
exit 2 with a one-line error naming the file (and row and field); never a traceback, exit 1, a
hang or an unbounded read.

The families, each a Hypothesis test (or a fixed list of cases) with a fixed seed
(``derandomize``) and a bounded number of cases (CI runs the default, about a minute in all;
more on demand:
``ROCKETLB_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest tests/test_fuzz.py``):

* byte-level and file-level mutation of the shipped traces (truncated and corrupt Parquet and
  CSV, flipped bytes, BOMs, empty files, folders where files belong, links that leave the
  folder or point at a device, deleted files), replayed on the producer and consumer side and
  rewritten by ``rocketlb trace layout``;
* traces built from hostile values (NaN, inf, negative and 2^63 times, wrong column types,
  unordered and duplicate rows, unknown names, unicode and very long strings), replayed by the
  remoting and the gRPC producer (``--client grpc``), the consumers, and the layout;
* scenario files (the gRPC ones among them): mutated shipped scenarios and hostile values,
  TOML's other ways of writing numbers too (``1_0``, ``+4``, ``0x10``); ``load`` accepts or
  names the field, and what it accepts is small enough to run;
* conformance files: mutated vector files, and hostile whole files (devices, pipes, deep
  nesting, huge lines, gzip bombs: each in a child with a memory cap and a timeout);
* sends files whose footer statistics disagree with their rows;
* ``python -m rocketlb_core.docs_cli``'s ``--dir`` and ``--out`` (and ``--check``): folders
  and files that are missing, links, pipes, read-only, not rocketlb's, or named with a NUL, an
  undecodable byte, nothing or too many bytes; each ends with the status its values call for,
  and a refusal changes nothing.

Each case runs the real command's ``main`` in this process under an alarm (a hang fails the
test). The number of cases tried is printed at the end of the run (``conftest.py``).
"""

from __future__ import annotations

import functools
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketlb_core import data_path
from rocketlb_core.atomic import MARKER
from tests import helpers
from tests.helpers import alarm

EXAMPLES = int(os.environ.get("ROCKETLB_FUZZ_EXAMPLES", "500"))
CASE_SECONDS = 60                        # a case taking longer is a hang
TRIED: Counter[str] = Counter()          # reported by conftest.py
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
TRACES = ("seed002-outage", "membership-day", "slow-broker")
TRACE_FILES = ("trace.json", "brokers.csv", "route.csv", "sends.parquet", "conditions.parquet",
               "membership.parquet")
HOSTILE_INTS = [-1, 0, 1, 2**31 - 1, 2**31, 2**53, 2**63 - 1, -(2**63), 10**12]
HOSTILE_FLOATS = [math.nan, math.inf, -math.inf, -1.0, 0.0, 1e-300, 1e300, 5e3, 2.0]
HOSTILE_TEXT = ["", " ", "\ufeffbroker-a", "broker-a\n", "x" * 300, "x" * 100_000, "弹性伸缩",
                "broker-a\x00", "../../etc/passwd", "broker-a", "producer-0", "TopicTest"]


def run_command(argv: list[str]) -> tuple[int, str, str]:
    """``rocketlb ARGV`` in this process under the case alarm: (status, stdout, stderr)."""
    return helpers.run_command(argv, CASE_SECONDS)


def run_side(side: str, folder: Path, out: Path) -> tuple[int, str, str]:
    """``rocketlb replay producer|consumer`` on the trace ``folder``, or ``trace layout``."""
    if side == "layout":
        return run_command(["trace", "layout", str(folder), "--out", str(out)])
    if side == "producer-grpc":           # the gRPC producer replayed on the same trace
        return run_command(["replay", "producer", "--client", "grpc", "--trace", str(folder),
                            "--out", str(out)])
    return run_command(["replay", side, "--trace", str(folder), "--out", str(out)])


def refused(family: str, status: int, stdout: str, stderr: str, folder: Path,
            statuses: tuple[int, ...] = (0, 2)) -> bool:
    """Whether a command run on a ``family`` input refused it (status 2), checked to be one of
    ``statuses`` and, refused, a clear error: one line naming a file in ``folder``, nothing on
    stdout; counted in ``TRIED`` either way."""
    TRIED[family] += 1
    assert "Traceback" not in stderr, stderr[-3000:]
    assert status in statuses, f"status {status}: {stderr[-3000:]}"
    if status != 2:
        return False
    TRIED[f"{family}: refused"] += 1
    assert stderr.startswith("error: "), stderr[:500]
    assert len(stderr.strip().splitlines()) == 1, stderr[:2000]
    assert str(folder) in stderr, stderr[:500]
    assert stdout == ""
    return True


def check_outcome(family: str, status: int, stdout: str, stderr: str, folder: Path,
                  out: Path) -> None:
    """The oracle: 0 with an output, or 2 with a clear error naming a file in ``folder``."""
    if refused(family, status, stdout, stderr, folder):
        assert not out.exists()
        assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}")]
    else:
        assert (out / MARKER).is_file()
        assert (out / "summary.json").is_file() or (out / "trace.json").is_file()


def _replay_consistent(summary: dict[str, Any], trace: Path, out: Path) -> None:
    """A producer replay that succeeded accounts for every send of the trace, once."""
    sends = pq.read_table(out / "sends.parquet")
    assert summary["sends"] == sends.num_rows
    src = trace / "sends.parquet"
    files = sorted(src.glob("*.parquet")) if src.is_dir() else [src]
    assert sends.num_rows == sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    assert sum(summary["failures_by_error"].values()) == summary["failed"]
    assert summary["stored"] + summary["failed"] == summary["sends"]


# ---------------------------------------------------------------- byte and file mutations

def _mutate(rng: Any, path: Path, kind: str) -> None:
    if path.is_dir():
        path = sorted(path.glob("*.parquet"))[0]
    data = path.read_bytes() if path.exists() else b""
    if kind == "truncate":
        path.write_bytes(data[: rng.randrange(len(data) + 1)])
    elif kind == "flip":
        buf = bytearray(data)
        for _ in range(rng.randrange(1, 9)):
            if buf:
                buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(buf))
    elif kind == "bytes":
        buf = bytearray(data)
        at = rng.randrange(len(buf) + 1)
        buf[at:at + rng.randrange(0, 64)] = rng.randbytes(rng.randrange(0, 64))
        path.write_bytes(bytes(buf))
    elif kind == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + data)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "duplicate-lines":
        lines = data.splitlines(keepends=True)
        if lines:
            at = rng.randrange(len(lines))
            path.write_bytes(b"".join([*lines[:at + 1], lines[at], *lines[at + 1:]]))
    elif kind == "folder":
        path.unlink()
        path.mkdir()
        (path / "x").write_text("x")
    elif kind == "delete":
        path.unlink()
    elif kind == "link-out":
        path.unlink()
        path.symlink_to(rng.choice(["/etc/passwd", "/dev/zero", "/dev/urandom", "/proc/self"]))
    elif kind == "fifo":
        path.unlink()
        os.mkfifo(path)


MUTATIONS = ["truncate", "flip", "bytes", "bom", "empty", "duplicate-lines", "folder", "delete",
             "link-out", "fifo"]


@FUZZ
@given(trace=st.sampled_from(TRACES), file=st.sampled_from(TRACE_FILES),
       kind=st.sampled_from(MUTATIONS), rng=st.randoms(use_true_random=False),
       side=st.sampled_from(["producer", "consumer", "layout"]))
def test_mutated_shipped_traces(trace: str, file: str, kind: str, rng: Any, side: str) -> None:
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        folder = Path(tmp) / "trace"
        shutil.copytree(data_path("traces", trace), folder)
        if (folder / file).exists():
            _mutate(rng, folder / file, kind)
        out = Path(tmp) / "out"
        status, stdout, stderr = run_side(side, folder, out)
        check_outcome("mutated trace", status, stdout, stderr, folder, out)
        if status == 0 and side == "producer":
            _replay_consistent(json.loads(stdout), folder, out)


# ---------------------------------------------------------------- traces from hostile values

def _column(draw: Any, values: list[Any], typ: Any, odds: int) -> Any:
    kind = _rarely(draw, st.just("as is"), ["text", "float", "null"], odds)
    try:
        if kind == "text":
            return pa.array([None if v is None else str(v) for v in values], pa.string())
        if kind == "float":
            return pa.array([None if v is None or isinstance(v, str) else float(v)
                             for v in values], pa.float64())
        if kind == "null":
            return pa.nulls(len(values))
        return pa.array(values, typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, ValueError, TypeError):
        return pa.array([str(v) for v in values], pa.string())


def _rarely(draw: Any, valid: Any, hostile: list[Any], odds: int) -> Any:
    """A valid value, or one time in ``odds`` (0: never) a hostile one."""
    if odds and draw(st.integers(0, odds - 1)) == 0:
        return draw(st.sampled_from(hostile))
    return draw(valid)


@st.composite
def hostile_traces(draw: Any) -> dict[str, Any]:
    """A small trace; how hostile is drawn first (0: valid values only), so that some cases
    are valid and replayed, and the rest carry a few hostile values among valid ones."""
    odds = draw(st.sampled_from([0, 0, 200, 50, 10, 3]))
    brokers = draw(st.lists(st.sampled_from(["broker-a", "broker-b", "broker-c"]),
                            min_size=1, max_size=3, unique=True))
    if _rarely(draw, st.just(False), [True], odds):
        brokers.append(draw(st.sampled_from(["x" * 300, "\ufeffbroker-a", "b,c", "弹性"])))
    n = _rarely(draw, st.integers(1, 40), [0], odds)
    producers = draw(st.lists(st.sampled_from(["p0", "p1", "弹性"]), min_size=1, max_size=3,
                              unique=True))
    if _rarely(draw, st.just(False), [True], odds):
        producers.append(draw(st.sampled_from(["x" * 300, "", "p\n", "p\x00"])))
    times = [_rarely(draw, st.integers(0, 600_000), HOSTILE_INTS, odds) for _ in range(n)]
    owner = [producers[i % len(producers)] for i in range(n)]
    if _rarely(draw, st.just(True), [False], odds):      # in order, one producer after another
        order = sorted(range(n), key=lambda i: (owner[i], times[i]))
        times, owner = [times[i] for i in order], [owner[i] for i in order]
    sends = {"time_ms": times, "producer": owner,
             "topic": [_rarely(draw, st.just("T"), ["Other", None, ""], odds) for _ in range(n)],
             "key": [draw(st.sampled_from([None, "k", "弹性" * 100])) for _ in range(n)],
             "size": [_rarely(draw, st.just(1024), [0, -5, 2**40], odds) for _ in range(n)]}
    m = _rarely(draw, st.integers(1, 8), [0], odds)
    ctimes = sorted(_rarely(draw, st.integers(0, 600_000), HOSTILE_INTS, odds) for _ in range(m))
    kinds = [_rarely(draw, st.sampled_from(["latency", "down", "up", "partition", "heal"]),
                     ["meteor", ""], odds) for _ in range(m)]
    conditions = {
        "time_ms": ctimes,
        "broker": [_rarely(draw, st.sampled_from(brokers), ["ghost"], odds) for _ in range(m)],
        "client": [draw(st.sampled_from(producers)) if k in ("partition", "heal")
                   else _rarely(draw, st.none(), ["p0"], odds) for k in kinds],
        "kind": kinds,
        "mode": [draw(st.sampled_from(["clean", "silent"])) if k == "down"
                 else _rarely(draw, st.none(), ["sideways"], odds) for k in kinds],
        "median_ms": [_rarely(draw, st.floats(0.5, 5000.0), HOSTILE_FLOATS, odds)
                      if k == "latency" else None for k in kinds],
        "p99_ms": [_rarely(draw, st.floats(0.5, 20000.0), [*HOSTILE_FLOATS, None], odds)
                   if k == "latency" else None for k in kinds]}
    k = _rarely(draw, st.integers(1, 6), [0], odds)
    mtimes = sorted(draw(st.lists(st.integers(0, 600_000), min_size=k, max_size=k)))
    membership = {
        "time_ms": mtimes, "group": ["G"] * k,
        "member": [draw(st.sampled_from(["c0", "c1", "c2"])) for _ in range(k)],
        "client_id": [_rarely(draw, st.sampled_from(["10.0.0.1@1", "10.0.0.2@1"]),
                              ["x" * 300], odds) for _ in range(k)],
        "event": [_rarely(draw, st.sampled_from(["join", "join", "leave", "crash"]), ["wave"],
                          odds) for _ in range(k)],
        "room": ["room-1"] * k}
    meta: dict[str, Any] = {
        "format": "rocketlb-trace", "version": 1, "name": "fuzz", "topic": "T", "start_ms": 0,
        "end_ms": _rarely(draw, st.integers(0, 700_000), [-1, 2**63, 10**10], odds),
        "fault_tolerance": {p: draw(st.booleans()) for p in producers},
        "groups": {"G": {"consume_rate_per_s": _rarely(
            draw, st.floats(1.0, 1e5), [0.0, math.nan, math.inf, 1e308], odds)}}}
    extra = _rarely(draw, st.sampled_from([None, ("line", "5.3.3"), ("line", "4.7.1")]),
                    [("colour", "red"), ("line", "4.2.0"), ("seed", -3)], odds)
    if extra is not None:
        meta[extra[0]] = extra[1]
    queues = _rarely(draw, st.integers(1, 8), [0, 1025, -1, 2**70], odds)
    return {"brokers": brokers, "sends": sends, "conditions": conditions,
            "membership": membership if k else None, "meta": meta, "queues": queues,
            "odds": odds}


def _write_hostile(folder: Path, t: dict[str, Any], draw: Any) -> None:
    folder.mkdir()
    (folder / "trace.json").write_text(json.dumps(t["meta"]))
    (folder / "brokers.csv").write_text("cluster,broker_name,broker_id,address,room\n" + "".join(
        f'C,"{b}",0,10.0.0.{i}:10911,room-1\n' for i, b in enumerate(t["brokers"])))
    (folder / "route.csv").write_text("topic,broker_name,read_queue_nums,write_queue_nums,perm\n"
                                      + "".join(f'T,"{b}",{t["queues"]},{t["queues"]},6\n'
                                                for b in t["brokers"]))
    types = {"time_ms": pa.int64(), "size": pa.int32(), "median_ms": pa.float64(),
             "p99_ms": pa.float64()}
    for name in ("sends", "conditions", "membership"):
        cols = t[name]
        if cols is None:
            continue
        table = pa.table({c: _column(draw, v, types.get(c, pa.string()), t["odds"])
                          for c, v in cols.items()})
        pq.write_table(table, folder / f"{name}.parquet")


@FUZZ
@given(t=hostile_traces(), data=st.data(), side=st.sampled_from(["producer", "consumer",
                                                                  "layout", "producer-grpc"]))
def test_traces_of_hostile_values(t: dict[str, Any], data: Any, side: str) -> None:
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        folder = Path(tmp) / "trace"
        _write_hostile(folder, t, data.draw)
        out = Path(tmp) / "out"
        status, stdout, stderr = run_side(side, folder, out)
        check_outcome("hostile trace", status, stdout, stderr, folder, out)
        if status == 0 and side == "producer":
            _replay_consistent(json.loads(stdout), folder, out)


# ---------------------------------------------------------------- scenarios

SCENARIOS = sorted(p.name for p in data_path("scenarios").glob("*.toml"))
HOSTILE_TOML = ["-1", "0", "1e308", "nan", "inf", "-inf", "9223372036854775807", '"fast"',
                "[]", "{}", "true", '"' + "x" * 400 + '"', "[1, [2, [3]]]", '"弹性"',
                "1_0", "+4", "0x10", "0o17", "0b101", "30_00", "+inf"]   # TOML's other numbers


@FUZZ
@given(name=st.sampled_from(SCENARIOS), rng=st.randoms(use_true_random=False),
       how=st.sampled_from(["value", "value", "bytes", "truncate", "unknown key"]))
def test_mutated_scenarios(name: str, rng: Any, how: str) -> None:
    """A mutated scenario loads, or is refused naming the file; what loads is within the
    bounds, so its run is bounded too (the run itself is exercised by test_simulate)."""
    from rocketlb_core.limits import MAX_SIM_MESSAGES
    from rocketlb_core.sim.scenario import ScenarioError, load

    text = data_path("scenarios", name).read_text()
    lines = text.splitlines()
    if how == "value":
        at = [i for i, line in enumerate(lines) if "=" in line and not line.startswith("#")]
        i = rng.choice(at)
        lines[i] = lines[i].split("=", 1)[0] + "= " + rng.choice(HOSTILE_TOML)
        text = "\n".join(lines)
    elif how == "unknown key":
        at = [i for i, line in enumerate(lines) if line.startswith("[")] or [0]
        i = rng.choice(at)
        lines.insert(i + 1, "colour_of_the_sky = 1")
        text = "\n".join(lines)
    elif how == "bytes":
        buf = bytearray(text.encode())
        for _ in range(rng.randrange(1, 6)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        text = buf.decode("utf-8", "replace")
    else:
        text = text[: rng.randrange(len(text))]
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        path = Path(tmp) / name
        path.write_text(text)
        TRIED["scenario"] += 1
        with alarm(CASE_SECONDS):
            try:
                sc = load(path)
            except ScenarioError as exc:
                message = str(exc)
            else:
                message = ""
        if message:
            TRIED["scenario: refused"] += 1
            assert str(path) in message
            if how == "unknown key":
                assert "colour_of_the_sky" in message or "TOML" in message
            return
        sent = sum(p.rate_per_s * (sc.duration_ms - p.start_ms) / 1000 for p in sc.producers)
        assert sent <= MAX_SIM_MESSAGES


# ---------------------------------------------------------------- conformance files

VECTORS = sorted(p.name for p in (Path(__file__).parent / "vectors").glob("*.gz"))


@FUZZ
@given(name=st.sampled_from(VECTORS), rng=st.randoms(use_true_random=False),
       kind=st.sampled_from(["truncate", "flip", "bytes", "empty", "duplicate-lines"]))
def test_mutated_conformance_files(name: str, rng: Any, kind: str) -> None:
    import gzip

    lines = gzip.decompress((Path(__file__).parent / "vectors" / name).read_bytes()).splitlines(
        keepends=True)
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        path = Path(tmp) / name.removesuffix(".gz")
        path.write_bytes(b"".join(lines[:3]))
        _mutate(rng, path, kind)
        status, _stdout, stderr = run_command(["conformance", str(path)])
        TRIED["conformance file"] += 1
        assert "Traceback" not in stderr, stderr[-3000:]
        assert status in (0, 2, 3), f"status {status}: {stderr[-3000:]}"
        if status == 2:
            assert str(path) in stderr


@pytest.fixture(autouse=True, scope="module")
def _memory_stays_bounded() -> Iterator[None]:
    """No case may balloon memory: the whole module's peak RSS stays under 4 GiB."""
    yield
    import resource

    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 4 * 2**20   # KiB


# ---------------------------------------------------------------- conformance files: whole files

def _capped(argv: list[str], memory: int = 2 << 30, seconds: int = 120
            ) -> subprocess.CompletedProcess[str]:
    """``python -m rocketlb_core ARGV`` in a child with its address space capped at ``memory``
    and a timeout: a case that reads without end fails the test, not the machine."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run([sys.executable, "-m", "rocketlb_core", *argv], capture_output=True,
                          text=True, timeout=seconds, preexec_fn=limit,
                          cwd=Path(__file__).parent.parent)


def _gzip_of(path: Path, chunk: bytes, times: int) -> None:
    """``times`` copies of ``chunk``, gzipped a chunk at a time (a 1 GiB bomb in ~1 MiB)."""
    import zlib

    z = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    with path.open("wb") as f:
        for _ in range(times):
            f.write(z.compress(chunk))
        f.write(z.flush())


def _hostile_vector_file(tmp: Path, kind: str) -> Path:
    """A whole conformance file of the hostile ``kind`` (``HOSTILE_VECTOR_FILES``)."""
    import gzip
    import socket

    from rocketlb_core.limits import MAX_VECTOR_BYTES

    if kind == "device":
        return Path("/dev/zero")
    path = tmp / "vectors.jsonl"
    record = gzip.decompress((Path(__file__).parent / "vectors" / "producer-4.9.8.jsonl.gz")
                             .read_bytes()).split(b"\n", 1)[0] + b"\n"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    elif kind == "link to a device":
        path.symlink_to("/dev/urandom")
    elif kind == "link loop":
        path.symlink_to(path.name)
    elif kind == "deep arrays":
        path.write_bytes(record + b"[" * 100_000 + b"]" * 100_000 + b"\n")
    elif kind == "deep objects":
        path.write_bytes(b'{"a": ' * 100_000 + b"1" + b"}" * 100_000)
    elif kind == "deep inside a record":           # parses; the record's walk must not recurse
        path.write_bytes(b'{"steps": [], "message_queues": ' + b"[" * 900 + b"]" * 900 + b"}\n")
    elif kind == "huge line":
        path.write_bytes(record + b'{"steps": "' + b"x" * (64 << 20) + b'"}\n')
    elif kind == "huge number":
        path.write_bytes(b'{"steps": ' + b"9" * (8 << 20) + b"}\n")
    elif kind == "gzip bomb":                      # 1 GiB of newlines in about 1 MiB
        path = tmp / "vectors.jsonl.gz"
        _gzip_of(path, b"\n" * (1 << 20), 1024)
    elif kind == "gzip bomb of records":
        path = tmp / "vectors.jsonl.gz"
        _gzip_of(path, record * ((1 << 20) // len(record)), 1024)
    elif kind == "blank lines within the bound":   # 256 MiB of newlines: skipped at C speed
        path = tmp / "vectors.jsonl.gz"
        _gzip_of(path, b"\n" * (1 << 20), 256)
    elif kind == "sparse, over the bound":
        with path.open("wb") as f:
            f.truncate(MAX_VECTOR_BYTES + 1)
    elif kind == "truncated gzip":
        path = tmp / "vectors.jsonl.gz"
        path.write_bytes(gzip.compress(record * 100)[:-20])
    elif kind == "garbage after gzip":
        path = tmp / "vectors.jsonl.gz"
        path.write_bytes(gzip.compress(record) + b"garbage")
    elif kind == "utf-16":
        path.write_bytes(record.decode().encode("utf-16"))
    elif kind == "nul bytes":
        path.write_bytes(b"\0" * 4096)
    return path


HOSTILE_VECTOR_FILES = (           # each refused: exit 2, one line naming the file
    "device", "fifo", "folder", "socket", "link to a device", "link loop", "deep arrays",
    "deep objects", "deep inside a record", "huge line", "huge number", "gzip bomb",
    "gzip bomb of records", "blank lines within the bound", "sparse, over the bound",
    "truncated gzip", "garbage after gzip", "utf-16", "nul bytes")


@pytest.mark.parametrize("kind", sorted(HOSTILE_VECTOR_FILES))
def test_hostile_conformance_files(kind: str, tmp_path: Path) -> None:
    """Whole files no mutation of a vector file makes: devices, pipes, folders, sockets,
    links, nesting past the recursion limit, huge lines and numbers, gzip bombs (the bound is
    on the bytes as read, counted while decompressing), a sparse file over the bound. Each runs
    in a child capped at 2 GiB of address space and 120 s."""
    path = _hostile_vector_file(tmp_path, kind)
    proc = _capped(["conformance", str(path)])
    TRIED["conformance file (whole)"] += 1
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    TRIED["conformance file (whole): refused"] += 1
    assert proc.stderr.startswith("error: "), proc.stderr[:500]
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr[:2000]
    assert str(path) in proc.stderr
    assert proc.stdout == ""


# ---------------------------------------------------------------- traces: lying footers

LYING_COLUMNS = {                  # strings of the shown values' length: the footer fits both
    "producer": ["producer-2", "producer\x1b1", "producer\x00x", "producer-1"],
    "topic": ["TopicTesX", "Topic\nTes", "TopicTest"],
    "size": [-1, -(2**31), 0, 2**31 - 1],
    "time_ms": [-1, -(10**15), 2**63 - 1, 2_678_400_001, 0, 10**12]}


@settings(FUZZ, max_examples=min(EXAMPLES, 150))
@given(column=st.sampled_from(sorted(LYING_COLUMNS)), data=st.data(),
       rows=st.lists(st.integers(0, 14_999), min_size=1, max_size=3, unique=True))
def test_footers_that_disagree_with_their_rows(column: str, data: Any, rows: list[int]
                                               ) -> None:
    """The shipped trace's rows with a few values changed under the original footer (its
    statistics say the values are fine): ``validate --rows`` and the replay agree, and what
    is accepted is replayed as the rows say, never as the footer says."""
    from tests.test_hostile_reads import lying_sends

    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        folder = Path(tmp) / "trace"
        shutil.copytree(data_path("traces", "seed002-outage"), folder)
        sends = folder / "sends.parquet"
        shown = pq.read_table(sends)
        i = shown.schema.get_field_index(column)
        values = shown.column(i).to_pylist()
        for row in rows:
            values[row] = data.draw(st.sampled_from(LYING_COLUMNS[column]))
        real = shown.set_column(i, shown.schema.field(i),
                                pa.array(values, shown.schema.field(i).type))
        lying_sends(sends, real, shown)
        out = Path(tmp) / "out"
        checked = run_command(["trace", "validate", str(folder), "--rows"])
        status, stdout, stderr = run_side("producer", folder, out)
        check_outcome("lying footer", status, stdout, stderr, folder, out)
        assert checked[0] == status, (checked[2], stderr)
        if status == 0:
            _replay_consistent(json.loads(stdout), folder, out)
            got = pq.read_table(out / "sends.parquet", columns=["producer"])
            assert got.column(0).to_pylist() == real.column("producer").to_pylist()
        else:                            # the same file and field (maybe another bad row)
            assert checked[2].split(", row")[0] == stderr.split(", row")[0], (checked, stderr)
            assert checked[2].split("field ")[1].split(":")[0] == \
                stderr.split("field ")[1].split(":")[0], (checked, stderr)


# ---------------------------------------------------------------- docs_cli's options

DOCS_DIRS = (                      # what --dir names (each made in the case's tmp folder)
    "folder", "folder", "folder", "named with a new line and an escape", "read-only",
    "missing", "under a file", "a file", "link to a folder", "dangling link", "fifo",
    "NUL", "long name", "not UTF-8", "empty")
DOCS_BAD_DIRS = {"missing", "under a file", "a file", "link to a folder", "dangling link",
                 "fifo", "NUL", "long name", "not UTF-8", "empty"}
DOCS_PAGES = ("absent", "ours", "stale")   # what a page's place holds, valid ...
DOCS_HOSTILE_PAGES = ("hand-written", "binary", "huge", "link to a file", "folder", "fifo")
DOCS_NOT_PAGES = {"link to a file", "folder", "fifo"}   # refused, --check too
DOCS_NOT_OURS = {"hand-written", "binary"}              # refused by a write; stale to --check
DOCS_OUTS = (                      # what --out names
    "new", "ours", "stale", "named with a new line and an escape", "hand-written", "folder",
    "link to a file", "dangling link", "fifo", "missing folder", "under a file", "NUL",
    "long name", "too long for its temporary file", "empty", "not UTF-8")
DOCS_OUT_STATUS = {                # (write, --check): exit status each must end with
    "new": (0, 1), "ours": (0, 0), "stale": (0, 1),
    "named with a new line and an escape": (0, 1), "hand-written": (2, 1),
    "too long for its temporary file": (2, 1)}
HAND_WRITTEN = "# Strategies\n\nmy own notes, which docs_cli did not write\n"
EARLIER_PAGE = ("# A page docs_cli no longer makes\n\n<!-- Generated by `python -m "
                "rocketlb_core.docs_cli` from an older registry: do not edit by hand. -->\n")


@functools.cache
def _docs_texts() -> dict[str, str]:
    """Every page ``docs_cli`` makes, by file name (made once: the registries do not change
    within a run)."""
    from rocketlb_core import docs_cli

    return {name: make() for name, make in docs_cli.pages().items()}


def _tree(root: Path) -> dict[bytes, tuple[str, Any]]:
    """Every path under ``root``, links not followed, as bytes: a file's bytes, a link's
    target, a folder's permissions, or another kind's type."""
    import stat

    out: dict[bytes, tuple[str, Any]] = {}
    top = os.fsencode(root)
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            p = os.path.join(folder, name)
            st_ = os.lstat(p)
            rel = os.path.relpath(p, top)
            if stat.S_ISLNK(st_.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISREG(st_.st_mode):
                with open(p, "rb") as f:
                    out[rel] = ("file", f.read())
            elif stat.S_ISDIR(st_.st_mode):
                out[rel] = ("folder", st_.st_mode & 0o777)
            else:
                out[rel] = ("other", stat.S_IFMT(st_.st_mode))
    return out


def _docs_page(path: Path, kind: str, text: str, tmp: Path) -> None:
    """Put at ``path`` what a page's place holds (``DOCS_PAGES``, ``DOCS_HOSTILE_PAGES``)."""
    from rocketlb_core.docs_cli import mark
    from rocketlb_core.limits import MAX_PAGE_BYTES

    if kind == "ours":
        path.write_text(text, encoding="utf-8")
    elif kind == "stale":                  # begins as the page does: a page of an older run
        path.write_text(mark(text) + ": an older page\n", encoding="utf-8")
    elif kind == "huge":                   # the same, past what --check reads
        path.write_bytes(mark(text).encode() + b":" + b"x" * MAX_PAGE_BYTES + b"\n")
    elif kind == "hand-written":
        path.write_text(HAND_WRITTEN, encoding="utf-8")
    elif kind == "binary":
        path.write_bytes(b"\xff\xfe\x00\x1b[2J" + os.urandom(64))
    elif kind == "link to a file":         # a file of the user's, outside the folder
        (tmp / "secret.md").write_text(HAND_WRITTEN, encoding="utf-8")
        path.symlink_to(tmp / "secret.md")
    elif kind == "folder":
        path.mkdir()
        (path / "x").write_text("x")
    elif kind == "fifo":
        os.mkfifo(path)


def _docs_dir(tmp: Path, kind: str) -> str:
    """What ``--dir`` names for ``kind`` (``DOCS_DIRS``), made under ``tmp``."""
    if kind in ("folder", "read-only"):
        (tmp / "guide").mkdir()
        return str(tmp / "guide")
    if kind == "named with a new line and an escape":
        (tmp / "gu\nide\x1b[2J").mkdir()
        return str(tmp / "gu\nide\x1b[2J")
    if kind == "missing":
        return str(tmp / "no" / "guide")
    if kind in ("under a file", "a file"):
        (tmp / "f").write_text("a file of the user's\n")
        return str(tmp / "f" / "guide") if kind == "under a file" else str(tmp / "f")
    if kind == "link to a folder":         # leads out of what was named
        (tmp / "outside").mkdir()
        (tmp / "outside" / "notes.md").write_text(HAND_WRITTEN)
        (tmp / "guide").symlink_to(tmp / "outside")
        return str(tmp / "guide")
    if kind == "dangling link":
        (tmp / "guide").symlink_to(tmp / "nowhere")
        return str(tmp / "guide")
    if kind == "fifo":
        os.mkfifo(tmp / "guide")
        return str(tmp / "guide")
    if kind == "NUL":
        return str(tmp / "gu\0ide")
    if kind == "long name":
        return str(tmp / ("g" * 300))
    if kind == "not UTF-8":
        os.mkdir(os.fsencode(tmp) + b"/\xffguide")
        return os.fsdecode(os.fsencode(tmp) + b"/\xffguide")
    assert kind == "empty"
    return ""


def _docs_out(tmp: Path, kind: str) -> str:
    """What ``--out`` names for ``kind`` (``DOCS_OUTS``), made under ``tmp``."""
    ref = tmp / "ref.md"
    text = _docs_texts()["cli-reference.md"]
    simple = {"new": "absent", "ours": "ours", "stale": "stale", "hand-written": "hand-written",
              "folder": "folder", "link to a file": "link to a file", "fifo": "fifo"}
    if kind in simple:
        _docs_page(ref, simple[kind], text, tmp)
        return str(ref)
    if kind == "named with a new line and an escape":
        return str(tmp / "r\nef\x1b[2J.md")
    if kind == "dangling link":
        ref.symlink_to(tmp / "nowhere.md")
        return str(ref)
    if kind == "missing folder":
        return str(tmp / "no" / "ref.md")
    if kind == "under a file":
        (tmp / "f").write_text("a file of the user's\n")
        return str(tmp / "f" / "ref.md")
    if kind == "NUL":
        return str(tmp / "r\0ef.md")
    if kind == "long name":
        return str(tmp / ("r" * 300))
    if kind == "too long for its temporary file":   # fits a name; its temporary file does not
        return str(tmp / ("r" * 245 + ".md"))
    if kind == "not UTF-8":
        return os.fsdecode(os.fsencode(tmp) + b"/\xffref.md")
    assert kind == "empty"
    return ""


def run_docs_cli(argv: list[str]) -> tuple[int, str, str]:
    """``python -m rocketlb_core.docs_cli ARGV`` in this process under the case alarm:
    (status, stdout, stderr)."""
    import contextlib
    import io

    from rocketlb_core.docs_cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), alarm(CASE_SECONDS):
        try:
            status = main(argv)
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def docs_cli_case(option: str, kind: str, check: bool, pages: dict[str, str],
                  notes: bool = False, orphan: bool = False) -> None:
    """One case of the family: ``python -m rocketlb_core.docs_cli [--check]`` with ``option``
    (``--dir``, ``--out`` or ``both``) naming a ``kind`` of ``DOCS_DIRS`` or ``DOCS_OUTS``; for
    an existing ``--dir`` folder, each page's place holding its kind of ``pages`` (of
    ``DOCS_PAGES`` and ``DOCS_HOSTILE_PAGES``), with a hand-written page (``notes``) and a page
    of an earlier run (``orphan``) beside them. The oracle: the status the values call for, 0
    (written, or current), 1 (``--check``: a page missing or differing, each named on a line)
    or 2 with one line naming the option and the path; a refusal and ``--check`` change no
    file, a write changes only the pages, each now whole, and replaces no file rocketlb did not
    write."""
    from rocketlb_core.docs_cli import mark

    texts = _docs_texts()
    family = "docs_cli options"
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as name:
        tmp = Path(name)
        if option == "--out":
            value = _docs_out(tmp, kind)
            argv = ["--out", value]
            expect = DOCS_OUT_STATUS.get(kind, (2, 2))[check]
            targets = {value: texts["cli-reference.md"]} if expect == 0 and not check else {}
            pages, notes, orphan = {}, False, False
        else:
            value = _docs_dir(tmp, kind)
            argv = ["--dir", value] + (["--out", str(tmp / "ref.md")] if option == "both"
                                      else [])
            if kind in DOCS_BAD_DIRS:
                pages, notes, orphan = {}, False, False
            for page, page_kind in pages.items():
                _docs_page(Path(value) / page, page_kind, texts[page], tmp)
            if notes:
                (Path(value) / "notes.md").write_text(HAND_WRITTEN)
            if orphan:
                (Path(value) / "old-page.md").write_text(EARLIER_PAGE)
            kinds = set(pages.values())
            if option == "both" or kind in DOCS_BAD_DIRS or kinds & DOCS_NOT_PAGES:
                expect = 2
            elif check:
                expect = 1 if kinds - {"ours"} or orphan else 0
            elif kinds & DOCS_NOT_OURS:
                expect = 2
            elif kind == "read-only" and os.geteuid() != 0 and kinds != {"ours"}:
                expect = 2                 # (root writes there all the same)
            else:
                expect = 0
            targets = ({os.path.join(value, p): t for p, t in texts.items()}
                       if expect == 0 and not check else {})
        if check:
            argv.insert(0, "--check")
        if kind == "read-only":
            os.chmod(value, 0o555)
        before = _tree(tmp)
        try:
            status, stdout, stderr = run_docs_cli(argv)
            after = _tree(tmp)
        finally:
            if kind == "read-only":
                os.chmod(value, 0o755)
        TRIED[family] += 1
        assert "Traceback" not in stderr, stderr[-3000:]
        assert "internal error" not in stderr, stderr[-3000:]
        assert stdout == ""
        assert "\x1b" not in stderr
        assert status == expect, (argv, pages, orphan, status, stderr[-2000:])
        if status == 2:
            TRIED[f"{family}: refused"] += 1
            assert stderr.startswith("error: "), stderr[:500]
            assert len(stderr.strip().splitlines()) == 1, stderr[:2000]
            named = "--dir" if option == "--dir" else "--out"
            assert named in stderr, stderr
            assert str(tmp) in stderr or option == "both" or value == "", stderr
        else:                              # every line names a page of the case, one a line
            assert all(str(tmp) in line for line in stderr.splitlines()), stderr
        # --check and a refusal change nothing; a write only the pages, each now whole
        written = {os.path.relpath(os.fsencode(p), os.fsencode(tmp)): t
                   for p, t in targets.items()}
        assert {k: v for k, v in after.items() if k not in written} == \
            {k: v for k, v in before.items() if k not in written}, (argv, pages, stderr)
        for rel, text in written.items():
            assert after[rel] == ("file", text.encode("utf-8")), rel
            was = before.get(rel)           # replaced only where nothing was, or a page of its
            assert was is None or (was[0] == "file" and was[1].startswith(mark(text).encode())
                                   ), (rel, was)


DOCS_CASES = sorted({("--dir", k) for k in DOCS_DIRS} | {("--out", k) for k in DOCS_OUTS}
                    | {("both", "folder")} | {("--dir", f"folder, a page: {k}")
                                             for k in DOCS_HOSTILE_PAGES})


@pytest.mark.parametrize("check", [False, True], ids=["write", "check"])
@pytest.mark.parametrize(("option", "kind"), DOCS_CASES)
def test_docs_cli_hostile_options(option: str, kind: str, check: bool) -> None:
    """Every hostile value of ``--dir`` and ``--out`` once, writing and ``--check``ing: each
    kind of ``DOCS_DIRS`` (its pages stale), ``DOCS_OUTS``, and each hostile page
    (``DOCS_HOSTILE_PAGES``) after a stale one (a refusal must come before any write), with a
    hand-written page and an earlier generated one beside them (``docs_cli_case``)."""
    texts = _docs_texts()
    if kind.startswith("folder, a page: "):
        hostile = kind.removeprefix("folder, a page: ")
        pages = {p: hostile if p == "verdicts.md" else "stale" for p in texts}
        docs_cli_case(option, "folder", check, pages, notes=True, orphan=True)
    else:
        docs_cli_case(option, kind, check, dict.fromkeys(texts, "stale"))


@settings(FUZZ, max_examples=min(EXAMPLES, 300))
@given(option=st.sampled_from(["--dir"] * 6 + ["--out"] * 3 + ["both"]),
       check=st.booleans(), data=st.data())
def test_docs_cli_options(option: str, check: bool, data: Any) -> None:
    """The family's values drawn together: ``--dir`` and ``--out`` of every kind, and each page
    of an existing ``--dir`` folder current, stale, absent or (how often is drawn first)
    hostile, with or without a hand-written page and an earlier generated page beside them
    (``docs_cli_case``)."""
    if option == "--out":
        kind = data.draw(st.sampled_from(DOCS_OUTS), label="--out")
        docs_cli_case(option, kind, check, {})
        return
    kind = _rarely(data.draw, st.sampled_from(sorted(set(DOCS_DIRS) - DOCS_BAD_DIRS)),
                   sorted(DOCS_BAD_DIRS), 4)   # mostly a folder: its pages are drawn next
    odds = data.draw(st.sampled_from([0, 0, 6, 3]), label="odds")
    pages = {page: _rarely(data.draw, st.sampled_from(DOCS_PAGES), list(DOCS_HOSTILE_PAGES),
                           odds) for page in _docs_texts()}
    docs_cli_case(option, kind, check, pages,
                  notes=data.draw(st.booleans(), label="a hand-written page beside them"),
                  orphan=data.draw(st.booleans(), label="an earlier generated page"))
