"""The replay's random draws: counter-based, so a draw depends only on its coordinates
(seed, producer, send number, attempt), never on the order of processing, the engine or the
batch it falls in; and cheap to take for a whole array of sends at once.

* ``producer_key(seed, producer)``: a 64-bit key per producer (BLAKE2b, once per producer).
* ``draw_bits(key, seq, attempt)``: SplitMix64's finaliser over
  ``key + seq * 0x9E3779B97F4A7C15 + attempt * 0xD1B54A32D192ED03`` (mod 2^64): 64 uniform bits.
  ``draw_bits_array`` is the same function over a NumPy array of send numbers (wrapping uint64
  arithmetic, so the two agree bit for bit; tested).
* ``LatencyTable``: a log-normal latency (median, p99) as its quantile function sampled at
  2^16 points, ``max(1, round(median * exp(sigma * z)))`` with ``z`` the standard normal
  quantile of ``(b + 0.5) / 2^16``; a draw's top 16 bits pick the bucket ``b``. Integer lookups
  keep both engines bit-exact; each process builds the tables it needs with ``build``, which
  is ``latency_ms`` bucket for bucket (a Spark worker rebuilds them from the conditions'
  source: ``timeline._restore``), and the compiled replay loop computes the same entries
  (``compiled._latency``).

>>> key = producer_key(0, "producer-0")
>>> import numpy as np

from rocketlb_core.conditions import FAIL_FAST_MS, latency_ms, lognormal_sigma
>>> int(draw_bits_array(key, np.array([7], dtype=np.int64), 1)[0]) == draw_bits(key, 7, 1)
True
>>> t = LatencyTable.build(2.0, 10.0)
>>> int(t.values[BUCKETS // 2]), int(t.values.max()) > 20
(2, True)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np

from rocketlb_core.conditions import FAIL_FAST_MS, latency_ms, lognormal_sigma

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
ATTEMPT = 0xD1B54A32D192ED03
M1 = 0xBF58476D1CE4E5B9
M2 = 0x94D049BB133111EB
BUCKET_BITS = 16
BUCKETS = 1 << BUCKET_BITS


def producer_key(seed: int, producer: str) -> int:
    """The 64-bit key of one producer's draws."""
    digest = hashlib.blake2b(f"{seed}/{producer}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def draw_bits(key: int, seq: int, attempt: int) -> int:
    """64 uniform bits for (producer key, send number, attempt number)."""
    z = (key + seq * GOLDEN + attempt * ATTEMPT) & MASK64
    z = ((z ^ (z >> 30)) * M1) & MASK64
    z = ((z ^ (z >> 27)) * M2) & MASK64
    return z ^ (z >> 31)


def draw_bits_array(key: int, seq: np.ndarray[Any, Any], attempt: int) -> np.ndarray[Any, Any]:
    """``draw_bits`` over an int64 array of send numbers (uint64 result)."""
    with np.errstate(over="ignore"):
        z = seq.astype(np.uint64) * np.uint64(GOLDEN)
        z += np.uint64((key + attempt * ATTEMPT) & MASK64)
        z ^= z >> np.uint64(30)
        z *= np.uint64(M1)
        z ^= z >> np.uint64(27)
        z *= np.uint64(M2)
        z ^= z >> np.uint64(31)
    return z


def bucket(bits: int) -> int:
    """The latency bucket of a draw (its top 16 bits)."""
    return bits >> (64 - BUCKET_BITS)


def fail_fast_ms(bits: int) -> int:
    """How long a refused connection takes: one of ``FAIL_FAST_MS``, each as likely."""
    return FAIL_FAST_MS[(bucket(bits) * len(FAIL_FAST_MS)) >> BUCKET_BITS]


@lru_cache(maxsize=1)
def _normal_quantiles() -> tuple[float, ...]:
    inv = NormalDist().inv_cdf
    return tuple(inv((b + 0.5) / BUCKETS) for b in range(BUCKETS))


@lru_cache(maxsize=1)
def _quantile_array() -> np.ndarray[Any, Any]:
    z = np.array(_normal_quantiles(), dtype=np.float64)
    z.setflags(write=False)
    return z


NEAR_HALF = 1e-9
"""How close (relative) to a rounding boundary ``k + 0.5`` NumPy's ``exp`` may land before a
bucket is recomputed with ``math.exp``: far wider than the few ulps by which two ``exp``
implementations can differ, so the table is exactly ``latency_ms`` bucket by bucket."""


@dataclass(frozen=True, eq=False)
class LatencyTable:
    """A broker's send latency in ms for each of the 2^16 draw buckets."""

    median_ms: float
    p99_ms: float
    values: np.ndarray[Any, Any]       # int64, ascending

    @classmethod
    def build(cls, median_ms: float, p99_ms: float) -> LatencyTable:
        """``latency_ms(median, p99, z)`` for every bucket's ``z``, bit for bit. Vectorised
        (a trace whose conditions churn needs hundreds of tables): NumPy's ``exp`` may differ
        from the C library's in the last ulp, which can change a rounding only next to a
        boundary ``k + 0.5``; those few buckets are computed the scalar way."""
        z = _quantile_array()
        with np.errstate(over="ignore", invalid="ignore"):
            x = median_ms * np.exp(lognormal_sigma(median_ms, p99_ms) * z)
        if not np.isfinite(x).all():             # the scalar way raises the error it should
            values = np.array([latency_ms(median_ms, p99_ms, q) for q in z.tolist()],
                              dtype=np.int64)
        else:
            rounded = np.rint(x)
            near = np.abs(x - np.floor(x) - 0.5) <= NEAR_HALF * np.maximum(x, 1.0)
            for b in np.flatnonzero(near).tolist():
                rounded[b] = latency_ms(median_ms, p99_ms, float(z[b]))
            values = np.maximum(rounded, 1.0).astype(np.int64)
        values.setflags(write=False)
        return cls(median_ms, p99_ms, values)

    @classmethod
    def build_scalar(cls, median_ms: float, p99_ms: float) -> LatencyTable:
        """The definition, one bucket at a time (the reference ``build`` is tested against)."""
        values = np.array([latency_ms(median_ms, p99_ms, z) for z in _normal_quantiles()],
                          dtype=np.int64)
        values.setflags(write=False)
        return cls(median_ms, p99_ms, values)

    def latency(self, bits: int) -> int:
        return int(self.values[bucket(bits)])
