"""rocketmq-client-go v2.1.2 against its own code, and against the Java client's ports on the
same inputs (issue 47, item 1). ``tests/vectors/go/go-client-v2.1.2.jsonl.gz`` was made by the Go
client's own functions (``vectorgen.go_client``: a Go program that imports the module, the two
unexported route conversions through ``go:linkname``); ``rocketlb_core.goclient`` must answer
every case as the Go code did. Then each rule the port follows is one the vectors tell apart, and
on the same cases the Java client's ports agree where the two clients compute the same thing
(AVG, AVG_BY_CIRCLE) and disagree where they do not (machine room, consistent hash, the
producer's queue order)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core.conformance.runner import run_file
from rocketlb_core.consumer import strategies as java
from rocketlb_core.consumer.consistent_hash import consistent_hash as java_consistent_hash
from rocketlb_core.goclient import allocate as ga
from rocketlb_core.goclient import route as gr
from rocketlb_core.goclient import selector as gs
from rocketlb_core.goclient.conformance import allocate_answer, route_answer, selector_answer
from rocketlb_core.goclient.gosort import slice_permutation
from rocketlb_core.model import MessageQueue

FILE = Path(__file__).parent / "vectors" / "go" / "go-client-v2.1.2.jsonl.gz"


def _cases(family: str | None = None) -> list[dict[str, Any]]:
    with gzip.open(FILE, "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f]
    return [c for c in cases if family in (None, c["go"])]


def test_every_go_vector_holds() -> None:
    report = run_file(FILE)
    assert (report.kind, report.passed, report.failed) == ("go-client", 1400, 0)
    cases = _cases()
    kinds = Counter((c["go"], c.get("strategy") or c.get("selector")) for c in cases)
    assert all(kinds[("allocate", s)] > 60 for s in ga.STRATEGIES)
    assert all(kinds[("selector", s)] > 60 for s in ("round-robin", "hash", "manual"))
    allocate = _cases("allocate")
    assert sum(c["expect"] is None for c in allocate) > 30                # Go's nil
    assert sum(c["expect"] == [] for c in allocate) > 30                  # an empty share
    assert sum(isinstance(c["expect"], dict) for c in allocate) > 3       # a panic (0 replicas)
    assert {c["source"]["version"] for c in cases} == {"v2.1.2"}
    assert max(c["n"] for c in _cases("publish-order")) > 1000
    assert sum(len(c["queue_datas"]) > 12 for c in _cases("route")) > 20
    retries = [op for c in _cases("selector") for op in c["ops"] if op["last_broker"]]
    assert len(retries) > 300


def _wrong(family: str, answer: Any, expect: Any) -> int:
    wrong = 0
    for c in _cases(family):
        try:
            wrong += answer(c) != expect(c)
        except (ArithmeticError, LookupError, ValueError):   # another rule's own failure
            wrong += 1
    return wrong


@pytest.mark.parametrize("rule", [
    "the producer's order is the name server's", "the producer's order always reversed",
    "the producer sorts by broker name (Java)", "the counter is used before it steps",
    "a retry does not skip its last broker", "machine room takes its rooms' queues (Java)",
    "machine room splits like Java", "the ring hashes with MD5 (Java)",
    "the sharding key hashed with FNV-1 (not 1a)"])
def test_the_vectors_fail_under_other_rules(rule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each rule of the port is one the vectors tell apart."""
    family = "allocate"
    if rule == "the producer's order is the name server's":
        family = "route"
        monkeypatch.setattr(gr, "publish_order", lambda n: list(range(n)))
    elif rule == "the producer's order always reversed":      # right up to 12 brokers only
        family = "publish-order"
        monkeypatch.setattr(gr, "publish_order", lambda n: list(range(n))[::-1])
    elif rule == "the producer sorts by broker name (Java)":
        family = "route"
        real = gr.publish_queues

        def by_name(topic: str, rows: Any, ids: Any, conf: str = "") -> Any:
            return real(topic, sorted(rows, key=lambda r: r[0]), ids, conf)
        monkeypatch.setattr(gr, "publish_order", lambda n: list(range(n)))
        monkeypatch.setattr(gr, "publish_queues", by_name)
    elif rule == "the counter is used before it steps":
        family = "selector"

        def post(self: gs.RoundRobin, topic: str) -> int:
            value = self.indexer.get(topic, 0)
            self.indexer[topic] = value + 1
            return value
        monkeypatch.setattr(gs.RoundRobin, "_next", post)
    elif rule == "a retry does not skip its last broker":
        family = "selector"
        real_select = gs.RoundRobin.select
        monkeypatch.setattr(gs.RoundRobin, "select",
                            lambda self, topic, queues, last_broker="", key="":
                            real_select(self, topic, queues))
    elif rule == "machine room takes its rooms' queues (Java)":
        go_room = ga.machine_room

        def java_room(idcs: Any) -> Any:
            def strategy(group: str, current: str, mq_all: Any, cid_all: Any) -> Any:
                got = go_room(idcs)(group, current, mq_all, cid_all)
                if got is None:
                    return None
                pre = [q for q in mq_all if len(q.broker_name.split("@")) == 2
                       for i in idcs if i == q.broker_name.split("@")[0]]
                per, rem = divmod(len(pre), len(cid_all))
                index = list(cid_all).index(current)
                return pre[per * index:per * index + per] + (
                    [pre[index + per * len(cid_all)]] if rem > index else [])
            return strategy
        monkeypatch.setattr(ga, "machine_room", java_room)
    elif rule == "machine room splits like Java":
        from rocketlb_core.javamath import java_split

        real_split = str.split

        class JavaSplit(str):
            def split(self, sep: Any = None, maxsplit: int = -1) -> list[str]:
                return java_split(str(self), sep) if sep == "@" else real_split(self, sep)
        real_of = ga.GoQueue.of
        monkeypatch.setattr(ga.GoQueue, "of", classmethod(
            lambda cls, row: ga.GoQueue(row[0], JavaSplit(row[1]), row[2])
            if isinstance(row[1], str) else real_of(row)))
    elif rule == "the ring hashes with MD5 (Java)":
        from rocketlb_core.consumer.consistent_hash import md5_hash

        monkeypatch.setattr(ga, "_crc32", lambda text: md5_hash(text) & 0xFFFFFFFF)
    else:
        family = "selector"

        def fnv1(text: str) -> int:
            h = 0x811C9DC5
            for byte in text.encode("utf-8"):
                h = ((h * 0x01000193) & 0xFFFFFFFF) ^ byte
            return h
        monkeypatch.setattr(gs, "fnv1a32", fnv1)
    answer: Any = {"allocate": allocate_answer, "selector": selector_answer,
                   "route": route_answer,
                   "publish-order": lambda c: gr.publish_order(c["n"])}[family]
    expect: Any = {"allocate": lambda c: c["expect"], "selector": lambda c: c["expect"],
                   "route": lambda c: {k: c[k] for k in ("subscribe", "publish", "order_topic")},
                   "publish-order": lambda c: c["order"]}[family]
    assert _wrong(family, answer, expect) > 5, rule


def _java(rows: list[list[Any]]) -> list[MessageQueue]:
    return [MessageQueue(t, b, q) for t, b, q in rows]


def _java_rows(qs: list[MessageQueue] | None) -> list[list[Any]] | None:
    return None if qs is None else [[q.topic, q.broker_name, q.queue_id] for q in qs]


def test_java_and_go_allocate_alike_with_avg_and_avg_by_circle() -> None:
    """Where Go answers a share (not nil), Java's AVG, AVG_BY_CIRCLE and CONFIG answer the same
    share on the same (unsorted) lists; the Go machine-nearby strategy is AVG."""
    compared = Counter()
    for c in _cases("allocate"):
        if c["strategy"] not in ("averagely", "averagely-circle", "machine-nearby", "config") \
                or c["expect"] is None:
            continue
        strategy = java.avg_by_circle() if c["strategy"] == "averagely-circle" else \
            java.config(_java(c["params"]["list"])) if c["strategy"] == "config" else java.avg()
        got = strategy.allocate(c["group"], c["current"], _java(c["mq_all"]), c["cid_all"])
        assert _java_rows(got) == c["expect"], c["id"]
        compared[c["strategy"]] += 1
    assert min(compared.values()) > 40


def test_a_room_named_twice_runs_the_go_block_past_the_list() -> None:
    """The Go machine room counts a room's queues once per time the room is listed; the block
    then reaches past ``mq_all`` and Go panics, index out of range (Java's set of rooms counts
    each queue once)."""
    qs = [ga.GoQueue("T", "hz@b", i) for i in range(4)]
    with pytest.raises(ga.GoPanic, match=r"index out of range \[4\] with length 4"):
        ga.machine_room(["hz", "hz"])("g", "c1", qs, ["c1"])
    assert [q.queue_id for q in ga.machine_room(["hz"])("g", "c1", qs, ["c1"]) or ()] == \
        [0, 1, 2, 3]


def test_java_and_go_differ_with_machine_room_and_consistent_hash() -> None:
    """On the same cases, Java's MACHINE_ROOM and CONSISTENT_HASH answer another share often:
    a group mixing the two clients with either strategy holds queues twice or not at all."""
    differ = Counter()
    total = Counter()
    for c in _cases("allocate"):
        if c["expect"] is None or isinstance(c["expect"], dict):
            continue
        if c["strategy"] == "machine-room":
            strategy: Any = java.machine_room(c["params"]["consumeridcs"])
        elif c["strategy"] == "consistent-hash" and c["params"]["virtual_nodes"] > 0:
            strategy = java_consistent_hash(c["params"]["virtual_nodes"])
        else:
            continue
        got = strategy.allocate(c["group"], c["current"], _java(c["mq_all"]), c["cid_all"])
        total[c["strategy"]] += 1
        differ[c["strategy"]] += sorted(_java_rows(got) or []) != sorted(c["expect"])
    assert total["machine-room"] > 40
    assert total["consistent-hash"] > 25
    assert differ["machine-room"] > total["machine-room"] // 10
    assert differ["consistent-hash"] > total["consistent-hash"] // 2


def test_the_producers_queue_order_is_the_name_servers_reversed_up_to_twelve() -> None:
    """One call of ``routeData2PublishInfo`` (vectors) reverses the name server's order up to
    12 brokers (Go 1.19 and later) and permutes it otherwise past 12; Java sorts the queue data
    by broker name (spec 2.1)."""
    orders = {c["n"]: c["order"] for c in _cases("publish-order")}
    assert all(orders[n] == list(range(n))[::-1] for n in range(13))
    assert all(orders[n] != list(range(n))[::-1] for n in range(13, 150))
    assert orders[13] == slice_permutation(13, lambda i, j: i >= j)


def test_a_lone_2_1_2_producer_keeps_the_name_servers_order() -> None:
    """2.1.2 runs the reordering twice for a lone producer (fact
    go.publish-order-twice-since-2.1.2): the two reversals cancel up to 12 brokers; 2.1.1 runs
    it once; producers sharing a 2.1.2 client get other passes."""
    rows = [[f"broker-{i}", 1, 1, 6] for i in range(12)]
    ids = {r[0]: [0] for r in rows}
    names = [r[0] for r in rows]
    assert [q.broker_name for q in gr.producer_queues("T", rows, ids)] == names
    assert [q.broker_name for q in gr.producer_queues("T", rows, ids, release="2.1.1")] == \
        names[::-1]
    assert [q.broker_name for q in gr.producer_queues("T", rows, ids, producers=2,
                                                     index=1)] == names[::-1]
    many = [[f"broker-{i}", 1, 1, 6] for i in range(20)]
    twice = [q.broker_name for q in gr.producer_queues("T", many, {r[0]: [0] for r in many})]
    perm = gr.publish_order(20)
    assert twice == [many[perm[perm[i]]][0] for i in range(20)]
    assert twice != [many[i][0] for i in range(20)]          # past 12, not the identity
    with pytest.raises(ValueError, match="release"):
        gr.producer_queues("T", rows, ids, release="2.2.0")


def test_the_order_before_allocating_differs_from_java_above_u_ffff() -> None:
    """``doBalance`` sorts with Go's byte order (code points); Java compares UTF-16 code units,
    so a broker named with a character above U+FFFF sorts before one with U+FF5E in Java, after
    it in Go: a mixed group then splits two different lists (spec 1.1)."""
    names = ["broker-\uff5e", "broker-\U0001f600"]
    go_order, _ = ga.balance_order([ga.GoQueue("T", b, 0) for b in names], [])
    java_order = sorted(MessageQueue("T", b, 0) for b in names)
    assert [q.broker_name for q in go_order] == names
    assert [q.broker_name for q in java_order] == names[::-1]


def test_the_client_ids() -> None:
    ids = {(c["instance_name"], c["unit_name"]): c["expect"] for c in _cases("client-id")}
    assert any(v.endswith("@<pid>") for v in ids.values())
    assert all(gr.client_id(c["client_ip"], c["instance_name"], c["unit_name"], "<pid>")
               == c["expect"] for c in _cases("client-id"))


def test_the_vector_file_is_what_the_go_client_makes_today(tmp_path: Path) -> None:
    """The generator, built from ``vectorgen/go`` against the module pinned in its ``go.sum``,
    makes the shipped file's first cases again, byte for byte."""
    run = subprocess.run([sys.executable, "-m", "rocketlb_core.vectorgen.go_client", "--check",
                          "--cases", "400"], capture_output=True, text=True, timeout=900,
                         cwd=Path(__file__).parent.parent)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "same" in run.stderr
    assert "(400 cases)" in run.stderr
