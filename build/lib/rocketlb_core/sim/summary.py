"""A run's summary, computed from its records alone: the journal (``Environment.journal``)
and the message ledger (``rocketlb_core.sim.ledger``), never from an entity's private state
(house style 10), so anything that reads the same records (a chart, a test, a replay of a
recorded run) can recompute it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from rocketlb_core.sim.kernel import JournalRecord
from rocketlb_core.sim.ledger import Ledger, OwnershipTracker
from rocketlb_core.sim.scenario import Scenario

MEMBER_STATE = {"consumer_start": True, "consumer_crash": False, "consumer_shutdown": False}


def _percentile(values: list[int], p: float) -> int:
    if not values:
        return 0
    s = sorted(values)
    return s[min(len(s) - 1, int(p * (len(s) - 1) + 0.5))]


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
    msgs = ledger.messages
    stored = [m for m in msgs if m.queue is not None]
    failed = [m for m in msgs if m.status == "FAILED"]
    by_msg: dict[int, Counter[str]] = defaultdict(Counter)
    for _, msg, client in ledger.deliveries:
        by_msg[msg][client] += 1
    groups: dict[str, Any] = {}
    totals = Counter[str]()
    for g in sc.groups:
        names = {m.name for m in g.members}
        queues: dict[str, dict[str, int]] = {}
        consumed = unconsumed = dups = 0
        reach: list[int] = []
        for m in stored:
            assert m.queue is not None
            if m.queue.topic != g.topic:
                continue
            got = {c: n for c, n in by_msg.get(m.msg_id, {}).items() if c in names}
            q = queues.setdefault(m.queue.short(), {"stored": 0, "consumed": 0, "unconsumed": 0})
            q["stored"] += 1
            if got:
                consumed += 1
                q["consumed"] += 1
            else:
                unconsumed += 1
                q["unconsumed"] += 1
            reach.append(len(got))
            if g.model == "BROADCASTING":
                dups += sum(n - 1 for n in got.values())
            else:
                dups += sum(got.values()) - 1 if got else 0
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
    send_ms = [m.send_ms for m in stored]
    return {
        "scenario": sc.name, "seed": seed, "line": sc.line.value,
        "duration_ms": sc.duration_ms, "drain_ms": sc.drain_ms,
        "messages_sent": len(msgs), "messages_stored": len(stored),
        "messages_failed": len(failed),
        "failures_by_error": dict(sorted(Counter(m.error or "?" for m in failed).items())),
        "messages_consumed_unique": totals["messages_consumed_unique"],
        "messages_unconsumed": totals["messages_unconsumed"],
        "duplicate_deliveries": totals["duplicate_deliveries"],
        "stored_by_broker": dict(sorted(Counter(m.queue.broker_name for m in stored
                                                if m.queue).items())),
        "producer_backlog": sum(run_end["producer_backlog"].values()),
        "send_retries": sum(max(0, m.attempts - 1) for m in msgs),
        "send_ms_p50": _percentile(send_ms, 0.5), "send_ms_p99": _percentile(send_ms, 0.99),
        "send_ms_max": max(send_ms, default=0),
        "events_processed": run_end["events_processed"],
        "groups": groups,
    }


