"""A random live scenario on a loaded host (soak seed 223376965339854, line 4: 4.9.8 clients,
4.9.7 brokers), ``tests/fixtures/live/default-route-4``: four brokers of one queue, a fault-off
producer every 50 ms and a fault-on one every 80 ms. ``p2-on``'s first route lookup for
``TopicLive`` timed out (the name server overloaded), so ``tryToFindTopicPublishInfo`` fell back
to the default topic's route (``TBW102``: its log line 155, four brokers of four queues, perm 7)
until 29.9 s. Sends to queues 1 to 3 failed with ``MQBrokerException`` code 1 (``request
queueId[N] is illegal``), which isolates the broker for 600 s (``isolation=true``); soon every
broker was isolated and ``pickOneAtLeast`` chose (4.9.8 returns a new ``MessageQueue`` there: no
cached queue is rewritten). The check had 126 unexplained sends of ``p2-on`` and 5 of ``p1-off``:

* the counter after the route change was inferred from the final queue only, and a logged
  failure was matched to an attempt at any queue of its broker: a start three queues off
  (``b/0`` for the logged ``b/3``) fit the first send, and with four queues a broker the offset
  shows later. A logged failure now matches only an attempt at its own queue;
* the fault items held the model's attempt time, not the ``RT`` the client reported (ties of
  8 ms broken by the isolation's start decide ``pickOneAtLeast``'s order);
* the importer dates a broker ``down`` from any failed attempt at it, a code-1 answer too:
  ``p1-off`` met brokers ``down`` that were up. ``check_recording`` leaves those out.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core.model import MessageQueue
from rocketlb_core.producer import Outcome
from rocketlb_core.replay.timeline import Conditions
from rocketlb_core.trace import agreement
from rocketlb_core.trace.agreement import (
    UNEXPLAINED,
    WORST_INFERRED,
    ObservedBrokers,
    _without_answered,
    check_recording,
)
from rocketlb_core.trace.importer import import_recording

RECORDING = Path(__file__).parent / "fixtures" / "live" / "default-route-4"


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("default-route") / "trace"
    import_recording(RECORDING, out)
    return out


def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in gzip.decompress(
        (RECORDING / "sends" / f"{name}.jsonl.gz").read_bytes()).decode().splitlines()]


def test_the_sends_on_the_default_route_agree(trace: Path) -> None:
    result = check_recording(RECORDING, trace)
    on, off = result["producers"]["p2-on"], result["producers"]["p1-off"]
    assert on["unexplained"] == 0, [c for c in on["others"] if c["verdict"] == UNEXPLAINED]
    assert off["unexplained"] == 0, [c for c in off["others"] if c["verdict"] == UNEXPLAINED]
    assert on["in_flight"] == 0
    assert off["in_flight"] == 0
    # seq 8 to 16 all went to broker-d/0 (pickOneAtLeast, then the scan's first free queue),
    # 17 to 25 to broker-c/0: every one agrees
    rows = {r["seq"]: r for r in _rows("p2-on")}
    assert {(rows[s]["broker"], rows[s]["queue"]) for s in range(8, 17)} == {("broker-d", 0)}
    assert {(rows[s]["broker"], rows[s]["queue"]) for s in range(17, 26)} == {("broker-c", 0)}
    others = {c["seq"] for c in on["others"]}
    assert not others & set(range(2, 30))
    assert all(c["unexplained"] == 0 for c in result["consumers"].values())


def test_pickoneatleast_counter_is_inferred_where_its_start_matters(
        trace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``whichItemWorst`` starts at random upstream: started one further, the check's first
    ``pickOneAtLeast`` (seq 8: c, d, a isolated with 8 ms each, b with 215 ms; half 2) would
    choose broker-c; the send shows the start (``WORST_INFERRED``) and the rest agree."""
    monkeypatch.setattr(agreement, "WORST_START", 1)
    on = check_recording(RECORDING, trace)["producers"]["p2-on"]
    assert on["unexplained"] == 0, on["others"]
    seq8 = [c for c in on["others"] if c["seq"] == 8]
    assert seq8 == [{"seq": 8, "time_ms": seq8[0]["time_ms"], "observed": "broker-d/0",
                     "predicted": "broker-d/0", "verdict": WORST_INFERRED}]


def _no_conditions() -> Conditions:
    return Conditions.from_columns({k: [] for k in (
        "time_ms", "broker", "client", "kind", "mode", "median_ms", "p99_ms")})


def test_a_logged_failure_is_the_attempt_at_its_own_queue() -> None:
    model = ObservedBrokers(_no_conditions(), {}, failed={"b": [(100, 8, 1, 3)]})
    at_3 = model(MessageQueue("T", "b", 3), 100, 3000)
    assert (at_3.outcome, at_3.latency_ms, at_3.response_code) == (Outcome.BROKER_ERROR, 8, 1)
    assert model(MessageQueue("T", "b", 0), 100, 3000).outcome is Outcome.SEND_OK
    anyq = ObservedBrokers(_no_conditions(), {}, failed={"b": [(100, 8, 1)]})
    assert anyq(MessageQueue("T", "b", 0), 100, 3000).outcome is Outcome.BROKER_ERROR


def test_an_answered_failure_does_not_take_its_broker_down() -> None:
    columns: dict[str, list[Any]] = {
        "time_ms": [100, 300, 1000, 1500], "broker": ["b", "b", "c", "c"],
        "client": [None] * 4, "kind": ["down", "up", "down", "up"],
        "mode": ["clean", None, "clean", None], "median_ms": [None] * 4, "p99_ms": [None] * 4}
    failures = [(100, "b", 8, 1, 3),               # code 1: b answered
                (1000, "c", 5, 1, 2), (1200, "c", 4, None, 0)]   # c refused only later
    c = Conditions.from_columns(_without_answered(columns, failures))
    assert c.down_at("b", 150) is None
    assert c.down_at("c", 1100) is None
    assert c.down_at("c", 1300) == "clean"
    assert c.down_at("c", 1600) is None
