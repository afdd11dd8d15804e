"""The live recorder without a cluster (issue 32): it keeps the scenario's clock (every event at
``t0`` + ``at_s`` whatever the others do, one target's events in order), says when an event was
late or fails with ``strict``, refuses event orders that make no sense, and reads the lateness of
recordings made before it kept time."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.live import record as rec
from rocketlb_core.live.jars import LiveError
from rocketlb_core.live.record import LiveEvent, lateness, load_scenario, parse_scenario, run_events
from rocketlb_core.sim.scenario import ScenarioError


def _run(events: list[LiveEvent], slow: dict[str, float], **kw: object) -> list[dict[str, object]]:
    """``run_events`` with actions that sleep ``slow[action target]`` seconds."""

    def act(e: LiveEvent) -> None:
        time.sleep(slow.get(f"{e.action} {e.target}", 0.0))

    t0, t0_ms = time.monotonic(), rec._now_ms()
    return run_events(events, act, t0=t0, t0_ms=t0_ms, **kw)  # type: ignore[arg-type]


def test_a_blocking_action_delays_no_other_target() -> None:
    events = [LiveEvent(0.0, "leave", "c1"), LiveEvent(0.2, "pause", "broker-a"),
              LiveEvent(0.4, "resume", "broker-a"), LiveEvent(0.6, "crash", "c2")]
    rows = _run(events, {"leave c1": 1.5})
    assert [(r["action"], r["target"]) for r in rows] == [(e.action, e.target) for e in events]
    for r in rows:
        assert r["planned_ms"] == rows[0]["planned_ms"] + round(r["at_s"] * 1000)  # type: ignore
        assert 0 <= r["late_ms"] < 300, r                                         # type: ignore
        assert r["late_ms"] == r["wall_ms"] - r["planned_ms"]                     # type: ignore
        assert "waited_for" not in r
    assert rows[0]["done_ms"] - rows[0]["wall_ms"] >= 1400                        # type: ignore
    assert rows[3]["wall_ms"] < rows[0]["done_ms"]                                # type: ignore


def test_one_targets_events_keep_their_order_and_say_why_they_waited(capsys) -> None:
    events = [LiveEvent(0.0, "join", "c1"), LiveEvent(0.1, "leave", "c1"),
              LiveEvent(0.2, "pause", "broker-a")]
    rows = _run(events, {"join c1": 1.4}, warn=lambda m: print(m))
    join, leave, pause = rows
    assert leave["wall_ms"] >= join["done_ms"]                                    # type: ignore
    assert leave["waited_for"] == "join c1 at 0 s"
    assert leave["late_ms"] > rec.MAX_LATE_MS                                     # type: ignore
    assert pause["late_ms"] < 300                                                 # type: ignore
    out = capsys.readouterr().out
    assert re.search(r"warning: event 1 \(leave c1 at 0.1 s\) started \d\.\d s late", out), out
    assert "it waited for 'join c1 at 0 s' of the same target" in out
    assert [x["event"] for x in lateness({"t0_ms": 0, "events": rows})["late"]] == [1]


def test_strict_fails_naming_the_late_event_and_starts_nothing_later() -> None:
    ran: list[str] = []
    lock = threading.Lock()

    def act(e: LiveEvent) -> None:
        with lock:
            ran.append(f"{e.action} {e.target}")
        if e.action == "join":
            time.sleep(1.3)

    events = [LiveEvent(0.0, "join", "c1"), LiveEvent(0.1, "leave", "c1"),
              LiveEvent(2.0, "pause", "broker-a")]
    with pytest.raises(LiveError, match=r"--strict: event 1 \(leave c1 at 0.1 s\) started "
                                        r"1\.\d s late .*MAX_LATE_MS = 1000 ms"):
        run_events(events, act, t0=time.monotonic(), t0_ms=rec._now_ms(), strict=True)
    assert ran == ["join c1"]


def test_a_failed_action_is_an_error_naming_its_event() -> None:
    def act(e: LiveEvent) -> None:
        if e.target == "broker-b":
            raise LiveError("broker-b is not running")

    events = [LiveEvent(0.0, "pause", "broker-b"), LiveEvent(0.5, "pause", "broker-a")]
    with pytest.raises(LiveError, match=r"event 0 \(pause broker-b at 0 s\) failed: broker-b"):
        run_events(events, act, t0=time.monotonic(), t0_ms=rec._now_ms())


def test_snapshots_are_taken_off_the_clock_and_share_a_reading_when_queued() -> None:
    readings = []

    def read() -> dict[str, object]:
        readings.append(1)
        time.sleep(0.3)
        return {"wall_ms": len(readings), "members": {}}

    snaps = rec._Snapshots(read)
    t = time.monotonic()
    for i in range(4):
        snaps.request(f"join c{i}", i)
    assert time.monotonic() - t < 0.1                   # requesting never blocks
    taken = snaps.close()
    assert [s["before"] for s in taken] == [f"join c{i}" for i in range(4)]
    assert [s["planned_ms"] for s in taken] == [0, 1, 2, 3]
    assert len(readings) <= 2                           # the queued three shared one


SCENARIO = """name = "x"
topic = "T"
brokers = 2
[[consumers]]
name = "c1"
group = "G"
"""


@pytest.mark.parametrize(("events", "message"), [
    ([("resume", "broker-a")], "resume broker-a at 1 s: it is running then"),
    ([("restart", "broker-a")], "restart broker-a at 1 s: it is running then"),
    ([("kill", "broker-a"), ("resume", "broker-a")], "resume broker-a at 2 s: it is killed"),
    ([("kill", "broker-a"), ("kill", "broker-a")], "kill broker-a at 2 s: it is killed"),
    ([("pause", "broker-a"), ("pause", "broker-a")], "pause broker-a at 2 s: it is paused"),
    ([("pause", "broker-a"), ("restart", "broker-a")], "restart broker-a at 2 s: it is paused"),
    ([("leave", "c1")], "leave c1 at 1 s: it is not started then"),
    ([("join", "c1"), ("join", "c1")], "join c1 at 2 s: it is running then"),
    ([("join", "c1"), ("crash", "c1"), ("leave", "c1")], "leave c1 at 3 s: it is gone then"),
])
def test_events_that_make_no_sense_for_their_target_are_refused(
        events: list[tuple[str, str]], message: str) -> None:
    text = SCENARIO + "".join(f'[[events]]\nat_s = {i + 1}\naction = "{a}"\ntarget = "{t}"\n'
                              for i, (a, t) in enumerate(events))
    with pytest.raises(ScenarioError, match=rf"<t>: events\[{len(events) - 1}\]: {message}"):
        parse_scenario(text, "<t>")


def test_events_that_make_sense_are_accepted() -> None:
    ok = [("pause", "broker-a"), ("kill", "broker-a"), ("restart", "broker-a"),
          ("pause", "broker-a"), ("resume", "broker-a"), ("join", "c1"), ("crash", "c1")]
    text = SCENARIO + "".join(f'[[events]]\nat_s = {i}\naction = "{a}"\ntarget = "{t}"\n'
                              for i, (a, t) in enumerate(ok))
    assert len(parse_scenario(text).events) == len(ok)
    for path in sorted((data_path("scenarios") / "live").glob("*.toml")):
        load_scenario(path)


@pytest.mark.parametrize("name", ["producer-outage-4", "producer-outage-5", "membership-day-4",
                                  "membership-day-5"])
def test_lateness_of_the_shipped_recordings_made_before_the_clock(name: str) -> None:
    """The shipped recordings ran their events one after another and have no ``planned_ms``:
    their lateness is computed from ``t0_ms`` and ``at_s`` (they are read, never rewritten)."""
    meta = json.loads((Path(data_path("live")) / name / "recording.json").read_text())
    assert all("planned_ms" not in e for e in meta["events"])
    got = lateness(meta)
    worst = max(e["wall_ms"] - meta["t0_ms"] - round(e["at_s"] * 1000) for e in meta["events"])
    assert got["max_late_ms"] == max(0, worst)
    assert [x["event"] for x in got["late"]] == [
        i for i, e in enumerate(meta["events"])
        if e["wall_ms"] - meta["t0_ms"] - round(e["at_s"] * 1000) > rec.MAX_LATE_MS]
