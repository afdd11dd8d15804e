"""Producer selection: one test per porting pitfall of spec section 10, on concrete examples."""

from __future__ import annotations

import random

import pytest

from rocketlb_core.javamath import INT_MAX, INT_MIN
from rocketlb_core.model import PERM_READ, MessageQueue, QueueData
from rocketlb_core.producer import (
    FaultTable4,
    FaultTable5,
    MQFaultStrategy,
    ProducerLine,
    ThreadLocalIndex,
    TopicPublishInfo,
    compute_not_available_duration,
)
from rocketlb_core.producer.tables import LATENCY_MAX_4, NOT_AVAILABLE_4

BROKERS = ("a", "b", "c")


def _tp(line: str, stored: int, per_broker: int = 4, brokers: tuple[str, ...] = BROKERS,
        perms: dict[str, int] | None = None) -> TopicPublishInfo:
    queues = [MessageQueue("T", b, i) for b in brokers for i in range(per_broker)]
    qds = [QueueData(b, per_broker, per_broker, (perms or {}).get(b, 6)) for b in brokers]
    return TopicPublishInfo(queues, qds, ThreadLocalIndex(line, stored=stored))


# ------------------------------------------------------------------ the counter (2.1, 2.4a)
@pytest.mark.parametrize(("line", "returned", "stored"), [
    ("4.9.8", [INT_MAX, 0, 1], [INT_MAX, INT_MIN, INT_MIN + 1]),
    ("5.3.3", [INT_MAX, 0, 1], [INT_MAX, INT_MIN, INT_MIN + 1]),
    ("4.7.1", [INT_MAX, 0, 1], [INT_MAX, 0, 1]),            # clamps: stores 0, not -2^31
])
def test_counter_overflow(line: str, returned: list[int], stored: list[int]) -> None:
    idx = ThreadLocalIndex(line, stored=INT_MAX - 1)
    got = [(idx.next(), idx.stored) for _ in range(3)]
    assert got == list(zip(returned, stored, strict=True))


def test_5x_counter_may_start_negative_and_still_returns_non_negative() -> None:
    idx = ThreadLocalIndex("5.3.3", stored=-7)
    assert [idx.next() for _ in range(3)] == [2147483642, 2147483643, 2147483644]


def test_first_use_draws_from_the_seeded_rng_only() -> None:
    a = [ThreadLocalIndex("4.9.8", rng=random.Random(42)).next() for _ in range(2)]
    assert a[0] == a[1] >= 0
    with pytest.raises(ValueError, match="no start value"):
        ThreadLocalIndex("4.9.8").next()


def test_reset_is_5x_only_and_bounded() -> None:
    idx = ThreadLocalIndex("5.3.3", stored=5)
    idx.reset(INT_MAX - 1)
    assert idx.next() == INT_MAX
    with pytest.raises(ValueError, match="outside"):
        idx.reset(INT_MAX)
    with pytest.raises(ValueError, match=r"does not exist on 4\.9\.8"):
        ThreadLocalIndex("4.9.8", stored=0).reset(1)


# ------------------------------------------------------------------ tables (2.3)
@pytest.mark.parametrize(("latency", "duration"), [
    (-1, 0), (0, 0), (549, 0), (550, 30000), (999, 30000), (1000, 60000), (14999, 180000),
    (15000, 600000), (10**9, 600000)])
def test_4x_duration_table_boundaries_are_inclusive(latency: int, duration: int) -> None:
    assert compute_not_available_duration(latency, LATENCY_MAX_4, NOT_AVAILABLE_4) == duration


def test_isolation_stores_the_measured_latency_but_uses_the_isolation_duration() -> None:
    s = MQFaultStrategy("4.9.8", send_latency_fault_enable=True)
    s.update_fault_item("a", 12, isolation=True, now_ms=1000)
    item = s.table.items["a"]
    assert (item.current_latency, item.start_timestamp) == (12, 1000 + 600_000)
    s5 = MQFaultStrategy("5.3.3", send_latency_fault_enable=True)
    s5.update_fault_item("a", 12, isolation=True, now_ms=1000)
    assert s5.table.items["a"].start_timestamp == 1000 + 10_000


def test_reports_are_ignored_while_the_strategy_is_off() -> None:
    s = MQFaultStrategy("4.9.8")
    s.update_fault_item("a", 30000, isolation=True, now_ms=0)
    assert s.table.items == {}


# ------------------------------------------------------------------ fault tables (2.4, 2.5)
def test_availability_is_inclusive_at_the_deadline() -> None:
    t4, t5 = FaultTable4(), FaultTable5()
    t4.update("a", 600, 30000, now_ms=0)
    t5.update("a", 600, 2000, True, now_ms=0)
    assert not t4.is_available("a", 29_999)
    assert t4.is_available("a", 30_000)
    assert not t5.is_available("a", 1_999)
    assert t5.is_available("a", 2_000)


def test_4x_fast_success_clears_an_isolation_but_5x_only_extends() -> None:
    t4, t5 = FaultTable4(), FaultTable5()
    t4.update("a", 5000, 600_000, now_ms=0)
    t4.update("a", 10, 0, now_ms=1)              # one fast reply
    assert t4.is_available("a", 1)
    t5.update("a", 5000, 10_000, False, now_ms=0)
    t5.update("a", 10, 0, True, now_ms=1)
    assert not t5.is_available("a", 1)
    assert t5.is_reachable("a")                  # reachable is always overwritten


def test_pick_one_at_least_rotates_over_the_better_half() -> None:
    t = FaultTable4(which_item_worst=ThreadLocalIndex("4.9.8", stored=0))
    for i, name in enumerate("dcba"):            # latencies 100, 101, 102, 103
        t.update(name, 100 + i, 60_000, now_ms=0)
    assert [t.pick_one_at_least(1) for _ in range(4)] == ["c", "d", "c", "d"]


# ------------------------------------------------------------------ selection (2.2, 2.4, 2.5)
def _overflow_pick(available: set[str]) -> str:
    names = tuple(f"q{i}" for i in range(10))                # one queue per broker
    s = MQFaultStrategy("4.9.8", send_latency_fault_enable=True)
    for i, name in enumerate(names):
        s.update_fault_item(name, 30000 + i, True, 0)
        if name in available:
            s.table.items[name].start_timestamp = 0
    tp = _tp("4.9.8", stored=INT_MAX - 1, per_broker=1, brokers=names)
    return s.select(tp, None, now_ms=1).broker_name


def test_4x_fault_scan_walks_backwards_after_overflow() -> None:
    """From counter 2^31-1 the next probe is -2^31 (abs stays negative, clamped to position 0),
    then jabs(-2^31+1) = 2^31-1 again: probes 7, 0, 7, 6, ..., 1, 0 never reach positions 8, 9."""
    assert _overflow_pick({"q0", "q6"}) == "q0"      # 0 is probed second, before 6
    assert _overflow_pick({"q6", "q5"}) == "q6"      # then it walks down: 6 before 5
    assert _overflow_pick({"q1"}) == "q1"            # reached at the 9th probe
    for unreachable in ("q8", "q9"):                 # never probed: the least-bad branch answers
        assert _overflow_pick({unreachable}) != unreachable


def test_4x_all_unavailable_costs_three_counter_steps_and_5x_costs_2n_plus_1() -> None:
    s4 = MQFaultStrategy("4.9.8", send_latency_fault_enable=True)
    for i, b in enumerate(BROKERS):
        s4.update_fault_item(b, 30000 + i, True, 0)
    tp = _tp("4.9.8", stored=0)
    s4.select(tp, None, now_ms=1)
    assert tp.index.stored == 3
    s5 = MQFaultStrategy("5.3.3", send_latency_fault_enable=True)
    for b in BROKERS:
        s5.update_fault_item(b, 30000, True, 0, reachable=False)
    tp5 = _tp("5.3.3", stored=0)
    s5.select(tp5, None, now_ms=1)
    assert tp5.index.stored == 2 * 12 + 1


def test_least_bad_queue_id_comes_from_the_counter_not_the_route() -> None:
    s = MQFaultStrategy("4.9.8", send_latency_fault_enable=True)
    s.update_fault_item("a", 30001, True, 0)
    s.update_fault_item("b", 30000, True, 0)
    tp = _tp("4.9.8", stored=0, per_broker=3, brokers=("a", "b"))
    mq = s.select(tp, None, now_ms=1)
    assert mq.broker_name == "b"                 # lower latency ranks first (better half = b)
    assert mq.queue_id == tp.index.stored % 3


def test_4_9_7_rewrites_the_cached_queue_and_4_9_8_does_not() -> None:
    lists = {}
    for line in ("4.9.7", "4.9.8"):
        s = MQFaultStrategy(line, send_latency_fault_enable=True)
        s.update_fault_item("a", 30000, True, 0)
        s.update_fault_item("b", 30001, True, 0)
        tp = _tp(line, stored=0, per_broker=2, brokers=("a", "b"))
        s.select(tp, None, now_ms=1)
        lists[line] = [q.short() for q in tp.queues]
    assert lists["4.9.8"] == ["a/0", "a/1", "b/0", "b/1"]
    assert lists["4.9.7"] != lists["4.9.8"]
    assert sorted(lists["4.9.7"]) != sorted(lists["4.9.8"])  # a queue object was overwritten


def test_read_only_least_bad_broker_counts_on_4_9_7_but_not_on_4_9_8() -> None:
    got = {}
    for line in ("4.9.7", "4.9.8"):
        s = MQFaultStrategy(line, send_latency_fault_enable=True)
        s.update_fault_item("a", 30001, True, 0)
        s.update_fault_item("c", 30000, True, 0)     # c ranks first but is read-only
        tp = _tp(line, stored=0, brokers=("a", "c"), perms={"c": PERM_READ})
        tp.queues = [q for q in tp.queues if q.broker_name == "a"]
        got[line] = (s.select(tp, None, now_ms=1).broker_name, "c" in s.table.items)
    assert got["4.9.7"] == ("c", True)         # a queue of a read-only broker
    assert got["4.9.8"] == ("a", False)        # c removed from the table, plain pick instead


def test_4_7_1_retry_goes_back_to_the_failed_broker() -> None:
    """Spec 2.4a: with lastBrokerName the 4.7.1 scan only accepts queues OF that broker; the
    failed broker is isolated and the only fault item, so the least-bad branch returns it."""
    s = MQFaultStrategy("4.7.1", send_latency_fault_enable=True)
    tp = _tp("4.7.1", stored=0, brokers=("a", "b"))
    first = s.select(tp, None, now_ms=0)
    s.update_fault_item(first.broker_name, 3000, True, 3000)
    retry = s.select(tp, first.broker_name, now_ms=3000)
    assert retry.broker_name == first.broker_name
    s98 = MQFaultStrategy("4.9.8", send_latency_fault_enable=True)
    tp98 = _tp("4.9.8", stored=0, brokers=("a", "b"))
    first98 = s98.select(tp98, None, now_ms=0)
    s98.update_fault_item(first98.broker_name, 3000, True, 3000)
    assert s98.select(tp98, first98.broker_name, now_ms=3000).broker_name != first98.broker_name


def test_fault_off_avoid_last_steps_once_per_call_on_4_7_1() -> None:
    """Spec 2.4a example: list a0..a3 b0..b3 c0 c1, stored 0, last=a twice: 4.7.1 gives b0, b0;
    4.9.8 gives b0, b1."""
    def run(line: str) -> list[str]:
        queues = [MessageQueue("T", "a", i) for i in range(4)] + \
                 [MessageQueue("T", "b", i) for i in range(4)] + \
                 [MessageQueue("T", "c", i) for i in range(2)]
        tp = TopicPublishInfo(queues, [], ThreadLocalIndex(line, stored=0))
        s = MQFaultStrategy(line)
        return [s.select(tp, "a", now_ms=0).short() for _ in range(2)]
    assert run("4.7.1") == ["b/0", "b/0"]
    assert run("4.9.8") == ["b/0", "b/1"]


def test_5x_honours_last_broker_with_fault_on() -> None:
    s = MQFaultStrategy("5.3.3", send_latency_fault_enable=True)
    tp = _tp("5.3.3", stored=0)
    picks = {s.select(tp, "a", now_ms=0).broker_name for _ in range(50)}
    assert picks == {"b", "c"}


def test_lines_parse_from_tags_and_short_names() -> None:
    assert ProducerLine.parse("4.9.x") is ProducerLine.V4_9_8
    assert ProducerLine.parse("rocketmq-all-4.9.7") is ProducerLine.V4_9_7
    with pytest.raises(ValueError, match="unknown producer line"):
        ProducerLine.parse("3.2")
