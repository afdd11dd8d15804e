"""The simulator's gRPC producer (``client = "grpc"``, ``sim.clients.GrpcProducer``; issue 34,
item 4): its sends go through the core's ``PublishingLoadBalancer`` and ``ProducerSendLoop``,
and a scenario may set it beside a remoting producer (``data/scenarios/grpc-outage.toml``)."""

from __future__ import annotations

from collections import Counter

import pytest

from rocketlb_core import data_path
from rocketlb_core.grpc import GrpcQueue, ProducerSendLoop, PublishingLoadBalancer
from rocketlb_core.javamath import INT_MAX
from rocketlb_core.model import MessageQueue
from rocketlb_core.sim.clients import GrpcProducer
from rocketlb_core.sim.kernel import Environment
from rocketlb_core.sim.scenario import ScenarioError, load, loads
from rocketlb_core.sim.world import World, run_scenario

STEADY = """
name = "grpc-steady"
duration_ms = 20_000
drain_ms = 1_000
[cluster]
brokers = [{ name = "broker-a" }, { name = "broker-b" }, { name = "broker-c" }]
[[cluster.topics]]
name = "T"
brokers = ["broker-a", "broker-b", "broker-c"]
read_queues = 4
write_queues = 4
[[producers]]
name = "g"
topic = "T"
rate_per_s = 100
client = "grpc"
"""


class _Queues:
    """A ledger sink counting where each send was stored."""

    def __init__(self) -> None:
        self.stored: Counter[str] = Counter()
        self.retries = self.failed = 0

    def message(self, msg_id: int, producer: str, sent_ms: int, status: str,
                queue: MessageQueue | None, offset: int, attempts: int, send_ms: int,
                error: str | None) -> None:
        self.retries += max(0, attempts - 1)
        if queue is None:
            self.failed += 1
        else:
            self.stored[f"{queue.broker_name}/{queue.queue_id}"] += 1

    def delivery(self, time_ms: int, consumer: str, queue: MessageQueue, first: int,
                 count: int) -> None:
        pass


def test_a_healthy_day_is_the_balancers_round_robin() -> None:
    """No failure: the queue of each send is what the core's balancer and send loop give when
    driven directly from the same counter start (the producer's random stream's first draw)."""
    sc = loads(STEADY, "grpc-steady.toml")
    producer = World(sc, 0).producers[0]
    assert isinstance(producer, GrpcProducer)
    start = Environment(0).rng("g").randrange(INT_MAX)
    assert producer.counter.value == start
    sink = _Queues()
    result = run_scenario(sc, 0, sink)
    assert sink.failed == sink.retries == 0
    queues = [GrpcQueue("T", b, 0, b, i) for b in ("broker-a", "broker-b", "broker-c")
              for i in range(4)]
    balancer, loop = PublishingLoadBalancer(queues, start), ProducerSendLoop(3)
    direct: Counter[str] = Counter()
    for _ in range(result.summary["messages_sent"]):
        q = loop.send(balancer, lambda q, n: "ok").attempts[-1].queue
        direct[f"{q.broker}/{q.queue_id}"] += 1
    assert sink.stored == direct
    assert len(direct) == 12


def test_the_outage_scenario_side_by_side() -> None:
    sc = load(data_path("scenarios", "grpc-outage.toml"))
    assert [p.client for p in sc.producers] == ["grpc", "remoting"]
    s = run_scenario(sc, 0).summary
    assert s["messages_failed"] <= 3                # the remoting producer's timeouts only
    assert s["send_ms_p99"] <= 3_000
    assert s["send_retries"] == 1                   # the gRPC producer's retry


def test_a_bad_client_is_named() -> None:
    with pytest.raises(ScenarioError, match=r"producers\[0\]\.client"):
        loads(STEADY.replace('client = "grpc"', 'client = "http"'), "bad.toml")
