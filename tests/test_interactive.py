"""The live figures' model (``rocketlb_core.interactive``), in CPython: what the browser tests
then require Pyodide and the kernel to reproduce."""

from __future__ import annotations

import copy
import json
import random
import re

import pytest

from rocketlb_core import data_path
from rocketlb_core.consumer.base import assign_all, rebalance_view
from rocketlb_core.consumer.registry import make
from rocketlb_core.interactive import board as board_mod
from rocketlb_core.interactive import handle, handle_json
from rocketlb_core.interactive.cells import run
from rocketlb_core.interactive.exercises import check, normalise
from rocketlb_core.interactive.explorer import SCENARIOS
from rocketlb_core.interactive.playground import seed002
from rocketlb_core.producer.experiments import seed002_experiment
from rocketlb_core.sim.scenario import load
from rocketlb_core.sim.world import run_scenario

LINES = ("4.7.1", "4.9.7", "4.9.8", "5.3.3")


def _picks(view: dict) -> list[tuple[str, ...]]:
    return [tuple(a["broker"] for a in row["attempts"]) for row in view["log"]]


@pytest.mark.parametrize("line", LINES)
def test_the_playground_set_up_as_seed_002_reproduces_the_articles_failures(line: str) -> None:
    view = handle("playground", f"s002-{line}", {"config": seed002(True, line), "op": "send",
                                                  "n": 10})
    assert _picks(view) == [r.brokers for r in seed002_experiment(line, fail=True)]
    assert all(len(p) == 2 for p in _picks(view))           # one retry per round


@pytest.mark.parametrize("line", ["4.7.1", "4.9.7", "4.9.8"])
def test_the_playground_set_up_as_seed_002_reproduces_the_articles_successes(line: str) -> None:
    view = handle("playground", f"s001-{line}", {"config": seed002(False, line), "op": "send",
                                                  "n": 10})
    assert _picks(view) == [r.brokers for r in seed002_experiment(line, fail=False)]


def test_on_5_3_3_the_articles_successes_cannot_be_replayed_with_a_moving_clock() -> None:
    view = handle("playground", "s001-5", {"config": seed002(False, "5.3.3"), "op": "send",
                                           "n": 10})
    assert _picks(view) != [r.brokers for r in seed002_experiment("5.3.3", fail=False)]


def _config(line: str, fault: bool) -> dict:
    return {"line": line, "fault": fault, "counter": 3, "retries": 2, "timeout_ms": 3000,
            "gap_ms": 100, "brokers": [
                {"name": "broker-a", "queues": 4, "answer": "ok", "latency_ms": 5},
                {"name": "broker-b", "queues": 2, "answer": "ok", "latency_ms": 700},
                {"name": "broker-c", "queues": 4, "answer": "refuse", "latency_ms": 2}]}


def test_the_playground_keeps_its_state_across_sends_and_condition_changes() -> None:
    cfg = _config("4.9.8", True)
    once = handle("playground", "keep-a", {"config": cfg, "op": "send", "n": 30})
    split = handle("playground", "keep-b", {"config": cfg, "op": "send", "n": 10})
    for _ in range(2):
        split = handle("playground", "keep-b", {"config": cfg, "op": "send", "n": 10})
    assert split["counter"] == once["counter"]
    assert split["faults"] == once["faults"]
    assert split["stored"] == once["stored"]
    assert split["series"] == once["series"]
    # a broker turning slow keeps the producer's state; a new line starts over
    slower = copy.deepcopy(cfg)
    slower["brokers"][0]["latency_ms"] = 700
    after = handle("playground", "keep-b", {"config": slower, "op": "send", "n": 1})
    assert after["sent"] == 31
    other = handle("playground", "keep-b", {"config": {**cfg, "line": "5.3.3"}, "op": "view"})
    assert other["sent"] == 0
    assert other["line"] == "5.3.3"


def test_the_fault_strategy_avoids_the_slow_broker_only_when_on() -> None:
    on = handle("playground", "on", {"config": _config("4.9.8", True), "op": "send", "n": 200})
    off = handle("playground", "off", {"config": _config("4.9.8", False), "op": "send", "n": 200})
    assert on["stored"]["broker-b"] < off["stored"]["broker-b"]
    assert off["attempts"]["broker-c"] > on["attempts"]["broker-c"]
    b = next(f for f in on["faults"] if f["broker"] == "broker-b")
    assert b["item"]
    assert b["latency_ms"] == 700


def test_a_bad_playground_request_names_the_field() -> None:
    cfg = _config("4.9.8", True)
    cfg["brokers"][1]["queues"] = 99
    assert handle("playground", "bad", {"config": cfg})["error"].startswith(
        "config.brokers[1].queues: 99 is outside")
    cfg["brokers"][1]["queues"] = 2
    assert "config.line" in handle("playground", "bad", {"config": {**cfg, "line": "3.0"}})["error"]
    assert json.loads(handle_json("playground", "bad", "{not json"))["error"].startswith("request")


def _shape(rng: random.Random) -> dict:
    n = rng.randint(1, 32)
    return {"brokers": rng.randint(1, 4), "queues": rng.randint(1, 16),
            "duplicate": rng.random() < 0.3, "pop_share": rng.randint(-1, 3),
            "zones": {f"c{k}": rng.choice(board_mod.ZONES) for k in range(1, n + 1)}}


def test_the_boards_rows_are_the_strategies_own_splits() -> None:
    rng = random.Random(5)
    for i in range(20):
        state = _shape(rng)
        view = handle("board", f"rows-{i}", {"state": state, "op": "reset"})
        st = board_mod.parse_state(state)
        queues = st.mq_all()
        ids = st.ids()
        mq_all, cid_all = rebalance_view(queues, list(ids.values()))
        rows = {r["strategy"]: r for r in view["rows"]}
        assert len(rows) == 9
        if not cid_all:
            assert all(r["unowned"] == len(queues) for r in view["rows"])
            continue
        split = assign_all(make("AVG"), board_mod.GROUP, mq_all, cid_all)
        owner = {q: sorted((c for c, cid in ids.items() if cid == who), key=lambda c: int(c[1:]))
                 for who, qs in split.items() for q in qs}
        assert rows["AVG"]["owners"] == [owner.get(q, []) for q in queues]
        members = st.members
        busy = {c for who in rows["AVG"]["owners"] for c in who}
        assert rows["AVG"]["n_idle"] == sum(c not in busy for c in members)
        if not st.duplicate or "c2" not in members or "c1" not in members:
            assert rows["AVG"]["shared"] == 0
            assert rows["AVG"]["unowned"] == 0


def test_the_board_outlines_exactly_the_queues_that_moved() -> None:
    state = {"brokers": 2, "queues": 4, "duplicate": False, "pop_share": 1,
             "zones": {"c1": "room-1", "c2": "room-2", "c3": "out"}}
    first = handle("board", "moves", {"state": state, "op": "reset"})
    assert all(r["n_moved"] == 0 for r in first["rows"])
    state["zones"]["c3"] = "room-1"
    second = handle("board", "moves", {"state": state})
    for a, b in zip(first["rows"], second["rows"], strict=True):
        assert b["moved"] == [x != y for x, y in zip(a["owners"], b["owners"], strict=True)]
        assert b["n_moved"] == sum(b["moved"])
    sticky = next(r for r in second["rows"] if r["strategy"] == "STICKY")
    avg = next(r for r in second["rows"] if r["strategy"] == "AVG")
    assert sticky["n_moved"] <= avg["n_moved"]


def test_the_duplicate_toggle_is_the_duplicate_id_trap() -> None:
    state = {"brokers": 2, "queues": 4, "duplicate": True, "pop_share": 1,
             "zones": {"c1": "room-1", "c2": "room-1", "c3": "room-2"}}
    avg = handle("board", "dup", {"state": state})["rows"][0]
    assert avg["strategy"] == "AVG"
    assert avg["shared"] > 0
    assert avg["unowned"] > 0


def test_explorer_views_follow_the_journal() -> None:
    for name in SCENARIOS:
        text = data_path("scenarios", f"{name}.toml").read_text()
        result = run_scenario(load(data_path("scenarios", f"{name}.toml")), 0)
        end = result.world.scenario.duration_ms + result.world.scenario.drain_ms
        view = handle("explorer", name, {"scenario": name, "toml": text, "seed": 0, "t_ms": end})
        assert view["end_ms"] == end
        group = view["group"]
        last = [r for r in result.world.env.journal
                if r.kind == "ownership" and r.entity == group][-1].fields["owners"]
        assert {q["queue"]: q["owners"] for q in view["queues"]} == last
        for q in view["queues"]:
            assert q["since_ms"] <= end
            assert q["until_ms"] == end


def test_the_crash_leaves_queues_unowned_until_the_channel_expires() -> None:
    text = data_path("scenarios", "crash-without-unregister.toml").read_text()
    req = {"scenario": "crash-without-unregister", "toml": text, "seed": 0}
    before = handle("explorer", "crash", {**req, "t_ms": 59_000})
    during = handle("explorer", "crash", {**req, "t_ms": 120_000})
    assert before["unowned"] == []
    assert len(during["unowned"]) == 3
    gone = next(c for c in during["clients"] if not c["alive"])
    assert any(gone["name"] in m for m in during["membership"].values())   # still listed
    spans = [q for q in during["queues"] if q["state"] == "unowned"]
    assert all(q["since_ms"] <= 120_000 < q["until_ms"] for q in spans)


def test_exercises_check_answers_against_the_package() -> None:
    params = {"strategy": "AVG", "brokers": 3, "queues": 6, "consumers": 11, "k": 1}
    assert check({"exercise": "share_of", "params": params, "answer": " 2 "})["right"]
    wrong = check({"exercise": "share_of", "params": params, "answer": "3"})
    assert not wrong["right"]
    assert "truth" not in wrong
    assert check({"exercise": "not_available_ms", "answer": "30000 ms",
                  "params": {"line": "4.9.8", "latency_ms": 600}})["right"]
    assert check({"exercise": "not_available_ms", "answer": "", "reveal": True,
                  "params": {"line": "5.3.3", "latency_ms": 600}})["truth"] == "2000"
    assert normalise("Broker-A/0") == "broker-a/0"
    assert normalise("30,000") == "30000"
    assert "params.k" in handle("exercise", "x", {"exercise": "share_of",
                                                  "params": {**params, "k": 0}})["error"]


def test_cells_run_like_a_kernel_in_one_namespace_per_page() -> None:
    assert run("p", "x = 2\nprint('hi')\nx * 21") == {"stdout": "hi\n", "result": "42",
                                                      "error": None}
    assert run("p", "x + 1")["result"] == "3"
    assert run("q", "x")["error"] == "NameError: name 'x' is not defined"
    assert run("p", "None")["result"] is None
    assert "SyntaxError: invalid syntax" in run("p", "for")["error"]


def test_the_chapters_cell_tags_are_current(root) -> None:  # type: ignore[no-untyped-def]
    import nbformat

    from rocketlb_core.notebooks import TAGS, cell_needs, tag_cells

    seen = set()
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        assert not tag_cells(nb), f"{path.name}: run python -m rocketlb_core.notebooks tag"
        seen |= {t for c in nb.cells for t in c.metadata.get("tags", []) if t in TAGS}
    assert seen == set(TAGS)
    assert cell_needs("import pandas as pd\npd", set())[0] == "rocketlb-kernel"
    assert cell_needs("x = y + 1", set())[0] == "rocketlb-kernel"          # y from a kernel cell
    assert cell_needs("x = y + 1", {"y"})[0] == "rocketlb-browser"
    assert cell_needs("from rocketlb_core.producer import send", set())[0] == "rocketlb-browser"
    assert cell_needs("from rocketlb_core import spark_session", set())[0] == (
        "rocketlb-kernel-spark")
    assert cell_needs("%time 1", set())[0] == "rocketlb-kernel"


@pytest.mark.parametrize(("state", "message"), [
    ({"zones": {}}, "state.zones: 0 consumers, expected 1 to"),
    ({"zones": {"c1": "out", "c3": "out"}},
     "state.zones: expected consumers c1 to c2; c2 is missing"),
    ({"zones": {"c1": "nowhere"}}, "state.zones.c1: expected one of"),
])
def test_the_board_names_what_is_wrong_with_its_consumers(state: dict, message: str) -> None:
    """Both boards read their consumers with ``fields.numbered`` (the allocation board's zones,
    the Kafka board's racks); a bad table names the field and what it expected."""
    from rocketlb_core.interactive.board import parse_state
    from rocketlb_core.interactive.fields import RequestError

    with pytest.raises(RequestError, match=re.escape(message)):
        parse_state(state)


# ------------------------------------------------- chapter 11: the gRPC producer, the servers
def _outage(client: str) -> dict:
    from rocketlb_core.interactive.playground import outage

    return outage(client)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("client", "http", "config.client: expected one of remoting, grpc, got 'http'"),
    ("client", None, "config.client: expected one of remoting, grpc, got None"),
    ("retries", 17, "config.retries: 17 is outside [0, 16]"),
])
def test_a_bad_client_in_the_playground_names_the_field(field: str, value: object,
                                                       message: str) -> None:
    cfg = {**_outage("grpc"), field: value}
    assert handle("playground", "bad-client", {"config": cfg})["error"] == message


@pytest.mark.parametrize(("field", "value", "message"), [
    ("client", "kafka", "state.client: expected one of remoting, grpc, got 'kafka'"),
    ("client", 1, "state.client: expected one of remoting, grpc, got 1"),
    ("orderly", "yes", "state.orderly: expected true or false, got 'yes'"),
])
def test_a_bad_client_on_the_board_names_the_field(field: str, value: object,
                                                  message: str) -> None:
    from rocketlb_core.interactive.board import initial_state

    state = {**initial_state(client="grpc"), field: value}
    assert handle("board", "bad-client", {"state": state})["error"] == message


def _classic_oracle(cfg: dict, n: int) -> list[tuple[list[tuple[str, str]], str]]:
    """The classic producer's sends through the core itself (``producer.send``)."""
    from rocketlb_core.model import MessageQueue, QueueData
    from rocketlb_core.producer import (
        AttemptResult,
        MQFaultStrategy,
        Outcome,
        ProducerLine,
        SendConfig,
        ThreadLocalIndex,
        TopicPublishInfo,
        send,
    )

    line = ProducerLine.parse(cfg["line"])
    brokers = {b["name"]: b for b in cfg["brokers"]}
    queues = [MessageQueue("TopicTest", b["name"], i) for b in cfg["brokers"]
              for i in range(b["queues"])]
    tp = TopicPublishInfo(queues, [QueueData(b["name"], b["queues"], b["queues"])
                                   for b in cfg["brokers"]],
                          ThreadLocalIndex(line, stored=cfg["counter"], rng=random.Random(0)))
    strategy = MQFaultStrategy(line, send_latency_fault_enable=cfg["fault"])
    config = SendConfig(send_msg_timeout_ms=cfg["timeout_ms"],
                        retry_times_when_send_failed=cfg["retries"])

    def broker(mq: MessageQueue, start: int, budget: int) -> AttemptResult:
        b = brokers[mq.broker_name]
        if b["answer"] == "silent":
            return AttemptResult(Outcome.REMOTING_ERROR, budget)
        return AttemptResult(Outcome.SEND_OK, b["latency_ms"])

    out, clock = [], 0
    for _ in range(n):
        r = send(strategy, tp, broker, clock, config)
        out.append(([(a.queue.short(), a.outcome.value) for a in r.attempts], r.status))
        clock = r.end_ms + cfg["gap_ms"]
    return out


def _grpc_oracle(cfg: dict, n: int) -> list[tuple[list[tuple[str, str]], str]]:
    """The gRPC producer's sends through the core itself (``grpc.PublishingLoadBalancer`` and
    ``ProducerSendLoop``); a silent broker never answers a heartbeat, so none changes a thing."""
    from rocketlb_core.grpc import GrpcQueue, ProducerSendLoop, PublishingLoadBalancer

    answers = {b["name"]: b["answer"] for b in cfg["brokers"]}
    lb = PublishingLoadBalancer([GrpcQueue("TopicTest", b["name"], 0, f"{b['name']}:8081", i)
                                 for b in cfg["brokers"] for i in range(b["queues"])],
                                cfg["counter"])
    loop = ProducerSendLoop(max_attempts=cfg["retries"] + 1)
    out = []
    for _ in range(n):
        r = loop.send(lb, lambda q, _n: "ok" if answers[q.broker] == "ok" else "fail")
        out.append(([(f"{a.queue.broker}/{a.queue.queue_id}",
                      "SEND_OK" if a.outcome == "ok" else "DEADLINE_EXCEEDED")
                     for a in r.attempts], "SEND_OK" if r.ok else "FAILED"))
    return out


def _sends(view: dict) -> list[tuple[list[tuple[str, str]], str]]:
    return [([(a["queue"], a["outcome"]) for a in row["attempts"]], row["status"])
            for row in view["log"]]


def test_the_same_outage_differs_between_the_classic_and_the_grpc_producer() -> None:
    """Chapter 11's outage (broker-a silent) through both clients of the playground: each as
    the core computes it, and they differ where the core says they do."""
    n = 40
    classic = handle("playground", "out-remoting", {"config": _outage("remoting"),
                                                    "op": "send", "n": n})
    grpc = handle("playground", "out-grpc", {"config": _outage("grpc"), "op": "send", "n": n})
    assert _sends(classic) == _classic_oracle(_outage("remoting"), n)
    assert _sends(grpc) == _grpc_oracle(_outage("grpc"), n)
    assert (classic["client"], grpc["client"]) == ("remoting", "grpc")
    # the first send: the classic one spends its whole 3 s budget on broker-a and fails; the
    # gRPC attempt's 3 s are its own requestTimeout, and the retry stores it on broker-b
    assert _sends(classic)[0] == ([("broker-a/1", "REMOTING_ERROR")], "FAILED")
    assert _sends(grpc)[0] == ([("broker-a/0", "DEADLINE_EXCEEDED"), ("broker-b/0", "SEND_OK")],
                               "SEND_OK")
    assert grpc["log"][0]["error"] is None
    assert classic["log"][0]["error"] == "call timeout"
    assert (classic["failed"], grpc["failed"]) == (1, 0)
    # then both avoid broker-a: the classic by its fault table, the gRPC by isolating its
    # endpoints until a heartbeat is answered (a silent broker answers none)
    assert all(a["broker"] == "broker-b" for row in classic["log"][1:] for a in row["attempts"])
    assert all(a["broker"] == "broker-b" for row in grpc["log"][1:] for a in row["attempts"])
    assert grpc["isolated"] == ["broker-a"]
    assert [f["available"] for f in grpc["faults"]] == [False, True]
    assert [f["available"] for f in classic["faults"]] == [False, True]
    # where the sends went: the gRPC candidates skip the isolated broker, so each of broker-a's
    # four turns of the counter lands on broker-b/0; the classic walk spreads them
    per_queue = {}
    for name, view in (("classic", classic), ("grpc", grpc)):
        stored = [row["attempts"][-1]["queue"] for row in view["log"]
                  if row["status"] == "SEND_OK"]
        per_queue[name] = {q: stored.count(q) for q in sorted(set(stored))}
    assert per_queue["grpc"]["broker-b/0"] > 4 * per_queue["grpc"]["broker-b/1"]
    assert per_queue["grpc"] == {**per_queue["classic"],
                                 "broker-b/0": per_queue["classic"]["broker-b/0"] + 1}
    # broker-a comes back: the classic producer keeps avoiding it for the 600 s its 3001 ms
    # timeout earned in the fault table; the gRPC producer takes it again once a heartbeat is
    # answered (1 s after the start, then every 10 s: at 11 s here)
    went, last = {}, {}
    for name, view in (("classic", classic), ("grpc", grpc)):
        cfg = _outage(view["client"])
        cfg["brokers"][0]["answer"] = "ok"
        assert view["clock_ms"] < 11_000
        back = [handle("playground", f"out-{view['client']}",
                       {"config": cfg, "op": "send", "n": 1}) for _ in range(400)]
        assert back[-1]["clock_ms"] > 11_000
        went[name] = [(v["log"][0]["start_ms"], v["log"][0]["attempts"][-1]["broker"])
                      for v in back]
        last[name] = back[-1]["faults"][0]
    assert all(b == "broker-b" for _, b in went["classic"])
    assert not last["classic"]["available"]
    assert last["classic"]["not_available_until_ms"] == 3_001 + 600_000
    assert last["grpc"]["available"]
    assert all(b == "broker-b" for t, b in went["grpc"] if t < 11_000)
    assert {b for t, b in went["grpc"] if t >= 11_000} == {"broker-a", "broker-b"}


def test_the_grpc_playground_rejoins_a_broker_at_the_next_answered_heartbeat() -> None:
    cfg = _outage("grpc")
    cfg["brokers"][0]["answer"] = "refuse"                   # broker-a refuses in 5 ms
    cfg["gap_ms"] = 300
    first = handle("playground", "rejoin", {"config": cfg, "op": "send", "n": 2})
    assert first["log"][0]["attempts"][0]["outcome"] == "UNAVAILABLE"
    assert first["isolated"] == ["broker-a"]
    assert first["next_heartbeat_ms"] == 1_000
    cfg["brokers"][0]["answer"] = "ok"                       # back: rejoins at the heartbeat
    back = handle("playground", "rejoin", {"config": cfg, "op": "send", "n": 1})
    assert back["sent"] == 3                                 # the producer kept its state
    assert back["clock_ms"] < 1_000
    assert back["isolated"] == ["broker-a"]                  # no heartbeat yet
    assert back["log"][0]["attempts"][0]["broker"] == "broker-b"
    later = handle("playground", "rejoin", {"config": cfg, "op": "send", "n": 8})
    assert later["isolated"] == []
    assert later["next_heartbeat_ms"] == 11_000
    went = [row["attempts"][0]["broker"] for row in later["log"]]
    assert "broker-a" in went
    # a change of client starts over
    other = handle("playground", "rejoin", {"config": {**cfg, "client": "remoting"},
                                            "op": "view"})
    assert (other["sent"], other["client"]) == (0, "remoting")
    assert "isolated" not in other


def test_the_boards_server_rows_are_the_cores_own_answers() -> None:
    """With ``client`` ``grpc`` the board adds what the Proxy answers a gRPC push consumer and
    what the broker answers in POP mode: each member's answer equals the core's
    ``proxy_query_assignment`` and ``broker_query_assignment``, queue -1 included."""
    from rocketlb_core.grpc import broker_query_assignment, proxy_query_assignment
    from rocketlb_core.model import PERM_READ, PERM_WRITE

    rng = random.Random(34)
    for i in range(30):
        state = {**_shape(rng), "client": "grpc", "orderly": rng.random() < 0.3}
        view = handle("board", f"server-{i}", {"state": state, "op": "reset"})
        st = board_mod.parse_state(state)
        rows = {r["strategy"]: r for r in view["rows"]}
        assert len(rows) == 11
        names = [board_mod.broker_name(b) for b in range(st.brokers)]
        proxy = proxy_query_assignment(
            "TopicTest", [(b, st.queues, PERM_READ | PERM_WRITE) for b in names],
            {b: {0: f"{b}:8081"} for b in names}, fifo=st.orderly)
        told = [board_mod.queue_label(q.broker, q.queue_id) for q in proxy]
        assert told == ([f"{b[-1].upper()}{k}" for b in names for k in range(st.queues)]
                        if st.orderly else [f"{b[-1].upper()}(-1)" for b in names])
        name = "PROXY(gRPC push, orderly)" if st.orderly else "PROXY(gRPC push)"
        assert rows[name]["server"]
        assert rows[name]["assigned"] == {c: told for c in st.members}
        members = sorted(st.members, key=lambda c: int(c[1:]))
        assert rows[name]["owners"] == [members for _ in st.mq_all()]
        pop = rows[f"BROKER(POP, share={st.pop_share})"]
        ids = st.ids()
        for c, cid in ids.items():
            got, mode = broker_query_assignment(
                "TopicTest", board_mod.GROUP, cid, "AVG", st.mq_all(), list(ids.values()),
                mode="POP", pop_share_queue_num=st.pop_share)
            assert mode == "POP"
            assert pop["assigned"][c] == [
                board_mod.queue_label(q.broker_name, q.queue_id)
                for q in sorted(got or (), key=lambda q: (names.index(q.broker_name),
                                                          q.queue_id))]
        # the classic rows stay beside them, the same as without the servers
        alone = handle("board", f"server-{i}-alone", {"state": {**state, "client": "remoting"},
                                                      "op": "reset"})
        assert len(alone["rows"]) == 9
        assert alone["rows"] == [{k: v for k, v in r.items()} for r in view["rows"][:9]]
        # a POP broker with the default share (-1) tells everyone every broker's queue -1
        if st.members:
            default = handle("board", f"server-{i}-share", {"state": {**state, "pop_share": -1},
                                                            "op": "reset"})
            row = next(r for r in default["rows"] if r["strategy"] == "BROKER(POP, share=-1)")
            assert set(map(tuple, row["assigned"].values())) == {
                tuple(f"{b[-1].upper()}(-1)" for b in names)}
