"""The model against a live broadcasting group (issue 45): every member takes every queue.

Upstream (spec 1.4, 4.1; 4.9.8 and 5.3.3 ``RebalanceImpl.rebalanceByTopic``): a
``BROADCASTING`` consumer allocates nothing. Its rebalance takes the topic's whole subscribed
queue set (``topicSubscribeInfoTable``: the readable queues of its route) into
``updateProcessQueueTableInRebalance`` and, when its table changed, logs ``messageQueueChanged
GROUP TOPIC [set] [set]``. Its offsets are its own (``LocalFileOffsetStore``), so a member
that has none starts a new queue where ``computePullFromWhere`` puts a never-committed queue:
under the default ``CONSUME_FROM_LAST_OFFSET``, at the queue's max offset, and what was stored
before it joined is not its to read (fact consumer.broadcast-offsets-local). An *orderly*
member (``MessageListenerOrderly``) up to 5.3.1 passes ``isOrder`` there, so it creates a queue
only once the broker grants the queue's lock, a lock it never renews (``lockMQPeriodically``
runs in clustering mode only), while the broker keeps one lock per group and queue for 60 s
(``BROKER_LOCK_MAX_LIVE_MS``): a second member is refused (``add a new mq failed, ..., because
lock failed``) until the first one's lock has expired, and reads nothing of that queue until
then; 5.3.2 and later take no lock there (``LineRules.broadcast_orderly_locks``; fact
consumer.broadcast-orderly-takes-broker-lock-until-5.3.1, issue #1286).

What the check reads: each member's client log (its ``messageQueueChanged`` sets, its queue
creations and refusals, its route changes), what it consumed (``ranges/<member>.json``: per
queue the first and last offset and how many distinct ones, from ``live/java/Consume.java``)
and the topic's dump (each message's queue, offset and store time). Each item gets a verdict:

* ``AGREE``: a logged set equal to the readable queues of the route the member held then
  (``subscribe_queues``); a queue created with no lock needed, or with the lock free (no other
  member of the group had taken it, or its taker's lock had expired);
* ``LOCK_HELD``: a refused lock (an orderly member, a line that locks), while another member
  of the group had taken the queue less than ``BROKER_LOCK_MAX_LIVE_MS`` before;
* ``START_AGREE``: a member's first offset of a queue is the queue's max offset at the moment
  it created the queue (the messages stored up to then: within ``SLACK_MS`` before its log
  line, the time ``computePullFromWhere`` ran), or for an orderly member at its first pull of
  the queue (``the first time to pull message, so fix offset from broker``: the orderly branch
  of ``pullMessage`` computes the start again and pulls from that; 5.x dispatches a new queue's
  first pull 500 ms after the rebalance, so messages stored meanwhile are not its to read: fact
  consumer.orderly-first-pull-recomputes-offset), and it read every offset from there to the
  queue's end (the member ran to the recording's end);
* ``NOTHING_AFTER``: a queue the member created after its last message was stored: nothing
  to read, and nothing read;
* ``STALLED_NOT_LATEST``: as ``START_AGREE`` from the model's start and without a gap, but
  short of the queue's end, and the member's log holds pulls that queue's broker refused with
  code 25, ``SUBSCRIPTION_NOT_LATEST``, after the last message it read was stored: a rebalance
  that changes a push consumer's table gives its subscription a new version and sends a
  heartbeat only if it can take the client's heartbeat lock (``lock heartBeat, but failed``
  when the scheduled heartbeat holds it), and a broker still holding the older version refuses
  every pull until the next heartbeat, up to 30 s later (fact
  consumer.rebalance-change-new-sub-version-pull-refused-until-heartbeat);
* ``UNEXPLAINED``: anything else (a set that is not the route's, a refusal with no holder or on
  a line that takes no lock, a lock granted while another member's was live, a first offset
  elsewhere, a gap, a queue read that the member never created).

Standard library only.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rocketlb_core.consumer.rebalance import (
    BROKER_LOCK_MAX_LIVE_MS,
    ConsumeFromWhere,
    compute_pull_from_where,
)
from rocketlb_core.model import MessageQueue, TopicRoute, subscribe_queues
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.trace import verdicts

AGREE = verdicts.text("broadcast", "AGREE")
LOCK_HELD = verdicts.text("broadcast", "LOCK_HELD")
START_AGREE = verdicts.text("broadcast", "START_AGREE")
NOTHING_AFTER = verdicts.text("broadcast", "NOTHING_AFTER")
STALLED_NOT_LATEST = verdicts.text("broadcast", "STALLED_NOT_LATEST")
UNEXPLAINED = verdicts.text("broadcast", "UNEXPLAINED")
ROUTE_RACE_MS = 100
"""A set logged this soon after a route change may still be the old route's."""
SLACK_MS = 1_000
"""How long before a queue's ``add a new mq`` line its start offset may have been computed (the
lookup and the lock come first), and how far a log line's time may stray from the broker's
clock for the lock's expiry (one machine's clock, written by two processes)."""


@dataclass(frozen=True)
class BroadcastCheck:
    member: str
    kind: str             # "set", "create", "refused" or "read"
    time_ms: int          # the log line's (or the creation's) trace time
    queue: str            # "broker-a/0", or "" for a set
    detail: str
    verdict: str


@dataclass
class BroadcastAgreement:
    checks: list[BroadcastCheck] = field(default_factory=list)

    def count(self, verdict: str) -> int:
        return sum(c.verdict == verdict for c in self.checks)

    def summary(self) -> dict[str, Any]:
        return {"items": len(self.checks), "agree": self.count(AGREE),
                "lock_held": self.count(LOCK_HELD), "start_agree": self.count(START_AGREE),
                "nothing_after": self.count(NOTHING_AFTER),
                "stalled_not_latest": self.count(STALLED_NOT_LATEST),
                "unexplained": self.count(UNEXPLAINED)}

    def others(self) -> list[BroadcastCheck]:
        return [c for c in self.checks if c.verdict == UNEXPLAINED]


@dataclass(frozen=True)
class Member:
    """One broadcasting member as the check reads it (times in trace milliseconds)."""

    name: str
    orderly: bool
    sets: Sequence[tuple[int, frozenset[MessageQueue]]]          # messageQueueChanged
    queue_lines: Sequence[tuple[int, MessageQueue, str]]          # (t, queue, outcome)
    routes: Sequence[tuple[int, TopicRoute]]                       # its logged route changes
    ranges: Mapping[str, tuple[int, int, int]]                     # "broker/q": first, last, n
    stayed: bool = True       # ran to the recording's end (no leave, crash or freeze)
    first_pulls: Sequence[tuple[int, MessageQueue]] = ()         # an orderly member's
    not_latest: Sequence[tuple[int, str]] = ()      # pulls refused with code 25: (t, broker)


def _routes_at(routes: Sequence[tuple[int, TopicRoute]], first: TopicRoute,
               t: int) -> list[TopicRoute]:
    """The route the member held at ``t``, and the one before it when its change was logged
    less than ``ROUTE_RACE_MS`` earlier (``updateTopicRouteInfoFromNameServer`` logs the change
    before it updates the subscribe set a rebalance reads)."""
    held, before, at_ms = first, first, -(1 << 62)
    for at, route in routes:
        if at > t:
            break
        held, before, at_ms = route, held, at
    return [held, before] if t - at_ms < ROUTE_RACE_MS else [held]


def broadcast_agreement(members: Sequence[Member], *, line: str, topic: str,
                        route: TopicRoute, stored: Mapping[str, Sequence[int]],
                        stopped: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                        kills: Mapping[str, Sequence[int]] | None = None
                        ) -> BroadcastAgreement:
    """The members of one broadcasting group against the model. ``stored``: per queue
    (``"broker/q"``), the store times of its messages in offset order (the topic's dump);
    ``route``: the route the recording read from the brokers, before a member logged one;
    ``stopped``: each broker's paused or killed stretches (a lock request it cannot answer
    fails: ``lock`` returns false, and the queue is refused as if held); ``kills``: when each
    broker was killed (its lock table, in memory, is gone with it)."""
    stopped, kills = stopped or {}, kills or {}
    rules = ProducerLine.parse(line).rules
    out = BroadcastAgreement()
    # every member's creations, in time order: who took each queue's lock last, and when
    taken: dict[MessageQueue, list[tuple[int, str]]] = {}
    for m in members:
        if not (m.orderly and rules.broadcast_orderly_locks):
            continue              # a concurrent member, or a line that takes none: no lock
        for t, q, took in m.queue_lines:
            if took == "added":
                taken.setdefault(q, []).append((t, m.name))
    for q in taken:
        taken[q].sort()
    for m in members:
        locks = m.orderly and rules.broadcast_orderly_locks
        for t, queues in m.sets:
            wants = [subscribe_queues(topic, r) for r in _routes_at(m.routes, route, t)]
            ok = queues in wants
            want = wants[0]
            out.checks.append(BroadcastCheck(
                m.name, "set", t, "", f"{len(queues)} queues, the route's readable "
                f"{len(want)}" + ("" if ok else f"; missing {_names(want - queues)}, extra "
                                  f"{_names(queues - want)}"), AGREE if ok else UNEXPLAINED))
        created: dict[MessageQueue, int] = {}
        again: dict[MessageQueue, list[int]] = {}      # every creation of each queue
        for t, q, took in m.queue_lines:
            # a refusal may be logged just before the grant it met (two members starting at
            # once): a taker that logged its creation within SLACK_MS after it counts
            holder = _holder(taken.get(q, ()), m.name,
                             t + SLACK_MS if took == "lock_refused" else t)
            if holder is not None and any(holder[0] < r <= t
                                          for r in kills.get(q.broker_name, ())):
                holder = None                     # its broker was killed since: no lock held
            live = holder is not None and t - holder[0] < BROKER_LOCK_MAX_LIVE_MS + SLACK_MS
            down = any(lo - SLACK_MS <= t <= hi + SLACK_MS
                       for lo, hi in stopped.get(q.broker_name, ()))
            if took == "lock_refused":
                ok = locks and (live or down)
                why = (f"{holder[1]} took it {t - holder[0]} ms before" if holder else
                       "no other member had taken it") + (f"; {q.broker_name} stopped"
                                                          if down else "") + (
                    "" if locks else "; this member takes no lock")
                out.checks.append(BroadcastCheck(m.name, "refused", t, q.short(), why,
                                                 LOCK_HELD if ok else UNEXPLAINED))
            elif took == "added":
                created.setdefault(q, t)
                again.setdefault(q, []).append(t)
                ok = not locks or holder is None or \
                    t - holder[0] >= BROKER_LOCK_MAX_LIVE_MS - SLACK_MS
                why = ("no lock taken" if not locks else "lock free" if holder is None else
                       f"{holder[1]}'s lock taken {t - holder[0]} ms before")
                out.checks.append(BroadcastCheck(m.name, "create", t, q.short(), why,
                                                 AGREE if ok else UNEXPLAINED))
        out.checks.extend(_reads(m, created, stored, line, again))
    return out


def _holder(takers: Sequence[tuple[int, str]], me: str, t: int) -> tuple[int, str] | None:
    """The last other member to take the queue's lock before ``t`` (``None``: none)."""
    before = [x for x in takers[:bisect.bisect_right(takers, (t, "\uffff"))] if x[1] != me]
    return before[-1] if before else None


def _held(m: Member, q: MessageQueue, created: Sequence[int]) -> list[tuple[int, int]]:
    """The stretches ``m`` held ``q``: from each creation to the first queue set after it that
    leaves ``q`` out (a broadcasting rebalance drops a queue its route no longer lists), or on
    (``2**62``)."""
    out = []
    for t in created:
        gone = min((at for at, queues in m.sets if at > t and q not in queues), default=2**62)
        out.append((t, gone))
    return out


def _reads(m: Member, created: Mapping[MessageQueue, int],
           stored: Mapping[str, Sequence[int]], line: str,
           again: Mapping[MessageQueue, Sequence[int]] | None = None) -> list[BroadcastCheck]:
    out = []
    for q, t in sorted(created.items(), key=lambda x: (x[0].broker_name, x[0].queue_id)):
        times = stored.get(q.short(), ())
        # an orderly member computes the start again at its first pull, and pulls from that
        t = min((at for at, x in m.first_pulls if x == q and at >= t), default=t) \
            if m.orderly else t
        # the max offset the lookup saw: every message stored up to it (the model's start for a
        # queue this member never committed: CONSUME_FROM_LAST_OFFSET, local offsets, none)
        hi = compute_pull_from_where(ConsumeFromWhere.LAST_OFFSET, -1, q.topic, line=line,
                                     max_offset=bisect.bisect_right(times, t), search_offset=0)
        lo = bisect.bisect_right(times, t - SLACK_MS)
        got = m.ranges.get(q.short())
        end = len(times)
        if got is None:
            # a member that read nothing: no message stored while it held the queue, after the
            # start each creation computed (a queue dropped when its broker left the route and
            # created again when it came back starts at the queue's end again: live on 5.3.3,
            # soak scenario 207695328380917, a broadcasting member across broker-a's kill)
            missed = 0
            for at, gone in _held(m, q, (again or {}).get(q, [t])):
                start = min((x for x, y in m.first_pulls if y == q and x >= at), default=at) \
                    if m.orderly else at
                begin = compute_pull_from_where(
                    ConsumeFromWhere.LAST_OFFSET, -1, q.topic, line=line,
                    max_offset=bisect.bisect_right(times, start), search_offset=0)
                missed += max(0, bisect.bisect_left(times, gone) - begin)
            ok = missed == 0 or not m.stayed
            out.append(BroadcastCheck(m.name, "read", t, q.short(),
                                      f"read nothing; {missed} stored while it held the queue",
                                      NOTHING_AFTER if ok else UNEXPLAINED))
            continue
        first, last, n = got
        whole = lo <= first <= hi and n == last - first + 1
        ok = whole and (last == end - 1 or not m.stayed)
        # stopped short: its broker refused its pulls as not latest after the last one it read
        stalled = whole and not ok and last + 1 < end and any(
            b == q.broker_name and at >= times[last] - SLACK_MS for at, b in m.not_latest)
        out.append(BroadcastCheck(
            m.name, "read", t, q.short(), f"offsets {first} to {last} ({n} read); the model "
            f"starts at {lo}..{hi}, the queue ends at {end - 1}"
            + ("; its broker refused its pulls as not latest (code 25) after the last"
               if stalled else ""),
            START_AGREE if ok else STALLED_NOT_LATEST if stalled else UNEXPLAINED))
    for key in sorted(set(m.ranges) - {q.short() for q in created}):
        out.append(BroadcastCheck(m.name, "read", 0, key, "read a queue it never created",
                                  UNEXPLAINED))
    return out


def _names(queues: frozenset[MessageQueue]) -> str:
    return ", ".join(sorted(q.short() for q in queues)) or "none"


def _read_json_object(path: Any) -> dict[str, Any]:
    import json

    from rocketlb_core.trace.schema import TraceError
    from rocketlb_core.trace.textfile import read_lines

    try:
        value = json.loads("".join(text for _, text in read_lines(path)))
    except (ValueError, RecursionError):
        raise TraceError(path, None, None, "not JSON") from None
    if not isinstance(value, dict):
        raise TraceError(path, None, None, "expected a JSON object (Consume.java's)")
    return value


def read_ranges(path: Any) -> dict[str, tuple[int, int, int]]:
    """A member's ``ranges/<member>.json`` (``live/java/Consume.java``): per queue
    ``"broker/q"`` (a broker name, a queue id from 0 to 65,535) ``[first, last, count]``,
    offsets from 0 to 2^63 - 1 with ``first <= last`` and ``count`` from 1 to ``last - first +
    1``; anything else is a ``TraceError`` naming the file and the queue."""
    from rocketlb_core.trace.schema import TraceError

    out: dict[str, tuple[int, int, int]] = {}
    for key, value in _read_json_object(path).items():
        broker, _, queue = key.rpartition("/")
        where = f"{key!r:.60}"                         # an empty or odd key shows as such
        if not broker or len(broker) > 255 or not queue.isascii() or not queue.isdigit() \
                or int(queue) > 65_535:
            raise TraceError(path, None, where, "a queue as 'broker/id' expected")
        ok = (isinstance(value, list) and len(value) == 3
              and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**63
                      for x in value))
        if not ok or not value[0] <= value[1] or not 1 <= value[2] <= value[1] - value[0] + 1:
            raise TraceError(path, None, where, f"[first, last, count] with first <= last "
                             f"and count from 1 to last - first + 1 expected, got "
                             f"{value!r:.80}")
        out[key] = (value[0], value[1], value[2])
    return out


def read_store_times(path: Any) -> dict[str, list[int]]:
    """The topic's dump (``live/java/DumpTopic.java``): per queue ``"broker/q"``, its messages'
    store times in offset order; the offsets of a queue must run 0, 1, 2, ... (the dump reads
    every message of a young topic), else a ``TraceError`` naming the line and the field."""
    import json

    from rocketlb_core.trace.schema import TraceError
    from rocketlb_core.trace.textfile import read_lines

    rows: dict[str, list[tuple[int, int]]] = {}
    for n, text in read_lines(path):
        try:
            x = json.loads(text)
        except (ValueError, RecursionError):
            raise TraceError(path, n, None, "not a JSON object") from None
        if not isinstance(x, dict):
            raise TraceError(path, n, None, "not a JSON object")
        broker = x.get("broker")
        if not isinstance(broker, str) or not 0 < len(broker) <= 255:
            raise TraceError(path, n, "broker", f"a broker name expected, got {broker!r:.40}")
        for key, high in (("queue", 65_535), ("offset", 2**63 - 1), ("store_ms", 2**63 - 1)):
            v = x.get(key)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= high:
                raise TraceError(path, n, key, f"an integer from 0 to {high} expected, got "
                                 f"{v!r:.40}")
        rows.setdefault(f"{broker}/{x['queue']}", []).append((x["offset"], x["store_ms"]))
    out = {}
    for key, got in rows.items():
        got.sort()
        if [o for o, _ in got] != list(range(len(got))):
            raise TraceError(path, None, "offset", f"queue {key}: offsets do not run from 0 "
                             "without a gap")
        out[key] = [t for _, t in got]
    return out


def check_broadcast(recording: Any, *, line: str | None = None, first_pull: bool = True,
                    stall: bool = True) -> dict[str, dict[str, Any]]:
    """Every broadcasting member of a live recording against the model, per member: its group,
    listener, the counts (``BroadcastAgreement.summary``) and what did not agree. Times are
    milliseconds after the recording's ``t0_ms``. ``line`` holds the recording to another
    line's model (the tests' proof that the check can fail); by default its own.
    ``first_pull=False`` starts an orderly member's queue where its rebalance computed it,
    ignoring the first pull's new start (the model before the 5.3.3 recording refuted it);
    ``stall=False`` reads no code-25 refusal (the check before a soak's member stalled)."""
    import json
    from pathlib import Path

    from rocketlb_core.trace.clientlog import (
        FirstPull,
        QueueAdded,
        QueueSetChanged,
        read_client_log,
        read_not_latest,
        read_queue_events,
        stamp_ms,
    )
    from rocketlb_core.trace.importer import log_offset, recording_route

    recording = Path(recording)
    meta = json.loads((recording / "recording.json").read_text(encoding="utf-8"))
    own, topic, t0 = meta["client_version"], meta["topic"], int(meta["t0_ms"])
    offset = log_offset(own, int(meta.get("utc_offset_minutes", 0)))
    line = line or own
    route = recording_route(meta)
    kept = [k for k in meta["consumers"] if k.get("model") == "broadcasting"]
    if not kept:
        return {}
    from rocketlb_core.trace.ordered_agreement import stopped_spans

    events = meta["events"]
    kills: dict[str, list[int]] = {}
    for e in events:
        if e["action"] == "kill":
            kills.setdefault(e["target"], []).append(int(e["wall_ms"]) - t0)
    gone = {e["target"] for e in events if e["action"] in ("leave", "crash", "freeze")}
    names = {b["address"]: b["name"] for b in meta["brokers"]}
    stored = {k: [t - t0 for t in v]
              for k, v in read_store_times(recording / "topic.jsonl.gz").items()}
    groups: dict[str, list[Member]] = {}
    for k in kept:
        gz = recording / "logs" / k["name"] / "rocketmq_client.log.gz"
        logged = read_queue_events(gz)
        changes = read_client_log(gz).route_changes
        mine = [e for e in logged if e.group == k["group"]]
        ranges_path = recording / "ranges" / f"{k['name']}.json"
        groups.setdefault(k["group"], []).append(Member(
            k["name"], k.get("listener") == "orderly",
            [(stamp_ms(e.stamp, offset) - t0, frozenset(e.queues)) for e in mine
             if isinstance(e, QueueSetChanged) and e.topic == topic],
            [(stamp_ms(e.stamp, offset) - t0, e.queue, e.outcome) for e in mine
             if isinstance(e, QueueAdded) and e.queue.topic == topic],
            [(stamp_ms(c.stamp, offset) - t0, TopicRoute(c.queue_datas)) for c in changes
             if c.topic == topic],
            read_ranges(ranges_path) if ranges_path.is_file() else {}, k["name"] not in gone,
            [(stamp_ms(e.stamp, offset) - t0, e.queue) for e in mine
             if isinstance(e, FirstPull) and e.queue.topic == topic and first_pull],
            [(stamp_ms(at, offset) - t0, names[addr]) for at, addr in read_not_latest(gz)
             if addr in names and stall]))
    out = {}
    for group, members in sorted(groups.items()):
        a = broadcast_agreement(members, line=line, topic=topic, route=route, stored=stored,
                                stopped=stopped_spans(events, t0), kills=kills)
        for m in members:
            part = BroadcastAgreement([c for c in a.checks if c.member == m.name])
            out[m.name] = {**part.summary(), "group": group, "model": "broadcasting",
                           "listener": "orderly" if m.orderly else "concurrently",
                           "others": [vars(c) for c in part.others()]}
    return out
