"""Accounting for every message, and for who owned each queue when (issue: full accounting).

``Ledger`` records each message once: sent (by whom, when), stored (broker, queue, offset) or
failed (the error the producer saw), and every delivery (to which consumer, when). The summary's
counts all derive from it, so "nothing stored is lost" is checkable message by message.

``OwnershipTracker`` integrates, per queue, the time with no live owner and the time with two or
more live owners, from the journal's ``ownership`` records.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rocketlb_core.model import MessageQueue


@dataclass(slots=True)
class MessageRecord:
    msg_id: int
    producer: str
    sent_ms: int
    status: str = "PENDING"          # SEND_OK ..., or FAILED
    queue: MessageQueue | None = None
    offset: int = -1
    stored_ms: int = -1
    error: str | None = None
    attempts: int = 0
    send_ms: int = 0                 # how long the send took (retries included)


@dataclass
class Ledger:
    messages: list[MessageRecord] = field(default_factory=list)
    deliveries: list[tuple[int, int, str]] = field(default_factory=list)   # (time, msg, client)

    def sent(self, producer: str, now_ms: int) -> MessageRecord:
        rec = MessageRecord(len(self.messages), producer, now_ms)
        self.messages.append(rec)
        return rec

    def delivered(self, msg_id: int, client: str, now_ms: int) -> None:
        self.deliveries.append((now_ms, msg_id, client))

    def delivery_counts(self) -> Counter[int]:
        return Counter(msg for _, msg, _ in self.deliveries)


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
