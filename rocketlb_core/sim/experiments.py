"""Experiments made of several simulator runs (spec 5.3, 4.2, 4.5).

``crash_timing`` answers "how long do a crashed consumer's queues wait?" as a function of *when*
it died within its heartbeat period. Each broker drops the vanished host's channel by whichever
comes first: its idle close, 120 s after the channel's last traffic (the host's last pull, or the
broker's answer to a pull it held), which notifies the group, so the survivors move at once; or
its 10 s scan of channels whose last heartbeat is over 120 s old, which notifies nobody, so the
survivors move at their next periodic rebalance (20 s). The wait therefore depends on the phase
of the heartbeat, the scan and the rebalance timers, and a single run shows only one point of it.

>>> from rocketlb_core import data_path
>>> from rocketlb_core.sim.scenario import load
>>> scenario = load(data_path("scenarios", "crash-without-unregister.toml"))
>>> rows = crash_timing(scenario, "GID_crash", "consumer-2", [1_000, 29_000])
>>> [(r["after_heartbeat_s"], r["dropped_by"]) for r in rows]
[(1.0, 'idle close'), (29.0, 'scan')]
>>> rows[0]["owned_again_s"] > rows[1]["owned_again_s"]
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from rocketlb_core.conditions import HEARTBEAT_MS
from rocketlb_core.sim.scenario import EventSpec, Scenario
from rocketlb_core.sim.world import run_scenario

# Long enough for the slowest case: 120 s of silence after a pull held 15 s, or 30 s to the next
# heartbeat, 120 s, a 10 s scan and a 20 s rebalance period; and margin.
_AFTER_CRASH_MS = 200_000


def crash_timing(scenario: Scenario, group: str, consumer: str, offsets_ms: Iterable[int],
                 heartbeat_index: int = 2, seed: int = 0, mode: str = "host"
                 ) -> list[dict[str, Any]]:
    """For each offset, run ``scenario`` with ``consumer`` crashing (no unregister) that many ms
    after its ``heartbeat_index``-th heartbeat (heartbeats run from its start every 30 s); other
    ``consumer_crash`` events of that consumer are removed. Per run: when the last broker dropped
    it and when every queue of ``group`` had exactly one live owner again, both in seconds after
    the crash (``None`` if it did not happen before the run ended), and how the last broker
    dropped it (``dropped_by``: ``idle close``, ``scan``, ``closed``). ``mode``: ``host`` (the host
    vanishes: the channel expires) or ``process`` (killed on a live host: the connection closes,
    chapter 10 measures it on a real cluster)

    Offsets must lie strictly inside a heartbeat period (0 < offset < 30000), so that the crash
    and a heartbeat never share an instant."""
    member = next((m for g in scenario.groups if g.name == group for m in g.members
                   if m.name == consumer), None)
    if member is None:
        raise ValueError(f"{scenario.path}: no consumer {consumer!r} in group {group!r}")
    rows = []
    for offset in offsets_ms:
        if not 0 < offset < HEARTBEAT_MS:
            raise ValueError(f"offset {offset} ms is not inside a heartbeat period "
                             f"(0 < offset < {HEARTBEAT_MS})")
        crash_ms = member.start_ms + heartbeat_index * HEARTBEAT_MS + offset
        events = tuple(e for e in scenario.events
                       if not (e.kind == "consumer_crash" and e.args.get("consumer") == consumer))
        args = {"consumer": consumer} if mode == "host" else {"consumer": consumer, "mode": mode}
        events = tuple(sorted((*events, EventSpec(crash_ms, "consumer_crash", args)),
                              key=lambda e: e.at_ms))
        end = max(scenario.duration_ms, crash_ms + _AFTER_CRASH_MS)
        run = replace(scenario, events=events, duration_ms=end, drain_ms=0)
        journal = run_scenario(run, seed).world.env.journal
        drops = [r for r in journal if r.kind in ("channel_expired", "channel_closed")
                 and r.fields.get("channel") == consumer and r.time_ms >= crash_ms]
        dropped = [r.time_ms for r in drops]
        owned = next((r.time_ms for r in journal
                      if r.kind == "ownership" and r.entity == group and r.time_ms > crash_ms
                      and all(len(who) == 1 for who in r.fields["owners"].values())), None)
        rows.append({"after_heartbeat_s": offset / 1000,
                     "dropped_s": (max(dropped) - crash_ms) / 1000 if dropped else None,
                     "owned_again_s": (owned - crash_ms) / 1000 if owned is not None else None,
                     "dropped_by": (drops[-1].fields.get("by", "closed") if drops else None)})
    return rows
