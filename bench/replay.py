"""Producer replay at scale, on a generated trace (``rocketlb_core.replay.generate``).

Three measurements in the same run, all on the same trace:
* the Spark engine end to end on ``local[2]`` (session start excluded);
* Spark's floor for that data movement: the same pipeline (read, group by producer, one task
  per producer, write per-send rows) with the per-send work replaced by a no-op;
* the pure-Python engine.
Issue target: >= 2 M sends/s end to end, within 1.25x Spark's floor. Run:
.venv/bin/python bench/replay.py --sends 10000000   (generates /tmp/rocketlb-bench-trace-<N>)
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from rocketlb_core.replay.engines import (
    SPARK_SCHEMA,
    replay_producers_python,
    replay_producers_spark,
)
from rocketlb_core.replay.generate import generate
from rocketlb_core.replay.producer import ReplayConfig


def spark_floor(spark, trace: Path, out: Path) -> None:
    import pandas as pd

    sends = spark.read.parquet(str(trace / "sends.parquet")).select("producer", "time_ms")

    def noop(pdf: pd.DataFrame) -> pd.DataFrame:
        n = len(pdf)
        return pd.DataFrame({"producer": pdf["producer"], "seq": range(n), "due_ms": pdf["time_ms"],
                             "start_ms": pdf["time_ms"], "end_ms": pdf["time_ms"],
                             "status": "SEND_OK", "broker": "b", "queue_id": 0, "attempts": 1,
                             "error": None})

    sends.groupBy("producer").applyInPandas(noop, SPARK_SCHEMA).write.mode("overwrite") \
        .parquet(str(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sends", type=int, default=10_000_000)
    ap.add_argument("--producers", type=int, default=64)
    ap.add_argument("--skip-python", action="store_true")
    args = ap.parse_args()
    trace = Path(tempfile.gettempdir()) / f"rocketlb-bench-trace-{args.sends}"
    if not (trace / "trace.json").exists():
        t0 = time.perf_counter()
        generate(trace, args.sends, args.producers, 24.0)
        print(f"generated {args.sends} sends in {time.perf_counter() - t0:.1f} s")
    from rocketlb_core.spark import spark_session

    spark = spark_session("local[2]")
    work = Path(tempfile.mkdtemp(prefix="rocketlb-bench-"))
    cfg = ReplayConfig(fault_tolerance=True)
    rows = {}
    t0 = time.perf_counter()
    spark_floor(spark, trace, work / "floor")
    rows["spark_floor_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    summary = replay_producers_spark(trace, work / "spark", cfg, "local[2]")
    rows["spark_engine_s"] = time.perf_counter() - t0
    if not args.skip_python:
        t0 = time.perf_counter()
        py = replay_producers_python(trace, work / "py", cfg)
        rows["python_engine_s"] = time.perf_counter() - t0
        rows["summaries_equal"] = py == summary
    n = args.sends
    out = {"sends": n, **{k: round(v, 2) if isinstance(v, float) else v for k, v in rows.items()}}
    for k in ("spark_floor_s", "spark_engine_s", "python_engine_s"):
        if k in rows:
            out[k.replace("_s", "_sends_per_s")] = round(n / rows[k])
    out["spark_engine_over_floor"] = round(rows["spark_engine_s"] / rows["spark_floor_s"], 2)
    for k, v in out.items():
        print(f"{k:32} {v}")
    print(json.dumps(out), flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
