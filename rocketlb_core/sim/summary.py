"""A run's summary, computed from its records alone: the journal (``Environment.journal``)
and the message ledger (``rocketlb_core.sim.ledger``), never from an entity's private state
(house style 10), so anything that reads the same records (a chart, a test, a replay of a
recorded run) can recompute it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from rocketlb_core.sim.kernel import JournalRecord
from rocketlb_core.sim.ledger import Ledger, OwnershipTracker, min_cover, union_size
from rocketlb_core.sim.scenario import Scenario

MEMBER_STATE = {"consumer_start": True, "consumer_crash": False, "consumer_shutdown": False}


def _percentile(histogram: Counter[int], p: float) -> int:
    """The value at rank ``round(p * (n - 1))`` of the ``n`` values ``histogram`` counts."""
    n = histogram.total()
    if not n:
        return 0
    rank = min(n - 1, int(p * (n - 1) + 0.5))
    for value in sorted(histogram):
        rank -= histogram[value]
        if rank < 0:
            return value
    raise AssertionError("unreachable: the ranks add up to n")


def ownership(journal: Sequence[JournalRecord], group: str, count_double: bool,
              end_ms: int) -> tuple[OwnershipTracker, dict[str, list[str]]]:
    """The group's ``ownership`` records replayed into a tracker (unowned and double-owned time
    per queue, to ``end_ms``), and the owners of the last record."""
    tracker = OwnershipTracker(count_double=count_double)
    last: dict[str, list[str]] = {}
    for r in journal:
        if r.kind == "ownership" and r.entity == group:
            last = r.fields["owners"]
            tracker.update(r.time_ms, set(last), {q: frozenset(o) for q, o in last.items()})
    tracker.finish(end_ms)
    return tracker, last


def summarise(sc: Scenario, seed: int, journal: Sequence[JournalRecord],
              ledger: Ledger) -> dict[str, Any]:
    """The summary of a run of ``sc`` with ``seed`` (``rocketlb simulate`` prints it)."""
    end = sc.duration_ms + sc.drain_ms
    alive: dict[str, bool] = {}
    run_end: dict[str, Any] = {}
    for r in journal:
        if r.kind in MEMBER_STATE:
            alive[r.entity] = MEMBER_STATE[r.kind]
        elif r.kind == "run_end":
            run_end = r.fields
    groups: dict[str, Any] = {}
    totals = Counter[str]()
    for g in sc.groups:
        names = {m.name for m in g.members}
        queues: dict[str, dict[str, int]] = {}
        consumed = unconsumed = dups = 0
        reach: list[int] = []
        for mq, acct in ledger.queues.items():
            if mq.topic != g.topic or not acct.stored:
                continue
            read = {c: s for c, s in acct.read.items() if c in names}
            unique = union_size(read.values())
            consumed += unique
            unconsumed += acct.stored - unique
            q = queues.setdefault(mq.short(), {"stored": 0, "consumed": 0, "unconsumed": 0})
            q["stored"] += acct.stored
            q["consumed"] += unique
            q["unconsumed"] += acct.stored - unique
            reach.append(min_cover(read.values(), acct.stored))
            if g.model == "BROADCASTING":        # each member should read each message once
                dups += sum(acct.deliveries[c] - len(s) for c, s in read.items())
            else:                                # the group should read each message once
                dups += sum(acct.deliveries[c] for c in read) - unique
        tracker, owners = ownership(journal, g.name, g.model == "CLUSTERING", end)
        for key in set(tracker.unowned_ms) | set(tracker.double_ms) | set(tracker.owners):
            q = queues.setdefault(key, {"stored": 0, "consumed": 0, "unconsumed": 0})
            q["unowned_ms"] = tracker.unowned_ms[key]
            q["double_owned_ms"] = tracker.double_ms[key]
        owning = {name for who in owners.values() for name in who}
        moves = [[r.time_ms, r.entity, len(r.fields["added"]), len(r.fields["dropped"])]
                 for r in journal if r.kind == "rebalance" and r.entity in names]
        groups[g.name] = {
            "messages_consumed_unique": consumed, "messages_unconsumed": unconsumed,
            "duplicate_deliveries": dups,
            "unconsumed_queues": sorted(k for k, v in queues.items() if v["unconsumed"]),
            "queues": dict(sorted(queues.items())),
            "rebalances": len(moves), "queues_moved": sum(m[2] for m in moves),
            "rebalance_moves": moves,
            "idle_consumers_at_end": sum(1 for m in g.members
                                         if alive.get(m.name) and m.name not in owning),
            "members_per_message_min": min(reach, default=0),
            "unowned_ms_total": sum(tracker.unowned_ms.values()),
            "double_owned_ms_total": sum(tracker.double_ms.values()),
        }
        totals.update({k: groups[g.name][k] for k in ("messages_consumed_unique",
                                                       "messages_unconsumed",
                                                       "duplicate_deliveries")})
    return {
        "scenario": sc.name, "seed": seed, "line": sc.line.value,
        "duration_ms": sc.duration_ms, "drain_ms": sc.drain_ms,
        "messages_sent": ledger.sent, "messages_stored": ledger.stored,
        "messages_failed": ledger.failed,
        "failures_by_error": dict(sorted(ledger.errors.items())),
        "messages_consumed_unique": totals["messages_consumed_unique"],
        "messages_unconsumed": totals["messages_unconsumed"],
        "duplicate_deliveries": totals["duplicate_deliveries"],
        "stored_by_broker": dict(sorted(ledger.stored_by_broker.items())),
        "producer_backlog": sum(run_end["producer_backlog"].values()),
        "send_retries": ledger.retries,
        "send_ms_p50": _percentile(ledger.send_ms, 0.5),
        "send_ms_p99": _percentile(ledger.send_ms, 0.99),
        "send_ms_max": max(ledger.send_ms, default=0),
        "events_processed": run_end["events_processed"],
        "groups": groups,
    }


