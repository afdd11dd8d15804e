"""Guava's ``Hashing.sipHash24()``, as ``PublishingLoadBalancer.takeMessageQueueByMessageGroup``
uses it (rocketmq-client-java 5.0.8, ``impl/producer/PublishingLoadBalancer.java``; Guava's
``com/google/common/hash/SipHashFunction.java``, shaded in the client's jar).

SipHash-2-4 (Aumasson and Bernstein): two compression rounds per 8-byte little-endian block,
four finalisation rounds, the last block padded with zeros and the input length (mod 256) in its
top byte. Guava's default key is ``k0 = 0x0706050403020100``, ``k1 = 0x0f0e0d0c0b0a0908`` (the
bytes 0 to 15); ``hashBytes(...).asLong()`` is the 64-bit result as a signed Java ``long``.

>>> sip_hash24(b"")
8246050544436514353
>>> message_group_index("order-42", 8) in range(8)
True
"""

from __future__ import annotations

MASK = (1 << 64) - 1
K0 = 0x0706050403020100
K1 = 0x0F0E0D0C0B0A0908


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & MASK


def _round(v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
    v0 = (v0 + v1) & MASK
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & MASK
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & MASK
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & MASK
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def sip_hash24(data: bytes, k0: int = K0, k1: int = K1) -> int:
    """SipHash-2-4 of ``data`` as a signed 64-bit value (Guava's ``HashCode.asLong()``)."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    n = len(data)
    end = n - n % 8
    for i in range(0, end, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = _round(*_round(v0, v1, v2, v3))
        v0 ^= m
    m = int.from_bytes(data[end:], "little") | ((n & 0xFF) << 56)
    v3 ^= m
    v0, v1, v2, v3 = _round(*_round(v0, v1, v2, v3))
    v0 ^= m
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _round(v0, v1, v2, v3)
    h = v0 ^ v1 ^ v2 ^ v3
    return h - (1 << 64) if h >> 63 else h


def message_group_index(message_group: str, size: int) -> int:
    """``LongMath.mod(sipHash24(group as UTF-8).asLong(), size)``: the position of a FIFO
    message group's queue among the balancer's ``size`` writable queues (never negative).

    Java's ``getBytes(UTF_8)`` writes a lone surrogate as ``?``; so does ``surrogatepass``-free
    encoding here (``errors="replace"`` gives ``?``)."""
    if size <= 0:
        raise ArithmeticError(f"Modulus must be positive: {size}")
    return sip_hash24(message_group.encode("utf-8", errors="replace")) % size
