"""Mergeable aggregates of replayed sends and the summary built from them: one function for
both engines, so their summaries cannot disagree. Latencies go into buckets (exact below 2^11
ms, then 2^11 buckets per octave), so the driver's state stays bounded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rocketlb_core.replay.config import FAILED, ReplayConfig
from rocketlb_core.replay.stepped import Columns

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
        qid = c.queue_id[ok]
        if len(qid):                                   # counted, not sorted: small ints
            width = int(qid.max()) + 1
            hits = np.bincount(c.broker[ok].astype(np.int64) * width + qid)
            keys = np.flatnonzero(hits)                # ascending: by broker, then queue
            for key, count in zip(keys.tolist(), hits[keys].tolist(), strict=True):
                broker = brokers[key // width]
                self.by_broker[broker] += count
                self.by_queue[f"{broker}/{key % width}"] += count
        waited = c.end[ok] - c.due[ok]
        if len(waited):
            self.latency_max = max(self.latency_max, int(waited.max()))
        exact = waited < (1 << LATENCY_EXACT_BITS)     # its own bucket: counted
        hits = np.bincount(waited[exact])
        lat = np.flatnonzero(hits)
        for value, count in zip(lat.tolist(), hits[lat].tolist(), strict=True):
            self.latency[value] += count
        lat, counts = np.unique(_latency_buckets(waited[~exact]), return_counts=True)
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
