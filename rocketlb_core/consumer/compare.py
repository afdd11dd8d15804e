"""Compare allocation strategies over membership sequences: how many queues move at each
change, and how uneven the result is. The book's chapter on movement-minimising strategies and
the consumer issue's comparison table both come from here.

``rocketlb compare`` prints the comparison (JSON, or Markdown with ``--markdown``) for the
standard sequences: scale-out (4 to 20 consumers over 16 queues, past the queue count), scale-in
(8 to 2), and crash-and-restart (a consumer dies, restarts with a new instance id, another dies).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rocketlb_core.consumer.base import AllocateStrategy, Assignment, assign_all, rebalance_view
from rocketlb_core.consumer.metrics import idle_consumers, imbalance, moved
from rocketlb_core.consumer.registry import sweep
from rocketlb_core.model import MessageQueue


def _cid(i: int, incarnation: int = 0) -> str:
    return f"room{i % 2 + 1}-10.0.0.{i + 1}@{7000 + i}#{incarnation}"


def standard_sequences() -> dict[str, list[list[str]]]:
    """Membership over time (each entry: the group's ids after one change)."""
    scale_out = [[_cid(i) for i in range(n)] for n in (4, 5, 6, 8, 12, 16, 20)]
    scale_in = [[_cid(i) for i in range(n)] for n in (8, 7, 6, 4, 2)]
    six = [_cid(i) for i in range(6)]
    crash = [six, [c for c in six if c != _cid(2)],
             [*[c for c in six if c != _cid(2)], _cid(2, 1)],
             [c for c in [*six, _cid(2, 1)] if c not in (_cid(2), _cid(4))]]
    return {"scale-out 4->20": scale_out, "scale-in 8->2": scale_in,
            "crash, restart, crash": crash}


def standard_queues() -> list[MessageQueue]:
    return [MessageQueue("TopicTest", f"room{b + 1}-broker-{'ab'[b]}", i)
            for b in range(2) for i in range(8)]


def standard_strategies() -> dict[str, AllocateStrategy]:
    """Every strategy the registry sweeps (rooms from the ``roomN-`` prefix of the ids)."""
    return sweep()


@dataclass(frozen=True)
class Row:
    strategy: str
    sequence: str
    moved_per_change: tuple[int, ...]
    worst_spread: int          # max - min queues per consumer, worst step
    worst_ratio: float         # max over mean, worst step
    most_idle: int             # consumers with nothing, worst step

    @property
    def moved_total(self) -> int:
        return sum(self.moved_per_change)


def run(strategy: AllocateStrategy, queues: Sequence[MessageQueue],
        steps: Sequence[Sequence[str]]) -> tuple[list[Assignment], Row]:
    history: list[Assignment] = []
    prev: Mapping[str, Sequence[MessageQueue]] | None = None
    for members in steps:
        mq_all, cid_all = rebalance_view(queues, members)
        a = assign_all(strategy, "group", mq_all, cid_all, prev)
        history.append(a)
        prev = a
    spreads = [imbalance(a) for a in history]
    row = Row(strategy.name, "", tuple(moved(a, b) for a, b in itertools.pairwise(history)),
              max(s[0] for s in spreads), round(max(s[1] for s in spreads), 2),
              max(len(idle_consumers(a)) for a in history))
    return history, row


def comparison() -> list[Row]:
    rows = []
    queues = standard_queues()
    for seq_name, steps in standard_sequences().items():
        for name, strategy in standard_strategies().items():
            _, row = run(strategy, queues, steps)
            rows.append(Row(name, seq_name, row.moved_per_change, row.worst_spread,
                            row.worst_ratio, row.most_idle))
    return rows


def markdown(rows: Sequence[Row]) -> str:
    lines = ["| sequence | strategy | queues moved per change | total moved | worst max-min "
             "| worst max/mean | most idle |", "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.sequence} | {r.strategy} | {', '.join(map(str, r.moved_per_change))}"
                     f" | {r.moved_total} | {r.worst_spread} | {r.worst_ratio:.2f} |"
                     f" {r.most_idle} |")
    return "\n".join(lines)


if __name__ == "__main__":       # python -m rocketlb_core.consumer.compare: rocketlb compare
    from rocketlb_core.commands import alias

    raise SystemExit(alias("compare")(None))


# ------------------------------------------------------------------ members on different topics

MIXED_GROUP = {"c-1": ("TopicA",), "c-2": ("TopicA",), "c-3": ("TopicA", "TopicB"),
               "c-4": ("TopicA", "TopicB")}
"""Chapter 4's exercise: four consumers of one group, two of them redeployed with a version that
also subscribes ``TopicB``."""


@dataclass(frozen=True)
class MixedRow:
    design: str                # "RocketMQ" or "Kafka"
    strategy: str
    topic: str
    queues: int
    unconsumed: int            # allocated to a member that does not subscribe to the topic
    loads: tuple[tuple[str, int], ...]      # queues each member consumes, all topics


def mixed_subscriptions(group: Mapping[str, Sequence[str]] = MIXED_GROUP,
                        queues_per_topic: int = 8,
                        rocketmq: Sequence[str] = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"),
                        kafka: Sequence[str] = ("range", "roundrobin", "sticky",
                                                "cooperative-sticky", "uniform"),
                        seed: int = 4) -> list[MixedRow]:
    """A group whose members subscribe to different topics, under RocketMQ's strategies and
    Kafka's assignors (one fresh assignment each).

    RocketMQ: every member rebalances each topic it subscribes to over the group's **whole**
    member list (``findConsumerIdList`` is per group, not per topic), so the shares of members
    that do not subscribe to the topic are computed by nobody's ``allocate`` and consumed by
    nobody. Kafka: the assignor sees each member's topics (``sticky_general``,
    ``uniform_heterogeneous`` when they differ), so every partition of a subscribed topic goes to
    a member subscribed to it. ``seed``: the topic ids of the group coordinator's topics."""
    import random

    from rocketlb_core.consumer.registry import make
    from rocketlb_core.kafka.assignors import ASSIGNORS, StickyMember, Topic, uniform_assign

    topics = sorted({t for ts in group.values() for t in ts})
    members = list(group)
    rows: list[MixedRow] = []

    def row(design: str, strategy: str, owned: Mapping[str, Sequence[tuple[str, int]]]
            ) -> None:
        consumed = {m: [tp for tp in tps if tp[0] in group[m]] for m, tps in owned.items()}
        loads = tuple((m, len(consumed.get(m, []))) for m in members)
        for t in topics:
            mine = {tp for tps in consumed.values() for tp in tps if tp[0] == t}
            rows.append(MixedRow(design, strategy, t, queues_per_topic,
                                 queues_per_topic - len(mine), loads))

    for name in rocketmq:
        strategy = make(name)
        owned: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
        for t in topics:
            mq_all, cid_all = rebalance_view(
                [MessageQueue(t, "broker-a", i) for i in range(queues_per_topic)], members)
            shares = assign_all(strategy, "GID", mq_all, cid_all)     # one view: every share
            for m in members:
                if t in group[m]:           # only a subscriber rebalances the topic
                    owned[m] += [(q.topic, q.queue_id) for q in shares.get(m, [])]
        row("RocketMQ", name, owned)
    rnd = random.Random(seed)
    ids = {t: (rnd.getrandbits(63), rnd.getrandbits(63)) for t in topics}
    for name in kafka:
        if name == "uniform":
            target = uniform_assign([Topic(t, queues_per_topic, ids[t]) for t in topics],
                                    [(m, {}) for m in members],
                                    subscriptions={m: list(ts) for m, ts in group.items()})
            row("Kafka", name, {m: [(t, p) for t, ps in target.get(m, {}).items() for p in ps]
                                for m in members})
            continue
        got = ASSIGNORS[name]({t: queues_per_topic for t in topics},
                              [StickyMember(m, tuple(group[m])) for m in members])
        row("Kafka", name, got)
    return rows
