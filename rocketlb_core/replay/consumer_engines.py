"""Consumer replay engines: Python, or Spark with one task per strategy. Identical summaries;
``assignments.parquet`` holds every (strategy, change, member, queue) row."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder, check_output
from rocketlb_core.consumer.registry import REGISTRY
from rocketlb_core.errors import UsageError
from rocketlb_core.replay.consumer import ASSIGNMENT_COLUMNS, replay_group
from rocketlb_core.replay.engines import replay_producers_spark, replay_rows, write_summary
from rocketlb_core.replay.lag import BUCKET_MS, arrivals_from_rows
from rocketlb_core.replay.producer import ReplayConfig
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
    return group


def replay_consumers(trace_dir: Path, out_dir: Path, group: str | None,
                     strategies: Sequence[str], engine: str = "python",
                     master: str | None = None, *, force: bool = False) -> dict[str, Any]:
    """Replay the trace's membership through ``strategies``; ``out_dir`` follows
    ``rocketlb_core.atomic``'s rule (``force`` as there)."""
    unknown = [s for s in strategies if s not in REGISTRY]
    if unknown or not strategies:
        raise UsageError(f"unknown strategies {unknown} (known: {', '.join(REGISTRY)})")
    if len(set(strategies)) != len(strategies):
        raise UsageError(f"a strategy is named twice in {list(strategies)}")
    check_output(out_dir, COMMAND, inputs=[trace_dir], force=force)
    trace = load_trace(trace_dir, sends=engine != "spark")   # Spark reads the sends itself
    g = _group_of(trace, group)
    result: dict[str, Any] = {"trace": str(trace.meta.get("name", trace_dir.name)),
                              "kind": "consumer", "group": g, "strategies": {}}
    with atomic_folder(out_dir, COMMAND, inputs=[trace_dir], force=force) as tmp:
        if engine == "spark":
            _spark(trace, g, list(strategies), tmp, master, result)
        else:
            rows: list[tuple[Any, ...]] = []
            lags: list[tuple[Any, ...]] = []
            arrivals = arrivals_from_rows(replay_rows(trace, ReplayConfig()))
            for name, summary, strategy_rows, lag_rows in replay_group(trace, g, strategies,
                                                                      arrivals):
                result["strategies"][name] = summary
                rows.extend(strategy_rows)
                lags.extend(lag_rows)
            _write(tmp / "assignments.parquet", ASSIGNMENT_COLUMNS, rows)
            _write(tmp / "lag.parquet", LAG_COLUMNS, lags)
        write_summary(tmp, result)
    return result


def _write(path: Path, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"change": pa.int32(), "time_ms": pa.int64(), "queue_id": pa.int32(),
             "time_s": pa.float64(), "lag": pa.int64()}
    pq.write_table(pa.table({c: pa.array([r[i] for r in rows], types.get(c, pa.string()))
                             for i, c in enumerate(columns)}), path, compression="zstd")


def _spark_arrivals(spark: Any, trace_dir: Path, master: str | None, scratch: Path
                    ) -> dict[str, Counter[int]]:
    """Arrivals per queue per second: the Spark producer replay (recorded settings) writes the
    sends into ``scratch``, and Spark counts them there."""
    from pyspark.sql import functions as F

    replay_producers_spark(trace_dir, scratch, ReplayConfig(), master)
    sends = spark.read.parquet(str(scratch / "sends.parquet"))
    out: dict[str, Counter[int]] = {}
    counts = sends.where(F.col("status") != "FAILED").groupBy(
        "broker", "queue_id", F.floor(F.col("end_ms") / BUCKET_MS).alias("second")).count()
    for r in counts.collect():
        out.setdefault(f"{r['broker']}/{r['queue_id']}", Counter())[int(r["second"])] = \
            int(r["count"])
    return out


WIDE = ("kind string, strategy string, change int, time_ms bigint, member string, "
        "client_id string, broker string, queue_id int, time_s double, queue string, lag bigint, "
        "summary string")


def _spark(trace: Any, group: str, strategies: list[str], tmp: Path, master: str | None,
           result: dict[str, Any]) -> None:
    """One task per strategy computes everything once: a wide frame of summary, assignment and
    lag rows (``kind`` tells which), cached, then split into the two files and the summaries."""
    import pandas as pd
    from pyspark.sql import functions as F

    from rocketlb_core.spark import spark_session

    spark = spark_session(master)
    with tempfile.TemporaryDirectory(prefix="rocketlb-arrivals-", dir=tmp.parent) as scratch:
        arrivals = _spark_arrivals(spark, trace.folder, master, Path(scratch) / "replay")
    names = spark.createDataFrame([(s,) for s in strategies], "strategy string")
    empty: dict[str, Any] = dict.fromkeys(("change", "time_ms", "member", "client_id", "broker",
                                           "queue_id", "time_s", "queue", "lag", "summary"))

    def everything(pdf: pd.DataFrame) -> pd.DataFrame:
        out: list[dict[str, Any]] = []
        for name, summary, rows, lags in replay_group(trace, group, list(pdf["strategy"]),
                                                     arrivals):
            out.append({**empty, "kind": "summary", "strategy": name,
                        "summary": json.dumps(summary, sort_keys=True)})
            out += [{**empty, "kind": "assignment", **dict(zip(ASSIGNMENT_COLUMNS, r,
                                                               strict=True))} for r in rows]
            out += [{**empty, "kind": "lag", **dict(zip(LAG_COLUMNS, r, strict=True))}
                    for r in lags]
        return pd.DataFrame(out, columns=[c.split()[0] for c in WIDE.split(", ")])

    wide = names.groupBy("strategy").applyInPandas(everything, WIDE).cache()
    try:
        for r in wide.where(F.col("kind") == "summary").select("strategy", "summary").collect():
            result["strategies"][r["strategy"]] = json.loads(r["summary"])
        result["strategies"] = {s: result["strategies"][s] for s in strategies}
        wide.where(F.col("kind") == "assignment").select(*ASSIGNMENT_COLUMNS) \
            .write.mode("overwrite").parquet(str(tmp / "assignments.parquet"))
        wide.where(F.col("kind") == "lag").select(*LAG_COLUMNS) \
            .write.mode("overwrite").parquet(str(tmp / "lag.parquet"))
    finally:
        wide.unpersist()
