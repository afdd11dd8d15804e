"""Where the Proxy puts a gRPC producer's message (rocketmq-proxy 5.3.3 and 5.5.0, cluster mode):
issue 34.

The gRPC client chooses a queue for every attempt (``grpc.publishing``, ``grpc.send``) and sends
the message to that queue's endpoints, which behind a Proxy are the Proxy's. The Proxy does not
use the client's queue: ``SendMessageActivity.sendMessage`` hands ``ProducerProcessor.sendMessage``
a ``SendMessageQueueSelector`` (``proxy/grpc/v2/producer/SendMessageActivity.java``) that asks the
topic's current ``MessageQueueView`` (``TopicRouteService.getCurrentMessageQueueView``) for its
write ``MessageQueueSelector`` (``proxy/service/route/MessageQueueSelector.java``):

* the write queues (``buildWrite``, ``getQueues()``) are the route's writable queue datas
  (``PermName.isWriteable``) on brokers with a master (``getMasterAddr``: broker id 0), every
  queue id ``0 .. writeQueueNums - 1``, a ``HashSet`` (a queue data twice counts once),
  **sorted** by ``MessageQueue.compareTo`` (topic, broker name as Java compares strings: UTF-16
  code units, then queue id), not in the route's order (``proxy_write_queues``). A route with an
  ``orderTopicConf`` is built from that string instead (not modelled: the name server sets it
  only from its ``ORDER_TOPIC_CONFIG`` KV entries);
* the **sharding key** (``proxy_sharding_key``): the message group of a request carrying exactly
  one message (``getMessagesCount() == 1``; a batch has none); on 5.5.0, if that group is blank
  (commons-lang3 ``StringUtils.isBlank``), the message's lite topic instead (5.3.3's protocol has
  no lite topic). Priority (5.5.0's ``SystemProperties.priority``) does not enter the selection;
* a non-empty key (``StringUtils.isNotEmpty``) picks
  ``queues[Hashing.consistentHash(key.hashCode(), n)]`` (``proxy_group_queue``: Guava
  32.0.1-jre's jump consistent hash, ``javamath.guava_consistent_hash``, of Java's
  ``String.hashCode`` widened to ``long``), the counter untouched: the client's SipHash-2-4 queue
  (``grpc.siphash``) plays no part;
* no key: ``selectOneByPipeline(false)``, which with ``sendLatencyEnable`` off (``ProxyConfig``'s
  default; 5.3.3 a ``MQFaultStrategy``, 5.5.0 its penalizers) is ``selectOne(false)``:
  ``queues[IntMath.mod(queueIndex.getAndIncrement(), n)]``, one ``AtomicInteger`` started at
  ``new Random().nextInt()``: one step per attempt that reaches the Proxy, whoever sends;
* no write queue: ``consistentHash`` throws (``buckets must be positive``), ``selectOne`` returns
  ``null``; the selector answers ``null`` either way and the send fails ``FORBIDDEN`` "no writable
  queue" (``ProducerProcessor.sendMessage``);
* the selector belongs to the topic's ``MessageQueueView``, which ``TopicRouteService`` keeps in
  a Caffeine cache with ``refreshAfterWrite(topicRouteServiceCacheRefreshSeconds)`` (20 s): the
  first access 20 s after a load reloads the route, and the new view has a new selector and a
  new random counter (the route need not have changed). A group's queue depends only on the
  group and the sorted write queues, so it moves only when the route's writable queues change.

Before selecting, ``buildMessage`` rejects a group that is blank but not empty
(``validateMessageGroup``: ``ILLEGAL_MESSAGE_GROUP``, both releases), so on 5.5.0 a lite topic
is the key only for a message with no group; the selector itself (``ProxyQueueSelector.select``)
is modelled as released, blank groups included.

So behind a Proxy the client's balancer decides nothing about where a message is stored: the
receipt's queue (``SendReceiptImpl.getMessageQueue()``) is the queue the client chose, and the
message is on the Proxy's. The client's retry still matters for a message without a group: each
attempt is one more step of the Proxy's counter. Checked against the released selector class of
each release: ``tests/vectors/grpc/proxy-group-queue-{5.3.3,5.5.0}.jsonl.gz``
(``rocketlb_core.vectorgen.proxy``), replayed by ``grpc.conformance``.

Standard library only (core).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rocketlb_core.javamath import (
    guava_consistent_hash,
    java_is_blank,
    java_string_hash,
    java_string_key,
    wrap32,
)

PROXY_READS_LITE_TOPIC = {"5.3.3": False, "5.5.0": True}
"""Does the release's ``SendMessageQueueSelector`` fall back to the message's lite topic?"""

REFRESH_MS = 20_000
"""``topicRouteServiceCacheRefreshSeconds`` (ProxyConfig 5.3.3): a view lives at least this long."""

_WRITABLE = 2          # PermName.PERM_WRITE


@dataclass(frozen=True, order=True)
class ProxyQueue:
    """A queue of the Proxy's selector (the topic is one: broker name, queue id). Its own order
    is Python's; the selector's is ``java_order``."""

    broker: str
    queue_id: int

    def short(self) -> list[object]:
        return [self.broker, self.queue_id]

    def java_order(self) -> tuple[bytes, int]:
        """``MessageQueue.compareTo`` within one topic: broker name by UTF-16 code units."""
        return java_string_key(self.broker), self.queue_id


def proxy_write_queues(queue_datas: Iterable[tuple[str, int, int]]) -> list[ProxyQueue]:
    """``MessageQueueSelector.buildWrite``: ``(broker name, write queue nums, perm)`` of each
    queue data of the route whose broker has a master; every writable one's queues, once each,
    sorted as ``MessageQueue.compareTo`` sorts them (broker names by UTF-16 code units).

    >>> [q.broker for q in proxy_write_queues([("b-\uff21", 1, 6), ("b-\U0001f680", 1, 6)])]
    ['b-\U0001f680', 'b-\uff21']
    """
    queues = {ProxyQueue(broker, i) for broker, write_nums, perm in queue_datas
              if perm & _WRITABLE for i in range(write_nums)}
    return sorted(queues, key=ProxyQueue.java_order)


def proxy_sharding_key(message_group: str, *, lite_topic: str = "", messages: int = 1,
                       release: str = "5.3.3") -> str:
    """``SendMessageQueueSelector.select``'s sharding key ("" for none): the group of a
    one-message request; on 5.5.0 the lite topic when that group is blank.

    >>> proxy_sharding_key("order-1"), proxy_sharding_key("order-1", messages=2)
    ('order-1', '')
    >>> [proxy_sharding_key(" ", lite_topic="l", release=r) for r in ("5.3.3", "5.5.0")]
    [' ', 'l']
    """
    try:
        reads_lite = PROXY_READS_LITE_TOPIC[release]
    except KeyError:
        raise ValueError(f"no Proxy rules for release {release!r} (known: "
                         f"{', '.join(PROXY_READS_LITE_TOPIC)})") from None
    if messages != 1:
        return ""
    if reads_lite and java_is_blank(message_group):
        return lite_topic
    return message_group


def proxy_group_queue(queues: list[ProxyQueue], sharding_key: str) -> ProxyQueue:
    """``writeQueues.get(Hashing.consistentHash(shardingKey.hashCode(), writeQueues.size()))``:
    ``ValueError`` when there is no write queue (Guava's ``IllegalArgumentException``).

    >>> qs = proxy_write_queues([("broker-a", 4, 6), ("broker-b", 4, 6)])
    >>> proxy_group_queue(qs, "order-1"), proxy_group_queue(qs[:2], "order-1")
    (ProxyQueue(broker='broker-a', queue_id=3), ProxyQueue(broker='broker-a', queue_id=0))
    """
    return queues[guava_consistent_hash(java_string_hash(sharding_key), len(queues))]


def groups_moved(groups: Iterable[str], before: list[ProxyQueue], after: list[ProxyQueue]
                 ) -> int:
    """How many of ``groups`` (message groups, the sharding keys) ``proxy_group_queue`` puts on
    another queue once the write queues change from ``before`` to ``after`` (their order
    across the change is lost; book chapter 11). Guava's jump hash keeps a key on its bucket
    when buckets are only added or taken from the end, so which broker leaves matters:

    >>> qs = proxy_write_queues([("broker-a", 4, 6), ("broker-b", 4, 6)])
    >>> keys = [f"order-{i}" for i in range(1000)]
    >>> groups_moved(keys, qs, qs[:4]) <= sum(proxy_group_queue(qs, k) in qs[4:] for k in keys)
    True
    >>> groups_moved(keys, qs, qs[4:]) > groups_moved(keys, qs, qs[:4])
    True
    """
    return sum(proxy_group_queue(before, g) != proxy_group_queue(after, g) for g in groups)


class ProxyQueueSelector:
    """One ``MessageQueueSelector``'s write side: its queues and its counter."""

    def __init__(self, queues: Iterable[ProxyQueue], index: int) -> None:
        self.queues = list(queues)
        if not self.queues:
            raise ValueError("no writable queue")
        self.index = wrap32(index)

    def select_one(self) -> ProxyQueue:
        """``selectOne(false)``: ``queues[IntMath.mod(queueIndex.getAndIncrement(), n)]``."""
        q = self.queues[self.index % len(self.queues)]
        self.index = wrap32(self.index + 1)
        return q

    def select(self, message_group: str = "", *, lite_topic: str = "", messages: int = 1,
               release: str = "5.3.3") -> ProxyQueue:
        """``SendMessageQueueSelector.select``: the sharding key's queue, or ``select_one``."""
        key = proxy_sharding_key(message_group, lite_topic=lite_topic, messages=messages,
                                 release=release)
        return proxy_group_queue(self.queues, key) if key else self.select_one()
