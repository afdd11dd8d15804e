"""Small broker models for the send loop (``rocketlb_core.producer.send``): the world, not the
algorithm. Used by the book and the tests; the simulator and the replay have their own.

>>> from rocketlb_core.model import MessageQueue
>>> model = down("broker-a")
>>> model(MessageQueue("T", "broker-a", 0), 0, 3000).outcome.value
'REMOTING_ERROR'
"""

from __future__ import annotations

from rocketlb_core.conditions import FAIL_FAST_MS
from rocketlb_core.model import MessageQueue
from rocketlb_core.producer.send import AttemptResult, BrokerModel, Outcome


def down(*brokers: str, latency_ms: int = 2, mode: str = "clean") -> BrokerModel:
    """``brokers`` are down: a clean crash refuses at once (the slowest refusal of
    ``rocketlb_core.conditions.FAIL_FAST_MS``), a silent one times out; the others answer
    SEND_OK in ``latency_ms``."""
    dead = set(brokers)

    def model(mq: MessageQueue, start_ms: int, budget_ms: int) -> AttemptResult:
        if mq.broker_name in dead:
            return AttemptResult(Outcome.REMOTING_ERROR,
                                 FAIL_FAST_MS[-1] if mode == "clean" else budget_ms)
        return AttemptResult(Outcome.SEND_OK, latency_ms)
    return model


def blip(broker: str, start_ms: int, end_ms: int, latency_ms: int = 2,
         mode: str = "silent") -> BrokerModel:
    """``broker`` is down (``mode`` as in ``down``) for attempts that start in
    ``[start_ms, end_ms)`` and healthy otherwise; every other broker answers in ``latency_ms``.
    One bad moment, as a GC pause or a network blip gives.

    >>> model = blip("broker-b", 0, 100)
    >>> [model(MessageQueue("T", "broker-b", 0), t, 3000).outcome.value for t in (50, 150)]
    ['REMOTING_ERROR', 'SEND_OK']
    """
    bad, good = down(broker, latency_ms=latency_ms, mode=mode), down(latency_ms=latency_ms)

    def model(mq: MessageQueue, start: int, budget_ms: int) -> AttemptResult:
        return (bad if start_ms <= start < end_ms else good)(mq, start, budget_ms)
    return model


def not_stored_ok(*brokers: str, status: Outcome = Outcome.SLAVE_NOT_AVAILABLE,
                  latency_ms: int = 2) -> BrokerModel:
    """``brokers`` write each message and reply with ``status``, a send status other than
    SEND_OK (default ``SLAVE_NOT_AVAILABLE``: a 4.x ``SYNC_MASTER``, for a message with
    ``waitStoreMsgOK``, whose slave is not connected or 256 MiB or more behind, answered without
    waiting, so in a few ms; fact broker.sync-master-answers-slave-not-available-4x); the others
    answer SEND_OK. Every reply takes ``latency_ms``. ``FLUSH_SLAVE_TIMEOUT`` and
    ``FLUSH_DISK_TIMEOUT`` come only after ``slaveTimeout`` (3 s) or ``syncFlushTimeout``
    (5 s): give them such a ``latency_ms``, and a producer with the default 3 s budget then sees
    a timeout.

    >>> model = not_stored_ok("broker-a")
    >>> model(MessageQueue("T", "broker-a", 0), 0, 3000).outcome.value
    'SLAVE_NOT_AVAILABLE'
    >>> model(MessageQueue("T", "broker-b", 0), 0, 3000).outcome.value
    'SEND_OK'
    """
    if not status.is_status or status is Outcome.SEND_OK:
        raise ValueError(f"a send status other than SEND_OK expected, got {status.value}")
    answering = set(brokers)

    def model(mq: MessageQueue, start_ms: int, budget_ms: int) -> AttemptResult:
        if mq.broker_name in answering:
            return AttemptResult(status, latency_ms)
        return AttemptResult(Outcome.SEND_OK, latency_ms)
    return model


def busy(*brokers: str, response_code: int = 2, latency_ms: int = 2) -> BrokerModel:
    """``brokers`` reply with an error response code (default 2, ``SYSTEM_BUSY``: the broker's
    flow control, "[TIMEOUT_CLEAN_QUEUE]broker busy"); the others answer SEND_OK. Every reply
    takes ``latency_ms``.

    >>> model = busy("broker-a")
    >>> r = model(MessageQueue("T", "broker-a", 0), 0, 3000)
    >>> r.outcome.value, r.response_code
    ('BROKER_ERROR', 2)
    """
    loaded = set(brokers)

    def model(mq: MessageQueue, start_ms: int, budget_ms: int) -> AttemptResult:
        if mq.broker_name in loaded:
            return AttemptResult(Outcome.BROKER_ERROR, latency_ms, response_code)
        return AttemptResult(Outcome.SEND_OK, latency_ms)
    return model
