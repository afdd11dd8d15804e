"""Producer replay, stepped: each producer's recorded sends, in order, through the real
selection, fault table and retry loop (``rocketlb_core.producer.send``), against the recorded
broker conditions (``rocketlb_core.replay.timeline``).

``SteppedReplayer`` (and ``rocketlb_core.replay.stretch.ProducerReplayer``) holds one
producer's sequential state (route, counter, fault table, when its sending thread is free) and
replays its sends batch by batch. Both engines run it unchanged
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
  sum. A stretch runs across condition changes: each send meets the latency table and the
  failures of the segment (between two changes) it starts in, looked up in per-segment
  matrices (``Conditions.broker_matrices``); the chain decides the segment, so it is guessed
  from the due times, refined once from the chain's starts, and the stretch keeps the sends up
  to the first wrong guess. A stretch takes the polls that find the route unchanged (and makes
  a poll first when its first send is due after one). It stops before the first send that would
  fail or retry (that send is stepped), after a send slow enough to isolate its broker (its
  fault item is reported with the others), before a broker's isolation ends, and before the
  first route poll that may change the route. The scalar path (one send at a time, for short
  stretches and while isolations come every few sends) goes on through isolations and their
  ends, and takes the least-bad branch (every broker isolated) through the real ``select``
  when that send cannot fail: a churning day is then a few long stretches, not one per
  isolation. Its loop runs compiled where numba is installed (``rocketlb_core.replay.compiled``),
  and there, with fault tolerance on (4.9.8 and 5.x), it also makes the route polls: a poll
  that finds a new route begins its version in the loop (the route's queue list, a counter at
  the version's seeded start, ``ProducerReplayer._scalar_routes``), so a churning producer's
  batch is a few calls, not one per route change; on 4.9.8 with fault tolerance on it also takes
  a send whose attempt fails, and its retries, which the Python loop leaves to stepping (the same
  bytes: ``rocketlb_core.replay.compiled``).

Modelled on the recorded timeline: a ``latency`` row sets a broker's log-normal latency (median,
p99); ``down`` makes sends fail fast (``mode`` clean: connection refused) or time out (silent);
``partition`` makes one client's sends to a broker time out. Producers poll the route every 30 s;
a broker leaves the route when it goes down (clean) or 120 s later (silent: name-server expiry),
and comes back when it is up. Draws are counter-based (``rocketlb_core.replay.draws``).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rocketlb_core.conditions import ROUTE_POLL_MS
from rocketlb_core.model import TopicRoute, publish_queues
from rocketlb_core.producer import MQFaultStrategy, SendMode, TopicPublishInfo, send
from rocketlb_core.producer.index import ThreadLocalIndex
from rocketlb_core.replay.config import FAILED, STATUS_CODE, STATUSES, ReplayConfig
from rocketlb_core.replay.draws import BUCKET_BITS, draw_bits_array, producer_key
from rocketlb_core.replay.timeline import Conditions, TimelineBroker

MIN_STRETCH, MAX_STRETCH = 64, 1 << 16
"""The first and the largest number of sends a stretch looks at (it doubles while it can)."""


def _start_index(seed: int, producer: str, version: int) -> int:
    digest = hashlib.blake2b(f"{seed}/{producer}/index/{version}".encode(),
                             digest_size=4).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


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


class SteppedReplayer:
    """One producer's sends through the balancing code, one send at a time through ``send()``:
    the reference (``rocketlb_core.replay.stretch.ProducerReplayer`` adds the stretches).

    ``brokers`` fixes the broker codes of the output; ``errors`` is an error vocabulary
    (message -> code) shared by every replayer of a task, extended as errors appear."""

    def __init__(self, producer: str, topic: str, route: TopicRoute, conditions: Conditions,
                 fault_tolerance: bool, config: ReplayConfig, brokers: Sequence[str],
                 errors: dict[str, int] | None = None, vectorise: bool = True) -> None:
        self.producer, self.topic, self.route, self.conditions = producer, topic, route, \
            conditions
        self.config = config
        self.line = config.line
        self.strategy = MQFaultStrategy(self.line, send_latency_fault_enable=fault_tolerance)
        self.model = TimelineBroker(producer, conditions, producer_key(config.seed, producer))
        self.brokers = list(brokers)
        self.broker_code = {b: i for i, b in enumerate(self.brokers)}
        self.errors = errors if errors is not None else {}
        self.tp: TopicPublishInfo | None = None
        self.current: TopicRoute | None = None
        self.listed: tuple[bool, ...] = ()    # which of the route's queue datas it lists
        self.version = 0
        self._routes: dict[tuple[bool, ...], tuple[TopicRoute, tuple[Any, ...], Any]] = {}
        self.busy = 0
        self.next_poll: int | None = None
        self.seq = 0
        self.stepped = 0                      # sends that went the reference way
        self.stretches = 0                    # stretches taken (each one or more sends)
        sc = config.send_config
        attempts = 1 + sc.retry_times_when_send_failed if sc.mode is SendMode.SYNC else 1
        budget = sc.send_msg_timeout_ms
        cap = sc.send_msg_max_timeout_per_request_ms
        if self.line.rules.caps_request_timeout and cap > -1 and attempts > 1 and budget > cap:
            budget = cap
        self._timeout = budget                # a first attempt at least this slow times out
        self._isolates = budget               # ... at least this slow isolates its broker
        if fault_tolerance:
            s = self.strategy
            slow = [x for x in sorted({0, *s.latency_max}) if s.compute_not_available_duration(x)]
            self._isolates = min([budget, *slow[:1]])
        self._fast = vectorise and sc.mode is not SendMode.ASYNC and self._isolates > 0
        rules = self.line.rules
        # The compiled loop takes failed attempts and their retries itself where a sync
        # retry picks exactly as a first attempt does (4.x selection with fault tolerance on,
        # no fault-item shuffle, no last-broker scan, no cached-queue rewrite, no counter
        # reset, no per-request cap: 4.9.8), drawing for each retry as it happens.
        self._retries = (self._fast and fault_tolerance and sc.mode is SendMode.SYNC
                         and attempts > 1 and rules.selection == "4.x"
                         and not rules.shuffles_fault_items
                         and not rules.fault_scan_wants_last_broker
                         and not rules.rewrites_cached_queue
                         and not rules.counter_resets_on_retry
                         and not rules.caps_request_timeout)
        self._attempts = attempts
        self._iso_duration = self.strategy.compute_not_available_duration(
            self.strategy.isolation_latency)               # a failed attempt's isolation
        self._key64 = np.uint64(self.model.key)
        self._chunk = MIN_STRETCH
        self._layout: tuple[tuple[int, ...], Any, tuple[Any, ...]] | None = None
        self._ahead_key: tuple[Any, ...] | None = None
        self._steps_at = -1                    # a send the last stretch saw must be stepped
        self._churning = False                 # isolations come every few sends
        self._lat_max = np.array(self.strategy.latency_max, np.int64)   # for the compiled loop
        self._nad = np.array(self.strategy.not_available_duration, np.int64)
        self._fb_base: tuple[Any, ...] | None = None   # the compiled loop's per-route rows
        self._fb_outside: list[str] = []               # ... and the items outside its layout
        self._layout_lists: tuple[list[int], list[int], list[int]] = ([], [], [])
        self._ahead_val: tuple[Any, Any, Any] = (None, None, None)
        self._ahead_lists: tuple[Any, Any] = ([], [])   # Conditions.stretch_tables' RowLists
        self._buckets: np.ndarray[Any, Any] = np.empty(0, np.int64)
        self._patterns: Any = None            # the routes the compiled loop polls (or False)
        self._starts: list[int] = [0]         # each route version's counter start, by version
        self.route_versions_in_loop = 0       # route versions the compiled loop began

    # ------------------------------------------------------------------ driving
    def run(self, due: np.ndarray[Any, Any]) -> Columns:
        """Replay the next sends of this producer (``due`` ascending, in ms)."""
        out = Columns.empty(due)
        i, n = 0, len(due)
        self._steps_at = -1
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
                    self.stretches += 1
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
            listed = tuple(conditions.in_route_at(qd.broker_name, poll_at)
                           for qd in route.queue_datas)
            if self._route_for(listed)[0] is not self.current:   # (one object per route)
                self._begin_version(listed, self.version + 1, self.start_index(self.version + 1))
            self.next_poll = poll_at + ROUTE_POLL_MS

    def start_index(self, version: int) -> int:
        """The counter a route version starts from: seeded per producer and version, or the
        configuration's ``index_start``."""
        if self.config.index_start is not None:
            return self.config.index_start
        return _start_index(self.config.seed, self.producer, version)

    def _route_for(self, listed: tuple[bool, ...]) -> tuple[TopicRoute, tuple[Any, ...], Any]:
        """The route a poll answers when the name servers list the entries ``listed`` of the
        full route's queue datas (``route_at``), its queue list and sorted queue datas: made
        once per pattern, so each is one object."""
        known = self._routes.get(listed)
        if known is None:
            known = self._routes[listed] = route_listing(self.route, self.topic, listed)
        return known

    def _begin_version(self, listed: tuple[bool, ...], version: int, start_index: int) -> None:
        """A poll found a new route: the producer's new publish info, its counter at
        ``start_index`` (``TopicPublishInfo.from_route``, with the route's queues made once;
        the list is the producer's own: 4.9.7 and 4.7.1 rewrite an entry of it). Only lines
        whose retries reset the counter draw from its seeded rng (5.x)."""
        candidate, queues, queue_datas = self._route_for(listed)
        self.current = candidate
        self.listed = listed
        self.version = version
        rng = (random.Random(start_index) if self.line.rules.counter_resets_on_retry
               else None)
        self.tp = TopicPublishInfo(queues, queue_datas,
                                   ThreadLocalIndex(self.line, stored=start_index, rng=rng))

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
        out.status[i] = STATUS_CODE[r.status]
        q = r.queue
        out.broker[i] = self.broker_code[q.broker_name] if q else -1
        out.queue_id[i] = q.queue_id if q else -1
        out.attempts[i] = len(r.attempts)
        out.error[i] = self._error_code(r.error)

    def _stretch(self, out: Columns, i: int) -> int:
        """Sends from ``i`` on that a stretch can take in closed form: none here (stepping
        only); ``ProducerReplayer`` overrides it."""
        return 0


def route_listing(route: TopicRoute, topic: str, listed: tuple[bool, ...]
                  ) -> tuple[TopicRoute, tuple[Any, ...], Any]:
    """The route the name servers answer when they list the entries ``listed`` of ``route``'s
    queue datas (``timeline.route_at``), the producer's queue list for it (``publish_queues``)
    and its queue datas sorted (what ``TopicPublishInfo.from_route`` keeps)."""
    keep = tuple(qd for qd, on in zip(route.queue_datas, listed, strict=True) if on)
    candidate = replace(route, queue_datas=keep)
    return candidate, tuple(publish_queues(topic, candidate)), candidate.sorted_queue_datas()


def rows_of(producer: str, c: Columns, brokers: Sequence[str], errors: dict[str, int]
            ) -> Iterator[tuple[Any, ...]]:
    """``Columns`` as ``OUTPUT_COLUMNS`` tuples (for small traces and tests)."""
    vocab = {code: text for text, code in errors.items()}
    for k in range(len(c.seq)):
        b, q, e = int(c.broker[k]), int(c.queue_id[k]), int(c.error[k])
        yield (producer, int(c.seq[k]), int(c.due[k]), int(c.start[k]), int(c.end[k]),
               STATUSES[c.status[k]], brokers[b] if b >= 0 else None, q if q >= 0 else None,
               int(c.attempts[k]), vocab[e] if e >= 0 else None)
