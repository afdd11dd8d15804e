"""Exercises that check themselves: the reader types an answer, the package computes the truth
for the exercise's parameters, and the page says right or wrong (book chapters 2, 3 and 5).

Each exercise is a named function of its parameters returning the true answer as text; a
notebook names the exercise and gives the parameters (``rocketlb_core.viz.widgets.exercise``).
Answers compare after normalisation: case, spaces and a trailing "ms" do not matter; numbers
compare as numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from rocketlb_core.consumer.base import assign_all, rebalance_view
from rocketlb_core.consumer.registry import REGISTRY, make
from rocketlb_core.interactive.fields import RequestError, choice, integer, items, table
from rocketlb_core.interactive.playground import LINES
from rocketlb_core.model import MessageQueue, QueueData
from rocketlb_core.numbers import NumberError, parse_float
from rocketlb_core.producer import MQFaultStrategy, ProducerLine, ThreadLocalIndex
from rocketlb_core.producer.publish_info import TopicPublishInfo


def _brokers(p: Mapping[str, Any]) -> list[tuple[str, int]]:
    out = []
    for i, b in enumerate(items(p, "brokers", "params", low=1, high=4)):
        b = table(b, f"params.brokers[{i}]")
        name = b.get("name")
        if not isinstance(name, str) or not name:
            raise RequestError(f"params.brokers[{i}].name: expected a broker name")
        out.append((name, integer(b, "queues", f"params.brokers[{i}]", low=1, high=16)))
    return out


def nth_pick(p: Mapping[str, Any]) -> str:
    """The queue (``broker/id``) of the ``n``-th send of a producer with the fault strategy off,
    every broker healthy, its counter starting at ``counter`` (spec 2.1, 2.2)."""
    line = ProducerLine.parse(choice(p, "line", "params", LINES))
    brokers = _brokers(p)
    queues = [MessageQueue("T", b, i) for b, n in brokers for i in range(n)]
    tp = TopicPublishInfo(queues, [QueueData(b, n, n) for b, n in brokers],
                          ThreadLocalIndex(line, stored=integer(p, "counter", "params",
                                                                low=0, high=2**31 - 1)))
    strategy = MQFaultStrategy(line)
    q = queues[0]
    for _ in range(integer(p, "n", "params", low=1, high=10_000)):
        q = strategy.select(tp, None, 0)
    return q.short()


def not_available_ms(p: Mapping[str, Any]) -> str:
    """How long (ms) a broker is avoided after a send that took ``latency_ms`` (``isolation``:
    the send failed), with the fault strategy on (spec 2.3, 2.4)."""
    line = ProducerLine.parse(choice(p, "line", "params", LINES))
    latency = integer(p, "latency_ms", "params", low=0, high=10**6)
    strategy = MQFaultStrategy(line, send_latency_fault_enable=True)
    isolation = choice(p, "isolation", "params", ("yes", "no"), "no") == "yes"
    return str(strategy.compute_not_available_duration(
        strategy.isolation_latency if isolation else latency))


def _group(p: Mapping[str, Any]) -> tuple[list[MessageQueue], list[str]]:
    brokers = integer(p, "brokers", "params", low=1, high=8)
    per = integer(p, "queues", "params", low=1, high=64)
    consumers = integer(p, "consumers", "params", low=1, high=256)
    return rebalance_view([MessageQueue("T", f"broker-{chr(97 + b)}", i)
                           for b in range(brokers) for i in range(per)],
                          [f"10.0.0.{k + 1}@c{k + 1}" for k in range(consumers)])


def _split(p: Mapping[str, Any]) -> dict[str, list[MessageQueue]]:
    strategy = choice(p, "strategy", "params", tuple(n for n, r in REGISTRY.items()
                                                     if r.sweep == {} and not r.uses_rooms))
    mq_all, cid_all = _group(p)
    return assign_all(make(strategy), "g", mq_all, cid_all)


def share_of(p: Mapping[str, Any]) -> str:
    """How many queues consumer ``c<k>`` gets (its client id ``10.0.0.<k>@c<k>``)."""
    split = _split(p)
    k = integer(p, "k", "params", low=1, high=256)
    return str(len(split.get(f"10.0.0.{k}@c{k}", [])))


def idle_count(p: Mapping[str, Any]) -> str:
    """How many consumers get no queue at all."""
    return str(sum(1 for share in _split(p).values() if not share))


EXERCISES: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "nth_pick": nth_pick,
    "not_available_ms": not_available_ms,
    "share_of": share_of,
    "idle_count": idle_count,
}


def normalise(answer: str) -> str:
    text = re.sub(r"\s+", "", answer.strip().lower())
    text = re.sub(r"ms$", "", text)
    try:          # a number as a reader types it: 1,000 or 1_000; ASCII digits, finite
        number = parse_float(text.replace(",", "").replace("_", ""), -1e15, 1e15)
    except NumberError:
        return text
    return str(int(number)) if number == int(number) else str(number)


def check(request: Mapping[str, Any]) -> dict[str, Any]:
    """``{"exercise": name, "params": {...}, "answer": "..."}`` -> right or wrong, and the truth
    when the reader asks for it (``"reveal": true``)."""
    req = table(request, "request")
    name = choice(req, "exercise", "request", tuple(EXERCISES))
    truth = EXERCISES[name](table(req.get("params"), "params"))
    answer = req.get("answer", "")
    if not isinstance(answer, str) or len(answer) > 200:
        raise RequestError("request.answer: expected a short text")
    right = bool(answer.strip()) and normalise(answer) == normalise(truth)
    out: dict[str, Any] = {"right": right, "answered": bool(answer.strip())}
    if right or req.get("reveal") is True:
        out["truth"] = truth
    return out
