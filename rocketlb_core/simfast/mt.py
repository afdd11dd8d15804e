"""CPython's ``random.Random`` (MT19937, ``random()``, ``gauss()``), compiled, on a state taken
from a ``random.Random`` and given back to it (``take``, ``give``): the draws are the ones the
object would have made, so a compiled loop and the core simulator's Python loop draw the same
numbers from the same seeded stream.

The state is three arrays: ``mt`` (the 624 words, as int64), ``rs`` (``[index, has_gauss,
twisted]``) and ``gn`` (``[gauss_next]``). ``twisted`` says that the words were regenerated since
it was last cleared, and ``backup`` then holds them as they were: a loop that has to undo a
message's draws (``mark``/``undo``) puts everything back.

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

__all__ = ["AVAILABLE", "State", "gauss", "njit", "u32", "uniform"]

N, M = 624, 397
TWOPI = 2.0 * math.pi                                  # random.TWOPI


class State:
    """One stream's state as arrays (see the module docstring)."""

    __slots__ = ("backup", "gn", "mt", "rs")

    def __init__(self) -> None:
        self.mt = np.zeros(N, np.int64)
        self.backup = np.zeros(N, np.int64)
        self.rs = np.zeros(3, np.int64)
        self.gn = np.zeros(1, np.float64)

    def take(self, rng: random.Random) -> None:
        """Copy ``rng``'s state in."""
        version, internal, gauss_next = rng.getstate()
        if version != 3 or len(internal) != N + 1:
            raise ValueError(f"unexpected random.Random state (version {version})")
        self.mt[:] = internal[:N]
        self.rs[0], self.rs[1], self.rs[2] = internal[N], gauss_next is not None, 0
        self.gn[0] = 0.0 if gauss_next is None else gauss_next

    def give(self, rng: random.Random) -> None:
        """Set ``rng`` to this state (it then draws on exactly where the compiled loop left)."""
        internal = (*self.mt.tolist(), int(self.rs[0]))
        rng.setstate((3, internal, float(self.gn[0]) if self.rs[1] else None))


@njit(cache=True, nogil=True)
def _twist(mt: np.ndarray) -> None:
    for kk in range(N):
        y = (mt[kk] & 0x80000000) | (mt[(kk + 1) % N] & 0x7FFFFFFF)
        v = mt[(kk + M) % N] ^ (y >> 1)
        if y & 1:
            v ^= 0x9908B0DF
        mt[kk] = v


@njit(cache=True, nogil=True)
def u32(mt: np.ndarray, rs: np.ndarray, backup: np.ndarray) -> int:
    """``genrand_uint32``: the next 32-bit word."""
    i = rs[0]
    if i >= N:
        if rs[2] == 0:
            backup[:] = mt
            rs[2] = 1
        _twist(mt)
        i = 0
    y = mt[i]
    rs[0] = i + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return int(y)


@njit(cache=True, nogil=True)
def uniform(mt: np.ndarray, rs: np.ndarray, backup: np.ndarray) -> float:
    """``random()``: 53 bits in [0, 1)."""
    a = u32(mt, rs, backup) >> 5
    b = u32(mt, rs, backup) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def gauss(mt: np.ndarray, rs: np.ndarray, gn: np.ndarray, backup: np.ndarray) -> float:
    """``gauss(0.0, 1.0)``: the cached value if there is one, else a new pair."""
    if rs[1]:
        rs[1] = 0
        return 0.0 + float(gn[0])
    x2pi = uniform(mt, rs, backup) * TWOPI
    g2rad = math.sqrt(-2.0 * math.log(1.0 - uniform(mt, rs, backup)))
    gn[0] = math.sin(x2pi) * g2rad
    rs[1] = 1
    return 0.0 + math.cos(x2pi) * g2rad
