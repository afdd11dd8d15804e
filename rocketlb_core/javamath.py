"""Java arithmetic and string semantics that a bit-exact port of RocketMQ needs.

Spec: ``reference/rocketmq-load-balancing.md`` section 0 ("Numeric conventions") and section 10
("Porting notes"). Upstream code is Java: ``int`` wraps at 32 bits, ``%`` truncates toward zero,
``Math.abs(Integer.MIN_VALUE)`` stays negative, and ``String.compareTo`` / ``String.hashCode`` work
on UTF-16 code units. Python's ``int``, ``%``, ``abs`` and ``str`` ordering all differ, so every
module of the core goes through these helpers.

>>> wrap32(2**31)
-2147483648
>>> jmod(-7, 3), -7 % 3
(-1, 2)
>>> jabs(-2**31)
-2147483648
>>> mask31(-2**31)
0
>>> java_string_hash("RocketMQ")
-453554280
"""

from __future__ import annotations

import functools

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1
_MASK32 = 0xFFFFFFFF


def wrap32(x: int) -> int:
    """Wrap an integer to Java's signed 32-bit ``int`` (two's complement)."""
    x &= _MASK32
    return x - (1 << 32) if x >= (1 << 31) else x


def wrap64(x: int) -> int:
    """Wrap an integer to Java's signed 64-bit ``long``."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= (1 << 63) else x


def jabs(x: int) -> int:
    """``Math.abs(int)``: the absolute value, except that ``Integer.MIN_VALUE`` stays negative."""
    x = wrap32(x)
    return x if x >= 0 or x == INT_MIN else -x


def jmod(a: int, b: int) -> int:
    """Java's ``a % b`` for ints: the remainder truncates toward zero (its sign follows ``a``).

    Raises ``ZeroDivisionError`` for ``b == 0``, as Java raises ``ArithmeticException``.
    """
    if b == 0:
        raise ZeroDivisionError("/ by zero")
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def jdiv(a: int, b: int) -> int:
    """Java's integer division ``a / b`` (truncates toward zero)."""
    if b == 0:
        raise ZeroDivisionError("/ by zero")
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def mask31(x: int) -> int:
    """``x & 0x7FFFFFFF``: clear the sign bit of a 32-bit value."""
    return x & 0x7FFFFFFF


def java_string_key(s: str) -> bytes:
    """A sort key giving Java's ``String.compareTo`` order (UTF-16 code units).

    Python orders ``str`` by code point; Java by UTF-16 code unit. They differ when a character
    above U+FFFF (a surrogate pair, units D800..DFFF) meets one in U+E000..U+FFFF. Big-endian UTF-16
    bytes compare exactly like the code-unit sequence, prefix rule included.

    >>> sorted(["\\uff21", "\\U0001f600"]) == ["\\uff21", "\\U0001f600"]
    True
    >>> sorted(["\\uff21", "\\U0001f600"], key=java_string_key) == ["\\U0001f600", "\\uff21"]
    True
    """
    return s.encode("utf-16-be", "surrogatepass")


def java_string_compare(a: str, b: str) -> int:
    """The sign of Java's ``a.compareTo(b)``: -1, 0 or 1."""
    ka, kb = java_string_key(a), java_string_key(b)
    return (ka > kb) - (ka < kb)


def utf16_units(s: str) -> list[int]:
    """The UTF-16 code units of ``s``, as Java's ``String.charAt`` sees them."""
    raw = java_string_key(s)
    return [(raw[i] << 8) | raw[i + 1] for i in range(0, len(raw), 2)]


@functools.lru_cache(maxsize=1 << 16)
def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: ``h = 31*h + unit`` over UTF-16 code units, 32-bit wrap
    (remembered for the last 65,536 strings: Kafka's assignors hash the same topic and member
    names many times)."""
    h = 0
    for unit in utf16_units(s):
        h = (31 * h + unit) & _MASK32
    return wrap32(h)


JAVA_HASHMAP_TREEIFY = 8
"""A ``java.util.HashMap`` bin this long is turned into a tree (or the table resized), which
``java_hash_order`` does not model."""


def java_hash_order(keys: list[str], *, compute_if_absent: bool = False) -> list[str]:
    """The order in which a ``java.util.HashMap`` (or ``HashSet``) of ``String`` keys, built with
    the default constructor and filled by ``put`` in the order of ``keys`` (repeats ignored),
    iterates its keys: by bucket ``(h ^ h >>> 16) & (capacity - 1)`` of the final capacity
    (16, doubled whenever the size passes three quarters of it), and within a bucket in the
    order the keys went in (a resize splits a bin keeping that order). Filled by
    ``computeIfAbsent`` instead, a new key goes to the front of its bin: newest first within a
    bucket. Kafka's assignors iterate such maps; their output order follows it.

    >>> java_hash_order(["b", "a", "c"])
    ['a', 'b', 'c']
    """
    unique = list(dict.fromkeys(keys))
    capacity = 16
    while len(unique) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key) & _MASK32
        return (h ^ (h >> 16)) & (capacity - 1)

    buckets = [bucket(k) for k in unique]
    sizes: dict[int, int] = {}
    for b in buckets:
        sizes[b] = sizes.get(b, 0) + 1
        if sizes[b] >= JAVA_HASHMAP_TREEIFY:
            raise ValueError(f"{sizes[b]} keys in one HashMap bin: Java would treeify it or "
                             "resize, which java_hash_order does not model")
    sign = -1 if compute_if_absent else 1
    order = sorted(range(len(unique)), key=lambda i: (buckets[i], sign * i))
    return [unique[i] for i in order]


def java_grown_capacity(size: int) -> int:
    """The table size of a ``java.util.HashMap`` made with the default constructor after
    ``size`` puts (16, doubled whenever the size passes three quarters of it)."""
    capacity = 16
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def java_copy_capacity(size: int) -> int:
    """The table size of ``new HashSet<>(collection)`` (or ``new HashMap<>(map)``) of ``size``
    elements: the power of two at or above ``max(size / .75 + 1, 16)``."""
    want = max(int(size / 0.75) + 1, 16)
    capacity = 1
    while capacity < want:
        capacity *= 2
    return capacity


def java_table_order(hashes: list[int], capacity: int) -> list[int]:
    """The positions of ``hashes`` (each key's ``hashCode``, in insertion order, keys distinct)
    in the order a ``HashMap`` of table size ``capacity``, filled by ``put``, iterates them."""
    def bucket(h: int) -> int:
        h &= _MASK32
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(range(len(hashes)), key=lambda i: (bucket(hashes[i]), i))


def java_uuid_hash(most: int, least: int) -> int:
    """``org.apache.kafka.common.Uuid.hashCode``: the two halves of ``most ^ least`` xored."""
    h = (most ^ least) & 0xFFFFFFFFFFFFFFFF
    return wrap32((h >> 32) ^ h)


class JavaIndexOutOfBoundsError(IndexError):
    """What Java's ``List.get`` throws for an index outside the list."""


class JavaNullPointerError(TypeError):
    """Where upstream would throw ``NullPointerException`` (a null argument it dereferences)."""


def java_split(s: str, sep: str) -> list[str]:
    """Java's ``String.split(sep)`` for a literal, single-character separator.

    Java keeps leading empty pieces and drops trailing ones; a string made only of separators
    gives no pieces at all, and the empty string gives one empty piece (spec 3.5).

    >>> java_split("room1@broker-a@", "@"), java_split("@", "@"), java_split("", "@")
    (['room1', 'broker-a'], [], [''])
    """
    if s == "":
        return [""]
    parts = s.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts
