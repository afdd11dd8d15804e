"""Trace replay: both engines agree on every shipped trace, what-if answers make sense, and
malformed traces fail clearly without leaving output behind."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rocketlb_core import data_path
from rocketlb_core.consumer.registry import default_strategies
from rocketlb_core.replay.config import OUTPUT_COLUMNS, ReplayConfig
from rocketlb_core.replay.consumer_engines import replay_consumers_python
from rocketlb_core.replay.engines import replay_producers_python
from rocketlb_core.spark.consumer_replay import replay_consumers_spark
from rocketlb_core.spark.producer_replay import replay_producers_spark
from rocketlb_core.trace.read import load_trace
from rocketlb_core.trace.schema import TraceError

TRACES = sorted(p.parent for p in data_path("traces").glob("*/trace.json"))
STRATEGIES = list(default_strategies())      # every strategy that needs no configuration
KAFKA = ["kafka-range", "kafka-roundrobin", "kafka-sticky",   # Kafka's assignors on Kafka's
         "kafka-cooperative-sticky", "kafka-uniform",          # view of the group
         "kafka-server-range"]


def test_the_shipped_traces() -> None:
    assert {p.name for p in TRACES} == {"steady-day", "seed002-outage", "slow-broker",
                                         "membership-day", "multi-room"}
    total = sum(f.stat().st_size for p in TRACES for f in p.iterdir())
    assert total < 50 * 2**20
    for p in TRACES:
        trace = load_trace(p)
        assert "recorded by rocketlb_core.simulate" in trace.meta["provenance"]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _rows(path: Path, columns: tuple[str, ...], key: tuple[str, ...]) -> list[dict[str, object]]:
    rows = [{c: r[c] for c in columns} for r in pq.read_table(path).to_pylist()]
    return sorted(rows, key=lambda r: tuple(str(r[k]) for k in key))


@pytest.mark.spark
@pytest.mark.parametrize("trace", TRACES, ids=lambda p: p.name)
def test_python_and_spark_engines_give_identical_outputs(spark, trace: Path,
                                                         tmp_path: Path) -> None:
    config = ReplayConfig(fault_tolerance=None)
    a = replay_producers_python(trace, tmp_path / "py", config)
    b = replay_producers_spark(trace, tmp_path / "spark", config)
    assert a == b
    assert json.loads((tmp_path / "py" / "summary.json").read_text()) == \
        json.loads((tmp_path / "spark" / "summary.json").read_text())
    key = ("producer", "seq")
    assert _rows(tmp_path / "py" / "sends.parquet", OUTPUT_COLUMNS, key) == \
        _rows(tmp_path / "spark" / "sends.parquet", OUTPUT_COLUMNS, key)
    assert _files(tmp_path / "py") == _files(tmp_path / "spark")       # byte for byte
    kafka = ReplayConfig(partitioner="kafka")                          # Kafka's partitioner
    assert replay_producers_python(trace, tmp_path / "kpy", kafka) == \
        replay_producers_spark(trace, tmp_path / "kspark", kafka)
    assert _files(tmp_path / "kpy") == _files(tmp_path / "kspark")
    grpc = ReplayConfig(client="grpc", seed=5)                         # the gRPC producer
    assert replay_producers_python(trace, tmp_path / "gpy", grpc) == \
        replay_producers_spark(trace, tmp_path / "gspark", grpc)
    assert _files(tmp_path / "gpy") == _files(tmp_path / "gspark")
    if load_trace(trace).membership is not None:
        ca = replay_consumers_python(trace, tmp_path / "cpy", None, STRATEGIES + KAFKA, seed=3)
        cb = replay_consumers_spark(trace, tmp_path / "cspark", None, STRATEGIES + KAFKA,
                                    seed=3)
        assert ca == cb
        cols = ("strategy", "change", "time_ms", "member", "client_id", "broker", "queue_id")
        assert _rows(tmp_path / "cpy" / "assignments.parquet", cols, cols) == \
            _rows(tmp_path / "cspark" / "assignments.parquet", cols, cols)
        lag = ("strategy", "time_s", "queue", "lag")
        assert _rows(tmp_path / "cpy" / "lag.parquet", lag, lag) == \
            _rows(tmp_path / "cspark" / "lag.parquet", lag, lag)


def test_what_if_fault_tolerance_over_the_recorded_outage(tmp_path: Path) -> None:
    trace = data_path("traces", "seed002-outage")
    on = replay_producers_python(trace, tmp_path / "on", ReplayConfig(fault_tolerance=True))
    off = replay_producers_python(trace, tmp_path / "off", ReplayConfig(fault_tolerance=False))
    assert on["sends"] == off["sends"] == len(load_trace(trace).sends["time_ms"])
    assert on["failed"] < off["failed"]
    assert on["latency_ms_p99"] < off["latency_ms_p99"]
    v5 = replay_producers_python(trace, tmp_path / "v5", ReplayConfig(line="5.3.3",
                                                                       fault_tolerance=True))
    assert v5["stored_by_broker"]["broker-a"] > on["stored_by_broker"]["broker-a"]  # 10 s, not 600


def test_kafkas_partitioner_over_the_recorded_outage(tmp_path: Path) -> None:
    """broker-a falls silent at 60 s and is back at 240 s. Kafka's producer has no second
    broker to retry on: records sent to broker-a before the controller fences it (9 s) wait for
    its return and expire after 120 s; once fenced, its partitions are skipped."""
    trace = data_path("traces", "seed002-outage")
    out = replay_producers_python(trace, tmp_path / "k", ReplayConfig(partitioner="kafka"))
    assert out["config"]["partitioner"] == "kafka"
    assert out["sends"] == len(load_trace(trace).sends["time_ms"])
    rows = pq.read_table(tmp_path / "k" / "sends.parquet").to_pylist()
    failed = [r for r in rows if r["status"] == "FAILED"]
    assert failed
    assert {r["broker"] for r in failed} == {"broker-a"}
    assert all(60_000 <= r["due_ms"] < 60_000 + 9_000 + 1_000 for r in failed)
    assert all(r["end_ms"] - r["due_ms"] == 120_000 for r in failed)     # delivery.timeout.ms
    fenced = [r for r in rows if 70_000 <= r["due_ms"] < 240_000 and r["status"] != "FAILED"]
    assert fenced
    assert all(r["broker"] == "broker-b" for r in fenced)


def test_consumer_what_if_on_the_membership_day(tmp_path: Path) -> None:
    out = replay_consumers_python(data_path("traces", "membership-day"), tmp_path / "c", None,
                                  STRATEGIES)["strategies"]
    assert out["STICKY"]["queues_moved"] <= out["AVG"]["queues_moved"]
    assert out["AVG"]["unowned_ms_total"] >= 120_000           # the crash waits for expiry
    assert all(s["double_owned_ms_total"] == 0 for s in out.values())
    # The crash leaves one of AVG's queues undrained for 120 s: 20 msg/s over 8 queues = 2.5/s
    assert 250 <= out["AVG"]["lag_max"] <= 350
    assert out["AVG"]["lag_message_seconds"] > 0
    assert set(out["AVG"]["lag_max_by_queue"]) == {f"broker-{b}/{i}" for b in "ab"
                                                   for i in range(4)}


def test_kafka_what_if_on_the_membership_day(tmp_path: Path) -> None:
    """Kafka's group drops the crashed member after its 45 s session, not RocketMQ's 120 s
    channel expiry; a range assignor on one topic gives AVG's shares, in member-id order."""
    trace = data_path("traces", "membership-day")
    out = replay_consumers_python(trace, tmp_path / "c", None, ["AVG", *KAFKA])
    s = out["strategies"]
    assert out["seed"] == 0
    assert s["AVG"]["unowned_ms_total"] == 120_000
    assert s["kafka-range"]["unowned_ms_total"] == s["kafka-roundrobin"]["unowned_ms_total"] \
        == 45_000
    assert s["kafka-range"]["lag_max"] < s["AVG"]["lag_max"]
    assert s["kafka-range"]["changes"] == s["AVG"]["changes"]
    rows = pq.read_table(tmp_path / "c" / "assignments.parquet").to_pylist()
    for change in {r["change"] for r in rows if r["strategy"] == "kafka-range"}:
        shares = Counter(r["member"] for r in rows
                         if r["strategy"] == "kafka-range" and r["change"] == change)
        assert max(shares.values()) - min(shares.values()) <= 1      # range: even shares
    # sticky: fewer moves than range; cooperative: the same moves, an extra rebalance when a
    # partition moves between two members that both stay (a departed member's partitions are
    # free at once), each such partition unowned between the two
    assert s["kafka-sticky"]["queues_moved"] < s["kafka-range"]["queues_moved"]
    coop = s["kafka-cooperative-sticky"]
    assert coop["moved_per_change"] == s["kafka-sticky"]["moved_per_change"]
    extra = sum(1 for m in coop["moved_per_change"] if m)
    assert coop["changes"] < coop["rebalances"] <= coop["changes"] + extra
    assert coop["unowned_ms_total"] > s["kafka-sticky"]["unowned_ms_total"]
    # KIP-848: no rebalance; a moved partition waits for two heartbeats (old owner, new owner)
    kip848 = s["kafka-uniform"]
    assert kip848["rebalances"] == 0
    assert kip848["queues_moved"] < s["kafka-range"]["queues_moved"]
    assert kip848["unowned_ms_total"] > s["kafka-sticky"]["unowned_ms_total"]
    # the server's range assignor is not sticky: range's moves, without a rebalance
    assert s["kafka-server-range"]["queues_moved"] > kip848["queues_moved"]
    assert s["kafka-server-range"]["rebalances"] == 0
    again = replay_consumers_python(trace, tmp_path / "d", None, KAFKA)
    assert again["strategies"] == {k: s[k] for k in KAFKA}           # same seed, same result


def test_the_replay_is_deterministic(tmp_path: Path) -> None:
    trace = data_path("traces", "slow-broker")
    replay_producers_python(trace, tmp_path / "a", ReplayConfig())
    replay_producers_python(trace, tmp_path / "b", ReplayConfig())
    assert set(_files(tmp_path / "a")) == {"sends.parquet/part-00000.parquet", "summary.json",
                                           ".rocketlb-output.json"}
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


# ------------------------------------------------------------------ malformed traces
def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "trace"
    shutil.copytree(data_path("traces", "seed002-outage"), dst)
    return dst


def _rewrite(path: Path, change) -> None:
    table = pq.read_table(path)
    pq.write_table(change(table), path)


def _set(table: pa.Table, column: str, values: list[object], typ: pa.DataType) -> pa.Table:
    return table.set_column(table.column_names.index(column), column, pa.array(values, typ))


MUTATIONS = {      # name: (file, field, row named by the error, change)
    "missing column": ("sends.parquet", "producer", None,
                       lambda t: t.drop_columns(["producer"])),
    "wrong type": ("sends.parquet", "time_ms", None,
                   lambda t: _set(t, "time_ms", [str(v) for v in t.column("time_ms").to_pylist()],
                                  pa.string())),
    "negative time": ("sends.parquet", "time_ms", 3,
                      lambda t: _set(t, "time_ms", [*t.column("time_ms").to_pylist()[:2], -5,
                                                    *t.column("time_ms").to_pylist()[3:]],
                                     pa.int64())),
    "unordered times": ("sends.parquet", "time_ms", 2,
                        lambda t: _set(t, "time_ms", [10**9, *t.column("time_ms").to_pylist()[1:]],
                                       pa.int64())),
    "unknown broker": ("conditions.parquet", "broker", 1,
                       lambda t: _set(t, "broker",
                                      ["broker-zz", *t.column("broker").to_pylist()[1:]],
                                      pa.string())),
    "empty file": ("sends.parquet", None, None, lambda t: t.slice(0, 0)),
    "missing value": ("sends.parquet", "producer", 1,
                      lambda t: _set(t, "producer", [None, *t.column("producer").to_pylist()[1:]],
                                     pa.string())),
    "wrong topic": ("sends.parquet", "topic", 5,
                    lambda t: _set(t, "topic", [*t.column("topic").to_pylist()[:4], "Other",
                                                *t.column("topic").to_pylist()[5:]],
                                   pa.string())),
    "two producers in a row group": ("sends.parquet", "producer", 10,
                                     lambda t: _set(t, "producer",
                                                    [*t.column("producer").to_pylist()[:9],
                                                     *["zz"] * (t.num_rows - 9)], pa.string())),
}


def _assert_rejected(engine, tmp_path: Path, name: str) -> None:
    """A mutated trace fails naming its file, row and field, and leaves no output or temp
    folder."""
    file, field, row, change = MUTATIONS[name]
    trace = _copy(tmp_path)
    _rewrite(trace / file, change)
    with pytest.raises(TraceError) as info:
        engine(trace, tmp_path / "out", ReplayConfig())
    assert Path(info.value.path).name == file
    assert info.value.field == field
    assert info.value.row == row
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["trace"]     # no temporary folder left


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_malformed_traces_fail_clearly_and_leave_nothing(tmp_path: Path, name: str) -> None:
    _assert_rejected(replay_producers_python, tmp_path, name)


@pytest.mark.spark
@pytest.mark.parametrize("name", ["negative time", "missing value", "empty file",
                                  "unordered times", "two producers in a row group"])
def test_the_spark_engine_rejects_the_same_traces(spark, tmp_path: Path, name: str) -> None:
    """The driver checks the sends from the footers; the time order is checked in the Spark
    task and the error comes back to the driver as the same ``TraceError``."""
    _assert_rejected(replay_producers_spark, tmp_path, name)


def test_the_layout_tool_makes_any_order_replayable(tmp_path: Path) -> None:
    src = data_path("traces", "steady-day")
    shuffled = tmp_path / "shuffled"
    shutil.copytree(src, shuffled)
    table = pq.read_table(shuffled / "sends.parquet")
    pq.write_table(table.take(list(range(table.num_rows))[::-1]), shuffled / "sends.parquet")
    with pytest.raises(TraceError, match="one producer per row group"):
        replay_producers_python(shuffled, tmp_path / "bad", ReplayConfig())
    subprocess.run([sys.executable, "-m", "rocketlb_core", "trace", "layout", str(shuffled),
                    "--out", str(tmp_path / "fixed"), "--producers-per-file", "2"], check=True,
                   timeout=300)
    assert len(list((tmp_path / "fixed" / "sends.parquet").glob("*.parquet"))) == 2
    a = replay_producers_python(src, tmp_path / "a", ReplayConfig())
    b = replay_producers_python(tmp_path / "fixed", tmp_path / "b", ReplayConfig())
    assert a == b


def test_a_csv_is_not_a_trace(tmp_path: Path) -> None:
    trace = _copy(tmp_path)
    (trace / "sends.parquet").write_text("time_ms,producer\n1,p\n")
    proc = subprocess.run([sys.executable, "-m", "rocketlb_core.replay", "producer", "--trace",
                           str(trace), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "sends.parquet" in proc.stderr
    assert "not a Parquet file" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_trace_metadata_and_layout_errors(tmp_path: Path) -> None:
    trace = _copy(tmp_path)
    (trace / "trace.json").write_text("{not json")
    with pytest.raises(TraceError, match=r"trace\.json, row 1: invalid JSON"):
        load_trace(trace)
    trace2 = _copy(tmp_path / "b")
    (trace2 / "route.csv").write_text("topic,broker_name\n")
    with pytest.raises(TraceError, match="missing column"):
        load_trace(trace2)


def test_cli_help_and_a_run(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "rocketlb_core.replay", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert "producer" in proc.stdout
    assert "consumer" in proc.stdout
    run = subprocess.run([sys.executable, "-m", "rocketlb_core.replay", "consumer", "--trace",
                          str(data_path("traces", "membership-day")), "--out",
                          str(tmp_path / "c"), "--strategies", "AVG,STICKY"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert set(json.loads(run.stdout)["strategies"]) == {"AVG", "STICKY"}


@pytest.mark.spark
def test_progress_is_reported_by_both_engines(spark, tmp_path: Path) -> None:
    trace = data_path("traces", "steady-day")
    py: list[tuple[int, int]] = []
    sp: list[tuple[int, int]] = []
    replay_producers_python(trace, tmp_path / "py", ReplayConfig(), lambda d, t: py.append((d, t)))
    replay_producers_spark(trace, tmp_path / "sp", ReplayConfig(),
                           progress=lambda d, t: sp.append((d, t)))
    sends = len(load_trace(trace).sends["time_ms"])
    assert py[-1] == (sends, sends)
    assert [d for d, _ in py] == sorted(d for d, _ in py)
    assert sp[-1] == (1, 1)                        # one sends file, one task


@pytest.mark.spark
def test_a_generated_multi_file_trace_replays_identically(spark, tmp_path: Path) -> None:
    """Several sends files: one Spark task per file (partition i of the union is file i), the
    same bytes as the Python engine, for fault tolerance on and off."""
    from rocketlb_core.trace.generate import generate

    trace = tmp_path / "t"
    generate(trace, 120_000, producers=5, rate=400.0, files=3, seed=1)
    assert len(list((trace / "sends.parquet").glob("*.parquet"))) == 3
    for ft in (True, False):
        config = ReplayConfig(fault_tolerance=ft)
        a = replay_producers_python(trace, tmp_path / f"py-{ft}", config)
        b = replay_producers_spark(trace, tmp_path / f"sp-{ft}", config)
        assert a == b
        assert a["sends"] == 120_000
        assert _files(tmp_path / f"py-{ft}") == _files(tmp_path / f"sp-{ft}")
        parts = pq.read_table(tmp_path / f"py-{ft}" / "sends.parquet")
        assert parts.num_rows == 120_000
        assert len(set(parts.column("producer").to_pylist())) == 5
    assert a["failed"] > 0                   # fault tolerance off meets the outage


CONNECT_REPLAY = """
import json, sys
from pathlib import Path
from rocketlb_core.spark.producer_replay import replay_producers_spark
from rocketlb_core.replay.config import ReplayConfig
seen = []
summary = replay_producers_spark(Path(sys.argv[1]), Path(sys.argv[2]), ReplayConfig(),
                                 progress=lambda d, t: seen.append([d, t]))
print(json.dumps({"summary": summary, "progress": seen}))
"""


@pytest.mark.spark
def test_the_spark_engine_over_spark_connect(tmp_path: Path) -> None:
    """One setting (``ROCKETLB_SPARK_MASTER``) moves the replay to Spark Connect: same bytes,
    progress through Connect's progress handler."""
    import os

    trace = data_path("traces", "steady-day")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCKETLB_")}
    env["ROCKETLB_SPARK_MASTER"] = "connect:local[2]"
    proc = subprocess.run([sys.executable, "-c", CONNECT_REPLAY, str(trace),
                           str(tmp_path / "connect")], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    expected = replay_producers_python(trace, tmp_path / "py", ReplayConfig())
    assert got["summary"] == expected
    assert got["progress"][-1] == [1, 1]
    assert _files(tmp_path / "connect") == _files(tmp_path / "py")


@pytest.mark.spark
def test_a_corrupt_page_is_bad_input_on_both_engines(spark, tmp_path: Path) -> None:
    """A sends file whose footer is whole but whose data is not: both engines name the file
    (exit 2 from the command), neither leaves output behind."""
    trace = tmp_path / "trace"
    shutil.copytree(data_path("traces", "seed002-outage"), trace)
    path = trace / "sends.parquet"
    data = bytearray(path.read_bytes())
    for at in range(8, len(data) // 4, 97):           # the first column chunk: time_ms
        data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    for engine in (replay_producers_python, replay_producers_spark):
        with pytest.raises(TraceError) as info:
            engine(trace, tmp_path / "out", ReplayConfig())
        assert Path(info.value.path) == path
        assert not (tmp_path / "out").exists()
