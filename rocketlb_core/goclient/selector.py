"""The Go client's producer queue selectors (``producer/selector.go``, v2.1.2; spec 2 is
Java's).

* ``RoundRobin`` (``NewRoundRobinQueueSelector``, the default): one ``uint32`` counter a topic,
  from 0, incremented *before* it is used, so a topic's first message goes to queue ``1 % n``
  of the route's list (Java's ``ThreadLocalIndex`` starts at a random value, one a thread). With
  a last broker (a retry) it steps up to ``n`` times for a queue of another broker, then takes
  the next queue whatever its broker. The counter is the producer's, shared by its goroutines.
* ``Hash`` (``NewHashQueueSelector``): FNV-1a 32-bit of the sharding key's bytes, modulo the
  number of queues (non-negative on 64-bit Go); a message without a sharding key goes to a random
  queue from a generator seeded with the clock, which no vector can hold (``random`` here takes
  a seed instead and is not Go's generator).
* ``Manual`` (``NewManualQueueSelector``): the message's own queue, as set by the application.

>>> from rocketlb_core.goclient.allocate import GoQueue
>>> qs = [GoQueue("T", b, i) for b in ("a", "b") for i in range(2)]
>>> rr = RoundRobin()
>>> [rr.select("T", qs).short() for _ in range(5)]
[['a', 1], ['b', 0], ['b', 1], ['a', 0], ['a', 1]]
>>> rr.select("T", qs, last_broker="a").short()
['b', 0]
>>> fnv1a32("order-1"), Hash().select("T", qs, key="order-1").short()
(729795949, ['a', 1])
"""

from __future__ import annotations

import random as _random
from collections.abc import Sequence

from rocketlb_core.goclient.allocate import GoQueue

_U32 = 0xFFFFFFFF


def fnv1a32(text: str) -> int:
    """``hash/fnv.New32a`` over the UTF-8 bytes of ``text``."""
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & _U32
    return h


class RoundRobin:
    """``roundRobinQueueSelector``: ``indexer`` maps a topic to its counter."""

    def __init__(self) -> None:
        self.indexer: dict[str, int] = {}

    def _next(self, topic: str) -> int:
        value = (self.indexer.get(topic, 0) + 1) & _U32
        self.indexer[topic] = value
        return value

    def select(self, topic: str, queues: Sequence[GoQueue], last_broker: str = "",
               key: str = "") -> GoQueue:
        if not queues:
            raise ZeroDivisionError("integer divide by zero: no queues")
        if last_broker != "":
            for _ in range(len(queues)):
                q = queues[self._next(topic) % len(queues)]
                if q.broker_name != last_broker:
                    return q
        return queues[self._next(topic) % len(queues)]


class Hash:
    """``hashQueueSelector``; ``seed`` seeds the stand-in for the clock-seeded random
    selector a message without a sharding key goes to."""

    def __init__(self, seed: int = 0) -> None:
        self.random = _random.Random(seed)

    def select(self, topic: str, queues: Sequence[GoQueue], last_broker: str = "",
               key: str = "") -> GoQueue:
        if not queues:
            raise ZeroDivisionError("integer divide by zero: no queues")
        if key == "":
            return queues[self.random.randrange(len(queues))]
        return queues[fnv1a32(key) % len(queues)]


class Manual:
    """``manualQueueSelector``: the message's queue (``queue``), whatever the route holds."""

    def select(self, topic: str, queues: Sequence[GoQueue], last_broker: str = "",
               key: str = "", queue: GoQueue | None = None) -> GoQueue | None:
        return queue
