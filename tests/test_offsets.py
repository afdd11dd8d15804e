"""Consumer offsets in the simulator (issue 31): the consumed offset rides on every pull to the
master broker (``DefaultMQPushConsumerImpl.pullMessage``'s ``commitOffset``, stored by
``PullMessageProcessor``), besides the 5 s ``persistConsumerOffsetInterval``; and it is the
lowest offset still in the process queue (``ProcessQueue.removeMessage``), so a slow message in
flight holds it back. A crash redelivers from the broker's stored offset.

The crash is put 4.6 s after the last 5 s persist (persists at 10 s, 15 s, ... 60 s, 65 s) and
100 ms after a pull (pulls every 500 ms): under a persist-only model it would redeliver 4.6 s
of messages, under upstream's about one pull's worth."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rocketlb_core.model import MessageQueue
from rocketlb_core.sim.events import CONSUME_MAX_SPAN
from rocketlb_core.sim.scenario import EventSpec, Scenario, ScenarioError, loads
from rocketlb_core.sim.world import RunResult, run_scenario

RATE_PER_QUEUE = 25                     # messages per second and queue
CRASH_MS = 64_600

BASE = f"""
name = "offsets"
duration_ms = 200_000
drain_ms = 30_000

[cluster]
name_servers = 1
brokers = [{{ name = "broker-a" }}]
topics = [{{ name = "T", brokers = ["broker-a"], read_queues = 4, write_queues = 4 }}]

[[producers]]
name = "p"
topic = "T"
rate_per_s = {4 * RATE_PER_QUEUE}

[[consumer_groups]]
name = "G"
topic = "T"
members = [{{ name = "c1", ip = "10.0.0.1", instance = "a" }},
           {{ name = "c2", ip = "10.0.0.2", instance = "b" }}]
"""


def _scenario(*events: EventSpec, duration_ms: int | None = None) -> Scenario:
    sc = loads(BASE, "<offsets>")
    sc = replace(sc, events=tuple(sorted(events, key=lambda e: e.at_ms)))
    if duration_ms is not None:          # stop everything then: the world as it was
        sc = replace(sc, duration_ms=duration_ms, drain_ms=0)
    return sc


def _crash(at_ms: int = CRASH_MS) -> EventSpec:
    return EventSpec(at_ms, "consumer_crash", {"consumer": "c1", "mode": "process"})


def _c1_queues(run: RunResult) -> list[MessageQueue]:
    c1 = run.world.member("c1")
    return sorted(q for q, pq in c1.table.items() if not pq.dropped)


def _stored(run: RunResult, mq: MessageQueue) -> int:
    return run.world.brokers[mq.broker_name].offsets.get(("G", mq.topic, mq.queue_id), 0)


def _five_seconds(queues: int) -> int:
    return 5 * RATE_PER_QUEUE * queues


def test_no_duplicates_without_a_crash() -> None:
    """The baseline the other tests count against: two consumers, nothing happens."""
    assert run_scenario(_scenario()).summary["duplicate_deliveries"] == 0


def test_the_brokers_stored_offset_advances_with_pulls() -> None:
    """Between two 5 s persists (60 s and 65 s) the broker's stored offset of a consumed queue
    still advances: every pull commits what was consumed before it. At 64.6 s it is at most
    one pull (500 ms) behind the consumer's position."""
    early = run_scenario(_scenario(duration_ms=61_000))
    late = run_scenario(_scenario(duration_ms=CRASH_MS))
    queues = _c1_queues(late)
    assert queues == _c1_queues(early)
    assert len(queues) == 2
    c1 = late.world.member("c1")
    for mq in queues:
        assert _stored(late, mq) > _stored(early, mq) + 2 * RATE_PER_QUEUE
        assert 0 <= c1.offsets[mq] - _stored(late, mq) <= RATE_PER_QUEUE // 2 + 1


def test_a_crash_right_after_a_pull_redelivers_far_less_than_five_seconds() -> None:
    """Killed 100 ms after a pull and 4.6 s after the last persist: the successor gets again
    only what the last pull delivered, a fraction of 5 s of the crashed consumer's queues."""
    at_crash = run_scenario(_scenario(duration_ms=CRASH_MS))
    queues = _c1_queues(at_crash)
    c1 = at_crash.world.member("c1")
    window = sum(c1.offsets[mq] - _stored(at_crash, mq) for mq in queues)
    run = run_scenario(_scenario(_crash()))
    dup = run.summary["duplicate_deliveries"]
    assert 0 < dup == window
    assert dup <= _five_seconds(len(queues)) // 5           # at most 1 s, not 5 s
    assert run.summary["messages_unconsumed"] == 0


def test_a_slow_message_in_flight_at_a_crash_redelivers_more_than_five_seconds() -> None:
    """A message that takes 60 s, delivered at 30 s, is still in flight at the crash: the other
    messages of its queue were consumed, but the committed offset stayed at the slow one, so the
    successor gets again everything from it on, about 34.6 s of that queue."""
    slow = EventSpec(30_000, "slow_message", {"consumer": "c1", "duration_ms": 60_000})
    at_crash = run_scenario(_scenario(slow, duration_ms=CRASH_MS))
    c1 = at_crash.world.member("c1")
    [(mq, (offset, done_ms))] = c1.slow.items()
    assert done_ms == 90_000
    assert offset < 30 * RATE_PER_QUEUE + RATE_PER_QUEUE
    assert _stored(at_crash, mq) == offset           # pulls and persists commit the slow one
    assert c1.offsets[mq] - offset > 30 * RATE_PER_QUEUE    # while the others ran on
    run = run_scenario(_scenario(slow, _crash()))
    dup = run.summary["duplicate_deliveries"]
    queues = _c1_queues(at_crash)
    assert dup > _five_seconds(len(queues))
    assert dup >= c1.offsets[mq] - offset
    assert run.summary["messages_unconsumed"] == 0


def test_a_slow_message_done_before_the_crash_holds_nothing_back() -> None:
    """Once the slow message is consumed, the consumed offset jumps to the position: a later
    crash redelivers about one pull again."""
    slow = EventSpec(30_000, "slow_message", {"consumer": "c1", "duration_ms": 10_000})
    with_slow = run_scenario(_scenario(slow, _crash())).summary["duplicate_deliveries"]
    without = run_scenario(_scenario(_crash())).summary["duplicate_deliveries"]
    assert with_slow == without


def test_a_slow_message_slows_nothing_and_holds_the_committed_offset_back() -> None:
    """Span flow control measures the messages still held (``ProcessQueue.getMaxSpan()``), not
    the distance from the slow message to the position (issue 45: upstream 4.9.8, 5.3.3; a
    live 5.3.3 consumer with one call hung at offset 0 consumed offsets 1 to 5999 at full
    rate). So the queue is consumed on, its committed offset stays at the slow message far
    more than ``consumeConcurrentlyMaxSpan`` behind, and a crash then delivers again all of
    it; once the call returns, nothing is lost or repeated."""
    slow = EventSpec(10_000, "slow_message", {"consumer": "c1", "duration_ms": 150_000})
    at = run_scenario(_scenario(slow, duration_ms=150_000))
    c1 = at.world.member("c1")
    [(mq, (offset, _))] = c1.slow.items()
    top = at.world.brokers["broker-a"].max_offset("T", mq.queue_id)
    assert top - c1.offsets[mq] <= RATE_PER_QUEUE        # consumed on: at most a second behind
    assert c1.offsets[mq] - offset > CONSUME_MAX_SPAN + RATE_PER_QUEUE * 10
    assert _stored(at, mq) == offset                     # every pull commits the slow offset
    crashed = run_scenario(_scenario(slow, _crash(140_000)))
    assert crashed.summary["duplicate_deliveries"] > CONSUME_MAX_SPAN
    run = run_scenario(_scenario(slow))
    assert run.summary["messages_unconsumed"] == 0
    assert run.summary["duplicate_deliveries"] == 0


def test_slow_message_names_a_consumer() -> None:
    text = BASE + '\n[[events]]\nat_ms = 1\nkind = "slow_message"\nconsumer = "p"\n' \
                  'duration_ms = 5\n'
    with pytest.raises(ScenarioError, match="a producer, not a consumer"):
        loads(text, "<offsets>")
