"""The replay layout of a trace's sends, planned from Parquet footers (no rows are read).

A producer's replay is sequential, so each producer's sends must reach one task, in order,
without a shuffle. The layout that makes this possible (``data/README.md``):

* ``sends.parquet`` is one Parquet file or a folder of them (``*.parquet``, in name order);
* each **row group holds one producer's sends** (a producer may fill several consecutive row
  groups), and a producer's sends are contiguous: one file, one run of row groups;
* within a producer, ``time_ms`` never decreases (checked while replaying).

``plan_sends`` checks all of this from the footers' statistics (columns and types; per row
group: one producer, the trace's topic, no negative time or size, no missing value) and returns
one ``SendsFile`` per file: its runs of (producer, rows). Only when a footer shows a violation
(or has no statistics) is that one row group read, to name the exact row.

The footers serve the planning only: a footer's statistics may disagree with its rows (a broken
or hostile writer), so every reader checks the values again as it reads them, and refuses a file
whose rows are not what its footer planned: ``rocketlb trace validate --rows``
(``rocketlb_core.trace.read.check_sends_file``) and both replay engines
(``rocketlb_core.replay.task.check_values``).

``rocketlb trace layout SRC DST`` (``rocketlb_core.trace.write.relayout``) rewrites a trace
whose sends are in any order into this layout (in memory: for traces that fit in RAM;
``rocketlb_core.trace.generate`` writes large traces in the layout directly).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlb_core.limits import MAX_TIME_MS
from rocketlb_core.trace.schema import (
    SENDS,
    TraceError,
    check_name,
    is_name,
    outside_link,
    regular_file,
)

ROW_GROUP_ROWS = 1 << 20


@dataclass(frozen=True)
class SendsFile:
    """One file of sends: where, how many rows, and its producers' runs in file order."""

    index: int
    path: str
    rows: int
    runs: tuple[tuple[str, int], ...]


def sends_files(trace_dir: Path) -> list[Path]:
    """The trace's sends files: ``sends.parquet`` itself, or the ``*.parquet`` entries inside
    it, in name order. Every one must be a regular file inside the trace folder (a symbolic
    link may point within the folder, never out of it): a pipe, a device, a socket or a folder
    named ``*.parquet`` is refused, never skipped and never opened (``schema.regular_file``)."""
    path = trace_dir / "sends.parquet"
    outside_link(path, trace_dir)
    if path.is_dir():
        files = sorted(path.glob("*.parquet"))
        for p in files:
            regular_file(p, trace_dir)
        if not files:
            raise TraceError(path, None, None, "folder holds no *.parquet file")
        return files
    regular_file(path, trace_dir)
    return [path]


def _first_bad_row(pf: Any, path: Path, rg: int, column: str, start: int, topic: str,
                   one_producer: bool = True) -> None:
    """Read one row group's column and raise for its first bad value (if any);
    ``one_producer``: the row group must hold a single producer (the replay layout)."""
    values = pf.read_row_group(rg, columns=[column]).column(0).to_pylist()
    for k, v in enumerate(values):
        row = start + k + 1
        if v is None:
            raise TraceError(path, row, column, "missing value")
        if column == "topic" and v != topic:
            raise TraceError(path, row, column, f"{v!r} is not the trace's topic")
        if column in ("time_ms", "size") and v < 0:
            raise TraceError(path, row, column, f"negative value {v}")
        if column == "time_ms" and v > MAX_TIME_MS:
            raise TraceError(path, row, column, f"{v} is outside 0..{MAX_TIME_MS} (ms from the "
                             "trace's start, at most 31 days)")
        if column == "producer":
            check_name(path, row, column, v)
        if column == "producer" and one_producer and v != values[0]:
            raise TraceError(path, row, column,
                             f"row group {rg} holds producers {values[0]!r} and {v!r}: the "
                             "replay needs one producer per row group (rewrite the trace with "
                             "`rocketlb trace layout`)")


def read_any_order(trace_dir: Path, topic: str) -> Any:
    """All the sends of a trace whose sends may be in any order, checked value by value (for
    ``layout``: in memory). Returns one pyarrow table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rocketlb_core.trace.parquet import arrow_errors, check_schema

    tables = []
    for path in sends_files(trace_dir):
        check_schema(path, SENDS, trace_dir)
        try:
            pf = pq.ParquetFile(path)
            start = 0
            for rg in range(pf.metadata.num_row_groups):
                for column in ("producer", "topic", "time_ms", "size"):
                    _first_bad_row(pf, path, rg, column, start, topic, one_producer=False)
                start += pf.metadata.row_group(rg).num_rows
            tables.append(pf.read(columns=list(SENDS)))
        except arrow_errors() as exc:
            raise TraceError(path, None, None, f"not a Parquet file ({exc})"[:300]
                             ) from None
    table = pa.concat_tables(tables, promote_options="permissive")
    if table.num_rows == 0:
        raise TraceError(trace_dir / "sends.parquet", None, None, "no rows")
    return table


def _stats(pf: Any, rg: int, column: str) -> tuple[Any, Any, int] | None:
    meta = pf.metadata.row_group(rg)
    names = [meta.column(j).path_in_schema for j in range(meta.num_columns)]
    st = meta.column(names.index(column)).statistics
    if st is None or not st.has_min_max or st.null_count is None:
        return None
    return st.min, st.max, st.null_count


def plan_sends(trace_dir: Path, topic: str) -> list[SendsFile]:
    """Check the sends' layout and values from the footers; one ``SendsFile`` per file."""
    import pyarrow.parquet as pq

    from rocketlb_core.trace.parquet import arrow_errors

    plan: list[SendsFile] = []
    seen: dict[str, str] = {}
    for index, path in enumerate(sends_files(trace_dir)):
        try:
            plan.append(_plan_file(index, path, trace_dir, topic, seen, pq))
        except arrow_errors() as exc:
            raise TraceError(path, None, None, f"not a Parquet file ({exc})"[:300]
                             ) from None
    if sum(f.rows for f in plan) == 0:
        raise TraceError(trace_dir / "sends.parquet", None, None, "no rows")
    return plan


def _plan_file(index: int, path: Path, trace_dir: Path, topic: str, seen: dict[str, str],
               pq: Any) -> SendsFile:
    from rocketlb_core.trace.parquet import check_schema

    check_schema(path, SENDS, trace_dir)
    pf = pq.ParquetFile(path)
    runs: list[list[Any]] = []
    start = 0
    for rg in range(pf.metadata.num_rows and pf.metadata.num_row_groups):
        n = pf.metadata.row_group(rg).num_rows
        if n == 0:
            continue
        checks = {c: _stats(pf, rg, c) for c in ("producer", "topic", "time_ms", "size")}
        for column, st in checks.items():
            bad = st is None or st[2] > 0 or (
                column == "producer" and st[0] != st[1]) or (
                column == "topic" and not st[0] == st[1] == topic) or (
                column in ("time_ms", "size") and st[0] < 0) or (
                column == "time_ms" and st[1] > MAX_TIME_MS) or (
                column == "producer" and not is_name(st[0]))
            if bad:
                _first_bad_row(pf, path, rg, column, start, topic)
        producer = str(pf.read_row_group(rg, columns=["producer"]).column(0)[0]) \
            if checks["producer"] is None else str(checks["producer"][0])
        if runs and runs[-1][0] == producer:
            runs[-1][1] += n
        else:
            if producer in seen:
                raise TraceError(path, start + 1, "producer",
                                 f"producer {producer!r} already had sends in "
                                 f"{seen[producer]}: a producer's sends must be contiguous "
                                 "(rewrite the trace with "
                                 "`rocketlb trace layout`)")
            seen[producer] = f"{path.name}, before row {start + 1}"
            runs.append([producer, n])
        start += n
    return SendsFile(index, str(path), start, tuple((p, n) for p, n in runs))


def write_sends(path: Path, sends: Any, producers_per_file: int | None = None) -> None:
    """Write a sends table (pyarrow, any order) in the replay layout: sorted by producer and
    time, one producer per row group; a single file, or a folder of files of
    ``producers_per_file`` producers each."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = sends.sort_by([("producer", "ascending"), ("time_ms", "ascending")])
    names = pc.unique(table.column("producer")).to_pylist()
    bounds = [0]
    counts = pc.value_counts(table.column("producer"))
    by_name = dict(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(),
                       strict=True))
    for name in names:
        bounds.append(bounds[-1] + by_name[name])
    groups = [list(range(len(names)))] if producers_per_file is None else [
        list(range(i, min(i + producers_per_file, len(names))))
        for i in range(0, len(names), producers_per_file)]
    if producers_per_file is not None:
        path.mkdir(parents=True, exist_ok=True)
    for g, members in enumerate(groups):
        target = path if producers_per_file is None else path / f"part-{g:05d}.parquet"
        with pq.ParquetWriter(target, table.schema, compression="zstd") as writer:
            for p in members:
                writer.write_table(table.slice(bounds[p], bounds[p + 1] - bounds[p]),
                                   row_group_size=ROW_GROUP_ROWS)
