"""The two replay engines. Same inputs, same per-producer function, same summary.

Outputs (``out_dir``, replaced atomically): ``sends.parquet`` (one row per replayed send; a
single file from the Python engine, a folder of part files from Spark: read either with
``pyarrow.parquet.read_table`` or Spark) and ``summary.json`` (identical for both engines).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder
from rocketlb_core.replay.producer import (
    OUTPUT_COLUMNS,
    Aggregates,
    Conditions,
    ReplayConfig,
    replay_producer,
    summary_of,
)
from rocketlb_core.trace import Trace, load_trace

SPARK_SCHEMA = ("producer string, seq long, due_ms long, start_ms long, end_ms long, "
                "status string, broker string, queue_id int, attempts int, error string")


def _fault_tolerance(trace: Trace, config: ReplayConfig, producer: str) -> bool:
    if config.fault_tolerance is not None:
        return config.fault_tolerance
    return bool(trace.meta.get("fault_tolerance", {}).get(producer, False))


def write_summary(folder: Path, summary: dict[str, Any]) -> None:
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")


def _producers(trace: Trace) -> Iterator[tuple[str, list[int]]]:
    times, names = trace.sends["time_ms"], trace.sends["producer"]
    start = 0
    for i in range(1, len(names) + 1):
        if i == len(names) or names[i] != names[start]:
            yield names[start], times[start:i]
            start = i


def replay_rows(trace: Trace, config: ReplayConfig) -> Iterator[tuple[Any, ...]]:
    """Every producer's replayed sends, producer by producer (``OUTPUT_COLUMNS`` rows)."""
    route = trace.layout.routes[trace.topic]
    conditions = Conditions.from_columns(trace.conditions)
    for producer, times in _producers(trace):
        yield from replay_producer(producer, times, trace.topic, route, conditions,
                                   _fault_tolerance(trace, config, producer), config)


def replay_producers_python(trace_dir: Path, out_dir: Path, config: ReplayConfig,
                            progress: Callable[[int, int], None] | None = None
                            ) -> dict[str, Any]:
    """Replay every producer of a trace in this process."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    trace = load_trace(trace_dir)
    agg = Aggregates()
    columns: dict[str, list[Any]] = {c: [] for c in OUTPUT_COLUMNS}
    total = len(trace.sends["time_ms"])
    with atomic_folder(out_dir) as tmp:
        for done, row in enumerate(replay_rows(trace, config), start=1):
            agg.add(row)
            for c, v in zip(OUTPUT_COLUMNS, row, strict=True):
                columns[c].append(v)
            if progress and (done % 50_000 == 0 or done == total):
                progress(done, total)
        types = {"seq": pa.int64(), "due_ms": pa.int64(), "start_ms": pa.int64(),
                 "end_ms": pa.int64(), "queue_id": pa.int32(), "attempts": pa.int32()}
        table = pa.table({c: pa.array(columns[c], types.get(c, pa.string()))
                          for c in OUTPUT_COLUMNS})
        pq.write_table(table, tmp / "sends.parquet", compression="zstd")
        summary = summary_of(agg, config, str(trace.meta.get("name", trace_dir.name)))
        write_summary(tmp, summary)
    return summary


def spark_send_rows(spark: Any, trace_dir: Path, config: ReplayConfig) -> tuple[Any, str]:
    """The replayed sends as a Spark DataFrame (``SPARK_SCHEMA``; one ``applyInPandas`` task
    per producer), and the trace's name. Nothing is collected to the driver."""
    import pandas as pd

    from rocketlb_core.trace import SENDS

    small = load_trace(trace_dir, sends=False)   # the small files; sends are checked on Spark
    route = small.layout.routes[small.topic]
    conditions = Conditions.from_columns(small.conditions)
    topic = small.topic
    recorded = dict(small.meta.get("fault_tolerance", {}))
    name = str(small.meta.get("name", trace_dir.name))
    spark_types = {"int64": "bigint", "int32": "int", "string": "string", "double": "double"}
    ddl = ", ".join(f"{c} {spark_types[t]}" for c, t in SENDS.items())
    raw = spark.read.schema(ddl).parquet(str(trace_dir / "sends.parquet"))
    _validate_sends_on_spark(raw, trace_dir / "sends.parquet", topic)
    sends = raw.select("producer", "time_ms")

    def per_producer(pdf: pd.DataFrame) -> pd.DataFrame:
        pdf = pdf.sort_values("time_ms", kind="stable")
        producer = str(pdf["producer"].iloc[0])
        ft = config.fault_tolerance if config.fault_tolerance is not None else \
            bool(recorded.get(producer, False))
        rows = list(replay_producer(producer, pdf["time_ms"].tolist(), topic, route,
                                    conditions, ft, config))
        return pd.DataFrame(rows, columns=list(OUTPUT_COLUMNS))

    return sends.groupBy("producer").applyInPandas(per_producer, SPARK_SCHEMA), name


def _validate_sends_on_spark(df: Any, path: Path, topic: str) -> None:
    """The row checks of ``load_trace`` as one Spark aggregation (nothing is collected but
    counts and, on failure, the first offending row). The Spark engine sorts each producer's
    sends itself, so it does not require the file's order."""
    from pyspark.sql import functions as F

    from rocketlb_core.traces import TraceError

    checks = {
        "producer": F.col("producer").isNull(),
        "time_ms": F.col("time_ms").isNull() | (F.col("time_ms") < 0),
        "topic": F.col("topic").isNull() | (F.col("topic") != F.lit(topic)),
        "size": F.col("size").isNull() | (F.col("size") < 0),
    }
    counts = df.agg(F.count(F.lit(1)).alias("rows"), *[
        F.sum(F.when(cond, 1).otherwise(0)).alias(c) for c, cond in checks.items()]).first()
    if counts is None or counts["rows"] == 0:
        raise TraceError(path, None, None, "no rows")
    for column, cond in checks.items():
        if counts[column]:
            bad = df.where(cond).select("producer", "time_ms", column).first()
            raise TraceError(path, None, column, f"{counts[column]} bad values, e.g. producer "
                                                 f"{bad['producer']!r} at time {bad['time_ms']}")


def replay_producers_spark(trace_dir: Path, out_dir: Path, config: ReplayConfig,
                           master: str | None = None) -> dict[str, Any]:
    """Replay on Spark: one ``applyInPandas`` task per producer; only aggregates reach the
    driver. The small parts of the trace (layout, conditions, metadata) are validated on the
    driver; the sends are read by Spark with their declared schema."""
    from pyspark.sql import functions as F

    from rocketlb_core.spark import spark_session

    spark = spark_session(master)
    out, name = spark_send_rows(spark, trace_dir, config)
    with atomic_folder(out_dir) as tmp:
        out.write.mode("overwrite").parquet(str(tmp / "sends.parquet"))
        rows = spark.read.parquet(str(tmp / "sends.parquet"))
        agg = Aggregates()
        stored = rows.where(F.col("status") != "FAILED")
        agg.sends = rows.count()
        first = rows.select(F.sum(F.greatest(F.col("attempts") - 1, F.lit(0)))).first()
        agg.retries = int(first[0] or 0) if first is not None else 0
        for r in rows.where(F.col("status") == "FAILED").groupBy("error").count().collect():
            agg.failures[r["error"] or "?"] = int(r["count"])
        for r in stored.groupBy("broker", "queue_id").count().collect():
            agg.by_broker[r["broker"]] += int(r["count"])
            agg.by_queue[f"{r['broker']}/{r['queue_id']}"] = int(r["count"])
        for r in stored.groupBy((F.col("end_ms") - F.col("due_ms")).alias("lat")).count() \
                .collect():
            agg.latency[int(r["lat"])] = int(r["count"])
        agg.stored = sum(agg.by_broker.values())
        summary = summary_of(agg, config, name)
        write_summary(tmp, summary)
    return summary


def print_progress(done: int, total: int) -> None:
    """A one-line progress bar on stderr (only when stderr is a terminal)."""
    if not sys.stderr.isatty() or total == 0:
        return
    width = 40
    filled = int(width * done / total)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} sends")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()
