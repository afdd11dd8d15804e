"""Scenario files: a cluster, its clients, what happens to them, and what the run must show.

Scenarios are TOML (read with the standard library's ``tomllib``: data, never code). Every key is
checked; an unknown or malformed one fails with the file and the field path, e.g.
``data/scenarios/x.toml: producers[0].rate_per_s: expected a number > 0``. The format is
documented in ``data/scenarios/README.md``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlb_core.consumer.registry import REGISTRY
from rocketlb_core.producer.line import ProducerLine

EVENT_KINDS = {
    "broker_crash": {"broker", "mode"},          # mode: clean (connections reset) | silent
    "broker_restart": {"broker"},
    "broker_latency": {"broker", "median_ms", "p99_ms"},
    "partition": {"client", "broker"},           # client and broker cannot talk
    "heal": {"client", "broker"},
    "consumer_crash": {"consumer"},              # no unregister: the broker notices in 120 s
    "consumer_shutdown": {"consumer"},           # clean: offsets persisted, unregistered
    "consumer_start": {"consumer"},
    "nameserver_down": {"nameserver"},
    "nameserver_up": {"nameserver"},
    "rolling_restart": {"group", "interval_ms"},  # each member: clean shutdown, start again
}


class ScenarioError(ValueError):
    """A scenario file that cannot be run; the message names the file and the field."""


@dataclass(frozen=True)
class BrokerSpec:
    name: str
    room: str = "room-1"
    median_ms: float = 2.0
    p99_ms: float = 10.0


@dataclass(frozen=True)
class TopicSpec:
    name: str
    brokers: tuple[str, ...]
    read_queues: int = 4
    write_queues: int = 4


@dataclass(frozen=True)
class ProducerSpec:
    name: str
    topic: str
    rate_per_s: float
    fault_tolerance: bool = False
    start_ms: int = 0
    stop_ms: int | None = None
    ip: str = ""


@dataclass(frozen=True)
class MemberSpec:
    name: str
    ip: str
    instance: str = ""                # "" -> <pid>#<nanotime> (unique); set it to collide
    room: str = "room-1"
    start_ms: int = 0


@dataclass(frozen=True)
class GroupSpec:
    name: str
    topic: str
    members: tuple[MemberSpec, ...]
    strategy: str = "AVG"
    strategy_params: dict[str, Any] = field(default_factory=dict)
    model: str = "CLUSTERING"
    consume_from: str = "CONSUME_FROM_LAST_OFFSET"
    consume_rate_per_s: float = 2000.0


@dataclass(frozen=True)
class EventSpec:
    at_ms: int
    kind: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    path: str
    duration_ms: int
    drain_ms: int
    line: ProducerLine
    name_servers: int
    brokers: tuple[BrokerSpec, ...]
    topics: tuple[TopicSpec, ...]
    producers: tuple[ProducerSpec, ...]
    groups: tuple[GroupSpec, ...]
    events: tuple[EventSpec, ...]
    expect: dict[str, Any]
    tick_ms: int = 100


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> ScenarioError:
        return ScenarioError(f"{self.path}: {where}: {message}")

    def table(self, obj: Any, where: str, required: set[str], optional: set[str]) -> dict[str, Any]:
        if not isinstance(obj, dict):
            raise self.fail(where, "expected a table")
        for key in required:
            if key not in obj:
                raise self.fail(f"{where}.{key}" if where else key, "missing")
        unknown = set(obj) - required - optional
        if unknown:
            name = sorted(unknown)[0]
            raise self.fail(f"{where}.{name}" if where else name, "unknown field")
        return obj

    def num(self, obj: dict[str, Any], key: str, where: str, default: Any = None, *,
            integer: bool = False, positive: bool = False, minimum: float | None = None) -> Any:
        value = obj.get(key, default)
        path = f"{where}.{key}" if where else key
        if value is None:
            if default is None and key in obj:
                raise self.fail(path, "expected a number")
            return value
        if isinstance(value, bool) or not isinstance(value, int | float) or (
                integer and not isinstance(value, int)):
            raise self.fail(path, f"expected {'an integer' if integer else 'a number'}, "
                                  f"got {value!r}")
        if positive and value <= 0:
            raise self.fail(path, f"expected a number > 0, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.fail(path, f"expected a number >= {minimum}, got {value!r}")
        return value

    def text(self, obj: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
        value = obj.get(key, default)
        if not isinstance(value, str) or (value == "" and default is None):
            raise self.fail(f"{where}.{key}" if where else key, f"expected text, got {value!r}")
        return value


def load(path: Path | str) -> Scenario:
    """Read and validate a scenario file."""
    path = Path(path)
    r = _Reader(str(path))
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML ({exc})") from None
    top = r.table(raw, "", {"name", "duration_ms", "cluster"},
                  {"description", "drain_ms", "line", "tick_ms", "producers", "consumer_groups",
                   "events", "expect"})
    try:
        line = ProducerLine.parse(str(top.get("line", "4.9.8")))
    except ValueError as exc:
        raise r.fail("line", str(exc)) from None
    cl = r.table(top["cluster"], "cluster", {"brokers", "topics"}, {"name_servers"})
    brokers = []
    for i, b in enumerate(cl["brokers"]):
        w = f"cluster.brokers[{i}]"
        b = r.table(b, w, {"name"}, {"room", "median_ms", "p99_ms"})
        brokers.append(BrokerSpec(r.text(b, "name", w), r.text(b, "room", w, "room-1"),
                                  r.num(b, "median_ms", w, 2.0, positive=True),
                                  r.num(b, "p99_ms", w, 10.0, positive=True)))
    names = {b.name for b in brokers}
    if len(names) != len(brokers):
        raise r.fail("cluster.brokers", "broker names must be unique")
    topics = []
    for i, t in enumerate(cl["topics"]):
        w = f"cluster.topics[{i}]"
        t = r.table(t, w, {"name", "brokers"}, {"read_queues", "write_queues"})
        on = tuple(t["brokers"]) if isinstance(t["brokers"], list) else ()
        if not on or any(b not in names for b in on):
            raise r.fail(f"{w}.brokers", f"expected a list of known brokers, got {t['brokers']!r}")
        topics.append(TopicSpec(r.text(t, "name", w), on,
                                r.num(t, "read_queues", w, 4, integer=True, minimum=0),
                                r.num(t, "write_queues", w, 4, integer=True, minimum=0)))
    topic_names = {t.name for t in topics}
    producers = []
    for i, p in enumerate(top.get("producers", [])):
        w = f"producers[{i}]"
        p = r.table(p, w, {"name", "topic", "rate_per_s"},
                    {"fault_tolerance", "start_ms", "stop_ms", "ip"})
        if p["topic"] not in topic_names:
            raise r.fail(f"{w}.topic", f"unknown topic {p['topic']!r}")
        if not isinstance(p.get("fault_tolerance", False), bool):
            raise r.fail(f"{w}.fault_tolerance", "expected true or false")
        producers.append(ProducerSpec(
            r.text(p, "name", w), p["topic"], r.num(p, "rate_per_s", w, positive=True),
            p.get("fault_tolerance", False), r.num(p, "start_ms", w, 0, integer=True, minimum=0),
            r.num(p, "stop_ms", w, None, integer=True, minimum=0),
            r.text(p, "ip", w, f"10.1.0.{i + 1}")))
    groups = []
    for i, g in enumerate(top.get("consumer_groups", [])):
        w = f"consumer_groups[{i}]"
        g = r.table(g, w, {"name", "topic", "members"},
                    {"strategy", "strategy_params", "model", "consume_from", "consume_rate_per_s"})
        if g["topic"] not in topic_names:
            raise r.fail(f"{w}.topic", f"unknown topic {g['topic']!r}")
        strategy = g.get("strategy", "AVG")
        if strategy not in REGISTRY:
            raise r.fail(f"{w}.strategy", f"unknown strategy {strategy!r} "
                                          f"(known: {', '.join(REGISTRY)})")
        model = g.get("model", "CLUSTERING")
        if model not in ("CLUSTERING", "BROADCASTING"):
            raise r.fail(f"{w}.model", "expected CLUSTERING or BROADCASTING")
        members = []
        for j, m in enumerate(g["members"]):
            mw = f"{w}.members[{j}]"
            m = r.table(m, mw, {"name", "ip"}, {"instance", "room", "start_ms"})
            members.append(MemberSpec(
                r.text(m, "name", mw), r.text(m, "ip", mw), r.text(m, "instance", mw, ""),
                r.text(m, "room", mw, "room-1"),
                r.num(m, "start_ms", mw, 0, integer=True, minimum=0)))
        groups.append(GroupSpec(r.text(g, "name", w), g["topic"], tuple(members), strategy,
                                dict(g.get("strategy_params", {})), model,
                                r.text(g, "consume_from", w, "CONSUME_FROM_LAST_OFFSET"),
                                r.num(g, "consume_rate_per_s", w, 2000.0, positive=True)))
    clients = {p.name for p in producers} | {m.name for g in groups for m in g.members}
    events = []
    for i, e in enumerate(top.get("events", [])):
        w = f"events[{i}]"
        if not isinstance(e, dict) or e.get("kind") not in EVENT_KINDS:
            kind = e.get("kind") if isinstance(e, dict) else e
            raise r.fail(f"{w}.kind", f"unknown event {kind!r} "
                                      f"(known: {', '.join(sorted(EVENT_KINDS))})")
        args = set(EVENT_KINDS[e["kind"]])
        optional = {"mode"} if e["kind"] == "broker_crash" else set()
        e = r.table(e, w, {"at_ms", "kind"} | (args - optional), optional)
        for key in ("broker",):
            if key in e and e[key] not in names:
                raise r.fail(f"{w}.{key}", f"unknown broker {e[key]!r}")
        for key in ("consumer", "client"):
            if key in e and e[key] not in clients:
                raise r.fail(f"{w}.{key}", f"unknown client {e[key]!r}")
        servers = {f"namesrv-{k}" for k in range(int(cl.get("name_servers", 2)))}
        if "nameserver" in e and e["nameserver"] not in servers:
            raise r.fail(f"{w}.nameserver", f"unknown name server {e['nameserver']!r} "
                                            f"(known: {', '.join(sorted(servers))})")
        if "group" in e and e["group"] not in {g.name for g in groups}:
            raise r.fail(f"{w}.group", f"unknown consumer group {e['group']!r}")
        events.append(EventSpec(r.num(e, "at_ms", w, integer=True, minimum=0), e["kind"],
                                {k: v for k, v in e.items() if k not in ("at_ms", "kind")}))
    expect = top.get("expect", {})
    if not isinstance(expect, dict):
        raise r.fail("expect", "expected a table")
    return Scenario(
        r.text(top, "name", ""), str(top.get("description", "")), str(path),
        r.num(top, "duration_ms", "", integer=True, positive=True),
        r.num(top, "drain_ms", "", 60_000, integer=True, minimum=0), line,
        r.num(cl, "name_servers", "cluster", 2, integer=True, positive=True),
        tuple(brokers), tuple(topics), tuple(producers), tuple(groups),
        tuple(sorted(events, key=lambda ev: ev.at_ms)), dict(expect),
        r.num(top, "tick_ms", "", 100, integer=True, positive=True))
