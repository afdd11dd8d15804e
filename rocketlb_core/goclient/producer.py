"""The Go client's synchronous send loop (``producer/producer.go``, ``sendSync``; releases 2.0.0
to 2.1.2) with its default selector, against brokers that refuse (issue 47).

The loop makes ``1 + RetryTimes`` attempts (``RetryTimes`` 3 by default), each on the queue the
selector gives next, until one is stored. No release passes the failed broker to the selector:
2.0.0 to 2.1.1 call ``selectMessageQueue(msg)``, and 2.1.2's ``mq :=`` inside the loop leaves
the ``mq`` it reads the last broker from nil, so every retry asks with an empty last broker.
With the round-robin selector each attempt steps the producer's per-topic counter once: a retry
takes the next queue of the list, which belongs to the same broker until that broker's queues
run out (the Java producer's retry skips the last broker, spec 2.2). The Go client has no
latency fault tolerance: nothing remembers a failing broker between sends.

Standard library only.

>>> from rocketlb_core.goclient.allocate import GoQueue
>>> qs = [GoQueue("T", b, i) for b in ("broker-b", "broker-a") for i in range(4)]
>>> rr = RoundRobin()
>>> [q.short() for q in send_sync(rr, "T", qs, {"broker-a"}).attempts]
[['broker-b', 1]]
>>> for _ in range(2):
...     _ = send_sync(rr, "T", qs, {"broker-a"})
>>> s = send_sync(rr, "T", qs, {"broker-a"})
>>> [q.short() for q in s.attempts], s.stored
([['broker-a', 0], ['broker-a', 1], ['broker-a', 2], ['broker-a', 3]], None)
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from rocketlb_core.goclient.allocate import GoQueue
from rocketlb_core.goclient.selector import RoundRobin

RETRY_TIMES = 3
"""``RetryTimes`` of ``DefaultClientOptions``: a sync send makes ``1 + RetryTimes`` attempts."""


@dataclass(frozen=True)
class GoSend:
    """One ``SendSync``: the queue of each attempt, and where it was stored (``None``: every
    attempt refused, the send fails)."""

    attempts: tuple[GoQueue, ...]
    stored: GoQueue | None


def send_sync(selector: RoundRobin, topic: str, queues: Sequence[GoQueue],
              refusing: Collection[str], retry_times: int = RETRY_TIMES) -> GoSend:
    """A synchronous send on ``queues`` (the producer's list, ``route.publish_queues``) while
    the brokers ``refusing`` refuse every request (a connection error: ``InvokeSync`` fails and
    the loop goes on)."""
    attempts: list[GoQueue] = []
    for _ in range(1 + retry_times):
        q = selector.select(topic, queues)          # no release passes the last broker
        attempts.append(q)
        if q.broker_name not in refusing:
            return GoSend(tuple(attempts), q)
    return GoSend(tuple(attempts), None)


def sends(count: int, queues: Sequence[GoQueue], refusing: Collection[str],
          topic: str = "TopicTest", retry_times: int = RETRY_TIMES) -> list[GoSend]:
    """``count`` sends in a row from one producer (one round-robin counter)."""
    rr = RoundRobin()
    return [send_sync(rr, topic, queues, refusing, retry_times) for _ in range(count)]
