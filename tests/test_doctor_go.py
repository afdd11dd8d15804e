"""``rocketlb doctor`` reads the Go client's log (issue 47, item 3): rocketmq-client-go's
``MessageQueue do balance done`` lines (``doctor.inputs.read_go_log``) join the Java client logs'
rebalances; each Go member's strategy, which its log does not name, is inferred from its logged
share; a group whose Java and Go members compute different shares is a ``mixed-clients``
finding, with the queues held twice and held by nobody computed from each member's own client.
Shown on the live recordings ``data/live/mixed-go-java-*`` (their logs, as an operator gathers
them), where the doctor's computed queues are those the live check saw at the end."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.doctor.inputs import read_inputs
from tests.test_fuzz import run_command

LINES = ["4", "5", "5.5"]


def _logs(tmp_path: Path, line: str) -> Path:
    folder = tmp_path / f"logs-{line}"
    shutil.copytree(data_path("live", f"mixed-go-java-{line}", "logs"), folder)
    return folder


@pytest.mark.parametrize("line", LINES)
def test_a_mixed_group_on_the_consistent_hash_is_found(tmp_path: Path, line: str) -> None:
    from rocketlb_core.trace.agreement import check_recording
    from rocketlb_core.trace.importer import import_recording

    status, out, err = run_command(["doctor", "--json", str(_logs(tmp_path, line))])
    assert status == 3, err
    doc = json.loads(out)
    mixed = [f for f in doc["findings"] if f["id"] == "mixed-clients"]
    assert [f["group"] for f in mixed] == ["GID_hash"]
    assert not [f for f in doc["findings"] if f["group"] == "GID_avg"]
    f = mixed[0]
    assert f["details"]["strategies"] == {"127.0.0.1@h1": "CONSISTENT_HASH",
                                          "@gh1": "GO_CONSISTENT_HASH"}
    # what the doctor computes from each member's own client is what the members held
    recording = data_path("live", f"mixed-go-java-{line}")
    import_recording(recording, tmp_path / "trace")
    end = check_recording(recording, tmp_path / "trace")["groups_at_end"]["GID_hash"]
    assert f["details"]["consumed_twice_queues"] == end["held_twice"]
    assert sorted(f["details"]["unconsumed_queues"]) == end["held_by_nobody"]
    assert f["before_after"]["after"] == 0
    assert f["book"] == "notebooks/05-allocation-strategies.ipynb#mixed-clients"
    assert f["questions"] == ["book/questions.md#asked-rocketmq-client-go-419"]


def test_the_go_members_strategy_is_inferred_from_its_share(tmp_path: Path) -> None:
    """The Go member of GID_avg logged AVG's share (the Go client's AllocateByAveragely), so
    the group's strategies agree and nothing is found there; its log is read as a Go client's."""
    inputs = read_inputs([_logs(tmp_path, "4")])
    go = [cl for cl in inputs.client_logs if cl.client == "go"]
    assert sorted(cl.client_ids[0] for cl in go) == ["@g1", "@gh1"]
    assert all(cl.rebalances >= 2 for cl in go)
    assert {k for cl in go for k in cl.last} >= {("GID_avg", "TopicLive"),
                                                  ("GID_hash", "TopicLive")}
    kinds = dict((Path(p).parent.name, k) for p, k in inputs.read)
    assert kinds["g1"] == kinds["gh1"] == "goClientLog"


GOOD = ('time="2026-11-28 18:05:03.120 +0000" level=info msg="MessageQueue do balance done" '
        'cidAllSize=2 clientID=@g1 consumerGroup=G mqAllSize=2 rebalanceResultSet="[MessageQueue '
        '[topic=T, brokerName=broker-a, queueId=1]]" rebalanceResultSize=1 topic=T\n')
QUIET = 'time="2026-11-28 18:05:03.120 +0000" level=info msg="push consumer started"\n'


def test_a_broken_go_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "go.log"
    path.write_text(QUIET + GOOD.replace("cidAllSize=2", "cidAllSize=lots"), encoding="utf-8")
    status, out, err = run_command(["doctor", str(tmp_path)])
    assert status == 2, out
    assert f"{path}, row 2" in err
    assert "cidAllSize" in err
    status, out, err = run_command(["doctor", "--skip-bad", str(tmp_path)])
    assert status in (0, 3), err
    assert "ignored" in out.splitlines()[0]       # no rebalance left: listed, not read


def test_a_go_log_without_a_rebalance_is_ignored_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "producer-go.log.gz"
    path.write_bytes(gzip.compress((QUIET * 5).encode()))
    status, out, err = run_command(["doctor", "--json", str(tmp_path)])
    assert status == 0, err
    doc = json.loads(out)
    assert doc["inputs"] == []
    assert doc["ignored"] == [{"file": str(path), "reason": "a Go client's log without a "
                               "rebalance (MessageQueue do balance done) the doctor reads"}]
