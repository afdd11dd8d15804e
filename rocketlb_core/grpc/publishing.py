"""``PublishingLoadBalancer`` of the gRPC producer (rocketmq-client-java 5.0.8,
``org/apache/rocketmq/client/java/impl/producer/PublishingLoadBalancer.java``).

The balancer holds the route's queues that are writable (``Permission`` WRITE or READ_WRITE) and
on a master (broker id 0), in the route's order, and one ``AtomicInteger`` counter that starts at
``RandomUtils.nextInt(0, Integer.MAX_VALUE)`` and survives route updates (``update`` keeps it).

* ``take_message_queues(excluded, count)``: ``next = index.getAndIncrement()``; walk the queues
  from ``next`` (``IntMath.mod``, so the counter may wrap past 2^31 - 1), keeping the first queue
  of each broker whose endpoints are not ``excluded``, until ``count`` candidates; if none was
  kept (every endpoint isolated), walk on from where the first pass stopped, ignoring the
  isolation. The counter moves once per call, however many queues were looked at.
* ``take_message_queue_by_message_group(group)``: ``queues[LongMath.mod(sipHash24(group), n)]``
  (``grpc.siphash``), the counter untouched, isolation ignored.

A queue's ``endpoints`` are its broker's as the route gives them; behind a Proxy every broker
carries the Proxy's endpoints, so one isolation excludes all of them (then the all-isolated pass
takes them anyway).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from rocketlb_core.grpc.siphash import message_group_index
from rocketlb_core.javamath import wrap32

MASTER_BROKER_ID = 0


class Permission(StrEnum):
    """``apache.rocketmq.v2.Permission`` as the client reads it (``route/Permission.java``)."""

    NONE = "NONE"
    READ = "READ"
    WRITE = "WRITE"
    READ_WRITE = "READ_WRITE"

    @property
    def writable(self) -> bool:
        return self in (Permission.WRITE, Permission.READ_WRITE)

    @property
    def readable(self) -> bool:
        return self in (Permission.READ, Permission.READ_WRITE)


@dataclass(frozen=True)
class GrpcQueue:
    """A ``MessageQueueImpl``: topic, broker (name, id, endpoints), queue id, permission."""

    topic: str
    broker: str
    broker_id: int
    endpoints: str
    queue_id: int
    permission: Permission = Permission.READ_WRITE

    def short(self) -> list[object]:
        """``[broker, queue id]``, as the vectors write a taken queue."""
        return [self.broker, self.queue_id]

    @classmethod
    def of(cls, row: Sequence[object]) -> GrpcQueue:
        """From the vectors' ``[topic, broker, brokerId, endpoints, queueId, permission]``."""
        topic, broker, broker_id, endpoints, queue_id, perm = row
        return cls(str(topic), str(broker), int(str(broker_id)), str(endpoints),
                   int(str(queue_id)), Permission(str(perm)))


def _mod(x: int, m: int) -> int:
    """Guava's ``IntMath.mod``/``LongMath.mod``: never negative (Python's ``%`` for m > 0)."""
    if m <= 0:
        raise ArithmeticError(f"Modulus {m} must be > 0")
    return x % m


class AtomicCounter:
    """The ``AtomicInteger`` a balancer and every balancer ``update`` makes from it share."""

    def __init__(self, value: int) -> None:
        self.value = wrap32(value)

    def get_and_increment(self) -> int:
        value = self.value
        self.value = wrap32(value + 1)
        return value


class PublishingLoadBalancer:
    """The producer's balancer for one topic (its counter, and the queues it may write to)."""

    def __init__(self, queues: Iterable[GrpcQueue], index: int | AtomicCounter) -> None:
        self.counter = index if isinstance(index, AtomicCounter) else AtomicCounter(index)
        self.queues = [q for q in queues
                       if q.permission.writable and q.broker_id == MASTER_BROKER_ID]
        if not self.queues:
            raise ValueError("No writable message queue found")

    def update(self, queues: Iterable[GrpcQueue]) -> PublishingLoadBalancer:
        """A balancer for a new route sharing this one's counter (``update``)."""
        return PublishingLoadBalancer(queues, self.counter)

    @property
    def stored(self) -> int:
        """The counter's value now."""
        return self.counter.value

    def take_message_queues(self, excluded: Iterable[str], count: int) -> list[GrpcQueue]:
        """``takeMessageQueues(excluded, count)``: up to ``count`` queues on distinct brokers."""
        excluded = set(excluded)
        nxt = self.counter.get_and_increment()
        n = len(self.queues)
        candidates: list[GrpcQueue] = []
        names: set[str] = set()
        for _ in range(n):
            q = self.queues[_mod(nxt, n)]
            nxt = wrap32(nxt + 1)
            if q.endpoints not in excluded and q.broker not in names:
                names.add(q.broker)
                candidates.append(q)
            if len(candidates) >= count:
                return candidates
        if not candidates:                      # every endpoint isolated: take them anyway
            for _ in range(n):
                q = self.queues[_mod(nxt, n)]
                nxt = wrap32(nxt + 1)
                if q.broker not in names:
                    names.add(q.broker)
                    candidates.append(q)
                if len(candidates) >= count:
                    break
        return candidates

    def take_message_queue_by_message_group(self, message_group: str) -> GrpcQueue:
        """``takeMessageQueueByMessageGroup``: the group's queue by SipHash-2-4."""
        return self.queues[message_group_index(message_group, len(self.queues))]
