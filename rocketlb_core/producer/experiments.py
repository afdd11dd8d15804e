"""Seed 002's ``MQFaultStrategyTest`` experiment, on any line (book chapter 3), and
``producer_run``: one producer thread's sends under a broker model (chapters 2, 3 and 9).

The article builds a ``TopicPublishInfo`` with broker1 and broker2 (4 queues each), turns
``sendLatencyFaultEnable`` on, and runs ten rounds; in each round a send goes out and, if it
fails, is retried once with ``lastBrokerName`` set to the broker just used. Every report uses
a fixed "latency" per broker: 30000 ms for broker1, 50000 ms for broker2 (both far above the
table's last bound, 15000 ms). Output 1 is the all-success run (one send per round), output 2
the all-failure run (two attempts per round). The article read 4.7.1; run it on 4.9.8 and 5.3.3
to see what changed.

>>> [r.brokers for r in seed002_experiment("4.7.1", fail=True)][:3]
[('broker1', 'broker1'), ('broker2', 'broker1'), ('broker1', 'broker1')]
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from rocketlb_core.model import MessageQueue, QueueData
from rocketlb_core.producer.index import ThreadLocalIndex
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.producer.publish_info import TopicPublishInfo
from rocketlb_core.producer.send import BrokerModel, SendConfig, SendResult, send
from rocketlb_core.producer.strategy import MQFaultStrategy

LATENCY = {"broker1": 30000, "broker2": 50000}


@dataclass(frozen=True)
class Round:
    """One round of the experiment: the broker of each attempt, and the fault table after it."""

    number: int
    brokers: tuple[str, ...]
    available_after: dict[str, bool]


def seed002_experiment(line: str, fail: bool, rounds: int = 10, now_ms: int = 0,
                       index_start: int = -1) -> list[Round]:
    """Run the article's loop. A negative ``index_start`` makes the first pick position 0
    (broker1), as in the article's printed run; upstream starts the counter at random."""
    pl = ProducerLine.parse(line)
    queues = [MessageQueue("topic-a", b, i) for b in ("broker1", "broker2") for i in range(4)]
    if index_start < 0:   # the first pick at position 0: 4.7.1 clamps the step after 2^31-1
        index_start = 2**31 - 1 if pl.rules.counter_clamps else -1
    tp = TopicPublishInfo(queues, [QueueData(b, 4, 4) for b in ("broker1", "broker2")],
                          ThreadLocalIndex(pl, stored=index_start, rng=random.Random(0)))
    strategy = MQFaultStrategy(pl, send_latency_fault_enable=True)
    out = []
    for n in range(rounds):
        last: str | None = None
        used = []
        for attempt in range(2 if fail else 1):
            reset = pl.rules.counter_resets_on_retry and attempt > 0
            mq = strategy.select(tp, last, now_ms, reset_index=reset)
            last = mq.broker_name
            used.append(last)
            strategy.update_fault_item(last, LATENCY.get(last, 0), isolation=fail,
                                       now_ms=now_ms)
        out.append(Round(n, tuple(used), {b: strategy.is_available(b, now_ms)
                                          for b in ("broker1", "broker2")}))
    return out


def producer_run(world: BrokerModel, line: str = "4.9.8", fault_tolerance: bool = False, *,
                 sends: int | None = None, until_ms: int | None = None, every_ms: int = 0,
                 brokers: Sequence[str] = ("broker-a", "broker-b"), queues: int = 4,
                 seed: int = 0, config: SendConfig | None = None) -> list[SendResult]:
    """One producer thread sending synchronously to ``brokers`` (``queues`` each) under
    ``world`` (a ``producer.models`` model): a send starts ``every_ms`` after the previous one
    started, or 1 ms after it ended if it took longer; ``sends`` messages, or every send that
    starts before ``until_ms``. The counter starts at 0; ``seed`` drives 5.x's counter reset on
    retries; ``config`` defaults to upstream's ``SendConfig``. The book's send-outcome and
    over-time figures (chapters 2, 3, 9) are built on it.

    >>> from rocketlb_core.producer.models import down
    >>> run = producer_run(down("broker-a"), sends=4)
    >>> [(r.queue.short(), len(r.attempts)) for r in run]
    [('broker-b/0', 2), ('broker-b/1', 1), ('broker-b/2', 1), ('broker-b/3', 1)]
    """
    config = config or SendConfig()
    if (sends is None) == (until_ms is None):
        raise ValueError("give exactly one of sends= and until_ms=")
    mqs = [MessageQueue("TopicTest", b, i) for b in brokers for i in range(queues)]
    tp = TopicPublishInfo(mqs, [QueueData(b, queues, queues) for b in brokers],
                          ThreadLocalIndex(line, stored=0, rng=random.Random(seed)))
    strategy = MQFaultStrategy(line, send_latency_fault_enable=fault_tolerance)
    out: list[SendResult] = []
    t = 0
    while (len(out) < sends) if sends is not None else (t < (until_ms or 0)):
        r = send(strategy, tp, world, now_ms=t, config=config)
        out.append(r)
        t = max(t + every_ms, r.end_ms + 1)
    return out


def third_attempt_returns(line: str, queues_per_broker: int = 4,
                          brokers: Sequence[str] = ("broker-a", "broker-b", "broker-c"),
                          topic: str = "TopicTest") -> tuple[int, int]:
    """Every broker of the route down (``models.down``), one send from each starting position of
    the counter (``ThreadLocalIndex(line, stored=s - 1)`` for each queue ``s``): how many
    starts send the third attempt back to the broker of the first, and how many starts there
    are (book chapter 2). 4.7.1's avoid-last pick skips only the last broker, so with three
    brokers of ``q`` queues ``q - 2`` of every ``q`` starts return; 4.9.8 never does.

    >>> third_attempt_returns("4.7.1"), third_attempt_returns("4.9.8")
    ((6, 12), (0, 12))
    """
    from rocketlb_core.producer.models import down

    mqs = [MessageQueue(topic, b, i) for b in brokers for i in range(queues_per_broker)]
    route = [QueueData(b, queues_per_broker, queues_per_broker) for b in brokers]
    back = 0
    for s in range(len(mqs)):
        r = send(MQFaultStrategy(line),
                 TopicPublishInfo(mqs, route, ThreadLocalIndex(line, stored=s - 1)),
                 down(*brokers), now_ms=0)
        back += r.attempts[2].queue.broker_name == r.attempts[0].queue.broker_name
    return back, len(mqs)
