"""The Spark layer: a session helper and the trace readers that run on it.

Imported lazily (``rocketlb_core.spark_session`` resolves here on first use), so ``import
rocketlb_core`` never starts a JVM or imports PySpark.
"""

from rocketlb_core.spark.session import resolve_master, spark_session

__all__ = ["resolve_master", "spark_session"]
