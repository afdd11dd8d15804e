"""How applications send, live (issue 45): an ordered producer (``SelectMessageQueueByHash``
over 16 keys) and two oneway producers (``sendLatencyFaultEnable`` off and on) through three
brokers while broker-a is paused and broker-b killed and restarted
(``data/scenarios/live/producer-modes.toml``), recorded on lines 4, 5 and 5.5
(``data/live/producer-modes-*``) and checked offline here:

* the ordered producer's every send is at the queue the hash selector gives on the route its
  client had logged, or failed at that queue on a stopped broker (``sendSelectImpl``: one
  attempt, no retry, no fault report); 12 of the 16 keys moved when the route lost broker-b;
* every oneway send is where the send loop with one attempt puts it. A oneway call to a
  paused broker succeeds (the write), and its message is stored when the broker resumes; one
  to a killed broker throws on 4.9.8 (``RemotingConnectException``: the fault-on producer
  then avoids broker-b) and is dropped silently on 5.x (``invokeOneway`` connects
  asynchronously: no error, no isolation, the message in no broker).

Each check can fail: without the route changes, the stopped brokers, or read as synchronous
sends, the same recordings leave sends unexplained."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketlb_core import data_path
from rocketlb_core.producer import SendMode
from rocketlb_core.trace.schema import TraceError
from tests.test_fuzz import TRIED

LINES = ["4", "5", "5.5"]


def _recording(line: str) -> Path:
    return data_path("live", f"producer-modes-{line}")


def _rows(rec: Path, producer: str) -> list[dict[str, Any]]:
    with gzip.open(rec / "sends" / f"{producer}.jsonl.gz", "rt") as f:
        return [json.loads(x) for x in f]


@pytest.fixture(scope="module", params=LINES)
def checked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[str, dict[str, Any]]:
    from rocketlb_core.trace.agreement import check_recording
    from rocketlb_core.trace.importer import import_recording

    rec = _recording(request.param)
    trace = tmp_path_factory.mktemp(f"modes-{request.param}") / "trace"
    import_recording(rec, trace)
    return request.param, check_recording(rec, trace)


def test_every_send_of_every_mode_is_explained(checked: tuple[str, dict[str, Any]]) -> None:
    line, result = checked
    for name, p in result["producers"].items():
        assert p["unexplained"] == 0, (line, name, [o for o in p["others"]
                                                     if o["verdict"] == "unexplained"][:5])
    assert {p.get("mode") for p in result["producers"].values()} == {"hash", "oneway"}


def test_an_ordered_send_is_never_retried_and_its_keys_move_with_the_route(
        checked: tuple[str, dict[str, Any]]) -> None:
    line, result = checked
    p = result["producers"]["p-hash"]
    rows = _rows(_recording(line), "p-hash")
    failed = [r for r in rows if "error" in r]
    assert p["failed_stopped"] == len(failed) > 0
    # each failed send failed at its key's queue (no retry elsewhere), and 12 of the 16 keys
    # moved when the publish list went from 12 queues to 8
    assert [m["moved"] for m in p["keys_moved"]][:1] == [12]
    assert p["keys_moved"][0]["queues_before"] == 12
    assert p["keys_moved"][0]["queues_after"] == 8
    assert p["stored_at_key_queue"] + p["route_not_installed"] + p["failed_stopped"] \
        == p["agree"] == len(rows)


def test_a_oneway_call_to_a_killed_broker_throws_on_4_and_is_dropped_on_5(
        checked: tuple[str, dict[str, Any]]) -> None:
    line, result = checked
    rec = _recording(line)
    off, on = result["producers"]["p-oneway-off"], result["producers"]["p-oneway-on"]
    rows_off, rows_on = _rows(rec, "p-oneway-off"), _rows(rec, "p-oneway-on")
    if line == "4":
        # refused connections throw: each one a failed send, none a lost one
        assert sum("error" in r for r in rows_off) > 1
        assert off.get("written_not_stored", 0) == on.get("written_not_stored", 0) == 0
        # the fault-on producer isolated broker-b at its first refusal (4.x: ten minutes)
        # and sent none of the later ones there
        assert sum("error" in r for r in rows_on) == 1
    else:
        # no error at all: the calls to the dead broker returned, their messages nowhere
        assert not any("error" in r for r in rows_off + rows_on)
        assert off["written_not_stored"] > 0
        assert on["written_not_stored"] > 0


def test_a_oneway_call_to_a_paused_broker_is_stored_when_it_resumes() -> None:
    """broker-a paused from 6 s to 11 s: every oneway call returned at once, and the messages
    sent to broker-a meanwhile are in its queues, stored after the resume."""
    rec = _recording("5")
    meta = json.loads((rec / "recording.json").read_text("utf-8"))
    ev = {(e["action"], e["target"]): e for e in meta["events"]}
    paused, resumed = ev[("pause", "broker-a")]["done_ms"], ev[("resume", "broker-a")]["wall_ms"]
    with gzip.open(rec / "topic.jsonl.gz", "rt") as f:
        dump = {x["body"]: x for x in map(json.loads, f) if x.get("body", "").startswith("p-")}
    during = [r for r in _rows(rec, "p-oneway-off") if paused < r["sent_ms"] < resumed - 100]
    at_a = [dump[f"p-oneway-off/m{r['seq']}"] for r in during
            if dump.get(f"p-oneway-off/m{r['seq']}", {}).get("broker") == "broker-a"]
    assert len(at_a) >= 20
    assert all(int(r["cost_ms"]) < 100 for r in during)
    assert all(x["store_ms"] >= resumed for x in at_a)


def _inputs(line: str, tmp_path: Path, rec: Path | None = None) -> dict[str, Any]:
    """What ``check_recording`` gives the checks of ``producer-modes-<line>`` (or ``rec``)."""
    import pyarrow.parquet as pq

    from rocketlb_core.model import BrokerData, QueueData, TopicRoute
    from rocketlb_core.replay.timeline import Conditions
    from rocketlb_core.trace.agreement import _client_log
    from rocketlb_core.trace.clientlog import stamp_ms
    from rocketlb_core.trace.importer import import_recording, log_offset, origin_ms

    rec = rec or _recording(line)
    trace = tmp_path / f"trace-{line}"
    import_recording(rec, trace)
    meta = json.loads((rec / "recording.json").read_text("utf-8"))
    origin = origin_ms(json.loads((trace / "trace.json").read_text("utf-8")))
    offset = log_offset(meta["client_version"], int(meta.get("utc_offset_minutes", 0)))
    route = TopicRoute(tuple(QueueData(q["broker_name"], q["read_queue_nums"],
                                       q["write_queue_nums"], q["perm"]) for q in meta["route"]),
                       tuple(BrokerData(b["name"], {0: b["address"]}, meta["cluster"])
                             for b in meta["brokers"]))

    def changes(name: str) -> list[tuple[int, Any]]:
        log = _client_log(rec, name)
        return [(stamp_ms(r.stamp, offset) - origin, r.queue_datas)
                for r in log.route_changes if r.topic == meta["topic"]]

    def failures(name: str) -> list[tuple[int, str, int, int | None, int | None]]:
        log = _client_log(rec, name)
        return [(stamp_ms(f.stamp, offset) - origin - f.rt_ms, f.queue.broker_name, f.rt_ms,
                 f.response_code, f.queue.queue_id) for f in log.send_failures
                if f.queue.topic == meta["topic"]]

    return {"rec": rec, "meta": meta, "origin": origin, "route": route, "changes": changes,
            "failures": failures, "line": meta["client_version"], "topic": meta["topic"],
            "conditions": Conditions.from_columns(
                pq.read_table(trace / "conditions.parquet").to_pydict())}


def test_the_ordered_check_fails_without_the_route_changes_or_the_stopped_brokers(
        tmp_path: Path) -> None:
    """Line 5: with its first route only, the keys' queues after broker-b left are wrong;
    without the stopped brokers, its failures are unexplained."""
    from rocketlb_core.trace.ordered_agreement import ordered_agreement, stopped_spans

    x = _inputs("5", tmp_path)
    stopped = stopped_spans(x["meta"]["events"], x["origin"])
    hashed = _rows(x["rec"], "p-hash")
    kw = {"line": x["line"], "topic": x["topic"], "route": x["route"],
          "origin_ms": x["origin"]}
    whole = ordered_agreement(hashed, route_changes=x["changes"]("p-hash"), stopped=stopped,
                              **kw)
    assert whole.count("unexplained") == 0
    first_only = ordered_agreement(hashed, route_changes=x["changes"]("p-hash")[:1],
                                   stopped=stopped, **kw)
    assert first_only.count("unexplained") > 100
    blind = ordered_agreement(hashed, route_changes=x["changes"]("p-hash"), stopped={}, **kw)
    assert blind.count("unexplained") == whole.count(
        "failed at its key's queue, on a stopped broker: not retried") > 0


@pytest.mark.parametrize("line", ["4", "5"])
def test_the_oneway_check_fails_read_as_sync_sends_or_without_the_kill(
        line: str, tmp_path: Path) -> None:
    """Line 4: read as synchronous sends, each refused call is retried on another broker
    and stored there, where the real one failed. Line 5: without the kill's stretch, the
    messages no broker stored are unexplained."""
    from rocketlb_core.trace.agreement import _oneway_stored, _where_stored, producer_agreement
    from rocketlb_core.trace.ordered_agreement import stopped_spans

    x = _inputs(line, tmp_path)
    stored = _oneway_stored(x["rec"] / "topic.jsonl.gz")
    truth = [_where_stored(r, "p-oneway-off", stored) for r in _rows(x["rec"], "p-oneway-off")]
    common = {"line": x["line"], "fault_tolerance": False, "topic": x["topic"],
              "route": x["route"], "conditions": x["conditions"], "origin_ms": x["origin"],
              "costs": {}, "route_changes": x["changes"]("p-oneway-off"),
              "failures": x["failures"]("p-oneway-off"), "logs_complete": True}
    killed = stopped_spans(x["meta"]["events"], x["origin"], ("kill",))
    oneway = producer_agreement(truth, mode=SendMode.ONEWAY, stopped=killed, **common)
    assert oneway.count("unexplained") == 0
    if line == "4":
        refused = sum("error" in r for r in truth)
        as_sync = producer_agreement(truth, mode=SendMode.SYNC, stopped=killed, **common)
        assert as_sync.count("unexplained") >= refused > 20
    else:
        lost = oneway.count("a oneway call to a stopped broker that no broker stored")
        blind = producer_agreement(truth, mode=SendMode.ONEWAY, stopped={}, **common)
        assert blind.count("unexplained") == lost > 20


@pytest.mark.parametrize(("line", "field"), [
    ('{"broker":"broker-a","queue":"3","body":"p/m1"}', "queue"),
    ('{"broker":"broker-a","queue":true,"body":"p/m1"}', "queue"),
    ('{"broker":7,"queue":3,"body":"p/m1"}', "broker"),
    ('{"queue":3,"body":"p/m1"}', "broker"),
])
def test_a_dump_row_of_a_oneway_message_that_is_not_a_broker_and_queue_is_refused(
        tmp_path: Path, line: str, field: str) -> None:
    from rocketlb_core.trace.agreement import _oneway_stored

    path = tmp_path / "topic.jsonl.gz"
    path.write_bytes(gzip.compress(
        ('{"broker":"broker-b","queue":0,"body":"p/m0"}\n' + line + "\n").encode()))
    with pytest.raises(TraceError, match=rf"topic\.jsonl\.gz, row 2, field '{field}'"):
        _oneway_stored(path)
    with pytest.raises(TraceError, match=r"topic\.jsonl\.gz.*missing"):
        _oneway_stored(tmp_path / "topic.jsonl.gz.absent")


def test_a_5x_fault_item_first_reported_before_the_clocks_zero_is_available() -> None:
    """Upstream's new 5.x fault item starts at 0, the epoch, before any ``now``; a live
    check's trace time reads below 0 when its origin falls after a producer's first sends
    (line 5.5's oneway producer: its first sends at -1.9 s). The item starts no later than
    its report, so a quick send leaves its broker available."""
    from rocketlb_core.producer.fault import FaultTable5

    table = FaultTable5()
    table.update("broker-c", 169, 0, True, now_ms=-458)
    assert table.is_available("broker-c", -277)
    table.update("broker-a", 7, 0, True, now_ms=5)
    assert table.items["broker-a"].start_timestamp == 0        # from 0 up: as before


# ---------------------------------------------------------------- hostile rows (the fuzzer)

HOSTILE = st.one_of(st.none(), st.booleans(), st.integers(-(1 << 60), 1 << 60),
                    st.floats(allow_nan=True), st.text(max_size=8), st.just("x" * 6000),
                    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2),
                                                                         st.integers(),
                                                                         max_size=1))
FIELDS = ["seq", "sent_ms", "cost_ms", "broker", "queue", "status", "msg_id", "error", "key",
          "oneway"]


def _read_mutated(rows: list[dict[str, Any]], which: int, field: str, value: object,
                  name: str, read: Any) -> tuple[Any, str]:
    """``read`` of a gzipped JSON-lines file ``name`` holding ``rows`` with one field of row
    ``which`` set to ``value`` (``KeyError``: removed): (what it read, or "" and the
    refusal's text)."""
    row = dict(rows[which % len(rows)])
    if value is KeyError:
        row.pop(field, None)
    else:
        row[field] = value
    rows = [*rows[:which % len(rows)], row, *rows[which % len(rows) + 1:]]
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        path = Path(tmp) / name
        path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
        try:
            return read(path), ""
        except TraceError as exc:
            return None, str(exc)


@given(line=st.sampled_from(LINES), producer=st.sampled_from(["p-hash", "p-oneway-off"]),
       which=st.integers(0, 999), field=st.sampled_from(FIELDS),
       value=st.one_of(HOSTILE, st.just(KeyError)))
@settings(max_examples=120, derandomize=True, deadline=None, database=None)
def test_a_hostile_field_in_a_send_row_is_read_or_refused_naming_it(
        line: str, producer: str, which: int, field: str, value: object) -> None:
    """``read_sends`` (what ``check_recording`` reads a producer's rows with): one field of
    one row of a shipped recording set to a hostile value (or removed: ``KeyError``) is either
    a row it reads as valid (each field in range) or a ``TraceError`` naming the file, the row
    and the field; never another exception."""
    from rocketlb_core.trace.agreement import MAX_TEXT, read_sends

    rows = _rows(_recording(line), producer)
    mode = "hash" if producer == "p-hash" else "oneway"
    TRIED["live check: a send row"] += 1
    got, refused = _read_mutated(rows, which, field, value, "sends.jsonl.gz",
                                 lambda path: read_sends(path, mode))
    if refused:
        TRIED["live check: a send row: refused"] += 1
        assert f"sends.jsonl.gz, row {which % len(rows) + 1}, field " in refused
        return
    r = got[which % len(rows)]
    for k in ("seq", "sent_ms", "queue", "cost_ms"):
        assert k not in r or (type(r[k]) is int and r[k] >= 0)
    for k in ("broker", "status", "msg_id", "error", "key"):
        assert k not in r or (isinstance(r[k], str) and 0 < len(r[k]) <= MAX_TEXT)
    assert r.get("oneway", True) is True


@given(which=st.integers(0, 999), field=st.sampled_from(["broker", "queue", "body"]),
       value=st.one_of(HOSTILE, st.just(KeyError)))
@settings(max_examples=60, derandomize=True, deadline=None, database=None)
def test_a_hostile_field_in_the_topic_dump_is_read_or_refused_naming_it(
        which: int, field: str, value: object) -> None:
    from rocketlb_core.trace.agreement import _oneway_stored

    with gzip.open(_recording("5") / "topic.jsonl.gz", "rt") as f:
        rows = [json.loads(x) for x in f]
    TRIED["live check: the topic's dump"] += 1
    got, refused = _read_mutated(rows, which, field, value, "topic.jsonl.gz", _oneway_stored)
    if refused:
        TRIED["live check: the topic's dump: refused"] += 1
        assert f"row {which % len(rows) + 1}, field " in refused
        assert field == "body" or f"field '{field}'" in refused
        return
    for broker, queue in got.values():
        assert isinstance(broker, str)
        assert type(queue) is int
        assert 0 <= queue <= 65_535


def test_a_oneway_message_sent_to_a_paused_broker_dies_when_it_is_killed_paused(
        tmp_path: Path) -> None:
    """``tests/fixtures/live/paused-killed-oneway-4`` (a random scenario of the soak with
    modes, seed 280900054991400, line 4): broker-a paused, then killed while paused, then
    restarted. The oneway calls made to it during the pause returned at once; what its socket
    held was never read, and those messages are in no queue. The check explains them from the
    pause's start (``lost_spans``); from the kill only, they are unexplained."""
    from rocketlb_core.trace.agreement import _oneway_stored, _where_stored, producer_agreement
    from rocketlb_core.trace.ordered_agreement import lost_spans, stopped_spans

    rec = Path(__file__).parent / "fixtures" / "live" / "paused-killed-oneway-4"
    x = _inputs("4", tmp_path, rec)
    ev = {(e["action"], e["target"]): e for e in x["meta"]["events"]}
    pause, kill = ev[("pause", "broker-a")], ev[("kill", "broker-a")]
    assert not any(e["action"] == "resume" and e["target"] == "broker-a"
                   for e in x["meta"]["events"])
    stored = _oneway_stored(rec / "topic.jsonl.gz")
    rows = _rows(rec, "p2-off")
    truth = [_where_stored(r, "p2-off", stored) for r in rows]
    common = {"line": x["line"], "fault_tolerance": False, "topic": x["topic"],
              "route": x["route"], "conditions": x["conditions"], "origin_ms": x["origin"],
              "costs": {}, "route_changes": x["changes"]("p2-off"),
              "failures": x["failures"]("p2-off"), "logs_complete": True,
              "mode": SendMode.ONEWAY}
    whole = producer_agreement(truth, stopped=lost_spans(x["meta"]["events"], x["origin"]),
                               **common)
    assert whole.count("unexplained") == 0
    lost = [c for c in whole.checks if c.observed == "LOST"]
    in_pause = [c for c in lost if pause["wall_ms"] - x["origin"] <= c.time_ms
                < kill["wall_ms"] - x["origin"] - 500]
    assert len(in_pause) >= 10
    assert {c.predicted.split("/")[0] for c in in_pause} == {"broker-a"}
    kill_only = producer_agreement(
        truth, stopped=stopped_spans(x["meta"]["events"], x["origin"], ("kill",)), **common)
    assert kill_only.count("unexplained") >= len(in_pause)


def test_an_ordered_send_answered_with_a_broker_error_is_explained_by_the_reply() -> None:
    """``tests/fixtures/live/ordered-busy-5`` (the full test run's random scenario of
    2026-11-28, soak seed 3669219125, line 5, on a loaded host; kept: the ordered producer's
    rows, its client log and the events): send 119 failed with ``MQBrokerException: CODE: 2
    [TIMEOUT_CLEAN_QUEUE]broker busy`` 7.5 s before any broker was stopped. The broker answered
    (its flow control), the send was not retried, and the check explains it by the reply
    (``FAILED_BROKER_ERROR``); with another error text it is unexplained."""
    from rocketlb_core.model import BrokerData, QueueData, TopicRoute
    from rocketlb_core.trace.agreement import _client_log, read_sends
    from rocketlb_core.trace.clientlog import stamp_ms
    from rocketlb_core.trace.importer import log_offset
    from rocketlb_core.trace.ordered_agreement import (
        FAILED_BROKER_ERROR,
        ordered_agreement,
        stopped_spans,
    )

    rec = Path(__file__).parent / "fixtures" / "live" / "ordered-busy-5"
    meta = json.loads((rec / "recording.json").read_text("utf-8"))
    origin = meta["t0_ms"]
    offset = log_offset(meta["client_version"], int(meta["utc_offset_minutes"]))
    log = _client_log(rec, "p1-off")
    kw = {"line": meta["client_version"], "topic": meta["topic"], "origin_ms": origin,
          "route": TopicRoute(tuple(QueueData(q["broker_name"], q["read_queue_nums"],
                                              q["write_queue_nums"], q["perm"])
                                    for q in meta["route"]),
                              tuple(BrokerData(b["name"], {0: b["address"]}, meta["cluster"])
                                    for b in meta["brokers"])),
          "route_changes": [(stamp_ms(r.stamp, offset) - origin, r.queue_datas)
                            for r in log.route_changes if r.topic == meta["topic"]],
          "stopped": stopped_spans(meta["events"], origin)}
    rows = read_sends(rec / "sends" / "p1-off.jsonl.gz", "hash")
    got = ordered_agreement(rows, **kw)
    assert got.count("unexplained") == 0
    (busy,) = [c for c in got.checks if c.verdict == FAILED_BROKER_ERROR]
    assert busy.seq == 119
    first_stop = min(e["wall_ms"] for e in meta["events"]
                     if e["action"] in ("pause", "kill")) - origin
    assert busy.time_ms < first_stop - 5_000
    other = [dict(r, error="RemotingTimeoutException: wait response") if r["seq"] == 119
             else r for r in rows]
    assert ordered_agreement(other, **kw).count("unexplained") == 1


def test_a_oneway_message_its_broker_refused_as_busy_is_explained_by_the_reply() -> None:
    """``tests/fixtures/live/oneway-busy-5`` (issue 45's soak with modes, seed 20261131,
    scenario 105873810852479, line 5, on a loaded host; kept: a 4-thread oneway producer's
    first 200 sends, the first 200 lines of its client log and the topic's dump of those
    sends): sends 6 and 7 returned at once and are in no queue, with no broker stopped; 0.4 s
    later the client read two busy replies (code 2, ``[TIMEOUT_CLEAN_QUEUE]broker busy``) that
    matched no request, from broker-c and broker-a, the brokers the model puts the two sends
    on. Each reply explains one lost message (``REFUSED_BUSY``); without them both are
    unexplained, and a reply from another broker explains neither."""
    from rocketlb_core.model import BrokerData, QueueData, TopicRoute
    from rocketlb_core.replay.timeline import Conditions
    from rocketlb_core.trace.agreement import (
        REFUSED_BUSY,
        _oneway_stored,
        _where_stored,
        by_thread,
        producer_agreement,
        read_sends,
    )
    from rocketlb_core.trace.clientlog import read_client_log, stamp_ms
    from rocketlb_core.trace.importer import log_offset
    from rocketlb_core.trace.ordered_agreement import lost_spans

    rec = Path(__file__).parent / "fixtures" / "live" / "oneway-busy-5"
    meta = json.loads((rec / "recording.json").read_text(encoding="utf-8"))
    origin = meta["t0_ms"]
    offset = log_offset(meta["client_version"], int(meta.get("utc_offset_minutes", 0)))
    log = read_client_log(rec / "logs" / "p2-off" / "rocketmq_client.log.gz")
    names = {b["address"]: b["name"] for b in meta["brokers"]}
    refused = [(stamp_ms(r.stamp, offset) - origin, names[r.address])
               for r in log.unmatched_replies]
    assert sorted(b for _, b in refused) == ["broker-a", "broker-c"]
    route = TopicRoute(
        tuple(QueueData(q["broker_name"], q["read_queue_nums"], q["write_queue_nums"],
                        q["perm"]) for q in meta["route"]),
        tuple(BrokerData(b["name"], {0: b["address"]}, meta["cluster"]) for b in meta["brokers"]))
    stored = _oneway_stored(rec / "topic.jsonl.gz")
    rows = [_where_stored(r, "p2-off", stored)
            for r in read_sends(rec / "sends" / "p2-off.jsonl.gz", "oneway", 4)]
    changes = [(stamp_ms(c.stamp, offset) - origin, c.queue_datas)
               for c in log.route_changes if c.topic == meta["topic"]]
    empty = Conditions.from_columns({"time_ms": [], "broker": [], "client": [], "kind": [],
                                     "mode": [], "median_ms": [], "p99_ms": []})

    def check(replies: list[tuple[int, str]]) -> list[str]:
        verdicts = []
        for part, _, _ in by_thread(rows, [], 4, origin):
            a = producer_agreement(part, line=meta["client_version"], fault_tolerance=False,
                                   topic=meta["topic"], route=route, conditions=empty,
                                   origin_ms=origin, costs={}, route_changes=changes,
                                   mode=SendMode.ONEWAY,
                                   stopped=lost_spans(meta["events"], origin),
                                   refused=replies)
            verdicts += [c.verdict for c in a.checks if c.observed == "LOST"]
        return sorted(verdicts)

    assert check(refused) == [REFUSED_BUSY, REFUSED_BUSY]
    assert check([]) == ["unexplained", "unexplained"]
    assert check([(t, "broker-b") for t, _ in refused]) == ["unexplained", "unexplained"]


def test_a_oneway_message_to_a_queue_its_broker_does_not_hold_is_refused() -> None:
    """A oneway producer on the default topic's route (CI, soak seed 3975904713, line 5, a
    loaded host: its first lookup found no route in time and ``tryToFindTopicPublishInfo`` fell
    back to ``TBW102``'s, four queues a broker, where the brokers held one; 691 messages for
    queues 1 to 3 were in no queue, the rest stored at queue 0 as the model put them). The
    broker refuses a queue id it does not hold (``request queueId[N] is illegal``) and answers
    a oneway request with nothing (fact broker.illegal-queue-id-unanswered-for-oneway): each
    such message is ``ILLEGAL_QUEUE``. Had the brokers held four queues, or had the model put
    a lost message at queue 0, nothing would explain it."""
    from rocketlb_core.model import BrokerData, QueueData, TopicRoute
    from rocketlb_core.replay.timeline import Conditions
    from rocketlb_core.trace.agreement import (
        AGREE,
        ILLEGAL_QUEUE,
        INFERRED,
        UNEXPLAINED,
        producer_agreement,
    )

    brokers = ("broker-a", "broker-b")
    default = tuple(QueueData(b, 4, 4, 6) for b in brokers)       # what the client logged

    def route(queues: int) -> TopicRoute:                         # what the brokers hold
        return TopicRoute(tuple(QueueData(b, queues, queues, 6) for b in brokers),
                          tuple(BrokerData(b, {0: f"127.0.0.1:{10911 + i}"}, "c")
                                for i, b in enumerate(brokers)))

    order = [(b, q) for b in brokers for q in range(4)]           # the publish list's order

    def rows(lost_at_zero: int | None = None) -> list[dict[str, Any]]:
        out = []
        for i in range(16):
            b, q = order[i % 8]
            row: dict[str, Any] = {"seq": i, "sent_ms": 1000 + 100 * i, "oneway": True,
                                   "cost_ms": 1}
            stored = q == 0 and i != lost_at_zero
            out.append({**row, "broker": b, "queue": q} if stored else {**row, "lost": True})
        return out

    empty = Conditions.from_columns({"time_ms": [], "broker": [], "client": [], "kind": [],
                                     "mode": [], "median_ms": [], "p99_ms": []})

    def verdicts(truth: list[dict[str, Any]], held: int) -> dict[int, str]:
        a = producer_agreement(truth, line="5.3.3", fault_tolerance=False, topic="TopicLive",
                               route=route(held), conditions=empty, origin_ms=0, costs={},
                               route_changes=[(1000, default)], mode=SendMode.ONEWAY,
                               stopped={})
        return {c.seq: c.verdict for c in a.checks}

    got = verdicts(rows(), 1)
    assert got[0] == INFERRED                      # the counter's start, told by a/0
    assert {s: v for s, v in got.items() if order[s % 8][1] == 0 and s} == \
        {s: AGREE for s in (4, 8, 12)}
    assert {v for s, v in got.items() if order[s % 8][1] != 0} == {ILLEGAL_QUEUE}
    assert sum(v == ILLEGAL_QUEUE for v in got.values()) == 12
    # the check can fail: brokers that hold four queues would have stored them
    assert {v for s, v in verdicts(rows(), 4).items() if order[s % 8][1] != 0} == {UNEXPLAINED}
    # and a message lost at a queue its broker holds is still unexplained
    assert verdicts(rows(lost_at_zero=8), 1)[8] == UNEXPLAINED
