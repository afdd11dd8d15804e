"""Replaying recorded traffic through the balancing algorithms: what would have happened with
other settings? Two engines with identical results: pure Python (``engine="python"``) for small
traces and notebooks, Spark for any size (``rocketlb_core.replay.spark_engine``)."""
