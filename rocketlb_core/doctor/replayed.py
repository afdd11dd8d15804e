"""The recorded producer day, replayed: what a producer finding's fix would have changed on the
day the inputs record (issue 35, "what the fix would change").

A producer day is reconstructed from what the doctor read by the trace importer
(``trace.importer.import_records``, what ``rocketlb trace import`` runs): the message trace's
``Pub`` records (every stored send) and the producers' client logs (every failed attempt), on
the cluster layout and the topic's route the inputs show (a ``topicRoute`` output of the topic,
else the widest route the producers' logs listed, ``ClientLogFile.route_union``; the brokers'
addresses from ``topicRoute``/``clusterList`` outputs and the logged routes). The importer
writes it to a temporary trace folder (removed afterwards); it is then replayed by the
pure-Python engine of ``rocketlb replay producer`` (``replay.engines.replay_rows``: each
producer's sends, at their recorded times, through the core's selection, fault strategy and
retry loop, against the broker conditions the importer derived), seed ``SEED``, twice: **as
recorded** (the client line of the producers' logged version; each producer's
``sendLatencyFaultEnable`` as its log shows it, ``Day.switches``) and **with the fix**
applied (the switch turned on or off, or 5.3.3's rules).

When no day can be reconstructed (no message-trace dump among the inputs, none with stores of
the topic, no route of it, producers of two client lines, pyarrow missing, or the importer
refuses the records) ``Days.day`` says why, and the findings fall back to the core's fault
strategy and latency table alone (``doctor.producers``); ``before_after.source`` says which.
"""

from __future__ import annotations

import tempfile
from array import array
from bisect import bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlb_core.doctor.inputs import ClientLogFile, Inputs
from rocketlb_core.errors import InputError
from rocketlb_core.model import QueueData
from rocketlb_core.producer.line import ProducerLine

SEED = 0
"""The replay's seed (the round-robin counters' random starts, the latency draws)."""
SOURCE_REPLAY = "replay of the recorded producer day"
SOURCE_CORE = "core fault strategy"
MAX_SENDS = 1_000_000
"""The most stores of a topic the doctor replays (a few runs of the day, in this process); a
bigger day falls back to the core's computation, and says so."""
MEET_MS = 60_000
"""A day is replayed only when some logged failure lies within this much of the trace's
stores: a 4.x log read in the wrong zone puts its failures hours away, and the day the importer
would build from them is not the one that happened."""
FOREVER = 1 << 62                 # an outage the day's conditions never end
INNER = ("CLIENT_INNER_PRODUCER", "_INNER_TRACE_PRODUCER")    # upstream's own producers


@dataclass
class Stats:
    """One producer's replayed sends, summed."""

    sends: int = 0
    stored: int = 0
    failed_sends: int = 0
    failed_attempts: int = 0          # attempts that stored nothing: retries and failed sends
    by_queue: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    starts: array[int] = field(default_factory=lambda: array("q"))     # each send's start
    where: list[str | None] = field(default_factory=list)     # its broker (None: it failed)

    def as_json(self) -> dict[str, Any]:
        return {"sends": self.sends, "stored": self.stored, "failed_sends": self.failed_sends,
                "failed_attempts": self.failed_attempts,
                "stored_by_broker": {b: sum(c.values()) for b, c in sorted(self.by_queue.items())}}


@dataclass
class Day:
    """A reconstructed producer day of ``topic`` and its replays (cached per setting)."""

    topic: str
    line: ProducerLine
    trace: Any                                    # trace.read.Trace, loaded
    origin_ms: int                                # epoch ms of the trace's time 0
    groups: dict[str, str]                        # trace producer -> its group
    switches: dict[str, bool]                     # trace producer -> the switch as recorded
    switch_from: dict[str, str]                   # trace producer -> how it was read
    imported: dict[str, Any]                      # the importer's summary
    queues: dict[str, int]                        # broker -> write queues in the route
    _runs: dict[Any, dict[str, Stats]] = field(default_factory=dict)
    _down: dict[str, list[tuple[int, int]]] | None = None

    def producers_of(self, groups: set[str]) -> list[str]:
        return sorted(p for p, g in self.groups.items() if g in groups)

    def run(self, line: ProducerLine | None = None,
            switches: dict[str, bool] | None = None) -> dict[str, Stats]:
        """Every producer's replayed sends on ``line`` (default: as recorded) with
        ``switches`` (producer -> sendLatencyFaultEnable; the others as recorded)."""
        from rocketlb_core.replay.config import ReplayConfig
        from rocketlb_core.replay.engines import replay_rows

        line = line or self.line
        sw = {**self.switches, **(switches or {})}
        key = (line.value, tuple(sorted(sw.items())))
        if key in self._runs:
            return self._runs[key]
        self.trace.meta["fault_tolerance"] = sw
        out: dict[str, Stats] = defaultdict(Stats)
        for r in replay_rows(self.trace, ReplayConfig(line=line, fault_tolerance=None,
                                                       seed=SEED)):
            s = out[r[0]]
            s.sends += 1
            failed = r[5] == "FAILED"
            s.failed_sends += failed
            s.stored += not failed
            s.failed_attempts += int(r[8]) - (0 if failed else 1)
            if not failed:
                s.by_queue[r[6]][int(r[7])] += 1
            s.starts.append(int(r[3]))
            s.where.append(None if failed else r[6])
        self._runs[key] = dict(out)
        return self._runs[key]

    def down(self, broker: str) -> list[tuple[int, int]]:
        """When ``broker`` was down in the day's conditions (trace ms: from, until; in time
        order, disjoint), read as the replay reads them (``Conditions.from_columns``: a
        ``down`` row opens an outage, the next ``up`` row ends it)."""
        if self._down is None:
            self._down = {}
            c = self.trace.conditions
            opened: dict[str, int] = {}
            for t, b, kind in zip(c["time_ms"], c["broker"], c["kind"], strict=True):
                if kind == "down" and b not in opened:
                    opened[b] = t
                elif kind == "up" and b in opened:
                    self._down.setdefault(b, []).append((opened.pop(b), t))
            for b, t in opened.items():
                self._down.setdefault(b, []).append((t, FOREVER))
        return self._down.get(broker, [])

    def while_up(self, stats: Stats, broker: str, after_ms: int) -> tuple[int, int]:
        """(sends begun while ``broker`` was up from epoch ``after_ms`` on, those of them
        stored on ``broker``)."""
        t0 = after_ms - self.origin_ms
        down = self.down(broker)
        starts = [a for a, _ in down]
        made = mine = 0
        for start, where in zip(stats.starts, stats.where, strict=True):
            i = bisect_right(starts, start) - 1
            if start < t0 or (i >= 0 and start < down[i][1]):
                continue
            made += 1
            mine += where == broker
        return made, mine

    def up_ms(self, broker: str, after_ms: int) -> int:
        """How long ``broker`` was up in the day's conditions from epoch ``after_ms`` to the
        day's end."""
        t0, end = after_ms - self.origin_ms, int(self.trace.meta["end_ms"])
        if t0 >= end:
            return 0
        down = sum(max(0, min(b, end) - max(a, t0)) for a, b in self.down(broker))
        return end - max(t0, 0) - down

    def queue0_share(self, runs: dict[str, Stats], broker: str) -> tuple[float, int]:
        """Queue 0's share of every producer's sends stored on ``broker``, and their number."""
        counts: Counter[int] = Counter()
        for s in runs.values():
            counts.update(s.by_queue.get(broker, Counter()))
        total = sum(counts.values())
        return (counts[0] / total if total else 0.0), total

    def as_json(self) -> dict[str, Any]:
        """What was replayed (``before_after.replay.day``)."""
        return {"topic": self.topic, "line": self.line.value, "seed": SEED,
                "engine": "python (rocketlb replay producer)",
                "sends": self.imported["sends"], "stored": self.imported["stored"],
                "pub_records": self.imported["pub_records"],
                "failed_attempts_logged": self.imported["failed_attempts"],
                "producers": {p: {"group": self.groups[p], "send_latency_fault_enable":
                                  self.switches[p], "switch_from": self.switch_from[p]}
                              for p in sorted(self.groups)}}


class Days:
    """The producer days the inputs hold, reconstructed on first use, one per topic."""

    def __init__(self, inputs: Inputs, zone_4x: int | None,
                 switches: dict[str, tuple[bool, str]], lines: dict[str, ProducerLine]):
        """``switches``: producer group -> (``sendLatencyFaultEnable`` as the doctor read it
        from the group's log, how: ``doctor.producers.recorded_switches``); ``lines``: client
        log path ->
        the release line of its logged version (``doctor.producers.line_of``)."""
        self.inputs, self.zone_4x, self.switches, self.lines = inputs, zone_4x, switches, lines
        self._days: dict[str, Day | str] = {}

    def day(self, topic: str) -> Day | str:
        """The day of ``topic``, or why there is none."""
        if topic not in self._days:
            try:
                self._days[topic] = self._reconstruct(topic)
            except ImportError as exc:
                self._days[topic] = ("the replay needs numpy and pyarrow: pip install "
                                     f"'rocketlb-core[replay]' ({exc})")
        return self._days[topic]

    def _producer_logs(self) -> list[ClientLogFile]:
        return [cl for cl in self.inputs.client_logs
                if any(not g.startswith(INNER) for g in cl.producer_groups)]

    def _layout(self, topic: str, logs: list[ClientLogFile]
                ) -> tuple[list[tuple[str, str]], list[QueueData]] | str:
        addrs: dict[str, str] = {}
        route: list[QueueData] = []
        for rf in self.inputs.routes:
            for bd in rf.route.broker_datas:
                if bd.master_addr:
                    addrs.setdefault(bd.broker_name, bd.master_addr)
            if rf.topic == topic and not route:
                route = list(rf.route.queue_datas)
        for cf in self.inputs.clusters:
            for b in cf.brokers:
                if b.broker_id == 0:
                    addrs.setdefault(b.broker, b.addr)
        union: dict[str, QueueData] = {}
        for cl in logs:
            for name, addr in cl.broker_addrs.items():
                addrs.setdefault(name, addr)
            for name, qd in cl.route_union.get(topic, {}).items():
                union.setdefault(name, qd)
        if not route:
            route = [union[b] for b in sorted(union)]
        if not route:
            return f"no route of {topic} in the inputs (a topicRoute output or a producer's log)"
        missing = sorted({qd.broker_name for qd in route} - set(addrs))
        if missing:
            return (f"no address for broker(s) {', '.join(missing)} of {topic} (give "
                    "clusterList or topicRoute)")
        brokers = sorted(addrs.items())
        return brokers, route

    def _failure_times(self, logs: list[ClientLogFile], topic: str, line: ProducerLine
                       ) -> list[int]:
        """Epoch ms of the logs' failed attempts on ``topic``, read as the importer reads
        them (``trace.importer.log_offset``)."""
        from rocketlb_core.trace.clientlog import log_zone_minutes, stamp_ms

        out = []
        for cl in logs:
            for f in cl.failures:
                if f.failure.queue.topic == topic:
                    stamp = f.failure.stamp
                    try:
                        out.append(stamp_ms(stamp[:23],
                                            log_zone_minutes(stamp, self.zone_4x or 0)))
                    except ValueError:
                        continue
        return out

    def _reconstruct(self, topic: str) -> Day | str:
        from rocketlb_core.replay.engines import replay_rows  # noqa: F401  (numpy: fail here)
        from rocketlb_core.trace.importer import import_records
        from rocketlb_core.trace.read import load_trace

        logs = self._producer_logs()
        groups = {g for cl in logs for g in cl.producer_groups if not g.startswith(INNER)}
        dumps = [t for t in self.inputs.traces
                 if any(p.topic == topic and p.group in groups for p in t.published)]
        if not self.inputs.traces:
            return "no message-trace dump among the inputs"
        if not dumps:
            return f"no message-trace dump holds stores of {topic} by a logged producer"
        if len(dumps) > 1:
            return (f"{len(dumps)} message-trace dumps hold stores of {topic} (the replay "
                    "reads one day from one dump)")
        lines = {self.lines.get(cl.path, ProducerLine.V4_9_8) for cl in logs}
        if len(lines) > 1:
            return ("producers of different client lines ("
                    + ", ".join(sorted(x.value for x in lines)) + "): a replay runs one")
        layout = self._layout(topic, logs)
        if isinstance(layout, str):
            return layout
        brokers, route = layout
        (line,) = lines
        stored = [p.time_ms for p in dumps[0].published if p.topic == topic]
        if len(stored) > MAX_SENDS:
            return (f"the trace holds {len(stored)} stores of {topic}, more than the doctor "
                    f"replays ({MAX_SENDS}): rocketlb trace import and rocketlb replay "
                    "producer replay the whole day")
        failed = self._failure_times(logs, topic, line)
        if failed and stored and all(not min(stored) - MEET_MS <= t <= max(stored) + MEET_MS
                                     for t in failed):
            return ("the client logs' failures and the message trace's stores do not meet in "
                    "time (the 4.x logs' zone: --log-zone)")
        with tempfile.TemporaryDirectory(prefix="rocketlb-doctor-day-") as scratch:
            out = Path(scratch) / "day"
            try:
                summary = import_records(
                    out, msgtrace=dumps[0].path, client_logs=[cl.path for cl in logs],
                    brokers=brokers, route=route, topic=topic, line=line.value,
                    name="doctor-day", provenance="Reconstructed by rocketlb doctor.",
                    utc_offset_minutes=self.zone_4x or 0, groups_kept=[], skip_bad=True)
                trace = load_trace(out)
            except (InputError, ValueError, OSError) as exc:    # ValueError: pyarrow's too
                return f"the importer refused the records: {str(exc)[:300]}"
        from rocketlb_core.trace.importer import origin_ms

        names = sorted(set(trace.sends["producer"]))
        by_group = {p: p.split("@")[0] for p in names}
        switches, how = {}, {}
        for p, g in by_group.items():
            if g in self.switches:
                switches[p], how[p] = self.switches[g]
            else:
                switches[p] = False
                how[p] = "no failure logged: off assumed (upstream's default)"
        return Day(topic, line, trace, origin_ms(trace.meta), by_group, switches, how,
                   summary, {qd.broker_name: qd.write_queue_nums for qd in route})

