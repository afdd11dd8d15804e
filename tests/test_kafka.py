"""Kafka's assignors (``rocketlb_core.kafka``) against vectors made by Kafka's own released
classes, and the vectors against a fresh run of those classes (resolved through Maven)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core.conformance.report import Report
from rocketlb_core.conformance.runner import run_file
from rocketlb_core.javamath import (
    JavaHashMap,
    java_grown_capacity,
    java_hash_order,
    java_spread,
    java_string_hash,
)
from rocketlb_core.kafka.assignors import (
    ASSIGNORS,
    KafkaAssignorError,
    Member,
    StickyMember,
    Topic,
    cooperative_sticky_assign,
    eager_sticky_assign,
    range_assign,
    round_robin_assign,
    uniform_assign,
)
from rocketlb_core.kafka.conformance import (
    case_inputs,
    case_jvm,
    run_assignor_case,
    run_uniform_case,
)
from rocketlb_core.kafka.group import SESSION_TIMEOUT_MS, KafkaChange, member_timeline
from rocketlb_core.kafka.partitioner import BuiltInPartitioner, murmur2, partition_for_key
from rocketlb_core.kafka.vectors import FILES
from rocketlb_core.vectorgen import read_cases

VECTORS = Path(__file__).parent / "vectors" / "kafka"


@pytest.mark.parametrize("name", [f.name for f in FILES])
def test_every_vector_passes(name: str) -> None:
    report = run_file(VECTORS / name)
    assert report.failures() == []
    if "partitioner" in name:
        assert report.kind == "kafka-partitioner"
        steps = [s for line in read_cases(VECTORS / name) for s in json.loads(line)["steps"]]
        assert report.passed == sum(s["op"] not in ("stats", "metadata") for s in steps) >= 10_000
    else:
        assert report.kind == "kafka-assignor"
        spec = next(f for f in FILES if f.name == name)
        assert report.passed == spec.cases + len(spec.extra)


class _NotAdaptive(BuiltInPartitioner):
    """KIP-480's sticky partitioner without KIP-794's weights: queue sizes are ignored."""

    def update_load_stats(self, queue_sizes: Sequence[int] | None,
                          partition_ids: Sequence[int], length: int) -> None:
        self.cft = None


def test_the_partitioner_vectors_tell_adaptive_from_uniform_switching() -> None:
    """The same scenarios with the weights ignored must pick another partition somewhere, and
    murmur2 must differ from a plain hash: the vectors exercise what KIP-794 added."""
    name = "kafka-partitioner-4.3.1.jsonl.gz"
    wrong = 0
    draws: list[int] = []
    for line in read_cases(VECTORS / name):
        obj = json.loads(line)
        available = obj["available"]
        bp = _NotAdaptive(obj["sticky_batch_size"], lambda: draws.pop(0))
        for step in obj["steps"]:
            if step["op"] == "stats":
                bp.update_load_stats(step["queue_sizes"], step["partition_ids"], step["length"])
            elif step["op"] == "append":
                draws[:] = step["draws"]
                info = bp.peek(available)
                bp.update_partition_info(info, step["bytes"], available, step["enable_switch"])
                wrong += bp.peek(available).partition != step["next"]
    assert wrong > 0


def test_murmur2_on_kafkas_own_test_values() -> None:
    """``UtilsTest.testMurmur2`` in apache/kafka: one value per tail length and a long key."""
    cases = {b"21": -973932308, b"foobar": -790332482,
             b"a-little-bit-long-string": -985981536,
             b"a-little-bit-longer-string": -1486304829,
             b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971, b"abc": 479470107}
    assert {k: murmur2(k) for k in cases} == cases
    assert partition_for_key(b"foobar", 7) == (-790332482 & 0x7FFFFFFF) % 7


@pytest.mark.parametrize(("name", "other"), [
    ("kafka-range-4.3.1.jsonl.gz", "range@3.4"),
    ("kafka-range-3.4.0.jsonl.gz", "range"),
    ("kafka-range-4.3.1.jsonl.gz", "roundrobin"),
    ("kafka-roundrobin-4.3.1.jsonl.gz", "range"),
    ("kafka-sticky-4.3.1.jsonl.gz", "cooperative-sticky"),
    ("kafka-cooperative-sticky-4.3.1.jsonl.gz", "sticky"),
    ("kafka-sticky-4.3.1.jsonl.gz", "roundrobin"),
    ("kafka-sticky-unequal-4.3.1.jsonl.gz", "cooperative-sticky"),
    ("kafka-cooperative-sticky-unequal-4.3.1.jsonl.gz", "sticky"),
    ("kafka-sticky-unequal-4.3.1.jsonl.gz", "roundrobin"),
    ("kafka-uniform-4.3.1.jsonl.gz", "uniform@4.0"),
    ("kafka-uniform-4.0.0.jsonl.gz", "uniform"),
    ("kafka-server-range-4.3.1.jsonl.gz", "uniform"),
    ("kafka-uniform-4.3.1.jsonl.gz", "server-range"),
    ("kafka-uniform-unequal-4.3.1.jsonl.gz", "server-range"),
    ("kafka-server-range-unequal-4.3.1.jsonl.gz", "uniform"),
])
def test_each_assignors_vectors_fail_under_another_assignors_rules(name: str, other: str
                                                                    ) -> None:
    report = Report(name, "kafka-assignor")
    for line in read_cases(VECTORS / name):
        run_assignor_case(json.loads(line), report, assignor=other)
    assert report.failed > 0
    if {name.split("-")[1], other.split("@")[0]} == {"range"}:
        # the two releases' range assignors give the same shares in another order
        for line in read_cases(VECTORS / name):
            obj = json.loads(line)
            members = [Member(m["id"], tuple(m["topics"]), m["instance"])
                       for m in obj["members"]]
            got = ASSIGNORS[other](dict(obj["topics"]), members)
            want = {k: sorted((t, p) for t, ps in runs for p in ps)
                    for k, runs in obj["expected"].items()}
            assert {k: sorted(v) for k, v in got.items()} == want


def test_sticky_vectors_cover_histories_and_stale_claims() -> None:
    seen = {"no_history": 0, "moved": 0, "stale_claim": 0, "more_members": 0, "withheld": 0}
    for line in read_cases(VECTORS / "kafka-cooperative-sticky-4.3.1.jsonl.gz"):
        obj = json.loads(line)
        members = obj["members"]
        owned = [(t, p) for m in members for t, ps in m["owned"] for p in ps]
        total = sum(n for _, n in obj["topics"])
        given = sum(len(ps) for runs in obj["expected"].values() for _, ps in runs)
        seen["no_history"] += not owned
        seen["stale_claim"] += len(owned) != len(set(owned))
        seen["more_members"] += len(members) > total
        seen["withheld"] += given < total            # the cooperative first round holds back
        seen["moved"] += any((t, p) not in {(a, b) for a, bs in m["owned"] for b in bs}
                             for m in members if m["owned"]
                             for t, ps in obj["expected"][m["id"]] for p in ps)
    assert all(v >= 20 for v in seen.values()), seen


def _cases(*names: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every case of the vector files ``names``, with its file's name."""
    for name in names:
        for line in read_cases(VECTORS / name):
            yield name, json.loads(line)


def test_unequal_sticky_vectors_cover_the_general_builder() -> None:
    """Most cases of the unequal family reach Kafka's general builder (the members' topics
    differ), with histories where a member dropped a topic it held (a revocation), topics that
    lost their metadata, stale claims of an older generation, and the case where Kafka's loop
    never ends; the cooperative cases withhold partitions that change owner."""
    seen = {"unequal": 0, "dropped_topic": 0, "no_metadata": 0, "older_claim": 0,
            "no_termination": 0, "withheld": 0}
    for name, obj in _cases("kafka-sticky-unequal-4.3.1.jsonl.gz",
                            "kafka-cooperative-sticky-unequal-4.3.1.jsonl.gz"):
        members = obj["members"]
        seen["unequal"] += len({frozenset(m["topics"]) for m in members}) > 1
        seen["dropped_topic"] += any(t not in m["topics"] for m in members for t, _ in m["owned"])
        seen["no_metadata"] += any(n == 0 for _, n in obj["topics"])
        seen["older_claim"] += any(m["generation"] == 0 for m in members)
        error = obj["expected"].get("error")
        seen["no_termination"] += bool(error) and error["type"] == "NoTermination"
        if "cooperative" in name and not error:
            total = sum(n for t, n in obj["topics"] if any(t in m["topics"] for m in members))
            seen["withheld"] += sum(len(ps) for runs in obj["expected"].values()
                                    for _, ps in runs) < total
    assert seen["unequal"] >= 2_000, seen
    assert seen["no_termination"] == 2, seen
    assert all(v >= 20 for k, v in seen.items() if k != "no_termination"), seen


def test_unequal_server_side_vectors_cover_the_heterogeneous_builders() -> None:
    """Most cases of the coordinator's unequal family have members on different topics, with
    members whose target assignment still holds a topic they left, and groups where some topic
    has a single subscriber (which the uniform assignor never rebalances)."""
    seen = {"unequal": 0, "left_topic": 0, "single_subscriber": 0, "moved": 0}
    def flat(runs: list[list[Any]]) -> set[tuple[str, int]]:
        return {(t, p) for t, ps in runs for p in ps}

    for name, obj in _cases("kafka-uniform-unequal-4.3.1.jsonl.gz",
                            "kafka-server-range-unequal-4.3.1.jsonl.gz"):
        members = obj["members"]
        seen["unequal"] += len({frozenset(m["topics"]) for m in members}) > 1
        seen["left_topic"] += any(t not in m["topics"] for m in members for t, _ in m["owned"])
        seen["single_subscriber"] += any(sum(t in m["topics"] for m in members) == 1
                                         for t, _, _ in obj["topics"])
        want = obj["expected"]
        if "uniform" in name and "error" not in want:
            seen["moved"] += any(flat(want[m["id"]]) != flat(m["owned"])
                                 for m in members if m["owned"])
    assert seen["unequal"] >= 2_000, seen
    assert all(v >= 20 for v in seen.values()), seen


def test_sticky_assignor_example_2_from_kafkas_javadoc() -> None:
    """``StickyAssignor``'s own documentation, example 2: C0 on t0, C1 on t0 and t1, C2 on all
    three (1, 2 and 3 partitions). Sticky gives C1 both of t1 and C2 all of t2; when C0 leaves,
    C1 takes t0p0 and keeps the rest (round robin would move two partitions)."""
    partitions = {"t0": 1, "t1": 2, "t2": 3}
    first = eager_sticky_assign(partitions, [StickyMember("C0", ("t0",)),
                                             StickyMember("C1", ("t0", "t1")),
                                             StickyMember("C2", ("t0", "t1", "t2"))])
    assert {m: sorted(tps) for m, tps in first.items()} == {
        "C0": [("t0", 0)], "C1": [("t1", 0), ("t1", 1)],
        "C2": [("t2", 0), ("t2", 1), ("t2", 2)]}
    second = eager_sticky_assign(partitions, [
        StickyMember("C1", ("t0", "t1"), None, tuple(first["C1"]), 1),
        StickyMember("C2", ("t0", "t1", "t2"), None, tuple(first["C2"]), 1)])
    assert second == {"C1": [("t1", 0), ("t1", 1), ("t0", 0)],
                      "C2": [("t2", 0), ("t2", 1), ("t2", 2)]}
    robin = round_robin_assign(partitions, [Member("C1", ("t0", "t1")),
                                            Member("C2", ("t0", "t1", "t2"))])
    assert robin == {"C1": [("t0", 0), ("t1", 1)],
                     "C2": [("t1", 0), ("t2", 0), ("t2", 1), ("t2", 2)]}


def test_the_general_builders_endless_loop_is_found_not_run() -> None:
    """The one case of the unequal family where Kafka's classes never return: the port stops
    when a reassignment pass starts from a state an earlier pass started from."""
    obj = next(json.loads(line) for line in read_cases(VECTORS / "kafka-sticky-unequal-4.3.1"
                                                                 ".jsonl.gz")
               if '"NoTermination"' in line)
    partitions, members = case_inputs(obj)
    with pytest.raises(KafkaAssignorError) as caught:
        eager_sticky_assign(partitions, members)
    assert caught.value.kind == "NoTermination"
    # one member fewer and it ends: the loop is a property of the input, not of the port
    assert eager_sticky_assign(partitions, members[:-1])


def test_vectors_cover_what_the_assignors_branch_on() -> None:
    seen = {"static": 0, "unequal": 0, "no_metadata": 0, "more_members": 0, "non_ascii": 0}
    for line in read_cases(VECTORS / "kafka-range-4.3.1.jsonl.gz"):
        obj = json.loads(line)
        members = obj["members"]
        seen["static"] += any(m["instance"] for m in members)
        seen["unequal"] += len({tuple(sorted(m["topics"])) for m in members}) > 1
        seen["no_metadata"] += any(n == 0 for _, n in obj["topics"])
        seen["more_members"] += any(
            n < sum(t in m["topics"] for m in members) for t, n in obj["topics"] if n)
        seen["non_ascii"] += any(not m["id"].isascii() for m in members)
    assert all(v >= 100 for v in seen.values()), seen


def test_range_and_round_robin_by_hand() -> None:
    """The shapes chapter 8 draws: 7 partitions, 3 members with equal subscriptions."""
    members = [Member(m, ("T",)) for m in ("c", "a", "b")]
    assert range_assign({"T": 7}, members) == {
        "a": [("T", 0), ("T", 1), ("T", 2)], "b": [("T", 3), ("T", 4)], "c": [("T", 5), ("T", 6)]}
    assert round_robin_assign({"T": 7}, members) == {
        "a": [("T", 0), ("T", 3), ("T", 6)], "b": [("T", 1), ("T", 4)], "c": [("T", 2), ("T", 5)]}
    # a static member (group.instance.id) sorts before every dynamic one
    static = [Member("a", ("T",)), Member("z", ("T",), instance_id="i-1")]
    assert range_assign({"T": 3}, static)["z"] == [("T", 0), ("T", 1)]


def test_java_hash_order_put_and_compute_if_absent() -> None:
    """``topic-V.`` and ``yp中ADb_g`` share a bin of a 16-slot HashMap: put keeps them in
    insertion order, computeIfAbsent puts the newer first (what the 3.4 range assignor did)."""
    keys = ["yp中ADb_g", "topic-VK", "topic-V."]
    assert java_hash_order(keys) == ["topic-VK", "yp中ADb_g", "topic-V."]
    assert java_hash_order(keys, compute_if_absent=True) == ["topic-VK", "topic-V.", "yp中ADb_g"]


EQUAL_HASH_IDS = ["AaAaAa", "AaAaBB", "AaBBAa", "AaBBBB", "BBAaAa", "BBAaBB", "BBBBAa", "BBBBBB"]
COLLIDE = [f.name for f in FILES if f.family == "collide"]


def _case(name: str, k: int) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(read_cases(VECTORS / name, k + 1)[k])
    return obj


def test_issue_33_eight_member_ids_of_one_hash() -> None:
    """Eight member ids with one ``String.hashCode`` share a bin: Kafka's range assignor gives
    each a partition, in that order (the port used to raise). What Kafka printed, from the
    vectors; the same first case in every colliding file passes (``test_every_vector_passes``)."""
    obj = _case("kafka-range-collide-4.3.1.jsonl.gz", 0)
    assert len({java_string_hash(m) for m in EQUAL_HASH_IDS}) == 1
    assert [m["id"] for m in obj["members"]] == EQUAL_HASH_IDS
    assert obj["expected"] == {m: [["t", [i]]] for i, m in enumerate(EQUAL_HASH_IDS)}
    partitions, members = case_inputs(obj)
    assert range_assign(partitions, members) == {m: [("t", i)]
                                                  for i, m in enumerate(EQUAL_HASH_IDS)}
    for name in COLLIDE:
        assert [m["id"] for m in _case(name, 0)["members"]] == EQUAL_HASH_IDS


def test_issue_33_compute_if_absent_grows_the_table_late() -> None:
    """One consumer on t1 ... t13: the 3.4 range assignor's topic map, filled by
    ``computeIfAbsent``, still has 16 buckets after the 13th topic (``put``'s has 32), and
    the eager sticky assignor reads a member's partitions through such a map: m1 owned
    t1-0 ... t13-0 and keeps t10-0 before t6-0. What Kafka printed, from the vectors."""
    order = ["t4", "t5", "t10", "t6", "t7", "t12", "t8", "t11", "t9", "t13", "t1", "t2", "t3"]
    obj = _case("kafka-range-collide-3.4.0.jsonl.gz", 1)
    assert obj["expected"] == {"c": [[t, [0]] for t in order]}
    partitions, members = case_inputs(obj)
    assert range_assign(partitions, members, before_kip881=True) == {"c": [(t, 0) for t in order]}
    put_order = ["t4", "t5", "t6", "t7", "t8", "t9", "t10", "t12", "t11", "t13", "t1", "t2", "t3"]
    assert _case("kafka-range-collide-4.3.1.jsonl.gz", 1)["expected"] == {
        "c": [[t, [0]] for t in put_order]}
    obj = _case("kafka-sticky-collide-4.3.1.jsonl.gz", 1)
    assert [(m["id"], m["topics"], m["generation"]) for m in obj["members"]] == [
        ("m0", ["t13"], None), ("m1", ["t6", "t10"], 1)]
    assert obj["expected"]["m1"] == [["t10", [0]], ["t6", [0]]]
    partitions, members = case_inputs(obj)
    assert eager_sticky_assign(partitions, members)["m1"] == [("t10", 0), ("t6", 0)]


def test_compute_if_absent_on_a_present_key_grows_the_table() -> None:
    """The same with two partitions a topic: ``computeIfAbsent`` runs once a (member, topic)
    in the 3.4 range assignor and once a partition in the eager sticky assignor's user data,
    and the 14th call, on a key already there, grows the table to 32 buckets: t6 now comes
    before t10. What Kafka printed, from the vectors."""
    order = ["t4", "t5", "t6", "t7", "t8", "t9", "t10", "t12", "t11", "t13", "t1", "t2", "t3"]
    obj = _case("kafka-range-collide-3.4.0.jsonl.gz", 2)
    assert [m["id"] for m in obj["members"]] == ["c0", "c1"]
    assert obj["expected"]["c0"] == [[t, [0]] for t in order]
    partitions, members = case_inputs(obj)
    assert range_assign(partitions, members, before_kip881=True)["c0"] == [(t, 0) for t in order]
    obj = _case("kafka-sticky-collide-4.3.1.jsonl.gz", 2)
    assert obj["expected"]["m1"] == [["t6", [0, 1]], ["t10", [0, 1]]]
    partitions, members = case_inputs(obj)
    assert eager_sticky_assign(partitions, members)["m1"] == [
        ("t6", 0), ("t6", 1), ("t10", 0), ("t10", 1)]


def test_colliding_vectors_reach_tree_bins_and_every_table_size() -> None:
    """The colliding family does what it is for: member maps and topic maps of 16 to 1,024
    buckets, bins of more than eight keys of one hash and of different hashes, bins that Java
    turned into trees, and 3.4's ``computeIfAbsent`` orders that a table grown on insertion
    (the port before issue 33) gets wrong."""
    sizes: set[int] = set()
    seen = {"tree": 0, "one_hash_bin": 0, "mixed_bin": 0, "late_growth": 0, "sticky_tree": 0}
    for name, obj in _cases(*COLLIDE):
        for keys in ([m["id"] for m in obj["members"]],
                     [t for m in obj["members"] for t in m["topics"]]):
            table = JavaHashMap()
            for k in keys:
                table.put(k)
            sizes.add(table.capacity)
            bins: dict[int, set[int]] = {}
            for k in set(keys):
                h = java_spread(java_string_hash(k))
                bins.setdefault(h & (table.capacity - 1), set()).add(h)
            tree = table.tree_bins() > 0
            seen["tree"] += tree
            seen["sticky_tree"] += tree and "sticky" in name
            seen["one_hash_bin"] += any(len(hs) == 1 and sum(
                java_spread(java_string_hash(k)) in hs for k in set(keys)) > 8
                for hs in bins.values())
            seen["mixed_bin"] += any(len(hs) > 8 for hs in bins.values())
        if "3.4.0" in name:         # the order the port had before: grown on insertion
            topics = list(dict.fromkeys(t for m in obj["members"] for t in m["topics"]))
            n = java_grown_capacity(len(topics))
            early = sorted(range(len(topics)), key=lambda i: (
                java_spread(java_string_hash(topics[i])) & (n - 1), -i))
            seen["late_growth"] += [topics[i] for i in early] != java_hash_order(
                [t for m in obj["members"] for t in m["topics"]], compute_if_absent=True)
    assert {16, 32, 64, 128, 256, 512, 1024} <= sizes, sorted(sizes)
    assert all(v >= 20 for v in seen.values()), seen


@pytest.mark.jvm
def test_the_vectors_are_what_kafkas_own_classes_print() -> None:
    """Resolve kafka-clients 4.3.1, 3.9.1 and 3.4.0 through Maven, run the generator against
    each, and compare its first cases with the committed files byte for byte."""
    proc = subprocess.run([sys.executable, "-m", "rocketlb_core.kafka.vectors", "--check",
                           "--cases", "300", "--out", str(VECTORS)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # a file made on a Java this machine lacks is skipped (Java 25 for the *-java25 files)
    assert proc.stderr.count("same") + proc.stderr.count("skipped") == len(FILES), proc.stderr
    assert proc.stderr.count("same") >= sum(f.jvm == 17 for f in FILES), proc.stderr


# ------------------------------------------------------------------ Kafka's view of a group

def _ids(change: KafkaChange) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for mid, member, _ in change.view:
        out.setdefault(member, []).append(mid)
    return out


def test_a_dead_member_stays_for_its_session_and_a_leaving_one_goes_at_once() -> None:
    rows = [(0, "join", "a", "10.0.0.1@1"), (0, "join", "b", "10.0.0.2@1"),
            (0, "join", "c", "10.0.0.3@1"), (10_000, "kill", "a", "10.0.0.1@1"),
            (20_000, "crash", "b", "10.0.0.2@1"), (30_000, "leave", "c", "10.0.0.3@1")]
    changes = member_timeline(rows, seed=1)
    at = {ch.time_ms: ch for ch in changes}
    assert set(_ids(at[10_000])) == {"a", "b", "c"}                 # killed: still a member
    assert len(at[10_000].alive) == 2
    assert set(_ids(at[30_000])) == {"a", "b"}                      # LeaveGroup: gone at once
    assert set(_ids(at[10_000 + SESSION_TIMEOUT_MS])) == {"b"}      # kill -9: 45 s, like a crash
    assert set(_ids(at[20_000 + SESSION_TIMEOUT_MS])) == set()
    assert member_timeline(rows, seed=1) == changes
    assert member_timeline(rows, seed=2) != changes                 # the member ids come from it


def test_no_duplicate_client_id_trap_and_a_restart_is_a_new_member() -> None:
    cid = "10.0.0.1@4242"                       # two processes with one client id
    rows = [(0, "join", "a", cid), (0, "join", "b", cid), (5_000, "crash", "a", cid),
            (6_000, "join", "a", cid)]
    changes = member_timeline(rows)
    first = changes[0]
    ids = _ids(first)
    assert ids["a"] != ids["b"]
    assert all(i.startswith(cid + "-") for v in ids.values() for i in v)
    members = [Member(mid, ("T",)) for mid, _, _ in first.view]
    shares = range_assign({"T": 8}, members)
    assert sorted(len(v) for v in shares.values()) == [4, 4]        # both consume, half each
    restarted = next(ch for ch in changes if ch.time_ms == 6_000)
    assert len(_ids(restarted)["a"]) == 2       # the dead process's id waits out its session
    assert len(restarted.alive) == 2


def test_the_cooperative_protocol_settles_in_two_rounds_where_the_eager_one_takes_one() -> None:
    """Four members own 12 partitions; two join. The eager sticky assignor moves two partitions
    from each old member at once; the cooperative one first only revokes them (unowned until
    the second round), then hands them over: the same result in two rebalances."""
    old = [StickyMember(f"m{i}", ("T",), None, tuple(("T", p) for p in range(i, 12, 4)), 1)
           for i in range(4)]
    group = [*old, StickyMember("m4", ("T",)), StickyMember("m5", ("T",))]
    eager = eager_sticky_assign({"T": 12}, group)
    first = cooperative_sticky_assign({"T": 12}, group)
    assert first["m4"] == first["m5"] == []
    assert sum(map(len, first.values())) == 8                       # four partitions withheld
    assert all(set(first[m.member_id]) <= set(m.owned) for m in old)  # nothing moves yet
    second = cooperative_sticky_assign({"T": 12}, [
        StickyMember(m, ("T",), None, tuple(first.get(m, ())), 2) for m in sorted(eager)])
    assert {m: sorted(v) for m, v in second.items()} == {m: sorted(v) for m, v in eager.items()}
    assert sorted(len(v) for v in eager.values()) == [2] * 6


def test_uniform_assignor_41_keeps_more_than_40() -> None:
    """KIP-848's server-side assignor: 4.1 passes an extra slot on when the member cannot fill
    it from what it holds, so it revokes fewer partitions than 4.0 on the same histories."""
    revoked = {"uniform": 0, "uniform@4.0": 0}
    for line in read_cases(VECTORS / "kafka-uniform-4.3.1.jsonl.gz"):
        obj = json.loads(line)
        topics = [Topic(n, c, tuple(u)) for n, c, u in obj["topics"]]
        members = [(m["id"], {t: ps for t, ps in m["owned"]}) for m in obj["members"]]
        for name in revoked:
            got = uniform_assign(topics, members, extra_to_first=name == "uniform@4.0",
                                 jvm=case_jvm(obj))
            revoked[name] += sum(len(set(ps) - set(got[m].get(t, ())))
                                 for m, owned in members for t, ps in owned.items())
    assert revoked["uniform"] < revoked["uniform@4.0"], revoked


@pytest.mark.parametrize("version", ["4.3.1", "4.0.0"])
def test_issue_33_the_uniform_assignor_answers_by_the_jvm(version: str) -> None:
    """Issue 33's minimal case, case 0 of the ``uniform-jvm`` files, printed by
    kafka-group-coordinator's ``UniformAssignor`` on Java 17 and on Java 25: topics t2 ... t12
    and t17 with ids (0, 2) ... (0, 12) and (0, 17), one partition each, members m0 and m1
    holding nothing. ``new HashSet<>(12 topic ids)`` has 32 buckets on Java 17 and 16 on Java
    25, where t17's id (hash 17) comes first; the port answers each as its JVM did."""
    cases = {jvm: json.loads(read_cases(VECTORS / f"kafka-uniform-jvm-{version}{tail}.jsonl.gz",
                                        1)[0])
             for jvm, tail in ((17, ""), (25, "-java25"))}
    m0 = {jvm: [t for t, _ in obj["expected"]["m0"]] for jvm, obj in cases.items()}
    assert m0[17] == ["t2", "t3", "t4", "t5", "t6", "t7"]
    assert m0[25] == ["t2", "t3", "t4", "t5", "t6", "t17"]
    for jvm, obj in cases.items():
        assert case_jvm(obj) == jvm
        assert obj["topics"] == [[f"t{i}", 1, [0, i]] for i in (*range(2, 13), 17)]
        assert [(m["id"], m["owned"]) for m in obj["members"]] == [("m0", []), ("m1", [])]
        topics = [Topic(n, c, (u[0], u[1])) for n, c, u in obj["topics"]]
        want = {m: {t: ps for t, ps in runs} for m, runs in obj["expected"].items()}
        extra = version == "4.0.0"
        assert uniform_assign(topics, [("m0", {}), ("m1", {})], extra_to_first=extra,
                              jvm=jvm) == want
        other = 42 - jvm                                     # 25 for 17, 17 for 25
        assert uniform_assign(topics, [("m0", {}), ("m1", {})], extra_to_first=extra,
                              jvm=other) != want
    assert uniform_assign([Topic(n, c, (u[0], u[1])) for n, c, u in cases[25]["topics"]],
                          [("m0", {}), ("m1", {})])["m0"] == {t: [0] for t in m0[25]}


@pytest.mark.parametrize("name", [f.name for f in FILES
                                  if f.assignor == "uniform"
                                  and f.family not in ("unequal", "vanish", "empty")])
def test_the_uniform_vectors_fail_on_the_other_jvm(name: str) -> None:
    """Each homogeneous uniform file, checked as if made on the other JVM, fails (the
    ``uniform-jvm`` files on most cases, the random ones on about one in 150; the ``vanish``
    files, half heterogeneous and of small groups, answer alike on both)."""
    report = Report(name, "kafka-assignor")
    for line in read_cases(VECTORS / name):
        obj = json.loads(line)
        obj["source"]["jvm"] = 42 - case_jvm(obj)
        run_assignor_case(obj, report)
    assert report.failed >= (100 if "-jvm-" in name else 5), report.failed


@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky"])
def test_a_generation_in_the_subscription_decides_stale_claims(assignor: str) -> None:
    """The ``generations`` vectors (issue 33, item 4): subscriptions carry the generation id, as
    the ConsumerCoordinator builds them, members are of generations 1 to 3 and most groups hold
    a partition claimed twice. The eager assignor reads an earlier claimant's generation from
    its subscription: ignoring it there fails about a fifth of the cases; the cooperative one
    always read it there."""
    from dataclasses import replace

    from rocketlb_core.kafka.conformance import expected_assignment
    name = f"kafka-{assignor}-generations-4.3.1.jsonl.gz"
    cases = [json.loads(line) for line in read_cases(VECTORS / name)]
    assert all(c["generation_in_subscription"] for c in cases)
    twice = 0
    ignored = 0
    for c in cases:
        claims: dict[tuple[str, int], set[int | None]] = {}
        count: dict[tuple[str, int], int] = {}
        for m in c["members"]:
            for t, ps in m["owned"]:
                for p in ps:
                    claims.setdefault((t, p), set()).add(m["generation"])
                    count[(t, p)] = count.get((t, p), 0) + 1
        twice += any(n > 1 and len(claims[tp]) > 1 for tp, n in count.items())
        if "error" in c["expected"]:
            continue
        partitions, members = case_inputs(c)
        plain = [replace(m, generation_in_subscription=False) if isinstance(m, StickyMember)
                 else m for m in members]
        try:
            ignored += ASSIGNORS[assignor](partitions, plain) != expected_assignment(c)
        except KafkaAssignorError:
            ignored += 1
    assert twice >= 200, twice
    if assignor == "sticky":
        assert ignored >= 150, ignored
    else:
        assert ignored == 0


def test_the_server_range_assignor_orders_static_members_first() -> None:
    """The ``server-range-static`` vectors (issue 33, item 4): most members carry a
    ``group.instance.id``; the port passes them all, and fails most of them when it ignores the
    instance ids (orders members by member id alone)."""
    from rocketlb_core.kafka.assignors import server_range_assign
    name = "kafka-server-range-static-4.3.1.jsonl.gz"
    cases = [json.loads(line) for line in read_cases(VECTORS / name)]
    assert sum(any(m["instance"] for m in c["members"]) for c in cases) >= 450
    assert sum(any(m["instance"] is None for m in c["members"]) for c in cases) >= 200
    ignored = 0
    for c in cases:
        topics = [Topic(n, k, (u[0], u[1])) for n, k, u in c["topics"]]
        members = [(m["id"], {t: ps for t, ps in m["owned"]}) for m in c["members"]]
        subs = ({m["id"]: m["topics"] for m in c["members"]} if "topics" in c["members"][0]
                else None)
        want = {m: {t: ps for t, ps in runs} for m, runs in c["expected"].items()}
        got = server_range_assign(topics, members, subscriptions=subs,
                                  instances={m["id"]: m["instance"] for m in c["members"]})
        assert got == want, c["id"]
        ignored += server_range_assign(topics, members, subscriptions=subs) != want
    assert ignored >= 300, ignored
    # a small group by hand: the static member sorts first whatever its member id
    two = server_range_assign([Topic("t", 3, (0, 1))], [("a", {}), ("b", {}), ("c", {})],
                              instances={"a": None, "b": "zz", "c": "aa"})
    assert two == {"c": {"t": [0]}, "b": {"t": [1]}, "a": {"t": [2]}}


def test_members_on_different_topics_rocketmq_leaves_queues_kafka_does_not() -> None:
    """Chapter 4's trap side by side: RocketMQ splits a topic over the whole group, so the
    shares of members that do not subscribe it go unread (with AVG on 8 queues and 4 ids, the
    two non-subscribers' 2 + 2); every Kafka assignor reads every partition, and the sticky and
    uniform ones, which balance the group as a whole, give each of the four members 4."""
    from rocketlb_core.consumer.compare import MIXED_GROUP, mixed_subscriptions

    rows = mixed_subscriptions()
    by = {(r.strategy, r.topic): r for r in rows}
    assert by["AVG", "TopicB"].unconsumed == 4
    assert all(r.unconsumed > 0 for r in rows if r.design == "RocketMQ" and r.topic == "TopicB")
    assert all(r.unconsumed == 0 for r in rows if r.design == "RocketMQ" and r.topic == "TopicA")
    assert all(r.unconsumed == 0 for r in rows if r.design == "Kafka")
    for name in ("sticky", "cooperative-sticky", "uniform"):
        loads = dict(by[name, "TopicA"].loads)
        assert sorted(loads) == sorted(MIXED_GROUP)
        assert set(loads.values()) == {4}, (name, loads)
    assert dict(by["range", "TopicA"].loads) == {"c-1": 2, "c-2": 2, "c-3": 6, "c-4": 6}


@pytest.mark.parametrize(("assignor", "least"), [("range", 450), ("sticky", 500),
                                                  ("cooperative-sticky", 500)])
def test_the_racks_vectors_fail_when_racks_are_ignored(assignor: str, least: int) -> None:
    """The ``racks`` family (issue 33, item 4; KIP-881): consumers with a ``client.rack`` and
    partitions whose replicas sit on some racks. Most cases use rack-aware assignment (both sticky
    builders among them); the port passes them all (``test_every_vector_passes``) and fails most
    of them when it is not told the replicas' racks."""
    from rocketlb_core.kafka.assignors import _group, _partitions_per_topic, _RackInfo
    from rocketlb_core.kafka.conformance import case_racks, expected_assignment
    aware = unequal_aware = ignored = 0
    for line in read_cases(VECTORS / f"kafka-{assignor}-racks-4.3.1.jsonl.gz"):
        c = json.loads(line)
        partitions, members = case_inputs(c)
        group = _group(members)
        rack = _RackInfo.of(group, dict(_partitions_per_topic(group, partitions)), case_racks(c))
        aware += bool(rack.consumer_racks)
        unequal_aware += bool(rack.consumer_racks) and len(
            {frozenset(m["topics"]) for m in c["members"]}) > 1
        if "error" in c["expected"]:
            continue
        try:
            ignored += ASSIGNORS[assignor](partitions, members) != expected_assignment(c)
        except KafkaAssignorError:
            ignored += 1
    assert aware >= 500, aware
    assert unequal_aware >= 150, unequal_aware
    assert ignored >= least, ignored


def test_range_with_racks_by_hand() -> None:
    """KIP-881's example shape: two members in racks a and b, a topic of four partitions whose
    replicas alternate between the racks: each member gets the partitions of its rack (without
    racks: the first two and the last two)."""
    members = [Member("m1", ("t",), rack="a"), Member("m2", ("t",), rack="b")]
    racks = {"t": [["a"], ["b"], ["a"], ["b"]]}
    assert range_assign({"t": 4}, members, racks=racks) == {"m1": [("t", 0), ("t", 2)],
                                                            "m2": [("t", 1), ("t", 3)]}
    assert range_assign({"t": 4}, members) == {"m1": [("t", 0), ("t", 1)],
                                               "m2": [("t", 2), ("t", 3)]}
    # every partition on every rack: racks change nothing
    assert range_assign({"t": 4}, members, racks={"t": [["a", "b"]] * 4}) == range_assign(
        {"t": 4}, members)
    # kafka-clients 3.4 (before KIP-881) is handed the same Cluster and reads no racks
    from rocketlb_core.kafka.assignors import range_assign_3_4
    assert range_assign_3_4({"t": 4}, members, racks=racks) == range_assign({"t": 4}, members)


@pytest.mark.parametrize("name", ["kafka-uniform-vanish-4.3.1.jsonl.gz",
                                  "kafka-uniform-vanish-4.3.1-java25.jsonl.gz"])
def test_vanished_topics_stay_in_the_members_maps(name: str) -> None:
    """The ``vanish`` family (issue 33, item 4): topics leave the metadata while members still
    hold their partitions. Most cases have a member holding one; the port needs the vanished
    topics' ids (without them it cannot place them in the members' assignment maps), some cases
    come out otherwise when those ids are left out of the maps, and a member still subscribed
    to one fails as Kafka does."""
    cases = [json.loads(line) for line in read_cases(VECTORS / name)]
    jvm = case_jvm(cases[0])
    held = errors = stripped = unplaced = 0
    for c in cases:
        gone = {t for t, _ in c["vanished"]}
        holds = any(t in gone for m in c["members"] for t, _ in m["owned"])
        held += holds
        if "error" in c["expected"]:
            errors += 1
            continue
        topics = [Topic(n, k, (u[0], u[1])) for n, k, u in c["topics"]]
        subs = ({m["id"]: m["topics"] for m in c["members"]}
                if all("topics" in m for m in c["members"]) else None)
        want = {m: {t: ps for t, ps in runs} for m, runs in c["expected"].items()}
        if holds:
            try:
                uniform_assign(topics, [(m["id"], dict(m["owned"])) for m in c["members"]],
                               subscriptions=subs, jvm=jvm)
            except KeyError:                # the homogeneous builder iterates those maps
                unplaced += 1
        kept = [(m["id"], {t: ps for t, ps in m["owned"] if t not in gone}) for m in c["members"]]
        got = uniform_assign(topics, kept, subscriptions=subs, jvm=jvm)
        stripped += {m: got.get(m, {}) for m, _ in kept} != want
    assert held >= 800, held
    assert unplaced >= 300, unplaced
    assert errors >= 50, errors
    assert stripped >= 1, stripped


def test_the_partitioner_vectors_change_their_metadata() -> None:
    """The ``partitioner-metadata`` scenarios (issue 33, item 4): partitions lose and regain
    their leader and the topic grows between steps. The port passes every step
    (``test_every_vector_passes``); replayed on the first metadata throughout, many steps fail."""
    from rocketlb_core.kafka.conformance import run_partitioner_case
    name = "kafka-partitioner-metadata-4.3.1.jsonl.gz"
    grown = failing = 0
    report = Report(name, "kafka-partitioner")
    for line in read_cases(VECTORS / name):
        obj = json.loads(line)
        changes = [s for s in obj["steps"] if s["op"] == "metadata"]
        grown += any(len(s["available"]) > len(obj["available"]) for s in changes)
        obj["steps"] = [s for s in obj["steps"] if s["op"] != "metadata"]
        before = report.failed
        try:
            run_partitioner_case(obj, report)
        except (ValueError, IndexError, ZeroDivisionError):
            report.add(obj["id"], False, "raised")
        failing += report.failed > before
    assert grown >= 400, grown
    assert failing >= 300, failing


def test_every_vector_file_records_its_jvm() -> None:
    """Issue 33: every case of every file says which Java made it (``source.jvm``), the client's
    files too, and that is the Java its ``VectorFile`` names."""
    for spec in FILES:
        lines = read_cases(VECTORS / spec.name)
        assert json.loads(lines[0])["source"]["jvm"] == spec.jvm, spec.name
        # each line's source ends with it (its last key, as vectors.file_text writes it)
        mark = f',"jvm":{spec.jvm}}},'
        assert all(mark in line and line.count('"jvm":') == 1 for line in lines), spec.name


def test_every_vector_case_carries_the_schemas_fields() -> None:
    """Issue 33: every case of every file records its seed and every field its assignor reads,
    absent values written out: the client's racks, instance ids and subscription generations,
    the server's instance ids and vanished topics."""
    client = {"id", "instance", "rack", "topics"}
    for spec in FILES:
        for line in read_cases(VECTORS / spec.name):
            obj = json.loads(line)
            assert obj["source"]["seed"] == spec.seed, spec.name
            if spec.assignor == "partitioner":
                assert {"available", "sticky_batch_size", "steps"} <= set(obj), spec.name
                continue
            if spec.artifact == "kafka-group-coordinator":
                assert isinstance(obj["vanished"], list), obj["id"]
                assert all({"id", "instance", "owned"} <= set(m) for m in obj["members"]), obj["id"]
                continue
            assert set(obj["racks"]) == {t for t, _ in obj["topics"]}, obj["id"]
            assert all(len(obj["racks"][t]) == n for t, n in obj["topics"]), obj["id"]
            sticky = spec.assignor.endswith("sticky")
            assert all(set(m) == client | ({"owned", "generation"} if sticky else set())
                       for m in obj["members"]), obj["id"]
            if sticky:
                carried = spec.assignor == "cooperative-sticky" or spec.family == "generations"
                assert obj["generation_in_subscription"] == carried, obj["id"]
            else:
                assert "generation_in_subscription" not in obj, obj["id"]
            if spec.family != "racks":     # one replica a partition, on a broker with no rack
                assert all(rs == [[None]] * len(rs) for rs in obj["racks"].values()), obj["id"]
                assert all(m["rack"] is None for m in obj["members"]), obj["id"]


@pytest.mark.parametrize("name", [f.name for f in FILES if f.family == "empty"])
def test_an_empty_group_assignment_is_what_kafka_returns(name: str) -> None:
    """Issue 48: members that subscribe to nothing (some holding partitions from a first
    rebalance). Kafka's ``UniformAssignor`` returns a ``GroupAssignment`` without members,
    ``{}``; its server-side ``RangeAssignor`` returns every member with nothing. The port
    answers each as the real classes do, and the comparison tells "absent" from "present with
    nothing": the same cases expecting the other form fail, every one."""
    cases = [json.loads(line) for line in read_cases(VECTORS / name)]
    assert cases
    assert any(m["owned"] for c in cases for m in c["members"])    # revoked, not just empty
    everyone = [{m["id"]: [] for m in c["members"]} for c in cases]
    uniform = "server-range" not in name
    if uniform:
        assert all(c["expected"] == {} for c in cases)
    else:
        assert [c["expected"] for c in cases] == everyone
    assignor = "server-range" if not uniform else "uniform@4.0" if "4.0.0" in name else "uniform"
    report = Report(name, "kafka-assignor")
    for c in cases:
        run_uniform_case(c, report, assignor)
    assert report.failed == 0
    other = Report(name, "kafka-assignor")
    for c, every in zip(cases, everyone, strict=True):
        run_uniform_case({**c, "expected": every if uniform else {}}, other, assignor)
    assert other.failed == len(cases)


def _hostile_claims(rng: Any) -> tuple[dict[str, int], dict[str, Any]]:
    """Topics, and a group whose claims sometimes meet: repeated within a member, claimed by
    two members (of equal or other generations), of a topic that is gone, past a topic's
    partition count; or (one group in three) none of that."""
    from rocketlb_core.kafka.assignors import StickyMember

    topics = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(1, 4))}
    names = [*topics, "gone"]
    clean = rng.random() < 0.35
    group = {}
    for i in range(rng.randint(1, 7)):
        owned = []
        for _ in range(rng.randint(0, 10)):
            t = rng.choice(names[:-1] if clean else names)
            owned.append((t, rng.randrange(topics.get(t, 3) + (0 if clean else 2))))
        if clean:
            owned = list(dict.fromkeys(owned))
        m = f"m{i}"
        group[m] = StickyMember(m, tuple(topics), None, tuple(owned),
                                rng.choice([None, 1, 2]), rng.random() < 0.5)
    if clean:                                   # no partition claimed by two members
        seen: set[tuple[str, int]] = set()
        for m, member in list(group.items()):
            keep = tuple(tp for tp in member.owned if tp not in seen)
            seen.update(keep)
            group[m] = StickyMember(m, member.topics, None, keep, member.generation,
                                    member.generation_in_subscription)
    return topics, group


def test_the_sticky_fast_paths_answer_as_kafka_s_walks() -> None:
    # The large case's shortcuts (whole members at once where no claim meets another; the
    # unassigned partitions as a set difference) against the walks they stand for, on groups
    # built to break them: every shortcut must either give the walk's answer or step aside.
    import random

    from rocketlb_core.javamath import java_string_key
    from rocketlb_core.kafka.assignors import (
        KafkaAssignorError,
        _claimed,
        _constrained,
        _one_topic_claims,
        _owned_by_member,
        _unassigned,
        _unassigned_walk,
    )

    rng = random.Random(20261129)
    stepped_aside = taken_whole = hinted = 0
    for _ in range(3000):
        topics, group = _hostile_claims(rng)
        for eager in (True, False):
            slow = _owned_by_member(group, set(topics), eager, fast=False)
            assert _owned_by_member(group, set(topics), eager) == slow
            one = _one_topic_claims(topics, {m: _claimed(g, eager) for m, g in group.items()})
            if one is None or not slow[0]:
                continue
            hinted += 1                   # the unassigned from the claims, against the walk
            try:
                want: object = _constrained(topics, slow[1], slow[2])
            except KafkaAssignorError as exc:
                want = str(exc)
            try:
                got: object = _constrained(topics, slow[1], slow[2], claimed=one)
            except KafkaAssignorError as exc:
                got = str(exc)
            assert got == want
        flat = [tp for m in group.values() for tp in m.owned]
        order = sorted(topics, key=java_string_key)
        walk = _unassigned_walk(topics, order, flat)
        assert _unassigned(topics, flat) == walk
        valid = all(tp[0] in topics and tp[1] < topics[tp[0]] for tp in flat)
        whole = valid and len(set(flat)) == len(flat)
        taken_whole += whole
        stepped_aside += not whole
    assert hinted > 300
    assert taken_whole > 500                                  # both sides of every shortcut
    assert stepped_aside > 500
