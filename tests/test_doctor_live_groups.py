"""``rocketlb doctor`` (issue 35) on the groups of ``data/live/doctor/strategies-<line>``: real
``mqadmin`` outputs and client logs captured by ``python -m rocketlb_core.live.capture --groups
GID_strat,GID_tags`` (``GID_strat``: one member allocating with AVG, one with AVG_BY_CIRCLE;
``GID_tags``: one member subscribing ``TagA``, one ``TagB``, on one topic).

What the doctor reports is checked against what the core's allocation says for the capture's
member list (``provenance.json``: each member's client id, strategy and subscription), and that
against what the real clients logged and the real broker showed. The live tests capture
``GID_strat`` afresh on each line and diagnose it, so the doctor keeps working against the real
formats; every JVM they start carries the capture's marker and is killed by pid in a
``finally``, whatever the test did."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core import data_path
from rocketlb_core.consumer.base import rebalance_view
from rocketlb_core.consumer.registry import make
from rocketlb_core.doctor import examine
from rocketlb_core.model import MessageQueue
from tests.test_doctor import _findings as _doctor

STRATEGIES = ("strategies-4", "strategies-5")
CAPTURES = ("capture-4", "capture-5")


def _findings(*paths: Path) -> list[dict[str, Any]]:
    """``rocketlb doctor --json`` on ``paths``: its findings."""
    return [dict(f) for f in _doctor(*paths)]


def _capture(name: str) -> Path:
    path = data_path("live") / "doctor" / name
    if not (path / "provenance.json").is_file():
        pytest.skip(f"{path} not captured")
    return path


def _meta(cap: Path) -> dict[str, Any]:
    return dict(json.loads((cap / "provenance.json").read_text()))


def _text(path: Path) -> str:
    """An mqadmin output of a capture (line 5's are gzipped: logback's noise)."""
    if path.is_file():
        return path.read_text()
    return gzip.decompress(path.with_name(path.name + ".gz").read_bytes()).decode()


def _members(meta: dict[str, Any], group: str) -> dict[str, dict[str, Any]]:
    """client id -> the member ``provenance.json`` says the capture started in ``group``."""
    return {k["client_id"]: k for k in meta["consumers"] if k["group"] == group}


def _queues(meta: dict[str, Any], topic: str) -> list[MessageQueue]:
    t = meta["topics"][topic]
    return [MessageQueue(topic, b, i) for b in t["brokers"] for i in range(t["queues_per_broker"])]


def _share(strategy: str, group: str, cid: str, queues: list[MessageQueue],
           cids: list[str]) -> set[str]:
    """``cid``'s queues under ``strategy``, from the core, as ``broker/queueId``."""
    mq_all, cid_all = rebalance_view(queues, cids)
    return {f"{q.broker_name}/{q.queue_id}" for q in make(strategy).allocate(group, cid, mq_all,
                                                                               cid_all) or []}


def _logged(cap: Path, name: str, group: str, topic: str, members: int) -> set[str]:
    """The queues member ``name`` last logged owning while ``group`` had ``members`` members."""
    last = None
    log = cap / "logs" / name / "rocketmq_client.log.gz"
    for line in gzip.decompress(log.read_bytes()).decode(errors="replace").splitlines():
        if f"group={group}, topic={topic}," in line and f"cidAllSize={members}," in line:
            last = line
    assert last is not None, f"{name} never logged an assignment among {members} members"
    return {f"{b}/{q}" for b, q in re.findall(r"brokerName=([^,]+), queueId=(\d+)", last)}


def _connection_ids(cap: Path, group: str) -> list[str]:
    text = _text(cap / f"consumerConnection-{group}.txt")
    head = text.split("Below is subscription")[0]
    return sorted(re.findall(r"^(?:\d+\s+)?(\S+@\S+)\s", head, re.M))


def _ownerless(cap: Path, group: str, topic: str) -> set[str]:
    """The queues ``consumerProgress -g group -s true`` showed without a client."""
    rows = [r.split() for r in _text(cap / f"consumerProgress-s-{group}.txt").splitlines()]
    return {f"{c[1]}/{c[2]}" for c in rows if len(c) > 5 and c[0] == topic and c[5] == "N/A"}


def _mixed_expected(meta: dict[str, Any], group: str, topic: str
                    ) -> tuple[dict[str, set[str]], set[str], set[str]]:
    """Each member's share under its own strategy (the core), the queues no share holds and
    those two shares hold."""
    members = _members(meta, group)
    cids = sorted(members)
    queues = _queues(meta, topic)
    shares = {c: _share(members[c]["strategy"], group, c, queues, cids) for c in cids}
    every = {f"{q.broker_name}/{q.queue_id}" for q in queues}
    held = [q for s in shares.values() for q in s]
    return shares, every - set(held), {q for q in every if held.count(q) > 1}


def _check_mixed(cap: Path, findings: list[dict[str, Any]]) -> None:
    meta = _meta(cap)
    found = [f for f in findings if f["group"] == "GID_strat"]
    assert [f["id"] for f in found] == ["mixed-strategies"], found
    f = found[0]
    members = _members(meta, "GID_strat")
    assert sorted(set(m["strategy"] for m in members.values())) == ["AVG", "AVG_BY_CIRCLE"]
    assert f["topic"] == "TopicDoc"
    assert f["members"] == sorted(members) == _connection_ids(cap, "GID_strat")
    assert f["details"]["strategies"] == {c: m["strategy"] for c, m in members.items()}
    shares, unowned, twice = _mixed_expected(meta, "GID_strat", "TopicDoc")
    assert unowned                      # the injected mix leaves a gap
    assert twice                        # and an overlap
    assert set(f["details"]["unconsumed_queues"]) == unowned
    assert set(f["details"]["consumed_twice_queues"]) == twice
    assert set(f["queues"]) == unowned | twice
    ba = f["before_after"]
    assert (ba["before"], ba["after"]) == (len(unowned) + len(twice), 0)
    # the real cluster agrees: what each client logged owning with both members present, and the
    # queues the broker showed without a client
    for cid, share in shares.items():
        assert _logged(cap, members[cid]["name"], "GID_strat", "TopicDoc", len(shares)) == share
    assert _ownerless(cap, "GID_strat", "TopicDoc") == unowned
    assert any("AVG_BY_CIRCLE" in e["text"] for e in f["evidence"])


@pytest.mark.parametrize("name", STRATEGIES)
def test_strategies_captures_are_real_mqadmin_outputs_with_provenance(name: str) -> None:
    cap = _capture(name)
    meta = _meta(cap)
    assert meta["format"] == "rocketlb-mqadmin-capture"
    assert meta["isolated"] is True
    assert meta["line"] == name[-1]
    assert list(meta["injected"]) == ["GID_strat", "GID_tags"]
    assert "--groups GID_strat,GID_tags" in meta["command"]
    for row in meta["files"]:
        assert row["ok"] is True
        assert row["command"].startswith("mqadmin ")
        assert (cap / row["file"]).is_file() or (cap / (row["file"] + ".gz")).is_file()
    inputs, _, _ = examine([cap])
    assert {c.group for c in inputs.connections} == {"GID_strat", "GID_tags"}
    assert {r.topic for r in inputs.routes} == {"TopicDoc"}
    for k in meta["consumers"]:
        assert (cap / "logs" / k["name"] / "rocketmq_client.log.gz").is_file()


@pytest.mark.parametrize("name", STRATEGIES)
def test_the_groups_of_the_strategies_captures_give_exactly_their_problems(name: str) -> None:
    found = sorted((f["group"], f["id"]) for f in _findings(_capture(name)))
    assert found == [("GID_strat", "mixed-strategies"), ("GID_tags", "different-subscriptions")]


@pytest.mark.parametrize("name", STRATEGIES)
def test_mixed_strategies_named_with_the_queues_the_mix_leaves(name: str) -> None:
    """The members and their strategies as their logs name them; the queues no member reads and
    those two read, from the core's AVG and AVG_BY_CIRCLE over the capture's member list, which
    is what the real clients logged and the real broker showed."""
    cap = _capture(name)
    _check_mixed(cap, _findings(cap))


@pytest.mark.parametrize("name", STRATEGIES)
def test_different_tags_on_one_topic_with_the_queues_that_lose_messages(name: str) -> None:
    """The members' expressions as their heartbeats logged them; the expression the broker
    holds (consumerConnection's subscription table); each queue's owner from the core's AVG
    over the capture's member list (what the clients logged), and what each queue loses: the
    tags of the group that the broker's and its owner's expression do not both match."""
    cap = _capture(name)
    meta = _meta(cap)
    members = _members(meta, "GID_tags")
    cids = sorted(members)
    found = [f for f in _findings(cap) if f["group"] == "GID_tags"]
    assert [f["id"] for f in found] == ["different-subscriptions"], found
    f = found[0]
    assert f["topic"] == "TopicDoc"
    assert f["members"] == cids == _connection_ids(cap, "GID_tags")
    expressions = {c: m["subscription"] for c, m in members.items()}
    assert sorted(expressions.values()) == ["TagA", "TagB"]
    assert f["details"]["expressions"] == expressions
    held = re.findall(r"^TopicDoc\s+(\S+)\s*$", _text(cap / "consumerConnection-GID_tags.txt"),
                      re.M)
    assert held == [f["details"]["broker_expression"]]
    assert held[0] in expressions.values()
    queues = _queues(meta, "TopicDoc")
    owners: dict[str, str] = {}
    for c in cids:
        share = _share(members[c]["strategy"], "GID_tags", c, queues, cids)
        assert _logged(cap, members[c]["name"], "GID_tags", "TopicDoc", len(cids)) == share
        owners |= {q: c for q in share}
    assert f["details"]["owners"] == owners
    wanted = set(expressions.values())
    lost = {q: ", ".join(sorted(wanted - ({held[0]} & {expressions[c]})))
            for q, c in owners.items()}
    assert f["details"]["lost_on"] == lost
    # the member the broker agrees with loses the other's tag; the other member gets nothing
    assert sorted(set(lost.values())) == sorted(
        {", ".join(sorted(wanted)), next(iter(wanted - {held[0]}))})
    assert set(f["queues"]) == set(owners)
    assert (f["before_after"]["before"], f["before_after"]["after"]) == (len(owners), 0)
    quoted = " ".join(e["text"] for e in f["evidence"])
    assert "subString=TagA" in quoted
    assert "subString=TagB" in quoted


@pytest.mark.parametrize("name", CAPTURES)
def test_one_expression_per_group_gives_no_tag_finding(name: str) -> None:
    """capture-4 and capture-5: every member subscribes ``*``; the heartbeats are read (each
    member of GID_clean has its subscription) and nothing of tags is reported, nothing at all
    for GID_clean."""
    cap = _capture(name)
    inputs, _, _ = examine([cap])
    subs = {s.client_id: s.expression for cl in inputs.client_logs
            for (g, t), s in cl.subscriptions.items() if g == "GID_clean" and t == "TopicDoc"}
    assert subs == {"127.0.0.1@clean-1": "*", "127.0.0.1@clean-2": "*"}
    findings = _findings(cap)
    assert not [f for f in findings if f["group"] == "GID_clean"]
    assert not [f for f in findings if "expressions" in f["details"]]


@pytest.mark.parametrize("name", STRATEGIES)
def test_a_heartbeat_line_cut_anywhere_is_read_or_skipped(name: str) -> None:
    """tg-a's real heartbeat line gives its subscription; cut anywhere, it gives that
    subscription whole or nothing of it (never an error, never a partial expression)."""
    from rocketlb_core.doctor.inputs import heartbeat_subscriptions

    log = _capture(name) / "logs" / "tg-a" / "rocketmq_client.log.gz"
    lines = [t for t in gzip.decompress(log.read_bytes()).decode(errors="replace").splitlines()
             if "HeartbeatData [" in t and "groupName=GID_tags" in t]
    assert lines
    whole = [(s.group, s.topic, s.expression) for s in heartbeat_subscriptions(log, 1, lines[-1])]
    assert ("GID_tags", "TopicDoc", "TagA") in whole
    for cut in range(0, len(lines[-1]), 5):
        got = [(s.group, s.topic, s.expression)
               for s in heartbeat_subscriptions(log, 1, lines[-1][:cut])]
        assert set(got) <= set(whole), cut


# ------------------------------------------------------------------ live, on line 5

@pytest.mark.live
@pytest.mark.parametrize("line_name", ["5"])
def test_a_fresh_capture_of_mixed_strategies_is_diagnosed(line_name: str,
                                                          tmp_path: Path) -> None:
    """``python -m rocketlb_core.live.capture --groups GID_strat`` on a fresh cluster of the
    line, then the doctor on what it wrote: the mixed strategies found with the right members,
    strategies and queues. Its duration is printed. Line 5 only in CI (its 60 minutes: line 4
    took 101 s more); line 4's captures (``data/live/doctor/*-4``, real 4.9.8 ``mqadmin``
    output) are diagnosed offline above, and ``("4",)`` in the parametrization records one live."""
    from rocketlb_core.live import cluster as live
    from rocketlb_core.live.jars import resolve

    resolve(line_name, "server")
    resolve(line_name, "client")
    out, scratch = tmp_path / f"strat-{line_name}", tmp_path / "scratch"
    scratch.mkdir()
    started = time.monotonic()
    try:
        run = subprocess.run(
            [sys.executable, "-m", "rocketlb_core.live.capture", "--line", line_name,
             "--groups", "GID_strat", "--outputs",
             "topicRoute,consumerConnection,consumerProgress-s", "--out", str(out),
             "--isolated"],
            capture_output=True, text=True, timeout=900, check=False,
            env=dict(os.environ, TMPDIR=str(scratch)))
        took = time.monotonic() - started
        print(f"\nlive capture of GID_strat, line {line_name}: {took:.0f} s")
        assert run.returncode == 0, run.stderr[-4000:]
        assert live.jvms_under(scratch) == []           # the capture stopped all it started
    finally:
        for pid in live.jvms_under(scratch):
            os.kill(pid, signal.SIGKILL)
    meta = _meta(out)
    assert list(meta["injected"]) == ["GID_strat"]
    # only the outputs the finding needs (--outputs): each 5.x mqadmin call is a JVM
    assert sorted({row["command"].split()[1] for row in meta["files"]}) == \
        ["consumerConnection", "consumerProgress", "topicRoute"]
    assert "--outputs topicRoute,consumerConnection,consumerProgress-s" in meta["command"]
    findings = _findings(out)
    assert sorted((f["group"], f["id"]) for f in findings) == [("GID_strat", "mixed-strategies")]
    _check_mixed(out, findings)


def test_outputs_are_named_checked_and_kept_in_their_order() -> None:
    import argparse

    from rocketlb_core.live.capture import OUTPUTS, outputs_arg

    assert outputs_arg("consumerProgress-s, topicRoute") == ("topicRoute", "consumerProgress-s")
    assert outputs_arg(",".join(reversed(OUTPUTS))) == OUTPUTS
    for bad in ("", "topicRoute,route", "clusterlist"):
        with pytest.raises(argparse.ArgumentTypeError, match="known: clusterList"):
            outputs_arg(bad)
