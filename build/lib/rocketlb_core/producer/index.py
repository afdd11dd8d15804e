"""The round-robin counter ``ThreadLocalIndex``, with Java's 32-bit semantics (spec 2.1, 2.4a).

Upstream keeps one counter per ``TopicPublishInfo`` whose value lives per sending thread, starting
at a random value. Here the start is explicit: pass ``stored`` (the value upstream keeps in the
thread-local before the first use), or a seeded ``random.Random`` to draw it, never hidden state.

* 4.9.x: first use ``v = jabs(nextInt())``; each call ``v = wrap32(v + 1)``, return ``mask31(v)``.
* 5.x: first use ``v = nextInt()`` (may be negative); same step; ``reset()`` stores a uniform value
  in ``[0, 2^31 - 2]``.
* 4.7.1 (``getAndIncrement``, returning the new value): ``v = jabs(wrap32(v + 1))`` clamped at 0,
  so after ``2^31 - 1`` it returns and stores 0.

>>> idx = ThreadLocalIndex(ProducerLine.V4_9_8, stored=2147483646)
>>> [idx.next() for _ in range(3)], idx.stored
([2147483647, 0, 1], -2147483647)
"""

from __future__ import annotations

import random

from rocketlb_core.javamath import INT_MAX, jabs, wrap32
from rocketlb_core.producer.line import ProducerLine


class ThreadLocalIndex:
    """One sending thread's position in a round-robin counter (see the module docstring)."""

    __slots__ = ("_clamp", "_rng", "line", "stored")

    def __init__(self, line: ProducerLine | str, stored: int | None = None,
                 rng: random.Random | None = None) -> None:
        self.line = ProducerLine.parse(line)
        self.stored = None if stored is None else wrap32(stored)
        self._rng = rng
        self._clamp = self.line.rules.counter_clamps

    def _first(self) -> int:
        if self._rng is None:
            raise ValueError("the counter has no start value: give stored= or a seeded rng=")
        drawn = wrap32(self._rng.getrandbits(32))        # Random.nextInt()
        if self.line.rules.counter_draws_raw:
            return drawn
        v = jabs(drawn)
        return 0 if v < 0 else v

    def next(self) -> int:
        """``incrementAndGet()`` (``getAndIncrement()`` on 4.7.1): step, store, return."""
        v = self.stored
        if v is None:
            v = self._first()
        if self._clamp:
            v = jabs(wrap32(v + 1))
            if v < 0:
                v = 0
            self.stored = v
            return v
        v = v + 1 if v != INT_MAX else -(2**31)
        self.stored = v
        return v & 0x7FFFFFFF

    def reset(self, value: int | None = None) -> int:
        """5.x ``reset()``: store ``value`` (the draw of ``nextInt(Integer.MAX_VALUE)``), or draw it
        from the seeded rng. Returns the stored value."""
        if not self.line.rules.counter_resets_on_retry:
            raise ValueError(f"ThreadLocalIndex.reset() does not exist on {self.line.value}")
        if value is None:
            if self._rng is None:
                raise ValueError("reset() needs a value or a seeded rng")
            value = self._rng.randrange(INT_MAX)
        if not 0 <= value < INT_MAX:
            raise ValueError(f"reset value {value} outside [0, 2^31 - 2]")
        self.stored = value
        return value
