"""Chapter 11 (the RocketMQ 5 gRPC clients) in the built page: its browser cells run the core's
``grpc`` package in the reader's Pyodide and print exactly what they printed in the kernel (the
same check ``test_live_figures`` makes for chapters 2, 3 and 6, which also carry live figures;
this chapter has its own: the playground and the board, tests/test_live_keyboard.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.book import PageWatch
from tests.test_live_figures import _stored_text

CHAPTER = "11-rocketmq5-clients"


def test_the_grpc_cells_print_in_the_page_what_they_printed_in_the_kernel(
        base_url: str, browser, root: Path) -> None:  # type: ignore[no-untyped-def]
    nb = json.loads((root / "notebooks" / f"{CHAPTER}.ipynb").read_text())
    cells = [c for c in nb["cells"] if "rocketlb-browser" in c["metadata"].get("tags", [])]
    assert len(cells) >= 6
    watch = PageWatch(browser, base_url + f"notebooks/{CHAPTER}.html")
    page = watch.page
    shown = page.locator("div.cell.tag_rocketlb-browser")
    assert shown.count() == len(cells)
    shown.nth(len(cells) - 1).locator('[data-rlb="run-cell"]').click()
    page.wait_for_function("n => document.querySelectorAll('div.cell[data-rlb-ran]').length === n",
                           arg=len(cells), timeout=120_000)
    for i, cell in enumerate(cells):
        assert shown.nth(i).get_attribute("data-rlb-ran") == "ok"
        assert shown.nth(i).locator('[data-rlb="cell-output"]').inner_text().rstrip("\n") == (
            _stored_text(cell) or "(no output)").rstrip("\n"), i
    watch.check_clean()
    page.close()
