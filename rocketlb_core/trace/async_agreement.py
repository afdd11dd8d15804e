"""The model against a live asynchronous producer (issue 45): ``send(msg, callback)``.

Upstream (spec 2.6; 4.9.8 ``DefaultMQProducerImpl.send(Message, SendCallback, long)``, 5.3.3
the same with back pressure first): the call hands the message to the producer's
``AsyncSenderExecutor_N`` pool (``availableProcessors`` threads) and returns. The executor
thread that runs it calls ``sendDefaultImpl(ASYNC)``: one selection,
``selectOneMessageQueue(tp, null)``, one step of *that thread's* ``ThreadLocalIndex`` (a
counter per thread, each from its own random start, new with every route change), and one
hop. A failed hop is retried by ``onExceptionImpl`` (``retryTimesWhenSendAsyncFailed``, 2):
it selects a queue with the failed broker as the last one, keeps only its broker, and re-sends
the same request there, so the retry lands at the **first hop's queue id** (fact
producer.async-retry-selects-a-broker-and-resends-the-request). It selects on the thread that
handles the failure. A connection the broker refuses: on 4.9.3 to 4.9.8 ``invokeAsync`` throws
at once on the thread that made the hop (the executor thread, whose counter steps again; 4.7.1
to 4.9.2 do not retry it: fact producer.async-connect-failure-retried-since-4.9.3); from 5.3.0
the connection's listener fails the call on the client's event loop (``NettyClientSelector_1``;
fact remoting.async-connect-failure-since-5.3.0; ``LineRules.async_connect_throws``). A
request written on a connection that then closed (a broker killed just after the hop:
``send request failed``) fails on a callback thread (fact
remoting.async-send-request-failed-on-a-callback-thread). A hop that timed out (a paused
broker) is found by the response table's scan; on 4.9.8 its retries are selected on a callback
thread but each throws for lack of time before anything is written, and from 5.3.2 it is not
retried at all (fact producer.async-timed-out-hop-not-retried-since-5.3.2). A hop answered
with an error code is not retried.

What the check reads: the driver's hook names each send's executor thread and first hop
(``live/java/Produce.java``: ``executor``, ``first_broker``, ``first_queue``, ``first_ms``)
and the callback where the message was stored. Per executor thread, in the order its hops
were made, the check keeps every counter start the hops so far agree with after each route
change (the route the client logged; a hop within ``LOG_BEFORE_INSTALL_MS`` of a new route's
line may still use the old list), and predicts each first hop; on a 4.x line a hop to a
broker killed at that moment also steps the counter for the retries the executor thread
selected (their brokers predicted too). Each send gets one verdict:

* ``AGREE``: the first hop as predicted, and the message stored there, or at the predicted
  retry broker at the first hop's queue id;
* ``INFERRED``: as ``AGREE``, a hop that told the thread's possible counter starts apart;
* ``RETRY_ELSEWHERE``: the first hop as predicted, at a broker killed from at most
  ``IN_BROKER_MS`` after the hop to its restart, or paused at the hop and killed within
  ``PENDING_MS`` of it (the request still waiting), and the message stored at the first hop's
  queue id on another broker, chosen by a retry on a thread whose counter the check does not
  infer (a callback thread, or 5.x's event loop);
* ``FAILED_STOPPED``: the first hop as predicted, at a broker paused or killed from at most
  ``IN_BROKER_MS`` after the hop to its resume or restart, and the send failed (the hop timed
  out or was refused, and its retries, if any, failed or ran out of time);
* ``FAILED_BROKER_ERROR``: the first hop as predicted, and the send failed with a broker's
  error reply (an ``MQBrokerException``: live on 5.3.3 at start-up, code 2
  ``[TIMEOUT_CLEAN_QUEUE]broker busy``), which is not retried;
* ``NO_HOP``: failed before any hop (no route yet, or the executor's queue outlasted the
  timeout: ``DEFAULT ASYNC send call timeout``);
* ``BACK_PRESSURE``: with back pressure on (``back_pressure`` permits, 5.3.3 and 5.5.0), failed
  before any hop because no permit came within the send's timeout, while the other sends could
  have held every one of them throughout the wait (``permits_held``);
* ``UNEXPLAINED``: anything else, and with back pressure on, a send that got a permit while
  every permit was surely held.

What it does not check yet: when an async timeout fires (the response table's scan, about
once a second, drops a request 1 to 2 s after its deadline: live, replies up to 4.8 s after a
paused broker's hops still succeeded), which thread chose a ``RETRY_ELSEWHERE`` broker and
with what counter, the client log's ``async send msg by retry`` lines (on 4.9.8 a refused hop
whose retry the executor thread selected is told from one that failed later by preference:
the executor's own selection when it explains the message, which the thread's next hops then
hold), and ``sendLatencyFaultEnable`` on (the recorder refuses it for an async producer); of
back pressure, why a call blocked, when a permit refusal came, the byte limit
(``backPressureForAsyncSendSize``), and a send the full pool ran on the application's thread.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rocketlb_core.model import (
    MessageQueue,
    QueueData,
    RouteStep,
    TopicRoute,
    publish_queues,
    route_step,
)
from rocketlb_core.producer.index import ThreadLocalIndex
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.producer.publish_info import TopicPublishInfo
from rocketlb_core.producer.strategy import MQFaultStrategy
from rocketlb_core.trace import verdicts

AGREE = verdicts.text("async", "AGREE")
INFERRED = verdicts.text("async", "INFERRED")
RETRY_ELSEWHERE = verdicts.text("async", "RETRY_ELSEWHERE")
FAILED_STOPPED = verdicts.text("async", "FAILED_STOPPED")
FAILED_BROKER_ERROR = verdicts.text("async", "FAILED_BROKER_ERROR")
NO_HOP = verdicts.text("async", "NO_HOP")
BACK_PRESSURE = verdicts.text("async", "BACK_PRESSURE")
"""A send of a producer with back pressure (``enableBackpressureForAsyncMode``, 5.x) that failed
with ``send message tryAcquire semaphoreAsyncNum timeout`` before any hop: its application
thread waited the send's timeout for one of ``backPressureForAsyncSendNum`` permits, and the
other sends could have held all of them throughout (``permits_held``; fact
producer.async-back-pressure-permits-5x)."""
UNEXPLAINED = verdicts.text("async", "UNEXPLAINED")
PERMIT_TIMEOUT = "send message tryAcquire semaphoreAsyncNum timeout"
"""The failure a send of a producer with back pressure gets when no permit came in time."""
RELEASE_SLACK_MS = 50
"""A send gives its permit back just before the application's callback runs (the row's end):
at most this long before it, as the check reads it."""
LOG_BEFORE_INSTALL_MS = 20
"""As ``trace.agreement.LOG_BEFORE_INSTALL_MS``: a hop this soon after a ``route info changed``
line may still pick from the old list."""
IN_BROKER_MS = 500
"""A hop begun at most this long before its broker was paused or killed can have met the stop
(its request written, not yet answered), as ``trace.agreement.IN_BROKER_MS`` for a oneway
write: live, failed hops began from 8 ms before broker-a's pause."""
PENDING_MS = 5_000
"""How long a request written to a paused broker waits at most: its 3,000 ms budget, then the
response table's scan drops it within 2 s (fact remoting.async-timeout-found-by-a-1s-scan-1s-late).
A kill in that time closes the connection under it, and it fails as ``send request failed``,
retried elsewhere (fact remoting.async-send-request-failed-on-a-callback-thread): live on
4.9.8 and 5.3.3, hops to broker-c paused at 17.1 s, killed at 20.8 s (random scenario
15608789196928)."""
ASYNC_RETRIES = 2
"""``retryTimesWhenSendAsyncFailed``'s default: hops after the first."""


@dataclass(frozen=True)
class AsyncCheck:
    seq: int
    time_ms: int          # the first hop (else the call), trace time
    executor: str
    first: str            # the first hop observed, "broker-a/3", or "" (none)
    predicted_first: str
    observed: str         # where it was stored, or "FAILED"
    verdict: str


@dataclass
class AsyncAgreement:
    checks: list[AsyncCheck] = field(default_factory=list)
    inferred_routes: set[tuple[str, int]] = field(default_factory=set)
    back_pressure: int = 0                       # the producer's permits (0: off)

    def count(self, verdict: str) -> int:
        return sum(c.verdict == verdict for c in self.checks)

    def summary(self) -> dict[str, Any]:
        """The counts, in the fields every producer check reports, then its own (``threads``:
        the executor threads that made a first hop, each with its own counter)."""
        n = len(self.checks)
        return {"sends": n, "agree": self.count(AGREE), "no_route": self.count(NO_HOP),
                "determined": n - self.count(INFERRED) - self.count(RETRY_ELSEWHERE),
                "inferred": self.count(INFERRED),
                "inferred_routes": len(self.inferred_routes), "reset": 0, "in_flight": 0,
                "retry_elsewhere": self.count(RETRY_ELSEWHERE),
                "failed_stopped": self.count(FAILED_STOPPED),
                "failed_broker_error": self.count(FAILED_BROKER_ERROR),
                "unexplained": self.count(UNEXPLAINED),
                "threads": len({c.executor for c in self.checks if c.executor}),
                **({"back_pressure": self.count(BACK_PRESSURE),
                    "permits": self.back_pressure} if self.back_pressure else {})}

    def others(self) -> list[AsyncCheck]:
        return [c for c in self.checks if c.verdict != AGREE]


def _killed(broker: str, t: int, spans: Mapping[str, Sequence[tuple[int, int]]]) -> bool:
    return any(lo <= t <= hi for lo, hi in spans.get(broker, ()))


Trial = tuple[int, MessageQueue, tuple[str, ...]]
"""One way a send's selections on its executor thread went: the counter after, the first hop,
and the retries' brokers the executor thread selected (none: the failure, if any, was handled
on another thread)."""


def _trials(strategy: MQFaultStrategy, tp: TopicPublishInfo, counter: int, t: int,
            killed: Mapping[str, Sequence[tuple[int, int]]], on_executor: bool) -> list[Trial]:
    """A send's selections on its executor thread from ``counter``: one step for the first hop;
    when the line's ``invokeAsync`` throws on connect and the hop's broker was killed then, the
    connection may have been refused at once (the executor thread selects each retry's broker,
    ``selectOneMessageQueue(tp, last)``, while its broker is killed and retries last) or, just
    after the kill, the hop went out on the old channel and failed later, elsewhere: both."""
    tp.index.stored = counter
    first = strategy.select(tp, None, t)
    assert tp.index.stored is not None
    out: list[Trial] = [(tp.index.stored, first, ())]
    if on_executor and _killed(first.broker_name, t, killed):
        brokers: list[str] = []
        last = first.broker_name
        while _killed(last, t, killed) and len(brokers) < ASYNC_RETRIES:
            last = strategy.select(tp, last, t).broker_name
            brokers.append(last)
        assert tp.index.stored is not None
        out.append((tp.index.stored, first, tuple(brokers)))
    return out


def async_agreement(truth: Sequence[dict[str, Any]], *, line: str, topic: str,
                    route: TopicRoute,
                    route_changes: Sequence[RouteStep],
                    origin_ms: int, stopped: Mapping[str, Sequence[tuple[int, int]]],
                    killed: Mapping[str, Sequence[tuple[int, int]]],
                    back_pressure: int = 0, timeout_ms: int = 3000) -> AsyncAgreement:
    """Check one async producer's rows (``truth``: ``sends/<producer>.jsonl``, epoch times)
    against the executor threads' selections (see the module docstring). ``route_changes``
    are the client's logged routes, (trace time, queue datas), the first fetched by the first
    send; ``stopped`` each broker's stretches (trace time) from a pause or kill to its resume
    or restart's return; ``killed`` those from a kill alone (connections refused);
    ``back_pressure`` the producer's permits (0: off), checked with ``permits_held`` against
    its sends' ``timeout_ms``."""
    rules = ProducerLine.parse(line).rules
    lists: list[tuple[int, list[MessageQueue], list[QueueData]]] = []
    for t, qd, masterless in sorted((route_step(c) for c in route_changes),
                                    key=lambda c: c[0]):
        r = TopicRoute(qd, route.broker_datas).without_masters(masterless)
        lists.append((t, publish_queues(topic, r), r.sorted_queue_datas()))
    if not lists:
        lists = [(-(1 << 62), publish_queues(topic, route), route.sorted_queue_datas())]
    strategy = MQFaultStrategy(line, send_latency_fault_enable=False)
    out = AsyncAgreement()
    held = permits_held(truth, back_pressure, timeout_ms) if back_pressure else {}
    out.back_pressure = back_pressure
    threads: dict[str, list[dict[str, Any]]] = {}
    for row in truth:
        if "first_broker" not in row:
            now = int(row["sent_ms"]) - origin_ms
            observed = f"{row['broker']}/{row['queue']}" if "broker" in row else "FAILED"
            verdict = NO_HOP if observed == "FAILED" else UNEXPLAINED
            if PERMIT_TIMEOUT in str(row.get("error", "")):
                verdict = BACK_PRESSURE if held.get(int(row["seq"])) else UNEXPLAINED
            elif held.get(int(row["seq"])):
                verdict = UNEXPLAINED          # a permit while every one was held
            out.checks.append(AsyncCheck(int(row["seq"]), now, "", "", "", observed, verdict))
            continue
        threads.setdefault(str(row["executor"]), []).append(row)
    for executor, rows in sorted(threads.items()):
        rows.sort(key=lambda r: (int(r["first_ms"]), int(r["seq"])))
        version = -1
        tp: TopicPublishInfo | None = None
        alive: list[int] = []          # the counter values every hop so far agrees with
        for row in rows:
            now = int(row["first_ms"]) - origin_ms
            first = f"{row['first_broker']}/{row['first_queue']}"
            k = max((i for i, (t, _, _) in enumerate(lists) if t <= now), default=0)
            if k != version:
                keep_old = (tp is not None and version == k - 1
                            and now - lists[k][0] <= LOG_BEFORE_INSTALL_MS
                            and any(tr[1].short() == first for c in alive
                                    for tr in _trials(strategy, tp, c, now, killed,
                                                      rules.async_connect_throws)))
                if not keep_old:
                    version = k
                    queues, datas = lists[k][1], lists[k][2]
                    tp = TopicPublishInfo(queues, datas, ThreadLocalIndex(line, stored=0))
                    alive = list(range(len(queues)))
            assert tp is not None
            trials = [tr for c in alive
                      for tr in _trials(strategy, tp, c, now, killed, rules.async_connect_throws)]
            told = len({tr[1].short() for tr in trials}) > 1
            fits = [tr for tr in trials if tr[1].short() == first]
            if not fits:
                alive = [trials[0][0]]
                out.checks.append(AsyncCheck(int(row["seq"]), now, executor, first,
                                             trials[0][1].short(), _observed(row),
                                             UNEXPLAINED))
                continue
            judged = [(tr, _verdict(row, tr, now, stopped, killed)) for tr in fits]
            # the most determined explanation wins: a retry stored where the executor thread's
            # own selection puts it was selected there (4.x, a refused connection), not
            # elsewhere; a wrong choice shows at the thread's next hop
            verdict = min((v for _, v in judged), key=_PREFERENCE.index)
            kept: dict[int, Trial] = {}
            for tr, v in judged:         # counters a whole list apart choose alike from now on
                if v == verdict:
                    kept.setdefault(tr[0] % len(tp.queues), tr)
            alive = [tr[0] for tr in kept.values()]
            if told and verdict == AGREE:
                verdict = INFERRED
            if held.get(int(row["seq"])):
                verdict = UNEXPLAINED              # it got a permit while every one was held
            if told:
                out.inferred_routes.add((executor, version))
            out.checks.append(AsyncCheck(int(row["seq"]), now, executor, first, first,
                                         _observed(row), verdict))
    out.checks.sort(key=lambda c: c.seq)
    return out


def permits_held(truth: Sequence[Mapping[str, Any]], permits: int,
                 timeout_ms: int = 3000) -> dict[int, bool]:
    """Per send (its seq), with back pressure of ``permits``: for one that failed for want of a
    permit, whether the other sends surely could have held every permit through its whole wait
    (from its call for ``timeout_ms``); for one that got a permit, whether every permit was
    surely held through the whole time it can have taken it in (then it cannot have: an
    unexplained send). The application thread calls ``send`` one after another: a send takes
    its permit after its call and before the next call (and before its first hop), and gives it
    back at its end (its row's ``sent_ms`` + ``cost_ms``), at most ``RELEASE_SLACK_MS``
    before. So a send holds its permit surely from its latest take to its earliest giving back,
    and at most from its call to its end.

    >>> rows = [{"seq": i, "sent_ms": 10 * i, "cost_ms": 5000, "first_ms": 10 * i + 1}
    ...         for i in range(3)]
    >>> rows.append({"seq": 3, "sent_ms": 30, "cost_ms": 3000, "error": PERMIT_TIMEOUT})
    >>> permits_held(rows, 3)
    {0: False, 1: False, 2: False, 3: True}
    >>> permits_held(rows, 4)[3]
    False
    """
    rows = sorted(truth, key=lambda r: (int(r["sent_ms"]), int(r["seq"])))
    calls = [int(r["sent_ms"]) for r in rows]
    got, spans_sure, spans_may = [], [], []
    for k, r in enumerate(rows):
        if PERMIT_TIMEOUT in str(r.get("error", "")):
            continue
        start, end = int(r["sent_ms"]), int(r["sent_ms"]) + int(r.get("cost_ms", 0))
        latest = min([calls[k + 1]] if k + 1 < len(rows) else [end])
        if "first_ms" in r:
            latest = min(latest, int(r["first_ms"]))
        got.append((int(r["seq"]), start, max(start, latest)))
        spans_sure.append((int(r["seq"]), max(start, latest), end - RELEASE_SLACK_MS))
        spans_may.append((int(r["seq"]), start, end))

    def always(spans: list[tuple[int, int, int]], lo: int, hi: int, me: int) -> bool:
        """Whether ``permits`` of ``spans`` (not ``me``'s) cover every moment of [lo, hi]."""
        points = sorted({lo, *(a for _, a, _ in spans if lo < a < hi),
                         *(b for _, _, b in spans if lo <= b < hi)})
        return all(sum(1 for s, a, b in spans if s != me and a <= t < b) >= permits
                   for t in points)

    out = {seq: always(spans_sure, lo, hi, seq) for seq, lo, hi in got}
    for r in rows:
        if PERMIT_TIMEOUT in str(r.get("error", "")):
            call = int(r["sent_ms"])
            out[int(r["seq"])] = always(spans_may, call, call + timeout_ms - 1, int(r["seq"]))
    return out


def _observed(row: Mapping[str, Any]) -> str:
    return f"{row['broker']}/{row['queue']}" if "broker" in row else "FAILED"


_PREFERENCE = (AGREE, FAILED_BROKER_ERROR, FAILED_STOPPED, RETRY_ELSEWHERE, UNEXPLAINED)
"""When several ways a send's selections could have gone explain it, the verdict of the most
determined one."""


def _met(broker: str, t: int, spans: Mapping[str, Sequence[tuple[int, int]]]) -> bool:
    """Whether a hop to ``broker`` begun at ``t`` can have met it stopped (``spans``)."""
    return any(lo - IN_BROKER_MS <= t <= hi for lo, hi in spans.get(broker, ()))


def _killed_under(broker: str, t: int, stopped: Mapping[str, Sequence[tuple[int, int]]],
                  killed: Mapping[str, Sequence[tuple[int, int]]]) -> bool:
    """Whether a hop to ``broker`` begun at ``t`` can have had its connection closed under it by
    a kill: killed at the hop (from at most ``IN_BROKER_MS`` after it), or paused at the hop and
    killed while the request still waited (``PENDING_MS``)."""
    for lo, hi in killed.get(broker, ()):
        if lo - IN_BROKER_MS <= t <= hi:
            return True
        if t < lo <= t + PENDING_MS and any(s_lo <= t and lo <= s_hi
                                            for s_lo, s_hi in stopped.get(broker, ())):
            return True
    return False


def _verdict(row: Mapping[str, Any], trial: Trial, now: int,
             stopped: Mapping[str, Sequence[tuple[int, int]]],
             killed: Mapping[str, Sequence[tuple[int, int]]]) -> str:
    """The send's verdict if its selections went as ``trial`` says (its first hop agrees)."""
    first_broker, first_queue = str(row["first_broker"]), int(row["first_queue"])
    if "broker" not in row:
        if str(row.get("error", "")).startswith("MQBrokerException"):
            return FAILED_BROKER_ERROR     # answered with an error code: not retried
        # failed: its first hop met its broker stopped (timed out, or refused and its
        # retries failed or ran out of time)
        return FAILED_STOPPED if _met(first_broker, now, stopped) else UNEXPLAINED
    broker, queue = str(row["broker"]), int(row["queue"])
    if broker == first_broker and queue == first_queue:
        return AGREE if not trial[2] else UNEXPLAINED
    if queue != first_queue or broker == first_broker:
        return UNEXPLAINED                 # a retry keeps the first hop's queue id
    if trial[2]:                           # the executor thread chose the retries
        return AGREE if broker == trial[2][-1] else UNEXPLAINED
    # retried from another thread: the first hop's broker was killed (refused, or its
    # connection closed under the written request); a timed-out hop stores no retry
    return RETRY_ELSEWHERE if _killed_under(first_broker, now, stopped, killed) else UNEXPLAINED
