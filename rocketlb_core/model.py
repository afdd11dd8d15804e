"""The shared data model: message queues and topic routes.

Mirrors ``common/message/MessageQueue.java`` and the route holders ``TopicRouteData``,
``QueueData`` and ``BrokerData`` of RocketMQ, and the two route conversions of
``MQClientInstance`` (spec sections 1.1, 1.3 and 1.4):

* a producer turns a route into an ordered *publish list* (``topicRouteData2TopicPublishInfo``):
  writable brokers only, sorted by broker name, or the order-topic configuration when one is set;
* a consumer turns it into an unordered *subscribe set* (``topicRouteData2TopicSubscribeInfo``):
  readable brokers only, ``readQueueNums`` queues each, master presence not checked.

>>> route = TopicRoute(
...     queue_datas=(QueueData("broker-b", 4, 4, PERM_READ | PERM_WRITE),
...                  QueueData("broker-a", 4, 2, PERM_READ | PERM_WRITE),
...                  QueueData("broker-c", 4, 4, PERM_READ)),
...     broker_datas=(BrokerData("broker-a", {0: "10.0.0.1:10911"}),
...                   BrokerData("broker-b", {0: "10.0.0.2:10911"}),
...                   BrokerData("broker-c", {0: "10.0.0.3:10911"})))
>>> " ".join(q.short() for q in publish_queues("TopicTest", route))
'broker-a/0 broker-a/1 broker-b/0 broker-b/1 broker-b/2 broker-b/3'
>>> len(subscribe_queues("TopicTest", route))
12
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rocketlb_core.javamath import java_string_compare, java_string_key, wrap32

PERM_INHERIT = 1
PERM_WRITE = 2
PERM_READ = 4
MASTER_ID = 0


@functools.total_ordering
@dataclass(frozen=True, slots=True)
class MessageQueue:
    """``MessageQueue(topic, brokerName, queueId)`` with Java's equality, order and text form.

    Order is ``compareTo``: topic, then broker name (UTF-16 code-unit order), then the sign of
    ``this.queueId - other.queueId`` computed in 32-bit arithmetic (spec 1.1).
    """

    topic: str
    broker_name: str
    queue_id: int

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, MessageQueue):
            return NotImplemented
        return compare_queues(self, other) < 0

    def __str__(self) -> str:
        return (
            f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, "
            f"queueId={self.queue_id}]"
        )

    def short(self) -> str:
        """``broker/queueId``: the compact label the book's tables and charts use."""
        return f"{self.broker_name}/{self.queue_id}"

    def as_list(self) -> list[str | int]:
        """The conformance vectors' encoding ``[topic, brokerName, queueId]``."""
        return [self.topic, self.broker_name, self.queue_id]


def compare_queues(a: MessageQueue, b: MessageQueue) -> int:
    """``MessageQueue.compareTo`` as -1, 0 or 1 (queue ids compared by a wrapping subtraction)."""
    c = java_string_compare(a.topic, b.topic)
    if c:
        return c
    c = java_string_compare(a.broker_name, b.broker_name)
    if c:
        return c
    d = wrap32(a.queue_id - b.queue_id)
    return (d > 0) - (d < 0)


_SAFE_ID = 2**30


def sort_queues(queues: Iterable[MessageQueue]) -> list[MessageQueue]:
    """Queues sorted as ``Collections.sort`` sorts them in ``RebalanceImpl`` (stable, compareTo).

    A plain key is used unless some queue id is so large that the wrapping subtraction of
    ``compareTo`` could overflow; then the exact comparator decides.
    """
    items = list(queues)
    if all(-_SAFE_ID < q.queue_id < _SAFE_ID for q in items):
        items.sort(key=lambda q: (java_string_key(q.topic), java_string_key(q.broker_name),
                                  q.queue_id))
    else:
        items.sort(key=functools.cmp_to_key(compare_queues))
    return items


def sort_client_ids(ids: Iterable[str]) -> list[str]:
    """Client ids in Java ``String`` order, as ``RebalanceImpl`` sorts ``cidAll``."""
    return sorted(ids, key=java_string_key)


@dataclass(frozen=True, slots=True)
class QueueData:
    """One broker's queue counts and permission for a topic (``QueueData``)."""

    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int = PERM_READ | PERM_WRITE

    @property
    def writable(self) -> bool:
        return bool(self.perm & PERM_WRITE)

    @property
    def readable(self) -> bool:
        return bool(self.perm & PERM_READ)


@dataclass(frozen=True, slots=True)
class BrokerData:
    """A broker group: its name and its addresses by broker id (0 is the master)."""

    broker_name: str
    addrs: Mapping[int, str] = field(default_factory=dict)
    cluster: str = "DefaultCluster"

    @property
    def master_addr(self) -> str | None:
        return self.addrs.get(MASTER_ID)


@dataclass(frozen=True, slots=True)
class TopicRoute:
    """``TopicRouteData``: what a name server answers for one topic."""

    queue_datas: tuple[QueueData, ...]
    broker_datas: tuple[BrokerData, ...] = ()
    order_topic_conf: str | None = None

    def has_master(self, broker_name: str) -> bool:
        return any(b.broker_name == broker_name and b.master_addr for b in self.broker_datas)

    def without_masters(self, names: Iterable[str]) -> TopicRoute:
        """This route with the masters of the brokers ``names`` gone, their slaves kept: what a
        name server answers once a master beside a slave has died (its queue datas stay while a
        slave of it is registered; a producer's list skips a broker without a master, spec
        1.3)."""
        gone = set(names)
        if not gone:
            return self
        return TopicRoute(self.queue_datas, tuple(
            BrokerData(b.broker_name, {k: v for k, v in b.addrs.items() if k != MASTER_ID},
                       b.cluster) if b.broker_name in gone else b
            for b in self.broker_datas), self.order_topic_conf)

    def sorted_queue_datas(self) -> list[QueueData]:
        """The queue datas sorted by broker name, as the producer conversion sorts them in place."""
        return sorted(self.queue_datas, key=lambda qd: java_string_key(qd.broker_name))


RouteStep = (tuple[int, Sequence[QueueData]]
             | tuple[int, Sequence[QueueData], Sequence[str]])
"""A logged route change as the checks take it: (a time, its queue datas[, the brokers it lists
without a master])."""


def route_step(c: RouteStep) -> tuple[int, tuple[QueueData, ...], tuple[str, ...]]:
    """``c`` with its masterless brokers (none when it names none).

    >>> route_step((5, []))
    (5, (), ())
    """
    return (c[0], tuple(c[1]), tuple(c[2]) if len(c) > 2 else ())


def publish_queues(topic: str, route: TopicRoute) -> list[MessageQueue]:
    """The producer's ordered queue list for ``topic`` (spec 1.3, 4.9.x and 5.x).

    With an order-topic configuration ``"brokerA:4;brokerB:8"`` the list follows it literally.
    Otherwise: queue datas sorted by broker name; writable entries whose broker has a master in
    the route contribute queues ``0..writeQueueNums-1``.
    """
    if route.order_topic_conf:
        out: list[MessageQueue] = []
        for item in route.order_topic_conf.split(";"):
            name, _, count = item.partition(":")
            out.extend(MessageQueue(topic, name, i) for i in range(int(count)))
        return out
    return [
        MessageQueue(topic, qd.broker_name, i)
        for qd in route.sorted_queue_datas()
        if qd.writable and route.has_master(qd.broker_name)
        for i in range(qd.write_queue_nums)
    ]


def subscribe_queues(topic: str, route: TopicRoute) -> frozenset[MessageQueue]:
    """The consumer's queue set for ``topic`` (spec 1.4): readable entries, ``readQueueNums``
    queues each."""
    return frozenset(
        MessageQueue(topic, qd.broker_name, i)
        for qd in route.queue_datas
        if qd.readable
        for i in range(qd.read_queue_nums)
    )


def perm_label(perm: int) -> str:
    """RocketMQ's permission spelling: ``RW``, ``R-``, ``-W`` or ``--``."""
    return ("R" if perm & PERM_READ else "-") + ("W" if perm & PERM_WRITE else "-")
