"""``rocketlb doctor`` (issue 35) on what real clusters wrote: the live recordings of
``data/live`` (client and broker logs, message trace) and the ``mqadmin`` captures of
``data/live/doctor`` (``rocketlb_core.live.capture``). Each injected problem is found with the
right queues and members, and the clean inputs give nothing. The queues the doctor computes as
unconsumed are checked against what the real clients logged."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.doctor import examine
from tests.test_fuzz import run_command

CAPTURES = ("capture-4", "capture-5")


def _findings(*paths: Path) -> list[dict[str, object]]:
    status, out, err = run_command(["doctor", "--json", *map(str, paths)])
    assert status in (0, 3), err
    doc = json.loads(out)
    assert doc["format"] == "rocketlb-doctor"
    assert doc["version"] == 2
    assert (status == 3) == bool(doc["findings"])
    return list(doc["findings"])


def _logged_queues(rec: Path, group: str, topic: str, members: int) -> set[str]:
    """The union of the queues each client of ``group`` last logged owning while the group had
    ``members`` members."""
    owned: set[str] = set()
    for log in sorted((rec / "logs").glob("*/rocketmq_client.log.gz")):
        last = None
        for line in gzip.decompress(log.read_bytes()).decode().splitlines():
            if f"group={group}, topic={topic}," in line and f"cidAllSize={members}," in line:
                last = line
        if last:
            owned |= {f"{b}/{q}" for b, q in re.findall(r"brokerName=([^,]+), queueId=(\d+)",
                                                       last)}
    return owned


@pytest.mark.parametrize("line", ["4", "5"])
def test_the_duplicate_instance_name_of_a_recording_is_found_with_its_queues(line: str) -> None:
    rec = data_path("live", f"membership-day-{line}")
    findings = _findings(rec)
    assert [f["id"] for f in findings] == ["duplicate-client-id"]
    f = findings[0]
    assert f["group"] == "GID_dup"
    assert f["topic"] == "TopicLive"
    assert f["members"] == ["127.0.0.1@dup"]
    hosts = f["hosts"]
    assert isinstance(hosts, list)
    assert len(hosts) == 2                                  # the two processes' connections
    assert all(h.startswith("127.0.0.1:") for h in hosts)
    unconsumed = {"broker-a/3", "broker-b/0", "broker-b/1"}
    assert set(f["queues"]) == unconsumed                                     # type: ignore
    # the real clients agree: what dup-1, dup-2 and other last owned among three members
    every = {f"broker-{b}/{q}" for b in "ab" for q in range(4)}
    assert every - _logged_queues(rec, "GID_dup", "TopicLive", 3) == unconsumed
    ba = f["before_after"]
    assert isinstance(ba, dict)
    assert (ba["before"], ba["after"]) == (3, 0)
    assert ba["text"].startswith("with distinct instanceName: 0 unconsumed queues, was 3")
    ev = f["evidence"]
    assert isinstance(ev, list)
    assert any("broker.log.gz" in e["file"] and "clientId=127.0.0.1@dup" in e["text"]
               for e in ev)
    assert any("dup-1/rocketmq_client.log.gz" in e["file"] for e in ev)
    assert any("dup-2/rocketmq_client.log.gz" in e["file"] for e in ev)
    assert str(f["book"]).endswith("09-troubleshooting.ipynb#duplicate-client-ids-in-containers")


@pytest.mark.parametrize("line", ["4", "5"])
def test_producer_outages_give_producer_findings_only(line: str) -> None:
    """The producer-outage recordings have no consumer: what the doctor reports there is the
    outage of broker-a as the producers lived it (``tests/test_doctor_producers.py``)."""
    rec = data_path("live", f"producer-outage-{line}")
    ids = sorted(f["id"] for f in _findings(rec))           # type: ignore[type-var]
    assert ids == ["broker-isolated", "failing-broker-not-avoided"]


@pytest.mark.parametrize("line", ["4", "5"])
def test_a_group_whose_members_come_and_go_is_not_a_problem(line: str) -> None:
    """GID_live of membership-day: joins, a clean leave and a kill; only the logs of that
    group given (plus the brokers'): nothing to report."""
    rec = data_path("live", f"membership-day-{line}")
    paths = [rec / "logs" / n for n in ("c1", "c2", "c3", "broker-a")]
    inputs, findings, _ = examine(paths)
    assert findings == []
    assert {k for _, k in inputs.read} == {"clientLog", "brokerLog"}


def test_report_fits_100_columns_and_has_no_colour_off_a_terminal() -> None:
    status, out, _ = run_command(["doctor", str(data_path("live", "membership-day-4"))])
    assert status == 3
    assert max(len(x) for x in out.splitlines()) <= 100
    assert "\x1b" not in out
    status, out, _ = run_command(["doctor", "--colour", "always",
                                  str(data_path("live", "membership-day-4"))])
    assert "\x1b[1;31m" in out


# ------------------------------------------------------------------ the mqadmin captures

def _capture(name: str) -> Path:
    path = data_path("live") / "doctor" / name
    if not (path / "provenance.json").is_file():
        pytest.skip(f"{path} not captured")
    return path


@pytest.mark.parametrize("name", CAPTURES)
def test_captures_are_real_mqadmin_outputs_with_provenance(name: str) -> None:
    cap = _capture(name)
    meta = json.loads((cap / "provenance.json").read_text())
    assert meta["format"] == "rocketlb-mqadmin-capture"
    assert meta["isolated"] is True
    for row in meta["files"]:
        assert (cap / row["file"]).is_file()
        assert row["command"].startswith("mqadmin ")
    inputs, _, _ = examine([cap])
    kinds = {k for _, k in inputs.read}
    assert {"consumerConnection", "consumerProgress", "topicRoute", "clusterList",
            "brokerStatus"} <= kinds
    assert {r.topic for r in inputs.routes} == {"TopicDoc", "TopicSmall"}
    assert {c.group for c in inputs.connections} == {"GID_dup", "GID_idle", "GID_mixed",
                                                      "GID_clean"}


def _mqadmin_only(cap: Path) -> list[Path]:
    return sorted(cap.glob("*.txt*"))           # capture-5's are gzipped (logback's noise)


def _text(path: Path) -> str:
    if not path.is_file():
        path = path.with_name(path.name + ".gz")
        return gzip.decompress(path.read_bytes()).decode() if path.is_file() else ""
    return path.read_text()


@pytest.mark.parametrize("name", CAPTURES)
def test_captures_duplicate_instance_name(name: str) -> None:
    cap = _capture(name)
    for paths in (_mqadmin_only(cap), [cap]):
        found = [f for f in _findings(*paths) if f["group"] == "GID_dup"]
        ids = [f["id"] for f in found]
        assert ids == ["duplicate-client-id"], ids
        f = found[0]
        assert f["members"] == ["127.0.0.1@dup"]
        assert f["topic"] == "TopicDoc"
        # AVG over [dup, dup, other] and 4 queues: dup takes a/0, a/1; a/1's successor slot
        # (broker-b/0) is the second dup's, owned by nobody; other takes b/1
        assert f["queues"] == ["broker-b/0"]
        ba = f["before_after"]
        assert isinstance(ba, dict)
        assert (ba["before"], ba["after"]) == (1, 0)
        assert len(f["hosts"]) == 2                         # type: ignore[arg-type]


@pytest.mark.parametrize("name", CAPTURES)
def test_captures_idle_member(name: str) -> None:
    cap = _capture(name)
    found = [f for f in _findings(*_mqadmin_only(cap)) if f["group"] == "GID_idle"]
    assert [f["id"] for f in found] == ["more-consumers-than-queues"]
    assert found[0]["members"] == ["127.0.0.1@idle-3"]
    ba = found[0]["before_after"]
    assert isinstance(ba, dict)
    assert (ba["before"], ba["after"]) == (1, 0)


@pytest.mark.parametrize("name", CAPTURES)
def test_captures_mixed_subscriptions(name: str) -> None:
    cap = _capture(name)
    found = [f for f in _findings(cap) if f["group"] == "GID_mixed"]
    ids = {f["id"] for f in found}
    assert "different-subscriptions" in ids, found
    for f in found:
        if f["id"] == "different-subscriptions":
            # each topic's queues split over both members: the half of the member that does
            # not subscribe is read by no one
            assert f["members"] in (["127.0.0.1@mx-doc"], ["127.0.0.1@mx-small"])
            assert f["queues"]


@pytest.mark.parametrize("name", CAPTURES)
def test_captures_clean_group_gives_nothing(name: str) -> None:
    cap = _capture(name)
    assert not [f for f in _findings(cap) if f["group"] == "GID_clean"]
    clean = [p for p in _mqadmin_only(cap) if "GID_clean" in p.name or "GID" not in p.name]
    assert _findings(*clean) == []


@pytest.mark.parametrize("name", CAPTURES)
def test_the_cluster_agrees_with_the_queues_the_doctor_computes(name: str) -> None:
    """What the doctor computes as unconsumed (from the member list and the route, through the
    core's AVG) is what the real broker showed: the rows of ``consumerProgress -s true``
    without a client."""
    cap = _capture(name)
    checked = 0
    for f in _findings(cap):
        progress = _text(cap / f"consumerProgress-s-{f['group']}.txt")
        if not f["queues"] or not progress:
            continue
        rows = [r.split() for r in progress.splitlines()]
        rows = [cells for cells in rows if len(cells) > 5 and cells[0] == f["topic"]]
        if not rows:        # the broker's subscription table held the other topic then
            continue
        ownerless = {f"{c[1]}/{c[2]}" for c in rows if c[5] == "N/A"}
        assert set(f["queues"]) == ownerless, f             # type: ignore[arg-type]
        checked += 1
    assert checked >= 2
