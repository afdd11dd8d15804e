"""Properties every registered allocation strategy must keep (Hypothesis, seeded via
``derandomize``, 1000 examples each), plus the upstream pitfalls as concrete examples."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketlb_core.consumer.base import AllocationArgumentError, assign_all, rebalance_view
from rocketlb_core.consumer.metrics import imbalance, moved, ownership
from rocketlb_core.consumer.pop import allocate4pop
from rocketlb_core.consumer.registry import REGISTRY, example, make
from rocketlb_core.consumer.sticky import sticky
from rocketlb_core.consumer.strategies import avg, machine_room
from rocketlb_core.model import MessageQueue

PROPS = settings(max_examples=1000, derandomize=True, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


@st.composite
def views(draw: st.DrawFn, max_queues: int = 48, max_consumers: int = 12) -> tuple[
        list[MessageQueue], list[str]]:
    """A consistent view as RebalanceImpl builds it: sorted queues, sorted distinct ids."""
    brokers = draw(st.integers(1, 4))
    per = draw(st.integers(1, max(1, max_queues // brokers)))
    topics = draw(st.sampled_from([["T"], ["T", "%RETRY%g"]]))
    queues = [MessageQueue(t, f"room{b % 2}@broker-{b}", i)
              for t in topics for b in range(brokers) for i in range(per)]
    ids = draw(st.lists(st.from_regex(r"10\.0\.[0-9]\.[0-9]{1,2}@[0-9]{1,5}", fullmatch=True),
                        min_size=1, max_size=max_consumers, unique=True))
    mq_all, cid_all = rebalance_view(queues, ids)
    return mq_all, cid_all


# Every registered strategy, from the registry alone: a newly registered one is tested here
# without another line (``Registration.example``, ``covering``, ``balanced``).
EVERY = {name: example(name) for name in REGISTRY}
COVERING = {name: s for name, s in EVERY.items() if REGISTRY[name].covering}
BALANCED = {name for name, r in REGISTRY.items() if r.balanced}


def _ids_for(name: str, cids: list[str]) -> list[str]:
    """Ids as ``name`` needs them: with a ``roomN@`` prefix for strategies that use rooms."""
    return _room_ids(cids) if REGISTRY[name].uses_rooms else cids


def _room_ids(cids: list[str]) -> list[str]:
    return sorted(f"room{i % 2}@{c}" for i, c in enumerate(cids))


def test_every_registered_strategy_is_property_tested() -> None:
    assert {"AVG", "STICKY", "CONSISTENT_HASH_BOUNDED", "MACHINE_ROOM_NEARBY"} <= set(COVERING)
    for name, strategy in EVERY.items():
        assert strategy.name.startswith(name)


def test_registry_names_match_rocketmq() -> None:
    assert {"AVG", "AVG_BY_CIRCLE", "CONFIG", "MACHINE_ROOM", "MACHINE_ROOM_NEARBY",
            "CONSISTENT_HASH"} <= set(REGISTRY)
    assert make("MACHINE_ROOM_NEARBY", inner="AVG_BY_CIRCLE").name == \
        "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE"
    with pytest.raises(ValueError, match="unknown allocation strategy"):
        make("RANDOM")


@pytest.mark.parametrize("name", sorted(COVERING))
@PROPS
@given(view=views())
def test_every_queue_is_owned_exactly_once_by_a_member(name: str, view) -> None:
    mq_all, cid_all = view
    cid_all = _ids_for(name, cid_all)
    strategy = COVERING[name]
    shares = {cid: strategy.allocate("g", cid, mq_all, cid_all) for cid in cid_all}
    report = ownership(shares, mq_all, cid_all)
    assert report.ok, report
    if name in BALANCED and len(cid_all) <= len(mq_all):
        assert imbalance(shares)[0] <= 1
    if name == "CONSISTENT_HASH_BOUNDED":
        cap = strategy.capacity(len(mq_all), len(cid_all))
        assert max(len(v) for v in shares.values()) <= cap


@pytest.mark.parametrize("name", sorted(EVERY))
@PROPS
@given(view=views(), seed=st.integers(0, 2**32 - 1))
def test_deterministic_and_independent_of_input_order(name: str, view, seed: int) -> None:
    mq_all, cid_all = view
    cid_all = _ids_for(name, cid_all)
    rng = random.Random(seed)
    raw_q, raw_c = mq_all * 2, list(cid_all)            # duplicates in the raw route set too
    rng.shuffle(raw_q)
    rng.shuffle(raw_c)
    again_q, again_c = rebalance_view(raw_q, raw_c)
    assert (again_q, again_c) == (mq_all, cid_all)
    strategy = EVERY[name]
    first = assign_all(strategy, "g", mq_all, cid_all)
    assert assign_all(strategy, "g", again_q, again_c) == first


@pytest.mark.parametrize("name", sorted(COVERING))
@PROPS
@given(view=views(max_queues=32, max_consumers=8))
def test_whole_group_equals_per_client(name: str, view) -> None:
    mq_all, cid_all = view
    cid_all = _ids_for(name, cid_all)
    strategy = COVERING[name]
    whole = assign_all(strategy, "g", mq_all, cid_all)
    assert whole == {cid: strategy.allocate("g", cid, mq_all, cid_all) for cid in cid_all}


@PROPS
@given(view=views(), cut=st.integers(0, 11), seed=st.integers(0, 1000))
def test_machine_room_shares_the_eligible_queues_evenly(view, cut: int, seed: int) -> None:
    mq_all, cid_all = view
    strategy = machine_room(["room0"])
    shares = assign_all(strategy, "g", mq_all, cid_all)
    eligible = [q for q in mq_all if q.broker_name.startswith("room0@")]
    assert ownership(shares, eligible, cid_all).ok
    assert imbalance(shares)[0] <= 1 or len(eligible) < len(cid_all)


@PROPS
@given(view=views(), seed=st.integers(0, 2**32 - 1), leave=st.integers(0, 3),
       join=st.integers(0, 3))
def test_sticky_moves_no_more_than_avg_and_nothing_when_nothing_changed(
        view, seed: int, leave: int, join: int) -> None:
    mq_all, cid_all = view
    before = assign_all(sticky(), "g", mq_all, cid_all)
    assert moved(before, assign_all(sticky(), "g", mq_all, cid_all, before)) == 0
    rng = random.Random(seed)
    members = [c for c in cid_all if rng.random() > leave / 10] or cid_all[:1]
    members = sorted(set(members) | {f"10.9.9.{i}@new" for i in range(join)})
    after_sticky = assign_all(sticky(), "g", mq_all, members, before)
    after_avg = assign_all(avg(), "g", mq_all, members)
    assert ownership(after_sticky, mq_all, members).ok
    assert imbalance(after_sticky)[0] <= 1 or len(members) > len(mq_all)
    assert moved(before, after_sticky) <= moved(before, after_avg)


# ------------------------------------------------------------------ pitfalls as examples
def _q(n: int) -> list[MessageQueue]:
    return [MessageQueue("T", "broker-a", i) for i in range(n)]


def test_duplicate_client_ids_leave_queues_unowned() -> None:
    """Spec 3.2 / 9.1: cidAll [a, a, b], 7 queues: both a's take [0, 1, 2], 3 and 4 are lost."""
    mq_all = _q(7)
    shares = {cid: avg().allocate("g", cid, mq_all, ["a", "a", "b"]) for cid in ("a", "b")}
    assert [q.queue_id for q in shares["a"]] == [0, 1, 2]
    assert [q.queue_id for q in shares["b"]] == [5, 6]
    assert [q.queue_id for q in ownership(shares, mq_all).unowned] == [3, 4]


def test_more_consumers_than_queues_leaves_the_last_ones_idle() -> None:
    shares = assign_all(avg(), "g", _q(3), [f"c{i}" for i in range(7)])
    assert [cid for cid, qs in shares.items() if not qs] == ["c3", "c4", "c5", "c6"]


def test_argument_checks_use_upstreams_messages() -> None:
    with pytest.raises(AllocationArgumentError, match=r"^currentCID is empty$"):
        avg().allocate("g", "", _q(2), ["a"])
    with pytest.raises(AllocationArgumentError, match=r"^mqAll is null or mqAll empty$"):
        avg().allocate("g", "a", [], ["a"])
    with pytest.raises(AllocationArgumentError, match=r"^cidAll is null or cidAll empty$"):
        avg().allocate("g", "a", _q(2), None)
    assert avg().allocate("g", " ", _q(2), [" "]) == _q(2)       # a blank id is accepted
    with pytest.raises(AllocationArgumentError, match=r"^illegal virtualNodeCnt :-1$"):
        make("CONSISTENT_HASH", virtual_nodes=-1)


def test_pop_default_lets_everybody_pop_every_broker() -> None:
    got = allocate4pop(avg(), "g", "x", _q(3), ["a", "b"], -1)
    assert got == [MessageQueue("T", "broker-a", -1)] * 3
    shares = allocate4pop(avg(), "g", "a", _q(8), ["a", "b", "c", "d"], 1)
    assert [q.queue_id for q in shares] == [0, 1, 2, 3]          # own share + the next one's


def test_comparison_table_favours_sticky_on_movement() -> None:
    from rocketlb_core.consumer.compare import comparison, markdown

    rows = comparison()
    by = {(r.sequence, r.strategy): r for r in rows}
    for sequence in {r.sequence for r in rows}:
        assert by[(sequence, "STICKY")].moved_total <= by[(sequence, "AVG")].moved_total
        assert by[(sequence, "STICKY")].worst_spread <= 1
        assert by[(sequence, "CONSISTENT_HASH_BOUNDED(0.25)")].worst_spread <= \
            by[(sequence, "CONSISTENT_HASH")].worst_spread
    assert markdown(rows).count("\n") == len(rows) + 1
