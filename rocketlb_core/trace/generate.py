"""A large synthetic trace for scale tests and benchmarks (``rocketlb trace generate --sends N
--out DIR``: 10 M or 100 M sends), written in the replay layout (``rocketlb_core.trace.layout``)
in streamed row groups, so memory does not grow with N.

Producer traffic only (no membership). Four brokers with 8 queues each; ``producers`` producers
share ``rate`` messages a second (default 10,000: a 10 M trace spans 1,000 s), each with Poisson
arrivals from its own seeded stream; ``files`` part files of whole producers (Spark runs one task
per file). Broker-b is silent-down for 10 % of the span in the middle and broker-c slow (median
700 ms) for another 20 %: enough faults that fault tolerance on and off differ.

``churn=True`` (``--churn``) writes the shape of real data instead, where each broker's
condition is what its sends met a moment ago (``churn_conditions``): every broker gets a new
latency row every second (at its own phase), a slow second (median 900 ms, p99 2.5 s: about 87 %
of its sends above 550 ms, the threshold that isolates a broker) one second in nine, so that
about 10 % of sends are above 550 ms; and flapping outages: a broker goes down (clean or
silent, even odds) in about one second in a hundred, for 1 to 10 s. A send then takes about
123 ms on average, so keep each producer under about 8 sends a second (``rate / producers``),
or its one sending thread falls ever further behind and the replay models exactly that (the
benchmark uses 1,000 producers at 2,000 sends a second).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from rocketlb_core.errors import UsageError
from rocketlb_core.limits import MAX_TIME_MS
from rocketlb_core.trace.schema import CONDITIONS, SENDS
from rocketlb_core.trace.write import arrow_schema, write_trace

BROKERS = ("broker-a", "broker-b", "broker-c", "broker-d")
TOPIC = "TopicLarge"
CHUNK = 1_000_000
COMMAND = "replay generate"


CHURN_SLOW_P = 1 / 9          # a broker-second is slow with this probability
CHURN_SLOW = (900.0, 2500.0)  # median, p99 of a slow second
CHURN_DOWN_P = 0.01           # an outage starts in a broker-second with this probability


def churn_conditions(span: int, seed: int) -> list[tuple[Any, ...]]:
    """Condition rows (``CONDITIONS`` order) that change every second per broker: latency rows
    (fast seconds: median 1 to 30 ms, p99 3 to 8 times that; slow seconds: ``CHURN_SLOW``) and
    outages of 1 to 10 s that start in ``CHURN_DOWN_P`` of broker-seconds, from the seeded
    stream ``(seed, 'churn')``."""
    rng = np.random.default_rng([seed, 0x636875726E])          # "churn"
    rows: list[tuple[Any, ...]] = []
    for b in BROKERS:
        phase = int(rng.integers(0, 1000))
        down_until = -1
        for t in range(phase, span, 1000):
            if rng.random() < CHURN_SLOW_P:
                median, p99 = CHURN_SLOW
            else:
                median = float(rng.integers(1, 31))
                p99 = median * float(rng.integers(3, 9))
            rows.append((t, b, None, "latency", None, median, p99))
            if t >= down_until and rng.random() < CHURN_DOWN_P:
                down_until = min(span, t + 1000 * int(rng.integers(1, 11)))
                mode = "clean" if rng.random() < 0.5 else "silent"
                rows.append((t, b, None, "down", mode, None, None))
                if down_until < span:
                    rows.append((down_until, b, None, "up", None, None, None))
    return rows


def generate(out: Path, sends: int, producers: int = 64, rate: float = 10_000.0,
             files: int = 8, seed: int = 0, *, churn: bool = False,
             force: bool = False) -> None:
    """Write the trace folder ``out`` (atomically: all of it or nothing; ``out`` follows
    ``rocketlb_core.atomic``'s rule, ``force`` as there)."""
    for name, value, low in (("sends", sends, 1), ("producers", producers, 1),
                             ("files", files, 1), ("seed", seed, 0)):
        if not low <= value < 1 << 63:
            raise UsageError(f"--{name} must be an integer from {low} to 2^63-1, got {value}")
    if not (math.isfinite(rate) and 0 < rate <= 1e9):
        raise UsageError(f"--rate must be a number > 0 and <= 1e9, got {rate}")
    if sends / rate * 1000 > MAX_TIME_MS:
        raise UsageError(f"--sends {sends} at --rate {rate} span more than the "
                         f"{MAX_TIME_MS} ms a trace may span (data/README.md)")
    span = int(sends / rate * 1000)
    t1, t2, t3 = int(span * 0.4), int(span * 0.5), int(span * 0.7)
    rows: list[tuple[Any, ...]] = [(0, b, None, "latency", None, 2.0, 10.0) for b in BROKERS]
    if churn:
        rows += churn_conditions(span, seed)
    else:
        rows += [(t1, "broker-b", None, "down", "silent", None, None),
                 (t2, "broker-b", None, "up", None, None, None),
                 (t2, "broker-c", None, "latency", None, 700.0, 2000.0),
                 (t3, "broker-c", None, "latency", None, 2.0, 10.0)]
    rows.sort(key=lambda r: int(r[0]))          # stable: a second's latency before its outage
    conditions = {c: [r[i] for r in rows] for i, c in enumerate(CONDITIONS)}
    meta = {"name": f"generated-{sends}" + ("-churn" if churn else ""), "topic": TOPIC,
            "start_ms": 0, "end_ms": span, "line": "4.9.8", "fault_tolerance": {},
            "provenance": f"rocketlb trace generate --sends {sends} --producers {producers} "
                          f"--rate {rate} --files {files} --seed {seed}"
                          + (" --churn" if churn else "")}
    brokers = [("DefaultCluster", b, 0, f"10.0.{i}.11:10911", "room-1")
               for i, b in enumerate(BROKERS)]
    routes = [(TOPIC, b, 8, 8, 6) for b in BROKERS]
    write_trace(out, meta, brokers, routes,
                lambda folder: _write_sends(folder, sends, producers, span, files, seed),
                conditions, None, command=COMMAND, force=force)


def _write_sends(folder: Path, sends: int, producers: int, span: int, files: int,
                 seed: int) -> None:
    """Each producer's Poisson arrivals, streamed in row groups of at most ``CHUNK`` rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    schema = arrow_schema(SENDS)
    files = max(1, min(files, producers))
    for f in range(files):
        with pq.ParquetWriter(folder / f"part-{f:05d}.parquet", schema,
                              compression="zstd") as writer:
            for p in range(f * producers // files, (f + 1) * producers // files):
                n = sends // producers + (1 if p < sends % producers else 0)
                name = f"producer-{p:04d}"
                rng = np.random.default_rng([seed, p])
                gaps = rng.exponential(span / max(n, 1), n)
                times = np.minimum(np.cumsum(gaps), span - 1).astype(np.int64)
                for lo in range(0, n, CHUNK):
                    hi = min(n, lo + CHUNK)
                    writer.write_table(pa.table({
                        "time_ms": pa.array(times[lo:hi]),
                        "producer": pa.array([name] * (hi - lo), pa.string()),
                        "topic": pa.array([TOPIC] * (hi - lo), pa.string()),
                        "key": pa.nulls(hi - lo, pa.string()),
                        "size": pa.array(np.full(hi - lo, 1024, np.int32))}, schema=schema))
