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
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlb_core.limits import (
    MAX_CONDITION_ROWS,
    MAX_CONSUME_RATE,
    MAX_LATENCY_MS,
    MAX_LATENCY_PAIRS,
    MAX_MEMBERSHIP_ROWS,
    MAX_META_BYTES,
    MAX_TEXT_CHARS,
    MAX_TIME_MS,
)
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.traces import ClusterLayout, TraceError, check_name, load_cluster, regular_file

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


META_FIELDS = {"format", "version", "name", "description", "topic", "start_ms", "end_ms", "line",
               "seed", "provenance", "fault_tolerance", "groups"}
GROUP_FIELDS = {"strategy", "model", "consume_rate_per_s"}


def arrow_errors() -> tuple[type[BaseException], ...]:
    """What pyarrow raises for a file it cannot read (corrupt, truncated, not Parquet)."""
    import pyarrow as pa

    return (pa.ArrowException, OSError, EOFError)


def check_schema(path: Path, columns: dict[str, str], folder: Path | None = None) -> Any:
    """Check a Parquet file's columns and types from its footer; returns the schema. The file
    must be a regular file inside ``folder`` (default: its own folder)."""
    import pyarrow.parquet as pq

    regular_file(path, path.parent if folder is None else folder)
    try:
        schema = pq.read_schema(path)
    except arrow_errors() as exc:
        raise TraceError(path, None, None, f"not a Parquet file ({_first_line(exc)})"
                         ) from None
    names = list(schema.names)
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise TraceError(path, None, dup, "the column appears twice")
    for col, typ in columns.items():
        if col not in names:
            raise TraceError(path, None, col, f"missing column (file has {sorted(names)})")
        got = str(schema.field(col).type)
        want = {"string": ("string", "large_string"), "int64": ("int64",),
                "int32": ("int32", "int64"), "double": ("double", "float", "int64")}[typ]
        if got not in want and got != "null":
            raise TraceError(path, None, col, f"type {got}, expected {typ}")
    return schema


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _read_table(path: Path, columns: dict[str, str], max_rows: int) -> dict[str, list[Any]]:
    import pyarrow.parquet as pq

    check_schema(path, columns)
    try:
        rows = pq.ParquetFile(path).metadata.num_rows
        if rows > max_rows:
            raise TraceError(path, None, None, f"{rows} rows: more than the {max_rows}-row "
                             "limit for this file (data/README.md)")
        table = pq.read_table(path, columns=list(columns))
        data = {col: table.column(col).to_pylist() for col in columns}
    except arrow_errors() as exc:
        raise TraceError(path, None, None, f"not a Parquet file ({_first_line(exc)})"
                         ) from None
    if table.num_rows == 0:
        raise TraceError(path, None, None, "no rows")
    for col, typ in columns.items():
        values = data[col]
        for i, v in enumerate(values):
            if v is None:
                if col not in NULLABLE:
                    raise TraceError(path, i + 1, col, "missing value")
            elif typ == "string" and col != "key":       # keys are free text, never read
                check_name(path, i + 1, col, v)
            elif col == "time_ms" and not 0 <= v <= MAX_TIME_MS:
                raise TraceError(path, i + 1, col, f"{v} is outside 0..{MAX_TIME_MS} (ms from "
                                 "the trace's start, at most 31 days)")
            elif typ == "double" and not (math.isfinite(v) and 0 < v <= MAX_LATENCY_MS):
                raise TraceError(path, i + 1, col, f"{v} is not a latency in ms (finite, "
                                 f"> 0, at most {MAX_LATENCY_MS:.0f})")
    return data


def _meta(path: Path) -> dict[str, Any]:
    """Read and check ``trace.json``."""
    regular_file(path, path.parent, MAX_META_BYTES)

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        meta = json.loads(path.read_text(encoding="utf-8-sig"), parse_constant=no_constant)
    except UnicodeDecodeError as exc:
        raise TraceError(path, None, None, f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise TraceError(path, exc.lineno, None, f"invalid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        raise TraceError(path, None, None, f"invalid JSON ({_first_line(exc)})") from None
    if not isinstance(meta, dict):
        raise TraceError(path, None, None, "expected a JSON object")
    if meta.get("format") != FORMAT:
        raise TraceError(path, None, "format", f"expected {FORMAT!r}")
    if meta.get("version") != VERSION or isinstance(meta.get("version"), bool):
        raise TraceError(path, None, "version", f"expected {VERSION}")
    unknown = sorted(set(meta) - META_FIELDS)
    if unknown:
        raise TraceError(path, None, unknown[0][:80], "unknown field (known: "
                         f"{', '.join(sorted(META_FIELDS))})")
    check_name(path, None, "topic", meta.get("topic"))
    for key in ("name", "description", "provenance", "line"):
        if key in meta and not (isinstance(meta[key], str) and len(meta[key]) <= MAX_TEXT_CHARS):
            raise TraceError(path, None, key, f"expected text of at most {MAX_TEXT_CHARS} "
                             "characters")
    if "line" in meta:
        try:
            ProducerLine.parse(meta["line"])
        except ValueError as exc:
            raise TraceError(path, None, "line", str(exc)) from None
    for key in ("start_ms", "end_ms", "seed"):
        v = meta.get(key, 0)
        top = MAX_TIME_MS if key != "seed" else (1 << 63) - 1
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= top:
            raise TraceError(path, None, key, f"expected an integer from 0 to {top}, got {v!r}")
    if meta.get("start_ms", 0) > meta.get("end_ms", MAX_TIME_MS):
        raise TraceError(path, None, "end_ms", "end_ms is before start_ms")
    ft = meta.get("fault_tolerance", {})
    if not isinstance(ft, dict):
        raise TraceError(path, None, "fault_tolerance", "expected an object: producer -> bool")
    for name, on in ft.items():
        check_name(path, None, "fault_tolerance", name)
        if not isinstance(on, bool):
            raise TraceError(path, None, f"fault_tolerance.{name}", "expected true or false")
    groups = meta.get("groups", {})
    if not isinstance(groups, dict):
        raise TraceError(path, None, "groups", "expected an object: group -> settings")
    for name, g in groups.items():
        check_name(path, None, "groups", name)
        where = f"groups.{name}"
        if not isinstance(g, dict):
            raise TraceError(path, None, where, "expected an object")
        bad = sorted(set(g) - GROUP_FIELDS)
        if bad:
            raise TraceError(path, None, f"{where}.{bad[0][:80]}", "unknown field (known: "
                             f"{', '.join(sorted(GROUP_FIELDS))})")
        if "strategy" in g and not isinstance(g["strategy"], str):
            raise TraceError(path, None, f"{where}.strategy", "expected a strategy's name")
        if g.get("model", "CLUSTERING") not in ("CLUSTERING", "BROADCASTING"):
            raise TraceError(path, None, f"{where}.model", "expected CLUSTERING or BROADCASTING")
        rate = g.get("consume_rate_per_s", 2000.0)
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not (
                0 < rate <= MAX_CONSUME_RATE):
            raise TraceError(path, None, f"{where}.consume_rate_per_s",
                             f"expected a number > 0 and <= {MAX_CONSUME_RATE:.0f}, got {rate!r}")
    return meta


def load_trace(folder: Path | str, *, sends: bool = True, plan: bool = True) -> Trace:
    """Read and validate a trace folder (see the module docstring). ``sends=False`` leaves the
    sends' rows unread: their layout and values are checked from the footers only (the engines
    check the time order while replaying). ``plan=False`` does not look at the sends at all
    (the layout command, which reads sends in any order)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise TraceError(folder, None, None, "not a trace folder" if folder.exists()
                         else "folder not found")
    meta = _meta(folder / "trace.json")
    layout = load_cluster(folder)
    if meta["topic"] not in layout.routes:
        raise TraceError(folder / "route.csv", None, "topic",
                         f"the trace's topic {meta['topic']!r} has no route")
    brokers = {b.broker_name for b in layout.brokers}
    from rocketlb_core.replay.layout import plan_sends

    plan_ = plan_sends(folder, meta["topic"]) if plan else []  # layout and values: footers
    send_rows: dict[str, list[Any]] = {c: [] for c in SENDS}
    if sends and plan:
        for f in plan_:
            table = _read_table(Path(f.path), SENDS, f.rows)
            for c in SENDS:
                send_rows[c].extend(table[c])
            prev: tuple[str, int] | None = None
            for i, (t, p) in enumerate(zip(table["time_ms"], table["producer"], strict=True)):
                if prev is not None and p == prev[0] and t < prev[1]:
                    raise TraceError(f.path, i + 1, "time_ms",
                                     "times must not decrease within a producer")
                prev = (p, t)
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
            pairs.add((conditions["median_ms"][i], conditions["p99_ms"][i] or 0.0))
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


def write_trace(folder: Path, meta: dict[str, Any], brokers_csv: str, route_csv: str,
                sends: dict[str, list[Any]], conditions: dict[str, list[Any]],
                membership: dict[str, list[Any]] | None, *, command: str = "write trace",
                inputs: Sequence[Path | str] = (), force: bool = False) -> None:
    """Write a trace folder atomically (a temporary folder renamed into place), under
    ``rocketlb_core.atomic``'s rule for output folders (``command``, ``inputs``, ``force``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rocketlb_core.atomic import atomic_folder
    from rocketlb_core.replay.layout import write_sends

    types = {"int64": pa.int64(), "int32": pa.int32(), "string": pa.string(),
             "double": pa.float64()}

    def table(cols: dict[str, str], data: dict[str, list[Any]]) -> pa.Table:
        return pa.table({c: pa.array(data[c], types[t]) for c, t in cols.items()})

    with atomic_folder(folder, command, inputs=inputs, force=force) as tmp:
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
