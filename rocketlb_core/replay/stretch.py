"""Producer replay, stretches: the closed-form kernel that ``ProducerReplayer`` adds to the
stepped reference (``rocketlb_core.replay.stepped``; the module docstring there says when a
stretch applies and why the results are identical).
"""

from __future__ import annotations

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
            names = sorted({q.broker_name for q in tp.queues})
            local = {b: j for j, b in enumerate(names)}
            self._layout = (key, (names,
                                  np.array([local[q.broker_name] for q in tp.queues], np.int64),
                                  np.array([q.queue_id for q in tp.queues], np.int32),
                                  np.array([self.broker_code[b] for b in names], np.int16)),
                            tuple(tp.queues))
        return self._layout[1]

    def _ahead(self, t0: int, names: list[str], next_poll: int
               ) -> tuple[int, Any, Any, int]:
        """What a stretch from ``t0`` needs, for every condition change it may run across:
        ``t0``'s segment; per segment, the latency tables (shifted to index ``stacked``) and
        the failing brokers of ``names``; and the horizon, the first route poll that may
        change the producer's route: ``next_poll`` when the route already differs at ``t0``,
        else the first poll at or after the start of the first segment where it differs
        (``FOREVER``: none). Polls before it find the route the producer has."""
        cond = self.conditions
        key = (self.version, tuple(names))
        if self._ahead_key != key:
            tables, bad = cond.broker_matrices(tuple(names), self.producer)
            full = tuple(sorted({qd.broker_name for qd in self.route.queue_datas}))
            assert self.current is not None
            mine = np.array([b in {qd.broker_name for qd in self.current.queue_datas}
                             for b in full])
            differs = np.flatnonzero((cond.route_matrix(full) != mine).any(axis=1))
            self._ahead_key, self._ahead_val = key, (tables << BUCKET_BITS, bad, differs)
        tables, bad, differs = self._ahead_val
        s0 = int(np.searchsorted(cond.changes, t0, side="right"))
        j = int(np.searchsorted(differs, s0, side="left"))
        if j == len(differs):
            return s0, tables, bad, FOREVER
        changed = t0 if differs[j] == s0 else int(cond.changes[differs[j] - 1])
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

    def _walk(self, unavailable: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """4.x: for each list position, the first position at or after it (cyclically) whose
        broker is available."""
        key = unavailable.tobytes()
        nxt = self._walks.get(key)
        if nxt is None:
            n, free = len(unavailable), ~unavailable
            nxt = np.array([next((p + d) % n for d in range(n) if free[(p + d) % n])
                            for p in range(n)], np.int64)
            if len(self._walks) > 64:
                self._walks.clear()
            self._walks[key] = nxt
        return nxt

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
        unavailable = np.zeros(len(names), bool)
        if ft:
            items = strategy.table.items
            for j, b in enumerate(names):
                item = items.get(b)
                if item is not None and t0 < item.start_timestamp:
                    unavailable[j] = True
                    horizon = min(horizon, item.start_timestamp)
            if unavailable.all():
                return 0

        w = min(len(due) - i, self._chunk)
        v0 = tp.index.stored
        if self.line.rules.counter_clamps and v0 < 0:
            return 0
        if not unavailable.any():
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
        self._chunk = min(MAX_STRETCH, max(MIN_STRETCH, 2 * m))
        if sure and m == c < len(fails) and fails[c]:
            # Send i + m would fail, retry or isolate a broker: it is stepped next, so the
            # stretch there need not be tried (stepping a send is always exact).
            self._steps_at = i + m
        sl = slice(i, i + m)
        out.start[sl] = start[:m]
        out.end[sl] = end[:m]
        out.broker[sl] = qcode[local[:m]]
        out.queue_id[sl] = qids[pos[:m]]
        # The state after m sends, as m steps would have left it.
        self.seq += m
        self.busy = int(end[m - 1])
        last_start = int(start[m - 1])
        if last_start >= next_poll:
            self.next_poll = next_poll + ROUTE_POLL_MS * ((last_start - next_poll)
                                                         // ROUTE_POLL_MS + 1)
        if self.line.rules.selection == "5.x" and unavailable.any():
            tp.index.stored = wrap32(v0 + int(vals[m - 1]) - (v0 & _MASK31))
        elif self.line.rules.counter_clamps:
            tp.index.stored = (v0 + m) & _MASK31
        else:
            tp.index.stored = wrap32(v0 + m)
        if ft:                  # each broker's last report, in order of first appearance
            for j, at in _first_and_last(local[:m], n):
                strategy.update_fault_item(names[j], int(lat[at]), False, int(end[at]))
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
    r = ProducerReplayer(producer, topic, route, conditions, fault_tolerance, config, brokers,
                         errors, vectorise)
    yield from rows_of(producer, r.run(np.asarray(due_times, dtype=np.int64)), brokers, errors)
