"""The retry topic: where a clustering push consumer's failed messages go, and who consumes them
(spec 4.1 and 5.1; client 4.9.8, 5.3.3 and 5.5.0 ``DefaultMQPushConsumerImpl.sendMessageBack``,
broker 4.9.7 ``SendMessageProcessor.asyncConsumerSendMsgBack``, 5.3.3 and 5.5.0
``AbstractSendMessageProcessor.consumerSendMsgBack``, and
``TopicConfigManager.createTopicInSendMessageBackMethod``).

A member consuming concurrently in pull mode sends a message its listener failed back to the
broker of the message's queue (``CONSUMER_SEND_MSG_BACK``); when that request fails, it sends the
message to the retry topic as a new message through its client's inner producer, to any broker
of that topic's route (fact consumer.sendback-to-the-queues-broker), and when that fails too it
consumes the message again itself (fact consumer.sendback-failed-consumed-again). The broker
that takes a message back draws one of its group's ``retryQueueNums`` queue ids at random (1 by
default, fact broker.retry-queue-nums-default-1; 4.9.7 draws with ``ThreadLocalRandom``, 5.3.3
and 5.5.0 with a ``Random`` of the processor) and stores the message in ``%RETRY%<group>`` at
that queue id once its delay has passed, or in ``%DLQ%<group>`` once it has been consumed
``maxReconsumeTimes`` times (fact broker.sendback-draws-a-retry-queue). A heartbeat of the group
or a sent-back message creates ``%RETRY%<group>`` on a broker that lacks it, with
``retryQueueNums`` read and write queues; neither changes an existing one's queue count, so
raising ``retryQueueNums`` later changes the ids the broker draws, not the queues the route
lists (fact broker.retry-topic-created-once; ``mqadmin updateTopic`` does change them). The
route lists each broker's retry queues, and the group allocates them like any topic's (fact
consumer.clustering-subscribes-retry-topic): with the default one queue per broker, a group of
more members than brokers leaves the rest without retried messages, and a message drawn into a
queue id the route does not list is read by no member until the route lists it (then from
offset 0: a retry queue without a committed offset starts there, fact
consumer.consume-from-where-only-without-offset).

``retry_share`` plays that out for a group: the messages each broker took back (those it stores
in the retry topic: the fallback through the producer, the dead-letter topic and a member's own
retries are not modelled), the drawn queues (an explicit seed: the brokers' draws are random and
no log states them), the route's retry queues, and each member's share of them.

Standard library only.

>>> back = {"broker-a": 100, "broker-b": 100}
>>> got = retry_share(group="GID", consumers=["c1", "c2", "c3"],
...                   sent_back=back, retry_queue_nums=1, seed=7)
>>> {c: [q.short() for q in qs] for c, qs in got.assignment.items()}
{'c1': ['broker-a/0'], 'c2': ['broker-b/0'], 'c3': []}
>>> got.consumed, got.unlisted
({'c1': 100, 'c2': 100, 'c3': 0}, 0)

Raised to 2 on brokers whose retry topic already had one queue, about half land in queue 1:

>>> got = retry_share(group="GID", consumers=["c1", "c2", "c3"],
...                   sent_back=back, retry_queue_nums=2,
...                   topic_queue_nums=1, seed=7)
>>> got.unlisted, sum(got.consumed.values())
(98, 102)
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rocketlb_core.consumer.base import AllocateStrategy, assign_all
from rocketlb_core.consumer.rebalance import RETRY_PREFIX
from rocketlb_core.limits import MAX_NAME_CHARS, MAX_QUEUES
from rocketlb_core.model import MessageQueue, sort_client_ids, sort_queues

RETRY_QUEUE_NUMS = 1
"""``SubscriptionGroupConfig.retryQueueNums``'s default (fact broker.retry-queue-nums-default-1)."""
MAX_SENT_BACK = 1_000_000_000
"""Messages one broker may be sent back in one ``retry_share`` at most."""
MAX_CONSUMERS = 100_000
"""Members of the group ``retry_share`` takes at most."""


def retry_topic(group: str) -> str:
    """``MixAll.getRetryTopic``: ``%RETRY%`` and the group's name."""
    return RETRY_PREFIX + group


def created_queue_nums(existing: int | None, retry_queue_nums: int) -> int:
    """The queues a broker's retry topic has after a heartbeat or a sent-back message asked for
    it with ``retry_queue_nums``: an existing topic (``existing`` queues) is returned as it is,
    a missing one is created with ``retry_queue_nums`` (fact broker.retry-topic-created-once).

    >>> created_queue_nums(None, 2), created_queue_nums(1, 2)
    (2, 1)
    """
    return retry_queue_nums if existing is None else existing


@dataclass(frozen=True)
class RetryShare:
    """What ``retry_share`` found."""

    queues: list[MessageQueue]
    """The retry topic's queues as the route lists them (sorted as a rebalance sorts them)."""
    assignment: dict[str, list[MessageQueue]]
    """Each member's retry queues."""
    landed: dict[MessageQueue, int]
    """Messages stored per queue id the brokers drew, listed or not."""
    consumed: dict[str, int]
    """Messages each member consumes: those landed in its queues."""
    unlisted: int
    """Messages landed in a queue id the route does not list: read by no member until the route
    lists it."""


def _count(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name}: an integer from {low} to {high} expected, got {value!r:.40}")
    return value


def _name(field: str, value: object) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME_CHARS \
            or not value.isprintable():
        raise ValueError(f"{field}: a printable name of 1 to {MAX_NAME_CHARS} characters "
                         f"expected, got {value!r:.40}")
    return value


def _per_broker(name: str, value: object, brokers: Sequence[str]) -> dict[str, int]:
    """``value`` (a queue count, or one per broker of ``brokers``) as one per broker."""
    if isinstance(value, int):
        n = _count(name, value, 1, MAX_QUEUES)
        return dict.fromkeys(brokers, n)
    if isinstance(value, Mapping) and set(value) == set(brokers):
        return {b: _count(f"{name}[{b!r}]", value[b], 1, MAX_QUEUES) for b in brokers}
    raise ValueError(f"{name}: a queue count, or one per broker of sent_back, expected")


def retry_share(*, group: str, consumers: Sequence[str], sent_back: Mapping[str, int],
                retry_queue_nums: int | Mapping[str, int] = RETRY_QUEUE_NUMS,
                topic_queue_nums: int | Mapping[str, int] | None = None,
                strategy: AllocateStrategy | None = None, seed: int) -> RetryShare:
    """The retried messages of ``group`` and who consumes them (see the module docstring).

    ``sent_back``: per broker, how many messages the group's members sent back to it (the
    broker of each failed message's queue); ``retry_queue_nums``: the group's setting when they
    were sent back (one for every broker, or one per broker: each broker has its own group
    config, and ``mqadmin updateSubGroup -b`` sets one broker's); ``topic_queue_nums``: each
    broker's retry topic's queue count (``None``: created with ``retry_queue_nums``; one number
    for every broker, or one per broker);
    ``strategy``: the group's allocation (AVG by default); ``seed``: the brokers' draws. Each
    argument is checked, and a bad one is a ``ValueError`` naming it."""
    from rocketlb_core.consumer.strategies import avg

    _name("group", group)
    _count("seed", seed, 0, (1 << 64) - 1)
    if not isinstance(consumers, Sequence) or isinstance(consumers, str) \
            or not 0 < len(consumers) <= MAX_CONSUMERS:
        raise ValueError(f"consumers: 1 to {MAX_CONSUMERS} member ids expected")
    ids = [_name(f"consumers[{i}]", c) for i, c in enumerate(consumers)]
    if not isinstance(sent_back, Mapping) or not 0 < len(sent_back) <= MAX_QUEUES:
        raise ValueError(f"sent_back: 1 to {MAX_QUEUES} brokers expected")
    brokers = sorted(_name("sent_back", b) for b in sent_back)
    counts = {b: _count(f"sent_back[{b!r}]", sent_back[b], 0, MAX_SENT_BACK) for b in brokers}
    rqs = _per_broker("retry_queue_nums", retry_queue_nums, brokers)
    sizes = _per_broker("topic_queue_nums",
                        rqs if topic_queue_nums is None else topic_queue_nums, brokers)
    topic = retry_topic(group)
    rng = random.Random(seed)
    landed: dict[MessageQueue, int] = {}
    for b in brokers:
        for _ in range(counts[b]):
            q = MessageQueue(topic, b, rng.randrange(rqs[b]))
            landed[q] = landed.get(q, 0) + 1
    listed = sort_queues(MessageQueue(topic, b, i) for b in brokers for i in range(sizes[b]))
    assignment = assign_all(strategy or avg(), group, listed, sort_client_ids(ids))
    owner = {q: c for c, qs in assignment.items() for q in qs}
    consumed = dict.fromkeys(assignment, 0)
    unlisted = 0
    for q, k in landed.items():
        if q in owner:
            consumed[owner[q]] += k
        else:
            unlisted += k
    return RetryShare(listed, {c: list(qs) for c, qs in assignment.items()},
                      dict(sorted(landed.items())), consumed, unlisted)
