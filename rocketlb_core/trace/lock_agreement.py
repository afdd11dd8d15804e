"""The model against a live orderly clustering group (issue 45): the brokers' queue locks.

Upstream (spec 4.1 and 4.4; client 4.9.8, 5.3.3 and 5.5.0 ``RebalanceImpl.lock``/``lockAll``/
``unlock``,
``RebalancePushImpl.removeUnnecessaryMessageQueue``, ``ConsumeMessageOrderlyService``; broker
4.9.7, 5.3.3 and 5.5.0 ``RebalanceLockManager``): an orderly (``MessageListenerOrderly``)
clustering member creates a queue its allocation gives it only once the queue's broker grants
the queue's lock (``add a new mq failed, ..., because lock failed`` otherwise: it tries again at
its next rebalance); it renews every lock it holds every ``LOCK_INTERVAL_MS`` (``lockAll``, the
first 1 s after start; 5.x schedules it twice, fact
consumer.orderly-pop-service-locks-too-and-outlives-shutdown); it consumes a queue only while
its own lock is younger than ``LOCK_MAX_LIVE_MS`` (30 s, client side); it releases a dropped
queue's lock (``unlockBatchMQ``). The broker keeps one lock per group and queue, in memory, for
``BROKER_LOCK_MAX_LIVE_MS`` (60 s) after its holder's last request: a request of another client
is refused until then (``locked by other client``), granted after (``lock expired, I got it``),
and granted at once when no entry exists (``not locked, I got it``): never locked, unlocked, or
lost with a killed broker's memory (fact consumer.orderly-lock-live-30s-client-60s-broker).

What the check reads: each broker's lock log (every grant, refusal and unlock its lock manager
writes, to the second, GMT+8: ``broker.log`` of a 4.x recording, ``filter.log`` of a 5.x one,
``LOCK_LOGS``), the members' client logs (their queue creations and
drops, their explicit lock requests, their refused creations), the scenario's events (joins,
crashes, a broker's pause and kill) and what each member consumed
(``consumes/<member>.jsonl.gz``: every message in the order its listener ran, with the time).
It replays each broker's lock table with the rules above and gives each item a verdict:

* ``GRANT_FREE``: a ``not locked, I got it`` line when the replayed table has no entry;
* ``GRANT_EXPIRED``: a ``lock expired`` line when the entry's holder had not renewed for
  ``BROKER_LOCK_MAX_LIVE_MS``: its last renewal lies no later than the last moment it could
  renew (alive, holding the queue, its broker answering) and no earlier than a renewal period
  before the end of the last stretch long enough to hold one (or its grant);
* ``REFUSED_HELD``: a ``locked by other client`` line while the holder's lock was live by the
  same bounds; ``UNLOCKED``: an unlock by the holder;
* ``REFUSED_SEEN``: a member's ``because lock failed`` line with the broker's refusal of that
  member and queue within ``SLACK_MS``, or while the queue's broker did not answer, or while
  the member's own route listed the broker without a master (its lock requests go to the master
  alone; live on 5.3.3, a master restarted beside its slave: the member's tries every second
  failed for 10 s after the restart, until its route poll brought the master's address);
* ``HELD``: a stretch of one member's consumption of a queue (a *run*: no other member's
  message between) during which the replayed table held that member's lock;
* ``CACHED``: a run's messages consumed after a kill emptied a table that held the member's
  lock, while no other member has been granted it since and within ``LOCK_MAX_LIVE_MS`` of the
  kill (the member's last renewal came before the kill): the member consumes what it pulls,
  from the restarted broker too, while its own view of the lock is young, whatever that broker
  holds;
* ``HANDOVER``: a queue's messages consumed by no member by the end, when they are the queue's
  tail (every one after the last message consumed) and the member that consumed that last one
  no longer held the table's lock at the end, having given it up (unlocked, or its lock granted
  to another) at most ``HANDOVER_MS`` before: the lock was still on its way to the next holder
  when the recording ended (live on 5.3.3, CI's draw 95726973438768: a rebalance 5 s before the
  end dropped three queues, whose 132 last messages each were nobody's yet);
* ``DUPLICATE``: a queue's messages consumed by no member by the end, when at every member-list
  snapshot from the queue's last consumption before the end (or from the start) the broker's
  list held an id twice and AVG, run for each distinct id, gave the queue to the copy: a
  stale channel of a member (a heartbeat the broker read only after the member had closed
  that connection) stands in the list until the broker's scan drops it, and the queue is
  nobody's (live on 5.3.3, a draw of CI's random scenario, 234733733319009: ord1 twice while
  broker-a was paused and resumed, broker-a/1 left to nobody for the whole recording);
* ``UNEXPLAINED``: anything else (a grant over a live lock, a refusal by a holder that was not
  the holder, a run while another member held the lock, a queue's message consumed by none).

Each queue's consumption is also summed up: messages consumed once, consumed again by the next
holder (``repeated``: the previous holder's offset not yet committed), and never consumed
(``unconsumed``, unexplained).

Standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlb_core.conditions import REBALANCE_WAIT_MS, ROUTE_POLL_MS
from rocketlb_core.consumer.rebalance import BROKER_LOCK_MAX_LIVE_MS, LOCK_MAX_LIVE_MS
from rocketlb_core.trace import verdicts
from rocketlb_core.trace.clientlog import GMT8_MINUTES, check_stamp, parsed_lines, stamp_ms
from rocketlb_core.trace.schema import TraceError

GRANT_FREE = verdicts.text("orderly-locks", "GRANT_FREE")
GRANT_EXPIRED = verdicts.text("orderly-locks", "GRANT_EXPIRED")
REFUSED_HELD = verdicts.text("orderly-locks", "REFUSED_HELD")
UNLOCKED = verdicts.text("orderly-locks", "UNLOCKED")
REFUSED_SEEN = verdicts.text("orderly-locks", "REFUSED_SEEN")
HELD = verdicts.text("orderly-locks", "HELD")
CACHED = verdicts.text("orderly-locks", "CACHED")
HANDOVER = verdicts.text("orderly-locks", "HANDOVER")
DUPLICATE = verdicts.text("orderly-locks", "DUPLICATE")
UNEXPLAINED = verdicts.text("orderly-locks", "UNEXPLAINED")

LOCK_INTERVAL_MS = 20_000
"""``ProcessQueue.REBALANCE_LOCK_INTERVAL``: how often a member renews its locks (``lockAll``)."""
SLACK_MS = 1_000
"""How far two processes' clocks and a log's second may stray: a broker's lines are to the
second, a member's to the millisecond, the scenario's events from the recorder's clock."""
HANDOVER_MS = ROUTE_POLL_MS + REBALANCE_WAIT_MS + SLACK_MS
"""How long after a member gives up a queue's lock another may still not hold it
(``HANDOVER``): the member dropped the queue when its own route or member list changed; the
next holder sees the same change at its next route poll (``ROUTE_POLL_MS``, 30 s) and locks the
queue at its next rebalance (``REBALANCE_WAIT_MS``, 20 s)."""
LOCK_LOGS = ("broker.log.gz", "filter.log.gz")
"""Where a recording's broker writes its lock manager's lines: 4.x's recorder sends every logger
to ``broker.log``; 5.x's own logback sends the lock manager's (``RocketmqRebalanceLock``) to
``filter.log``."""
MAX_QUEUE_ID = 65_535
"""A queue id a lock line may name at most (``MessageQueue.queueId``; the scenarios' bound)."""
MAX_ROWS = 10_000_000
"""Rows read from one member's ``consumes`` file at most."""

_mq = r"MessageQueue \[topic=(?P<topic>[^,\]]*), brokerName=(?P<broker>[^,\]]*), " \
      r"queueId=(?P<queue>\d+)\]"
_stamp = r"^(?P<stamp>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:[,.]\d{3})? "
_BROKER_LINES = (
    ("granted", re.compile(_stamp + r".*?tryLock(?:Batch)?, message queue not locked, I got it\. "
                           r"Group: (?P<group>\S+) NewClientId: (?P<client>\S+) " + _mq)),
    ("expired", re.compile(_stamp + r".*?tryLock(?:Batch)?, message queue lock expired, I got "
                           r"it\. Group: (?P<group>\S+) OldClientId: (?P<old>\S+) NewClientId: "
                           r"(?P<client>\S+) " + _mq)),
    ("refused", re.compile(_stamp + r".*?tryLock(?:Batch)?, message queue locked by other client"
                           r"\. Group: (?P<group>\S+) OtherClientId: (?P<old>\S+) NewClientId: "
                           r"(?P<client>\S+) " + _mq)),
    ("unlocked", re.compile(_stamp + r".*?unlockBatch, Group: (?P<group>\S+) " + _mq
                            + r" (?P<client>\S+)")),
    ("granted", re.compile(_stamp + r".*?RebalanceLockManager#tryLock(?:Batch)?: lock a message "
                           r"(?:queue )?which has not been locked yet, group=(?P<group>[^,]+), "
                           r"clientId=(?P<client>[^,]+), mq=" + _mq)),
    ("expired", re.compile(_stamp + r".*?RebalanceLockManager#tryLock(?:Batch)?: try to lock a "
                           r"expired message queue, group=(?P<group>[^,]+), mq=" + _mq
                           + r", old client id=(?P<old>[^,]+), new client id=(?P<client>\S+)")),
    ("refused", re.compile(_stamp + r".*?RebalanceLockManager#tryLock(?:Batch)?: message queue "
                           r"has been locked by other client, group=(?P<group>[^,]+), mq=" + _mq
                           + r", locked client id=(?P<old>[^,]+), current client id="
                           r"(?P<client>\S+)")),
    ("unlocked", re.compile(_stamp + r".*?RebalanceLockManager#unlockBatch: unlock mq, "
                            r"group=(?P<group>[^,]+), clientId=(?P<client>[^,]+), mqs=" + _mq)),
)
_BROKER_PHRASES = ("tryLock", "RebalanceLockManager#tryLock", "unlockBatch, Group: ",
                   "RebalanceLockManager#unlockBatch: unlock mq")
_ms_stamp = _stamp.replace(r"(?:[,.]\d{3})?", r"[,.]\d{3}")   # a client log's: to the ms
_CLIENT_LINES = (
    ("added", re.compile(_ms_stamp
                         + r".*?doRebalance, (?P<group>[^,]*), add a new mq, " + _mq)),
    ("refused", re.compile(_ms_stamp
                           + r".*?doRebalance, (?P<group>[^,]*), add a new mq failed, " + _mq
                           + r", because lock failed")),
    ("removed", re.compile(_ms_stamp
                           + r".*?doRebalance, (?P<group>[^,]*), remove unnecessary mq, " + _mq)),
    ("lock_ok", re.compile(_ms_stamp
                           + r".*?(?:the )?message queue lock OK, (?P<group>\S+) " + _mq)),
)


@dataclass(frozen=True)
class LockLine:
    """One line of a broker's lock manager: ``kind`` ``granted``, ``expired``, ``refused`` or
    ``unlocked``; ``client`` the requester (or the unlocker), ``old`` the holder it found."""

    broker_log: str      # the broker whose log it is
    line: int
    t_ms: int            # the line's second, epoch ms (the event lies within the next 1000)
    kind: str
    group: str
    client: str
    old: str
    queue: str           # "broker-a/0" (topic aside: one topic per recording)
    topic: str


@dataclass(frozen=True)
class ClientLine:
    member: str
    line: int
    t_ms: int
    kind: str            # "added", "refused", "removed", "lock_ok"
    group: str
    queue: str
    topic: str


def _queue(path: Path, n: int, m: re.Match[str]) -> str:
    """The matched ``MessageQueue``'s ``"broker/id"``, its id read within 0 to
    ``MAX_QUEUE_ID`` (``clientlog._int``: the one number reader)."""
    from rocketlb_core.trace.clientlog import _int

    return f"{m['broker']}/{_int(path, n, 'queueId', m['queue'], MAX_QUEUE_ID)}"


def _parse_broker(path: Path, n: int, text: str) -> LockLine | None:
    if not any(p in text for p in _BROKER_PHRASES):
        return None
    for kind, rx in _BROKER_LINES:
        m = rx.match(text)
        if m is not None:
            queue = _queue(path, n, m)
            stamp = check_stamp(path, n, m["stamp"] + ".000", GMT8_MINUTES)
            return LockLine(path.parent.name, n, stamp_ms(stamp, GMT8_MINUTES), kind,
                            m["group"], m["client"], m.groupdict().get("old") or "",
                            queue, m["topic"])
    if "unlockBatch, but" in text or "unlockBatch: mq" in text or "group not exist" in text \
            or "unexpected error" in text or "putMessage exception" in text:
        return None               # an unlock that changed nothing, or an interrupted request
    if ", I got it" in text or "locked by other client" in text or "not been locked" in text \
            or "expired message queue" in text or "unlockBatch, Group" in text \
            or "unlock mq, group" in text:
        raise TraceError(path, n, "lock", "a lock manager line without its group, client ids "
                         "and 'MessageQueue [topic=..., brokerName=..., queueId=N]'")
    return None


def read_lock_lines(path: Path | str, *, skip_bad: bool = False) -> list[LockLine]:
    """Every grant, refusal and unlock of one broker's ``broker.log`` (gzip by name), in file
    order; a line with the phrase that does not parse is a ``TraceError`` naming the line."""
    bad: list[str] = []
    return list(parsed_lines(Path(path), _parse_broker, skip_bad, bad))


def read_client_lock_lines(path: Path | str, member: str, utc_offset_minutes: int
                           ) -> list[ClientLine]:
    """A member's queue creations, refused creations, drops and explicit lock grants."""
    def parse(p: Path, n: int, text: str) -> ClientLine | None:
        if "doRebalance, " not in text and "message queue lock OK" not in text:
            return None
        for kind, rx in _CLIENT_LINES:
            m = rx.match(text)
            if m is not None:
                queue = _queue(p, n, m)
                stamp = check_stamp(p, n, m["stamp"] + text[19:23], utc_offset_minutes)
                return ClientLine(member, n, stamp_ms(stamp, utc_offset_minutes), kind,
                                  m["group"], queue, m["topic"])
        return None

    bad: list[str] = []
    return list(parsed_lines(Path(path), parse, False, bad))


def read_consumes(path: Path | str, queues: Iterable[str]) -> list[tuple[str, int, int]]:
    """An orderly member's ``consumes/<member>.jsonl.gz`` (``live/java/Consume.java``): one row
    per consumed message, ``{"q": "broker-a/0", "o": offset, "t": epoch ms}``, ``q`` one of
    ``queues`` (the scenario's, and their retry queues are not an orderly member's), ``o``
    from 0 to 2^63 - 1, ``t`` from 0 to ``limits.MAX_EPOCH_MS``; at most ``MAX_ROWS``.
    Anything else is a ``TraceError`` naming the file, the line and the field."""
    from rocketlb_core.limits import MAX_EPOCH_MS
    from rocketlb_core.trace.textfile import read_lines

    allowed = set(queues)
    out: list[tuple[str, int, int]] = []
    for n, text in read_lines(path):
        if len(out) >= MAX_ROWS:
            raise TraceError(path, n, None, f"more than {MAX_ROWS:,} rows")
        try:
            x = json.loads(text)
        except (ValueError, RecursionError):
            raise TraceError(path, n, None, "not a JSON object") from None
        if not isinstance(x, dict) or set(x) != {"q", "o", "t"}:
            raise TraceError(path, n, None, "an object of \"q\", \"o\" and \"t\" expected")
        if x["q"] not in allowed:
            raise TraceError(path, n, "q", f"a queue of the scenario's topic expected, got "
                             f"{x['q']!r:.60}")
        for key, high in (("o", 2**63 - 1), ("t", MAX_EPOCH_MS)):
            v = x[key]
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= high:
                raise TraceError(path, n, key, f"an integer from 0 to {high} expected, got "
                                 f"{v!r:.40}")
        out.append((x["q"], x["o"], x["t"]))
    return out


@dataclass
class _Entry:
    holder: str
    granted_ms: int      # the grant's line (its second)


Stretches = list[tuple[int, int]]


def _minus(span: tuple[int, int], holes: Sequence[tuple[int, int]]) -> Stretches:
    """``span`` without ``holes`` (each ``[a, b)``)."""
    out = [span]
    for a, b in holes:
        nxt: Stretches = []
        for s, e in out:
            if b <= s or a >= e:
                nxt.append((s, e))
                continue
            if s < a:
                nxt.append((s, a))
            if b < e:
                nxt.append((b, e))
        out = nxt
    return out


def renewal_bounds(holding: Stretches, t: int, renew_ms: int = LOCK_INTERVAL_MS
                   ) -> tuple[int, int] | None:
    """Bounds of a holder's last renewal before ``t``: ``holding`` are the stretches in which it
    could renew (alive, holding the queue, its broker answering), from its grant on. The last
    renewal is no later than the last such moment before ``t`` and no earlier than a renewal
    period (plus ``SLACK_MS``) before the end of the last stretch, before ``t``, long enough to
    hold a renewal; without one, no earlier than the first stretch's start (the grant).

    >>> renewal_bounds([(0, 50_000)], 70_000)
    (29000, 50000)
    >>> renewal_bounds([(0, 10_000), (30_000, 35_000)], 90_000)
    (0, 35000)
    """
    clipped = [(s, min(e, t)) for s, e in holding if s < t]
    if not clipped:
        return None
    hi = clipped[-1][1]
    lo = clipped[0][0]
    for s, e in reversed(clipped):
        if e - s >= renew_ms + SLACK_MS:
            lo = max(lo, e - renew_ms - SLACK_MS)
            break
    return lo, hi


@dataclass(frozen=True)
class LockCheck:
    kind: str            # "broker", "client" or "run"
    t_ms: int
    queue: str
    member: str
    detail: str
    verdict: str
    messages: int = 0    # a run's messages; a queue's handed-over tail (HANDOVER)
    outside: int = 0     # of them, consumed while the broker's table did not hold its lock


def orderly_agreement(*, group: str, topic: str, members: Mapping[str, str],
                      lock_lines: Sequence[LockLine], client_lines: Sequence[ClientLine],
                      consumes: Mapping[str, Sequence[tuple[str, int, int]]],
                      alive: Mapping[str, tuple[int, int]],
                      broker_silent: Mapping[str, Sequence[tuple[int, int]]],
                      kills: Mapping[str, Sequence[int]],
                      end_offsets: Mapping[str, int],
                      end_ms: int | None = None,
                      no_master: Mapping[tuple[str, str], Sequence[tuple[int, int]]]
                      | None = None,
                      left_to_nobody: Iterable[str] = (),
                      broker_lock_ms: int = BROKER_LOCK_MAX_LIVE_MS,
                      renew_ms: int = LOCK_INTERVAL_MS,
                      client_lock_ms: int = LOCK_MAX_LIVE_MS) -> list[LockCheck]:
    """The verdicts of one orderly clustering group (see the module docstring). ``members``:
    client id -> member name; ``alive``: per member, from its join to its crash, leave or the
    recording's end (epoch ms); ``broker_silent``: per broker, when it answered nothing (paused
    or down); ``kills``: per broker, when the scenario killed it (its lock table lost);
    ``end_offsets``: per queue, its max offset when the recording ended (the next to store);
    ``end_ms``: when it ended (``None``: not known, no ``HANDOVER``); ``no_master``: per
    (member, broker), when the member's own route listed the broker without a master (its
    lock requests go to the master alone: none is sent then, ``REFUSED_SEEN``);
    ``left_to_nobody``: the queues the broker's member list gave to no live member from their
    last consumption to the end (``DUPLICATE``; ``check_orderly`` reads them from the
    recording's snapshots).
    ``broker_lock_ms``, ``renew_ms`` and ``client_lock_ms`` are the rules' three times (other
    values are other models, which a test holds the recordings against; ``renew_ms`` 0: a
    member that never renews, only its grants and explicit lock requests count)."""
    out: list[LockCheck] = []
    holds: dict[tuple[str, str], Stretches] = {}       # (member, queue) -> in its table
    opened: dict[tuple[str, str], int] = {}
    explicit: dict[tuple[str, str], list[int]] = {}
    for c in sorted(client_lines, key=lambda c: (c.t_ms, c.line)):
        if c.group != group or c.topic != topic:
            continue
        key = (c.member, c.queue)
        if c.kind == "added":
            opened.setdefault(key, c.t_ms)
        elif c.kind == "removed" and key in opened:
            holds.setdefault(key, []).append((opened.pop(key), c.t_ms))
        elif c.kind == "lock_ok":
            explicit.setdefault(key, []).append(c.t_ms)
    for key, since in opened.items():
        holds.setdefault(key, []).append((since, alive[key[0]][1]))

    def holding(member: str, queue: str, since: int) -> Stretches:
        broker = queue.rpartition("/")[0]
        a, b = alive.get(member, (0, 0))
        out_: Stretches = []
        for s, e in holds.get((member, queue), []):
            s, e = max(s, a, since), min(e, b)
            if s < e:
                out_ += _minus((s, e), broker_silent.get(broker, ()))
        return out_

    def bounds(entry: _Entry, queue: str, t: int) -> tuple[int, int]:
        got = (renewal_bounds(holding(members.get(entry.holder, ""), queue, entry.granted_ms),
                              t, renew_ms) if renew_ms > 0 else None)   # 0: never renewed
        lo, hi = got if got is not None else (entry.granted_ms, entry.granted_ms)
        lo, hi = max(lo, entry.granted_ms), max(hi, entry.granted_ms)
        for x in explicit.get((members.get(entry.holder, ""), queue), []):
            if entry.granted_ms <= x <= t:
                lo = max(lo, x)
        return lo, max(lo, hi)

    # each broker's table, replayed; the holder of each queue over time, for the runs
    table: dict[str, _Entry] = {}
    owners: dict[str, list[tuple[int, str]]] = {}          # queue -> (since, member or "")
    timeline = sorted([(t, 0, "kill", b) for b, ts in kills.items() for t in ts]
                      + [(x.t_ms, 1, "line", x) for x in lock_lines
                         if x.group == group and x.topic == topic],
                      key=lambda e: (e[0], e[1], getattr(e[3], "line", 0)))
    for t, _, what, x in timeline:
        if what == "kill":
            for q in [q for q in table if q.rpartition("/")[0] == x]:
                del table[q]
                owners.setdefault(q, []).append((t, ""))
            continue
        assert isinstance(x, LockLine)
        entry = table.get(x.queue)
        name = members.get(x.client, x.client)
        if x.kind == "granted":
            ok = entry is None
            why = ("no entry" if entry is None
                   else f"{members.get(entry.holder, entry.holder)} held it")
        elif x.kind in ("expired", "refused"):
            if entry is None or entry.holder != x.old:
                ok, why = False, (f"the table held {members.get(entry.holder, entry.holder)}"
                                  if entry else "the table held no entry")
            else:
                lo, hi = bounds(entry, x.queue, t)
                age_lo, age_hi = t - hi, t + 999 - lo
                if x.kind == "expired":
                    ok = age_hi > broker_lock_ms - SLACK_MS
                else:
                    ok = age_lo <= broker_lock_ms + SLACK_MS
                why = (f"{members.get(x.old, x.old)}'s last renewal {age_lo / 1000:.1f} to "
                       f"{age_hi / 1000:.1f} s before")
        else:
            ok = entry is not None and entry.holder == x.client
            why = "by its holder" if ok else "not by the table's holder"
        verdict = ({"granted": GRANT_FREE, "expired": GRANT_EXPIRED, "refused": REFUSED_HELD,
                    "unlocked": UNLOCKED}[x.kind] if ok else UNEXPLAINED)
        out.append(LockCheck("broker", t, x.queue, name, f"{x.kind} ({why})", verdict))
        if ok or x.kind in ("granted", "expired"):
            if x.kind in ("granted", "expired"):
                table[x.queue] = _Entry(x.client, t)
                owners.setdefault(x.queue, []).append((t, name))
            elif x.kind == "unlocked":
                table.pop(x.queue, None)
                owners.setdefault(x.queue, []).append((t, ""))

    # a member's refused creations: the broker refused it, or did not answer
    refusals = [x for x in lock_lines if x.kind == "refused" and x.group == group]
    for c in client_lines:
        if c.kind != "refused" or c.group != group or c.topic != topic:
            continue
        broker = c.queue.rpartition("/")[0]
        seen = any(members.get(x.client) == c.member and x.queue == c.queue
                   and x.t_ms - SLACK_MS <= c.t_ms <= x.t_ms + 999 + SLACK_MS for x in refusals)
        silent = any(a - SLACK_MS <= c.t_ms <= b + SLACK_MS
                     for a, b in [*broker_silent.get(broker, ()),
                                  *(no_master or {}).get((c.member, broker), ())])
        out.append(LockCheck("client", c.t_ms, c.queue, c.member,
                             "refused " + ("by the broker" if seen else "while it was silent"
                                           if silent else "with no refusal logged"),
                             REFUSED_SEEN if seen or silent else UNEXPLAINED))

    # each run of one member's consumption of a queue, against the table's holder
    rows = sorted(((q, t, m, o) for m, rs in consumes.items() for q, o, t in rs),
                  key=lambda r: (r[0], r[1]))
    runs: list[tuple[str, str, list[tuple[int, int]]]] = []
    for q, t, m, o in rows:
        if runs and runs[-1][0] == q and runs[-1][1] == m:
            runs[-1][2].append((t, o))
        else:
            runs.append((q, m, [(t, o)]))
    for q, m, got in runs:
        bad = [(t, o) for t, o in got if not _held(owners.get(q, []), m, t)]
        cached = bad and all(_cached(owners.get(q, []), kills.get(q.rpartition("/")[0], ()),
                                     m, t, client_lock_ms) for t, _ in bad)
        verdict = HELD if not bad else CACHED if cached else UNEXPLAINED
        out.append(LockCheck("run", got[0][0], q, m,
                             f"offsets {got[0][1]} to {got[-1][1]} ({len(got)} messages)"
                             + (f", {len(bad)} while the broker's table held "
                                f"{_holder_at(owners.get(q, []), bad[0][0]) or 'no lock'}"
                                if bad else ""), verdict, len(got), len(bad)))
    nobody = set(left_to_nobody)
    for q, end in sorted(end_offsets.items()):
        done = {o: m for q2, _, m, o in rows if q2 == q}
        first = min(done, default=end)
        missing = [o for o in range(first, end) if o not in done]
        if missing:
            gave_up = (_given_up(owners.get(q, []), done[max(done)], end_ms)
                       if done and min(missing) > max(done) and end_ms is not None else None)
            ok = gave_up is not None and end_ms is not None and end_ms - gave_up <= HANDOVER_MS
            dup = not ok and q in nobody
            out.append(LockCheck(
                "queue", gave_up or 0, q, done[max(done)] if ok else "",
                f"{len(missing)} of offsets {first} to {end - 1} consumed by no member"
                + (f", after {done[max(done)]} gave up the lock "
                   f"{(end_ms - gave_up) / 1000:.1f} s before the end"
                   if ok and end_ms is not None and gave_up is not None else "")
                + (", the broker's member list holding an id twice and AVG giving the queue "
                   "to the copy" if dup else ""),
                HANDOVER if ok else DUPLICATE if dup else UNEXPLAINED,
                len(missing) if ok or dup else 0))
    return out


def _given_up(owners: Sequence[tuple[int, str]], member: str, end_ms: int) -> int | None:
    """When ``member`` last stopped holding the replayed table's lock (an unlock, or a grant
    to another), if the table did not hold it at ``end_ms``.

    >>> _given_up([(0, "ord1"), (50, ""), (70, "ord2")], "ord1", 100)
    50
    >>> _given_up([(0, "ord1"), (50, ""), (70, "ord1")], "ord1", 100) is None
    True
    """
    if _holder_at(owners, end_ms) == member:
        return None
    out, prev = None, ""
    for t, who in owners:
        if t > end_ms:
            break
        if prev == member and who != member:
            out = t
        prev = who
    return out


def _holder_at(owners: Sequence[tuple[int, str]], t: int) -> str:
    holder = ""
    for since, who in owners:
        if since > t:
            break
        holder = who
    return holder


def _held(owners: Sequence[tuple[int, str]], member: str, t: int) -> bool:
    """Did the replayed table hold ``member``'s lock at ``t``? The broker's lines are to the
    second, so a holding from a grant logged at second S to an unlock logged at second U
    covers any ``t`` from S to U + 999 (with ``SLACK_MS`` either side): the holding overlaps
    [t - 999 - SLACK_MS, t + SLACK_MS].

    >>> _held([(0, "ord2"), (1_000, "")], "ord2", 1_190)    # granted at 0 s, unlocked at 1 s
    True
    >>> _held([(0, "ord2"), (1_000, "")], "ord2", 4_000)
    False
    """
    lo, hi = t - 999 - SLACK_MS, t + SLACK_MS
    for k, (since, who) in enumerate(owners):
        until = owners[k + 1][0] if k + 1 < len(owners) else None
        if who == member and since <= hi and (until is None or until > lo):
            return True
    return False


def _cached(owners: Sequence[tuple[int, str]], kills: Sequence[int], member: str,
            t: int, client_lock_ms: int) -> bool:
    """Was ``t`` within the member's own view of its lock after a kill emptied a table that
    held it, with nobody granted the lock since? Its last renewal came before the kill, so its
    view lasts ``client_lock_ms`` from the kill at the most."""
    return any(k <= t <= k + client_lock_ms + SLACK_MS and _holder_at(owners, k - 1) == member
               and _holder_at(owners, t) == "" for k in kills)


def summary(checks: Sequence[LockCheck]) -> dict[str, Any]:
    """Counts per verdict, the unexplained items, and per queue who consumed it when."""
    counts = {v: sum(c.verdict == v for c in checks)
              for v in (GRANT_FREE, GRANT_EXPIRED, REFUSED_HELD, UNLOCKED, REFUSED_SEEN, HELD,
                        CACHED, HANDOVER, DUPLICATE, UNEXPLAINED)}
    return {"items": len(checks),
            **{k.lower(): counts[v] for k, v in (
                ("GRANT_FREE", GRANT_FREE), ("GRANT_EXPIRED", GRANT_EXPIRED),
                ("REFUSED_HELD", REFUSED_HELD), ("UNLOCKED", UNLOCKED),
                ("REFUSED_SEEN", REFUSED_SEEN), ("HELD", HELD), ("CACHED", CACHED),
                ("HANDOVER", HANDOVER), ("DUPLICATE", DUPLICATE),
                ("UNEXPLAINED", UNEXPLAINED))},
            "cached_messages": sum(c.outside for c in checks if c.verdict == CACHED),
            "handover_messages": sum(c.messages for c in checks if c.verdict == HANDOVER),
            "duplicate_messages": sum(c.messages for c in checks if c.verdict == DUPLICATE),
            "others": [f"{c.kind} {c.queue} {c.member} at {c.t_ms}: {c.detail}"
                       for c in checks if c.verdict == UNEXPLAINED]}


def orderly_groups(meta: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    """The recording's orderly clustering groups of remoting (Java) members."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for k in meta.get("consumers", []):
        if k.get("listener") == "orderly" and k.get("model", "clustering") == "clustering" \
                and k.get("client", "remoting") == "remoting":
            out.setdefault(k["group"], []).append(k)
    return out


def check_orderly(recording: Path | str, *, keep_on_kill: bool = False,
                  **rules: int) -> dict[str, dict[str, Any]]:
    """Each orderly clustering group of a live recording, checked (``orderly_agreement``):
    per group the counts (``summary``), what each queue's consumption came to, the runs and
    lock lines in time order (``timeline``; seconds from the scenario's start), and the
    members' own lines (``client``: ``added``, ``refused``, ``removed`` and ``lock_ok``, each
    queue's creation, refused creation, drop and explicit lock grant).
    ``keep_on_kill`` and ``rules`` (``orderly_agreement``'s times) are other models: a broker
    that kept its locks through a kill, other times."""
    from rocketlb_core.doctor.inputs import _Bad, read_progress
    from rocketlb_core.trace.importer import log_offset

    recording = Path(recording)
    meta = json.loads((recording / "recording.json").read_text(encoding="utf-8"))
    groups = orderly_groups(meta)
    if not groups:
        return {}
    topic, t0 = meta["topic"], int(meta["t0_ms"])
    offset = log_offset(meta["client_version"], int(meta.get("utc_offset_minutes", 0)))
    events = meta["events"]
    ends = [x["wall_ms"] for x in meta.get("snapshots", []) if x.get("before") == "end"]
    end_ms = ends[-1] if ends else max(e["done_ms"] for e in events)
    silent: dict[str, list[tuple[int, int]]] = {}
    kills: dict[str, list[int]] = {}
    for i, e in enumerate(events):
        if not str(e["target"]).startswith("broker-") or e["action"] not in ("pause", "kill"):
            continue
        back = "resume" if e["action"] == "pause" else "restart"
        until = next((x["done_ms"] for x in events[i + 1:]
                      if x["target"] == e["target"] and x["action"] == back), end_ms)
        silent.setdefault(e["target"], []).append((e["wall_ms"], until))
        if e["action"] == "kill":
            kills.setdefault(e["target"], []).append(e["wall_ms"])
    brokers = sorted(str(b["name"]) for b in meta["brokers"])
    # 4.x's recorder writes every logger to broker.log; 5.x's lock manager logs to filter.log
    lines = [x for b in brokers for name in LOCK_LOGS
             if (recording / "logs" / b / name).is_file()
             for x in read_lock_lines(recording / "logs" / b / name)]
    queues = [f"{r['broker_name']}/{q}" for r in meta["route"]
              for q in range(int(r["read_queue_nums"]))]
    out: dict[str, dict[str, Any]] = {}
    for group, ks in sorted(groups.items()):
        names = {k["name"] for k in ks}
        instances = {str(k.get("instance", k["name"])): k["name"] for k in ks}
        members = {x.client: instances[_instance(x.client)] for x in lines
                   if _instance(x.client) in instances}
        alive = {}
        for k in ks:
            joined = next((e["wall_ms"] for e in events
                           if e["target"] == k["name"] and e["action"] == "join"), t0)
            gone = next((e["wall_ms"] for e in events if e["target"] == k["name"]
                         and e["action"] in ("leave", "crash", "freeze")), end_ms)
            alive[k["name"]] = (joined, gone)
        client_lines = [c for k in ks for c in read_client_lock_lines(
            recording / "logs" / k["name"] / "rocketmq_client.log.gz", k["name"], offset)]
        consumes = {k["name"]: read_consumes(recording / "consumes" / f"{k['name']}.jsonl.gz",
                                             queues)
                    for k in ks if (recording / "consumes" / f"{k['name']}.jsonl.gz").is_file()}
        path = recording / "progress" / f"{group}.txt"
        # no progress (no broker answered at the end): each queue's end is not known
        end_offsets = {f"{r.broker}/{r.queue_id}": r.broker_offset
                       for r in read_progress(path, _Bad(False, [])).rows
                       if r.topic == topic} if path.is_file() else {}
        no_master = {(k["name"], b): spans for k in ks
                     for b, spans in _masterless_spans(
                         recording / "logs" / k["name"] / "rocketmq_client.log.gz", topic,
                         offset, alive[k["name"]][1]).items()}
        checks = orderly_agreement(group=group, topic=topic, members=members,
                                   lock_lines=lines, client_lines=client_lines,
                                   consumes=consumes, alive=alive, broker_silent=silent,
                                   kills={} if keep_on_kill else kills,
                                   end_offsets=end_offsets, end_ms=end_ms,
                                   no_master=no_master,
                                   left_to_nobody=_left_to_nobody(meta, group, ks, queues,
                                                                  consumes, end_ms),
                                   **rules)
        rows = [(q, o) for rs in consumes.values() for q, o, _ in rs]
        out[group] = {
            **summary(checks), "members": sorted(names),
            "consumed": len(rows), "distinct": len(set(rows)),
            "repeated": len(rows) - len(set(rows)),
            "stored": sum(end_offsets.values()),
            "client": [{"s": round((c.t_ms - t0) / 1000, 3), "kind": c.kind,
                        "queue": c.queue, "member": c.member}
                       for c in sorted(client_lines, key=lambda c: (c.t_ms, c.line))
                       if c.group == group and c.topic == topic],
            "timeline": [{"s": round((c.t_ms - t0) / 1000, 3), "kind": c.kind,
                          "queue": c.queue, "member": c.member, "detail": c.detail,
                          "verdict": c.verdict, "messages": c.messages}
                         for c in sorted(checks, key=lambda c: c.t_ms)
                         if c.kind != "queue"]}
    return out


def _left_to_nobody(meta: Mapping[str, Any], group: str, ks: Sequence[Mapping[str, Any]],
                    queues: Sequence[str], consumes: Mapping[str, Sequence[tuple[str, int, int]]],
                    end_ms: int) -> set[str]:
    """The queues the broker's member list gave to no live member at every snapshot of the
    recording from the queue's last consumption before ``end_ms`` (or from the start) to
    ``end_ms``: the list held an id twice, and AVG run for each distinct id leaves the copy's
    share to nobody (``DUPLICATE``). Only for a group whose members all run AVG."""
    from rocketlb_core.consumer.base import rebalance_view
    from rocketlb_core.consumer.strategies import avg
    from rocketlb_core.model import MessageQueue

    if any(str(k.get("strategy", "AVG")) != "AVG" for k in ks):
        return set()
    mqs = [MessageQueue(str(meta["topic"]), q.rpartition("/")[0], int(q.rpartition("/")[2]))
           for q in queues]
    strategy = avg()
    nobody_at: list[tuple[int, set[str]]] = []
    for snap in meta.get("snapshots", []):
        ids = [str(i) for i in (snap.get("members") or {}).get(group, [])]
        if int(snap["wall_ms"]) > end_ms or not ids:
            continue
        if len(set(ids)) == len(ids):
            nobody_at.append((int(snap["wall_ms"]), set()))
            continue
        mq_all, cid_all = rebalance_view(mqs, ids)
        owned = {q.short() for c in set(ids) for q in strategy.allocate(group, c, mq_all, cid_all)}
        nobody_at.append((int(snap["wall_ms"]), {q.short() for q in mq_all} - owned))
    out = set()
    for q in queues:
        last = max((t for rs in consumes.values() for q2, _, t in rs if q2 == q and t <= end_ms),
                   default=None)
        window = [s for t, s in nobody_at if last is None or t >= last]
        if window and all(q in s for s in window):
            out.add(q)
    return out


def _masterless_spans(log: Path, topic: str, offset: int, end_ms: int
                      ) -> dict[str, list[tuple[int, int]]]:
    """Per broker, when a member's route of ``topic`` (its client log's ``route info changed``
    lines) listed it without a master: from the change that did to the next that did not (or
    ``end_ms``)."""
    from rocketlb_core.trace.clientlog import read_client_log

    if not log.is_file():
        return {}
    out: dict[str, list[tuple[int, int]]] = {}
    since: dict[str, int] = {}
    for r in read_client_log(log).route_changes:
        if r.topic != topic:
            continue
        t = stamp_ms(r.stamp, offset)
        for b in list(since):
            if b not in r.masterless:
                out.setdefault(b, []).append((since.pop(b), t))
        for b in r.masterless:
            since.setdefault(b, t)
    for b, t in since.items():
        out.setdefault(b, []).append((t, end_ms))
    return out


def _instance(client_id: str) -> str:
    """A remoting client id's instance name (``IP@INSTANCE``, a unit name after a second
    ``@``)."""
    parts = client_id.split("@")
    return parts[1] if len(parts) > 1 else ""



_LOCK_ALL_FAILED = re.compile(r"^\S+ \S+ ERROR\s+\[[^\]]*\] \[(?P<thread>[^\]]*)\] .*?"
                              r"lockBatchMQ exception, \[")


def lock_all_threads(recording: Path | str, member: str) -> dict[str, int]:
    """Per thread, how many periodic re-locks (``lockAll``: the queues of one broker at once,
    logged as a list) a member's 5.x client log shows failing (``lockBatchMQ exception, [...]``):
    a 5.x orderly member runs the re-lock from two schedules (fact
    consumer.orderly-pop-service-locks-too-and-outlives-shutdown). A 4.9.8 log names no
    thread, so it shows none."""
    from rocketlb_core.trace.textfile import read_lines

    out: dict[str, int] = {}
    for _, text in read_lines(Path(recording) / "logs" / member / "rocketmq_client.log.gz",
                              errors="replace"):
        m = _LOCK_ALL_FAILED.match(text)
        if m is not None:
            out[m["thread"]] = out.get(m["thread"], 0) + 1
    return out
