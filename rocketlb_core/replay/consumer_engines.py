"""Consumer replay engines: Python, or Spark with one task per strategy. Identical summaries;
``assignments.parquet`` holds every (strategy, change, member, queue) row."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder
from rocketlb_core.consumer.registry import REGISTRY
from rocketlb_core.replay.consumer import ASSIGNMENT_COLUMNS, replay_group
from rocketlb_core.replay.engines import write_summary
from rocketlb_core.trace import load_trace

SPARK_SCHEMA = ("strategy string, change int, time_ms bigint, member string, client_id string, "
                "broker string, queue_id int")


def _group_of(trace: Any, group: str | None) -> str:
    groups = sorted(set(trace.membership["group"])) if trace.membership else []
    if group is None:
        if len(groups) != 1:
            raise ValueError(f"{trace.folder}: choose --group among {groups}")
        return str(groups[0])
    if group not in groups:
        raise ValueError(f"{trace.folder}: no group {group!r} (recorded: {groups})")
    return group


def replay_consumers(trace_dir: Path, out_dir: Path, group: str | None,
                     strategies: Sequence[str], engine: str = "python",
                     master: str | None = None) -> dict[str, Any]:
    unknown = [s for s in strategies if s not in REGISTRY]
    if unknown or not strategies:
        raise ValueError(f"unknown strategies {unknown} (known: {', '.join(REGISTRY)})")
    trace = load_trace(trace_dir)
    g = _group_of(trace, group)
    result: dict[str, Any] = {"trace": str(trace.meta.get("name", trace_dir.name)),
                              "kind": "consumer", "group": g, "strategies": {}}
    with atomic_folder(out_dir) as tmp:
        if engine == "spark":
            _spark(trace, g, list(strategies), tmp, master, result)
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            rows: list[tuple[Any, ...]] = []
            for name, summary, strategy_rows in replay_group(trace, g, strategies):
                result["strategies"][name] = summary
                rows.extend(strategy_rows)
            types = {"change": pa.int32(), "time_ms": pa.int64(), "queue_id": pa.int32()}
            table = pa.table({c: pa.array([r[i] for r in rows], types.get(c, pa.string()))
                              for i, c in enumerate(ASSIGNMENT_COLUMNS)})
            pq.write_table(table, tmp / "assignments.parquet", compression="zstd")
        write_summary(tmp, result)
    return result


def _spark(trace: Any, group: str, strategies: list[str], tmp: Path, master: str | None,
           result: dict[str, Any]) -> None:
    import pandas as pd

    from rocketlb_core.spark import spark_session

    spark = spark_session(master)
    names = spark.createDataFrame([(s,) for s in strategies], "strategy string")

    def summaries(pdf: pd.DataFrame) -> pd.DataFrame:
        out = [(n, json.dumps(s, sort_keys=True))
               for n, s, _ in replay_group(trace, group, list(pdf["strategy"]))]
        return pd.DataFrame(out, columns=["strategy", "summary"])

    def rows(pdf: pd.DataFrame) -> pd.DataFrame:
        out = [r for _, _, rs in replay_group(trace, group, list(pdf["strategy"])) for r in rs]
        return pd.DataFrame(out, columns=list(ASSIGNMENT_COLUMNS))

    for r in names.groupBy("strategy").applyInPandas(summaries, "strategy string, summary string") \
            .collect():
        result["strategies"][r["strategy"]] = json.loads(r["summary"])
    result["strategies"] = {s: result["strategies"][s] for s in strategies}
    names.groupBy("strategy").applyInPandas(rows, SPARK_SCHEMA) \
        .write.mode("overwrite").parquet(str(tmp / "assignments.parquet"))
