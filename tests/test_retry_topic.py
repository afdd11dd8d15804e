"""``rocketlb_core.consumer.retry``: where a group's retried messages land and who consumes them
(chapter 5, "The retry topic: one queue per broker"; questions #4249, #3953, #9066)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketlb_core.consumer.registry import make
from rocketlb_core.consumer.retry import created_queue_nums, retry_share, retry_topic
from tests.test_fuzz import TRIED

IDS = [f"10.0.0.{i}@c{i}" for i in range(1, 5)]


def test_a_retry_topic_is_created_once_with_the_setting_of_its_day() -> None:
    assert retry_topic("GID_shop") == "%RETRY%GID_shop"
    assert created_queue_nums(None, 2) == 2
    assert created_queue_nums(1, 2) == 1          # raised later: the topic keeps its one queue
    assert created_queue_nums(4, 1) == 4


def test_each_broker_keeps_its_own_retries_on_one_queue_by_default() -> None:
    got = retry_share(group="GID_shop", consumers=IDS,
                      sent_back={"broker-a": 500, "broker-b": 300}, seed=1)
    assert [q.short() for q in got.queues] == ["broker-a/0", "broker-b/0"]
    assert all(q.topic == "%RETRY%GID_shop" for q in got.queues)
    held = {c: [q.short() for q in qs] for c, qs in got.assignment.items()}
    assert held == {IDS[0]: ["broker-a/0"], IDS[1]: ["broker-b/0"], IDS[2]: [], IDS[3]: []}
    assert got.consumed == {IDS[0]: 500, IDS[1]: 300, IDS[2]: 0, IDS[3]: 0}
    assert got.unlisted == 0


def test_a_setting_raised_over_an_existing_topic_strands_the_new_queue_ids() -> None:
    """Issue #3953: ``retryQueueNums`` 2 over a retry topic of 1 queue: the draws that give queue
    id 1 are stored where the route lists nothing; raised to 4, three quarters are."""
    for raised, share in ((2, 1 / 2), (4, 3 / 4)):
        got = retry_share(group="G", consumers=IDS, sent_back={"broker-a": 20_000},
                          retry_queue_nums=raised, topic_queue_nums=1, seed=3)
        assert abs(got.unlisted / 20_000 - share) < 0.02
        assert sorted(q.queue_id for q in got.landed) == list(range(raised))
        assert got.unlisted + sum(got.consumed.values()) == 20_000
    # the topic raised too: every draw is listed, and each member holds one queue
    got = retry_share(group="G", consumers=IDS, sent_back={"broker-a": 100, "broker-b": 100},
                      retry_queue_nums=2, topic_queue_nums={"broker-a": 2, "broker-b": 2},
                      seed=3)
    assert got.unlisted == 0
    assert all(len(qs) == 1 for qs in got.assignment.values())


def test_a_setting_raised_on_one_broker_strands_that_brokers_new_ids_only() -> None:
    """``updateSubGroup -q 2 -b`` on broker-a alone: broker-a draws 0 or 1, broker-b 0 only."""
    got = retry_share(group="G", consumers=IDS, sent_back={"broker-a": 10_000, "broker-b": 10_000},
                      retry_queue_nums={"broker-a": 2, "broker-b": 1}, topic_queue_nums=1,
                      seed=4)
    assert {q.short() for q in got.landed} == {"broker-a/0", "broker-a/1", "broker-b/0"}
    assert got.landed[got.queues[1]] == 10_000                    # broker-b/0 has them all
    assert abs(got.unlisted / 10_000 - 0.5) < 0.03


def test_the_group_allocates_its_retry_queues_with_its_own_strategy() -> None:
    got = retry_share(group="G", consumers=IDS, sent_back={"broker-a": 8, "broker-b": 8},
                      retry_queue_nums=4, strategy=make("AVG_BY_CIRCLE"), seed=2)
    assert [q.short() for q in got.assignment[IDS[0]]] == ["broker-a/0", "broker-b/0"]


def test_the_same_seed_gives_the_same_draws() -> None:
    a = retry_share(group="G", consumers=IDS, sent_back={"broker-a": 99}, retry_queue_nums=3,
                    seed=11)
    b = retry_share(group="G", consumers=IDS, sent_back={"broker-a": 99}, retry_queue_nums=3,
                    seed=11)
    assert a == b


HOSTILE = st.one_of(st.integers(-5, 2_000), st.just(10**12), st.booleans(), st.none(),
                    st.text(max_size=5), st.floats(allow_nan=True), st.just([1]))
GOOD: dict[str, Any] = {"group": "G", "consumers": IDS, "sent_back": {"broker-a": 5},
                        "retry_queue_nums": 2, "topic_queue_nums": None, "seed": 1}


@given(field=st.sampled_from(sorted(GOOD)), value=st.one_of(
    HOSTILE, st.lists(st.text(max_size=3), max_size=3),
    st.dictionaries(st.text(max_size=3), HOSTILE, max_size=3)))
@settings(max_examples=300, derandomize=True, deadline=None, database=None)
def test_a_hostile_argument_is_refused_naming_it_or_read_within_its_range(
        field: str, value: Any) -> None:
    """Each argument of ``retry_share`` with a hostile value: a ``ValueError`` naming that
    argument, or a result in which every message sent back is consumed once or stranded."""
    TRIED["retry topic: a hostile argument"] += 1
    kwargs = {**GOOD, field: value}
    refused: ValueError | None = None
    try:
        got = retry_share(**kwargs)
    except ValueError as exc:
        refused = exc
    if refused is not None:
        TRIED["retry topic: a hostile argument: refused"] += 1
        assert str(refused).startswith(field), str(refused)
        return
    sent = sum(kwargs["sent_back"].values())
    assert got.unlisted + sum(got.consumed.values()) == sent
    assert sum(got.landed.values()) == sent
    assert set(got.consumed) == set(got.assignment)


def test_bad_arguments_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"^retry_queue_nums"):
        retry_share(**{**GOOD, "retry_queue_nums": 0})
    with pytest.raises(ValueError, match=r"^topic_queue_nums"):
        retry_share(**{**GOOD, "topic_queue_nums": {"broker-z": 1}})
    with pytest.raises(ValueError, match=r"^consumers\[1\]"):
        retry_share(**{**GOOD, "consumers": ["c1", ""]})
    with pytest.raises(ValueError, match=r"^sent_back\['broker-a'\]"):
        retry_share(**{**GOOD, "sent_back": {"broker-a": -1}})
