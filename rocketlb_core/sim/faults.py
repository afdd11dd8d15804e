"""Every event a scenario can script, one registry entry each: its name, its arguments, what it
does to the world, and the row it leaves in a recorded trace's ``conditions.parquet`` (``None``:
it leaves none). ``rocketlb_core.sim.scenario`` checks scenario files against ``FAULTS``; the
world applies them (``World.apply``); ``rocketlb_core.trace.record`` records them.

Adding a fault is one function and one ``Fault`` line here (plus a scenario that uses it, with
its golden file: ``python -m rocketlb_core.sim.golden``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocketlb_core.sim.kernel import Environment
    from rocketlb_core.sim.world import World

Args = Mapping[str, Any]
ConditionRow = tuple[str, str, str | None, str | None, float | None, float | None]
"""``(broker, kind, client, mode, median_ms, p99_ms)`` of a trace's ``conditions.parquet``."""


@dataclass(frozen=True)
class Fault:
    """One kind of scripted event."""

    name: str
    args: tuple[str, ...]
    apply: Callable[[World, Environment, Args], None]
    optional: tuple[str, ...] = ()
    condition: Callable[[Args], ConditionRow] | None = None
    doc: str = ""


def _broker_crash(w: World, env: Environment, a: Args) -> None:
    b = w.brokers[a["broker"]]
    b.alive = False
    w.network.pending.pop(b.name, None)            # a dead process never reads them
    w.network.paused_until.pop(b.name, None)       # killed while paused: nothing waits now
    w.network.down[b.name] = a.get("mode", "clean")
    if a.get("mode", "clean") == "clean":          # connections reset: known at once
        for ns in w.name_servers:
            ns.brokers.pop(b.name, None)
            ns.sessions.pop(b.name, None)
    w.ownership_changed(env)


def _broker_pause(w: World, env: Environment, a: Args) -> None:
    b = w.brokers[a["broker"]]
    b.alive = False                                # no heartbeats to the name servers
    w.network.down[b.name] = "paused"
    w.network.paused_until[b.name] = env.now + int(a["duration_ms"])
    w.script(env, int(a["duration_ms"]), "broker_restart", {"broker": b.name})
    w.ownership_changed(env)


def _broker_restart(w: World, env: Environment, a: Args) -> None:
    paused = w.network.down.get(a["broker"]) == "paused"
    w.network.paused_until.pop(a["broker"], None)
    w.network.down.pop(a["broker"], None)
    if paused:                  # the pause's end: the same process, its memory kept
        w.broker_entities[a["broker"]].resume(env)
    else:
        w.network.pending.pop(a["broker"], None)
        w.broker_entities[a["broker"]].start(env)
    w.ownership_changed(env)


def _broker_latency(w: World, env: Environment, a: Args) -> None:
    b = w.brokers[a["broker"]]
    b.median_ms, b.p99_ms = float(a["median_ms"]), float(a["p99_ms"])


def _partition(w: World, env: Environment, a: Args) -> None:
    w.network.partitions.add((a["client"], a["broker"]))
    consumer = w.consumer_named(a["client"])
    if consumer is not None and consumer.alive:
        consumer.went_quiet(env, [a["broker"]])     # its channel there idles from now


def _heal(w: World, env: Environment, a: Args) -> None:
    w.network.partitions.discard((a["client"], a["broker"]))


def _consumer_crash(w: World, env: Environment, a: Args) -> None:
    w.member(a["consumer"]).crash(env, a.get("mode", "host"))


def _slow_message(w: World, env: Environment, a: Args) -> None:
    w.member(a["consumer"]).slow_message(int(a["duration_ms"]))


def _consumer_shutdown(w: World, env: Environment, a: Args) -> None:
    w.member(a["consumer"]).shutdown(env)


def _consumer_start(w: World, env: Environment, a: Args) -> None:
    w.member(a["consumer"]).start(env)


def _nameserver(up: bool) -> Callable[[World, Environment, Args], None]:
    def apply(w: World, env: Environment, a: Args) -> None:
        server = next(n for n in w.name_servers if n.name == a["nameserver"])
        server.alive = up
        if not up:
            server.forget()                     # a restarted name server starts empty
    return apply


def _rolling_restart(w: World, env: Environment, a: Args) -> None:
    step = int(a["interval_ms"])
    for i, c in enumerate(w.consumers[a["group"]]):
        w.script(env, i * step, "consumer_shutdown", {"consumer": c.name})
        w.script(env, i * step + step // 2, "consumer_start", {"consumer": c.name})


FAULTS: dict[str, Fault] = {f.name: f for f in (
    Fault("broker_crash", ("broker",), _broker_crash, optional=("mode",),
          condition=lambda a: (a["broker"], "down", None, a.get("mode", "clean"), None, None),
          doc="mode clean: connections reset, name servers forget it at once; silent: it "
              "stops answering and expires from the name servers after 120 s"),
    Fault("broker_pause", ("broker", "duration_ms"), _broker_pause,
          condition=lambda a: (a["broker"], "down", None, "silent", None, None),
          doc="SIGSTOP for duration_ms, then SIGCONT: connections stay open, requests wait and "
              "are answered at the resume (or time out first); a trace records it as a silent "
              "down until the resume's up"),
    Fault("broker_restart", ("broker",), _broker_restart,
          condition=lambda a: (a["broker"], "up", None, None, None, None)),
    Fault("broker_latency", ("broker", "median_ms", "p99_ms"), _broker_latency,
          condition=lambda a: (a["broker"], "latency", None, None, float(a["median_ms"]),
                               float(a["p99_ms"])),
          doc="send latency becomes log-normal with this median and p99"),
    Fault("partition", ("client", "broker"), _partition,
          condition=lambda a: (a["broker"], "partition", a["client"], None, None, None),
          doc="the client and the broker cannot reach each other"),
    Fault("heal", ("client", "broker"), _heal,
          condition=lambda a: (a["broker"], "heal", a["client"], None, None, None)),
    Fault("consumer_crash", ("consumer",), _consumer_crash, optional=("mode",),
          doc="no unregister, no commit. mode host (default): the host vanishes, the brokers "
              "notice when the channel expires (120 s); process: killed on a live host (kill "
              "-9), its connections close and the brokers drop it and notify at once"),
    Fault("slow_message", ("consumer", "duration_ms"), _slow_message,
          doc="the next message the consumer is delivered takes duration_ms to consume; the "
              "rest of its queue is consumed meanwhile, but the queue's consumed offset (what "
              "pulls and persists commit) stays at that message until it is done"),
    Fault("consumer_shutdown", ("consumer",), _consumer_shutdown,
          doc="clean: offsets persisted, unregistered (brokers notify the group at once)"),
    Fault("consumer_start", ("consumer",), _consumer_start),
    Fault("nameserver_down", ("nameserver",), _nameserver(False)),
    Fault("nameserver_up", ("nameserver",), _nameserver(True)),
    Fault("rolling_restart", ("group", "interval_ms"), _rolling_restart,
          doc="each member in turn: clean shutdown, then start again half an interval later"),
)}
