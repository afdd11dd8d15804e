"""Chapter 8's Kafka rack board (KIP-881, issue 33 item 5) and the chapter's column (issue 36
item 1).

The board's model (``rocketlb_core.interactive.kafka_board``) is checked against the port's
assignors called directly; in the built web book, headless Chromium drives the board through its
controls, by mouse-free keyboard and by ``select_option``, and every row shown (the owner of
each partition, the off-rack and moved marks, the counts) must equal what CPython's
``rocketlb_core.interactive`` answers for the same sequence of states; axe-core finds no
critical or serious violation. Every code block and output of the chapter fits its column at
1280 px without scrolling sideways."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from rocketlb_core.interactive import handle
from rocketlb_core.interactive.kafka_board import CHOICES, TOPIC, parse_state, step
from rocketlb_core.kafka.assignors import Member, range_assign
from tests.book import PageWatch, act, axe, tab_through, tab_to

CHAPTER = "08-beyond-rocketmq"


def _stored_request(root: Path) -> dict:
    nb = json.loads((root / "notebooks" / f"{CHAPTER}.ipynb").read_text())
    state = nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    found = [m["state"]["request"] for m in state.values()
             if m["state"].get("_anywidget_id", "").endswith("widgets.KafkaBoard")]
    assert len(found) == 1
    return copy.deepcopy(found[0])


# ------------------------------------------------------------------ the model, in CPython
def test_the_range_rows_are_the_ports_range_assignor() -> None:
    rng = random.Random(881)
    for _ in range(50):
        racks = {f"c{k}": rng.choice(CHOICES) for k in range(1, rng.randint(1, 6) + 1)}
        st = {"partitions": rng.randint(1, 12), "replicas": rng.randint(1, 3), "racks": racks}
        _, view = step(None, {"state": st})
        state = parse_state(st)
        replicas = {TOPIC: state.replica_racks()}
        for row in view["rows"][:2]:
            members = [Member(c, (TOPIC,), rack=r if row["client_rack"] and r != "none"
                              else None) for c, r in racks.items()]
            owners = [""] * st["partitions"]
            for m, tps in range_assign({TOPIC: st["partitions"]}, members,
                                       racks=replicas).items():
                for _, p in tps:
                    owners[p] = m
            assert row["owners"] == owners
            assert row["n_off_rack"] == sum(
                bool(o) and racks[o] != "none" and racks[o] not in replicas[TOPIC][p]
                for p, o in enumerate(owners))


def test_told_the_racks_the_assignors_keep_partitions_in_their_racks() -> None:
    """The default board: range sends five of eight partitions off-rack and cooperative
    sticky seven; with client.rack each sends one; with three replicas nothing is off-rack
    and the sticky assignor moves nothing (the chapter's text)."""
    st = {"partitions": 8, "replicas": 1,
          "racks": {"c1": "rack-a", "c2": "rack-a", "c3": "rack-b", "c4": "rack-c"}}
    board, view = step(None, {"state": st})
    assert [r["n_off_rack"] for r in view["rows"]] == [5, 1, 7, 1]
    assert all(r["spread"] == 0 and r["unowned"] == 0 for r in view["rows"])
    _, view = step(board, {"state": {**st, "replicas": 3}})
    assert [r["n_off_rack"] for r in view["rows"]] == [0, 0, 0, 0]
    assert [r["n_moved"] for r in view["rows"]] == [0, 6, 0, 0]


def test_a_bad_request_names_its_field() -> None:
    bad = handle("kafka-board", "t", {"state": {"partitions": 8, "racks": {"c1": "rack-z"}}})
    assert "state.racks.c1" in bad["error"]
    bad = handle("kafka-board", "t", {"state": {"partitions": 13, "racks": {"c1": "none"}}})
    assert "state.partitions" in bad["error"]
    bad = handle("kafka-board", "t", {"state": {"racks": {"c2": "none"}}})
    assert "c1 is missing" in bad["error"]


# ------------------------------------------------------------------ the page, no kernel
def _shown(fig) -> list[dict]:
    return fig.locator('[data-rlb="assignment-grid"]').evaluate(
        """t => Array.from(t.querySelectorAll('tr[data-rlb^="row-"]')).map(r => {
             const key = r.getAttribute('data-rlb').slice(4);
             const cells = Array.from(r.querySelectorAll('[data-rlb=cell]'));
             const count = k => parseInt(r.querySelector(`[data-rlb="${k}-${key}"]`).innerText);
             return {key: key, owners: cells.map(c => c.getAttribute('data-owner')),
                     off_rack: cells.map(c => c.getAttribute('data-off-rack') === '1'),
                     moved: cells.map(c => c.getAttribute('data-moved') === '1'),
                     n_off_rack: count('off-rack'), n_moved: count('moved'),
                     spread: count('spread')};
           })""")


def _expected(view: dict) -> list[dict]:
    return [{"key": r["assignor"] + ("-racks" if r["client_rack"] else ""),
             "owners": r["owners"], "off_rack": r["off_rack"], "moved": r["moved"],
             "n_off_rack": r["n_off_rack"], "n_moved": r["n_moved"], "spread": r["spread"]}
            for r in view["rows"]]


def _replicas_shown(fig) -> list[str]:
    return fig.locator('[data-rlb="replica-racks"]').all_inner_texts()


@pytest.mark.browser
def test_the_kafka_board_by_keyboard(base_url: str, browser, root: Path) -> None:
    """Tab reaches every control; a consumer's rack chosen with the arrow keys, the partitions
    and the racks per partition typed: every row as CPython, each change announced."""
    watch = PageWatch(browser, base_url + f"notebooks/{CHAPTER}.html")
    page = watch.page
    page.set_default_timeout(120_000)      # a loaded machine: Pyodide may hold the page
    fig = page.locator(".rlb-kafka-board")
    fig.wait_for(timeout=30_000)
    reached, every = tab_through(page, fig)
    assert reached == every, every - reached
    assert {"rack-c1", "rack-c4", "consumers", "partitions", "replicas", "forget"} <= reached
    state = _stored_request(root)["state"]
    sid = "kb-kafka-board"
    handle("kafka-board", sid, {"state": copy.deepcopy(state), "op": "view"})

    def expect(update) -> None:  # type: ignore[no-untyped-def]
        update()
        want = handle("kafka-board", sid, {"state": copy.deepcopy(state), "op": "view"})
        assert _shown(fig) == _expected(want)
        assert _replicas_shown(fig) == [" ".join(r[-1] for r in rs)
                                        for rs in want["replica_racks"]]

    pick = fig.locator('[data-rlb="rack-c2"]')
    tab_to(page, pick)
    act(page, fig, lambda: page.keyboard.press("ArrowDown"))     # rack-a -> rack-b
    assert pick.input_value() == "rack-b"
    expect(lambda: state["racks"].update(c2="rack-b"))
    assert fig.locator('[data-rlb="announce"]').inner_text().startswith("c2 is now in rack-b")
    assert page.evaluate("document.activeElement.getAttribute('data-rlb')") == "rack-c2"
    for key, value in (("replicas", 2), ("partitions", 11)):
        box = fig.locator(f'[data-rlb="{key}"]')
        tab_to(page, box)
        page.keyboard.press("Control+A")
        page.keyboard.type(str(value))
        act(page, fig, lambda: page.keyboard.press("Tab"))
        expect(lambda k=key, v=value: state.update({k: v}))
    box = fig.locator('[data-rlb="consumers"]')
    tab_to(page, box)
    page.keyboard.press("Control+A")
    page.keyboard.type("5")
    act(page, fig, lambda: page.keyboard.press("Tab"))
    expect(lambda: state["racks"].update(c5="rack-b"))
    pick = fig.locator('[data-rlb="rack-c5"]')
    tab_to(page, pick)
    act(page, fig, lambda: page.keyboard.press("ArrowUp"))       # rack-b -> rack-a
    expect(lambda: state["racks"].update(c5="rack-a"))
    assert "Off-rack partitions:" in fig.locator('[data-rlb="announce"]').inner_text()
    assert axe(page, ".rlb-kafka-board") == []
    watch.check_clean()
    page.close()


@pytest.mark.browser
def test_the_kafka_board_computes_in_the_page_as_in_cpython(base_url: str, browser,
                                                            root: Path) -> None:
    """Twelve seeded random changes (a consumer's rack, the partitions, the racks per
    partition, the group's size), then "forget": every row as CPython after each."""
    watch = PageWatch(browser, base_url + f"notebooks/{CHAPTER}.html")
    page = watch.page
    page.set_default_timeout(120_000)      # a loaded machine: Pyodide may hold the page
    fig = page.locator(".rlb-kafka-board")
    fig.wait_for(timeout=30_000)
    state = _stored_request(root)["state"]
    sid = "mouse-kafka-board"
    handle("kafka-board", sid, {"state": copy.deepcopy(state), "op": "view"})
    rng = random.Random(33)

    def number(key: str, value: int) -> None:
        box = fig.locator(f'[data-rlb="{key}"]')
        act(page, fig, lambda: (box.fill(str(value)), box.dispatch_event("change")))

    for _ in range(12):
        what = rng.choice(["rack", "rack", "partitions", "replicas", "consumers"])
        if what == "rack":
            c = rng.choice(sorted(state["racks"]))
            r = rng.choice([x for x in CHOICES if x != state["racks"][c]])
            act(page, fig, lambda c=c, r=r: fig.locator(f'[data-rlb="rack-{c}"]')
                .select_option(r))
            state["racks"][c] = r
        elif what == "consumers":
            n = rng.choice([k for k in range(1, 7) if k != len(state["racks"])])
            number("consumers", n)
            state["racks"] = {f"c{k}": state["racks"].get(f"c{k}", CHOICES[1 + (k - 1) % 3])
                              for k in range(1, n + 1)}
        else:
            hi = 12 if what == "partitions" else 3
            v = rng.choice([k for k in range(1, hi + 1) if k != state[what]])
            number(what, v)
            state[what] = v
        want = handle("kafka-board", sid, {"state": copy.deepcopy(state), "op": "view"})
        assert _shown(fig) == _expected(want), (what, state)
    act(page, fig, lambda: fig.locator('[data-rlb="forget"]').click())
    want = handle("kafka-board", sid, {"state": copy.deepcopy(state), "op": "reset"})
    assert _shown(fig) == _expected(want)
    assert not any(r["n_moved"] for r in _shown(fig))
    watch.check_clean()
    page.close()


# Every code block and output of the chapter within the column, with no scrolling inside it.
_WIDE = """() => {
  const art = document.querySelector('article.bd-article') || document.querySelector('main');
  const col = art.getBoundingClientRect();
  const bad = [];
  document.querySelectorAll('article pre, article .cell_output table, '
      + 'article .cell_output .output').forEach(el => {
    const r = el.getBoundingClientRect();
    if (r.width === 0) { return; }
    const over = Math.max(r.right - col.right, el.scrollWidth - el.clientWidth);
    if (over > 1) {
      bad.push(el.tagName.toLowerCase() + ' +' + Math.round(over) + 'px: '
               + el.textContent.trim().slice(0, 50));
    }
  });
  return bad;
}"""


@pytest.mark.browser
def test_chapter_8_fits_its_column_at_1280(built_book: Path, base_url: str,
                                           browser) -> None:
    rel = f"notebooks/{CHAPTER}.html"
    watch = PageWatch(browser, base_url + rel, width=1280)
    watch.wait_drawn((built_book / rel).read_text())
    assert watch.page.evaluate(_WIDE) == []
    watch.check_clean()
    watch.page.close()
