"""``TopicPublishInfo``: a producer's queue list for one topic and its selection primitives
(spec 1.3, 2.2, 2.4a).

The list is mutable on purpose: on 4.7.1 and 4.9.7 the fault strategy's least-bad branch
overwrites one cached queue of it (issue 7779), and later picks see the rewritten entry until the
next route change replaces the whole ``TopicPublishInfo``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from rocketlb_core.javamath import jabs, jmod, wrap32
from rocketlb_core.model import MessageQueue, QueueData, TopicRoute, publish_queues
from rocketlb_core.producer.index import ThreadLocalIndex
from rocketlb_core.producer.line import ProducerLine


class TopicPublishInfo:
    """The ordered queue list, the route's queue datas (sorted by broker name) and the counter."""

    __slots__ = ("index", "line", "queue_datas", "queues")

    def __init__(self, queues: Sequence[MessageQueue], queue_datas: Sequence[QueueData],
                 index: ThreadLocalIndex) -> None:
        self.queues: list[MessageQueue] = list(queues)
        self.queue_datas: tuple[QueueData, ...] = tuple(queue_datas)
        self.index = index
        self.line = index.line

    @classmethod
    def from_route(cls, topic: str, route: TopicRoute, line: ProducerLine | str, *,
                   index_start: int | None = None,
                   rng: random.Random | None = None) -> TopicPublishInfo:
        """``topicRouteData2TopicPublishInfo`` with a new counter (explicit start or seeded)."""
        index = ThreadLocalIndex(line, stored=index_start, rng=rng)
        return cls(publish_queues(topic, route), route.sorted_queue_datas(), index)

    def ok(self) -> bool:
        return bool(self.queues)

    # -------------------------------------------------------------- primitives (spec 2.2)
    def plain_position(self) -> int:
        """The list position of a plain pick: one counter step. Upstream writes
        ``jmod(jabs(i), n)`` clamped at 0; ``next()`` never returns a negative value on any
        line, so that is exactly ``i % n``."""
        return self.index.next() % len(self.queues)

    def plain_pick(self) -> MessageQueue:
        """``selectOneMessageQueue()``: one counter step, ``counter mod n``."""
        return self.queues[self.plain_position()]

    def pick_avoiding(self, last: str | None) -> MessageQueue:
        """``selectOneMessageQueue(lastBrokerName)``: the fault-off retry pick."""
        if last is None:
            return self.plain_pick()
        queues, n = self.queues, len(self.queues)
        if self.line.rules.retry_walks_locally:
            # 4.7.1: one counter step per call, then a local walk (issue 2223 changed this).
            k = self.index.next()
            for _ in range(n):
                p = jmod(jabs(k), n)
                k = wrap32(k + 1)
                q = queues[0 if p < 0 else p]
                if q.broker_name != last:
                    return q
            return self.plain_pick()
        for _ in range(n):
            q = queues[self.index.next() % n]
            if q.broker_name != last:
                return q
        return self.plain_pick()

    def write_queue_count(self, broker_name: str | None) -> int:
        """``getQueueIdByBroker``: the broker's write-queue count in the route, or -1.

        4.9.8 only counts writable entries; 4.9.7 and 4.7.1 count any entry (spec 2.2).
        """
        if broker_name is None:
            return -1
        writable_only = self.line.rules.write_count_needs_writable
        for qd in self.queue_datas:
            if qd.broker_name == broker_name and (not writable_only or qd.writable):
                return qd.write_queue_nums
        return -1
