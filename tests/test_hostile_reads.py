"""Hostile inputs, round two (issue 30), the readers' part: values as read, never only footer
statistics (cases 6 and 17), the sends folder's entries (case 7), and conformance files held to
their bounds (cases 11 and 17).

The lying footers are real Parquet files: the rows of one table under the footer of another
whose data section has the same bytes' layout (no compression, plain encoding, equal-length
values), so every offset in the footer is right and only its statistics disagree with the rows
(``lying_sends``).
"""

from __future__ import annotations

import gzip
import os
import resource
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rocketlb_core import data_path
from rocketlb_core.trace.schema import TraceError
from tests.helpers import run_command

ROOT = Path(__file__).resolve().parent.parent
TRACE = "seed002-outage"               # one file, one row group, producer-1, TopicTest


# ---------------------------------------------------------------- helpers

def rocketlb(*argv: str) -> tuple[int, str, str]:
    """``rocketlb ARGV`` in this process, under an alarm: (status, stdout, stderr)."""
    return run_command(argv, 120)


def capped(argv: list[str], memory: int = 3 << 30, seconds: int = 120
           ) -> subprocess.CompletedProcess[str]:
    """``python -m rocketlb_core ARGV`` in a child with its address space capped at
    ``memory`` bytes and a timeout: a case that would read without end fails, not the machine."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run([sys.executable, "-m", "rocketlb_core", *argv], capture_output=True,
                          text=True, timeout=seconds, preexec_fn=limit, cwd=ROOT)


def refused(status: int, stdout: str, stderr: str, *parts: str) -> None:
    """Exit 2 with one line naming everything in ``parts``."""
    assert status == 2, (status, stderr[-2000:])
    assert stderr.startswith("error: "), stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert "Traceback" not in stderr
    assert stdout == ""
    for part in parts:
        assert part in stderr, (part, stderr)


def lying_sends(path: Path, real: pa.Table, shown: pa.Table) -> None:
    """Write ``real``'s rows to ``path`` under the footer ``shown`` would have: the footer's
    statistics are ``shown``'s, its offsets right for both (asserted)."""
    opts: dict[str, Any] = {"compression": "NONE", "use_dictionary": False,
                            "write_page_index": False}
    lie = path.with_name(path.name + ".lie")
    pq.write_table(real, path, **opts)
    pq.write_table(shown, lie, **opts)
    a, b = path.read_bytes(), lie.read_bytes()
    lie.unlink()
    fa, fb = (int.from_bytes(x[-8:-4], "little") for x in (a, b))
    assert len(a) - fa == len(b) - fb, "the two data sections differ in length"
    path.write_bytes(a[:len(a) - 8 - fa] + b[len(b) - 8 - fb:])
    assert pq.read_table(path).equals(real)                   # the rows are the real ones


def _with(table: pa.Table, column: str, at: int, value: Any) -> pa.Table:
    i = table.schema.get_field_index(column)
    values = table.column(i).to_pylist()
    values[at] = value
    return table.set_column(i, table.schema.field(i), pa.array(values, table.schema.field(i).type))


# the value each case puts in row 6 (row 1 for time_ms) of the data only; same byte length
# as what the footer shows, so the footer's offsets stay right
LIES = {
    "producer": ("producer", 5, "producer-2"),         # another producer's rows
    "control": ("producer", 5, "producer\x1b1"),       # a name with an escape, only in the data
    "topic": ("topic", 5, "TopicTesX"),
    "size": ("size", 5, -1),
    "time": ("time_ms", 0, -10**15),                   # case 17: a first time of -1e15
}


def lying_trace(tmp: Path, case: str) -> tuple[Path, Path]:
    """A copy of the shipped trace whose sends' footer disagrees with one value of its rows."""
    folder = tmp / f"trace-{case}"
    shutil.copytree(data_path("traces", TRACE), folder)
    sends = folder / "sends.parquet"
    shown = pq.read_table(sends)
    column, at, value = LIES[case]
    lying_sends(sends, _with(shown, column, at, value), shown)
    stats = pq.ParquetFile(sends).metadata.row_group(0).column(
        shown.schema.get_field_index(column)).statistics
    assert stats.min >= 0 if column in ("size", "time_ms") else stats.min == stats.max
    return folder, sends


# ---------------------------------------------------------------- case 6 and 17: lying footers

@pytest.mark.parametrize("case", sorted(LIES))
@pytest.mark.parametrize("how", ["validate --rows", "replay producer", "replay consumer"])
def test_a_footer_that_disagrees_with_its_rows_is_refused(tmp_path: Path, case: str,
                                                          how: str) -> None:
    """Before: ``validate --rows`` and the replay agreed with the footer and exited 0 (rows
    replayed as the wrong producer), or the replay failed with an internal error ("the task
    got another file's rows", exit 1). Now every reader checks the values as read."""
    folder, sends = lying_trace(tmp_path, case)
    column, at, _ = LIES[case]
    out = tmp_path / "out"
    if how == "validate --rows":
        result = rocketlb("trace", "validate", str(folder), "--rows")
    else:
        result = rocketlb("replay", how.split()[1], "--trace", str(folder), "--out", str(out))
    refused(*result, str(sends), f"row {at + 1}", f"field {column!r}")
    assert not out.exists()


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(LIES))
def test_the_spark_engine_checks_values_as_read(spark: Any, tmp_path: Path, case: str) -> None:
    from rocketlb_core.replay.config import ReplayConfig
    from rocketlb_core.spark.producer_replay import replay_producers_spark

    folder, sends = lying_trace(tmp_path, case)
    column, at, _ = LIES[case]
    with pytest.raises(TraceError) as info:
        replay_producers_spark(folder, tmp_path / "out", ReplayConfig())
    assert (Path(info.value.path), info.value.row, info.value.field) == (sends, at + 1, column)
    assert not (tmp_path / "out").exists()


def test_a_footer_without_statistics_replays_the_same_bytes(tmp_path: Path) -> None:
    """The checks read values, not statistics: a valid trace written with no statistics at all
    validates and replays to the same bytes as the shipped one."""
    bare = tmp_path / "bare"
    shutil.copytree(data_path("traces", TRACE), bare)
    pq.write_table(pq.read_table(bare / "sends.parquet"), bare / "sends.parquet",
                   write_statistics=False)
    assert pq.ParquetFile(bare / "sends.parquet").metadata.row_group(0).column(0) \
        .statistics is None
    assert rocketlb("trace", "validate", str(bare), "--rows")[0] == 0
    for name, trace in (("a", data_path("traces", TRACE)), ("b", bare)):
        status, _, err = rocketlb("replay", "producer", "--trace", str(trace), "--out",
                                  str(tmp_path / name))
        assert status == 0, err
    for part in ("summary.json", "sends.parquet/part-00000.parquet"):
        assert (tmp_path / "a" / part).read_bytes() == (tmp_path / "b" / part).read_bytes()


# ---------------------------------------------------------------- case 7: the sends folder

def _folder_trace(tmp: Path) -> tuple[Path, Path]:
    """The shipped trace with its sends as a folder of one part file."""
    folder = tmp / "trace"
    shutil.copytree(data_path("traces", TRACE), folder)
    parts = folder / "sends.parquet"
    parts.rename(folder / "sends-file")
    parts.mkdir()
    (folder / "sends-file").rename(parts / "part-00000.parquet")
    return folder, parts


COMMANDS = ["validate", "validate --rows", "replay producer", "replay consumer"]


def _run(how: str, folder: Path, out: Path) -> tuple[int, str, str]:
    if how.startswith("validate"):
        return rocketlb("trace", *how.split()[:1], str(folder), *how.split()[1:])
    return rocketlb("replay", how.split()[1], "--trace", str(folder), "--out", str(out))


def _socket(path: Path) -> None:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(path))
    finally:
        s.close()


@pytest.mark.parametrize("entry", ["fifo", "folder", "socket"])
@pytest.mark.parametrize("how", COMMANDS)
def test_a_sends_entry_that_is_not_a_file_is_refused(tmp_path: Path, entry: str,
                                                     how: str) -> None:
    """Before: a FIFO ``a.parquet`` or a folder ``z.parquet/`` in ``sends.parquet/`` was
    skipped silently (the replay ran without it). Now it is refused, naming it, without
    opening it (a FIFO would block)."""
    folder, parts = _folder_trace(tmp_path)
    bad = parts / ("z.parquet" if entry == "folder" else "a.parquet")
    if entry == "fifo":
        os.mkfifo(bad)
    elif entry == "folder":
        bad.mkdir()
        (bad / "part.parquet").write_bytes((parts / "part-00000.parquet").read_bytes())
    else:
        _socket(bad)
    out = tmp_path / "out"
    refused(*_run(how, folder, out), str(bad), "folder" if entry == "folder" else
            "not a regular file")
    assert not out.exists()


@pytest.mark.parametrize("how", COMMANDS)
def test_links_in_the_sends_folder_are_treated_alike_everywhere(tmp_path: Path,
                                                                how: str) -> None:
    """Before: a link to ``../real.parquet`` (inside the trace folder) passed ``validate`` and
    the replay but ``validate --rows`` refused it. The one rule, for every reader: a link may
    point within the trace folder, never out of it."""
    folder, parts = _folder_trace(tmp_path)
    (parts / "part-00000.parquet").rename(folder / "real.parquet")
    link = parts / "part-00000.parquet"
    link.symlink_to("../real.parquet")
    out = tmp_path / "inside"
    status, _, err = _run(how, folder, out)
    assert status == 0, err
    outside = tmp_path / "elsewhere.parquet"
    (folder / "real.parquet").rename(outside)
    link.unlink()
    link.symlink_to(outside)
    out = tmp_path / "outside"
    refused(*_run(how, folder, out), str(link), "leaves the trace folder")
    assert not out.exists()
    link.unlink()
    link.symlink_to(link.name)                                # a loop
    refused(*_run(how, folder, out), str(link), "loop")


# ---------------------------------------------------------------- cases 11 and 17: conformance

def _vector_lines(n: int) -> bytes:
    lines = gzip.decompress((ROOT / "tests" / "vectors" / "producer-4.9.8.jsonl.gz")
                            .read_bytes()).splitlines(keepends=True)
    return b"".join(lines[:n])


def test_conformance_refuses_a_device_without_reading_it() -> None:
    """Before: ``rocketlb conformance /dev/zero`` read without end (23 GB, killed by the
    kernel; here: MemoryError under the cap, exit 1)."""
    proc = capped(["conformance", "/dev/zero"], memory=2 << 30, seconds=60)
    refused(proc.returncode, proc.stdout, proc.stderr, "/dev/zero", "not a regular file")


@pytest.mark.parametrize("entry", ["fifo", "folder", "socket"])
def test_conformance_refuses_what_is_not_a_regular_file(tmp_path: Path, entry: str) -> None:
    path = tmp_path / "vectors.jsonl"
    if entry == "fifo":
        os.mkfifo(path)                  # before: blocked for ever on open
    elif entry == "folder":
        path.mkdir()
    else:
        _socket(path)
    proc = capped(["conformance", str(path)], seconds=60)
    refused(proc.returncode, proc.stdout, proc.stderr, str(path))


def test_conformance_bounds_the_unpacked_bytes(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound holds for the bytes as read: after gunzip (counted while decompressing), and
    for a plain file. (The limit is lowered here; the fuzzer tries a real 1 GiB bomb.)"""
    from rocketlb_core import limits

    body = _vector_lines(40)
    monkeypatch.setattr(limits, "MAX_VECTOR_BYTES", len(body) - 1)
    for name, data in (("v.jsonl.gz", gzip.compress(body)), ("v.jsonl", body)):
        path = tmp_path / name
        path.write_bytes(data)
        refused(*rocketlb("conformance", str(path)), str(path), "more than" if name.endswith(
            ".gz") else "larger than", str(len(body) - 1))
    monkeypatch.setattr(limits, "MAX_VECTOR_BYTES", len(body))
    for name in ("v.jsonl.gz", "v.jsonl"):
        status, _, err = rocketlb("conformance", str(tmp_path / name))
        assert status == 0, err


def test_conformance_reads_concatenated_gzip_members(tmp_path: Path) -> None:
    body = _vector_lines(6)
    path = tmp_path / "v.jsonl.gz"
    path.write_bytes(gzip.compress(body[:len(body) // 2]) + gzip.compress(body[len(body) // 2:])
                     + b"\0" * 10)
    status, out, err = rocketlb("conformance", str(path))
    assert status == 0, err
    assert '"failed": 0' in out


@pytest.mark.parametrize(("line", "why"), [
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),             # before: RecursionError
    (b'{"steps": ' * 100_000 + b"1" + b"}" * 100_000, "nested too deeply"),
    (b'{"steps": 1' + b"1" * 5000 + b"}", "4300 digits"),               # before: ValueError
])
def test_conformance_names_the_line_of_hostile_json(tmp_path: Path, line: bytes,
                                                    why: str) -> None:
    path = tmp_path / "v.jsonl"
    path.write_bytes(_vector_lines(2) + line + b"\n")
    refused(*rocketlb("conformance", str(path)), str(path), "line 3", why)
    whole = tmp_path / "whole.json"                       # the one-document branch, too
    whole.write_bytes(line)
    refused(*rocketlb("conformance", str(whole)), str(whole), "line 1")
