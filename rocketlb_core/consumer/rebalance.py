"""``RebalanceImpl``'s bookkeeping as pure functions (spec 4.1, 4.3, 4.4).

``update_process_queue_table`` is one ``updateProcessQueueTableInRebalance`` step: from a
consumer's process-queue table and its newly computed share, what is dropped, what is created and
where each new queue starts reading. The world is passed in as callables (the broker lock, the
offset lookup, whether a drop is allowed), so the simulator drives it and tests stub nothing.

>>> from rocketlb_core.model import MessageQueue
>>> a, b, c = (MessageQueue("T", "broker-a", i) for i in range(3))
>>> table = {a: ProcessQueue(last_pull_ms=0), b: ProcessQueue()}
>>> step = update_process_queue_table(table, "T", {b, c}, now_ms=1000,
...                                   pull_from_where=lambda mq: 42)
>>> sorted(q.queue_id for q in step.dropped), step.changed
([0], True)
>>> [(mq.short(), offset) for mq, offset in step.created]
[('broker-a/2', 42)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from rocketlb_core.model import MessageQueue
from rocketlb_core.producer.line import ProducerLine

PULL_MAX_IDLE_MS = 120_000          # ProcessQueue.PULL_MAX_IDLE_TIME
LOCK_MAX_LIVE_MS = 30_000           # ProcessQueue.REBALANCE_LOCK_MAX_LIVE_TIME (client side)
BROKER_LOCK_MAX_LIVE_MS = 60_000    # the broker's rocketmq.broker.rebalance.lockMaxLiveTime
RETRY_PREFIX = "%RETRY%"


class ConsumeFromWhere(StrEnum):
    LAST_OFFSET = "CONSUME_FROM_LAST_OFFSET"
    FIRST_OFFSET = "CONSUME_FROM_FIRST_OFFSET"
    TIMESTAMP = "CONSUME_FROM_TIMESTAMP"

    @classmethod
    def parse(cls, value: str) -> ConsumeFromWhere:
        """Deprecated spellings behave like ``CONSUME_FROM_LAST_OFFSET`` (spec 4.3)."""
        try:
            return cls(value)
        except ValueError:
            if value in ("CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
                         "CONSUME_FROM_MIN_OFFSET", "CONSUME_FROM_MAX_OFFSET"):
                return cls.LAST_OFFSET
            raise


class OffsetLookupError(Exception):
    """5.x ``computePullFromWhereWithException`` throws instead of returning -1."""


def compute_pull_from_where(consume_from_where: ConsumeFromWhere | str, read_offset: int,
                            topic: str, *, max_offset: int = 0, search_offset: int = 0,
                            line: ProducerLine | str = ProducerLine.V4_9_8,
                            lite_pull: bool = False) -> int:
    """Where a newly assigned queue starts (spec 4.3). ``read_offset`` is the broker's answer:
    >= 0 the committed offset, -1 "this group never committed here", < -1 any other failure.
    ``max_offset`` / ``search_offset`` are what the broker would answer for the queue's max
    offset and for the consume timestamp. 4.9.x returns -1 (skip this round) on failures; 5.x
    raises ``OffsetLookupError``; lite-pull consumers return -1 on both lines."""
    cfw = ConsumeFromWhere.parse(str(consume_from_where))
    raises = ProducerLine.parse(line).rules.offset_lookup_raises and not lite_pull
    retry = topic.startswith(RETRY_PREFIX)
    if read_offset >= 0:
        return read_offset
    if read_offset == -1:
        if cfw is ConsumeFromWhere.LAST_OFFSET:
            return 0 if retry else max_offset
        if cfw is ConsumeFromWhere.FIRST_OFFSET:
            return 0
        return max_offset if retry else search_offset
    if raises:
        raise OffsetLookupError(f"offset lookup failed ({read_offset}) for {topic}")
    return -1


def pull_threshold_for_queue(threshold_for_topic: int, current: int, queue_count: int) -> int:
    """``messageQueueChanged``: a topic-wide threshold split over the process queues."""
    if threshold_for_topic == -1 or queue_count <= 0:
        return current
    return max(1, threshold_for_topic // queue_count)


@dataclass(frozen=True, slots=True)
class ProcessQueue:
    """The part of a ``ProcessQueue`` rebalancing looks at."""

    dropped: bool = False
    last_pull_ms: int = 0
    locked: bool = False
    last_lock_ms: int = 0
    has_messages: bool = False

    def pull_expired(self, now_ms: int) -> bool:
        return now_ms - self.last_pull_ms > PULL_MAX_IDLE_MS

    def lock_expired(self, now_ms: int) -> bool:
        return now_ms - self.last_lock_ms > LOCK_MAX_LIVE_MS


@dataclass(frozen=True)
class RebalanceStep:
    """The outcome of one ``updateProcessQueueTableInRebalance`` for one topic."""

    table: dict[MessageQueue, ProcessQueue]
    dropped: tuple[MessageQueue, ...]               # removed from the table
    refused: tuple[MessageQueue, ...]               # flagged dropped, removal refused (retried)
    created: tuple[tuple[MessageQueue, int], ...]   # (queue, offset to start pulling from)
    skipped: tuple[tuple[MessageQueue, str], ...]   # new queues not started this round, and why
    changed: bool

    @property
    def all_locked(self) -> bool:
        return not any(reason == "lock refused" for _, reason in self.skipped)


def _order(queues: Iterable[MessageQueue]) -> list[MessageQueue]:
    return sorted(queues)


def update_process_queue_table(
    table: Mapping[MessageQueue, ProcessQueue], topic: str, target: Iterable[MessageQueue],
    now_ms: int, *, need_lock: bool = False, consume_passively: bool = True,
    pull_from_where: Callable[[MessageQueue], int] = lambda mq: 0,
    lock: Callable[[MessageQueue], bool] = lambda mq: True,
    remove_unnecessary: Callable[[MessageQueue, ProcessQueue], bool] = lambda mq, pq: True,
) -> RebalanceStep:
    """One rebalance step for ``topic`` (spec 4.1). Queues are visited in queue order so the
    outcome is deterministic (upstream iterates hash maps; the set of effects is the same).

    * drop: a queue of ``topic`` not in ``target``, or whose pulling stalled for 120 s (push
      consumers only), is flagged dropped; ``remove_unnecessary`` may refuse the removal
      (orderly consumers that cannot take the consume lock), leaving it flagged for next time;
    * create: a queue of ``target`` not in the table needs the broker lock first if
      ``need_lock``; then ``pull_from_where`` gives its start offset (a negative offset, or an
      ``OffsetLookupError``, skips it this round).
    """
    out = dict(table)
    wanted = set(target)
    dropped, refused = [], []
    changed = False
    for mq in _order(q for q in table if q.topic == topic):
        pq = table[mq]
        if mq not in wanted or (consume_passively and pq.pull_expired(now_ms)):
            flagged = replace(pq, dropped=True)
            if remove_unnecessary(mq, flagged):
                del out[mq]
                dropped.append(mq)
                changed = True
            else:
                out[mq] = flagged
                refused.append(mq)
    created, skipped = [], []
    for mq in _order(wanted - out.keys()):
        if need_lock and not lock(mq):
            skipped.append((mq, "lock refused"))
            continue
        try:
            offset = pull_from_where(mq)
        except OffsetLookupError:
            offset = -1
        if offset < 0:
            skipped.append((mq, "no start offset"))
            continue
        out[mq] = ProcessQueue(last_pull_ms=now_ms, locked=need_lock, last_lock_ms=now_ms)
        created.append((mq, offset))
        changed = True
    return RebalanceStep(out, tuple(dropped), tuple(refused), tuple(created), tuple(skipped),
                         changed)
