"""Strategies beyond upstream that minimise movement: sticky, and consistent hashing with bounded
loads. Neither exists in RocketMQ (spec 3.8); both are deterministic functions of the view and
of the previous assignment, so every client computes the same partition from the same inputs,
which is the property RocketMQ's client-side rebalancing needs.

``sticky()``: quotas of ``n // c`` or ``n // c + 1`` queues (balance within one); the extra
queues go to the consumers that previously owned the most of the current queues, so that as many
queues as possible keep their owner; then every consumer keeps its previous queues up to its
quota (in queue order) and the rest are dealt to consumers below quota in id order. Kafka's
sticky assignor pursues the same goal, with the previous assignment smuggled through user data;
here it is an explicit input (house style 5).

``consistent_hash_bounded(eps)``: the MD5 ring of CONSISTENT_HASH, but no consumer takes more than
``ceil((1 + eps) * n / c)`` queues: a queue whose owner on the ring is full moves clockwise to the
next consumer with room (Mirrokni et al., "Consistent hashing with bounded loads").

>>> from rocketlb_core.model import MessageQueue
>>> mqs = [MessageQueue("T", "b", i) for i in range(6)]
>>> before = {"c1": mqs[0:3], "c2": mqs[3:6]}
>>> after = sticky().assign_all("g", mqs, ["c1", "c2", "c3"], before)
>>> {c: [q.queue_id for q in qs] for c, qs in after.items()}
{'c1': [0, 1], 'c2': [3, 4], 'c3': [2, 5]}
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rocketlb_core.consumer.base import Assignment, _WholeGroupShare, unique_ids
from rocketlb_core.consumer.consistent_hash import HashFunction, Ring, md5_hash
from rocketlb_core.javamath import java_string_key
from rocketlb_core.model import MessageQueue

Previous = Mapping[str, Sequence[MessageQueue]] | None


@dataclass(frozen=True)
class _Sticky(_WholeGroupShare):
    @property
    def name(self) -> str:
        return "STICKY"

    def assign_all(self, consumer_group: str, mq_all: Sequence[MessageQueue],
                   cid_all: Sequence[str], previous: Previous = None) -> Assignment:
        members = sorted(unique_ids(cid_all), key=java_string_key)
        n, c = len(mq_all), len(members)
        live = set(mq_all)
        prev_owner: dict[MessageQueue, str] = {}
        for cid in members:                       # a queue claimed twice keeps its first owner
            for q in (previous or {}).get(cid, ()):
                if q in live and q not in prev_owner:
                    prev_owner[q] = cid
        held = {cid: 0 for cid in members}
        for holder in prev_owner.values():
            held[holder] += 1
        base, extra = divmod(n, c)
        by_holding = sorted(members, key=lambda m: (-held[m], java_string_key(m)))
        quota = {m: base + (1 if i < extra else 0) for i, m in enumerate(by_holding)}
        out: Assignment = {m: [] for m in members}
        free: list[MessageQueue] = []
        for q in mq_all:                          # keep previous owners up to their quota
            owner = prev_owner.get(q)
            if owner is not None and len(out[owner]) < quota[owner]:
                out[owner].append(q)
            else:
                free.append(q)
        it = iter(free)
        for m in members:                         # deal the rest in id order
            while len(out[m]) < quota[m]:
                out[m].append(next(it))
        position = {q: i for i, q in enumerate(mq_all)}
        return {m: sorted(out[m], key=position.__getitem__) for m in unique_ids(cid_all)}


@dataclass(frozen=True)
class _BoundedHash(_WholeGroupShare):
    eps: float = 0.25
    virtual_nodes: int = 10
    hash_function: HashFunction = field(default=md5_hash)

    def __post_init__(self) -> None:
        if not self.eps >= 0:
            raise ValueError(f"eps must be >= 0, not {self.eps}")
        if self.virtual_nodes < 1:
            raise ValueError(f"virtual_nodes must be >= 1, not {self.virtual_nodes}")

    @property
    def name(self) -> str:
        return "CONSISTENT_HASH_BOUNDED"

    def capacity(self, queues: int, consumers: int) -> int:
        return math.ceil((1 + self.eps) * queues / consumers)

    def assign_all(self, consumer_group: str, mq_all: Sequence[MessageQueue],
                   cid_all: Sequence[str], previous: Previous = None) -> Assignment:
        members = unique_ids(cid_all)
        ring = Ring.build(members, self.virtual_nodes, self.hash_function)
        cap = self.capacity(len(mq_all), len(members))
        out: Assignment = {m: [] for m in members}
        keys, nodes, size = ring.keys, ring.nodes, len(ring.keys)

        for q in mq_all:
            i = bisect_left(keys, self.hash_function(str(q))) % size
            while len(out[nodes[i]]) >= cap:      # full: walk clockwise
                i = (i + 1) % size
            out[nodes[i]].append(q)
        return out


def sticky() -> _Sticky:
    """STICKY: balanced within one, keeping as many previous owners as possible (the previous
    assignment is an input). Not in RocketMQ."""
    return _Sticky()


def consistent_hash_bounded(eps: float = 0.25, virtual_nodes: int = 10,
                            hash_function: HashFunction | None = None) -> _BoundedHash:
    """CONSISTENT_HASH_BOUNDED: the MD5 ring with a load cap of ``ceil((1+eps) * n / c)``: a
    queue whose owner on the ring is full moves clockwise to the next consumer with room. Not
    in RocketMQ."""
    return _BoundedHash(eps, virtual_nodes, hash_function or md5_hash)
