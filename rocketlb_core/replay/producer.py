"""Producer replay: each producer's recorded sends, in order, through the real selection, fault
table and retry loop (``rocketlb_core.producer.send``), against the recorded broker conditions.

``ProducerReplayer`` holds one producer's sequential state (route, counter, fault table, when
its sending thread is free) and replays its sends batch by batch. Both engines run it unchanged
(the Python engine in this process, Spark inside one task per trace file), and the summary is
built by one function from mergeable aggregates, so the engines cannot disagree.

Two ways through a send, with identical results (``tests/test_replay.py`` checks it on fuzzed
traces for every line, with fault tolerance on and off):

* **stepping** (the reference): one send at a time through ``send()``, exactly as a producer
  thread would;
* **stretches** (``vectorise=True``, the default): between condition changes the state evolves in
  closed form. Where every attempt is a first-attempt success that isolates nobody, the queue of
  send ``k`` is a function of the counter (``(v0 + k) & 0x7FFFFFFF`` mod ``n``, walked past
  isolated brokers), latencies are table lookups of counter-based draws, and the sending thread's
  busy chain ``end_k = max(due_k, end_{k-1}) + latency_k`` is a running maximum over a cumulative
  sum. A stretch stops before the first send that would fail, retry, isolate a broker, meet a
  condition change or a route change, and that send is stepped.

Modelled on the recorded timeline: a ``latency`` row sets a broker's log-normal latency (median,
p99); ``down`` makes sends fail fast (``mode`` clean: connection refused) or time out (silent);
``partition`` makes one client's sends to a broker time out. Producers poll the route every 30 s;
a broker leaves the route when it goes down (clean) or 120 s later (silent: name-server expiry),
and comes back when it is up. Draws are counter-based (``rocketlb_core.replay.draws``).
"""

from __future__ import annotations

import bisect
import hashlib
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rocketlb_core.conditions import BROKER_EXPIRY_MS, ROUTE_POLL_MS
from rocketlb_core.javamath import INT_MAX, wrap32
from rocketlb_core.model import TopicRoute
from rocketlb_core.producer import (
    AttemptResult,
    MQFaultStrategy,
    Outcome,
    ProducerLine,
    SendConfig,
    SendMode,
    TopicPublishInfo,
    send,
)
from rocketlb_core.replay.draws import (
    BUCKET_BITS,
    LatencyTable,
    draw_bits,
    draw_bits_array,
    fail_fast_ms,
    producer_key,
)

FOREVER = 2**62
OUTPUT_COLUMNS = ("producer", "seq", "due_ms", "start_ms", "end_ms", "status", "broker",
                  "queue_id", "attempts", "error")
STATUSES = ("SEND_OK", "FLUSH_DISK_TIMEOUT", "FLUSH_SLAVE_TIMEOUT", "SLAVE_NOT_AVAILABLE",
            "FAILED")
FAILED = STATUSES.index("FAILED")
_STATUS_CODE = {s: i for i, s in enumerate(STATUSES)}
_MASK31 = 0x7FFFFFFF
_MIN_STRETCH, _MAX_STRETCH = 1024, 1 << 16


@dataclass(frozen=True)
class ReplayConfig:
    """What to replay with. ``fault_tolerance=None`` keeps what each producer recorded."""

    line: str = "4.9.8"
    fault_tolerance: bool | None = None
    seed: int = 0
    send_config: SendConfig = field(default_factory=SendConfig)
    index_start: int | None = None
    """Pin the round-robin counter's start for every route version (upstream: random)."""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "fault_tolerance": self.fault_tolerance,
                               "seed": self.seed}
        if self.index_start is not None:
            out["index_start"] = self.index_start
        return out


@dataclass(frozen=True, eq=False)
class Conditions:
    """The broker timeline, indexed for lookups by time, with every latency table it needs
    (built here, once, so every engine and task uses the same integers)."""

    latency: dict[str, list[tuple[int, int]]]               # broker -> (from, table id)
    down: dict[str, list[tuple[int, int, str]]]            # broker -> (from, until, mode)
    partitions: dict[tuple[str, str], list[tuple[int, int]]]
    tables: tuple[LatencyTable, ...]                       # id 0: the default (2 ms, 10 ms)
    changes: np.ndarray[Any, Any]                          # every time anything changes
    stacked: np.ndarray[Any, Any] = field(repr=False)      # tables, flat: id << 16 | bucket

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
        tables = tuple(LatencyTable.build(m, p) for (m, p), _ in
                       sorted(ids.items(), key=lambda kv: kv[1]))
        stacked = np.concatenate([t.values for t in tables])
        return cls(latency, down, parts, tables,
                   np.array(sorted(t for t in times if t < FOREVER), dtype=np.int64), stacked)

    def down_at(self, broker: str, t: int) -> str | None:
        for start, until, mode in self.down.get(broker, ()):
            if start <= t < until:
                return mode
        return None

    def in_route_at(self, broker: str, t: int) -> bool:
        """Whether the name servers still list the broker at ``t`` (spec 7)."""
        for start, until, mode in self.down.get(broker, ()):
            gone = start if mode == "clean" else start + BROKER_EXPIRY_MS
            if gone <= t < until:
                return False
        return True

    def partitioned(self, client: str, broker: str, t: int) -> bool:
        return any(s <= t < u for s, u in self.partitions.get((client, broker), ()))

    def table_id_at(self, broker: str, t: int) -> int:
        rows = self.latency.get(broker)
        if not rows:
            return 0
        i = bisect.bisect_right(rows, (t, len(self.tables))) - 1
        return rows[max(i, 0)][1]

    def latency_at(self, broker: str, t: int) -> LatencyTable:
        return self.tables[self.table_id_at(broker, t)]


def _start_index(seed: int, producer: str, version: int) -> int:
    digest = hashlib.blake2b(f"{seed}/{producer}/index/{version}".encode(),
                             digest_size=4).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


@dataclass
class _BrokerModel:
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


def _route_at(full: TopicRoute, conditions: Conditions, t: int) -> TopicRoute:
    keep = tuple(qd for qd in full.queue_datas if conditions.in_route_at(qd.broker_name, t))
    return replace(full, queue_datas=keep)


@dataclass
class Columns:
    """One batch of replayed sends as arrays. ``status`` indexes ``STATUSES``; ``broker`` the
    replayer's broker list (-1: none); ``queue_id`` is -1 when no queue stored the message;
    ``error`` indexes the shared error vocabulary (-1: none)."""

    seq: np.ndarray[Any, Any]
    due: np.ndarray[Any, Any]
    start: np.ndarray[Any, Any]
    end: np.ndarray[Any, Any]
    status: np.ndarray[Any, Any]
    broker: np.ndarray[Any, Any]
    queue_id: np.ndarray[Any, Any]
    attempts: np.ndarray[Any, Any]
    error: np.ndarray[Any, Any]

    @classmethod
    def empty(cls, due: np.ndarray[Any, Any]) -> Columns:
        n = len(due)
        return cls(np.empty(n, np.int64), np.asarray(due, dtype=np.int64), np.empty(n, np.int64),
                   np.empty(n, np.int64), np.empty(n, np.int8), np.empty(n, np.int16),
                   np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.int16))


class ProducerReplayer:
    """One producer's sends through the balancing code (see the module docstring).

    ``brokers`` fixes the broker codes of the output; ``errors`` is an error vocabulary
    (message -> code) shared by every replayer of a task, extended as errors appear."""

    def __init__(self, producer: str, topic: str, route: TopicRoute, conditions: Conditions,
                 fault_tolerance: bool, config: ReplayConfig, brokers: Sequence[str],
                 errors: dict[str, int] | None = None, vectorise: bool = True) -> None:
        self.producer, self.topic, self.route, self.conditions = producer, topic, route, \
            conditions
        self.config = config
        self.line = ProducerLine.parse(config.line)
        self.strategy = MQFaultStrategy(self.line, send_latency_fault_enable=fault_tolerance)
        self.model = _BrokerModel(producer, conditions, producer_key(config.seed, producer))
        self.brokers = list(brokers)
        self.broker_code = {b: i for i, b in enumerate(self.brokers)}
        self.errors = errors if errors is not None else {}
        self.tp: TopicPublishInfo | None = None
        self.current: TopicRoute | None = None
        self.version = 0
        self.busy = 0
        self.next_poll: int | None = None
        self.seq = 0
        self.stepped = 0                      # sends that went the reference way
        sc = config.send_config
        attempts = 1 + sc.retry_times_when_send_failed if sc.mode is SendMode.SYNC else 1
        budget = sc.send_msg_timeout_ms
        cap = sc.send_msg_max_timeout_per_request_ms
        if self.line.rules.caps_request_timeout and cap > -1 and attempts > 1 and budget > cap:
            budget = cap
        threshold = budget                    # a first attempt at least this slow times out
        if fault_tolerance:                   # ... or this slow isolates its broker
            s = self.strategy
            slow = [x for x in sorted({0, *s.latency_max}) if s.compute_not_available_duration(x)]
            threshold = min([threshold, *slow[:1]])
        self._threshold = threshold
        self._fast = vectorise and sc.mode is not SendMode.ASYNC and threshold > 0
        self._chunk = _MIN_STRETCH
        self._layout: tuple[tuple[int, ...], Any] | None = None
        self._segments: dict[tuple[Any, ...], tuple[int, bool, Any, Any]] = {}
        self._walks: dict[bytes, np.ndarray[Any, Any]] = {}
        self._buckets: np.ndarray[Any, Any] = np.empty(0, np.int64)

    # ------------------------------------------------------------------ driving
    def run(self, due: np.ndarray[Any, Any]) -> Columns:
        """Replay the next sends of this producer (``due`` ascending, in ms)."""
        out = Columns.empty(due)
        i, n = 0, len(due)
        out.seq[:] = self.seq + np.arange(n, dtype=np.int64)   # every send takes the next number
        if self._fast:                         # what a stretch writes unless a step overwrites
            out.status[:], out.attempts[:], out.error[:] = 0, 1, -1
            self._buckets = (draw_bits_array(self.model.key, out.seq, 1)
                             >> np.uint64(64 - BUCKET_BITS)).astype(np.int64)
        while i < n:
            if self._fast:
                m = self._stretch(out, i)
                if m:
                    i += m
                    continue
            self._step(out, i)
            i += 1
        return out

    def _error_code(self, error: str | None) -> int:
        if error is None:
            return -1
        return self.errors.setdefault(error, len(self.errors))

    def _poll(self, start: int) -> None:
        route, conditions = self.route, self.conditions
        while self.tp is None or start >= (self.next_poll or 0):   # the first poll on demand
            poll_at = start if self.tp is None else (self.next_poll or 0)
            candidate = _route_at(route, conditions, poll_at)
            if candidate != self.current:
                self.current = candidate
                self.version += 1
                start_index = (_start_index(self.config.seed, self.producer, self.version)
                               if self.config.index_start is None else self.config.index_start)
                self.tp = TopicPublishInfo.from_route(  # 5.x retries reset: seeded draws
                    self.topic, candidate, self.line, index_start=start_index,
                    rng=random.Random(start_index))
            self.next_poll = poll_at + ROUTE_POLL_MS

    def _step(self, out: Columns, i: int) -> None:
        """One send, the reference way."""
        self.stepped += 1
        start = max(int(out.due[i]), self.busy)
        if self.next_poll is None:
            self.next_poll = start
        self._poll(start)
        tp = self.tp
        assert tp is not None
        out.seq[i] = self.seq
        self.model.seq, self.model.attempt = self.seq, 0
        self.seq += 1
        if not tp.ok():
            out.start[i] = out.end[i] = start
            out.status[i], out.broker[i], out.queue_id[i], out.attempts[i] = FAILED, -1, -1, 0
            out.error[i] = self._error_code("No route info of this topic")
            return
        r = send(self.strategy, tp, self.model, start, self.config.send_config)
        self.busy = r.end_ms
        out.start[i], out.end[i] = start, r.end_ms
        out.status[i] = _STATUS_CODE[r.status]
        q = r.queue
        out.broker[i] = self.broker_code[q.broker_name] if q else -1
        out.queue_id[i] = q.queue_id if q else -1
        out.attempts[i] = len(r.attempts)
        out.error[i] = self._error_code(r.error)

    # ------------------------------------------------------------------ stretches
    def _queue_layout(self, tp: TopicPublishInfo) -> Any:
        key = tuple(map(id, tp.queues))
        if self._layout is None or self._layout[0] != key:
            names = sorted({q.broker_name for q in tp.queues})
            local = {b: j for j, b in enumerate(names)}
            self._layout = (key, (names,
                                  np.array([local[q.broker_name] for q in tp.queues], np.int64),
                                  np.array([q.queue_id for q in tp.queues], np.int32),
                                  np.array([self.broker_code[b] for b in names], np.int16)))
        return self._layout[1]

    def _segment(self, t0: int, names: list[str]) -> tuple[int, bool, Any, Any]:
        """What holds from ``t0`` until the next condition change (cached per segment): that
        change's time, whether the route differs from the producer's, and per broker whether
        sends to it fail and which latency table it uses."""
        cond = self.conditions
        segment = int(np.searchsorted(cond.changes, t0, side="right"))
        key = (segment, self.version, tuple(names))
        cached = self._segments.get(key)
        if cached is None:
            horizon = int(cond.changes[segment]) if segment < len(cond.changes) else FOREVER
            pending = _route_at(self.route, cond, t0) != self.current
            bad = np.array([cond.down_at(b, t0) is not None
                            or cond.partitioned(self.producer, b, t0) for b in names])
            tables = np.array([cond.table_id_at(b, t0) for b in names],
                              np.int64) << BUCKET_BITS
            if len(self._segments) > 64:
                self._segments.clear()
            cached = self._segments[key] = (horizon, pending, bad, tables)
        return cached

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
        tp, next_poll = self.tp, self.next_poll
        if tp is None or next_poll is None or not tp.queues or tp.index.stored is None:
            return 0
        due = out.due
        t0 = max(int(due[i]), self.busy)
        if t0 >= next_poll:
            return 0
        cond, strategy = self.conditions, self.strategy
        names, qlocal, qids, qcode = self._queue_layout(tp)
        horizon, pending, bad, tables = self._segment(t0, names)
        if pending:
            horizon = min(horizon, next_poll)          # the next poll changes the route
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
        lat = cond.stacked[tables[local] | self._buckets[i:i + w]]
        stop = bad[local] | (lat >= self._threshold)
        c = int(np.argmax(stop))
        if not stop[c]:
            c = len(stop)
        if c == 0:
            return 0
        lat = lat[:c]
        cs = np.cumsum(lat)
        free_at = due[i:i + c] - cs                    # due_k - (cs_k - lat_k) - lat_k
        free_at += lat
        free_at[0] = max(int(free_at[0]), self.busy)   # the thread is busy until then
        end = np.maximum.accumulate(free_at)
        end += cs
        start = end - lat
        m = c if horizon >= FOREVER else int(np.searchsorted(start, horizon, side="left"))
        if m == 0:
            return 0
        self._chunk = min(_MAX_STRETCH, max(_MIN_STRETCH, 2 * m))
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


def rows_of(producer: str, c: Columns, brokers: Sequence[str], errors: dict[str, int]
            ) -> Iterator[tuple[Any, ...]]:
    """``Columns`` as ``OUTPUT_COLUMNS`` tuples (for small traces and tests)."""
    vocab = {code: text for text, code in errors.items()}
    for k in range(len(c.seq)):
        b, q, e = int(c.broker[k]), int(c.queue_id[k]), int(c.error[k])
        yield (producer, int(c.seq[k]), int(c.due[k]), int(c.start[k]), int(c.end[k]),
               STATUSES[c.status[k]], brokers[b] if b >= 0 else None, q if q >= 0 else None,
               int(c.attempts[k]), vocab[e] if e >= 0 else None)


LATENCY_EXACT_BITS = 11


def latency_bucket(ms: int) -> int:
    """The latency histogram's key: exact below 2,048 ms, above it rounded down to 11
    significant bits (under 0.1 % low), so the histogram stays small however long the sending
    thread queued (a stalled producer's latencies are nearly all distinct).

    >>> latency_bucket(2047), latency_bucket(114631)
    (2047, 114624)
    """
    shift = max(0, ms.bit_length() - LATENCY_EXACT_BITS)
    return (ms >> shift) << shift


def _latency_buckets(ms: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    bits = np.frexp(ms.astype(np.float64))[1].astype(np.int64)   # bit length (ms < 2^53)
    shift = np.maximum(bits - LATENCY_EXACT_BITS, 0)
    out: np.ndarray[Any, Any] = (ms >> shift) << shift
    return out


@dataclass
class Aggregates:
    """Mergeable per-run counts: what the summary is built from, whatever the engine. Bounded
    by the trace's brokers, queues and errors, never by its length."""

    sends: int = 0
    stored: int = 0
    retries: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    by_broker: Counter[str] = field(default_factory=Counter)
    by_queue: Counter[str] = field(default_factory=Counter)
    latency: Counter[int] = field(default_factory=Counter)  # bucket of end_ms - due_ms -> sends
    latency_max: int = 0

    def add(self, row: tuple[Any, ...]) -> None:
        _, _, due, _, end, status, broker, queue_id, attempts, error = row
        self.sends += 1
        self.retries += max(0, attempts - 1)
        if status == "FAILED":
            self.failures[error or "?"] += 1
        else:
            self.stored += 1
            self.by_broker[broker] += 1
            self.by_queue[f"{broker}/{queue_id}"] += 1
            self.latency[latency_bucket(end - due)] += 1
            self.latency_max = max(self.latency_max, end - due)

    def add_columns(self, c: Columns, brokers: Sequence[str], errors: dict[str, int]) -> None:
        """Add a batch of sends at once (same counts as ``add`` row by row)."""
        self.sends += len(c.seq)
        self.retries += int(np.maximum(c.attempts.astype(np.int64) - 1, 0).sum())
        failed = c.status == FAILED
        if failed.any():
            vocab = {code: text for text, code in errors.items()}
            codes, counts = np.unique(c.error[failed], return_counts=True)
            for code, count in zip(codes.tolist(), counts.tolist(), strict=True):
                self.failures[vocab.get(code) or "?"] += count
        ok = ~failed
        self.stored += int(ok.sum())
        keys, counts = np.unique(c.broker[ok].astype(np.int64) << 32 | c.queue_id[ok],
                                 return_counts=True)
        for key, count in zip(keys.tolist(), counts.tolist(), strict=True):
            broker = brokers[key >> 32]
            self.by_broker[broker] += count
            self.by_queue[f"{broker}/{key & 0xFFFFFFFF}"] += count
        waited = c.end[ok] - c.due[ok]
        if len(waited):
            self.latency_max = max(self.latency_max, int(waited.max()))
        lat, counts = np.unique(_latency_buckets(waited), return_counts=True)
        for value, count in zip(lat.tolist(), counts.tolist(), strict=True):
            self.latency[value] += count

    def merge(self, other: Aggregates) -> None:
        self.sends += other.sends
        self.stored += other.stored
        self.retries += other.retries
        self.failures.update(other.failures)
        self.by_broker.update(other.by_broker)
        self.by_queue.update(other.by_queue)
        self.latency.update(other.latency)
        self.latency_max = max(self.latency_max, other.latency_max)


def _percentile(hist: Counter[int], p: float) -> int:
    total = sum(hist.values())
    if total == 0:
        return 0
    rank = min(total - 1, int(p * (total - 1) + 0.5))
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if seen > rank:
            return value
    return max(hist)


def summary_of(agg: Aggregates, config: ReplayConfig, trace_name: str) -> dict[str, Any]:
    """The run's summary. Latency is from "due" to "done" of stored sends; p50 and p99 are
    histogram buckets (``latency_bucket``), the max is exact."""
    return {
        "trace": trace_name, "kind": "producer", "config": config.as_dict(),
        "sends": agg.sends, "stored": agg.stored, "failed": agg.sends - agg.stored,
        "failures_by_error": dict(sorted(agg.failures.items())),
        "stored_by_broker": dict(sorted(agg.by_broker.items())),
        "stored_by_queue": dict(sorted(agg.by_queue.items())),
        "retries": agg.retries,
        "latency_ms_p50": _percentile(agg.latency, 0.5),
        "latency_ms_p99": _percentile(agg.latency, 0.99),
        "latency_ms_max": agg.latency_max,
    }
