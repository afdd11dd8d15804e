"""Consumer replay: a recorded membership timeline through every allocation strategy.

For each strategy, the group's assignment after every membership change (consistent views:
every member has rebalanced; sticky strategies receive the previous assignment), how many queues
moved, and per queue the time with no live owner and with two or more. A crashed member keeps
its share in the group's view until the brokers expire its channel (``CHANNEL_EXPIRY_MS``, spec
5.3: 120 s without a heartbeat); during that time its queues have no live owner. A killed one
(``kill``: its process died on a live host, so its connections closed) leaves the view at once,
as a clean leave does. Duplicated
client ids give the duplicate-id trap: the same share twice, another share to nobody.

This is a model of the settled states; the simulator (``rocketlb_core.sim``) is the tool for the
transient windows between individual consumers' rebalances.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rocketlb_core.conditions import CHANNEL_EXPIRY_MS
from rocketlb_core.consumer.base import Assignment, assign_all, rebalance_view
from rocketlb_core.consumer.metrics import moved
from rocketlb_core.consumer.registry import make
from rocketlb_core.kafka.assignors import (
    ASSIGNORS,
    StickyMember,
    Topic,
    server_range_assign,
    uniform_assign,
)
from rocketlb_core.kafka.assignors import Member as KafkaMember
from rocketlb_core.kafka.group import (
    COOPERATIVE_GAP_MS,
    KAFKA_PREFIX,
    KIP848_HEARTBEAT_MS,
    KafkaChange,
    member_timeline,
)
from rocketlb_core.model import MessageQueue, subscribe_queues
from rocketlb_core.replay.lag import OwnershipSpan, lag_timeline
from rocketlb_core.trace.read import Trace

ASSIGNMENT_COLUMNS = ("strategy", "change", "time_ms", "member", "client_id", "broker",
                      "queue_id")


@dataclass(frozen=True)
class Change:
    time_ms: int
    view: tuple[tuple[str, str], ...]        # (member, client id) in the brokers' view
    alive: frozenset[str]                    # members that are really consuming


def timeline(trace: Trace, group: str) -> list[Change]:
    """The group's view and live members after each change (crash expiries included)."""
    m = trace.membership
    if m is None:
        raise ValueError(f"{trace.folder}: the trace has no membership.parquet")
    events: list[tuple[int, int, str, str, str]] = []      # (time, order, kind, member, cid)
    for i, t in enumerate(m["time_ms"]):
        if m["group"][i] != group:
            continue
        events.append((t, i, m["event"][i], m["member"][i], m["client_id"][i]))
        if m["event"][i] == "crash":
            events.append((t + CHANNEL_EXPIRY_MS, i, "expire", m["member"][i], m["client_id"][i]))
    if not events:
        raise ValueError(f"{trace.folder}: no membership rows for group {group!r}")
    events.sort()
    view: dict[str, str] = {}
    alive: set[str] = set()
    out: list[Change] = []
    for t, _, kind, member, cid in events:
        if kind == "join":
            view[member] = cid
            alive.add(member)
        elif kind in ("leave", "kill"):
            view.pop(member, None)
            alive.discard(member)
        elif kind == "crash":
            alive.discard(member)
        elif kind == "expire" and member not in alive:
            view.pop(member, None)
        change = Change(t, tuple(sorted(view.items())), frozenset(alive))
        if out and out[-1].time_ms == t:
            out[-1] = change
        elif not out or (out[-1].view, out[-1].alive) != (change.view, change.alive):
            out.append(change)
    return out


def replay_strategy(name: str, changes: Sequence[Change], queues: Sequence[MessageQueue],
                    end_ms: int, group: str
                    ) -> tuple[dict[str, Any], list[tuple[Any, ...]], list[OwnershipSpan]]:
    """One strategy over the timeline: its summary, its assignment rows and who owned what."""
    strategy = make(name)
    previous: Assignment | None = None
    states: list[_State] = []
    for ch in changes:
        cids = [cid for _, cid in ch.view]
        assignment: Assignment = {}
        if cids:
            mq_all, cid_all = rebalance_view(queues, cids)
            assignment = assign_all(strategy, group, mq_all, cid_all, previous)
        states.append(_State(ch.time_ms, assignment, tuple((m, c, c) for m, c in ch.view),
                             frozenset((m, c) for m, c in ch.view if m in ch.alive)))
        previous = assignment
    return _account(name, states, queues, end_ms)


def replay_kafka(name: str, changes: Sequence[KafkaChange], queues: Sequence[MessageQueue],
                 end_ms: int, topic: str
                 ) -> tuple[dict[str, Any], list[tuple[Any, ...]], list[OwnershipSpan]]:
    """A Kafka assignor (``kafka-range``, ...) over Kafka's view of the timeline
    (``rocketlb_core.kafka.group``): partition ``p`` of the topic is ``queues[p]``. The sticky
    assignors get each member's previous partitions and the group's generation; the
    cooperative one runs the protocol's two rebalances: the first withholds every partition
    that changes owner (its old owner gives it up), the second, ``COOPERATIVE_GAP_MS`` later,
    assigns them, unless another change comes first. The summary counts rebalances
    (``rebalances``) and moves between settled assignments only."""
    kind = name.removeprefix(KAFKA_PREFIX)
    if kind in ("uniform", "server-range"):
        return _replay_uniform(name, changes, queues, end_ms, topic)
    assign = ASSIGNORS[kind]
    sticky = kind in ("sticky", "cooperative-sticky")
    states: list[_State] = []
    owned: dict[str, list[int]] = {}                 # member id -> partitions it was given
    generation = 0

    def run(members_view: tuple[tuple[str, str, str], ...]) -> dict[str, list[int]]:
        members: list[KafkaMember] = []
        for mid, _, _ in members_view:
            if sticky:
                mine = owned.get(mid)
                members.append(StickyMember(
                    mid, (topic,), None, tuple((topic, p) for p in mine or ()),
                    generation if mine is not None else None))
            else:
                members.append(KafkaMember(mid, (topic,)))
        result = assign({topic: len(queues)}, members) if members else {}
        return {mid: [p for _, p in tps] for mid, tps in result.items()}

    for k, ch in enumerate(changes):
        view = tuple((who, cid, mid) for mid, who, cid in ch.view)
        alive = frozenset((who, mid) for mid, who, _ in ch.view if mid in ch.alive)
        result = run(ch.view)
        generation += 1
        owned = {mid: ps for mid, ps in result.items()}
        first = {mid: [queues[p] for p in ps] for mid, ps in result.items()}
        if kind != "cooperative-sticky":
            states.append(_State(ch.time_ms, first, view, alive))
            continue
        withheld = len(queues) - sum(len(ps) for ps in result.values()) if result else 0
        nxt = changes[k + 1].time_ms if k + 1 < len(changes) else end_ms
        second_at = ch.time_ms + COOPERATIVE_GAP_MS
        if withheld == 0 or second_at >= nxt:
            states.append(_State(ch.time_ms, first, view, alive))
            continue
        states.append(_State(ch.time_ms, first, view, alive, settled=False))
        result = run(ch.view)                        # the revoking members rejoin
        generation += 1
        owned = {mid: ps for mid, ps in result.items()}
        states.append(_State(second_at, {mid: [queues[p] for p in ps]
                                         for mid, ps in result.items()}, view, alive))
    summary, rows, spans = _account(name, states, queues, end_ms)
    summary["changes"] = len(changes)
    summary["rebalances"] = len(states)
    return summary, rows, spans


def _replay_uniform(name: str, changes: Sequence[KafkaChange], queues: Sequence[MessageQueue],
                    end_ms: int, topic: str
                    ) -> tuple[dict[str, Any], list[tuple[Any, ...]], list[OwnershipSpan]]:
    """KIP-848 (``kafka-uniform``, ``kafka-server-range``): at each change the coordinator
    computes the target with a server-side assignor from every member's current target, and the
    members
    reconcile on their heartbeats (``KIP848_HEARTBEAT_MS``): a partition that moves between two
    members stays with its old owner until that owner's next heartbeat, then has no owner
    until the new owner's (each wait taken as half an interval, the mean of a uniform phase);
    partitions of departed members and new ones go at once. No group-wide rebalance."""
    topic_id = (0, 0)                  # one topic: its id decides no order
    target: dict[str, list[int]] = {}
    states: list[_State] = []
    half = KIP848_HEARTBEAT_MS // 2
    for k, ch in enumerate(changes):
        view = tuple((who, cid, mid) for mid, who, cid in ch.view)
        alive = frozenset((who, mid) for mid, who, _ in ch.view if mid in ch.alive)
        members = [(mid, {topic: target[mid]} if target.get(mid) else {})
                   for mid, _, _ in ch.view]
        assign = server_range_assign if name.endswith("server-range") else uniform_assign
        new = {mid: parts.get(topic, []) for mid, parts in
               assign([Topic(topic, len(queues), topic_id)], members).items()}
        old_owner = {p: mid for mid, ps in target.items() if mid in new for p in ps}
        moving = {p: mid for mid, ps in new.items() for p in ps
                  if p in old_owner and old_owner[p] != mid}
        target = new
        settled = {mid: [queues[p] for p in ps] for mid, ps in new.items()}
        nxt = changes[k + 1].time_ms if k + 1 < len(changes) else end_ms
        if not moving or ch.time_ms + half >= nxt:
            states.append(_State(ch.time_ms, settled, view, alive))
            continue
        keep = {mid: [queues[p] for p in ps if p not in moving] for mid, ps in new.items()}
        for p, _ in moving.items():
            keep[old_owner[p]].append(queues[p])
        states.append(_State(ch.time_ms, keep, view, alive, settled=False))
        revoked = {mid: [queues[p] for p in ps if p not in moving] for mid, ps in new.items()}
        states.append(_State(ch.time_ms + half, revoked, view, alive, settled=False))
        if ch.time_ms + 2 * half < nxt:
            states.append(_State(ch.time_ms + 2 * half, settled, view, alive))
    summary, rows, spans = _account(name, states, queues, end_ms)
    summary["changes"] = len(changes)
    summary["rebalances"] = 0                      # KIP-848 has none: members reconcile
    return summary, rows, spans


@dataclass(frozen=True)
class _State:
    """The group after one change: each owner key's queues, the view as (member, client id,
    owner key) and the (member, owner key) pairs consuming. RocketMQ's owner key is the client
    id (two members with one id share a share), Kafka's the member id the coordinator gave (a
    restarted member is a new one while its old id waits out its session)."""

    time_ms: int
    assignment: Assignment
    view: tuple[tuple[str, str, str], ...]
    alive: frozenset[tuple[str, str]]
    settled: bool = True                     # False: the first of two cooperative rebalances


def _account(name: str, states: Sequence[_State], queues: Sequence[MessageQueue], end_ms: int
             ) -> tuple[dict[str, Any], list[tuple[Any, ...]], list[OwnershipSpan]]:
    """Moves, idle members, the worst imbalance (the most minus the fewest queues among the
    live members, over the settled assignments), unowned and double-owned time, rows and
    ownership spans."""
    previous: Assignment | None = None
    rows: list[tuple[Any, ...]] = []
    moves: list[int] = []
    idle_max = imbalance_max = 0
    spans: list[OwnershipSpan] = []
    unowned: Counter[str] = Counter()
    double: Counter[str] = Counter()
    for i, st in enumerate(states):
        ch, assignment = st, st.assignment
        if previous is not None and st.settled:
            moves.append(moved(previous, assignment))
        keys = {key for _, _, key in st.view}
        idle_max = max(idle_max, sum(1 for k in keys if not assignment.get(k)))
        if st.settled:
            counts = [len(assignment.get(k, ())) for m, _, k in st.view if (m, k) in st.alive]
            if counts:
                imbalance_max = max(imbalance_max, max(counts) - min(counts))
        span = (states[i + 1].time_ms if i + 1 < len(states) else end_ms) - ch.time_ms
        owners: Counter[MessageQueue] = Counter()
        live: dict[str, list[str]] = {}
        for member, cid, key in ch.view:
            for q in assignment.get(key, ()):
                rows.append((name, i, ch.time_ms, member, cid, q.broker_name, q.queue_id))
                if (member, key) in ch.alive:
                    owners[q] += 1
                    live.setdefault(q.short(), []).append(member)
        spans.append(OwnershipSpan(ch.time_ms, {q: tuple(sorted(m)) for q, m in live.items()}))
        for q in queues:
            if owners[q] == 0:
                unowned[q.short()] += max(0, span)
            elif owners[q] > 1:
                double[q.short()] += max(0, span)
        if st.settled:
            previous = assignment
    summary = {"changes": len(states), "queues_moved": sum(moves), "moved_per_change": moves,
               "idle_consumers_max": idle_max, "imbalance_max": imbalance_max,
               "unowned_ms_total": sum(unowned.values()),
               "double_owned_ms_total": sum(double.values()),
               "unowned_ms_by_queue": dict(sorted(unowned.items())),
               "double_owned_ms_by_queue": dict(sorted(double.items()))}
    return summary, rows, spans


def _membership_rows(trace: Trace, group: str) -> list[tuple[int, str, str, str]]:
    m = trace.membership
    if m is None:
        raise ValueError(f"{trace.folder}: the trace has no membership.parquet")
    return [(m["time_ms"][i], m["event"][i], m["member"][i], m["client_id"][i])
            for i in range(len(m["time_ms"])) if m["group"][i] == group]


def replay_group(trace: Trace, group: str, strategies: Sequence[str],
                 arrivals: dict[str, Counter[int]] | None = None, seed: int = 0
                 ) -> Iterator[tuple[str, dict[str, Any], list[tuple[Any, ...]],
                                     list[tuple[Any, ...]]]]:
    """Per strategy: summary (lag included when ``arrivals`` are given), assignment rows and
    lag rows ``(strategy, time_s, queue, lag)``. A ``kafka-`` strategy runs Kafka's assignor
    on Kafka's view of the timeline (``rocketlb_core.kafka.group``; its member ids drawn with
    ``seed``)."""
    changes = timeline(trace, group)
    queues = sorted(subscribe_queues(trace.topic, trace.layout.routes[trace.topic]))
    end = int(trace.meta.get("end_ms", changes[-1].time_ms))
    rate = float(trace.meta.get("groups", {}).get(group, {}).get("consume_rate_per_s", 2000.0))
    kafka: list[KafkaChange] | None = None
    for name in strategies:
        if name.startswith(KAFKA_PREFIX):
            if kafka is None:
                kafka = member_timeline(_membership_rows(trace, group), seed)
            summary, rows, spans = replay_kafka(name, kafka, queues, end, trace.topic)
        else:
            summary, rows, spans = replay_strategy(name, changes, queues, end, group)
        lag_rows: list[tuple[Any, ...]] = []
        if arrivals is not None:
            lag, samples = lag_timeline(spans, [q.short() for q in queues], arrivals, rate, end)
            summary.update(lag)
            lag_rows = [(name, *s) for s in samples]
        yield name, summary, rows, lag_rows
