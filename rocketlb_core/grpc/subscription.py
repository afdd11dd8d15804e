"""``SubscriptionLoadBalancer``: the gRPC simple consumer's receive rotation (rocketmq-client-java
5.0.8, ``org/apache/rocketmq/client/java/impl/consumer/SubscriptionLoadBalancer.java``).

A simple consumer allocates nothing: each ``receive`` takes the next readable master queue of
the topic's route (``takeMessageQueue``: ``queues[IntMath.mod(index.getAndIncrement(), n)]``),
the counter starting at ``RandomUtils.nextInt(0, Integer.MAX_VALUE)`` and kept across route
updates. The Proxy's route numbers each broker's queues ``0 ..`` (``RouteActivity.
genMessageQueueFromQueueData``), so a broker comes up once per readable queue it has; the Proxy
then pops from that queue's broker whatever the queue id (``ReceiveMessageActivity``'s
``ReceiveMessageQueueSelector`` takes the broker's acting queue, id -1: any queue of the broker;
rocketmq-proxy 5.3.3 and 5.5.0). Facts: ``grpc.simple-consumer-receive-rotation``,
``proxy.receive-pops-named-broker-any-queue`` (``book/facts.toml``).
"""

from __future__ import annotations

from collections.abc import Iterable

from rocketlb_core.grpc.publishing import MASTER_BROKER_ID, AtomicCounter, GrpcQueue, _mod


class SubscriptionLoadBalancer:
    """The simple consumer's balancer for one topic."""

    def __init__(self, queues: Iterable[GrpcQueue], index: int | AtomicCounter) -> None:
        self.counter = index if isinstance(index, AtomicCounter) else AtomicCounter(index)
        self.queues = [q for q in queues
                       if q.permission.readable and q.broker_id == MASTER_BROKER_ID]
        if not self.queues:
            raise ValueError("No readable message queue found")

    def update(self, queues: Iterable[GrpcQueue]) -> SubscriptionLoadBalancer:
        """A balancer for a new route sharing this one's counter (``update``)."""
        return SubscriptionLoadBalancer(queues, self.counter)

    @property
    def stored(self) -> int:
        return self.counter.value

    def take_message_queue(self) -> GrpcQueue:
        """``takeMessageQueue()``."""
        return self.queues[_mod(self.counter.get_and_increment(), len(self.queues))]
