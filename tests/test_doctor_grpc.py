"""``rocketlb doctor`` reads the gRPC Java client's log (issue 47, item 3): its clients, a push
consumer's group and its assignments (``doctor.inputs.read_grpc_log``); a group with remoting
members and gRPC push consumers of one topic is a ``grpc-beside-remoting`` finding
(``doctor.grpcgroups``). Shown on the live recordings ``data/live/grpc/grpc-remoting-mixed-*``
(their logs, as an operator gathers them), where the check of the same recording saw both sides
consume the same messages; and on ``grpc-clients-*``, where the gRPC groups have no remoting
member and nothing is found."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.doctor.inputs import read_inputs
from tests.test_fuzz import run_command


@pytest.mark.parametrize("line", ["5", "5.5"])
def test_a_group_of_remoting_and_grpc_consumers_is_found(tmp_path: Path, line: str) -> None:
    folder = tmp_path / "logs"
    shutil.copytree(data_path("live", "grpc", f"grpc-remoting-mixed-{line}", "logs"), folder)
    status, out, err = run_command(["doctor", "--json", str(folder)])
    assert status == 3, err
    doc = json.loads(out)
    (f,) = [f for f in doc["findings"] if f["id"] == "grpc-beside-remoting"]
    assert (f["group"], f["topic"], f["severity"]) == ("GID_mix", "TopicMix", "critical")
    d = f["details"]
    assert d["remoting_members"] == ["127.0.0.1@r1", "127.0.0.1@r2"]
    (grpc_id,) = d["grpc_members"]
    assert d["popped_brokers"] == ["broker-a", "broker-b"]
    # the remoting members' last shares cover every queue: each is popped by p1 as well
    assert f["queues"] == [f"broker-{b}/{q}" for b in "ab" for q in range(4)]
    # the evidence: p1's assignment line and each remoting member's last rebalance
    assert len(f["evidence"]) == 3
    assert "Assignments of topic=TopicMix" in f["evidence"][0]["text"]
    assert grpc_id in f["members"]
    assert f["book"] == "notebooks/11-rocketmq5-clients.ipynb#grpc-in-remoting-group"
    kinds = {Path(x["file"]).parent.name: x["kind"] for x in doc["inputs"]}
    assert kinds["p1"] == "grpcClientLog"
    assert kinds["r1"] == kinds["r2"] == "clientLog"


def test_grpc_groups_without_remoting_members_are_not_found() -> None:
    for line in ("5", "5.5"):
        inputs = read_inputs([data_path("live", "grpc", f"grpc-clients-{line}", "logs")])
        push = [g for g in inputs.grpc_logs if "push consumer" in g.roles.values()]
        assert len(push) == 2
        assert {grp for g in push for grp, _ in g.groups.values()} == {"GID_push"}
        assert all(a.queues in ((("broker-b", -1), ("broker-a", -1)),
                                (("broker-a", -1), ("broker-b", -1)))
                   for g in push for a in g.assignments.values())
        _, out, err = run_command(["doctor", "--json", str(
            data_path("live", "grpc", f"grpc-clients-{line}", "logs"))])
        assert not [f for f in json.loads(out)["findings"]
                    if f["id"] == "grpc-beside-remoting"], err


def test_a_bad_assignment_names_the_file_and_line(tmp_path: Path) -> None:
    head = ("2026-11-29 04:53:54.920 INFO  [16553] [RocketmqClientAsyncWorker-0-4] "
            "[o.a.r.c.j.i.c.PushConsumerImpl#?:?] - ")
    log = tmp_path / "rocketmq-client.log"
    log.write_text(
        head + "Create standard consume service, consumerGroup=G, clientId=vm@1@0@x\n"
        + head + "Assignments of topic=T has changed, null => Assignments{assignmentList=["
        "Assignment{messageQueue=broker-a.T.minus-one}]}, clientId=vm@1@0@x\n")
    status, out, err = run_command(["doctor", str(tmp_path)])
    assert status == 2, out
    assert f"{log}, row 2" in err
    assert "assignmentList" in err
    status, out, err = run_command(["doctor", "--json", "--skip-bad", str(tmp_path)])
    assert status == 0, err
    assert json.loads(out)["skipped_bad_lines"] == 1


def _stamped_after(src: Path, dest: Path, stamp: str) -> int:
    """``src``'s lines stamped after ``stamp`` written to ``dest`` (gzip); how many rebalances
    of TopicMix they hold."""
    lines = [x for x in gzip.decompress(src.read_bytes()).decode().splitlines(keepends=True)
             if x[:23] > stamp]
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(gzip.compress("".join(lines).encode()))
    return sum("rebalanced result changed" in x and "topic=TopicMix" in x for x in lines)


def test_a_cut_over_is_not_a_finding(tmp_path: Path) -> None:
    """The gRPC consumer's whole log, and the remoting members' lines from after it shut down
    (r2 rebalanced then): the two kinds never ran at once, so nothing is found."""
    logs = data_path("live", "grpc", "grpc-remoting-mixed-5", "logs")
    shutil.copytree(logs / "p1", tmp_path / "p1")
    stop = next(x for x in gzip.decompress((logs / "p1" / "rocketmq-client.log.gz")
                                           .read_bytes()).decode().splitlines()
                if "Begin to shutdown the rocketmq push consumer" in x)[:23]
    later = sum(_stamped_after(logs / r / "rocketmq_client.log.gz",
                               tmp_path / r / "rocketmq_client.log.gz", stop)
                for r in ("r1", "r2"))
    assert later >= 1                            # a remoting rebalance after the cut-over
    _, out, err = run_command(["doctor", "--json", str(tmp_path)])
    doc = json.loads(out)
    assert "grpcClientLog" in {x["kind"] for x in doc["inputs"]}, err
    assert not [f for f in doc["findings"] if f["id"] == "grpc-beside-remoting"]


def test_an_orderly_assignment_and_missing_logs_are_said(tmp_path: Path) -> None:
    """An orderly group's assignment (every read queue, no -1) is named as such; with one
    remoting member's log of two, the member count it logged while p1 ran (up to 2) exceeds the
    logs given, and the finding says why that may be."""
    logs = data_path("live", "grpc", "grpc-remoting-mixed-5", "logs")
    shutil.copytree(logs / "r1", tmp_path / "r1")
    text = gzip.decompress((logs / "p1" / "rocketmq-client.log.gz").read_bytes()).decode()
    orderly = ", ".join(f"Assignment{{messageQueue=broker-{b}.TopicMix.{q}}}"
                        for b in "ab" for q in range(4))
    text = re.sub(r"assignmentList=\[[^\]]*\]", f"assignmentList=[{orderly}]", text)
    (tmp_path / "p1").mkdir()
    (tmp_path / "p1" / "rocketmq-client.log").write_text(text)
    _, out, _ = run_command(["doctor", "--json", str(tmp_path)])
    (f,) = [f for f in json.loads(out)["findings"] if f["id"] == "grpc-beside-remoting"]
    assert f["details"]["orderly"] is True
    assert f["details"]["popped_brokers"] == []
    assert "every read queue of the topic (an orderly group)" in f["explanation"]
    assert f["details"]["remoting_members_counted"][-1] == 2
    assert "either some members' logs are missing" in f["explanation"]
