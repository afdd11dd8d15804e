"""Producer replay: each producer's recorded sends, in order, through the real selection, fault
table and retry loop (``rocketlb_core.producer.send``), against the recorded broker conditions.

The per-producer function ``replay_producer`` is all the logic; both engines call it unchanged
(Python directly, Spark inside ``applyInPandas`` per producer), and the summary is built by one
function from mergeable aggregates, so the engines cannot disagree.

Modelled on the recorded timeline: a ``latency`` row sets a broker's log-normal latency (median,
p99); ``down`` makes sends fail fast (``mode`` clean: connection refused) or time out (silent);
``partition`` makes one client's sends to a broker time out. Producers poll the route every 30 s;
a broker leaves the route when it goes down (clean) or 120 s later (silent: name-server expiry),
and comes back when it is up. Latency draws come from a counter-based hash of
(seed, producer, send number, attempt), so they do not depend on the order of processing.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Any

from rocketlb_core.model import TopicRoute
from rocketlb_core.producer import (
    AttemptResult,
    MQFaultStrategy,
    Outcome,
    ProducerLine,
    SendConfig,
    TopicPublishInfo,
    send,
)

ROUTE_POLL_MS = 30_000
SILENT_EXPIRY_MS = 120_000
_NORMAL = NormalDist()
OUTPUT_COLUMNS = ("producer", "seq", "due_ms", "start_ms", "end_ms", "status", "broker",
                  "queue_id", "attempts", "error")


@dataclass(frozen=True)
class ReplayConfig:
    """What to replay with. ``fault_tolerance=None`` keeps what each producer recorded."""

    line: str = "4.9.8"
    fault_tolerance: bool | None = None
    seed: int = 0
    send_config: SendConfig = field(default_factory=SendConfig)

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "fault_tolerance": self.fault_tolerance, "seed": self.seed}


@dataclass(frozen=True)
class Conditions:
    """The broker timeline, indexed for lookups by time."""

    latency: dict[str, list[tuple[int, float, float]]]     # broker -> (from, median, p99)
    down: dict[str, list[tuple[int, int, str]]]            # broker -> (from, until, mode)
    partitions: dict[tuple[str, str], list[tuple[int, int]]]

    @classmethod
    def from_columns(cls, c: dict[str, list[Any]]) -> Conditions:
        latency: dict[str, list[tuple[int, float, float]]] = {}
        down: dict[str, list[tuple[int, int, str]]] = {}
        parts: dict[tuple[str, str], list[tuple[int, int]]] = {}
        open_down: dict[str, tuple[int, str]] = {}
        open_part: dict[tuple[str, str], int] = {}
        forever = 2**62
        for i, t in enumerate(c["time_ms"]):
            b, kind = c["broker"][i], c["kind"][i]
            if kind == "latency":
                latency.setdefault(b, []).append((t, float(c["median_ms"][i]),
                                                  float(c["p99_ms"][i] or c["median_ms"][i])))
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
            down.setdefault(b, []).append((start, forever, mode))
        for key, start in open_part.items():
            parts.setdefault(key, []).append((start, forever))
        return cls(latency, down, parts)

    def down_at(self, broker: str, t: int) -> str | None:
        for start, until, mode in self.down.get(broker, ()):
            if start <= t < until:
                return mode
        return None

    def in_route_at(self, broker: str, t: int) -> bool:
        """Whether the name servers still list the broker at ``t`` (spec 7)."""
        for start, until, mode in self.down.get(broker, ()):
            gone = start if mode == "clean" else start + SILENT_EXPIRY_MS
            if gone <= t < until:
                return False
        return True

    def partitioned(self, client: str, broker: str, t: int) -> bool:
        return any(s <= t < u for s, u in self.partitions.get((client, broker), ()))

    def latency_at(self, broker: str, t: int) -> tuple[float, float]:
        rows = self.latency.get(broker) or [(0, 2.0, 10.0)]
        i = bisect.bisect_right([r[0] for r in rows], t) - 1
        _, median, p99 = rows[max(i, 0)]
        return median, p99


def _unit(seed: int, producer: str, seq: int, attempt: int) -> float:
    """A uniform in (0, 1) from a hash of its coordinates (engine- and order-independent)."""
    digest = hashlib.blake2b(f"{seed}/{producer}/{seq}/{attempt}".encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") + 0.5) / 2**64


def _start_index(seed: int, producer: str, version: int) -> int:
    digest = hashlib.blake2b(f"{seed}/{producer}/index/{version}".encode(),
                             digest_size=4).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


@dataclass
class _BrokerModel:
    producer: str
    conditions: Conditions
    seed: int
    seq: int = 0
    attempt: int = 0

    def __call__(self, mq: Any, start_ms: int, budget_ms: int) -> AttemptResult:
        self.attempt += 1
        u = _unit(self.seed, self.producer, self.seq, self.attempt)
        mode = self.conditions.down_at(mq.broker_name, start_ms)
        if mode == "clean" and not self.conditions.partitioned(self.producer, mq.broker_name,
                                                               start_ms):
            return AttemptResult(Outcome.REMOTING_ERROR, 1 + int(u * 3))
        if mode is not None or self.conditions.partitioned(self.producer, mq.broker_name,
                                                           start_ms):
            return AttemptResult(Outcome.REMOTING_ERROR, budget_ms)
        median, p99 = self.conditions.latency_at(mq.broker_name, start_ms)
        sigma = math.log(max(p99, median) / median) / 2.3263
        return AttemptResult(Outcome.SEND_OK,
                             max(1, round(median * math.exp(sigma * _NORMAL.inv_cdf(u)))))


def _route_at(full: TopicRoute, conditions: Conditions, t: int) -> TopicRoute:
    keep = tuple(qd for qd in full.queue_datas if conditions.in_route_at(qd.broker_name, t))
    return replace(full, queue_datas=keep)


def replay_producer(producer: str, due_times: Sequence[int], topic: str, route: TopicRoute,
                    conditions: Conditions, fault_tolerance: bool,
                    config: ReplayConfig) -> Iterator[tuple[Any, ...]]:
    """Replay one producer's sends (``due_times`` ascending). Yields one output row per send,
    in ``OUTPUT_COLUMNS`` order."""
    line = ProducerLine.parse(config.line)
    strategy = MQFaultStrategy(line, send_latency_fault_enable=fault_tolerance)
    model = _BrokerModel(producer, conditions, config.seed)
    tp: TopicPublishInfo | None = None
    current: TopicRoute | None = None
    version = 0
    busy = 0
    next_poll = (due_times[0] if due_times else 0)
    for seq, due in enumerate(due_times):
        start = max(due, busy)
        while tp is None or start >= next_poll:           # route polls (the first on demand)
            poll_at = start if tp is None else next_poll
            candidate = _route_at(route, conditions, poll_at)
            if candidate != current:
                current = candidate
                version += 1
                start_index = _start_index(config.seed, producer, version)
                tp = TopicPublishInfo.from_route(   # 5.x retries reset the counter: seeded draws
                    topic, candidate, line, index_start=start_index,
                    rng=random.Random(start_index))
            next_poll = poll_at + ROUTE_POLL_MS
        assert tp is not None
        model.seq, model.attempt = seq, 0
        if not tp.ok():
            yield (producer, seq, due, start, start, "FAILED", None, None, 0,
                   "No route info of this topic")
            continue
        r = send(strategy, tp, model, start, config.send_config)
        busy = r.end_ms
        q = r.queue
        yield (producer, seq, due, start, r.end_ms, r.status, q.broker_name if q else None,
               q.queue_id if q else None, len(r.attempts), r.error)


@dataclass
class Aggregates:
    """Mergeable per-run counts: what the summary is built from, whatever the engine."""

    sends: int = 0
    stored: int = 0
    retries: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    by_broker: Counter[str] = field(default_factory=Counter)
    by_queue: Counter[str] = field(default_factory=Counter)
    latency: Counter[int] = field(default_factory=Counter)      # end_ms - due_ms -> sends

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
            self.latency[end - due] += 1


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
    return {
        "trace": trace_name, "kind": "producer", "config": config.as_dict(),
        "sends": agg.sends, "stored": agg.stored, "failed": agg.sends - agg.stored,
        "failures_by_error": dict(sorted(agg.failures.items())),
        "stored_by_broker": dict(sorted(agg.by_broker.items())),
        "stored_by_queue": dict(sorted(agg.by_queue.items())),
        "retries": agg.retries,
        "latency_ms_p50": _percentile(agg.latency, 0.5),
        "latency_ms_p99": _percentile(agg.latency, 0.99),
        "latency_ms_max": max(agg.latency, default=0),
    }
