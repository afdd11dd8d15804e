"""The producer replay's ``--client grpc`` (issue 34, item 4): the recorded sends through the
gRPC producer's balancer and send loop. Its per-queue counts are what the core's
``ProducerSendLoop`` gives when driven directly on the same sends; the option is named in the
summary and the part files; the remoting replay's outputs are untouched."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rocketlb_core import data_path
from rocketlb_core.grpc import GrpcQueue, ProducerSendLoop, PublishingLoadBalancer
from rocketlb_core.grpc.send import GrpcSendResult, Outcome
from rocketlb_core.replay.config import ReplayConfig
from rocketlb_core.replay.engines import replay_producers_python
from rocketlb_core.replay.grpc_producer import (
    HEARTBEAT_INITIAL_MS,
    HEARTBEAT_PERIOD_MS,
    MAX_ATTEMPTS,
    REQUEST_TIMEOUT_MS,
    ROUTE_INITIAL_MS,
    ROUTE_PERIOD_MS,
    balancer_start,
    grpc_queues,
)
from rocketlb_core.replay.task import CLIENT_KEY
from rocketlb_core.replay.timeline import Conditions
from rocketlb_core.trace.read import load_trace


class _Producer:
    """One producer of ``_direct``: the core's balancer and send loop, and its two timers."""

    def __init__(self, name: str, every: list[GrpcQueue], cond: Conditions, seed: int,
                 start: int) -> None:
        self.name, self.every, self.cond = name, every, cond
        self.balancer = PublishingLoadBalancer(every, balancer_start(seed, name))
        self.loop = ProducerSendLoop(MAX_ATTEMPTS)
        self.route_at, self.heartbeat_at = start + ROUTE_INITIAL_MS, start + HEARTBEAT_INITIAL_MS
        self.clock = 0

    def up(self, broker: str, t: int) -> bool:
        return self.cond.down_at(broker, t) is None and \
            not self.cond.partitioned(self.name, broker, t)

    def catch_up(self, limit: int) -> None:
        """The route fetches and heartbeats before ``limit``, in time order."""
        while min(self.route_at, self.heartbeat_at) < limit:
            if self.route_at < self.heartbeat_at:
                t = self.route_at
                self.balancer = self.balancer.update(
                    [q for q in self.every if self.cond.in_route_at(q.broker, t)])
                self.route_at += ROUTE_PERIOD_MS
            else:
                t = self.heartbeat_at
                listed = {q.endpoints for q in self.balancer.queues}
                self.loop.rejoin([q.endpoints for q in self.every
                                  if q.endpoints in listed and self.up(q.broker, t)])
                self.heartbeat_at += HEARTBEAT_PERIOD_MS

    def outcome(self, q: GrpcQueue, attempt: int) -> Outcome:
        if self.up(q.broker, self.clock):      # (the traces used here answer within 3 s)
            return "ok"
        assert self.cond.down_at(q.broker, self.clock) == "silent"     # the traces used here
        self.clock += REQUEST_TIMEOUT_MS
        self.catch_up(self.clock)
        return "fail"

    def send(self, start: int) -> GrpcSendResult:
        self.catch_up(start + 1)
        self.clock = start
        return self.loop.send(self.balancer, self.outcome)


def _direct(trace_dir: Path, seed: int, starts: dict[tuple[str, int], int]
            ) -> tuple[Counter[str], int, int]:
    """The core's balancer and send loop driven directly, send by send, on a trace's sends:
    (stored per ``broker/queue``, failed sends, retries). Each send starts when the replay
    says it did (``starts``: the sending thread's timing is not what is checked here); the
    producer's timers, the route and the outcomes are re-stated plainly from the trace."""
    trace = load_trace(trace_dir)
    cond = Conditions.from_columns(trace.conditions)
    every = grpc_queues(trace.topic, trace.layout.routes[trace.topic])
    stored: Counter[str] = Counter()
    failed = retries = 0
    seq: Counter[str] = Counter()
    producers: dict[str, _Producer] = {}
    for name in trace.sends["producer"]:
        start = starts[(name, seq[name])]
        seq[name] += 1
        if name not in producers:
            producers[name] = _Producer(name, every, cond, seed, start)
        result = producers[name].send(start)
        retries += len(result.attempts) - 1
        if result.ok:
            q = result.attempts[-1].queue
            stored[f"{q.broker}/{q.queue_id}"] += 1
        else:
            failed += 1
    return stored, failed, retries


def _starts(out: Path) -> dict[tuple[str, int], int]:
    rows = pq.read_table(out / "sends.parquet", columns=["producer", "seq", "start_ms"])
    return {(r["producer"], r["seq"]): r["start_ms"] for r in rows.to_pylist()}


@pytest.mark.parametrize(("name", "seed"), [("slow-broker", 7), ("seed002-outage", 0),
                                            ("seed002-outage", 11), ("multi-room", 5)])
def test_per_queue_counts_are_the_core_send_loops(tmp_path: Path, name: str, seed: int) -> None:
    trace = data_path("traces", name)
    out = replay_producers_python(trace, tmp_path / "g", ReplayConfig(client="grpc", seed=seed))
    stored, failed, retries = _direct(trace, seed, _starts(tmp_path / "g"))
    assert out["stored_by_queue"] == dict(sorted(stored.items()))
    assert out["failed"] == failed
    assert out["retries"] == retries
    assert out["config"]["client"] == "grpc"


def test_the_outage_isolates_the_silent_broker(tmp_path: Path) -> None:
    """broker-a falls silent at 60 s and is back at 240 s. The first attempt on it times out
    (3 s) and isolates it; the retry stores on broker-b; until a heartbeat is answered after
    240 s no send's candidates start on broker-a, so while the route still lists broker-a (its
    expiry, 120 s) broker-b's first queue takes the turns of broker-a's four (the walk from the
    counter skips to it): 5 of 8."""
    trace = data_path("traces", "seed002-outage")
    out = replay_producers_python(trace, tmp_path / "g", ReplayConfig(client="grpc"))
    assert out["failed"] == 0
    assert out["retries"] == 1
    assert out["latency_ms_max"] >= REQUEST_TIMEOUT_MS
    rows = pq.read_table(tmp_path / "g" / "sends.parquet").to_pylist()
    retried = [r for r in rows if r["attempts"] > 1]
    assert len(retried) == 1
    assert retried[0]["broker"] == "broker-b"
    assert 60_000 <= retried[0]["start_ms"] < 70_000
    during = [r for r in rows if retried[0]["end_ms"] <= r["start_ms"] < 240_000]
    assert during
    assert all(r["broker"] == "broker-b" for r in during)
    listed = Counter(r["queue_id"] for r in during if r["start_ms"] < 180_000)   # (expiry)
    assert 4.5 * listed[1] < listed[0] < 5.5 * listed[1]
    assert listed[1] == listed[2] == listed[3]
    after = [r for r in rows if r["start_ms"] >= 240_000 + ROUTE_PERIOD_MS + HEARTBEAT_PERIOD_MS]
    assert {r["broker"] for r in after} == {"broker-a", "broker-b"}


def test_the_client_is_named_and_the_remoting_outputs_are_untouched(tmp_path: Path) -> None:
    trace = data_path("traces", "slow-broker")
    g = replay_producers_python(trace, tmp_path / "g", ReplayConfig(client="grpc", seed=1))
    r = replay_producers_python(trace, tmp_path / "r", ReplayConfig(seed=1))
    assert g["config"] == {"line": "4.9.8", "fault_tolerance": None, "seed": 1,
                           "client": "grpc"}
    assert "client" not in r["config"]
    assert json.loads((tmp_path / "g" / "summary.json").read_text()) == g
    for folder, want in (("g", {CLIENT_KEY.encode(): b"grpc"}), ("r", None)):
        for part in sorted((tmp_path / folder / "sends.parquet").glob("*.parquet")):
            assert pq.ParquetFile(part).metadata.metadata == want
    again = replay_producers_python(trace, tmp_path / "g2", ReplayConfig(client="grpc", seed=1))
    assert again == g                                        # the seed decides everything
    other = replay_producers_python(trace, tmp_path / "g3", ReplayConfig(client="grpc", seed=2))
    assert other["sends"] == g["sends"]


def test_the_balancer_start_comes_from_the_seed() -> None:
    starts = {balancer_start(seed, "p") for seed in range(50)}
    assert len(starts) == 50
    assert all(0 <= s < 2**31 - 1 for s in starts)
    assert balancer_start(3, "p") == balancer_start(3, "p") != balancer_start(3, "q")


def test_bad_configurations() -> None:
    with pytest.raises(ValueError, match="unknown client"):
        ReplayConfig(client="http")
    with pytest.raises(ValueError, match="exclude"):
        ReplayConfig(client="grpc", partitioner="kafka")


def test_the_command(tmp_path: Path) -> None:
    trace = str(data_path("traces", "slow-broker"))
    base = [sys.executable, "-m", "rocketlb_core", "replay", "producer", "--trace", trace,
            "--quiet", "--client", "grpc"]
    done = subprocess.run([*base, "--out", str(tmp_path / "o"), "--seed", "4"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["config"]["client"] == "grpc"
    bad = subprocess.run([*base, "--out", str(tmp_path / "k"), "--partitioner", "kafka"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    assert "exclude each other" in bad.stderr
    assert not (tmp_path / "k").exists()


def test_a_slow_broker_that_is_up_times_out_at_the_request_timeout(tmp_path: Path) -> None:
    """An attempt on a broker that is up but answers in 5 s fails at the 3 s requestTimeout
    (``DEADLINE_EXCEEDED``), isolates it and retries on the other broker: the replay once
    stored every such send after 5 s and more (p50 about 10 h on a day of them), where the
    remoting replay failed them."""
    import shutil

    import pyarrow as pa

    trace = tmp_path / "slow"
    shutil.copytree(data_path("traces", "slow-broker"), trace)
    cond = pq.read_table(trace / "conditions.parquet").to_pylist()
    for row in cond:
        if row["broker"] == "broker-b" and row["median_ms"] == 700.0:
            row["median_ms"], row["p99_ms"] = 5_000.0, 6_000.0
    schema = pq.read_schema(trace / "conditions.parquet")
    pq.write_table(pa.Table.from_pylist(cond, schema=schema), trace / "conditions.parquet")
    out = replay_producers_python(trace, tmp_path / "g", ReplayConfig(client="grpc"))
    rows = pq.read_table(tmp_path / "g" / "sends.parquet").to_pylist()
    slow = [r for r in rows if 30_000 <= r["start_ms"] < 150_000]
    assert slow
    assert all(r["end_ms"] - r["start_ms"] < 2 * REQUEST_TIMEOUT_MS for r in slow)
    retried = [r for r in slow if r["attempts"] > 1]
    assert retried, "the first attempt on the slow broker must time out and be retried"
    assert all(r["broker"] == "broker-a" for r in retried)
    assert all(r["end_ms"] - r["start_ms"] >= REQUEST_TIMEOUT_MS for r in retried)
    assert out["latency_ms_max"] < 2 * REQUEST_TIMEOUT_MS
