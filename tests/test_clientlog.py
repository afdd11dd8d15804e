"""``rocketlb_core.trace.clientlog``: the clients' ``rebalanced result changed`` lines, as
4.9.x and 5.x write them (the live tests read real ones); bad lines name file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlb_core.trace.clientlog import read_client_log
from rocketlb_core.trace.schema import TraceError

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
