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
``consumer/pop.py``, and ``broker_query_assignment`` below). A queue data whose broker is
missing from the route's broker datas is skipped; one whose broker has no master would make
the Proxy fail (``NullPointerException`` building the protobuf): ``ValueError`` here. Before
any of this the Proxy maps every broker data of the route (``buildBrokerMap``, a later broker
data of the same name replacing an earlier one), turning each broker id into an ``int``
(``Math.toIntExact``): an id past 2^31 - 1, on any broker, even a slave or one no queue data
names, fails the whole request (``ArithmeticException: integer overflow``, ``ArithmeticError``
here); and each broker's endpoints are its addresses in order with the scheme of the last
(``IPv4`` when it has none): ``proxy_endpoints``.

Checked bit-exact by ``tests/vectors/grpc/proxy-assignment-{5.3.3,5.5.0}.jsonl.gz``, made by the
real ``RouteActivity`` of each release (``rocketlb_core.vectorgen.proxy``), replayed by
``grpc.conformance``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from rocketlb_core.consumer import strategies
from rocketlb_core.consumer.base import AllocateStrategy, rebalance_view
from rocketlb_core.consumer.pop import allocate4pop
from rocketlb_core.grpc.publishing import MASTER_BROKER_ID, GrpcQueue, Permission
from rocketlb_core.javamath import JavaNullPointerError
from rocketlb_core.model import MessageQueue

RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
LMQ_PREFIX, LMQ_QUEUE_ID = "%LMQ%", 0  # MixAll

PERM_READ, PERM_WRITE = 4, 2          # PermName.PERM_READ, PERM_WRITE
INT_MIN, INT_MAX = -(2**31), 2**31 - 1

# Does the release's Proxy read the group's ``liteBindTopic`` (``SubscriptionGroupConfig`` has no
# such field in 5.3.3; 5.5.0's ``queryAssignment`` reads it)?
PROXY_READS_LITE_BIND_TOPIC = {"5.3.3": False, "5.5.0": True}


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


def proxy_endpoints(addresses: Sequence[tuple[str, str, int]]) -> str:
    """A broker's endpoints as the Proxy's ``buildBrokerMap`` makes them, written
    ``"SCHEME:host:port,host:port"``: ``addresses`` are ``(scheme, host, port)`` in the route's
    order (``IPv4``, ``IPv6``, ``DOMAIN_NAME``); the scheme is the last address's, ``IPv4`` when
    there is none.

    >>> proxy_endpoints([("IPv4", "10.0.0.1", 8081), ("DOMAIN_NAME", "p", 8081)])
    'DOMAIN_NAME:10.0.0.1:8081,p:8081'
    >>> proxy_endpoints([])
    'IPv4:'
    """
    scheme = addresses[-1][0] if addresses else "IPv4"
    return scheme + ":" + ",".join(f"{host}:{port}" for _, host, port in addresses)


def proxy_group_flags(release: str, consume_message_orderly: bool | None,
                      lite_bind_topic: str | None = None) -> tuple[bool, bool]:
    """``(fifo, lite)`` as ``release``'s Proxy reads the group's ``SubscriptionGroupConfig``
    (``consume_message_orderly`` ``None``: the Proxy has no config for the group, so neither).
    5.3.3 never sees a lite binding; 5.5.0: ``StringUtils.isNotEmpty(liteBindTopic)``.

    >>> proxy_group_flags("5.3.3", True, "lite-1"), proxy_group_flags("5.5.0", True, "lite-1")
    ((True, False), (True, True))
    """
    try:
        reads_lite = PROXY_READS_LITE_BIND_TOPIC[release]
    except KeyError:
        raise ValueError(f"no Proxy rules for release {release!r} (known: "
                         f"{', '.join(PROXY_READS_LITE_BIND_TOPIC)})") from None
    if consume_message_orderly is None:
        return False, False
    return bool(consume_message_orderly), reads_lite and bool(lite_bind_topic)


def proxy_broker_map(broker_datas: Iterable[tuple[str, Mapping[int, str]]]
                     ) -> dict[str, dict[int, str]]:
    """``RouteActivity.buildBrokerMap``: broker name -> {broker id: endpoints}, a later broker
    data of a name replacing an earlier one; a broker id outside ``int`` raises
    ``ArithmeticError`` (``Math.toIntExact``)."""
    out: dict[str, dict[int, str]] = {}
    for name, ids in broker_datas:
        for broker_id in ids:
            if not INT_MIN <= broker_id <= INT_MAX:
                raise ArithmeticError("integer overflow")
        out[name] = dict(ids)
    return out


def proxy_query_assignment(topic: str, queue_datas: Sequence[tuple[str, int, int]],
                           brokers: Mapping[str, Mapping[int, str]]
                           | Sequence[tuple[str, Mapping[int, str]]], *, fifo: bool = False,
                           lite: bool = False) -> list[GrpcQueue] | None:
    """The assignment every consumer of the group gets, or ``None`` for ``FORBIDDEN``.

    ``queue_datas``: ``(brokerName, readQueueNums, perm)`` in the route's order; ``brokers``:
    broker name -> {broker id: endpoints}, or the route's broker datas as
    ``(brokerName, {broker id: endpoints})`` in its order (``proxy_broker_map``: duplicates and
    broker ids past ``int``); ``fifo``: the group's ``consumeMessageOrderly``; ``lite``: the
    group has a ``liteBindTopic`` (5.5.0; always ``False`` on 5.3.3: ``proxy_group_flags``).

    >>> [q.queue_id for q in proxy_query_assignment("T", [("b", 4, 6)], {"b": {0: "p:8081"}})]
    [-1]
    """
    broker_map = proxy_broker_map(brokers.items() if isinstance(brokers, Mapping) else brokers)
    out: list[GrpcQueue] = []
    for broker_name, read_queue_nums, perm in queue_datas:
        if not perm & PERM_READ or read_queue_nums <= 0:
            continue
        ids = broker_map.get(broker_name)
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


def broker_query_assignment(topic: str, consumer_group: str, client_id: str,
                            strategy_name: str, mq_set: Iterable[MessageQueue] | None,
                            cid_all: Sequence[str] | None, *, model: str = "CLUSTERING",
                            mode: str | None = None, pop_share_queue_num: int | None = None,
                            default_mode: str = "PULL", default_pop_share_queue_num: int = -1,
                            server_load_balancer_enable: bool = True, broker_name: str = "",
                            ) -> tuple[set[MessageQueue] | None, str]:
    """The broker's answer to a remoting consumer's ``QUERY_ASSIGNMENT`` (a push consumer with
    ``clientRebalance`` off; rocketmq-broker 5.3.3 and 5.5.0, byte-identical
    ``broker/processor/QueryAssignmentProcessor.java``: ``queryAssignment``,
    ``doLoadBalance``): (the client's queues, or ``None`` for "keep what you have"; the mode
    every assignment carries).

    ``mode``/``pop_share_queue_num``: what ``SET_MESSAGE_REQUEST_MODE`` stored for (topic,
    group), ``None`` when nothing was: a retry topic is then ``PULL``, others the broker's
    ``defaultMessageRequestMode`` (``PULL``), with ``defaultPopShareQueueNum`` (-1) in ``POP``
    mode. ``mq_set``: the broker's own route cache for the topic; ``cid_all``: its own consumer
    list of the group. Only ``AVG`` and ``AVG_BY_CIRCLE`` are known by name (another gives
    ``None``); ``POP`` mode allocates with ``allocate4Pop`` (``consumer/pop.py``); an
    exception of the strategy gives ``None``. A light message queue topic (``%LMQ%...``,
    clustering) has one queue, ``LMQ_QUEUE_ID`` on the answering broker (``broker_name``), in
    place of the route cache. Checked bit-exact by
    ``tests/vectors/grpc/broker-assignment-{5.3.3,5.5.0}.jsonl.gz`` (the released processor's
    ``processRequest``: ``rocketlb_core.vectorgen.proxy``).

    >>> q = [MessageQueue("T", "b", i) for i in range(4)]
    >>> sorted(x.queue_id for x in broker_query_assignment("T", "g", "c1", "AVG", q,
    ...                                                    ["c2", "c1"])[0])
    [0, 1]
    >>> broker_query_assignment("T", "g", "c1", "AVG", q, ["c1", "c2"], mode="POP")[0] == {
    ...     MessageQueue("T", "b", -1)}
    True
    """
    if mode is None:
        mode = "PULL" if topic.startswith(RETRY_GROUP_TOPIC_PREFIX) else default_mode
        pop_share_queue_num = default_pop_share_queue_num if mode == "POP" else 0
    if model == "BROADCASTING":
        return (None if mq_set is None else set(mq_set)), mode
    if topic.startswith(LMQ_PREFIX):
        mq_set = [MessageQueue(topic, broker_name, LMQ_QUEUE_ID)]
    if mq_set is None:
        return None, mode
    if not server_load_balancer_enable:
        return set(mq_set), mode
    if cid_all is None:
        return None, mode
    known: dict[str, Callable[[], AllocateStrategy]] = {
        "AVG": strategies.avg, "AVG_BY_CIRCLE": strategies.avg_by_circle}
    factory = known.get(strategy_name)
    if factory is None:
        return None, mode
    mq_all, cids = rebalance_view(set(mq_set), list(cid_all))
    result: list[MessageQueue] | None
    try:
        if mode == "POP":
            result = allocate4pop(factory(), consumer_group, client_id, mq_all, cids,
                                  pop_share_queue_num or 0)
        else:
            result = factory().allocate(consumer_group, client_id, mq_all, cids)
    except (ValueError, ArithmeticError, JavaNullPointerError):
        return None, mode
    return set(result or ()), mode
