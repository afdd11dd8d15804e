"""CONSISTENT_HASH: ``AllocateMessageQueueConsistentHash`` on an MD5 ring (spec 3.7).

Virtual node keys are ``<clientId>-<k>``; a duplicated id gets a second batch numbered after the
first (double weight). Each queue goes to the first node clockwise whose key is >= the hash of
``str(queue)`` (the exact ``MessageQueue [...]`` text), wrapping to the smallest key.

Upstream rebuilds the ring on every ``allocate`` call (each consumer, every rebalance); the
whole-group ``assign_all`` builds it once and routes every queue once.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rocketlb_core.consumer.base import (
    AllocationArgumentError,
    Assignment,
    _CheckedShare,
    unique_ids,
)
from rocketlb_core.javamath import java_string_hash
from rocketlb_core.model import MessageQueue

HashFunction = Callable[[str], int]


def md5_hash(key: str) -> int:
    """Upstream's default: the first 4 MD5 bytes of the UTF-8 key, big-endian, unsigned."""
    return int.from_bytes(hashlib.md5(key.encode("utf-8")).digest()[:4], "big")


def java_string_hashcode(key: str) -> int:
    """A custom hash used by the vectors: ``(long) key.hashCode()`` (sign-extended)."""
    return java_string_hash(key)


@dataclass(frozen=True)
class Ring:
    """A built ring: sorted signed 64-bit keys and the physical node of each."""

    keys: list[int]
    nodes: list[str]

    @classmethod
    def build(cls, cid_all: Sequence[str], virtual_nodes: int, hash_fn: HashFunction) -> Ring:
        ring: dict[int, str] = {}
        count: dict[str, int] = {}                  # virtual nodes currently owned per id
        for cid in cid_all:
            existing = count.get(cid, 0)
            for r in range(virtual_nodes):
                key = hash_fn(f"{cid}-{r + existing}")
                old = ring.get(key)
                if old is not None:                 # a colliding put overwrites
                    count[old] -= 1
                ring[key] = cid
                count[cid] = count.get(cid, 0) + 1
        keys = sorted(ring)
        return cls(keys, [ring[k] for k in keys])

    def route(self, key_hash: int) -> str | None:
        if not self.keys:
            return None
        i = bisect_left(self.keys, key_hash)
        return self.nodes[i if i < len(self.keys) else 0]


@dataclass(frozen=True)
class _ConsistentHash(_CheckedShare):
    virtual_nodes: int = 10
    hash_function: HashFunction = field(default=md5_hash)

    def __post_init__(self) -> None:
        if self.virtual_nodes < 0:
            raise AllocationArgumentError(f"illegal virtualNodeCnt :{self.virtual_nodes}")

    @property
    def name(self) -> str:
        return "CONSISTENT_HASH"

    def share(self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue],
              cid_all: Sequence[str]) -> list[MessageQueue]:
        ring = Ring.build(cid_all, self.virtual_nodes, self.hash_function)
        h = self.hash_function
        return [q for q in mq_all if ring.route(h(str(q))) == current_cid]

    def assign_all(self, consumer_group: str, mq_all: Sequence[MessageQueue],
                   cid_all: Sequence[str], previous: object = None) -> Assignment:
        ring = Ring.build(cid_all, self.virtual_nodes, self.hash_function)
        out: Assignment = {cid: [] for cid in unique_ids(cid_all)}
        h = self.hash_function
        for q in mq_all:
            owner = ring.route(h(str(q)))
            if owner is not None:
                out[owner].append(q)
        return out


def consistent_hash(virtual_nodes: int | None = None,
                    hash_function: HashFunction | None = None) -> _ConsistentHash:
    """CONSISTENT_HASH (``AllocateMessageQueueConsistentHash``): each queue to the consumer of
    the first node clockwise from the queue's hash, on a ring of ``virtual_nodes`` nodes per
    consumer (default 10), hashed with MD5 or an optional custom hash. A negative count raises
    ``illegal virtualNodeCnt :<n>`` as upstream."""
    return _ConsistentHash(10 if virtual_nodes is None else virtual_nodes,
                           hash_function or md5_hash)
