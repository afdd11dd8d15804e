"""The producer playground (book chapters 2 and 3): one producer, two to four brokers, and the
package's real selection (``MQFaultStrategy.select``) and send loop (``producer.send.send``) on a
virtual clock (spec sections 2.1 to 2.6).

A ``Playground`` is built from a configuration::

    {"line": "4.9.8", "fault": true, "counter": 0, "retries": 2,
     "timeout_ms": 3000, "gap_ms": 100,
     "brokers": [{"name": "broker-a", "queues": 4, "answer": "ok",
                  "latency_ms": 5}, ...]}

``answer`` is what the broker does with an attempt: ``ok`` (SEND_OK after ``latency_ms``),
``refuse`` (a connection refused after ``latency_ms``: a clean crash) or ``silent`` (no answer:
the attempt times out, a paused or partitioned host). ``counter`` is the starting value of the
``ThreadLocalIndex``; ``gap_ms`` the virtual time between the end of one send and the start of
the next. Brokers' ``answer`` and ``latency_ms`` may change between sends (the producer keeps its
state, as a real one does when a broker slows down); any other change starts over.

Set up as seed 002 sets up ``MQFaultStrategyTest`` (``seed002``), the playground picks the
brokers the article prints: ``tests/test_interactive.py`` compares it with
``producer.experiments.seed002_experiment``.

``client`` (default ``remoting``) picks the producer (chapter 11): ``remoting`` is the classic
``DefaultMQProducer`` of ``line``, above; ``grpc`` is the gRPC producer of rocketmq-client-java
5.0.8 through a Proxy in local mode beside each broker (each broker its own endpoints,
``broker-a:8081``), the core's ``PublishingLoadBalancer`` and ``ProducerSendLoop``
(``rocketlb_core.grpc``) as ``sim.clients.GrpcProducer`` and the gRPC replay run them
(``GrpcPlayground``): ``counter`` is the balancer's starting ``AtomicInteger`` (-1: the first
pick at position 0, as for the classic client), ``retries + 1`` its ``maxAttempts`` (the
defaults agree: 2 retries, 3 attempts), ``timeout_ms`` each attempt's ``requestTimeout`` (the
classic client's is the whole send's budget); ``line`` and ``fault`` are not read. A failed
attempt isolates its broker's endpoints; heartbeats 1 s after the start and every 10 s after
that end the isolation of a broker that answers (``ok``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocketlb_core.grpc.publishing import MASTER_BROKER_ID, GrpcQueue, PublishingLoadBalancer
from rocketlb_core.grpc.send import Outcome as GrpcOutcome
from rocketlb_core.grpc.send import ProducerSendLoop
from rocketlb_core.interactive.fields import (
    RequestError,
    choice,
    flag,
    integer,
    items,
    table,
)
from rocketlb_core.javamath import INT_MAX
from rocketlb_core.model import MessageQueue, QueueData
from rocketlb_core.producer import (
    AttemptResult,
    MQFaultStrategy,
    Outcome,
    ProducerLine,
    SendConfig,
    SendResult,
    ThreadLocalIndex,
    TopicPublishInfo,
    send,
)
from rocketlb_core.producer.fault import FaultTable5

LINES = tuple(line.value for line in ProducerLine)
CLIENTS = ("remoting", "grpc")
"""``config.client``: the classic remoting producer of ``line``, or the gRPC producer."""
GRPC_CLIENT = "rocketmq-client-java 5.0.8"
GRPC_HEARTBEAT_INITIAL_MS, GRPC_HEARTBEAT_PERIOD_MS = 1_000, 10_000
"""``ClientManagerImpl.HEART_BEAT_INITIAL_DELAY`` and ``HEART_BEAT_PERIOD``."""
GRPC_PORT = 8081
ANSWERS = ("ok", "refuse", "silent")
PRESETS_MS = {"healthy": 5, "slow": 700}
"""The latency presets the playground offers beside its slider ("down" is ``answer``)."""
TOPIC = "TopicTest"
LOG_LIMIT = 100
"""A view carries at most this many of the latest sends (a "send 100" shows all of them)."""
SERIES_LIMIT = 240
"""The running chart's points: the picks per broker, thinned to at most this many sends."""



def seed002(fail: bool, line: str = "4.7.1") -> dict[str, Any]:
    """The playground set up as seed 002's ``MQFaultStrategyTest``: broker1 and broker2 with
    four queues each, the fault strategy on, the first pick at position 0 (``counter: -1``, which
    the playground maps to 2^31-1 on 4.7.1, whose counter clamps, as the experiment does), one
    retry, no gap between sends.

    ``fail=True`` is the article's "output 2": every attempt is refused. An isolation is computed
    from 30000 ms whatever latency is reported, so the refusals' own latencies (300 and 500 ms,
    in the article's order) give the article's picks on every line. ``fail=False`` is "output 1":
    the brokers answer in the article's 30000 and 50000 ms (the send timeout raised to 120 s so
    that they can). It gives the article's picks on the 4.x lines; on 5.3.3 it cannot, and that
    is a finding: 5.x isolates a 30 s answer for only 30 s, less than the next send takes, while
    the article's test holds the clock still.
    """
    answer = "refuse" if fail else "ok"
    latency = (300, 500) if fail else (30000, 50000)
    return {"line": line, "fault": True, "counter": -1, "retries": 1,
            "timeout_ms": 3000 if fail else 120_000, "gap_ms": 0,
            "brokers": [{"name": f"broker{i + 1}", "queues": 4, "answer": answer,
                         "latency_ms": latency[i]} for i in range(2)]}


def setups() -> dict[str, dict[str, Any]]:
    """The playground's menu of set-ups, the first being its default: three healthy brokers on
    4.9.8 with the fault strategy on; the same with broker-b answering in 700 ms; seed 002's two
    experiments (``seed002``)."""
    healthy: dict[str, Any] = {
        "line": "4.9.8", "fault": True, "counter": 0, "retries": 2, "timeout_ms": 3000,
        "gap_ms": 100, "brokers": [{"name": f"broker-{b}", "queues": 4, "answer": "ok",
                                    "latency_ms": PRESETS_MS["healthy"]} for b in "abc"]}
    slow = {**healthy, "brokers": [dict(b) for b in healthy["brokers"]]}
    slow["brokers"][1]["latency_ms"] = PRESETS_MS["slow"]
    return {"three healthy brokers": healthy, "broker-b answers in 700 ms": slow,
            "seed 002, output 2 (every attempt fails)": seed002(fail=True),
            "seed 002, output 1 (slow successes)": seed002(fail=False)}


def outage(client: str = "grpc") -> dict[str, Any]:
    """Chapter 11's outage in the playground: broker-a and broker-b with four queues each on
    4.9.8 with the fault strategy on, broker-a's host gone (``silent``), the default retries
    and timeout, 20 ms between sends (50 a second), the counter at 0; ``client`` the producer
    (``remoting`` or ``grpc``: the reader switches with the playground's client select)."""
    return {"client": client, "line": "4.9.8", "fault": True, "counter": 0, "retries": 2,
            "timeout_ms": 3000, "gap_ms": 20,
            "brokers": [{"name": "broker-a", "queues": 4, "answer": "silent",
                         "latency_ms": PRESETS_MS["healthy"]},
                        {"name": "broker-b", "queues": 4, "answer": "ok",
                         "latency_ms": PRESETS_MS["healthy"]}]}


@dataclass(frozen=True)
class BrokerSetting:
    name: str
    queues: int
    answer: str
    latency_ms: int


@dataclass(frozen=True)
class Setup:
    """A checked playground configuration."""

    line: ProducerLine
    fault: bool
    counter: int
    retries: int
    timeout_ms: int
    gap_ms: int
    brokers: tuple[BrokerSetting, ...]
    client: str = "remoting"

    @property
    def structure(self) -> tuple[Any, ...]:
        """What cannot change without starting over."""
        return (self.client, self.line, self.fault, self.counter, self.retries, self.timeout_ms,
                tuple((b.name, b.queues) for b in self.brokers))

    def broker(self, name: str) -> BrokerSetting:
        return next(b for b in self.brokers if b.name == name)


def parse_setup(raw: Any) -> Setup:
    cfg = table(raw, "config")
    brokers = []
    for i, b in enumerate(items(cfg, "brokers", "config", low=1, high=4)):
        w = f"config.brokers[{i}]"
        b = table(b, w)
        name = b.get("name")
        if not isinstance(name, str) or not name or len(name) > 40 or "/" in name:
            raise RequestError(f"{w}.name: expected a broker name, got {name!r}"[:200])
        brokers.append(BrokerSetting(name, integer(b, "queues", w, 4, low=1, high=16),
                                     choice(b, "answer", w, ANSWERS, "ok"),
                                     integer(b, "latency_ms", w, 5, low=0, high=120_000)))
    if len({b.name for b in brokers}) != len(brokers):
        raise RequestError("config.brokers: broker names must be distinct")
    return Setup(ProducerLine.parse(choice(cfg, "line", "config", LINES, "4.9.8")),
                 flag(cfg, "fault", "config", False),
                 integer(cfg, "counter", "config", 0, low=-1, high=INT_MAX),
                 integer(cfg, "retries", "config", 2, low=0, high=16),
                 integer(cfg, "timeout_ms", "config", 3000, low=1, high=600_000),
                 integer(cfg, "gap_ms", "config", 100, low=0, high=3_600_000),
                 tuple(brokers), choice(cfg, "client", "config", CLIENTS, "remoting"))


class Playground:
    """One producer's state across sends (see the module docstring)."""

    def __init__(self, config: Any) -> None:
        self.setup = parse_setup(config)
        s = self.setup
        queues = [MessageQueue(TOPIC, b.name, i) for b in s.brokers for i in range(b.queues)]
        start = s.counter
        if start < 0:                          # "the first pick at position 0"
            start = INT_MAX if s.line.rules.counter_clamps else -1
        self.index = ThreadLocalIndex(s.line, stored=start, rng=random.Random(0))
        self.tp = TopicPublishInfo(queues, [QueueData(b.name, b.queues, b.queues)
                                            for b in s.brokers], self.index)
        self.strategy = MQFaultStrategy(s.line, send_latency_fault_enable=s.fault)
        self.send_config = SendConfig(send_msg_timeout_ms=s.timeout_ms,
                                      retry_times_when_send_failed=s.retries)
        self._counts()

    def _counts(self) -> None:
        """The virtual clock and what the sends did, from nothing."""
        brokers = self.setup.brokers
        self.clock_ms = 0
        self.sent = 0
        self.stored = {b.name: 0 for b in brokers}
        self.attempts = {b.name: 0 for b in brokers}
        self.failed = 0
        self.series: list[list[int]] = [[0] + [0 for _ in brokers]]

    @property
    def counter(self) -> int | None:
        """The selection counter's value now (``ThreadLocalIndex``; ``None`` before it is
        drawn)."""
        return self.index.stored

    def _tally(self, broker: str | None) -> None:
        """One send done, stored on ``broker`` (``None``: it failed)."""
        self.sent += 1
        if broker is not None:
            self.stored[broker] += 1
        else:
            self.failed += 1
        self.series.append([self.sent] + [self.stored[b.name] for b in self.setup.brokers])

    def reconfigure(self, config: Any) -> bool:
        """Take new broker conditions; ``False`` when the change needs a fresh playground."""
        setup = parse_setup(config)
        if setup.structure != self.setup.structure:
            return False
        self.setup = setup
        return True

    def _broker(self, mq: MessageQueue, start_ms: int, budget_ms: int) -> AttemptResult:
        b = self.setup.broker(mq.broker_name)
        if b.answer == "silent":
            return AttemptResult(Outcome.REMOTING_ERROR, budget_ms)   # becomes a timeout
        if b.answer == "refuse":
            return AttemptResult(Outcome.REMOTING_ERROR, b.latency_ms)
        return AttemptResult(Outcome.SEND_OK, b.latency_ms)

    def send(self, n: int) -> list[dict[str, Any]]:
        """Send ``n`` messages one after the other; the log rows of those sends."""
        out = []
        for _ in range(n):
            r = send(self.strategy, self.tp, self._broker, self.clock_ms, self.send_config)
            for a in r.attempts:
                self.attempts[a.queue.broker_name] += 1
            self._tally(None if r.queue is None else r.queue.broker_name)
            out.append(self._row(r))
            self.clock_ms = r.end_ms + self.setup.gap_ms
        return out

    def _row(self, r: SendResult) -> dict[str, Any]:
        return {"n": self.sent, "start_ms": r.start_ms, "end_ms": r.end_ms, "status": r.status,
                "error": r.error, "counter": self.index.stored,
                "attempts": [{"queue": a.queue.short(), "broker": a.queue.broker_name,
                              "start_ms": a.start_ms, "latency_ms": a.latency_ms,
                              "outcome": a.outcome.value, "isolation": a.isolation}
                             for a in r.attempts]}

    def faults(self) -> list[dict[str, Any]]:
        """Each broker's fault item at the current virtual time (none until it is reported)."""
        table5 = isinstance(self.strategy.table, FaultTable5)
        out = []
        for b in self.setup.brokers:
            item = self.strategy.table.items.get(b.name)
            if item is None:
                out.append({"broker": b.name, "item": False, "available": True})
                continue
            until = item.start_timestamp
            out.append({"broker": b.name, "item": True, "latency_ms": item.current_latency,
                        "not_available_until_ms": until,
                        "available": self.strategy.is_available(b.name, self.clock_ms),
                        "wait_ms": max(0, until - self.clock_ms),
                        "reachable": item.reachable if table5 else None})
        return out

    def view(self, log: list[dict[str, Any]]) -> dict[str, Any]:
        step = max(1, -(-len(self.series) // SERIES_LIMIT))
        series = self.series[::step]
        if series[-1] is not self.series[-1]:
            series.append(self.series[-1])
        return {"clock_ms": self.clock_ms, "sent": self.sent, "failed": self.failed,
                "counter": self.counter, "line": self.setup.line.value,
                "client": self.setup.client, "fault": self.setup.fault,
                "brokers": [b.name for b in self.setup.brokers],
                "stored": dict(self.stored), "attempts": dict(self.attempts),
                "faults": self.faults(), "log": log[-LOG_LIMIT:], "series": series}


def endpoints(broker: str) -> str:
    """A broker's endpoints behind a local-mode Proxy (the Proxy inside the broker)."""
    return f"{broker}:{GRPC_PORT}"


class GrpcPlayground(Playground):
    """The gRPC producer's state across sends: its balancer (counter and queues), its isolated
    endpoints and its next heartbeat (``config.client == "grpc"``; the module docstring)."""

    def __init__(self, config: Any) -> None:
        self.setup = parse_setup(config)
        s = self.setup
        queues = [GrpcQueue(TOPIC, b.name, MASTER_BROKER_ID, endpoints(b.name), i)
                  for b in s.brokers for i in range(b.queues)]
        self.balancer = PublishingLoadBalancer(queues, max(0, s.counter))
        self.loop = ProducerSendLoop(max_attempts=s.retries + 1)
        self.next_heartbeat_ms = GRPC_HEARTBEAT_INITIAL_MS
        self._counts()

    @property
    def counter(self) -> int:
        """The balancer's ``AtomicInteger`` now."""
        return self.balancer.stored

    def _heartbeats(self, limit_ms: int) -> None:
        """The heartbeats due before ``limit_ms``: each isolated broker that answers (``ok``)
        rejoins. The brokers' answers hold still during a request, so the first heartbeat due
        does what all of them would."""
        if self.next_heartbeat_ms >= limit_ms:
            return
        self.loop.rejoin(endpoints(b.name) for b in self.setup.brokers if b.answer == "ok")
        behind = (limit_ms - 1 - self.next_heartbeat_ms) // GRPC_HEARTBEAT_PERIOD_MS + 1
        self.next_heartbeat_ms += behind * GRPC_HEARTBEAT_PERIOD_MS

    def send(self, n: int) -> list[dict[str, Any]]:
        """Send ``n`` messages one after the other; the log rows of those sends. A broker that
        answers ``ok`` within ``timeout_ms`` stores it; ``refuse`` fails the attempt after
        ``latency_ms`` (``UNAVAILABLE``); ``silent``, or an answer not within ``timeout_ms``,
        after ``timeout_ms`` (``DEADLINE_EXCEEDED``)."""
        return [self._send_one() for _ in range(n)]

    def _send_one(self) -> dict[str, Any]:
        timeout = self.setup.timeout_ms
        start = self.clock_ms
        self._heartbeats(start + 1)
        clock = start
        tried: list[dict[str, Any]] = []

        def outcome(q: GrpcQueue, attempt: int) -> GrpcOutcome:
            nonlocal clock
            b = self.setup.broker(q.broker)
            begin = clock
            if b.answer != "silent" and b.latency_ms < timeout:
                clock += b.latency_ms
                what = "SEND_OK" if b.answer == "ok" else "UNAVAILABLE"
            else:
                clock += timeout
                what = "DEADLINE_EXCEEDED"
            tried.append({"queue": f"{q.broker}/{q.queue_id}", "broker": q.broker,
                          "start_ms": begin, "latency_ms": clock - begin, "outcome": what,
                          "isolation": what != "SEND_OK"})
            self.attempts[q.broker] += 1
            if what == "SEND_OK":
                return "ok"
            self._heartbeats(clock)              # heartbeats before the failure is known
            return "fail"

        r = self.loop.send(self.balancer, outcome)
        self._tally(r.attempts[-1].queue.broker if r.ok else None)
        error = None if r.ok else (
            "UNAVAILABLE: connection refused" if tried[-1]["outcome"] == "UNAVAILABLE"
            else f"DEADLINE_EXCEEDED: no answer within requestTimeout ({timeout} ms)")
        self.clock_ms = clock + self.setup.gap_ms
        return {"n": self.sent, "start_ms": start, "end_ms": clock,
                "status": "SEND_OK" if r.ok else "FAILED", "error": error,
                "counter": self.counter, "attempts": tried,
                "candidates": [f"{q.broker}/{q.queue_id}" for q in r.candidates],
                "isolated": self.isolated()}

    def isolated(self) -> list[str]:
        """The brokers whose endpoints are isolated now."""
        return [b.name for b in self.setup.brokers if endpoints(b.name) in self.loop.isolated]

    def faults(self) -> list[dict[str, Any]]:
        """Each broker's endpoints and whether they are isolated now (``item``: isolated;
        ``available``: a send's candidates may take it)."""
        out = []
        for b in self.setup.brokers:
            isolated = endpoints(b.name) in self.loop.isolated
            out.append({"broker": b.name, "endpoints": endpoints(b.name), "item": isolated,
                        "isolated": isolated, "available": not isolated})
        return out

    def view(self, log: list[dict[str, Any]]) -> dict[str, Any]:
        out = super().view(log)
        out.update({"grpc_client": GRPC_CLIENT, "max_attempts": self.loop.max_attempts,
                    "next_heartbeat_ms": self.next_heartbeat_ms,
                    "isolated": self.isolated()})
        return out


def open_playground(config: Any) -> Playground:
    """A fresh playground of the configuration's client."""
    setup = parse_setup(config)
    return GrpcPlayground(config) if setup.client == "grpc" else Playground(config)


def step(session: Playground | None,
         request: Mapping[str, Any]) -> tuple[Playground, dict[str, Any]]:
    """One interaction: ``{"config": ..., "op": "view" | "reset" | "send", "n": 1..1000}``."""
    req = table(request, "request")
    op = choice(req, "op", "request", ("view", "reset", "send"), "view")
    config = req.get("config")
    if session is None or op == "reset" or not session.reconfigure(config):
        session = open_playground(config)
    log: list[dict[str, Any]] = []
    if op == "send":
        log = session.send(integer(req, "n", "request", 1, low=1, high=1000))
    return session, session.view(log)
