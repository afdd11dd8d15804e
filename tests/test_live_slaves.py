"""A SYNC_MASTER and its slave on a real RocketMQ (issue 45): ``data/live/slave-statuses-*``
(broker-a a SYNC_MASTER with slave-a, broker-b an ASYNC_MASTER; slave-a paused 10-40 s, killed
at 55 s and restarted at 70 s; p-retry with ``retryAnotherBrokerWhenNotStoreOK``, p-plain
without), checked by ``trace.agreement`` with the topic's dump (``STATUS_COPY``). Recorded once
on each line (``python -m rocketlb_core.live record data/scenarios/live/slave-statuses.toml
--line L --isolated``) and checked offline here; the scenario's and the recording's fields,
hostile, are refused naming the field."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rocketlb_core.live import cluster as live
from rocketlb_core.live import record as rec
from rocketlb_core.live.jars import LiveError
from rocketlb_core.paths import data_path
from rocketlb_core.sim.scenario import ScenarioError
from rocketlb_core.trace.agreement import check_recording, copies_by_seq, stored_copies
from rocketlb_core.trace.importer import import_recording, load_recording
from rocketlb_core.trace.msgtrace import read_msgtrace
from rocketlb_core.trace.schema import TraceError
from tests.test_fuzz import TRIED
from tests.test_producer_threads import checked_once, imported_once

RECORDINGS = sorted(data_path("live").glob("slave-statuses-*"))
PAUSE_S, RESUME_S, KILL_S, RESTART_S = 10.0, 40.0, 55.0, 70.0
HOUSEKEEPING_S = 20.0       # haHousekeepingInterval: a silent slave's connection is closed


def _rows(recording: Path, producer: str) -> list[dict[str, Any]]:
    return [r for r in (json.loads(x) for x in gzip.decompress(
        (recording / "sends" / f"{producer}.jsonl.gz").read_bytes()).splitlines())
        if "seq" in r]


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return {p.name: checked_once(p, tmp_path_factory)[1] for p in RECORDINGS}


def test_each_line_has_its_recording() -> None:
    assert [p.name for p in RECORDINGS] == ["slave-statuses-4", "slave-statuses-5",
                                            "slave-statuses-5.5"]
    for p in RECORDINGS:
        meta = load_recording(p)
        assert meta["slaves"] == [{"name": "slave-a", "master": "broker-a",
                                   "address": "127.0.0.1:20916"}]


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda p: p.name)
def test_every_copy_is_an_attempt_answered_with_a_status(
        recording: Path, checked: dict[str, dict[str, Any]]) -> None:
    got = checked[recording.name]["producers"]
    for name in ("p-retry", "p-plain"):
        assert got[name]["unexplained"] == 0, got[name]["others"]
        assert got[name]["copies_unexplained"] == 0
    assert got["p-retry"]["retry_not_stored"] is True
    assert "retry_not_stored" not in got["p-plain"]
    t0 = load_recording(recording)["t0_ms"]
    plain, retry = _rows(recording, "p-plain"), _rows(recording, "p-retry")
    statuses = [(r["sent_ms"] - t0) / 1000 for r in plain if r.get("status") not in
                (None, "SEND_OK")]
    copies = copies_by_seq(stored_copies(recording / "topic.jsonl.gz"), "p-retry")
    twice = {s: at for s, at in copies.items() if len(at) > 1}
    if recording.name.endswith("-4"):
        # 4.9.8: while slave-a was not connected (20 s into its pause until it came back,
        # and from its kill until it was restarted and connected again), broker-a answered
        # SLAVE_NOT_AVAILABLE: p-plain returned it, p-retry's loop went on to broker-b
        assert len(statuses) > 100
        assert all(r["broker"] == "broker-a" for r in plain
                   if r.get("status") == "SLAVE_NOT_AVAILABLE")
        assert {r.get("status") for r in plain} == {"SEND_OK", "SLAVE_NOT_AVAILABLE", None}
        assert all(PAUSE_S + HOUSEKEEPING_S - 1 <= s <= RESUME_S + 1
                   or KILL_S - 1 <= s <= RESTART_S + 15 for s in statuses), statuses
        assert {r.get("status") for r in retry} <= {"SEND_OK", None}
        assert got["p-retry"]["copies"] > 100
        # every message p-retry stored twice: first on broker-a (the status), then broker-b
        assert len(twice) >= got["p-retry"]["copies"] - 20
        assert all(at[0][0] == "broker-a" or at[1][0] == "broker-a" for at in twice.values())
        # the message trace writes a Pub with success false for each status reply
        pubs = read_msgtrace(recording / "msgtrace.jsonl.gz").pubs
        assert sum(not p.success for p in pubs if p.group == "PG_plain") == len(statuses)
    else:
        # 5.3.3 and 5.5.0: a SYNC_MASTER waits for its slave only when inSyncReplicas is above 1
        # (default 1): SEND_OK whether slave-a was paused, gone or back
        assert statuses == []
        assert {r.get("status") for r in plain + retry} <= {"SEND_OK", None}
        assert twice == {}


def test_the_master_closes_a_silent_slaves_connection_after_20_s() -> None:
    """4.9.8's broker-a logged ``ha housekeeping, found this connection[...] expired`` 20 s
    after slave-a stopped (``haHousekeepingInterval``), and a new connection when it resumed."""
    log = gzip.decompress((data_path("live") / "slave-statuses-4" / "logs" / "broker-a" /
                           "broker.log.gz").read_bytes()).decode()
    lines = log.splitlines()
    expired = [ln for ln in lines if "ha housekeeping, found this connection" in ln]
    assert len(expired) == 1
    assert int(expired[0].rsplit(",", 1)[1]) >= 20_000
    assert sum("HAService receive new connection" in ln for ln in lines) == 3


def _edited(recording: Path, tmp: Path, edit: Any) -> Path:
    out = tmp / recording.name
    shutil.copytree(recording, out)
    meta = json.loads((out / "recording.json").read_text())
    edit(meta)
    (out / "recording.json").write_text(json.dumps(meta))
    return out


def test_without_the_switch_or_the_dump_the_sends_are_unexplained(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The check can fail: told p-retry had ``retryAnotherBrokerWhenNotStoreOK`` off, its
    loop returns broker-a's status where the real one went on (and copies no attempt went to);
    told there were no slaves (no dump read), an attempt that met SLAVE_NOT_AVAILABLE is a
    SEND_OK and the loop stops at broker-a."""
    recording = data_path("live") / "slave-statuses-4"
    trace = imported_once(recording, tmp_path_factory)

    def no_switch(meta: dict[str, Any]) -> None:
        for p in meta["producers"]:
            p.pop("retry_not_stored", None)

    def no_dump(meta: dict[str, Any]) -> None:
        meta.pop("slaves")

    got = check_recording(_edited(recording, tmp_path / "a", no_switch), trace)["producers"]
    assert got["p-retry"]["unexplained"] > 100
    assert got["p-retry"]["copies_unexplained"] > 50
    assert got["p-plain"]["unexplained"] == 0      # it had the switch off
    got = check_recording(_edited(recording, tmp_path / "b", no_dump), trace)["producers"]
    assert got["p-retry"]["unexplained"] > 100
    assert "copies" not in got["p-retry"]


# ---------------------------------------------------------------- hostile inputs

SCENARIO = ('name = "m"\ntopic = "T"\nbrokers = 2\n{slaves}[[producers]]\nname = "p"\n'
            'group = "G"\ncount = 5\n{producer}{events}')


def _toml(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return repr(v)


SLAVES = st.one_of(
    st.lists(st.sampled_from(["broker-a", "broker-b"]), max_size=3),
    st.lists(st.one_of(st.sampled_from(["broker-c", "slave-a", "", "broker-a "]),
                       st.integers(-2, 2), st.booleans(), st.text(max_size=6)), max_size=3),
    st.one_of(st.text(max_size=6), st.integers(-2, 2), st.booleans()))


@given(slaves=SLAVES, target=st.sampled_from(["slave-a", "slave-b", "broker-a", "slave-c",
                                              "slave"]))
@example(slaves=["broker-a"], target="slave-a")
@example(slaves=["broker-a", "broker-a"], target="slave-a")
@example(slaves=["broker-b"], target="slave-a")
@example(slaves=["broker-c"], target="broker-a")
@example(slaves="broker-a", target="broker-a")
@settings(max_examples=200, derandomize=True, deadline=None, database=None)
def test_a_scenarios_slaves_are_masters_once_and_events_may_target_them(
        slaves: object, target: str) -> None:
    """``slaves`` lists masters of the cluster, each once; a broker event may target a listed
    master's slave. Anything else is a ``ScenarioError`` naming the file and the field."""
    text = SCENARIO.format(slaves=f"slaves = {_toml(slaves)}\n", producer="",
                           events=f'[[events]]\nat_s = 1.0\naction = "pause"\n'
                                  f'target = "{target}"\n')
    good = (isinstance(slaves, list) and all(s in ("broker-a", "broker-b") for s in slaves)
            and len(set(slaves)) == len(slaves))
    TRIED["live scenario: slaves"] += 1
    if not good:
        TRIED["live scenario: slaves: refused"] += 1
        with pytest.raises(ScenarioError, match=r"^<t>: (slaves|line \d+:|not valid TOML)"):
            rec.parse_scenario(text, "<t>")
        return
    assert isinstance(slaves, list)
    targets = {"broker-a", "broker-b"} | {live.slave_of(m) for m in slaves}
    if target not in targets:
        with pytest.raises(ScenarioError, match=r"^<t>: events\[0\]\.target: pause needs a "
                                                r"broker or slave"):
            rec.parse_scenario(text, "<t>")
        return
    s = rec.parse_scenario(text, "<t>")
    assert s.slaves == tuple(slaves)
    assert s.events[0].target == target


@given(retry=st.one_of(st.booleans(), st.integers(-1, 2), st.text(max_size=4)),
       kind=st.sampled_from(["sync", "async", "oneway", "hash", "batch", "grpc", "go"]))
@example(retry=True, kind="sync")
@example(retry=True, kind="async")
@example(retry=True, kind="grpc")
@example(retry=False, kind="go")
@example(retry="true", kind="sync")
@settings(max_examples=200, derandomize=True, deadline=None, database=None)
def test_a_producers_retry_not_stored_is_a_sync_java_switch(retry: object, kind: str) -> None:
    """``retry_not_stored`` is true or false, and true only on a Java remoting producer of mode
    ``sync``; anything else is a ``ScenarioError`` naming the producer's field."""
    producer = {"grpc": 'client = "grpc"\n', "go": 'language = "go"\n'}.get(
        kind, f'mode = "{kind}"\n')
    text = SCENARIO.format(slaves="", producer=producer + f"retry_not_stored = {_toml(retry)}\n",
                           events="")
    TRIED["live scenario: retry_not_stored"] += 1
    if not isinstance(retry, bool) or (retry and kind != "sync"):
        TRIED["live scenario: retry_not_stored: refused"] += 1
        with pytest.raises(ScenarioError, match=r"^<t>: (producers\[0\]\.retry_not_stored"
                                                r"|line \d+:|not valid TOML)"):
            rec.parse_scenario(text, "<t>")
        return
    assert rec.parse_scenario(text, "<t>").producers[0].retry_not_stored is retry


def test_up_refuses_slaves_of_no_master(tmp_path: Path) -> None:
    for slaves in (["broker-c"], ["broker-a", "broker-a"], ["slave-a"]):
        with pytest.raises(LiveError, match="slaves must name masters"):
            live.up(tmp_path / "home", "4", 2, slaves=slaves)
    assert not (tmp_path / "home").exists()       # nothing started, nothing written


HOSTILE_SLAVES = [
    ("a list", "slave-a"),
    ("a list of at most", [{"name": "s", "master": "broker-a", "address": "a"}] * 9),
    (r"slaves\[0\]", [{"name": "slave-a", "master": "broker-z", "address": "127.0.0.1:1"}]),
    (r"slaves\[0\]", [{"name": "slave-a", "master": "broker-a"}]),
    (r"slaves\[0\]", [{"name": "", "master": "broker-a", "address": "127.0.0.1:1"}]),
    (r"slaves\[0\]", [{"name": 7, "master": "broker-a", "address": "127.0.0.1:1"}]),
    (r"slaves\[0\]", [{"name": "x" * 999, "master": "broker-a", "address": "a"}]),
    (r"slaves\[0\]", ["slave-a"]),
    (r"slaves\[0\]", [{"name": "s", "master": ["broker-a"], "address": "a"}]),
    (r"slaves\[0\]", [{"name": "s", "master": {"x": 1}, "address": "a"}]),
    (r"slaves\[0\]", [{"name": "s", "master": "broker-a", "address": "a", "more": 1}]),
    (r"slaves\[0\]", [{"name": "s", "master": "broker-a", "address": "a"},
                      {"name": "t", "master": "broker-a", "address": "b"}]),
]


@pytest.mark.parametrize(("where", "value"), HOSTILE_SLAVES)
def test_a_recordings_hostile_slaves_are_refused_naming_the_field(
        where: str, value: object, tmp_path: Path) -> None:
    recording = _edited(data_path("live") / "slave-statuses-4", tmp_path,
                        lambda meta: meta.__setitem__("slaves", value))
    with pytest.raises(TraceError, match=rf"recording\.json.*{where}"):
        load_recording(recording)
    with pytest.raises(TraceError, match=rf"recording\.json.*{where}"):
        import_recording(recording, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["yes", 1, None, [True]])
def test_a_recordings_hostile_retry_switch_is_refused(value: object, tmp_path: Path) -> None:
    def edit(meta: dict[str, Any]) -> None:
        meta["producers"][0]["retry_not_stored"] = value

    recording = _edited(data_path("live") / "slave-statuses-4", tmp_path, edit)
    with pytest.raises(TraceError, match=r"producers\[0\]\.retry_not_stored"):
        load_recording(recording)


@pytest.mark.parametrize(("row", "field"), [
    ({"broker": 3, "queue": 0, "body": "p-retry/m1"}, "broker"),
    ({"broker": "", "queue": 0, "body": "p-retry/m1"}, "broker"),
    ({"broker": "broker-a", "queue": -1, "body": "p-retry/m1"}, "queue"),
    ({"broker": "broker-a", "queue": True, "body": "p-retry/m1"}, "queue"),
    ({"broker": "broker-a", "queue": 70_000, "body": "p-retry/m1"}, "queue"),
])
def test_a_hostile_dump_row_is_refused_naming_row_and_field(
        row: dict[str, Any], field: str, tmp_path: Path) -> None:
    path = tmp_path / "topic.jsonl.gz"
    good = {"broker": "broker-a", "queue": 1, "body": "p-retry/m0"}
    path.write_bytes(gzip.compress((json.dumps(good) + "\n" + json.dumps(row) + "\n").encode()))
    with pytest.raises(TraceError, match=rf"topic\.jsonl\.gz.*(row|line) 2.*{field}"):
        stored_copies(path)


def test_copies_are_read_by_producer_and_seq_and_odd_bodies_are_not_sends() -> None:
    stored = {"p/m1": [("broker-a", 0), ("broker-b", 0)], "p/m2": [("broker-a", 1)],
              "q/m1": [("broker-b", 3)], "p/mx": [("broker-a", 2)], "p/m-1": [("broker-a", 2)],
              "p/m" + "9" * 40: [("broker-a", 2)], "p/m١": [("broker-a", 2)]}
    assert copies_by_seq(stored, "p") == {1: [("broker-a", 0), ("broker-b", 0)],
                                          2: [("broker-a", 1)]}
    assert copies_by_seq(stored, "q") == {1: [("broker-b", 3)]}


# ---------------------------------------------------------------- the importer's statuses

def _pub(t: int, ok: bool, cost: int = 0, msg: str = "7F0000010001AAAA", broker: int = 1,
         line: int = 1) -> Any:
    from rocketlb_core.trace.msgtrace import Pub

    return Pub(line=line, time_ms=t, region="R", group="PG", topic="T", msg_id=msg,
               tags=None, keys=None, store_host=f"127.0.0.1:{broker}", body_length=5,
               cost_ms=cost, msg_type=0, offset_msg_id=None, success=ok, client_host=None,
               fields=14)


def _sends(pubs: list[Any]) -> list[tuple[int, bool]]:
    from rocketlb_core.trace.importer import attempts, sends_of
    from rocketlb_core.trace.msgtrace import MsgTrace

    seen = attempts(MsgTrace("t.jsonl", pubs), {}, {"127.0.0.1:1": "broker-a",
                                                    "127.0.0.1:2": "broker-b"}, "T", {})
    return [(t, stored) for t, _, _, _, stored in sends_of(seen)]


@pytest.mark.parametrize(("pubs", "sends"), [
    # the switch off: the status ends the send
    ([_pub(0, False, 3)], [(0, True)]),
    # the switch on: a status, then SEND_OK at another broker 1 ms later: one send
    ([_pub(0, False, 3), _pub(4, True, 2, broker=2)], [(0, True)]),
    # a reply of 0 ms and its retry in the same millisecond, the SEND_OK's record first in the
    # file and both of one batch (one line): still one send
    ([_pub(0, True, 0, broker=2), _pub(0, False, 0)], [(0, True)]),
    # both masters without a slave: two statuses of one millisecond, then SEND_OK: one send
    ([_pub(5, False, 0), _pub(5, False, 0, broker=2), _pub(5, True, 1)], [(5, True)]),
    # three statuses (every master): the last status ends the send
    ([_pub(0, False, 1), _pub(1, False, 1, broker=2), _pub(2, False, 1)], [(0, True)]),
    # the application sends the same Message object again 900 ms later (its id kept): two
    ([_pub(0, False, 3), _pub(900, True, 2)], [(0, True), (900, True)]),
])
def test_a_status_pub_ends_its_send_or_is_a_retried_attempt(pubs: list[Any],
                                                             sends: list[tuple[int, bool]]) -> None:
    assert _sends(pubs) == sends


def test_a_retried_status_says_nothing_of_its_brokers_condition() -> None:
    from rocketlb_core.trace.importer import attempts, conditions_of
    from rocketlb_core.trace.msgtrace import MsgTrace

    seen = attempts(MsgTrace("t.jsonl", [_pub(0, False, 3), _pub(4, True, 2, broker=2)]), {},
                    {"127.0.0.1:1": "broker-a", "127.0.0.1:2": "broker-b"}, "T", {})
    kinds = conditions_of(seen, 0)
    assert "down" not in kinds["kind"]
    assert set(kinds["broker"]) == {"broker-b"}          # only the stored attempt's latency


def test_the_dumps_copies_narrow_the_counter_a_failed_send_is_explained_by(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tests/fixtures/live/slave-threads-4`` (issue 45's soak, scenario 18137692835699, only
    its 4-thread producer kept; its message trace and the topic's dump cut to that producer):
    while broker-d's slave was paused, send 811 of thread 3 failed at broker-d/3 as three other
    threads' sends failed at broker-d/0; 4.9.8 names no thread, so every counter start of the
    thread predicted the failure. The copy at broker-d/3 tells them apart (``COPIES_NARROW``);
    without it the copy is left unexplained."""
    from rocketlb_core.trace import agreement

    fixture = Path(__file__).parent / "fixtures" / "live" / "slave-threads-4"
    trace = tmp_path / "trace"
    import_recording(fixture, trace)
    got = check_recording(fixture, trace)["producers"]["p1-off"]
    assert got["threads"] == 4
    assert got["copies"] > 20
    assert got["unexplained"] == got["copies_unexplained"] == 0
    monkeypatch.setattr(agreement, "COPIES_NARROW", False)
    got = check_recording(fixture, trace)["producers"]["p1-off"]
    assert got["copies_unexplained_at"] == [(811, "broker-d/3")]
    assert got["unexplained"] == 1
