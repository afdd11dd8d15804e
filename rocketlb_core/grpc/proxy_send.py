"""Where the Proxy puts a gRPC producer's message (rocketmq-proxy 5.3.3, cluster mode): issue 34.

The gRPC client chooses a queue for every attempt (``grpc.publishing``, ``grpc.send``) and sends
the message to that queue's endpoints, which behind a Proxy are the Proxy's. The Proxy does not
use the client's queue: ``SendMessageActivity`` hands ``ProducerProcessor.sendMessage`` a
``SendMessageQueueSelector`` (``proxy/grpc/v2/producer/SendMessageActivity.java``) that reads
only the message group, and for a message without one calls the topic's
``MessageQueueSelector.selectOneByPipeline(false)`` (``proxy/service/route/
MessageQueueSelector.java``):

* the write queues are the route's writable queues on brokers with a master, every queue id
  ``0 .. writeQueueNums - 1``, **sorted** (``MessageQueue.compareTo``: topic, broker name, queue
  id), not in the route's order;
* with ``sendLatencyEnable`` off (``ProxyConfig``'s default) it is ``selectOne(false)``:
  ``queues[IntMath.mod(queueIndex.getAndIncrement(), n)]``, one ``AtomicInteger`` started at
  ``new Random().nextInt()``: one step per attempt that reaches the Proxy, whoever sends;
* the selector belongs to the topic's ``MessageQueueView``, which ``TopicRouteService`` keeps in
  a Caffeine cache with ``refreshAfterWrite(topicRouteServiceCacheRefreshSeconds)`` (20 s): the
  first access 20 s after a load reloads the route, and the new view has a new selector and a
  new random counter (the route need not have changed);
* a message with a group goes to ``queues[Hashing.consistentHash(group.hashCode(), n)]``
  (Guava's consistent hash of Java's ``String.hashCode``: not the client's SipHash; not modelled
  here).

So behind a 5.3.3 Proxy the client's balancer decides nothing about where a message without a
group is stored: the receipt's queue (``SendReceiptImpl.getMessageQueue()``) is the queue the
client chose, and the message is on the Proxy's. The client's retry still matters: each attempt
is one more step of the Proxy's counter.

Standard library only (core).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rocketlb_core.javamath import wrap32

REFRESH_MS = 20_000
"""``topicRouteServiceCacheRefreshSeconds`` (ProxyConfig 5.3.3): a view lives at least this long."""

_WRITABLE = 2          # PermName.PERM_WRITE


@dataclass(frozen=True, order=True)
class ProxyQueue:
    """A queue as the Proxy's selector sorts it (the topic is one, so broker then queue id)."""

    broker: str
    queue_id: int

    def short(self) -> list[object]:
        return [self.broker, self.queue_id]


def proxy_write_queues(queue_datas: Iterable[tuple[str, int, int]]) -> list[ProxyQueue]:
    """``MessageQueueSelector.buildWrite``: ``(broker name, write queue nums, perm)`` of each
    queue data of the route whose broker has a master; every writable one's queues, sorted."""
    queues = {ProxyQueue(broker, i) for broker, write_nums, perm in queue_datas
              if perm & _WRITABLE for i in range(write_nums)}
    return sorted(queues)


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
