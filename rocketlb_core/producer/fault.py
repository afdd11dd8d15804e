"""The latency fault table ``LatencyFaultToleranceImpl`` (spec 2.4, 2.4a, 2.5).

The table maps a broker name to a fault item. Time comes in as ``now_ms`` (virtual milliseconds):
nothing here reads a clock. Items keep insertion order, which stands for upstream's
``ConcurrentHashMap`` iteration order; upstream breaks exact ties by that unspecified order
(4.9.8, 5.0.0 to 5.1.3) or at random (4.7.1 and 4.9.0 shuffle first), so only tie-free tables
are bit-exact (the vectors are tie-free by construction).

``FaultTable4`` serves 4.7.1, 4.9.7 and 4.9.8; ``FaultTable5`` serves 5.x.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from rocketlb_core.javamath import JavaNullPointerError
from rocketlb_core.producer.index import ThreadLocalIndex
from rocketlb_core.producer.line import ProducerLine

__all__ = ["FaultItem", "FaultTable4", "FaultTable5", "JavaNullPointerError"]

DETECT_INTERVAL_MS = 2000       # ClientConfig.detectInterval @5.3.3
DETECT_TIMEOUT_MS = 200         # ClientConfig.detectTimeout @5.3.3


@dataclass(slots=True)
class FaultItem:
    """One broker's entry: last reported latency and the moment it becomes available again."""

    name: str
    current_latency: int
    start_timestamp: int
    check_stamp: int = 0          # 5.x detector
    reachable: bool = True        # 5.x


class FaultTable4:
    """4.x table: ``update`` always overwrites the deadline (a fast success clears an isolation);
    ``pickOneAtLeast`` sorts (available, latency, deadline) and rotates over the better half."""

    def __init__(self, line: ProducerLine | str = ProducerLine.V4_9_8, *,
                 which_item_worst: ThreadLocalIndex | None = None,
                 rng: random.Random | None = None) -> None:
        self.line = ProducerLine.parse(line)
        if self.line.rules.selection != "4.x":
            raise ValueError("FaultTable4 models 4.x; use FaultTable5 for 5.x")
        self.items: dict[str, FaultItem] = {}
        self.which_item_worst = which_item_worst or ThreadLocalIndex(self.line, stored=0)
        self.rng = rng or random.Random(0)   # 4.7.1's shuffle; only reorders exact ties

    def update(self, name: str, latency_ms: int, duration_ms: int, now_ms: int) -> None:
        item = self.items.get(name)
        if item is None:
            self.items[name] = FaultItem(name, latency_ms, now_ms + duration_ms)
        else:
            item.current_latency = latency_ms
            item.start_timestamp = now_ms + duration_ms

    def is_available(self, name: str, now_ms: int) -> bool:
        item = self.items.get(name)
        return item is None or now_ms - item.start_timestamp >= 0

    def remove(self, name: str | None) -> None:
        if name is None:
            raise JavaNullPointerError("remove(null) on a ConcurrentHashMap")
        self.items.pop(name, None)

    def ordered(self, now_ms: int) -> list[FaultItem]:
        """The items in ``FaultItem.compareTo`` order (stable sort; 4.7.1 shuffles first)."""
        items = list(self.items.values())
        if self.line.rules.shuffles_fault_items:
            self.rng.shuffle(items)
        items.sort(key=lambda it: (now_ms - it.start_timestamp < 0, it.current_latency,
                                   it.start_timestamp))
        return items

    def pick_one_at_least(self, now_ms: int) -> str | None:
        """The least-bad broker: a rotation over the better half (side effect on the counter)."""
        items = self.ordered(now_ms)
        if not items:
            return None
        half = len(items) // 2
        if half <= 0:
            return items[0].name
        return items[self.which_item_worst.next() % half].name


Resolver = Callable[[str], "str | None"]
Detector = Callable[[str, int], bool]


class FaultTable5:
    """5.x table: ``update`` only extends the deadline and always overwrites ``reachable``;
    availability is time only; the detector can only restore reachability (spec 2.5)."""

    def __init__(self, *, detect_interval_ms: int = DETECT_INTERVAL_MS,
                 detect_timeout_ms: int = DETECT_TIMEOUT_MS,
                 rng: random.Random | None = None) -> None:
        self.items: dict[str, FaultItem] = {}
        self.detect_interval_ms = detect_interval_ms
        self.detect_timeout_ms = detect_timeout_ms
        self.rng = rng or random.Random(0)

    def update(self, name: str, latency_ms: int, duration_ms: int, reachable: bool,
               now_ms: int) -> None:
        item = self.items.get(name)
        if item is None:
            # upstream's new item starts at 0, the epoch: before any ``now``. A clock that
            # may read below 0 (a live check's trace time, whose origin can fall after a
            # producer's first sends) keeps it so; 0 for every clock from 0 up
            item = self.items[name] = FaultItem(name, latency_ms, min(0, now_ms))
        item.current_latency = latency_ms
        if duration_ms > 0 and now_ms + duration_ms > item.start_timestamp:
            item.start_timestamp = now_ms + duration_ms
        item.reachable = reachable

    def is_available(self, name: str, now_ms: int) -> bool:
        item = self.items.get(name)
        return item is None or now_ms >= item.start_timestamp

    def is_reachable(self, name: str) -> bool:
        item = self.items.get(name)
        return item is None or item.reachable

    def remove(self, name: str | None) -> None:
        if name is None:
            raise JavaNullPointerError("remove(null) on a ConcurrentHashMap")
        self.items.pop(name, None)

    def pick_one_at_least(self) -> str | None:
        """A random reachable broker (5.x shuffles; unused by 5.x selection)."""
        items = list(self.items.values())
        self.rng.shuffle(items)
        return next((it.name for it in items if it.reachable), None)

    def detect_by_one_round(self, now_ms: int, resolver: Resolver,
                            detector: Detector | None) -> list[str]:
        """``detectByOneRound``: probe every item whose check is due; returns probed addresses."""
        probed: list[str] = []
        for item in list(self.items.values()):
            if now_ms - item.check_stamp < 0:
                continue
            item.check_stamp = now_ms + self.detect_interval_ms
            addr = resolver(item.name)
            if addr is None:
                del self.items[item.name]
                continue
            if detector is None:
                continue
            probed.append(addr)
            if detector(addr, self.detect_timeout_ms) and not item.reachable:
                item.reachable = True
        return probed
