"""Recording a live scenario: what a real RocketMQ cluster and upstream's own clients did, kept as
they wrote it, beside the ground truth the importers and the model are checked against.

A live scenario is a TOML file (``data/scenarios/live/``, read with ``tomllib``: data, never
code)::

    name = "producer-outage"
    description = "..."
    brokers = 2                 # broker-a, broker-b, ... (the last one holds the trace topic)
    slaves = ["broker-a"]       # masters with a slave (slave-a): SYNC_MASTER (see below)
    topic = "TopicLive"
    queues = 4                  # read and write queues per broker
    trace = true                # enableMsgTrace on every client
    settle_s = 8                # after the last event (and after the producers finished)

    [[producers]]               # upstream's DefaultMQProducer (live/java/Produce.java)
    language = "java"           # a remoting producer's: or "go" (live/go, sync, issue 47)
    name = "p-off"              # its instanceName, process and folder name
    group = "PG_off"
    count = 900                 # synchronous sends ...
    interval_ms = 50            # ... this far apart
    fault_tolerance = false     # sendLatencyFaultEnable
    client = "remoting"         # or "grpc": rocketmq-client-java through a Proxy (see below)
    mode = "sync"               # or "hash" (keys = 16), "oneway", "batch" (batch = 4), "async"
    threads = 1                 # application threads sharing it, 1 to 16 (see below)
    retry_not_stored = false    # retryAnotherBrokerWhenNotStoreOK (a Java remoting producer)
    back_pressure = 10          # an async producer's permits (5.x; absent: back pressure off)

    [[consumers]]               # upstream's DefaultMQPushConsumer (live/java/Consume.java)
    name = "c1"                 # its process and folder name
    group = "GID_live"
    instance = "c1"             # its instanceName (default: name); two alike: the trap
    client = "remoting"         # or "grpc": rocketmq-client-java through a Proxy (see below)
    kind = "simple"             # a gRPC consumer's (required): "simple" or "push"
    model = "clustering"        # a push consumer's: or "broadcasting"
    listener = "concurrently"   # a push consumer's: or "orderly"
    kind = "lite-pull"          # a remoting consumer's: DefaultLitePullConsumer (else push)
    assign = ["broker-a/0"]     # a lite-pull consumer's own queues (else it subscribes)
    language = "java"           # a remoting push consumer's: or "go" (live/go, issue 47)
    strategy = "AVG"            # a remoting push consumer's: AVG_BY_CIRCLE, CONSISTENT_HASH

    [[events]]
    at_s = 8.0                  # seconds after the producers start (or the recording starts)
    action = "kill"             # kill | pause | resume | restart (a broker or a slave),
    target = "broker-a"         # join | leave | crash | freeze | hang (a consumer)

A remoting producer's ``mode`` (issue 45) is how the application sends: ``"sync"``
(``send(msg)``, the default), ``"hash"`` (an ordered send, ``send(msg, selector, key)`` with
upstream's ``SelectMessageQueueByHash`` and key ``k<seq % keys>``: no retry, no fault report;
the row adds the key) or ``"oneway"`` (``sendOneway(msg)``: one attempt, no result; its row
has ``oneway`` and no queue, its body is ``<producer>/m<seq>``, and the recording holds the
topic's dump, ``topic.jsonl.gz``, which says where each one was stored) or ``"batch"``
(``send(Collection)`` of ``batch`` messages, 1 to ``MAX_BATCH``, default 4: one request to one
queue through the synchronous loop; the row adds ``batch``). ``threads`` (1 to
``MAX_THREADS``) application threads may share a remoting producer: thread ``t`` (named
``send-t``) sends the messages whose seq is ``t`` modulo ``threads``, each row adds its
``thread``, and each thread has its own queue counter (``ThreadLocalIndex``); several threads
need ``fault_tolerance`` off. ``"async"`` is ``send(msg, callback)``: the first hop on one of
the producer's ``AsyncSenderExecutor_N`` threads (each its own counter), a retry from the
callback at the first hop's queue id on another broker; its row adds the first hop
(``executor``, ``first_broker``, ``first_queue``, ``first_ms``); it needs ``fault_tolerance``
off and no ``threads`` (``trace.async_agreement``).

``slaves`` (issue 45) names masters that run as ``SYNC_MASTER`` with a slave each (``slave-a``
for ``broker-a``: its own JVM, store and logs, ``brokerId`` 1); broker events may target a
slave (``pause``: connected but silent, reporting nothing, which its master drops after
20 s, where a slow slave that still runs keeps reporting; ``kill``: gone). A Java remoting
producer of mode ``sync`` may set ``retry_not_stored``
(``setRetryAnotherBrokerWhenNotStoreOK(true)``: a reply other than SEND_OK is retried on
another broker). A recording with slaves holds the topic's dump (``topic.jsonl.gz``): a
message the master wrote and answered with a status other than SEND_OK is there too, beside
its retry's copy (``trace.agreement``, ``STATUS_COPY``).

A producer with ``client = "grpc"`` is the gRPC client of apache/rocketmq-clients
(rocketmq-client-java ``live.GRPC_CLIENT_VERSION``, ``live/java/GrpcProduce.java``; issue 34):
the recorder then starts the line's Proxy (``live.start_proxy``: 5.x lines, isolated only) and
gives it as the producer's endpoints; ``fault_tolerance`` does not apply to it (the client has
no such switch), ``max_attempts`` (default 3) is its ``maxAttempts``. Such a recording also holds
``topic.jsonl.gz``: every message of the scenario's topic as the brokers store it (broker, queue,
offset, store time, key ``seq-<n>``, body ``m<n>``): where each send really went, which the
gRPC client's receipt does not say (``live/java/GrpcProduce.java``).

A gRPC producer with ``language = "python"`` is rocketmq-python-client instead
(``jars.PYTHON_CLIENT_VERSION`` from PyPI, in its own venv; ``live/py/grpc_produce.py``, the same
rows): it takes its attempts from the Proxy's settings, so ``max_attempts`` stays 3, and its
log, ``rocketmq_client.log``, goes to ``logs/<producer>/`` as the others' do
(``trace.grpc_agreement.python_producer_agreement`` checks it). One gRPC producer a scenario:
the Proxy's queue counter is one per topic, and two producers' attempts would interleave in it.

A consumer with ``client = "grpc"`` (issue 34) is ``live/java/GrpcConsume.java`` on the same
client: ``kind = "simple"``, a ``SimpleConsumer`` calling ``receive`` in a loop and acking what
it got, or ``kind = "push"``, a ``PushConsumer`` whose listener consumes everything; it has no
``instance`` (the gRPC client has no instanceName). Any gRPC client, producer or consumer, starts
the Proxy and the topic dump. ``join`` starts it, ``leave`` closes it (``close()``: the client
tells the Proxy it terminates), ``crash`` kills its JVM (SIGKILL, by its pid). Its rows are
kept in ``receives/<consumer>.jsonl.gz`` (a simple consumer's: one per ``receive`` call; a push
consumer's: one per consumed message; both with where each message was: see the driver), its
log in ``logs/<consumer>/rocketmq-client.log.gz`` (its route; a push consumer's assignments).
A snapshot asks the brokers the members of the *remoting* groups only: a gRPC consumer
registers with the Proxy (rocketmq-proxy 5.3.3 ``ClusterConsumerManager.registerConsumer``: the
Proxy's own member table; its ``HeartbeatSyncer`` tells other Proxies, not the brokers), so
``mqadmin consumerConnection`` on a broker is not where its group's members are, and a push
consumer's assignment is the Proxy's answer, the same for every member: a member list would
place nothing. The snapshots still count the lines of every consumer's log, gRPC ones included.

Events on one target must make sense in order (``load_scenario`` refuses the rest): a broker is
paused only while it runs, resumed only while paused, killed while it runs or is paused,
restarted only after a kill; a consumer joins once, and leaves, crashes or freezes only after it
joined. ``freeze`` (a remoting consumer; issue 45) stops its JVM with ``SIGSTOP`` and never
resumes it: a host that vanished while its kernel still answers, so its connections stay open
and carry nothing, and each broker drops it by its idle close or its scan (the recording's
``broker.log`` and ``remoting.log`` say which); the recorder kills it (``SIGKILL``) once the
recording ends. ``hang`` (a remoting consumer; issue 45) makes its listener stay in the next call
it is handed until the recording ends (``live/java/Consume.java``: one consume thread of 20 stuck,
as an application's hung call; the message's queue and offset go to ``hung/<consumer>.json``).
A remoting consumer's ``model`` is ``"clustering"`` (the default) or ``"broadcasting"``
(``setMessageModel``: every member takes every queue, offsets kept in the member's own
folder), its ``listener`` ``"concurrently"`` (the default) or ``"orderly"`` (a
``MessageListenerOrderly``: the broker's queue locks); a recording with a broadcasting member
holds the topic's dump too (``trace.broadcast_agreement`` checks each member's first offset
against its store times). ``kind = "lite-pull"`` makes a remoting consumer upstream's
``DefaultLitePullConsumer`` (``live/java/LitePull.java``, polling until it stops), which
subscribes (its own rebalance, logged as a push consumer's) or, with ``assign`` (1 to
``MAX_ASSIGN`` distinct queues ``"broker-a/0"`` of the scenario), assigns itself those queues:
no rebalance, yet its heartbeat still names its group, so the brokers list it; it has no
``model``, ``listener`` or ``hang``. A recording with consumers also keeps each remoting consumer's
highest consumed offset per queue (``consumed/<consumer>.json``, written at its stop), its
first and last offset and how many distinct ones per queue (``ranges/<consumer>.json``:
``"broker/queue": [first, last, count]``), an orderly member's every consumed message in
the order its listener ran, and with slaves every remoting push member's
(``consumes/<consumer>.jsonl.gz``: ``{"q": "broker-a/0", "o":
offset, "t": wall ms}``, flushed per message, so a crashed member's are kept too) and, taken
with the final snapshot before any consumer stops, ``mqadmin consumerProgress`` of each
remoting group but a broadcasting one (which commits nothing to the brokers)
(``progress/<group>.txt``: the broker's and the committed consumer offset per queue).

A remoting producer with ``language = "go"`` (issue 47) is rocketmq-client-go's default
producer (``live/go``: ``NewRoundRobinQueueSelector``, ``RetryTimes`` 3), sending with
``SendSync`` from one goroutine and writing the Java driver's rows; it takes no ``mode``,
``threads``, ``keys``, ``batch`` or ``fault_tolerance`` (the Go client has no latency fault
tolerance), writes no message trace, and is checked by ``trace.go_agreement``.

A consumer with ``language = "go"`` (issue 47) is rocketmq-client-go's push consumer
(``jars.GO_CLIENT_VERSION``, ``live/go``, built with the go command from the module proxy): a
clustering member that consumes everything, in the same group as Java members if the scenario
says so; it takes ``strategy`` ``AVG`` (``AllocateByAveragely``) or ``CONSISTENT_HASH``
(``AllocateByConsistentHash(10)``), no ``kind``, ``model``, ``listener`` or ``hang``. Its log is
the Go client's (``logs/<consumer>/rocketmq-client-go.log.gz``: ``MessageQueue do balance done``
on every change of its share, read by ``trace.golog``); it writes ``consumed`` and ``ranges`` as
``Consume.java`` does, and the recording's ``go_client`` names the module and version.

**The recorder keeps the scenario's clock.** Each event starts at its planned time, ``t0`` (when
the producers were let go) plus ``at_s``, whatever the others are doing: every action runs on
its own thread, so one that blocks (a consumer's clean shutdown while a broker is paused took
15 s, a restart waits for the broker to boot and register, a join for the consumer to start)
delays nothing else. One order still holds: the events of **one target** run one after another,
in the scenario's order (a ``leave`` of a consumer whose ``join`` is still starting waits for it;
a ``restart`` still booting delays a later ``pause`` of that broker), so such an event may start
late, and the recording says so (``waited_for``). An event that starts more than
``MAX_LATE_MS`` after its planned time is a warning on stderr; with ``strict`` (``record
--strict``) the recording fails instead, naming the event, and nothing is written.

Before every event and at the end, the recorder takes a *snapshot*: each group's member list as
a broker holds it (``mqadmin consumerConnection``, asked of the first broker the scenario has not
paused or killed) and how many lines each consumer's client log has, so every logged assignment
can be placed between two snapshots. A snapshot is requested at its event's planned time and
taken by one worker thread, off the clock (``mqadmin`` is a JVM: seconds on a loaded machine),
so it may be taken a little after its event started: its ``wall_ms`` says when; requests that
queue up while the worker is busy share one reading. The last snapshot (``"end"``) is taken
after every event finished, before the consumers are shut down.

A recording is a folder (written whole, or not at all: ``rocketlb_core.atomic``):

* ``recording.json``: provenance (the line, RocketMQ's versions, the scenario, the command that
  re-records it), the cluster layout (broker names and addresses), the topic's route, every
  event (in the scenario's order) with ``planned_ms`` (``t0_ms`` + ``at_s``), ``wall_ms`` (when
  its action started), ``done_ms`` (when it returned), ``late_ms`` (``wall_ms - planned_ms``) and,
  when it had to wait for an earlier event of its target, ``waited_for``; ``max_late_ms`` (the
  largest ``late_ms``); and the snapshots. Recordings made before issue 32 (all of
  ``data/live/``) lack ``planned_ms``, ``late_ms`` and ``max_late_ms``: their events ran one after
  another, and ``lateness`` computes theirs from ``t0_ms`` and ``at_s``. The format's ``VERSION``
  is unchanged: every field a reader used is still there, with the same meaning;
* ``scenario.toml``: the scenario, as run;
* ``sends/<producer>.jsonl.gz``: ground truth, one row per send: where the real client stored it
  (``broker``, ``queue``) or the error it got, and when it started (``sent_ms``);
* ``receives/<consumer>.jsonl.gz``: each gRPC consumer's rows (see above), the last line of a
  crashed one left out if the kill cut it short;
* ``msgtrace.jsonl.gz``: every message of ``RMQ_SYS_TRACE_TOPIC``, body untouched
  (``live/java/DumpTopic.java``): what ``rocketlb_core.trace.msgtrace`` imports;
* ``logs/<process>/<file>.log.gz``: each client's ``rocketmq_client.log`` and each broker's log,
  untouched, compressed.

The recorder runs real processes in real time, so it reads the wall clock (only in
``rocketlb_core.live``: the core never does).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder
from rocketlb_core.live import cluster as live
from rocketlb_core.live.jars import LiveError, line
from rocketlb_core.sim.scenario import ScenarioError, _Reader
from rocketlb_core.trace.agreement import MAX_THREADS as _MAX_THREADS
from rocketlb_core.trace.ordered_agreement import MAX_BATCH, SEND_MODES

FORMAT = "rocketlb-live-recording"
VERSION = 1
BROKER_ACTIONS = ("kill", "pause", "resume", "restart")
CONSUMER_ACTIONS = ("join", "leave", "crash", "freeze", "hang")
TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
MAX_EVENTS = 64
MAX_CLIENTS = 16
MAX_LATE_MS = 1000
"""An event that starts more than this long after its planned time (``t0_ms`` + ``at_s``) is
late: a warning on stderr, or a failed recording with ``strict``."""


@dataclass(frozen=True)
class LiveProducer:
    name: str
    group: str
    count: int
    interval_ms: int
    fault_tolerance: bool
    client: str = "remoting"        # or "grpc" (issue 34)
    max_attempts: int = 3           # the gRPC client's maxAttempts
    language: str = "java"          # a gRPC producer's client: "java" or "python"
    mode: str = "sync"              # a remoting producer's send: one of MODES
    keys: int = 0                   # the hash producer's distinct keys ("k0" ... )
    threads: int = 1                # application threads sending through it (issue 45)
    batch: int = 0                  # a batch producer's messages per send
    retry_not_stored: bool = False  # retryAnotherBrokerWhenNotStoreOK (issue 45)
    back_pressure: int = 0          # an async producer's backPressureForAsyncSendNum; 0: off


CLIENTS = ("remoting", "grpc")
REBALANCES = ("client", "broker")
"""Where a remoting push consumer's queues are computed: by itself, or by a broker
(``setClientRebalance(false)``, 5.x)."""
REQUEST_MODES = ("PULL", "POP")
"""A group's request modes (``MessageRequestMode``; ``mqadmin setConsumeMode -m``)."""
MODELS = ("clustering", "broadcasting")
MAX_ASSIGN = 64
LISTENERS = ("concurrently", "orderly")
LANGUAGES = ("java", "go")
STRATEGIES = {"java": ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"),
              "go": live.GO_STRATEGIES}
"""A remoting push consumer's ``strategy`` by its ``language`` (issue 47): upstream's class the
name stands for in each client (``Consume.java``; ``live/go``: ``AllocateByAveragely``,
``AllocateByConsistentHash(10)``)."""
MODES = SEND_MODES
"""How a remoting producer sends (issue 45; ``trace.ordered_agreement.SEND_MODES``, which the
check reads recordings with): ``send(msg)``; ``send(msg, selector, key)`` with
``SelectMessageQueueByHash`` over ``keys`` keys (ordered messages); ``sendOneway(msg)``;
``send(Collection)`` of ``batch`` messages; ``send(msg, callback)`` (``async``)."""
MAX_KEYS = 10_000
MIN_PERMITS, MAX_PERMITS = 10, 100_000
"""An async producer's ``back_pressure`` (``backPressureForAsyncSendNum``): upstream takes at
least 10 (``setBackPressureForAsyncSendNum``); 5.x lines only (``enableBackpressureForAsyncMode``
came with 5.0; fact producer.async-back-pressure-permits-5x)."""
MAX_THREADS = _MAX_THREADS
"""A remoting producer's ``threads``: the application threads that share it, each sending every
``threads``-th message (each with its own ``ThreadLocalIndex``). Several threads need
``fault_tolerance`` off: the check then splits the sends by thread, each thread's counter
exact; with the fault table on, the threads share its reports, which the check does not model
per thread yet."""


@dataclass(frozen=True)
class LiveConsumer:
    name: str
    group: str
    instance: str
    client: str = "remoting"        # or "grpc" (issue 34)
    kind: str | None = None         # a gRPC consumer's: "simple" or "push"
    model: str = "clustering"       # a remoting consumer's: or "broadcasting" (issue 45)
    listener: str = "concurrently"  # a remoting consumer's: or "orderly" (issue 45)
    assign: tuple[str, ...] = ()    # a lite-pull consumer's own queues, "broker-a/0"
    language: str = "java"          # a remoting push consumer's client: or "go" (issue 47)
    strategy: str = "AVG"           # a remoting push consumer's allocation strategy
    rebalance: str = "client"       # a remoting push consumer's: or "broker" (5.x, issue 45)


@dataclass(frozen=True)
class ConsumeMode:
    """A group's request mode on the scenario's topic, set before the clock starts (upstream's
    ``mqadmin setConsumeMode``: ``SET_MESSAGE_REQUEST_MODE`` to every broker; 5.x only):
    ``PULL`` or ``POP``, with ``popShareQueueNum`` (``pop_share``)."""

    group: str
    mode: str
    pop_share: int


@dataclass(frozen=True)
class LiveEvent:
    at_s: float
    action: str
    target: str


@dataclass(frozen=True)
class LiveScenario:
    name: str
    description: str
    path: str
    text: str
    brokers: int
    topic: str
    queues: int
    trace: bool
    settle_s: float
    producers: tuple[LiveProducer, ...]
    consumers: tuple[LiveConsumer, ...]
    events: tuple[LiveEvent, ...]
    consume_modes: tuple[ConsumeMode, ...] = ()
    slaves: tuple[str, ...] = ()     # masters with a slave (SYNC_MASTER; issue 45)


KINDS = ("sync", "hash", "oneway", "batch", "async", "threads", "fault_tolerance",
         "retry_not_stored", "back_pressure", "slave", "broadcasting", "orderly", "lite-pull",
         "go", "pop", "grpc")
"""The kinds of client and cluster a scenario can hold (``kinds``): how its producers send, its
producers' switches, a slave, and its consumers' kinds (issue 45's list)."""


def kinds(scenario: LiveScenario) -> list[str]:
    """The ``KINDS`` ``scenario`` holds, in ``KINDS``' order (a soak's rows keep them).

    >>> kinds(parse_scenario('name = "k"\\ntopic = "T"\\nslaves = ["broker-a"]\\n'
    ...                      '[[producers]]\\nname = "p"\\ngroup = "G"\\ncount = 1\\n'
    ...                      'mode = "async"\\nback_pressure = 10\\n'))
    ['async', 'back_pressure', 'slave']
    """
    held = {p.mode for p in scenario.producers}
    held |= {k for p in scenario.producers for k, on in (
        ("threads", p.threads > 1), ("fault_tolerance", p.fault_tolerance),
        ("retry_not_stored", p.retry_not_stored), ("back_pressure", p.back_pressure > 0),
        ("grpc", p.client == "grpc")) if on}
    held |= {k for c in scenario.consumers for k, on in (
        ("broadcasting", c.model == "broadcasting"),
        ("orderly", c.listener == "orderly" and c.model == "clustering"),
        ("lite-pull", c.kind == "lite-pull"), ("go", c.language == "go"),
        ("pop", c.rebalance == "broker"), ("grpc", c.client == "grpc")) if on}
    if scenario.slaves:
        held.add("slave")
    return [k for k in KINDS if k in held]


def load_scenario(path: Path | str) -> LiveScenario:
    """Read and validate a live scenario; a bad field is a ``ScenarioError`` naming the file
    and the field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot read it ({exc})") from None
    return parse_scenario(text, str(path))


def parse_scenario(text: str, path: str = "<scenario>") -> LiveScenario:
    """Validate a live scenario's TOML ``text`` (``path`` names it in errors)."""
    r = _Reader(path)
    top = r.table(r.toml(text), "", {"name", "topic"},
                  {"description", "brokers", "queues", "trace", "settle_s", "producers",
                   "consumers", "events", "consume_modes", "slaves"})
    brokers = r.num(top, "brokers", "", 2, integer=True, minimum=1,
                    maximum=len(live.BROKER_NAMES))
    producers = []
    for i, p in enumerate(r.array(top, "producers", "", MAX_CLIENTS)):
        where = f"producers[{i}]"
        p = r.table(p, where, {"name", "group", "count"},
                    {"interval_ms", "fault_tolerance", "client", "max_attempts", "language",
                     "mode", "keys", "threads", "batch", "retry_not_stored",
                     "back_pressure"})
        ft = p.get("fault_tolerance", False)
        if not isinstance(ft, bool):
            raise r.fail(f"{where}.fault_tolerance", f"expected true or false, got {ft!r}")
        client = r.text(p, "client", where, "remoting")
        if client not in CLIENTS:
            raise r.fail(f"{where}.client", f"one of {', '.join(CLIENTS)}, got {client!r}")
        if client == "grpc" and ft:
            raise r.fail(f"{where}.fault_tolerance", "the gRPC client has no "
                         "sendLatencyFaultEnable: leave it out")
        if client != "grpc" and "max_attempts" in p:
            raise r.fail(f"{where}.max_attempts", "only a gRPC producer has it")
        language = r.text(p, "language", where, "java")
        allowed = live.GRPC_LANGUAGES if client == "grpc" else LANGUAGES
        if language not in allowed:
            raise r.fail(f"{where}.language",
                         f"a {client} producer's is one of {', '.join(allowed)}, got "
                         f"{language!r:.40}")
        if language == "go":
            for key in ("mode", "threads", "keys", "batch"):
                if key in p:
                    raise r.fail(f"{where}.{key}", "a Go producer sends synchronously from one "
                                 "goroutine (live/go): leave it out")
            if ft:
                raise r.fail(f"{where}.fault_tolerance", "the Go client has no latency fault "
                             "tolerance: leave it out")
        attempts = r.num(p, "max_attempts", where, 3, integer=True, minimum=1, maximum=10)
        mode = r.text(p, "mode", where, "sync")
        if mode not in MODES:
            raise r.fail(f"{where}.mode", f"one of {', '.join(MODES)}, got {mode!r}")
        if client == "grpc" and "mode" in p:
            raise r.fail(f"{where}.mode", "only a remoting producer has it")
        if mode != "hash" and "keys" in p:
            raise r.fail(f"{where}.keys", "only a producer of mode \"hash\" has it")
        keys = r.num(p, "keys", where, 16 if mode == "hash" else 0, integer=True,
                     minimum=1 if mode == "hash" else 0, maximum=MAX_KEYS)
        if mode != "batch" and "batch" in p:
            raise r.fail(f"{where}.batch", "only a producer of mode \"batch\" has it")
        batch = r.num(p, "batch", where, 4 if mode == "batch" else 0, integer=True,
                      minimum=1 if mode == "batch" else 0, maximum=MAX_BATCH)
        threads = r.num(p, "threads", where, 1, integer=True, minimum=1, maximum=MAX_THREADS)
        if client == "grpc" and "threads" in p:
            raise r.fail(f"{where}.threads", "only a remoting producer has it")
        if mode == "async" and "threads" in p:
            raise r.fail(f"{where}.threads", "an async producer sends from its executor's "
                         "threads (AsyncSenderExecutor_N): leave it out")
        if mode == "async" and ft:
            raise r.fail(f"{where}.fault_tolerance", "an async producer needs it off (the fault "
                         "table's reports come from callback threads, which the check does not "
                         "model yet)")
        if threads > 1 and ft:
            raise r.fail(f"{where}.threads", "several threads need fault_tolerance off (the "
                         "check splits the sends by thread; the fault table the threads share "
                         "is not modelled per thread)")
        retry = p.get("retry_not_stored", False)
        if not isinstance(retry, bool):
            raise r.fail(f"{where}.retry_not_stored", f"expected true or false, got {retry!r:.40}")
        if retry and (client != "remoting" or language != "java" or mode != "sync"):
            raise r.fail(f"{where}.retry_not_stored", "a Java remoting producer of mode "
                         "\"sync\" has it (the check follows its synchronous loop)")
        back_pressure = (r.num(p, "back_pressure", where, integer=True, minimum=MIN_PERMITS,
                               maximum=MAX_PERMITS) if "back_pressure" in p else 0)
        if "back_pressure" in p and (mode != "async" or client != "remoting"):
            raise r.fail(f"{where}.back_pressure", "an async remoting producer has it")
        if language == "python" and attempts != 3:
            raise r.fail(f"{where}.max_attempts", "the Python client takes its attempts from "
                         "the Proxy's settings (grpcClientProducerMaxAttempts, 3): leave it out")
        producers.append(LiveProducer(
            r.text(p, "name", where), r.text(p, "group", where),
            r.num(p, "count", where, integer=True, minimum=1, maximum=100_000),
            r.num(p, "interval_ms", where, 0, integer=True, minimum=0, maximum=60_000), ft,
            client, attempts, language, mode, keys, threads, batch, retry, int(back_pressure)))
    if sum(x.client == "grpc" for x in producers) > 1:
        raise r.fail("producers", "one gRPC producer a scenario: the Proxy keeps one queue "
                     "counter per topic, and the check follows one producer's attempts in it")
    queues = r.num(top, "queues", "", 4, integer=True, minimum=1, maximum=64)
    consumers = []
    for i, c in enumerate(r.array(top, "consumers", "", MAX_CLIENTS)):
        where = f"consumers[{i}]"
        c = r.table(c, where, {"name", "group"},
                    {"instance", "client", "kind", "model", "listener", "assign", "language",
                     "strategy", "rebalance"})
        name = r.text(c, "name", where)
        client = r.text(c, "client", where, "remoting")
        if client not in CLIENTS:
            raise r.fail(f"{where}.client", f"one of {', '.join(CLIENTS)}, got {client!r}")
        kind = None
        if client == "grpc":
            if "kind" not in c:
                raise r.fail(f"{where}.kind", "a gRPC consumer needs it: "
                             f"{' or '.join(live.GRPC_CONSUMER_KINDS)}")
            kind = r.text(c, "kind", where)
            if kind not in live.GRPC_CONSUMER_KINDS:
                raise r.fail(f"{where}.kind",
                             f"one of {', '.join(live.GRPC_CONSUMER_KINDS)}, got {kind!r}")
            if "instance" in c:
                raise r.fail(f"{where}.instance", "only a remoting consumer has it (the gRPC "
                             "client has no instanceName)")
        elif "kind" in c:
            kind = r.text(c, "kind", where)
            if kind != "lite-pull":
                raise r.fail(f"{where}.kind", "a remoting consumer's is \"lite-pull\" (or "
                             f"none: a push consumer), got {kind!r}; simple and push are a "
                             "gRPC consumer's")
        assign: list[str] = []
        if "assign" in c:
            if kind != "lite-pull" or client != "remoting":
                raise r.fail(f"{where}.assign", "only a lite-pull consumer has it")
            assign = _assigned(r, c, where, brokers, queues)
        if kind == "lite-pull":
            for key in ("model", "listener"):
                if key in c:
                    raise r.fail(f"{where}.{key}", "only a push consumer has it")
        model = r.text(c, "model", where, "clustering")
        listener = r.text(c, "listener", where, "concurrently")
        for key, value, allowed in (("model", model, MODELS),
                                    ("listener", listener, LISTENERS)):
            if value not in allowed:
                raise r.fail(f"{where}.{key}", f"one of {', '.join(allowed)}, got {value!r}")
            if client == "grpc" and key in c:
                raise r.fail(f"{where}.{key}", "only a remoting consumer has it (a gRPC "
                             "consumer's group is set on the Proxy)")
        language = r.text(c, "language", where, "java")
        if language not in LANGUAGES:
            raise r.fail(f"{where}.language", f"one of {', '.join(LANGUAGES)}, got "
                         f"{language!r:.40}")
        if language == "go":
            for key in ("client", "kind", "model", "listener"):
                if key in c and (key != "client" or client != "remoting"):
                    raise r.fail(f"{where}.{key}", "a Go consumer is the Go client's "
                                 "clustering push consumer, concurrently (live/go): leave it out")
        strategy = r.text(c, "strategy", where, "AVG")
        if strategy not in STRATEGIES[language]:
            raise r.fail(f"{where}.strategy", f"a {language} consumer's is one of "
                         f"{', '.join(STRATEGIES[language])}, got {strategy!r:.40}")
        if "strategy" in c and (client != "remoting" or kind is not None):
            raise r.fail(f"{where}.strategy", "only a remoting push consumer has it")
        rebalance = r.text(c, "rebalance", where, "client")
        if rebalance not in REBALANCES:
            raise r.fail(f"{where}.rebalance", f"one of {', '.join(REBALANCES)}, got "
                         f"{rebalance!r:.40}")
        if rebalance == "broker" and (client != "remoting" or kind is not None
                                      or language != "java" or model != "clustering"
                                      or listener != "concurrently"):
            raise r.fail(f"{where}.rebalance", "\"broker\" needs a Java remoting push "
                         "consumer, clustering and concurrently (an orderly or broadcasting "
                         "one allocates on the client whatever it is told)")
        consumers.append(LiveConsumer(name, r.text(c, "group", where),
                                      r.text(c, "instance", where, name), client, kind,
                                      model, listener, tuple(assign), language, strategy,
                                      rebalance))
    names = [x.name for x in producers] + [x.name for x in consumers]
    for n in names:
        if names.count(n) > 1:
            raise r.fail("producers/consumers", f"the name {n!r} is used twice")
    broker_names = live.BROKER_NAMES[:brokers]
    slaves = r.array(top, "slaves", "", brokers)
    for i, m in enumerate(slaves):
        if m not in broker_names or slaves.index(m) != i:
            raise r.fail(f"slaves[{i}]", f"a master of this cluster "
                         f"({', '.join(broker_names)}), once, got {m!r:.40}")
    broker_names = (*broker_names, *(live.slave_of(m) for m in slaves))
    events = []
    for i, e in enumerate(r.array(top, "events", "", MAX_EVENTS)):
        where = f"events[{i}]"
        e = r.table(e, where, {"at_s", "action", "target"}, set())
        action, target = r.text(e, "action", where), r.text(e, "target", where)
        if action in BROKER_ACTIONS:
            if target not in broker_names:
                raise r.fail(f"{where}.target", f"{action} needs a broker or slave of this "
                             f"cluster ({', '.join(broker_names)}), got {target!r:.40}")
        elif action in CONSUMER_ACTIONS:
            if target not in {c.name for c in consumers}:
                raise r.fail(f"{where}.target", f"{action} needs a consumer of the scenario, "
                             f"got {target!r}")
            if action in ("freeze", "hang") and next(c for c in consumers
                                                     if c.name == target).client != "remoting":
                raise r.fail(f"{where}.action", f"{action} needs a remoting consumer (a gRPC "
                             "one's Proxy keeps its own table)")
            if action == "hang" and next(c for c in consumers if c.name == target).kind:
                raise r.fail(f"{where}.action", "hang needs a push consumer (a listener to "
                             "hang in)")
            if action == "hang" and next(c for c in consumers
                                         if c.name == target).language == "go":
                raise r.fail(f"{where}.action", "hang needs a Java consumer (the Go driver's "
                             "listener does not hang)")
        else:
            raise r.fail(f"{where}.action", f"one of {', '.join(BROKER_ACTIONS + CONSUMER_ACTIONS)}"
                         f", got {action!r}")
        events.append(LiveEvent(float(r.num(e, "at_s", where, minimum=0, maximum=3600)),
                                action, target))
    if [e.at_s for e in events] != sorted(e.at_s for e in events):
        raise r.fail("events", "events must be in time order (at_s)")
    _check_order(r, events)
    trace = top.get("trace", True)
    if not isinstance(trace, bool):
        raise r.fail("trace", f"expected true or false, got {trace!r}")
    modes: list[ConsumeMode] = []
    remoting_groups = {k.group for k in consumers if k.client == "remoting"}
    for i, m in enumerate(r.array(top, "consume_modes", "", MAX_CLIENTS)):
        where = f"consume_modes[{i}]"
        m = r.table(m, where, {"group", "mode"}, {"pop_share"})
        group = r.text(m, "group", where)
        if group not in remoting_groups:
            raise r.fail(f"{where}.group", f"a group of the scenario's remoting consumers, got "
                         f"{group!r:.60}")
        if any(x.group == group for x in modes):
            raise r.fail(f"{where}.group", f"{group!r:.60} has a mode already")
        mode = r.text(m, "mode", where)
        if mode not in REQUEST_MODES:
            raise r.fail(f"{where}.mode", f"one of {', '.join(REQUEST_MODES)}, got "
                         f"{mode!r:.40}")
        share = r.num(m, "pop_share", where, -1, integer=True, minimum=-1, maximum=64)
        if mode != "POP" and "pop_share" in m:
            raise r.fail(f"{where}.pop_share", "only the POP mode has it")
        modes.append(ConsumeMode(group, mode, int(share)))
    return LiveScenario(
        r.text(top, "name", ""), r.text(top, "description", "", "", limit=4000), str(path),
        text, brokers, r.text(top, "topic", ""),
        queues, trace,
        float(r.num(top, "settle_s", "", 8, minimum=0, maximum=600)), tuple(producers),
        tuple(consumers), tuple(events), tuple(modes), tuple(slaves))


def _assigned(r: _Reader, c: dict[str, Any], where: str, brokers: int,
              queues: int) -> list[str]:
    """A lite-pull consumer's ``assign``: 1 to ``MAX_ASSIGN`` distinct queues ``broker/id`` of
    the scenario's brokers and queue ids (0 to ``queues`` - 1)."""
    got = r.array(c, "assign", where, MAX_ASSIGN)
    if not got:
        raise r.fail(f"{where}.assign", "at least one queue, as \"broker-a/0\"")
    names = live.BROKER_NAMES[:brokers]
    out = []
    for i, q in enumerate(got):
        broker, _, queue = q.rpartition("/") if isinstance(q, str) else ("", "", "")
        if broker not in names or not (queue.isascii() and queue.isdigit()) \
                or not int(queue) < queues or q in out:
            raise r.fail(f"{where}.assign[{i}]", f"a queue of this cluster, \"broker/id\" "
                         f"with broker one of {', '.join(names)} and id from 0 to "
                         f"{queues - 1}, once, got {q!r:.60}")
        out.append(q)
    return out


BROKER_NEEDS = {"pause": ("running",), "resume": ("paused",), "kill": ("running", "paused"),
                "restart": ("killed",)}
BROKER_AFTER = {"pause": "paused", "resume": "running", "kill": "killed", "restart": "running"}
CONSUMER_NEEDS = {"join": ("not started",), "leave": ("running",), "crash": ("running",),
                  "freeze": ("running",), "hang": ("running",)}
CONSUMER_AFTER = {"join": "running", "leave": "gone", "crash": "gone", "freeze": "gone",
                  "hang": "running"}


def _check_order(r: _Reader, events: Sequence[LiveEvent]) -> None:
    """Each target's events in order must make sense: see the module docstring."""
    state: dict[str, str] = {}
    for i, e in enumerate(events):
        broker = e.action in BROKER_ACTIONS
        now = state.get(e.target, "running" if broker else "not started")
        needs = (BROKER_NEEDS if broker else CONSUMER_NEEDS)[e.action]
        if now not in needs:
            raise r.fail(f"events[{i}]", f"{e.action} {e.target} at {e.at_s:g} s: it is {now} "
                         f"then (an earlier event), and {e.action} needs it "
                         f"{' or '.join(needs)}")
        state[e.target] = (BROKER_AFTER if broker else CONSUMER_AFTER)[e.action]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _gzip_copy(src: Path, dst: Path) -> None:
    """``src`` compressed to ``dst`` (no name or time in the gzip header: the same bytes give
    the same file)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with src.open("rb") as f, dst.open("wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out:
        shutil.copyfileobj(f, out)


def _gzip_text(dst: Path, text: str) -> None:
    with dst.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                              mtime=0) as out:
        out.write(text.encode("utf-8"))


def _log_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        return sum(1 for _ in f)


DUMP_ATTEMPTS = 3
"""How often ``dump_topic`` asks: the dump only reads, and on a loaded host its client's first
route lookup can fail (seen live: ``RemotingTimeoutException ... 1689(ms)`` and
``RemotingSendRequestException: send request to <127.0.0.1:19876> failed`` from the name server,
then ``Can not find Message Queue for this topic``); a remoting failure is retried after
``DUMP_RETRY_S``, any other failure is not."""
DUMP_RETRY_S = 2.0


_LOGBACK_STATUS = re.compile(r"^\d\d:\d\d:\d\d,\d{3} \|-")


def _without_logback_status(text: str) -> str:
    """``mqadmin``'s output without the status lines its logback prints first (``HH:mm:ss,SSS
    |-INFO in ...``, nine tenths of a ``consumerProgress`` output's bytes in the recordings before
    issue 45's pop one)."""
    return "".join(x for x in text.splitlines(keepends=True) if not _LOGBACK_STATUS.match(x))


def dump_topic(cluster: live.Cluster, topic: str, timeout_s: float = 120.0) -> list[str]:
    """Every message of ``topic`` as ``live/java/DumpTopic.java`` prints it (JSON lines)."""
    home = cluster.home / "clients" / "dump"
    home.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, DUMP_ATTEMPTS + 1):
        run = subprocess.run([*live._client_command(cluster, home, "DumpTopic.java"),
                              cluster.namesrv_addr, topic], capture_output=True, text=True,
                             timeout=timeout_s, check=False, stdin=subprocess.DEVNULL)
        rows = [x for x in run.stdout.splitlines() if x.startswith("{")]
        if run.returncode == 0 and rows and rows[-1].startswith('{"done"'):
            break
        if attempt == DUMP_ATTEMPTS or "org.apache.rocketmq.remoting.exception." not in run.stderr:
            raise LiveError(f"dumping {topic} failed ({run.returncode}, attempt {attempt}):\n"
                            f"{run.stderr[-2500:]}")
        time.sleep(DUMP_RETRY_S)
    if json.loads(rows[-1])["done"] != len(rows) - 1:
        raise LiveError(f"dumping {topic}: the driver's count disagrees with its rows")
    return rows[:-1]


def _label(e: LiveEvent) -> str:
    return f"{e.action} {e.target} at {e.at_s:g} s"


def run_events(events: Sequence[LiveEvent], act: Callable[[LiveEvent], None], *, t0: float,
               t0_ms: int, due: Callable[[int, LiveEvent], None] | None = None,
               warn: Callable[[str], None] | None = None, strict: bool = False,
               clock: Callable[[], float] = time.monotonic,
               wall: Callable[[], int] | None = None) -> list[dict[str, Any]]:
    """Run each event's ``act(event)`` at its planned time, ``t0`` (a ``clock`` reading) plus
    ``at_s``, on a thread of its own, so an action that blocks delays no other event; an event
    waits only for the earlier events of its own target (``waited_for`` says which). ``due(i,
    event)`` is called (on this thread, it must not block) as each event comes due. Returns one
    row per event, in the scenario's order: ``at_s``, ``action``, ``target``, ``planned_ms``
    (``t0_ms`` + ``at_s``), ``wall_ms``, ``done_ms``, ``late_ms`` and maybe ``waited_for``. An
    event more than ``MAX_LATE_MS`` late is a ``warn``ing, or with ``strict`` a ``LiveError``
    naming it (the event is not run, and no later one starts). A failed action stops the run
    the same way: every started action is waited for, then its error is raised."""
    now_ms = wall or _now_ms
    rows: list[dict[str, Any] | None] = [None] * len(events)
    last: dict[str, tuple[threading.Thread, str]] = {}
    started: list[threading.Thread] = []
    errors: list[tuple[int, BaseException]] = []
    stop = threading.Event()
    lock = threading.Lock()

    def fail(i: int, exc: BaseException) -> None:
        with lock:
            errors.append((i, exc))
        stop.set()

    def worker(i: int, e: LiveEvent, planned: int,
               before: tuple[threading.Thread, str] | None) -> None:
        waited = None
        if before is not None and before[0].is_alive():
            waited = before[1]
            before[0].join()
        if stop.is_set():
            return
        start = now_ms()
        late = start - planned
        if late > MAX_LATE_MS:
            why = f" (it waited for '{waited}' of the same target)" if waited else ""
            msg = f"event {i} ({_label(e)}) started {late / 1000:.1f} s late{why}"
            if strict:
                fail(i, LiveError(f"--strict: {msg}, more than MAX_LATE_MS = {MAX_LATE_MS} ms; "
                                  "nothing was recorded"))
                return
            if warn:
                warn(f"warning: {msg}")
        try:
            act(e)
        except BaseException as exc:            # re-raised on the caller's thread
            fail(i, exc)
            return
        row: dict[str, Any] = {"at_s": e.at_s, "action": e.action, "target": e.target,
                               "planned_ms": planned, "wall_ms": start, "done_ms": now_ms(),
                               "late_ms": late}
        if waited:
            row["waited_for"] = waited
        rows[i] = row

    for i, e in enumerate(events):
        delay = t0 + e.at_s - clock()
        if delay > 0:
            stop.wait(delay)
        if stop.is_set():
            break
        if due is not None:
            due(i, e)
        t = threading.Thread(target=worker, name=f"event-{i}", daemon=True,
                             args=(i, e, t0_ms + round(e.at_s * 1000), last.get(e.target)))
        last[e.target] = (t, _label(e))
        started.append(t)
        t.start()
    for t in started:
        t.join()
    if errors:
        i, exc = min(errors, key=lambda x: x[0])
        if isinstance(exc, LiveError) and str(exc).startswith("--strict"):
            raise exc
        raise LiveError(f"event {i} ({_label(events[i])}) failed: {exc}") from exc
    return [r for r in rows if r is not None]


def lateness(meta: dict[str, Any]) -> dict[str, Any]:
    """How late a recording's events started: ``max_late_ms`` and the events later than
    ``MAX_LATE_MS`` (with ``waited_for`` where the recorder gave that reason). Recordings made
    before issue 32 have no ``planned_ms``: it is ``t0_ms`` + ``at_s`` there too."""
    late = []
    worst = 0
    for i, e in enumerate(meta.get("events", [])):
        planned = e.get("planned_ms", meta["t0_ms"] + round(e["at_s"] * 1000))
        ms = e["wall_ms"] - planned
        worst = max(worst, ms)
        if ms > MAX_LATE_MS:
            late.append({"event": i, "action": e["action"], "target": e["target"],
                         "at_s": e["at_s"], "late_ms": ms,
                         **({"waited_for": e["waited_for"]} if "waited_for" in e else {})})
    return {"max_late_ms": worst, "late": late}


class _SharedCluster(live.Cluster):
    """The recorder's cluster: its actions run on several threads, and each start (a consumer,
    a restarted broker) rewrites ``cluster.json`` through one temporary file: one at a time."""

    _lock = threading.Lock()

    def save(self) -> None:
        with self._lock:
            super().save()


class _Snapshots:
    """Snapshots taken by one worker thread, in the order requested (see the module
    docstring): requests waiting while it is busy share one reading."""

    def __init__(self, read: Callable[[], dict[str, Any]]) -> None:
        self.read = read
        self.taken: list[dict[str, Any]] = []
        self.pending: list[tuple[str, int]] = []
        self.cond = threading.Condition()
        self.closed = False
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, name="snapshots", daemon=True)
        self.thread.start()

    def request(self, before: str, planned_ms: int) -> None:
        with self.cond:
            self.pending.append((before, planned_ms))
            self.cond.notify()

    def _work(self) -> None:
        while True:
            with self.cond:
                while not self.pending and not self.closed:
                    self.cond.wait()
                if not self.pending:
                    return
                batch, self.pending = self.pending, []
            try:
                reading = self.read()
            except BaseException as exc:      # raised by close(), on the recorder's thread
                self.error = exc
                return
            for before, planned in batch:
                self.taken.append({"before": before, "planned_ms": planned, **reading})

    def close(self) -> list[dict[str, Any]]:
        with self.cond:
            self.closed = True
            self.cond.notify()
        self.thread.join()
        if self.error is not None:
            raise LiveError(f"a snapshot failed: {self.error}") from self.error
        return self.taken


def record(scenario_path: Path | str, line_name: str, out: Path | str, *,
           force: bool = False, progress: bool = True, strict: bool = False) -> dict[str, Any]:
    """Run ``scenario_path`` against a fresh cluster of ``line_name`` and write the recording to
    ``out`` (see the module docstring); returns ``recording.json``'s content. Every process it
    starts is stopped before it returns, whatever happened. Late events are warnings on
    stderr, or with ``strict`` a ``LiveError`` (nothing written)."""
    scenario = load_scenario(scenario_path)
    spec = line(line_name)
    out = Path(out)
    say = (lambda msg: print(f"[record {scenario.name}] {msg}", file=sys.stderr, flush=True)) \
        if progress else (lambda msg: None)

    def warn(msg: str) -> None:
        print(f"[record {scenario.name}] {msg}", file=sys.stderr, flush=True)

    scratch = Path(tempfile.mkdtemp(prefix="rocketlb-live-"))
    home = scratch / "cluster"
    try:
        with atomic_folder(out, "live record", inputs=[Path(scenario_path)], force=force) as tmp:
            meta = _run(scenario, spec.name, home, tmp, say, warn, strict)
            meta["command"] = (f"python -m rocketlb_core.live record {scenario_path} "
                               f"--line {line_name} --out {out}")
            (tmp / "recording.json").write_text(json.dumps(meta, indent=1) + "\n",
                                                encoding="utf-8")
            (tmp / "scenario.toml").write_text(scenario.text, encoding="utf-8")
        return meta
    finally:
        if (home / live.STATE).is_file():
            live.down(home)
        shutil.rmtree(scratch, ignore_errors=True)      # the cluster's stores: ours, scratch


def _run(scenario: LiveScenario, line_name: str, home: Path, tmp: Path,
         say: Any, warn: Callable[[str], None], strict: bool) -> dict[str, Any]:
    spec = line(line_name)
    if any(p.back_pressure for p in scenario.producers) and not spec.client_version.startswith("5"):
        raise LiveError(f"line {line_name} runs RocketMQ client {spec.client_version}: an async "
                        "producer's back pressure (enableBackpressureForAsyncMode) came with 5.0")
    say(f"starting a {line_name}.x cluster with {scenario.brokers} brokers")
    c0 = live.up(home, line_name, scenario.brokers,
                 trace_brokers=1 if scenario.trace else 0, slaves=scenario.slaves)
    c = _SharedCluster(**{f.name: getattr(c0, f.name) for f in fields(c0)})
    live.create_topic(c, scenario.topic, scenario.queues)
    if (scenario.consume_modes or any(k.rebalance == "broker" for k in scenario.consumers)) \
            and not spec.server_version.startswith("5"):
        raise LiveError(f"line {line_name} runs RocketMQ {spec.server_version}: a consumer "
                        "rebalanced by the broker, and a group's POP mode, came with 5.0")
    for m in scenario.consume_modes:
        live.set_consume_mode(c, scenario.topic, m.group, m.mode, m.pop_share)
        say(f"{m.group} on {scenario.topic}: {m.mode}"
            + (f", popShareQueueNum {m.pop_share}" if m.mode == "POP" else ""))
    # the route names a broker once it has registered the topic with the name server; on a
    # loaded host a soak waited 60 s and saw 2 brokers of 3 (line 5, issue 32)
    route = live.topic_route(c, scenario.topic, brokers=scenario.brokers, wait_s=150)
    consumers: dict[str, live.Consumer] = {}
    lock = threading.Lock()
    specs = {k.name: k for k in scenario.consumers}
    # the groups a snapshot asks a broker the members of: the remoting ones (a gRPC consumer is
    # the Proxy's client; the module docstring says why its group is not asked)
    groups = sorted({k.group for k in scenario.consumers if k.client == "remoting"})
    brokers = {p.name: "running" for p in c.brokers()}    # as the scenario left each one
    frozen: set[str] = set()                              # consumers stopped by SIGSTOP

    def reading() -> dict[str, Any]:
        with lock:
            asked = next((n for n, st in brokers.items() if st == "running"), None)
            running = list(consumers.items())
        out: dict[str, Any] = {"wall_ms": _now_ms(), "broker": asked, "members": {}}
        for g in groups:
            if asked is None:
                break
            try:
                out["members"][g] = live.consumer_ids(c, g, broker=asked)
            except (LiveError, subprocess.TimeoutExpired) as exc:   # paused meanwhile
                out.setdefault("errors", {})[g] = str(exc)[-300:]
        out["client_log_lines"] = {n: _log_lines(k.client_log) for n, k in running}
        return out

    def act(e: LiveEvent) -> None:
        if e.action in BROKER_ACTIONS and e.action != "restart" and e.target in brokers:
            with lock:
                brokers[e.target] = BROKER_AFTER[e.action]
        if e.action == "kill":
            live.kill_broker(c, e.target)
        elif e.action in ("pause", "resume"):
            live.signal_broker(c, e.target, signal.SIGSTOP if e.action == "pause"
                               else signal.SIGCONT)
        elif e.action == "restart":
            live.restart_broker(c, e.target)
            if e.target in brokers:
                with lock:
                    brokers[e.target] = "running"
        elif e.action == "join" and specs[e.target].client == "grpc":
            k = specs[e.target]
            assert k.kind is not None
            grpc_started = live.start_grpc_consumer(c, scenario.topic, k.group, k.kind,
                                                    name=k.name)
            with lock:
                consumers[k.name] = grpc_started
        elif e.action == "join" and specs[e.target].language == "go":
            k = specs[e.target]
            go_started = live.start_go_consumer(c, scenario.topic, k.group, k.instance,
                                                name=k.name, strategy=k.strategy)
            with lock:
                consumers[k.name] = go_started
        elif e.action == "join":
            k = specs[e.target]
            started = live.start_consumer(c, scenario.topic, k.group, k.instance,
                                          name=k.name, trace=scenario.trace,
                                          model=k.model.upper(), listener=k.listener,
                                          kind=k.kind or "push", assign=k.assign,
                                          strategy=k.strategy, rebalance=k.rebalance,
                                          consumes=bool(scenario.slaves))
            with lock:
                consumers[k.name] = started
            if started.start_error is not None:
                # 4.9.8 runs on as a member; 5.3.3's DefaultMQPushConsumerImpl.start catches
                # the failure, calls shutdown() and rethrows (lines 1012-1021): no member
                fate = ("5.x shut the consumer down" if c.line.startswith("5")
                        else "its client runs on")
                say(f"warning: {k.name}'s start() threw, {fate}: {started.start_error[:300]}")
        elif e.action == "leave":
            live.stop_consumer(consumers[e.target])
        elif e.action == "freeze":
            with lock:
                frozen.add(e.target)
            os.kill(consumers[e.target].process.pid, signal.SIGSTOP)
        elif e.action == "hang":
            (consumers[e.target].home / "hang").touch()
        else:
            live.kill_consumer(consumers[e.target])
        say(f"{e.at_s:6.1f} s  {e.action} {e.target}")

    grpc = any(x.client == "grpc" for x in scenario.producers) \
        or any(x.client == "grpc" for x in scenario.consumers)
    if grpc:
        say(f"starting the Proxy {live.proxy_version(c)}")
        live.start_proxy(c)
    live.driver_classes(c)                    # compiled before the clock starts
    if any(k.language == "go" for k in scenario.consumers):
        live.go_driver()                      # built before the clock starts
    if any(k.client == "grpc" for k in scenario.consumers):
        live.grpc_consumer_class_path(c)      # compiled before the clock starts
    producers: dict[str, live.Producer] = {}
    for p in scenario.producers:
        if p.language == "go":
            producers[p.name] = live.start_go_producer(
                c, scenario.topic, p.count, group=p.group, interval_ms=p.interval_ms,
                instance=p.name, go=False)
            continue
        if p.client == "grpc":
            producers[p.name] = live.start_grpc_producer(
                c, scenario.topic, p.count, interval_ms=p.interval_ms,
                max_attempts=p.max_attempts, instance=p.name, go=False, language=p.language)
            continue
        producers[p.name] = live.start_producer(
            c, scenario.topic, p.count, group=p.group, interval_ms=p.interval_ms,
            fault_tolerance=p.fault_tolerance, instance=p.name, trace=scenario.trace, go=False,
            mode=p.mode, keys=p.keys, threads=p.threads, batch=p.batch,
            retry_not_stored=p.retry_not_stored, named_bodies=bool(scenario.slaves),
            back_pressure=p.back_pressure)
    snapshots = _Snapshots(reading)
    try:
        t0 = time.monotonic()
        t0_ms = _now_ms()
        for proc in producers.values():
            live.start_sending(proc)
        say(f"{len(producers)} producers sending")
        events = run_events(
            scenario.events, act, t0=t0, t0_ms=t0_ms, warn=warn, strict=strict,
            due=(lambda i, e: snapshots.request(f"{e.action} {e.target}",
                                                t0_ms + round(e.at_s * 1000)))
            if scenario.consumers else None)
    finally:
        taken = snapshots.close()
    clock = lateness({"t0_ms": t0_ms, "events": events})
    say(f"events ran at most {clock['max_late_ms'] / 1000:.2f} s after their planned time")
    (tmp / "sends").mkdir()
    for name, proc in producers.items():
        rows = live.collect_sends(proc)
        _gzip_text(tmp / "sends" / f"{name}.jsonl.gz",
                   "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
        say(f"{name}: {sum('error' not in r for r in rows)} of {len(rows)} sends stored")
    time.sleep(scenario.settle_s)
    if scenario.consumers:
        end = reading()
        if end.get("errors") or (groups and end["broker"] is None):
            raise LiveError(f"the final snapshot failed: {end.get('errors') or 'no broker runs'}")
        taken.append({"before": "end", **end})
        # a broadcasting group commits nothing to the brokers (its members keep their offsets
        # in their own files): nothing to ask about it
        broadcasting = {k.group for k in scenario.consumers if k.model == "broadcasting"}
        committed = [g for g in groups if g not in broadcasting]
        if committed and end["broker"] is not None:
            (tmp / "progress").mkdir()
            for g in committed:               # the committed offsets, before any consumer stops
                (tmp / "progress" / f"{g}.txt").write_text(
                    _without_logback_status(live.admin(c, "consumerProgress", "-g", g)),
                    encoding="utf-8")
    # the gRPC consumers are all told to close first: a push consumer's close waits for its
    # receive in flight (PushConsumerImpl.waitingReceiveRequestFinished: up to the long-polling
    # timeout plus the request timeout, 23 s here), which one after another would add up
    for running in consumers.values():
        if isinstance(running, live.GrpcConsumer):
            running.stop_file.touch()
    for name, running in consumers.items():
        if name in frozen:
            live.kill_consumer(running)       # stopped: it would never answer a clean close
        elif running.process.poll() is None:
            live.stop_consumer(running)
    for name, running in sorted(consumers.items()):
        if isinstance(running, live.GrpcConsumer):
            continue
        for kind in ("consumed", "hung", "ranges", "offsets"):
            made = running.home / f"{kind}.json"
            if made.is_file():
                (tmp / kind).mkdir(exist_ok=True)
                (tmp / kind / f"{name}.json").write_bytes(made.read_bytes())
        made = running.home / "consumes.jsonl"          # an orderly member's; with slaves, any
        if made.is_file():
            (tmp / "consumes").mkdir(exist_ok=True)
            _gzip_text(tmp / "consumes" / f"{name}.jsonl.gz", made.read_text(encoding="utf-8"))
    grpc_consumers = {n: k for n, k in consumers.items() if isinstance(k, live.GrpcConsumer)}
    if grpc_consumers:
        (tmp / "receives").mkdir()
    for name, k in sorted(grpc_consumers.items()):
        rows = live.collect_receives(k)
        _gzip_text(tmp / "receives" / f"{name}.jsonl.gz",
                   "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
        got = sum(len(r.get("messages", ())) for r in rows) if k.kind == "simple" else len(rows)
        say(f"{name}: {got} messages {'received' if k.kind == 'simple' else 'consumed'}")
    if grpc:
        live.stop_proxy(c)            # its logs complete; the dump reads the brokers directly
    if grpc or scenario.slaves or any(p.mode == "oneway" for p in scenario.producers) \
            or any(k.model == "broadcasting" or k.rebalance == "broker"
                   for k in scenario.consumers):
        # a gRPC receipt names the client's queue, a oneway send none: the dump says where;
        # a broadcasting member's first offset is checked against the store times it holds;
        # what a broker-assigned group consumed, against every stored message; with slaves, a
        # message a master wrote and answered with a status other than SEND_OK
        stored = dump_topic(c, scenario.topic)
        _gzip_text(tmp / "topic.jsonl.gz", "".join(r + "\n" for r in stored))
        say(f"{len(stored)} messages of {scenario.topic} dumped")
    if scenario.trace:
        time.sleep(2.0)                   # the consumers' trace dispatchers flush at shutdown
        dumped = dump_topic(c, TRACE_TOPIC)
        _gzip_text(tmp / "msgtrace.jsonl.gz", "".join(r + "\n" for r in dumped))
        say(f"{len(dumped)} messages of {TRACE_TOPIC} dumped")
    live.down(c.home)
    for proc_ in c.processes:
        # the Java clients' and the servers' logs, and the Python client's (HOME/logs/...)
        for logs in (Path(proc_.folder) / "logs" / d for d in ("rocketmqlogs", "rocketmq_python")):
            for f in sorted(logs.glob("*.log")) if logs.is_dir() else ():
                if f.stat().st_size:
                    _gzip_copy(f, tmp / "logs" / proc_.name / f"{f.name}.gz")
    extra: dict[str, Any] = {}
    if any(k.language == "go" for k in scenario.consumers) \
            or any(p.language == "go" for p in scenario.producers):
        from rocketlb_core.live.jars import GO_CLIENT_VERSION

        extra["go_client"] = {"module": "github.com/apache/rocketmq-client-go/v2",
                              "version": GO_CLIENT_VERSION}
    if grpc:
        proxy = live.proxy(c)
        assert proxy is not None
        extra = {"proxy": {"artifact": "org.apache.rocketmq:rocketmq-proxy",
                           "version": live.proxy_version(c), "mode": "cluster",
                           "endpoints": f"127.0.0.1:{proxy.port}",
                           "config": json.loads((Path(proxy.folder) / "rmq-proxy.json")
                                                .read_text("utf-8"))},
                 "grpc_client": {"artifact": "org.apache.rocketmq:rocketmq-client-java",
                                 "version": live.GRPC_CLIENT_VERSION}}
        if any(p.language == "python" for p in scenario.producers):
            from rocketlb_core.live.jars import PYTHON_CLIENT_VERSION

            extra["python_client"] = {"package": "rocketmq-python-client",
                                      "version": PYTHON_CLIENT_VERSION}
    return {
        "format": FORMAT, "version": VERSION, "scenario": scenario.name,
        "description": scenario.description, "line": line_name,
        "server_version": spec.server_version, "client_version": spec.client_version,
        "topic": scenario.topic, "cluster": live.CLUSTER_NAME,
        "brokers": [{"name": p.name, "address": f"127.0.0.1:{p.port}"} for p in c.brokers()],
        **({"slaves": [{"name": p.name, "master": live.master_of(p.name),
                        "address": f"127.0.0.1:{p.port}"} for p in c.slaves()]}
           if c.slaves() else {}),
        "route": [{"broker_name": q.broker_name, "read_queue_nums": q.read_queue_nums,
                   "write_queue_nums": q.write_queue_nums, "perm": q.perm}
                  for q in route.queue_datas],
        # a remoting producer's row as before issue 34 (no client, no max_attempts), its mode
        # and keys when it does not send synchronously (issue 45); a gRPC one has neither
        "producers": [{k: v for k, v in vars(p).items()
                       if k not in ("mode", "keys", "threads", "batch")}
                      if p.client == "grpc" else
                      {k: v for k, v in vars(p).items() if k not in ("client", "max_attempts")
                       and (p.mode != "sync" or k not in ("mode", "keys"))
                       and (p.mode == "hash" or k != "keys")
                       and (p.threads > 1 or k != "threads")
                       and (p.mode == "batch" or k != "batch")
                       and (p.retry_not_stored or k != "retry_not_stored")
                       and (p.back_pressure or k != "back_pressure")}
                      for p in scenario.producers],
        # a remoting consumer's row as before issue 34; a gRPC one has no instance
        "consumers": [{"name": k.name, "group": k.group, "client": k.client, "kind": k.kind}
                      if k.client == "grpc" else
                      {"name": k.name, "group": k.group, "instance": k.instance,
                       **({"kind": k.kind, **({"assign": list(k.assign)} if k.assign else {})}
                          if k.kind else {}),
                       **({"model": k.model} if k.model != "clustering" else {}),
                       **({"listener": k.listener} if k.listener != "concurrently" else {}),
                       **({"language": k.language} if k.language != "java" else {}),
                       **({"strategy": k.strategy} if k.strategy != "AVG" else {}),
                       **({"rebalance": k.rebalance} if k.rebalance != "client" else {})}
                      for k in scenario.consumers],
        **({"consume_modes": [{"group": m.group, "mode": m.mode, "pop_share": m.pop_share}
                              for m in scenario.consume_modes]}
           if scenario.consume_modes else {}),
        "t0_ms": t0_ms, "events": events, "max_late_ms": clock["max_late_ms"],
        "max_late_limit_ms": MAX_LATE_MS, "snapshots": taken,
        "isolated": bool(os.environ.get(live.ENV_ISOLATED)),
        # 4.x clients log in the JVM's zone (this machine's); 5.x clients and the brokers GMT+8
        "utc_offset_minutes": time.localtime().tm_gmtoff // 60,
        **extra,
    }
