"""The doctor's checks: from what ``inputs`` read, the groups as the cluster sees them, and each
problem found with its evidence, an explanation, the fix, what the fix would change (computed
by the core's allocation strategies, ``consumer.registry``) and the book section that teaches it.

A group's members come from the best source given: ``consumerConnection`` (what a broker holds
now), else the brokers' logs (joins minus leaves, kills and expiries at the end of the log),
else the client logs (processes that rebalanced in the group and did not shut down: a killed
process cannot be told apart there). A topic's queues come from ``topicRoute``, else
``consumerProgress``, else the client logs (every queue they listed, when that makes
``mqAllSize``). A member's strategy is what its client log says (``AVG``, upstream's default,
when there is no log: said so in the finding).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rocketlb_core.consumer.base import assign_all, rebalance_view
from rocketlb_core.doctor.inputs import GO_UNKNOWN, ClientLogFile, Evidence, Inputs, MemberLine
from rocketlb_core.doctor.kinds import KINDS, question_links
from rocketlb_core.doctor.kinds import SEVERITIES as SEVERITIES
from rocketlb_core.model import MessageQueue, TopicRoute, subscribe_queues

BOOK = "notebooks/{}.ipynb#{}"
COMPUTABLE = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "GO_CONSISTENT_HASH")
GO_STRATEGIES = ("AVG", "AVG_BY_CIRCLE", "GO_CONSISTENT_HASH")
"""What a Go member's logged share is tried with (issue 47): the Go client's
``AllocateByAveragely`` and ``AllocateByAveragelyCircle`` (Java's AVG and AVG_BY_CIRCLE: the same
function, so named alike) and ``AllocateByConsistentHash(10)`` (its own ring:
``GO_CONSISTENT_HASH``)."""
MAX_EVIDENCE = 8


@dataclass
class Finding:
    id: str
    severity: str
    title: str
    group: str | None
    topic: str | None
    explanation: str
    fix: str
    book: str
    members: list[str] = field(default_factory=list)
    queues: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    before_after: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)
    questions: list[str] = field(default_factory=list)
    """The answers of "Questions operators ask" about the finding's symptom
    (``book/questions.md#anchor``): its kind's (``kinds.question_links``) unless given."""

    def __post_init__(self) -> None:
        """A finding is of a kind ``doctor.kinds`` registers, with one of its severities."""
        kind = KINDS.get(self.id)
        if kind is None or self.severity not in kind.severities:
            raise ValueError(f"a finding {self.id!r} of severity {self.severity!r} is not "
                             "registered in rocketlb_core.doctor.kinds")
        if not self.questions:
            self.questions = question_links(kind)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "severity": self.severity, "title": self.title,
                "group": self.group, "topic": self.topic, "members": self.members,
                "queues": self.queues, "hosts": self.hosts,
                "evidence": [e.as_json() for e in self.evidence[:MAX_EVIDENCE]],
                "explanation": self.explanation, "fix": self.fix,
                "before_after": self.before_after, "book": self.book,
                "questions": self.questions, "details": self.details}


@dataclass
class Member:
    client_id: str
    host: str                       # the client's IP
    version: str | None
    evidence: list[Evidence]
    addr: str = ""                  # IP:port of its connection, where known


class LogStates:
    """A group's member lists as a broker log shows them, made on demand from its join and
    leave lines (``MemberLine``, in the log's order): each state with the time it began.

    The log stamps to the second, so the changes within one second are one state (the list at
    the second's end); only the latest states are checked, as many as keep the work within
    ``MAX_STATE_MEMBERS`` members in all (``skipped`` says how many earlier ones were not),
    and nothing but the lines themselves is kept: a log of 100,000 changes of a large group
    costs its lines, not a copy of the member list per change.

    >>> from rocketlb_core.doctor.inputs import Evidence
    >>> def line(event, cid, ch, t):
    ...     return MemberLine(event, "G", cid, ch, "10.0.0.1:1", Evidence("b.log", 1, t + " x"))
    >>> st = LogStates([line("join", "c1", "1", "2026-01-01 00:00:01"),
    ...                 line("join", "c2", "2", "2026-01-01 00:00:01"),
    ...                 line("leave", "c1", "1", "2026-01-01 00:00:02")])
    >>> [(since[-2:], [m.client_id for m in ms]) for since, ms in st]
    [('01', ['c1', 'c2']), ('02', ['c2'])]
    >>> sorted(st.ids), st.skipped
    (['c1', 'c2'], 0)
    """

    def __init__(self, lines: list[MemberLine]):
        self.lines = lines
        self.ids = {e.client_id for e in lines if e.event == "join"}
        ends: list[tuple[int, int]] = []       # (line index where a second's state ends, size)
        alive: set[str] = set()
        for i, e in enumerate(lines):
            if e.event == "join":
                if e.channel in alive:
                    continue
                alive.add(e.channel)
            elif e.channel in alive:
                alive.remove(e.channel)
            else:
                continue
            if ends and lines[ends[-1][0]].ev.text[:19] == e.ev.text[:19]:
                ends[-1] = (i, len(alive))
            else:
                ends.append((i, len(alive)))
        kept, work = 0, 0
        for _, size in reversed(ends):
            if kept and work + size > MAX_STATE_MEMBERS:
                break
            kept, work = kept + 1, work + size
        self.skipped = len(ends) - kept
        self._ends = {i for i, _ in ends[self.skipped:]}
        self._last = ends[-1][0] if ends else -1

    def __iter__(self) -> Iterator[tuple[str, list[Member]]]:
        alive: dict[str, Member] = {}
        for i, e in enumerate(self.lines):
            if i > self._last:
                break
            if e.event == "join":
                if e.channel not in alive:
                    alive[e.channel] = Member(e.client_id, e.host.rsplit(":", 1)[0], None,
                                              [e.ev], e.host)
            else:
                alive.pop(e.channel, None)
            if i in self._ends:
                yield e.ev.text[:19], list(alive.values())

    def __getitem__(self, index: slice) -> list[tuple[str, list[Member]]]:
        """Only ``[-1:]``: the last state (as a list of one, or none)."""
        if index != slice(-1, None):
            raise IndexError("LogStates: only the last state, [-1:]")
        last: list[tuple[str, list[Member]]] = []
        for state in self:
            last = [state]
        return last


MAX_STATE_MEMBERS = 2_000_000
"""A group seen in a broker log is checked in its latest states, as many as hold this many
members in all (each state's check allocates its topic's queues over its members)."""


@dataclass
class Group:
    """A group as its members' source shows it: ``states`` are the member lists it had, each
    with the time it began (one state, ``now``, from ``consumerConnection``; one per second of
    changes from a broker log, ``LogStates``)."""

    name: str
    states: list[tuple[str, list[Member]]] | LogStates
    source: str                                   # consumerConnection | brokerLog | clientLog
    logs: list[ClientLogFile]                     # client logs of the group's members
    topics: set[str]


def _short(q: MessageQueue) -> str:
    return f"{q.broker_name}/{q.queue_id}"


def _user_topic(t: str) -> bool:
    return not t.startswith("%") and t != "RMQ_SYS_TRACE_TOPIC"


# ------------------------------------------------------------------ the groups

def groups_of(inputs: Inputs) -> dict[str, Group]:
    out: dict[str, Group] = {}
    for cf in inputs.connections:
        if cf.group is None or cf.group in out:
            continue
        members = [Member(c.client_id, c.addr.rsplit(":", 1)[0], c.version, [c.ev], c.addr)
                   for c in cf.connections]
        out[cf.group] = Group(cf.group, [("now", members)], "consumerConnection", [],
                              {s.topic for s in cf.subscriptions if _user_topic(s.topic)})
    for bl in sorted(inputs.broker_logs, key=lambda x: x.path):
        by_group: dict[str, list[MemberLine]] = {}
        for e in bl.events:                       # one pass: each group's lines, in order
            by_group.setdefault(e.group, []).append(e)
        for g in sorted(by_group):
            if g in out or not any(e.event == "join" for e in by_group[g]):
                continue
            out[g] = Group(g, LogStates(by_group[g]), "brokerLog", [], set())
    for cl in inputs.client_logs:
        for (g, _topic), last in cl.last.items():
            if g in cl.shut_down or (g in out and out[g].source != "clientLog"):
                continue
            grp = out.setdefault(g, Group(g, [("now", [])], "clientLog", [], set()))
            if cl not in grp.logs:
                grp.logs.append(cl)
                assert isinstance(grp.states, list)       # a client-log group: one state, now
                grp.states[0][1].append(Member(last.client_id, last.client_id.split("@")[0],
                                               cl.version[0] if cl.version else None,
                                               [last.ev]))
    for g, grp in out.items():
        ids = grp.states.ids if isinstance(grp.states, LogStates) else \
            {m.client_id for _, members in grp.states for m in members}
        if grp.source != "clientLog":
            grp.logs = [cl for cl in inputs.client_logs
                        if any(last.client_id in ids for k, last in cl.last.items()
                               if k[0] == g)]
        for cl in grp.logs:
            grp.topics |= {t for (gg, t) in cl.last if gg == g and _user_topic(t)}
        for pf in inputs.progress:
            if pf.group == g:
                grp.topics |= {r.topic for r in pf.rows if _user_topic(r.topic)}
    return out


def queues_of(inputs: Inputs, topic: str) -> tuple[list[MessageQueue], str, TopicRoute | None]:
    """The topic's queues (as consumers see them) and where they came from."""
    for rf in inputs.routes:
        if rf.topic == topic:
            return sorted(subscribe_queues(topic, rf.route)), "topicRoute", rf.route
    rows = {(r.broker, r.queue_id) for pf in inputs.progress for r in pf.rows if r.topic == topic}
    if rows:
        return sorted(MessageQueue(topic, b, q) for b, q in rows), "consumerProgress", None
    seen: set[MessageQueue] = set()
    size = 0
    for cl in inputs.client_logs:
        seen |= cl.seen.get(topic, set())
        size = max([size] + [x.mq_all_size for k, x in cl.last.items() if k[1] == topic])
    if seen and len(seen) == size:
        return sorted(seen), "client logs", None
    return [], "", None


def allocate(strategy: str, group: str, queues: list[MessageQueue], cids: list[str]
             ) -> dict[str, list[MessageQueue]] | None:
    """Every distinct client id's share under ``strategy``, each computed from the same view
    (``None``: a strategy the doctor cannot compute without the deployment's configuration)."""
    if strategy not in COMPUTABLE or not queues or not cids:
        return None
    mq_all, cid_all = rebalance_view(queues, cids)
    shares = assign_all(_make(strategy), group, mq_all, cid_all)  # one pass where it can
    return {cid: list(shares.get(cid, [])) for cid in dict.fromkeys(cid_all)}


def _make(strategy: str) -> Any:
    from rocketlb_core.consumer.registry import make

    if strategy == "GO_CONSISTENT_HASH":
        from rocketlb_core.goclient.allocate import JavaView, consistent_hash

        return JavaView(consistent_hash(10))
    return make(strategy)


def _strategies(grp: Group, topic: str) -> tuple[dict[str, str], dict[str, str]]:
    """client id -> the strategy its last rebalance of ``topic`` names (``GO_UNKNOWN`` for a
    Go client's: ``_infer_go`` names it), and client id -> ``java`` or ``go``, whose log holds
    that rebalance."""
    strategies: dict[str, str] = {}
    clients: dict[str, str] = {}
    for cl in grp.logs:
        last = cl.last.get((grp.name, topic))
        if last is not None and last.client_id not in strategies:
            strategies[last.client_id] = last.strategy
            clients[last.client_id] = cl.client
    return strategies, clients


def _infer_go(grp: Group, topic: str, strategies: dict[str, str], queues: list[MessageQueue],
              cids: list[str]) -> list[str]:
    """Name each Go member's strategy in ``strategies`` (in place) by its logged share: the
    first of ``GO_STRATEGIES`` (a strategy the Java members name first) that gives it, on the
    group's member list and queues, the share its latest rebalance made with as many members
    and queues logged. Returns the Go members left unnamed (no such rebalance, or no strategy
    gives it: a configured list, a machine room)."""
    java = [s for s in strategies.values() if s != GO_UNKNOWN]
    order = sorted(GO_STRATEGIES, key=lambda s: s not in java)
    unnamed = []
    for cid, s in list(strategies.items()):
        if s != GO_UNKNOWN:
            continue
        logged = [x for cl in grp.logs for x in cl.history.get((grp.name, topic), [])
                  if x.client_id == cid and x.cid_all_size == len(cids)
                  and x.mq_all_size == len(queues)]
        found = None
        if logged and queues and cid in cids:
            want = sorted(logged[-1].result)
            for name in order:
                share = (allocate(name, grp.name, queues, cids) or {}).get(cid, [])
                if sorted(share) == want:
                    found = name
                    break
        if found is None:
            del strategies[cid]
            unnamed.append(cid)
        else:
            strategies[cid] = found
    return unnamed


def _logged(grp: Group, topic: str, ids: list[str], size: int) -> list[Evidence]:
    """Each client log's latest rebalance of ``topic`` by one of ``ids`` made with ``size``
    members (the state being checked), else its latest."""
    out = []
    for cl in grp.logs:
        kept = [x for x in cl.history.get((grp.name, topic), []) if x.client_id in ids]
        same = [x for x in kept if x.cid_all_size == size]
        if same or kept:
            out.append((same or kept)[-1].ev)
    return out


def _ownership(shares: dict[str, list[MessageQueue]], cids: list[str],
               queues: list[MessageQueue]) -> tuple[list[MessageQueue], list[MessageQueue]]:
    """Queues owned by no process and by two or more, given each process's id."""
    count: Counter[MessageQueue] = Counter()
    for cid in cids:
        for q in shares.get(cid, []):
            count[q] += 1
    return [q for q in queues if count[q] == 0], [q for q in queues if count[q] > 1]


def _progress_evidence(inputs: Inputs, group: str, topic: str,
                       queues: list[MessageQueue]) -> list[Evidence]:
    want = {(q.broker_name, q.queue_id) for q in queues}
    return [r.ev for pf in inputs.progress if pf.group == group for r in pf.rows
            if r.topic == topic and (r.broker, r.queue_id) in want]


# ------------------------------------------------------------------ the checks

def consumer_findings(inputs: Inputs) -> tuple[list[Finding], list[str]]:
    """The groups' and the clients' versions' findings (``diagnose`` adds the producers' and
    sorts), and notes on what could not be checked. A group seen in several states (a broker
    log) is checked in each; a problem is reported once, from the latest state that shows it,
    with the time that state began (``details.since``)."""
    findings: list[Finding] = []
    notes: list[str] = []
    groups = groups_of(inputs)
    for g in sorted(groups):
        grp = groups[g]
        if isinstance(grp.states, LogStates):
            if grp.states.skipped:
                notes.append(f"group {g}: {grp.states.skipped:,} earlier member lists of the "
                             "broker log not checked (only the latest, "
                             f"{MAX_STATE_MEMBERS:,} members in all)")
        elif not any(members for _, members in grp.states):
            continue
        if grp.source == "clientLog":
            notes.append(f"group {g}: members from client logs only (a killed process cannot be "
                         "told from a live one there; add consumerConnection -g or broker logs)")
        topics = sorted(grp.topics)
        if not topics:
            notes.append(f"group {g}: no topic known (add consumerProgress -g or client logs)")
        for topic in topics:
            queues, source, _ = queues_of(inputs, topic)
            if not queues:
                notes.append(f"group {g}, topic {topic}: its queues are unknown (add mqadmin "
                              f"topicRoute -t {topic})")
            worst: dict[str, Finding] = {}
            explained: set[MessageQueue] = set()
            for since, members in grp.states:
                if not members:
                    continue
                found, why = _check_topic(inputs, grp, members, topic, queues, source)
                explained |= why
                for f in found:
                    if grp.source == "brokerLog":
                        f.details["since"] = since
                    worst[f.id] = f            # the latest state that shows it
            findings += worst.values()
            findings += _observed(inputs, grp, topic, queues, explained)
        members = [m for _, ms in grp.states[-1:] for m in ms]
        findings += _check_versions(g, members)
    findings += _check_producer_versions(inputs)
    return findings, notes


def _check_topic(inputs: Inputs, grp0: Group, members: list[Member], topic: str,
                 queues: list[MessageQueue], source: str
                 ) -> tuple[list[Finding], set[MessageQueue]]:
    """The findings of one state of the group, and the queues they explain."""
    out: list[Finding] = []
    g = grp0.name
    cids = [m.client_id for m in members]
    ids = set(cids)
    grp = Group(g, [], grp0.source, [cl for cl in grp0.logs if any(
        x.client_id in ids for k, x in cl.last.items() if k[0] == g)], grp0.topics)
    strategies, clients = _strategies(grp, topic)
    _infer_go(grp, topic, strategies, queues, cids)
    named = sorted(set(strategies.values()))
    strategy = named[0] if len(named) == 1 else "AVG"
    assumed = "" if strategies else " (assumed: no client log names it; AVG is upstream's " \
                                    "default)"
    explained: set[MessageQueue] = set()
    counts = Counter(cids)
    dups = sorted(c for c, k in counts.items() if k > 1)

    # -------------------------------------------------- duplicate client ids
    if dups:
        f = Finding(
            "duplicate-client-id", "critical",
            f"{len(dups)} client id{'s' if len(dups) > 1 else ''} shared by several processes "
            f"in group {g}", g, topic,
            "Several processes report one client id (IP@instanceName), so the broker lists the "
            "id more than once. Each process computes its share from the sorted id list and "
            "finds its own position with indexOf, which returns the first copy for all of "
            "them: they take the same queues and consume every message of those twice, and the "
            "share of the later copies belongs to nobody, whose messages are never consumed.",
            "Give every process a distinct instanceName (or none: since 4.9.0 the default is "
            "PID#nanoTime), or a distinct client IP (setClientIP: no system property sets it); "
            "containers that share "
            "an IP and a configured instanceName are the usual cause.",
            BOOK.format("09-troubleshooting", "duplicate-client-ids-in-containers"),
            members=dups,
            hosts=sorted({m.addr or m.host for m in members if m.client_id in dups}),
            evidence=[e for m in members if m.client_id in dups for e in m.evidence])
        f.evidence += _logged(grp, topic, dups, len(cids))
        shares = allocate(strategy, g, queues, cids) if len(named) <= 1 else None
        if shares is not None:
            unowned, double = _ownership(shares, cids, queues)
            distinct = [c if i == 0 else f"{c}#{i + 1}" for c, n in counts.items()
                        for i in range(n)]
            after = allocate(strategy, g, queues, distinct) or {}
            un_after, double_after = _ownership(after, distinct, queues)
            f.queues = [_short(q) for q in unowned]
            f.details = {"strategy": strategy + assumed, "queues_source": source,
                         "unconsumed_queues": [_short(q) for q in unowned],
                         "consumed_twice_queues": [_short(q) for q in double],
                         "processes": len(cids), "distinct_ids": len(counts)}
            f.before_after = {
                "with": "a distinct instanceName per process",
                "metric": "unconsumed queues", "before": len(unowned), "after": len(un_after),
                "text": f"with distinct instanceName: {len(un_after)} unconsumed queues, was "
                        f"{len(unowned)}; {len(double_after)} consumed twice, was {len(double)}"}
            f.evidence += _progress_evidence(inputs, g, topic, unowned)
            explained |= set(unowned) | set(double)
        elif not queues:
            f.details = {"strategy": strategy + assumed}
        out.append(f)

    # -------------------------------------------------- more consumers than queues
    if queues and not dups and len(cids) > len(queues) and len(named) <= 1:
        shares = allocate(strategy, g, queues, cids)
        if shares is not None:
            idle = [c for c in cids if not shares.get(c)]
            brokers = sorted({q.broker_name for q in queues})
            per = math.ceil(len(cids) / len(brokers))
            more = [MessageQueue(topic, b, i) for b in brokers for i in range(per)]
            after = allocate(strategy, g, more, cids) or {}
            f = Finding(
                "more-consumers-than-queues", "warning",
                f"{len(idle)} of {len(cids)} members of {g} own no queue of {topic}", g, topic,
                f"{topic} has {len(queues)} queues a consumer can read, and every strategy "
                "that computes shares from the member list (all but a configured list, "
                "AllocateMessageQueueByConfig) gives each queue to one member, so at least "
                f"{len(cids) - len(queues)} of the {len(cids)} members get nothing: they hold "
                "connections and rebalance, and add no throughput.",
                f"Stop the idle members, or give the topic more read and write queues "
                f"(mqadmin updateTopic -t {topic} -r {per} -w {per} -b BROKER_ADDR, once per "
                "master that serves the topic).",
                BOOK.format("09-troubleshooting", "queues-idle-after-a-scale-out"),
                members=idle, hosts=sorted({m.addr or m.host for m in members
                                            if m.client_id in idle}),
                evidence=[e for m in members if m.client_id in idle for e in m.evidence])
            for cl in grp.logs:
                last = cl.last.get((g, topic))
                if last is not None and last.client_id in idle and not last.result:
                    f.evidence.append(last.ev)
            f.details = {"strategy": strategy + assumed, "queues_source": source,
                         "queues": len(queues), "members": len(cids)}
            idle_after = [c for c in cids if not after.get(c)]
            f.before_after = {
                "with": f"{per} queues per broker", "metric": "idle members",
                "before": len(idle), "after": len(idle_after),
                "text": f"with {per} queues per broker: {len(idle_after)} idle members, was "
                        f"{len(idle)}"}
            out.append(f)

    # -------------------------------------------------- different subscriptions
    subscribers = {cl.last[(g, topic)].client_id for cl in grp.logs if (g, topic) in cl.last}
    logged = {last.client_id for cl in grp.logs for k, last in cl.last.items() if k[0] == g}
    others = sorted(c for c in set(cids) & logged if c not in subscribers)
    if others and subscribers:
        f = Finding(
            "different-subscriptions", "critical",
            f"members of {g} subscribe different topics: {len(others)} member(s) do not "
            f"subscribe {topic}", g, topic,
            "The members of a group must subscribe the same topics with the same expressions. "
            "Each member divides a topic's queues over every member of the group the broker "
            "lists, subscribers or not, so the share of a member that does not subscribe the "
            "topic is read by no one; and the broker keeps one subscription per topic for the "
            "whole group (the newest a member sent: each renews it when its assignment "
            "changes), so tags change with whichever member rebalanced last.",
            "Give each distinct subscription its own consumer group (or subscribe the same "
            "topics and tags in every member).",
            BOOK.format("04-consumers-and-heartbeats", "inside-a-heartbeat-registerconsumer"),
            members=others,
            evidence=_logged(grp, topic, sorted(subscribers), len(cids)))
        for other_topic in sorted({t for cl in grp.logs for (gg, t) in cl.last
                                   if gg == g and t != topic and _user_topic(t)}):
            f.evidence += _logged(grp, other_topic, others, len(cids))
        shares = allocate(strategy, g, queues, cids) if len(named) <= 1 else None
        if shares is not None:
            subs = [c for c in cids if c in subscribers]
            unowned, _ = _ownership(shares, subs, queues)
            after = allocate(strategy, g, queues, subs) or {}
            un_after, _ = _ownership(after, subs, queues)
            f.queues = [_short(q) for q in unowned]
            f.details = {"strategy": strategy + assumed, "queues_source": source,
                         "subscribers": sorted(subscribers)}
            f.before_after = {
                "with": f"only {topic}'s subscribers in the group",
                "metric": "unconsumed queues", "before": len(unowned), "after": len(un_after),
                "text": f"with one group per subscription: {len(un_after)} unconsumed queues of "
                        f"{topic}, was {len(unowned)}"}
            f.evidence += _progress_evidence(inputs, g, topic, unowned)
            explained |= set(unowned)
        out.append(f)

    # -------------------------------------------------- different tags on one topic
    if not (others and subscribers):
        tags = _check_tags(inputs, grp, cids, topic, queues, source, strategy, named, assumed)
        if tags is not None:
            out.append(tags)

    # -------------------------------------------------- mixed strategies
    mixed_clients = len({clients.get(c) for c in strategies}) > 1
    if len(named) > 1 and mixed_clients:
        f = Finding(
            "mixed-clients", "critical",
            f"Java and Go members of {g} allocate {topic} differently: "
            + ", ".join(f"{s} ({c}, {clients.get(c, 'java').title()})"
                        for c, s in sorted(strategies.items())), g, topic,
            "The group mixes the Java and the Go client, and their strategies are not the same "
            "function: each member computes only its own share, with its own client's strategy, "
            "so the shares overlap and leave gaps. The Go client's AVG and AVG_BY_CIRCLE "
            "(AllocateByAveragely, AllocateByAveragelyCircle) compute what Java's do; its "
            "consistent hash (AllocateByConsistentHash, here GO_CONSISTENT_HASH, inferred from "
            "its logged share) builds another ring than Java's CONSISTENT_HASH, and its machine "
            "room strategies differ too.",
            "Configure AVG (AllocateByAveragely in Go, both clients' default) or AVG_BY_CIRCLE "
            "in every member of the group.",
            BOOK.format("05-allocation-strategies", "mixed-clients"),
            members=sorted(strategies),
            evidence=_logged(grp, topic, sorted(strategies), len(cids)))
    elif len(named) > 1:
        f = Finding(
            "mixed-strategies", "critical",
            f"members of {g} allocate {topic} with different strategies: "
            + ", ".join(f"{s} ({c})" for c, s in sorted(strategies.items())), g, topic,
            "Each member computes only its own share, with its own strategy, assuming the others "
            "use the same one. With different strategies the shares overlap and leave gaps: "
            "some queues are read by two members, some by none.",
            "Configure one AllocateMessageQueueStrategy for every member of the group.",
            BOOK.format("05-allocation-strategies", "a-group-must-agree-on-the-strategy"),
            members=sorted(strategies),
            evidence=_logged(grp, topic, sorted(strategies), len(cids)))
    if len(named) > 1:
        shares_by: dict[str, list[MessageQueue]] = {}
        computable = queues and all(s in COMPUTABLE for s in named)
        if computable:
            for cid in dict.fromkeys(cids):
                mine = allocate(strategies.get(cid, "AVG"), g, queues, cids) or {}
                shares_by[cid] = mine.get(cid, [])
            unowned, double = _ownership(shares_by, list(dict.fromkeys(cids)), queues)
            common = "AVG" if mixed_clients else Counter(strategies.values()).most_common(1)[0][0]
            after = allocate(common, g, queues, cids) or {}
            un_after, double_after = _ownership(after, list(dict.fromkeys(cids)), queues)
            f.queues = [_short(q) for q in unowned + double]
            f.details = {"strategies": strategies, "unconsumed_queues":
                         [_short(q) for q in unowned],
                         "consumed_twice_queues": [_short(q) for q in double]}
            f.before_after = {
                "with": f"{common} in every member", "metric": "unconsumed or doubly read "
                "queues", "before": len(unowned) + len(double),
                "after": len(un_after) + len(double_after),
                "text": f"with {common} everywhere: {len(un_after)} unconsumed and "
                        f"{len(double_after)} doubly read queues, was {len(unowned)}"
                        + _listed(unowned) + f" and {len(double)}" + _listed(double)}
            explained |= set(unowned) | set(double)
        out.append(f)

    return out, explained


def tag_set(expression: str) -> frozenset[str] | None:
    """The tags a TAG expression matches (``None``: every tag, ``*``), as upstream's
    ``FilterAPI.build`` splits it on ``||``."""
    tags = frozenset(t.strip() for t in expression.split("||") if t.strip())
    return None if not tags or "*" in tags else tags


def _tags_text(tags: frozenset[str] | None) -> str:
    return "*" if tags is None else ", ".join(sorted(tags)) or "no tag"


def _check_tags(inputs: Inputs, grp: Group, cids: list[str], topic: str,
                queues: list[MessageQueue], source: str, strategy: str, named: list[str],
                assumed: str) -> Finding | None:
    """Members that subscribe ``topic`` with different expressions (their heartbeats, as their
    client logs quote them). The broker keeps one subscription per group and topic, the highest
    ``subVersion`` (``ConsumerGroupInfo.updateSubscription``; each member renews its version when
    its assignment changes, ``RebalancePushImpl.messageQueueChanged``), and filters every pull of
    the group with it (``PullMessageProcessor``: a push consumer does not post its own,
    ``postSubscriptionWhenPull`` is false); the member then drops what its own tags do not match
    (``PullAPIWrapper.processPullResult``) and its offset moves past both. So a queue delivers
    only the tags both the broker's expression and its owner's match: the rest of what the
    group subscribes is lost there. Owners from the core's allocation, the broker's expression
    from ``consumerConnection`` (else the newest heartbeat)."""
    g = grp.name
    ids = set(cids)
    seen: dict[str, Any] = {}
    for cl in grp.logs:
        sub = cl.subscriptions.get((g, topic))
        if sub is not None and sub.client_id in ids:
            old = seen.get(sub.client_id)
            if old is None or sub.sub_version > old.sub_version:
                seen[sub.client_id] = sub
    expressions = {c: seen[c].expression for c in sorted(seen)}
    if len(set(expressions.values())) < 2:
        return None
    held = [(s.expression, s.ev, "consumerConnection") for cf in inputs.connections
            if cf.group == g for s in cf.subscriptions if s.topic == topic]
    if held:
        broker_expr, broker_ev, held_from = held[0]
    else:
        newest = max(seen.values(), key=lambda x: x.sub_version)
        broker_expr, broker_ev, held_from = newest.expression, newest.ev, "the newest heartbeat"
    listing = ", ".join(f"{e} ({c})" for c, e in expressions.items())
    f = Finding(
        "different-subscriptions", "critical",
        f"members of {g} subscribe {topic} with different expressions: {listing}", g, topic,
        "The members of a group must subscribe the same topics with the same expressions. The "
        f"broker keeps one subscription of {topic} for the whole group, the newest a member "
        "sent (each member renews it when its assignment changes), and filters every member's "
        "pulls with it; the member then drops what its own expression does not match, and its "
        "offset moves past both. So each queue delivers only the tags that both the broker's "
        "expression and its owner's match: messages of the other members' tags on a member's "
        "queues are skipped, lost to the group, and the expression the broker holds changes "
        "with whichever member rebalanced last.",
        "Give each distinct subscription its own consumer group (or subscribe the same "
        "expression in every member).",
        BOOK.format("04-consumers-and-heartbeats", "inside-a-heartbeat-registerconsumer"),
        members=sorted(expressions),
        evidence=[seen[c].ev for c in sorted(seen)] + [broker_ev])
    f.details = {"expressions": expressions, "broker_expression": broker_expr,
                 "broker_expression_from": held_from}
    types = {seen[c].expression_type for c in seen}
    shares = allocate(strategy, g, queues, cids) if len(named) <= 1 else None
    if types != {"TAG"} or shares is None:
        return f
    wanted: frozenset[str] | None = frozenset()
    for e in expressions.values():
        t = tag_set(e)
        wanted = None if t is None or wanted is None else wanted | t
    broker = tag_set(broker_expr)
    lost_on: dict[str, str] = {}
    owners: dict[str, str] = {}
    for cid in dict.fromkeys(cids):
        mine = tag_set(expressions.get(cid, broker_expr))
        delivered = mine if broker is None else broker if mine is None else broker & mine
        for q in shares.get(cid, []):
            owners[_short(q)] = cid
            if wanted is None:
                lost = "" if delivered is None else "every tag but " + _tags_text(delivered) \
                    if delivered else "every tag"
            else:
                rest = wanted - delivered if delivered is not None else frozenset()
                lost = _tags_text(rest) if rest else ""
            if lost:
                lost_on[_short(q)] = lost
    f.queues = [_short(q) for q in queues if _short(q) in lost_on]
    f.details.update({"strategy": strategy + assumed, "queues_source": source,
                      "owners": owners, "lost_on": lost_on})
    # one group per expression: the broker holds each group's only expression, so every
    # queue delivers all its group subscribes
    f.before_after = {
        "with": "one group per subscription", "metric": "queues that lose messages",
        "before": len(f.queues), "after": 0,
        "text": f"with one group per subscription: 0 queues of {topic} lose messages, was "
                f"{len(f.queues)}"}
    return f


def _listed(queues: list[MessageQueue]) -> str:
    return f" ({', '.join(_short(q) for q in queues)})" if queues else ""


def _observed(inputs: Inputs, grp: Group, topic: str, queues: list[MessageQueue],
              explained: set[MessageQueue]) -> list[Finding]:
    """What the cluster shows that no finding explains: queues without an owner in
    ``consumerProgress -s true``, queues two members' client logs claimed at once for longer
    than a rebalance."""
    out: list[Finding] = []
    g = grp.name
    # -------------------------------------------------- what the cluster shows, unexplained
    observed_unowned: list[MessageQueue] = []
    ev: list[Evidence] = []
    for pf in inputs.progress:
        if pf.group != g or not pf.with_clients:
            continue
        for r in pf.rows:
            q = MessageQueue(topic, r.broker, r.queue_id)
            if r.topic == topic and r.client == "" and q not in explained \
                    and q not in observed_unowned:
                observed_unowned.append(q)
                ev.append(r.ev)
    if observed_unowned:
        lagging = any(r.diff > 0 for pf in inputs.progress for r in pf.rows if r.ev in ev)
        out.append(Finding(
            "unowned-queues", "critical" if lagging else "warning",
            f"{len(observed_unowned)} queue(s) of {topic} owned by no member of {g}", g, topic,
            "mqadmin consumerProgress -s true shows no client for these queues: no member of "
            "the group pulls them, so what is written there waits. The doctor found no cause "
            "among the inputs (a member that just left, a rebalance under way, or a member "
            "whose client log was not given).",
            "Check the group again after 20 s (a rebalance runs at least that often); if the "
            "queues stay unowned, gather every member's rocketmq_client.log and run the doctor "
            "on them too.",
            BOOK.format("09-troubleshooting", "duplicate-client-ids-in-containers"),
            queues=[_short(q) for q in observed_unowned], evidence=ev))
    spans = []
    for cl in grp.logs:
        last = cl.last.get((g, topic))
        span = _span(cl, g, topic) if last is not None else None
        if last is not None and span is not None:
            spans.append((cl, last, span))
    twice: dict[MessageQueue, list[Evidence]] = {}
    for i, (_, a, (a0, a1)) in enumerate(spans):
        for _, b, (b0, b1) in spans[i + 1:]:
            if a.client_id == b.client_id or min(a1, b1) - max(a0, b0) < OVERLAP_MS:
                continue
            for q in sorted(set(a.result) & set(b.result)):
                if q not in explained:
                    twice.setdefault(q, [a.ev, b.ev])
    if twice:
        out.append(Finding(
            "doubly-owned-queues", "critical",
            f"{len(twice)} queue(s) of {topic} claimed by two members of {g}", g, topic,
            "Two members' logged assignments claimed the same queues at the same time for "
            "longer than a rebalance takes to settle: both pulled them, and the messages there "
            "were consumed twice.",
            "Look for members with different views of the group (a broker that does not list "
            "every member, a network partition) or different strategies; a restart of one "
            "member ends it for a while.",
            BOOK.format("09-troubleshooting", "messages-consumed-twice-around-a-rebalance"),
            queues=[_short(q) for q in twice],
            evidence=list(dict.fromkeys(e for evs in twice.values() for e in evs))))
    return out


OVERLAP_MS = 25_000
"""Two claims of one queue that overlap longer than this are not a rebalance in motion (a
rebalance runs every 20 s at most)."""


def _span(cl: ClientLogFile, group: str, topic: str) -> tuple[int, int] | None:
    """When ``cl``'s last assignment of ``topic`` held: from its line to the group's shutdown,
    else to the log's last line (epoch ms as if written in UTC: client logs of one cluster
    share a zone)."""
    from rocketlb_core.trace.clientlog import stamp_ms

    last = cl.last[(group, topic)]
    end = cl.shut_down[group].text if group in cl.shut_down else cl.end_stamp
    try:
        return stamp_ms(last.stamp[:23], 0), stamp_ms(end[:23], 0)
    except ValueError:
        return None


def _check_versions(group: str, members: list[Member]) -> list[Finding]:
    versions = Counter(m.version for m in members if m.version)
    if len(versions) < 2:
        return []
    return [Finding(
        "mixed-client-versions", "info",
        f"members of {group} run {len(versions)} client versions: "
        f"{', '.join(sorted(versions))}", group, None,
        "The members of the group run different RocketMQ client versions. Allocation is the "
        "same in every version the doctor knows, but defaults (instanceName, the rebalance "
        "interval, pop consumption on 5.x) differ, and a rolling upgrade that stalls leaves "
        "the group mixed.",
        "Finish the upgrade so that every member runs one version.",
        BOOK.format("05-allocation-strategies", "a-group-must-agree-on-the-strategy"),
        members=sorted({m.client_id for m in members}),
        evidence=[e for m in members for e in m.evidence],
        details={"versions": dict(sorted(versions.items()))})]


KNOWN_BUGS = {
    "rewritten-queue-list": (
        {f"V4_{a}_{b}" for a, b in [(7, 1), (8, 0)] + [(9, i) for i in range(8)]}
        | {"V5_0_0", "V5_1_0", "V5_1_1", "V5_1_2", "V5_1_3"},
        "#7779: with sendLatencyFaultEnable on, when no broker is available the least-bad pick "
        "overwrites a queue of the producer's shared queue list (4.7.1 to 4.9.7, 5.0.0 to "
        "5.1.3), so sends pile onto one broker's queue until the route is polled again.",
        "Upgrade the producers to 4.9.8 or 5.1.4 and later.",
        BOOK.format("03-latency-fault-tolerance", "before-4-9-8-the-queue-list-rewritten")),
    "permanent-avoidance": (
        {"V5_1_4"},
        "#7812: with sendLatencyFaultEnable on, 5.1.4 avoids a broker for good once an error "
        "reply marked it unreachable (FaultItem.isAvailable checks the reachable flag), so its "
        "queues get no sends until the producer restarts.",
        "Upgrade the producers to 5.2.0 or later, or turn sendLatencyFaultEnable off.",
        BOOK.format("09-troubleshooting", "a-broker-avoided-for-ten-minutes-after-one-slow-reply")),
}


def _check_producer_versions(inputs: Inputs) -> list[Finding]:
    out = []
    for bug, (versions, why, fix, book) in KNOWN_BUGS.items():
        hits = [cl for cl in inputs.client_logs if cl.version and cl.version[0] in versions
                and any(not g.startswith(("_INNER_TRACE", "CLIENT_INNER"))
                        for g in cl.producer_groups)]
        if hits:
            out.append(Finding(
                f"known-bug-{bug}", "warning",
                f"{len(hits)} producer(s) on a client version with a known balancing bug",
                None, None, why + " Whether it bites depends on sendLatencyFaultEnable, which "
                "the logs do not show.", fix, book,
                members=sorted({c for cl in hits for c in cl.client_ids}),
                evidence=[cl.version[1] for cl in hits if cl.version],
                details={"versions": sorted({cl.version[0] for cl in hits if cl.version})}))
    return out
