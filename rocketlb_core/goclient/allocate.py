"""The Go client's allocation strategies (``consumer/strategy.go``, v2.0.0 to v2.1.2: the same
code in each) and ``doBalance``'s order (``consumer/consumer.go``).

A strategy answers ``None`` (Go's ``nil``) when the current id is empty, there are no queues or
no ids, or the id is not among them; else a list (perhaps empty). Strings are Go strings: ``==``
compares their bytes, ``<`` orders them by UTF-8 bytes, which is code point order, Python's
(Java orders UTF-16 code units: an id or a broker name with a character above U+FFFF sorts
differently there, spec 1.1).

* ``averagely``, ``averagely_circle``: Java's AVG and AVG_BY_CIRCLE (the tests run both on the
  vectors' cases);
* ``machine_nearby``: ``averagely`` (the Go client's is a TODO that calls it);
* ``machine_room``: counts the queues of brokers named ``room@broker`` in the consumer's rooms
  (Go's ``strings.Split`` keeps an empty tail, so ``room@`` counts, and a room named twice in the
  list counts its queues twice) but takes its share from ``mq_all``, the queues of every room
  (Java takes them from the rooms' own queues); when the count passes ``mq_all``'s length (a
  room listed twice) it panics, index out of range;
* ``consistent_hash``: stathat's ring (``stathat.com/c/consistent``): each id's replicas at
  CRC-32 of ``"<i><id>"``, each queue at CRC-32 of ``MessageQueue [topic=T, brokerName=B,
  queueId=Q]``, owned by the first replica above it (Java's ring hashes with MD5, spec 3.7);
* ``by_config``: the configured list, to everyone.

>>> from rocketlb_core.goclient.allocate import GoQueue, averagely, machine_room
>>> qs = [GoQueue("T", b, i) for b in ("hz@a", "sh@b") for i in range(2)]
>>> [q.short() for q in machine_room(["hz"])("g", "c1", qs, ["c1", "c2"])]
[['hz@a', 0]]
>>> [q.short() for q in machine_room(["hz"])("g", "c2", qs, ["c1", "c2"])]
[['hz@a', 1]]
>>> [q.short() for q in machine_room(["sh"])("g", "c2", qs, ["c1", "c2"])]
[['hz@a', 1]]
"""

from __future__ import annotations

import zlib
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class GoQueue:
    """``primitive.MessageQueue``: topic, broker name, queue id."""

    topic: str
    broker_name: str
    queue_id: int

    def row(self) -> list[object]:
        return [self.topic, self.broker_name, self.queue_id]

    def short(self) -> list[object]:
        return [self.broker_name, self.queue_id]

    def string(self) -> str:
        """``MessageQueue.String()``."""
        return (f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, "
                f"queueId={self.queue_id}]")

    @classmethod
    def of(cls, row: Sequence[object]) -> GoQueue:
        topic, broker, queue_id = row
        if not isinstance(topic, str) or not isinstance(broker, str) or \
                not isinstance(queue_id, int) or isinstance(queue_id, bool):
            raise TypeError(f"a queue is [topic, broker, queue id], not {list(row)!r}")
        return cls(topic, broker, queue_id)


class GoPanic(Exception):
    """A Go panic the client's code raises (its message as Go prints it)."""


Strategy = Callable[[str, str, Sequence[GoQueue], Sequence[str]], "list[GoQueue] | None"]


def _index(current: str, mq_all: Sequence[GoQueue], cid_all: Sequence[str]) -> int | None:
    if current == "" or not mq_all or not cid_all:
        return None
    for i, cid in enumerate(cid_all):
        if cid == current:
            return i
    return None                                   # "[BUG] ConsumerId not in cidAll"


def averagely(group: str, current: str, mq_all: Sequence[GoQueue],
              cid_all: Sequence[str]) -> list[GoQueue] | None:
    """``AllocateByAveragely``."""
    index = _index(current, mq_all, cid_all)
    if index is None:
        return None
    n, c = len(mq_all), len(cid_all)
    mod = n % c
    if n <= c:
        size = 1
    elif mod > 0 and index < mod:
        size = n // c + 1
    else:
        size = n // c
    start = index * size if (mod > 0 and index < mod) else index * size + mod
    return [mq_all[(start + i) % n] for i in range(min(size, n - start))]


def averagely_circle(group: str, current: str, mq_all: Sequence[GoQueue],
                     cid_all: Sequence[str]) -> list[GoQueue] | None:
    """``AllocateByAveragelyCircle``."""
    index = _index(current, mq_all, cid_all)
    if index is None:
        return None
    return [mq_all[i] for i in range(index, len(mq_all)) if i % len(cid_all) == index]


machine_nearby = averagely
"""``AllocateByMachineNearby``: a TODO that returns ``AllocateByAveragely``."""


def by_config(queues: Sequence[GoQueue] | None) -> Strategy:
    """``AllocateByConfig(list)``: ``list`` to every caller (``None`` stays ``None``)."""
    fixed = None if queues is None else list(queues)

    def strategy(group: str, current: str, mq_all: Sequence[GoQueue],
                 cid_all: Sequence[str]) -> list[GoQueue] | None:
        return None if fixed is None else list(fixed)
    return strategy


def machine_room(consumeridcs: Sequence[str]) -> Strategy:
    """``AllocateByMachineRoom(consumeridcs)``."""
    idcs = list(consumeridcs)

    def strategy(group: str, current: str, mq_all: Sequence[GoQueue],
                 cid_all: Sequence[str]) -> list[GoQueue] | None:
        index = _index(current, mq_all, cid_all)
        if index is None:
            return None
        pre: list[GoQueue] = []
        for q in mq_all:
            parts = q.broker_name.split("@")      # Go's strings.Split: empty parts kept
            if len(parts) == 2:
                pre += [q for idc in idcs if idc == parts[0]]
        c = len(cid_all)
        per, rem = divmod(len(pre), c)
        out = []
        for i in range(per * index, per * index + per):
            if i >= len(mq_all):                  # a room listed twice counts its queues twice
                raise GoPanic(f"runtime error: index out of range [{i}] with length "
                              f"{len(mq_all)}")
            out.append(mq_all[i])
        if rem > index:
            out.append(pre[index + per * c])
        return out
    return strategy


def _crc32(text: str) -> int:
    return zlib.crc32(text.encode("utf-8")) & 0xFFFFFFFF


def consistent_hash(virtual_nodes: int) -> Strategy:
    """``AllocateByConsistentHash(virtualNodeCnt)``: stathat's ring with ``virtualNodeCnt``
    replicas an id. 0 panics (the ring divides by it); below 0 makes no replica, and a queue on
    an empty ring belongs to ``""``, so to nobody."""
    def strategy(group: str, current: str, mq_all: Sequence[GoQueue],
                 cid_all: Sequence[str]) -> list[GoQueue] | None:
        if _index(current, mq_all, cid_all) is None:
            return None
        if virtual_nodes == 0:
            # updateSortedHashes divides by NumberOfReplicas*4 on the first Add
            raise GoPanic("runtime error: integer divide by zero")
        circle: dict[int, str] = {}
        for cid in cid_all:                       # a later id takes a hash it shares
            for i in range(virtual_nodes):
                circle[_crc32(f"{i}{cid}")] = cid
        ring = sorted(circle)
        out = []
        for q in mq_all:
            if not ring:
                owner = ""                        # ErrEmptyCircle: logged, "" compared
            else:
                at = bisect_right(ring, _crc32(q.string()))
                owner = circle[ring[at if at < len(ring) else 0]]
            if owner == current:
                out.append(q)
        return out
    return strategy


def balance_order(mq_all: Sequence[GoQueue],
                  cid_all: Sequence[str]) -> tuple[list[GoQueue], list[str]]:
    """The queues and ids as ``doBalance`` hands them to the strategy: ids by ``sort.Strings``,
    queues by topic, broker name and queue id (``sort.SliceStable``); Go orders strings by their
    bytes, which for UTF-8 is code point order."""
    return (sorted(mq_all, key=lambda q: (q.topic, q.broker_name, q.queue_id)),
            sorted(cid_all))


class JavaView:
    """A Go strategy behind the Java strategies' ``allocate(group, cid, mq_all, cid_all)`` on
    ``model.MessageQueue`` (what ``trace.agreement.allocation_agreement`` calls): the lists put
    in ``doBalance``'s order first, as the Go client does, whatever order they come in."""

    def __init__(self, strategy: Strategy) -> None:
        self.strategy = strategy

    def allocate(self, group: str, current: str, mq_all: Sequence[Any],
                 cid_all: Sequence[str]) -> list[Any] | None:
        from rocketlb_core.model import MessageQueue

        qs, ids = balance_order([GoQueue(q.topic, q.broker_name, q.queue_id) for q in mq_all],
                                cid_all)
        got = self.strategy(group, current, qs, ids)
        return None if got is None else [MessageQueue(q.topic, q.broker_name, q.queue_id)
                                         for q in got]


LIVE_STRATEGIES = {"AVG": averagely, "CONSISTENT_HASH": consistent_hash(10)}
"""The live Go driver's strategies by the names its scenarios use (``live/go``)."""

STRATEGIES = ("averagely", "averagely-circle", "machine-nearby", "machine-room",
              "consistent-hash", "config")


def strategy(name: str, params: dict[str, object]) -> Strategy:
    """A strategy by its vector name, with its parameters (``consumeridcs``,
    ``virtual_nodes``, ``list``)."""
    if name == "averagely":
        return averagely
    if name == "averagely-circle":
        return averagely_circle
    if name == "machine-nearby":
        return machine_nearby
    if name == "machine-room":
        idcs = params["consumeridcs"]
        if not isinstance(idcs, list) or not all(isinstance(x, str) for x in idcs):
            raise TypeError("consumeridcs: a list of room names")
        return machine_room(idcs)
    if name == "consistent-hash":
        nodes = params["virtual_nodes"]
        if not isinstance(nodes, int) or isinstance(nodes, bool):
            raise TypeError("virtual_nodes: a whole number")
        return consistent_hash(nodes)
    if name == "config":
        rows = params["list"]
        if rows is not None and not isinstance(rows, list):
            raise TypeError("list: a list of queues or null")
        return by_config(None if rows is None else [GoQueue.of(r) for r in rows])
    raise ValueError(f"unknown Go allocation strategy {name!r} (one of {', '.join(STRATEGIES)})")
