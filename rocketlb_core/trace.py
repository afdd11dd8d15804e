"""Recorded traffic: the trace format the replay reads and the simulator writes (data/README.md).

A trace is a folder:

* ``trace.json``: format, version, name, description, provenance, topic, time span;
* ``brokers.csv`` and ``route.csv``: the cluster layout (``rocketlb_core.traces``);
* ``sends.parquet``: what the producers' applications asked to send, in the replay layout
  (``rocketlb_core.replay.layout``: one producer per row group, by time within a producer);
* ``conditions.parquet``: what the brokers were like over time (latency, down, partitions);
* ``membership.parquet``: a consumer group's joins, leaves and crashes (optional).

``load_trace`` validates everything and fails with ``TraceError`` naming the file, the row and
the field. Row numbers are 1-based positions in the Parquet file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlb_core.traces import ClusterLayout, TraceError, load_cluster

FORMAT = "rocketlb-trace"
VERSION = 1
SENDS = {"time_ms": "int64", "producer": "string", "topic": "string", "key": "string",
         "size": "int32"}
CONDITIONS = {"time_ms": "int64", "broker": "string", "client": "string", "kind": "string",
              "mode": "string", "median_ms": "double", "p99_ms": "double"}
MEMBERSHIP = {"time_ms": "int64", "group": "string", "member": "string", "client_id": "string",
              "event": "string", "room": "string"}
CONDITION_KINDS = {"latency", "down", "up", "partition", "heal"}
MEMBER_EVENTS = {"join", "leave", "crash"}
NULLABLE = {"key", "client", "mode", "median_ms", "p99_ms"}


@dataclass(frozen=True)
class Trace:
    """A loaded, validated trace. Columns are plain Python lists (small traces; empty sends
    with ``load_trace(..., sends=False)``); ``sends_files`` is the sends' replay plan, from the
    footers (``rocketlb_core.replay.layout.SendsFile``)."""

    folder: Path
    meta: dict[str, Any]
    layout: ClusterLayout
    sends: dict[str, list[Any]]
    conditions: dict[str, list[Any]]
    membership: dict[str, list[Any]] | None
    sends_files: tuple[Any, ...] = ()

    @property
    def topic(self) -> str:
        return str(self.meta["topic"])


def check_schema(path: Path, columns: dict[str, str]) -> Any:
    """Check a Parquet file's columns and types from its footer; returns the schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.exists():
        raise TraceError(path, None, None, "file not found")
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise TraceError(path, None, None, f"not a Parquet file ({exc})") from None
    names = set(schema.names)
    for col, typ in columns.items():
        if col not in names:
            raise TraceError(path, None, col, f"missing column (file has {sorted(names)})")
        got = str(schema.field(col).type)
        want = {"string": ("string", "large_string"), "int64": ("int64",),
                "int32": ("int32", "int64"), "double": ("double", "float", "int64")}[typ]
        if got not in want and got != "null":
            raise TraceError(path, None, col, f"type {got}, expected {typ}")
    return schema


def _read_table(path: Path, columns: dict[str, str]) -> dict[str, list[Any]]:
    import pyarrow.parquet as pq

    check_schema(path, columns)
    table = pq.read_table(path, columns=list(columns))
    data = {col: table.column(col).to_pylist() for col in columns}
    if table.num_rows == 0:
        raise TraceError(path, None, None, "no rows")
    for col in columns:
        if col in NULLABLE:
            continue
        for i, v in enumerate(data[col]):
            if v is None:
                raise TraceError(path, i + 1, col, "missing value")
    return data


def load_trace(folder: Path | str, *, sends: bool = True) -> Trace:
    """Read and validate a trace folder (see the module docstring). ``sends=False`` leaves the
    sends' rows unread: their layout and values are checked from the footers only (the engines
    check the time order while replaying)."""
    folder = Path(folder)
    meta_path = folder / "trace.json"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TraceError(meta_path, None, None, "file not found") from None
    except json.JSONDecodeError as exc:
        raise TraceError(meta_path, exc.lineno, None, f"invalid JSON ({exc.msg})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise TraceError(meta_path, None, "format", f"expected {FORMAT!r}")
    if meta.get("version") != VERSION:
        raise TraceError(meta_path, None, "version", f"expected {VERSION}")
    if not isinstance(meta.get("topic"), str):
        raise TraceError(meta_path, None, "topic", "expected the topic's name")
    layout = load_cluster(folder)
    if meta["topic"] not in layout.routes:
        raise TraceError(folder / "route.csv", None, "topic",
                         f"the trace's topic {meta['topic']!r} has no route")
    brokers = {b.broker_name for b in layout.brokers}
    from rocketlb_core.replay.layout import plan_sends

    plan = plan_sends(folder, meta["topic"])       # layout and values, from the footers
    send_rows: dict[str, list[Any]] = {c: [] for c in SENDS}
    if sends:
        for f in plan:
            table = _read_table(Path(f.path), SENDS)
            for c in SENDS:
                send_rows[c].extend(table[c])
            prev: tuple[str, int] | None = None
            for i, (t, p) in enumerate(zip(table["time_ms"], table["producer"], strict=True)):
                if prev is not None and p == prev[0] and t < prev[1]:
                    raise TraceError(f.path, i + 1, "time_ms",
                                     "times must not decrease within a producer")
                prev = (p, t)
    conditions = _read_table(folder / "conditions.parquet", CONDITIONS)
    cpath = folder / "conditions.parquet"
    last = -1
    for i, (t, b, kind) in enumerate(zip(conditions["time_ms"], conditions["broker"],
                                         conditions["kind"], strict=True)):
        if t < 0 or t < last:
            raise TraceError(cpath, i + 1, "time_ms", "times must be >= 0 and non-decreasing")
        last = t
        if b not in brokers:
            raise TraceError(cpath, i + 1, "broker", f"unknown broker {b!r}")
        if kind not in CONDITION_KINDS:
            raise TraceError(cpath, i + 1, "kind", f"unknown condition {kind!r}")
        if kind == "latency" and not (conditions["median_ms"][i] or 0) > 0:
            raise TraceError(cpath, i + 1, "median_ms", "a latency row needs median_ms > 0")
    membership = None
    mpath = folder / "membership.parquet"
    if mpath.exists():
        membership = _read_table(mpath, MEMBERSHIP)
        last = -1
        for i, (t, ev) in enumerate(zip(membership["time_ms"], membership["event"],
                                        strict=True)):
            if t < 0 or t < last:
                raise TraceError(mpath, i + 1, "time_ms", "times must be >= 0 and non-decreasing")
            last = t
            if ev not in MEMBER_EVENTS:
                raise TraceError(mpath, i + 1, "event", f"unknown event {ev!r}")
    return Trace(folder, meta, layout, send_rows, conditions, membership, tuple(plan))


def write_trace(folder: Path, meta: dict[str, Any], brokers_csv: str, route_csv: str,
                sends: dict[str, list[Any]], conditions: dict[str, list[Any]],
                membership: dict[str, list[Any]] | None) -> None:
    """Write a trace folder atomically (a temporary folder renamed into place)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rocketlb_core.atomic import atomic_folder
    from rocketlb_core.replay.layout import write_sends

    types = {"int64": pa.int64(), "int32": pa.int32(), "string": pa.string(),
             "double": pa.float64()}

    def table(cols: dict[str, str], data: dict[str, list[Any]]) -> pa.Table:
        return pa.table({c: pa.array(data[c], types[t]) for c, t in cols.items()})

    with atomic_folder(folder) as tmp:
        (tmp / "trace.json").write_text(json.dumps({"format": FORMAT, "version": VERSION,
                                                    **meta}, indent=1, sort_keys=True) + "\n")
        (tmp / "brokers.csv").write_text(brokers_csv)
        (tmp / "route.csv").write_text(route_csv)
        write_sends(tmp / "sends.parquet", table(SENDS, sends))
        pq.write_table(table(CONDITIONS, conditions), tmp / "conditions.parquet",
                       compression="zstd")
        if membership is not None:
            pq.write_table(table(MEMBERSHIP, membership), tmp / "membership.parquet",
                           compression="zstd")
