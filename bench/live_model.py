"""The live model in the browser (``rocketlb-live.js``): cold start to first result, against
the same page's load without the model as the baseline in the same run (headless Chromium,
loopback server, median of ``--loads`` cold page loads), and one allocation call afterwards
(p95 over ``--calls``). Targets (issue 12): first result within 4 s, a call within 50 ms p95.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from rocketlb_core.viz.assets import build

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGE = ('<!doctype html><html data-content_root="./"><head><meta charset="utf-8">'
        '<script src="_static/rocketlb-live.js"></script></head><body></body></html>')
CALL = """
from rocketlb_core.consumer.base import assign_all, rebalance_view
from rocketlb_core.consumer.registry import make
from rocketlb_core.model import MessageQueue
mq, cid = rebalance_view([MessageQueue("T", f"b{b}", i) for b in range(3) for i in range(6)],
                         [f"10.0.0.{i}@c" for i in range(11)])
len(assign_all(make("AVG"), "g", mq, cid))
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="rocketlb-live-"))
    build(folder / "_static", Path("node_modules"))
    (folder / "index.html").write_text(PAGE)
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/index.html"
    base, first, calls = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
        for _ in range(args.loads):
            ctx = browser.new_context()                # a cold cache each time
            page = ctx.new_page()
            t0 = time.perf_counter()
            page.goto(url)
            page.wait_for_load_state("load")
            base.append(time.perf_counter() - t0)
            t1 = time.perf_counter()
            page.evaluate("c => rocketlbLive.run(c)", CALL)
            first.append(time.perf_counter() - t1 + base[-1])
            ctx.close()
        ctx = browser.new_context()
        page = ctx.new_page()
        page.goto(url)
        page.evaluate("c => rocketlbLive.run(c)", CALL)
        for _ in range(args.calls):
            t = time.perf_counter()
            page.evaluate("c => rocketlbLive.run(c)", CALL)
            calls.append(time.perf_counter() - t)
        browser.close()
    server.shutdown()
    shutil.rmtree(folder)
    size = sum(f.stat().st_size for f in (Path("node_modules") / "pyodide").iterdir()
               if f.name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm",
                             "python_stdlib.zip", "pyodide-lock.json"))
    calls.sort()
    out = {"page_load_s_median": round(statistics.median(base), 3),
           "first_result_s_median": round(statistics.median(first), 3),
           "first_over_page_load": round(statistics.median(first) / statistics.median(base), 1),
           "call_ms_p95": round(1000 * calls[int(0.95 * (len(calls) - 1))], 2),
           "call_ms_median": round(1000 * statistics.median(calls), 2),
           "runtime_mb": round(size / 2**20, 1), "targets": {"first_result_s": 4,
                                                            "call_ms_p95": 50}}
    for k, v in out.items():
        print(f"{k:<24} {v}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
