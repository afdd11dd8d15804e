"""The book's live figures in the built web book, with no kernel: headless Chromium drives each
widget as a reader would (clicks, drags, typing), the page's Pyodide computes, and every value
displayed must equal what ``rocketlb_core.interactive`` computes in CPython for the same inputs.
Every page is checked for requests leaving 127.0.0.1 (aborted and failed on), HTTP errors and
JavaScript errors (``tests/book.py``)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.interactive import handle
from rocketlb_core.interactive.cells import run
from rocketlb_core.interactive.exercises import check
from rocketlb_core.interactive.explorer import SCENARIOS
from rocketlb_core.interactive.playground import seed002
from rocketlb_core.viz.widgets import playground
from tests.book import PageWatch, act

pytestmark = pytest.mark.browser
LINES = ("4.7.1", "4.9.7", "4.9.8", "5.3.3")


# ------------------------------------------------------------------ the producer playground
def _attempts_text(row: dict) -> str:
    return " → ".join(f"{a['queue']}: {a['outcome']}, {a['latency_ms']}" for a in row["attempts"])


def _fault_cells(view: dict) -> list[list[str]]:
    out = []
    for f in view["faults"]:
        b = f["broker"]
        out.append([b, str(view["stored"][b]), str(view["attempts"][b]),
                    f"{f['latency_ms']} ms" if f["item"] else "no item",
                    f"{f['not_available_until_ms'] / 1000:.3f} s" if f["item"] else "-",
                    "available" if f["available"] else f"avoided for {f['wait_ms'] / 1000:.3f} s"])
    return out


def _shown_faults(root) -> list[list[str]]:
    return root.locator('[data-rlb="faults"]').evaluate(
        "t => Array.from(t.querySelectorAll('tr')).slice(1).map("
        "r => Array.from(r.children).map(c => c.innerText.trim()))")


def _shown_log(root) -> list[tuple[str, str]]:
    return [tuple(r) for r in root.locator('[data-rlb="log"]').evaluate(
        "t => Array.from(t.querySelectorAll('tr[data-rlb=send-row]')).map(r => "
        "[r.querySelector('[data-rlb=attempts]').innerText.trim(), "
        "r.querySelector('[data-rlb=result]').innerText.trim()])")]


def _configure(page, root, line: str, fault: bool, counter: int, variant: int) -> dict:
    """Set the playground through its controls; returns the configuration that should hold."""
    base = copy.deepcopy(playground().request["config"])
    if variant == 2:                                          # the article's experiment
        cfg = seed002(True, line)
        act(page, root, lambda: root.locator('[data-rlb="preset"]').select_option(
            "seed 002, output 2 (every attempt fails)"))
        if line != "4.7.1":
            act(page, root, lambda: root.locator('[data-rlb="line"]').select_option(line))
        return cfg
    cfg = base
    act(page, root, lambda: root.locator('[data-rlb="preset"]').select_option(
        "three healthy brokers"))
    if line != cfg["line"]:
        act(page, root, lambda: root.locator('[data-rlb="line"]').select_option(line))
        cfg["line"] = line
    if bool(cfg["fault"]) != fault:
        act(page, root, lambda: root.locator('[data-rlb="fault"]').click())
        cfg["fault"] = fault
    box = root.locator('[data-rlb="counter"]')
    if counter != cfg["counter"]:
        act(page, root, lambda: (box.fill(str(counter)), box.dispatch_event("change")))
        cfg["counter"] = counter
    if variant == 0:                      # broker-b slow, broker-c refuses
        act(page, root, lambda: root.locator('[data-rlb="slow-broker-b"]').click())
        cfg["brokers"][1].update(answer="ok", latency_ms=700)
        act(page, root, lambda: root.locator('[data-rlb="down-broker-c"]').click())
        cfg["brokers"][2]["answer"] = "refuse"
    else:                                 # broker-a silent, two queues on broker-c
        act(page, root, lambda: root.locator('[data-rlb="answer-broker-a"]').select_option(
            "silent"))
        cfg["brokers"][0]["answer"] = "silent"
        q = root.locator('[data-rlb="queues-broker-c"]')
        act(page, root, lambda: (q.fill("2"), q.dispatch_event("change")))
        cfg["brokers"][2]["queues"] = 2
    return cfg


def test_the_playground_sends_in_the_page_as_in_cpython(base_url: str, browser) -> None:
    """Every line, three set-ups each (a slow and a refusing broker with the fault strategy on;
    a silent broker with it off; seed 002's experiment): 12 single sends, compared send by send
    (every attempt's queue, outcome and latency), then a "send 100", compared on the fault
    table, the counts and the last sends shown."""
    watch = PageWatch(browser, base_url + "notebooks/02-producer-round-robin.html")
    page = watch.page
    root = page.locator(".rlb-playground")
    root.wait_for(timeout=30_000)
    # nothing loaded before a click, unless a live figure or browser cell is near the viewport
    assert page.evaluate("!rocketlbLive.loaded() || rocketlbLive.preloaded === true")
    rng = random.Random(12)
    for line in LINES:
        for variant in range(3):
            counter = rng.choice([0, 5, 2**31 - 3])
            cfg = _configure(page, root, line, fault=variant == 0, counter=counter,
                             variant=variant)
            sid = f"pg-{line}-{variant}"
            handle("playground", sid, {"config": cfg, "op": "reset"})
            for _ in range(12):
                act(page, root, lambda: root.locator('[data-rlb="send-1"]').click())
                want = handle("playground", sid, {"config": cfg, "op": "send", "n": 1})
                row = want["log"][0]
                assert _shown_log(root)[0] == (
                    _attempts_text(row),
                    row["status"] + (f" ({row['error']})" if row["error"] else "")), (line, variant)
                assert _shown_faults(root) == _fault_cells(want), (line, variant)
            act(page, root, lambda: root.locator('[data-rlb="send-100"]').click())
            want = handle("playground", sid, {"config": cfg, "op": "send", "n": 100})
            assert _shown_faults(root) == _fault_cells(want)
            shown = _shown_log(root)
            assert [a for a, _ in shown] == [_attempts_text(r) for r in want["log"][::-1][:12]]
            assert root.locator('[data-rlb="counter-value"]').inner_text() == str(want["counter"])
            assert root.locator('[data-rlb="sent"]').inner_text() == "112"
    assert "Pyodide" in root.locator('[data-rlb="status"]').inner_text()
    watch.check_clean()
    page.close()


# ------------------------------------------------------------------ the allocation board
def _board_rows(root) -> list[dict]:
    return root.locator('[data-rlb="assignment-grid"]').evaluate(
        """t => Array.from(t.querySelectorAll('tr')).slice(1).map(r => {
             const name = r.querySelector('.rlb-strategy').innerText.trim();
             const cells = Array.from(r.querySelectorAll('[data-rlb=cell]'));
             const count = k => parseInt(r.querySelector(`[data-rlb="${k}-${name}"]`).innerText);
             return {strategy: name,
                     owners: cells.map(c => c.getAttribute('data-owners')),
                     moved: cells.map(c => c.getAttribute('data-moved') === '1'),
                     n_moved: count('moved'), n_idle: count('idle'),
                     unowned: count('unowned'), shared: count('shared')};
           })""")


def _expected_rows(view: dict) -> list[dict]:
    return [{"strategy": r["strategy"], "owners": ["+".join(w) for w in r["owners"]],
             "moved": r["moved"], "n_moved": r["n_moved"], "n_idle": r["n_idle"],
             "unowned": r["unowned"], "shared": r["shared"]} for r in view["rows"]]


ZONES = ("out", "room-1", "room-2")


def test_the_board_allocates_in_the_page_as_in_cpython(base_url: str, browser) -> None:
    """20 seeded random group shapes (1-32 consumers, 1-4 brokers, 1-16 queues per broker, the
    duplicate-id toggle, pop's share) set through the controls, then consumers moved by drag and
    by click: every strategy's row (owner of every queue, moved outlines, counts) must equal
    CPython replaying the same sequence of states (STICKY and "moved" depend on it)."""
    watch = PageWatch(browser, base_url + "notebooks/05-allocation-strategies.html")
    page = watch.page
    root = page.locator(".rlb-board")
    root.wait_for(timeout=30_000)
    state = {"brokers": 2, "queues": 4, "duplicate": False, "pop_share": 1,
             "zones": {"c1": "room-1", "c2": "room-1", "c3": "room-2", "c4": "out", "c5": "out"}}
    sid = "board-page"
    handle("board", sid, {"state": copy.deepcopy(state), "op": "reset"})   # the prime
    rng = random.Random(20261123)
    strategies_seen: set[str] = set()

    def change(action, update) -> dict:  # type: ignore[no-untyped-def]
        act(page, root, action)
        update()
        return handle("board", sid, {"state": copy.deepcopy(state), "op": "view"})

    def number(key: str, value: int):  # type: ignore[no-untyped-def]
        box = root.locator(f'[data-rlb="{key}"]')
        return lambda: (box.fill(str(value)), box.dispatch_event("change"))

    view = None
    for _shape in range(20):
        n = rng.randint(1, 32)

        def resize(n: int = n) -> None:
            state["zones"] = {f"c{k}": state["zones"].get(f"c{k}", "room-1" if k % 2 else "room-2")
                              for k in range(1, n + 1)}
        if n != len(state["zones"]):
            view = change(number("consumers", n), resize)
        for key, value in (("brokers", rng.randint(1, 4)), ("queues", rng.randint(1, 16)),
                           ("pop_share", rng.randint(-1, 3))):
            if state[key] != value:
                view = change(number(key, value), lambda k=key, v=value: state.update({k: v}))
        if rng.random() < 0.3 or state["duplicate"]:
            view = change(lambda: root.locator('[data-rlb="duplicate"]').click(),
                          lambda: state.update(duplicate=not state["duplicate"]))
        for _move in range(3):
            who = f"c{rng.randint(1, n)}"
            zone = state["zones"][who]
            if rng.random() < 0.5:                            # a click moves it on
                after = ZONES[(ZONES.index(zone) + 1) % 3]
                view = change(lambda w=who: root.locator(f'[data-rlb="chip-{w}"]').click(),
                              lambda w=who, a=after: state["zones"].update({w: a}))
            else:                                             # a real HTML5 drag
                after = rng.choice([z for z in ZONES if z != zone])
                view = change(lambda w=who, a=after: page.drag_and_drop(
                    f'[data-rlb="chip-{w}"]', f'[data-rlb="zone-{a}"]'),
                    lambda w=who, a=after: state["zones"].update({w: a}))
        shown, want = _board_rows(root), _expected_rows(view)
        assert shown == want, (state, [(a["strategy"], k, a[k], b[k]) for a, b in zip(
            shown, want, strict=False) for k in a if a[k] != b[k]][:3])
        strategies_seen |= {r["strategy"].split("(")[0] for r in view["rows"]}
    assert view is not None
    assert any(r["n_moved"] for r in view["rows"])
    assert strategies_seen >= {"AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH",
                               "CONSISTENT_HASH_BOUNDED", "STICKY", "CONFIG", "MACHINE_ROOM",
                               "MACHINE_ROOM_NEARBY", "POP"}
    watch.check_clean()
    page.close()


# ------------------------------------------------------------------ the rebalance explorer
def _explorer_expected(view: dict) -> dict:
    sec = lambda ms: f"{ms / 1000:.1f} s"  # noqa: E731
    return {"t": sec(view["t_ms"]),
            "queues": [[q["queue"], ", ".join(q["owners"]) or "nobody", q["state"],
                        sec(q["since_ms"]), sec(q["until_ms"])] for q in view["queues"]],
            "clients": [[c["name"], "yes" if c["alive"] else "no",
                         "-" if c["view"] is None else str(c["view"]),
                         ", ".join(c["holds"]) or "nothing"] for c in view["clients"]],
            "membership": [[b, ", ".join(m) or "nobody"] for b, m in view["membership"].items()]}


def _explorer_shown(root) -> dict:
    table = ("k => Array.from(document.querySelectorAll(`.rlb-explorer [data-rlb=${k}] tr`))"
             ".slice(1).map(r => Array.from(r.children).map(c => c.innerText.trim()))")
    return {"t": root.locator('[data-rlb="t"]').inner_text(),
            **{k: root.page.evaluate(table, k) for k in ("queues", "clients", "membership")}}


@pytest.mark.parametrize("chapter", ["04-consumers-and-heartbeats", "06-rebalance-in-motion"])
def test_the_explorer_runs_scenarios_in_the_page_as_in_cpython(base_url: str, browser,
                                                               chapter: str) -> None:
    watch = PageWatch(browser, base_url + f"notebooks/{chapter}.html")
    page = watch.page
    root = page.locator(".rlb-explorer")
    root.wait_for(timeout=30_000)
    for name in SCENARIOS if chapter.startswith("04") else SCENARIOS[:2]:
        text = data_path("scenarios", f"{name}.toml").read_text()
        act(page, root, lambda n=name: root.locator('[data-rlb="scenario"]').select_option(n))
        t = 0
        for _ in range(4):
            view = handle("explorer", f"{chapter}-{name}", {"scenario": name, "toml": text,
                                                            "seed": 0, "t_ms": t})
            assert _explorer_shown(root) == _explorer_expected(view), (name, t)
            later = [x for x in view["ticks"] if x > t]
            if not later:
                break
            act(page, root, lambda: root.locator('[data-rlb="next"]').click())
            t = later[0]
    watch.check_clean()
    page.close()


# ------------------------------------------------------------------ self-checking exercises
def _exercises(notebook: Path) -> list[dict]:
    nb = json.loads(notebook.read_text())
    state = nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    out = [m["state"] for m in state.values()
           if m["state"].get("_anywidget_id", "").endswith("widgets.Exercise")]
    return out


@pytest.mark.parametrize("chapter", ["02-producer-round-robin", "03-latency-fault-tolerance",
                                     "05-allocation-strategies"])
def test_exercises_check_themselves_in_the_page(base_url: str, browser, root: Path,
                                                chapter: str) -> None:
    stored = _exercises(root / "notebooks" / f"{chapter}.ipynb")
    assert len(stored) >= 3
    watch = PageWatch(browser, base_url + f"notebooks/{chapter}.html")
    page = watch.page
    boxes = page.locator(".rlb-exercise")
    boxes.first.wait_for(timeout=30_000)
    assert boxes.count() == len(stored)
    by_prompt = {ex["prompt"]: ex for ex in stored}
    assert len(by_prompt) == len(stored)
    for i in range(len(stored)):
        box = boxes.nth(i)
        ex = by_prompt[box.locator(".rlb-prompt").inner_text()]
        truth = check({"exercise": ex["exercise"], "params": ex["params"], "answer": "",
                       "reveal": True})["truth"]
        act(page, box, lambda b=box: (b.locator('[data-rlb="answer"]').fill("no such answer"),
                                       b.locator('[data-rlb="check"]').click()))
        assert box.locator('[data-rlb="verdict"]').inner_text().startswith("Not that")
        act(page, box, lambda b=box: b.locator('[data-rlb="reveal"]').click())
        assert box.locator('[data-rlb="verdict"]').inner_text() == f"The package says: {truth}"
        act(page, box, lambda b=box, t=truth: (b.locator('[data-rlb="answer"]').fill(t),
                                       b.locator('[data-rlb="answer"]').press("Enter")))
        assert box.locator('[data-rlb="verdict"]').inner_text() == f"Right: {truth}"
    watch.check_clean()
    page.close()


# ------------------------------------------------------------------ run in the browser
def _stored_text(cell: dict) -> str:
    out = ""
    for o in cell["outputs"]:
        if o["output_type"] == "stream":
            out += "".join(o["text"])
        elif "text/plain" in o.get("data", {}):
            out += "".join(o["data"]["text/plain"]) + "\n"
    return out


@pytest.mark.parametrize("chapter", ["02-producer-round-robin", "03-latency-fault-tolerance",
                                     "06-rebalance-in-motion"])
def test_browser_cells_print_in_the_page_what_they_printed_in_the_kernel(
        base_url: str, browser, root: Path, chapter: str) -> None:
    nb = json.loads((root / "notebooks" / f"{chapter}.ipynb").read_text())
    cells = [c for c in nb["cells"] if "rocketlb-browser" in c["metadata"].get("tags", [])]
    assert cells
    watch = PageWatch(browser, base_url + f"notebooks/{chapter}.html")
    page = watch.page
    shown = page.locator("div.cell.tag_rocketlb-browser")
    assert shown.count() == len(cells)
    # the last cell first: the page runs the earlier ones for it, as a kernel would have
    last = shown.nth(len(cells) - 1)
    last.locator('[data-rlb="run-cell"]').click()
    page.wait_for_function("n => document.querySelectorAll('div.cell[data-rlb-ran]').length === n",
                           arg=len(cells), timeout=60_000)
    for i, cell in enumerate(cells):
        assert shown.nth(i).get_attribute("data-rlb-ran") == "ok"
        assert shown.nth(i).locator('[data-rlb="cell-output"]').inner_text().rstrip("\n") == (
            _stored_text(cell) or "(no output)").rstrip("\n"), (chapter, i)
    # edit a cell and run it: the reader's own code, in the same namespace
    first = shown.nth(0)
    first.locator('[data-rlb="edit-cell"]').click()
    code = "print(sorted(k for k in dir() if not k.startswith('_'))[:3])"
    first.locator("textarea.rlb-cell-edit").fill(code)
    first.locator('[data-rlb="run-cell"]').click()
    page.wait_for_function("el => el.querySelector('[data-rlb=cell-output]').innerText !== "
                           "'running…'", arg=first.element_handle(), timeout=30_000)
    page_key = page.evaluate("location.pathname")
    for c in cells:                                       # the same namespace, in CPython
        run(page_key, "".join(c["source"]))
    assert first.locator('[data-rlb="cell-output"]').inner_text().rstrip("\n") == (
        run(page_key, code)["stdout"].rstrip("\n"))
    # cells that need a kernel say so; Spark cells say Spark
    notes = page.locator('[data-rlb="kernel-note"]')
    kernel = [c for c in nb["cells"] if {"rocketlb-kernel", "rocketlb-kernel-spark"}
              & set(c["metadata"].get("tags", []))]
    assert notes.count() == len(kernel)
    figures = page.locator("div.cell.tag_rocketlb-figure")
    assert figures.count() >= 1
    assert figures.locator('[data-rlb="kernel-note"]').count() == 0
    watch.check_clean()
    page.close()


def test_spark_cells_say_they_need_a_kernel(base_url: str, browser) -> None:
    watch = PageWatch(browser, base_url + "notebooks/07-replay-with-spark.html")
    page = watch.page
    notes = page.locator("div.cell.tag_rocketlb-kernel-spark [data-rlb=kernel-note]")
    assert notes.count() >= 2
    assert "needs Spark" in notes.first.inner_text()
    assert page.locator('[data-rlb="run-cell"]').count() == 0
    assert not page.evaluate("rocketlbLive.loaded()")
    watch.check_clean()
    page.close()
