"""Producer replay, stretches: the closed-form kernel that ``ProducerReplayer`` adds to the
stepped reference (``rocketlb_core.replay.stepped``; the module docstring there says when a
stretch applies and why the results are identical).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from rocketlb_core.conditions import ROUTE_POLL_MS
from rocketlb_core.javamath import INT_MAX, wrap32
from rocketlb_core.model import TopicRoute
from rocketlb_core.producer import TopicPublishInfo
from rocketlb_core.replay.config import ReplayConfig
from rocketlb_core.replay.draws import BUCKET_BITS
from rocketlb_core.replay.stepped import (
    MAX_STRETCH,
    MIN_STRETCH,
    Columns,
    SteppedReplayer,
    rows_of,
)
from rocketlb_core.replay.timeline import FOREVER, Conditions

_MASK31 = 0x7FFFFFFF
GUESSES = 3
"""How many times a stretch guesses which segment each send starts in (see ``_stretch``)."""
SCALAR_MAX = 64
"""Stretches that look at this few sends or fewer go one send at a time (``_scalar``)."""


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
        the failing brokers of ``names``; and the horizon, the first route poll that may
        change the producer's route: ``next_poll`` when the route already differs at ``t0``,
        else the first poll at or after the start of the first segment where it differs
        (``FOREVER``: none). Polls before it find the route the producer has."""
        cond = self.conditions
        key = (self.version, names)
        if self._ahead_key != key:
            tables, bad, tlists, blists = cond.stretch_tables(names, self.producer, BUCKET_BITS)
            full = tuple(sorted({qd.broker_name for qd in self.route.queue_datas}))
            assert self.current is not None
            listed = {qd.broker_name for qd in self.current.queue_datas}
            mine = np.array([b in listed for b in full])
            differs = np.flatnonzero((cond.route_matrix(full) != mine).any(axis=1)).tolist()
            self._ahead_key, self._ahead_val = key, (tables, bad, differs)
            self._ahead_lists = (tlists, blists)
        tables, bad, differs = self._ahead_val
        changes = cond.change_list()
        s0 = bisect.bisect_right(changes, t0)
        j = bisect.bisect_left(differs, s0)
        if j == len(differs):
            return s0, tables, bad, FOREVER
        changed = t0 if differs[j] == s0 else changes[differs[j] - 1]
        if changed <= next_poll:
            return s0, tables, bad, next_poll
        return s0, tables, bad, next_poll + ROUTE_POLL_MS * -(-(changed - next_poll)
                                                             // ROUTE_POLL_MS)

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
        key = unavailable.tobytes()
        hit = self._walks.get(key)
        if hit is None:
            n, free = len(unavailable), ~unavailable
            nxt = np.array([next((p + d) % n for d in range(n) if free[(p + d) % n])
                            for p in range(n)], np.int64)
            if len(self._walks) > 64:
                self._walks.clear()
            hit = self._walks[key] = (nxt, nxt.tolist())
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
        cond, strategy = self.conditions, self.strategy
        names, qlocal, qids, qcode = self._queue_layout(tp)
        s0, seg_tables, seg_bad, horizon = self._ahead(t0, names, next_poll)
        n = len(qlocal)
        ft = strategy.send_latency_fault_enable
        off = [False] * len(names)
        if ft:
            items = strategy.table.items
            for j, b in enumerate(names):
                item = items.get(b)
                if item is not None and t0 < item.start_timestamp:
                    off[j] = True
                    horizon = min(horizon, item.start_timestamp)
            if all(off):
                return self._least_bad(out, i, t0, names, s0)
        skipped = any(off)

        w = min(len(due) - i, self._chunk)
        v0 = tp.index.stored
        if self.line.rules.counter_clamps and v0 < 0:
            return 0
        if w <= SCALAR_MAX:
            return self._scalar(out, i, w, t0, v0, horizon, off if skipped else None, qlocal)
        unavailable = np.array(off, bool)
        if not skipped:
            vals = np.arange(v0 + 1, v0 + w + 1, dtype=np.int64) & _MASK31
            pos = vals % n
        elif self.line.rules.selection == "4.x":     # 4.x: one step, then a local walk
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
        self._commit(m, int(start[m - 1]), int(end[m - 1]), int(vals[m - 1]), reports, v0,
                     skipped)
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
        if any(bad[s0]):
            return 0
        lookup, bucket = self.conditions.stacked.item, int(self._buckets[i])
        lat = [lookup(t | bucket) for t in tables[s0]]
        if max(lat) >= self._timeout:
            return 0
        tp = self.tp
        assert tp is not None
        mq = self.strategy.select(tp, None, t0)
        latency = lat[names.index(mq.broker_name)]
        end = t0 + latency
        out.start[i], out.end[i] = t0, end
        out.broker[i], out.queue_id[i] = self.broker_code[mq.broker_name], mq.queue_id
        self.strategy.update_fault_item(mq.broker_name, latency, False, end)
        self.seq += 1
        self.busy = end
        self._chunk = MIN_STRETCH
        return 1

    def _commit(self, m: int, last_start: int, last_end: int, last_val: int,
                reports: list[tuple[int, int, int]], v0: int, skipped: bool) -> None:
        """The state after a stretch of ``m`` sends, as ``m`` steps would have left it.
        ``last_val``: the counter value the last send's pick returned; ``reports``: (broker of
        the layout, latency, end) of each broker's last send, in order of first appearance
        (what the fault table's updates leave, in upstream's order)."""
        tp, next_poll = self.tp, self.next_poll
        assert tp is not None and next_poll is not None
        self._chunk = min(MAX_STRETCH, max(MIN_STRETCH, 2 * m))
        self.seq += m
        self.busy = last_end
        if last_start >= next_poll:
            self.next_poll = next_poll + ROUTE_POLL_MS * ((last_start - next_poll)
                                                         // ROUTE_POLL_MS + 1)
        if self.line.rules.selection == "5.x" and skipped:
            tp.index.stored = wrap32(v0 + last_val - (v0 & _MASK31))
        elif self.line.rules.counter_clamps:
            tp.index.stored = (v0 + m) & _MASK31
        else:
            tp.index.stored = wrap32(v0 + m)
        names = self._layout[1][0] if self._layout is not None else []
        for j, latency, end in reports:
            self.strategy.update_fault_item(names[j], latency, False, end)

    def _scalar(self, out: Columns, i: int, w: int, t0: int, v0: int, horizon: int,
                off: list[bool] | None, qlocal: np.ndarray[Any, Any]) -> int:
        """The stretch one send at a time: for short stretches, where the vector path's fixed
        cost (some forty NumPy calls) is more than the sends themselves. The same picks,
        latencies, stops and state as the vector path; each send's segment is looked up from
        its start, so no guessing."""
        ql, qi, qc = self._layout_lists
        cond = self.conditions
        changes = cond.change_list()
        stacked, buckets, due = cond.stacked, self._buckets, out.due
        timeout, isolates = self._timeout, self._isolates
        n = len(ql)
        seg_tables, seg_bad = self._ahead_lists
        four = self.line.rules.selection == "4.x"
        skipped = off is not None
        if off is not None:
            unavailable = np.array(off, bool)[qlocal]
        if skipped and four:
            walk = self._walk(unavailable, as_list=True)
        elif skipped:
            free = np.flatnonzero(~unavailable).tolist()
            first = (v0 & _MASK31) + 1                 # the first probe's returned value
            if first > INT_MAX:
                return 0
            base, g0, nf = first - first % n, bisect.bisect_left(free, first % n), len(free)
        starts: list[int] = []
        ends: list[int] = []
        picks: list[int] = []
        reports: dict[int, tuple[int, int]] = {}
        dues = due[i:i + w].tolist()
        draws = buckets[i:i + w].tolist()
        lookup = stacked.item
        end = self.busy
        v = last = v0
        fails = False
        seg, seg_end = FOREVER, FOREVER                # the segment of the last start: from, to
        tables: list[int] = []
        bad: list[bool] = []
        for k in range(w):
            if not skipped:
                v = (v0 + k + 1) & _MASK31
                p = v % n
            elif four:
                v = (v0 + k + 1) & _MASK31
                if v > INT_MAX - n:
                    break
                p = walk[v % n]
            else:
                g = g0 + k
                p = free[g % nf]
                v = base + (g // nf) * n + p
                if v > INT_MAX:
                    break
            start = t0 if k == 0 else max(dues[k], end)
            if start >= horizon:
                break
            if not seg <= start < seg_end:
                at = bisect.bisect_right(changes, start)
                seg = changes[at - 1] if at else -FOREVER
                seg_end = changes[at] if at < len(changes) else FOREVER
                tables, bad = seg_tables[at], seg_bad[at]
            j = ql[p]
            latency = lookup(tables[j] | draws[k])
            if bad[j] or latency >= timeout:
                fails = True
                break
            end = start + latency
            starts.append(start)
            ends.append(end)
            picks.append(p)
            last = v
            reports[j] = (latency, end)
            if latency >= isolates:                    # it isolates its broker: the last one
                break
        m = len(starts)
        if m == 0:
            return 0
        if fails:
            self._steps_at = i + m                     # stepped next, without a stretch
        sl = slice(i, i + m)
        out.start[sl] = starts
        out.end[sl] = ends
        out.broker[sl] = [qc[ql[p]] for p in picks]
        out.queue_id[sl] = [qi[p] for p in picks]
        ft = self.strategy.send_latency_fault_enable
        self._commit(m, starts[-1], ends[-1], last,
                     [(j, lat, e) for j, (lat, e) in reports.items()] if ft else [], v0, skipped)
        return m


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
    r = ProducerReplayer(producer, topic, route, conditions, fault_tolerance, config, brokers,
                         errors, vectorise)
    yield from rows_of(producer, r.run(due), brokers, errors)
