"""Reading what a broker logs about a consumer group's members (``../shared/reference/
real-data.md`` section 2; ``ConsumerManager``, ``ConsumerGroupInfo``,
``ClientHousekeepingService``):

* ``new consumer connected, group: G ... channel: ClientChannelInfo [channel=[id: 0x..., ...],
  clientId=..., ..., lastUpdateTimestamp=T]``: a connection joined (at ``T``, epoch ms);
* ``unregister a consumer[G] from consumerGroupInfo ClientChannelInfo [...]``: it left cleanly;
* ``NETTY EVENT: remove not active channel[ClientChannelInfo [...]] from ConsumerGroupInfo
  groupChannelTable, consumer group: G``: its connection closed without unregistering (the
  process died on a live host): a ``kill``, dropped and notified at once;
* ``SCAN: remove expired channel from ConsumerManager consumerTable. channel=IP:PORT,
  consumerGroup=G``: no heartbeat for 120 s (a silent host): a ``crash``, which the trace
  records 120 s before this line (``CHANNEL_EXPIRY_MS``), since a trace's crash is the death
  and the replay adds the expiry. The line names the connection by its client address only
  (4.9.7 and 5.3.3 alike): it is the connection whose join line had that address
  (``R:/IP:PORT``); an expiry of a connection that joined before the log began is skipped;
* a ``remove not active channel`` that the broker's Netty idle close caused, not a process
  that died: its ``remoting.log`` (beside ``broker.log``, where upstream's logback writes both)
  says ``NETTY SERVER PIPELINE: IDLE exception [IP:PORT]`` for that connection's address in
  the same second or the one before (``IdleStateHandler(0, 0, 120)``: no traffic either way
  for 120 s; ``onChannelIdle`` runs the same ``doChannelCloseEvent``, issue 45). That member's
  host went quiet (vanished, froze, was cut off): a ``crash`` too (``MemberEvent.idle``),
  recorded 120 s before the line (``IDLE_CLOSE_MS``), the connection's last traffic: about when
  it went quiet on a broker whose queues it pulled (up to 20 s after, when the broker held its
  pull on a quiet queue), its last heartbeat or member-list query on another (up to 30 s
  before: live, ``data/live/frozen-consumers-5``'s c3 on broker-a, 14 s). Without an IDLE line
  (in the remoting log or in the broker log itself) the line reads as a ``kill``, as it
  must: the two are the same line.

A *member* is one connection: two processes with one client id (the duplicate client id trap)
are two members with the same ``client_id``, told apart by their channel ids. Timestamps of the
lines are text: upstream's distribution writes ``yyy-MM-dd HH:mm:ss`` in GMT+8, seconds only
(``logback_broker.xml``); a join's time comes from its ``lastUpdateTimestamp`` (ms) instead.

A line with a phrase that does not parse is a ``TraceError`` naming the file, line and field, or
counted in ``BrokerLog.bad`` with ``skip_bad=True``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from rocketlb_core.limits import MAX_EPOCH_MS
from rocketlb_core.trace.clientlog import GMT8_MINUTES, check_stamp, parsed_lines, stamp_ms
from rocketlb_core.trace.schema import TraceError, check_name

_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,](\d{3}))?\s", re.ASCII)
_CHANNEL = re.compile(r"ClientChannelInfo \[channel=\[id: (?P<channel>0x[0-9a-f]+)"
                      r"(?:, L:\S* [-!] R:/?(?P<remote>[^\]\s]+))?[^\]]*\], "
                      r"clientId=(?P<client_id>[^,]+), .*?lastUpdateTimestamp=(?P<t>\d+)\]",
                      re.ASCII)
_JOIN = re.compile(r"new consumer connected, group: (?P<group>\S+) ")
_LEAVE = re.compile(r"unregister a consumer\[(?P<group>[^\]]*)\] from consumerGroupInfo ")
_CLOSED = re.compile(r"NETTY EVENT: remove not active channel\[.*consumer group: (?P<group>\S+)")
_EXPIRED = re.compile(r"SCAN: remove expired channel from ConsumerManager consumerTable\. "
                      r"channel=(?P<remote>[^,]*), consumerGroup=(?P<group>\S+)")
PHRASES = ("new consumer connected", "unregister a consumer[", "remove not active channel",
           "remove expired channel from ConsumerManager")


@dataclass(frozen=True)
class MemberEvent:
    line: int
    stamp: str                 # the line's timestamp text
    group: str
    channel: str
    client_id: str
    event: str                 # join | leave | kill | crash
    time_ms: int | None        # a join's lastUpdateTimestamp
    remote: str | None = None  # the connection's client address (ip:port), where logged
    idle: bool = False         # a crash the idle close found (remoting.log's IDLE line)
    heartbeat_ms: int | None = None   # a removal's lastUpdateTimestamp: its last heartbeat


@dataclass
class BrokerLog:
    path: str
    events: list[MemberEvent] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    starts: list[tuple[int, str]] = field(default_factory=list)   # (line, stamp) per process


_START = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,]\d{3})? INFO main - rocketmqHome=",
                    re.ASCII)
"""A broker process's start: ``BrokerStartup`` prints its ``BrokerConfig`` first (4.9.7 from
``rocketmqHome``, 5.3.3 from ``brokerConfigPath`` then ``rocketmqHome``), before its remoting
server accepts a client. A restarted broker (after a ``kill``) appends to the same log, and its
consumer table starts empty: ``broker_view`` drops every connection held before (issue 32)."""


class _Start:
    def __init__(self, line: int, stamp: str) -> None:
        self.line, self.stamp = line, stamp


def _parse(path: Path, n: int, text: str) -> MemberEvent | _Start | tuple[str, str] | None:
    idle = _idle_line(path, n, text)
    if idle is not None:
        return idle
    if "INFO main - rocketmqHome=" in text:
        m = _START.match(text)
        if m is not None:
            check_stamp(path, n, m[1] + ".000")
            return _Start(n, m[1])
    return parse_line(path, n, text)


def parse_line(path: Path, n: int, text: str) -> MemberEvent | None:
    if not any(p in text for p in PHRASES):
        return None
    text = text.rstrip("\r\n")
    stamp = _STAMP.match(text)
    if stamp is None:
        raise TraceError(path, n, "timestamp", "a membership line without a timestamp")
    check_stamp(path, n, stamp[1] + "." + (stamp[2] or "000"))
    ch = _CHANNEL.search(text)
    for kind, rx in (("join", _JOIN), ("leave", _LEAVE), ("kill", _CLOSED),
                     ("crash", _EXPIRED)):
        m = rx.search(text)
        if m is None:
            continue
        if ch is None and kind == "crash":
            # upstream (4.9.7, 5.3.3) names an expired channel by its client address only:
            # read_broker_log finds the connection by its join's address
            return MemberEvent(n, stamp.group(0).strip(),
                               check_name(path, n, "group", m["group"]), "", "", kind, None,
                               check_name(path, n, "channel", m["remote"]))
        if ch is None:
            raise TraceError(path, n, "channel", "a membership line without 'ClientChannelInfo "
                             "[channel=[id: 0x...], clientId=..., lastUpdateTimestamp=...]'")
        beat = int(ch["t"]) if len(ch["t"]) <= 16 else MAX_EPOCH_MS + 1
        if not 0 < beat <= MAX_EPOCH_MS:
            raise TraceError(path, n, "lastUpdateTimestamp", f"{ch['t'][:40]} is not a "
                             "time from 1970 to 2100 in epoch ms")
        return MemberEvent(n, stamp.group(0).strip(), check_name(path, n, "group", m["group"]),
                           ch["channel"], check_name(path, n, "clientId", ch["client_id"]),
                           kind, beat if kind == "join" else None, ch["remote"],
                           heartbeat_ms=None if kind == "join" else beat)
    return None


_IDLE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,]\d{3})? .*NETTY SERVER PIPELINE: "
                   r"IDLE exception \[/?(?P<remote>[^\]\s]+)\]", re.ASCII)


def _idle_line(path: Path, n: int, text: str) -> tuple[str, str] | None:
    if "IDLE exception [" not in text or "NETTY SERVER PIPELINE" not in text:
        return None
    m = _IDLE.match(text)
    if m is None:
        raise TraceError(path, n, "timestamp", "an IDLE line without a timestamp")
    check_stamp(path, n, m[1] + ".000")
    return m[1], check_name(path, n, "remote", m["remote"])


def remoting_log_of(path: Path) -> Path | None:
    """The ``remoting.log`` (or ``.gz``) beside a broker log, if there is one."""
    for name in ("remoting.log", "remoting.log.gz"):
        p = path.parent / name
        if p.is_file() and p != path:
            return p
    return None


def read_idle_closes(path: Path | str, *, skip_bad: bool = False) -> set[tuple[str, str]]:
    """The broker's idle closes in its ``remoting.log``: (stamp to the second, client address)
    of each ``NETTY SERVER PIPELINE: IDLE exception [IP:PORT]``."""
    bad: list[str] = []
    return set(parsed_lines(Path(path), _idle_line, skip_bad, bad))


def _second_before(stamp: str) -> str:
    import calendar
    import time

    t = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%d %H:%M:%S")) - 1
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def read_broker_log(path: Path | str, *, skip_bad: bool = False,
                    remoting: Path | str | None = None) -> BrokerLog:
    """Every consumer membership event of one broker log, in file order. A connection closed by
    the broker's idle close is a ``crash`` (see the module docstring): its IDLE lines come
    from ``remoting`` (default: the ``remoting.log`` beside ``path``, if any) and from ``path``
    itself (a logback configuration that sends every logger to one file, as the live
    recorder's 4.x brokers do)."""
    path = Path(path)
    out = BrokerLog(str(path))
    rlog = Path(remoting) if remoting is not None else remoting_log_of(path)
    idles = read_idle_closes(rlog, skip_bad=skip_bad) if rlog is not None else set()
    by_address: dict[tuple[str, str], MemberEvent] = {}
    for e in parsed_lines(path, _parse, skip_bad, out.bad):
        if isinstance(e, tuple):          # an IDLE line in the broker log itself (one file)
            idles.add(e)
            continue
        if isinstance(e, _Start):
            out.starts.append((e.line, e.stamp))
            continue
        if e.channel == "":               # an expiry by address: the connection joined there
            joined = by_address.get((e.group, e.remote or ""))
            if joined is None:            # joined before the log began: nothing to remove
                continue
            e = replace(e, channel=joined.channel, client_id=joined.client_id)
        elif e.event == "join" and e.remote:
            by_address[(e.group, e.remote)] = e
        elif e.event == "kill" and idles and e.remote and any(
                (second, e.remote) in idles for second in (e.stamp[:19],
                                                           _second_before(e.stamp))):
            e = replace(e, event="crash", idle=True)
        out.events.append(e)
    return out


def _ms(e: MemberEvent, utc_offset_minutes: int) -> int:
    from rocketlb_core.conditions import CHANNEL_EXPIRY_MS, IDLE_CLOSE_MS

    if e.time_ms is not None:
        return e.time_ms
    stamp = e.stamp if len(e.stamp) > 19 else e.stamp + ".000"
    t = stamp_ms(stamp.replace(",", "."), utc_offset_minutes)
    if e.event == "crash":
        return t - (IDLE_CLOSE_MS if e.idle else CHANNEL_EXPIRY_MS)
    return t


def membership_of(logs: Sequence[BrokerLog], line: str = "", utc_offset_minutes: int = GMT8_MINUTES
                  ) -> tuple[list[tuple[int, str, str, str]], list[int]]:
    """One membership timeline from the brokers' logs: (epoch ms, group, member, event) rows,
    taken per group from the log that has the most of the group's joins (the first by path
    among equals), and the times seen. Every broker holds its own copy of the same list, but a
    broker killed early holds only the members that came before: live (issue 34's soak, seed
    20261126), broker-a was killed at 20.7 s and its log, the first by path, had one member of
    three. The member is ``client_id``, or ``client_id/channel`` when one client id has several
    connections."""
    rows: list[tuple[int, str, str, str]] = []
    groups = sorted({e.group for log in logs for e in log.events})
    for group in groups:
        joins = [(-sum(e.group == group and e.event == "join" for e in x.events), x.path, i)
                 for i, x in enumerate(logs)]
        most = min(joins)
        if most[0] == 0:         # leaves or expiries only: members joined before the log began
            continue
        log = logs[most[2]]
        evs = [e for e in log.events if e.group == group]
        ids: dict[str, set[str]] = {}
        for e in evs:
            ids.setdefault(e.client_id, set()).add(e.channel)
        joined: set[str] = set()
        for e in evs:
            member = e.client_id if len(ids[e.client_id]) == 1 else f"{e.client_id}/{e.channel}"
            if e.event == "join":
                if member in joined:
                    continue
                joined.add(member)
            elif member not in joined:
                continue
            else:
                joined.discard(member)
            check_name(log.path, e.line, "clientId", member)
            rows.append((_ms(e, utc_offset_minutes), group, member, e.event))
    rows.sort()
    return rows, [r[0] for r in rows]


REORDER_LINES = 50
"""How far down the log ``broker_view`` looks for the join of a connection whose removal was
written first."""


@dataclass(frozen=True)
class ViewChange:
    """One change of one broker's own view of a group: a connection (``channel``) of
    ``client_id`` added (``join``) or removed (``leave``, ``kill``, ``crash``; ``restart``: the
    broker process started again, its table empty) at ``time_ms``."""

    time_ms: int               # epoch ms
    group: str
    channel: str
    client_id: str
    event: str


def broker_view(log: BrokerLog, utc_offset_minutes: int = GMT8_MINUTES) -> list[ViewChange]:
    """What one broker held of each group over time, connection by connection and in the log's
    order (issue 32: the brokers' views differ while one is paused, and a client that reconnects
    is held twice until its old connection's close is processed; ``getConsumerIdListByGroup``
    answers with every connection's client id, so both count). A join is dated by its
    ``lastUpdateTimestamp``; a removal by its line's second (an expiry when the line was written,
    not 120 s before as in the trace), and never before the line above it. A removal logged
    before its connection's join (two threads writing in the same millisecond: the close was
    processed after the heartbeat had added the connection, seen live) is moved to just after
    that join."""
    events = list(log.events)
    i = 0
    while i < len(events):
        e = events[i]
        if e.event != "join" and not any(x.channel == e.channel and x.event == "join"
                                         for x in events[:i]):
            j = next((k for k in range(i + 1, min(len(events), i + 1 + REORDER_LINES))
                      if events[k].channel == e.channel and events[k].event == "join"), None)
            if j is not None:
                events.insert(j, events.pop(i))
                continue                     # the line now at i is the next one
        i += 1
    out: list[ViewChange] = []
    last = 0
    held: dict[tuple[str, str], str] = {}           # (group, channel) -> client id
    starts = sorted(log.starts)
    for e in events:
        while starts and starts[0][0] < e.line:     # a new process: its table starts empty
            t = max(stamp_ms(starts.pop(0)[1] + ".000", utc_offset_minutes), last)
            out += [ViewChange(t, g, ch, cid, "restart") for (g, ch), cid in held.items()]
            held.clear()
            last = t
        if e.event == "join":
            held[(e.group, e.channel)] = e.client_id
        else:
            held.pop((e.group, e.channel), None)
        if e.time_ms is not None:
            t = e.time_ms
        else:
            stamp = e.stamp if len(e.stamp) > 19 else e.stamp + ".000"
            t = stamp_ms(stamp.replace(",", "."), utc_offset_minutes)
        t = max(t, last)
        last = t
        out.append(ViewChange(t, e.group, e.channel, e.client_id, e.event))
    return out
