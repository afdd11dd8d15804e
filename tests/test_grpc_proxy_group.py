"""The Proxy's queue for a gRPC producer's message, group or none (issue 34): the core's port
(``grpc.proxy_send``: ``SendMessageActivity.SendMessageQueueSelector`` over the write
``MessageQueueSelector``; ``javamath.guava_consistent_hash``, ``java_string_hash``,
``java_is_blank``) against ``tests/vectors/grpc/proxy-group-queue-{5.3.3,5.5.0}.jsonl.gz``, made
by ``python -m rocketlb_core.vectorgen.proxy --only group`` from each release's real classes (not
run here: it needs Maven and Java; ``--check`` compares a fresh run with these files).

Every case must pass under its own release's rules; the cross-checks say where the releases
differ (5.5.0 takes the lite topic for a blank group), break the port on purpose and count the
cases that catch it, and show that the gRPC client's own FIFO choice (SipHash-2-4 of the group
over its route, rocketmq-client-java 5.0.8) is mostly not where the Proxy stores the message.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core import javamath
from rocketlb_core.conformance.report import Report
from rocketlb_core.conformance.runner import run_file
from rocketlb_core.grpc import conformance, proxy_send
from rocketlb_core.grpc.conformance import proxy_group_queue_answer, run_grpc_case
from rocketlb_core.grpc.proxy_send import (
    ProxyQueue,
    ProxyQueueSelector,
    proxy_group_queue,
    proxy_sharding_key,
    proxy_write_queues,
)
from rocketlb_core.grpc.publishing import GrpcQueue, Permission, PublishingLoadBalancer
from rocketlb_core.grpc.siphash import message_group_index
from rocketlb_core.javamath import (
    guava_consistent_hash,
    java_is_blank,
    java_string_hash,
    utf16_units,
    wrap64,
)

VECTORS = Path(__file__).parent / "vectors" / "grpc"
RELEASES = ("5.3.3", "5.5.0")
CASES = 1000
INPUTS = ("topic", "queue_datas", "masterless", "index_start")


def _records(release: str) -> list[dict[str, Any]]:
    with gzip.open(VECTORS / f"proxy-group-queue-{release}.jsonl.gz", "rt",
                   encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def records() -> dict[str, list[dict[str, Any]]]:
    return {r: _records(r) for r in RELEASES}


def _expect(rec: dict[str, Any]) -> dict[str, Any]:
    return {"write_queues": rec["write_queues"],
            "sends": [[s["expect"], s["index"]] for s in rec["sends"]]}


def _key(send: dict[str, Any], release: str) -> str:
    return proxy_sharding_key(send["group"], lite_topic=send["lite_topic"] or "",
                              messages=send["messages"], release=release)


@pytest.mark.parametrize("release", RELEASES)
def test_every_group_queue_vector_holds(release: str,
                                        records: dict[str, list[dict[str, Any]]]) -> None:
    report = run_file(VECTORS / f"proxy-group-queue-{release}.jsonl.gz")
    assert report.failures() == []
    assert report.passed == CASES
    recs = records[release]
    assert len(recs) == CASES
    source = recs[0]["source"]
    assert source["artifact"] == "org.apache.rocketmq:rocketmq-proxy"
    assert source["version"] == release
    assert source["class"].endswith("SendMessageActivity$SendMessageQueueSelector#select")
    assert source["jvm"] == 17
    assert source["lite_topic"] is (release == "5.5.0")
    assert all(r["source"] == source for r in recs)


def test_the_files_cover_what_they_claim(records: dict[str, list[dict[str, Any]]]) -> None:
    for release in RELEASES:
        recs = records[release]
        sends = [(r, s) for r in recs for s in r["sends"]]
        assert len(sends) > 2000
        hashed = [(r, s) for r, s in sends if r["write_queues"] and _key(s, release)]
        assert len(hashed) > 1500                                   # the consistent hash
        assert sum(not _key(s, release) and bool(r["write_queues"]) for r, s in sends) > 200
        assert sum(s["expect"] is None for _, s in sends) > 100     # no write queue: null
        assert sum(s["messages"] == 2 for _, s in sends) > 150      # a batch has no key
        groups = [s["group"] for _, s in hashed]
        assert sum(len(utf16_units(g)) > len(g) for g in groups) > 150   # non-BMP
        assert sum(any(ord(c) > 127 for c in g) for g in groups) > 500
        assert sum(len(g) >= 64 for g in groups) > 50
        assert sum(bool(s["group"]) and java_is_blank(s["group"]) for _, s in sends) > 100
        assert max(len(r["write_queues"]) for r in recs) >= 48
        assert sum(bool(r["masterless"]) for r in recs) > 100
        # the sort is Java's: a non-BMP broker name before U+FF21 (Python's str order says after)
        both = [r for r in recs if {"broker-\U0001f680", "broker-\uff21"}
                <= {b for b, _ in r["write_queues"]}]
        assert len(both) > 10
        assert all([b for b, _ in r["write_queues"]].index("broker-\U0001f680")
                   < [b for b, _ in r["write_queues"]].index("broker-\uff21") for r in both)
    lite = [s for r in records["5.5.0"] for s in r["sends"]
            if r["write_queues"] and s["messages"] == 1 and java_is_blank(s["group"])
            and s["lite_topic"]]
    assert len(lite) > 100
    assert all(s["lite_topic"] is None for r in records["5.3.3"] for s in r["sends"])


def test_the_releases_differ_only_where_5_5_0_reads_the_lite_topic(
        records: dict[str, list[dict[str, Any]]]) -> None:
    """The same routes, counters and groups on both releases; the answers differ only on cases
    with a one-message send whose group is empty or blank and not both it and the lite topic
    empty (5.3.3 hashes a blank group and steps its counter for an empty one; 5.5.0 hashes the
    lite topic, or steps its counter when that is empty), and the 5.5.0 file fails under 5.3.3's
    rules exactly there; the 5.3.3 file, whose requests carry no lite topic, fails under 5.5.0's
    exactly on its cases with a blank (not empty) group."""
    old, new = records["5.3.3"], records["5.5.0"]
    differ = []
    for a, b in zip(old, new, strict=True):
        assert [a[k] for k in INPUTS] == [b[k] for k in INPUTS]
        assert [(s["group"], s["messages"]) for s in a["sends"]] == \
            [(s["group"], s["messages"]) for s in b["sends"]]
        assert a["write_queues"] == b["write_queues"]
        if _expect(a) != _expect(b):
            differ.append(b["id"][-5:])
            assert any(s["messages"] == 1 and java_is_blank(s["group"])
                       and (s["group"] or s["lite_topic"]) for s in b["sends"])
    assert len(differ) > 100
    fails_old = [r["id"][-5:] for r in new if proxy_group_queue_answer(r, "5.3.3") != _expect(r)]
    fails_new = [r["id"][-5:] for r in old if proxy_group_queue_answer(r, "5.5.0") != _expect(r)]
    assert fails_old == differ
    assert fails_new == [r["id"][-5:] for r in old         # a blank group: hashed, or not
                         if any(s["messages"] == 1 and s["group"] and java_is_blank(s["group"])
                                for s in r["sends"])]
    assert len(fails_new) > 100


def _failures(recs: list[dict[str, Any]]) -> int:
    report = Report("proxy-group-queue", "grpc")
    for rec in recs:
        run_grpc_case(copy.deepcopy(rec), report)
    return report.failed


@contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    """``module.name`` is ``value`` inside the block (pytest's ``MonkeyPatch``)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(module, name, value)
        yield


def test_the_vectors_catch_a_wrong_port(records: dict[str, list[dict[str, Any]]]) -> None:
    recs = records["5.5.0"]
    assert _failures(recs) == 0
    with _patched(proxy_send, "java_string_key", lambda s: s.encode("utf-32-be")):
        assert _failures(recs) > 10                     # Python's code-point order
    with _patched(proxy_send, "guava_consistent_hash", lambda h, n: h % n):
        assert _failures(recs) > 500                    # a plain modulo
    with _patched(proxy_send, "java_string_hash",
                  lambda s: javamath.wrap32(sum(ord(c) * 31 ** i
                                                for i, c in enumerate(reversed(s))))):
        assert _failures(recs) > 50                     # code points, not UTF-16 units
    with _patched(proxy_send, "java_is_blank", lambda s: not s.strip()):
        assert _failures(recs) > 5                      # Python's whitespace
    with _patched(proxy_send, "PROXY_READS_LITE_TOPIC", {"5.5.0": False}):
        assert _failures(recs) > 100
    with _patched(conformance, "proxy_write_queues",
                  lambda qds: [ProxyQueue(b, i) for b, n, p in qds if p & 2 for i in range(n)]):
        assert _failures(recs) > 300                    # the route's order, duplicates kept


def _client_queues(rec: dict[str, Any]) -> list[GrpcQueue]:
    """The writable master queues as rocketmq-client-java 5.0.8 holds them: the Proxy's
    ``QueryRoute`` answer (``RouteActivity.genMessageQueueFromQueueData``, queue data by queue
    data in the route's order; the vectors' queue datas read as many queues as they write, so
    the ids are the broker's), brokers without a master left out by the balancer."""
    return [GrpcQueue(rec["topic"], b, 0, "IPv4:127.0.0.1:8081", i,
                      Permission.READ_WRITE if perm & 4 else Permission.WRITE)
            for b, n, perm in rec["queue_datas"] if b not in rec["masterless"] and perm & 2
            for i in range(n)]


def test_the_client_s_siphash_queue_is_mostly_not_the_proxy_s(
        records: dict[str, list[dict[str, Any]]]) -> None:
    """The client's FIFO choice (``takeMessageQueueByMessageGroup``: SipHash-2-4 of the group
    over its route's writable queues) against the queue the released Proxy stores the message
    on, for every one-message send whose key is its group (not blank: ``validateMessageGroup``
    rejects a blank group before any selection): the Proxy ignores the client's
    queue, so the client's choice misses on most multi-queue routes. The same comparison over
    the Proxy's own sorted list (what a client would need to agree) misses as often."""
    counts = {}
    for release in RELEASES:
        route_order = sorted_order = total = multi = 0
        for rec in records[release]:
            queues = _client_queues(rec)
            for s in rec["sends"]:
                if (s["expect"] is None or s["messages"] != 1 or java_is_blank(s["group"])
                        or _key(s, release) != s["group"]):
                    continue
                total += 1
                multi += len(rec["write_queues"]) > 1
                client = PublishingLoadBalancer(queues, 0).take_message_queue_by_message_group(
                    s["group"])
                route_order += client.short() != s["expect"]
                sorted_order += rec["write_queues"][message_group_index(
                    s["group"], len(rec["write_queues"]))] != s["expect"]
        counts[release] = (total, multi, route_order, sorted_order)
        assert total > 1400
        assert route_order > 0.8 * multi
        assert sorted_order > 0.8 * multi
    assert counts == {"5.3.3": (1570, 1538, 1380, 1387), "5.5.0": (1570, 1538, 1380, 1387)}


def test_guava_consistent_hash_wraps_as_java_does() -> None:
    """``(int) (state >>> 33) + 1`` is an ``int`` sum: for a state whose top 31 bits are all
    ones it wraps to -2^31, ``nextDouble()`` is -1.0 and the jump goes negative (stop at 0);
    without the wrap it would be 1.0 and jump to bucket 1."""
    inverse = pow(2862933555777941757, -1, 1 << 64)
    seed = wrap64(((0xFFFFFFFE00000000 - 1) * inverse) % (1 << 64))
    assert guava_consistent_hash(seed, 1 << 30) == 0
    assert guava_consistent_hash(java_string_hash("order-1"), 8) == 3
    with pytest.raises(ValueError, match="buckets must be positive"):
        guava_consistent_hash(1, 0)
    queues = proxy_write_queues([("broker-a", 4, 6), ("broker-b", 4, 6)])
    selector = ProxyQueueSelector(queues, 2**31 - 1)
    assert selector.select("") == ProxyQueue("broker-b", 3)            # IntMath.mod
    assert selector.index == -(2**31)
    assert selector.select("order-1") == proxy_group_queue(queues, "order-1")
    assert selector.index == -(2**31)                                  # untouched
