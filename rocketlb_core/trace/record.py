"""Recording a simulation run as a trace (``rocketlb_core.trace.schema``): this is how the recorded
traffic the book replays is made. The trace holds what the world did (sends the applications
asked for, broker conditions, membership changes), not what the balancing decided, so a replay
can ask what other settings would have decided on the same traffic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocketlb_core.sim.faults import FAULTS
from rocketlb_core.sim.world import RunResult
from rocketlb_core.trace.schema import CONDITIONS, MEMBERSHIP
from rocketlb_core.trace.write import write_trace

MESSAGE_SIZE = 1024


def record_trace(result: RunResult, folder: Path, provenance: str = "", *,
                 force: bool = False) -> None:
    """Write the run as the trace folder ``folder`` (``rocketlb_core.atomic``'s rule)."""
    world = result.world
    sc = world.scenario
    topic = sc.producers[0].topic if sc.producers else sc.topics[0].name
    # a producer's k-th send was due at due_at(k) (one sending thread, in order), so the sends
    # come from each producer's count, not from a record per message (sim.ledger)
    times: list[int] = []
    names: list[str] = []
    for p in sorted(world.producers, key=lambda p: p.name):
        times.extend(p.due_at(k) for k in range(p.sent))
        names.extend([p.name] * p.sent)
    sends: dict[str, list[Any]] = {
             "time_ms": times, "producer": names, "topic": [topic] * len(times),
             "key": [None] * len(times), "size": [MESSAGE_SIZE] * len(times)}
    cond: dict[str, list[Any]] = {k: [] for k in CONDITIONS}

    def add(t: int, broker: str, kind: str, client: str | None = None, mode: str | None = None,
            median: float | None = None, p99: float | None = None) -> None:
        for key, value in (("time_ms", t), ("broker", broker), ("client", client), ("kind", kind),
                           ("mode", mode), ("median_ms", median), ("p99_ms", p99)):
            cond[key].append(value)

    for b in sc.brokers:
        add(0, b.name, "latency", median=b.median_ms, p99=b.p99_ms)
    for ev in sc.events:
        row = FAULTS[ev.kind].condition
        if row is not None:
            broker, kind, client, mode, median, p99 = row(ev.args)
            add(ev.at_ms, broker, kind, client, mode, median, p99)
    members = {c.name: (g, c) for g, cs in world.consumers.items() for c in cs}
    kinds = {"consumer_start": "join", "consumer_shutdown": "leave", "consumer_crash": "crash"}
    mem: dict[str, list[Any]] = {k: [] for k in MEMBERSHIP}
    for r in world.env.journal:
        if r.kind in kinds and r.entity in members:
            group, c = members[r.entity]
            event = "kill" if r.fields.get("mode") == "process" else kinds[r.kind]
            for key, value in (("time_ms", r.time_ms), ("group", group), ("member", c.name),
                               ("client_id", c.client_id), ("event", event),
                               ("room", c.m.room)):
                mem[key].append(value)
    brokers = [("DefaultCluster", b.name, 0, world.brokers[b.name].address, b.room)
               for b in sc.brokers]
    routes = [(t.name, b, t.read_queues, t.write_queues, 6) for t in sc.topics for b in t.brokers]
    meta = {"name": sc.name, "description": sc.description, "topic": topic,
            "start_ms": 0, "end_ms": sc.duration_ms, "line": sc.line.value,
            "seed": world.env.seed,
            "provenance": provenance or f"recorded by rocketlb_core.simulate from {sc.path} "
                                        f"with seed {world.env.seed}",
            "fault_tolerance": {p.name: p.fault_tolerance for p in sc.producers},
            "groups": {g.name: {"strategy": g.strategy, "model": g.model,
                                "consume_rate_per_s": g.consume_rate_per_s} for g in sc.groups}}
    write_trace(folder, meta, brokers, routes, sends, cond, mem if mem["time_ms"] else None,
                command="simulate --record", inputs=[sc.path], force=force)
