"""Reading trace files on Spark, with the schemas of ``data/README.md``.

Every reader states its schema explicitly and uses ``FAILFAST``, so a malformed row stops the job
instead of becoming a silent null. For small files the pure-Python loader
(``rocketlb_core.trace.cluster``, ``rocketlb_core.trace.read``) gives friendlier, row-level
errors; call it first when you can.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rocketlb_core.trace.schema import BROKER_FIELDS, ROUTE_FIELDS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_INT_FIELDS = {"broker_id", "read_queue_nums", "write_queue_nums", "perm"}


def _ddl(fields: tuple[str, ...]) -> str:
    return ", ".join(f"{f} {'INT' if f in _INT_FIELDS else 'STRING'}" for f in fields)


BROKERS_DDL = _ddl(BROKER_FIELDS)
ROUTE_DDL = _ddl(ROUTE_FIELDS)


def _csv(spark: SparkSession, path: Path | str, ddl: str) -> DataFrame:
    return (
        spark.read.option("header", "true").option("mode", "FAILFAST")
        .option("enforceSchema", "false").schema(ddl).csv(str(path))
    )


def read_brokers(spark: SparkSession, folder: Path | str) -> DataFrame:
    """``brokers.csv`` of a cluster-layout folder."""
    return _csv(spark, Path(folder) / "brokers.csv", BROKERS_DDL)


def read_route(spark: SparkSession, folder: Path | str) -> DataFrame:
    """``route.csv`` of a cluster-layout folder."""
    return _csv(spark, Path(folder) / "route.csv", ROUTE_DDL)


def name_server_view(spark: SparkSession, folder: Path | str) -> DataFrame:
    """One row per topic and broker: the route entry joined with the broker's master and room.

    This is the table a name server answers from (spec 1.3 and 7): queue counts and permission
    per topic, with the master address a producer needs (``master`` is null when the broker group
    has no master registered, and then producers skip it).
    """
    from pyspark.sql import functions as F

    brokers = read_brokers(spark, folder)
    masters = brokers.where(F.col("broker_id") == 0).select(
        "broker_name", F.col("address").alias("master"), "room")
    replicas = brokers.groupBy("broker_name").agg(F.count("*").alias("replicas"))
    return (
        read_route(spark, folder)
        .join(masters, "broker_name", "left")
        .join(replicas, "broker_name", "left")
        .select("topic", "broker_name", "perm", "write_queue_nums", "read_queue_nums",
                "master", "replicas", "room")
        .orderBy("topic", "broker_name")
    )
