"""Per-queue lag in the consumer replay: how many messages wait in each queue over time, under a
strategy's ownership timeline, for the traffic the trace recorded.

Arrivals: the trace's own sends, placed by the producer replay with the recorded settings
(``rocketlb_core.replay.stepped``), counted per queue per second; the Spark engine counts them
on Spark. Consumption: each live member consumes ``rate_per_s`` messages a second, split evenly
over the queues it owns; a queue owned twice is drained by its faster share (both consume the
same messages). Every second: ``lag = max(0, lag + arrivals - drained)``.

The seconds are not stepped one by one: between two seconds where something happens (an
arrival, an ownership change, a sample) the drain is constant and nothing arrives, so the lag
falls linearly to zero and its sum over the stretch has a closed form (``_idle``). The work is
proportional to the arrivals, the ownership changes and the samples, not to the trace's length
(a 31-day trace costs what its 20 minutes of traffic cost). Samples are every ``SAMPLE_MS``,
or every multiple of it that keeps a strategy's rows (queues x samples) within
``limits.MAX_LAG_ROWS`` on a long trace (``sample_step``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rocketlb_core.limits import MAX_LAG_ROWS

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


def sample_step(last: int, queues: int) -> int:
    """Seconds (buckets) between two lag samples for buckets ``0..last``: ``SAMPLE_MS``, or the
    smallest multiple of it that keeps ``queues`` x samples within ``MAX_LAG_ROWS`` (one sample,
    at 0, when even that is more)."""
    base = SAMPLE_MS // BUCKET_MS
    if last < 0:
        return base
    per_queue = MAX_LAG_ROWS // max(1, queues)      # samples a queue may have
    if per_queue < 1:
        return base * (last // base + 1)
    return base * (last // (base * per_queue) + 1)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _segments(spans: Sequence[OwnershipSpan], last: int
              ) -> list[tuple[int, dict[str, tuple[str, ...]]]]:
    """``(first bucket, owners)``: who owns what from that bucket on, exactly as a walk over
    every bucket ``b`` would find it (the latest span at or before ``b * BUCKET_MS``, nothing
    before the first span)."""
    if not spans:
        return [(0, {})]
    first = _ceil_div(spans[0].time_ms, BUCKET_MS)
    out: list[tuple[int, dict[str, tuple[str, ...]]]] = []
    i, b = 0, 0
    while b <= last:
        while i + 1 < len(spans) and spans[i + 1].time_ms <= b * BUCKET_MS:
            i += 1
        out.append((b, spans[i].owners if b >= first else {}))
        nxt = last + 1
        if i + 1 < len(spans):
            nxt = min(nxt, max(b + 1, _ceil_div(spans[i + 1].time_ms, BUCKET_MS)))
        if b < first:
            nxt = min(nxt, first)
        b = nxt
    return out


def _idle(lag: int, drain: int, n: int) -> tuple[int, int]:
    """``n`` seconds with no arrivals at a constant ``drain``: the lag after them and the sum
    of the lag over them (each second ``lag = max(0, lag - drain)``)."""
    if n <= 0:
        return lag, 0
    if drain > 0:
        positive = min(n, (lag - 1) // drain) if lag > 0 else 0    # seconds still above 0
        return max(0, lag - n * drain), positive * lag - drain * positive * (positive + 1) // 2
    grow = -drain
    return lag + n * grow, n * lag + grow * n * (n + 1) // 2


def lag_timeline(spans: Sequence[OwnershipSpan], queues: Sequence[str],
                 arrivals: dict[str, Counter[int]], rate_per_s: float, end_ms: int
                 ) -> tuple[dict[str, Any], list[tuple[float, str, int]]]:
    """Lag per queue, second by second from 0 to ``end_ms``; returns a summary and rows
    ``(time_s, queue, lag)`` sampled every ``SAMPLE_MS`` (``sample_step``)."""
    last = end_ms // BUCKET_MS                       # buckets 0..last
    peak = dict.fromkeys(queues, 0)
    waiting = 0                                    # message-seconds spent waiting
    per_second = rate_per_s * BUCKET_MS / 1000
    segments = _segments(spans, last) if last >= 0 else []
    drains: list[dict[str, int]] = []
    for _, owners in segments:
        load: Counter[str] = Counter(m for q in queues for m in owners.get(q, ()))
        drains.append({q: int(max((per_second / load[m] for m in owners.get(q, ())),
                                  default=0.0)) for q in queues})
    starts = [b for b, _ in segments]
    step = sample_step(last, len(queues))
    sampled = list(range(0, last + 1, step))
    samples: dict[str, list[int]] = {}
    for q in queues:
        came = arrivals.get(q, Counter())
        at = {b: n for b, n in came.items() if 0 <= b <= last}
        points = sorted(set(starts).union(sampled, at))
        lag = top = total = 0
        seg = -1
        drain = 0
        prev = -1
        mine: list[int] = []
        for b in points:
            lag, s = _idle(lag, drain, b - prev - 1)  # the quiet seconds before this one
            total += s
            top = max(top, lag)
            while seg + 1 < len(starts) and starts[seg + 1] <= b:
                seg += 1
                drain = drains[seg][q]
            lag = max(0, lag + at.get(b, 0) - drain)
            top = max(top, lag)
            total += lag
            if b % step == 0:
                mine.append(lag)
            prev = b
        if prev >= 0:
            lag, s = _idle(lag, drain, last - prev)
            total += s
            top = max(top, lag)
        peak[q] = top
        waiting += total
        samples[q] = mine
    rows = [(b * BUCKET_MS / 1000, q, samples[q][j]) for j, b in enumerate(sampled)
            for q in queues]
    summary = {"lag_max_by_queue": dict(sorted(peak.items())), "lag_max": max(peak.values(),
                                                                                default=0),
               "lag_message_seconds": waiting * BUCKET_MS // 1000}
    return summary, rows
