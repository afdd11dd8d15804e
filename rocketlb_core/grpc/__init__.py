"""The gRPC clients' balancing (apache/rocketmq-clients, ``rocketmq-client-java`` 5.0.8): issue 34.

In RocketMQ 5 the gRPC clients talk to the Proxy, and most of the balancing moves to the server:

* ``siphash``: Guava's ``Hashing.sipHash24()`` (default key), which picks a FIFO message group's
  queue;
* ``publishing``: ``PublishingLoadBalancer`` (one counter from a random start over the writable
  master queues; ``takeMessageQueues(excluded, count)``; ``takeMessageQueueByMessageGroup``);
* ``send``: ``ProducerImpl``'s send retry loop (the candidates taken once, attempt ``n`` on
  candidate ``(n - 1) mod len``, a failed attempt isolates its endpoints; a heartbeat answered OK
  lets them rejoin);
* ``subscription``: ``SubscriptionLoadBalancer``, the simple consumer's receive rotation;
* ``assignment``: what the Proxy answers a push consumer's ``QueryAssignment``
  (``RouteActivity.queryAssignment``, rocketmq-proxy 5.3.3 and 5.5.0), and what a broker
  answers a remoting consumer that rebalances on the server (``QueryAssignmentProcessor``: the
  group's message-request mode, ``allocate4Pop``).

Standard library only (core: it runs in Pyodide). Checked against vectors made from the real
classes (``rocketlb_core.vectorgen.grpc``, ``tests/vectors/grpc/``) by ``grpc.conformance``.
"""

from rocketlb_core.grpc.assignment import (
    broker_query_assignment,
    proxy_query_assignment,
)
from rocketlb_core.grpc.publishing import GrpcQueue, Permission, PublishingLoadBalancer
from rocketlb_core.grpc.send import GrpcAttempt, GrpcSendResult, ProducerSendLoop
from rocketlb_core.grpc.siphash import message_group_index, sip_hash24
from rocketlb_core.grpc.subscription import SubscriptionLoadBalancer

__all__ = [
    "GrpcAttempt",
    "GrpcQueue",
    "GrpcSendResult",
    "Permission",
    "ProducerSendLoop",
    "PublishingLoadBalancer",
    "SubscriptionLoadBalancer",
    "broker_query_assignment",
    "message_group_index",
    "proxy_query_assignment",
    "sip_hash24",
]
