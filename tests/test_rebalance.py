"""RebalanceImpl's bookkeeping (spec 4.1, 4.3, 4.4) and the assignment metrics."""

from __future__ import annotations

import pytest

from rocketlb_core.consumer.metrics import (
    duplicate_client_ids,
    idle_consumers,
    imbalance,
    movement,
    ownership,
)
from rocketlb_core.consumer.rebalance import (
    ConsumeFromWhere,
    OffsetLookupError,
    ProcessQueue,
    compute_pull_from_where,
    pull_threshold_for_queue,
    update_process_queue_table,
)
from rocketlb_core.model import MessageQueue

A, B, C, D = (MessageQueue("T", "broker-a", i) for i in range(4))
OTHER = MessageQueue("U", "broker-a", 0)


@pytest.mark.parametrize(("cfw", "read", "topic", "want"), [
    ("CONSUME_FROM_LAST_OFFSET", 17, "T", 17),
    ("CONSUME_FROM_LAST_OFFSET", -1, "T", 900),          # the queue's max offset
    ("CONSUME_FROM_LAST_OFFSET", -1, "%RETRY%g", 0),
    ("CONSUME_FROM_FIRST_OFFSET", -1, "T", 0),
    ("CONSUME_FROM_TIMESTAMP", -1, "T", 450),            # searched by timestamp
    ("CONSUME_FROM_TIMESTAMP", -1, "%RETRY%g", 900),
    ("CONSUME_FROM_MIN_OFFSET", -1, "T", 900),           # deprecated: behaves like LAST
    ("CONSUME_FROM_LAST_OFFSET", -2, "T", -1),           # 4.9.x: skip this round
])
def test_compute_pull_from_where(cfw: str, read: int, topic: str, want: int) -> None:
    assert compute_pull_from_where(cfw, read, topic, max_offset=900, search_offset=450) == want


def test_5x_raises_where_4x_returns_minus_one() -> None:
    with pytest.raises(OffsetLookupError):
        compute_pull_from_where(ConsumeFromWhere.FIRST_OFFSET, -2, "T", line="5.3.3")
    assert compute_pull_from_where("CONSUME_FROM_FIRST_OFFSET", -2, "T", line="5.3.3",
                                   lite_pull=True) == -1


def test_pull_threshold_split() -> None:
    assert [pull_threshold_for_queue(1024, 1000, n) for n in (2, 3, 4096)] == [512, 341, 1]
    assert pull_threshold_for_queue(-1, 1000, 3) == 1000


def test_drop_what_is_no_longer_assigned_and_create_what_is_new() -> None:
    table = {A: ProcessQueue(last_pull_ms=900), B: ProcessQueue(last_pull_ms=900),
             OTHER: ProcessQueue(last_pull_ms=0)}
    offsets = {C: 5, D: 9}
    step = update_process_queue_table(table, "T", {B, C, D}, now_ms=1000,
                                      pull_from_where=offsets.__getitem__)
    assert step.dropped == (A,)
    assert step.created == ((C, 5), (D, 9))
    assert set(step.table) == {B, C, D, OTHER}           # other topics are untouched
    assert step.changed
    again = update_process_queue_table(step.table, "T", {B, C, D}, now_ms=1000,
                                       pull_from_where=offsets.__getitem__)
    assert not again.changed
    assert again.table == step.table


def test_stalled_pulling_is_dropped_for_push_consumers_only() -> None:
    table = {A: ProcessQueue(last_pull_ms=0)}
    push = update_process_queue_table(table, "T", {A}, now_ms=120_001)
    assert push.dropped == (A,)
    assert update_process_queue_table(table, "T", {A}, now_ms=120_000).dropped == ()
    pull = update_process_queue_table(table, "T", {A}, now_ms=500_000, consume_passively=False)
    assert pull.dropped == ()


def test_refused_removal_stays_flagged_and_lock_failures_skip() -> None:
    table = {A: ProcessQueue(last_pull_ms=0)}
    step = update_process_queue_table(table, "T", {B, C}, now_ms=10, need_lock=True,
                                      remove_unnecessary=lambda mq, pq: False,
                                      lock=lambda mq: mq != C)
    assert step.refused == (A,)
    assert step.table[A].dropped
    assert step.created == ((B, 0),)
    assert step.skipped == ((C, "lock refused"),)
    assert not step.all_locked


def test_offset_failures_skip_the_queue_until_next_round() -> None:
    def lookup(mq: MessageQueue) -> int:
        if mq == B:
            raise OffsetLookupError("broker unreachable")
        return -1 if mq == C else 3

    step = update_process_queue_table({}, "T", {B, C, D}, now_ms=0, pull_from_where=lookup)
    assert step.created == ((D, 3),)
    assert {q for q, _ in step.skipped} == {B, C}


def test_metrics() -> None:
    before = {"c1": [A, B], "c2": [C, D]}
    after = {"c1": [A], "c2": [C, D], "c3": [B], "c4": []}
    assert movement(before, after) == {B}
    assert imbalance(after) == (2, 2.0)
    assert idle_consumers(after) == ["c4"]
    assert duplicate_client_ids(["x", "y", "x"]) == {"x": 2}
    bad = ownership({"c1": [A, B], "c2": [B], "zz": [OTHER]}, [A, B, C, D], ["c1", "c2"])
    assert (bad.unowned, bad.multiply_owned, bad.foreign, bad.strangers) == (
        (C, D), (B,), (OTHER,), ("zz",))
    assert not bad.ok
    assert ownership(before, [A, B, C, D]).ok
