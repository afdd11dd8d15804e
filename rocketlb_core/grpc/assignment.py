"""What the Proxy answers a gRPC push consumer's ``QueryAssignment``: the assignment is
computed server side, and by the Proxy alone (rocketmq-proxy 5.3.3 and 5.5.0,
``org/apache/rocketmq/proxy/grpc/v2/route/RouteActivity.java``, ``queryAssignment``).

The gRPC ``PushConsumerImpl`` asks every 5 s (``scanAssignments``) and consumes what it is given.
The Proxy does not allocate: for each queue data of the topic's route (in the route's order)
that is readable with ``readQueueNums > 0`` and whose broker has a master (id 0), every consumer
of the group gets

* one queue with id ``-1`` ("any queue of this broker": the broker's pop picks the queue), or
* when the group consumes orderly (``consumeMessageOrderly``), every read queue ``0 ..
  readQueueNums - 1`` of the broker (5.5.0: not for a group bound to a lite topic,
  ``liteBindTopic``, which gets the ``-1`` queue),

with the permission of the queue data (``convertToPermission``). No readable queue: status
``FORBIDDEN``, "no readable queue". So every push consumer of a group receives the same
assignment, and message-granularity balancing happens in the brokers' pop (``allocate4Pop`` in
``QueryAssignmentProcessor`` serves remoting clients with ``clientRebalance=false`` instead;
``consumer/pop.py``). A queue data whose broker is missing from the route's broker datas is
skipped; one whose broker has no master would make the Proxy fail (``NullPointerException``
building the protobuf): ``ValueError`` here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rocketlb_core.grpc.publishing import MASTER_BROKER_ID, GrpcQueue, Permission

PERM_READ, PERM_WRITE = 4, 2          # PermName.PERM_READ, PERM_WRITE


def convert_to_permission(perm: int) -> Permission:
    """``RouteActivity.convertToPermission``."""
    readable, writable = bool(perm & PERM_READ), bool(perm & PERM_WRITE)
    if readable and writable:
        return Permission.READ_WRITE
    if readable:
        return Permission.READ
    if writable:
        return Permission.WRITE
    return Permission.NONE


def proxy_query_assignment(topic: str, queue_datas: Sequence[tuple[str, int, int]],
                           brokers: Mapping[str, Mapping[int, str]], *, fifo: bool = False,
                           lite: bool = False) -> list[GrpcQueue] | None:
    """The assignment every consumer of the group gets, or ``None`` for ``FORBIDDEN``.

    ``queue_datas``: ``(brokerName, readQueueNums, perm)`` in the route's order; ``brokers``:
    broker name -> {broker id: endpoints}; ``fifo``: the group's ``consumeMessageOrderly``;
    ``lite``: the group has a ``liteBindTopic`` (5.5.0; always ``False`` on 5.3.3).

    >>> [q.queue_id for q in proxy_query_assignment("T", [("b", 4, 6)], {"b": {0: "p:8081"}})]
    [-1]
    """
    out: list[GrpcQueue] = []
    for broker_name, read_queue_nums, perm in queue_datas:
        if not perm & PERM_READ or read_queue_nums <= 0:
            continue
        ids = brokers.get(broker_name)
        if ids is None:
            continue
        endpoints = ids.get(MASTER_BROKER_ID)
        if endpoints is None:
            raise ValueError(f"broker {broker_name} has no master (the Proxy fails here)")
        permission = convert_to_permission(perm)
        queue_ids = range(read_queue_nums) if fifo and not lite else (-1,)
        out += [GrpcQueue(topic, broker_name, MASTER_BROKER_ID, endpoints, i, permission)
                for i in queue_ids]
    return out or None
