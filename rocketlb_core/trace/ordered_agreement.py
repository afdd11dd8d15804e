"""An ordered producer's model against a live recording (issue 45: the clients as applications
use them).

A live producer of ``mode = "hash"`` (``live/java/Produce.java``) sends every message with
``send(msg, new SelectMessageQueueByHash(), key)``, key ``k<seq % keys>``. Upstream's
``DefaultMQProducerImpl.sendSelectImpl`` (the same in 4.9.8, 5.3.3 and 5.5.0) asks the
selector for a queue of the publish list (``topicPublishInfo.getMessageQueueList()``, every
write queue of the route, a stopped broker's included), makes one attempt and reports nothing
to the fault table: no retry, no other broker, with ``sendLatencyFaultEnable`` on or off. The
check runs ``producer.selectors.select_by_hash`` on the publish list of the route the client
had logged by then (``route info changed``), and each send must be:

* ``AGREE``: stored at the queue the selector gives;
* ``ROUTE_NOT_INSTALLED``: stored where the previous route's list gives, within
  ``LOG_BEFORE_INSTALL_MS`` of the new route's line (logged before it is installed);
* ``FAILED_STOPPED``: failed, and the selector's queue is on a broker the scenario had paused
  or killed at some moment of the attempt (from the action's start to the resume's return,
  ``FAILED_WINDOW_MS`` after the send began): the send waited out its timeout there, or was
  refused, and was not retried;
* ``FAILED_BROKER_ERROR``: failed with the broker's error reply (``MQBrokerException``, e.g.
  the flow control of a loaded broker), not retried;

or else ``UNEXPLAINED``. The summary also counts the keys whose queue moved when the route
changed (their messages before and after are in two queues: ``selectors.keys_moved``).
The verdicts take their values from ``trace.verdicts`` (the book's page
``book/guide/verdicts.md``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from rocketlb_core.model import (
    MessageQueue,
    RouteStep,
    TopicRoute,
    publish_queues,
    route_step,
)
from rocketlb_core.producer.selectors import keys_moved, select_by_hash
from rocketlb_core.trace import verdicts

SEND_MODES = ("sync", "hash", "oneway", "batch", "async")
"""How a live remoting producer sends (``live/java/Produce.java``, issue 45): ``send(msg)``,
``send(msg, SelectMessageQueueByHash, key)``, ``sendOneway(msg)``, ``send(Collection)`` (a
batch: one request to one queue, through the synchronous loop), ``send(msg, callback)`` (the
first hop on an ``AsyncSenderExecutor_N`` thread, retries from the callback:
``trace.async_agreement``)."""
MAX_BATCH = 256
"""A batch producer's messages per send at most (``live/java/Produce.java``'s BATCH)."""

AGREE = verdicts.text("ordered", "AGREE")
ROUTE_NOT_INSTALLED = verdicts.text("ordered", "ROUTE_NOT_INSTALLED")
FAILED_STOPPED = verdicts.text("ordered", "FAILED_STOPPED")
FAILED_BROKER_ERROR = verdicts.text("ordered", "FAILED_BROKER_ERROR")
"""A failed ordered send whose error is the broker's answer (``MQBrokerException``: live on
5.3.3 on a loaded host, code 2 ``[TIMEOUT_CLEAN_QUEUE]broker busy``, the broker's flow
control): its one attempt was answered, with an error, and not retried. The reply does not
name the broker, so which queue answered is not checked."""
UNEXPLAINED = verdicts.text("ordered", "UNEXPLAINED")
LOG_BEFORE_INSTALL_MS = 20
"""As ``trace.agreement.LOG_BEFORE_INSTALL_MS``: a send this soon after a ``route info
changed`` line may still pick from the old list."""
FAILED_WINDOW_MS = 3_100
"""How long after a failed send began its one attempt can have met its broker stopped: the
send's timeout (3,000 ms, ``sendMsgTimeout``) and the client's own start a little later."""


@dataclass(frozen=True)
class OrderedCheck:
    seq: int
    time_ms: int          # the send's start, trace time
    key: str
    observed: str         # "broker-a/3" or "FAILED"
    predicted: str
    verdict: str


@dataclass
class OrderedAgreement:
    checks: list[OrderedCheck] = field(default_factory=list)
    keys_moved: list[dict[str, Any]] = field(default_factory=list)

    def count(self, verdict: str) -> int:
        return sum(c.verdict == verdict for c in self.checks)

    def summary(self) -> dict[str, Any]:
        """The counts, in the fields every producer check reports (``agree``: every send the
        model explains, a failure at a stopped broker included, as the send loop's check
        counts both-failed sends; nothing drawn at random, nothing in flight), then its own:
        how many were stored at their key's queue, on the previous route, or failed there."""
        n, unexplained = len(self.checks), self.count(UNEXPLAINED)
        return {"sends": n, "agree": n - unexplained, "no_route": 0, "determined": n,
                "inferred": 0, "inferred_routes": 0, "reset": 0, "in_flight": 0,
                "stored_at_key_queue": self.count(AGREE),
                "route_not_installed": self.count(ROUTE_NOT_INSTALLED),
                "failed_stopped": self.count(FAILED_STOPPED),
                "failed_broker_error": self.count(FAILED_BROKER_ERROR),
                "unexplained": unexplained,
                "keys": len({c.key for c in self.checks}),
                "keys_moved": self.keys_moved}

    def others(self) -> list[OrderedCheck]:
        return [c for c in self.checks if c.verdict != AGREE]


def _stopped(broker: str, t: int, spans: Mapping[str, Sequence[tuple[int, int]]]) -> bool:
    return any(lo <= t + FAILED_WINDOW_MS and t <= hi for lo, hi in spans.get(broker, ()))


def ordered_agreement(truth: Sequence[dict[str, Any]], *, line: str, topic: str,
                      route: TopicRoute,
                      route_changes: Sequence[RouteStep],
                      origin_ms: int, stopped: Mapping[str, Sequence[tuple[int, int]]]
                      ) -> OrderedAgreement:
    """Check one ordered producer's rows (``truth``: ``sends/<producer>.jsonl``, epoch times,
    each with its ``key``) against the hash selector (see the module docstring).
    ``route_changes`` are the client's logged routes, (trace time, queue datas), the first
    fetched by the first send; ``stopped`` each broker's stretches (trace time) from a pause or
    kill's start to its resume or restart's return."""
    lists: list[tuple[int, list[MessageQueue]]] = [
        (t, publish_queues(topic, TopicRoute(qd, route.broker_datas).without_masters(gone)))
        for t, qd, gone in sorted((route_step(c) for c in route_changes), key=lambda c: c[0])]
    if not lists:
        lists = [(-(1 << 62), publish_queues(topic, route))]
    out = OrderedAgreement()
    keys = sorted({str(r["key"]) for r in truth}, key=lambda k: (len(k), k))
    for (_, before), (t, after) in pairwise(lists):
        moved, total = keys_moved(keys, before, after, line)
        out.keys_moved.append({"time_ms": t, "queues_before": len(before),
                               "queues_after": len(after), "moved": moved, "keys": total})
    for row in truth:
        now = int(row["sent_ms"]) - origin_ms
        key = str(row["key"])
        # the route the client had then: the first one (its lookup) until a later line
        k = max((i for i, (t, _) in enumerate(lists) if t <= now), default=0)
        queue = select_by_hash(lists[k][1], key, line)
        predicted = queue.short()
        observed = f"{row['broker']}/{row['queue']}" if "broker" in row else "FAILED"
        if observed == predicted:
            verdict = AGREE
        elif (observed != "FAILED" and k > 0 and now - lists[k][0] <= LOG_BEFORE_INSTALL_MS
              and select_by_hash(lists[k - 1][1], key, line).short() == observed):
            verdict, predicted = ROUTE_NOT_INSTALLED, observed
        elif observed == "FAILED" and _stopped(queue.broker_name, now, stopped):
            verdict = FAILED_STOPPED
        elif observed == "FAILED" and str(row.get("error", "")).startswith("MQBrokerException"):
            verdict = FAILED_BROKER_ERROR
        else:
            verdict = UNEXPLAINED
        out.checks.append(OrderedCheck(int(row["seq"]), now, key, observed, predicted, verdict))
    return out


def stopped_spans(events: Sequence[dict[str, Any]], origin_ms: int,
                  stops: Sequence[str] = ("pause", "kill")) -> dict[str, list[tuple[int, int]]]:
    """Each broker's stopped stretches of a recording's events (trace time): from a pause or
    kill's start (of ``stops``) to the resume or restart's return (open to the end when none
    came)."""
    spans: dict[str, list[tuple[int, int]]] = {}
    begun: dict[str, int] = {}
    for e in events:
        if e["action"] in stops:
            begun.setdefault(e["target"], int(e["wall_ms"]) - origin_ms)
        elif e["action"] in ("resume", "restart") and e["target"] in begun:
            spans.setdefault(e["target"], []).append(
                (begun.pop(e["target"]), int(e["done_ms"]) - origin_ms))
    for target, start in begun.items():
        spans.setdefault(target, []).append((start, 1 << 62))
    return spans


def lost_spans(events: Sequence[dict[str, Any]], origin_ms: int
               ) -> dict[str, list[tuple[int, int]]]:
    """Each broker's stretches (trace time) in which a oneway message sent to it could die
    unstored: from a kill's start, or from the start of the pause it was killed in (what a
    paused broker's socket held was never read), to the restart's return (open to the end
    when none came)."""
    spans: dict[str, list[tuple[int, int]]] = {}
    paused: dict[str, int] = {}
    killed: dict[str, int] = {}
    for e in events:
        target, t = e["target"], int(e["wall_ms"]) - origin_ms
        if e["action"] == "pause":
            paused.setdefault(target, t)
        elif e["action"] == "resume":
            paused.pop(target, None)
        elif e["action"] == "kill":
            killed.setdefault(target, paused.pop(target, t))
        elif e["action"] == "restart" and target in killed:
            spans.setdefault(target, []).append(
                (killed.pop(target), int(e["done_ms"]) - origin_ms))
    for target, start in killed.items():
        spans.setdefault(target, []).append((start, 1 << 62))
    return spans
