"""The send/retry loop (spec 2.6) against small broker models, in virtual time."""

from __future__ import annotations

import random

import pytest

from rocketlb_core.model import MessageQueue, QueueData
from rocketlb_core.producer import (
    AttemptResult,
    MQFaultStrategy,
    Outcome,
    SendConfig,
    SendMode,
    ThreadLocalIndex,
    TopicPublishInfo,
    send,
)
from rocketlb_core.producer.tables import SYSTEM_BUSY, TOPIC_NOT_EXIST


def _tp(line: str, brokers: tuple[str, ...] = ("a", "b"), per_broker: int = 2,
        stored: int = -1) -> TopicPublishInfo:
    queues = [MessageQueue("T", b, i) for b in brokers for i in range(per_broker)]
    return TopicPublishInfo(queues, [QueueData(b, per_broker, per_broker) for b in brokers],
                            # 5.x retries reset the counter to a random draw: seeded, explicit
                            ThreadLocalIndex(line, stored=stored, rng=random.Random(7)))


def _broker(outcomes: dict[str, AttemptResult], budgets: list[int] | None = None):
    def model(mq: MessageQueue, now: int, budget: int) -> AttemptResult:
        if budgets is not None:
            budgets.append(budget)
        return outcomes.get(mq.broker_name, AttemptResult(Outcome.SEND_OK, 3))
    return model


DOWN = AttemptResult(Outcome.REMOTING_ERROR, 900)      # a failure well inside the budget


def test_retry_avoids_only_the_previous_broker_so_a_third_attempt_returns() -> None:
    tp = _tp("4.9.8")
    r = send(MQFaultStrategy("4.9.8"), tp, _broker({"a": DOWN, "b": DOWN}), now_ms=0)
    assert r.status == "FAILED"
    assert [a.queue.broker_name for a in r.attempts] == ["a", "b", "a"]   # issues 1136, 2223
    assert r.end_ms == 2700
    assert r.error == "RemotingException"


def test_each_attempt_gets_what_is_left_of_the_time_budget() -> None:
    budgets: list[int] = []
    slow = AttemptResult(Outcome.REMOTING_ERROR, 1200)
    r = send(MQFaultStrategy("4.9.8"), _tp("4.9.8"), _broker({"a": slow, "b": slow}, budgets), 0)
    assert budgets == [3000, 1800, 600]
    assert r.attempts[-1].latency_ms == 601                 # timed out just after the budget
    assert r.end_ms == 3001


@pytest.mark.parametrize("line", ["4.9.8", "5.3.3"])
def test_a_slow_route_lookup_is_spent_from_the_send_budget(line: str) -> None:
    # upstream takes beginTimestampFirst before tryToFindTopicPublishInfo: a 2,700 ms lookup
    # leaves the first attempt 300 ms, which begins when the route came
    budgets: list[int] = []
    slow = AttemptResult(Outcome.REMOTING_ERROR, 5000)           # answers after the budget
    r = send(MQFaultStrategy(line, send_latency_fault_enable=True), _tp(line),
             _broker({"a": slow, "b": slow}, budgets), now_ms=1000, lookup_ms=2700)
    assert budgets == [300]
    assert r.attempts[0].start_ms == 3700
    assert r.status == "FAILED"
    assert r.error == "call timeout"
    assert r.start_ms == 1000
    assert r.end_ms == 4001
    # no lookup: the whole budget for the first attempt, as before
    budgets.clear()
    send(MQFaultStrategy(line), _tp(line), _broker({"a": slow, "b": slow}, budgets), now_ms=0)
    assert budgets[0] == 3000


def test_a_timeout_that_eats_the_budget_ends_the_send_without_touching_other_brokers() -> None:
    """A timeout ends after its deadline, so no 0 ms attempt follows that would isolate a healthy
    broker (the 'call timeout' check of the loop)."""
    s = MQFaultStrategy("5.3.3", send_latency_fault_enable=True)
    silent = AttemptResult(Outcome.REMOTING_ERROR, 10**6)
    r = send(s, _tp("5.3.3", stored=-1), _broker({"a": silent}), 0)
    assert (r.status, r.error, len(r.attempts)) == ("FAILED", "call timeout", 1)
    assert s.is_available("b", r.end_ms)
    assert not s.is_available("a", r.end_ms)


def test_5x_per_request_cap_applies_except_to_the_last_attempt() -> None:
    budgets: list[int] = []
    cfg = SendConfig(send_msg_max_timeout_per_request_ms=500)
    send(MQFaultStrategy("5.3.3"), _tp("5.3.3"), _broker({"a": DOWN, "b": DOWN}, budgets), 0, cfg)
    assert budgets == [500, 500, 3000 - 2 * 501]   # each capped attempt times out at 501 ms


@pytest.mark.parametrize(("line", "outcome", "isolation", "reachable"), [
    ("4.9.8", Outcome.REMOTING_ERROR, True, None),
    ("4.9.8", Outcome.CLIENT_ERROR, True, None),
    ("4.9.8", Outcome.BROKER_ERROR, True, None),
    ("5.3.3", Outcome.REMOTING_ERROR, True, True),
    ("5.3.3", Outcome.CLIENT_ERROR, False, True),            # no isolation in 5.x
    ("5.3.3", Outcome.BROKER_ERROR, True, False),            # marks unreachable
    ("5.3.3", Outcome.SEND_OK, False, True),
])
def test_what_each_outcome_reports(line: str, outcome: Outcome, isolation: bool,
                                   reachable: bool | None) -> None:
    s = MQFaultStrategy(line, send_latency_fault_enable=True)
    res = AttemptResult(outcome, 40, TOPIC_NOT_EXIST if outcome is Outcome.BROKER_ERROR else None)
    r = send(s, _tp(line), _broker({"a": res}), now_ms=0)
    first = r.attempts[0]
    assert first.queue.broker_name == "a"
    assert (first.isolation, first.reachable) == (isolation, reachable)
    assert s.table.items["a"].current_latency == 40


def test_system_busy_fails_at_once_on_4x_and_is_retried_on_5x() -> None:
    busy = AttemptResult(Outcome.BROKER_ERROR, 5, SYSTEM_BUSY)
    r4 = send(MQFaultStrategy("4.9.8"), _tp("4.9.8"), _broker({"a": busy}), 0)
    assert (r4.status, len(r4.attempts), r4.error) == ("FAILED", 1, "MQBrokerException: code 2")
    r5 = send(MQFaultStrategy("5.3.3"), _tp("5.3.3"), _broker({"a": busy}), 0)
    assert (r5.status, r5.queue.broker_name, len(r5.attempts)) == ("SEND_OK", "b", 2)


def test_not_stored_reply_returns_unless_retry_another_broker_is_set() -> None:
    flush = AttemptResult(Outcome.FLUSH_DISK_TIMEOUT, 5)
    r = send(MQFaultStrategy("4.9.8"), _tp("4.9.8"), _broker({"a": flush}), 0)
    assert (r.status, len(r.attempts)) == ("FLUSH_DISK_TIMEOUT", 1)
    cfg = SendConfig(retry_another_broker_when_not_store_ok=True)
    r2 = send(MQFaultStrategy("4.9.8"), _tp("4.9.8"), _broker({"a": flush}), 0, cfg)
    assert (r2.status, r2.queue.broker_name, len(r2.attempts)) == ("SEND_OK", "b", 2)
    r3 = send(MQFaultStrategy("4.9.8"), _tp("4.9.8"), _broker({"a": flush, "b": flush}), 0, cfg)
    assert (r3.status, len(r3.attempts)) == ("FLUSH_DISK_TIMEOUT", 3)   # the last status wins


def test_oneway_makes_a_single_attempt() -> None:
    r = send(MQFaultStrategy("4.9.8"), _tp("4.9.8"), _broker({"a": DOWN}), 0,
             SendConfig(mode=SendMode.ONEWAY))
    assert (r.status, len(r.attempts)) == ("FAILED", 1)


def test_async_retry_keeps_the_first_hops_queue_id_on_another_broker() -> None:
    tp = _tp("4.9.8", stored=0)                            # first pick: a/1
    r = send(MQFaultStrategy("4.9.8"), tp, _broker({"a": DOWN}), 0,
             SendConfig(mode=SendMode.ASYNC))
    assert r.status == "SEND_OK"
    assert r.attempts[1].queue.short() == "a/1"
    assert r.queue.short() == "b/1"                        # same queue id, different broker


def test_fault_tolerance_keeps_a_dead_broker_out_for_600_s_on_4x_and_10_s_on_5x() -> None:
    for line, window in (("4.9.8", 600_000), ("5.3.3", 10_000)):
        s = MQFaultStrategy(line, send_latency_fault_enable=True)
        tp = _tp(line, stored=-1 if line == "4.9.8" else 0)
        model = _broker({"a": DOWN})
        first = send(s, tp, model, now_ms=0)
        assert first.attempts[0].queue.broker_name == "a"
        during = [send(s, tp, model, now_ms=5000 + i).attempts[0].queue.broker_name
                  for i in range(20)]
        assert set(during) == {"b"}, line
        after = [send(s, tp, model, now_ms=window + 2000 + i).attempts[0].queue.broker_name
                 for i in range(20)]
        assert "a" in after, line


def test_empty_route_fails_without_attempts() -> None:
    tp = TopicPublishInfo([], [], ThreadLocalIndex("4.9.8", stored=0))
    r = send(MQFaultStrategy("4.9.8"), tp, _broker({}), 0)
    assert (r.status, r.attempts, r.error) == ("FAILED", (), "No route info of this topic")
