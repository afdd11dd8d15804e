"""Scenario files: a cluster, its clients, what happens to them, and what the run must show.

Scenarios are TOML (read with the standard library's ``tomllib``: data, never code). Every key is
checked; an unknown or malformed one fails with the file and the field path, e.g.
``data/scenarios/x.toml: producers[0].rate_per_s: expected a number > 0``. The format is
documented in ``data/scenarios/README.md``.
"""

from __future__ import annotations

import math
import stat
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlb_core.conditions import (
    CHANNEL_SCAN_MS,
    HEARTBEAT_MS,
    IDLE_CLOSE_MS,
    PERSIST_OFFSET_MS,
    REBALANCE_WAIT_MS,
    REGISTER_PERIOD_MS,
    ROUTE_POLL_MS,
)
from rocketlb_core.consumer.registry import REGISTRY, make
from rocketlb_core.errors import InputError
from rocketlb_core.limits import (
    MAX_BROKERS,
    MAX_DURATION_MS,
    MAX_EVENTS,
    MAX_GROUPS,
    MAX_LATENCY_MS,
    MAX_MEMBERS,
    MAX_NAME_CHARS,
    MAX_NAME_SERVERS,
    MAX_PRODUCERS,
    MAX_QUEUES,
    MAX_RATE_PER_S,
    MAX_SCENARIO_BYTES,
    MAX_SIM_MESSAGES,
    MAX_SIM_TICKS,
    MAX_SIM_TIMER_FIRINGS,
    MAX_TEXT_CHARS,
    MAX_TOPICS,
)
from rocketlb_core.numbers import NumberError, check_toml_numbers
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.sim.events import LAG_SAMPLE_MS, PULL_TICK_MS
from rocketlb_core.sim.faults import FAULTS
from rocketlb_core.trace.schema import has_control


class ScenarioError(InputError):
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
    client: str = "remoting"
    """``grpc``: the gRPC client's producer (``sim.clients.GrpcProducer``)."""


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

    def toml(self, text: str) -> dict[str, Any]:
        """``text`` as TOML, its numbers first checked (``check_toml_numbers``); a scenario's
        (this one's, or a live scenario's) top table."""
        try:
            check_toml_numbers(text)
            return tomllib.loads(text)
        except NumberError as exc:
            raise ScenarioError(f"{self.path}: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"{self.path}: not valid TOML ({exc})") from None
        except RecursionError:
            raise ScenarioError(f"{self.path}: not valid TOML (nested too deeply)") from None

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
            integer: bool = False, positive: bool = False, minimum: float | None = None,
            maximum: float | None = None) -> Any:
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
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(path, f"expected a finite number, got {value!r}")
        if positive and value <= 0:
            raise self.fail(path, f"expected a number > 0, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.fail(path, f"expected a number >= {minimum}, got {value!r}")
        if maximum is not None and value > maximum:
            raise self.fail(path, f"expected a number <= {maximum:g}, got {value!r} "
                                  "(data/scenarios/README.md lists the bounds)")
        return value

    def text(self, obj: dict[str, Any], key: str, where: str, default: str | None = None, *,
             limit: int = MAX_NAME_CHARS) -> str:
        value = obj.get(key, default)
        path = f"{where}.{key}" if where else key
        if not isinstance(value, str) or (value == "" and default is None):
            raise self.fail(path, f"expected text, got {value!r}"[:200])
        if len(value) > limit:
            raise self.fail(path, f"{len(value)} characters (at most {limit})")
        if limit == MAX_NAME_CHARS and has_control(value):
            raise self.fail(path, f"control characters in {value[:40]!r}")
        return value

    def array(self, obj: dict[str, Any], key: str, where: str, limit: int) -> list[Any]:
        """``obj[key]`` (default: empty) as a list of at most ``limit`` items."""
        value = obj.get(key, [])
        path = f"{where}.{key}" if where else key
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, got {type(value).__name__}")
        if len(value) > limit:
            raise self.fail(path, f"{len(value)} items (at most {limit}: "
                                  "data/scenarios/README.md)")
        return value


def load(path: Path | str) -> Scenario:
    """Read and validate a scenario file."""
    path = Path(path)
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise ScenarioError(f"{path}: not a regular file")
        if st.st_size > MAX_SCENARIO_BYTES:
            raise ScenarioError(f"{path}: {st.st_size} bytes, more than the "
                                f"{MAX_SCENARIO_BYTES}-byte limit for a scenario")
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ScenarioError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read it ({exc.strerror})") from None
    return loads(text, str(path))


def loads(text: str, path: str) -> Scenario:
    """Validate a scenario given as TOML text; ``path`` names it in errors (the browser's live
    figures have the text but no file)."""
    r = _Reader(path)
    if len(text.encode("utf-8")) > MAX_SCENARIO_BYTES:
        raise ScenarioError(f"{path}: more than the {MAX_SCENARIO_BYTES}-byte limit for a "
                            f"scenario")
    top = r.table(r.toml(text), "", {"name", "duration_ms", "cluster"},
                  {"description", "drain_ms", "line", "tick_ms", "producers", "consumer_groups",
                   "events", "expect"})
    try:
        line = ProducerLine.parse(str(top.get("line", "4.9.8")))
    except ValueError as exc:
        raise r.fail("line", str(exc)) from None
    cl = r.table(top["cluster"], "cluster", {"brokers", "topics"}, {"name_servers"})
    name_servers = r.num(cl, "name_servers", "cluster", 2, integer=True, positive=True,
                         maximum=MAX_NAME_SERVERS)
    brokers = []
    lat: dict[str, Any] = {"positive": True, "maximum": MAX_LATENCY_MS}
    for i, b in enumerate(r.array(cl, "brokers", "cluster", MAX_BROKERS)):
        w = f"cluster.brokers[{i}]"
        b = r.table(b, w, {"name"}, {"room", "median_ms", "p99_ms"})
        if "median_ms" in b and "p99_ms" in b and r.num(b, "p99_ms", w, **lat) < \
                r.num(b, "median_ms", w, **lat):
            raise r.fail(f"{w}.p99_ms", f"{b['p99_ms']} is below median_ms {b['median_ms']} "
                                        "(a p99 is at least the median)")
        brokers.append(BrokerSpec(r.text(b, "name", w), r.text(b, "room", w, "room-1"),
                                  r.num(b, "median_ms", w, 2.0, **lat),
                                  r.num(b, "p99_ms", w, 10.0, **lat)))
    names = {b.name for b in brokers}
    if len(names) != len(brokers):
        raise r.fail("cluster.brokers", "broker names must be unique")
    topics = []
    for i, t in enumerate(r.array(cl, "topics", "cluster", MAX_TOPICS)):
        w = f"cluster.topics[{i}]"
        t = r.table(t, w, {"name", "brokers"}, {"read_queues", "write_queues"})
        on = tuple(t["brokers"]) if isinstance(t["brokers"], list) else ()
        if not on or any(not isinstance(b, str) or b not in names for b in on) or len(
                set(on)) != len(on):
            raise r.fail(f"{w}.brokers", f"expected a list of distinct known brokers, got "
                                         f"{t['brokers']!r}"[:300])
        queues: dict[str, Any] = {"integer": True, "minimum": 0, "maximum": MAX_QUEUES}
        topics.append(TopicSpec(r.text(t, "name", w), on,
                                r.num(t, "read_queues", w, 4, **queues),
                                r.num(t, "write_queues", w, 4, **queues)))
    if len({t.name for t in topics}) != len(topics):
        raise r.fail("cluster.topics", "topic names must be unique")
    topic_names = {t.name for t in topics}
    producers = []
    when: dict[str, Any] = {"integer": True, "minimum": 0, "maximum": MAX_DURATION_MS}
    for i, p in enumerate(r.array(top, "producers", "", MAX_PRODUCERS)):
        w = f"producers[{i}]"
        p = r.table(p, w, {"name", "topic", "rate_per_s"},
                    {"fault_tolerance", "start_ms", "stop_ms", "ip", "client"})
        if not isinstance(p["topic"], str) or p["topic"] not in topic_names:
            raise r.fail(f"{w}.topic", f"unknown topic {p['topic']!r}")
        if not isinstance(p.get("fault_tolerance", False), bool):
            raise r.fail(f"{w}.fault_tolerance", "expected true or false")
        if p.get("client", "remoting") not in ("remoting", "grpc"):
            raise r.fail(f"{w}.client", "expected \"remoting\" or \"grpc\"")
        start, stop = r.num(p, "start_ms", w, 0, **when), r.num(p, "stop_ms", w, None, **when)
        if stop is not None and stop < start:
            raise r.fail(f"{w}.stop_ms", f"{stop} is before start_ms {start}")
        producers.append(ProducerSpec(
            r.text(p, "name", w), p["topic"],
            r.num(p, "rate_per_s", w, positive=True, maximum=MAX_RATE_PER_S),
            p.get("fault_tolerance", False), r.num(p, "start_ms", w, 0, **when),
            r.num(p, "stop_ms", w, None, **when),
            r.text(p, "ip", w, f"10.1.0.{i + 1}"), p.get("client", "remoting")))
    groups = []
    for i, g in enumerate(r.array(top, "consumer_groups", "", MAX_GROUPS)):
        w = f"consumer_groups[{i}]"
        g = r.table(g, w, {"name", "topic", "members"},
                    {"strategy", "strategy_params", "model", "consume_from", "consume_rate_per_s"})
        if not isinstance(g["topic"], str) or g["topic"] not in topic_names:
            raise r.fail(f"{w}.topic", f"unknown topic {g['topic']!r}")
        strategy = g.get("strategy", "AVG")
        if not isinstance(strategy, str) or strategy not in REGISTRY:
            raise r.fail(f"{w}.strategy", f"unknown strategy {strategy!r} "
                                          f"(known: {', '.join(REGISTRY)})")
        params = _strategy_params(r, g, w, strategy)
        model = g.get("model", "CLUSTERING")
        if not isinstance(model, str) or model not in ("CLUSTERING", "BROADCASTING"):
            raise r.fail(f"{w}.model", "expected CLUSTERING or BROADCASTING")
        members = []
        for j, m in enumerate(r.array(g, "members", w, MAX_MEMBERS)):
            mw = f"{w}.members[{j}]"
            m = r.table(m, mw, {"name", "ip"}, {"instance", "room", "start_ms"})
            members.append(MemberSpec(
                r.text(m, "name", mw), r.text(m, "ip", mw), r.text(m, "instance", mw, ""),
                r.text(m, "room", mw, "room-1"), r.num(m, "start_ms", mw, 0, **when)))
        groups.append(GroupSpec(r.text(g, "name", w), g["topic"], tuple(members), strategy,
                                params, model,
                                r.text(g, "consume_from", w, "CONSUME_FROM_LAST_OFFSET"),
                                r.num(g, "consume_rate_per_s", w, 2000.0, positive=True,
                                      maximum=MAX_RATE_PER_S)))
    member_names = {m.name for g in groups for m in g.members}
    clients = {p.name for p in producers} | member_names
    if len(clients) != len(producers) + sum(len(g.members) for g in groups):
        raise r.fail("producers", "producer and consumer names must be unique")
    if len({g.name for g in groups}) != len(groups):
        raise r.fail("consumer_groups", "group names must be unique")
    events = []
    for i, e in enumerate(r.array(top, "events", "", MAX_EVENTS)):
        w = f"events[{i}]"
        if not isinstance(e, dict) or not isinstance(e.get("kind"), str) or (
                e["kind"] not in FAULTS):
            kind = e.get("kind") if isinstance(e, dict) else e
            raise r.fail(f"{w}.kind", f"unknown event {kind!r} "
                                      f"(known: {', '.join(sorted(FAULTS))})")
        fault = FAULTS[e["kind"]]
        e = r.table(e, w, {"at_ms", "kind", *fault.args}, set(fault.optional))
        for key in ("broker", "consumer", "client", "nameserver", "group", "mode"):
            if key in e and not isinstance(e[key], str):
                raise r.fail(f"{w}.{key}", f"expected a name, got {e[key]!r}"[:200])
        for key in ("broker",):
            if key in e and e[key] not in names:
                raise r.fail(f"{w}.{key}", f"unknown broker {e[key]!r}")
        for key in ("consumer", "client"):
            if key in e and e[key] not in clients:
                raise r.fail(f"{w}.{key}", f"unknown client {e[key]!r}")
        if "consumer" in e and e["consumer"] not in member_names:
            raise r.fail(f"{w}.consumer", f"{e['consumer']!r} is a producer, not a consumer")
        modes = ("host", "process") if e["kind"] == "consumer_crash" else ("clean", "silent")
        if e.get("mode", modes[0]) not in modes:
            raise r.fail(f"{w}.mode", f"expected {' or '.join(modes)}, got {e['mode']!r}")
        for key in ("median_ms", "p99_ms"):
            if key in e:
                r.num(e, key, w, **lat)
        if "median_ms" in e and "p99_ms" in e and e["p99_ms"] < e["median_ms"]:
            raise r.fail(f"{w}.p99_ms", f"{e['p99_ms']} is below median_ms {e['median_ms']} "
                                        "(a p99 is at least the median)")
        if "interval_ms" in e:
            r.num(e, "interval_ms", w, integer=True, positive=True, maximum=MAX_DURATION_MS)
        if "duration_ms" in e:
            r.num(e, "duration_ms", w, integer=True, positive=True, maximum=MAX_DURATION_MS)
        servers = {f"namesrv-{k}" for k in range(name_servers)}
        if "nameserver" in e and e["nameserver"] not in servers:
            raise r.fail(f"{w}.nameserver", f"unknown name server {e['nameserver']!r} "
                                            f"(known: {', '.join(sorted(servers))})")
        if "group" in e and e["group"] not in {g.name for g in groups}:
            raise r.fail(f"{w}.group", f"unknown consumer group {e['group']!r}")
        events.append(EventSpec(r.num(e, "at_ms", w, **when), e["kind"],
                                {k: v for k, v in e.items() if k not in ("at_ms", "kind")}))
    expect = top.get("expect", {})
    if not isinstance(expect, dict):
        raise r.fail("expect", "expected a table")
    duration = r.num(top, "duration_ms", "", integer=True, positive=True,
                     maximum=MAX_DURATION_MS)
    tick = r.num(top, "tick_ms", "", 100, integer=True, positive=True, maximum=MAX_DURATION_MS)
    drain = r.num(top, "drain_ms", "", 60_000, **when)
    _check_size(r, duration, tick, producers)
    scenario = Scenario(
        r.text(top, "name", ""), r.text(top, "description", "", "", limit=MAX_TEXT_CHARS),
        str(path), duration, drain, line, name_servers,
        tuple(brokers), tuple(topics), tuple(producers), tuple(groups),
        tuple(sorted(events, key=lambda ev: ev.at_ms)), dict(expect), tick)
    _check_timers(r, scenario)
    return scenario


def planned_messages(producers: Sequence[ProducerSpec], duration_ms: int) -> float:
    """About how many messages the producers send over ``duration_ms`` (rate x sending time)."""
    return sum(p.rate_per_s * max(0, min(p.stop_ms if p.stop_ms is not None else duration_ms,
                                         duration_ms) - p.start_ms) / 1000 for p in producers)


def _check_size(r: _Reader, duration: int, tick: int, producers: list[ProducerSpec]) -> None:
    """Refuse, before the run, a scenario whose run would not fit (``rocketlb_core.limits``)."""
    messages = planned_messages(producers, duration)
    if messages > MAX_SIM_MESSAGES:
        raise r.fail("producers", f"about {messages:,.0f} messages in all: more than the "
                                  f"{MAX_SIM_MESSAGES:,} a run may send (lower "
                                  "the rates or duration_ms)")
    ticks = duration // tick * len(producers)
    if ticks > MAX_SIM_TICKS:
        raise r.fail("tick_ms", f"{ticks:,} producer ticks: more than {MAX_SIM_TICKS:,} (raise "
                                "tick_ms or lower duration_ms)")


def timer_firings(sc: Scenario) -> dict[str, int]:
    """About how much periodic work a run of ``sc`` does, whatever happens in it: each timer's
    firings over the run (``duration_ms + drain_ms``), a firing that visits queues counted once
    per queue it may visit (``limits.MAX_SIM_TIMER_FIRINGS``). By source: ``ticks`` (producers'
    send ticks, every ``tick_ms`` while they send), ``producers`` (their route polls, 30 s, and
    a gRPC producer's heartbeats, 10 s),
    ``consumers`` (each member's pulls every 500 ms, commits every 5 s, rebalances every 20 s,
    heartbeats and route polls every 30 s, each counted 1 + its topic's queues), ``servers``
    (brokers' registrations and channel scans, name servers' broker scans) and ``lag`` (a
    sample every 5 s of every clustering group's queues)."""
    end = sc.duration_ms + sc.drain_ms
    queues = {t.name: t.read_queues * len(t.brokers) for t in sc.topics}
    ticks = sum(max(0, min(p.stop_ms if p.stop_ms is not None else sc.duration_ms, end)
                    - p.start_ms) // sc.tick_ms for p in sc.producers)
    polls = sum(max(0, end - p.start_ms) // ROUTE_POLL_MS + 1 for p in sc.producers)
    polls += sum(max(0, end - p.start_ms) // 10_000 + 1     # sim.clients.GRPC_HEARTBEAT_MS
                 for p in sc.producers if p.client == "grpc")
    consumers = 0
    for g in sc.groups:
        for m in g.members:
            life = max(0, end - m.start_ms)
            fired = (life // PULL_TICK_MS + life // PERSIST_OFFSET_MS + life // REBALANCE_WAIT_MS
                     + life // HEARTBEAT_MS + life // ROUTE_POLL_MS + 5)
            consumers += fired * (1 + queues[g.topic])
    servers = len(sc.brokers) * (end // REGISTER_PERIOD_MS + end // CHANNEL_SCAN_MS) + \
        sc.name_servers * (end // sc.line.rules.broker_scan_ms) + \
        sc.name_servers * len(sc.brokers) * (end // IDLE_CLOSE_MS + 1)   # idle clocks
    lag = (end // LAG_SAMPLE_MS) * (1 + sum(queues[g.topic] for g in sc.groups
                                     if g.model == "CLUSTERING"))
    return {"ticks": ticks, "producers": polls, "consumers": consumers, "servers": servers,
            "lag": lag}


def _check_timers(r: _Reader, sc: Scenario) -> None:
    """Refuse a run whose timers alone would take more than a few minutes: a timer fires
    whether or not anything happens (``timer_firings``, ``limits.MAX_SIM_TIMER_FIRINGS``).
    The error names the field that would shrink the biggest share."""
    work = timer_firings(sc)
    total = sum(work.values())
    if total <= MAX_SIM_TIMER_FIRINGS:
        return
    if work["ticks"] * 2 > total:
        field, fix = "tick_ms", "raise tick_ms, or lower duration_ms"
    else:
        field = "drain_ms" if sc.drain_ms > sc.duration_ms else "duration_ms"
        fix = f"lower {field}, or use fewer members or queues"
    raise r.fail(field, f"about {total:,} timer firings over the run's "
                        f"{sc.duration_ms + sc.drain_ms:,} ms (duration_ms + drain_ms; "
                        f"{', '.join(f'{k} {v:,}' for k, v in work.items())}): more than the "
                        f"{MAX_SIM_TIMER_FIRINGS:,} a run may have ({fix}; "
                        "data/scenarios/README.md lists the bounds)")


PARAMS: dict[str, Callable[[_Reader, Any, str], bool]] = {
    "virtual_nodes": lambda r, v, w: isinstance(v, int) and not isinstance(v, bool)
    and 1 <= v <= 10_000,
    "eps": lambda r, v, w: isinstance(v, int | float) and not isinstance(v, bool)
    and 0 < v <= 100,
    "separator": lambda r, v, w: isinstance(v, str) and 0 < len(v) <= 16,
    "resolver": lambda r, v, w: v == "rooms",
    "inner": lambda r, v, w: isinstance(v, str) and v in REGISTRY
    and v not in ("MACHINE_ROOM_NEARBY", "CONFIG"),
    "consumeridcs": lambda r, v, w: isinstance(v, list) and len(v) <= MAX_MEMBERS
    and all(isinstance(x, str) and 0 < len(x) <= MAX_NAME_CHARS for x in v),
}


def _strategy_params(r: _Reader, g: dict[str, Any], w: str, strategy: str) -> dict[str, Any]:
    """A group's ``strategy_params``: known names with sane values, and a strategy they build."""
    params = g.get("strategy_params", {})
    where = f"{w}.strategy_params"
    if not isinstance(params, dict):
        raise r.fail(where, "expected a table")
    for key, value in params.items():
        check = PARAMS.get(key)
        if check is None:
            raise r.fail(f"{where}.{key}"[:300], f"unknown parameter (known: "
                                                 f"{', '.join(sorted(PARAMS))})")
        if not check(r, value, where):
            raise r.fail(f"{where}.{key}", f"not a valid value: {value!r}"[:200])
    trial = dict(params)
    if strategy == "MACHINE_ROOM_NEARBY" and trial.pop("resolver", None) == "rooms":
        strategy = trial.pop("inner", "AVG")
    try:
        make(strategy, **trial)
    except Exception as exc:            # a factory's own argument check, whatever it raises
        raise r.fail(where, f"{strategy} cannot be built with {params!r}: {exc}"[:300]
                     ) from None
    return dict(params)
