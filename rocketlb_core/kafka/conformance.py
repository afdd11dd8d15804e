"""Checking Kafka's vectors (``rocketlb_core.kafka.vectors``) against the ports: an assignor
case (the assignor the vector's release runs, ``assignors.for_release``; each member's
partitions in Kafka's order), or a partitioner scenario (every step: the partition a keyed
record goes to, or the sticky partition used and the one after, with the random draws the step
made given as inputs)."""

from __future__ import annotations

from typing import Any

from rocketlb_core.conformance.report import Report
from rocketlb_core.kafka.assignors import (
    ASSIGNORS,
    KafkaAssignorError,
    Member,
    StickyMember,
    Topic,
    TopicPartition,
    for_release,
    server_range_assign,
    uniform_assign,
)
from rocketlb_core.kafka.partitioner import BuiltInPartitioner, partition_for_key


def expected_assignment(obj: dict[str, Any]) -> dict[str, list[TopicPartition]]:
    """The vector's ``expected`` runs as each member's list of (topic, partition)."""
    return {member: [(topic, p) for topic, parts in runs for p in parts]
            for member, runs in obj["expected"].items()}


def case_inputs(obj: dict[str, Any]) -> tuple[dict[str, int], list[Member]]:
    """The case's partitions per topic and its members (with their history when it has one)."""
    partitions = {str(t): int(n) for t, n in obj["topics"]}
    members: list[Member] = []
    in_subscription = bool(obj.get("generation_in_subscription", False))
    for m in obj["members"]:
        topics = tuple(str(t) for t in m["topics"])
        if "owned" in m:
            owned = tuple((str(t), int(p)) for t, ps in m["owned"] for p in ps)
            members.append(StickyMember(str(m["id"]), topics, m["instance"], owned,
                                        m["generation"], in_subscription, rack=m.get("rack")))
        else:
            members.append(Member(str(m["id"]), topics, m["instance"], rack=m.get("rack")))
    return partitions, members


def case_racks(obj: dict[str, Any]) -> dict[str, list[list[str | None]]] | None:
    """The case's partitions' replicas' racks (``racks``: topic -> one list a partition), or
    ``None`` when the case has none (then no assignor may use racks)."""
    racks = obj.get("racks")
    if racks is None:
        return None
    return {str(t): [[None if r is None else str(r) for r in rs] for rs in parts]
            for t, parts in racks.items()}


def run_assignor_case(obj: dict[str, Any], report: Report, assignor: str | None = None) -> None:
    """Compare one case; ``assignor`` overrides the one its release runs (to show that a
    vector tells the assignors apart)."""
    name = assignor or for_release(obj["assignor"], obj["source"]["version"])
    if obj["assignor"] in ("uniform", "server-range") or name.startswith(("uniform",
                                                                           "server-range")):
        run_uniform_case(obj, report, name)
        return
    partitions, members = case_inputs(obj)
    if name not in ASSIGNORS:
        raise ValueError(f"unknown Kafka assignor {name!r}")
    racks = case_racks(obj)
    kwargs: dict[str, Any] = {} if racks is None or name == "roundrobin" else {"racks": racks}
    if "error" in obj["expected"]:
        want = obj["expected"]["error"]["type"]
        try:
            ASSIGNORS[name](partitions, members, **kwargs)
        except KafkaAssignorError as exc:
            report.check(str(obj["id"]), exc.kind, want)
            return
        report.add(str(obj["id"]), False, f"expected {want}, got an assignment")
        return
    report.check(str(obj["id"]), ASSIGNORS[name](partitions, members, **kwargs),
                 expected_assignment(obj))


def run_partitioner_case(obj: dict[str, Any], report: Report) -> None:
    """Replay one scenario's steps on a fresh ``BuiltInPartitioner``; one outcome a step."""
    available = [bool(a) for a in obj["available"]]
    draws: list[int] = []

    def draw() -> int:
        if not draws:
            raise ValueError("the port drew more random numbers than Kafka did")
        return draws.pop(0)

    bp = BuiltInPartitioner(int(obj["sticky_batch_size"]), draw)
    for k, step in enumerate(obj["steps"]):
        case = f"{obj['id']} step {k}"
        op = step["op"]
        if op == "metadata":                # a new Cluster: leaders and partition count
            available = [bool(a) for a in step["available"]]
        elif op == "stats":
            bp.update_load_stats(step["queue_sizes"], step["partition_ids"], int(step["length"]))
        elif op == "key":
            got = partition_for_key(bytes.fromhex(step["key"]), int(step["partitions"]))
            report.check(case, got, step["partition"])
        elif op == "append":
            draws[:] = [int(d) for d in step["draws"]]
            try:
                info = bp.peek(available)
                used = info.partition
                bp.update_partition_info(info, int(step["bytes"]), available,
                                         bool(step["enable_switch"]))
                got_pair = (used, bp.peek(available).partition, len(draws))
            except ValueError as exc:
                report.add(case, False, str(exc))
                continue
            report.check(case, got_pair, (step["partition"], step["next"], 0))
        else:
            raise ValueError(f"unknown partitioner step {op!r}")


def run_uniform_case(obj: dict[str, Any], report: Report, name: str) -> None:
    """A KIP-848 server-side case (``uniform``, ``uniform@4.0`` or ``server-range``)."""
    if not name.startswith(("uniform", "server-range")):
        raise ValueError(f"a server-side assignor case cannot run under {name!r}")
    topics = [Topic(str(n), int(c), (int(u[0]), int(u[1]))) for n, c, u in obj["topics"]]
    members = [(str(m["id"]), {str(t): [int(p) for p in ps] for t, ps in m["owned"]})
               for m in obj["members"]]
    subscriptions = ({str(m["id"]): [str(t) for t in m["topics"]] for m in obj["members"]}
                     if all("topics" in m for m in obj["members"]) else None)
    jvm = case_jvm(obj)
    instances = {str(m["id"]): m.get("instance") for m in obj["members"]}
    vanished = [Topic(str(n), 0, (int(u[0]), int(u[1]))) for n, u in obj.get("vanished", ())]
    if "error" in obj["expected"]:
        want_error = obj["expected"]["error"]["type"]
        try:
            _server_side(name, topics, members, subscriptions, jvm, instances, vanished)
        except KafkaAssignorError as exc:
            report.check(str(obj["id"]), exc.kind, want_error)
            return
        report.add(str(obj["id"]), False, f"expected {want_error}, got an assignment")
        return
    want = {m: {t: ps for t, ps in runs} for m, runs in obj["expected"].items()}
    got = _server_side(name, topics, members, subscriptions, jvm, instances, vanished)
    # exact: a member absent from Kafka's GroupAssignment (its empty map, when nothing is
    # assigned) is absent from the vector, one present with nothing is there with []
    report.check(str(obj["id"]), got, want)


def case_jvm(obj: dict[str, Any]) -> int:
    """The major Java version the case was generated on (``source.jvm``; files from before it
    was recorded were made on Java 17)."""
    return int(obj["source"].get("jvm", 17))


def _server_side(name: str, topics: list[Topic], members: list[tuple[str, dict[str, list[int]]]],
                 subscriptions: dict[str, list[str]] | None, jvm: int,
                 instances: dict[str, str | None], vanished: list[Topic] | None = None
                 ) -> dict[str, dict[str, list[int]]]:
    if name == "server-range":
        return server_range_assign(topics, members, subscriptions=subscriptions,
                                   instances=instances)
    return uniform_assign(topics, members, extra_to_first=name == "uniform@4.0",
                          subscriptions=subscriptions, jvm=jvm, vanished=vanished or ())
