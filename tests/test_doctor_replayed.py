"""``rocketlb doctor``: what a producer finding's fix would change, from the recorded producer
day replayed (issue 35, "the replay for a recorded producer day"; ``doctor.replayed``).

On the shipped recordings of a real cluster (``data/live/producer-outage-{4,5}``: two producers,
``sendLatencyFaultEnable`` off and on, broker-a paused then killed) the doctor reconstructs the
day from what it reads (the message trace and the client logs), replays it as recorded and
with the fix, and reports both. The checks are relations the replay must satisfy, against the
recording's own ground truth (``sends/*.jsonl.gz`` and ``recording.json``, which the doctor does
not read): every send the producers made is replayed, the switch the doctor reads from each log
is the one the producer ran with, the fix moves the numbers the way the book says it does."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core import data_path
from rocketlb_core.trace.msgtrace import read_msgtrace
from tests.test_doctor_inputs import _row
from tests.test_fuzz import run_command

REPLAY = "replay of the recorded producer day"
CORE = "core fault strategy"
OUTAGES = ("producer-outage-4", "producer-outage-5")
_DOCS: dict[tuple[str, ...], dict[str, Any]] = {}


def _doc(*paths: Path | str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    key = (*map(str, paths), *extra)
    if key not in _DOCS:
        status, out, err = run_command(["doctor", "--json", *extra, *map(str, paths)])
        assert status == 3, err
        _DOCS[key] = json.loads(out)
    return _DOCS[key]


def _one(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    [f] = [f for f in doc["findings"] if f["id"] == kind]
    return f


def _truth(rec: str) -> dict[str, dict[str, Any]]:
    """Per producer group, from the recording's ground truth: its sends, and the switch."""
    folder = data_path("live", rec)
    meta = json.loads((folder / "recording.json").read_text())
    out = {}
    for p in meta["producers"]:
        rows = [json.loads(x) for x in gzip.decompress(
            (folder / "sends" / f"{p['name']}.jsonl.gz").read_bytes()).splitlines()]
        out[p["group"]] = {"sends": len(rows), "switch": p["fault_tolerance"]}
    return out


@pytest.mark.parametrize("rec", OUTAGES)
def test_the_replayed_day_is_every_send_the_producers_made_with_the_switch_they_ran(
        rec: str) -> None:
    doc = _doc(data_path("live", rec))
    truth = _truth(rec)
    for kind in ("broker-isolated", "failing-broker-not-avoided"):
        ba = _one(doc, kind)["before_after"]
        assert ba["source"] == REPLAY, ba.get("replay_unavailable")
        assert "replay_unavailable" not in ba
        day = ba["replay"]["day"]
        assert day["engine"].startswith("python")
        assert day["sends"] == sum(t["sends"] for t in truth.values())
        assert day["stored"] == day["pub_records"]          # the trace's stores, each once
        assert day["failed_attempts_logged"] >= 1
        assert {p: v["send_latency_fault_enable"] for p, v in day["producers"].items()} == \
            {g: t["switch"] for g, t in truth.items()}
        for label, run in ba["replay"]["runs"].items():
            for producer, s in run.items():
                assert s["sends"] == truth[producer]["sends"], (label, producer)
                assert s["stored"] + s["failed_sends"] == s["sends"]
                assert sum(s["stored_by_broker"].values()) == s["stored"]
                assert s["failed_attempts"] >= s["failed_sends"]


@pytest.mark.parametrize("rec", OUTAGES)
def test_with_the_switch_on_the_producer_meets_fewer_failed_attempts(rec: str) -> None:
    f = _one(_doc(data_path("live", rec)), "failing-broker-not-avoided")
    ba = f["before_after"]
    runs = ba["replay"]["runs"]
    assert set(runs) == {"as recorded", "with the fix"}
    assert ba["before"] == runs["as recorded"]["PG_off"]["failed_attempts"]
    assert ba["after"] == runs["with the fix"]["PG_off"]["failed_attempts"]
    # off, every pick of the failing broker's queues costs an attempt; on, the first failure
    # takes the broker out and the later sends go elsewhere
    assert ba["after"] < ba["before"]
    assert 2 * ba["after"] <= ba["before"]
    # the text says it is the replay and names the numbers, the log's own count too
    text = ba["text"]
    assert text.startswith("replaying the recorded day")
    assert f"{ba['after']} failed attempt(s)" in text
    assert f"was {ba['before']} and" in text
    assert f"the log holds {f['details']['failed_attempts']} failed attempts" in text


def test_a_4x_isolation_keeps_the_broker_out_for_the_rest_of_the_day() -> None:
    """4.9.8's 600 s isolation outlasts the recorded day: as recorded, no send made while
    broker-a was up after the isolation began goes to it; with the switch off about half do
    (broker-a holds 4 of the 8 queues), at the cost of failed attempts."""
    rec = data_path("live", "producer-outage-4")
    f = _one(_doc(rec), "broker-isolated")
    [w] = f["details"]["windows"]
    last_store = max(p.time_ms for p in read_msgtrace(rec / "msgtrace.jsonl.gz").pubs)
    assert w["end_ms"] > last_store                       # the window covers the whole rest
    ba = f["before_after"]
    assert ba["with"] == "5.3.3's rules"
    up = ba["replay"]["while_up"]
    assert 0 < up["up_s"] < (w["end_ms"] - w["start_ms"]) / 1000
    assert f"broker-a was up for {up['up_s']:.1f} s" in ba["text"]
    assert up["as recorded"]["made"] > 0
    assert ba["before"] == up["as recorded"]["to_broker"] == 0
    assert ba["after"] == up["with the fix"]["to_broker"]
    assert ba["after"] >= ba["before"]
    off = up["sendLatencyFaultEnable off"]
    assert 0.35 < off["to_broker"] / off["made"] < 0.65
    runs = ba["replay"]["runs"]
    assert runs["sendLatencyFaultEnable off"]["PG_on"]["failed_attempts"] > \
        runs["as recorded"]["PG_on"]["failed_attempts"]
    assert f"was {ba['before']} of {up['as recorded']['made']} as recorded" in ba["text"]


def test_a_5x_isolation_ends_and_the_broker_gets_sends_again() -> None:
    """5.3.3's 10 s isolation ends inside the day: as recorded some sends go to broker-a again
    (the trace agrees: the finding's explanation), with the switch off more."""
    f = _one(_doc(data_path("live", "producer-outage-5")), "broker-isolated")
    assert "The message trace agrees" in f["explanation"]
    ba = f["before_after"]
    assert ba["with"].startswith("sendLatencyFaultEnable off")
    up = ba["replay"]["while_up"]
    assert 0 < ba["before"] == up["as recorded"]["to_broker"]
    assert ba["after"] == up["with the fix"]["to_broker"] > ba["before"]


def _progress(topic: str, broker: str, offsets: list[int]) -> str:
    head = _row("#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset",
                "#Client IP", "#Diff", "#LastTime")
    return head + "".join(_row(topic, broker, str(q), str(o), str(o), "127.0.0.1", "0",
                               "2026-11-24 01:48:30") for q, o in enumerate(offsets))


def test_queue_0_skew_goes_away_on_the_replayed_day_with_the_switch_off(
        tmp_path: Path) -> None:
    """The skew is found in broker offsets (no shipped capture holds one: this
    ``consumerProgress`` is written by hand, in the real format, for the recorded topic); its
    before and after come from the recorded day: p-on's switch sends broker-a's share to the
    first queue of broker-b while broker-a is isolated (upstream #5672); off, round robin."""
    (tmp_path / "progress.txt").write_text(_progress("TopicLive", "broker-b",
                                                     [700, 100, 100, 100]))
    rec = data_path("live", "producer-outage-4")
    f = _one(_doc(rec, tmp_path), "queue-0-skew")
    assert f["queues"] == ["broker-b/0"]
    ba = f["before_after"]
    assert ba["source"] == REPLAY
    assert ba["with"] == "sendLatencyFaultEnable off"
    fair = 1 / 4
    assert ba["before"] > fair + 0.05                   # the replay shows the skew as recorded
    assert abs(ba["after"] - fair) < 0.05               # and round robin with the switch off
    runs = ba["replay"]["runs"]
    assert set(runs["with the fix"]) == {"PG_off", "PG_on"}
    truth = _truth("producer-outage-4")
    for run in runs.values():
        assert {p: s["sends"] for p, s in run.items()} == \
            {g: t["sends"] for g, t in truth.items()}
    assert "consumerProgress shows 70%" in ba["text"]
    assert f"was {ba['before']:.0%}" in ba["text"]


def test_no_day_to_replay_falls_back_to_the_core_and_says_why() -> None:
    """A 4.x log read in the wrong zone puts its failures 8 h before the trace's stores: no
    day is replayed from that; the finding says so and uses the core's computation."""
    rec = data_path("live", "producer-outage-4")
    doc = _doc(rec, extra=("--log-zone", "+08:00"))
    for kind in ("broker-isolated", "failing-broker-not-avoided"):
        ba = _one(doc, kind)["before_after"]
        assert ba["source"] == CORE
        assert ba["replay"] is None
        assert "--log-zone" in ba["replay_unavailable"]
    assert _one(doc, "failing-broker-not-avoided")["before_after"]["before"] == \
        _one(doc, "failing-broker-not-avoided")["details"]["failed_attempts"]


def test_the_report_says_the_numbers_were_replayed() -> None:
    status, out, err = run_command(["doctor", "--colour", "never",
                                    str(data_path("live", "producer-outage-4"))])
    assert status == 3, err
    flat = " ".join(out.split())
    assert flat.count("what the fix changes (replayed): replaying the recorded day") == 2
    assert "(computed)" not in flat
    status, out, err = run_command(["doctor", "--colour", "never",
                                    str(data_path("live", "producer-outage-4", "logs"))])
    assert status == 3, err
    assert " ".join(out.split()).count("what the fix changes (computed)") == 2


def test_without_the_replay_extra_the_doctor_falls_back_and_says_what_to_install() -> None:
    """The doctor itself needs no third-party library; the replay needs numpy and pyarrow
    (``[replay]``): with them gone (blocked, as ``tests/test_layers.py`` does) the findings
    are the core's, and say why."""
    from tests.test_layers import COMMAND_RUN, HEAVY, _run

    proc = _run(COMMAND_RUN, ",".join(sorted(HEAVY)), "doctor", "--json",
                str(data_path("live", "producer-outage-4")))
    assert proc.returncode == 3, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    for kind in ("broker-isolated", "failing-broker-not-avoided"):
        ba = _one(doc, kind)["before_after"]
        assert ba["source"] == CORE
        assert "pip install 'rocketlb-core[replay]'" in ba["replay_unavailable"]
        assert "blocked by the test" in ba["replay_unavailable"]
