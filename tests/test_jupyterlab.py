"""The same live figures in a live JupyterLab: a real ``jupyter lab`` server on 127.0.0.1 (started
here with its own settings folder, stopped by its process group even when the test fails), a real
kernel, headless Chromium. There the kernel computes: the figure's JavaScript sends its request
to the widget, whose handler calls ``rocketlb_core.interactive.handle``; no Pyodide is loaded.
What the figures show must equal CPython's answers for the same requests."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from rocketlb_core.interactive import handle
from rocketlb_core.interactive.exercises import check
from rocketlb_core.viz.widgets import playground
from tests.book import act

pytestmark = pytest.mark.browser

CELLS = [
    "from rocketlb_core.viz.widgets import board, exercise, playground\nplayground()",
    "board()",
    'exercise("AVG, 11 consumers, 3 brokers of 6 queues: c1 gets?", "share_of", '
    'strategy="AVG", brokers=3, queues=6, consumers=11, k=1)',
]
# JupyterLab settings for a quiet, unattended run: start the notebook's kernel without asking,
# and never fetch news or update checks (nothing may leave 127.0.0.1).
SETTINGS = {
    "notebook-extension/tracker": {"autoStartDefaultKernel": True},
    "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """Stop the server and everything it started (its kernels): its whole process group."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=20)
            break
        except subprocess.TimeoutExpired:
            continue
    proc.wait()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("lab")
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}",
                     "metadata": {}, "outputs": [], "source": src}
                    for i, src in enumerate(CELLS)],
          "metadata": {"kernelspec": {"name": "python3", "language": "python",
                                      "display_name": "Python 3 (ipykernel)"}},
          "nbformat": 4, "nbformat_minor": 5}
    (folder / "live.ipynb").write_text(json.dumps(nb))
    for name, values in SETTINGS.items():
        path = folder / "settings" / "@jupyterlab" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(values))
    port, token = _free_port(), secrets.token_hex(16)
    log = (folder / "lab.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0", "--ServerApp.allow_root=True",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
         "--LabApp.expose_app_in_browser=True"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(folder / "settings"),
             "JUPYTER_RUNTIME_DIR": str(folder / "runtime")})
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}api/status?token={token}", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("jupyter lab did not start:\n"
                                         + (folder / "lab.log").read_text()[-3000:]) from None
                time.sleep(0.5)
        yield f"{url}lab/tree/live.ipynb?token={token}"
    finally:
        _stop(proc)
        log.close()


def test_live_figures_compute_in_the_kernel_in_jupyterlab(lab: str, browser,
                                                          tmp_path: Path) -> None:
    external: list[str] = []

    def route(r) -> None:  # type: ignore[no-untyped-def]
        url = r.request.url
        if url.startswith(("data:", "blob:")) or urlparse(url).hostname == "127.0.0.1":
            r.continue_()
        else:
            external.append(url)
            r.abort()

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.route("**/*", route)
        page.goto(lab)
        page.wait_for_function("() => window.jupyterapp && "
                               "document.querySelector('.jp-Notebook .jp-Cell')", timeout=120_000)
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.jp-StatusBar-TextItem'))"
            ".some(e => /\\| Idle/.test(e.textContent))", timeout=120_000)
        page.evaluate("() => { jupyterapp.commands.execute('notebook:run-all-cells'); }")
        page.wait_for_selector(".rlb-exercise", timeout=120_000)
        pg = page.locator(".rlb-playground")
        assert "the kernel computes" in pg.locator('[data-rlb="status"]').first.inner_text()
        assert page.evaluate("typeof window.rocketlbLive") == "undefined"     # no Pyodide here

        cfg = playground().request["config"]
        handle("playground", "lab", {"config": cfg, "op": "view"})
        for _ in range(5):
            act(page, pg, pg.locator('[data-rlb="send-1"]').click)
            want = handle("playground", "lab", {"config": cfg, "op": "send", "n": 1})
            shown = pg.locator('[data-rlb="send-row"]').first
            assert shown.locator('[data-rlb="attempts"]').inner_text() == " → ".join(
                f"{a['queue']}: {a['outcome']}, {a['latency_ms']}"
                for a in want["log"][0]["attempts"])
            assert pg.locator('[data-rlb="counter-value"]').inner_text() == str(want["counter"])

        board = page.locator(".rlb-board")
        state = {"brokers": 2, "queues": 4, "duplicate": False, "pop_share": 1,
                 "zones": {"c1": "room-1", "c2": "room-1", "c3": "room-2", "c4": "out",
                           "c5": "out"}}
        handle("board", "lab", {"state": state, "op": "view"})
        act(page, board, board.locator('[data-rlb="chip-c4"]').click)     # out -> room-1
        state["zones"]["c4"] = "room-1"
        want = handle("board", "lab", {"state": state, "op": "view"})
        for row in want["rows"]:
            cells = board.locator(f'[data-rlb="row-{row["strategy"]}"] [data-rlb="cell"]')
            assert [cells.nth(i).get_attribute("data-owners") for i in range(cells.count())] \
                == ["+".join(w) for w in row["owners"]]
            assert board.locator(f'[data-rlb="moved-{row["strategy"]}"]').inner_text() == \
                str(row["n_moved"])
        assert any(r["n_moved"] for r in want["rows"])

        ex = page.locator(".rlb-exercise")
        ex.locator('[data-rlb="answer"]').fill("2")
        act(page, ex, ex.locator('[data-rlb="check"]').click)
        truth = check({"exercise": "share_of", "answer": "2", "params": {
            "strategy": "AVG", "brokers": 3, "queues": 6, "consumers": 11, "k": 1}})
        assert ex.locator('[data-rlb="verdict"]').inner_text() == (
            f"Right: {truth['truth']}" if truth["right"] else "Not that: try again, or run it.")
    except Exception:
        page.screenshot(path=str(tmp_path / "jupyterlab.png"))
        raise
    finally:
        page.close()
    assert external == []
