"""Latency to not-available duration: the tables of ``MQFaultStrategy`` (spec 2.3).

>>> compute_not_available_duration(600, LATENCY_MAX_4, NOT_AVAILABLE_4)
30000
>>> compute_not_available_duration(600, LATENCY_MAX_5, NOT_AVAILABLE_5)
2000
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import pairwise

# MQFaultStrategy @4.9.8 (also 4.9.7, 4.7.1 and 5.0.0 .. 5.1.3).
LATENCY_MAX_4: tuple[int, ...] = (50, 100, 550, 1000, 2000, 3000, 15000)
NOT_AVAILABLE_4: tuple[int, ...] = (0, 0, 30000, 60000, 120000, 180000, 600000)
# MQFaultStrategy @5.3.3 (since 5.1.4, RIP-63).
LATENCY_MAX_5: tuple[int, ...] = (50, 100, 550, 1800, 3000, 5000, 15000)
NOT_AVAILABLE_5: tuple[int, ...] = (0, 0, 2000, 5000, 6000, 10000, 30000)
# The latency an isolating report looks up in place of the measured one: 30000 ms on 4.x and
# 5.0.0 to 5.1.3 (a 600 s isolation), 10000 ms from 5.1.4 (10 s) (book/facts.toml:
# producer.isolation-latency-10s-5x-since-5.1.4).
ISOLATION_LATENCY_4 = 30000
ISOLATION_LATENCY_5 = 10000

# Response codes (ResponseCode / RemotingSysResponseCode), and the ones a sync send retries on
# (DefaultMQProducer.retryResponseCodes @4.9.8; @5.3.3 adds SYSTEM_BUSY (from 5.3.0) and GO_AWAY
# (from 5.3.1)).
SYSTEM_ERROR, SYSTEM_BUSY, SERVICE_NOT_AVAILABLE = 1, 2, 14
NO_PERMISSION, TOPIC_NOT_EXIST, NO_BUYER_ID, NOT_IN_CURRENT_UNIT, GO_AWAY = 16, 17, 204, 205, 1500
RETRYABLE_CODES_4 = frozenset({TOPIC_NOT_EXIST, SERVICE_NOT_AVAILABLE, SYSTEM_ERROR,
                               NO_PERMISSION, NO_BUYER_ID, NOT_IN_CURRENT_UNIT})
RETRYABLE_CODES_5 = RETRYABLE_CODES_4 | {SYSTEM_BUSY, GO_AWAY}


def compute_not_available_duration(latency_ms: int, latency_max: Sequence[int],
                                   not_available: Sequence[int]) -> int:
    """``computeNotAvailableDuration``: the duration of the largest bound the latency reaches.

    The loop walks the latency table and indexes the duration table with the same index, as
    upstream does (a shorter duration table raises ``IndexError`` like Java's array bound check).
    """
    for i in range(len(latency_max) - 1, -1, -1):
        if latency_ms >= latency_max[i]:
            return not_available[i]
    return 0


def duration_function(latency_max: Sequence[int],
                      not_available: Sequence[int]) -> Callable[[int], int]:
    """A fast equivalent of ``compute_not_available_duration`` for fixed tables.

    For an ascending latency table (every upstream default) the answer is a binary search; any
    other table (the setters accept anything) keeps upstream's backward loop.
    """
    lat, nad = tuple(latency_max), tuple(not_available)
    if len(nad) >= len(lat) and all(a < b for a, b in pairwise(lat)):
        first = lat[0] if lat else 0

        def fast(latency_ms: int) -> int:
            if not lat or latency_ms < first:
                return 0
            return nad[bisect_right(lat, latency_ms) - 1]
        return fast
    return lambda latency_ms: compute_not_available_duration(latency_ms, lat, nad)
