"""What ``rocketlb doctor`` reads, each file recognised by its content, never by its name.

Kinds (``KINDS``):

* ``consumerConnection``: ``mqadmin consumerConnection -g GROUP``: one row per connection
  (``#ClientId #ClientAddr #Language #Version``; older tools number the rows ``NNN``), then
  ``Below is subscription:`` and the group's subscription table (``#Topic #SubExpression``, or
  ``NNN  Topic: T  SubExpression: E``). The group is not printed: it is read from the
  ``%RETRY%GROUP`` subscription every push consumer has;
* ``consumerProgress``: ``mqadmin consumerProgress -g GROUP [-s true]``: ``#Topic #Broker Name
  #QID #Broker Offset #Consumer Offset [#Client IP] #Diff [#Inflight] #LastTime`` rows (5.x adds
  ``#Inflight``; ``-s true`` adds ``#Client IP``, the owner of each queue). The group is read
  from its ``%RETRY%GROUP`` rows;
* ``topicRoute``: ``mqadmin topicRoute -t TOPIC``: fastjson (integer keys unquoted). The topic
  is not printed: it is matched with the topics the other inputs name (the only topic whose
  queues fit), else taken from the file's name when that names exactly one of them;
* ``clusterList``: ``mqadmin clusterList``: ``#Cluster Name #Broker Name #BID #Addr #Version``
  ... rows: broker names, addresses and versions;
* ``brokerStatus``: ``mqadmin brokerStatus -b ADDR``: ``key : value`` lines;
* ``clientLog`` and ``brokerLog``: a RocketMQ log (lines that start with a log timestamp), read
  with the importers' parsers (``trace.clientlog``, ``trace.brokerlog``): rebalances, failed
  sends, route changes, client versions, consumer membership; and a client's subscriptions, from
  the ``HeartbeatData [clientID=...]`` lines it logs (its first heartbeat and every 20th, 4.9.x
  and 5.x: ``MQClientInstance.sendHeartbeatToAllBroker``). A log with none of these records
  (a name server's, a broker's ``stats.log``) is listed as ignored. A line stamped to the second
  (``yyyy-MM-dd HH:mm:ss``: a broker's, a name server's or a Proxy's log) is never read as a
  client's line: the remoting clients stamp to the millisecond (4.x ``,SSS``, 5.x ``.SSS``);
* ``goClientLog``: rocketmq-client-go's log (issue 47; ``time="..." level=... msg=...`` lines,
  logrus's text format, ``~/logs/rocketmqlogs/`` or wherever the application writes it): its
  push consumers' ``MessageQueue do balance done`` lines (``trace.golog``), read as a client
  log's rebalances; the Go client names no strategy there, so the group's check infers it from
  the logged share;
* logs the doctor recognises and does not read (``other_log``), listed as ignored with the
  reason, never an error: a RocketMQ Proxy's (rocketmq-proxy 5.x: ``proxy.log``, and the
  ``broker_default.log`` and ``broker.log`` its embedded clients and client manager write;
  recognised by what only the Proxy logs, ``PROXY_MARKERS``: its ``GrpcClientChannel{``
  channels, its ``GrpcClientManagerThreadPool``, ``ProducerProcessorExecutor`` and
  ``ConsumerProcessorExecutor`` threads, its ``rmq-proxy.json``, its own client's lines about its
  heartbeat syncer's consumer ``CID_DefaultHeartBeatSyncerTopic``);
  a gRPC Python client's (``YYYY-MM-DD HH:MM:SS,mmm [LEVEL]`` lines naming a ``client_id:``).
  None holds the remoting clients' rebalance, failed-send or route lines the doctor reads;
* ``grpcClientLog``: a gRPC Java client's log (rocketmq-client-java 5.x,
  ``~/logs/rocketmq/rocketmq-client.log``: loggers ``o.a.r.c.j.*`` and the shaded ``o.a.r.s.*``
  in its ``[%logger{12}#%M:%L]`` field; issue 47): the clients it names, a push consumer's
  group and its assignments (``read_grpc_log``), what the ``grpc-beside-remoting`` finding
  reads; one that names no client is ignored (``GRPC_JAVA_LOG``);
* ``msgtrace``: a dump of ``RMQ_SYS_TRACE_TOPIC`` (JSON lines with a ``body``), read with
  ``trace.msgtrace``.

Every file is read through ``trace.textfile.read_lines`` (regular files only, gzip by the name's
``.gz``, bounded by ``limits.MAX_IMPORT_BYTES``, ``MAX_IMPORT_LINES``, ``MAX_LINE_BYTES``). A file
of no known kind, or of a kind the doctor does not read (a Proxy's or a gRPC Python client's
log), is *ignored*: listed with the reason, never an error. A known file with a line that does
not parse is a ``TraceError`` naming the file and the line, or with ``skip_bad`` is counted.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from rocketlb_core.limits import MAX_QUEUES
from rocketlb_core.model import BrokerData, MessageQueue, QueueData, TopicRoute
from rocketlb_core.trace.clientlog import Rebalance, RouteChange, SendFailure
from rocketlb_core.trace.schema import TraceError

KINDS = ("consumerConnection", "consumerProgress", "topicRoute", "clusterList", "brokerStatus",
         "clientLog", "brokerLog", "msgtrace", "goClientLog", "grpcClientLog")
MAX_FILES = 10_000                 # files of the folders given, in all
MAX_DEPTH = 8                      # folders below a folder given
SNIFF_LINES = 64                   # lines read to recognise a file
MAX_JSON_BYTES = 16 << 20          # a topicRoute output
EVIDENCE_CHARS = 240               # what is kept of a line to quote it
HISTORY = 64                       # rebalances kept per client log, group and topic
MAX_CHANGES = 20_000               # rebalance lines kept per client log, group and topic
MAX_FAILURES = 100_000             # failed sends kept per client log


@dataclass(frozen=True)
class Evidence:
    """A line of an input, quoted: ``path:line: text``."""

    path: str
    line: int
    text: str

    def as_json(self) -> dict[str, Any]:
        return {"file": self.path, "line": self.line, "text": self.text}


def quote(path: Path | str, n: int, text: str) -> Evidence:
    text = text.rstrip("\r\n")
    if len(text) > EVIDENCE_CHARS:
        text = text[:EVIDENCE_CHARS - 3] + "..."
    return Evidence(str(path), n, text)


@dataclass(frozen=True)
class Connection:
    client_id: str
    addr: str
    language: str
    version: str
    ev: Evidence


@dataclass(frozen=True)
class Subscription:
    topic: str
    expression: str
    ev: Evidence


@dataclass
class ConnectionFile:
    path: str
    group: str | None
    connections: list[Connection] = field(default_factory=list)
    subscriptions: list[Subscription] = field(default_factory=list)
    model: str | None = None


@dataclass(frozen=True)
class ProgressRow:
    topic: str
    broker: str
    queue_id: int
    broker_offset: int
    consumer_offset: int
    client: str | None              # -s true: the owner's IP ("" when no one owns the queue)
    diff: int
    ev: Evidence


@dataclass
class ProgressFile:
    path: str
    group: str | None
    with_clients: bool
    rows: list[ProgressRow] = field(default_factory=list)


@dataclass
class RouteFile:
    path: str
    route: TopicRoute
    ev: Evidence
    topic: str | None = None        # assigned by ``name_routes``


@dataclass(frozen=True)
class BrokerRow:
    cluster: str
    broker: str
    broker_id: int
    addr: str
    version: str
    ev: Evidence


@dataclass
class ClusterFile:
    path: str
    brokers: list[BrokerRow] = field(default_factory=list)


@dataclass
class StatusFile:
    path: str
    values: dict[str, tuple[str, Evidence]] = field(default_factory=dict)


@dataclass(frozen=True)
class LastRebalance(Rebalance):
    """A client log's ``rebalanced result changed`` line (``trace.clientlog.Rebalance``) for one
    group and topic, with the line quoted."""

    ev: Evidence


@dataclass(frozen=True)
class Failure:
    """A failed send attempt (``trace.clientlog.SendFailure``, with the ``MQBrokerException``
    code of the next line), its line quoted, and the exception's line (the next line, where it
    is not a log line)."""

    failure: SendFailure
    ev: Evidence
    exception: Evidence | None


@dataclass(frozen=True)
class RouteSeen:
    """A client's route of ``topic`` as its log's last ``route info changed`` line gives it."""

    change: RouteChange
    ev: Evidence


@dataclass(frozen=True)
class SubscriptionSeen:
    """A consumer's subscription of ``topic`` in ``group`` as its last logged heartbeat sent it
    (``SubscriptionData [... topic=T, subString=E, ..., subVersion=N, expressionType=TAG]``):
    the broker keeps, per group and topic, the one with the highest ``sub_version``."""

    client_id: str
    group: str
    topic: str
    expression: str
    sub_version: int
    expression_type: str
    ev: Evidence


@dataclass
class ClientLogFile:
    path: str
    client_ids: list[str] = field(default_factory=list)
    client: str = "java"
    """Whose log: ``java`` (the remoting client's ``rocketmq_client.log``) or ``go``
    (rocketmq-client-go's, ``trace.golog``: its rebalances only, no strategy named)."""
    version: tuple[str, Evidence] | None = None
    consumer_groups: dict[str, Evidence] = field(default_factory=dict)
    producer_groups: dict[str, Evidence] = field(default_factory=dict)
    shut_down: dict[str, Evidence] = field(default_factory=dict)     # consumer groups
    last: dict[tuple[str, str], LastRebalance] = field(default_factory=dict)
    history: dict[tuple[str, str], list[LastRebalance]] = field(default_factory=dict)
    seen: dict[str, set[MessageQueue]] = field(default_factory=dict)  # topic -> queues listed
    rebalances: int = 0
    send_failures: int = 0
    lost_traces: int = 0
    """``send trace data failed`` lines: trace batches the client's dispatcher lost."""
    lost_published: list[Published] = field(default_factory=list)
    """The stored sends (``Pub`` records with ``success`` true) of those batches, which the
    line holds whole (``clientlog.LostTrace``); a record that does not parse is a bad line."""
    end_stamp: str = ""                 # the last line's timestamp
    failures: list[Failure] = field(default_factory=list)          # at most MAX_FAILURES
    routes: dict[str, RouteSeen] = field(default_factory=dict)     # topic -> the last route
    changes: dict[tuple[str, str], list[LastRebalance]] = field(default_factory=dict)
    """Every ``rebalanced result changed`` line per group and topic (at most ``MAX_CHANGES``
    each): what ``doctor.producers.rebalance_storms`` counts."""
    subscriptions: dict[tuple[str, str], SubscriptionSeen] = field(default_factory=dict)
    """(group, topic) -> the subscription the log's last heartbeat line sent."""
    route_union: dict[str, dict[str, QueueData]] = field(default_factory=dict)
    """topic -> broker -> its queue data as the log's first ``route info changed`` line that
    listed it gave it: the widest route the client saw (a broker that left the route later is
    kept), what ``doctor.replayed`` replays a producer day on."""
    broker_addrs: dict[str, str] = field(default_factory=dict)
    """broker -> its master's address (``BrokerData [brokerName=B, brokerAddrs={0=ADDR}``) in
    the logged routes."""


@dataclass(frozen=True)
class GrpcAssignment:
    """A gRPC push consumer's assignment of ``topic`` (its log's last "Assignments of topic=...
    has changed" line): ``(broker, queue id)`` in the Proxy's order, ``-1`` for a broker popped
    whole."""

    client_id: str
    topic: str
    queues: tuple[tuple[str, int], ...]
    ev: Evidence
    first: str = ""                 # the stamp of its first assignment of the topic


@dataclass
class GrpcLogFile:
    """A gRPC Java client's log (rocketmq-client-java 5.x, ``rocketmq-client.log``; issue 47):
    the clients it names (one process may run several), each one's role and a push consumer's
    group (its statistics and consume-service lines name it; a simple consumer's and a
    producer's lines name none), and each push consumer's last assignment per topic."""

    path: str
    client_ids: list[str] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)              # client id -> role
    groups: dict[str, tuple[str, Evidence]] = field(default_factory=dict)   # client id -> group
    assignments: dict[tuple[str, str], GrpcAssignment] = field(default_factory=dict)
    version: tuple[str, Evidence] | None = None
    stopped: dict[str, str] = field(default_factory=dict)     # client id -> its shutdown stamp
    end_stamp: str = ""                 # the last line's timestamp


@dataclass(frozen=True)
class MemberLine:
    event: str                       # join | leave | kill | crash
    group: str
    client_id: str
    channel: str
    host: str                        # the client's address (IP:port) as the broker saw it
    ev: Evidence


@dataclass
class BrokerLogFile:
    path: str
    events: list[MemberLine] = field(default_factory=list)


@dataclass(frozen=True)
class Published:
    """A trace ``Pub`` record, as much of it as the doctor uses."""

    group: str
    store_host: str                 # the broker's address
    topic: str
    time_ms: int                    # when the successful attempt started (epoch ms)
    cost_ms: int
    key: int = 0
    """The record's message id(s) hashed to 64 bits (``record_key``): one per stored send, so
    two sends alike in every other field stay two, in less memory than the ids."""


def record_key(msg_id: str) -> int:
    """A trace record's message id(s) as 64 bits (BLAKE2b)."""
    import hashlib

    return int.from_bytes(hashlib.blake2b(msg_id.encode("utf-8", "surrogatepass"),
                                          digest_size=8).digest(), "big")


@dataclass
class TraceFile:
    path: str
    pubs: int = 0
    subs: int = 0
    published: list[Published] = field(default_factory=list)


@dataclass
class Inputs:
    """Everything read, by kind; ``ignored``: (path, why) of the files of no known kind;
    ``bad``: lines skipped with ``skip_bad``."""

    connections: list[ConnectionFile] = field(default_factory=list)
    progress: list[ProgressFile] = field(default_factory=list)
    routes: list[RouteFile] = field(default_factory=list)
    clusters: list[ClusterFile] = field(default_factory=list)
    statuses: list[StatusFile] = field(default_factory=list)
    client_logs: list[ClientLogFile] = field(default_factory=list)
    grpc_logs: list[GrpcLogFile] = field(default_factory=list)
    broker_logs: list[BrokerLogFile] = field(default_factory=list)
    traces: list[TraceFile] = field(default_factory=list)
    read: list[tuple[str, str]] = field(default_factory=list)        # (path, kind)
    ignored: list[tuple[str, str]] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)

    def published(self) -> list[Published]:
        """Every stored send the message trace shows: the dumps' ``Pub`` records and, when a
        dump was given, those the clients' trace dispatchers failed to send (their logs' ``send
        trace data failed`` lines: a broker refuses a trace message whose properties, its keys
        mostly, pass 32,767 characters), each once. Without a dump, none: a log's lost batches
        alone are not the trace."""
        if not self.traces:
            return []
        out = [p for t in self.traces for p in t.published]
        seen = set(out)
        for cl in self.client_logs:
            for p in cl.lost_published:
                if p not in seen:
                    seen.add(p)
                    out.append(p)
        return out


# ------------------------------------------------------------------ files of the paths given

def files_of(paths: Sequence[Path | str], ignored: list[tuple[str, str]]) -> list[Path]:
    """The regular files named or found under the folders named (sorted, at most ``MAX_FILES``,
    ``MAX_DEPTH`` deep, links to folders not followed); anything else goes to ``ignored``. A
    path given that does not exist is a ``TraceError``."""
    out: list[Path] = []

    def add(p: Path, st: os.stat_result) -> None:
        if len(out) >= MAX_FILES:
            raise TraceError(p, None, None, f"more than {MAX_FILES} files in the folders given; "
                             "point the doctor at the files themselves")
        out.append(p)

    def walk(folder: Path, depth: int) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            raise TraceError(folder, None, None, f"cannot list it ({exc.strerror})") from None
        for e in entries:
            p = Path(e.path)
            try:
                st = os.stat(p, follow_symlinks=False)
            except OSError:
                ignored.append((str(p), "cannot be read"))
                continue
            if stat.S_ISDIR(st.st_mode):
                if depth >= MAX_DEPTH:
                    ignored.append((str(p), f"a folder deeper than {MAX_DEPTH} levels"))
                else:
                    walk(p, depth + 1)
            elif stat.S_ISLNK(st.st_mode):
                try:
                    target = os.stat(p)
                except OSError:
                    ignored.append((str(p), "a broken symbolic link"))
                    continue
                if stat.S_ISREG(target.st_mode):
                    add(p, target)
                else:
                    ignored.append((str(p), "a symbolic link to something not a file"))
            elif stat.S_ISREG(st.st_mode):
                if p.name.startswith("."):
                    ignored.append((str(p), "a hidden file"))
                else:
                    add(p, st)
            else:
                ignored.append((str(p), "not a regular file (a device, a pipe or a socket)"))

    for given in paths:
        p = Path(given)
        try:
            st = os.stat(p)
        except FileNotFoundError:
            raise TraceError(p, None, None, "no such file or folder") from None
        except OSError as exc:
            raise TraceError(p, None, None, f"cannot read it ({exc.strerror})") from None
        if stat.S_ISDIR(st.st_mode):
            walk(p, 0)
        elif stat.S_ISREG(st.st_mode):
            add(p, st)
        else:
            raise TraceError(p, None, None, "not a regular file (a device, a pipe or a socket)")
    return out


# ------------------------------------------------------------------ recognising a file

_LOG_STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", re.ASCII)
_LOGBACK = re.compile(r"^\d\d:\d\d:\d\d,\d{3} \|-", re.ASCII)
"""logback's status lines, which 5.x's mqadmin prints on stdout before its output when its
configuration has warnings (a real 5.3.3 output starts with about 225 of them)."""
SNIFF_MAX_LINES = 4096             # lines looked at, logback's status lines included
_CONN_ROW = re.compile(r"^(\d{3,}\s+)?(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", re.ASCII)
_SUB_ROW = re.compile(r"^(?:(\d{3,})\s+Topic:\s+(\S+)\s+SubExpression:\s*(.*?)"
                      r"|()(\S+)\s+(.*?))\s*$", re.ASCII)
_STATUS = re.compile(r"^([A-Za-z][A-Za-z0-9_.]*)\s*:\s?(.*?)\s*$")
_STATUS_KEYS = {"brokerVersionDesc", "brokerVersion", "msgPutTotalTodayNow", "bootTimestamp",
                "putTps", "getTransferredTps", "runtime", "commitLogDirCapacity"}


_GO_LINE = re.compile(r'^time="[^"]{10,40}" level=(?:trace|debug|info|warning|error|fatal|'
                      r'panic) ', re.ASCII)
"""A line of rocketmq-client-go's log (``rlog`` on logrus's text format)."""
_SECONDS_STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", re.ASCII)
"""A server's log line (broker, name server, Proxy: ``%d{yyy-MM-dd HH:mm:ss}``), never a remoting
client's (``,SSS`` on 4.x, ``.SSS`` on 5.x)."""
PROXY_MARKERS = re.compile(
    r"GrpcClientChannel\{|GrpcClientManagerThreadPool|ProducerProcessorExecutor|"
    r"ConsumerProcessorExecutor|rmq-proxy\.json|group=CID_DefaultHeartBeatSyncerTopic|"
    r"the consumer \[CID_DefaultHeartBeatSyncerTopic\]|"
    r"doRebalance, CID_DefaultHeartBeatSyncerTopic|"
    r"Consumer: CID_DefaultHeartBeatSyncerTopic\]|get Topic \[DefaultHeartBeatSyncerTopic\]|"
    r"topicRouteTable\.put\. Topic = DefaultHeartBeatSyncerTopic")
"""What only a RocketMQ Proxy logs (rocketmq-proxy 5.3.3): ``GrpcClientChannel.toString``, the
thread pools of ``GrpcMessagingApplication`` and ``DefaultMessagingProcessor``, its
``rmq-proxy.json``, and its own remoting client's lines about the heartbeat syncer's consumer
(``ProxyConfig.heartbeatSyncerTopicName``, ``DefaultHeartBeatSyncerTopic``, group
``CID_DefaultHeartBeatSyncerTopic``). The brokers log that topic and group too, in other words
(``create new topic [...]``, ``new consumer connected, group: ...``, ``stats.log``), which these
patterns do not match: checked on every log of the shipped gRPC recordings."""
PROXY_LOG = "a RocketMQ Proxy's log (rocketmq-proxy 5.x), not read"
GRPC_JAVA_LOG = ("a gRPC Java client's log (rocketmq-client-java 5.x, "
                 "~/logs/rocketmq/rocketmq-client.log) without a client line the doctor reads")
"""Why a gRPC Java client's log is ignored: none of its lines names a client (``clientId=``);
one that does is read (``read_grpc_log``)."""
GRPC_PYTHON_LOG = "a gRPC Python client's log (the RocketMQ 5.x Python client), not read"
_GRPC_JAVA = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +[A-Z]+ +\[\d+\] \[.*?\] "
                        r"\[o\.a\.r\.(?:c\.j|s)\.", re.ASCII)
_GRPC_PYTHON = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} "
                          r"\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\] .*client_id:", re.ASCII)


def other_log(text: str) -> str | None:
    """Why a log holding line ``text`` is one the doctor recognises and does not read (module
    docstring), or ``None``.

    >>> other_log("2026-11-26 21:13:28 WARN main - get Topic [DefaultHeartBeatSyncerTopic] "
    ...           "RouteInfoFromNameServer is not exist value") == PROXY_LOG
    True
    >>> other_log("2026-11-26 21:13:48.591 INFO  [30222] [ClientManagerImpl-0 STARTING] "
    ...           "[o.a.r.c.j.i.ClientManagerImpl#?:?] - The client manager starts successfully, "
    ...           "clientId=vm@30222@0@okknohi4r") == GRPC_JAVA_LOG
    True
    >>> other_log("2026-11-27 00:34:47.648 INFO  [8775] [main] [o.a.r.c.l.MQFaultStrategy#?:?] "
    ...           "- broker-b will be isolated for 2000 ms.") is None
    True
    """
    if ("Grpc" in text or "Processor" in text or "proxy" in text or "HeartBeatSyncer" in text) \
            and PROXY_MARKERS.search(text):
        return PROXY_LOG
    if "] [o.a.r." in text and _GRPC_JAVA.match(text):
        return GRPC_JAVA_LOG
    if "client_id:" in text and _GRPC_PYTHON.match(text):
        return GRPC_PYTHON_LOG
    return None


def other_of_head(path: Path) -> str | None:
    """``other_log`` of the first ``SNIFF_MAX_LINES`` lines of a file of no known kind."""
    lines = _lines(path)
    try:
        for n, text in lines:
            why = other_log(text)
            if why is not None or n >= SNIFF_MAX_LINES:
                return why
    finally:
        lines.close()                                   # type: ignore[attr-defined]
    return None


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    from rocketlb_core.trace.textfile import read_lines

    return read_lines(path, errors="replace")


def sniff(path: Path) -> str | None:
    """The kind of ``path`` from its first lines, or ``None``."""
    head: list[str] = []
    lines = _lines(path)
    try:
        for n, text in lines:
            if not _LOGBACK.match(text):
                head.append(text.rstrip("\r\n"))
            if len(head) >= SNIFF_LINES or n >= SNIFF_MAX_LINES:
                break
    finally:
        lines.close()                                   # type: ignore[attr-defined]
    body = "\n".join(head)
    stripped = [h.strip() for h in head if h.strip()]
    if not stripped:
        return None
    first = stripped[0]
    if first.startswith("{") and first.endswith("}") and '"body"' in first:
        try:
            if isinstance(json.loads(first), dict):
                return "msgtrace"
        except (ValueError, RecursionError):
            pass
    if '"queueDatas"' in body or ('"brokerDatas"' in body and first.startswith("{")):
        return "topicRoute"
    if any(h.startswith("#Topic") and "#QID" in h for h in stripped):
        return "consumerProgress"
    if any(h.startswith("#Cluster Name") and "#Broker Name" in h for h in stripped):
        return "clusterList"
    if "Below is subscription" in body or any(
            h.startswith("#ClientId") for h in stripped) or (sum(
            1 for h in stripped if _CONN_ROW.match(h) and "@" in h) >= 1 and any(
            h.startswith(("ConsumeType:", "MessageModel:")) for h in stripped)):
        return "consumerConnection"
    if sum(1 for h in stripped if (m := _STATUS.match(h)) and m[1] in _STATUS_KEYS) >= 2:
        return "brokerStatus"
    if sum(1 for h in head if _LOG_STAMP.match(h)) >= max(1, len(stripped) // 4):
        return "log"
    if sum(1 for h in stripped if _GO_LINE.match(h)) >= max(1, len(stripped) // 4):
        return "goClientLog"
    return None


# ------------------------------------------------------------------ the parsers

class _Bad:
    """Raise, or count with ``skip_bad``."""

    def __init__(self, skip_bad: bool, bad: list[str]):
        self.skip_bad, self.bad = skip_bad, bad

    def __call__(self, exc: TraceError) -> None:
        if not self.skip_bad:
            raise exc
        self.bad.append(str(exc))


def _retry_group(topics: Sequence[str]) -> str | None:
    groups = sorted({t[len("%RETRY%"):] for t in topics if t.startswith("%RETRY%")})
    return groups[0] if len(groups) == 1 and groups[0] else None


def _int(path: Path, n: int, name: str, text: str, low: int = -(1 << 63),
         high: int = (1 << 63) - 1) -> int:
    from rocketlb_core.trace.msgtrace import int_field

    return int_field(str(path), n, name, text, low, high)


def _name(path: Path, n: int, name: str, text: str) -> str:
    from rocketlb_core.trace.schema import check_name

    return check_name(path, n, name, text)


def read_connection(path: Path, bad: _Bad) -> ConnectionFile:
    out = ConnectionFile(str(path), None)
    below = False
    for n, raw in _lines(path):
        text = raw.rstrip("\r\n").strip()
        if not text or text.startswith("#") or _LOGBACK.match(text):
            continue
        try:
            if "Below is subscription" in text:
                below = True
                continue
            if text.startswith("MessageModel:"):
                out.model = text.split(":", 1)[1].strip()
                continue
            if text.startswith(("ConsumeType:", "ConsumeFromWhere:")):
                continue
            if below:
                m = _SUB_ROW.match(text)
                if m is None:
                    raise TraceError(path, n, "Topic", "a subscription row without 'TOPIC "
                                     "EXPRESSION' or 'NNN  Topic: T  SubExpression: E'")
                topic, expression = (m[2], m[3]) if m[2] is not None else (m[5], m[6])
                out.subscriptions.append(Subscription(_name(path, n, "Topic", topic),
                                                      expression[:4096], quote(path, n, raw)))
                continue
            m = _CONN_ROW.match(text)
            if m is None or "@" not in m[2]:
                raise TraceError(path, n, "ClientId", "a connection row without 'CLIENT_ID ADDR "
                                 "LANGUAGE VERSION' (a client id has an '@')")
            out.connections.append(Connection(_name(path, n, "ClientId", m[2]),
                                              _name(path, n, "ClientAddr", m[3]), m[4], m[5],
                                              quote(path, n, raw)))
        except TraceError as exc:
            bad(exc)
    out.group = _retry_group([s.topic for s in out.subscriptions])
    return out


_PROGRESS_COLUMNS = {"#Topic": "topic", "#Broker Name": "broker", "#QID": "qid",
                     "#Broker Offset": "broker_offset", "#Consumer Offset": "consumer_offset",
                     "#Client IP": "client", "#Diff": "diff", "#Inflight": "inflight",
                     "#LastTime": "last"}


def _progress_header(text: str) -> list[str]:
    cols = []
    rest = text
    while rest:
        for head, key in sorted(_PROGRESS_COLUMNS.items(), key=lambda kv: -len(kv[0])):
            if rest.startswith(head):
                cols.append(key)
                rest = rest[len(head):].lstrip()
                break
        else:
            rest = rest.split(None, 1)[1] if " " in rest.strip() else ""
    return cols


def read_progress(path: Path, bad: _Bad) -> ProgressFile:
    out = ProgressFile(str(path), None, False)
    cols: list[str] | None = None
    for n, raw in _lines(path):
        text = raw.rstrip("\r\n").strip()
        if not text:
            continue
        if text.startswith("#Topic"):
            cols = _progress_header(text)
            out.with_clients = "client" in cols
            continue
        if cols is None or text.startswith(("Consume TPS", "Consume Diff", "Diff Total",
                                            "Consume Inflight", "Inflight")):
            continue
        try:
            cells = text.split()
            fixed = cols.index("last") if "last" in cols else len(cols)
            if out.with_clients and len(cells) == fixed - 1 + (len(cols) - fixed):
                ci = cols.index("client")       # no owner: the column is blank
                cells.insert(ci, "")
            if len(cells) < fixed:
                raise TraceError(path, n, "row", f"{len(cells)} columns, the header has "
                                 f"{len(cols)}")
            row = dict(zip(cols[:fixed], cells[:fixed], strict=False))
            client = row.get("client")
            if client in ("N/A", "NA", "null"):
                client = ""
            out.rows.append(ProgressRow(
                _name(path, n, "Topic", row["topic"]), _name(path, n, "Broker Name",
                                                             row["broker"]),
                _int(path, n, "QID", row["qid"], 0, MAX_QUEUES * 64),
                _int(path, n, "Broker Offset", row["broker_offset"], -1),
                _int(path, n, "Consumer Offset", row["consumer_offset"], -1),
                client if out.with_clients else None,
                _int(path, n, "Diff", row["diff"]), quote(path, n, raw)))
        except TraceError as exc:
            bad(exc)
        except KeyError as exc:
            bad(TraceError(path, n, str(exc.args[0]), "a consumerProgress header without "
                           "this column"))
    out.group = _retry_group([r.topic for r in out.rows])
    return out


def _fastjson(path: Path) -> tuple[Any, int, str]:
    """The JSON object of an ``mqadmin`` output (integer map keys unquoted), the line it starts
    on and that line's text."""
    chunks: list[str] = []
    start, first, size = 0, "", 0
    for n, text in _lines(path):
        if not start:
            if not text.lstrip().startswith("{"):
                continue
            start, first = n, text
        size += len(text)
        if size > MAX_JSON_BYTES:
            raise TraceError(path, n, None, f"a topicRoute output larger than {MAX_JSON_BYTES} "
                             "bytes")
        chunks.append(text)
    body = re.sub(r'([{,]\s*)(-?\d+)\s*:', r'\1"\2":', "".join(chunks), flags=re.ASCII)
    try:
        return json.loads(body), start, first
    except RecursionError:
        raise TraceError(path, start, None, "JSON nested too deeply") from None
    except ValueError as exc:
        line = start + getattr(exc, "lineno", 1) - 1
        raise TraceError(path, line, None, f"not the JSON mqadmin topicRoute prints "
                         f"({str(exc)[:120]})") from None


def read_route(path: Path, bad: _Bad) -> RouteFile | None:
    try:
        data, n, first = _fastjson(path)
        if not isinstance(data, dict) or not isinstance(data.get("queueDatas"), list) \
                or not isinstance(data.get("brokerDatas", []), list):
            raise TraceError(path, n, "queueDatas", "a topicRoute output without a "
                             "'queueDatas' list")
        qds = []
        for q in data["queueDatas"]:
            if not isinstance(q, dict):
                raise TraceError(path, n, "queueDatas", "an entry that is not an object")
            name = _name(path, n, "brokerName", q.get("brokerName"))   # type: ignore[arg-type]
            nums = []
            for key in ("readQueueNums", "writeQueueNums", "perm"):
                v = q.get(key)
                if type(v) is not int or not 0 <= v <= MAX_QUEUES:
                    raise TraceError(path, n, key, f"{str(v)[:40]} is not a whole number from 0 "
                                     f"to {MAX_QUEUES}")
                nums.append(v)
            qds.append(QueueData(name, nums[0], nums[1], nums[2]))
        bds = []
        for b in data.get("brokerDatas", []):
            addrs = b.get("brokerAddrs") if isinstance(b, dict) else None
            if not isinstance(addrs, dict):
                raise TraceError(path, n, "brokerDatas", "an entry without 'brokerAddrs'")
            bds.append(BrokerData(
                _name(path, n, "brokerName", b.get("brokerName")),
                {_int(path, n, "brokerAddrs", str(k), 0, 1 << 20): str(v)[:255]
                 for k, v in addrs.items()}, str(b.get("cluster", ""))[:255]))
        return RouteFile(str(path), TopicRoute(tuple(qds), tuple(bds)), quote(path, n, first))
    except TraceError as exc:
        bad(exc)
        return None


def read_cluster(path: Path, bad: _Bad) -> ClusterFile:
    out = ClusterFile(str(path))
    header = False
    for n, raw in _lines(path):
        text = raw.strip()
        if text.startswith("#Cluster Name"):
            header = True
            continue
        if not header or not text:
            continue
        cells = text.split()
        try:
            if len(cells) < 5:
                raise TraceError(path, n, "row", "a clusterList row of fewer than 5 columns")
            out.brokers.append(BrokerRow(
                _name(path, n, "Cluster Name", cells[0]), _name(path, n, "Broker Name",
                                                                cells[1]),
                _int(path, n, "BID", cells[2], 0, 1 << 20), _name(path, n, "Addr", cells[3]),
                cells[4][:64], quote(path, n, raw)))
        except TraceError as exc:
            bad(exc)
    return out


def read_status(path: Path, bad: _Bad) -> StatusFile:
    out = StatusFile(str(path))
    for n, raw in _lines(path):
        m = _STATUS.match(raw.strip())
        if m is not None and len(out.values) < 10_000:
            out.values[m[1]] = (m[2][:255], quote(path, n, raw))
    return out


_BROKER_DATA = re.compile(r"BrokerData \[brokerName=([^,\]\s]+), brokerAddrs=\{([^}]*)\}")
_MASTER = re.compile(r"(?:^|,\s*)0=([^,\s}]+)")
MAX_BROKERS = 10_000               # broker addresses kept per client log
_CREATED = re.compile(r"ClientID:([^,\s]+),.*ClientVersion:(V\w+)")
_CONSUMER_START = re.compile(r"the consumer \[([^\]]+)\] start beginning")
_CONSUMER_DOWN = re.compile(r"the consumer \[([^\]]+)\] shutdown OK")
_HEARTBEAT = re.compile(r"HeartbeatData \[clientID=([^,\s]{1,255}), ")
_CONSUMER_DATA = re.compile(r"ConsumerData \[groupName=([^,\s]{1,255}), ")
_SUBSCRIPTION = re.compile(      # matched at the start of each piece: linear in the line
    r"classFilterMode=\w{1,5}, topic=([^,\s]{1,255}), subString=([^\n]{0,255}?), "
    r"tagsSet=\[[^\]]*\], codeSet=\[[^\]]*\], subVersion=(-?\d{1,19}), expressionType=(\w{1,32})\]",
    re.ASCII)


def heartbeat_subscriptions(path: Path | str, n: int, text: str) -> list[SubscriptionSeen]:
    """The subscriptions of a client log's ``HeartbeatData [...]`` line (none: not one), each
    quoted as the line's start, the client id and its own ``SubscriptionData`` (a heartbeat
    line is longer than a quote)."""
    hb = _HEARTBEAT.search(text)
    if hb is None:
        return []
    out = []
    cds = list(_CONSUMER_DATA.finditer(text, hb.end()))
    for i, cd in enumerate(cds):
        end = cds[i + 1].start() if i + 1 < len(cds) else len(text)
        for piece in text[cd.end():end].split("SubscriptionData [")[1:]:
            m = _SUBSCRIPTION.match(piece)
            if m is None:
                continue
            head = f"{text[:23]} ... HeartbeatData [clientID={hb[1]}"
            ev = quote(path, n, f"{head} ... groupName={cd[1]} ... topic={m[1]}, "
                                f"subString={m[2]}, subVersion={m[3]}")
            out.append(SubscriptionSeen(hb[1][:255], cd[1][:255], m[1][:255], m[2][:255],
                                        int(m[3]), m[4][:32], ev))
    return out
_PRODUCER_START = re.compile(r"the producer \[([^\]]+)\] start OK")
_REMOTE = re.compile(r"R:/?([^\]\s]+)\]")


def read_log(path: Path, bad: _Bad) -> ClientLogFile | BrokerLogFile | str | None:
    """A client log or a broker log, whichever records it holds (``None``: neither; a string:
    why it is a log the doctor does not read, ``other_log`` of one of its lines). The lines are
    parsed by the importers' parsers: a line that does not parse raises, or with ``skip_bad``
    is counted, once the whole file has been looked at for ``other_log`` (a Proxy's log is
    ignored whatever its lines)."""
    from rocketlb_core.trace import brokerlog, clientlog

    client = ClientLogFile(str(path))
    broker = BrokerLogFile(str(path))
    is_client = False

    def line(path: Path, n: int, text: str) -> None:
        nonlocal is_client
        stamped = _LOG_STAMP.match(text) is not None
        if stamped:
            client.end_stamp = text[:23]
        last = client.failures[-1] if client.failures else None
        if last is not None and last.failure.line == n - 1 and not stamped:
            client.failures[-1] = Failure(last.failure, last.ev, quote(path, n, text))
        # a server's line (stamped to the second) is no client's record
        r = None if _SECONDS_STAMP.match(text) else clientlog.record_of_line(path, n, text)
        if isinstance(r, Rebalance):
            is_client = True
            if r.client_id not in client.client_ids:
                client.client_ids.append(r.client_id)
            _note_rebalance(client, LastRebalance(
                **{f.name: getattr(r, f.name) for f in fields(r)}, ev=quote(path, n, text)))
            return
        if isinstance(r, clientlog.BrokerError):
            if last is not None and last.failure.line == n - 1:
                client.failures[-1] = Failure(replace(last.failure, response_code=r.code),
                                              last.ev, quote(path, n, text))
            return
        if isinstance(r, SendFailure):
            client.send_failures += 1
            is_client = True
            if len(client.failures) < MAX_FAILURES:
                client.failures.append(Failure(r, quote(path, n, text), None))
            return
        if isinstance(r, clientlog.LostTrace):
            is_client = True
            client.lost_traces += 1
            client.lost_published += _lost_published(path, r)
            return
        if isinstance(r, RouteChange):
            is_client = True
            client.routes[r.topic] = RouteSeen(r, quote(path, n, text))
            union = client.route_union.setdefault(r.topic, {})
            for qd in r.queue_datas:
                union.setdefault(qd.broker_name, qd)
            for b, addrs in _BROKER_DATA.findall(text):
                master = _MASTER.search(addrs)
                if master and len(client.broker_addrs) < MAX_BROKERS:
                    client.broker_addrs.setdefault(b[:255], master[1][:255])
            return
        e = brokerlog.parse_line(path, n, text)
        if e is not None:
            host = _REMOTE.search(text)
            broker.events.append(MemberLine(e.event, e.group, e.client_id, e.channel,
                                            host[1][:255] if host else "",
                                            quote(path, n, text)))
            return
        if "ClientID:" in text and (m := _CREATED.search(text)):
            is_client = True
            if m[1] not in client.client_ids:
                client.client_ids.append(m[1][:255])
            client.version = (m[2][:32], quote(path, n, text))
        elif m := _CONSUMER_START.search(text):
            is_client = True
            client.consumer_groups.setdefault(m[1][:255], quote(path, n, text))
        elif m := _CONSUMER_DOWN.search(text):
            client.shut_down[m[1][:255]] = quote(path, n, text)
        elif m := _PRODUCER_START.search(text):
            is_client = True
            client.producer_groups.setdefault(m[1][:255], quote(path, n, text))
        elif "HeartbeatData [" in text:
            for sub in heartbeat_subscriptions(path, n, text):
                client.subscriptions[(sub.group, sub.topic)] = sub

    from rocketlb_core.trace.textfile import read_lines

    failed: TraceError | None = None
    skipped: list[str] = []
    lines = read_lines(path, errors="replace")
    try:
        for n, text in lines:
            why = other_log(text)
            if why is not None:
                return why
            if failed is not None:
                continue                    # look on for other_log only
            try:
                line(path, n, text)
            except TraceError as exc:
                if bad.skip_bad:
                    skipped.append(str(exc))
                else:
                    failed = exc
    finally:
        lines.close()                                   # type: ignore[attr-defined]
    if failed is not None:
        raise failed
    bad.bad.extend(skipped)
    if broker.events and not is_client:
        return broker
    return client if is_client else None


def read_go_log(path: Path, bad: _Bad) -> ClientLogFile:
    """rocketmq-client-go's log (issue 47): its ``MessageQueue do balance done`` lines, read by
    ``trace.golog`` (each stamp kept in UTC), as a client log's rebalances. The Go client names
    no strategy there: the group's check infers it (``findings``)."""
    from rocketlb_core.trace.golog import parse_go_line
    from rocketlb_core.trace.textfile import read_lines

    client = ClientLogFile(str(path), client="go")
    lines = read_lines(path, errors="replace")
    try:
        for n, text in lines:
            try:
                r = parse_go_line(path, n, text, utc_offset_minutes=0)
            except TraceError as exc:
                bad(exc)
                continue
            if r is None:
                continue
            client.end_stamp = r.stamp
            if r.client_id not in client.client_ids:
                client.client_ids.append(r.client_id[:255])
            kept = LastRebalance(**{f.name: getattr(r, f.name) for f in fields(r)},
                                 ev=quote(path, n, text))
            client.consumer_groups.setdefault(r.group[:255], kept.ev)
            _note_rebalance(client, replace(kept, strategy=GO_UNKNOWN))
    finally:
        lines.close()                                   # type: ignore[attr-defined]
    return client


def _note_rebalance(client: ClientLogFile, kept: LastRebalance) -> None:
    """A client log's rebalance line: counted, its group and topic's last, in their history
    and changes (each capped), its queues seen."""
    client.rebalances += 1
    client.last[(kept.group, kept.topic)] = kept
    for table, cap in ((client.history, HISTORY), (client.changes, MAX_CHANGES)):
        row = table.setdefault((kept.group, kept.topic), [])
        row.append(kept)
        if len(row) > cap:
            del row[0]
    client.seen.setdefault(kept.topic, set()).update(kept.result)


MAX_GRPC_CLIENTS = 1_000          # client ids kept per gRPC client log
_GRPC_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) ", re.ASCII)
_GRPC_CLIENT = re.compile(r"clientId=([^,\s]{1,255})")
_GRPC_ROLE = re.compile(r"The rocketmq (push consumer|simple consumer|producer) starts "
                        r"successfully, clientId=")
_GRPC_STOP = re.compile(r"Begin to shutdown the rocketmq (?:push consumer|simple consumer|"
                        r"producer), clientId=")
_GRPC_GROUP = re.compile(r"consumerGroup=([^,\s]{1,255})")
_GRPC_VERSION = re.compile(r"Start to log statistics, clientVersion=([^,\s]{1,64})")
_GRPC_ASSIGNED = re.compile(r"Assignments of topic=([^,\s]{1,255}) has changed, .* => "
                            r"Assignments\{assignmentList=\[(.*)\]\}, clientId=")
_GRPC_QUEUE = re.compile(r"messageQueue=([^,}\]]+)")


def read_grpc_log(path: Path, bad: _Bad) -> GrpcLogFile:
    """A gRPC Java client's log (``GrpcLogFile``; rocketmq-client-java 5.0.8's lines, checked on
    the live recordings ``data/live/grpc``): its lines stamped ``yyyy-MM-dd HH:mm:ss.SSS``, the
    others (a stack trace's) passed over. An assignment's queue that is not
    ``broker.topic.queueId`` (a queue id from -1 to 65,535) is a ``TraceError`` naming the file,
    the line and the field."""
    from rocketlb_core.trace.textfile import read_lines

    out = GrpcLogFile(str(path))
    lines = read_lines(path, errors="replace")
    try:
        for n, text in lines:
            if (stamp := _GRPC_STAMP.match(text)) is None:
                continue
            out.end_stamp = stamp.group(1)
            if "clientId=" not in text:
                continue
            ids = _GRPC_CLIENT.findall(text)
            if not ids:
                continue
            cid = ids[-1]
            if cid not in out.roles and cid not in out.client_ids:
                if len(out.client_ids) >= MAX_GRPC_CLIENTS:
                    continue
                out.client_ids.append(cid)
            if (m := _GRPC_ROLE.search(text)) is not None:
                out.roles[cid] = m.group(1)
            if _GRPC_STOP.search(text) is not None:
                out.stopped.setdefault(cid, stamp.group(1))
            if (m := _GRPC_GROUP.search(text)) is not None:
                out.groups.setdefault(cid, (m.group(1), quote(path, n, text)))
            if out.version is None and (m := _GRPC_VERSION.search(text)) is not None:
                out.version = (m.group(1), quote(path, n, text))
            if (m := _GRPC_ASSIGNED.search(text)) is not None:
                try:
                    queues = tuple(_grpc_queue(path, n, item, m.group(1))
                                   for item in _GRPC_QUEUE.findall(m.group(2))[:MAX_QUEUES])
                except TraceError as exc:
                    bad(exc)
                    continue
                before = out.assignments.get((cid, m.group(1)))
                out.assignments[(cid, m.group(1))] = GrpcAssignment(
                    cid, m.group(1), queues, quote(path, n, text),
                    before.first if before is not None else stamp.group(1))
    finally:
        lines.close()                                   # type: ignore[attr-defined]
    return out


def _grpc_queue(path: Path, n: int, item: str, topic: str) -> tuple[str, int]:
    """``MessageQueueImpl.toString``: ``broker.topic.queueId`` (a broker name holds no dot in
    what the Proxy answers; the topic is the line's)."""
    broker, sep, rest = item.partition(f".{topic}.")
    if not sep or not broker or len(broker) > 255 or not (
            rest.isascii() and (rest.isdigit() or rest == "-1")) or int(rest) > 65_535:
        raise TraceError(path, n, "assignmentList",
                         f"a queue as 'broker.{topic:.60}.queueId' (-1 to 65535) expected, got "
                         f"{item!r:.80}")
    return broker, int(rest)


GO_UNKNOWN = "GO?"
"""The strategy of a Go client's rebalance line until the check infers it."""


def _lost_published(path: Path, lost: Any) -> list[Published]:
    """The stored sends of a ``send trace data failed`` line's batch (``clientlog.LostTrace``),
    read by the message trace's own reader: a record that does not parse raises its
    ``TraceError`` naming the log, the line and the field."""
    from rocketlb_core.trace.clientlog import ClientLog
    from rocketlb_core.trace.msgtrace import MsgTrace, with_logged

    t = with_logged(MsgTrace(str(path)), {str(path): ClientLog(lost_traces=[lost])})
    return [Published(p.group, p.store_host, p.topic, p.time_ms, p.cost_ms,
                      record_key(p.msg_id))
            for p in t.pubs if p.success]


def read_trace(path: Path, bad: _Bad) -> TraceFile:
    from rocketlb_core.trace.msgtrace import read_msgtrace

    t = read_msgtrace(path, skip_bad=bad.skip_bad)
    if t.bad:
        bad.bad.extend([t.first_bad or f"{path}: a bad record"] * t.bad)
    return TraceFile(str(path), len(t.pubs), len(t.sub_before) + len(t.sub_after),
                     [Published(p.group, p.store_host, p.topic, p.time_ms, p.cost_ms,
                                record_key(p.msg_id))
                      for p in t.pubs if p.success])


def read_inputs(paths: Sequence[Path | str], *, skip_bad: bool = False) -> Inputs:
    """Every file of ``paths`` recognised and read (module docstring)."""
    out = Inputs()
    bad = _Bad(skip_bad, out.bad)
    for path in files_of(paths, out.ignored):
        try:
            kind = sniff(path)
        except TraceError as exc:
            if path.name.endswith(".gz"):
                bad(exc)
            else:
                out.ignored.append((str(path), f"not text the doctor reads ({exc})"))
            continue
        if kind is None:
            try:
                why = other_of_head(path)
            except TraceError:
                why = None
            if why == GRPC_JAVA_LOG:
                _add_grpc(out, path, bad)
                continue
            out.ignored.append((str(path), why or "not an input the doctor reads"))
            continue
        try:
            if kind == "consumerConnection":
                out.connections.append(read_connection(path, bad))
            elif kind == "consumerProgress":
                out.progress.append(read_progress(path, bad))
            elif kind == "topicRoute":
                r = read_route(path, bad)
                if r is None:
                    continue
                out.routes.append(r)
            elif kind == "clusterList":
                out.clusters.append(read_cluster(path, bad))
            elif kind == "brokerStatus":
                out.statuses.append(read_status(path, bad))
            elif kind == "msgtrace":
                out.traces.append(read_trace(path, bad))
            elif kind == "goClientLog":
                go = read_go_log(path, bad)
                if not go.rebalances:
                    out.ignored.append((str(path), "a Go client's log without a rebalance "
                                        "(MessageQueue do balance done) the doctor reads"))
                    continue
                out.client_logs.append(go)
            else:
                log = read_log(path, bad)
                if log == GRPC_JAVA_LOG:
                    _add_grpc(out, path, bad)
                    continue
                if log is None or isinstance(log, str):
                    out.ignored.append((str(path), log or "a log without records the doctor "
                                        "reads"))
                    continue
                if isinstance(log, ClientLogFile):
                    out.client_logs.append(log)
                    kind = "clientLog"
                else:
                    out.broker_logs.append(log)
                    kind = "brokerLog"
        except TraceError as exc:
            bad(exc)
            continue
        out.read.append((str(path), kind))
    name_routes(out)
    return out


def _add_grpc(out: Inputs, path: Path, bad: _Bad) -> None:
    """A gRPC Java client's log read (``read_grpc_log``), or ignored when it names no client."""
    try:
        grpc = read_grpc_log(path, bad)
    except TraceError as exc:
        bad(exc)
        return
    if grpc.client_ids:
        out.grpc_logs.append(grpc)
        out.read.append((str(path), "grpcClientLog"))
    else:
        out.ignored.append((str(path), GRPC_JAVA_LOG))


def name_routes(inputs: Inputs) -> None:
    """Give each topicRoute output its topic (module docstring); unnamed ones stay ``None``."""
    topics: dict[str, set[tuple[str, int]]] = {}
    for pf in inputs.progress:
        for r in pf.rows:
            topics.setdefault(r.topic, set()).add((r.broker, r.queue_id))
    for cl in inputs.client_logs:
        for (_, topic), last in cl.last.items():
            topics.setdefault(topic, set()).update(
                (q.broker_name, q.queue_id) for q in last.result)
    for cf in inputs.connections:
        for s in cf.subscriptions:
            topics.setdefault(s.topic, set())
    for rf in inputs.routes:
        reads = {qd.broker_name: qd.read_queue_nums for qd in rf.route.queue_datas}
        fits = [t for t, qs in topics.items() if not t.startswith("%")
                and all(b in reads and q < reads[b] for b, q in qs)
                and (not qs or {b for b, _ in qs} == {b for b, n in reads.items() if n})]
        seen_all = [t for t in fits if len(topics[t]) == sum(reads.values())]
        if len(seen_all) == 1:
            rf.topic = seen_all[0]
            continue
        stem = Path(rf.path).name
        named = [t for t in topics if not t.startswith("%") and t in stem]
        named = [t for t in named if not any(t != u and t in u for u in named)]
        if len(named) == 1:
            rf.topic = named[0]
        elif len(fits) == 1:
            rf.topic = fits[0]
