"""The consumer replay: its Python engine, and what both engines share (the Spark engine, each
strategy one group of an ``applyInPandas``, which Spark packs into as many tasks as it decides,
is ``rocketlb_core.spark.consumer_replay``). Identical summaries;
``assignments.parquet`` holds every (strategy, change, member, queue) row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder, check_output
from rocketlb_core.consumer.registry import REGISTRY, make
from rocketlb_core.errors import UsageError
from rocketlb_core.kafka.assignors import ASSIGNORS
from rocketlb_core.kafka.group import KAFKA_PREFIX
from rocketlb_core.replay.config import ReplayConfig
from rocketlb_core.replay.consumer import ASSIGNMENT_COLUMNS, replay_group
from rocketlb_core.replay.engines import replay_rows, write_summary
from rocketlb_core.replay.lag import arrivals_from_rows
from rocketlb_core.trace.read import load_trace

LAG_COLUMNS = ("strategy", "time_s", "queue", "lag")
COMMAND = "replay consumer"


def _group_of(trace: Any, group: str | None) -> str:
    groups = sorted(set(trace.membership["group"])) if trace.membership else []
    if group is None:
        if len(groups) != 1:
            raise UsageError(f"{trace.folder}: choose --group among {groups}")
        return str(groups[0])
    if group not in groups:
        raise UsageError(f"{trace.folder}: no group {group!r} (recorded: {groups})")
    if trace.meta.get("groups", {}).get(group, {}).get("model") == "BROADCASTING":
        raise UsageError(f"{trace.folder}: {group} is a broadcasting group: every member takes "
                         "every queue, so no allocation strategy applies to it (replay a "
                         "clustering group)")
    return group


Tables = Callable[[Any, str, list[str], Path, dict[str, Any]], None]
"""An engine's work: ``(trace, group, strategies, folder, result)`` writes
``assignments.parquet`` and ``lag.parquet`` into the folder and fills
``result["strategies"]``."""


def known_strategies() -> list[str]:
    """RocketMQ's registry, then Kafka's assignors as ``kafka-<name>``."""
    return [*REGISTRY, *(KAFKA_PREFIX + name for name in ASSIGNORS if "@" not in name),
            KAFKA_PREFIX + "uniform", KAFKA_PREFIX + "server-range"]


def replay_consumers(trace_dir: Path, out_dir: Path, group: str | None,
                     strategies: Sequence[str], *, tables: Tables, read_sends: bool = True,
                     force: bool = False, seed: int = 0) -> dict[str, Any]:
    """Replay the trace's membership through ``strategies`` with an engine's ``tables``;
    ``out_dir`` follows ``rocketlb_core.atomic``'s rule (``force`` as there). ``seed``: for
    Kafka's member ids (``rocketlb_core.kafka.group``), recorded in the summary when used."""
    known = known_strategies()
    unknown = [s for s in strategies if s not in known]
    if unknown or not strategies:
        raise UsageError(f"unknown strategies {unknown} (known: {', '.join(known)})")
    if len(set(strategies)) != len(strategies):
        raise UsageError(f"a strategy is named twice in {list(strategies)}")
    for s in strategies:
        if s in REGISTRY:
            try:
                make(s)
            except TypeError as exc:      # a factory wanting a deployment's own configuration
                raise UsageError(f"{s} needs its deployment's configuration, which a trace "
                                 f"does not record ({exc})") from None
    check_output(out_dir, COMMAND, inputs=[trace_dir], force=force)
    trace = load_trace(trace_dir, sends=read_sends)
    g = _group_of(trace, group)
    result: dict[str, Any] = {"trace": str(trace.meta.get("name", trace_dir.name)),
                              "kind": "consumer", "group": g, "strategies": {}}
    if any(s.startswith(KAFKA_PREFIX) for s in strategies):
        result["seed"] = seed
    with atomic_folder(out_dir, COMMAND, inputs=[trace_dir], force=force) as tmp:
        tables(trace, g, list(strategies), tmp, result)
        write_summary(tmp, result)
    return result


def replay_consumers_python(trace_dir: Path, out_dir: Path, group: str | None,
                            strategies: Sequence[str], *, force: bool = False, seed: int = 0
                            ) -> dict[str, Any]:
    """Replay the trace's membership through ``strategies`` in this process."""
    return replay_consumers(trace_dir, out_dir, group, strategies, tables=_python_tables,
                            force=force, seed=seed)


def _python_tables(trace: Any, group: str, strategies: list[str], tmp: Path,
                   result: dict[str, Any]) -> None:
    rows: list[tuple[Any, ...]] = []
    lags: list[tuple[Any, ...]] = []
    arrivals = arrivals_from_rows(replay_rows(trace, ReplayConfig()))
    for name, summary, strategy_rows, lag_rows in replay_group(
            trace, group, strategies, arrivals, seed=result.get("seed", 0)):
        result["strategies"][name] = summary
        rows.extend(strategy_rows)
        lags.extend(lag_rows)
    _write(tmp / "assignments.parquet", ASSIGNMENT_COLUMNS, rows)
    _write(tmp / "lag.parquet", LAG_COLUMNS, lags)


def _write(path: Path, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"change": pa.int32(), "time_ms": pa.int64(), "queue_id": pa.int32(),
             "time_s": pa.float64(), "lag": pa.int64()}
    pq.write_table(pa.table({c: pa.array([r[i] for r in rows], types.get(c, pa.string()))
                             for i, c in enumerate(columns)}), path, compression="zstd")
