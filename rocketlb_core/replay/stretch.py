"""Producer replay, stretches: the closed-form kernel that ``ProducerReplayer`` adds to the
stepped reference (``rocketlb_core.replay.stepped``; the module docstring there says when a
stretch applies and why the results are identical).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rocketlb_core.conditions import ROUTE_POLL_MS
from rocketlb_core.javamath import INT_MAX, wrap32
from rocketlb_core.model import TopicRoute
from rocketlb_core.producer import TopicPublishInfo
from rocketlb_core.producer.fault import FaultItem, FaultTable4, FaultTable5
from rocketlb_core.producer.index import ThreadLocalIndex
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.replay.config import FAILED, ReplayConfig
from rocketlb_core.replay.draws import BUCKET_BITS
from rocketlb_core.replay.stepped import (
    MAX_STRETCH,
    MIN_STRETCH,
    Columns,
    SteppedReplayer,
    route_listing,
    rows_of,
)
from rocketlb_core.replay.timeline import FOREVER, Conditions

_MASK31 = 0x7FFFFFFF
GUESSES = 3
"""How many times a stretch guesses which segment each send starts in (see ``_stretch``)."""
SCALAR_MAX = 64
"""Stretches that look at this few sends or fewer go one send at a time (``_scalar``)."""
SCALAR_RUN = 4096
"""While sends isolate brokers often (a churning day with fault tolerance on, where the vector
path would stop every few sends), stretches go one send at a time, carrying the isolations
through (``_scalar``), looking at up to this many sends (0: never)."""
CHURNING = 64
"""A stretch with at least one isolation per this many sends marks the producer as churning."""
USE_COMPILED = True
"""Run the scalar path's loop compiled (``rocketlb_core.replay.compiled``) when numba is
installed; the Python loop gives the same bytes (the tests run both). numba is imported on the
first stretch of a churning producer, so replays that never churn do not pay for the import;
once it is in, every scalar stretch uses it."""
_NO_KINDS = np.zeros((1, 1), np.int8)                  # run_sends' retry inputs, unused
_NO_ROUTES = (np.zeros(1, np.int64), np.zeros((1, 1), np.int64), np.zeros((1, 1), np.int32),
              np.zeros(1, np.int64), np.zeros((1, 1), np.int64), np.zeros((1, 1), np.int64))
"""run_sends' route inputs when it does not poll (``routes`` off): a segment's pattern, the
patterns' lists, queue ids, lengths, write-queue counts, list membership."""
VERSIONS_AHEAD = 64
"""At most how many route versions' seeded counter starts the loop gets at a time
(``ProducerReplayer._next_starts``)."""
_KERNEL: list[Any] = []                                # [the compiled module or None], once tried


def _compiled(load: bool = True) -> Any:
    """``rocketlb_core.replay.compiled`` when numba imports, else None; ``load=False``: None
    unless it was loaded already."""
    if not _KERNEL:
        if not load:
            return None
        from rocketlb_core.replay import compiled

        _KERNEL.append(compiled if compiled.AVAILABLE else None)
    return _KERNEL[0]


class ProducerReplayer(SteppedReplayer):
    """One producer's sends: stretches where they apply, steps elsewhere."""

    # ------------------------------------------------------------------ stretches
    def _queue_layout(self, tp: TopicPublishInfo) -> Any:
        """The queue list as arrays, cached for the queue objects themselves: a route change
        brings new ones, and so does 4.x's fallback, which replaces a queue of the list
        (upstream mutates it in place). The cache holds the objects, so their ids, its key,
        cannot be reused by others."""
        key = tuple(map(id, tp.queues))
        if self._layout is None or self._layout[0] != key:
            names = tuple(sorted({q.broker_name for q in tp.queues}))
            local = {b: j for j, b in enumerate(names)}
            self._layout = (key, (names,
                                  np.array([local[q.broker_name] for q in tp.queues], np.int64),
                                  np.array([q.queue_id for q in tp.queues], np.int32),
                                  np.array([self.broker_code[b] for b in names], np.int16)),
                            tuple(tp.queues))
            _, qlocal, qids, qcode = self._layout[1]
            self._layout_lists = (qlocal.tolist(), qids.tolist(), qcode.tolist())
        return self._layout[1]

    def _ahead(self, t0: int, names: tuple[str, ...], next_poll: int
               ) -> tuple[int, Any, Any, int]:
        """What a stretch from ``t0`` needs, for every condition change it may run across:
        ``t0``'s segment; per segment, the latency tables (shifted to index ``stacked``) and
        the failing brokers of ``names``; and the horizon, the first route poll that finds
        the route changed: the first poll (``next_poll`` on, every ``ROUTE_POLL_MS``) that
        falls in a segment where the route differs from the producer's (``FOREVER``: none).
        Polls before it find the route the producer has (a short outage that ends between
        two polls changes nothing)."""
        cond = self.conditions
        key = (self.version, names)
        if self._ahead_key != key:
            tables, bad, tlists, blists = cond.stretch_tables(names, self.producer, BUCKET_BITS)
            full = tuple(sorted({qd.broker_name for qd in self.route.queue_datas}))
            assert self.current is not None
            listed = {qd.broker_name for qd in self.current.queue_datas}
            differs = cond.route_differs(full, tuple(b in listed for b in full))
            self._ahead_key, self._ahead_val = key, (tables, bad, differs)
            self._ahead_lists = (tlists, blists)
        tables, bad, differs = self._ahead_val
        changes = cond.change_list()
        s0 = bisect.bisect_right(changes, t0)
        j = bisect.bisect_left(differs, s0)
        while j < len(differs):
            # the first poll at or after the route starts to differ; it finds the route
            # changed if its own segment differs too, else the route came back before it:
            # go on to the next segment that differs after that poll
            changed = t0 if differs[j] == s0 else changes[differs[j] - 1]
            poll = next_poll if changed <= next_poll else (
                next_poll + ROUTE_POLL_MS * -(-(changed - next_poll) // ROUTE_POLL_MS))
            at = bisect.bisect_right(changes, poll)
            j = bisect.bisect_left(differs, at)
            if j < len(differs) and differs[j] == at:
                return s0, tables, bad, poll
        return s0, tables, bad, FOREVER

    def _stops(self, fails: np.ndarray[Any, Any], lat: np.ndarray[Any, Any]
               ) -> np.ndarray[Any, Any]:
        """Where a stretch must stop: before a send that fails (its broker is down or cut off,
        or the send times out), and after one slow enough to isolate its broker. That send is
        still a plain first-attempt success, so the stretch takes it; the fault item it leaves
        (reported with the others when the stretch ends) isolates the broker from then on."""
        if self._isolates >= self._timeout:
            return fails
        stops = fails.copy()
        stops[1:] |= lat[:-1] >= self._isolates
        return stops

    def _chain(self, due: np.ndarray[Any, Any], lat: np.ndarray[Any, Any],
               stop: np.ndarray[Any, Any]) -> tuple[int, Any, Any, Any]:
        """The sending thread's busy chain over the sends before the first ``stop``:
        ``end_k = max(due_k, end_{k-1}) + lat_k`` (the first also waits for ``self.busy``).
        Returns (how many, starts, ends, latencies)."""
        c = int(np.argmax(stop))
        if not stop[c]:
            c = len(stop)
        if c == 0:
            return 0, lat[:0], lat[:0], lat[:0]
        lat = lat[:c]
        cs = np.cumsum(lat)
        free_at = due[:c] - cs                         # due_k - (cs_k - lat_k) - lat_k
        free_at += lat
        free_at[0] = max(int(free_at[0]), self.busy)   # the thread is busy until then
        end = np.maximum.accumulate(free_at)
        end += cs
        return c, end - lat, end, lat

    def _walk(self, unavailable: np.ndarray[Any, Any], as_list: bool = False) -> Any:
        """4.x: for each list position, the first position at or after it (cyclically) whose
        broker is available (``as_list``: as a list, for the one-send-at-a-time path)."""
        hit = _walk_of(unavailable.tobytes())
        return hit[1] if as_list else hit[0]

    def _stretch(self, out: Columns, i: int) -> int:
        """Replay sends ``i, i+1, ...`` in closed form while nothing but round robin and the
        busy chain moves; returns how many (0: step this one)."""
        if i == self._steps_at:                        # the last stretch stopped before it
            return 0
        if self.tp is None or self.next_poll is None:
            return 0
        due = out.due
        t0 = max(int(due[i]), self.busy)
        if t0 >= self.next_poll:    # the poll a step would make first, then on in closed form
            self._poll(t0)
        tp, next_poll = self.tp, self.next_poll
        if tp is None or next_poll is None or not tp.queues or tp.index.stored is None:
            return 0
        if self._churning and USE_COMPILED and (pats := self._route_patterns()) is not None:
            return self._scalar_routes(out, i, pats)
        cond, strategy = self.conditions, self.strategy
        names, qlocal, qids, qcode = self._queue_layout(tp)
        s0, seg_tables, seg_bad, horizon = self._ahead(t0, names, next_poll)
        n = len(qlocal)
        ft = strategy.send_latency_fault_enable
        off = [False] * len(names)
        until: list[int] | None = None
        route_horizon = horizon
        if ft:
            items = strategy.table.items
            until = [-FOREVER] * len(names)
            for j, b in enumerate(names):
                item = items.get(b)
                if item is not None:
                    until[j] = item.start_timestamp
                    if t0 < item.start_timestamp:
                        off[j] = True
                        horizon = min(horizon, item.start_timestamp)
        skipped = any(off)
        fast = USE_COMPILED and bool(_KERNEL) and _KERNEL[0] is not None
        # A churning producer's sends go one at a time, and so does a send that finds every
        # broker isolated once the compiled loop is in (it takes the least-bad pick itself).
        churning = SCALAR_RUN > 0 and (self._churning or (fast and ft and all(off)))
        if ft and all(off) and not churning:
            return self._least_bad(out, i, t0, names, s0)
        # Such a stretch looks at SCALAR_RUN sends whatever the last one took: the compiled
        # loop stops where it must, and slicing costs it nothing (the Python loop copies what
        # it looks at, so it keeps the doubling chunk).
        w = min(len(due) - i, SCALAR_RUN if churning and fast else self._chunk)
        v0 = tp.index.stored
        if self.line.rules.counter_clamps and v0 < 0:
            return 0
        if w <= SCALAR_MAX:
            return self._scalar(out, i, w, v0, route_horizon, until, qlocal)
        if churning:
            return self._scalar(out, i, min(w, SCALAR_RUN), v0, route_horizon, until,
                                qlocal)
        unavailable = np.array(off, bool)
        four = self.line.rules.selection == "4.x"
        if not skipped:
            vals = np.arange(v0 + 1, v0 + w + 1, dtype=np.int64) & _MASK31
            pos = vals % n
        elif four:                                     # 4.x: one step, then a local walk
            vals = np.arange(v0 + 1, v0 + w + 1, dtype=np.int64) & _MASK31
            w = int(np.argmax(vals > INT_MAX - n)) if (vals > INT_MAX - n).any() else w
            vals = vals[:w]
            pos = self._walk(unavailable[qlocal])[vals % n]
        else:                                          # 5.x: one step per probe
            free_pos = np.flatnonzero(~unavailable[qlocal])
            s = (v0 & _MASK31) + 1                     # the first probe's returned value
            if s > INT_MAX:
                return 0
            g = int(np.searchsorted(free_pos, s % n)) + np.arange(w, dtype=np.int64)
            vals = (s - s % n) + (g // len(free_pos)) * n + free_pos[g % len(free_pos)]
            if vals[-1] > INT_MAX:                     # stop before the counter wraps
                w = int(np.argmax(vals > INT_MAX))
                vals, g = vals[:w], g[:w]
            pos = free_pos[g % len(free_pos)]
        if w == 0:
            return 0
        local = qlocal[pos]
        buckets = self._buckets[i:i + w]
        # Each send meets the conditions of the segment it starts in, which the busy chain
        # decides. Guess each send's segment from when it could start at the earliest (its due
        # time, not before t0; while every due time is before the next change, simply t0's
        # segment), run the chain, and guess again from the starts it gave, up to
        # ``GUESSES`` times; the stretch keeps the sends up to the first whose guess was still
        # wrong (>= 1 send: the first starts at t0).
        changes = cond.changes
        following = int(changes[s0]) if s0 < len(changes) else FOREVER
        seg: Any = None
        sure = True                                    # stop[c] was met in its own segment
        if int(due[i + w - 1]) < following:
            lat = cond.stacked[seg_tables[s0][local] | buckets]
            fails = seg_bad[s0][local] | (lat >= self._timeout)
            c, start, end, lat = self._chain(due[i:i + w], lat, self._stops(fails, lat))
            if not c or int(start[c - 1]) < following:
                seg = s0
        guess: Any = None if seg is not None else np.maximum(due[i:i + w], t0)
        for attempt in range(GUESSES if seg is None else 0):
            if attempt and c:
                guess[:c] = start
            seg = cond.segment_of(guess)
            lat = cond.stacked[seg_tables[seg, local] | buckets]
            fails = seg_bad[seg, local] | (lat >= self._timeout)
            c, start, end, lat = self._chain(due[i:i + w], lat, self._stops(fails, lat))
            wrong = cond.segment_of(start) != seg[:c]
            if not wrong.any():
                break
            if attempt == GUESSES - 1:
                c, sure = int(np.argmax(wrong)), False
                lat, start, end = lat[:c], start[:c], end[:c]
        if c == 0:
            return 0
        m = c if horizon >= FOREVER else int(np.searchsorted(start, horizon, side="left"))
        if m == 0:
            return 0
        if sure and m == c < len(fails) and fails[c]:
            # Send i + m would fail, retry or isolate a broker: it is stepped next, so the
            # stretch there need not be tried (stepping a send is always exact).
            self._steps_at = i + m
        sl = slice(i, i + m)
        out.start[sl] = start[:m]
        out.end[sl] = end[:m]
        out.broker[sl] = qcode[local[:m]]
        out.queue_id[sl] = qids[pos[:m]]
        reports = [(j, int(lat[at]), int(end[at])) for j, at in _first_and_last(local[:m], n)] \
            if ft else []
        steps = int(vals[m - 1]) - (v0 & _MASK31) if skipped and not four else m
        self._commit(m, int(start[m - 1]), int(end[m - 1]), steps, reports, v0)
        self._churning = ft and m < CHURNING and int(lat[m - 1]) >= self._isolates
        return m

    def _least_bad(self, out: Columns, i: int, t0: int, names: tuple[str, ...], s0: int) -> int:
        """One send while every broker is isolated: the pick is the least-bad branch's (the
        real ``select``, which moves the counters as upstream does). Taken here, not stepped,
        when it cannot fail: whichever broker the pick names answers within the budget (the
        fault table names only brokers of the list, every one is up and reachable in ``t0``'s
        segment, and this send's draw is below the timeout on each). Else 0: the send is
        stepped."""
        if any(b not in names for b in self.strategy.table.items):
            return 0            # the pick may name a broker that has left the list
        tables, bad = self._ahead_lists
        tp = self.tp
        assert tp is not None and tp.index.stored is not None
        picked = self._pick_least_bad(t0, int(self._buckets[i]), tables[s0], bad[s0],
                                      tp.index.stored, 0)
        if picked is None:
            return 0
        end, out.broker[i], out.queue_id[i], _ = picked
        out.start[i], out.end[i] = t0, end
        self.seq += 1
        self.busy = end
        self._chunk = MIN_STRETCH
        self._churning = True
        return 1

    def _commit(self, m: int, last_start: int, last_end: int, steps: int,
                reports: list[tuple[int, int, int]], v0: int) -> None:
        """The state after a stretch of ``m`` sends, as ``m`` steps would have left it.
        ``steps``: how many times the sends stepped the counter from ``v0`` (4.x: one a send;
        5.x: one a probe); ``reports``: (broker of the layout, latency, end) of each broker's
        last send not yet reported, in order of first appearance (what the fault table's
        updates leave, in upstream's order)."""
        tp, next_poll = self.tp, self.next_poll
        assert tp is not None and next_poll is not None
        self._chunk = min(MAX_STRETCH, max(MIN_STRETCH, 2 * m))
        self.seq += m
        self.busy = last_end
        if last_start >= next_poll:
            self.next_poll = next_poll + ROUTE_POLL_MS * ((last_start - next_poll)
                                                         // ROUTE_POLL_MS + 1)
        if self.line.rules.counter_clamps:
            tp.index.stored = (v0 + steps) & _MASK31
        else:
            tp.index.stored = wrap32(v0 + steps)
        self._report(reports)

    def _report(self, reports: Any) -> None:
        """Each (broker of the layout, latency, end) to the fault table, in order."""
        names = self._layout[1][0] if self._layout is not None else []
        for j, latency, end in reports:
            self.strategy.update_fault_item(names[j], latency, False, end)

    def _pick_least_bad(self, start: int, draw: int, tables: list[int], bad: list[bool],
                        vb: int, steps: int) -> tuple[int, int, int, int] | None:
        """A send that finds every broker isolated, inside a stretch: the counter brought to
        ``vb + steps``, the real ``select`` (its least-bad branch moves the counters as
        upstream does), the latency, the fault report. Returns (end, broker code, queue id,
        the counter after), or None when the send may fail (a broker of the list is down in
        this segment, or the draw is not under the timeout on each): it is stepped."""
        if any(bad):
            return None
        lookup = self.conditions.stacked.item
        lat = [lookup(t | draw) for t in tables]
        if max(lat) >= self._timeout:
            return None
        tp = self.tp
        assert tp is not None and self._layout is not None
        tp.index.stored = ((vb + steps) & _MASK31 if self.line.rules.counter_clamps
                           else wrap32(vb + steps))
        mq = self.strategy.select(tp, None, start)
        latency = lat[self._layout[1][0].index(mq.broker_name)]
        end = start + latency
        self.strategy.update_fault_item(mq.broker_name, latency, False, end)
        return end, self.broker_code[mq.broker_name], mq.queue_id, tp.index.stored

    def _scalar_compiled(self, compiled: Any, out: Columns, i: int, w: int, v0: int,
                         horizon: int, carry: bool) -> int:
        """``_scalar`` with its loop compiled (``compiled.run_sends``): the same sends, state
        and stops. The loop keeps the fault items of the layout's brokers as an array
        (``_fault_rows``) and takes the least-bad branch itself on 4.9.8 and 5.x; on 4.9.7 and
        4.7.1 it hands that send back (``_pick_least_bad``, which ends the stretch). The items
        are written back to the table in order of first report (``_write_back``)."""
        assert self._layout is not None and self.tp is not None
        names, qlocal, qids, _ = self._layout[1]
        tables, bad, _ = self._ahead_val
        tlists, blists = self._ahead_lists
        cond, strategy = self.conditions, self.strategy
        # The loop picks least-bad itself (every fault item is in ``fb``, those of brokers
        # that left the list too, as 4.x's pick reads them); where it cannot (4.9.7, 4.7.1),
        # Python picks, when every item is of the layout.
        rules = self.line.rules
        here = carry and not rules.rewrites_cached_queue and not rules.shuffles_fault_items
        least_bad = carry and all(b in names for b in strategy.table.items)
        four = rules.selection == "4.x"
        extends = isinstance(strategy.table, FaultTable5)
        fb, tord, n_items, wstored = self._fault_rows(names)
        order = np.zeros(len(fb), np.int64)
        dues, draws = out.due[i:i + w], self._buckets[i:i + w]
        retry = self._retries and carry and here
        kinds, err_remoting, err_timeout, iso = self._retry_inputs(names, retry)
        k, end, vb, steps, u, isolations = 0, self.busy, v0, 0, v0 & _MASK31, 0
        k, why, end, steps, u, n_order, n_items, wstored, isolations, *_ = compiled.run_sends(
            k, w, dues, draws, end, horizon, cond.changes, tables, bad, cond.stacked, qlocal,
            qids, four, vb, steps, u, carry, here, fb, order, 0, tord, n_items, wstored,
            extends, self._lat_max, self._nad, self._isolates, self._timeout, out.start,
            out.end, out.broker, out.queue_id, i, retry, kinds, self._key64, out.seq,
            self._attempts, iso, out.status,
            out.attempts, out.error, FAILED, err_remoting, err_timeout, *cond.table_params(),
            len(qlocal), False, 0, 0, *_NO_ROUTES, 0, _NO_ROUTES[0])
        self._write_back(names, fb, order[:n_order], wstored if four else None, tord, n_items)
        if why == compiled.FAILS and k:
            self._steps_at = i + k                     # stepped next, without a stretch
        if why == compiled.ALL_OFF and least_bad and not here:
            start = max(int(dues[k]), end)
            at = bisect.bisect_right(cond.change_list(), start)
            picked = self._pick_least_bad(start, int(draws[k]), tlists[at], blists[at], vb,
                                          steps)
            if picked is not None:                     # the queue list may change: it ends
                end, out.broker[i + k], out.queue_id[i + k], vb = picked
                out.start[i + k], out.end[i + k] = start, end
                steps = 0
                k += 1
                isolations += 1
        if k == 0:
            return 0
        self._commit(k, int(out.start[i + k - 1]), end, steps, [], vb)
        self._churning = isolations * CHURNING >= k
        return int(k)

    def _retry_inputs(self, names: tuple[str, ...], retry: bool) -> tuple[Any, int, int, int]:
        """What the compiled loop's retries read (``retry``): how an attempt fails per segment
        and broker of ``names`` (``Conditions.failure_kinds``), the codes of its two errors, a
        failed attempt's isolation; else placeholders."""
        if not retry:
            return _NO_KINDS, -1, -1, -1
        return (self.conditions.failure_kinds(names, self.producer),
                self._error_code("RemotingException"), self._error_code("call timeout"),
                self._iso_duration)

    def _route_patterns(self) -> RoutePatterns | None:
        """What the compiled loop needs to poll the route itself (``_scalar_routes``), looked
        up once per producer (made once per route: ``RoutePatterns.shared``); None where it
        cannot: numba is not installed, fault tolerance is
        off (such producers do not churn), isolations are not carried (``SCALAR_RUN`` 0), the
        line rewrites its cached queue or shuffles fault items (4.9.7, 4.7.1: their least-bad
        pick goes through Python), or the route has an order-topic configuration."""
        if self._patterns is None:
            rules = self.line.rules
            kernel = _compiled()
            ok = (kernel is not None and self.strategy.send_latency_fault_enable
                  and SCALAR_RUN > 0 and not rules.rewrites_cached_queue
                  and not rules.shuffles_fault_items and not self.route.order_topic_conf)
            self._patterns = RoutePatterns.shared(self.route, self.topic, self.line,
                                                  self.conditions) if ok else False
        return self._patterns or None

    def _next_starts(self) -> np.ndarray[Any, Any]:
        """The seeded counter starts of the next route versions: as many as the producer has
        had so far (from 8, at most ``VERSIONS_AHEAD``); the loop stops when it needs more."""
        first = self.version + 1
        ahead = min(VERSIONS_AHEAD, max(8, self.version))
        known = self._starts
        while len(known) < first + ahead:
            known.append(self.start_index(len(known)))
        return np.array(known[first:first + ahead], np.int64)

    def _scalar_routes(self, out: Columns, i: int, pats: RoutePatterns) -> int:
        """A churning producer's sends from ``i`` on in one compiled loop that also polls the
        route (``compiled.run_sends`` with ``routes``): a route version begun in the loop is
        a new queue list and a counter at its seeded start, as ``_poll`` makes them, so the
        loop stops only before a send it cannot take (stepped next) or at the end of the
        batch. Its fault rows are one per broker of the full route, whichever the list
        holds. The same sends and state as stretches that stop at each route change."""
        from rocketlb_core.replay import compiled

        tp = self.tp
        assert tp is not None and tp.index.stored is not None and self.next_poll is not None
        v0 = tp.index.stored
        rules = self.line.rules
        if rules.counter_clamps and v0 < 0:
            return 0
        cond, strategy = self.conditions, self.strategy
        full, cur = pats.names, pats.index[self.listed]
        tables, bad, _, _ = cond.stretch_tables(full, self.producer, BUCKET_BITS)
        fb, tord, n_items, wstored = self._fault_rows(full)
        fb[:len(full), compiled.WQC] = pats.wqc[cur]
        fb[:len(full), compiled.IN_LAYOUT] = pats.member[cur]
        order = np.zeros(len(fb), np.int64)
        four = rules.selection == "4.x"
        kinds, err_remoting, err_timeout, iso = self._retry_inputs(full, self._retries)
        (k, why, end, steps, _, n_order, n_items, wstored, isolations, vb, cur, versions,
         next_poll) = compiled.run_sends(
            0, len(out.due) - i, out.due[i:], self._buckets[i:], self.busy, FOREVER,
            cond.changes, tables, bad, cond.stacked, pats.ql[cur].copy(), pats.qi[cur].copy(),
            four, v0, 0, v0 & _MASK31, True, True, fb, order, 0, tord, n_items, wstored,
            isinstance(strategy.table, FaultTable5), self._lat_max, self._nad, self._isolates,
            self._timeout, out.start, out.end, out.broker, out.queue_id, i, self._retries,
            kinds, self._key64, out.seq, self._attempts, iso, out.status, out.attempts,
            out.error, FAILED, err_remoting, err_timeout, *cond.table_params(),
            int(pats.n[cur]), True, self.next_poll, ROUTE_POLL_MS, pats.segment, pats.ql,
            pats.qi, pats.n, pats.wqc, pats.member, cur, self._next_starts())
        self._write_back(full, fb, order[:n_order], wstored if four else None, tord, n_items)
        if versions:
            self._begin_version(pats.listed[cur], self.version + versions, vb)
            self.route_versions_in_loop += versions
        self.next_poll = next_poll
        if k and why in (compiled.FAILS, compiled.ALL_OFF, compiled.WRAP):
            self._steps_at = i + k                     # stepped next, without a stretch
        if k == 0:
            return 0
        self._commit(k, int(out.start[i + k - 1]), end, steps, [], vb)
        self._churning = isolations * CHURNING >= k
        return int(k)

    def _fault_rows(self, names: tuple[str, ...]) -> tuple[Any, Any, int, int]:
        """The fault table as the compiled loop reads it: per broker of the layout a row of
        ``compiled.fb`` columns, then one per item of a broker outside the layout (a broker
        that left the list keeps its item; 4.x's least-bad pick sorts it with the others: its
        write-queue count is 0, so a pick of it removes the item, as ``select`` does); the
        rows of the items in table order; the 4.x rotation counter."""
        from rocketlb_core.replay import compiled

        table, tp = self.strategy.table, self.tp
        items = table.items
        if self._fb_base is None or self._fb_base[0] is not tp or self._fb_base[1] != names:
            base = np.zeros((len(names), compiled.COLUMNS), np.int64)
            assert tp is not None
            for j, b in enumerate(names):               # what the route alone decides
                base[j, compiled.CODE] = self.broker_code[b]
                base[j, compiled.WQC] = tp.write_queue_count(b)
                base[j, compiled.REACH] = 1
                base[j, compiled.IN_LAYOUT] = 1
            self._fb_base = (tp, names, base, {b: j for j, b in enumerate(names)})
        base, local = self._fb_base[2], self._fb_base[3]
        nb = len(names)
        outside = [b for b in items if b not in local]
        row_of = {**local, **{b: nb + x for x, b in enumerate(outside)}}
        if outside:
            fb = np.zeros((nb + len(outside), compiled.COLUMNS), np.int64)
            fb[:nb] = base
            fb[nb:, compiled.CODE] = -1
        else:
            fb = base.copy()
        rows = []
        for b, item in items.items():
            j = row_of[b]
            rows.append(j)
            fb[j, compiled.UNTIL] = item.start_timestamp
            fb[j, compiled.LAT] = item.current_latency
            fb[j, compiled.IN_TABLE] = 1
            fb[j, compiled.REACH] = item.reachable
        tord = np.zeros(len(fb), np.int64)
        tord[:len(rows)] = rows
        self._fb_outside = outside
        rotation = table.which_item_worst.stored if isinstance(table, FaultTable4) else 0
        assert rotation is not None
        return fb, tord, len(rows), rotation

    def _write_back(self, names: tuple[str, ...], fb: Any, order: Any,
                    wstored: int | None, tord: Any, n_items: int) -> None:
        """The compiled loop's fault items into the table: each reported one as the loop left
        it, the table in the loop's order (``tord``: new items in order of first report, less
        those a least-bad pick removed; what the reports one by one would have left:
        ``compiled``'s docstring), and the 4.x rotation counter."""
        from rocketlb_core.replay import compiled

        table = self.strategy.table
        items = table.items
        reach = isinstance(table, FaultTable5)
        rows = (*names, *self._fb_outside)
        for j in order.tolist():
            row = fb[j].tolist()
            name = rows[j]
            latency, start = row[compiled.LAT], row[compiled.UNTIL]
            item = items.get(name)
            if item is None:
                items[name] = FaultItem(name, latency, start)
            else:
                item.current_latency, item.start_timestamp = latency, start
                if reach:
                    item.reachable = True
        kept = [rows[j] for j in tord[:n_items].tolist()]
        if list(items) != kept:                        # removed, or back after a removal
            again = {name: items[name] for name in kept}
            items.clear()
            items.update(again)
        if wstored is not None and isinstance(table, FaultTable4):
            table.which_item_worst.stored = wstored

    def _scalar(self, out: Columns, i: int, w: int, v0: int, horizon: int,
                until: list[int] | None, qlocal: np.ndarray[Any, Any]) -> int:
        """The stretch one send at a time: for short stretches, where the vector path's fixed
        cost (some forty NumPy calls) is more than the sends themselves, and for churning
        days. The same picks, latencies, stops and state as the vector path; each send's
        segment is looked up from its start, so no guessing.

        With fault tolerance on (``until``: when each broker of the layout is available again,
        from the fault table), a send slow enough to isolate its broker does not end the
        stretch: the reports so far go to the fault table in order, the broker is skipped
        until its isolation ends, and the walk (4.x) or the probe sequence (5.x) is rebuilt
        whenever the set of isolated brokers changes. The stretch stops before a send that
        would fail, before one that finds every broker isolated (the least-bad branch), and
        at ``horizon`` (the first route poll that may change the route)."""
        if USE_COMPILED and (kernel := _compiled(load=self._churning)) is not None:
            return self._scalar_compiled(kernel, out, i, w, v0, horizon,
                                         until is not None and SCALAR_RUN > 0)
        ql, qi, qc = self._layout_lists
        cond = self.conditions
        changes = cond.change_list()
        stacked, buckets, due = cond.stacked, self._buckets, out.due
        timeout, isolates = self._timeout, self._isolates
        n = len(ql)
        seg_tables, seg_bad = self._ahead_lists
        four = self.line.rules.selection == "4.x"
        strategy, tp = self.strategy, self.tp
        assert tp is not None
        items = strategy.table.items
        names = self._layout[1][0] if self._layout is not None else ()
        # The least-bad branch is taken in the stretch only when its pick cannot leave the
        # layout: no fault item names a broker outside it, and the line does not overwrite
        # the cached queue it picks (4.9.7 and 4.7.1 do; such a pick ends the stretch).
        least_bad = until is not None and SCALAR_RUN > 0 and all(b in names for b in items)
        rewrites = self.line.rules.rewrites_cached_queue
        nb = len(names)
        off = [False] * nb
        next_on = FOREVER                              # an isolated broker is available again
        skipping = False                               # some broker is isolated now
        walk: list[int] = []
        free: list[int] = []
        base = g = nf = 0
        vb = v0                                        # the counter the steps count from
        u = v0 & _MASK31                               # 5.x: the last probe's value
        steps = 0                                      # counter steps since vb
        starts: list[int] = []
        ends: list[int] = []
        codes: list[int] = []
        qids: list[int] = []
        reports: dict[int, tuple[int, int]] = {}
        dues = due[i:i + w].tolist()
        draws = buckets[i:i + w].tolist()
        lookup = stacked.data.__getitem__              # a memoryview: plain ints, fast
        end = self.busy
        fails = False
        isolations = 0
        refresh = until is not None
        seg, seg_end = FOREVER, FOREVER                # the segment of the last start: from, to
        tables: list[int] = []
        bad: list[bool] = []
        for k in range(w):
            start = dues[k]                            # the first: t0 = max(due, busy)
            if start < end:
                start = end
            if start >= horizon:
                break
            if not seg <= start < seg_end:
                at = bisect.bisect_right(changes, start)
                seg = changes[at - 1] if at else -FOREVER
                seg_end = changes[at] if at < len(changes) else FOREVER
                tables, bad = seg_tables[at], seg_bad[at]
            if refresh or start >= next_on:            # the isolated brokers changed
                assert until is not None
                refresh = False
                off = [start < x for x in until]
                next_on = min([x for x, o in zip(until, off, strict=True) if o],
                              default=FOREVER)
                skipping = any(off)
                if skipping and all(off):              # the least-bad branch
                    if not least_bad:
                        break
                    self._report([(b, x, e) for b, (x, e) in reports.items()])
                    reports.clear()
                    picked = self._pick_least_bad(start, draws[k], tables, bad, vb, steps)
                    if picked is None:
                        break
                    end, code, qid, vb = picked
                    steps, u = 0, vb & _MASK31
                    starts.append(start)
                    ends.append(end)
                    codes.append(code)
                    qids.append(qid)
                    isolations += 1
                    if rewrites:
                        break                          # the queue list may have changed
                    for j, b in enumerate(names):
                        item = items.get(b)
                        until[j] = -FOREVER if item is None else item.start_timestamp
                    refresh = True
                    continue
                if skipping:
                    unavailable = np.array(off, bool)[qlocal]
                    if four:
                        walk = self._walk(unavailable, as_list=True)
                    else:
                        free = np.flatnonzero(~unavailable).tolist()
                        first = u + 1                  # the next probe's returned value
                        if first > INT_MAX:
                            break
                        base, nf = first - first % n, len(free)
                        g = bisect.bisect_left(free, first % n)
            if not skipping:
                v = (vb + steps + 1) & _MASK31 if four else (u + 1) & _MASK31
                p = v % n
                took = 1
            elif four:
                v = (vb + steps + 1) & _MASK31
                if v > INT_MAX - n:
                    break
                p = walk[v % n]
                took = 1
            else:
                p = free[g % nf]
                v = base + (g // nf) * n + p
                if v > INT_MAX:
                    break
                took = v - u
            j = ql[p]
            latency = lookup(tables[j] | draws[k])
            if bad[j] or latency >= timeout:
                fails = True
                break
            end = start + latency
            starts.append(start)
            ends.append(end)
            codes.append(qc[j])
            qids.append(qi[p])
            steps += took
            u = v
            if skipping and not four:
                g += 1
            if until is not None:
                reports[j] = (latency, end)
            if latency >= isolates:                    # it isolates its broker
                if until is None or not SCALAR_RUN:
                    break
                isolations += 1
                self._report([(b, x, e) for b, (x, e) in reports.items()])
                reports.clear()
                until[j] = items[names[j]].start_timestamp
                refresh = True
        m = len(starts)
        if m == 0:
            return 0
        if fails:
            self._steps_at = i + m                     # stepped next, without a stretch
        sl = slice(i, i + m)
        out.start[sl] = starts
        out.end[sl] = ends
        out.broker[sl] = codes
        out.queue_id[sl] = qids
        self._commit(m, starts[-1], ends[-1], steps,
                     [(j, x, e) for j, (x, e) in reports.items()], vb)
        self._churning = isolations * CHURNING >= m
        return m


@dataclass(frozen=True, eq=False)
class RoutePatterns:
    """The routes a producer's polls can find (``Conditions.route_patterns``), as arrays for
    the compiled loop: per pattern its queue list (``ql``: the row of ``fb``, one per broker
    of ``names``, the full route's, sorted; ``qi``: the queue id; the first ``n`` of a row),
    each broker's write-queue count (``getQueueIdByBroker``, -1: none) and whether the list
    holds it (``member``); ``segment``: each segment's pattern; ``listed``: a pattern as the
    full route's queue datas listed (``SteppedReplayer._route_for``), ``index`` its inverse."""

    names: tuple[str, ...]
    listed: list[tuple[bool, ...]]
    index: dict[tuple[bool, ...], int]
    segment: np.ndarray[Any, Any]
    ql: np.ndarray[Any, Any]
    qi: np.ndarray[Any, Any]
    n: np.ndarray[Any, Any]
    wqc: np.ndarray[Any, Any]
    member: np.ndarray[Any, Any]

    @classmethod
    def shared(cls, route: TopicRoute, topic: str, line: ProducerLine, conditions: Conditions
               ) -> RoutePatterns:
        """``of``, made once per route object and kept with the conditions (the producers of a
        task share both: a thousand producers made them a thousand times)."""
        key = ("route-patterns", id(route), topic, line)
        made = conditions.cached(key, lambda: (route, cls.of(route, topic, line, conditions)))
        if made[0] is not route:                       # another route under a reused id
            return cls.of(route, topic, line, conditions)
        return made[1]

    @classmethod
    def of(cls, route: TopicRoute, topic: str, line: ProducerLine, conditions: Conditions
           ) -> RoutePatterns:
        names = tuple(sorted({qd.broker_name for qd in route.queue_datas}))
        col = {b: j for j, b in enumerate(names)}
        rows, segment = conditions.route_patterns(names)
        listed = [tuple(row[col[qd.broker_name]] for qd in route.queue_datas) for row in rows]
        lists = [route_listing(route, topic, x) for x in listed]
        width = max([len(queues) for _, queues, _ in lists] + [1])
        ql = np.zeros((len(rows), width), np.int64)
        qi = np.zeros((len(rows), width), np.int32)
        n = np.zeros(len(rows), np.int64)
        wqc = np.zeros((len(rows), len(names)), np.int64)
        member = np.zeros((len(rows), len(names)), np.int64)
        for p, (_, queues, queue_datas) in enumerate(lists):
            n[p] = len(queues)
            ql[p, :len(queues)] = [col[q.broker_name] for q in queues]
            qi[p, :len(queues)] = [q.queue_id for q in queues]
            tp = TopicPublishInfo(queues, queue_datas, ThreadLocalIndex(line, stored=0))
            wqc[p] = [tp.write_queue_count(b) for b in names]
            member[p] = [any(q.broker_name == b for q in queues) for b in names]
        return cls(names, listed, {x: p for p, x in enumerate(listed)}, segment, ql, qi, n,
                   wqc, member)


@functools.lru_cache(maxsize=4096)
def _walk_of(unavailable: bytes) -> tuple[np.ndarray[Any, Any], list[int]]:
    """``ProducerReplayer._walk`` for a list position's unavailable flags (one byte each),
    shared by every producer: the walk depends on nothing else."""
    n = len(unavailable)
    nxt = np.array([next((p + d) % n for d in range(n) if not unavailable[(p + d) % n])
                    for p in range(n)], np.int64)
    nxt.flags.writeable = False
    return nxt, nxt.tolist()


def _first_and_last(used: np.ndarray[Any, Any], n: int) -> list[tuple[int, int]]:
    """(value, index of its last occurrence) for each value of ``used`` (small non-negative
    ints), in order of first occurrence. Round robin visits every broker it uses within ``n``
    picks, so the array's two ends nearly always settle it; what they miss is scanned for."""
    if len(used) <= 2 * n:
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for k, v in enumerate(used.tolist()):
            first.setdefault(v, k)
            last[v] = k
    else:
        first, last = {}, {}
        for k, v in enumerate(used[:n].tolist()):
            first.setdefault(v, k)
        offset = len(used) - n
        tail = used[-n:].tolist()
        for k in range(n - 1, -1, -1):
            last.setdefault(tail[k], offset + k)
        for v in np.flatnonzero(np.bincount(used)).tolist():
            if v not in first or v not in last:
                hit = used == v
                first.setdefault(v, int(np.argmax(hit)))
                last.setdefault(v, len(used) - 1 - int(np.argmax(hit[::-1])))
    return [(v, last[v]) for v in sorted(first, key=first.__getitem__)]


def replay_producer(producer: str, due_times: Sequence[int], topic: str, route: TopicRoute,
                    conditions: Conditions, fault_tolerance: bool, config: ReplayConfig,
                    vectorise: bool = True) -> Iterator[tuple[Any, ...]]:
    """Replay one producer's sends (``due_times`` ascending). Yields one output row per send,
    in ``OUTPUT_COLUMNS`` order."""
    brokers = sorted({qd.broker_name for qd in route.queue_datas})
    errors: dict[str, int] = {}
    due = np.asarray(due_times, dtype=np.int64)
    if config.partitioner == "kafka":
        from rocketlb_core.kafka.producer import KafkaProducerReplayer

        k = KafkaProducerReplayer(producer, topic, route, conditions, config, brokers, errors)
        yield from rows_of(producer, k.run(due), brokers, errors)
        return
    if config.client == "grpc":
        from rocketlb_core.replay.grpc_producer import GrpcProducerReplayer

        g = GrpcProducerReplayer(producer, topic, route, conditions, config, brokers, errors)
        yield from rows_of(producer, g.run(due), brokers, errors)
        return
    r = ProducerReplayer(producer, topic, route, conditions, fault_tolerance, config, brokers,
                         errors, vectorise)
    yield from rows_of(producer, r.run(due), brokers, errors)
