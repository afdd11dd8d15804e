"""The live figures in the built web book (headless Chromium, loopback server, no kernel).

* Cold start: chapter 5's page loads (the baseline, timed in the same run), then a reader's first
  move on the allocation board, until the board shows the package's answer: Pyodide and the core
  load, start and compute. Median of ``--loads`` cold page loads (a fresh browser context each).
  The page opts out of preloading (``window.rocketlbLivePreload = false``): today's cold click.
  Where a cold start's time goes (issue 48), from ``rocketlbLive.timings``: ``loader``
  (pyodide.mjs imported), ``runtime`` (Pyodide restored from the build's memory snapshot, or
  started plainly without one), ``core`` (the core's zip unpacked), ``import`` (the figures'
  module imported: nothing left to do after a restore); and how many loads restored.
* Warm click (issue 36): the same page, the reader scrolls to the board and reads for 3 s (the
  model starts loading when a live figure nears the viewport, ``rocketlb-live.js``), then the
  first move, timed from the click to the answer drawn. Same run, same ``--loads``; and whether
  the model was ready when the reader clicked.
* Untouched page: chapter 5 opened and read at its top for 3 s, its figures never reached: the
  bytes it fetched, and how many of them are the live model's runtime (Pyodide, its snapshot,
  the core zip).
* Interaction: on a warm page, ``--calls`` interactions (board moves on a 32-consumer group of 4
  brokers x 16 queues, and playground sends on chapter 2), each timed inside the page from the
  click to the updated display (``data-rlb-answers`` changes once the answer is drawn).

Targets (issue 12): first result within 4 s; an interaction within 50 ms p95. Issue 36: the warm
click's p50 under 300 ms; none of the runtime fetched by the untouched page.
Run: .venv/bin/python bench/live_model.py
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from rocketlb_core.viz.assets import PYODIDE_FILES, SNAPSHOT, build_static_book
from rocketlb_core.viz.loopback import CHROMIUM, CHROMIUM_ARGS, serve

# Click a control inside a figure and resolve with the ms until its answer is drawn.
TIMED_CLICK = """([figure, selector]) => new Promise(resolve => {
  const el = document.querySelector(figure);
  const before = el.getAttribute('data-rlb-answers');
  const t0 = performance.now();
  const seen = new MutationObserver(() => {
    if (el.getAttribute('data-rlb-answers') !== before) {
      seen.disconnect(); resolve(performance.now() - t0);
    }
  });
  seen.observe(el, {attributes: true});
  el.querySelector(selector).click();
})"""



# The model's start, phase by phase (rocketlb-live.js's timings): pyodide.mjs imported, Pyodide
# started, the core's zip unpacked, the figures' module imported.
PHASES = ("start", "loader", "runtime", "core", "import")


def p95(xs: list[float]) -> float:
    return sorted(xs)[int(0.95 * (len(xs) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="rocketlb-live-"))
    html = build_static_book(Path.cwd(), work)
    base, first, cold, warm, moves, sends = [], [], [], [], [], []
    untouched: list[tuple[int, int]] = []
    phases: dict[str, list[float]] = {p: [] for p in PHASES[1:]}
    ready_at_click: list[bool] = []
    restored: list[bool] = []
    with serve(html) as root, sync_playwright() as p:
        url = root + "notebooks/"
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(args.loads):
            ctx = browser.new_context()                # a cold cache each time
            page = ctx.new_page()
            page.add_init_script("window.rocketlbLivePreload = false;")
            t0 = time.perf_counter()
            page.goto(url + "05-allocation-strategies.html")
            page.wait_for_selector(".rlb-board")
            base.append(time.perf_counter() - t0)
            ms = page.evaluate(TIMED_CLICK, [".rlb-board", '[data-rlb="chip-c4"]'])
            cold.append(ms)
            marks = page.evaluate("window.rocketlbLive.timings")
            restored.append(marks.get("snapshot") is True)
            for a, b in itertools.pairwise(PHASES):
                phases[b].append(marks[b] - marks[a])
            first.append(base[-1] + ms / 1000)
            ctx.close()
            ctx = browser.new_context()                # the reader who scrolls, then reads
            page = ctx.new_page()
            page.goto(url + "05-allocation-strategies.html")
            page.wait_for_selector(".rlb-board")
            page.locator(".rlb-board").scroll_into_view_if_needed()
            page.wait_for_timeout(3000)
            ready_at_click.append(page.evaluate("window.rocketlbLive.state()") == "model ready")
            warm.append(page.evaluate(TIMED_CLICK, [".rlb-board", '[data-rlb="chip-c4"]']))
            ctx.close()
            ctx = browser.new_context()                # the reader who never gets there
            page = ctx.new_page()
            fetched: list[tuple[str, int]] = []
            page.on("response", lambda r, f=fetched: f.append(
                (r.url, int(r.headers.get("content-length") or 0))))
            page.goto(url + "05-allocation-strategies.html")
            page.wait_for_selector(".rlb-board")
            page.wait_for_timeout(3000)
            untouched.append((sum(n for _, n in fetched), sum(
                n for u, n in fetched if "/_static/pyodide/" in u or "rocketlb-core.zip" in u)))
            ctx.close()
        ctx = browser.new_context()
        page = ctx.new_page()
        page.goto(url + "05-allocation-strategies.html")
        page.wait_for_selector(".rlb-board")
        for key, value in (("consumers", 32), ("brokers", 4), ("queues", 16)):
            box = page.locator(f'.rlb-board [data-rlb="{key}"]')
            box.fill(str(value))
            box.dispatch_event("change")
            page.wait_for_function(
                "() => document.querySelector('.rlb-board').getAttribute('data-rlb-busy') === '0'"
                " && document.querySelectorAll('.rlb-board .rlb-consumer').length === 32")
        for i in range(args.calls):
            moves.append(page.evaluate(TIMED_CLICK, [".rlb-board",
                                                     f'[data-rlb="chip-c{i % 32 + 1}"]']))
        page.goto(url + "02-producer-round-robin.html")
        page.wait_for_selector(".rlb-playground")
        for _ in range(args.calls):
            sends.append(page.evaluate(TIMED_CLICK, [".rlb-playground", '[data-rlb="send-1"]']))
        browser.close()
    runtime = sum((html / "_static" / "pyodide" / f).stat().st_size for f in PYODIDE_FILES)
    snap = (html / "_static" / "pyodide" / SNAPSHOT).stat().st_size
    core = (html / "_static" / "rocketlb-core.zip").stat().st_size
    shutil.rmtree(work)
    out = {"page_load_s_median": round(statistics.median(base), 3),
           "first_result_s_median": round(statistics.median(first), 3),
           "first_over_page_load": round(statistics.median(first) / statistics.median(base), 1),
           "cold_click_ms_median": round(statistics.median(cold)),
           "warm_click_after_3s_ms_median": round(statistics.median(warm)),
           "warm_click_after_3s_ms_max": round(max(warm)),
           "warm_model_ready_at_click": f"{sum(ready_at_click)} of {len(ready_at_click)}",
           **{f"cold_{p}_ms_median": round(statistics.median(v)) for p, v in phases.items()},
           "untouched_page_kb": round(statistics.median(b for b, _ in untouched) / 1024),
           "untouched_page_runtime_bytes": max(r for _, r in untouched),
           "board_move_ms_p95": round(p95(moves), 2),
           "board_move_ms_median": round(statistics.median(moves), 2),
           "playground_send_ms_p95": round(p95(sends), 2),
           "runtime_mib": round(runtime / 2**20, 1), "core_zip_mib": round(core / 2**20, 2),
           "snapshot_mib": round(snap / 2**20, 1),
           "cold_restored_from_snapshot": f"{sum(restored)} of {len(restored)}",
           "targets": {"first_result_s": 4, "interaction_ms_p95": 50,
                       "warm_click_ms_median": 300, "untouched_page_runtime_bytes": 0}}
    for k, v in out.items():
        print(f"{k:<24} {v}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
