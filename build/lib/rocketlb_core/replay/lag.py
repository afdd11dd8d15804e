"""Per-queue lag in the consumer replay: how many messages wait in each queue over time, under a
strategy's ownership timeline, for the traffic the trace recorded.

Arrivals: the trace's own sends, placed by the producer replay with the recorded settings
(``rocketlb_core.replay.stepped``), counted per queue per second; the Spark engine counts them
on Spark. Consumption: each live member consumes ``rate_per_s`` messages a second, split evenly
over the queues it owns; a queue owned twice is drained by its faster share (both consume the
same messages). Every second: ``lag = max(0, lag + arrivals - drained)``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

BUCKET_MS = 1_000
SAMPLE_MS = 10_000


@dataclass(frozen=True)
class OwnershipSpan:
    """From ``time_ms`` on (until the next span): queue -> live members owning it."""

    time_ms: int
    owners: dict[str, tuple[str, ...]]


def arrivals_from_rows(rows: Any) -> dict[str, Counter[int]]:
    """Queue -> arrivals per second, from producer-replay rows (``OUTPUT_COLUMNS`` order)."""
    out: dict[str, Counter[int]] = defaultdict(Counter)
    for r in rows:
        if r[5] != "FAILED":
            out[f"{r[6]}/{r[7]}"][r[4] // BUCKET_MS] += 1
    return dict(out)


def lag_timeline(spans: Sequence[OwnershipSpan], queues: Sequence[str],
                 arrivals: dict[str, Counter[int]], rate_per_s: float, end_ms: int
                 ) -> tuple[dict[str, Any], list[tuple[float, str, int]]]:
    """Lag per queue, second by second; returns a summary and rows sampled every 10 s."""
    lag = dict.fromkeys(queues, 0)
    peak = dict.fromkeys(queues, 0)
    waiting = 0                                    # message-seconds spent waiting
    rows: list[tuple[float, str, int]] = []
    per_second = rate_per_s * BUCKET_MS / 1000
    span_i = 0
    for b in range(end_ms // BUCKET_MS + 1):
        t = b * BUCKET_MS
        while span_i + 1 < len(spans) and spans[span_i + 1].time_ms <= t:
            span_i += 1
        owners = spans[span_i].owners if spans and spans[0].time_ms <= t else {}
        load: Counter[str] = Counter(m for q in queues for m in owners.get(q, ()))
        for q in queues:
            drain = max((per_second / load[m] for m in owners.get(q, ())), default=0.0)
            lag[q] = max(0, lag[q] + arrivals.get(q, Counter())[b] - int(drain))
            peak[q] = max(peak[q], lag[q])
            waiting += lag[q]
            if t % SAMPLE_MS == 0:
                rows.append((t / 1000, q, lag[q]))
    summary = {"lag_max_by_queue": dict(sorted(peak.items())), "lag_max": max(peak.values(),
                                                                                default=0),
               "lag_message_seconds": waiting * BUCKET_MS // 1000}
    return summary, rows
