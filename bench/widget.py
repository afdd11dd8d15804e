"""Live-kernel figure updates: how long the kernel takes to answer a reader's interaction with a
live figure (``rocketlb_core.viz.widgets``: the widget's message handler calls
``rocketlb_core.interactive.handle``): 200 board moves on a 32-consumer group of 4 brokers x 16
queues (every strategy recomputed) and 200 playground sends. Issue target: 50 ms or less.

Baseline, timed in the same run: a trait update on a widget with no observer (what ipywidgets
itself costs per interaction). Run: .venv/bin/python bench/widget.py
"""

from __future__ import annotations

import json
import random
import statistics
import time

import anywidget
import traitlets

from rocketlb_core.viz.widgets import board, playground

ZONES = ("out", "room-1", "room-2")


class _Plain(anywidget.AnyWidget):
    _esm = "export default { render() {} };"
    zones = traitlets.Dict().tag(sync=True)


def p95(xs: list[float]) -> float:
    return sorted(xs)[int(0.95 * (len(xs) - 1))]


def main() -> None:
    rng = random.Random(7)
    b = board(consumers=32, brokers=4, queues=16)
    state = dict(b.request["state"])
    moves, sends, plain = [], [], []
    replies: list[dict] = []
    b.send = lambda content, buffers=None: replies.append(content)  # type: ignore[method-assign]
    for i in range(200):
        zones = dict(state["zones"])
        zones[f"c{rng.randint(1, 32)}"] = rng.choice(ZONES)
        state["zones"] = zones
        t0 = time.perf_counter()
        b._answer(b, {"rlb_ask": i, "session": "bench", "request": {"state": state}}, [])
        moves.append((time.perf_counter() - t0) * 1000)
    p = playground(preset="broker-b answers in 700 ms")
    p.send = lambda content, buffers=None: replies.append(content)  # type: ignore[method-assign]
    for i in range(200):
        t0 = time.perf_counter()
        p._answer(p, {"rlb_ask": i, "session": "bench", "request": {
            "config": p.request["config"], "op": "send", "n": 1}}, [])
        sends.append((time.perf_counter() - t0) * 1000)
    w = _Plain()
    for i in range(200):
        t0 = time.perf_counter()
        w.zones = {"c1": ZONES[i % 3]}
        plain.append((time.perf_counter() - t0) * 1000)
    assert all("error" not in r["view"] for r in replies)
    row = {"interactions": 200,
           "board_move_ms_p95": round(p95(moves), 3),
           "playground_send_ms_p95": round(p95(sends), 3),
           "baseline_trait_ms_median": round(statistics.median(plain), 3),
           "board_ratio_median": round(statistics.median(moves) / statistics.median(plain), 1),
           "target_ms": 50}
    for k, v in row.items():
        print(f"{k:26} {v}")
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
