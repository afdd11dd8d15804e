"""CPython's ``random.Random`` (MT19937, ``random()``, ``gauss()``), compiled, on a state taken
from a ``random.Random`` and given back to it (``take``, ``give``): the draws are the ones the
object would have made, so a compiled loop and the core simulator's Python loop draw the same
numbers from the same seeded stream.

The state travels as three arrays: ``mt`` (the 624 words, as int64), ``rs`` (``[index,
has_gauss]``) and ``gn`` (``[gauss_next]``); a compiled loop keeps the index and the cached
gauss value in scalars while it runs (``word``, ``uniform`` and ``gauss`` take and return them)
and writes them back when it returns. ``backup``: room for the 624 words, for a loop that may
have to undo a message's draws across a regeneration.

Bit for bit: the word generator, its tempering and the twist are CPython's ``_randommodule.c``;
``random()`` is ``genrand_res53``; ``gauss()`` is ``Random.gauss`` of ``Lib/random.py`` (3.11),
with the cached second value. ``tests/test_simfast.py`` holds every function to ``random``.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

try:                                                   # an optional accelerator
    from numba import njit
    AVAILABLE = True
except ImportError:                                    # pragma: no cover (the [fast] extra)
    AVAILABLE = False

    def njit(*_args: Any, **_kwargs: Any) -> Any:  # type: ignore[no-redef]
        return lambda f: f

__all__ = ["AVAILABLE", "N", "State", "gauss", "njit", "uniform", "word"]

N, M = 624, 397
TWOPI = 2.0 * math.pi                                  # random.TWOPI


class State:
    """One stream's state as arrays (see the module docstring)."""

    __slots__ = ("backup", "gn", "mt", "rs")

    def __init__(self) -> None:
        self.mt = np.zeros(N, np.int64)
        self.backup = np.zeros(N, np.int64)
        self.rs = np.zeros(2, np.int64)
        self.gn = np.zeros(1, np.float64)

    def take(self, rng: random.Random) -> None:
        """Copy ``rng``'s state in."""
        version, internal, gauss_next = rng.getstate()
        if version != 3 or len(internal) != N + 1:
            raise ValueError(f"unexpected random.Random state (version {version})")
        self.mt[:] = internal[:N]
        self.rs[0], self.rs[1] = internal[N], gauss_next is not None
        self.gn[0] = 0.0 if gauss_next is None else gauss_next

    def give(self, rng: random.Random) -> None:
        """Set ``rng`` to this state (it then draws on exactly where the compiled loop left)."""
        internal = (*self.mt.tolist(), int(self.rs[0]))
        rng.setstate((3, internal, float(self.gn[0]) if self.rs[1] else None))


@njit(cache=True, nogil=True)
def _twist(mt: np.ndarray) -> None:
    """Regenerate the 624 words (``genrand_uint32``'s block, in CPython's three loops)."""
    for kk in range(N - M):
        y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7FFFFFFF)
        mt[kk] = mt[kk + M] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)
    for kk in range(N - M, N - 1):
        y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7FFFFFFF)
        mt[kk] = mt[kk + M - N] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)
    y = (mt[N - 1] & 0x80000000) | (mt[0] & 0x7FFFFFFF)
    mt[N - 1] = mt[M - 1] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)


@njit(cache=True, nogil=True, inline="always")
def word(mt: np.ndarray, i: int) -> tuple[int, int]:
    """``genrand_uint32``: (the next 32-bit word, the index after it). The index is a scalar
    the caller keeps (a loop that reads and writes it through an array runs 20 times slower)."""
    if i >= N:
        _twist(mt)
        i = 0
    y = mt[i]
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return int(y), i + 1


@njit(cache=True, nogil=True, inline="always")
def uniform(mt: np.ndarray, i: int) -> tuple[float, int]:
    """``random()``: (53 bits in [0, 1), the index after it)."""
    a, i = word(mt, i)
    b, i = word(mt, i)
    return ((a >> 5) * 67108864.0 + (b >> 6)) * (1.0 / 9007199254740992.0), i


@njit(cache=True, nogil=True, inline="always")
def gauss(mt: np.ndarray, i: int, has: bool, nxt: float) -> tuple[float, int, bool, float]:
    """``gauss(0.0, 1.0)``: (the value, index, whether a second value is cached, that value):
    the cached value if there is one, else a new pair."""
    if has:
        return 0.0 + nxt, i, False, 0.0
    u, i = uniform(mt, i)
    x2pi = u * TWOPI
    v, i = uniform(mt, i)
    g2rad = math.sqrt(-2.0 * math.log(1.0 - v))
    return 0.0 + math.cos(x2pi) * g2rad, i, True, math.sin(x2pi) * g2rad
