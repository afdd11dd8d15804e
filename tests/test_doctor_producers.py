"""``rocketlb doctor``'s producer-side findings and ``--html`` (issue 35, items 2 and 3).

On the real recordings of ``data/live``: the producer-outage days (4.9.8 and 5.3.3 producers,
``sendLatencyFaultEnable`` off and on, broker-a paused then killed) give the isolation the core
computes for each client line, checked against the message trace; the clean days and the
``mqadmin`` captures give no producer finding. The checks no recording injects (a broker error
code, queue-0 skew, a rebalance storm, a write-only or read-only broker) run on small hand-made
files in the real formats."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core import data_path
from rocketlb_core.doctor.html import GENERATOR
from rocketlb_core.doctor.producers import SKEW_MIN_MESSAGES, STORM_CHANGES
from tests.test_doctor_inputs import _rebalance, _row
from tests.test_fuzz import run_command

PRODUCER_IDS = {"broker-isolated", "failing-broker-not-avoided", "queue-0-skew",
                "rebalance-storm", "broker-write-only", "broker-read-only"}


def _doc(*paths: Path | str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    status, out, err = run_command(["doctor", "--json", *extra, *map(str, paths)])
    assert status in (0, 3), err
    doc: dict[str, Any] = json.loads(out)
    assert (status == 3) == bool(doc["findings"])
    return doc


def _by_id(doc: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["id"] == kind]


# ------------------------------------------------------------------ the real recordings

def test_a_4x_timeout_isolates_broker_a_for_600_s_and_the_trace_agrees() -> None:
    doc = _doc(data_path("live", "producer-outage-4"))
    [iso] = _by_id(doc, "broker-isolated")
    assert iso["members"] == ["127.0.0.1@p-on"]
    assert iso["severity"] == "warning"
    d = iso["details"]
    assert (d["broker"], d["broker_addr"], d["line"]) == ("broker-a", "127.0.0.1:20911", "4.9.8")
    [w] = d["windows"]
    assert w["duration_ms"] == 600_000                  # isolation latency 30000 -> 600 s
    assert w["from"] == "2026-11-24 01:47:43.512Z"
    assert w["why"] == "timeout (RemotingTimeoutException) after 3001 ms"
    assert "The message trace agrees" in iso["explanation"]
    assert [(e["line"], "sendKernelImpl" in e["text"]) for e in iso["evidence"]] == \
        [(102, True), (103, False)]
    assert iso["evidence"][0]["file"].endswith("p-on/rocketmq_client.log.gz")
    # with the message trace the day is replayed (tests/test_doctor_replayed.py); the logs
    # alone give the core's own computation: 600 s on 4.9.8's table, 10 s on 5.3.3's
    assert iso["before_after"]["source"] == "replay of the recorded producer day"
    [alone] = _by_id(_doc(data_path("live", "producer-outage-4", "logs")), "broker-isolated")
    ba = alone["before_after"]
    assert ba["source"] == "core fault strategy"
    assert ba["replay"] is None
    assert ba["replay_unavailable"] == "no message-trace dump among the inputs"
    assert (ba["metric"], ba["before"], ba["after"]) == ("seconds avoided", 600, 10)
    assert iso["book"].endswith(
        "09-troubleshooting.ipynb#a-broker-avoided-for-ten-minutes-after-one-slow-reply")


def test_log_zone_moves_a_4x_log_and_a_wrong_zone_is_caught_by_the_trace() -> None:
    """A 4.x client writes its JVM's local time; the doctor reads UTC unless told. The
    recording's host ran UTC: named so, nothing changes; named +08:00, every window moves
    8 h earlier, outside the trace's sends, and the finding says the zone is wrong."""
    rec = data_path("live", "producer-outage-4")
    [base] = _by_id(_doc(rec), "broker-isolated")
    [utc] = _by_id(_doc(rec, extra=("--log-zone", "UTC")), "broker-isolated")
    [east] = _by_id(_doc(rec, extra=("--log-zone", "+08:00")), "broker-isolated")
    assert base["details"]["log_times"] == "UTC (assumed: the JVM's zone)"
    assert utc["details"]["log_times"] == "UTC+00:00 (--log-zone)"
    assert east["details"]["log_times"] == "UTC+08:00 (--log-zone)"
    assert utc["details"]["windows"] == base["details"]["windows"]
    shift = [e["start_ms"] - b["start_ms"] for b, e in
             zip(base["details"]["windows"], east["details"]["windows"], strict=True)]
    assert shift == [-8 * 3600 * 1000]
    assert "zone_mismatch" not in base["details"]
    assert east["details"]["zone_mismatch"] is True
    assert "cannot confirm" in east["explanation"]
    assert "The message trace agrees" in base["explanation"]
    # 5.x clients write GMT+8 whatever the host: --log-zone does not touch them
    rec5 = data_path("live", "producer-outage-5")
    w5 = [f["details"].get("windows") for f in _by_id(_doc(rec5), "broker-isolated")]
    assert w5 == [f["details"].get("windows") for f in
                  _by_id(_doc(rec5, extra=("--log-zone=-05:30",)), "broker-isolated")]
    assert w5


def test_a_5_1_x_log_is_read_in_gmt8_though_its_fault_tables_are_4x(tmp_path: Path) -> None:
    """5.0.0 to 5.1.3 keep 4.x's fault tables, but from 5.1.0 the client logs through
    rmq.client.logback.xml in GMT+8 (fact client.log-time-zone-gmt8-since-5.1.0): the zone goes
    by the stamps' form, not by the tables. The 5.3.3 recording's producer logs relabelled
    5.1.3 are judged on 4.9.7's tables (so its 10 s isolations look like a broker not avoided)
    with their times read in GMT+8, and --log-zone (the JVM's zone, for logs up to 5.0.0)
    moves nothing."""
    import gzip
    import shutil

    logs = tmp_path / "logs"
    shutil.copytree(data_path("live", "producer-outage-5", "logs"), logs)
    for log in logs.glob("p-*/rocketmq_client.log.gz"):
        text = gzip.decompress(log.read_bytes()).decode("utf-8")
        assert "V5_3_3" in text
        log.write_bytes(gzip.compress(text.replace("V5_3_3", "V5_1_3").encode("utf-8")))
    doc = _doc(logs)
    timed = [f["details"] for f in doc["findings"] if "log_times" in f["details"]]
    assert timed
    assert {(d["line"], d["log_times"]) for d in timed} == {
        ("4.9.7", "GMT+8 (5.1.0+ log format)")}
    assert _doc(logs, extra=("--log-zone=-05:30",))["findings"] == doc["findings"]
    # a 5.0.0 log writes ",SSS" in its JVM's zone: --log-zone applies to it
    for log in logs.glob("p-*/rocketmq_client.log.gz"):
        text = gzip.decompress(log.read_bytes()).decode("utf-8")
        text = re.sub(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.", r"\1,", text, flags=re.M)
        log.write_bytes(gzip.compress(text.replace("V5_1_3", "V5_0_0").encode("utf-8")))
    old = [f["details"]["log_times"] for f in _doc(logs)["findings"]
           if "log_times" in f["details"]]
    assert set(old) == {"UTC (assumed: the JVM's zone)"}


@pytest.mark.parametrize("zone", ["bogus", "+15:00", "+08:61", "0800"])
def test_a_bad_log_zone_is_one_clear_line_and_exit_2(zone: str) -> None:
    status, out, err = run_command(["doctor", "--log-zone", zone,
                                    str(data_path("live", "producer-outage-4"))])
    assert status == 2
    assert out == ""
    assert err.strip().count("\n") == 0
    assert "--log-zone" in err
    assert "Traceback" not in err


def test_a_4x_producer_with_the_switch_off_kept_sending_to_the_failing_broker() -> None:
    doc = _doc(data_path("live", "producer-outage-4"))
    [off] = _by_id(doc, "failing-broker-not-avoided")
    assert off["members"] == ["127.0.0.1@p-off"]
    assert off["details"]["failed_attempts"] == 42
    assert "sendLatencyFaultEnable is off" in off["explanation"]
    assert off["before_after"]["source"] == "replay of the recorded producer day"
    [alone] = _by_id(_doc(data_path("live", "producer-outage-4", "logs")),
                     "failing-broker-not-avoided")
    ba = alone["before_after"]
    assert ba["source"] == "core fault strategy"
    assert (ba["before"], ba["after"]) == (42, 1)       # one timeout, then 600 s elsewhere
    assert off["book"].endswith("#a-simulated-outage-with-the-switch-off-and-on")


def test_5x_isolations_last_10_s_and_end_before_the_next_failure() -> None:
    doc = _doc(data_path("live", "producer-outage-5"))
    [iso] = _by_id(doc, "broker-isolated")
    assert iso["severity"] == "info"
    d = iso["details"]
    assert d["line"] == "5.3.3"
    assert d["log_times"].startswith("GMT+8")
    assert [w["duration_ms"] for w in d["windows"]] == [10_000, 10_000]
    # 09:39:08.752 GMT+8 is 01:39:08.752 UTC; the trace's stores resume after it
    assert d["windows"][0]["from"] == "2026-11-24 01:39:08.752Z"
    assert "The message trace agrees" in iso["explanation"]
    [off] = _by_id(doc, "failing-broker-not-avoided")
    assert off["members"] == ["127.0.0.1@p-off"]
    assert off["before_after"]["source"] == "replay of the recorded producer day"
    [alone] = _by_id(_doc(data_path("live", "producer-outage-5", "logs")),
                     "failing-broker-not-avoided")
    assert (alone["before_after"]["before"], alone["before_after"]["after"]) == (39, 2)
    assert alone["before_after"]["source"] == "core fault strategy"


@pytest.mark.parametrize("rec", ["membership-day-4", "membership-day-5", "doctor/capture-4",
                                 "doctor/capture-5"])
def test_recordings_without_a_producer_problem_give_no_producer_finding(rec: str) -> None:
    doc = _doc(data_path("live") / rec)
    assert not {f["id"] for f in doc["findings"]} & PRODUCER_IDS


# ------------------------------------------------------------------ hand-made, real formats

FAIL_4 = ("{stamp} WARN RocketmqClient - sendKernelImpl exception, resend at once, InvokeID: 1, "
          "RT: {rt}ms, Broker: MessageQueue [topic=TopicX, brokerName=broker-b, queueId=1]\n")
START = ("2026-11-25 10:00:00,000 INFO RocketmqClient - created a new client Instance, "
         "InstanceIndex:0, ClientID:10.0.0.9@p, ClientConfig [], ClientVersion:V4_9_8, "
         "SerializerType:JSON\n2026-11-25 10:00:00,100 INFO RocketmqClient - the producer "
         "[PG_x] start OK\n")


def test_a_broker_error_code_is_the_reason_and_isolates_on_4x(tmp_path: Path) -> None:
    (tmp_path / "client.log").write_text(
        START + FAIL_4.format(stamp="2026-11-25 10:00:05,000", rt=12)
        + "org.apache.rocketmq.client.exception.MQBrokerException: CODE: 2  DESC: "
          "[TIMEOUT_CLEAN_QUEUE]broker busy\n")
    [iso] = _by_id(_doc(tmp_path), "broker-isolated")
    [w] = iso["details"]["windows"]
    assert w["why"] == "broker error code 2 (SYSTEM_BUSY)"
    assert w["duration_ms"] == 600_000
    assert iso["members"] == ["10.0.0.9@p"]


def test_repeated_failures_inside_the_window_mean_the_switch_was_off(tmp_path: Path) -> None:
    lines = [FAIL_4.format(stamp=f"2026-11-25 10:00:{s:02d},000", rt=3000)
             + "org.apache.rocketmq.remoting.exception.RemotingTimeoutException: timeout\n"
             for s in (5, 15, 25)]
    (tmp_path / "client.log").write_text(START + "".join(lines))
    doc = _doc(tmp_path)
    assert not _by_id(doc, "broker-isolated")
    [off] = _by_id(doc, "failing-broker-not-avoided")
    assert (off["before_after"]["before"], off["before_after"]["after"]) == (3, 1)
    assert off["before_after"]["source"] == "core fault strategy"


def _progress(offsets: list[int]) -> str:
    head = _row("#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset",
                "#Client IP", "#Diff", "#LastTime")
    rows = [_row("%RETRY%GID_x", "broker-a", "0", "0", "0", "N/A", "0", "N/A")]
    rows += [_row("TopicX", "broker-a", str(q), str(o), str(o), "10.0.0.1", "0",
                  "2026-11-25 21:50:00") for q, o in enumerate(offsets)]
    return head + "".join(rows)


@pytest.mark.parametrize(("offsets", "skewed"), [
    ([700, 100, 100, 100], True),                       # 70 %: #5672's pattern
    ([250, 250, 250, 250], False),
    ([310, 230, 230, 230], False),                      # 31 %: below 2 x 25 %
    ([70, 10, 10, 10], False),                          # too few messages to judge
])
def test_queue_0_skew_from_broker_offsets(tmp_path: Path, offsets: list[int],
                                          skewed: bool) -> None:
    (tmp_path / "progress.txt").write_text(_progress(offsets))
    found = _by_id(_doc(tmp_path), "queue-0-skew")
    assert bool(found) == skewed
    if skewed:
        assert sum(offsets) >= SKEW_MIN_MESSAGES
        f = found[0]
        assert f["queues"] == ["broker-a/0"]
        assert f["details"]["brokers"]["broker-a"]["queue0_share"] == 0.7
        assert (f["before_after"]["before"], f["before_after"]["after"]) == (0.7, 0.25)
        assert f["before_after"]["source"] == "core fault strategy"     # no producer day
        assert "threshold" in f["details"]


@pytest.mark.parametrize(("changes", "storm"), [(STORM_CHANGES + 2, True),
                                                 (STORM_CHANGES, False)])
def test_a_rebalance_storm_is_over_the_threshold_per_minute(tmp_path: Path, changes: int,
                                                            storm: bool) -> None:
    log = "".join(_rebalance(f"2026-11-25 21:50:{4 * i:02d},000", "AVG", "10.0.0.1@a",
                             [i % 4], 4) for i in range(changes))
    (tmp_path / "client.log").write_text(log)
    found = _by_id(_doc(tmp_path), "rebalance-storm")
    assert bool(found) == storm
    if storm:
        assert found[0]["members"] == ["10.0.0.1@a"]
        assert found[0]["details"]["members"]["10.0.0.1@a"]["max_changes_per_minute"] \
            == changes


def test_a_log_out_of_time_order_is_no_storm(tmp_path: Path) -> None:
    """Rotated logs concatenated newest first: changes 70 s apart in time but out of order in
    the file are no storm (the window once counted them as 13 a minute)."""
    stamps = [f"2026-11-25 {21 + (70 * i) // 3600:02d}:{(70 * i) % 3600 // 60:02d}:"
              f"{(70 * i) % 60:02d},000" for i in range(26)]
    order = stamps[13:] + stamps[:13]                   # the newer file first
    (tmp_path / "client.log").write_text("".join(
        _rebalance(st, "AVG", "10.0.0.1@a", [i % 4], 4) for i, st in enumerate(order)))
    assert _by_id(_doc(tmp_path), "rebalance-storm") == []


def test_a_storm_found_out_of_order_quotes_its_own_lines(tmp_path: Path) -> None:
    """A real storm (14 changes in 56 s) in the older of two concatenated files: found, and
    its evidence is lines of the storm, whatever came before them in the file."""
    calm = [f"2026-11-25 22:{m:02d}:00,000" for m in range(0, 45, 3)]           # 15, 3 min apart
    storm = [f"2026-11-25 21:50:{4 * i:02d},000" for i in range(STORM_CHANGES + 4)]
    lines = [_rebalance(st, "AVG", "10.0.0.1@a", [i % 4], 4)
             for i, st in enumerate(calm + storm)]
    (tmp_path / "client.log").write_text("".join(lines))
    [f] = _by_id(_doc(tmp_path), "rebalance-storm")
    assert f["details"]["members"]["10.0.0.1@a"]["max_changes_per_minute"] == STORM_CHANGES + 4
    assert f["evidence"]
    assert all("21:50:" in e["text"] for e in f["evidence"]), f["evidence"]


ROUTE = """{{
\t"brokerDatas":[{{"brokerAddrs":{{0:"10.0.0.1:10911"}},"brokerName":"broker-a","cluster":"c"}},
\t\t{{"brokerAddrs":{{0:"10.0.0.2:10911"}},"brokerName":"broker-b","cluster":"c"}}],
\t"filterServerTable":{{}},
\t"queueDatas":[{{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,
\t\t"writeQueueNums":4}},{{"brokerName":"broker-b","perm":{perm},"readQueueNums":4,
\t\t"topicSysFlag":0,"writeQueueNums":4}}]
}}
"""


def test_a_write_only_broker_hides_its_queues_from_consumers(tmp_path: Path) -> None:
    (tmp_path / "topicRoute-TopicX.txt").write_text(ROUTE.format(perm=2))
    (tmp_path / "progress.txt").write_text(_progress([5, 5, 5, 5]))
    [f] = _by_id(_doc(tmp_path), "broker-write-only")
    assert f["severity"] == "critical"
    assert f["queues"] == [f"broker-b/{i}" for i in range(4)]
    assert (f["before_after"]["before"], f["before_after"]["after"]) == (4, 8)
    assert f["book"].endswith("01-the-cluster.ipynb#one-route-two-views")


def test_a_read_only_broker_takes_no_sends(tmp_path: Path) -> None:
    (tmp_path / "topicRoute-TopicX.txt").write_text(ROUTE.format(perm=4))
    (tmp_path / "progress.txt").write_text(_progress([5, 5, 5, 5]))
    doc = _doc(tmp_path)
    assert not _by_id(doc, "broker-write-only")
    [f] = _by_id(doc, "broker-read-only")
    assert f["severity"] == "info"
    assert (f["before_after"]["before"], f["before_after"]["after"]) == (4, 8)


def test_a_read_write_route_gives_no_permission_finding(tmp_path: Path) -> None:
    (tmp_path / "topicRoute-TopicX.txt").write_text(ROUTE.format(perm=6))
    (tmp_path / "progress.txt").write_text(_progress([5, 5, 5, 5]))
    assert _doc(tmp_path)["findings"] == []


# ------------------------------------------------------------------ --html

_EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//|@import|url\(|<script|<link""",
                       re.IGNORECASE)


def test_html_page_is_written_with_the_findings_and_charts_and_loads_nothing(
        tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    args = ["doctor", "--html", str(page), str(data_path("live", "producer-outage-4")),
            str(data_path("live") / "doctor" / "capture-4")]
    status, _, err = run_command(args)
    assert status == 3, err
    text = page.read_text()
    assert text.startswith(GENERATOR)
    for kind in ("broker-isolated", "failing-broker-not-avoided", "duplicate-client-id"):
        assert kind in text
    for chart in ('id="ownership"', 'id="lag"', 'id="isolation"'):
        i = text.index(chart)
        assert "<svg" in text[i:i + 5000], chart
    assert "isolated for 600 s" in text
    assert not _EXTERNAL.search(text), _EXTERNAL.search(text)
    assert not re.search(r"https?://", text)
    assert oct(page.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report.html")]
    # a page rocketlb wrote is replaced
    status, _, err = run_command(["doctor", "--html", str(page),
                                  str(data_path("live", "producer-outage-5"))])
    assert status == 3, err
    assert "2026-11-24 01:39:08" in page.read_text()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("what", ["foreign file", "folder", "link"])
def test_html_refuses_what_rocketlb_did_not_write(tmp_path: Path, what: str) -> None:
    page = tmp_path / "report.html"
    if what == "foreign file":
        page.write_text("<html>my notes</html>")
    elif what == "folder":
        page.mkdir()
    else:
        (tmp_path / "target.html").write_text(GENERATOR + "\n")
        page.symlink_to(tmp_path / "target.html")
    status, out, err = run_command(["doctor", "--html", str(page),
                                    str(data_path("live", "producer-outage-4"))])
    assert status == 2
    assert out == ""
    assert err.startswith("error: ")
    assert str(page) in err
    assert len(err.strip().splitlines()) == 1
    if what == "foreign file":
        assert page.read_text() == "<html>my notes</html>"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report.html")]


def test_the_trace_batches_a_client_failed_to_send_count_as_stores(tmp_path: Path) -> None:
    """A batch producer whose trace dispatcher lost most of its records (the broker refused
    trace messages whose keys passed 32,767 characters: ``tests/fixtures/live/
    trace-lost-batches-4``): its log holds each lost batch whole, and the doctor counts those
    stores with the dump's, so a broker's stores inside a failure window are not undercounted.
    Without a dump, the log's batches alone are not taken for the trace."""
    import dataclasses

    from rocketlb_core.doctor import producers
    from rocketlb_core.doctor.inputs import read_inputs

    fixture = Path(__file__).parent / "fixtures" / "live" / "trace-lost-batches-4"
    shutil.copyfile(fixture / "msgtrace.jsonl.gz", tmp_path / "msgtrace.jsonl.gz")
    (tmp_path / "logs").mkdir()
    log = fixture / "logs" / "p2-off" / "rocketmq_client.log.gz"
    shutil.copyfile(log, tmp_path / "logs" / log.name)
    inputs = read_inputs([tmp_path])
    (cl,) = inputs.client_logs
    dump = len(inputs.traces[0].published)
    assert cl.lost_traces >= 10
    assert len(inputs.published()) == dump + len(cl.lost_published) > 2 * dump
    mine = {v.broker: v.mine for vs in producers.judge(inputs).values() for v in vs}
    without = dataclasses.replace(inputs, client_logs=[dataclasses.replace(
        cl, lost_published=[])])
    fewer = {v.broker: v.mine for vs in producers.judge(without).values() for v in vs}
    assert set(mine) == set(fewer) == {"broker-a", "broker-b", "broker-c"}
    assert all(mine[b] > fewer[b] for b in mine)
    assert read_inputs([tmp_path / "logs"]).published() == []
