"""Go's ``sort.Slice`` (Go 1.19 and later: pattern-defeating quicksort, ``zsortfunc.go``), run
on positions: the permutation it makes of a slice of ``n`` elements under a ``less(i, j)`` that
looks only at the positions ``i`` and ``j``.

The Go client's producer orders a route's queue data with
``sort.Slice(qds, func(i, j int) bool { return i-j >= 0 })`` (``internal/route.go``): a
comparison of positions, never of the elements, so the order it makes depends only on how many
there are. Up to 12 elements ``sort.Slice`` runs an insertion sort, which under that comparison
moves every element to the front: the slice reversed. From 13 on, pdqsort's pivots, partitions
and pattern breaking make another fixed permutation. Go releases before 1.19 sorted with another
algorithm (a gap-6 pass first), whose order differs from 7 elements on, so the order also
depends on the Go that built the application; this is Go 1.19 and later (the vectors come from
go1.26.8).

Standard library only.

>>> slice_permutation(5, lambda i, j: i - j >= 0)
[4, 3, 2, 1, 0]
>>> slice_permutation(13, lambda i, j: i - j >= 0)
[11, 10, 9, 8, 7, 0, 5, 4, 3, 2, 1, 12, 6]
"""

from __future__ import annotations

from collections.abc import Callable

_MASK64 = (1 << 64) - 1
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


class _Data:
    """``lessSwap``: ``less`` on positions, ``swap`` on the slice of original positions."""

    __slots__ = ("less", "xs")

    def __init__(self, n: int, less: Callable[[int, int], bool]) -> None:
        self.less = less
        self.xs = list(range(n))

    def swap(self, i: int, j: int) -> None:
        xs = self.xs
        xs[i], xs[j] = xs[j], xs[i]


def slice_permutation(n: int, less: Callable[[int, int], bool]) -> list[int]:
    """The original positions, in the order ``sort.Slice`` leaves a slice of ``n`` elements
    under ``less`` (``sort.Slice``: ``pdqsort_func(data, 0, n, bits.Len(uint(n)))``)."""
    if n < 0:
        raise ValueError(f"a slice of {n} elements")
    data = _Data(n, less)
    _pdqsort(data, 0, n, n.bit_length())
    return data.xs


def _insertion_sort(d: _Data, a: int, b: int) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and d.less(j, j - 1):
            d.swap(j, j - 1)
            j -= 1


def _sift_down(d: _Data, lo: int, hi: int, first: int) -> None:
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and d.less(first + child, first + child + 1):
            child += 1
        if not d.less(first + root, first + child):
            return
        d.swap(first + root, first + child)
        root = child


def _heap_sort(d: _Data, a: int, b: int) -> None:
    first, lo, hi = a, 0, b - a
    for i in range((hi - 1) // 2, -1, -1):
        _sift_down(d, i, hi, first)
    for i in range(hi - 1, -1, -1):
        d.swap(first, first + i)
        _sift_down(d, lo, i, first)


def _pdqsort(d: _Data, a: int, b: int, limit: int) -> None:
    max_insertion = 12
    was_balanced = was_partitioned = True
    while True:
        length = b - a
        if length <= max_insertion:
            _insertion_sort(d, a, b)
            return
        if limit == 0:
            _heap_sort(d, a, b)
            return
        if not was_balanced:
            _break_patterns(d, a, b)
            limit -= 1
        pivot, hint = _choose_pivot(d, a, b)
        if hint == _DECREASING:
            _reverse_range(d, a, b)
            pivot = (b - 1) - (pivot - a)
            hint = _INCREASING
        if was_balanced and was_partitioned and hint == _INCREASING and \
                _partial_insertion_sort(d, a, b):
            return
        if a > 0 and not d.less(a - 1, pivot):
            a = _partition_equal(d, a, b, pivot)
            continue
        mid, was_partitioned = _partition(d, a, b, pivot)
        left, right = mid - a, b - mid
        threshold = length // 8
        if left < right:
            was_balanced = left >= threshold
            _pdqsort(d, a, mid, limit)
            a = mid + 1
        else:
            was_balanced = right >= threshold
            _pdqsort(d, mid + 1, b, limit)
            b = mid


def _partition(d: _Data, a: int, b: int, pivot: int) -> tuple[int, bool]:
    d.swap(a, pivot)
    i, j = a + 1, b - 1
    while i <= j and d.less(i, a):
        i += 1
    while i <= j and not d.less(j, a):
        j -= 1
    if i > j:
        d.swap(j, a)
        return j, True
    d.swap(i, j)
    i += 1
    j -= 1
    while True:
        while i <= j and d.less(i, a):
            i += 1
        while i <= j and not d.less(j, a):
            j -= 1
        if i > j:
            break
        d.swap(i, j)
        i += 1
        j -= 1
    d.swap(j, a)
    return j, False


def _partition_equal(d: _Data, a: int, b: int, pivot: int) -> int:
    d.swap(a, pivot)
    i, j = a + 1, b - 1
    while True:
        while i <= j and not d.less(a, i):
            i += 1
        while i <= j and d.less(a, j):
            j -= 1
        if i > j:
            break
        d.swap(i, j)
        i += 1
        j -= 1
    return i


def _partial_insertion_sort(d: _Data, a: int, b: int) -> bool:
    max_steps, shortest_shifting = 5, 50
    i = a + 1
    for _ in range(max_steps):
        while i < b and not d.less(i, i - 1):
            i += 1
        if i == b:
            return True
        if b - a < shortest_shifting:
            return False
        d.swap(i, i - 1)
        if i - a >= 2:
            for j in range(i - 1, 0, -1):
                if not d.less(j, j - 1):
                    break
                d.swap(j, j - 1)
        if b - i >= 2:
            for j in range(i + 1, b):
                if not d.less(j, j - 1):
                    break
                d.swap(j, j - 1)
    return False


def _break_patterns(d: _Data, a: int, b: int) -> None:
    length = b - a
    if length >= 8:
        random = length                       # xorshift(length)
        modulus = 1 << length.bit_length()    # nextPowerOfTwo
        base = a + (length // 4) * 2
        for idx in range(base - 1, base + 2):
            random ^= (random << 13) & _MASK64
            random ^= random >> 7
            random ^= (random << 17) & _MASK64
            other = random & (modulus - 1)
            if other >= length:
                other -= length
            d.swap(idx, a + other)


def _choose_pivot(d: _Data, a: int, b: int) -> tuple[int, int]:
    shortest_ninther, max_swaps = 50, 4 * 3
    n = b - a
    swaps = [0]
    i, j, k = a + n // 4 * 1, a + n // 4 * 2, a + n // 4 * 3
    if n >= 8:
        if n >= shortest_ninther:
            i = _median_adjacent(d, i, swaps)
            j = _median_adjacent(d, j, swaps)
            k = _median_adjacent(d, k, swaps)
        j = _median(d, i, j, k, swaps)
    if swaps[0] == 0:
        return j, _INCREASING
    if swaps[0] == max_swaps:
        return j, _DECREASING
    return j, _UNKNOWN


def _order2(d: _Data, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
    if d.less(b, a):
        swaps[0] += 1
        return b, a
    return a, b


def _median(d: _Data, a: int, b: int, c: int, swaps: list[int]) -> int:
    a, b = _order2(d, a, b, swaps)
    b, c = _order2(d, b, c, swaps)
    a, b = _order2(d, a, b, swaps)
    return b


def _median_adjacent(d: _Data, a: int, swaps: list[int]) -> int:
    return _median(d, a - 1, a, a + 1, swaps)


def _reverse_range(d: _Data, a: int, b: int) -> None:
    i, j = a, b - 1
    while i < j:
        d.swap(i, j)
        i += 1
        j -= 1
