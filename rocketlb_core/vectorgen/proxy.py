"""What the Proxy answers a gRPC push consumer's ``QueryAssignment``, what the broker answers a
remoting consumer's ``QUERY_ASSIGNMENT``, and on which queue the Proxy stores a gRPC send, from
the released classes (issue 34, item 2).

``python -m rocketlb_core.vectorgen.proxy [--out tests/vectors/grpc] [--only proxy|broker|group]
[VERSION ...]`` resolves
``org.apache.rocketmq:rocketmq-proxy:<version>`` and its runtime dependencies from Maven Central
(5.3.3 and 5.5.0, into ``<cache>/vectors/rocketmq-proxy-<version>``), compiles
``java/rocketlb/ProxyAssignmentVectors.java`` against each and runs it on Java 17, writing
``proxy-assignment-<version>.jsonl.gz`` (gzip, JSONL, one request a line). The generator drives
the real ``org.apache.rocketmq.proxy.grpc.v2.route.RouteActivity#queryAssignment`` on real
protobuf ``QueryAssignmentRequest``s; its ``MessagingProcessor`` is a ``java.lang.reflect.Proxy``
answering ``getTopicRouteDataForProxy`` with the case's ``ProxyTopicRouteData`` and
``getSubscriptionGroupConfig`` with its ``SubscriptionGroupConfig`` (any other call would fail
the run); the Proxy's configuration is its own defaults (an empty ``rmq-proxy.json``). One
``java.util.Random(20261126)`` draws every case in turn, the same draws on both releases, so both
files hold the same requests (5.3.3's ``SubscriptionGroupConfig`` has no ``liteBindTopic``: its
cases carry none)::

    {"id": "proxy-assignment-5.5.0-00017", "grpc": "proxy-assignment",
     "source": {"artifact": "org.apache.rocketmq:rocketmq-proxy", "version": "5.5.0",
                "class": "...RouteActivity#queryAssignment", "seed": 20261126, "jvm": 17,
                "java": "...", "lite_bind_topic": true},
     "topic": "TopicTest", "group": "GID_push_3",
     "group_config": null | {"consume_message_orderly": bool, "lite_bind_topic": null | str},
     "queue_datas": [[brokerName, readQueueNums, writeQueueNums, perm], ...],
     "broker_datas": [[brokerName, {"<brokerId>": [[scheme, host, port], ...], ...}], ...],
     "expect": {"code": "OK" | "FORBIDDEN", "message": str,
                "assignments": [[topic, broker, brokerId, endpoints, queueId, permission], ...]}
               | {"error": {"type": "NullPointerException" | "ArithmeticException",
                            "message": null | str}}}

Routes have 1 to 5 brokers (names with non-ASCII characters among them); each broker one queue
data (two, one time in twelve), ``readQueueNums`` 0 to 8 or 16, ``perm`` 0 to 7 (6 one time in
three), in a shuffled order; broker datas shuffled, a broker missing from them one time in
eight, one without a master (id 0) one time in fourteen, a broker data twice one time in
fifteen, one for a broker no queue data names one time in six, slaves 0 to 2 with now and then
an id past 2^31 - 1; 0 to 2 addresses a broker id in ``IPv4``, ``IPv6`` or ``DOMAIN_NAME``; no
group config one time in eight, else ``consumeMessageOrderly`` half the time and a
``liteBindTopic`` absent, empty or set. ``endpoints``: the protobuf ``Endpoints`` written
``"SCHEME:host:port,host:port"`` (``grpc.assignment.proxy_endpoints``). An error is the
exception the returned future failed with (its message, but for a ``NullPointerException``).

**The broker** (``broker-assignment-<version>.jsonl.gz``, the same releases; the class path is
the Proxy's, which carries ``rocketmq-broker`` and ``rocketmq-client`` of its release):
``java/rocketlb/BrokerAssignmentVectors.java`` makes a real ``QueryAssignmentProcessor`` through
its constructor (its two strategies by name, its ``MessageRequestModeManager`` loaded from an
empty store folder) on a ``BrokerController`` made without its constructor (no broker runs),
holding a real ``BrokerConfig`` and ``MessageStoreConfig`` and two answers that are the case's
data: the broker's route cache (``TopicRouteInfoManager.getTopicSubscribeInfo``: the case's queue
set, or ``null``) and its consumer list (``ConsumerManager.getConsumerGroupInfo``: a group whose
``getAllClientId`` is the case's list, or no group). A stored mode is set through the real
``MessageRequestModeManager.setMessageRequestMode``; the request is a real
``QUERY_ASSIGNMENT`` command through ``processRequest`` (so ``queryAssignment``,
``doLoadBalance`` and ``allocate4Pop`` as released), the answer the decoded response body::

    {"id": "broker-assignment-5.5.0-00017", "grpc": "broker-assignment", "source": {...},
     "topic": "TopicTest" | "%RETRY%GID_pop" | "%LMQ%...", "group": "GID_pop",
     "client_id": str, "message_model": "CLUSTERING" | "BROADCASTING",
     "strategy": "AVG" | "AVG_BY_CIRCLE" | "CONSISTENT_HASH" | "MACHINE_ROOM",
     "mq_set": null | [[topic, broker, queueId], ...], "consumer_ids": null | [cid, ...],
     "stored_mode": null | {"mode": "PULL" | "POP", "pop_share_queue_num": int},
     "broker_config": {"broker_name", "default_message_request_mode",
                       "default_pop_share_queue_num", "server_load_balancer_enable"},
     "expect": {"code": 0, "assignments": null | [[topic, broker, queueId, mode], ...]}}

(``assignments`` sorted by broker and queue id: the broker answers a ``HashSet``.)

**The Proxy's queue for a send** (``--only group``: ``proxy-group-queue-<version>.jsonl.gz``, the
same releases, 1,000 cases a file, ``java.util.Random(20261128)``, the same draws on both):
``java/rocketlb/ProxyGroupQueueVectors.java`` builds a real ``MessageQueueView`` (no fault
strategy, 5.3.3, or penalizer, 5.5.0: the Proxy's default ``sendLatencyEnable=false``) from the
case's ``TopicRouteData`` (a ``QueueData`` per row, reading as many queues as it writes; a
``BrokerData`` per broker, with a master at id 0 unless the broker is ``masterless``, and a slave
at id 1), sets its write selector's ``queueIndex`` to ``index_start`` (reflection: upstream
seeds it from an unseeded ``Random``), and asks the real, protected
``SendMessageActivity.SendMessageQueueSelector`` (reached by reflection, driven as released:
real protobuf ``SendMessageRequest``s, ``select(ctx, view)``) for each send's queue, so the
queue list, the Guava ``Hashing.consistentHash`` (guava 32.0.1-jre on both class paths) and
``String.hashCode`` are all the released ones::

    {"id": "proxy-group-queue-5.5.0-00017", "grpc": "proxy-group-queue",
     "source": {"artifact": "org.apache.rocketmq:rocketmq-proxy", "version": "5.5.0",
                "class": "...SendMessageActivity$SendMessageQueueSelector#select",
                "seed": 20261128, "jvm": 17, "java": "...", "lite_topic": true},
     "topic": "TopicTest", "queue_datas": [[brokerName, writeQueueNums, perm], ...],
     "masterless": [brokerName, ...], "index_start": int,
     "sends": [{"group": str, "lite_topic": null | str, "messages": 1 | 2,
                "expect": null | [brokerName, queueId], "index": int}, ...],
     "write_queues": [[brokerName, queueId], ...]}

Routes have 1 to 5 brokers (names with non-ASCII and non-BMP characters among them, and
``broker-\uFF21`` beside ``broker-\U0001F680``, which Java and Python order differently), a
second queue data for a broker one time in twelve, ``writeQueueNums`` 0 (one time in eight), 1
to 8 or 16, ``perm`` 6, or 0 to 7 one time in three, a broker without a master one time in ten;
1 to 4 sends, each a group that is empty, blank (Java whitespace), holding a character Java
does not count as whitespace (U+00A0, U+0085, ...), ASCII, non-ASCII, non-BMP or 64 to 300
characters long; a lite topic (``null`` on 5.3.3, whose protocol has none); two messages one
time in ten. ``expect`` is the selector's answer, ``index`` the counter after it,
``write_queues`` the selector's ``getQueues()``. Every non-ASCII character is written escaped.

``--check`` regenerates the first ``--cases`` of each file and compares instead of writing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rocketlb_core.live.jars import LiveError, class_path
from rocketlb_core.numbers import INT32_MAX, int_option
from rocketlb_core.vectorgen import write_or_check
from rocketlb_core.vectorgen.remoting import JAVA_ROOT, REPO, jars, javas

VERSIONS = ("5.3.3", "5.5.0")
CASES = JAVA_ROOT / "rocketlb" / "Cases.java"
"""Compiled with each family's generator: what the three share (every case's ``source``, the
loop that prints the cases)."""


@dataclass(frozen=True)
class Family:
    name: str
    main: str
    seed: int
    cases: int
    stem: str = "{name}-assignment"

    @property
    def source(self) -> Path:
        return JAVA_ROOT / "rocketlb" / f"{self.main}.java"

    def file_name(self, version: str) -> str:
        return f"{self.stem.format(name=self.name)}-{version}.jsonl.gz"


FAMILIES = (Family("proxy", "ProxyAssignmentVectors", 20261126, 2000),
            Family("broker", "BrokerAssignmentVectors", 20261127, 2000),
            Family("group", "ProxyGroupQueueVectors", 20261128, 1000, "proxy-group-queue"))


def generate(family: Family, version: str, cases: int, work: Path) -> str:
    """The generator's output for the first ``cases`` cases of ``family`` on ``version``."""
    run_java, _ = javas()
    cp = class_path(jars("rocketmq-proxy", version))
    out = work / family.name / version
    out.mkdir(parents=True, exist_ok=True)
    built = subprocess.run([str(Path(run_java).with_name("javac")), "-encoding", "UTF-8", "-d",
                            str(out), "-cp", cp, str(family.source), str(CASES)],
                           capture_output=True, text=True, timeout=600, check=False)
    if built.returncode != 0:
        raise LiveError(f"javac against rocketmq-proxy {version} failed:\n{built.stderr[-1500:]}")
    run = subprocess.run([run_java, "-Dfile.encoding=UTF-8", "-cp", f"{out}{os.pathsep}{cp}",
                          f"rocketlb.{family.main}", str(family.seed), str(cases), version],
                         capture_output=True, timeout=3600, check=False)
    if run.returncode != 0:
        raise LiveError(f"{family.main} on {version} failed (exit {run.returncode}): "
                        f"{run.stderr.decode(errors='replace')[-1500:]}")
    # the Proxy's logger may print to stdout too: keep the cases
    return "".join(x + "\n" for x in run.stdout.decode("utf-8").splitlines()
                   if x.startswith('{"id"'))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rocketlb_core.vectorgen.proxy",
                                 description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "vectors" / "grpc")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--cases", type=int_option(1, INT32_MAX), default=None)
    ap.add_argument("--only", choices=[f.name for f in FAMILIES], default=None)
    ap.add_argument("versions", nargs="*", default=list(VERSIONS))
    args = ap.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="rocketlb-proxy-") as tmp:
        for family, version in [(f, v) for f in FAMILIES for v in args.versions
                                if args.only in (None, f.name)]:
            cases = min(args.cases or family.cases, family.cases)
            text = generate(family, version, cases, Path(tmp))
            if len(text.splitlines()) != cases:
                raise LiveError(f"{family.name} {version}: {len(text.splitlines())} cases, "
                                f"not {cases}")
            bad += not write_or_check(args.out / family.file_name(version), text,
                                      check=args.check)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
