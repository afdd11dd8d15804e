"""The 5.x broker-side assignment for POP consumption: ``QueryAssignmentProcessor.allocate4Pop``
(spec 6). Queue id -1 means "any queue of that broker"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rocketlb_core.consumer.base import AllocateStrategy, AllocationArgumentError
from rocketlb_core.javamath import JavaNullPointerError
from rocketlb_core.model import MessageQueue


def allocate4pop(strategy: AllocateStrategy, consumer_group: str, current_cid: str | None,
                 mq_all: Sequence[MessageQueue] | None, cid_all: Sequence[str] | None,
                 pop_share_queue_num: int) -> list[MessageQueue]:
    """One consumer's POP assignment. ``pop_share_queue_num <= 0`` (the default -1) or at least
    ``len(cid_all) - 1`` lets everybody pop everything; otherwise each consumer takes its own share
    plus the shares of the next ``pop_share_queue_num`` consumers."""
    if pop_share_queue_num > 0 and cid_all is None:
        raise JavaNullPointerError("cidAll is null")
    if pop_share_queue_num <= 0 or pop_share_queue_num >= len(cid_all or ()) - 1:
        if mq_all is None:
            raise JavaNullPointerError("mqAll is null")
        return [MessageQueue(q.topic, q.broker_name, -1) for q in mq_all]
    assert cid_all is not None
    if mq_all is None:
        raise JavaNullPointerError("mqAll is null")
    if len(cid_all) <= len(mq_all):
        out = list(strategy.allocate(consumer_group, current_cid, mq_all, cid_all) or [])
        if current_cid in cid_all:
            i = cid_all.index(current_cid)
            for _ in range(pop_share_queue_num):
                i = (i + 1) % len(cid_all)
                out.extend(strategy.allocate(consumer_group, cid_all[i], mq_all, cid_all) or [])
        return out
    if current_cid is None or not current_cid.strip():
        raise AllocationArgumentError("currentCID is empty")
    if not mq_all:
        raise AllocationArgumentError("mqAll is null or mqAll empty")
    if current_cid not in cid_all:
        return []
    return [mq_all[cid_all.index(current_cid) % len(mq_all)]]


@dataclass(frozen=True)
class Pop:
    """``allocate4Pop`` bound to an inner strategy and ``popShareQueueNum`` (for registries)."""

    inner: AllocateStrategy
    pop_share_queue_num: int = -1

    @property
    def name(self) -> str:
        return f"POP-{self.inner.name}"

    def allocate(self, consumer_group: str, current_cid: str | None,
                 mq_all: Sequence[MessageQueue] | None,
                 cid_all: Sequence[str] | None) -> list[MessageQueue]:
        return allocate4pop(self.inner, consumer_group, current_cid, mq_all, cid_all,
                            self.pop_share_queue_num)
