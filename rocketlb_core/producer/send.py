"""The send/retry loop of ``DefaultMQProducerImpl.sendDefaultImpl`` and the async retry callback
(spec 2.6), in virtual time, driven by a broker model.

The loop decides: how many attempts, which queue each attempt goes to (through
``MQFaultStrategy.select``), whether the time budget still allows one, and what each outcome
reports to the fault table (isolation and, on 5.x, reachability). The world decides what happens
to an attempt: a ``BrokerModel`` answers with an outcome and a latency. The simulator and the
replay both drive this one loop.

>>> from rocketlb_core.model import QueueData
>>> from rocketlb_core.producer import ThreadLocalIndex
>>> qs = [MessageQueue("T", b, 0) for b in ("a", "b")]
>>> tp = TopicPublishInfo(qs, [QueueData("a", 1, 1), QueueData("b", 1, 1)],
...                       ThreadLocalIndex("4.9.8", stored=-1))
>>> down_a = lambda mq, now, budget: (
...     AttemptResult(Outcome.REMOTING_ERROR, 5) if mq.broker_name == "a"
...     else AttemptResult(Outcome.SEND_OK, 2))
>>> r = send(MQFaultStrategy("4.9.8"), tp, down_a, now_ms=0)
>>> r.status, r.queue.short(), [a.queue.short() for a in r.attempts], r.end_ms
('SEND_OK', 'b/0', ['a/0', 'b/0'], 7)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from rocketlb_core.model import MessageQueue
from rocketlb_core.producer.publish_info import TopicPublishInfo
from rocketlb_core.producer.strategy import MQFaultStrategy


class SendMode(StrEnum):
    SYNC = "SYNC"
    ASYNC = "ASYNC"
    ONEWAY = "ONEWAY"


class Outcome(StrEnum):
    """What one attempt met. The first four are broker replies with a send status."""

    SEND_OK = "SEND_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"
    REMOTING_ERROR = "REMOTING_ERROR"   # connect failure, timeout, send failure (RemotingException)
    CLIENT_ERROR = "CLIENT_ERROR"       # e.g. broker address unknown (MQClientException)
    BROKER_ERROR = "BROKER_ERROR"       # an error response code (MQBrokerException)

    @property
    def is_status(self) -> bool:
        return self in _STATUSES

    @property
    def stored(self) -> bool:
        """The broker stored the message (every send status means it did)."""
        return self in _STATUSES


_STATUSES = frozenset({Outcome.SEND_OK, Outcome.FLUSH_DISK_TIMEOUT, Outcome.FLUSH_SLAVE_TIMEOUT,
                       Outcome.SLAVE_NOT_AVAILABLE})


@dataclass(frozen=True, slots=True)
class AttemptResult:
    """A broker model's answer: the outcome, how long the attempt took, and the response code
    of a ``BROKER_ERROR``. A latency at or beyond the attempt's budget becomes a timeout that
    returns ``TIMER_OVERSHOOT_MS`` after the deadline, or ``overshoot_ms`` after it when the
    model knows (a recording's logged ``RT``: 0 to 4 ms late live)."""

    outcome: Outcome
    latency_ms: int
    response_code: int | None = None
    overshoot_ms: int | None = None


BrokerModel = Callable[[MessageQueue, int, int], AttemptResult]
"""``(queue, start_ms, budget_ms) -> AttemptResult``: what happens to one attempt."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt as it happened, with the fault report it made."""

    number: int
    queue: MessageQueue
    start_ms: int
    latency_ms: int
    outcome: Outcome
    response_code: int | None
    isolation: bool | None       # None: no report (fault strategy reports are no-ops when off)
    reachable: bool | None


@dataclass(frozen=True, slots=True)
class SendConfig:
    """``DefaultMQProducer`` settings that shape the loop (defaults as upstream)."""

    mode: SendMode = SendMode.SYNC
    send_msg_timeout_ms: int = 3000
    retry_times_when_send_failed: int = 2
    retry_times_when_send_async_failed: int = 2
    retry_another_broker_when_not_store_ok: bool = False
    send_msg_max_timeout_per_request_ms: int = -1     # 5.3.3 only (first in 5.3.3)


@dataclass(frozen=True, slots=True)
class SendResult:
    """How one send ended: ``status`` is a send status, or ``FAILED`` with ``error`` telling why
    (the exception the application would see). ``queue`` is where the message was stored."""

    status: str
    queue: MessageQueue | None
    attempts: tuple[Attempt, ...]
    start_ms: int
    end_ms: int
    error: str | None = None

    @property
    def stored(self) -> bool:
        return self.status != "FAILED"


def _report(strategy: MQFaultStrategy, attempt_no: int, mq: MessageQueue, begin: int,
            res: AttemptResult, isolation: bool, reachable: bool) -> Attempt:
    strategy.update_fault_item(mq.broker_name, res.latency_ms, isolation, begin + res.latency_ms,
                               reachable=reachable)
    enabled = strategy.send_latency_fault_enable
    return Attempt(attempt_no, mq, begin, res.latency_ms, res.outcome, res.response_code,
                   isolation if enabled else None,
                   reachable if enabled and strategy.line.rules.reports_reachable else None)


def _sync_flags(strategy: MQFaultStrategy, outcome: Outcome) -> tuple[bool, bool]:
    """(isolation, reachable) of a sync attempt's report (spec 2.6 table)."""
    rules = strategy.line.rules
    if outcome.is_status:
        return False, True
    if outcome is Outcome.REMOTING_ERROR:
        return True, not strategy.start_detector_enable
    if outcome is Outcome.CLIENT_ERROR:
        return rules.client_error_isolates, True
    return True, rules.broker_error_reachable     # BROKER_ERROR: 5.x marks it unreachable


TIMER_OVERSHOOT_MS = 1
"""A timed-out call returns after its deadline, as a rule a millisecond or more: the elapsed
time is then above the budget and the loop's ``timeout < elapsed`` check stops the send ("call
timeout"). Live, a timeout now and then returns in the deadline's very millisecond (``RT:
3000ms`` of a 3,000 ms budget, issue 32): the check ``3000 < 3000`` fails, and the loop makes
one more attempt with 0 ms left, which times out at once (4.9.8 ``invokeSync``: ``0ms``, and it
closes that broker's channel; 5.3.3: ``left <= 0``), isolates that healthy broker when the fault
strategy is on, and moves the round-robin counter one step further. A broker model that knows
the timeout's overshoot (``AttemptResult.overshoot_ms``, 0 included) makes the loop do the same;
the simulator keeps this default."""


def _attempt(broker: BrokerModel, mq: MessageQueue, begin: int, budget: int) -> AttemptResult:
    res = broker(mq, begin, budget)
    if res.latency_ms >= budget:                   # no answer within the budget: a timeout
        late = TIMER_OVERSHOOT_MS if res.overshoot_ms is None else max(0, res.overshoot_ms)
        return AttemptResult(Outcome.REMOTING_ERROR, budget + late)
    return res


def send(strategy: MQFaultStrategy, tp: TopicPublishInfo, broker: BrokerModel, now_ms: int,
         config: SendConfig = SendConfig(), lookup_ms: int = 0) -> SendResult:
    """Send one message starting at ``now_ms``; returns when the send is over (virtual time).

    ``lookup_ms`` is how long the route lookup took before the first selection: upstream's
    ``sendDefaultImpl`` takes ``beginTimestampFirst`` before ``tryToFindTopicPublishInfo``,
    so a slow lookup is spent from the send's budget and the first attempt begins that much
    later (4.9.8 ``DefaultMQProducerImpl`` lines 546-549; 5.3.3 lines 747-750). Live, a first
    lookup that took 2.7 s left the first attempt 300 ms (issue 32's soak); the simulator
    keeps 0."""
    if not tp.ok():
        return SendResult("FAILED", None, (), now_ms, now_ms, "No route info of this topic")
    if config.mode is SendMode.ASYNC:
        return _send_async(strategy, tp, broker, now_ms, config)
    rules = strategy.line.rules
    retryable = rules.retryable_codes
    sync = config.mode is SendMode.SYNC
    attempts = 1 + config.retry_times_when_send_failed if sync else 1
    timeout = config.send_msg_timeout_ms
    first, clock = now_ms, now_ms + lookup_ms
    mq: MessageQueue | None = None
    done: list[Attempt] = []
    last_status: tuple[str, MessageQueue] | None = None
    error = "send failed"
    for t in range(attempts):
        last = mq.broker_name if mq is not None else None
        mq = strategy.select(tp, last, clock, reset_index=rules.counter_resets_on_retry and t > 0)
        begin = clock
        if timeout < begin - first:
            error = "call timeout"                  # RemotingTooMuchRequestException
            break
        budget = timeout - (begin - first)
        cap = config.send_msg_max_timeout_per_request_ms
        if rules.caps_request_timeout and cap > -1 and t + 1 < attempts and budget > cap:
            budget = cap
        res = _attempt(broker, mq, begin, budget)
        isolation, reachable = _sync_flags(strategy, res.outcome)
        done.append(_report(strategy, t, mq, begin, res, isolation, reachable))
        clock = begin + res.latency_ms
        if res.outcome.is_status:
            if not sync:
                return SendResult(res.outcome.value, mq, tuple(done), now_ms, clock)
            if res.outcome is not Outcome.SEND_OK and config.retry_another_broker_when_not_store_ok:
                last_status = (res.outcome.value, mq)
                continue
            return SendResult(res.outcome.value, mq, tuple(done), now_ms, clock)
        if res.outcome is Outcome.BROKER_ERROR:
            error = f"MQBrokerException: code {res.response_code}"
            if res.response_code not in retryable:
                break
            continue
        error = ("RemotingException" if res.outcome is Outcome.REMOTING_ERROR
                 else "MQClientException")
    if last_status is not None:
        return SendResult(last_status[0], last_status[1], tuple(done), now_ms, clock)
    return SendResult("FAILED", None, tuple(done), now_ms, clock, error)


def _send_async(strategy: MQFaultStrategy, tp: TopicPublishInfo, broker: BrokerModel,
                now_ms: int, config: SendConfig) -> SendResult:
    """First hop through the loop (one attempt); later hops in the response callback, to the
    next broker but with the **first hop's queue id** (the same request object is re-sent)."""
    timeout = config.send_msg_timeout_ms
    mq = strategy.select(tp, None, now_ms)
    # sendDefaultImpl reports as soon as the async call is handed over (elapsed about 0).
    done = [_report(strategy, 0, mq, now_ms, AttemptResult(Outcome.SEND_OK, 0), False, True)]
    queue_id, clock, hops = mq.queue_id, now_ms, 0
    while True:
        res = _attempt(broker, mq, clock, timeout - (clock - now_ms))
        clock += res.latency_ms
        if res.outcome.is_status:
            done.append(_report(strategy, hops, mq, clock - res.latency_ms, res, False, True))
            return SendResult(res.outcome.value, mq, tuple(done), now_ms, clock)
        if res.outcome is Outcome.BROKER_ERROR:           # a reply whose processing threw
            done.append(_report(strategy, hops, mq, clock - res.latency_ms, res, True, True))
            return SendResult("FAILED", None, tuple(done), now_ms, clock,
                              f"MQBrokerException: code {res.response_code}")
        no_reply = res.outcome is Outcome.REMOTING_ERROR
        done.append(_report(strategy, hops, mq, clock - res.latency_ms, res, True, no_reply))
        hops += 1
        out_of_time = (strategy.line.rules.async_retry_checks_budget
                       and timeout - (clock - now_ms) <= 0)
        if hops > config.retry_times_when_send_async_failed or out_of_time:
            return SendResult("FAILED", None, tuple(done), now_ms, clock,
                              "RemotingException" if no_reply else "MQClientException")
        nxt = strategy.select(tp, mq.broker_name, clock)
        mq = MessageQueue(nxt.topic, nxt.broker_name, queue_id)

