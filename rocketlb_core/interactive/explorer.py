"""The rebalance explorer (book chapters 4 and 6): run a shipped scenario in the simulator, then
look at any instant of it (spec sections 4, 7 and 9).

At time ``t`` a view shows, for the scenario's first consumer group:

* membership: which consumers each broker lists for the group (its consumer table, changed by
  registrations, unregistrations and expired channels);
* each consumer's view: alive or not, how many consumer ids its last rebalance saw, and the
  queues it holds (its process-queue table after that rebalance);
* ownership: per queue, who consumes it, since when and until when that stays so, and whether
  that is one owner, nobody (``unowned``) or several at once (``shared``);
* the journal's last events up to ``t``.

A request::

    {"scenario": "crash-without-unregister",
     "toml": "<the scenario file's text>", "seed": 0, "t_ms": 45000}

The scenario runs once per session (name, text and seed); moving the scrubber only looks up.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

from rocketlb_core.interactive.fields import RequestError, integer, table
from rocketlb_core.limits import MAX_REQUEST_MESSAGES, MAX_REQUEST_TIMER_FIRINGS
from rocketlb_core.sim.kernel import JournalRecord
from rocketlb_core.sim.scenario import loads, planned_messages, timer_firings
from rocketlb_core.sim.world import run_scenario

SCENARIOS = ("scale-out-past-queues", "crash-without-unregister", "duplicate-client-id",
             "partition-consumer", "graceful-shutdown", "rolling-restart")
"""The shipped scenarios the explorer offers (``data/scenarios/<name>.toml``)."""
ALIVE = {"consumer_start": True, "consumer_crash": False, "consumer_shutdown": False}
SHOWN = ("scenario_event", "consumer_start", "consumer_crash", "consumer_shutdown",
         "consumer_registered", "consumer_unregistered", "channel_expired", "rebalance",
         "rebalance_skipped")
"""The journal kinds the explorer lists as events (not lag samples or ownership)."""
EVENTS_SHOWN = 8


def _interval_state(owners: list[str]) -> str:
    return "unowned" if not owners else "one owner" if len(owners) == 1 else "shared"


class Explorer:
    """One scenario run and its lookups."""

    def __init__(self, name: str, text: str, seed: int) -> None:
        scenario = loads(text, f"{name}.toml")
        firings = sum(timer_firings(scenario).values())
        messages = planned_messages(scenario.producers, scenario.duration_ms)
        if firings > MAX_REQUEST_TIMER_FIRINGS or messages > MAX_REQUEST_MESSAGES:
            raise RequestError(
                f"scenario {name}: about {firings:,} timer firings and {messages:,.0f} messages, "
                f"more than a live figure runs in one request ({MAX_REQUEST_TIMER_FIRINGS:,} and "
                f"{MAX_REQUEST_MESSAGES:,}); run it with rocketlb simulate instead")
        if not scenario.groups:
            raise RequestError(f"scenario {name}: it has no consumer group to explore")
        self.key = (name, text, seed)
        self.group = scenario.groups[0].name
        self.end_ms = scenario.duration_ms + scenario.drain_ms
        result = run_scenario(scenario, seed)
        self.brokers = sorted(result.world.brokers)
        self.consumers = [c.name for c in result.world.consumers.get(self.group, [])]
        self.journal: list[JournalRecord] = result.world.env.journal
        self.times = [r.time_ms for r in self.journal]
        snaps = [(r.time_ms, r.fields["owners"]) for r in self.journal
                 if r.kind == "ownership" and r.entity == self.group]
        # collapse snapshots taken at the same instant: the last one holds
        self.snaps: list[tuple[int, dict[str, list[str]]]] = []
        for t, owners in snaps:
            if self.snaps and self.snaps[-1][0] == t:
                self.snaps[-1] = (t, owners)
            else:
                self.snaps.append((t, owners))
        self.snap_times = [t for t, _ in self.snaps]
        self.ticks = sorted({r.time_ms for r in self.journal if r.kind in SHOWN}
                            | set(self.snap_times))

    def _interval(self, queue: str, i: int) -> tuple[int, int]:
        """The span around snapshot ``i`` during which ``queue`` keeps the same owners."""
        who = self.snaps[i][1].get(queue, [])
        lo = i
        while lo > 0 and self.snaps[lo - 1][1].get(queue, []) == who:
            lo -= 1
        hi = i + 1
        while hi < len(self.snaps) and self.snaps[hi][1].get(queue, []) == who:
            hi += 1
        return self.snaps[lo][0], self.snaps[hi][0] if hi < len(self.snaps) else self.end_ms

    def at(self, t: int) -> dict[str, Any]:
        upto = bisect.bisect_right(self.times, t)
        members: dict[str, set[str]] = {b: set() for b in self.brokers}
        alive = {c: False for c in self.consumers}
        view: dict[str, int | None] = {c: None for c in self.consumers}
        held: dict[str, set[str]] = {c: set() for c in self.consumers}
        events = []
        for r in self.journal[:upto]:
            f = r.fields
            if r.kind in ("consumer_registered", "consumer_unregistered", "channel_expired"):
                if f.get("group") == self.group and r.entity in members:
                    if r.kind == "consumer_registered":
                        members[r.entity].add(f["channel"])
                    else:
                        members[r.entity].discard(f["channel"])
            elif r.kind in ALIVE and r.entity in alive:
                alive[r.entity] = ALIVE[r.kind]
                if not ALIVE[r.kind]:
                    held[r.entity] = set()
            elif r.kind == "rebalance" and r.entity in held:
                view[r.entity] = f["view"]
                held[r.entity] = (held[r.entity] | set(f["added"])) - set(f["dropped"])
            if r.kind in SHOWN:
                events.append(r)
        i = bisect.bisect_right(self.snap_times, t) - 1
        queues = []
        if i >= 0:
            for q, who in sorted(self.snaps[i][1].items()):
                since, until = self._interval(q, i)
                queues.append({"queue": q, "owners": list(who), "state": _interval_state(who),
                               "since_ms": since, "until_ms": until})
        return {
            "t_ms": t, "end_ms": self.end_ms, "group": self.group, "ticks": self.ticks,
            "membership": {b: sorted(m) for b, m in members.items()},
            "clients": [{"name": c, "alive": alive[c], "view": view[c],
                         "holds": sorted(held[c])} for c in self.consumers],
            "queues": queues,
            "unowned": [q["queue"] for q in queues if q["state"] == "unowned"],
            "shared": [q["queue"] for q in queues if q["state"] == "shared"],
            "events": [{"t_ms": r.time_ms, "kind": r.kind, "who": r.entity,
                        "details": ", ".join(f"{k}={v}" for k, v in sorted(r.fields.items()))}
                       for r in events[-EVENTS_SHOWN:]],
        }


def step(session: Explorer | None, request: Mapping[str, Any]) -> tuple[Explorer, dict[str, Any]]:
    """One interaction (see the module docstring)."""
    req = table(request, "request")
    name, text = req.get("scenario"), req.get("toml")
    if not isinstance(name, str) or not isinstance(text, str):
        raise RequestError("request: expected a scenario name and its TOML text")
    seed = integer(req, "seed", "request", 0, low=0, high=2**31 - 1)
    if session is None or session.key != (name, text, seed):
        session = Explorer(name, text, seed)
    t = integer(req, "t_ms", "request", 0, low=0, high=session.end_ms)
    return session, session.at(t)
