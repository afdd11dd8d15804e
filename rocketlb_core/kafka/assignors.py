"""Kafka's client-side consumer assignors, ported from ``kafka-clients`` and checked against its
released classes (``tests/vectors/kafka-*.jsonl.gz``, made by ``rocketlb_core.kafka.vectors``).

A Kafka partition is what RocketMQ calls a queue, a group member what RocketMQ calls a client id
(``../shared/reference/peers.md``). The leader of a consumer group runs the assignor on what the
JoinGroup response gave it: every member's subscription, put into a ``java.util.HashMap`` in the
order the response lists them. Kafka's assignors iterate such maps, so the order of each
member's partitions follows Java's hash order (``javamath.java_hash_order``); the ports keep it.

- ``range_assign``: ``RangeAssignor`` (``partition.assignment.strategy=range``): per topic, the
  members subscribed to it sorted (static members by ``group.instance.id`` first, then by member
  id), each given a contiguous range, the first ``partitions % members`` one partition more.
  Rack-aware assignment (KIP-881, when members and replicas declare racks) is not ported yet:
  members here have no rack, as in the vectors.
- ``round_robin_assign``: ``RoundRobinAssignor``: every partition of every subscribed topic,
  topics in ``String`` order, dealt to the sorted members in turn, skipping a member not
  subscribed to the partition's topic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cmp_to_key

from rocketlb_core.javamath import java_hash_order, java_string_compare, java_string_key

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class Member:
    """A group member as the leader sees it: its member id, its ``group.instance.id`` (static
    membership) and the topics it subscribes to, in its subscription's order."""

    member_id: str
    topics: tuple[str, ...]
    instance_id: str | None = None


def _member_order(a: Member, b: Member) -> int:
    """``AbstractPartitionAssignor.MemberInfo.compareTo``."""
    if a.instance_id is not None and b.instance_id is not None:
        return java_string_compare(a.instance_id, b.instance_id)
    if a.instance_id is not None:
        return -1
    if b.instance_id is not None:
        return 1
    return java_string_compare(a.member_id, b.member_id)


def sorted_members(members: Sequence[Member]) -> list[Member]:
    return sorted(members, key=cmp_to_key(_member_order))


def _group(members: Sequence[Member]) -> dict[str, Member]:
    """The subscriptions map as the leader iterates it: a ``HashMap`` filled in ``members``
    order (a repeated member id keeps its last subscription, in its first position)."""
    last = {m.member_id: m for m in members}
    return {mid: last[mid] for mid in java_hash_order([m.member_id for m in members])}


def _partitions_per_topic(group: Mapping[str, Member], partitions: Mapping[str, int]
                          ) -> list[tuple[str, int]]:
    """``AbstractPartitionAssignor.assign(Cluster, ...)``: the subscribed topics that have
    partitions, as its ``HashMap`` (filled from a ``HashSet`` of the subscribed topics) iterates."""
    subscribed = java_hash_order([t for m in group.values() for t in m.topics])
    have = [t for t in subscribed if partitions.get(t, 0) > 0]
    return [(t, partitions[t]) for t in java_hash_order(have)]


def range_assign(partitions: Mapping[str, int], members: Sequence[Member], *,
                 before_kip881: bool = False) -> dict[str, list[TopicPartition]]:
    """``RangeAssignor.assign``: each member id's partitions, in Kafka's order.

    ``before_kip881``: as released up to 3.4, which walked the topics in the order of its map
    of topic to members, filled by ``computeIfAbsent`` (a new key first in its bin), rather than
    of topic to partitions, filled by ``put``. The shares are the same; the order of a member's
    partitions differs when two topics share a bin (329 of the 3,500 vectors).
    """
    group = _group(members)
    per_topic: dict[str, list[Member]] = {}
    for m in group.values():
        for t in m.topics:
            per_topic.setdefault(t, []).append(m)
    assignment: dict[str, list[TopicPartition]] = {mid: [] for mid in group}
    if before_kip881:
        topics = [(t, partitions[t])
                  for t in java_hash_order(list(per_topic), compute_if_absent=True)
                  if partitions.get(t, 0) > 0]
    else:
        topics = _partitions_per_topic(group, partitions)
    for topic, count in topics:
        consumers = list(dict.fromkeys(m.member_id for m in
                                       sorted_members(per_topic.get(topic, []))))
        if not consumers:
            continue
        per, extra = divmod(count, len(consumers))
        unassigned = list(range(count))
        for c in consumers:
            if not unassigned:
                break
            take = per + (1 if extra > 0 else 0)
            if take <= 0:
                continue
            mine, unassigned = unassigned[:take], unassigned[take:]
            assignment[c].extend((topic, p) for p in mine)
            if len(mine) > per:
                extra -= 1
    return assignment


def round_robin_assign(partitions: Mapping[str, int], members: Sequence[Member]
                       ) -> dict[str, list[TopicPartition]]:
    """``RoundRobinAssignor.assign``: each member id's partitions, in Kafka's order."""
    group = _group(members)
    assignment: dict[str, list[TopicPartition]] = {mid: [] for mid in group}
    ring = sorted_members(list(group.values()))
    subscribed = {mid: set(m.topics) for mid, m in group.items()}
    counts = dict(_partitions_per_topic(group, partitions))
    topics = sorted({t for m in group.values() for t in m.topics}, key=java_string_key)
    at = 0
    for topic in topics:
        for p in range(counts.get(topic, 0)):
            while topic not in subscribed[ring[at].member_id]:
                at = (at + 1) % len(ring)
            assignment[ring[at].member_id].append((topic, p))
            at = (at + 1) % len(ring)
    return assignment


def range_assign_3_4(partitions: Mapping[str, int], members: Sequence[Member]
                     ) -> dict[str, list[TopicPartition]]:
    """``RangeAssignor`` of kafka-clients 3.4 and earlier (``range_assign``)."""
    return range_assign(partitions, members, before_kip881=True)


ASSIGNORS = {"range": range_assign, "range@3.4": range_assign_3_4,
             "roundrobin": round_robin_assign}
"""Kafka's client-side assignors by their ``partition.assignment.strategy`` names (``@3.4``:
as kafka-clients 3.4 and earlier release it, where it differs)."""


def for_release(assignor: str, version: str) -> str:
    """The ``ASSIGNORS`` key of ``assignor`` as kafka-clients ``version`` runs it."""
    major, minor = (int(x) for x in version.split(".")[:2])
    if assignor == "range" and (major, minor) < (3, 5):
        return "range@3.4"
    if assignor not in ASSIGNORS:
        raise ValueError(f"unknown Kafka assignor {assignor!r}")
    return assignor
