"""The live recorder without a cluster (issue 32): it keeps the scenario's clock (every event at
``t0`` + ``at_s`` whatever the others do, one target's events in order), says when an event was
late or fails with ``strict``, refuses event orders that make no sense, and reads the lateness of
recordings made before it kept time."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rocketlb_core import data_path
from rocketlb_core.live import record as rec
from rocketlb_core.live.jars import LiveError
from rocketlb_core.live.record import LiveEvent, lateness, load_scenario, parse_scenario, run_events
from rocketlb_core.sim.scenario import ScenarioError
from tests.test_fuzz import TRIED


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
    ([("freeze", "c1")], "freeze c1 at 1 s: it is not started then"),
    ([("join", "c1"), ("freeze", "c1"), ("leave", "c1")], "leave c1 at 3 s: it is gone then"),
])
def test_events_that_make_no_sense_for_their_target_are_refused(
        events: list[tuple[str, str]], message: str) -> None:
    text = SCENARIO + "".join(f'[[events]]\nat_s = {i + 1}\naction = "{a}"\ntarget = "{t}"\n'
                              for i, (a, t) in enumerate(events))
    with pytest.raises(ScenarioError, match=rf"<t>: events\[{len(events) - 1}\]: {message}"):
        parse_scenario(text, "<t>")


def test_only_a_remoting_consumer_freezes() -> None:
    """``freeze`` is SIGSTOP of a remoting consumer's JVM (issue 45); a gRPC consumer's
    membership is the Proxy's, which the brokers' logs do not show."""
    text = SCENARIO.replace('group = "G"\n', 'group = "G"\nclient = "grpc"\nkind = "push"\n')
    text += '[[events]]\nat_s = 1\naction = "join"\ntarget = "c1"\n'
    text += '[[events]]\nat_s = 2\naction = "freeze"\ntarget = "c1"\n'
    with pytest.raises(ScenarioError, match=r"events\[1\]\.action: freeze needs a remoting"):
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


# ---------------------------------------------------------------- random scenarios (item 2)

def test_generated_scenarios_are_valid_bounded_and_varied() -> None:
    from collections import Counter

    from rocketlb_core.live.generate import DURATION_S, generate_scenario

    seen: Counter[str] = Counter()
    for seed in range(600):
        text = generate_scenario(seed)
        sc = parse_scenario(text, f"seed {seed}")
        assert sc.name == f"random-{seed}"
        assert 1 <= sc.brokers <= 4
        assert 1 <= sc.queues <= 8
        assert 1 <= len(sc.producers) <= 2
        assert 1 <= len(sc.consumers) <= 5
        assert sc.events
        assert max(e.at_s for e in sc.events) <= DURATION_S[1]
        for p in sc.producers:                     # sending until after the last event
            assert p.count * p.interval_ms >= max(e.at_s for e in sc.events) * 1000
        broker_events = [e for e in sc.events if e.action in rec.BROKER_ACTIONS]
        trace_broker = f"broker-{'abcd'[sc.brokers - 1]}"
        if sc.brokers > 1:
            assert all(e.target != trace_broker for e in broker_events)
        else:
            assert {e.action for e in broker_events} <= {"pause", "resume"}
        state = {}
        for e in broker_events:                    # never left paused; restart ends a broker
            assert state.get(e.target) != "restarted"
            state[e.target] = {"restart": "restarted"}.get(e.action, e.action)
        assert "pause" not in state.values()
        seen.update(e.action for e in sc.events)
        seen["two producers"] += len(sc.producers) == 2
        seen["fault tolerance on"] += any(p.fault_tolerance for p in sc.producers)
        seen["fault tolerance off"] += any(not p.fault_tolerance for p in sc.producers)
        seen["duplicate instance"] += len({k.instance for k in sc.consumers}) < len(sc.consumers)
        seen[f"brokers {sc.brokers}"] += 1
        faulted: set[str] = set()
        for e in broker_events:
            (faulted.add if e.action in ("pause", "kill") else faulted.discard)(e.target)
            if len(faulted) > 1:
                seen["overlapping faults"] += 1
                break
    for what in ("join", "leave", "crash", "pause", "resume", "kill", "restart", "two producers",
                 "fault tolerance on", "fault tolerance off", "duplicate instance",
                 "overlapping faults", "brokers 1", "brokers 4"):
        assert seen[what] >= 30, (what, seen)


def test_the_same_seed_gives_the_same_bytes() -> None:
    import hashlib
    import subprocess
    import sys

    from rocketlb_core.live.generate import generate_scenario, scenario_seed

    assert generate_scenario(7) == generate_scenario(7) != generate_scenario(8)
    assert generate_scenario(7, "5").splitlines()[2:] == generate_scenario(7).splitlines()[2:]
    # pinned: a change of the generator (or of random.Random) changes every soak's scenarios
    assert hashlib.sha256(generate_scenario(1).encode()).hexdigest() == \
        "78fbe089219c7d96ef77c5dfae2ab1d024c0c539b8bc2001abce5e9d38c57715"
    assert (scenario_seed(1, 0), scenario_seed(1, 1)) == (118099173311735, 39978605930623)
    run = subprocess.run([sys.executable, "-m", "rocketlb_core.live", "generate", "--seed", "7"],
                         capture_output=True, text=True, check=True)
    assert run.stdout == generate_scenario(7)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        generate_scenario(-1)
    with pytest.raises(ValueError, match="line must be one of 4, 5"):
        generate_scenario(1, "6")


def test_the_generate_command_writes_a_file_load_scenario_reads(tmp_path: Path) -> None:
    from rocketlb_core.live.__main__ import main

    out = tmp_path / "s.toml"
    assert main(["generate", "--seed", "42", "--line", "4", "--out", str(out)]) == 0
    sc = load_scenario(out)
    assert sc.name == "random-42"
    assert out.read_text().startswith("# A random live scenario (rocketlb_core.live.generate), "
                                      "seed 42, for line 4.")
    with pytest.raises(SystemExit) as refused:      # argparse's usage error, exit 2
        main(["generate", "--seed", "-3"])
    assert refused.value.code == 2


@pytest.mark.live
def test_the_topic_dump_asks_again_when_the_name_server_fails(tmp_path: Path,
                                                               monkeypatch) -> None:
    """``dump_topic`` runs upstream's client (``DumpTopic.java``): a remoting failure of its
    route lookup (a loaded host's name server: a timeout, a send that failed) is asked again, up
    to ``DUMP_ATTEMPTS`` times, then named with its attempt. Here nothing listens on the name
    server's port, so every attempt fails to connect."""
    import socket

    from rocketlb_core.live.cluster import Cluster
    from rocketlb_core.live.jars import resolve

    resolve("4", "client")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    cluster = Cluster(home=tmp_path, line="4", namesrv_port=closed)
    monkeypatch.setattr(rec, "DUMP_ATTEMPTS", 2)         # two runs of the JVM show the retry
    with pytest.raises(LiveError, match=r"attempt 2\)") as err:
        rec.dump_topic(cluster, "TopicNowhere", timeout_s=120)
    assert "org.apache.rocketmq.remoting.exception." in str(err.value)


# ---------------------------------------------------------------- how a producer sends (issue 45)

def refuses_consumer_field(fields: str, where: str, message: str) -> None:
    """``SCENARIO``'s first consumer with ``fields`` added is refused naming its field
    ``where`` (a regex) with ``message`` (a regex): the shape of the consumers' bad-field
    tests (lite-pull, gRPC)."""
    with pytest.raises(ScenarioError, match=rf"<t>: consumers\[0\]\.{where}: {message}"):
        parse_scenario(SCENARIO + fields + "\n", "<t>")


PRODUCER = 'name = "m"\ntopic = "T"\n[[producers]]\nname = "p"\ngroup = "G"\ncount = 5\n'


def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return repr(v)


def _read_or_refused(text: str, family: str, ok: bool, fields: str) -> rec.LiveProducer | None:
    """A one-producer scenario ``text`` of a fuzz ``family``: when ``ok``, its producer as read;
    else ``None`` once the refusal is checked to name one of the producer's ``fields`` (a regex
    alternation) or to be the shared readers' refusal of the line or the file (a float written
    with an exponent, a lone surrogate)."""
    TRIED[f"live scenario: {family}"] += 1
    if not ok:
        TRIED[f"live scenario: {family}: refused"] += 1
        with pytest.raises(ScenarioError, match=rf"^<t>: (producers\[0\]\.({fields})|line \d+:"
                                                r"|not valid TOML)"):
            parse_scenario(text, "<t>")
        return None
    (p,) = parse_scenario(text, "<t>").producers
    return p


MODE_VALUES = st.one_of(st.none(), st.sampled_from(list(rec.MODES)),
                        st.one_of(st.text(max_size=8), st.integers(-3, 3), st.booleans()))
KEYS_VALUES = st.one_of(st.none(), st.integers(1, rec.MAX_KEYS),
                        st.one_of(st.integers(-5, rec.MAX_KEYS + 5), st.booleans(),
                                  st.floats(allow_nan=False, allow_infinity=False, width=32),
                                  st.text(max_size=4)))


@given(mode=MODE_VALUES, keys=KEYS_VALUES,
       client=st.sampled_from(["remoting", "grpc"]))
@example(mode="hash", keys=1, client="remoting")
@example(mode="hash", keys=rec.MAX_KEYS, client="remoting")
@example(mode="hash", keys=None, client="remoting")
@example(mode="oneway", keys=None, client="remoting")
@example(mode="sync", keys=None, client="remoting")
@example(mode=None, keys=None, client="grpc")
@settings(max_examples=300, derandomize=True, deadline=None, database=None)
def test_a_producers_mode_and_keys_are_read_in_range_or_refused_by_field(
        mode: object, keys: object, client: str) -> None:
    """A remoting producer's ``mode`` is one of ``MODES``; ``keys`` (1 to ``MAX_KEYS``,
    default 16) belongs to ``hash`` alone; a gRPC producer has neither. Anything else is a
    ``ScenarioError`` naming the file and the producer's field."""
    text = PRODUCER + (f'client = "{client}"\n' if client == "grpc" else "")
    text += f"mode = {_toml_value(mode)}\n" if mode is not None else ""
    text += f"keys = {_toml_value(keys)}\n" if keys is not None else ""
    ok = ((client == "grpc" and mode is None and keys is None)
          or (client == "remoting" and (mode is None or mode in rec.MODES)
              and ((mode == "hash" and (keys is None or (
                  type(keys) is int and 1 <= keys <= rec.MAX_KEYS)))
                   or (mode != "hash" and keys is None))))
    p = _read_or_refused(text, "a producer's mode and keys", ok, "mode|keys")
    if p is None:
        return
    assert p.client == client
    assert p.mode == (mode or "sync")
    assert p.keys == ((keys if keys is not None else 16) if mode == "hash" else 0)


THREADS_VALUES = st.one_of(st.none(), st.integers(1, rec.MAX_THREADS),
                           st.one_of(st.integers(-3, rec.MAX_THREADS + 3), st.booleans(),
                                     st.floats(allow_nan=False, allow_infinity=False, width=32),
                                     st.text(max_size=4)))


@given(threads=THREADS_VALUES, fault=st.booleans(), client=st.sampled_from(["remoting", "grpc"]),
       mode=st.sampled_from(list(rec.MODES)))
@example(threads=rec.MAX_THREADS, fault=False, client="remoting", mode="sync")
@example(threads=2, fault=True, client="remoting", mode="oneway")
@example(threads=1, fault=True, client="remoting", mode="sync")
@example(threads=4, fault=False, client="grpc", mode="sync")
@example(threads=None, fault=False, client="remoting", mode="async")
@example(threads=1, fault=False, client="remoting", mode="async")
@example(threads=None, fault=True, client="remoting", mode="async")
@settings(max_examples=200, derandomize=True, deadline=None, database=None)
def test_a_producers_threads_are_read_in_range_or_refused_by_field(
        threads: object, fault: bool, client: str, mode: str) -> None:
    """A remoting producer's ``threads`` is an integer from 1 to ``MAX_THREADS`` (default 1),
    more than one only with ``fault_tolerance`` off; a gRPC producer has none, nor an async one
    (its executor's threads send), which needs ``fault_tolerance`` off. Anything else is a
    ``ScenarioError`` naming the file and the producer's field."""
    text = PRODUCER + (f'client = "{client}"\n' if client == "grpc" else
                       f'mode = "{mode}"\n' + (f"fault_tolerance = {_toml_value(fault)}\n"))
    text += f"threads = {_toml_value(threads)}\n" if threads is not None else ""
    ok = threads is None or (client == "remoting" and type(threads) is int
                             and 1 <= threads <= rec.MAX_THREADS
                             and (threads == 1 or not fault))
    fields = "threads"
    if client == "remoting" and mode == "async":
        ok = threads is None and not fault
        fields = "threads|fault_tolerance"
    p = _read_or_refused(text, "a producer's threads", ok, fields)
    if p is None:
        return
    assert p.threads == (threads if threads is not None else 1)


BATCH_VALUES = st.one_of(st.none(), st.integers(1, rec.MAX_BATCH),
                         st.one_of(st.integers(-3, rec.MAX_BATCH + 3), st.booleans(),
                                   st.floats(allow_nan=False, allow_infinity=False, width=32),
                                   st.text(max_size=4)))


@given(batch=BATCH_VALUES, mode=st.sampled_from([*rec.MODES, None]),
       client=st.sampled_from(["remoting", "grpc"]))
@example(batch=rec.MAX_BATCH, mode="batch", client="remoting")
@example(batch=None, mode="batch", client="remoting")
@example(batch=2, mode="sync", client="remoting")
@example(batch=2, mode=None, client="grpc")
@settings(max_examples=200, derandomize=True, deadline=None, database=None)
def test_a_producers_batch_is_read_in_range_or_refused_by_field(
        batch: object, mode: str | None, client: str) -> None:
    """A batch producer's ``batch`` (messages a send) is an integer from 1 to ``MAX_BATCH``,
    default 4, and only a producer of mode ``batch`` has it. Anything else is a
    ``ScenarioError`` naming the file and the producer's field."""
    text = PRODUCER + (f'client = "{client}"\n' if client == "grpc" else
                       f'mode = "{mode}"\n' if mode is not None else "")
    text += f"batch = {_toml_value(batch)}\n" if batch is not None else ""
    ok = client == "remoting" and (
        (mode == "batch" and (batch is None or (type(batch) is int
                                                and 1 <= batch <= rec.MAX_BATCH)))
        or (mode != "batch" and batch is None))
    ok = ok or (client == "grpc" and batch is None)
    p = _read_or_refused(text, "a producer's batch", ok, "batch")
    if p is None:
        return
    assert p.batch == ((batch if batch is not None else 4) if mode == "batch"
                       and client == "remoting" else 0)


def test_generated_scenarios_with_modes_draw_how_producers_send() -> None:
    """``generate_scenario(seed, modes=True)`` (issue 45): each producer draws sync, hash
    (4 to 64 keys), oneway or batch (2 to 32 messages) after every other draw, so the rest is
    the seed's scenario; with a oneway producer every killed broker is restarted (the topic's
    dump reads every broker);
    then a producer with the fault table off that does not send by key may be shared by
    several threads, each sending at its interval (its count that many times larger); last,
    one with the fault table off still sending ``send(msg)`` from one thread may send
    asynchronously, a broadcasting group of one or two members may join (every killed
    broker then restarted too), one consumer may be a lite-pull one, and one other the Go
    client's; and an orderly clustering group of one or two members may join (killed brokers
    restarted); last, a broker no event touches may have a slave, paused and resumed, perhaps
    killed and restarted, with one synchronous producer retrying statuses other than SEND_OK
    (never beside a producer sending by key or asynchronously)."""
    from collections import Counter

    from rocketlb_core.live.generate import generate_scenario

    seen: Counter[str] = Counter()
    for seed in range(300):
        plain = parse_scenario(generate_scenario(seed), "plain")
        drawn = parse_scenario(generate_scenario(seed, modes=True), "drawn")
        assert [(p.name, p.count // p.threads, p.interval_ms, p.fault_tolerance)
                for p in drawn.producers] \
            == [(p.name, p.count, p.interval_ms, p.fault_tolerance) for p in plain.producers]
        for p in drawn.producers:
            # several threads share a producer with the fault table off, not one sending by key
            assert p.threads == 1 or (not p.fault_tolerance and p.mode != "hash"
                                      and p.count % p.threads == 0)
            seen["threads"] += p.threads > 1
            # an async producer: the fault table off, one thread (its executor's send)
            assert p.mode != "async" or (not p.fault_tolerance and p.threads == 1)
        extra = drawn.consumers[len(plain.consumers):]
        mine = drawn.consumers[:len(plain.consumers)]
        # one of GID_live's consumers may be a lite-pull one: never the first, never a twin
        lite = [k for k in mine if k.kind == "lite-pull"]
        assert len(lite) <= 1
        assert all(k.name != "c1" and k.instance == k.name for k in lite)
        seen["lite-pull"] += bool(lite)
        # and one other may be the Go client's (issue 47): not the first, not lite-pull, not
        # a twin nor one a twin takes the instance of
        go = [k for k in mine if k.language == "go"]
        assert len(go) <= 1
        twins = {k.instance for k in mine if k.instance != k.name}
        assert all(k.name != "c1" and k.kind is None and k.instance == k.name
                   and k.name not in twins for k in go)
        seen["go"] += bool(go)
        assert [replace(k, kind=None, language="java") for k in mine] == list(plain.consumers)
        # a broadcasting group, then an orderly clustering one (issue 45), one or two each
        bc = [k for k in extra if k.group == "GID_bc"]
        orderly = [k for k in extra if k.group == "GID_ord"]
        assert list(extra) == bc + orderly
        assert len(bc) <= 2
        assert len(orderly) <= 2
        assert all(k.model == "broadcasting" for k in bc)
        assert all(k.model == "clustering" and k.listener == "orderly" for k in orderly)
        # a slave (issue 45): of a master no event touches; its own events in order
        slaved = [e for e in drawn.events if e.target.startswith("slave-")]
        if drawn.slaves:
            (master,) = drawn.slaves
            assert master not in {e.target for e in drawn.events}
            assert not any(p.mode in ("hash", "async") for p in drawn.producers)
            assert all(p.threads == 1 for p in drawn.producers)
            assert [e.action for e in slaved] in (["pause", "resume"],
                                                   ["pause", "resume", "kill", "restart"])
            assert {e.target for e in slaved} == {"slave-" + master[-1]}
            retry = [p for p in drawn.producers if p.retry_not_stored]
            assert len(retry) <= 1
            assert all(p.mode == "sync" and p.threads == 1 for p in retry)
            assert retry or not any(p.mode == "sync" and p.threads == 1
                                    for p in drawn.producers)
            seen["slave"] += 1
            seen["retry"] += bool(retry)
        else:
            assert slaved == []
            assert not any(p.retry_not_stored for p in drawn.producers)
        drawn = replace(drawn, events=tuple(e for e in drawn.events if e not in slaved))
        joins = {e.target: e.at_s for e in drawn.events if e.action == "join"}
        assert all(k.name in joins for k in extra)
        assert not {e.target for e in drawn.events if e.action in ("leave", "crash")} & {
            k.name for k in extra}                               # they stay to the end
        seen["broadcast"] += bool(bc)
        seen["orderly"] += bool(orderly)
        seen.update(f"broadcast {k.listener}" for k in bc)
        seen.update(p.mode for p in drawn.producers)
        assert any(p.mode != "oneway" for p in drawn.producers)    # the trace needs a Pub
        for p in drawn.producers:
            assert (4 <= p.keys <= 64) if p.mode == "hash" else p.keys == 0
            assert (2 <= p.batch <= 32) if p.mode == "batch" else p.batch == 0
        if not any(p.mode == "oneway" for p in drawn.producers) and not extra:
            assert drawn.events == plain.events
            continue
        added = [e for e in drawn.events if e not in plain.events]
        assert {e.action for e in added} <= {"restart", "join"}
        assert {e.target for e in added if e.action == "join"} == {k.name for k in extra}
        seen["restart added"] += any(e.action == "restart" for e in added)
        killed = {e.target for e in drawn.events if e.action == "kill"}
        assert killed <= {e.target for e in drawn.events if e.action == "restart"}
    assert min(seen["sync"], seen["hash"], seen["oneway"], seen["batch"]) >= 40, seen
    assert seen["async"] >= 30, seen
    assert seen["slave"] >= 30, seen
    assert seen["retry"] >= 15, seen
    assert seen["restart added"] >= 5, seen
    assert seen["threads"] >= 40, seen
    assert seen["broadcast"] >= 60, seen
    assert seen["orderly"] >= 60, seen
    assert seen["lite-pull"] >= 40, seen
    assert seen["go"] >= 30, seen
    assert min(seen["broadcast orderly"], seen["broadcast concurrently"]) >= 20, seen
    assert "generate --seed 1 --modes" in generate_scenario(1, modes=True)


def test_generated_async_producers_draw_back_pressure_on_5x_only() -> None:
    """``generate_scenario(seed, line, modes=True)`` (issue 45): on a 5.x line an async producer
    takes permits half the time (``PERMIT_CHOICES``), from its own generator: the scenario is
    the seed's otherwise, and line 4 (no back pressure) draws none."""
    from rocketlb_core.live.generate import PERMIT_CHOICES, generate_scenario

    drawn = 0
    for seed in range(300):
        four = parse_scenario(generate_scenario(seed, "4", modes=True), "4")
        assert not any(p.back_pressure for p in four.producers)
        for line in ("5", "5.5"):
            s = parse_scenario(generate_scenario(seed, line, modes=True), line)
            for p in s.producers:
                assert p.back_pressure == 0 or (p.mode == "async"
                                                 and p.back_pressure in PERMIT_CHOICES)
            drawn += any(p.back_pressure for p in s.producers)
            plain = [replace(p, back_pressure=0) for p in s.producers]
            assert plain == [replace(p, back_pressure=0) for p in parse_scenario(
                generate_scenario(seed, line, modes=True).replace(
                    "back_pressure", "#back_pressure"), line).producers]
    assert drawn >= 20
