"""The scalar stretch's inner loop, compiled (numba, when it is installed).

``ProducerReplayer._scalar`` takes a stretch one send at a time. Its Python loop is the
reference; ``run_sends`` here is the same loop compiled: the same picks, latencies, stops and
fault-table state, for every line. It also takes a send that finds every broker isolated on
4.9.8 and 5.x (the least-bad branch of ``MQFaultStrategy.select``: 4.x's ``pickOneAtLeast`` and
its three counter steps, 5.x's pass over the reachable brokers); 4.9.7 and 4.7.1 hand that send
back to Python, since their pick overwrites the cached queue (4.7.1 also shuffles).
On 4.9.8 with fault tolerance on it also takes a send whose attempt fails, and its retries,
as ``send()`` does (spec 3: the failed attempt reported with isolation, the next picked at its
end on the budget left, "call timeout" after the pick once the budget is spent): a churning
day's outages then stop no stretch. The Python loop stops before such a send, which is
stepped: the same bytes. ``tests/test_replay_kernel.py`` holds both loops to stepping.

What the loop keeps per broker of the layout (``fb``) is exactly what the fault table would hold
after the same reports (spec 2.4, 2.5): ``UNTIL`` is the item's ``startTimestamp`` (4.x: every
report overwrites it with ``end + notAvailableDuration(latency)``; 5.x: a report only extends
it, and only when it isolates), ``LAT`` its ``currentLatency``, ``REACH`` its reachable flag;
``tord`` the items in table order, ``order`` the brokers reported since the last write-back in
order of first report, which is the order new items enter the table. The caller writes them
back, so the table ends as the reports one by one would leave it.

Without numba, ``AVAILABLE`` is false and the Python loop runs: the same bytes, slower.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rocketlb_core.conditions import FAIL_FAST_MS
from rocketlb_core.producer.send import TIMER_OVERSHOOT_MS
from rocketlb_core.replay.draws import ATTEMPT, BUCKET_BITS, GOLDEN, M1, M2, NEAR_HALF

try:                                                   # an optional accelerator
    from numba import njit
    AVAILABLE = True
except ImportError:                                    # the replay extra without fast
    AVAILABLE = False

    def njit(*_args: Any, **_kwargs: Any) -> Any:  # type: ignore[no-redef]
        return lambda f: f

INT_MAX = 0x7FFFFFFF
FOREVER = 1 << 62
FAIL_FAST = np.array(FAIL_FAST_MS, np.int64)         # a refused connection's time, by draw
_GOLDEN, _ATTEMPT = np.uint64(GOLDEN), np.uint64(ATTEMPT)
_M1, _M2 = np.uint64(M1), np.uint64(M2)

# Why ``run_sends`` stopped (it returns the index of the first send it did not take).
DONE = 0          # every send of the stretch was taken
HORIZON = 1       # the next send starts at or after a route poll that finds the route changed
FAILS = 2         # the next send would fail: it is stepped
ALL_OFF = 3       # the next send finds every broker isolated and the loop cannot pick for it
WRAP = 4          # the counter would wrap inside a walk or a probe sequence
ISOLATED = 5      # the last send isolated its broker and isolations are not carried

# Columns of ``fb``, one row per broker of the layout (the fault item, as the table holds it),
# then one per item of a broker that left the layout (``CODE`` -1, ``WQC`` 0).
UNTIL = 0         # startTimestamp (0 without an item)
LAT = 1           # currentLatency
TOUCHED = 2       # reported since the last write-back
IN_TABLE = 3      # the table has an item for it
REACH = 4         # 5.x: the item's reachable flag (1 without an item)
CODE = 5          # the broker's code in the output
WQC = 6           # its write-queue count in the route (getQueueIdByBroker; <= 0: none)
IN_LAYOUT = 7     # it has queues in the producer's list (the availability walk looks at it)
COLUMNS = 8


@njit(cache=True, nogil=True)
def _duration(latency: int, lat_max: np.ndarray[Any, Any], nad: np.ndarray[Any, Any]) -> int:
    """``computeNotAvailableDuration``: the last threshold the latency reaches."""
    for i in range(lat_max.shape[0] - 1, -1, -1):
        if latency >= lat_max[i]:
            return int(nad[i])
    return 0


@njit(cache=True, nogil=True)
def draw_bucket(key: np.uint64, seq: int, attempt: int) -> int:
    """The bucket (top ``BUCKET_BITS``) of ``draws.draw_bits(key, seq, attempt)``: the same
    SplitMix64 finaliser in wrapping uint64 arithmetic, for a retry's draw, taken only when a
    send retries (a whole array of them per batch cost more than the retries)."""
    z = key + np.uint64(seq) * _GOLDEN + np.uint64(attempt) * _ATTEMPT
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(64 - BUCKET_BITS))  # type: ignore[return-value]


@njit(cache=True, nogil=True)
def _latency(stacked: np.ndarray[Any, Any], shifted: int, bucket: int, zq: np.ndarray[Any, Any],
             t_med: np.ndarray[Any, Any], t_sig: np.ndarray[Any, Any]) -> int:
    """``stacked[shifted | bucket]``, the latency table's entry, computed as the table was
    (``LatencyTable.build``: ``max(1, rint(median * exp(sigma * z)))``) instead of read from
    it: a churning day's tables are some 100 MB, and a read from them missed the caches on
    most sends. Where the value lands within ``NEAR_HALF`` of a rounding boundary the table
    is read: an ``exp`` here may differ from the one that built the table in its last bits,
    which can change a rounding only there. The same test sends every value above 0.5 /
    ``NEAR_HALF`` (5e8 ms) to the table, and a NaN median (no parameters) too. ``t_med`` and
    ``t_sig`` must have an entry for every table id (``Conditions.table_params``); no other
    guard here: one made this function six times slower."""
    tid = shifted >> BUCKET_BITS
    x = t_med[tid] * math.exp(t_sig[tid] * zq[bucket])
    f = math.floor(x)
    d = x - f - 0.5
    if abs(d) > NEAR_HALF * (x if x > 1.0 else 1.0):
        r = int(f) + (1 if d > 0.0 else 0)
        return r if r > 1 else 1
    return int(stacked[shifted | bucket])


@njit(cache=True, nogil=True)
def _worst(fb: np.ndarray[Any, Any], tord: np.ndarray[Any, Any], n_items: int, now: int,
           wstored: int, idx: np.ndarray[Any, Any]) -> tuple[int, int]:
    """4.x ``pickOneAtLeast`` over the items in table order (4.9.x: no shuffle): sorted by
    (isolated, latency, deadline), stable; the better half rotated by ``whichItemWorst``.
    Returns (the layout index of the pick, the rotation counter after). ``idx``: scratch
    space as long as ``tord``."""
    idx[:n_items] = tord[:n_items]
    for a in range(1, n_items):                        # insertion sort: stable
        x = idx[a]
        b = a - 1
        while b >= 0:
            y = idx[b]
            kx = (1 if now - fb[x, UNTIL] < 0 else 0, fb[x, LAT], fb[x, UNTIL])
            ky = (1 if now - fb[y, UNTIL] < 0 else 0, fb[y, LAT], fb[y, UNTIL])
            if ky <= kx:
                break
            idx[b + 1] = y
            b -= 1
        idx[b + 1] = x
    half = n_items // 2
    if half <= 0:
        return idx[0], wstored
    wstored += 1                                       # ThreadLocalIndex.next(), 4.9.x
    if wstored > INT_MAX:
        wstored -= 1 << 32
    return idx[(wstored & INT_MAX) % half], wstored


@njit(cache=True, nogil=True)
def run_sends(k: int, w: int, dues: np.ndarray[Any, Any], draws: np.ndarray[Any, Any],
              end: int, horizon: int, changes: np.ndarray[Any, Any],
              seg_tables: np.ndarray[Any, Any], seg_bad: np.ndarray[Any, Any],
              stacked: np.ndarray[Any, Any], ql: np.ndarray[Any, Any],
              qi: np.ndarray[Any, Any], four: bool, vb: int,
              steps: int, u: int, carry: bool, least_bad: bool, fb: np.ndarray[Any, Any],
              order: np.ndarray[Any, Any], n_order: int, tord: np.ndarray[Any, Any],
              n_items: int, wstored: int, five_extends: bool, lat_max: np.ndarray[Any, Any],
              nad: np.ndarray[Any, Any], isolates: int, timeout: int,
              o_start: np.ndarray[Any, Any], o_end: np.ndarray[Any, Any],
              o_broker: np.ndarray[Any, Any], o_qid: np.ndarray[Any, Any], base: int,
              retry: bool, seg_kind: np.ndarray[Any, Any], key: np.uint64,
              o_seq: np.ndarray[Any, Any], attempts_max: int,
              iso_duration: int, o_status: np.ndarray[Any, Any],
              o_attempts: np.ndarray[Any, Any], o_error: np.ndarray[Any, Any],
              failed: int, err_remoting: int, err_timeout: int, zq: np.ndarray[Any, Any],
              t_med: np.ndarray[Any, Any], t_sig: np.ndarray[Any, Any], n: int,
              routes: bool, next_poll: int, poll_ms: int, seg_pat: np.ndarray[Any, Any],
              pat_ql: np.ndarray[Any, Any], pat_qi: np.ndarray[Any, Any],
              pat_n: np.ndarray[Any, Any], pat_wqc: np.ndarray[Any, Any],
              pat_in: np.ndarray[Any, Any], cur: int, starts: np.ndarray[Any, Any]
              ) -> tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]:
    """Sends ``k .. w-1`` of a stretch (``dues``/``draws`` indexed from the stretch's first
    send; outputs at ``base + k``). ``ql``/``qi``: per position of the producer's list (the
    first ``n``), the row of ``fb`` of its broker and its queue id. ``least_bad``: a send that
    finds every broker isolated is picked here (4.9.8's and 5.x's branch), and taken when the
    broker picked answers; ``fb`` holds a row per broker (``IN_LAYOUT`` for those of the
    list, which the availability walk looks at), and one per fault item of a broker outside
    the list, which only 4.x's pick reads (a pick of one removes its item and picks plainly,
    as ``select`` does, with ``retry``; else it goes back). ``order`` is as long as ``fb``.

    ``routes``: the route polls (every ``poll_ms`` from ``next_poll``, each at the start of
    the first send at or after it, as ``SteppedReplayer._poll``) happen here too, so a
    producer's route changes stop nothing. ``seg_pat`` gives each segment's route (a pattern:
    which brokers the name servers list); a poll that finds a pattern other than ``cur``
    begins a route version: the pattern's list (``pat_ql``/``pat_qi``/``pat_n``, the first
    ``pat_n`` entries of a row), its write-queue counts and list membership per row of ``fb``
    (``pat_wqc``, ``pat_in``) and a counter at the version's seeded start (``starts``, one per
    version to come, in order: ``vb`` is the counter the ``steps`` count from). A poll that
    finds a route without queues, or a version beyond ``starts``, stops the loop before it
    (``HORIZON``; the caller polls, as stepping does). Without ``routes`` the loop stops at
    ``horizon`` instead, which the caller puts at the first poll that finds the route changed.

    ``retry`` (4.x's selection with fault tolerance on, a sync send whose retries pick as its
    first attempt does: 4.9.8): a send whose attempt fails is taken here too, as ``send()``
    takes it (spec 3): the failed attempt reported with isolation (``iso_duration``), the
    next attempt picked at its end with its own draw (``draw_bucket(key, seq, attempt)``), on
    the budget left, until one answers or ``attempts_max`` are made or the time is up
    ("call timeout", after the pick). ``seg_kind`` says how an attempt fails on a broker in a
    segment: 1 refused at once (a broker down cleanly: ``FAIL_FAST_MS`` by the draw), 2 no
    answer (down silently, or cut off from this producer: the whole budget). A retry the loop
    cannot take (its pick would leave the layout, or the counter would wrap) puts everything
    back as it was before the send, which is then stepped.

    Returns (first send not taken, why, end of the last send, counter steps since ``vb``, the
    last probe's value, how many of ``order`` are set, how many of ``tord``, the rotation
    counter, isolations carried, ``vb``, the route's pattern, how many versions began, the
    next route poll)."""
    nb = fb.shape[0]
    nch = changes.shape[0]
    nff = FAIL_FAST.shape[0]
    at = np.searchsorted(changes, dues[k] if dues[k] > end else end, side="right")
    seg_end = changes[at] if at < nch else FOREVER
    lat_min = lat_max.min() if lat_max.shape[0] else 0   # below every threshold: no isolation
    nver = 0                                           # route versions begun here (``routes``)
    pat_at = np.searchsorted(changes, next_poll, side="right") if routes else 0
    off = np.zeros(nb, np.bool_)
    skipping = False
    next_on = FOREVER
    refresh = carry
    isolations = 0
    # what a send that fails puts back if the loop cannot finish it (see ``retry``)
    s_fb = fb.copy()
    s_order = order.copy()
    s_tord = tord.copy()
    scratch = np.empty(tord.shape[0], np.int64)        # the least-bad pick's sort
    while k < w:
        first = dues[k]
        if first < end:
            first = end
        if first >= horizon:
            break
        while routes and first >= next_poll:           # the route polls before this send
            while pat_at < nch and changes[pat_at] <= next_poll:
                pat_at += 1
            q = seg_pat[pat_at]
            if q != cur:                               # a new route: a new list and counter
                if pat_n[q] == 0 or nver >= starts.shape[0]:
                    return k, HORIZON, end, steps, u, n_order, n_items, wstored, \
                        isolations, vb, cur, nver, next_poll
                cur = q
                vb = starts[nver]
                nver += 1
                steps = 0
                u = vb & INT_MAX
                n = pat_n[q]
                ql[:n] = pat_ql[q, :n]
                qi[:n] = pat_qi[q, :n]
                for b in range(nb):
                    fb[b, WQC] = pat_wqc[q, b]
                    fb[b, IN_LAYOUT] = pat_in[q, b]
                refresh = True
            next_poll += poll_ms
        clock = first
        attempt = 0
        saved = False                                  # the arrays, at the first failure
        s_steps, s_u, s_norder, s_nitems = steps, u, n_order, n_items
        s_wstored, s_isolations = wstored, isolations
        bail = False
        ok = False
        latency = 0
        j = -1
        qid = -1
        err = -1
        while True:                                    # the send's attempts
            dk = draws[k] if attempt == 0 else draw_bucket(key, o_seq[base + k], attempt + 1)
            while clock >= seg_end:
                at += 1
                seg_end = changes[at] if at < nch else FOREVER
            p = -1
            j = -1
            qid = -1
            took = 0
            v = u
            if refresh or clock >= next_on:
                refresh = False
                next_on = FOREVER
                skipping = False
                every = True
                for b in range(nb):
                    off[b] = fb[b, IN_LAYOUT] != 0 and clock < fb[b, UNTIL]
                    if not fb[b, IN_LAYOUT]:
                        continue
                    if off[b]:
                        skipping = True
                        if fb[b, UNTIL] < next_on:
                            next_on = fb[b, UNTIL]
                    else:
                        every = False
                if every:                              # the least-bad branch
                    if not least_bad:
                        if attempt == 0:
                            return k, ALL_OFF, end, steps, u, n_order, n_items, wstored, \
                                isolations, vb, cur, nver, next_poll
                        bail = True
                        break
                    # The pick first, into locals; without ``retry`` the send is taken only
                    # if the broker it names answers (else the state is as it was, and the
                    # send is stepped).
                    if four:                           # one step, a walk that finds nothing
                        worst, wnext = _worst(fb, tord, n_items, clock, wstored, scratch)
                        if retry and not fb[worst, IN_LAYOUT] and fb[worst, WQC] <= 0:
                            # The pick names a broker that left the list: upstream removes
                            # its item and picks plainly (one more step); the send goes there.
                            if not saved:              # what to put back if it cannot finish
                                saved = True
                                s_fb[:, :] = fb
                                s_order[:] = order
                                s_tord[:] = tord
                            wstored = wnext
                            gone = 0
                            for a in range(n_items):
                                if tord[a] == worst:
                                    gone = 1
                                elif gone:
                                    tord[a - 1] = tord[a]
                            n_items -= 1
                            fb[worst, IN_TABLE] = 0    # no item: available (if it comes back)
                            fb[worst, UNTIL] = 0
                            fb[worst, LAT] = 0
                            fb[worst, REACH] = 1
                            steps += 2                 # the walk's, the plain pick's
                            p = ((vb + steps) & INT_MAX) % n
                            j = ql[p]
                            qid = qi[p]
                        elif fb[worst, WQC] <= 0 or (not retry and (
                                seg_bad[at, worst] or _latency(
                                    stacked, seg_tables[at, worst], dk, zq, t_med, t_sig)
                                >= timeout)):
                            if attempt == 0:
                                return k, ALL_OFF, end, steps, u, n_order, n_items, \
                                    wstored, isolations, vb, cur, nver, next_poll
                            bail = True
                            break
                        else:
                            wstored = wnext
                            steps += 3                 # the walk's, the plain position's, the id's
                            j = worst
                            qid = ((vb + steps) & INT_MAX) % fb[worst, WQC]
                    else:                              # n probes available, then reachable
                        v = u
                        probes = 0
                        found = -1
                        for _ in range(2 * n):
                            v = (v + 1) & INT_MAX
                            probes += 1
                            if _ >= n and fb[ql[v % n], REACH]:
                                found = v % n
                                break
                        if found < 0:                  # the plain pick
                            v = (v + 1) & INT_MAX
                            probes += 1
                            found = v % n
                        b = ql[found]
                        if seg_bad[at, b] or _latency(stacked, seg_tables[at, b], dk, zq,
                                                      t_med, t_sig) >= timeout:
                            return k, ALL_OFF, end, steps, u, n_order, n_items, wstored, \
                                isolations, vb, cur, nver, next_poll
                        steps += probes
                        u = v
                        p = found
            if j < 0 and p < 0:
                if not skipping:
                    v = ((vb + steps + 1) if four else (u + 1)) & INT_MAX
                    p = v % n
                    took = 1
                elif four:
                    v = (vb + steps + 1) & INT_MAX
                    if v > INT_MAX - n:
                        if attempt == 0:
                            return k, WRAP, end, steps, u, n_order, n_items, \
                                wstored, isolations, vb, cur, nver, next_poll
                        bail = True
                        break
                    p = v % n
                    while off[ql[p]]:
                        p = p + 1 if p + 1 < n else 0
                    took = 1
                else:                                  # 5.x: one step per probe
                    v = u + 1
                    while off[ql[v % n]]:
                        v += 1
                    if v > INT_MAX:
                        return k, WRAP, end, steps, u, n_order, n_items, \
                            wstored, isolations, vb, cur, nver, next_poll
                    p = v % n
                    took = v - u
            if j < 0:
                j = ql[p]
                qid = qi[p]
            if not retry:
                latency = _latency(stacked, seg_tables[at, j], dk, zq, t_med, t_sig)
                if seg_bad[at, j] or latency >= timeout:
                    return k, FAILS, end, steps, u, n_order, n_items, \
                        wstored, isolations, vb, cur, nver, next_poll
                ok = True
            else:
                if attempt > 0 and timeout < clock - first:
                    steps += took                      # the pick was made: "call timeout"
                    if took:
                        u = v
                    err = err_timeout
                    refresh = True                     # (a least-bad pick: look again)
                    break
                budget = timeout - (clock - first)
                kind = seg_kind[at, j]
                ok = False
                if kind == 1:                          # refused at once
                    latency = int(FAIL_FAST[(dk * nff) >> BUCKET_BITS])   # dk: a bucket
                elif kind == 2:                        # no answer: the whole budget
                    latency = budget
                else:
                    latency = _latency(stacked, seg_tables[at, j], dk, zq, t_med, t_sig)
                    ok = True
                if latency >= budget:                  # no answer within the budget: a timeout
                    latency = budget + TIMER_OVERSHOOT_MS
                    ok = False
                if not ok and not saved:               # what to put back if it cannot finish
                    saved = True                       # (only attempt 0 gets here first; only
                    s_fb[:, :] = fb                    # a removal, above, changes the arrays
                    s_order[:] = order                 # before, and saves them first)
                    s_tord[:] = tord
            steps += took
            if took:
                u = v
            if carry:
                d = iso_duration if not ok else (
                    0 if latency < lat_min else _duration(latency, lat_max, nad))
                if not five_extends or (d > 0 and clock + latency + d > fb[j, UNTIL]):
                    fb[j, UNTIL] = clock + latency + d  # 4.x overwrites; 5.x only extends
                fb[j, LAT] = latency
                fb[j, REACH] = 1
                if not fb[j, TOUCHED]:
                    fb[j, TOUCHED] = 1
                    order[n_order] = j
                    n_order += 1
                if not fb[j, IN_TABLE]:
                    fb[j, IN_TABLE] = 1
                    tord[n_items] = j
                    n_items += 1
            clock += latency
            if ok:
                if latency >= isolates or took == 0:   # an isolation, or the least-bad pick
                    if not carry:
                        o_start[base + k] = first
                        o_end[base + k] = clock
                        o_broker[base + k] = fb[j, CODE]
                        o_qid[base + k] = qid
                        return k + 1, ISOLATED, clock, steps, u, n_order, n_items, wstored, \
                            isolations, vb, cur, nver, next_poll
                    isolations += 1
                    refresh = True
                break
            isolations += 1                            # the failed broker is isolated now
            refresh = True
            err = err_remoting
            attempt += 1
            if attempt >= attempts_max:
                break
        if bail:                                       # as it was before the send: stepped
            if saved:
                fb[:, :] = s_fb
                order[:] = s_order
                tord[:] = s_tord
            steps, u, n_order, n_items = s_steps, s_u, s_norder, s_nitems
            wstored, isolations = s_wstored, s_isolations
            return k, FAILS, end, steps, u, n_order, n_items, \
                wstored, isolations, vb, cur, nver, next_poll
        end = clock
        o_start[base + k] = first
        o_end[base + k] = clock
        if ok:
            o_broker[base + k] = fb[j, CODE]
            o_qid[base + k] = qid
            if attempt:
                o_attempts[base + k] = attempt + 1
        else:
            o_broker[base + k] = -1
            o_qid[base + k] = -1
            o_status[base + k] = failed
            o_attempts[base + k] = attempt if err == err_timeout else attempts_max
            o_error[base + k] = err
        k += 1
    why = DONE if k >= w else HORIZON
    return k, why, end, steps, u, n_order, n_items, \
        wstored, isolations, vb, cur, nver, next_poll
