"""Importing what a real RocketMQ cluster writes into a trace folder (``data/README.md``, "Importing
a real cluster's records"): the message trace (``rocketlb_core.trace.msgtrace``), the producers'
and consumers' client logs (``rocketlb_core.trace.clientlog``) and the brokers' logs
(``rocketlb_core.trace.brokerlog``), with broker addresses mapped to names through the cluster
layout. ``rocketlb trace import`` runs it.

What each input gives, and how the trace is derived from it:

* **sends**: one row per send the application made. A ``Pub`` record is a stored send (its
  time is the successful attempt's start, ``size`` its body length, ``key`` its keys). A failed
  attempt in a producer's client log (``sendKernelImpl exception``) started ``RT`` ms before it
  was logged; if another attempt of that producer starts within ``RETRY_GAP_MS`` of its end, it
  was a retry of the same send, and the send's time is its first attempt's start. A failed
  attempt with no retry after it is a send that failed (no ``Pub`` is ever written for it); its
  size is the producer's most common body length. The producer of a ``Pub`` is its group (and,
  when one group has several processes, ``group@ip:pid`` from the msgId). A ``Pub`` with
  ``success`` false is an attempt the broker stored and answered with a status other than
  SEND_OK (a 4.x ``SYNC_MASTER`` without its slave: SLAVE_NOT_AVAILABLE; live in
  ``data/live/slave-statuses-4``): it ends its send, unless a later ``Pub`` of the same producer
  has its msgId (``retryAnotherBrokerWhenNotStoreOK`` retried it: the retry's run goes on), and
  says nothing of its broker's condition. The ``Pub`` records include those a client's trace
  dispatcher failed to send, read from its log (``send trace data failed, the traceData is
  ...``: the batch whole, ``msgtrace.with_logged``): a broker refuses a trace message whose
  properties (its keys: every message id of its records) pass 32,767 characters, as a batch
  producer's soon do (live on 4.9.8, 5,351 of one producer's 6,100 records; fixture
  ``trace-lost-batches-4``).
* **conditions**, derived from what the clients observed, never from what the scenario did:
  a broker is ``down`` from the start of a failed attempt at it until the start of the next
  attempt stored there (``up``); ``silent`` (the host did not answer) when the attempt took at
  least ``SILENT_RT_MS``, else ``clean`` (the connection was refused or reset). Latency rows:
  per broker and ``WINDOW_MS`` window, the median and 99th percentile of the stored sends'
  ``costTime``, written when they change.
* **membership**: from the brokers' logs, each client's connections to a group: a first
  connection is a ``join``, an unregister a ``leave``, a channel closed without one a ``kill``
  (dropped at once), a channel expired a ``crash`` (dated 120 s before the expiry: the replay
  adds it back); one row per change, one broker's copy: the log with the most joins, since a
  broker killed early holds only the members that came before (see ``brokerlog``).
* **groups**: each group's strategy, as its consumers logged it.

Times in the trace are milliseconds since an *origin*: the first observed time, rounded down
to the second; ``trace.json``'s ``provenance`` states it as ``origin_ms=<epoch ms>``
(``origin_ms`` reads it back).
"""

from __future__ import annotations

import re
import stat
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from rocketlb_core.limits import MAX_NAME_CHARS
from rocketlb_core.model import QueueData
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.trace.clientlog import GMT8_MINUTES, ClientLog, read_client_log, stamp_ms
from rocketlb_core.trace.msgtrace import MsgTrace, read_msgtrace, with_logged
from rocketlb_core.trace.schema import (
    TraceError,
    check_name,
    has_control,
    read_json,
)

RETRY_GAP_MS = 20
SILENT_RT_MS = 1000
WINDOW_MS = 10_000
INNER_GROUPS = ("CLIENT_INNER_PRODUCER", "_INNER_TRACE_PRODUCER")
ROOM = "room-1"
"""Logs do not say where a host is: every broker and member is put in one room."""


@dataclass(frozen=True)
class Attempt:
    producer: str
    start_ms: int            # epoch
    end_ms: int
    broker: str
    ok: bool
    cost_ms: int
    size: int | None = None
    key: str | None = None
    msg_id: str | None = None
    where: str = ""          # the file and line it came from (for errors)
    invoke_id: int | None = None   # a failed attempt's InvokeID (one per send)
    retried_status: bool = False
    """A ``Pub`` with ``success`` false (the broker stored the message and answered a status
    other than SEND_OK) that the loop retried (``_retried_statuses``): not its send's end, and
    nothing about its broker's condition."""
    status: bool = False
    """A ``Pub`` with ``success`` false. One the loop did not retry ends its send, even when a
    failure follows it at once: that failure may be a retry's (the switch on, the next broker
    refusing: the send returned the status) or the next send's (the switch off, the default),
    and the trace cannot tell them apart, so such a send is imported as two."""


def origin_ms(meta: dict[str, Any]) -> int:
    """The epoch milliseconds that time 0 of an imported trace stands for."""
    m = re.search(r"origin_ms=(\d+)", str(meta.get("provenance", "")), re.ASCII)
    if m is None:
        raise TraceError("trace.json", None, "provenance", "no origin_ms=...: not an imported "
                         "trace")
    return int(m[1])


def _producer_names(trace: MsgTrace) -> dict[tuple[str, str], str]:
    ids: dict[str, set[str]] = {}
    for p in trace.pubs:
        ids.setdefault(p.group, set()).add(p.producer_id)
    return {(g, i): (g if len(s) == 1 else f"{g}@{i}") for g, s in ids.items() for i in s}


def attempts(trace: MsgTrace, logs: dict[str, ClientLog], addresses: dict[str, str],
             topic: str, log_offset_minutes: dict[str, int]) -> list[Attempt]:
    """Every observed attempt of ``topic``: stored ones from the ``Pub`` records, failed ones
    from the producers' client logs (``logs``: path -> parsed log; a log belongs to the
    producer group it started, other than upstream's inner ones)."""
    names = _producer_names(trace)
    out = []
    retried_ids = _retried_statuses([p for p in trace.pubs if p.topic == topic])
    for k, p in enumerate(trace.pubs):
        if p.topic != topic:
            continue
        retried = k in retried_ids
        broker = addresses.get(p.store_host)
        if broker is None:
            raise TraceError(p.source or trace.path, p.line, "Pub.storeHost",
                             f"{p.store_host[:80]!r} is not a broker address of the cluster "
                             f"layout ({', '.join(sorted(addresses))})"[:400])
        name = check_name(p.source or trace.path, p.line, "Pub.groupName",
                          names[(p.group, p.producer_id)])
        out.append(Attempt(name, p.time_ms, p.time_ms + p.cost_ms, broker, not retried,
                           p.cost_ms, p.body_length, p.keys, p.msg_id,
                           f"{p.source or trace.path}, row {p.line}", retried_status=retried,
                           status=not p.success))
    brokers = set(addresses.values())
    by_group: dict[str, list[str]] = {}
    for name in names.values():
        by_group.setdefault(name.split("@")[0], []).append(name)
    for path, log in logs.items():
        groups = [g for g in log.producer_groups if not g.startswith(INNER_GROUPS)]
        if not log.send_failures:
            continue
        if len(groups) != 1 or len(by_group.get(groups[0], [])) > 1:
            raise TraceError(path, None, "producer", f"a log of producer groups {groups}: "
                             "failed attempts need one producer per log file")
        producer = by_group.get(groups[0], [groups[0]])[0]
        for f in log.send_failures:
            if f.queue.topic != topic:
                continue
            if f.queue.broker_name not in brokers:
                raise TraceError(path, f.line, "Broker", f"a failed attempt on broker "
                                 f"{f.queue.broker_name[:80]!r}, which is not a broker of the "
                                 f"cluster layout ({', '.join(sorted(brokers))})"[:400])
            end = stamp_ms(f.stamp, log_offset_minutes[path])
            out.append(Attempt(producer, end - f.rt_ms, end, f.queue.broker_name, False,
                               f.rt_ms, where=f"{path}, row {f.line}", invoke_id=f.invoke_id))
    # at one time, a retried status before the attempt it led to, a stored attempt before a
    # failure
    out.sort(key=lambda a: (a.producer, a.start_ms, a.end_ms,
                            0 if a.retried_status else 1 if a.ok else 2))
    return out


def _retried_statuses(pubs: Sequence[Any]) -> set[int]:
    """The positions (in ``trace.pubs``) of the ``Pub`` records with ``success`` false whose
    attempt the loop retried (``retryAnotherBrokerWhenNotStoreOK``): the same producer's next
    record of the message's id begins at most ``RETRY_GAP_MS`` after it ended. One that begins
    later is another send of the same ``Message`` object (an application's own retry keeps the
    id). Records of one millisecond (a reply of 0 ms) are taken SEND_OK last, then in file order.

    >>> from types import SimpleNamespace as P
    >>> def pub(t, ok, cost=0):
    ...     return P(group="G", producer_id="p", msg_id="M", time_ms=t, success=ok, cost_ms=cost)
    >>> sorted(_retried_statuses([pub(0, False), pub(0, False), pub(1, True)]))
    [0, 1]
    >>> sorted(_retried_statuses([pub(0, False, 3), pub(900, False)]))
    []
    """
    where = {id(p): k for k, p in enumerate(pubs)}
    by_id: dict[tuple[str, str, str], list[Any]] = {}
    for p in pubs:
        by_id.setdefault((p.group, p.producer_id, p.msg_id), []).append(p)
    out = set()
    for same in by_id.values():
        same.sort(key=lambda p: (p.time_ms, p.success, where[id(p)]))
        for a, b in pairwise(same):
            if not a.success and -RETRY_GAP_MS <= b.time_ms - (a.time_ms + a.cost_ms) \
                    <= RETRY_GAP_MS:
                out.add(where[id(a)])
    return out


def sends_of(attempts_: Sequence[Attempt]) -> list[tuple[int, str, str | None, int, bool]]:
    """Group attempts into sends: (first attempt start, producer, key, size, stored). A send
    is a run of one producer's failed attempts, each beginning at most ``RETRY_GAP_MS`` after
    the last ended, closed by a stored attempt (a ``Pub`` record).

    Where that run mixes failed attempts of several InvokeIDs (``sendDefaultImpl`` draws one
    per send and logs it with each failed attempt), several threads of the producer were
    failing at once, and the producer's attempts are grouped by InvokeID instead
    (``_by_invoke``): one send per InvokeID, closed by the first stored attempt that began
    within ``RETRY_GAP_MS`` of its last failure's end and that no earlier send took, and one
    send per stored attempt left. Only the counts are sure then: which thread's stored
    attempt closed which send the logs do not say (the message trace names no thread).

    >>> a = [Attempt("p", 0, 3000, "broker-a", False, 3000, invoke_id=1),
    ...      Attempt("p", 500, 3500, "broker-a", False, 3000, invoke_id=2),
    ...      Attempt("p", 3001, 3003, "broker-b", True, 2, size=4),
    ...      Attempt("p", 3501, 3502, "broker-b", True, 1, size=4)]
    >>> [(t, ok) for t, _, _, _, ok in sends_of(a)]
    [(0, True), (500, True)]
    """
    sizes: dict[str, Counter[int]] = {}
    for a in attempts_:
        if a.size is not None:
            sizes.setdefault(a.producer, Counter())[a.size] += 1
    runs: list[list[Attempt]] = []
    open_send: list[Attempt] = []
    stream: list[Attempt | None] = [*attempts_, None]
    for item in stream:
        if open_send and (item is None or item.producer != open_send[-1].producer
                          or open_send[-1].ok
                          or item.start_ms - open_send[-1].end_ms > RETRY_GAP_MS):
            runs.append(open_send)
            open_send = []
        if item is not None:
            open_send.append(item)
    mixed = {r[0].producer for r in runs
             if len({a.invoke_id for a in r if not a.ok and a.invoke_id is not None}) > 1}
    if mixed:
        runs = [r for r in runs if r[0].producer not in mixed]
        for producer in sorted(mixed):
            runs += _by_invoke([a for a in attempts_ if a.producer == producer])
        runs.sort(key=lambda r: (r[0].producer, r[0].start_ms, r[0].end_ms, not r[0].ok))
    out = []
    for run in runs:
        last, first = run[-1], run[0]
        size = last.size if last.size is not None else (
            sizes.get(first.producer, Counter({0: 1})).most_common(1)[0][0])
        out.append((first.start_ms, first.producer, last.key, size, last.ok))
    return out


def _by_invoke(attempts_: Sequence[Attempt]) -> list[list[Attempt]]:
    """One producer's attempts as sends, its failed attempts grouped by InvokeID (a failed
    attempt without one is a send of its own); see ``sends_of``."""
    groups: dict[int | None, list[Attempt]] = {}
    runs: list[list[Attempt]] = []
    for a in attempts_:
        if a.ok or a.retried_status:      # a retried status: its retry is the send's stored one
            continue
        if a.invoke_id is None:
            runs.append([a])
        else:
            groups.setdefault(a.invoke_id, []).append(a)
    runs += list(groups.values())
    stored = sorted((a for a in attempts_ if a.ok), key=lambda a: (a.start_ms, a.end_ms))
    taken = [False] * len(stored)
    for run in sorted(runs, key=lambda r: (r[-1].end_ms, r[0].start_ms)):
        end = run[-1].end_ms
        for i, a in enumerate(stored):
            if not taken[i] and 0 <= a.start_ms - end <= RETRY_GAP_MS:
                taken[i] = True
                run.append(a)
                break
    runs += [[a] for a, t in zip(stored, taken, strict=True) if not t]
    return runs


def conditions_of(attempts_: Sequence[Attempt], origin: int) -> dict[str, list[Any]]:
    """Broker conditions derived from the attempts (see the module docstring)."""
    rows: list[tuple[int, int, str, str, str | None, float | None, float | None]] = []
    by_broker: dict[str, list[Attempt]] = {}
    for a in attempts_:
        if not a.retried_status:           # a broker that answered is not down
            by_broker.setdefault(a.broker, []).append(a)
    for broker, seen in sorted(by_broker.items()):
        seen.sort(key=lambda a: (a.start_ms, not a.ok))
        down_since: int | None = None
        for a in seen:
            if not a.ok and down_since is None:
                down_since = a.start_ms
                mode = "silent" if a.cost_ms >= SILENT_RT_MS else "clean"
                rows.append((a.start_ms - origin, 1, broker, "down", mode, None, None))
            elif a.ok and down_since is not None and a.start_ms >= down_since:
                rows.append((a.start_ms - origin, 2, broker, "up", None, None, None))
                down_since = None
        windows: dict[int, list[int]] = {}
        for a in seen:
            if a.ok:
                windows.setdefault((a.start_ms - origin) // WINDOW_MS, []).append(a.cost_ms)
        last = None
        for w, costs in sorted(windows.items()):
            costs.sort()
            median = float(statistics.median(costs))
            p99 = float(costs[min(len(costs) - 1, int(0.99 * len(costs)))])
            table = (max(median, 1.0), max(p99, median, 1.0))
            if table != last:
                rows.append((w * WINDOW_MS, 0, broker, "latency", None, *table))
                last = table
    rows.sort(key=lambda r: (r[0], r[2], r[1]))
    return {"time_ms": [r[0] for r in rows], "broker": [r[2] for r in rows],
            "client": [None] * len(rows), "kind": [r[3] for r in rows],
            "mode": [r[4] for r in rows], "median_ms": [r[5] for r in rows],
            "p99_ms": [r[6] for r in rows]}


def check_arguments(*, topic: str, line: str, name: str, brokers: Sequence[tuple[str, str]],
                    route: Sequence[QueueData], utc_offset_minutes: int,
                    where: str = "the arguments") -> None:
    """Refuse (``TraceError`` naming ``where`` and the field) what would make a trace that
    ``rocketlb trace validate`` refuses: an unknown line, names that are not names, a route
    with impossible queue counts or permissions, a time zone that is not one."""
    from rocketlb_core.limits import MAX_QUEUES, MAX_TEXT_CHARS

    check_name(where, None, "topic", topic)
    if not isinstance(line, str) or len(line) > MAX_TEXT_CHARS:
        raise TraceError(where, None, "line", "expected a RocketMQ version such as 4.9.8")
    try:
        ProducerLine.parse(line)
    except ValueError as exc:
        raise TraceError(where, None, "line", str(exc)) from None
    if not isinstance(name, str) or len(name) > MAX_TEXT_CHARS:
        raise TraceError(where, None, "name", "expected text")
    if not brokers:
        raise TraceError(where, None, "brokers", "no broker in the cluster layout")
    for b, addr in brokers:
        check_name(where, None, "broker name", b)
        check_name(where, None, f"address of {b}", addr)
    names = {b for b, _ in brokers}
    if not route:
        raise TraceError(where, None, "route", f"no queue of topic {topic!r}")
    seen: set[str] = set()
    for q in route:
        if q.broker_name not in names:
            raise TraceError(where, None, "route", f"broker {q.broker_name[:80]!r} of the route "
                             "is not in the cluster layout")
        if q.broker_name in seen:
            raise TraceError(where, None, "route", f"broker {q.broker_name!r} appears twice")
        seen.add(q.broker_name)
        for field, v, top in (("read_queue_nums", q.read_queue_nums, MAX_QUEUES),
                              ("write_queue_nums", q.write_queue_nums, MAX_QUEUES),
                              ("perm", q.perm, 7)):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= top:
                raise TraceError(where, None, f"route.{q.broker_name}.{field}",
                                 f"expected an integer from 0 to {top}, got {v!r}")
    if isinstance(utc_offset_minutes, bool) or not isinstance(utc_offset_minutes, int) or not (
            -24 * 60 < utc_offset_minutes < 24 * 60):
        raise TraceError(where, None, "utc_offset_minutes", "expected minutes east of UTC, "
                         f"-1439 to 1439, got {utc_offset_minutes!r}")


def _check_span(seen: Sequence[Attempt], member_rows: Sequence[tuple[int, str, str, str]],
                origin: int, broker_logs: Sequence[Path | str]) -> None:
    """A trace spans at most ``MAX_TIME_MS`` (31 days): refuse records further apart, naming
    the first and the last."""
    from rocketlb_core.limits import MAX_TIME_MS

    times = [(a.start_ms, a.where) for a in seen] + [(a.end_ms, a.where) for a in seen]
    logs = ", ".join(map(str, broker_logs))
    times += [(t, f"the broker logs ({logs}), {group} {member} {event}")
              for t, group, member, event in member_rows]
    first, last = min(times), max(times)
    if last[0] - origin + 1 > MAX_TIME_MS:
        days = (last[0] - first[0]) / 86_400_000
        raise TraceError(last[1], None, "time", f"the records span {days:.1f} days, from "
                         f"{first[1]} to here: a trace spans at most 31 days "
                         "(check the clocks and time zones of the files, or import each "
                         "stretch of time on its own)")


def log_offset(line: str, utc_offset_minutes: int) -> int:
    """The offset east of UTC of a client log's timestamps for the client release ``line``:
    from 5.1.0 GMT+8 always, up to 5.0.0 the JVM's zone (``utc_offset_minutes``; the form of
    the stamps says the same, ``clientlog.log_zone_minutes``).

    >>> log_offset("5.3.3", 0), log_offset("5.0.0", -60)
    (480, -60)
    >>> log_offset("4.9.8", 0)
    0
    """
    nums = tuple(int(x) for x in re.findall(r"\d+", line, re.ASCII)[:3])
    return GMT8_MINUTES if nums >= (5, 1, 0) else utc_offset_minutes


def import_records(out: Path | str, *, msgtrace: Path | str, client_logs: Sequence[Path | str],
                   brokers: Sequence[tuple[str, str]], route: Sequence[QueueData], topic: str,
                   line: str, name: str, description: str = "", provenance: str = "",
                   broker_logs: Sequence[Path | str] = (), utc_offset_minutes: int = 0,
                   broker_log_offset_minutes: int = GMT8_MINUTES,
                   groups_kept: Sequence[str] | None = None,
                   broadcasting: Sequence[str] = (),
                   skip_bad: bool = False, force: bool = False,
                   inputs: Sequence[Path | str] = ()) -> dict[str, Any]:
    """Write the trace folder ``out`` from a message-trace dump, client logs and broker logs
    (see the module docstring); ``brokers`` are (name, address) pairs of the cluster layout,
    ``route`` the topic's queue data, ``line`` the clients' RocketMQ version; ``inputs`` are
    further paths read (a layout or recording folder) that ``out`` may not be, hold or lie in;
    ``broadcasting`` names the groups in broadcasting mode (``model = "BROADCASTING"`` in the
    trace: every member takes every queue, so no allocation replays them).
    Every argument and record is checked before anything is written, and the trace is checked
    by ``rocketlb trace validate --rows``'s own code before it is moved into place. Returns a
    summary of what was read (and, with ``skip_bad``, skipped)."""
    from rocketlb_core.trace.brokerlog import membership_of, read_broker_log
    from rocketlb_core.trace.write import write_trace

    check_arguments(topic=topic, line=line, name=name, brokers=brokers, route=route,
                    utc_offset_minutes=utc_offset_minutes)
    logs = {str(p): read_client_log(p, skip_bad=skip_bad) for p in client_logs}
    # what the clients' trace dispatchers failed to send is in their logs (``with_logged``)
    trace = with_logged(read_msgtrace(msgtrace, skip_bad=skip_bad), logs, skip_bad=skip_bad)
    offsets = {p: log_offset(line, utc_offset_minutes) for p in logs}
    addresses = {addr: b for b, addr in brokers}
    seen = attempts(trace, logs, addresses, topic, offsets)
    if not seen:
        raise TraceError(msgtrace, None, None, f"no Pub record of topic {topic!r}")
    broker_records = [read_broker_log(p, skip_bad=skip_bad) for p in broker_logs]
    member_rows, member_times = membership_of(broker_records, line, broker_log_offset_minutes)
    if groups_kept is not None:
        member_rows = [r for r in member_rows if r[1] in groups_kept]
        member_times = [r[0] for r in member_rows]
    first = min([a.start_ms for a in seen] + member_times)
    origin = first - first % 1000
    _check_span(seen, member_rows, origin, broker_logs)
    sends = sends_of(seen)
    groups: dict[str, dict[str, Any]] = {}
    for path, log in logs.items():
        for r in log.rebalances:
            if r.topic == topic:
                check_name(path, r.line, "group", r.group)
                if len(r.strategy) > MAX_NAME_CHARS or has_control(r.strategy):
                    raise TraceError(path, r.line, "allocateMessageQueueStrategyName",
                                     f"not a strategy's name: {r.strategy[:40]!r}")
                groups.setdefault(r.group, {"strategy": r.strategy})
    for g in broadcasting:           # checked with the trace (schema.check_meta's groups)
        groups[g] = {"model": "BROADCASTING"}        # allocates nothing: logs no strategy
    membership: dict[str, list[Any]] | None = None
    if member_rows:
        columns: dict[str, list[Any]] = {k: [] for k in ("time_ms", "group", "member",
                                                          "client_id", "event", "room")}
        for t, group, member, event in member_rows:
            for k, v in zip(columns, (t - origin, group, member, member.split("/")[0], event,
                                      ROOM), strict=True):
                columns[k].append(v)
        membership = columns
    end = max([a.end_ms for a in seen] + member_times) - origin + 1
    meta = {"name": name, "description": description, "topic": topic, "line": line,
            "start_ms": 0, "end_ms": end,
            "provenance": f"{provenance} Imported by rocketlb trace import; times are ms since "
                          f"origin_ms={origin}.".strip(),
            "groups": groups}
    cluster = "rocketlb"
    write_trace(Path(out), meta,
                [(cluster, b, 0, addr, ROOM) for b, addr in brokers],
                [(topic, q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm)
                 for q in route],
                {"time_ms": [s[0] - origin for s in sends], "producer": [s[1] for s in sends],
                 "topic": [topic] * len(sends), "key": [s[2] for s in sends],
                 "size": [s[3] for s in sends]},
                conditions_of(seen, origin), membership, command="trace import",
                inputs=[Path(msgtrace), *map(Path, client_logs), *map(Path, broker_logs),
                        *map(Path, inputs)],
                force=force, validate=True)
    return {"trace": str(out), "origin_ms": origin, "sends": len(sends),
            "stored": sum(s[4] for s in sends), "pub_records": len(trace.pubs),
            "records_from_logs": trace.from_logs,
            "failed_attempts": sum(not a.ok for a in seen),
            "membership_rows": len(member_rows), "messages": trace.messages,
            "unterminated_sub_after": trace.unterminated,
            "bad": trace.bad + sum(len(x.bad) for x in logs.values())
            + sum(len(b.bad) for b in broker_records)}


def load_recording(recording: Path | str) -> dict[str, Any]:
    """A recording folder's ``recording.json`` (``rocketlb_core.live.record``), checked: a
    missing folder or file, invalid JSON or a missing or mistyped field is a ``TraceError``
    naming the file and the field."""
    from rocketlb_core.limits import MAX_RECORDING_BYTES, MAX_TEXT_CHARS

    recording = Path(recording)
    if not recording.is_dir():
        raise TraceError(recording, None, None, "not a recording folder (no such folder)"
                         if not recording.exists() else "not a folder")
    path = recording / "recording.json"
    meta = read_json(path, MAX_RECORDING_BYTES)
    if not isinstance(meta, dict):
        raise TraceError(path, None, None, "expected a JSON object")

    def text(key: str, default: str | None = None) -> str:
        v = meta.get(key, default)
        if not isinstance(v, str) or len(v) > MAX_TEXT_CHARS:
            raise TraceError(path, None, key, "missing, or not text" if v is None else
                             f"expected text, got {type(v).__name__}")
        return v

    def objects(key: str, fields: dict[str, type]) -> list[dict[str, Any]]:
        items = meta.get(key, [] if key == "consumers" else None)
        if not isinstance(items, list):
            raise TraceError(path, None, key, "missing, or not a list")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise TraceError(path, None, f"{key}[{i}]", "expected an object")
            for f, typ in fields.items():
                v = item.get(f)
                if not isinstance(v, typ) or isinstance(v, bool):
                    raise TraceError(path, None, f"{key}[{i}].{f}",
                                     f"expected {'an integer' if typ is int else 'text'}, "
                                     f"got {v!r}"[:200])
        return items

    for key in ("topic", "client_version", "server_version", "scenario", "line"):
        text(key)
    text("description", "")
    text("command", "")
    objects("brokers", {"name": str, "address": str})
    objects("route", {"broker_name": str, "read_queue_nums": int, "write_queue_nums": int,
                      "perm": int})
    objects("consumers", {"group": str})
    offset = meta.get("utc_offset_minutes", 0)
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TraceError(path, None, "utc_offset_minutes", f"expected an integer, got {offset!r}")
    check_arguments(
        topic=meta["topic"], line=meta["client_version"], name=meta["scenario"],
        brokers=[(b["name"], b["address"]) for b in meta["brokers"]],
        route=[QueueData(q["broker_name"], q["read_queue_nums"], q["write_queue_nums"],
                         q["perm"]) for q in meta["route"]],
        utc_offset_minutes=offset, where=str(path))
    for i, c in enumerate(meta["consumers"]):
        check_name(path, None, "consumers.group", c["group"])
        # a remoting consumer's message model and listener (issue 45), when not the defaults
        remoting = c.get("client", "remoting") == "remoting"
        for key, allowed in (("model", ("broadcasting",)), ("listener", ("orderly",)),
                             ("kind", ("lite-pull",) if remoting else ("simple", "push")),
                             ("language", ("go",)),
                             ("strategy", ("AVG_BY_CIRCLE", "CONSISTENT_HASH")),
                             ("rebalance", ("broker",))):
            if key in c and c[key] not in allowed:
                raise TraceError(path, None, f"consumers[{i}].{key}",
                                 f"{' or '.join(allowed)} (or absent) expected, got "
                                 f"{c[key]!r:.40}")
        assign = c.get("assign", [])
        if not isinstance(assign, list) or len(assign) > 64 or not all(
                isinstance(q, str) and 0 < len(q) <= MAX_NAME_CHARS + 6 for q in assign):
            raise TraceError(path, None, f"consumers[{i}].assign",
                             f"a list of queues as 'broker/id' expected, got {assign!r:.60}")
    # a master's slave (issue 45): its name, its master (a broker of the recording), its address
    slaves = meta.get("slaves", [])
    masters = {b["name"] for b in meta["brokers"]}
    if not isinstance(slaves, list) or len(slaves) > len(masters):
        raise TraceError(path, None, "slaves", f"a list of at most one slave a broker expected, "
                         f"got {slaves!r:.60}")
    for i, x in enumerate(slaves):
        ok = (isinstance(x, dict) and set(x) == {"name", "master", "address"}
              and isinstance(x["master"], str) and x["master"] in masters
              and sum(y.get("master") == x["master"] for y in slaves
                      if isinstance(y, dict)) == 1
              and all(isinstance(x[k], str) and 0 < len(x[k]) <= MAX_NAME_CHARS
                      for k in ("name", "address")))
        if not ok:
            raise TraceError(path, None, f"slaves[{i}]", "{name, master: a broker of the "
                             f"recording (once), address}} expected, got {x!r:.80}")
    producers = meta.get("producers", [])
    if not isinstance(producers, list):
        raise TraceError(path, None, "producers", f"a list expected, got {producers!r:.60}")
    for i, p in enumerate(producers):
        if not isinstance(p, dict):
            raise TraceError(path, None, f"producers[{i}]", "expected an object")
        if "retry_not_stored" in p and not isinstance(p["retry_not_stored"], bool):
            raise TraceError(path, None, f"producers[{i}].retry_not_stored",
                             f"true or false expected, got {p['retry_not_stored']!r:.40}")
        permits = p.get("back_pressure", 0)
        if isinstance(permits, bool) or not isinstance(permits, int) \
                or not (permits == 0 or 10 <= permits <= 100_000) \
                or (permits and p.get("mode") != "async"):
            raise TraceError(path, None, f"producers[{i}].back_pressure",
                             f"an async producer's permits, 10 to 100000, expected, got "
                             f"{permits!r:.40}")
    # a group's request mode on the topic (issue 45, pop): its group one of the consumers'
    modes = meta.get("consume_modes", [])
    groups = {c["group"] for c in meta["consumers"]}
    if not isinstance(modes, list) or len(modes) > 64:
        raise TraceError(path, None, "consume_modes", f"a list expected, got {modes!r:.60}")
    for i, m in enumerate(modes):
        ok = (isinstance(m, dict) and m.get("group") in groups
              and m.get("mode") in ("PULL", "POP")
              and isinstance(m.get("pop_share"), int) and not isinstance(m["pop_share"], bool)
              and -1 <= m["pop_share"] <= 64)
        if not ok:
            raise TraceError(path, None, f"consume_modes[{i}]",
                             "{group: a consumer's group, mode: PULL or POP, pop_share: -1 to "
                             f"64}} expected, got {m!r:.80}")
    return meta


def recording_route(meta: dict[str, Any]) -> Any:
    """The topic's route (a ``model.TopicRoute``) as a live recording's ``recording.json``
    (``meta``, read by ``load_recording``) read it from its brokers: the queues each broker
    holds."""
    from rocketlb_core.model import BrokerData, TopicRoute

    return TopicRoute(
        tuple(QueueData(q["broker_name"], q["read_queue_nums"], q["write_queue_nums"],
                        q["perm"]) for q in meta["route"]),
        tuple(BrokerData(b["name"], {0: b["address"]}, meta.get("cluster", "rocketlb"))
              for b in meta["brokers"]))


def recording_logs(recording: Path) -> tuple[list[Path], list[Path]]:
    """A recording's client logs and broker logs (``logs/PROCESS/FILE.log.gz``), read where
    they are: gzip is undone while reading, within ``MAX_IMPORT_BYTES``."""
    client_logs: list[Path] = []
    broker_logs: list[Path] = []
    logs = recording / "logs"
    folders = [logs]
    try:
        if not stat.S_ISDIR(logs.lstat().st_mode):
            raise TraceError(logs, None, None, "expected the recording's folder of logs, found "
                             "a link or a file (a recording holds its logs, never a link)")
        folders += sorted(logs.iterdir())
        for folder in folders[1:]:
            if not stat.S_ISDIR(folder.lstat().st_mode):
                raise TraceError(folder, None, None, "expected a process's folder of logs, "
                                 "found a link or a file")
    except FileNotFoundError:
        return client_logs, broker_logs
    except OSError as exc:
        raise TraceError(logs, None, None, f"cannot read it ({exc.strerror})") from None
    for gz in sorted(logs.glob("*/*.log.gz")):
        process, file = gz.parent.name, gz.name[:-3]
        if file == "rocketmq_client.log":
            client_logs.append(gz)
        elif file == "broker.log" and process.startswith("broker-"):
            broker_logs.append(gz)
    return client_logs, broker_logs


def remoting_clients(meta: dict[str, Any]) -> bool:
    """Does a recording hold a remoting client (a producer or consumer without ``client =
    "grpc"``)? A recording through the Proxy may (issue 47: a group of remoting and gRPC
    consumers); its remoting part is imported and checked like any other recording's."""
    return any(x.get("client", "remoting") != "grpc"
               for x in [*meta.get("producers", []), *meta.get("consumers", [])])


def import_recording(recording: Path | str, out: Path | str, *, skip_bad: bool = False,
                     force: bool = False) -> dict[str, Any]:
    """Import a folder ``rocketlb_core.live.record`` wrote: its message trace, every client and
    broker log in it, its layout and route. The recording folder is an input: ``out`` may not
    be, hold or lie inside it."""
    recording = Path(recording)
    meta = load_recording(recording)
    if ("proxy" in meta or "grpc_client" in meta) and not remoting_clients(meta):
        raise TraceError(recording / "recording.json", None, "grpc_client",
                         "a recording of gRPC clients through the Proxy has no message trace "
                         "to import (rocketmq-client-java writes none, and the Proxy traces no "
                         "gRPC send): check it with 'python -m rocketlb_core.live check "
                         f"{recording}'")
    client_logs, broker_logs = recording_logs(recording)
    return import_records(
        out, msgtrace=recording / "msgtrace.jsonl.gz", client_logs=client_logs,
        broker_logs=broker_logs,
        brokers=[(b["name"], b["address"]) for b in meta["brokers"]],
        route=[QueueData(q["broker_name"], q["read_queue_nums"], q["write_queue_nums"],
                         q["perm"]) for q in meta["route"]],
        topic=meta["topic"], line=meta["client_version"],
        name=f"live-{meta['scenario']}-{meta['line']}",
        description=meta.get("description", ""),
        provenance=(f"Recorded on a live RocketMQ {meta['server_version']} cluster with "
                    f"{meta['client_version']} clients, scenario {meta['scenario']} "
                    f"({meta.get('command', '')})."),
        utc_offset_minutes=int(meta.get("utc_offset_minutes", 0)), skip_bad=skip_bad,
        groups_kept=sorted({c["group"] for c in meta.get("consumers", [])
                            if c.get("client", "remoting") != "grpc"}),
        broadcasting=sorted({c["group"] for c in meta.get("consumers", [])
                             if c.get("model") == "broadcasting"}),
        force=force, inputs=[recording])
