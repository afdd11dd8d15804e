"""The RocketMQ lines the producer model reproduces, and what differs between them.

Spec sections 2.4, 2.4a and 11. Four lines are modelled, each checked against vectors produced by
running that tag's Java classes:

* ``4.7.1``: the code the classic articles read (every tag up to 4.7.1): clamping counter,
  ``lastBrokerName`` consulted (the wrong way round) in the fault scan, shuffle in
  ``pickOneAtLeast``, cached queues rewritten in the least-bad branch;
* ``4.9.7``: the 4.9 line before the fix of upstream issue 7779 (cached queue rewritten; read-only
  brokers counted by ``getQueueIdByBroker``);
* ``4.9.8``: the last 4.x release, the 4.x reference;
* ``5.3.3``: today's line: available/reachable filters, 10 s isolation, optional detector.
"""

from __future__ import annotations

from enum import StrEnum


class ProducerLine(StrEnum):
    """A RocketMQ release line of the producer's selection code."""

    V4_7_1 = "4.7.1"
    V4_9_7 = "4.9.7"
    V4_9_8 = "4.9.8"
    V5_3_3 = "5.3.3"

    @property
    def is_v5(self) -> bool:
        return self is ProducerLine.V5_3_3

    @property
    def is_pre48(self) -> bool:
        """The pre-4.8 line (spec 2.4a)."""
        return self is ProducerLine.V4_7_1

    @property
    def rewrites_cached_queue(self) -> bool:
        """The least-bad branch overwrites a queue object of the cached list (issues 7779, 3548)."""
        return self in (ProducerLine.V4_7_1, ProducerLine.V4_9_7)

    @property
    def write_count_needs_writable(self) -> bool:
        """``getQueueIdByBroker`` only counts writable route entries (4.9.8, issue 7713)."""
        return self is ProducerLine.V4_9_8

    @classmethod
    def parse(cls, value: str | ProducerLine) -> ProducerLine:
        """Accept ``"4.9.8"``, ``"rocketmq-all-4.9.8"``, ``"5.x"``, ``"<=4.7.1"``, ...

        >>> ProducerLine.parse("rocketmq-all-5.3.3"), ProducerLine.parse("<=4.7.1")
        (<ProducerLine.V5_3_3: '5.3.3'>, <ProducerLine.V4_7_1: '4.7.1'>)
        """
        if isinstance(value, ProducerLine):
            return value
        text = value.strip().removeprefix("rocketmq-all-").removeprefix("<=")
        text = {"4.9.x": "4.9.8", "5.x": "5.3.3", "4.9": "4.9.8", "5": "5.3.3"}.get(text, text)
        try:
            return cls(text)
        except ValueError:
            known = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown producer line {value!r} (known: {known})") from None
