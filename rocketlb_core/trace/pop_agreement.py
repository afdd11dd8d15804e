"""Remoting push consumers whose queues a broker computes, against a live recording (issue 45:
pop consumption on 5.x).

A consumer with ``rebalance = "broker"`` (``live/java/Consume.java``:
``setClientRebalance(false)``, 5.x clients) asks a broker of the topic for its queues
(``QUERY_ASSIGNMENT``) and logs every change (``RebalanceImpl.getRebalanceResultFromBroker``,
rocketmq-client 5.3.3 and 5.5.0)::

    broker rebalanced result changed. allocateMessageQueueStrategyName=AVG, group=G, topic=T,
    clientId=C, assignmentSet=[MessageQueueAssignment [MessageQueue=MessageQueue [topic=T,
    brokerName=B, queueId=Q], Mode=POP], ...]

(``MessageQueueAssignment.toString``, rocketmq-common 5.3.3). ``broker_agreement`` holds each
logged assignment of the topic to what ``grpc.assignment.broker_query_assignment`` (the released
``QueryAssignmentProcessor``, checked bit-exact by its vectors) answers on a member list a broker
held then (``lists``: ``trace.agreement``'s candidates: the membership at the logged time, either
side of a change within the slack, then each broker's own view), with the group's request mode
and ``popShareQueueNum`` as the scenario set them (``consume_modes``; none set: ``PULL``) and the
topic's queues: the set and each queue's mode must be equal (``exact``, ``near_change``,
``stale_view``), else ``unexplained``.

``group_consumption`` counts, per group, what its members consumed (``offsets/<member>.json``,
every distinct offset per queue, the deliveries, and the bodies of the messages the broker
delivered again from a retry topic, matched to the stored messages by body): the stored messages
of the topic a member consumed, those none consumed by the end (``missing``), a message consumed
more than once (``by_two``: by two members, or again after a redelivery), the deliveries beyond
one a message (``again``) and the redeliveries (``redelivered``). These are observations, not
the model's verdicts: a pop's messages not acknowledged come back only after their invisible
time, through the pop retry topic, which a short recording may end before; only a consumed
message that is no stored one (``strays``) is ``unexplained``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlb_core.grpc.assignment import broker_query_assignment
from rocketlb_core.model import MessageQueue
from rocketlb_core.trace import verdicts
from rocketlb_core.trace.schema import TraceError

STALE_VIEW = verdicts.text("broker-assignment", "STALE_VIEW")

_LINE = re.compile(r"^(?P<stamp>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[.,]\d{3}) .*broker rebalanced "
                   r"result changed\. allocateMessageQueueStrategyName=(?P<strategy>[^,\s]*), "
                   r"group=(?P<group>[^,\s]+), topic=(?P<topic>[^,\s]+), "
                   r"clientId=(?P<cid>[^,\s]+), assignmentSet=\[(?P<set>.*)\]\s*$")
_ASSIGNED = re.compile(r"MessageQueueAssignment \[MessageQueue=MessageQueue \[topic=([^,\]]+), "
                       r"brokerName=([^,\]]+), queueId=(-?\d+)\], Mode=(PULL|POP)")
MAX_ASSIGNED = 4096
"""Queues read from one logged assignment at most (a topic's queues, 64 a broker)."""

Assigned = tuple[str, int, str]               # (broker, queue id, mode)


@dataclass(frozen=True)
class BrokerRebalance:
    """One ``broker rebalanced result changed`` line."""

    line: int
    stamp: str
    strategy: str
    group: str
    topic: str
    client_id: str
    assignment: tuple[Assigned, ...]


def read_broker_rebalances(path: Path) -> list[BrokerRebalance]:
    """Every ``broker rebalanced result changed`` line of a client log (``rocketmq_client.log``,
    gzip by the name's ``.gz``); an assignment the line holds that is not ``MessageQueueAssignment
    [...]`` is a ``TraceError`` naming the file, the line and the field."""
    from rocketlb_core.trace.textfile import read_lines

    out = []
    for n, text in read_lines(path, errors="replace"):
        if "broker rebalanced result changed" not in text:
            continue
        m = _LINE.match(text.rstrip("\r\n"))
        if m is None:
            raise TraceError(path, n, None, "a 'broker rebalanced result changed' line of "
                             "rocketmq-client 5.x expected")
        body = m["set"]
        items = _ASSIGNED.findall(body)
        if len(items) != body.count("MessageQueueAssignment") or len(items) > MAX_ASSIGNED:
            raise TraceError(path, n, "assignmentSet", "MessageQueueAssignment [MessageQueue="
                             "MessageQueue [topic=T, brokerName=B, queueId=Q], Mode=PULL|POP] "
                             f"items expected, got {body[:80]!r}")
        assigned = []
        for topic, broker, queue, mode in items:
            if topic != m["topic"] or not -1 <= int(queue) <= 65_535:
                raise TraceError(path, n, "assignmentSet", f"a queue of {m['topic']!r:.60} "
                                 f"(id -1 to 65535) expected, got {topic!r:.60} {queue!r:.12}")
            assigned.append((broker, int(queue), mode))
        out.append(BrokerRebalance(n, m["stamp"].replace(",", "."), m["strategy"], m["group"],
                                   m["topic"], m["cid"], tuple(sorted(assigned))))
    return out


@dataclass
class BrokerAgreement:
    """The verdicts of ``broker_agreement`` and the lines it could not explain."""

    counts: Counter[str] = field(default_factory=Counter)
    bad: list[tuple[BrokerRebalance, list[list[str]]]] = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        return {"logged": sum(self.counts.values()), "exact": self.counts["exact"],
                "near_change": self.counts["near_change"],
                "stale_view": self.counts[STALE_VIEW],
                "unexplained": self.counts["unexplained"]}


ROUTE_POLL_MS = 30_000
"""A broker refreshes its route cache of a topic from the name server every 30 s
(``loadBalancePollNameServerInterval``), and a client its own route as often, each on its own
clock: the queues a broker answers on are those of a route the client logged in force up to
that long before or after the answer (``broker_agreement``'s ``queues``)."""


def broker_agreement(logged: Iterable[BrokerRebalance], lists: Callable[[Any], list[Any]],
                     queues: Sequence[MessageQueue] | Callable[[Any], list[list[MessageQueue]]],
                     mode: str | None, pop_share: int | None) -> BrokerAgreement:
    """Each logged assignment against the broker's answer (module docstring). ``lists(r)``: the
    candidate member lists (``trace.agreement._candidates``; a ``(STALE_VIEW, members)`` pair
    is one broker's own view: the allocation check's ``STALE_VIEW``, the same text);
    ``mode``/``pop_share``: what ``SET_MESSAGE_REQUEST_MODE`` stored for the group (``None``:
    nothing, the broker's defaults); ``queues``: the topic's queues, or ``queues(r)`` the queue
    sets the answering broker's route cache could have held (``ROUTE_POLL_MS``)."""
    out = BrokerAgreement()
    for r in logged:
        candidates = lists(r)
        sets = queues(r) if callable(queues) else [list(queues)]
        found = None
        for i, cand in enumerate(candidates):
            kind, members = cand if isinstance(cand, tuple) else \
                ("exact" if i == 0 else "near_change", cand)
            for qs in sets:
                got, got_mode = broker_query_assignment(
                    r.topic, r.group, r.client_id, r.strategy, qs, list(members), mode=mode,
                    pop_share_queue_num=pop_share)
                if got is not None and tuple(sorted((q.broker_name, q.queue_id, got_mode)
                                                    for q in got)) == r.assignment:
                    found = (STALE_VIEW if kind == STALE_VIEW else "exact" if kind == "exact"
                             else "near_change")
                    break
            if found is not None:
                break
        verdict = found or "unexplained"
        out.counts[verdict] += 1
        if found is None:
            out.bad.append((r, [c[1] if isinstance(c, tuple) else c for c in candidates]))
    return out


def group_consumption(recording: Path, group: str, members: Sequence[str]) -> dict[str, Any]:
    """What ``members`` of ``group`` consumed of the topic (module docstring)."""
    stored: set[tuple[str, int, int]] = set()
    from rocketlb_core.trace.textfile import read_lines

    stored_bodies: dict[tuple[str, int, int], str] = {}
    dump = recording / "topic.jsonl.gz"
    for n, text in read_lines(dump):
        try:
            x = json.loads(text)
            key = (str(x["broker"]), int(x["queue"]), int(x["offset"]))
        except (ValueError, KeyError, TypeError):
            raise TraceError(dump, n, None, "a stored message {broker, queue, offset} "
                             "expected") from None
        stored.add(key)
        if isinstance(x.get("body"), str):
            stored_bodies[key] = x["body"]
    bodies = set(stored_bodies.values())
    by: Counter[tuple[str, int, int]] = Counter()
    deliveries = distinct = redelivered = 0
    again_by_body: Counter[str] = Counter()
    for name in members:
        offsets, sent, again = read_offsets(recording / "offsets" / f"{name}.json")
        for (broker, queue), got in offsets.items():
            by.update((broker, queue, o) for o in got)
            distinct += len(got)
        deliveries += sum(sent.values())
        again_by_body.update(again)
        redelivered += len(again)
    # a redelivered message is matched by its body (the producer's bodies are unique)
    for key, body in stored_bodies.items():
        if again_by_body.get(body):
            by[key] += again_by_body[body]
    unmatched = sum(n for b, n in again_by_body.items() if b not in bodies)
    missing = sorted(stored - set(by))
    return {"group": group, "members": list(members), "stored": len(stored),
            "consumed": len(stored & set(by)), "by_two": sum(1 for k in stored if by[k] > 1),
            # deliveries beyond one a message: a member's own repeats of an offset, then each
            # further member or redelivery that consumed it
            "again": deliveries - distinct + sum(by[k] - 1 for k in stored if by[k] > 1),
            "redelivered": redelivered,
            "strays": len(set(by) - stored) + unmatched,
            "missing": len(missing), "unexplained": len(set(by) - stored) + unmatched,
            "missing_detail": [{"broker": b, "queue": q, "offset": o} for b, q, o in missing[:50]],
            "unexplained_detail": [{"broker": b, "queue": q, "offset": o}
                                   for b, q, o in sorted(set(by) - stored)[:50]]}


def read_offsets(path: Path) -> tuple[dict[tuple[str, int], list[int]], dict[str, int],
                                       list[str]]:
    """A member's ``offsets/<member>.json`` (``live/java/Consume.java``): per queue
    ``"broker/q"`` every distinct offset consumed, the deliveries per queue, and the bodies of
    the messages the broker delivered to it again from a retry topic (``redelivered``, each at
    most 64 characters, at most ``MAX_REDELIVERED``); a member that consumed nothing has none
    (empty). Anything else is a ``TraceError`` naming the file and the field."""
    if not path.is_file():
        return {}, {}, []
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise TraceError(path, None, None, "a JSON object expected") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("offsets"), dict) \
            or not isinstance(doc.get("deliveries"), dict):
        raise TraceError(path, None, None, "{\"offsets\": {...}, \"deliveries\": {...}} "
                         "expected")
    out: dict[tuple[str, int], list[int]] = {}
    for key, got in doc["offsets"].items():
        broker, _, queue = str(key).rpartition("/")
        if not broker or not queue.isdigit() or int(queue) > 65_535 or not isinstance(got, list) \
                or not all(isinstance(o, int) and not isinstance(o, bool) and 0 <= o < 2**63
                           for o in got):
            raise TraceError(path, None, f"offsets.{key!r:.60}", "a queue 'broker/id' with a "
                             "list of offsets from 0 expected")
        out[(broker, int(queue))] = got
    sent: dict[str, int] = {}
    for key, n in doc["deliveries"].items():
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < 2**63:
            raise TraceError(path, None, f"deliveries.{key!r:.60}", "a count from 0 expected")
        sent[str(key)] = n
    again = doc.get("redelivered", [])
    if not isinstance(again, list) or len(again) > MAX_REDELIVERED or not all(
            isinstance(b, str) and len(b) <= 64 for b in again):
        raise TraceError(path, None, "redelivered", f"a list of at most {MAX_REDELIVERED:,} "
                         "message bodies of at most 64 characters expected")
    return out, sent, list(again)


MAX_REDELIVERED = 1_000_000
"""Redeliveries read from one member's ``offsets`` file at most."""
