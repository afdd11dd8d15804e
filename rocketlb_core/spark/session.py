"""One way to get a SparkSession: embedded ``local[*]`` by default, a cluster or Spark Connect by
one setting.

``spark_session()`` is what every chapter, test and command uses. The master comes from, in order:
the ``master`` argument, the ``ROCKETLB_SPARK_MASTER`` environment variable, ``local[*]``.

* ``local[*]``, ``local[2]``: embedded Spark in this process (needs Java; see ``spark.java``).
* ``spark://host:7077``, ``yarn``, ``k8s://...``: a classic cluster master
  (``spark.standalone`` starts a standalone one on this machine from the installed PySpark).
* ``sc://host:15002``: a Spark Connect server (thin client, no local JVM needed).
* ``connect:local[2]``: Spark Connect against a server PySpark starts in this process; the same
  code path as a remote Connect server, handy for testing it.

What the helper guarantees, so notebook cells stay clean and deterministic: session time zone UTC,
Arrow on (with no silent fallback), ``PYSPARK_PYTHON`` set to the running interpreter, no console
progress bar and no UI, and nothing from the JVM or log4j written into a cell: file descriptor 2
points at a log file while the JVM is spawned, and the JVM keeps that file as its stderr.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocketlb_core.spark.java import ensure_java

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
ENV_MASTER = "ROCKETLB_SPARK_MASTER"
ENV_LOG = "ROCKETLB_SPARK_LOG"

_BASE_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
}
_CLASSIC_ONLY: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
}


def resolve_master(master: str | None = None) -> str:
    """The master the helper uses: argument, then ``$ROCKETLB_SPARK_MASTER``, then local."""
    value = master or os.environ.get(ENV_MASTER) or DEFAULT_MASTER
    return value.strip()


def _is_connect(master: str) -> bool:
    return master.startswith(("sc://", "connect:"))


def _log_path() -> Path:
    path = os.environ.get(ENV_LOG)
    if path:
        return Path(path)
    return Path(tempfile.gettempdir()) / f"rocketlb-spark-{os.getuid()}.log"


def spark_session(
    master: str | None = None,
    *,
    app_name: str = "rocketlb",
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """Get or create the SparkSession for ``master`` (see the module docstring for the forms).

    ``conf`` adds or overrides Spark settings (for example ``spark.driver.memory``).
    """
    target = resolve_master(master)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    local = target.startswith("local") or target.startswith("connect:local")
    if local or target.startswith(("spark://127.0.0.1:", "spark://localhost:")):
        # the driver then listens on loopback only, as the cluster it talks to does
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if not target.startswith("sc://"):
        ensure_java()

    from pyspark.sql import SparkSession

    builder: Any = SparkSession.builder.appName(app_name)
    if _is_connect(target):
        builder = builder.remote(target.removeprefix("connect:"))
        settings = dict(_BASE_CONF)
    else:
        builder = builder.master(target)
        settings = {**_BASE_CONF, **_CLASSIC_ONLY}
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)

    log = _log_path()
    log.parent.mkdir(parents=True, exist_ok=True)
    saved = os.dup(2)
    log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        sys.stderr.flush()
        os.dup2(log_fd, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            session = builder.getOrCreate()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log_fd)
    if not _is_connect(target):
        session.sparkContext.setLogLevel("ERROR")
    return session
