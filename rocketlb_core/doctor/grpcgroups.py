"""Groups whose members run the remoting client and the gRPC client (issue 47, item 3).

A gRPC push consumer (rocketmq-client-java 5.x) does not allocate: it asks the Proxy
(``QueryAssignment``), which answers every readable broker of the topic with queue ``-1`` (pop
the broker's queues), or every read queue when the group consumes orderly. A Proxy in cluster
mode registers its gRPC clients with itself and the other Proxies, never in a broker's consumer
table, so the brokers' lists of the group, which a remoting member connected to the brokers
allocates over, hold the remoting members alone. Both sides then read the same queues: the
remoting members split them among themselves and pull, the gRPC members pop all of them; and
both write the group's offsets (shown live: ``data/live/grpc/grpc-remoting-mixed-*``, chapter
11's "A gRPC consumer in a remoting group").

``grpc_findings`` reports such a group (``grpc-beside-remoting``) from the logs alone: a gRPC
Java client's log naming a push consumer of the group with an assignment of the topic
(``inputs.read_grpc_log``), and a remoting client's log with a rebalance of the same group and
topic, the two consumers' stretches overlapping (each from its first assignment of the topic to
its shutdown, or its log's last line: a cut-over that stopped one kind before the other started
is not a finding). The stamps are compared where both logs are stamped alike (rocketmq-client
from 5.1.0 and rocketmq-client-java both write ``yyyy-MM-dd HH:mm:ss.SSS`` in GMT+8); a log
stamped ``,SSS`` (rocketmq-client 4.x and 5.0.x, in the JVM's zone) is not compared, and the
finding says so. Where the remoting members counted more members, while the gRPC consumer ran,
than the remoting logs name, some logs are missing, or the member lists hold the gRPC
consumers (remoting members connected through the Proxy's remoting port, or a Proxy in local
mode, which registers them with its own broker): the finding says that this case is not
modelled.

Not found: a gRPC simple consumer's log names no group (``notes`` says when such a log was
read); remoting members that let the broker assign their queues (``setClientRebalance(false)``)
log no ``rebalanced result changed`` line; Go remoting members are not compared.
"""

from __future__ import annotations

from rocketlb_core.doctor.findings import BOOK, Finding
from rocketlb_core.doctor.inputs import (
    ClientLogFile,
    GrpcAssignment,
    GrpcLogFile,
    Inputs,
    LastRebalance,
)


def grpc_findings(inputs: Inputs) -> tuple[list[Finding], list[str]]:
    """Every group and topic a gRPC push consumer and a remoting consumer share at the same time
    (module docstring), and notes on the gRPC logs that could not be placed in a group."""
    pushes: dict[tuple[str, str], list[tuple[GrpcAssignment, str]]] = {}
    simple = 0
    for gl in inputs.grpc_logs:
        for (cid, topic), a in sorted(gl.assignments.items()):
            named = gl.groups.get(cid)
            if named is not None:
                pushes.setdefault((named[0], topic), []).append((a, _grpc_end(gl, cid)))
        simple += sum(1 for r in gl.roles.values() if r == "simple consumer")
    remoting: dict[tuple[str, str], dict[str, tuple[list[LastRebalance], str]]] = {}
    for cl in inputs.client_logs:
        if cl.client != "java":
            continue
        for key, last in cl.last.items():
            seen = remoting.setdefault(key, {})
            lines = cl.changes.get(key) or [last]
            if last.client_id not in seen or seen[last.client_id][0][-1].stamp <= last.stamp:
                seen[last.client_id] = (lines, _remoting_end(cl, key[0]))
    findings = []
    for (group, topic), assigned in sorted(pushes.items()):
        members = remoting.get((group, topic), {})
        overlapping: dict[str, list[LastRebalance]] = {}
        uncompared = False
        for cid, (lines, end) in members.items():
            for a, grpc_end in assigned:
                first = lines[0].stamp
                if not (_comparable(first) and _comparable(a.first)):
                    uncompared = True
                    overlapping[cid] = lines
                elif first < grpc_end and a.first < end:
                    # the member's rebalances while the gRPC consumer ran (and the one in force
                    # when it began)
                    during = [x for x in lines if a.first <= x.stamp < grpc_end]
                    before = [x for x in lines if x.stamp < a.first]
                    overlapping[cid] = before[-1:] + during or lines[-1:]
        if not overlapping:
            continue
        findings.append(_finding(group, topic, overlapping, [a for a, _ in assigned],
                                 uncompared))
    notes = []
    if simple:
        notes.append(f"{simple} gRPC simple consumer(s) in the gRPC client logs read: a simple "
                     "consumer's log names no group, so whether it shares one with remoting "
                     "consumers was not checked")
    return findings, notes


def _finding(group: str, topic: str, during: dict[str, list[LastRebalance]],
             assigned: list[GrpcAssignment], uncompared: bool) -> Finding:
    members = {cid: lines[-1] for cid, lines in during.items()}
    popped = sorted({b for a in assigned for b, q in a.queues if q == -1})
    orderly = any(q >= 0 for a in assigned for _, q in a.queues)
    counted = sorted({r.cid_all_size for lines in during.values() for r in lines})
    grpc_ids = sorted({a.client_id for a in assigned})
    given = ("every read queue of the topic (an orderly group)" if orderly else
             "every broker of the topic, to pop all its queues")
    explanation = (
        "The group's remoting members allocate the topic's queues over the members a broker "
        "lists, and a Proxy in cluster mode registers its gRPC clients with itself and the "
        "other Proxies, in no broker's table, so remoting members connected to the brokers "
        "share every queue among themselves. The gRPC push consumers allocate nothing: the "
        "Proxy gives each of them "
        f"{given}. The queues the remoting members hold are therefore read by them and by "
        "the gRPC members as well, and both kinds store the group's offsets, so each can "
        "make the other skip or repeat messages.")
    if counted and counted[-1] > len(members):
        explanation += (
            f" The remoting members counted up to {counted[-1]} members while the gRPC "
            f"consumers ran, more than the {len(members)} remoting member(s) these logs name: "
            "either some members' logs are missing, or their member lists hold the gRPC "
            "consumers too (remoting members connected through the Proxy's remoting port, or "
            "a Proxy in local mode, which registers them with its own broker), a case this "
            "finding does not model.")
    if uncompared:
        explanation += (" A log stamped ',SSS' (rocketmq-client 4.x and 5.0.x) is in its "
                        "JVM's zone: whether the two kinds ran at the same time was not "
                        "compared.")
    f = Finding(
        "grpc-beside-remoting", "critical",
        f"{group} has remoting and gRPC consumers of {topic} at once: both kinds read the "
        "same queues", group, topic, explanation,
        "Do not share a group between the two kinds. To move a group to the gRPC client, stop "
        "every remoting member before the gRPC members start: they then pop from the offsets "
        "the group stored (let the remoting members first work off the group's retry topic, "
        "%RETRY% and the group: pops take retries from another one). A separate group for the "
        "gRPC consumers does not split the work: each group consumes every message.",
        BOOK.format("11-rocketmq5-clients", "grpc-in-remoting-group"),
        members=sorted(members) + grpc_ids,
        queues=sorted({q.short() for r in members.values() for q in r.result}),
        evidence=[a.ev for a in assigned] + [members[c].ev for c in sorted(members)])
    f.details = {"remoting_members": sorted(members), "grpc_members": grpc_ids,
                 "popped_brokers": popped, "orderly": orderly,
                 "remoting_members_counted": counted, "times_compared": not uncompared}
    return f


def _comparable(stamp: str) -> bool:
    """A 5.x client's stamp (``yyyy-MM-dd HH:mm:ss.SSS``, GMT+8), not a 4.x one (``,SSS``)."""
    return len(stamp) >= 23 and stamp[19] == "."


def _grpc_end(gl: GrpcLogFile, cid: str) -> str:
    return gl.stopped.get(cid, gl.end_stamp)


def _remoting_end(cl: ClientLogFile, group: str) -> str:
    stopped = cl.shut_down.get(group)
    return stopped.text[:23] if stopped is not None else cl.end_stamp
