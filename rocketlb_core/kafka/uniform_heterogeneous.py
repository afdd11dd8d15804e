"""KIP-848's ``UniformAssignor`` when the members of a group subscribe to different topics:
``UniformHeterogeneousAssignmentBuilder`` (kafka-group-coordinator 4.0 to 4.3, the same code),
ported step for step and checked against the released classes
(``tests/vectors/kafka/kafka-uniform-unequal-*.jsonl.gz``).

1. Each member keeps what its current target assignment holds of the topics it still
   subscribes to; the rest is dropped.
2. The free partitions go out topic by topic, the topics with the most partitions per subscriber
   first (then the fewest subscribers, then the topic id): each to the least loaded subscriber,
   walking the subscribers sorted by load, a whole band of equally loaded ones before the next.
3. Then, for up to 16 rounds over the topics with two or more subscribers in the same order, a
   topic's partitions move from its most to its least loaded subscribers (the highest-numbered
   partition of the most loaded first) until their loads differ by at most one; the rounds stop
   once a whole round moved nothing.

Outputs are sets of partitions, so no Java hash order decides anything here but the order of
the member ids (the coordinator's map), which breaks ties between equally loaded members.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rocketlb_core.javamath import java_hash_order

MAX_ITERATION_COUNT = 16
"""``MAX_ITERATION_COUNT``: rounds of the balancing pass over the topics."""


class HeterogeneousAssignorError(RuntimeError):
    """Where the coordinator's builder throws (``kind``: the Java exception's simple name)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _Balancer:
    """``MemberAssignmentBalancer``: the subscribers of one topic sorted by load (then index),
    handing out the least loaded from the bottom and the most loaded from the top, a band of
    equal loads at a time. The loads are the builder's, which change as partitions move; the
    sorted order is taken once per topic, as Kafka does."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.order: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: Sequence[int]) -> int:
        if not members:
            raise HeterogeneousAssignorError("IllegalArgumentException",
                                             "Cannot balance an empty subscriber list.")
        sizes = self.sizes
        self.order = sorted(members, key=lambda i: (sizes[i], i))
        self.least_end = 0
        self.least_count = sizes[self.order[0]] - 1
        self.next_least = 0
        self.most_start = self.most_end = len(self.order)
        self.most_count = sizes[self.order[-1]] + 1
        self.next_most = len(self.order) - 1
        return sizes[self.order[-1]] - sizes[self.order[0]]

    def least_loaded(self) -> int:
        sizes, order = self.sizes, self.order
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(order) and sizes[order[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = order[self.next_least]
        self.next_least += 1
        return member

    def most_loaded(self) -> int:
        sizes, order = self.sizes, self.order
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = sizes[order[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and sizes[order[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = order[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        order = self.order
        member = order[self.next_most + 1]
        order[self.next_most + 1] = order[self.most_end - 1]
        order[self.most_end - 1] = member
        self.most_end -= 1

    def balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


def uniform_heterogeneous_assign(
        partitions: Mapping[str, int], topic_ids: Mapping[str, tuple[int, int]],
        members: Sequence[tuple[str, Mapping[str, Sequence[int]]]],
        subscriptions: Mapping[str, Sequence[str]]) -> dict[str, dict[str, list[int]]]:
    """``UniformHeterogeneousAssignmentBuilder.build``: ``partitions`` and ``topic_ids`` per
    topic name (the id's two signed 64-bit halves, which break ties between topics);
    ``members``: (member id, its current target assignment), in the order the coordinator put
    them into its map; ``subscriptions``: each member's topics. Returns each member's partitions
    per topic, sorted, topics without partitions left out."""
    ids = java_hash_order([m for m, _ in members])
    index = {m: i for i, m in enumerate(ids)}
    current = {m: owned for m, owned in members}
    subscribers: dict[str, list[int]] = {}
    for i, member in enumerate(ids):
        for t in dict.fromkeys(subscriptions.get(member, ())):
            if t not in partitions:
                raise HeterogeneousAssignorError(
                    "PartitionAssignorException",
                    f"Members are subscribed to topic {t} which doesn't exist in the topic "
                    "metadata.")
            subscribers.setdefault(t, []).append(i)
    if not subscribers:
        return {}
    sizes = [0] * len(ids)
    owners = {t: [-1] * partitions[t] for t in subscribers}
    target: dict[str, dict[str, set[int]]] = {}
    for member in ids:                                      # maybeRevokePartitions
        i = index[member]
        mine = set(subscriptions.get(member, ()))
        kept: dict[str, set[int]] = {}
        for t, ps in current.get(member, {}).items():
            if t not in mine:
                continue
            kept[t] = set(ps)
            sizes[i] += len(kept[t])
            for p in kept[t]:
                owners[t][p] = i
        target[member] = kept

    def order_key(t: str) -> tuple[float, int, tuple[int, int]]:
        return (-(partitions[t] / len(subscribers[t])), len(subscribers[t]), topic_ids[t])

    def assign(t: str, p: int, member: int) -> None:
        old = owners[t][p]
        if old != -1:
            held = target[ids[old]].get(t)
            if held is not None:
                held.discard(p)
                if not held:
                    del target[ids[old]][t]
            owners[t][p] = -1
            sizes[old] -= 1
        target[ids[member]].setdefault(t, set()).add(p)
        owners[t][p] = member
        sizes[member] += 1

    balancer = _Balancer(sizes)
    free = {t: [p for p in range(partitions[t]) if owners[t][p] == -1] for t in subscribers}
    for t in sorted((t for t, ps in free.items() if ps), key=order_key):
        balancer.initialize(subscribers[t])
        for p in free[t]:
            assign(t, p, balancer.least_loaded())

    movable = sorted((t for t, ms in subscribers.items() if len(ms) >= 2), key=order_key)
    last = -1
    for _ in range(MAX_ITERATION_COUNT):                    # balanceTopics
        for k, t in enumerate(movable):
            if k == last:
                return _result(target)
            if _balance_topic(t, partitions[t], owners[t], subscribers[t], balancer,
                              assign) > 0 or last == -1:
                last = k
    return _result(target)


def _balance_topic(t: str, count: int, owners: list[int], members: Sequence[int],
                   balancer: _Balancer, assign: Callable[[str, int, int], None]) -> int:
    """``balanceTopic``: partitions of ``t`` moved from its most to its least loaded
    subscribers; returns how many moved."""
    if balancer.initialize(members) <= 1:
        return 0
    ordered = sorted(range(count), key=lambda p: (owners[p], p))
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    for i, p in enumerate(ordered):
        start.setdefault(owners[p], i)
        end[owners[p]] = i + 1
    moved = 0
    while not balancer.balanced():
        while True:
            most = balancer.most_loaded()
            if most == -1:
                break
            if most not in end or end[most] - start[most] <= 0:
                balancer.exclude_most_loaded()
                continue
            break
        if most == -1:
            break
        p = ordered[end[most] - 1]
        end[most] -= 1
        least = balancer.least_loaded()
        if balancer.balanced():
            break
        assign(t, p, least)
        moved += 1
    return moved


def _result(target: Mapping[str, Mapping[str, set[int]]]) -> dict[str, dict[str, list[int]]]:
    return {m: {t: sorted(ps) for t, ps in kept.items() if ps} for m, kept in target.items()}
