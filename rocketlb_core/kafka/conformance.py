"""Checking one Kafka assignor vector (``rocketlb_core.kafka.vectors``) against the ports: the
assignor the vector's release runs (``assignors.for_release``), each member's partitions in
Kafka's order."""

from __future__ import annotations

from typing import Any

from rocketlb_core.conformance.report import Report
from rocketlb_core.kafka.assignors import ASSIGNORS, Member, TopicPartition, for_release


def expected_assignment(obj: dict[str, Any]) -> dict[str, list[TopicPartition]]:
    """The vector's ``expected`` runs as each member's list of (topic, partition)."""
    return {member: [(topic, p) for topic, parts in runs for p in parts]
            for member, runs in obj["expected"].items()}


def case_inputs(obj: dict[str, Any]) -> tuple[dict[str, int], list[Member]]:
    partitions = {str(t): int(n) for t, n in obj["topics"]}
    members = [Member(str(m["id"]), tuple(str(t) for t in m["topics"]), m["instance"])
               for m in obj["members"]]
    return partitions, members


def run_assignor_case(obj: dict[str, Any], report: Report, assignor: str | None = None) -> None:
    """Compare one case; ``assignor`` overrides the one its release runs (to show that a
    vector tells the assignors apart)."""
    partitions, members = case_inputs(obj)
    name = assignor or for_release(obj["assignor"], obj["source"]["version"])
    if name not in ASSIGNORS:
        raise ValueError(f"unknown Kafka assignor {name!r}")
    report.check(str(obj["id"]), ASSIGNORS[name](partitions, members), expected_assignment(obj))
