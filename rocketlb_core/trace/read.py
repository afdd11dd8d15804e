"""Reading a trace folder (``rocketlb_core.trace.schema`` describes it): ``load_trace``
validates everything and fails with ``TraceError`` naming the file, the row and the field. Row
numbers are 1-based positions in the Parquet file. Needs pyarrow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlb_core.limits import (
    MAX_CONDITION_ROWS,
    MAX_LATENCY_MS,
    MAX_LATENCY_PAIRS,
    MAX_MEMBERSHIP_ROWS,
    MAX_TIME_MS,
)
from rocketlb_core.trace.cluster import ClusterLayout, load_cluster
from rocketlb_core.trace.layout import SendsFile, plan_sends
from rocketlb_core.trace.parquet import arrow_errors, check_schema
from rocketlb_core.trace.schema import (
    CONDITION_KINDS,
    CONDITIONS,
    MEMBER_EVENTS,
    MEMBERSHIP,
    NULLABLE,
    SENDS,
    TraceError,
    check_meta,
    check_name,
    first_line,
)


@dataclass(frozen=True)
class Trace:
    """A loaded, validated trace. Columns are plain Python lists (small traces; empty sends
    with ``load_trace(..., sends=False)``); ``sends_files`` is the sends' replay plan, from the
    footers (``rocketlb_core.trace.layout.SendsFile``)."""

    folder: Path
    meta: dict[str, Any]
    layout: ClusterLayout
    sends: dict[str, list[Any]]
    conditions: dict[str, list[Any]]
    membership: dict[str, list[Any]] | None
    sends_files: tuple[SendsFile, ...] = ()

    @property
    def topic(self) -> str:
        return str(self.meta["topic"])


def _read_table(path: Path, columns: dict[str, str], max_rows: int,
                folder: Path | None = None) -> dict[str, list[Any]]:
    """A Parquet file's columns as lists, every value checked as read (``folder``: the trace
    folder the file must stay in, default its own folder)."""
    import pyarrow.parquet as pq

    check_schema(path, columns, folder)
    try:
        rows = pq.ParquetFile(path).metadata.num_rows
        if rows > max_rows:
            raise TraceError(path, None, None, f"{rows} rows: more than the {max_rows}-row "
                             "limit for this file (data/README.md)")
        table = pq.read_table(path, columns=list(columns))
        data = {col: table.column(col).to_pylist() for col in columns}
    except arrow_errors() as exc:
        raise TraceError(path, None, None, f"not a Parquet file ({first_line(exc)})"
                         ) from None
    if table.num_rows == 0:
        raise TraceError(path, None, None, "no rows")
    names: set[str] = set()                          # checked already (a few, many times)
    for col, typ in columns.items():
        values = data[col]
        for i, v in enumerate(values):
            if v is None:
                if col not in NULLABLE:
                    raise TraceError(path, i + 1, col, "missing value")
            elif typ == "string" and col != "key":       # keys are free text, never read
                if v not in names:
                    names.add(check_name(path, i + 1, col, v))
            elif col == "time_ms" and not 0 <= v <= MAX_TIME_MS:
                raise TraceError(path, i + 1, col, f"{v} is outside 0..{MAX_TIME_MS} (ms from "
                                 "the trace's start, at most 31 days)")
            elif typ == "double" and not (math.isfinite(v) and 0 < v <= MAX_LATENCY_MS):
                raise TraceError(path, i + 1, col, f"{v} is not a latency in ms (finite, "
                                 f"> 0, at most {MAX_LATENCY_MS:.0f})")
    return data


def check_sends_file(f: SendsFile, topic: str) -> None:
    """Every row of one sends file checked as read, one row group at a time and vectorised:
    no missing value, ``time_ms`` within 0..``MAX_TIME_MS`` and never decreasing within a
    producer, each run of rows holding the producer its footer planned (``f.runs``; a valid
    name), ``topic`` the trace's, ``size`` >= 0. The footers' statistics are never trusted for
    values: a file whose footer disagrees with its rows is refused here, naming the row. Memory
    is one row group."""
    import numpy as np
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from rocketlb_core.trace.parquet import arrow_errors

    path = Path(f.path)
    bounds = [0]
    for name, n in f.runs:
        check_name(path, bounds[-1] + 1, "producer", name)
        bounds.append(bounds[-1] + n)
    try:
        pf = pq.ParquetFile(path)
        row, last = 0, None                      # last: (run, time) of the previous row group
        for rg in range(pf.metadata.num_row_groups):
            t = pf.read_row_group(rg, columns=["time_ms", "producer", "topic", "size"])
            n = t.num_rows
            if n == 0:
                continue
            for col in ("time_ms", "producer", "topic", "size"):
                c = t.column(col)
                if c.null_count:
                    k = next(k for k, v in enumerate(c.to_pylist()) if v is None)
                    raise TraceError(path, row + k + 1, col, "missing value")
            times = t.column("time_ms").to_numpy()
            bad = (times < 0) | (times > MAX_TIME_MS)
            if bad.any():
                k = int(np.argmax(bad))
                raise TraceError(path, row + k + 1, "time_ms", f"{int(times[k])} is outside "
                                 f"0..{MAX_TIME_MS} (ms from the trace's start, at most 31 "
                                 "days)")
            sizes = t.column("size").to_numpy()
            if n and int(sizes.min()) < 0:
                k = int(np.argmax(sizes < 0))
                raise TraceError(path, row + k + 1, "size", f"negative value {int(sizes[k])}")
            topics = t.column("topic")
            if not pc.all(pc.equal(topics, topic)).as_py():
                k, v = next((k, v) for k, v in enumerate(topics.to_pylist()) if v != topic)
                raise TraceError(path, row + k + 1, "topic", f"{v[:300]!r} is not the trace's "
                                 f"topic {topic!r}")
            names = t.column("producer")
            run = int(np.searchsorted(bounds, row, side="right")) - 1
            pos = 0
            while pos < n:
                if run >= len(f.runs):
                    raise TraceError(path, row + pos + 1, "producer", "more rows than the "
                                     "file's footer says")
                take = min(n - pos, bounds[run + 1] - (row + pos))
                producer = f.runs[run][0]
                part = names.slice(pos, take)
                if not pc.all(pc.equal(part, producer)).as_py():
                    k, v = next((k, v) for k, v in enumerate(part.to_pylist()) if v != producer)
                    raise TraceError(path, row + pos + k + 1, "producer", f"{v[:300]!r} in rows "
                                     f"the file's footer statistics give to producer "
                                     f"{producer!r}: the footer disagrees with the data "
                                     "(rewrite the trace with `rocketlb trace layout`)")
                run_times = times[pos:pos + take]
                down = np.flatnonzero(np.diff(run_times) < 0)
                if last is not None and last[0] == run and run_times[0] < last[1]:
                    down = np.array([-1])
                if len(down):
                    k = int(down[0]) + 1
                    raise TraceError(path, row + pos + k + 1, "time_ms",
                                     f"times must not decrease within producer {producer!r}")
                last = (run, int(run_times[-1]))
                pos += take
                run += 1 if row + pos >= bounds[run + 1] else 0
            row += n
    except arrow_errors() as exc:
        raise TraceError(path, None, None, f"not a Parquet file ({first_line(exc)})") from None
    if row != f.rows:
        raise TraceError(path, None, None, f"{row} rows, the footer says {f.rows}")


def validate_trace(folder: Path | str) -> Trace:
    """``rocketlb trace validate --rows``: every file of the trace checked, and every send as
    read (``check_sends_file``: values, never footer statistics), without holding the sends in
    memory. The one validator: every writer of traces checks its result with it
    (``rocketlb_core.trace.write.check_written``) before the folder is moved into place."""
    trace = load_trace(folder, sends=False)
    for f in trace.sends_files:
        if f.rows:
            check_sends_file(f, trace.topic)
    return trace


def load_trace(folder: Path | str, *, sends: bool = True, plan: bool = True) -> Trace:
    """Read and validate a trace folder (see the module docstring). ``sends=False`` leaves the
    sends' rows unread: their layout is planned from the footers (the engines check every value
    as they read it, ``rocketlb_core.replay.task.check_values``); ``sends=True`` checks every
    row as read (``check_sends_file``), never trusting the footers' statistics. ``plan=False``
    does not look at the sends at all (the layout command, which reads sends in any order)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise TraceError(folder, None, None, "not a trace folder" if folder.exists()
                         else "folder not found")
    meta = check_meta(folder / "trace.json")
    layout = load_cluster(folder)
    if meta["topic"] not in layout.routes:
        raise TraceError(folder / "route.csv", None, "topic",
                         f"the trace's topic {meta['topic']!r} has no route")
    brokers = {b.broker_name for b in layout.brokers}
    plan_ = plan_sends(folder, meta["topic"]) if plan else []  # layout and values: footers
    send_rows: dict[str, list[Any]] = {c: [] for c in SENDS}
    if sends and plan:
        for f in plan_:
            if f.rows == 0:              # an empty part file, as the replay takes it
                continue
            check_sends_file(f, meta["topic"])
            table = _read_table(Path(f.path), SENDS, f.rows, folder)
            for c in SENDS:
                send_rows[c].extend(table[c])
    cpath = folder / "conditions.parquet"
    conditions = _read_table(cpath, CONDITIONS, MAX_CONDITION_ROWS)
    last = -1
    pairs: set[tuple[float, float]] = set()
    for i, (t, b, kind) in enumerate(zip(conditions["time_ms"], conditions["broker"],
                                         conditions["kind"], strict=True)):
        if t < last:
            raise TraceError(cpath, i + 1, "time_ms", "times must be >= 0 and non-decreasing")
        last = t
        if b not in brokers:
            raise TraceError(cpath, i + 1, "broker", f"unknown broker {b!r}")
        if kind not in CONDITION_KINDS:
            raise TraceError(cpath, i + 1, "kind", f"unknown condition {kind!r}")
        if kind == "latency":
            if conditions["median_ms"][i] is None:
                raise TraceError(cpath, i + 1, "median_ms", "a latency row needs median_ms > 0")
            p99 = conditions["p99_ms"][i]
            if p99 is not None and p99 < conditions["median_ms"][i]:
                raise TraceError(cpath, i + 1, "p99_ms", f"{p99:g} is below median_ms "
                                 f"{conditions['median_ms'][i]:g} (a p99 is at least the median)")
            pairs.add((conditions["median_ms"][i], p99 or 0.0))
            if len(pairs) > MAX_LATENCY_PAIRS:
                raise TraceError(cpath, i + 1, "median_ms", f"more than {MAX_LATENCY_PAIRS} "
                                 "distinct (median_ms, p99_ms) pairs (data/README.md)")
        if kind in ("partition", "heal") and conditions["client"][i] is None:
            raise TraceError(cpath, i + 1, "client", f"a {kind} row needs the client cut off")
        if kind == "down" and conditions["mode"][i] not in (None, "clean", "silent"):
            raise TraceError(cpath, i + 1, "mode", "expected clean or silent")
    membership = None
    mpath = folder / "membership.parquet"
    if mpath.exists() or mpath.is_symlink():
        membership = _read_table(mpath, MEMBERSHIP, MAX_MEMBERSHIP_ROWS)
        last = -1
        for i, (t, ev) in enumerate(zip(membership["time_ms"], membership["event"],
                                        strict=True)):
            if t < last:
                raise TraceError(mpath, i + 1, "time_ms", "times must be >= 0 and non-decreasing")
            last = t
            if ev not in MEMBER_EVENTS:
                raise TraceError(mpath, i + 1, "event", f"unknown event {ev!r}")
    return Trace(folder, meta, layout, send_rows, conditions, membership, tuple(plan_))


def describe(trace: Trace) -> dict[str, Any]:
    """What a loaded trace holds, as a JSON-able summary (``rocketlb trace validate``)."""
    routes = {topic: {qd.broker_name: {"read": qd.read_queue_nums, "write": qd.write_queue_nums,
                                       "perm": qd.perm} for qd in route.queue_datas}
              for topic, route in sorted(trace.layout.routes.items())}
    producers = sorted({name for f in trace.sends_files for name, _ in f.runs})
    kinds: dict[str, int] = {}
    for kind in trace.conditions["kind"]:
        kinds[kind] = kinds.get(kind, 0) + 1
    members = trace.membership
    return {
        "trace": str(trace.folder), "name": trace.meta.get("name", ""), "topic": trace.topic,
        "start_ms": trace.meta.get("start_ms", 0), "end_ms": trace.meta.get("end_ms"),
        "line": trace.meta.get("line"),
        "brokers": sorted({b.broker_name for b in trace.layout.brokers}),
        "routes": routes,
        "sends": {"rows": sum(f.rows for f in trace.sends_files),
                  "files": len(trace.sends_files), "producers": len(producers)},
        "conditions": {"rows": len(trace.conditions["kind"]), "by_kind": dict(sorted(
            kinds.items()))},
        "membership": None if members is None else {
            "rows": len(members["event"]), "groups": sorted(set(members["group"])),
            "members": len(set(members["member"]))},
    }
