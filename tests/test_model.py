"""The data model: MessageQueue order and text, the two route conversions (spec 1.1, 1.3, 1.4)."""

from __future__ import annotations

import random

from rocketlb_core.javamath import INT_MAX, INT_MIN
from rocketlb_core.model import (
    PERM_READ,
    PERM_WRITE,
    BrokerData,
    MessageQueue,
    QueueData,
    TopicRoute,
    compare_queues,
    perm_label,
    publish_queues,
    sort_client_ids,
    sort_queues,
    subscribe_queues,
)

RW = PERM_READ | PERM_WRITE


def _route(*qds: QueueData, masters: tuple[str, ...] | None = None,
           order_conf: str | None = None) -> TopicRoute:
    names = masters if masters is not None else tuple(q.broker_name for q in qds)
    return TopicRoute(tuple(qds), tuple(BrokerData(n, {0: f"{n}:10911"}) for n in names),
                      order_conf)


def test_text_form_is_javas() -> None:
    mq = MessageQueue("TopicTest", "broker-a", 3)
    assert str(mq) == "MessageQueue [topic=TopicTest, brokerName=broker-a, queueId=3]"


def test_order_is_topic_then_broker_then_queue_id() -> None:
    queues = [MessageQueue(t, b, q) for t in ("T2", "T1") for b in ("b", "a") for q in (2, 0, 1)]
    random.Random(7).shuffle(queues)
    ordered = sort_queues(queues)
    assert [(q.topic, q.broker_name, q.queue_id) for q in ordered[:4]] == [
        ("T1", "a", 0), ("T1", "a", 1), ("T1", "a", 2), ("T1", "b", 0)]
    assert ordered == sorted(queues)   # __lt__ agrees with the sort helper


def test_queue_id_comparison_wraps_like_java() -> None:
    # compareTo subtracts the ids in 32-bit arithmetic: INT_MAX - (-1) overflows to negative.
    big, neg = MessageQueue("t", "b", INT_MAX), MessageQueue("t", "b", -1)
    assert compare_queues(big, neg) == -1
    assert compare_queues(MessageQueue("t", "b", INT_MIN), MessageQueue("t", "b", 1)) == 1
    # The wrapped comparator is not antisymmetric (big < neg and neg < big). Java's TimSort, like
    # Python's, tests compare(a[1], a[0]) < 0 on a two-element run, so both give [neg, big].
    assert compare_queues(neg, big) == -1
    assert sort_queues([big, neg]) == [neg, big]


def test_client_ids_sort_by_utf16_units() -> None:
    assert sort_client_ids(["\uff21@x", "\U0001f600@x", "10.0.0.1@a"]) == [
        "10.0.0.1@a", "\U0001f600@x", "\uff21@x"]


def test_publish_list_sorts_brokers_and_keeps_writable_masters_only() -> None:
    route = _route(QueueData("broker-b", 2, 2, RW), QueueData("broker-a", 4, 3, RW),
                   QueueData("broker-c", 4, 4, PERM_READ), QueueData("broker-d", 4, 2, PERM_WRITE),
                   QueueData("broker-e", 4, 4, RW), masters=("broker-a", "broker-b", "broker-c",
                                                               "broker-d"))
    assert [q.short() for q in publish_queues("T", route)] == [
        "broker-a/0", "broker-a/1", "broker-a/2", "broker-b/0", "broker-b/1",
        "broker-d/0", "broker-d/1"]   # c read-only, e has no master


def test_order_topic_conf_wins() -> None:
    route = _route(QueueData("broker-a", 4, 4, RW), order_conf="broker-b:2;broker-a:1")
    assert [q.short() for q in publish_queues("T", route)] == ["broker-b/0", "broker-b/1",
                                                               "broker-a/0"]


def test_subscribe_set_takes_readable_brokers_without_master_check() -> None:
    route = _route(QueueData("broker-a", 3, 1, RW), QueueData("broker-b", 2, 2, PERM_WRITE),
                   QueueData("broker-c", 2, 0, PERM_READ), masters=())
    assert sorted(q.short() for q in subscribe_queues("T", route)) == [
        "broker-a/0", "broker-a/1", "broker-a/2", "broker-c/0", "broker-c/1"]
    assert publish_queues("T", route) == []


def test_perm_labels() -> None:
    assert [perm_label(p) for p in (6, 4, 2, 0, 7)] == ["RW", "R-", "-W", "--", "RW"]
