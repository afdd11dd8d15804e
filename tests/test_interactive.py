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
