"""``rocketlb doctor``'s inputs and outputs on small hand-made files: recognition by content,
ignored files, the error for a malformed known file (exit 2, file and line), ``--skip-bad``,
the JSON schema, and the checks the live consumer driver cannot inject (mixed strategies:
``live/java/Consume.java`` always uses AVG)."""

from __future__ import annotations

import json
from pathlib import Path

from rocketlb_core.doctor.inputs import sniff
from tests.test_fuzz import run_command


def _row(*cells: str) -> str:
    """A row as ``consumerProgress -s true`` pads it (4.9.x: ``%-64s  %-32s  %-4s ...``)."""
    widths = (64, 32, 4, 20, 20, 20, 20)
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False)) \
        + "  " + cells[-1] + "\n"


PROGRESS_4 = (
    _row("#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Client IP",
         "#Diff", "#LastTime")
    + _row("%RETRY%GID_x", "broker-a", "0", "0", "0", "N/A", "0", "N/A")
    + _row("TopicX", "broker-a", "0", "10", "10", "127.0.0.1", "0", "2026-11-25 21:50:00")
    + _row("TopicX", "broker-a", "1", "12", "{qid1}", "127.0.0.1", "0", "2026-11-25 21:50:00")
    + "\nConsume TPS: 0.00\nConsume Diff Total: 0\n")


def _rebalance(stamp: str, strategy: str, cid: str, queues: list[int], cids: int) -> str:
    qs = ", ".join(f"MessageQueue [topic=TopicX, brokerName=broker-a, queueId={q}]"
                   for q in queues)
    return (f"{stamp} INFO RocketmqClient - rebalanced result changed. "
            f"allocateMessageQueueStrategyName={strategy}, group=GID_x, topic=TopicX, "
            f"clientId={cid}, mqAllSize=4, cidAllSize={cids}, rebalanceResultSize={len(queues)}, "
            f"rebalanceResultSet=[{qs}]\n")


def test_files_are_recognised_by_content_and_unknown_ones_ignored(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(PROGRESS_4.format(qid1=12))
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    (tmp_path / "b").write_text(_rebalance("2026-11-25 21:50:00,000", "AVG", "10.0.0.1@a",
                                           [0, 1], 2))
    assert sniff(tmp_path / "a.log") == "consumerProgress"
    assert sniff(tmp_path / "notes.txt") is None
    status, out, err = run_command(["doctor", "--json", str(tmp_path)])
    assert status == 0, err
    doc = json.loads(out)
    assert sorted(doc) == ["findings", "format", "ignored", "inputs", "notes",
                           "skipped_bad_lines", "version"]
    assert {x["kind"] for x in doc["inputs"]} == {"consumerProgress", "clientLog"}
    assert doc["ignored"] == [{"file": str(tmp_path / "notes.txt"),
                               "reason": "not an input the doctor reads"}]


def test_a_malformed_known_file_is_exit_2_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "progress.txt"
    bad.write_text(PROGRESS_4.format(qid1="x1"))
    status, out, err = run_command(["doctor", str(tmp_path)])
    assert status == 2
    assert out == ""
    assert err.startswith(f"error: {bad}, row 4, field 'Consumer Offset'")
    assert len(err.strip().splitlines()) == 1
    status, out, err = run_command(["doctor", "--json", "--skip-bad", str(tmp_path)])
    assert status == 0, err
    assert json.loads(out)["skipped_bad_lines"] == 1


def test_a_missing_path_is_exit_2(tmp_path: Path) -> None:
    status, _, err = run_command(["doctor", str(tmp_path / "nope")])
    assert status == 2
    assert "no such file or folder" in err


def test_mixed_strategies_are_found_with_the_queues_they_leave(tmp_path: Path) -> None:
    """a uses AVG, b AVG_BY_CIRCLE, 4 queues: a takes 0 and 1 (AVG's first half), b takes 1
    and 3 (every second queue from index 1): queue 1 read twice, queue 2 by nobody."""
    (tmp_path / "a.log").write_text(
        _rebalance("2026-11-25 21:49:00,000", "AVG", "10.0.0.1@a", [0, 1, 2, 3], 1)
        + _rebalance("2026-11-25 21:50:00,000", "AVG", "10.0.0.1@a", [0, 1], 2))
    (tmp_path / "b.log").write_text(_rebalance("2026-11-25 21:50:00,100", "AVG_BY_CIRCLE",
                                               "10.0.0.2@b", [1, 3], 2))
    status, out, err = run_command(["doctor", "--json", str(tmp_path)])
    assert status == 3, err
    findings = json.loads(out)["findings"]
    assert [f["id"] for f in findings] == ["mixed-strategies"]
    f = findings[0]
    assert f["details"]["unconsumed_queues"] == ["broker-a/2"]
    assert f["details"]["consumed_twice_queues"] == ["broker-a/1"]
    assert f["before_after"]["after"] == 0


def test_two_members_claiming_one_queue_for_long_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(
        _rebalance("2026-11-25 21:50:00,000", "AVG", "10.0.0.1@a", [0, 1, 2], 2)
        + "2026-11-25 21:52:00,000 INFO RocketmqClient - still here\n")
    (tmp_path / "b.log").write_text(
        _rebalance("2026-11-25 21:50:00,000", "AVG", "10.0.0.2@b", [2, 3], 2)
        + "2026-11-25 21:52:00,000 INFO RocketmqClient - still here\n")
    status, out, err = run_command(["doctor", "--json", str(tmp_path)])
    assert status == 3, err
    findings = json.loads(out)["findings"]
    assert [f["id"] for f in findings] == ["doubly-owned-queues"]
    assert findings[0]["queues"] == ["broker-a/2"]


def test_a_known_bug_version_of_a_producer_is_reported(tmp_path: Path) -> None:
    (tmp_path / "p.log").write_text(
        "2026-11-25 21:50:00,000 INFO RocketmqClient - Created a new client Instance, "
        "InstanceIndex:0, ClientID:10.0.0.1@p, ClientConfig:ClientConfig [x=y], "
        "ClientVersion:V5_1_4, SerializerType:JSON\n"
        "2026-11-25 21:50:00,100 INFO RocketmqClient - the producer [PG] start OK. "
        "sendMessageWithVIPChannel=false\n")
    status, out, _ = run_command(["doctor", "--json", str(tmp_path)])
    assert status == 3
    f = json.loads(out)["findings"][0]
    assert f["id"] == "known-bug-permanent-avoidance"
    assert f["members"] == ["10.0.0.1@p"]
