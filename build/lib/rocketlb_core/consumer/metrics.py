"""Invariants and metrics of an assignment (house style 11). Used by the tests, the simulator
and the book. An assignment maps client id -> queues.

>>> from rocketlb_core.model import MessageQueue
>>> q = [MessageQueue("T", "b", i) for i in range(4)]
>>> a = {"c1": q[:3], "c2": q[3:]}
>>> imbalance(a), moved(a, {"c1": q[:2], "c2": q[2:]})
((2, 1.5), 1)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rocketlb_core.model import MessageQueue

AssignmentView = Mapping[str, Sequence[MessageQueue]]


@dataclass(frozen=True)
class OwnershipReport:
    """What is wrong with an assignment under one view: nothing, when every list is empty."""

    unowned: tuple[MessageQueue, ...]
    multiply_owned: tuple[MessageQueue, ...]
    foreign: tuple[MessageQueue, ...]            # assigned but not in the topic's queues
    strangers: tuple[str, ...]                   # owners that are not in the group

    @property
    def ok(self) -> bool:
        return not (self.unowned or self.multiply_owned or self.foreign or self.strangers)


def ownership(assignment: AssignmentView, mq_all: Iterable[MessageQueue],
              cid_all: Iterable[str] | None = None) -> OwnershipReport:
    """Check that every queue is owned exactly once and owners belong to the group."""
    counts = Counter(q for qs in assignment.values() for q in qs)
    universe = list(dict.fromkeys(mq_all))
    members = set(cid_all) if cid_all is not None else set(assignment)
    return OwnershipReport(
        unowned=tuple(q for q in universe if counts[q] == 0),
        multiply_owned=tuple(sorted(q for q, n in counts.items() if n > 1)),
        foreign=tuple(sorted(q for q in counts if q not in set(universe))),
        strangers=tuple(sorted(c for c, qs in assignment.items() if qs and c not in members)),
    )


def loads(assignment: AssignmentView) -> dict[str, int]:
    return {cid: len(qs) for cid, qs in assignment.items()}


def imbalance(assignment: AssignmentView) -> tuple[int, float]:
    """(max minus min, max over mean) of the queue counts; (0, 1.0) for an empty assignment."""
    counts = list(loads(assignment).values())
    if not counts or sum(counts) == 0:
        return 0, 1.0
    mean = sum(counts) / len(counts)
    return max(counts) - min(counts), max(counts) / mean


def owners(assignment: AssignmentView) -> dict[MessageQueue, str]:
    """Queue -> owner (the first, if an assignment owns a queue twice)."""
    out: dict[MessageQueue, str] = {}
    for cid, qs in assignment.items():
        for q in qs:
            out.setdefault(q, cid)
    return out


def movement(before: AssignmentView, after: AssignmentView) -> set[MessageQueue]:
    """Queues whose owner changed, including queues that gained or lost their only owner."""
    a, b = owners(before), owners(after)
    return {q for q in a.keys() | b.keys() if a.get(q) != b.get(q)}


def moved(before: AssignmentView, after: AssignmentView) -> int:
    """How many queues changed owner (``len(movement(...))``)."""
    return len(movement(before, after))


def idle_consumers(assignment: AssignmentView) -> list[str]:
    """Members with nothing to consume (more consumers than queues, or a skewed strategy)."""
    return sorted(cid for cid, qs in assignment.items() if not qs)


def duplicate_client_ids(cid_all: Iterable[str]) -> dict[str, int]:
    """Ids listed more than once in a group's view (spec 9.1: the duplicate-client-id trap)."""
    return {cid: n for cid, n in Counter(cid_all).items() if n > 1}
