"""Queue selectors for ordered messages: ``SelectMessageQueueByHash`` (spec 2.2; upstream
``client/producer/selector/SelectMessageQueueByHash.java``).

An ordered send (``send(msg, selector, arg)``) bypasses everything of chapters 2 and 3: the
application's selector picks the queue from the publish list, there is one attempt, no retry
and no fault report (``DefaultMQProducerImpl.sendSelectImpl``). The built-in hash selector is
``arg.hashCode() % n`` made non-negative; 4.7.1 took the absolute value first, which leaves
``Integer.MIN_VALUE`` negative, so a key with that hash code fails with an index error unless
``n`` divides it.

>>> from rocketlb_core.model import MessageQueue
>>> qs = [MessageQueue("T", b, i) for b in ("broker-a", "broker-b") for i in range(4)]
>>> [select_by_hash(qs, k).short() for k in ("order-1", "order-42", "TopicTest", "")]
['broker-b/2', 'broker-b/1', 'broker-b/3', 'broker-a/0']
>>> select_by_hash(qs[:3], "polygenelubricants", line="4.7.1")
Traceback (most recent call last):
...
rocketlb_core.javamath.JavaIndexOutOfBoundsError: Index -2 out of bounds for length 3
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rocketlb_core.javamath import (
    JavaIndexOutOfBoundsError,
    jabs,
    java_string_hash,
    jmod,
    wrap32,
)
from rocketlb_core.model import MessageQueue
from rocketlb_core.producer.line import ProducerLine

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1


def java_hash(arg: str | int) -> int:
    """``arg.hashCode()`` for the argument types an application passes: ``String``, and
    ``Integer`` (in int range) or ``Long`` (beyond it) for Python ints."""
    if isinstance(arg, bool):
        raise TypeError("a bool key has no single Java counterpart; pass a str or an int")
    if isinstance(arg, str):
        return java_string_hash(arg)
    if isinstance(arg, int):
        if INT_MIN <= arg <= INT_MAX:
            return arg
        v = arg & ((1 << 64) - 1)
        return wrap32(v ^ (v >> 32))
    raise TypeError(f"unsupported key type {type(arg).__name__}")


def select_by_hash(queues: Sequence[MessageQueue], arg: str | int,
                   line: ProducerLine | str = ProducerLine.V4_9_8) -> MessageQueue:
    """``SelectMessageQueueByHash.select(mqs, msg, arg)`` on ``line``."""
    n = len(queues)
    h = java_hash(arg)
    if ProducerLine.parse(line) is ProducerLine.V4_7_1:
        value = jmod(jabs(h), n)
    else:
        value = jmod(h, n)
        if value < 0:
            value = jabs(value)
    if not 0 <= value < n:
        raise JavaIndexOutOfBoundsError(f"Index {value} out of bounds for length {n}")
    return queues[value]


def keys_moved(keys: Iterable[str | int], before: Sequence[MessageQueue],
               after: Sequence[MessageQueue],
               line: ProducerLine | str = ProducerLine.V4_9_8) -> tuple[int, int]:
    """How many of ``keys`` the hash selector sends to a different queue after the publish list
    changed from ``before`` to ``after``: ``(moved, total)``. A moved key's messages before and
    after the change are in two queues, so their order is no longer guaranteed."""
    moved = total = 0
    for k in keys:
        total += 1
        moved += select_by_hash(before, k, line) != select_by_hash(after, k, line)
    return moved, total
