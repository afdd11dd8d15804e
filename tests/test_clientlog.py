"""``rocketlb_core.trace.clientlog``: the clients' ``rebalanced result changed`` lines, as
4.9.x and 5.x write them (the live tests read real ones); bad lines name file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rocketlb_core.trace.clientlog import read_client_log
from rocketlb_core.trace.schema import TraceError
from tests.test_fuzz import TRIED

LINE_4 = ("2026-11-23 22:36:13,847 INFO RocketmqClient - rebalanced result changed. "
          "allocateMessageQueueStrategyName=AVG, group=GID_live, topic=TopicLive, "
          "clientId=127.0.0.1@c1, mqAllSize=8, cidAllSize=2, rebalanceResultSize=2, "
          "rebalanceResultSet=[MessageQueue [topic=TopicLive, brokerName=broker-a, queueId=0], "
          "MessageQueue [topic=TopicLive, brokerName=broker-a, queueId=1]]")
LINE_5 = ("2026-11-24 06:36:13.847 INFO  [4242] [RebalanceService] "
          "[c.RebalanceImpl#rebalanceByTopic:330] - client rebalanced result changed. "
          "allocateMessageQueueStrategyName=AVG, "
          "group=GID_live, topic=TopicLive, clientId=127.0.0.1@c2, mqAllSize=8, cidAllSize=2, "
          "rebalanceResultSize=1, rebalanceResultSet=[MessageQueue [topic=TopicLive, "
          "brokerName=broker-b, queueId=3]]")
SERVER_SIDE = ("2026-11-24 06:36:14.000 INFO - broker rebalanced result changed. "
               "allocateMessageQueueStrategyName=AVG, group=G, topic=T, clientId=x@y, "
               "assignmentSet=[]")


def _log(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "rocketmq_client.log"
    path.write_text("\n".join(["2026-11-23 22:36:00,000 INFO other line", *lines]) + "\n",
                    encoding="utf-8")
    return path


def test_both_lines_formats_are_read_and_server_side_lines_are_not_client_records(
        tmp_path: Path) -> None:
    log = read_client_log(_log(tmp_path, LINE_4, SERVER_SIDE, LINE_5))
    assert [(r.line, r.client_id, r.cid_all_size, [q.short() for q in r.result])
            for r in log.rebalances] == [
        (2, "127.0.0.1@c1", 2, ["broker-a/0", "broker-a/1"]),
        (4, "127.0.0.1@c2", 2, ["broker-b/3"])]
    assert log.rebalances[0].stamp.startswith("2026-11-23 22:36:13,847")
    assert not log.bad


@pytest.mark.parametrize(("broken", "field"), [
    (LINE_4.replace("rebalanceResultSize=2", "rebalanceResultSize=3"), "rebalanceResultSet"),
    (LINE_4.replace("cidAllSize=2", "cidAllSize=two"), "cidAllSize"),
    (LINE_4.replace("mqAllSize=8", "mqAllSize=-8"), "mqAllSize"),
    (LINE_4.replace(", group=GID_live", ""), "group"),
    (LINE_4.replace("topic=TopicLive, brokerName=broker-a, queueId=1",
                    "topic=Other, brokerName=broker-a, queueId=1"), "rebalanceResultSet"),
    (LINE_4[: LINE_4.index("rebalanceResultSet")], "rebalanceResultSet"),   # truncated
])
def test_a_bad_line_names_file_line_and_field_or_is_counted(tmp_path: Path, broken: str,
                                                            field: str) -> None:
    path = _log(tmp_path, LINE_4, broken)
    with pytest.raises(TraceError) as err:
        read_client_log(path)
    assert (err.value.path, err.value.row, err.value.field) == (str(path), 3, field)
    skipped = read_client_log(path, skip_bad=True)
    assert len(skipped.rebalances) == 1
    assert len(skipped.bad) == 1
    assert f"{path}, row 3, field {field!r}" in skipped.bad[0]


def test_an_unreadable_log_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match=r"missing\.log: file not found"):
        read_client_log(tmp_path / "missing.log")


UNMATCHED_5 = ("2026-11-28 12:16:21.366 WARN  [31544] [NettyClientWorkerThread_3] "
               "[RocketmqRemoting#?:?] - receive response, cmd=RemotingCommand [code={code}, "
               "language=JAVA, version=479, opaque=27, flag(B)=1, remark=[TIMEOUT_CLEAN_QUEUE]"
               "broker busy, start flow control for a while, period in queue: 206ms, size of "
               "queue: 1, extFields=null, serializeTypeCurrentRPC=JSON], but not matched any "
               "request, address={addr}, channelId=bce378ed")
FAILURE_5 = ("2026-11-28 11:55:52.971 WARN  [17213] [send-0] [o.a.r.c.i.p.DefaultMQProducerImpl"
             "#?:?] - sendKernelImpl exception, resend at once, InvokeID: {invoke}, RT: 3035ms, "
             "Broker: MessageQueue [topic=TopicLive, brokerName=broker-a, queueId=0]")

HOSTILE_TEXT = st.one_of(st.text(max_size=30), st.integers().map(str), st.just("9" * 40),
                         st.sampled_from(["", "-", "2,", "0x10", "١٢", "1e3", " 2", "\u00a0"]))


@given(code=HOSTILE_TEXT, addr=HOSTILE_TEXT, invoke=HOSTILE_TEXT)
@example(code="2", addr="127.0.0.1:20931", invoke="-3761526116128116114")
@example(code="-2147483649", addr="x", invoke="9223372036854775808")
@settings(max_examples=300, derandomize=True, deadline=None, database=None)
def test_a_hostile_unmatched_reply_or_invoke_id_is_read_or_refused_naming_it(
        code: str, addr: str, invoke: str) -> None:
    """A client log's unmatched reply (``receive response ... but not matched any request,
    address=...``, which the oneway check reads: issue 45) and a failed attempt's InvokeID
    (the importer groups a threaded producer's failures by it) with hostile values: the reply
    is read (a code within Java's int, the address kept to ``MAX_ADDRESS`` characters) or is
    no record; the failure is read with its InvokeID within Java's long, or refused naming the
    file, the line and the field; never another exception."""
    import tempfile

    from rocketlb_core.trace.clientlog import MAX_ADDRESS

    lines = [UNMATCHED_5.format(code=code, addr=addr), FAILURE_5.format(invoke=invoke)]
    TRIED["client log: an unmatched reply and an InvokeID"] += 1
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        path = Path(tmp) / "rocketmq_client.log"
        path.write_text("\n".join(x.replace("\n", " ").replace("\r", " ") for x in lines)
                        + "\n", encoding="utf-8", errors="surrogatepass")
        refused: TraceError | None = None
        try:
            log = read_client_log(path)
        except TraceError as exc:
            refused = exc
    if refused is not None:
        TRIED["client log: an unmatched reply and an InvokeID: refused"] += 1
        assert (refused.row, refused.field) in ((1, "code"), (2, "InvokeID"), (2, "RT"),
                                                (2, "Broker")), str(refused)
        return
    for r in log.unmatched_replies:
        assert -(2**31) <= r.code < 2**31
        assert 0 < len(r.address) <= MAX_ADDRESS
    for f in log.send_failures:
        assert f.invoke_id is not None
        assert -(2**63) <= f.invoke_id < 2**63


LOST_4 = ("2026-11-29 06:29:18,486 WARN RocketmqClient - send trace data failed, the traceData "
          "is {data}")
PUB_FIELDS = ["Pub", "1795933757875", "DefaultRegion", "PG_p2_off", "TopicLive",
              "7F00000146BD60E53B93919679B30252,7F00000146BD60E53B93919679B30253", "null",
              "k1 will be isolated for 5 ms. rebalanced result changed.", "127.0.0.1:20911",
              "42", "3", "0", "7F000001000051CD00000000000186DF", "true"]


def test_a_batch_the_trace_dispatcher_failed_to_send_is_read_from_the_log(
        tmp_path: Path) -> None:
    """``send trace data failed, the traceData is <data>`` (fact
    trace.dispatcher-logs-a-failed-batch-whole): the batch's records are read from the line,
    whatever phrases the application's keys hold, and ``msgtrace.with_logged`` adds them to a
    dump without them, naming the log as their source; a record the dump holds is not taken
    twice."""
    from rocketlb_core.trace.msgtrace import MsgTrace, with_logged

    data = "\x01".join(PUB_FIELDS) + "\x02" + "\x01".join(
        [*PUB_FIELDS[:1], "1795933757900", *PUB_FIELDS[2:]]) + "\x02"
    path = _log(tmp_path, LOST_4.format(data=data),
                "org.apache.rocketmq.client.exception.MQBrokerException: CODE: 13  DESC: the "
                "message is illegal")
    log = read_client_log(path)
    assert [(x.line, x.stamp) for x in log.lost_traces] == [(2, "2026-11-29 06:29:18,486")]
    assert not log.isolations
    assert not log.rebalances
    assert not log.send_failures
    trace = with_logged(MsgTrace("dump.jsonl"), {str(path): log})
    assert trace.from_logs == 2
    assert [(p.time_ms, p.cost_ms, p.source, p.line) for p in trace.pubs] == [
        (1795933757875, 3, str(path), 2), (1795933757900, 3, str(path), 2)]
    again = with_logged(trace, {str(path): log})
    assert len(again.pubs) == 2


@given(stamp=HOSTILE_TEXT, cost=HOSTILE_TEXT, success=HOSTILE_TEXT, group=HOSTILE_TEXT,
       cut=st.integers(0, 14))
@example(stamp="1795933757875", cost="3", success="true", group="PG", cut=14)
@example(stamp="-1", cost="3", success="true", group="PG", cut=14)
@example(stamp="1795933757875", cost="3", success="true", group="PG", cut=5)
@settings(max_examples=300, derandomize=True, deadline=None, database=None)
def test_a_hostile_batch_in_a_lost_trace_line_is_read_or_refused_naming_it(
        stamp: str, cost: str, success: str, group: str, cut: int) -> None:
    """A lost trace batch (``send trace data failed``) with hostile fields or cut short: its
    records are read within the trace reader's ranges, or refused naming the log, its line and
    the field (counted in ``bad`` with ``skip_bad``); never another exception."""
    import tempfile

    from rocketlb_core.limits import MAX_EPOCH_MS, MAX_LATENCY_MS
    from rocketlb_core.trace.msgtrace import MsgTrace, with_logged

    fields = [*PUB_FIELDS]
    fields[1], fields[10], fields[13], fields[3] = stamp, cost, success, group
    data = "\x01".join(fields[:cut or len(fields)]) + "\x02"
    TRIED["client log: a lost trace batch"] += 1
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        path = Path(tmp) / "rocketmq_client.log"
        path.write_text(LOST_4.format(data=data.replace("\n", " ").replace("\r", " ")) + "\n",
                        encoding="utf-8", errors="surrogatepass")
        log = read_client_log(path)
        refused: TraceError | None = None
        try:
            trace = with_logged(MsgTrace("dump.jsonl"), {str(path): log})
        except TraceError as exc:
            refused = exc
    if refused is not None:
        TRIED["client log: a lost trace batch: refused"] += 1
        assert (refused.path, refused.row) == (str(path), 1), str(refused)
        assert refused.field is not None
        assert refused.field.startswith(("Pub", "type"))
        skipped = with_logged(MsgTrace("dump.jsonl"), {str(path): log}, skip_bad=True)
        assert skipped.bad == 1
        assert not skipped.pubs
        return
    for p in trace.pubs:
        assert 0 <= p.time_ms <= MAX_EPOCH_MS
        assert 0 <= p.cost_ms <= MAX_LATENCY_MS
        assert p.source == str(path)


ROUTE_4 = ("2026-11-29 07:08:39,044 INFO RocketmqClient - the topic[TopicSlaveRead] route info "
           "changed, old[TopicRouteData [...]] ,new[TopicRouteData [orderTopicConf=null, "
           "queueDatas=[QueueData [brokerName=broker-b, readQueueNums=2, writeQueueNums=2, "
           "perm=6, topicSysFlag=0], QueueData [brokerName=broker-a, readQueueNums=2, "
           "writeQueueNums=2, perm=6, topicSysFlag=0]], brokerDatas=[BrokerData "
           "[brokerName=broker-b, brokerAddrs={0=127.0.0.1:20921}], BrokerData "
           "[brokerName=broker-a, brokerAddrs={1=127.0.0.1:20916}]], filterServerTable={}]]")


def test_a_route_that_lists_a_slave_without_its_master_names_the_broker(
        tmp_path: Path) -> None:
    """A master killed beside its slave (live on 4.9.8, ``data/live/slave-reads-4``): the name
    server keeps the broker's queue datas while the slave is registered, the route lists only
    the slave's address, and a producer's list skips the broker (spec 1.3); the route change
    names it, and the model's publish list has broker-b's queues alone."""
    from rocketlb_core.model import BrokerData, TopicRoute, publish_queues, subscribe_queues

    (r,) = read_client_log(_log(tmp_path, ROUTE_4)).route_changes
    assert r.masterless == ("broker-a",)
    assert [q.broker_name for q in r.queue_datas] == ["broker-b", "broker-a"]
    full = TopicRoute(r.queue_datas, (BrokerData("broker-a", {0: "a", 1: "s"}),
                                      BrokerData("broker-b", {0: "b"})))
    gone = full.without_masters(r.masterless)
    assert [q.short() for q in publish_queues("T", gone)] == ["broker-b/0", "broker-b/1"]
    assert len(publish_queues("T", full)) == 4
    assert subscribe_queues("T", gone) == subscribe_queues("T", full)   # still readable
    both = ROUTE_4.replace("brokerAddrs={1=127.0.0.1:20916}",
                           "brokerAddrs={0=127.0.0.1:20911, 1=127.0.0.1:20916}")
    (r,) = read_client_log(_log(tmp_path, both)).route_changes
    assert r.masterless == ()
