"""The recorded condition timeline of a trace, as the producer replay reads it: per broker, its
latency (median, p99), when it is down (clean or silent) and which clients it is cut off from;
when it is in the route; and ``TimelineBroker``, the broker model the send loop calls. Constants
shared with the simulator come from ``rocketlb_core.conditions``.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np

from rocketlb_core.conditions import BROKER_EXPIRY_MS, lognormal_sigma
from rocketlb_core.model import TopicRoute
from rocketlb_core.producer import AttemptResult, Outcome
from rocketlb_core.replay.draws import LatencyTable, _quantile_array, draw_bits, fail_fast_ms

FOREVER = 2**62
"""A time after every trace's end."""
_T = TypeVar("_T")
CACHED = 160
"""How many per-segment answers a ``Conditions`` keeps (some five per set of brokers a route
has had; each is a few bytes per segment and broker)."""


@dataclass(frozen=True, eq=False)
class Conditions:
    """The broker timeline, indexed for lookups by time, with every latency table it needs
    (built here, by ``LatencyTable.build``, which is ``latency_ms`` bucket for bucket, so every
    engine and task that builds them has the same integers; pickled as its source, see
    ``__reduce__``). Its per-segment answers are cached, the least recently used dropped
    beyond ``CACHED``: memory grows with the segments times the broker sets a day's routes
    have (about 11 MB per broker set at 156 k segments, a 10 M-send churning day)."""

    latency: dict[str, list[tuple[int, int]]]               # broker -> (from, table id)
    down: dict[str, list[tuple[int, int, str]]]            # broker -> (from, until, mode)
    partitions: dict[tuple[str, str], list[tuple[int, int]]]
    tables: tuple[LatencyTable, ...]                       # id 0: the default (2 ms, 10 ms)
    changes: np.ndarray[Any, Any]                          # every time anything changes
    stacked: np.ndarray[Any, Any] = field(repr=False)      # tables, flat: id << 16 | bucket
    _matrices: dict[Any, Any] = field(default_factory=dict, repr=False)
    _spans: dict[Any, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_columns(cls, c: dict[str, list[Any]]) -> Conditions:
        latency: dict[str, list[tuple[int, int]]] = {}
        down: dict[str, list[tuple[int, int, str]]] = {}
        parts: dict[tuple[str, str], list[tuple[int, int]]] = {}
        open_down: dict[str, tuple[int, str]] = {}
        open_part: dict[tuple[str, str], int] = {}
        ids: dict[tuple[float, float], int] = {(2.0, 10.0): 0}
        for i, t in enumerate(c["time_ms"]):
            b, kind = c["broker"][i], c["kind"][i]
            if kind == "latency":
                median = float(c["median_ms"][i])
                key = (median, float(c["p99_ms"][i] or median))
                latency.setdefault(b, []).append((t, ids.setdefault(key, len(ids))))
            elif kind == "down" and b not in open_down:
                open_down[b] = (t, c["mode"][i] or "clean")
            elif kind == "up" and b in open_down:
                start, mode = open_down.pop(b)
                down.setdefault(b, []).append((start, t, mode))
            elif kind == "partition":
                open_part.setdefault((c["client"][i], b), t)
            elif kind == "heal" and (c["client"][i], b) in open_part:
                parts.setdefault((c["client"][i], b), []).append(
                    (open_part.pop((c["client"][i], b)), t))
        for b, (start, mode) in open_down.items():
            down.setdefault(b, []).append((start, FOREVER, mode))
        for key2, start in open_part.items():
            parts.setdefault(key2, []).append((start, FOREVER))
        times = {t for rows in latency.values() for t, _ in rows}
        for spans in down.values():
            for start, until, mode in spans:
                times |= {start, until}
                if mode != "clean":
                    times.add(start + BROKER_EXPIRY_MS)
        times |= {t for spans in parts.values() for span in spans for t in span}
        tables, stacked = _build_tables(sorted(ids, key=ids.__getitem__))
        return cls(latency, down, parts, tables,
                   np.array(sorted(t for t in times if t < FOREVER), dtype=np.int64), stacked)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as what it was built from (some MB), not as its latency tables (a churning
        day's 181 tables are 190 MB), with a digest of that: a Spark task rebuilds the tables,
        and the tasks one Python worker runs share what it built (``_restore``)."""
        state = (self.latency, self.down, self.partitions,
                 tuple((t.median_ms, t.p99_ms) for t in self.tables), self.changes)
        digest = self._matrices.get("digest")
        if digest is None:
            h = hashlib.sha256(repr(state[:4]).encode())
            h.update(self.changes.tobytes())
            digest = self._matrices["digest"] = h.hexdigest()
        return (_restore, (digest, state))

    def _index(self, kind: str, key: Any) -> tuple[list[int], list[int], list[Any]]:
        """The spans of ``key`` (``down``: a broker's outages; ``gone``: the same, from when
        the name servers drop it; ``parts``: a (client, broker) cut) as (starts, untils,
        payloads), empty spans left out, sorted by start. Disjoint spans (as ``from_columns``
        makes them) let a lookup bisect to the one span that may hold a time; overlapping ones
        come back with ``starts`` empty and are scanned (``_in_spans``). Cached."""
        hit = self._spans.get((kind, key))
        if hit is None:
            rows: list[tuple[int, int, Any]]
            if kind == "parts":
                rows = [(s, u, None) for s, u in self.partitions.get(key, ())]
            elif kind == "gone":
                rows = [(s if mode == "clean" else s + BROKER_EXPIRY_MS, u, None)
                        for s, u, mode in self.down.get(key, ())]
            else:
                rows = list(self.down.get(key, ()))
            rows = [r for r in rows if r[0] < r[1]]
            order = sorted(rows, key=lambda r: r[0])
            if all(a[1] <= b[0] for a, b in itertools.pairwise(order)):
                hit = ([r[0] for r in order], [r[1] for r in order], [r[2] for r in order])
            else:                                        # scanned in their own order
                hit = ([], [], rows)
            self._spans[(kind, key)] = hit
        return hit

    def _in_spans(self, kind: str, key: Any, t: int) -> tuple[bool, Any]:
        """Whether some span of ``_index(kind, key)`` holds ``t``, and its payload."""
        starts, untils, payloads = self._index(kind, key)
        if not starts:
            for s, u, payload in payloads:              # overlapping spans, or none
                if s <= t < u:
                    return True, payload
            return False, None
        i = bisect.bisect_right(starts, t) - 1
        if i >= 0 and t < untils[i]:
            return True, payloads[i]
        return False, None

    def down_at(self, broker: str, t: int) -> str | None:
        return self._in_spans("down", broker, t)[1]      # type: ignore[no-any-return]

    def in_route_at(self, broker: str, t: int) -> bool:
        """Whether the name servers still list the broker at ``t`` (spec 7)."""
        return not self._in_spans("gone", broker, t)[0]

    def partitioned(self, client: str, broker: str, t: int) -> bool:
        return self._in_spans("parts", (client, broker), t)[0]

    def table_id_at(self, broker: str, t: int) -> int:
        rows = self.latency.get(broker)
        if not rows:
            return 0
        i = bisect.bisect_right(rows, (t, len(self.tables))) - 1
        return rows[max(i, 0)][1]

    def latency_at(self, broker: str, t: int) -> LatencyTable:
        return self.tables[self.table_id_at(broker, t)]

    # -------------------------------------------------------------- per segment, vectorised
    # Segment s holds the times t with changes[s-1] <= t < changes[s] (segment 0: before the
    # first change); nothing changes inside one. The matrices below answer, for every segment
    # at once, what the scalar methods answer for one time; a stretch that runs across many
    # segments looks its sends up in them (``rocketlb_core.replay.stretch``).
    def table_params(self) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any],
                                    np.ndarray[Any, Any]]:
        """What each latency table was built from, for the compiled loop, which computes an
        entry instead of reading it (``compiled._latency``): the buckets' normal quantiles,
        and per table id its median and sigma. Cached."""
        hit = self._matrices.get("params")
        if hit is None:
            hit = self._matrices["params"] = (
                _quantile_array(),
                np.array([t.median_ms for t in self.tables], np.float64),
                np.array([lognormal_sigma(t.median_ms, t.p99_ms) for t in self.tables],
                         np.float64))
        return hit

    def change_list(self) -> list[int]:
        """``changes`` as a list (for ``bisect``, one time at a time). Cached."""
        hit = self._matrices.get("changes")
        if hit is None:
            hit = self._matrices["changes"] = self.changes.tolist()
        return hit  # type: ignore[no-any-return]

    def _cut_client(self, client: str) -> str | None:
        """The client's part of a per-segment cache key: itself if some partition cuts it
        off, else None (every client sees the same answers)."""
        return client if any(c == client for c, _ in self.partitions) else None

    def _recall(self, key: Any) -> Any | None:
        """A cached per-segment answer, now the most recently used, or None."""
        hit = self._matrices.pop(key, None)
        if hit is not None:
            self._matrices[key] = hit
        return hit

    def _remember(self, key: Any, value: _T) -> _T:
        """Cache ``value``, dropping the least recently used answers beyond ``CACHED``
        (a producer's route versions come back to a few broker sets over and over: dropping
        them all at once made a long churning day rebuild them again and again)."""
        m = self._matrices
        m[key] = value
        if len(m) > CACHED:
            for old in [k for k in m if isinstance(k, tuple)][:len(m) - CACHED]:
                del m[old]
        return value

    def cached(self, key: tuple[Any, ...], build: Callable[[], _T]) -> _T:
        """What ``build`` makes of these conditions, kept under ``key`` with the per-segment
        answers (least recently used first out): for answers made elsewhere, such as the
        compiled replay loop's route patterns (``stretch.RoutePatterns``)."""
        hit = self._recall(key)
        return hit if hit is not None else self._remember(key, build())

    def segment_of(self, t: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The segment of each time in ``t``."""
        return np.searchsorted(self.changes, t, side="right")

    def _reps(self) -> np.ndarray[Any, Any]:
        """One time inside each segment."""
        first = int(self.changes[0]) - 1 if len(self.changes) else 0
        return np.concatenate([np.array([first], np.int64), self.changes])

    def broker_matrices(self, names: tuple[str, ...], client: str
                        ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """Per segment (rows) and broker of ``names`` (columns): ``table_id_at`` and whether a
        send from ``client`` fails (``down_at`` or ``partitioned``). Cached."""
        key = ("brokers", names, self._cut_client(client))
        hit = self._recall(key)
        if hit is None:
            reps = self._reps()
            tables = np.zeros((len(reps), len(names)), np.int64)
            bad = np.zeros((len(reps), len(names)), bool)
            for j, b in enumerate(names):
                rows = self.latency.get(b)
                if rows:
                    times = np.array([t for t, _ in rows], np.int64)
                    ids = np.array([i for _, i in rows], np.int64)
                    at = np.maximum(np.searchsorted(times, reps, side="right") - 1, 0)
                    tables[:, j] = ids[at]
                spans = [(s, u) for s, u, _ in self.down.get(b, ())]
                spans += list(self.partitions.get((client, b), ()))
                bad[:, j] = _covered(reps, spans)
            hit = self._remember(key, (tables, bad))
        return hit

    def failure_kinds(self, names: tuple[str, ...], client: str) -> np.ndarray[Any, Any]:
        """Per segment and broker of ``names``: how an attempt from ``client`` fails there, as
        ``TimelineBroker`` answers it: 0 it does not, 1 refused at once (down cleanly and not
        cut off), 2 no answer (down silently, or cut off). Cached (int8)."""
        key = ("kinds", names, self._cut_client(client))
        hit = self._recall(key)
        if hit is None:
            reps = self._reps()
            hit = np.zeros((len(reps), len(names)), np.int8)
            for j, b in enumerate(names):
                spans = self.down.get(b, ())
                clean = _covered(reps, [(s, u) for s, u, m in spans if m == "clean"])
                hang = _covered(reps, [(s, u) for s, u, m in spans if m != "clean"])
                hang |= _covered(reps, list(self.partitions.get((client, b), ())))
                hit[:, j] = np.where(hang, 2, np.where(clean, 1, 0))
            self._remember(key, hit)
        return hit

    def stretch_tables(self, names: tuple[str, ...], client: str, shift: int
                       ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any],
                                  RowLists, RowLists]:
        """``broker_matrices`` as the stretch kernel reads them: the table ids shifted left by
        ``shift`` (so a draw's bucket is or-ed in), and both matrices also as lists of rows for
        the one-send-at-a-time path (``RowLists``: each row made a list when first read; a
        churning day has a hundred thousand segments, and making them all lists up front took
        longer than replaying a task's sends). Cached, shared by every producer that sees the
        same brokers."""
        key = ("stretch", names, self._cut_client(client), shift)
        hit = self._recall(key)
        if hit is None:
            tables, bad = self.broker_matrices(names, client)
            shifted = tables << shift
            hit = (shifted, bad, RowLists(shifted), RowLists(bad))
            self._remember(key, hit)
        return hit

    def route_differs(self, names: tuple[str, ...], listed: tuple[bool, ...]) -> list[int]:
        """The segments where the route's brokers of ``names`` are not the ones ``listed``
        (ascending). Cached: producers share the few routes a timeline has."""
        key = ("differs", names, listed)
        hit = self._recall(key)
        if hit is None:
            mine = np.array(listed, bool)
            hit = self._remember(key, np.flatnonzero(
                (self.route_matrix(names) != mine).any(axis=1)).tolist())
        return hit

    def route_matrix(self, names: tuple[str, ...]) -> np.ndarray[Any, Any]:
        """Per segment and broker of ``names``: ``in_route_at``. Cached."""
        key = ("route", names)
        hit = self._recall(key)
        if hit is None:
            reps = self._reps()
            listed = np.ones((len(reps), len(names)), bool)
            for j, b in enumerate(names):
                listed[:, j] = ~_covered(reps, [
                    (start if mode == "clean" else start + BROKER_EXPIRY_MS, until)
                    for start, until, mode in self.down.get(b, ())])
            hit = self._remember(key, listed)
        return hit

    def route_patterns(self, names: tuple[str, ...]) -> tuple[list[tuple[bool, ...]],
                                                              np.ndarray[Any, Any]]:
        """``route_matrix`` as patterns: the distinct rows (which brokers of ``names`` the name
        servers list), in order of first appearance, and each segment's row among them. A
        churning day's hundred thousand segments have a handful. Cached."""
        key = ("patterns", names)
        hit = self._recall(key)
        if hit is None:
            listed = self.route_matrix(names)
            code = listed.astype(np.int64) @ (np.int64(1) << np.arange(len(names), dtype=np.int64))
            uniq, first, seg = np.unique(code, return_index=True, return_inverse=True)
            rank = np.empty(len(uniq), np.int64)
            rank[np.argsort(first, kind="stable")] = np.arange(len(uniq), dtype=np.int64)
            rows = [tuple(bool(x) for x in listed[f]) for f in sorted(first.tolist())]
            hit = self._remember(key, (rows, rank[seg.reshape(-1)]))
        return hit


def _build_tables(keys: Any) -> tuple[tuple[LatencyTable, ...], np.ndarray[Any, Any]]:
    """The latency tables of (median, p99) ``keys``, in id order, and all of them flat
    (``Conditions.stacked``)."""
    tables = tuple(LatencyTable.build(m, p) for m, p in keys)
    return tables, np.concatenate([t.values for t in tables])


_RESTORED: dict[str, Conditions] = {}
"""The conditions this process has rebuilt from a pickle, by digest (the last few): the tasks
a Spark Python worker runs one after another share one object, its tables and its caches."""


def _restore(digest: str, state: tuple[Any, ...]) -> Conditions:
    hit = _RESTORED.get(digest)
    if hit is None:
        latency, down, partitions, keys, changes = state
        tables, stacked = _build_tables(keys)
        hit = Conditions(latency, down, partitions, tables, changes, stacked)
        hit._matrices["digest"] = digest
        while len(_RESTORED) >= 4:
            del _RESTORED[next(iter(_RESTORED))]
        _RESTORED[digest] = hit
    return hit


class RowLists:
    """The rows of a matrix as lists, each made when first read and kept (plain ints and
    bools, as ``ndarray.tolist`` makes them, for the one-send-at-a-time path)."""

    __slots__ = ("_matrix", "_rows")

    def __init__(self, matrix: np.ndarray[Any, Any]) -> None:
        self._matrix = matrix
        self._rows: dict[int, list[Any]] = {}

    def __getitem__(self, at: int) -> list[Any]:
        row = self._rows.get(at)
        if row is None:
            row = self._rows[at] = self._matrix[at].tolist()
        return row

    def __len__(self) -> int:
        return len(self._matrix)


def _covered(times: np.ndarray[Any, Any], spans: list[tuple[int, int]]) -> np.ndarray[Any, Any]:
    """For each time, whether some span ``[start, until)`` holds it: the spans that started at
    or before it, less those that also ended at or before it (a count over any spans, even
    overlapping or empty ones: each is counted where ``start <= t`` and uncounted where
    ``until <= t``, so an empty or reversed span never counts). One pass per list, not per
    span (a churning day has thousands of outages and a hundred thousand segments)."""
    if not spans:
        return np.zeros(len(times), bool)
    starts = np.sort(np.array([s for s, u in spans if s < u] or [FOREVER], np.int64))
    untils = np.sort(np.array([u for s, u in spans if s < u] or [FOREVER], np.int64))
    return (np.searchsorted(starts, times, side="right")
            - np.searchsorted(untils, times, side="right")) > 0


@dataclass
class TimelineBroker:
    """The brokers as the timeline has them, answering one producer's attempts with
    counter-based draws (``rocketlb_core.replay.draws``)."""

    producer: str
    conditions: Conditions
    key: int
    seq: int = 0
    attempt: int = 0

    def __call__(self, mq: Any, start_ms: int, budget_ms: int) -> AttemptResult:
        self.attempt += 1
        bits = draw_bits(self.key, self.seq, self.attempt)
        mode = self.conditions.down_at(mq.broker_name, start_ms)
        cut = self.conditions.partitioned(self.producer, mq.broker_name, start_ms)
        if mode == "clean" and not cut:
            return AttemptResult(Outcome.REMOTING_ERROR, fail_fast_ms(bits))
        if mode is not None or cut:
            return AttemptResult(Outcome.REMOTING_ERROR, budget_ms)
        return AttemptResult(Outcome.SEND_OK,
                             self.conditions.latency_at(mq.broker_name, start_ms).latency(bits))


def route_at(full: TopicRoute, conditions: Conditions, t: int) -> TopicRoute:
    keep = tuple(qd for qd in full.queue_datas if conditions.in_route_at(qd.broker_name, t))
    return replace(full, queue_datas=keep)
