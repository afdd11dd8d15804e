"""Remoting and gRPC consumers in one group, live (issue 47, item 2): upstream's Java remoting
push consumers r1 and r2 and rocketmq-client-java's gRPC push consumer p1 (through a
cluster-mode Proxy) in ``GID_mix`` on one topic (``data/scenarios/live/
grpc-remoting-mixed.toml``), recorded on lines 5 and 5.5 (the Proxy came with 5.0; line 4 has
none) as ``data/live/grpc/grpc-remoting-mixed-*`` and checked offline here.

Each side is explained by its own model: the remoting members' every logged assignment by AVG
over the brokers' member lists, which hold the remoting members alone (the Proxy keeps its gRPC
clients to itself); the gRPC member's assignment by the Proxy's (every broker, queue -1). So
each side reads every message: what the gRPC member consumed while in the group, the remoting
members consumed too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core import data_path
from rocketlb_core.live.check import check_live_recording

LINES = ("5", "5.5")


def _recording(line: str) -> Path:
    return data_path("live", "grpc", f"grpc-remoting-mixed-{line}")


@pytest.fixture(scope="module", params=LINES)
def checked(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    return request.param, check_live_recording(_recording(request.param))


def test_both_sides_are_explained_by_their_own_models(
        checked: tuple[str, dict[str, Any]]) -> None:
    line, result = checked
    assert result["unexplained"] == 0, json.dumps(result, default=str)[:3000]
    assert result["producers"]["p-slow"]["sends"] == 300
    for name in ("r1", "r2"):
        r = result["consumers"][name]
        assert r["logged"] >= 2, (line, name)
        assert r["exact"] + r["near_change"] == r["logged"]
    p1 = result["consumers"]["p1"]
    assert p1["assignments_equal"] == p1["assignments_logged"] == 1
    assert sorted(map(tuple, p1["model_assignment"])) == [("broker-a", -1), ("broker-b", -1)]
    assert p1["outside_assignment"] == 0
    assert set(p1["brokers_consumed"]) == {"broker-a", "broker-b"}


def test_the_brokers_list_the_remoting_members_alone(checked: tuple[str, dict[str, Any]],
                                                     tmp_path: Path) -> None:
    """While p1 was in the group, the remoting members counted one or two members, never p1:
    their logged cidAllSize is 1 then 2 (r2 joining), and the imported membership (the brokers'
    logs) holds r1 and r2 only."""
    import pyarrow.parquet as pq

    from rocketlb_core.trace.agreement import _client_log
    from rocketlb_core.trace.importer import import_recording

    line, _ = checked
    recording = _recording(line)
    import_recording(recording, tmp_path / "trace")
    members = pq.read_table(tmp_path / "trace" / "membership.parquet").to_pydict()
    assert set(members["member"]) == {"127.0.0.1@r1", "127.0.0.1@r2"}
    sizes = [r.cid_all_size for r in _client_log(recording, "r1").rebalances
             if r.topic == "TopicMix"]
    assert sizes[:2] == [1, 2], sizes


def test_each_message_is_consumed_by_both_sides_while_the_grpc_member_stays(
        checked: tuple[str, dict[str, Any]]) -> None:
    _, result = checked
    g = result["groups"]["GID_mix"]
    assert g["remoting_consumers"] == ["r1", "r2"]
    assert g["stored"] == 300
    assert g["missing"] == g["strays"] == 0
    # p1 joined 5 s in and left at 45 s of a 60 s run: most messages, not all, reached both
    assert 150 <= g["consumed_by_both"] < g["stored"], g
    assert g["consumed_by_both"] + g["grpc_only"] + g["remoting_only"] == g["stored"]
    assert g["remoting_only"] >= 60, g          # the last 15 s: the remoting members alone
    assert g["grpc_twice"] > 0, g               # pops read again what the pulls committed back


def test_the_check_fails_when_the_brokers_are_said_to_list_the_grpc_member(
        checked: tuple[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The model that has the Proxy register its gRPC clients with the brokers (so the remoting
    members would count p1) does not explain the remoting members' assignments."""
    from rocketlb_core.trace import agreement

    line, _ = checked
    grpc_id = _grpc_client_id(_recording(line), "p1")
    real = agreement._candidates

    def with_grpc(*args: Any, **kwargs: Any) -> Any:
        lists = real(*args, **kwargs)

        def more(r: Any) -> list[Any]:
            out = []
            for cand in lists(r):
                kind, members = cand if isinstance(cand, tuple) else (None, cand)
                members = sorted([*members, grpc_id])
                out.append((kind, members) if kind else members)
            return out
        return more
    monkeypatch.setattr(agreement, "_candidates", with_grpc)
    result = check_live_recording(_recording(line))
    assert result["consumers"]["r1"]["unexplained"] >= 1
    assert result["consumers"]["r2"]["unexplained"] >= 1


def _grpc_client_id(recording: Path, name: str) -> str:
    """The gRPC client's id, as its log names it (``clientId=...``)."""
    import gzip
    import re

    text = gzip.decompress((recording / "logs" / name / "rocketmq-client.log.gz")
                           .read_bytes()).decode()
    (cid,) = set(re.findall(r"clientId=([^,\s]+)", text))
    return cid


def test_the_group_check_counts_a_remoting_read_once(tmp_path: Path) -> None:
    """No fudge: without a remoting member's reads (its ranges removed) the messages only it
    read are missing, and the check says so."""
    folder = tmp_path / "rec"
    shutil.copytree(_recording("5"), folder)
    (folder / "ranges" / "r2.json").unlink()
    result = check_live_recording(folder)
    g = result["groups"]["GID_mix"]
    assert g["missing"] > 0
    assert result["unexplained"] >= g["missing"]


def test_the_scenario_is_shipped_and_recorded_through_the_proxy() -> None:
    from rocketlb_core.live.jars import LINES as KNOWN

    for line in LINES:
        meta = json.loads((_recording(line) / "recording.json").read_text())
        assert meta["scenario"] == "grpc-remoting-mixed"
        assert meta["proxy"]["version"] == KNOWN[line].server_version
        assert (_recording(line) / "scenario.toml").read_text() == \
            (data_path("scenarios") / "live" / "grpc-remoting-mixed.toml").read_text()
