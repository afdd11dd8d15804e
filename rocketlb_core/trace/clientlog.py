"""Reading what a RocketMQ client logs about its assignments (``../shared/reference/
real-data.md`` section 2): the ``rebalanced result changed`` line ``RebalanceImpl`` writes at
INFO into ``rocketmq_client.log`` whenever a rebalance changed a consumer's queues. It is the
only record a real cluster keeps of who owned which queue, and when.

4.9.x writes ``rebalanced result changed. allocateMessageQueueStrategyName=..., group=...,
topic=..., clientId=..., mqAllSize=..., cidAllSize=..., rebalanceResultSize=...,
rebalanceResultSet=[MessageQueue [topic=..., brokerName=..., queueId=...], ...]``; 5.x starts
it with ``client``. 5.x's ``broker rebalanced result changed`` (server-side assignment) is a
different record and is not read here. Other lines are skipped.

A producer's log gives two more records (``read_client_log`` collects them too):

* ``sendKernelImpl exception, resend at once, InvokeID: ..., RT: ...ms, Broker: MessageQueue
  [...]`` (``DefaultMQProducerImpl``, WARN): one failed attempt, its queue and how long it took.
  The message trace never has these (its hook returns when there is no send result). The
  exception follows on the next line; an ``MQBrokerException: CODE: N`` there (the broker
  answered with an error code, e.g. 2 ``SYSTEM_BUSY``: ``[TIMEOUT_CLEAN_QUEUE]broker busy``) is
  kept as the failure's ``response_code``: ``sendDefaultImpl`` retries only on the codes of
  ``retryResponseCodes`` and otherwise throws at once, whatever the line says;
* ``the topic[...] route info changed, old[...] ,new[TopicRouteData [... queueDatas=[QueueData
  [brokerName=..., readQueueNums=..., writeQueueNums=..., perm=...], ...]`` (``MQClientInstance``):
  the client's route changed, so its publish list and its round-robin counter are new;

and ``the producer [GROUP] start OK`` names the producer groups of the process.

Timestamps are text as written: 4.9.x writes ``yyyy-MM-dd HH:mm:ss,SSS`` in the JVM's time zone,
5.x ``yyyy-MM-dd HH:mm:ss.SSS`` in GMT+8 whatever the machine's zone (its logback pattern);
``stamp_ms`` turns one into epoch milliseconds given the offset.

A line that holds a phrase but does not parse is an error naming the file, the line and the
field (``TraceError``), or, with ``skip_bad=True``, counted in ``ClientLog.bad``.

>>> import tempfile, pathlib
>>> log = pathlib.Path(tempfile.mkdtemp()) / "rocketmq_client.log"
>>> _ = log.write_text(
...     "2026-11-23 22:40:01,123 INFO RebalanceService - rebalanced result "
...     "changed. allocateMessageQueueStrategyName=AVG, group=G, topic=T, "
...     "clientId=127.0.0.1@c1, mqAllSize=8, cidAllSize=2, "
...     "rebalanceResultSize=1, rebalanceResultSet=[MessageQueue "
...     "[topic=T, brokerName=broker-a, queueId=3]]\\n")
>>> r = read_client_log(log).rebalances[0]
>>> r.client_id, r.cid_all_size, [q.short() for q in r.result], r.line
('127.0.0.1@c1', 2, ['broker-a/3'], 1)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rocketlb_core.limits import MAX_EPOCH_MS, MAX_QUEUES, MAX_TIME_MS
from rocketlb_core.model import MessageQueue, QueueData
from rocketlb_core.numbers import INT32_MAX, NumberError, parse_int
from rocketlb_core.trace.schema import TraceError

PHRASE = "rebalanced result changed. allocateMessageQueueStrategyName="
_LINE = re.compile(
    r"(?P<stamp>^.*?)\s*(?:\S+ - )?(?P<client>client )?rebalanced result changed\. "
    r"allocateMessageQueueStrategyName=(?P<strategy>[^,]*), group=(?P<group>[^,]*), "
    r"topic=(?P<topic>[^,]*), clientId=(?P<client_id>[^,]*), mqAllSize=(?P<mq_all>[^,]*), "
    r"cidAllSize=(?P<cid_all>[^,]*), rebalanceResultSize=(?P<size>[^,]*), "
    r"rebalanceResultSet=\[(?P<set>.*)\]\s*$")
_QUEUE = re.compile(r"MessageQueue \[topic=([^,\]]*), brokerName=([^,\]]*), queueId=(-?\d+)\]",
                    re.ASCII)
_FIELDS = ("strategy", "group", "topic", "client_id", "mq_all", "cid_all", "size", "set")


@dataclass(frozen=True)
class Rebalance:
    """One ``rebalanced result changed`` line: a consumer's new share of one topic."""

    path: str
    line: int
    stamp: str                          # the line's timestamp text, as written
    strategy: str
    group: str
    topic: str
    client_id: str
    mq_all_size: int
    cid_all_size: int
    result: tuple[MessageQueue, ...]


@dataclass(frozen=True)
class SendFailure:
    """One failed send attempt (``sendKernelImpl exception, resend at once``)."""

    line: int
    stamp: str                          # when it was logged: the attempt's end
    rt_ms: int                          # how long the attempt took
    queue: MessageQueue
    response_code: int | None = None    # an MQBrokerException's code (the next line), else None
    thread: str = ""                    # the sending thread, where the line names it (5.x)
    invoke_id: int | None = None        # sendDefaultImpl's InvokeID: one per send, all attempts


@dataclass(frozen=True)
class RouteChange:
    """The client's route of ``topic`` changed (``route info changed``): the new queue data."""

    line: int
    stamp: str
    topic: str
    queue_datas: tuple[QueueData, ...]
    masterless: tuple[str, ...] = ()
    """The brokers the new route lists with no master address (broker id 0): a master that died
    beside its slave. A producer's list skips their queues (spec 1.3)."""


@dataclass(frozen=True)
class Isolation:
    """A fault item's isolation moved later (``<broker> will be isolated for <N> ms.``), which
    5.1.4 and later clients log from ``FaultItem.updateNotAvailableDuration`` each time a report
    pushes a broker's end of isolation later (``LineRules.logs_isolation``): after a failed
    attempt (10 s since 5.1.4) and after a slow successful one (2 s from 550 ms)."""

    line: int
    stamp: str                          # when the report was made: the attempt's end
    thread: str                         # the reporting thread (a producer's sending thread)
    broker: str
    duration_ms: int


@dataclass(frozen=True)
class UnmatchedReply:
    """A broker's reply that matched no request of the client (``receive response, cmd=...,
    but not matched any request, address=...``): the answer to a oneway request, which waits
    for none. A broker answers one when it refuses it, e.g. its flow control's
    ``[TIMEOUT_CLEAN_QUEUE]broker busy`` (code 2, SYSTEM_BUSY): the message is not stored."""

    line: int
    stamp: str                          # when the client read the reply
    code: int
    address: str                        # the broker's address the channel led to


@dataclass(frozen=True)
class LostTrace:
    """A batch of message-trace records the client's trace dispatcher failed to send (``send
    trace data failed, the traceData is <data>``, then the exception): ``AsyncTraceDispatcher``
    logs the batch's whole encoded data (fact trace.dispatcher-logs-a-failed-batch-whole), so
    the records the trace topic never got are in the log (``msgtrace.with_logged``). Live on
    4.9.8 (issue 45's soak, scenario 60833446424649), a 4-thread producer sending batches of 21
    lost 5,351 of its 6,100 ``Pub`` records so: the trace message's keys (every message id of
    its records) passed 32,767 characters, and the broker refused it, 98 times (code 13, fact
    broker.properties-over-32767-refused-code-13)."""

    line: int
    stamp: str
    data: str                           # the records as encoded, separators kept


@dataclass
class ClientLog:
    rebalances: list[Rebalance] = field(default_factory=list)
    send_failures: list[SendFailure] = field(default_factory=list)
    route_changes: list[RouteChange] = field(default_factory=list)
    isolations: list[Isolation] = field(default_factory=list)
    unmatched_replies: list[UnmatchedReply] = field(default_factory=list)
    lost_traces: list[LostTrace] = field(default_factory=list)
    """The trace records the client failed to send (``LostTrace``), in file order."""
    producer_groups: list[str] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)        # with skip_bad: what was skipped, why


FAILURE = "sendKernelImpl exception, resend at once"
_FAILURE = re.compile(r"^(?P<stamp>\S+ \S+) (?:\S+\s+\[[^\]]*\] \[(?P<thread>[^\]]*)\] )?"
                      r".*?sendKernelImpl exception, resend at once, "
                      r"InvokeID: (?P<invoke>-?\d+), RT: (?P<rt>\d+)ms, Broker: (?P<mq>.*?)\s*$",
                      re.ASCII)
_BROKER_ERROR = re.compile(r"^\S*\bMQBrokerException: CODE: (?P<code>-?\d+)\b", re.ASCII)
ROUTE = "route info changed, old["
_ROUTE = re.compile(r"^(?P<stamp>\S+ \S+) .*?the topic\[(?P<topic>[^\]]*)\] route info changed")
_QUEUE_DATA = re.compile(r"QueueData \[brokerName=([^,\]]*), readQueueNums=(\d+), "
                         r"writeQueueNums=(\d+), perm=(\d+)", re.ASCII)
_PRODUCER = re.compile(r"the producer \[(?P<group>[^\]]*)\] start OK")
_BROKER_DATA = re.compile(r"BrokerData \[brokerName=([^,\]]*), brokerAddrs=\{([^}]*)\}")
_MASTER_ADDR = re.compile(r"(?:^|, )0=")
MAX_ADDRESS = 300
"""An unmatched reply's address is kept to this many characters."""
UNMATCHED = "but not matched any request, address="
_UNMATCHED = re.compile(r"^(?P<stamp>\S+ \S+) .*?receive response, cmd=RemotingCommand \[code="
                        r"(?P<code>-?\d+),.*\], but not matched any request, "
                        r"address=(?P<addr>[^\s,]+)", re.ASCII)
ISOLATED = " will be isolated for "
_ISOLATED = re.compile(r"^(?P<stamp>\S+ \S+) (?:\S+\s+\[[^\]]*\] \[(?P<thread>[^\]]*)\] )?.*? "
                       r"(?P<broker>\S+) will be isolated for (?P<ms>\d+) ms\.\s*$", re.ASCII)
LOST_TRACE = "send trace data failed, the traceData is "
_LOST_TRACE = re.compile(r"^(?P<stamp>\S+ \S+) .*?send trace data failed, the traceData is "
                         r"(?P<data>.*?)\s*$", re.ASCII | re.DOTALL)
_STAMP = re.compile(r"^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)[,.](\d{3})$", re.ASCII)
GMT8_MINUTES = 480
"""5.1.0 and later clients write their log times in GMT+8 (``rmq.client.logback.xml``)."""


def log_zone_minutes(stamp: str, jvm_zone_minutes: int) -> int:
    """The offset east of UTC a client log's ``stamp`` was written at, told by its form: from
    5.1.0 the client logs through ``rmq.client.logback.xml``, ``yyy-MM-dd HH:mm:ss.SSS`` in GMT+8
    whatever the host's zone; up to 5.0.0 (4.x included) through rocketmq-logging,
    ``yyyy-MM-dd HH:mm:ss,SSS`` in the JVM's zone (``jvm_zone_minutes``; fact
    ``client.log-time-zone-gmt8-since-5.1.0``). So 5.0.0 to 5.1.3, whose fault tables are
    4.x's, still differ in their log's zone.

    >>> log_zone_minutes("2026-11-27 10:00:00.123", 0)
    480
    >>> log_zone_minutes("2026-11-27 10:00:00,123", -300)
    -300
    """
    return GMT8_MINUTES if stamp[19:20] == "." else jvm_zone_minutes


def stamp_ms(stamp: str, utc_offset_minutes: int) -> int:
    """Epoch milliseconds of a log timestamp (what a line starts with) written at
    ``utc_offset_minutes`` east of UTC.

    >>> stamp_ms("1970-01-01 08:00:01.250", GMT8_MINUTES)
    1250
    """
    import calendar

    m = _STAMP.match(stamp[:23])
    if m is None:
        raise ValueError(f"not a log timestamp: {stamp[:40]!r}")
    y, mo, d, h, mi, sec, ms = (int(x) for x in m.groups())
    if not (1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1] and h < 24 and mi < 60
            and sec < 61):
        raise ValueError(f"not a date and time: {stamp[:40]!r}")
    return (calendar.timegm((y, mo, d, h, mi, sec)) * 1000 + ms
            - utc_offset_minutes * 60_000)


def check_stamp(path: Path | str, n: int, stamp: str, utc_offset_minutes: int = 0) -> str:
    """``stamp`` if it is a log timestamp of a real date from 1970 to 2100, else a
    ``TraceError`` naming the file and the line."""
    try:
        t = stamp_ms(stamp, utc_offset_minutes)
    except ValueError as exc:
        raise TraceError(path, n, "timestamp", str(exc)) from None
    if not 0 <= t + utc_offset_minutes * 60_000 <= MAX_EPOCH_MS:
        raise TraceError(path, n, "timestamp", f"{stamp[:40]!r} is outside 1970 to 2100")
    return stamp


def _int(path: Path, n: int, name: str, text: str, high: int = INT32_MAX, low: int = 0) -> int:
    """A number of a log line (``numbers.parse_int``), from ``low`` to ``high``."""
    try:
        return parse_int(text, low, high)
    except NumberError as exc:
        raise TraceError(path, n, name, str(exc)) from None


def _stamp(path: Path, n: int, text: str) -> str:
    stamp = " ".join(text.split(" ", 2)[:2])
    if _STAMP.match(stamp) is None:
        raise TraceError(path, n, "timestamp", f"not a log timestamp: {stamp[:40]!r}")
    return check_stamp(path, n, stamp)


def parse_producer_line(path: Path, n: int, text: str
                        ) -> (SendFailure | RouteChange | Isolation | UnmatchedReply | LostTrace
                              | str | None):
    """A failed attempt, a route change, an isolation, an unmatched reply, trace records the
    client failed to send or a producer group on line ``n`` (or ``None``).

    >>> r = parse_producer_line(
    ...     Path("c.log"), 7, "2026-11-27 00:34:47.648 INFO  [8775] [main] "
    ...     "[o.a.r.c.l.MQFaultStrategy#?:?] - broker-b will be isolated "
    ...     "for 2000 ms.")
    >>> r.stamp, r.thread, r.broker, r.duration_ms
    ('2026-11-27 00:34:47.648', 'main', 'broker-b', 2000)
    """
    text = text.rstrip("\r\n")
    if LOST_TRACE in text:
        # first: the data holds the application's keys, which may hold any other phrase
        m = _LOST_TRACE.match(text)
        if m is not None and _STAMP.match(m["stamp"]):
            return LostTrace(n, _stamp(path, n, text), m["data"])
        return None
    if ISOLATED in text:
        # only the agreement check reads these (a 5.1.4+ producer's log): a line that merely
        # holds the phrase is not refused, it is no record
        m = _ISOLATED.match(text)
        if m is not None and _STAMP.match(m["stamp"]):
            return Isolation(n, _stamp(path, n, text), m["thread"] or "", m["broker"],
                             _int(path, n, "isolated for", m["ms"], MAX_TIME_MS))
        return None
    if UNMATCHED in text:
        # read by the oneway check alone: a line that merely holds the phrase is no record
        m = _UNMATCHED.match(text)
        if m is not None and _STAMP.match(m["stamp"]):
            return UnmatchedReply(n, _stamp(path, n, text),
                                  _int(path, n, "code", m["code"], INT32_MAX, -INT32_MAX - 1),
                                  m["addr"][:MAX_ADDRESS])
        return None
    if FAILURE in text:
        m = _FAILURE.match(text)
        q = _QUEUE.fullmatch(m["mq"]) if m else None
        if m is None or q is None:
            raise TraceError(path, n, "Broker" if m else "RT", "a sendKernelImpl line without "
                             "'InvokeID: N, RT: Nms, Broker: MessageQueue [...]'")
        return SendFailure(n, _stamp(path, n, text), _int(path, n, "RT", m["rt"], MAX_TIME_MS),
                           MessageQueue(q[1], q[2], _int(path, n, "queueId", q[3], low=-1)),
                           thread=m["thread"] or "",
                           invoke_id=_int(path, n, "InvokeID", m["invoke"], (1 << 63) - 1,
                                          -(1 << 63)))
    if ROUTE in text:
        m = _ROUTE.match(text)
        new = text.find(",new[")
        if m is None or new < 0:
            raise TraceError(path, n, "new", "a route-change line without 'the topic[...]' "
                             "and ',new['")
        qds = tuple(QueueData(b, _int(path, n, "readQueueNums", r, MAX_QUEUES),
                              _int(path, n, "writeQueueNums", w, MAX_QUEUES),
                              _int(path, n, "perm", pm, 7))
                    for b, r, w, pm in _QUEUE_DATA.findall(text[new:]))
        masterless = tuple(b for b, addrs in _BROKER_DATA.findall(text[new:])
                           if not _MASTER_ADDR.search(addrs))
        return RouteChange(n, _stamp(path, n, text), m["topic"], qds, masterless)
    m = _PRODUCER.search(text)
    return m["group"] if m else None


def parse_line(path: Path, n: int, text: str) -> Rebalance | None:
    """The rebalance record on line ``n`` of ``path`` (``None``: no such record there)."""
    if PHRASE not in text or "broker rebalanced result changed" in text:
        return None
    m = _LINE.search(text.rstrip("\r\n"))
    if m is None:
        missing = next((f for f in ("group=", "topic=", "clientId=", "mqAllSize=",
                                    "cidAllSize=", "rebalanceResultSize=", "rebalanceResultSet=[")
                        if f not in text), "rebalanceResultSet")
        raise TraceError(path, n, missing.rstrip("=["), "a rebalanced-result line that does "
                         f"not have the fields of 4.9.x/5.x (missing or malformed {missing!r})")
    size = _int(path, n, "rebalanceResultSize", m["size"])
    queues = tuple(MessageQueue(t, b, _int(path, n, "queueId", q, low=-1))
                   for t, b, q in _QUEUE.findall(m["set"]))
    if len(queues) != size:
        raise TraceError(path, n, "rebalanceResultSet",
                         f"{len(queues)} queues listed, rebalanceResultSize says {size}")
    for q in queues:
        if q.topic != m["topic"]:
            raise TraceError(path, n, "rebalanceResultSet",
                             f"queue of topic {q.topic!r} in a rebalance of {m['topic']!r}")
    if not m["client_id"]:
        raise TraceError(path, n, "clientId", "empty")
    return Rebalance(str(path), n, m["stamp"].strip(), m["strategy"], m["group"], m["topic"],
                     m["client_id"], _int(path, n, "mqAllSize", m["mq_all"]),
                     _int(path, n, "cidAllSize", m["cid_all"]), queues)


def parsed_lines(path: Path, parse: Callable[[Path, int, str], Any], skip_bad: bool,
                 bad: list[str]) -> Iterator[Any]:
    """``parse(path, n, text)`` of every line of a log file (read within the bounds of
    ``rocketlb_core.trace.textfile``: a regular file, gzip by name), where it found a record; a
    line it refuses raises its ``TraceError``, or with ``skip_bad`` is noted in ``bad`` and
    skipped."""
    from rocketlb_core.trace.textfile import read_lines

    for n, text in read_lines(path, errors="replace"):
        try:
            record = parse(path, n, text)
        except TraceError as exc:
            if not skip_bad:
                raise
            bad.append(str(exc))
            continue
        if record is not None:
            yield record


@dataclass(frozen=True)
class BrokerError:
    """An ``MQBrokerException: CODE: N`` line: the exception of the failure logged just before."""

    line: int
    code: int


Record = (Rebalance | SendFailure | RouteChange | Isolation | UnmatchedReply | BrokerError
          | LostTrace | str)


def record_of_line(path: Path, n: int, text: str) -> Record | None:
    """Whichever record of a client log line ``n`` holds (``None``: none): a rebalance, an
    ``MQBrokerException`` line (the exception of the failure logged just before), a failed
    attempt, a route change, trace records the client failed to send or a producer group
    (``read_client_log`` and ``rocketlb doctor`` read lines with it)."""
    if LOST_TRACE in text:                  # its data may hold any phrase below
        return parse_producer_line(path, n, text)
    record = parse_line(path, n, text)
    if record is not None:
        return record
    m = _BROKER_ERROR.match(text)
    if m is not None:
        return BrokerError(n, int(m["code"]))
    return parse_producer_line(path, n, text)


QUEUE_SET = "messageQueueChanged "
_QUEUE_SET = re.compile(r"^(?P<stamp>\S+ \S+) .*?messageQueueChanged (?P<group>\S+) "
                        r"(?P<topic>\S+) \[(?P<sets>.*)\]\s*$")
ADD_MQ = ", add a new mq"
_ADD_MQ = re.compile(r"^(?P<stamp>\S+ \S+) .*?doRebalance, (?P<group>[^,]*), add a new mq"
                     r"(?P<failed> failed)?, (?P<mq>MessageQueue \[[^\]]*\])"
                     r"(?P<lock>, because lock failed)?\s*$")
FIRST_PULL = "the first time to pull message, so fix offset from broker"
_FIRST_PULL = re.compile(r"^(?P<stamp>\S+ \S+) .*?the first time to pull message, so fix offset "
                         r"from broker\. pullRequest: PullRequest \[consumerGroup="
                         r"(?P<group>[^,]*), messageQueue=(?P<mq>MessageQueue \[[^\]]*\]), "
                         r"nextOffset=(?P<next>-?\d+)\] NewOffset: (?P<new>-?\d+) "
                         r"brokerBusy: (?:true|false)\s*$")


@dataclass(frozen=True)
class QueueSetChanged:
    """A ``messageQueueChanged GROUP TOPIC [set] [set]`` line: the queue set a *broadcasting*
    consumer now holds (``RebalanceImpl.rebalanceByTopic``'s ``BROADCASTING`` branch logs it,
    the set twice, whenever its table changed; a clustering rebalance logs ``rebalanced result
    changed`` instead)."""

    line: int
    stamp: str
    group: str
    topic: str
    queues: tuple[MessageQueue, ...]


@dataclass(frozen=True)
class QueueAdded:
    """A ``doRebalance, GROUP, add a new mq[ failed], MQ[, because lock failed]`` line of
    ``updateProcessQueueTableInRebalance``: a queue taken (``outcome`` ``"added"``), refused
    because the broker did not grant its lock (``"lock_refused"``) or skipped because its start
    offset could not be computed (``"failed"``)."""

    line: int
    stamp: str
    group: str
    queue: MessageQueue
    outcome: str


@dataclass(frozen=True)
class FirstPull:
    """An orderly consumer's ``the first time to pull message, so fix offset from broker``
    line (``DefaultMQPushConsumerImpl.pullMessage``): at the first pull of a locked queue it
    computes the start offset again and pulls from that (``new_offset``), not from the one its
    rebalance computed (``next_offset``)."""

    line: int
    stamp: str
    group: str
    queue: MessageQueue
    next_offset: int
    new_offset: int


def parse_queue_line(path: Path, n: int, text: str
                     ) -> QueueSetChanged | QueueAdded | FirstPull | None:
    """A broadcasting member's queue set, or one queue's creation, on line ``n`` (``None``:
    neither). A line with the phrase that does not parse is a ``TraceError``.

    >>> r = parse_queue_line(
    ...     Path("c.log"), 3, "2026-11-28 10:00:00,001 WARN Rebalance - "
    ...     "doRebalance, G, add a new mq failed, MessageQueue "
    ...     "[topic=T, brokerName=broker-a, queueId=1], because "
    ...     "lock failed")
    >>> r.group, r.queue.short(), r.outcome
    ('G', 'broker-a/1', 'lock_refused')
    """
    text = text.rstrip("\r\n")
    if FIRST_PULL in text:
        m = _FIRST_PULL.match(text)
        q = _QUEUE.fullmatch(m["mq"]) if m else None
        if m is None or q is None or not _STAMP.match(m["stamp"]):
            raise TraceError(path, n, "NewOffset", "a first-pull line without 'TIME ... "
                             "PullRequest [consumerGroup=..., messageQueue=MessageQueue [...], "
                             "nextOffset=N] NewOffset: N brokerBusy: B'")
        return FirstPull(n, m["stamp"], m["group"],
                         MessageQueue(q[1], q[2], _int(path, n, "queueId", q[3], low=-1)),
                         _int(path, n, "nextOffset", m["next"], (1 << 63) - 1, -(1 << 63)),
                         _int(path, n, "NewOffset", m["new"], (1 << 63) - 1, -(1 << 63)))
    if QUEUE_SET in text:
        m = _QUEUE_SET.match(text)
        if m is None or not _STAMP.match(m["stamp"]):
            raise TraceError(path, n, "messageQueueChanged", "a line without 'TIME ... "
                             "messageQueueChanged GROUP TOPIC [queues] [queues]'")
        found = [MessageQueue(t, b, _int(path, n, "queueId", q, low=-1))
                 for t, b, q in _QUEUE.findall(m["sets"])]
        half = len(found) // 2
        if len(found) % 2 or found[:half] != found[half:] or len(found) > 2 * MAX_QUEUES:
            raise TraceError(path, n, "messageQueueChanged", "the two queue sets differ (the "
                             "BROADCASTING branch logs one set twice)")
        for mq in found[:half]:
            if mq.topic != m["topic"]:
                raise TraceError(path, n, "messageQueueChanged",
                                 f"queue of topic {mq.topic!r:.60} in a change of "
                                 f"{m['topic']!r:.60}")
        return QueueSetChanged(n, m["stamp"], m["group"], m["topic"], tuple(found[:half]))
    if ADD_MQ in text and "doRebalance, " in text:
        m = _ADD_MQ.match(text)
        q = _QUEUE.fullmatch(m["mq"]) if m else None
        if m is None or q is None or not _STAMP.match(m["stamp"]):
            raise TraceError(path, n, "add a new mq", "a line without 'TIME ... doRebalance, "
                             "GROUP, add a new mq[ failed], MessageQueue [...]'")
        outcome = ("lock_refused" if m["lock"] else "failed") if m["failed"] else "added"
        if m["lock"] and not m["failed"]:
            raise TraceError(path, n, "add a new mq", "'because lock failed' after a queue "
                             "that was added")
        return QueueAdded(n, m["stamp"], m["group"],
                          MessageQueue(q[1], q[2], _int(path, n, "queueId", q[3], low=-1)),
                          outcome)
    return None


def read_queue_events(path: Path | str, *, skip_bad: bool = False
                      ) -> list[QueueSetChanged | QueueAdded | FirstPull]:
    """Every broadcasting queue set, queue creation and orderly first pull of one client log,
    in file order (``trace.broadcast_agreement``)."""
    bad: list[str] = []
    return list(parsed_lines(Path(path), parse_queue_line, skip_bad, bad))


NOT_LATEST = "the consumer's subscription not latest"
_NOT_LATEST = re.compile(r"^\S*MQBrokerException: CODE: 25\s+DESC: the consumer's subscription not "
                         r"latest BROKER: (?P<addr>[^\s,]+)", re.ASCII)


def read_not_latest(path: Path | str) -> list[tuple[str, str]]:
    """Every pull a broker refused with code 25, ``SUBSCRIPTION_NOT_LATEST`` (the broker holds
    an older version of the consumer's subscription than the pull carries: 4.9.7
    ``PullMessageProcessor``), in one client log: ``(stamp, broker address)``, the stamp of the
    last stamped line before the exception's (its ``execute the pull request exception``)."""
    last = [""]                 # the last stamped line's stamp, carried from line to line

    def parse(_path: Path, _n: int, text: str) -> tuple[str, str] | None:
        head = text[:23].strip()
        if _STAMP.match(head):
            last[0] = head
        elif NOT_LATEST in text and last[0]:
            m = _NOT_LATEST.match(text)
            if m is not None:
                return last[0], m["addr"][:MAX_ADDRESS]
        return None

    return list(parsed_lines(Path(path), parse, False, []))


def read_client_log(path: Path | str, *, skip_bad: bool = False) -> ClientLog:
    """Every record of one client log file (rebalances, failed attempts, route changes,
    isolations, producer groups), in file order."""
    path = Path(path)
    out = ClientLog()
    record: Record
    for record in parsed_lines(path, record_of_line, skip_bad, out.bad):
        if isinstance(record, Rebalance):
            out.rebalances.append(record)
        elif isinstance(record, SendFailure):
            out.send_failures.append(record)
        elif isinstance(record, BrokerError):
            last = out.send_failures[-1] if out.send_failures else None
            if last is not None and last.line == record.line - 1:
                out.send_failures[-1] = replace(last, response_code=record.code)
        elif isinstance(record, RouteChange):
            out.route_changes.append(record)
        elif isinstance(record, Isolation):
            out.isolations.append(record)
        elif isinstance(record, UnmatchedReply):
            out.unmatched_replies.append(record)
        elif isinstance(record, LostTrace):
            out.lost_traces.append(record)
        elif record not in out.producer_groups:
            out.producer_groups.append(record)
    return out
