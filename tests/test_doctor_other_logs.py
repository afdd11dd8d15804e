"""Logs ``rocketlb doctor`` recognises and does not read (issue 43): a RocketMQ Proxy's
(``proxy.log``, and the ``broker_default.log`` and ``broker.log`` of rocketmq-proxy 5.3.3, from
the shipped gRPC recordings) and a gRPC client's (rocketmq-client-java 5.0.8's
``rocketmq-client.log``, the Python client's ``rocketmq_client.log``) are listed as ignored with
their reason, never an error, and the notes say what they leave unchecked; the exit code, the
ignored list, the terminal report and ``--json``."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from rocketlb_core import data_path
from rocketlb_core.doctor.inputs import (
    GRPC_JAVA_LOG,
    GRPC_PYTHON_LOG,
    PROXY_LOG,
    other_log,
    read_inputs,
)
from tests.test_fuzz import run_command

GRPC = data_path("live", "grpc", "grpc-clients-5", "logs")
PY = data_path("live", "grpc", "grpc-python-producer-outage-5", "logs", "py1")


def _copy(tmp_path: Path, *names: str) -> dict[str, Path]:
    """The shipped logs ``names`` (relative to ``GRPC``) copied to ``tmp_path``, gzip kept."""
    out = {}
    for name in names:
        dest = tmp_path / name.replace("/", "-")
        shutil.copyfile(GRPC / name, dest)
        out[name] = dest
    return out


def test_a_proxys_logs_are_ignored_as_proxy_logs_not_an_error(tmp_path: Path) -> None:
    """The 5.3.3 Proxy's broker_default.log was an exit 2 (``not a log timestamp``: its own
    remoting client's ``route info changed`` lines, stamped to the second), its broker.log an
    exit 2 (a ``GrpcClientChannel{...}`` membership line), its proxy.log "not an input"."""
    files = _copy(tmp_path, "proxy/broker_default.log.gz", "proxy/broker.log.gz",
                  "proxy/proxy.log.gz", "proxy/proxy_watermark.log.gz")
    status, out, err = run_command(["doctor", "--json", str(tmp_path)])
    assert status == 0, err
    doc = json.loads(out)
    assert doc["inputs"] == []
    assert doc["findings"] == []
    assert doc["ignored"] == [{"file": str(p), "reason": PROXY_LOG}
                              for p in sorted(files.values())]
    assert doc["notes"] == ["4 RocketMQ Proxy log(s) not read: what the Proxy did for its gRPC "
                            "clients was not checked"]
    status, text, err = run_command(["doctor", str(tmp_path)])
    assert status == 0, err
    assert "4 file(s) ignored" in text.splitlines()[0]
    # each file with its whole reason (wrapped, not clipped; a path longer than a line, as a
    # test worker's tmp_path can be, is cut across lines, so compare without the whitespace)
    flat = "".join(text.split())
    for p in files.values():
        assert "".join(f"ignored {p}: {PROXY_LOG}".split()) in flat
    assert "No balancing problem found in these inputs." in text
    assert "note: 4 RocketMQ Proxy log(s) not read" in text
    assert max(len(t) for t in text.splitlines()) <= 100


def test_a_grpc_java_clients_log_is_read_and_noted(tmp_path: Path) -> None:
    """A gRPC Java client's log is read (issue 47): its clients, a push consumer's group and
    assignments; the report notes what such a log cannot show, and a simple consumer's log
    names no group."""
    files = _copy(tmp_path, "s2/rocketmq-client.log.gz", "g1/rocketmq-client.log.gz")
    status, out, err = run_command(["doctor", "--json", str(tmp_path)])
    assert status == 0, err
    doc = json.loads(out)
    assert doc["inputs"] == [{"file": str(p), "kind": "grpcClientLog"}
                             for p in sorted(files.values())]
    assert doc["ignored"] == []
    assert doc["notes"] == [
        "1 gRPC simple consumer(s) in the gRPC client logs read: a simple consumer's log names "
        "no group, so whether it shares one with remoting consumers was not checked",
        "2 gRPC Java client log(s) read for a push consumer's group and assignment only: where "
        "the gRPC clients' sends and receives went is not in their logs"]
    status, text, _ = run_command(["doctor", str(tmp_path)])
    assert status == 0
    assert "note: 2 gRPC Java client log(s) read" in text


def test_a_small_grpc_java_client_log_written_in_its_format(tmp_path: Path) -> None:
    """Lines in rocketmq-client-java's pattern (``rocketmq.logback.xml``: ``%d{yyy-MM-dd
    HH:mm:ss.SSS,GMT+8} %-5p [%pid] [%t] [%logger{12}#%M:%L] - %m%n``), uncompressed, named as
    the client names it."""
    log = tmp_path / "rocketmq-client.log"
    log.write_text(
        "2026-11-27 10:00:00.101 INFO  [4242] [main] [o.a.r.c.j.i.p.ProducerImpl#?:?] - Begin to "
        "start the rocketmq producer, clientId=host@4242@0@abc\n"
        "2026-11-27 10:00:00.388 INFO  [4242] [main] [o.a.r.c.j.i.ClientImpl#?:?] - Begin to "
        "fetch topic(s) route data from remote during client startup, clientId=host@4242@0@abc,"
        " topics=[TopicA]\n"
        "2026-11-27 10:00:03.512 ERROR [4242] [RocketmqClientAsyncWorker-0-2] "
        "[o.a.r.c.j.i.p.ProducerImpl#?:?] - Failed to send message, maxAttempts=3, attempt=1, "
        "topic=TopicA, messageId(s)=[01ABC], endpoints=ipv4:10.0.0.9:8081, "
        "clientId=host@4242@0@abc\n"
        "org.apache.rocketmq.shaded.io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED\n")
    assert other_log(log.read_text().splitlines()[0]) == GRPC_JAVA_LOG
    inputs = read_inputs([tmp_path])
    assert inputs.read == [(str(log), "grpcClientLog")]
    (grpc,) = inputs.grpc_logs
    assert grpc.client_ids == ["host@4242@0@abc"]
    assert (grpc.groups, grpc.assignments) == ({}, {})
    # a log of its format that names no client is listed as ignored, with the reason
    log.write_text("2026-11-27 10:00:00.101 INFO  [4242] [main] [o.a.r.c.j.i.ClientImpl#?:?] - "
                   "Begin to start the client manager\n")
    inputs = read_inputs([tmp_path])
    assert inputs.read == []
    assert inputs.ignored == [(str(log), GRPC_JAVA_LOG)]


def test_a_grpc_python_clients_log_is_listed_as_not_read(tmp_path: Path) -> None:
    inputs = read_inputs([PY])
    assert inputs.read == []
    assert inputs.ignored == [(str(PY / "rocketmq_client.log.gz"), GRPC_PYTHON_LOG)]


def test_other_logs_beside_a_capture_change_nothing_of_its_findings(tmp_path: Path) -> None:
    capture = data_path("live", "doctor", "capture-4")
    _copy(tmp_path, "proxy/broker_default.log.gz", "p1/rocketmq-client.log.gz")
    status, alone, _ = run_command(["doctor", "--json", str(capture)])
    status2, both, err = run_command(["doctor", "--json", str(capture), str(tmp_path)])
    assert status == status2 == 3, err
    a, b = json.loads(alone), json.loads(both)
    assert a["findings"] == b["findings"]
    # the gRPC push consumer's log is read (a group of its own: nothing found), the Proxy's
    # ignored, and each adds its note
    assert b["inputs"] == a["inputs"] + [{"file": str(tmp_path / "p1-rocketmq-client.log.gz"),
                                          "kind": "grpcClientLog"}]
    assert [r["reason"] for r in b["ignored"][len(a["ignored"]):]] == [PROXY_LOG]
    assert b["notes"] == a["notes"] + [n for n in b["notes"] if "not read" in n
                                       or "gRPC Java client log(s) read" in n]
    assert len(b["notes"]) == len(a["notes"]) + 2


def test_a_line_stamped_to_the_second_is_no_client_record(tmp_path: Path) -> None:
    """A server's log (a broker's, a name server's) stamped to the second with a route-change
    line, no Proxy marker: ignored, where it was an exit 2."""
    (tmp_path / "server.log").write_text(
        "2026-11-26 21:13:28 INFO main - the topic[TopicA] route info changed, old[null] "
        ",new[TopicRouteData [queueDatas=[QueueData [brokerName=broker-a, readQueueNums=4, "
        "writeQueueNums=4, perm=6, topicSysFlag=0]]]]\n"
        "2026-11-26 21:13:29 INFO main - something else\n")
    status, out, err = run_command(["doctor", "--json", str(tmp_path)])
    assert status == 0, err
    assert json.loads(out)["ignored"] == [{"file": str(tmp_path / "server.log"),
                                           "reason": "a log without records the doctor reads"}]


BAD_REBALANCE = ("2026-11-26 21:13:30,000 INFO RocketmqClient - rebalanced result changed. "
                 "allocateMessageQueueStrategyName=AVG, group=GID_x\n")


def test_a_malformed_client_line_is_still_an_error_unless_the_log_is_a_proxys(
        tmp_path: Path) -> None:
    log = tmp_path / "c.log.gz"
    with gzip.open(log, "wt") as f:
        f.write(BAD_REBALANCE + "2026-11-26 21:13:31,000 INFO RocketmqClient - fine\n")
    status, out, err = run_command(["doctor", str(tmp_path)])
    assert status == 2
    assert out == ""
    assert err.startswith(f"error: {log}, row 1,")
    status, out, _ = run_command(["doctor", "--json", "--skip-bad", str(tmp_path)])
    assert status == 0
    assert json.loads(out)["skipped_bad_lines"] == 1
    # the same line in a Proxy's log (its marker comes later): ignored, not an error, and no
    # bad line counted
    with gzip.open(log, "wt") as f:
        f.write(BAD_REBALANCE + "2026-11-26 21:13:31 WARN main - get Topic "
                "[DefaultHeartBeatSyncerTopic] RouteInfoFromNameServer is not exist value\n")
    for extra in ([], ["--skip-bad"]):
        status, out, err = run_command(["doctor", "--json", *extra, str(tmp_path)])
        assert status == 0, err
        doc = json.loads(out)
        assert doc["ignored"] == [{"file": str(log), "reason": PROXY_LOG}]
        assert doc["skipped_bad_lines"] == 0


def test_the_brokers_logs_of_a_grpc_recording_are_still_read() -> None:
    """A broker logs the Proxy's heartbeat-syncer topic and group too (``create new topic``,
    ``new consumer connected, group: CID_DefaultHeartBeatSyncerTopic``, ``stats.log``): not a
    Proxy marker. Every shipped gRPC recording's logs, by folder: the Proxy's and the gRPC Python
    clients' are ignored as such, the gRPC Java clients' and the brokers' broker.log are read,
    nothing is an error."""
    for rec in sorted(data_path("live", "grpc").iterdir()):
        inputs = read_inputs([rec / "logs"])
        why = dict(inputs.ignored)
        read = dict(inputs.read)
        for p in (rec / "logs").rglob("*.gz"):
            where = p.parent.name
            if where == "proxy" and p.name != "remoting.log.gz":
                assert why.get(str(p)) == PROXY_LOG, p
            elif p.name == "rocketmq-client.log.gz":
                assert read.get(str(p)) == "grpcClientLog", p
            elif where.startswith("py"):
                assert why.get(str(p)) == GRPC_PYTHON_LOG, p
            elif where.startswith("broker") and p.name == "broker.log.gz":
                assert read.get(str(p)) == "brokerLog", p
            else:
                assert why.get(str(p)) not in (PROXY_LOG, GRPC_JAVA_LOG, GRPC_PYTHON_LOG), p
