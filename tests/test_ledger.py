"""The simulator's ledger keeps offsets in ranges (``rocketlb_core.sim.ledger``): checked here
against the obvious model, a Python set of offsets per consumer, on random delivery histories,
and against the summary of a run with the per-message counts it replaced."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketlb_core.model import MessageQueue
from rocketlb_core.sim.ledger import Ledger, Offsets, min_cover, union_size

ranges = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 12)), max_size=25)


@given(ranges)
def test_offsets_hold_exactly_the_added_ranges(adds: list[tuple[int, int]]) -> None:
    got, want = Offsets(), set[int]()
    for lo, n in adds:
        got.add(lo, lo + n)
        want |= set(range(lo, lo + n))
        assert len(got) == len(want)
        flat = {x for s, e in got.ranges() for x in range(s, e)}
        assert flat == want
        # sorted, disjoint and not touching: the representation is canonical
        pairs = got.ranges()
        assert all(s < e for s, e in pairs)
        assert all(a[1] < b[0] for a, b in pairwise(pairs))


@given(st.lists(ranges, min_size=0, max_size=4), st.integers(1, 80))
def test_union_and_least_cover_match_sets(members: list[list[tuple[int, int]]], n: int
                                          ) -> None:
    sets, plain = [], []
    for adds in members:
        s, p = Offsets(), set[int]()
        for lo, k in adds:
            lo, hi = min(lo, n), min(lo + k, n)
            s.add(lo, hi)
            p |= set(range(lo, hi))
        sets.append(s)
        plain.append(p)
    assert union_size(sets) == len(set().union(*plain))
    assert min_cover(sets, n) == min(sum(x in p for p in plain) for x in range(n))


@settings(max_examples=200)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 40), st.integers(0, 9)),
                max_size=30), st.integers(1, 50))
def test_ledger_counts_duplicates_as_deliveries_beyond_the_unique(
        reads: list[tuple[str, int, int]], stored: int) -> None:
    mq = MessageQueue("T", "broker-a", 0)
    ledger = Ledger()
    for k in range(stored):
        ledger.record_send("p", k, "SEND_OK", mq, k, 1, 3)
    per_msg: Counter[int] = Counter()
    for who, first, n in reads:
        first, n = min(first, stored), min(n, stored - min(first, stored))
        ledger.record_delivery(0, who, mq, first, n)
        per_msg.update(range(first, first + n))
    acct = ledger.queues[mq]
    unique = union_size(acct.read.values())
    assert unique == len(per_msg)
    assert sum(acct.deliveries.values()) - unique == sum(c - 1 for c in per_msg.values())
    assert ledger.undelivered() == stored - len(per_msg)


def test_the_ledger_refuses_what_a_broker_could_not_have_done() -> None:
    mq = MessageQueue("T", "broker-a", 0)
    ledger = Ledger()
    ledger.record_send("p", 0, "SEND_OK", mq, 0, 1, 3)
    with pytest.raises(ValueError, match="next offset is 1"):
        ledger.record_send("p", 1, "SEND_OK", mq, 5, 1, 3)
    with pytest.raises(ValueError, match=r"offsets \[0, 2\) to c: only 1 are stored"):
        ledger.record_delivery(0, "c", mq, 0, 2)
