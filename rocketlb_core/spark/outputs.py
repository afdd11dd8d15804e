"""Reading the producer replay's per-send output on Spark (``data/README.md``, "Replay
outputs"), aggregated on the executors: only one row per time bucket and outcome reaches the
driver, however many sends the replay wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SENDS_DDL = ("producer STRING, seq BIGINT, due_ms BIGINT, start_ms BIGINT, end_ms BIGINT, "
             "status STRING, broker STRING, queue_id INT, attempts INT, error STRING")


def read_replayed_sends(spark: SparkSession, out_dir: Path | str) -> DataFrame:
    """``<out_dir>/sends.parquet`` of a producer replay, with its documented schema."""
    return spark.read.schema(SENDS_DDL).parquet(str(Path(out_dir) / "sends.parquet"))


def outcomes_over_time(spark: SparkSession, runs: Mapping[str, Path | str],
                       bucket_ms: int = 10_000, clock: str = "end_ms") -> DataFrame:
    """For each named replay output folder: per ``bucket_ms`` of ``clock`` (``end_ms``: when the
    send returned to the application; ``due_ms``: when it asked; ``start_ms``: when its thread
    took it up), how many sends were stored on each broker (``stored on <broker>``) and how many
    failed (``failed``). Columns ``setting, time_s, outcome, sends``, ordered; a bucket with no
    send of an outcome has no row."""
    from functools import reduce

    from pyspark.sql import functions as F

    if bucket_ms <= 0:
        raise ValueError(f"bucket_ms must be positive, not {bucket_ms}")
    if clock not in ("end_ms", "due_ms", "start_ms"):
        raise ValueError(f"clock must be end_ms, due_ms or start_ms, not {clock!r}")
    if not runs:
        raise ValueError("no replay outputs given")
    frames = []
    for name, folder in runs.items():
        sends = read_replayed_sends(spark, folder)
        outcome = F.when(F.col("status") == "FAILED", F.lit("failed")).otherwise(
            F.concat(F.lit("stored on "), F.col("broker")))
        frames.append(sends.select(
            F.lit(name).alias("setting"),
            ((F.col(clock) - F.col(clock) % bucket_ms) / 1000).alias("time_s"),
            outcome.alias("outcome")))
    return (reduce(lambda a, b: a.unionByName(b), frames)
            .groupBy("setting", "time_s", "outcome").agg(F.count(F.lit(1)).alias("sends"))
            .orderBy("setting", "time_s", "outcome"))
