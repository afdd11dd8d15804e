"""A whole simulated cluster built from a scenario: run it, summarise it, check it.

``run_scenario(scenario, seed)`` returns a ``RunResult`` with the journal, the ledger and the
summary; ``check_expectations`` compares the summary with the scenario's ``[expect]`` table.
``rocketlb simulate --out`` writes the run's files (``rocketlb_core.commands.simulate``).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rocketlb_core.consumer.base import AllocateStrategy
from rocketlb_core.consumer.nearby import MapResolver, machine_room_nearby
from rocketlb_core.consumer.registry import make
from rocketlb_core.model import (
    PERM_READ,
    PERM_WRITE,
    MessageQueue,
    QueueData,
    TopicRoute,
    sort_queues,
)
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.sim.clients import Consumer, GrpcProducer, Producer
from rocketlb_core.sim.cluster import Broker, BrokerEntity, NameServer, NameServerEntity, Network
from rocketlb_core.sim.events import LAG_SAMPLE_MS, BrokerScan, LagSample, Priority, Scripted
from rocketlb_core.sim.faults import FAULTS
from rocketlb_core.sim.kernel import Environment, Event, JournalRecord
from rocketlb_core.sim.ledger import Ledger, LedgerSink
from rocketlb_core.sim.scenario import EventSpec, GroupSpec, Scenario
from rocketlb_core.sim.services import DeferredStores
from rocketlb_core.sim.summary import summarise

SCRIPT = "scenario"


class World:
    """Everything of one run. Entities get it as ``rocketlb_core.sim.services.Services``, the
    only part of it they may use."""

    def __init__(self, scenario: Scenario, seed: int, sink: LedgerSink | None = None,
                 producer_class: type[Producer] = Producer) -> None:
        self.scenario = scenario
        self.env = env = Environment(seed)
        self.network = Network()
        self.changes = 0                 # scripted events applied so far (Services.changes)
        self.deferred: DeferredStores | None = None     # Services.settle_stores
        self.ledger = Ledger(sink)
        self._labels: dict[MessageQueue, str] = {}
        self.brokers: dict[str, Broker] = {}
        self.broker_entities: dict[str, BrokerEntity] = {}
        for i, spec in enumerate(scenario.brokers):
            b = Broker(spec.name, spec.room, f"10.0.{i + 1}.11:10911", spec.median_ms, spec.p99_ms)
            for t in scenario.topics:
                if spec.name in t.brokers:
                    b.topics[t.name] = QueueData(spec.name, t.read_queues, t.write_queues,
                                                 PERM_READ | PERM_WRITE)
            self.brokers[spec.name] = b
            self.broker_entities[spec.name] = be = BrokerEntity(b, self)
            env.register(spec.name, be)
        scan = scenario.line.rules.broker_scan_ms
        self.name_servers = [NameServer(f"namesrv-{i}") for i in range(scenario.name_servers)]
        for ns in self.name_servers:
            env.register(ns.name, NameServerEntity(ns, self, scan))
            env.schedule(5_000, BrokerScan(ns.name))
        self.producers = [(GrpcProducer if p.client == "grpc" else producer_class)(p, self, env)
                          for p in scenario.producers]
        for p in self.producers:
            env.register(p.name, p)
        id_rng = env.rng("client-ids")
        self.consumers: dict[str, list[Consumer]] = {}
        for g in scenario.groups:
            ids = [self._client_id(m.ip, m.instance, id_rng) for m in g.members]
            strategy = self.strategy_for(g, {cid: m.room for cid, m in zip(ids, g.members,
                                                                            strict=True)})
            members = [Consumer(m, g, self, env, cid, strategy)
                       for m, cid in zip(g.members, ids, strict=True)]
            for c in members:
                env.register(c.name, c)
            self.consumers[g.name] = members
        env.register(SCRIPT, _Script(self))

    def strategy_for(self, group: GroupSpec, member_rooms: dict[str, str]) -> AllocateStrategy:
        """The group's strategy from the registry. ``MACHINE_ROOM_NEARBY`` with
        ``resolver = "rooms"`` resolves rooms from the scenario itself (brokers' and members'
        ``room``), keyed by broker name and client id, as an application's resolver would."""
        params = dict(group.strategy_params)
        if group.strategy == "MACHINE_ROOM_NEARBY" and params.pop("resolver", None) == "rooms":
            inner = make(params.pop("inner", "AVG"), **params)
            brokers = {b.name: b.room for b in self.scenario.brokers}
            return machine_room_nearby(inner, MapResolver(brokers, member_rooms))
        return make(group.strategy, **params)

    def _client_id(self, ip: str, instance: str, rng: random.Random) -> str:
        """``buildMQClientId`` (spec 1.2): an explicit instance name is used as is (and can
        collide); the default becomes ``<pid>#<nanotime>`` (``<pid>`` before 4.9.0)."""
        if instance:
            return f"{ip}@{instance}"
        pid = rng.randrange(1000, 65536)
        if not self.scenario.line.rules.client_id_nanotime:
            return f"{ip}@{pid}"
        return f"{ip}@{pid}#{rng.randrange(10**12, 10**14)}"

    # ------------------------------------------------------------------ services for entities
    def register_broker(self, env: Environment, broker: Broker) -> None:
        for ns in self.name_servers:
            if ns.alive:
                ns.register(env, broker)

    def last_request(self, client: str, broker: str) -> int | None:
        consumer = self.consumer_named(client)
        return None if consumer is None else consumer.last_request(broker)

    def consumer_named(self, name: str) -> Consumer | None:
        """The consumer called ``name`` (``None``: a producer, or nobody)."""
        return next((c for cs in self.consumers.values() for c in cs if c.name == name), None)

    def query_route(self, client: str, topic: str, rng: random.Random) -> TopicRoute | None:
        alive = [ns for ns in self.name_servers if ns.alive]
        if not alive:
            return None
        ns = alive[rng.randrange(len(alive))]
        entity = self.env.entities[ns.name]
        assert isinstance(entity, NameServerEntity)
        return entity.route(topic)

    # ------------------------------------------------------------------ Services (services.py)
    @property
    def line(self) -> ProducerLine:
        return self.scenario.line

    @property
    def tick_ms(self) -> int:
        return self.scenario.tick_ms

    @property
    def duration_ms(self) -> int:
        return self.scenario.duration_ms

    def broker_entity(self, name: str) -> BrokerEntity:
        return self.broker_entities[name]

    def settle_stores(self, queues: Sequence[MessageQueue] | None = None) -> None:
        if self.deferred is not None:
            self.deferred.settle(queues)

    # ------------------------------------------------------------------ the script
    def member(self, name: str) -> Consumer:
        """The consumer called ``name``, in whichever group."""
        return next(c for cs in self.consumers.values() for c in cs if c.name == name)

    def apply(self, env: Environment, spec: EventSpec) -> None:
        """Journal a scripted event and apply it (``rocketlb_core.sim.faults``)."""
        env.log("scenario_event", SCRIPT, event=spec.kind, **spec.args)
        FAULTS[spec.kind].apply(self, env, spec.args)
        self.changes += 1

    def script(self, env: Environment, delay_ms: int, kind: str, args: dict[str, Any]) -> None:
        """Schedule a scripted event ``delay_ms`` from now (as faults that expand do)."""
        env.schedule(delay_ms, Scripted(SCRIPT, EventSpec(env.now + delay_ms, kind, args)))

    def sample_lag(self, env: Environment) -> None:
        """Journal each group's lag per queue: messages stored minus messages the group has
        consumed (its live owners' positions, else the broker's committed offset)."""
        self.settle_stores()
        for g in self.scenario.groups:
            if g.model != "CLUSTERING":
                continue
            lag: dict[str, int] = {}
            ahead: dict[MessageQueue, int] = {}       # the furthest live owner, per queue
            for c in self.consumers[g.name]:
                if c.alive:
                    for mq, at in c.offsets.items():
                        if at > ahead.get(mq, at - 1):
                            ahead[mq] = at
            for b in self.brokers.values():
                qd = b.topics.get(g.topic)
                for i in range(qd.read_queue_nums if qd else 0):
                    mq = MessageQueue(g.topic, b.name, i)
                    done = ahead.get(mq)
                    if done is None:
                        done = b.offsets.get((g.name, g.topic, i), 0)
                    lag[self.label(mq)] = b.max_offset(g.topic, i) - done
            env.log("lag", g.name, lag=lag)

    def label(self, mq: MessageQueue) -> str:
        """``mq.short()``, one string per queue for the whole run: a day's lag samples hold
        each label thousands of times, as references to one string."""
        label = self._labels.get(mq)
        if label is None:
            label = self._labels[mq] = mq.short()
        return label

    def ownership_changed(self, env: Environment) -> None:
        for g in self.scenario.groups:
            topic = g.topic
            tracked = {MessageQueue(topic, b.name, i) for b in self.brokers.values()
                       if b.name not in self.network.down and topic in b.topics
                       for i in range(b.topics[topic].read_queue_nums)}
            owners: dict[MessageQueue, set[str]] = defaultdict(set)
            for c in self.consumers[g.name]:
                if c.alive:
                    for mq, pq in c.table.items():
                        if not pq.dropped:
                            owners[mq].add(c.name)
            env.log("ownership", g.name, owners={self.label(mq): sorted(owners.get(mq, ()))
                                                 for mq in sort_queues(tracked)})


class _Script:
    """Applies the scenario's scripted events at their times, and samples lag."""

    def __init__(self, world: World) -> None:
        self.world = world

    def handle(self, env: Environment, event: Event) -> None:
        match event:
            case LagSample():
                self.world.sample_lag(env)
                env.schedule(LAG_SAMPLE_MS, LagSample(SCRIPT), priority=Priority.SAMPLE)
            case Scripted(spec=spec):
                self.world.apply(env, spec)


@dataclass
class RunResult:
    world: World
    summary: dict[str, Any]


SPILLED_KINDS = frozenset({"lag"})
"""Journal records a ``journal_sink`` takes instead of the in-memory journal: the lag samples
(every queue's lag each 5 s, which grow with simulated time; the summary reads none)."""


def run_scenario(scenario: Scenario, seed: int = 0, sink: LedgerSink | None = None,
                 journal_sink: Callable[[JournalRecord], None] | None = None,
                 producer_class: type[Producer] = Producer) -> RunResult:
    """Run ``scenario`` with ``seed`` to its end (duration plus drain) and summarise it;
    ``sink`` receives every message and delivery as it happens (``sim.ledger``);
    ``journal_sink`` every journal record as it is made, and the lag samples are then kept
    out of the in-memory journal (``SPILLED_KINDS``), so a long run's memory stays flat.
    ``producer_class``: a ``Producer`` that sends the same, faster (the data layer's
    ``rocketlb_core.simfast.producer_class()``: its compiled sends)."""
    world = World(scenario, seed, sink, producer_class)
    env = world.env
    if journal_sink is not None:
        env.journal_sink, env.spill_kinds = journal_sink, SPILLED_KINDS
    for be in world.broker_entities.values():
        be.start(env)
    world.ownership_changed(env)                       # ownership is tracked from time 0
    env.schedule(LAG_SAMPLE_MS, LagSample(SCRIPT), priority=Priority.SAMPLE)
    for p in world.producers:
        p.start(env)
    for cs in world.consumers.values():
        for c in cs:
            env.schedule_at(c.m.start_ms, Scripted(SCRIPT, EventSpec(
                c.m.start_ms, "consumer_start", {"consumer": c.name})), priority=Priority.SCRIPT)
    for spec in scenario.events:
        env.schedule_at(spec.at_ms, Scripted(SCRIPT, spec), priority=Priority.SCRIPT)
    end = scenario.duration_ms + scenario.drain_ms
    env.run(until=end)
    for p in world.producers:
        p.settle()
    for cs in world.consumers.values():
        for c in cs:
            c.settle()
    world.settle_stores()
    env.log("run_end", SCRIPT, events_processed=env.events_processed,
            producer_backlog={p.name: p.backlog() for p in world.producers})
    return RunResult(world, summarise(scenario, seed, env.journal, world.ledger))


def lookup(summary: dict[str, Any], path: str) -> Any:
    node: Any = summary
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(path)
        node = node[part]
    return node


def check_expectations(summary: dict[str, Any], expect: dict[str, Any]) -> list[str]:
    """The expectations that failed, as readable lines (empty: all held)."""
    problems = []
    for path, want in sorted(expect.items()):
        try:
            got = lookup(summary, path)
        except KeyError:
            problems.append(f"{path}: no such summary field")
            continue
        if isinstance(want, dict):
            lo, hi = want.get("min"), want.get("max")
            if (lo is not None and got < lo) or (hi is not None and got > hi):
                problems.append(f"{path}: {got!r} not in [{lo}, {hi}]")
        elif got != want:
            problems.append(f"{path}: expected {want!r}, got {got!r}")
    return problems
