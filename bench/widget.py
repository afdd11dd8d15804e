"""Live-kernel widget updates: how long the package takes to react when a reader drags a
consumer on chapter 5's GroupBoard (the observer recomputes the new state's assignment for
every strategy through the package). Issue target: 50 ms or less per update.

Baseline, timed in the same run: the same trait update on a widget with no observer (what
ipywidgets itself costs). Run: .venv/bin/python bench/widget.py
"""

from __future__ import annotations

import itertools
import json
import statistics
import time

import anywidget
import traitlets

from rocketlb_core.viz.board import ZONES, group_board


class _Plain(anywidget.AnyWidget):
    _esm = "export default { render() {} };"
    zones = traitlets.Dict().tag(sync=True)


def timed(widget, states: list[dict[str, str]]) -> list[float]:
    out = []
    for zones in states:
        t0 = time.perf_counter()
        widget.zones = zones
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    board = group_board()
    names = list(board.consumers)
    states = [dict(zip(names, combo, strict=True))
              for combo in itertools.product(ZONES, repeat=len(names))]
    board.views = {}                                   # force a real recomputation each time
    package = timed(board, states)
    plain = timed(_Plain(), states)
    row = {"updates": len(states),
           "package_ms_median": round(statistics.median(package), 3),
           "package_ms_max": round(max(package), 3),
           "baseline_ms_median": round(statistics.median(plain), 3),
           "ratio_median": round(statistics.median(package) / statistics.median(plain), 1),
           "target_ms": 50}
    for k, v in row.items():
        print(f"{k:22} {v}")
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
