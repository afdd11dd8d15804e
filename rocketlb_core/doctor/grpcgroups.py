"""Groups whose members run the remoting client and the gRPC client (issue 47, item 3).

A gRPC push consumer (rocketmq-client-java 5.x) does not allocate: it asks the Proxy
(``QueryAssignment``), which answers every readable broker of the topic with queue ``-1`` (pop
the broker's queues), and a cluster-mode Proxy registers its gRPC clients with itself only
(``ClusterConsumerManager``), so the brokers' lists of the group, which a remoting member
allocates over, hold the remoting members alone. Both sides then read the same queues: the
remoting members split them among themselves and pull, the gRPC members pop all of them
(shown live: ``data/live/grpc/grpc-remoting-mixed-*``, chapter 11's "A gRPC consumer in a
remoting group").

``grpc_findings`` reports such a group (``grpc-beside-remoting``) from the logs alone: a gRPC
Java client's log naming a push consumer of the group with an assignment of the topic
(``inputs.read_grpc_log``), and a remoting client's log with a rebalance of the same group and
topic. A gRPC simple consumer's log names no group, so a simple consumer in a remoting group is
not found from its log (``notes`` says when such a log was read).
"""

from __future__ import annotations

from rocketlb_core.doctor.findings import Finding
from rocketlb_core.doctor.inputs import GrpcAssignment, Inputs, LastRebalance

BOOK = "notebooks/11-rocketmq5-clients.ipynb#grpc-in-remoting-group"


def grpc_findings(inputs: Inputs) -> tuple[list[Finding], list[str]]:
    """Every group and topic a gRPC push consumer and a remoting consumer share (module
    docstring), and notes on the gRPC logs that could not be placed in a group."""
    pushes: dict[tuple[str, str], list[GrpcAssignment]] = {}
    simple = 0
    for gl in inputs.grpc_logs:
        for (cid, topic), a in sorted(gl.assignments.items()):
            named = gl.groups.get(cid)
            if named is not None:
                pushes.setdefault((named[0], topic), []).append(a)
        simple += sum(1 for r in gl.roles.values() if r == "simple consumer")
    remoting: dict[tuple[str, str], dict[str, LastRebalance]] = {}
    for cl in inputs.client_logs:
        if cl.client != "java":
            continue
        for key, last in cl.last.items():
            seen = remoting.setdefault(key, {})
            if last.client_id not in seen or seen[last.client_id].stamp <= last.stamp:
                seen[last.client_id] = last
    findings = []
    for (group, topic), assigned in sorted(pushes.items()):
        members = remoting.get((group, topic))
        if not members:
            continue
        popped = sorted({b for a in assigned for b, q in a.queues if q == -1})
        held = sorted({q.short() for r in members.values() for q in r.result})
        grpc_ids = sorted({a.client_id for a in assigned})
        f = Finding(
            "grpc-beside-remoting", "critical",
            f"{group} has remoting and gRPC consumers of {topic}: each side reads the same "
            "queues", group, topic,
            "The group's remoting members allocate the topic's queues over the members the "
            "brokers list, and a Proxy in cluster mode registers its gRPC clients with itself "
            "only, so the brokers list the remoting members alone and they share every queue "
            "among themselves. The gRPC push consumers allocate nothing: the Proxy assigns each "
            "of them every broker of the topic, to pop all its queues. Each message is then "
            "consumed by a remoting member and again by a gRPC member, and both sides write "
            "the group's consumer offsets.",
            "Give the gRPC consumers a group of their own, or move every member of the group "
            "to one client.",
            BOOK, members=sorted(members) + grpc_ids, queues=held,
            evidence=[a.ev for a in assigned]
            + [members[c].ev for c in sorted(members)])
        f.details = {"remoting_members": sorted(members), "grpc_members": grpc_ids,
                     "popped_brokers": popped,
                     "remoting_members_counted": sorted(
                         {r.cid_all_size for r in members.values()})}
        findings.append(f)
    notes = []
    if simple:
        notes.append(f"{simple} gRPC simple consumer(s) in the gRPC client logs read: a simple "
                     "consumer's log names no group, so whether it shares one with remoting "
                     "consumers was not checked")
    return findings, notes
