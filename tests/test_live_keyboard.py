"""The live figures by keyboard alone, and axe-core on each after an interaction (issue 36).

Headless Chromium reaches every control of each figure with Tab, operates it with Enter, Space,
the arrow keys and typing only (no click, no drag), and every value shown must equal what
``rocketlb_core.interactive`` gives in CPython for the same inputs, as the mouse tests
(``test_live_figures.py``) require. What changed is announced in a live region, and axe-core
(npm, injected from node_modules) finds no critical or serious violation in the figure."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.interactive import handle
from rocketlb_core.interactive.exercises import check
from rocketlb_core.interactive.explorer import SCENARIOS
from tests.book import PageWatch, act, axe, tab_through, tab_to
from tests.test_live_figures import (
    _attempts_text,
    _board_rows,
    _exercises,
    _expected_rows,
    _explorer_expected,
    _explorer_shown,
    _fault_cells,
    _shown_faults,
    _shown_log,
)

pytestmark = pytest.mark.browser


def _stored_request(root: Path, chapter: str, kind: str) -> dict:
    nb = json.loads((root / "notebooks" / f"{chapter}.ipynb").read_text())
    state = nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    found = [m["state"]["request"] for m in state.values()
             if m["state"].get("_anywidget_id", "").endswith(f"widgets.{kind}")]
    assert len(found) == 1, (chapter, kind)
    return copy.deepcopy(found[0])


def _announced(figure) -> str:
    return figure.locator('[data-rlb="announce"]').inner_text()


def test_the_playground_by_keyboard(base_url: str, browser, root: Path) -> None:
    chapter = "02-producer-round-robin"
    watch = PageWatch(browser, base_url + f"notebooks/{chapter}.html")
    page = watch.page
    fig = page.locator(".rlb-playground")
    fig.wait_for(timeout=30_000)
    reached, every = tab_through(page, fig)
    assert reached == every, every - reached
    cfg = _stored_request(root, chapter, "Playground")["config"]
    sid = "kb-playground"
    handle("playground", sid, {"config": cfg, "op": "view"})
    send = fig.locator('[data-rlb="send-1"]')
    for key in ("Enter", "Space", "Enter", "Enter", "Space", "Enter"):
        tab_to(page, send)
        act(page, fig, lambda k=key: page.keyboard.press(k))
        want = handle("playground", sid, {"config": cfg, "op": "send", "n": 1})
        row = want["log"][0]
        assert _shown_log(fig)[0] == (
            _attempts_text(row), row["status"] + (f" ({row['error']})" if row["error"] else ""))
        assert _shown_faults(fig) == _fault_cells(want)
        assert f"send {row['n']}: {row['status']}" in _announced(fig)
    # a broker down, chosen from its select with the arrow keys, then one more send
    answer = fig.locator('[data-rlb="answer-broker-b"]')
    tab_to(page, answer)
    act(page, fig, lambda: page.keyboard.press("ArrowDown"))      # ok -> down: refuses
    assert answer.input_value() == "refuse"
    cfg["brokers"][1]["answer"] = "refuse"
    handle("playground", sid, {"config": cfg, "op": "view"})
    for _ in range(3):
        tab_to(page, send)
        act(page, fig, lambda: page.keyboard.press("Enter"))
        want = handle("playground", sid, {"config": cfg, "op": "send", "n": 1})
        assert _shown_faults(fig) == _fault_cells(want)
    assert axe(page, ".rlb-playground") == []
    watch.check_clean()
    page.close()


def test_the_board_by_keyboard(base_url: str, browser, root: Path) -> None:
    """Select a consumer with Enter, move it with the arrow keys and with a zone's "move here",
    let go with Escape, change the group's size by typing: every strategy's row as CPython."""
    chapter = "05-allocation-strategies"
    watch = PageWatch(browser, base_url + f"notebooks/{chapter}.html")
    page = watch.page
    fig = page.locator(".rlb-board")
    fig.wait_for(timeout=30_000)
    reached, every = tab_through(page, fig)
    assert reached == every, every - reached
    assert {"chip-c1", "chip-c4", "consumers", "duplicate", "forget"} <= reached
    state = _stored_request(root, chapter, "Board")["state"]
    sid = "kb-board"
    handle("board", sid, {"state": copy.deepcopy(state), "op": "view"})

    def expect(update) -> None:  # type: ignore[no-untyped-def]
        update()
        want = handle("board", sid, {"state": copy.deepcopy(state), "op": "view"})
        assert _board_rows(fig) == _expected_rows(want)

    chip = fig.locator('[data-rlb="chip-c4"]')
    tab_to(page, chip)
    page.keyboard.press("Enter")                                   # select c4
    assert fig.locator('[data-rlb="chip-c4"]').get_attribute("aria-pressed") == "true"
    assert "c4 selected" in _announced(fig)
    act(page, fig, lambda: page.keyboard.press("ArrowRight"))     # out -> room-1
    assert fig.locator('[data-rlb="zone-room-1"] [data-rlb="chip-c4"]').count() == 1
    expect(lambda: state["zones"].update(c4="room-1"))
    assert "c4 is now in room-1" in _announced(fig)
    assert page.evaluate("document.activeElement.getAttribute('data-rlb')") == "chip-c4"
    act(page, fig, lambda: page.keyboard.press("ArrowRight"))     # room-1 -> room-2
    expect(lambda: state["zones"].update(c4="room-2"))
    act(page, fig, lambda: page.keyboard.press("ArrowLeft"))      # back to room-1
    expect(lambda: state["zones"].update(c4="room-1"))
    page.keyboard.press("Escape")
    assert fig.locator('[data-rlb="chip-c4"]').get_attribute("aria-pressed") == "false"
    # c1 by Space, then Tab to "move c1 here" in "not in the group", Enter
    tab_to(page, fig.locator('[data-rlb="chip-c1"]'))
    page.keyboard.press("Space")
    tab_to(page, fig.locator('[data-rlb="move-to-out"]'))
    act(page, fig, lambda: page.keyboard.press("Enter"))
    expect(lambda: state["zones"].update(c1="out"))
    assert fig.locator('[data-rlb="zone-out"] [data-rlb="chip-c1"]').count() == 1
    page.keyboard.press("Escape")
    # seven consumers, typed; the change lands when Tab leaves the box
    box = fig.locator('[data-rlb="consumers"]')
    tab_to(page, box)
    page.keyboard.press("Control+A")
    page.keyboard.type("7")
    act(page, fig, lambda: page.keyboard.press("Tab"))
    expect(lambda: state["zones"].update({"c6": "room-2", "c7": "room-1"}))
    assert any(r["n_moved"] for r in _board_rows(fig))
    assert axe(page, ".rlb-board") == []
    watch.check_clean()
    page.close()


def test_the_explorer_by_keyboard(base_url: str, browser) -> None:
    chapter = "04-consumers-and-heartbeats"
    watch = PageWatch(browser, base_url + f"notebooks/{chapter}.html")
    page = watch.page
    fig = page.locator(".rlb-explorer")
    fig.wait_for(timeout=30_000)
    reached, every = tab_through(page, fig)
    assert reached == every, every - reached
    pick = fig.locator('[data-rlb="scenario"]')
    first = pick.input_value()
    tab_to(page, pick)
    act(page, fig, lambda: page.keyboard.press("ArrowDown"))
    name = pick.input_value()
    assert name != first
    assert name in SCENARIOS
    text = data_path("scenarios", f"{name}.toml").read_text()
    t = 0
    for _ in range(3):
        view = handle("explorer", f"kb-{name}", {"scenario": name, "toml": text, "seed": 0,
                                                 "t_ms": t})
        assert _explorer_shown(fig) == _explorer_expected(view), t
        assert _announced(fig).startswith(f"{name} at {t / 1000:.1f} s")
        later = [x for x in view["ticks"] if x > t]
        if not later:
            break
        tab_to(page, fig.locator('[data-rlb="next"]'))
        act(page, fig, lambda: page.keyboard.press("Enter"))
        t = later[0]
    assert axe(page, ".rlb-explorer") == []
    watch.check_clean()
    page.close()


def test_an_exercise_by_keyboard(base_url: str, browser, root: Path) -> None:
    chapter = "02-producer-round-robin"
    stored = {ex["prompt"]: ex for ex in _exercises(root / "notebooks" / f"{chapter}.ipynb")}
    watch = PageWatch(browser, base_url + f"notebooks/{chapter}.html")
    page = watch.page
    box = page.locator(".rlb-exercise").first
    box.wait_for(timeout=30_000)
    reached, every = tab_through(page, box)
    assert reached == every, every - reached
    ex = stored[box.locator(".rlb-prompt").inner_text()]
    truth = check({"exercise": ex["exercise"], "params": ex["params"], "answer": "",
                   "reveal": True})["truth"]
    tab_to(page, box.locator('[data-rlb="answer"]'))
    page.keyboard.type(truth)
    act(page, box, lambda: page.keyboard.press("Enter"))
    assert box.locator('[data-rlb="verdict"]').inner_text() == f"Right: {truth}"
    assert box.locator('[data-rlb="verdict"]').get_attribute("aria-live") == "polite"
    tab_to(page, box.locator('[data-rlb="reveal"]'))
    act(page, box, lambda: page.keyboard.press("Space"))
    assert box.locator('[data-rlb="verdict"]').inner_text() == f"The package says: {truth}"
    assert axe(page, ".rlb-exercise") == []
    watch.check_clean()
    page.close()


# ------------------------------------------------- chapter 11: the gRPC clients' choices
CH11 = "11-rocketmq5-clients"


def _isolation_cells(view: dict) -> list[list[str]]:
    """The gRPC playground's table in place of the fault table (``playground.js``)."""
    return [[f["broker"], str(view["stored"][f["broker"]]), str(view["attempts"][f["broker"]]),
             f["endpoints"],
             "isolated until a heartbeat is answered" if f["isolated"] else "available"]
            for f in view["faults"]]


def _expected_faults(view: dict) -> list[list[str]]:
    return _isolation_cells(view) if view["client"] == "grpc" else _fault_cells(view)


def _result_text(row: dict) -> str:
    return row["status"] + (f" ({row['error']})" if row["error"] else "")


def test_the_playgrounds_client_choice_by_keyboard(base_url: str, browser, root: Path) -> None:
    """Chapter 11's outage (broker-a silent) with the client select worked by the arrow keys:
    the gRPC producer's sends and isolation, then the classic producer's sends and fault table,
    then broker-a back and each client's next sends, all as CPython computes them."""
    watch = PageWatch(browser, base_url + f"notebooks/{CH11}.html")
    page = watch.page
    fig = page.locator(".rlb-playground")
    fig.wait_for(timeout=30_000)
    reached, every = tab_through(page, fig)
    assert reached == every, every - reached
    assert {"client", "send-1", "send-100", "answer-broker-a"} <= reached
    assert "line" not in reached                       # the gRPC client reads no line: disabled
    cfg = _stored_request(root, CH11, "Playground")["config"]
    assert cfg["client"] == "grpc"
    sid = "kb-grpc-playground"
    handle("playground", sid, {"config": cfg, "op": "view"})
    send = fig.locator('[data-rlb="send-1"]')

    def send_by(key: str, n: int = 1) -> dict:
        button = send if n == 1 else fig.locator('[data-rlb="send-100"]')
        tab_to(page, button)
        act(page, fig, lambda: page.keyboard.press(key))
        want = handle("playground", sid, {"config": cfg, "op": "send", "n": n})
        row = want["log"][-1]
        assert _shown_log(fig)[0] == (_attempts_text(row), _result_text(row))
        assert _shown_faults(fig) == _expected_faults(want)
        assert fig.locator('[data-rlb="sent"]').inner_text() == str(want["sent"])
        return want

    first = send_by("Enter")
    assert first["log"][0]["status"] == "SEND_OK"                   # the retry on broker-b
    assert [a["broker"] for a in first["log"][0]["attempts"]] == ["broker-a", "broker-b"]
    assert "send 1: SEND_OK on broker-b/0" in _announced(fig)
    assert "isolated: broker-a" in _announced(fig)
    # the queue shown is the client's: a local-mode Proxy keeps the broker, draws the queue
    assert "the queue here is the client's choice" in \
        fig.locator('[data-rlb="grpc-note"]').inner_text()
    send_by("Space")
    # the classic producer: ArrowUp on the client select starts it over
    client = fig.locator('[data-rlb="client"]')
    tab_to(page, client)
    act(page, fig, lambda: page.keyboard.press("ArrowUp"))
    assert client.input_value() == "remoting"
    assert page.evaluate("document.activeElement.getAttribute('data-rlb')") == "client"
    assert _announced(fig).startswith("client: classic remoting")
    assert fig.locator('[data-rlb="grpc-note"]').count() == 0
    cfg["client"] = "remoting"
    handle("playground", sid, {"config": cfg, "op": "reset"})
    assert fig.locator('[data-rlb="sent"]').inner_text() == "0"
    classic = send_by("Enter")
    assert classic["log"][0]["status"] == "FAILED"                  # the budget is spent
    assert "send 1: FAILED" in _announced(fig)
    send_by("Space")
    # broker-a answers again (ArrowUp twice: down: silent -> down: refuses -> answers)
    answer = fig.locator('[data-rlb="answer-broker-a"]')
    for value in ("refuse", "ok"):
        tab_to(page, answer)
        act(page, fig, lambda: page.keyboard.press("ArrowUp"))
        assert answer.input_value() == value
        cfg["brokers"][0]["answer"] = value
        handle("playground", sid, {"config": cfg, "op": "view"})
    assert "updated: counter" in _announced(fig)
    for _ in range(4):
        classic = send_by("Enter", 100)
    assert classic["stored"]["broker-a"] == 0                       # 600 s in the fault table
    # the gRPC producer the same way: broker-a silent for one send, isolated; back, it rejoins
    # at the first heartbeat it answers (11 s here)
    tab_to(page, client)
    act(page, fig, lambda: page.keyboard.press("ArrowDown"))
    assert client.input_value() == "grpc"
    cfg["client"] = "grpc"
    handle("playground", sid, {"config": cfg, "op": "reset"})

    def answer_by(key: str, value: str) -> None:
        tab_to(page, answer)
        act(page, fig, lambda: page.keyboard.press(key))
        assert answer.input_value() == value
        cfg["brokers"][0]["answer"] = value
        handle("playground", sid, {"config": cfg, "op": "view"})

    answer_by("ArrowDown", "refuse")
    answer_by("ArrowDown", "silent")
    assert send_by("Enter")["isolated"] == ["broker-a"]
    answer_by("ArrowUp", "refuse")
    answer_by("ArrowUp", "ok")
    grpc = send_by("Enter")
    assert grpc["isolated"] == ["broker-a"]                         # no heartbeat yet
    for _ in range(4):
        grpc = send_by("Enter", 100)
    assert grpc["clock_ms"] > 11_000
    assert grpc["isolated"] == []
    assert "broker-a" in {row["attempts"][-1]["broker"] for row in grpc["log"]}
    assert axe(page, ".rlb-playground") == []
    watch.check_clean()
    page.close()


def _server_answers(fig) -> list[list[str]] | None:  # type: ignore[no-untyped-def]
    table = fig.locator('[data-rlb="server-answers"]')
    if table.count() == 0:
        return None
    return table.evaluate("t => Array.from(t.querySelectorAll('tr')).map(r => "
                          "Array.from(r.children).map(c => c.innerText.trim()))")


def _expected_answers(view: dict) -> list[list[str]] | None:
    rows = [r for r in view["rows"] if r.get("server")]
    if not rows:
        return None
    return [["consumer"] + [f"{r['strategy']} answers" for r in rows]] + [
        [c] + [" ".join(r["assigned"][c]) or "–" for r in rows] for c in view["members"]]


def test_the_boards_server_side_assignment_by_keyboard(base_url: str, browser,
                                                      root: Path) -> None:
    """Chapter 11's board with the servers' rows: the orderly box by Space, a consumer moved by
    Enter and the arrow keys, the pop share typed, the consumer group select by the arrow keys:
    every row and what the servers answer each consumer as CPython computes them."""
    watch = PageWatch(browser, base_url + f"notebooks/{CH11}.html")
    page = watch.page
    fig = page.locator(".rlb-board")
    fig.wait_for(timeout=30_000)
    reached, every = tab_through(page, fig)
    assert reached == every, every - reached
    assert {"client", "orderly", "pop_share", "chip-c4",
            "what the servers answer each consumer"} <= reached
    state = _stored_request(root, CH11, "Board")["state"]
    assert state["client"] == "grpc"
    sid = "kb-server-board"
    first = handle("board", sid, {"state": copy.deepcopy(state), "op": "view"})
    assert _server_answers(fig) == _expected_answers(first)
    assert _server_answers(fig)[1][1] == "A(-1) B(-1)"

    def expect(update) -> dict:  # type: ignore[no-untyped-def]
        update()
        want = handle("board", sid, {"state": copy.deepcopy(state), "op": "view"})
        assert _board_rows(fig) == _expected_rows(want)
        assert _server_answers(fig) == _expected_answers(want)
        return want

    tab_to(page, fig.locator('[data-rlb="orderly"]'))
    act(page, fig, lambda: page.keyboard.press("Space"))
    view = expect(lambda: state.update(orderly=True))
    assert "consumeMessageOrderly on" in _announced(fig)
    assert any(r["strategy"] == "PROXY(gRPC push, orderly)" for r in view["rows"])
    chip = fig.locator('[data-rlb="chip-c4"]')
    tab_to(page, chip)
    page.keyboard.press("Enter")
    act(page, fig, lambda: page.keyboard.press("ArrowLeft"))      # not in the group -> room-2
    expect(lambda: state["zones"].update(c4="room-2"))
    assert "c4 is now in room-2" in _announced(fig)
    page.keyboard.press("Escape")
    box = fig.locator('[data-rlb="pop_share"]')
    tab_to(page, box)
    page.keyboard.press("Control+A")
    page.keyboard.type("-1")
    act(page, fig, lambda: page.keyboard.press("Tab"))
    view = expect(lambda: state.update(pop_share=-1))
    pop = next(r for r in view["rows"] if r["strategy"] == "BROKER(POP, share=-1)")
    assert set(map(tuple, pop["assigned"].values())) == {("A(-1)", "B(-1)")}
    client = fig.locator('[data-rlb="client"]')
    tab_to(page, client)
    act(page, fig, lambda: page.keyboard.press("ArrowUp"))        # back to the classic rows
    assert client.input_value() == "remoting"
    view = expect(lambda: state.update(client="remoting"))
    assert _announced(fig).startswith("consumer group: classic")
    assert len(view["rows"]) == 9
    assert fig.locator('[data-rlb="orderly"]').count() == 0
    tab_to(page, client)
    act(page, fig, lambda: page.keyboard.press("ArrowDown"))
    expect(lambda: state.update(client="grpc"))
    assert axe(page, ".rlb-board") == []
    watch.check_clean()
    page.close()
