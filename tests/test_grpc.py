"""The gRPC client's balancing (issue 34, item 2): the core's port of rocketmq-client-java
5.0.8 (``rocketlb_core.grpc``) against vectors made from its own classes
(``tests/vectors/grpc/``, ``rocketlb_core.vectorgen.grpc``), the cross-checks that each file
fails under the rules it must tell apart (no isolation; the Python client's rules), and the
Proxy's answer to ``QueryAssignment``."""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core.conformance import Report, run_file
from rocketlb_core.grpc import (
    GrpcQueue,
    Permission,
    ProducerSendLoop,
    PublishingLoadBalancer,
    SubscriptionLoadBalancer,
    broker_query_assignment,
    message_group_index,
    proxy_query_assignment,
    sip_hash24,
)
from rocketlb_core.grpc.conformance import run_grpc_case

VECTORS = Path(__file__).parent / "vectors" / "grpc"
FILES = {"siphash": 1000, "publishing": 800, "subscription": 600, "send": 600}


def _records(family: str) -> list[dict[str, Any]]:
    with gzip.open(VECTORS / f"grpc-{family}-5.0.8.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize("family", sorted(FILES))
def test_every_grpc_vector_holds(family: str) -> None:
    report = run_file(VECTORS / f"grpc-{family}-5.0.8.jsonl.gz")
    recs = _records(family)
    assert report.failures() == []
    assert len(recs) == FILES[family]
    steps = sum(len(r.get("steps", [None])) for r in recs)
    assert report.passed == steps
    source = recs[0]["source"]
    assert source["artifact"] == "org.apache.rocketmq:rocketmq-client-java"
    assert source["version"] == "5.0.8"
    assert source["jvm"] == 17


def test_siphash_is_the_reference_siphash_2_4() -> None:
    """The paper's test vector (key 00..0f, message 00..0e) and the empty message."""
    assert sip_hash24(bytes(range(15))) & (2**64 - 1) == 0xA129CA6149BE45E5
    assert sip_hash24(b"") == 0x726FDB47DD0E0E31


def _fails(family: str, patch: Any) -> int:
    report = Report(family, "grpc")
    for rec in _records(family):
        rec = copy.deepcopy(rec)
        patch(rec)
        run_grpc_case(rec, report)
    return report.failed


def test_publishing_vectors_fail_when_isolation_is_ignored() -> None:
    def no_isolation(rec: dict[str, Any]) -> None:
        for s in rec["steps"]:
            if s["op"] == "take" and s["excluded"]:
                s["excluded"] = []
    assert _fails("publishing", no_isolation) > 100


def test_send_vectors_fail_under_the_python_clients_rules(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """rocketmq-python-client 5.1.2 (``producer/producer.py``, ``__send``) takes a new queue
    for every attempt (``select_next_queue``), isolates nothing, and ends on
    ``TooManyRequestsException``: replayed so, the Java client's sends differ."""

    def python_client_send(self: ProducerSendLoop, balancer: PublishingLoadBalancer,
                           outcome: Any, message_group: str | None = None) -> Any:
        from rocketlb_core.grpc.send import GrpcAttempt, GrpcSendResult
        attempts = []
        for attempt in range(1, self.max_attempts + 1):
            mq = (balancer.take_message_queues((), 1)[0] if message_group is None
                  else balancer.take_message_queue_by_message_group(message_group))
            got = outcome(mq, attempt)
            attempts.append(GrpcAttempt(attempt, mq, got, False))
            if got in ("ok", "throttled"):
                break
        return GrpcSendResult(attempts[-1].outcome == "ok", [a.queue for a in attempts[:1]],
                              attempts)

    monkeypatch.setattr(ProducerSendLoop, "send", python_client_send)
    assert _fails("send", lambda rec: None) > 100


def test_fifo_groups_land_elsewhere_with_the_python_clients_hash() -> None:
    """The Python client picks a group's queue by SHA-256 (big-endian) mod n
    (``client/balancer/queue_selector.py``, ``select_queue_by_hash_key``), the Java client by
    SipHash-2-4: the same group goes to different queues."""
    recs = _records("siphash")
    differ = 0
    for rec in recs:
        sha = int.from_bytes(hashlib.sha256(rec["group"].encode("utf-8")).digest(), "big")
        differ += any(sha % n != i for n, i in zip(rec["sizes"], rec["index"], strict=True)
                      if n > 1)
    assert differ > 900


def _queues(spec: list[tuple[str, str, int]]) -> list[GrpcQueue]:
    return [GrpcQueue("T", b, 0, e, q) for b, e, q in spec]


def test_all_isolated_takes_them_anyway_and_the_proxy_isolates_every_broker() -> None:
    """Behind a Proxy every broker has the Proxy's endpoints: one failure isolates them all,
    and the next send's candidates come from the all-isolated pass."""
    queues = _queues([("a", "proxy:8081", 0), ("a", "proxy:8081", 1), ("b", "proxy:8081", 0)])
    lb = PublishingLoadBalancer(queues, 0)
    loop = ProducerSendLoop(max_attempts=3)
    first = loop.send(lb, lambda q, n: "fail" if n == 1 else "ok")
    assert [a.queue.short() for a in first.attempts] == [["a", 0], ["b", 0]]
    assert loop.isolated == {"proxy:8081"}
    second = loop.send(lb, lambda q, n: "ok")
    assert [q.short() for q in second.candidates] == [["a", 1], ["b", 0]]
    loop.rejoin(["proxy:8081"])
    assert loop.isolated == set()


def test_the_counter_wraps_like_an_atomic_integer() -> None:
    """2^31 - 1, then -2^31: ``IntMath.mod`` keeps positions non-negative, but 2^32 is not a
    multiple of 3, so queue 1 comes twice in a row at the wrap."""
    lb = SubscriptionLoadBalancer(_queues([("a", "e", 0), ("a", "e", 1), ("a", "e", 2)]),
                                  2**31 - 1)
    assert [lb.take_message_queue().queue_id for _ in range(3)] == [1, 1, 2]
    assert lb.stored == -(2**31) + 2
    assert message_group_index("g", 1) == 0


def test_proxy_query_assignment_5_3_3_and_5_5_0() -> None:
    route = [("broker-a", 4, 6), ("broker-b", 2, 4), ("broker-c", 0, 6), ("broker-d", 4, 2),
             ("broker-x", 4, 6)]
    brokers = {"broker-a": {0: "a:8081", 1: "a1:8081"}, "broker-b": {0: "b:8081"},
               "broker-c": {0: "c:8081"}, "broker-d": {0: "d:8081"}}
    plain = proxy_query_assignment("T", route, brokers)
    assert plain is not None
    assert [(q.broker, q.queue_id, q.permission) for q in plain] == [
        ("broker-a", -1, Permission.READ_WRITE), ("broker-b", -1, Permission.READ)]
    fifo = proxy_query_assignment("T", route, brokers, fifo=True)
    assert fifo is not None
    assert [(q.broker, q.queue_id) for q in fifo] == [("broker-a", i) for i in range(4)] + [
        ("broker-b", 0), ("broker-b", 1)]
    lite = proxy_query_assignment("T", route, brokers, fifo=True, lite=True)   # 5.5.0 only
    assert lite == plain
    assert proxy_query_assignment("T", [("broker-d", 4, 2)], brokers) is None   # FORBIDDEN
    with pytest.raises(ValueError, match="no master"):
        proxy_query_assignment("T", [("broker-z", 1, 6)], {"broker-z": {1: "z:1"}})


def test_broker_query_assignment_follows_the_message_request_mode() -> None:
    from rocketlb_core.model import MessageQueue
    mqs = [MessageQueue("T", b, i) for b in ("a", "b") for i in range(2)]
    pull, mode = broker_query_assignment("T", "g", "c1", "AVG", mqs, ["c2", "c1"])
    assert mode == "PULL"
    assert pull == {MessageQueue("T", "a", 0), MessageQueue("T", "a", 1)}
    everything, mode = broker_query_assignment("T", "g", "c1", "AVG", mqs, ["c1", "c2"],
                                               default_mode="POP")
    assert mode == "POP"
    assert everything == {MessageQueue("T", "a", -1), MessageQueue("T", "b", -1)}
    shared, _ = broker_query_assignment("T", "g", "c1", "AVG", mqs, ["c1", "c2", "c3"],
                                        mode="POP", pop_share_queue_num=1)
    assert shared == {MessageQueue("T", "a", 0), MessageQueue("T", "a", 1),   # c1's share
                      MessageQueue("T", "b", 0)}                                # and c2's
    retry, mode = broker_query_assignment("%RETRY%g", "g", "c1", "AVG", mqs, ["c1"],
                                          default_mode="POP")
    assert mode == "PULL"
    assert retry == set(mqs)
    assert broker_query_assignment("T", "g", "c1", "CONSISTENT_HASH", mqs, ["c1"])[0] is None
    assert broker_query_assignment("T", "g", "c1", "AVG", mqs, None)[0] is None
    assert broker_query_assignment("T", "g", "c1", "AVG", mqs, ["c1", "c2"],
                                   server_load_balancer_enable=False)[0] == set(mqs)
    assert broker_query_assignment("T", "g", "c1", "AVG", [], ["c1"])[0] is None  # threw
