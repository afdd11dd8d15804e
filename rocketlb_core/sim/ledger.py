"""Accounting for every message as the broker keeps it: by queue offset, in ranges (issue 15).

A broker does not keep one object per message: a queue is a log, a message is its offset, and
what a consumer has read is a range of offsets. The ledger does the same, so its memory grows with
the number of queues, consumers and ownership changes, never with the number of messages:

- a send is counted (sent, stored or failed, retries, the error, the send time's histogram) and
  the stored message is the next offset of its queue (``QueueAccount.stored``);
- a delivery is a range of offsets ``[first, first + count)`` of one queue to one consumer; each
  consumer's delivered offsets per queue are an ``Offsets`` interval set, so unique consumption is
  the size of the union over a group's members and duplicates are the deliveries beyond it.

Nothing about a single message is lost: every one is still written, when the run has outputs,
to a ``LedgerSink`` as it happens (``rocketlb simulate --out`` streams them to Parquet), and a
ledger read back from those rows (``record_send``, ``record_delivery``) gives the same summary.

``OwnershipTracker`` integrates, per queue, the time with no live owner and the time with two or
more live owners, from the journal's ``ownership`` records.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from rocketlb_core.model import MessageQueue

FAILED = "FAILED"


class LedgerSink(Protocol):
    """Where each message and each delivery goes as it happens (a run's outputs)."""

    def message(self, msg_id: int, producer: str, sent_ms: int, status: str,
                queue: MessageQueue | None, offset: int, attempts: int, send_ms: int,
                error: str | None) -> None:
        """One send: stored at ``queue``/``offset`` (``None``/-1 when not stored)."""

    def delivery(self, time_ms: int, consumer: str, queue: MessageQueue, first: int,
                 count: int) -> None:
        """Offsets ``[first, first + count)`` of ``queue`` delivered to ``consumer``."""


class Offsets:
    """A set of queue offsets as sorted, disjoint, non-adjacent half-open ranges."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, lo: int, hi: int) -> None:
        """Add ``[lo, hi)``. A consumer reads on from where it stopped, so the common case
        extends the last range in place."""
        if lo >= hi:
            return
        starts, ends = self.starts, self.ends
        if not ends or lo > ends[-1]:
            starts.append(lo)
            ends.append(hi)
            return
        if lo >= starts[-1]:
            ends[-1] = max(ends[-1], hi)
            return
        i = bisect_left(ends, lo)                  # first range that ends at or after lo
        j = bisect_right(starts, hi)               # ranges i..j-1 touch [lo, hi]
        if i < j:
            lo, hi = min(lo, starts[i]), max(hi, ends[j - 1])
        starts[i:j] = [lo]
        ends[i:j] = [hi]

    def __len__(self) -> int:
        return sum(e - s for s, e in zip(self.starts, self.ends, strict=True))

    def ranges(self) -> list[tuple[int, int]]:
        return list(zip(self.starts, self.ends, strict=True))


def union_size(sets: Iterable[Offsets]) -> int:
    """How many offsets at least one of ``sets`` holds."""
    merged = Offsets()
    for ranges in sorted(r for s in sets for r in s.ranges()):
        merged.add(*ranges)
    return len(merged)


def min_cover(sets: Iterable[Offsets], n: int) -> int:
    """The fewest of ``sets`` that hold any one offset of ``[0, n)`` (``n`` > 0)."""
    edges: Counter[int] = Counter()
    for s in sets:
        for lo, hi in s.ranges():
            edges[max(lo, 0)] += 1
            edges[min(hi, n)] -= 1
    depth, least, at = 0, None, 0
    for x in sorted(edges):
        if x > at:                                  # [at, x) is covered by depth sets
            least = depth if least is None else min(least, depth)
        depth += edges[x]
        at = max(at, x)
    if at < n:
        least = depth if least is None else min(least, depth)
    return 0 if least is None else least


@dataclass(slots=True)
class QueueAccount:
    """One queue: how many messages it stores (its next offset) and who read which offsets."""

    stored: int = 0
    read: dict[str, Offsets] = field(default_factory=dict)       # consumer -> offsets
    deliveries: Counter[str] = field(default_factory=Counter)   # consumer -> offsets delivered


@dataclass
class Ledger:
    """Every message's fate, counted; per queue, stored offsets and delivered ranges."""

    sink: LedgerSink | None = None
    sent: int = 0
    stored: int = 0
    failed: int = 0
    retries: int = 0
    errors: Counter[str] = field(default_factory=Counter)      # of failed messages
    send_ms: Counter[int] = field(default_factory=Counter)     # of stored messages
    stored_by_broker: Counter[str] = field(default_factory=Counter)
    queues: dict[MessageQueue, QueueAccount] = field(default_factory=dict)

    def record_send(self, producer: str, sent_ms: int, status: str,
                    queue: MessageQueue | None = None, offset: int = -1, attempts: int = 0,
                    send_ms: int = 0, error: str | None = None) -> int:
        """Count one send (its message id is its rank among the run's sends). ``queue`` and
        ``offset``: where it was stored, which must be the queue's next offset."""
        msg_id = self.sent
        self.sent += 1
        self.retries += max(0, attempts - 1)
        if status == FAILED:
            self.failed += 1
            self.errors[error or "?"] += 1
        if queue is not None:
            acct = self.queues.get(queue)
            if acct is None:
                acct = self.queues[queue] = QueueAccount()
            if offset != acct.stored:
                raise ValueError(f"message {msg_id} stored at {queue.short()} offset {offset}; "
                                 f"the queue's next offset is {acct.stored}")
            acct.stored += 1
            self.stored += 1
            self.stored_by_broker[queue.broker_name] += 1
            self.send_ms[send_ms] += 1
        if self.sink is not None:
            self.sink.message(msg_id, producer, sent_ms, status, queue, offset, attempts,
                              send_ms, error)
        return msg_id

    def record_delivery(self, time_ms: int, consumer: str, queue: MessageQueue, first: int,
                        count: int) -> None:
        """Offsets ``[first, first + count)`` of ``queue``, all stored, read by ``consumer``."""
        acct = self.queues.get(queue)
        if count <= 0:
            return
        if acct is None or first < 0 or first + count > acct.stored:
            raise ValueError(f"delivery of {queue.short()} offsets [{first}, {first + count}) "
                             f"to {consumer}: only {acct.stored if acct else 0} are stored")
        offsets = acct.read.get(consumer)
        if offsets is None:
            offsets = acct.read[consumer] = Offsets()
        offsets.add(first, first + count)
        acct.deliveries[consumer] += count
        if self.sink is not None:
            self.sink.delivery(time_ms, consumer, queue, first, count)

    def undelivered(self) -> int:
        """Stored messages that no consumer of any group has read."""
        return sum(a.stored - union_size(a.read.values()) for a in self.queues.values())


@dataclass
class OwnershipTracker:
    """Per queue (its ``MessageQueue.short()`` label): accumulated unowned and double-owned
    milliseconds, from the journal's ``ownership`` records (``rocketlb_core.sim.summary``)."""

    since: dict[str, int] = field(default_factory=dict)
    owners: dict[str, frozenset[str]] = field(default_factory=dict)
    unowned_ms: Counter[str] = field(default_factory=Counter)
    double_ms: Counter[str] = field(default_factory=Counter)
    count_double: bool = True          # False for BROADCASTING: every member owns every queue

    def update(self, now_ms: int, tracked: set[str], current: dict[str, frozenset[str]]
               ) -> None:
        """Set the owners of every ``tracked`` queue as of ``now_ms`` (absent from ``current``:
        no owner). Queues not tracked (their broker is down) stop accumulating."""
        for mq in set(self.owners) | tracked:
            self._close(mq, now_ms)
            if mq in tracked:
                self.owners[mq] = current.get(mq, frozenset())
                self.since[mq] = now_ms
            else:
                self.owners.pop(mq, None)
                self.since.pop(mq, None)

    def _close(self, mq: str, now_ms: int) -> None:
        start = self.since.get(mq)
        if start is None:
            return
        n = len(self.owners.get(mq, frozenset()))
        if n == 0:
            self.unowned_ms[mq] += now_ms - start
        elif n > 1 and self.count_double:
            self.double_ms[mq] += now_ms - start

    def finish(self, now_ms: int) -> None:
        for mq in list(self.owners):
            self._close(mq, now_ms)
            self.since[mq] = now_ms
