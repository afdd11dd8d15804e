"""The four simple upstream strategies: AVG, AVG_BY_CIRCLE, CONFIG, MACHINE_ROOM (spec 3.2-3.5).

>>> from rocketlb_core.model import MessageQueue
>>> mqs = [MessageQueue("T", "b", i) for i in range(8)]
>>> cids = ["c1", "c2", "c3"]
>>> def ids(strategy):
...     return [[q.queue_id for q in strategy.allocate("g", c, mqs, cids)]
...             for c in cids]
>>> ids(avg())
[[0, 1, 2], [3, 4, 5], [6, 7]]
>>> ids(avg_by_circle())
[[0, 3, 6], [1, 4, 7], [2, 5]]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rocketlb_core.consumer.base import Assignment, _CheckedShare, unique_ids
from rocketlb_core.javamath import JavaNullPointerError, java_split
from rocketlb_core.model import MessageQueue


def _avg_block(i: int, n: int, c: int) -> tuple[int, int]:
    """(start, count) of consumer ``i``'s contiguous block."""
    r = n % c
    if n <= c:
        size = 1
    elif r > 0 and i < r:
        size = n // c + 1
    else:
        size = n // c
    start = i * size if (r > 0 and i < r) else i * size + r
    return start, min(size, n - start)


@dataclass(frozen=True, slots=True)
class _Avg(_CheckedShare):
    """``AllocateMessageQueueAveragely`` ("AVG", the default): contiguous blocks, the first
    ``n mod c`` consumers one queue more."""

    @property
    def name(self) -> str:
        return "AVG"

    def share(self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue],
              cid_all: Sequence[str]) -> list[MessageQueue]:
        start, count = _avg_block(cid_all.index(current_cid), len(mq_all), len(cid_all))
        return list(mq_all[start:start + count]) if count > 0 else []

    def assign_all(self, consumer_group: str, mq_all: Sequence[MessageQueue],
                   cid_all: Sequence[str], previous: object = None) -> Assignment:
        n, c = len(mq_all), len(cid_all)
        out: Assignment = {}
        for i, cid in enumerate(cid_all):          # first occurrence decides, as indexOf does
            if cid not in out:
                start, count = _avg_block(i, n, c)
                out[cid] = list(mq_all[start:start + count]) if count > 0 else []
        return out


@dataclass(frozen=True, slots=True)
class _AvgByCircle(_CheckedShare):
    """``AllocateMessageQueueAveragelyByCircle``: deal queues round robin, ``i, i+c, i+2c, ...``."""

    @property
    def name(self) -> str:
        return "AVG_BY_CIRCLE"

    def share(self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue],
              cid_all: Sequence[str]) -> list[MessageQueue]:
        return list(mq_all[cid_all.index(current_cid)::len(cid_all)])

    def assign_all(self, consumer_group: str, mq_all: Sequence[MessageQueue],
                   cid_all: Sequence[str], previous: object = None) -> Assignment:
        c = len(cid_all)
        out: Assignment = {}
        for i, cid in enumerate(cid_all):
            if cid not in out:
                out[cid] = list(mq_all[i::c])
        return out


@dataclass(frozen=True, slots=True)
class _Config:
    """``AllocateMessageQueueByConfig``: the configured list, to every caller, unchecked."""

    message_queues: tuple[MessageQueue, ...] | None

    @property
    def name(self) -> str:
        return "CONFIG"

    def allocate(self, consumer_group: str, current_cid: str | None,
                 mq_all: Sequence[MessageQueue] | None,
                 cid_all: Sequence[str] | None) -> list[MessageQueue] | None:
        return None if self.message_queues is None else list(self.message_queues)


@dataclass(frozen=True, slots=True)
class _MachineRoom(_CheckedShare):
    """``AllocateMessageQueueByMachineRoom``: only queues of brokers named ``room@broker`` whose
    room is in ``consumeridcs``; blocks of ``len // c``, leftovers dealt from the tail."""

    consumeridcs: frozenset[str] | None

    @property
    def name(self) -> str:
        return "MACHINE_ROOM"

    def _eligible(self, mq_all: Sequence[MessageQueue]) -> list[MessageQueue]:
        out = []
        for q in mq_all:
            parts = java_split(q.broker_name, "@")
            if len(parts) == 2:
                if self.consumeridcs is None:
                    raise JavaNullPointerError("consumeridcs is null")
                if parts[0] in self.consumeridcs:
                    out.append(q)
        return out

    def share(self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue],
              cid_all: Sequence[str]) -> list[MessageQueue]:
        return self._block(self._eligible(mq_all), cid_all.index(current_cid), len(cid_all))

    @staticmethod
    def _block(pre: list[MessageQueue], i: int, c: int) -> list[MessageQueue]:
        per, rem = divmod(len(pre), c)
        out = pre[i * per:i * per + per]
        if i < rem:
            out.append(pre[i + per * c])
        return out

    def assign_all(self, consumer_group: str, mq_all: Sequence[MessageQueue],
                   cid_all: Sequence[str], previous: object = None) -> Assignment:
        pre = self._eligible(mq_all)
        return {cid: self._block(pre, cid_all.index(cid), len(cid_all))
                for cid in unique_ids(cid_all)}


def avg() -> _Avg:
    """AVG (``AllocateMessageQueueAveragely``), RocketMQ's default: contiguous blocks of the
    sorted queues, in the order of the sorted ids, the first ``n mod c`` consumers one queue
    more."""
    return _Avg()


def avg_by_circle() -> _AvgByCircle:
    """AVG_BY_CIRCLE (``AllocateMessageQueueAveragelyByCircle``): the sorted queues dealt round
    robin, the ``i``-th consumer taking queues ``i, i+c, i+2c, ...``."""
    return _AvgByCircle()


def config(message_queues: Iterable[MessageQueue] | None) -> _Config:
    """CONFIG (``AllocateMessageQueueByConfig``): ``message_queues``, the configured list, to
    every consumer that asks, unchecked."""
    return _Config(None if message_queues is None else tuple(message_queues))


def machine_room(consumeridcs: Iterable[str] | None) -> _MachineRoom:
    """MACHINE_ROOM (``AllocateMessageQueueByMachineRoom``): only the queues of brokers named
    ``room@broker`` whose room is in ``consumeridcs``, in blocks of ``len // c``, the leftovers
    dealt from the tail."""
    return _MachineRoom(None if consumeridcs is None else frozenset(consumeridcs))
