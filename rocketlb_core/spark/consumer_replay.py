"""The Spark engine of the consumer replay (``rocketlb_core.replay.consumer_engines`` is the
Python one): each strategy one group of a ``groupBy("strategy").applyInPandas`` (Spark shuffles
only the strategies' names, so adaptive execution coalesces the groups into one task, whatever the
trace's size, and the strategies run one after another there), identical summaries, the same rows
in ``assignments.parquet`` and ``lag.parquet`` (Spark's writer names its part files)."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rocketlb_core.replay.config import ReplayConfig
from rocketlb_core.replay.consumer import ASSIGNMENT_COLUMNS, replay_group
from rocketlb_core.replay.consumer_engines import LAG_COLUMNS, replay_consumers
from rocketlb_core.replay.lag import BUCKET_MS
from rocketlb_core.spark.producer_replay import replay_producers_spark
from rocketlb_core.spark.session import spark_session


def replay_consumers_spark(trace_dir: Path, out_dir: Path, group: str | None,
                           strategies: Sequence[str], master: str | None = None, *,
                           force: bool = False, seed: int = 0) -> dict[str, Any]:
    """``rocketlb_core.replay.consumer_engines.replay_consumers_python`` on Spark (``master``
    as ``rocketlb_core.spark.spark_session``)."""
    return replay_consumers(
        trace_dir, out_dir, group, strategies, force=force, read_sends=False, seed=seed,
        tables=lambda trace, g, names, tmp, result: _tables(trace, g, names, tmp, master,
                                                            result))


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


def _tables(trace: Any, group: str, strategies: list[str], tmp: Path, master: str | None,
            result: dict[str, Any]) -> None:
    """Each strategy's group of the ``applyInPandas`` computes everything once (the groups share
    the tasks Spark gives the shuffle: one, under adaptive execution): a wide frame of summary,
    assignment and lag rows (``kind`` tells which), cached, then split into the two files and the
    summaries."""
    import pandas as pd
    from pyspark.sql import functions as F

    spark = spark_session(master)
    with tempfile.TemporaryDirectory(prefix="rocketlb-arrivals-", dir=tmp.parent) as scratch:
        arrivals = _spark_arrivals(spark, trace.folder, master, Path(scratch) / "replay")
    names = spark.createDataFrame([(s,) for s in strategies], "strategy string")
    seed = int(result.get("seed", 0))
    empty: dict[str, Any] = dict.fromkeys(("change", "time_ms", "member", "client_id", "broker",
                                           "queue_id", "time_s", "queue", "lag", "summary"))

    def everything(pdf: pd.DataFrame) -> pd.DataFrame:
        out: list[dict[str, Any]] = []
        for name, summary, rows, lags in replay_group(trace, group, list(pdf["strategy"]),
                                                     arrivals, seed=seed):
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
