"""The push consumer's assignment as the servers compute it, against the released classes (issue 34,
item 2): ``tests/vectors/grpc/proxy-assignment-{5.3.3,5.5.0}.jsonl.gz`` (the Proxy's
``RouteActivity.queryAssignment``) and ``broker-assignment-{5.3.3,5.5.0}.jsonl.gz`` (the broker's
``QueryAssignmentProcessor``), made by ``python -m rocketlb_core.vectorgen.proxy`` from each
release's jars (not run here, like ``vectorgen.grpc``: it needs Maven and Java; ``--check``
compares a fresh run with these files).

Every case must pass under its own release's rules (``grpc.assignment``); the cross-checks say
where the releases differ: the Proxy's 5.5.0 file fails under 5.3.3's rules exactly on the FIFO
groups bound to a lite topic (5.3.3's ``SubscriptionGroupConfig`` has no ``liteBindTopic``, so
its file holds no such group and passes under 5.5.0's rules unchanged: shown, not assumed); the
broker's two files are the same requests with the same answers (``QueryAssignmentProcessor.java``
is byte-identical in the two releases), so no rule tells them apart, which the test asserts.
The remaining tests break the port on purpose and count the cases that catch it.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core.conformance.report import Report
from rocketlb_core.conformance.runner import run_file
from rocketlb_core.grpc import assignment, conformance
from rocketlb_core.grpc.conformance import (
    broker_assignment_answer,
    proxy_assignment_answer,
    run_grpc_case,
)

VECTORS = Path(__file__).parent / "vectors" / "grpc"
RELEASES = ("5.3.3", "5.5.0")
CASES = 2000
INPUTS = {"proxy": ("topic", "group", "queue_datas", "broker_datas"),
          "broker": ("topic", "group", "client_id", "message_model", "strategy", "mq_set",
                     "consumer_ids", "stored_mode", "broker_config")}


def _records(family: str, release: str) -> list[dict[str, Any]]:
    path = VECTORS / f"{family}-assignment-{release}.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def records() -> dict[tuple[str, str], list[dict[str, Any]]]:
    return {(f, r): _records(f, r) for f in INPUTS for r in RELEASES}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("family", sorted(INPUTS))
def test_every_assignment_vector_holds(family: str, release: str,
                                       records: dict[tuple[str, str], list[dict[str, Any]]]
                                       ) -> None:
    report = run_file(VECTORS / f"{family}-assignment-{release}.jsonl.gz")
    assert report.failures() == []
    assert report.passed == CASES
    recs = records[family, release]
    assert len(recs) == CASES
    source = recs[0]["source"]
    assert source["artifact"] == f"org.apache.rocketmq:rocketmq-{family}"
    assert source["version"] == release
    assert source["jvm"] == 17
    assert all(r["source"] == source for r in recs)


def _kinds(recs: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in recs:
        e = r["expect"]
        kind = e["error"]["type"] if "error" in e else e["code"]
        out[kind] = out.get(kind, 0) + 1
    return out


def test_the_proxy_files_cover_what_they_claim(
        records: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    for release in RELEASES:
        recs = records["proxy", release]
        kinds = _kinds(recs)
        assert kinds["OK"] > 1200, kinds
        assert kinds["FORBIDDEN"] > 200, kinds
        assert kinds["NullPointerException"] > 100, kinds           # a broker without a master
        assert kinds["ArithmeticException"] > 30, kinds             # Math.toIntExact(brokerId)
        fifo = [r for r in recs
                if r["group_config"] and r["group_config"]["consume_message_orderly"]]
        assert len(fifo) > 600
        assert sum(r["group_config"] is None for r in recs) > 150
        assert any(len({b for b, _ in r["broker_datas"]}) < len(r["broker_datas"]) for r in recs)
        assert {p for r in recs for _, _, _, p in r["queue_datas"]} == set(range(8))
        assert {n for r in recs for _, n, _, _ in r["queue_datas"]} == {*range(9), 16}
    lite = [r for r in records["proxy", "5.5.0"]
            if r["group_config"] and r["group_config"].get("lite_bind_topic")]
    assert len(lite) > 400
    assert all("lite_bind_topic" not in (r["group_config"] or {})
               for r in records["proxy", "5.3.3"])
    assert records["proxy", "5.3.3"][0]["source"]["lite_bind_topic"] is False
    assert records["proxy", "5.5.0"][0]["source"]["lite_bind_topic"] is True


def test_the_proxy_files_differ_only_where_5_5_0_reads_the_lite_binding(
        records: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    """The same requests on both releases; the answers differ exactly on FIFO groups bound to
    a lite topic whose route has a readable queue: 5.3.3 lists every read queue, 5.5.0 the
    ``-1`` queue. Under the other release's rules the 5.5.0 file fails on exactly those cases;
    the 5.3.3 file holds no lite binding, so 5.5.0's rules answer it the same (no failure)."""
    old, new = records["proxy", "5.3.3"], records["proxy", "5.5.0"]
    differ = []
    for a, b in zip(old, new, strict=True):
        assert [a[k] for k in INPUTS["proxy"]] == [b[k] for k in INPUTS["proxy"]]
        if a["expect"] != b["expect"]:
            differ.append(b["id"])
            config = b["group_config"]
            assert config["consume_message_orderly"]
            assert config["lite_bind_topic"]
            assert len(a["expect"]["assignments"]) >= len(b["expect"]["assignments"])
            assert {q[4] for q in a["expect"]["assignments"]} != {-1}
            assert {q[4] for q in b["expect"]["assignments"]} == {-1}
    assert len(differ) > 150
    fails_old_rules = [r["id"] for r in new if proxy_assignment_answer(r, "5.3.3") != r["expect"]]
    assert fails_old_rules == differ
    assert all(proxy_assignment_answer(r, "5.5.0") == r["expect"] for r in old)


def test_the_broker_files_are_the_same_on_both_releases(
        records: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    """No rule tells 5.3.3's broker from 5.5.0's here: the same 2,000 requests get the same
    answers (``QueryAssignmentProcessor`` is unchanged), so each file passes under the other's
    rules because they are one rule set, not because the check is blind (see the next tests)."""
    for a, b in zip(records["broker", "5.3.3"], records["broker", "5.5.0"], strict=True):
        assert [a[k] for k in INPUTS["broker"]] == [b[k] for k in INPUTS["broker"]]
        assert a["expect"] == b["expect"]


def test_the_broker_files_cover_what_they_claim(
        records: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    recs = records["broker", "5.5.0"]
    answers = [r["expect"]["assignments"] for r in recs]
    assert sum(a is None for a in answers) > 300          # "keep what you have"
    assert sum(a == [] for a in answers) > 100            # "drop everything"
    modes = {a[0][3] for a in answers if a}
    assert modes == {"PULL", "POP"}
    assert sum(bool(a) and a[0][2] == -1 for a in answers) > 200       # allocate4Pop: pop all
    assert sum(r["topic"].startswith("%LMQ%") for r in recs) > 100
    assert sum(r["topic"].startswith("%RETRY%") for r in recs) > 80
    assert sum(r["message_model"] == "BROADCASTING" for r in recs) > 150
    assert sum(not r["broker_config"]["server_load_balancer_enable"] for r in recs) > 100


def _failures(recs: list[dict[str, Any]], patch: Callable[[dict[str, Any]], None] | None = None
              ) -> int:
    report = Report("assignment", "grpc")
    for rec in recs:
        rec = copy.deepcopy(rec)
        if patch is not None:
            patch(rec)
        run_grpc_case(rec, report)
    return report.failed


@contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


def test_the_proxy_vectors_catch_a_wrong_port(
        records: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    recs = records["proxy", "5.5.0"]
    assert _failures(recs) == 0

    def not_fifo(rec: dict[str, Any]) -> None:
        if rec["group_config"]:
            rec["group_config"]["consume_message_orderly"] = False
    assert _failures(recs, not_fifo) > 200

    def first_broker_data_wins(rec: dict[str, Any]) -> None:
        rec["broker_datas"] = list({b: (b, ids) for b, ids in reversed(rec["broker_datas"])}
                                   .values())[::-1]
    assert _failures(recs, first_broker_data_wins) > 20
    with _patched(assignment, "INT_MAX", 2**63 - 1):       # no Math.toIntExact
        assert _failures(recs) > 30
    with _patched(conformance, "proxy_endpoints",
                  lambda addrs: f"IPv4:{','.join(f'{h}:{p}' for _, h, p in addrs)}"):
        assert _failures(recs) > 50                        # the scheme is the last address's
    with _patched(assignment, "PERM_READ", 6):             # readable taken as read-write
        assert _failures(recs) > 100


def test_the_broker_vectors_catch_a_wrong_port(
        records: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    recs = records["broker", "5.3.3"]
    assert _failures(recs) == 0
    with _patched(assignment, "LMQ_PREFIX", "%NOT-LMQ%"):  # the route cache for a light queue
        assert _failures(recs) > 50
    with _patched(assignment, "allocate4pop",
                  lambda s, g, c, mqs, cids, _n: s.allocate(g, c, mqs, cids)):
        assert _failures(recs) > 200                       # POP mode allocated like PULL
    with _patched(assignment, "RETRY_GROUP_TOPIC_PREFIX", "%NOT-RETRY%"):
        assert _failures(recs) > 20                        # a retry topic is always PULL

    def default_share(rec: dict[str, Any]) -> None:
        rec["broker_config"]["default_pop_share_queue_num"] = -1
    assert _failures(recs, default_share) > 20
    assert broker_assignment_answer(recs[0]) is not None
