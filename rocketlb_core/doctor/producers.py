"""The doctor's producer-side checks, and the two that concern what a whole group sees: brokers
isolated by a producer's fault strategy, producers that kept sending to a failing broker, skew
onto queue 0 of each broker, rebalance storms, and brokers whose permission hides their queues
from consumers or producers.

Isolation is computed by the core's own fault strategy (``producer.strategy.MQFaultStrategy``)
for the release line of the client's logged version (``producer.line``): every failed attempt
(``sendKernelImpl exception, resend at once``) is reported to it as upstream's
``sendDefaultImpl`` does (spec 2.6): a ``RemotingException`` and an ``MQBrokerException`` with
``isolation`` (4.x and 5.x), an ``MQClientException`` with ``isolation`` on 4.x only
(``LineRules.client_error_isolates``); an isolating report looks up
``LineRules.isolation_latency_ms`` (30,000 ms on 4.x, so 600,000 ms of avoidance; 10,000 ms
from 5.1.4, so 10,000 ms) in the latency->duration table (spec 2.3), a non-isolating one the
attempt's own time. A later failure of the same producer on the same broker that began inside
that window shows the producer did not avoid it: ``sendLatencyFaultEnable`` was off.

Log times: from 5.1.0 clients write GMT+8 (``clientlog.GMT8_MINUTES``), up to 5.0.0 the JVM's
zone, told apart by the stamp's form (``clientlog.log_zone_minutes``: ``.SSS`` or ``,SSS``); the
JVM's zone is read as UTC unless the operator names it (``rocketlb doctor --log-zone +08:00``:
the ``zone_4x`` argument, minutes east of UTC), said in each finding. The report's times and the
comparisons with the message trace (epoch ms) depend on it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from rocketlb_core.doctor.findings import BOOK, Finding
from rocketlb_core.doctor.inputs import ClientLogFile, Evidence, Failure, Inputs, Published
from rocketlb_core.doctor.replayed import SOURCE_CORE, SOURCE_REPLAY, Day, Days, Stats
from rocketlb_core.model import MessageQueue, TopicRoute, publish_queues, subscribe_queues
from rocketlb_core.producer.line import ProducerLine

INNER_GROUPS = ("CLIENT_INNER_PRODUCER", "_INNER_TRACE_PRODUCER")
LONG_ISOLATION_MS = 60_000
"""An isolation this long or longer is a warning (4.x's 600 s); shorter ones (5.x's 10 s) are
information."""
SKEW_MIN_MESSAGES = 400
"""Messages a broker's queues must hold before their split is judged: with 4 queues the share
of one queue under round robin then varies by about 2 percentage points (binomial), far below
the threshold."""
SKEW_FACTOR = 2.0
"""Queue 0 holding more than this many times its fair share (1/n of the broker's messages) is
skew: round robin gives every queue 1/n; upstream #5672 reports about half on queue 0 with 4
queues, the book's replay (chapter 3) about 70 %."""
STORM_CHANGES = 10
"""More assignment changes than this in any 60 s, for one consumer and topic, is a storm. A
member joining or leaving changes each member's share once or twice (the broker's notice, then
the next 20 s run); the busiest shipped recording (membership-day: four joins and leaves in
32 s) peaks at 5 a minute."""
STORM_WINDOW_MS = 60_000
MAX_TICKS = 500                    # failed attempts' times kept per finding (the timeline)
_ADDR = re.compile(r"(\d{1,3}(?:\.\d{1,3}){3}:\d{1,5})", re.ASCII)
_CODES = {1: "SYSTEM_ERROR", 2: "SYSTEM_BUSY", 14: "SERVICE_NOT_AVAILABLE", 16: "NO_PERMISSION",
          17: "TOPIC_NOT_EXIST", 1500: "GO_AWAY"}          # ResponseCode @4.9.8/@5.3.3


def line_of(version: str | None) -> tuple[ProducerLine, str]:
    """The modelled release line whose fault-strategy rules a client version follows, and a
    note when it was assumed (spec 2.3: 5.0.0 to 5.1.3 keep 4.x's tables; 5.1.4 brought 5.x's).

    >>> [line_of(v)[0].value for v in ("V4_9_8", "V5_3_3", "V5_1_0", "V4_7_1")]
    ['4.9.8', '5.3.3', '4.9.7', '4.7.1']
    >>> line_of(None)[1]
    'no version logged: 4.9.8 assumed'
    """
    nums = tuple(int(x) for x in re.findall(r"\d+", version or "", re.ASCII)[:3])
    if len(nums) < 3:
        return ProducerLine.V4_9_8, "no version logged: 4.9.8 assumed"
    if nums >= (5, 1, 4):
        return ProducerLine.V5_3_3, ""
    if nums >= (5, 0, 0) or (4, 8, 0) <= nums < (4, 9, 8):
        return ProducerLine.V4_9_7, ""
    if nums < (4, 8, 0):
        return ProducerLine.V4_7_1, ""
    return ProducerLine.V4_9_8, ""


def isolation_ms(line: ProducerLine) -> int:
    """How long an isolating report takes a broker out on ``line`` (spec 2.3).

    >>> isolation_ms(ProducerLine.V4_9_8), isolation_ms(ProducerLine.V5_3_3)
    (600000, 10000)
    """
    from rocketlb_core.producer.tables import compute_not_available_duration

    r = line.rules
    return compute_not_available_duration(r.isolation_latency_ms, r.latency_max,
                                          r.not_available_duration)


def zone_text(stamp: str, zone_4x: int | None = None) -> str:
    """How the doctor read the times of a log whose lines look like ``stamp``: by their form
    (``clientlog.log_zone_minutes``), not by the client's version, since 5.0.0 to 5.1.3 follow
    4.x's fault tables but 5.1.0 to 5.1.3 already log in GMT+8.

    >>> zone_text("2026-11-27 10:00:00.123")
    'GMT+8 (5.1.0+ log format)'
    >>> zone_text("2026-11-27 10:00:00,123")
    "UTC (assumed: the JVM's zone)"
    >>> zone_text("2026-11-27 10:00:00,123", -330)
    'UTC-05:30 (--log-zone)'
    """
    if stamp[19:20] == ".":
        return "GMT+8 (5.1.0+ log format)"
    if zone_4x is None:
        return "UTC (assumed: the JVM's zone)"
    sign, m = ("+" if zone_4x >= 0 else "-"), abs(zone_4x)
    return f"UTC{sign}{m // 60:02d}:{m % 60:02d} (--log-zone)"


def parse_zone(text: str) -> int:
    """``--log-zone``: ``+08:00``, ``-0530``, ``UTC``/``Z`` -> minutes east of UTC.

    >>> parse_zone("+08:00"), parse_zone("-0530"), parse_zone("UTC"), parse_zone("+8")
    (480, -330, 0, 480)
    """
    t = text.strip().upper()
    if t in ("Z", "UTC", "GMT"):
        return 0
    m = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d\d))?", t, re.ASCII)
    if m is None or int(m.group(2)) > 14 or int(m.group(3) or 0) > 59:
        raise ValueError(f"--log-zone {text!r}: give the logs' offset from UTC as +HH:MM, "
                         f"-HHMM or UTC (a 4.x client writes its JVM's local time)")
    minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
    return minutes if m.group(1) == "+" else -minutes


def _ms(stamp: str, line: ProducerLine, zone_4x: int | None = None) -> int | None:
    from rocketlb_core.trace.clientlog import log_zone_minutes, stamp_ms

    try:
        return stamp_ms(stamp[:23], log_zone_minutes(stamp, zone_4x or 0))
    except ValueError:
        return None


def _utc(ms: int) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime(
        "%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


@dataclass(frozen=True)
class Window:
    """One isolation the core computes: ``broker`` avoided from ``start_ms`` to ``end_ms``."""

    producer: str
    broker: str
    start_ms: int
    end_ms: int
    why: str
    failure: Failure

    def as_json(self) -> dict[str, object]:
        return {"producer": self.producer, "broker": self.broker, "from": _utc(self.start_ms),
                "to": _utc(self.end_ms), "start_ms": self.start_ms, "end_ms": self.end_ms,
                "duration_ms": self.end_ms - self.start_ms,
                "why": self.why, "evidence": self.failure.ev.as_json()}


def classify(f: Failure, line: ProducerLine) -> tuple[str, bool, bool]:
    """Why the attempt failed, and what ``sendDefaultImpl`` reports for it (spec 2.6):
    (why, isolation, reachable)."""
    rules = line.rules
    exc = f.exception.text if f.exception else ""
    code = f.failure.response_code
    if code is not None or "MQBrokerException" in exc:
        name = _CODES.get(code or 0, "")
        return (f"broker error code {code}{' (' + name + ')' if name else ''}", True,
                rules.broker_error_reachable)
    if "MQClientException" in exc:
        return (f"client error after {f.failure.rt_ms} ms", rules.client_error_isolates, True)
    kind = re.search(r"(Remoting\w*Exception)", exc)
    if kind:
        what = "timeout" if "Timeout" in kind[1] else "remoting error"
        return f"{what} ({kind[1]}) after {f.failure.rt_ms} ms", True, True
    return f"failed attempt after {f.failure.rt_ms} ms (exception not logged: remoting assumed)", \
        True, True


def _client_ids(cl: ClientLogFile) -> list[str]:
    """The log's client ids but the trace's own producer (``..._CLIENT_INNER_TRACE_...``)."""
    return [c for c in cl.client_ids if "CLIENT_INNER" not in c][:8]


def _producer_name(cl: ClientLogFile) -> str:
    groups = [g for g in cl.producer_groups if not g.startswith(INNER_GROUPS)]
    ids = ", ".join(_client_ids(cl)[:2])
    return f"{'/'.join(groups) or 'producer'} ({ids or cl.path})"


def _address(broker: str, fs: list[Failure], inputs: Inputs) -> str | None:
    for f in fs:
        m = _ADDR.search(f.exception.text) if f.exception else None
        if m:
            return m[1]
    for rf in inputs.routes:
        for bd in rf.route.broker_datas:
            if bd.broker_name == broker and bd.master_addr:
                return bd.master_addr
    for cf in inputs.clusters:
        for b in cf.brokers:
            if b.broker == broker and b.broker_id == 0:
                return b.addr
    return None


def windows_of(cl: ClientLogFile, zone_4x: int | None = None
               ) -> dict[str, tuple[list[Window], list[Failure]]]:
    """Per broker, the isolations the core computes from ``cl``'s failed attempts as if the
    fault strategy were on, and the failures that began inside an earlier one (the producer
    did not avoid the broker: the strategy was off). ``zone_4x``: a 4.x log's offset from
    UTC in minutes (``None``: UTC)."""
    from rocketlb_core.producer.strategy import MQFaultStrategy

    line = line_of(cl.version[0] if cl.version else None)[0]
    by_broker: dict[str, list[Failure]] = defaultdict(list)
    for f in cl.failures:
        by_broker[f.failure.queue.broker_name].append(f)
    out = {}
    name = _producer_name(cl)
    for broker, fs in sorted(by_broker.items()):
        strategy = MQFaultStrategy(line, send_latency_fault_enable=True)
        windows: list[Window] = []
        inside: list[Failure] = []
        for f in fs:
            t = _ms(f.failure.stamp, line, zone_4x)
            if t is None:
                continue
            if windows and t - f.failure.rt_ms < windows[-1].end_ms:
                inside.append(f)
            why, isolation, reachable = classify(f, line)
            strategy.update_fault_item(broker, f.failure.rt_ms, isolation, t, reachable)
            item = strategy.table.items.get(broker)
            end = item.start_timestamp if item is not None else t
            if end > t:
                windows.append(Window(name, broker, t, end, why, f))
        out[broker] = (windows, inside)
    return out


def _inside(t: int, windows: list[Window]) -> bool:
    """Whether ``t`` falls in one of ``windows`` (in time order, as ``windows_of`` makes them;
    a binary search: a trace may hold millions of records)."""
    from bisect import bisect_right

    i = bisect_right([w.start_ms for w in windows], t) - 1
    return i >= 0 and any(w.start_ms <= t < w.end_ms for w in windows[max(0, i - 8):i + 1])


def _avoided(windows: list[Window], fs: list[Failure], line: ProducerLine,
             zone_4x: int | None = None) -> int:
    """How many of ``fs`` a producer with the fault strategy on would still have met: a
    failure that begins inside an isolation is not attempted (its send goes elsewhere)."""
    from rocketlb_core.producer.strategy import MQFaultStrategy

    strategy = MQFaultStrategy(line, send_latency_fault_enable=True)
    met = 0
    for f in fs:
        t = _ms(f.failure.stamp, line, zone_4x)
        if t is None:
            continue
        broker = f.failure.queue.broker_name
        if not strategy.is_available(broker, t - f.failure.rt_ms):
            continue
        met += 1
        _, isolation, reachable = classify(f, line)
        strategy.update_fault_item(broker, f.failure.rt_ms, isolation, t, reachable)
    return met


@dataclass(frozen=True)
class Verdict:
    """One producer log's failures on one broker, judged: the isolations the core computes,
    the failures that began inside one, and the trace's stores of the producer there."""

    broker: str
    windows: list[Window]
    inside: list[Failure]
    failures: list[Failure]
    addr: str | None
    mine: list[Published]                 # the trace's stores of the producer on the broker
    stored_inside: list[Published]        # ... inside a window

    @property
    def not_avoided(self) -> bool:
        """The producer kept picking the failing broker: its switch was off."""
        return bool(self.inside or self.stored_inside)


def verdicts(cl: ClientLogFile, inputs: Inputs, zone_4x: int | None = None,
             pubs: list[Published] | None = None) -> list[Verdict]:
    """Per broker (in name order), ``cl``'s failures judged (``Verdict``)."""
    if pubs is None:
        pubs = inputs.published()
    groups = {g for g in cl.producer_groups if not g.startswith(INNER_GROUPS)}
    out = []
    for broker, (windows, inside) in windows_of(cl, zone_4x).items():
        fs = [f for f in cl.failures if f.failure.queue.broker_name == broker]
        addr = _address(broker, fs, inputs)
        mine = [p for p in pubs if p.group in groups and addr and p.store_host == addr]
        out.append(Verdict(broker, windows, inside, fs, addr, mine,
                           [p for p in mine if _inside(p.time_ms, windows)]))
    return out


def recorded_switches(inputs: Inputs, judged: dict[str, list[Verdict]]
                      ) -> dict[str, tuple[bool, str]]:
    """Producer group -> (``sendLatencyFaultEnable`` as its log shows it, how it was read),
    for the groups whose log has failed attempts (``judged``: log path -> its ``verdicts``):
    off when a failure began inside an isolation the switch would have set, or the trace shows
    a store there; else on (what ``doctor.replayed`` replays "as recorded")."""
    out: dict[str, tuple[bool, str]] = {}
    for cl in inputs.client_logs:
        vs = judged.get(cl.path)
        if not vs:
            continue
        if any(v.not_avoided for v in vs):
            seen = (False, "its log: a failure began inside an isolation the switch would "
                           "have set, or the trace shows a store there (off)")
        elif any(len(v.failures) > 1 or v.mine for v in vs):
            seen = (True, "its log: no failure began, and the trace shows no store, inside an "
                          "isolation (on)")
        else:
            seen = (True, "its log: one failure, no store of it in the trace: on assumed (the "
                          "log alone cannot tell)")
        for g in cl.producer_groups:
            if not g.startswith(INNER_GROUPS):
                had = out.get(g)
                out[g] = seen if had is None or had[0] else had     # off wins
    return out


def judge(inputs: Inputs, zone_4x: int | None = None) -> dict[str, list[Verdict]]:
    """Every client log with failed attempts -> its ``verdicts``."""
    pubs = inputs.published()
    return {cl.path: verdicts(cl, inputs, zone_4x, pubs) for cl in inputs.client_logs
            if cl.failures}


def _topic_of(fs: list[Failure]) -> str:
    return Counter(f.failure.queue.topic for f in fs).most_common(1)[0][0]


def _replay_json(day: Day, runs: dict[str, dict[str, Stats]], producers: list[str]
                 ) -> dict[str, Any]:
    return {"day": day.as_json(),
            "runs": {label: {p: r[p].as_json() for p in producers if p in r}
                     for label, r in runs.items()}}


def _fallback(ba: dict[str, Any], why: str) -> dict[str, Any]:
    return {**ba, "source": SOURCE_CORE, "replay": None, "replay_unavailable": why}


def _day_for(days: Days | None, topic: str, groups: set[str]) -> tuple[Day | None, str]:
    """The day of ``topic`` when it holds sends of ``groups``; else None and why."""
    if days is None:
        return None, "no replay was asked for"
    day = days.day(topic)
    if isinstance(day, str):
        return None, day
    if not day.producers_of(groups):
        return None, (f"the message trace holds no store of {', '.join(sorted(groups))} on "
                      f"{topic}")
    return day, ""


def replayed_not_avoided(day: Day, groups: set[str], broker: str, logged: int
                         ) -> dict[str, Any]:
    """``failing-broker-not-avoided``'s before and after: the day as recorded (the switch
    off) and with the producer's switch on."""
    ps = day.producers_of(groups)
    before = day.run()
    after = day.run(switches={p: True for p in ps})
    b = sum(before[p].failed_attempts for p in ps)
    a = sum(after[p].failed_attempts for p in ps)
    fb = sum(before[p].failed_sends for p in ps)
    fa = sum(after[p].failed_sends for p in ps)
    sends = sum(before[p].sends for p in ps)
    return {
        "with": f"sendLatencyFaultEnable on ({day.line.value} rules)",
        "metric": "failed attempts (replayed)", "before": b, "after": a,
        "source": SOURCE_REPLAY,
        "text": f"replaying the recorded day ({sends} sends of {', '.join(sorted(groups))} "
                f"from the message trace and the client log, {day.line.value}'s rules): with "
                f"sendLatencyFaultEnable on, {a} failed attempt(s) and {fa} failed send(s), "
                f"was {b} and {fb} as recorded with it off (the log holds {logged} failed "
                f"attempts on {broker})",
        "replay": _replay_json(day, {"as recorded": before, "with the fix": after}, ps)}


def replayed_isolation(day: Day, groups: set[str], broker: str, since_ms: int
                       ) -> dict[str, Any]:
    """``broker-isolated``'s before and after: the day as recorded (the switch on) and on
    5.3.3's rules (a 4.x line), or with the switch off (already 5.x: for comparison); the
    metric is the sends made while ``broker`` was up, from ``since_ms`` (epoch) on, that
    went to it. On a 4.x line the switch off is replayed too (``runs``)."""
    ps = day.producers_of(groups)
    before = day.run()
    off = day.run(switches={p: False for p in ps})
    four = day.line.rules.selection == "4.x"
    after = day.run(line=ProducerLine.V5_3_3) if four else off
    runs = {"as recorded": before, "with the fix": after}
    if four:
        runs["sendLatencyFaultEnable off"] = off

    def up(r: dict[str, Stats]) -> tuple[int, int]:
        made = [day.while_up(r[p], broker, since_ms) for p in ps]
        return sum(m for m, _ in made), sum(n for _, n in made)

    made_b, mine_b = up(before)
    made_a, mine_a = up(after)
    made_o, mine_o = up(off)
    up_s = day.up_ms(broker, since_ms) / 1000
    head = (f"replaying the recorded day ({sum(before[p].sends for p in ps)} sends of "
            f"{', '.join(sorted(groups))} from the message trace and the client log): "
            f"{broker} was up for {up_s:.1f} s of the day after the isolation began; ")
    if four:
        text = (head + f"on 5.3.3's rules {mine_a} of the {made_a} sends made then went to "
                f"it, was {mine_b} of {made_b} as recorded ({day.line.value}, switch on); "
                f"with sendLatencyFaultEnable off instead, {mine_o} of {made_o}, at "
                f"{sum(off[p].failed_attempts for p in ps)} failed attempt(s) (was "
                f"{sum(before[p].failed_attempts for p in ps)})")
    else:
        text = (head + f"already 5.x's rules; with sendLatencyFaultEnable off (for comparison) "
                f"{mine_a} of the {made_a} sends made then would have gone to it, was "
                f"{mine_b} of {made_b} as recorded, at "
                f"{sum(off[p].failed_attempts for p in ps)} failed attempt(s) (was "
                f"{sum(before[p].failed_attempts for p in ps)})")
    return {"with": "5.3.3's rules" if four else "sendLatencyFaultEnable off (comparison)",
            "metric": f"sends to {broker} while it was up after the isolation began "
                      "(replayed)",
            "before": mine_b, "after": mine_a, "source": SOURCE_REPLAY, "text": text,
            "replay": {**_replay_json(day, runs, ps),
                       "while_up": {"from": _utc(since_ms), "up_s": round(up_s, 3),
                                    "as recorded": {"made": made_b, "to_broker": mine_b},
                                    "with the fix": {"made": made_a, "to_broker": mine_a},
                                    **({"sendLatencyFaultEnable off":
                                        {"made": made_o, "to_broker": mine_o}}
                                       if four else {})}}}


def replayed_skew(day: Day, broker: str, observed: float) -> dict[str, Any] | None:
    """``queue-0-skew``'s before and after: queue 0's share of what every producer of the
    day stored on ``broker``, as recorded and with every producer's switch off (None when the
    replay stores nothing there)."""
    before = day.run()
    after = day.run(switches={p: False for p in day.groups})
    b, nb = day.queue0_share(before, broker)
    a, na = day.queue0_share(after, broker)
    n = day.queues.get(broker, 0)
    if not nb or not na or not n:
        return None
    switches = ", ".join(f"{p} {'on' if on else 'off'}" for p, on in sorted(day.switches.items()))
    return {
        "with": "sendLatencyFaultEnable off", "metric": f"queue 0 share of {broker} (replayed)",
        "before": round(b, 4), "after": round(a, 4), "source": SOURCE_REPLAY,
        "text": f"replaying the recorded day ({day.imported['sends']} sends from the message "
                f"trace and the client logs, {day.line.value}'s rules, switches as the logs "
                f"show them: {switches}): with sendLatencyFaultEnable off, {a:.0%} of the {na} "
                f"messages stored on {broker} on queue 0 (fair {1 / n:.0%}), was {b:.0%} of "
                f"{nb} as recorded (consumerProgress shows {observed:.0%})",
        "replay": _replay_json(day, {"as recorded": before, "with the fix": after},
                               sorted(day.groups))}


def isolation_findings(inputs: Inputs, zone_4x: int | None = None,
                       days: Days | None = None,
                       judged: dict[str, list[Verdict]] | None = None
                       ) -> tuple[list[Finding], list[Window]]:
    """``broker-isolated`` and ``failing-broker-not-avoided`` for every producer log with
    failed attempts, and every isolation window (the ``--html`` timeline); ``zone_4x`` as in
    ``windows_of``. Each finding's before and after comes from ``days`` (the recorded day
    replayed: ``doctor.replayed``) when it holds the producer's day, else from the core's
    fault strategy alone. ``judged``: each log's ``verdicts``, when already made."""
    out: list[Finding] = []
    timeline: list[Window] = []
    pubs = inputs.published()
    if judged is None:
        judged = judge(inputs, zone_4x)
    for cl in inputs.client_logs:
        if not cl.failures:
            continue
        line, assumed = line_of(cl.version[0] if cl.version else None)
        groups = {g for g in cl.producer_groups if not g.startswith(INNER_GROUPS)}
        name = _producer_name(cl)
        zone = zone_text(cl.failures[0].failure.stamp, zone_4x)
        for v in judged.get(cl.path, []):
            broker, windows, inside, fs, addr = v.broker, v.windows, v.inside, v.failures, v.addr
            mine, stored_inside = v.mine, v.stored_inside
            day, why = _day_for(days, _topic_of(fs), groups)
            evidence = [e for f in fs[:4] for e in (f.ev, f.exception) if e is not None]
            details: dict[str, object] = {
                "producer_groups": sorted(groups), "client_ids": _client_ids(cl),
                "broker": broker, "broker_addr": addr, "line": line.value,
                "log_times": zone, "failed_attempts": len(fs),
                "first_failure": fs[0].ev.text[:23], "last_failure": fs[-1].ev.text[:23],
                "spec": "rocketmq-load-balancing.md 2.3 (durations), 2.6 (reports)"}
            if assumed:
                details["assumed"] = assumed
            if inside or stored_inside:
                met = _avoided(windows, fs, line, zone_4x)
                slowest = max(x.failure.rt_ms for x in fs)
                details["failure_ms"] = [t for f in fs[:MAX_TICKS]
                                         if (t := _ms(f.failure.stamp, line, zone_4x))
                                         is not None]
                whys = sorted({w.why.split(" (")[0].split(" after")[0] for w in windows})
                f = Finding(
                    "failing-broker-not-avoided", "warning",
                    f"{name} kept sending to {broker} while it failed: {len(fs)} failed "
                    f"attempts from {fs[0].ev.text[:19]} to {fs[-1].ev.text[:19]}", None, None,
                    f"The producer's attempts on {broker} failed ({', '.join(whys)}), and "
                    f"{len(inside)} of them began inside the isolation the fault strategy "
                    f"would have set after an earlier one"
                    + (f"; the message trace shows {len(stored_inside)} messages of "
                       f"{', '.join(sorted(groups))} stored on {addr} inside those windows"
                       if stored_inside else "")
                    + ": sendLatencyFaultEnable is off (its default), so every pick of the "
                    f"broker's queues costs an attempt (up to {slowest} ms here) and a "
                    "retry, and with retries spent the send fails.",
                    f"Turn sendLatencyFaultEnable on for this producer ({line.value} then avoids "
                    f"a failing broker {isolation_ms(line) // 1000} s after an error), or keep "
                    f"it off and give sends enough retries "
                    f"(retryTimesWhenSendFailed) for the broker's outages.",
                    BOOK.format("03-latency-fault-tolerance",
                                "a-simulated-outage-with-the-switch-off-and-on"),
                    members=_client_ids(cl), hosts=[addr] if addr else [],
                    evidence=evidence + [x.ev for x in inside[:2]], details=details)
                core = {
                    "with": f"sendLatencyFaultEnable on ({line.value} rules)",
                    "metric": "failed attempts on the broker", "before": len(fs), "after": met,
                    "text": f"with sendLatencyFaultEnable on ({line.value}'s rules): {met} "
                            f"failed attempt(s) on {broker}, was {len(fs)} (the others would "
                            "have gone to another broker, if one was up)"}
                f.before_after = (replayed_not_avoided(day, groups, broker, len(fs))
                                  if day is not None else _fallback(core, why))
                out.append(f)
                continue
            total = sum(w.end_ms - w.start_ms for w in windows)
            long = max((w.end_ms - w.start_ms for w in windows), default=0)
            check = ""
            sent = [p.time_ms for p in pubs if p.group in groups]      # on every broker
            span = (min(sent), max(sent)) if sent else None
            if span and all(w.end_ms <= span[0] or w.start_ms >= span[1] for w in windows):
                # the log's times and the trace's do not meet: the zone the doctor read the
                # 4.x log in is most likely not the one it was written in
                check = (f" The message trace cannot confirm it: the window(s) fall outside the "
                         f"trace's sends of {', '.join(sorted(groups))} ({_utc(span[0])} to "
                         f"{_utc(span[1])}), so the log times were read in another zone than "
                         f"they were written in ({zone}; --log-zone names the clients' zone).")
                details["zone_mismatch"] = True
            elif mine and addr:
                check = (f" The message trace agrees: no message of {', '.join(sorted(groups))} "
                         f"was stored on {addr} inside the window(s) "
                         f"({len(mine)} stored there outside them).")
            w0 = windows[0]
            after = min(total, len(windows) * isolation_ms(ProducerLine.V5_3_3))
            details.update(windows=[w.as_json() for w in windows], isolated_ms=total)
            timeline += windows
            out.append(Finding(
                "broker-isolated", "warning" if long >= LONG_ISOLATION_MS else "info",
                f"{name} avoided {broker} for {total // 1000} s after {len(windows)} failed "
                f"attempt(s): {w0.why}", None, None,
                f"Each failed attempt on {broker} was reported to the producer's fault strategy, "
                f"which, with sendLatencyFaultEnable on, takes the broker out of selection: on "
                f"{line.value} an error isolates it for "
                f"{(w0.end_ms - w0.start_ms) // 1000} s (the core's table: isolation latency "
                f"{line.rules.isolation_latency_ms} ms looked up in latencyMax/"
                f"notAvailableDuration). Its queues got no sends from this producer from "
                f"{_utc(w0.start_ms)} to {_utc(w0.end_ms)}, and the other brokers took its "
                f"share, whether or not the broker recovered sooner.{check}"
                + (" No failure fell inside an earlier window, as expected with the switch on "
                   "(with one failure the log alone cannot tell the switch's state)."
                   if not check else ""),
                ("The isolation outlasts most faults (600 s after one timeout): upgrade the "
                 "producer to 5.2.0 or later (10 s, and an optional detector; 5.0.0 to 5.1.3 "
                 "keep the 600 s, and 5.1.4 can avoid a broker for good after an error reply), "
                 "or lower its notAvailableDuration table (setNotAvailableDuration), or turn "
                 "sendLatencyFaultEnable off and rely on retries." if long >= LONG_ISOLATION_MS
                 else "Expected behaviour for a broker that failed: the producer comes back to "
                 "it after the window. If isolations recur, look at the broker (its "
                 "broker.log, GC, disk) rather than the producer."),
                BOOK.format("09-troubleshooting",
                            "a-broker-avoided-for-ten-minutes-after-one-slow-reply"),
                members=_client_ids(cl), hosts=[addr] if addr else [], evidence=evidence,
                details=details,
                before_after=replayed_isolation(day, groups, broker, w0.start_ms)
                if day is not None else _fallback({
                    "with": "5.3.3's rules", "metric": "seconds avoided",
                    "before": total // 1000, "after": after // 1000,
                    "text": f"on 5.3.3's rules the same failures isolate {broker} for "
                            f"{after // 1000} s, was {total // 1000} s"
                    if line.rules.selection == "4.x" else
                    f"already 5.x's rules: {total // 1000} s in all ({len(windows)} "
                    f"isolation(s) of {isolation_ms(line) // 1000} s)"}, why)))
    return out, timeline


def skew_findings(inputs: Inputs, days: Days | None = None) -> list[Finding]:
    """``queue-0-skew``: a broker whose queue 0 holds more than ``SKEW_FACTOR`` times its fair
    share of the messages, from ``consumerProgress`` broker offsets (the message trace's Pub
    records carry no queue id, so they cannot say). The before and after: the recorded
    producer day of the topic replayed as recorded and with the switch off (``days``), else
    round robin's 1/n."""
    offsets: dict[tuple[str, str], dict[int, tuple[int, Evidence]]] = defaultdict(dict)
    for pf in inputs.progress:
        for r in pf.rows:
            if r.topic.startswith("%") or r.topic == "RMQ_SYS_TRACE_TOPIC":
                continue
            had = offsets[(r.topic, r.broker)].get(r.queue_id)
            if had is None or r.broker_offset > had[0]:
                offsets[(r.topic, r.broker)][r.queue_id] = (r.broker_offset, r.ev)
    by_topic: dict[str, list[tuple[str, float, int, int, list[Evidence]]]] = defaultdict(list)
    for (topic, broker), qs in sorted(offsets.items()):
        n = len(qs)
        total = sum(max(0, v) for v, _ in qs.values())
        if n < 2 or 0 not in qs or total < SKEW_MIN_MESSAGES:
            continue
        share = max(0, qs[0][0]) / total
        if share > SKEW_FACTOR / n:
            by_topic[topic].append((broker, share, n, total, [e for _, e in qs.values()]))
    out = []
    for topic, rows in sorted(by_topic.items()):
        worst = max(rows, key=lambda r: r[1])
        out.append(Finding(
            "queue-0-skew", "warning",
            f"queue 0 of {len(rows)} broker(s) holds most of {topic}'s messages: "
            + ", ".join(f"{b} {s:.0%} of {t} (fair {1 / n:.0%})" for b, s, n, t, _ in rows),
            None, topic,
            f"Round robin gives each of a broker's {worst[2]} queues 1/{worst[2]} of its "
            f"messages; queue 0 holds more than {SKEW_FACTOR:g} times that (threshold: "
            f"{SKEW_FACTOR:g} x 1/n, with at least {SKEW_MIN_MESSAGES} messages on the broker). "
            "4.x producers (and 5.0.0 to 5.1.3) with sendLatencyFaultEnable on pile onto the "
            "first queue of each "
            "broker: the fault scan walks the queue list one step per send and ends on the "
            "first available queue after any run of isolated ones (upstream #5672). The "
            "consumer that owns queue 0 gets that much more work. Ordered sends whose selector "
            "maps most keys to 0 show the same offsets.",
            "Upgrade the producers to 5.2.0 or later (their selection spreads the sends), or "
            "turn sendLatencyFaultEnable off; for ordered sends, hash the keys over all "
            "queues.",
            BOOK.format("03-latency-fault-tolerance",
                        "where-an-isolated-broker-s-share-goes-queue-0"),
            queues=[f"{b}/0" for b, *_ in rows],
            evidence=[e for *_, evs in rows for e in evs][:8],
            details={"threshold": f"queue 0 share > {SKEW_FACTOR:g}/n and at least "
                                  f"{SKEW_MIN_MESSAGES} messages",
                     "brokers": {b: {"queue0_share": round(s, 4), "queues": n, "messages": t}
                                 for b, s, n, t, _ in rows},
                     "source": "consumerProgress broker offsets"},
            before_after=_skew_before_after(days, topic, worst[0], worst[1], worst[2])))
    return out


def _skew_before_after(days: Days | None, topic: str, broker: str, share: float,
                       n: int) -> dict[str, Any]:
    core = {"with": "round robin (5.x selection or the switch off)",
            "metric": "queue 0 share", "before": round(share, 4), "after": round(1 / n, 4),
            "text": f"with round robin: {1 / n:.0%} of {broker}'s messages on queue 0, was "
                    f"{share:.0%}"}
    if days is None:
        return _fallback(core, "no replay was asked for")
    day = days.day(topic)
    if isinstance(day, str):
        return _fallback(core, day)
    replayed = replayed_skew(day, broker, share)
    return replayed if replayed is not None else _fallback(
        core, f"the replayed day stores nothing on {broker}")


def storm_findings(inputs: Inputs) -> list[Finding]:
    """``rebalance-storm``: a consumer whose assignment of a topic changed more than
    ``STORM_CHANGES`` times in a minute (``rebalanced result changed`` lines)."""
    from rocketlb_core.trace.clientlog import stamp_ms

    hits: dict[tuple[str, str], list[tuple[str, int, str, list[Evidence]]]] = defaultdict(list)
    for cl in inputs.client_logs:
        for (group, topic), changes in cl.changes.items():
            # each change with its time, in time order: a log may hold rotated files
            # concatenated out of order, and a line whose stamp does not parse is left out
            # (the window's evidence is then still the window's own lines)
            timed = []
            for c in changes:
                try:
                    timed.append((stamp_ms(c.stamp[:23], 0), c))
                except ValueError:
                    continue
            timed.sort(key=lambda tc: tc[0])
            best, at, j = 0, 0, 0
            for i, (t, _) in enumerate(timed):
                while timed[j][0] < t - STORM_WINDOW_MS + 1:
                    j += 1
                if i - j + 1 > best:
                    best, at = i - j + 1, j
            if best > STORM_CHANGES:
                window = [c for _, c in timed[at:at + best]]
                hits[(group, topic)].append((window[0].client_id, best, window[0].stamp,
                                             [c.ev for c in window]))
    out = []
    for (group, topic), rows in sorted(hits.items()):
        worst = max(r[1] for r in rows)
        out.append(Finding(
            "rebalance-storm", "warning",
            f"{len(rows)} member(s) of {group} changed their queues of {topic} up to {worst} "
            "times a minute", group, topic,
            f"A member's share changes when the group's member list or the topic's queues "
            f"change; more than {STORM_CHANGES} changes in a minute (the threshold) means the "
            "membership or the route kept changing: members restarting in a loop, heartbeats "
            "that time out (the broker drops a channel idle for 120 s), or members with "
            "different views. Each change drops queues and their in-flight messages, which "
            "are consumed again by the next owner.",
            "Find what keeps changing: the broker logs' joins and leaves (give them to the "
            "doctor), crash-looping pods, long GC pauses; keep the member list stable.",
            BOOK.format("06-rebalance-in-motion", "the-flow-of-one-rebalance"),
            members=sorted({r[0] for r in rows}),
            evidence=[e for r in rows for e in r[3][:3]],
            details={"threshold": f"more than {STORM_CHANGES} changes in "
                                  f"{STORM_WINDOW_MS // 1000} s",
                     "members": {r[0]: {"max_changes_per_minute": r[1], "from": r[2]}
                                 for r in rows}}))
    return out


def _routes(inputs: Inputs) -> list[tuple[str, TopicRoute, Evidence]]:
    """Each topic's route: the topicRoute outputs with a topic, else the client logs' last."""
    from rocketlb_core.model import QueueData

    out = [(rf.topic, rf.route, rf.ev) for rf in inputs.routes if rf.topic]
    named = {t for t, _, _ in out}
    latest: dict[str, tuple[str, TopicRoute, Evidence]] = {}
    for cl in inputs.client_logs:
        for topic, seen in cl.routes.items():
            if topic in named or topic.startswith("%") or topic in ("TBW102",
                                                                    "RMQ_SYS_TRACE_TOPIC"):
                continue
            qds = tuple(QueueData(q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm)
                        for q in seen.change.queue_datas)
            if topic not in latest or seen.ev.text[:23] > latest[topic][2].text[:23]:
                latest[topic] = (topic, TopicRoute(qds, ()), seen.ev)
    return out + sorted(latest.values(), key=lambda x: x[0])


def _with_perm_6(who: str, before: int, after: int) -> dict[str, object]:
    return {"with": "perm 6", "metric": f"queues {who}", "before": before, "after": after,
            "text": f"with perm 6: {who} {after} queues, was {before}"}


def permission_findings(inputs: Inputs) -> list[Finding]:
    """``broker-write-only`` and ``broker-read-only``: a route entry whose ``perm`` lacks READ
    (consumers do not see its queues, spec 1.4) or WRITE (producers do not send there, 1.3)."""
    out = []
    for topic, route, ev in _routes(inputs):
        sub = sorted(subscribe_queues(topic, route))
        pub = publish_queues(topic, route)
        for qd in route.queue_datas:
            if qd.readable and qd.writable:
                continue
            full = TopicRoute(tuple(q if q is not qd else type(qd)(
                qd.broker_name, qd.read_queue_nums, qd.write_queue_nums, 6)
                for q in route.queue_datas), route.broker_datas)
            if not qd.readable:
                hidden = [MessageQueue(topic, qd.broker_name, i)
                          for i in range(qd.write_queue_nums)] if qd.writable else []
                lag = [r.ev for pf in inputs.progress for r in pf.rows
                       if r.topic == topic and r.broker == qd.broker_name and r.diff > 0]
                out.append(Finding(
                    "broker-write-only", "critical" if hidden else "warning",
                    f"{qd.broker_name} is {'write-only' if qd.writable else 'closed'} for "
                    f"{topic} (perm {qd.perm}): consumers do not see its queues", None, topic,
                    f"A route entry without READ (perm {qd.perm}) is left out of every "
                    "consumer's queue set, so no group reads its queues"
                    + (f", while producers still write to its {qd.write_queue_nums} queues: "
                       "those messages wait until READ is given back." if hidden else "."),
                    f"Give {qd.broker_name} READ again (mqadmin updateBrokerConfig -b ADDR -k "
                    f"brokerPermission -v 6, or updateTopicPerm -t {topic} -b ADDR -p 6); to "
                    "drain a broker take WRITE away instead (perm 4), never READ.",
                    BOOK.format("01-the-cluster", "one-route-two-views"),
                    queues=[q.short() for q in hidden], evidence=[ev, *lag[:6]],
                    details={"broker": qd.broker_name, "perm": qd.perm,
                             "consumer_queues": len(sub), "producer_queues": len(pub)},
                    before_after=_with_perm_6("consumers see", len(sub),
                                              len(subscribe_queues(topic, full)))))
            if not qd.writable and qd.readable:
                out.append(Finding(
                    "broker-read-only", "critical" if not pub else "info",
                    f"{qd.broker_name} is read-only for {topic} (perm {qd.perm}): producers "
                    "do not send there", None, topic,
                    f"A route entry without WRITE (perm {qd.perm}) is left out of every "
                    f"producer's queue list: {qd.broker_name}'s share of the sends goes to "
                    f"the other brokers ({len(pub)} queues left), while consumers still read "
                    "what it holds. This is how a broker is drained before it is taken out"
                    + ("; here no broker is writable, so every send fails." if not pub
                       else "; if that was not intended, the others carry more load."),
                    f"If the drain is over, give WRITE back (brokerPermission 6) or remove "
                    f"{qd.broker_name}; if it was not meant, set perm 6.",
                    BOOK.format("01-the-cluster", "one-route-two-views"),
                    evidence=[ev],
                    details={"broker": qd.broker_name, "perm": qd.perm,
                             "producer_queues": len(pub)},
                    before_after=_with_perm_6("producers send to", len(pub),
                                              len(publish_queues(topic, full)))))
    return out


def producer_findings(inputs: Inputs, zone_4x: int | None = None
                      ) -> tuple[list[Finding], list[Window]]:
    """Every check of this module, and the isolation timeline; ``zone_4x``: the 4.x logs'
    offset from UTC in minutes (``--log-zone``; ``None``: UTC)."""
    judged = judge(inputs, zone_4x)
    days = Days(inputs, zone_4x, recorded_switches(inputs, judged),
                {cl.path: line_of(cl.version[0] if cl.version else None)[0]
                 for cl in inputs.client_logs})
    isolated, timeline = isolation_findings(inputs, zone_4x, days, judged)
    return (isolated + skew_findings(inputs, days) + storm_findings(inputs)
            + permission_findings(inputs)), timeline
