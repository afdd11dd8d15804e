"""``MQFaultStrategy``: which queue a send goes to, with or without latency fault tolerance
(spec 2.3, 2.4, 2.4a, 2.5).

One object per producer: it owns the fault table (shared by every topic the producer sends to)
and the ``sendLatencyFaultEnable`` switch. ``select`` and ``update_fault_item`` take ``now_ms``.

>>> from rocketlb_core.model import MessageQueue, QueueData
>>> qs = [MessageQueue("T", b, i) for b in ("a", "b") for i in range(2)]
>>> tp = TopicPublishInfo(qs, [QueueData("a", 2, 2), QueueData("b", 2, 2)],
...                       ThreadLocalIndex("4.9.8", stored=0))
>>> s = MQFaultStrategy("4.9.8", send_latency_fault_enable=True)
>>> s.update_fault_item("a", 30000, isolation=True, now_ms=0)   # broker a out for 600 s
>>> [s.select(tp, None, now_ms=1000).short() for _ in range(4)]
['b/0', 'b/0', 'b/1', 'b/0']

Every scan that starts inside broker a's run ends on ``b/0``, so it takes twice ``b/1``'s share
(spec 2.4, "traffic piles onto the first available queue after the run").
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from rocketlb_core.javamath import INT_MAX, INT_MIN, jabs, jmod
from rocketlb_core.model import MessageQueue
from rocketlb_core.producer.fault import FaultTable4, FaultTable5, JavaNullPointerError
from rocketlb_core.producer.index import ThreadLocalIndex
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.producer.publish_info import TopicPublishInfo
from rocketlb_core.producer.tables import (
    compute_not_available_duration,
    duration_function,
)


class MQFaultStrategy:
    """Queue selection and fault reports for one producer on one RocketMQ line."""

    def __init__(self, line: ProducerLine | str, *, send_latency_fault_enable: bool = False,
                 start_detector_enable: bool = False,
                 latency_max: Sequence[int] | None = None,
                 not_available_duration: Sequence[int] | None = None,
                 worst_index_start: int = 0, rng: random.Random | None = None) -> None:
        self.line = ProducerLine.parse(line)
        rules = self.line.rules
        self._v5 = rules.selection == "5.x"
        self._wants_last = rules.fault_scan_wants_last_broker
        self.send_latency_fault_enable = send_latency_fault_enable
        self.start_detector_enable = start_detector_enable
        self.latency_max = tuple(latency_max or rules.latency_max)
        self.not_available_duration = tuple(not_available_duration
                                            or rules.not_available_duration)
        self.isolation_latency = rules.isolation_latency_ms
        self._duration = duration_function(self.latency_max, self.not_available_duration)
        rng = rng or random.Random(0)
        self.table: FaultTable4 | FaultTable5
        if self._v5:
            self.table = FaultTable5(rng=rng)
        else:
            self.table = FaultTable4(
                self.line, which_item_worst=ThreadLocalIndex(self.line, stored=worst_index_start),
                rng=rng)

    # ------------------------------------------------------------------ reports
    def compute_not_available_duration(self, latency_ms: int) -> int:
        return compute_not_available_duration(latency_ms, self.latency_max,
                                              self.not_available_duration)

    def update_fault_item(self, broker: str, latency_ms: int, isolation: bool, now_ms: int,
                          reachable: bool = True) -> None:
        """Record a send's outcome (no-op while the fault strategy is off). ``reachable`` is
        5.x only. The table stores the measured latency, not the isolation latency."""
        if not self.send_latency_fault_enable:
            return
        d = self._duration(self.isolation_latency if isolation else latency_ms)
        table = self.table
        if isinstance(table, FaultTable5):
            table.update(broker, latency_ms, d, reachable, now_ms)
        else:
            table.update(broker, latency_ms, d, now_ms)

    def is_available(self, broker: str, now_ms: int) -> bool:
        return self.table.is_available(broker, now_ms)

    def is_reachable(self, broker: str) -> bool:
        return not isinstance(self.table, FaultTable5) or self.table.is_reachable(broker)

    # ------------------------------------------------------------------ selection
    def select(self, tp: TopicPublishInfo, last: str | None, now_ms: int,
               reset_index: bool = False, reset_value: int | None = None) -> MessageQueue:
        """``selectOneMessageQueue``. ``reset_index``/``reset_value``: 5.x only (a sync retry
        with the fault strategy on resets the counter to ``reset_value``, or a seeded draw)."""
        if self._v5:
            return self._select_5(tp, last, now_ms, reset_index, reset_value)
        if not self.send_latency_fault_enable:
            return tp.pick_avoiding(last)
        table = self.table
        assert isinstance(table, FaultTable4)
        queues, n = tp.queues, len(tp.queues)
        items = table.items
        want = last if self._wants_last else None   # 4.7.1 wants queues OF the last broker
        try:
            k = tp.index.next()                  # one shared step; a local walk from here
            for _ in range(n):
                if k >= 0:
                    q = queues[k % n]
                else:                            # jabs(MIN) stays negative: clamp to 0
                    p = jmod(jabs(k), n)
                    q = queues[0 if p < 0 else p]
                k = k + 1 if k != INT_MAX else INT_MIN
                item = items.get(q.broker_name)
                if (item is None or now_ms - item.start_timestamp >= 0) and (
                        want is None or q.broker_name == want):
                    return q
            worst = table.pick_one_at_least(now_ms)
            w = tp.write_queue_count(worst)
            if w > 0:
                pos = tp.plain_position()        # second step
                base = queues[pos]
                if worst is None:
                    return base
                mq = MessageQueue(base.topic, worst, tp.index.next() % w)   # third step
                if self.line.rules.rewrites_cached_queue:
                    queues[pos] = mq             # the cached object is overwritten (issue 7779)
                return mq
            table.remove(worst)
        except JavaNullPointerError:
            pass                                 # upstream logs and falls through
        return tp.plain_pick()

    def _select_5(self, tp: TopicPublishInfo, last: str | None, now_ms: int,
                  reset_index: bool, reset_value: int | None) -> MessageQueue:
        # The filtered picks of spec 2.5, specialised: each probe is one counter step, and a
        # pass that finds nothing has consumed n steps (upstream evaluates pure filters only).
        queues, n, index = tp.queues, len(tp.queues), tp.index
        if self.send_latency_fault_enable:
            table = self.table
            assert isinstance(table, FaultTable5)
            if reset_index:
                index.reset(reset_value)
            items = table.items
            for _ in range(n):                   # available and not last
                q = queues[index.next() % n]
                item = items.get(q.broker_name)
                if (item is None or now_ms >= item.start_timestamp) and q.broker_name != last:
                    return q
            for _ in range(n):                   # reachable and not last
                q = queues[index.next() % n]
                item = items.get(q.broker_name)
                if (item is None or item.reachable) and q.broker_name != last:
                    return q
            return tp.plain_pick()
        for _ in range(n):                       # not last
            q = queues[index.next() % n]
            if q.broker_name != last:
                return q
        return tp.plain_pick()
