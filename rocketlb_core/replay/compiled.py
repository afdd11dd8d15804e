"""The scalar stretch's inner loop, compiled (numba, when it is installed).

``ProducerReplayer._scalar`` takes a stretch one send at a time. Its Python loop is the
reference; ``run_sends`` here is the same loop compiled: the same picks, latencies, stops and
fault-table state, for every line, and it hands back to Python at the one event it cannot take
alone: a send that finds every broker isolated (the least-bad branch, which runs the real
``select``). ``tests/test_replay_kernel.py`` holds both loops to stepping.

What the loop keeps per broker of the layout is exactly what the fault table would hold after
the same reports (spec 2.4, 2.5): ``until`` is the item's ``startTimestamp`` (4.x: every report
overwrites it with ``end + notAvailableDuration(latency)``; 5.x: a report only extends it, and
only when it isolates), ``lastlat`` the item's ``currentLatency``; ``order`` lists the brokers in
order of their first report, which is the order new items enter the table. The caller writes
them back (``apply``), so the table ends as the reports one by one would leave it.

Without numba, ``AVAILABLE`` is false and the Python loop runs: the same bytes, slower.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:                                                   # an optional accelerator
    from numba import njit
    AVAILABLE = True
except ImportError:                                    # the replay extra without fast
    AVAILABLE = False

    def njit(*_args: Any, **_kwargs: Any) -> Any:  # type: ignore[no-redef]
        return lambda f: f

INT_MAX = 0x7FFFFFFF
FOREVER = 1 << 62

# Why ``run_sends`` stopped (it returns the index of the first send it did not take).
DONE = 0          # every send of the stretch was taken
HORIZON = 1       # the next send starts at or after a route poll that may change the route
FAILS = 2         # the next send would fail: it is stepped
ALL_OFF = 3       # the next send finds every broker isolated: the least-bad branch
WRAP = 4          # the counter would wrap inside a walk or a probe sequence
ISOLATED = 5      # the last send isolated its broker and isolations are not carried


@njit(cache=True, nogil=True)
def _duration(latency: int, lat_max: np.ndarray[Any, Any], nad: np.ndarray[Any, Any]) -> int:
    """``computeNotAvailableDuration``: the last threshold the latency reaches."""
    for i in range(lat_max.shape[0] - 1, -1, -1):
        if latency >= lat_max[i]:
            return int(nad[i])
    return 0


@njit(cache=True, nogil=True)
def run_sends(k: int, w: int, dues: np.ndarray[Any, Any], draws: np.ndarray[Any, Any],
              end: int, horizon: int, changes: np.ndarray[Any, Any],
              seg_tables: np.ndarray[Any, Any], seg_bad: np.ndarray[Any, Any],
              stacked: np.ndarray[Any, Any], ql: np.ndarray[Any, Any],
              qi: np.ndarray[Any, Any], qc: np.ndarray[Any, Any], four: bool, vb: int,
              steps: int, u: int, carry: bool, until: np.ndarray[Any, Any],
              lastlat: np.ndarray[Any, Any], touched: np.ndarray[Any, Any],
              order: np.ndarray[Any, Any], n_order: int, five_extends: bool,
              lat_max: np.ndarray[Any, Any], nad: np.ndarray[Any, Any], isolates: int,
              timeout: int, o_start: np.ndarray[Any, Any], o_end: np.ndarray[Any, Any],
              o_broker: np.ndarray[Any, Any], o_qid: np.ndarray[Any, Any], base: int
              ) -> tuple[int, int, int, int, int, int, int]:
    """Sends ``k .. w-1`` of a stretch (``dues``/``draws`` indexed from the stretch's first
    send; outputs at ``base + k``). Returns (first send not taken, why, end of the last send,
    counter steps since ``vb``, the last probe's value, how many of ``order`` are set,
    isolations carried)."""
    n = ql.shape[0]
    nb = until.shape[0]
    nch = changes.shape[0]
    at = np.searchsorted(changes, dues[k] if dues[k] > end else end, side="right")
    seg_end = changes[at] if at < nch else FOREVER
    off = np.zeros(nb, np.bool_)
    skipping = False
    next_on = FOREVER
    refresh = carry
    isolations = 0
    while k < w:
        start = dues[k]
        if start < end:
            start = end
        if start >= horizon:
            return k, HORIZON, end, steps, u, n_order, isolations
        while start >= seg_end:
            at += 1
            seg_end = changes[at] if at < nch else FOREVER
        if refresh or start >= next_on:
            refresh = False
            next_on = FOREVER
            skipping = False
            every = True
            for j in range(nb):
                off[j] = start < until[j]
                if off[j]:
                    skipping = True
                    if until[j] < next_on:
                        next_on = until[j]
                else:
                    every = False
            if every:
                return k, ALL_OFF, end, steps, u, n_order, isolations
        if not skipping:
            v = ((vb + steps + 1) if four else (u + 1)) & INT_MAX
            p = v % n
            took = 1
        elif four:
            v = (vb + steps + 1) & INT_MAX
            if v > INT_MAX - n:
                return k, WRAP, end, steps, u, n_order, isolations
            p = v % n
            while off[ql[p]]:
                p = p + 1 if p + 1 < n else 0
            took = 1
        else:                                          # 5.x: one step per probe
            v = u + 1
            while off[ql[v % n]]:
                v += 1
            if v > INT_MAX:
                return k, WRAP, end, steps, u, n_order, isolations
            p = v % n
            took = v - u
        j = ql[p]
        latency = int(stacked[seg_tables[at, j] | draws[k]])
        if seg_bad[at, j] or latency >= timeout:
            return k, FAILS, end, steps, u, n_order, isolations
        end = start + latency
        o_start[base + k] = start
        o_end[base + k] = end
        o_broker[base + k] = qc[j]
        o_qid[base + k] = qi[p]
        steps += took
        u = v
        k += 1
        if carry:
            d = _duration(latency, lat_max, nad)
            if not five_extends or (d > 0 and end + d > until[j]):
                until[j] = end + d                     # 4.x overwrites; 5.x only extends
            lastlat[j] = latency
            if not touched[j]:
                touched[j] = True
                order[n_order] = j
                n_order += 1
        if latency >= isolates:
            if not carry:
                return k, ISOLATED, end, steps, u, n_order, isolations
            isolations += 1
            refresh = True
    return k, DONE, end, steps, u, n_order, isolations
