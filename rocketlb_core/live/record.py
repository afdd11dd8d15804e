"""Recording a live scenario: what a real RocketMQ cluster and upstream's own clients did, kept as
they wrote it, beside the ground truth the importers and the model are checked against.

A live scenario is a TOML file (``data/scenarios/live/``, read with ``tomllib``: data, never
code)::

    name = "producer-outage"
    description = "..."
    brokers = 2                 # broker-a, broker-b, ... (the last one holds the trace topic)
    topic = "TopicLive"
    queues = 4                  # read and write queues per broker
    trace = true                # enableMsgTrace on every client
    settle_s = 8                # after the last event (and after the producers finished)

    [[producers]]               # upstream's DefaultMQProducer (live/java/Produce.java)
    name = "p-off"              # its instanceName, process and folder name
    group = "PG_off"
    count = 900                 # synchronous sends ...
    interval_ms = 50            # ... this far apart
    fault_tolerance = false     # sendLatencyFaultEnable

    [[consumers]]               # upstream's DefaultMQPushConsumer (live/java/Consume.java)
    name = "c1"                 # its process and folder name
    group = "GID_live"
    instance = "c1"             # its instanceName (default: name); two alike: the trap

    [[events]]
    at_s = 8.0                  # seconds after the producers start (or the recording starts)
    action = "kill"             # kill | pause | resume | restart (a broker),
    target = "broker-a"         # join | leave | crash (a consumer)

Before every event and at the end, the recorder takes a *snapshot*: each group's member list as
a broker holds it (``mqadmin consumerConnection``) and how many lines each consumer's client log
has, so every logged assignment can be placed between two snapshots.

A recording is a folder (written whole, or not at all: ``rocketlb_core.atomic``):

* ``recording.json``: provenance (the line, RocketMQ's versions, the scenario, the command that
  re-records it), the cluster layout (broker names and addresses), the topic's route, every
  event with the wall-clock time it happened, and the snapshots;
* ``scenario.toml``: the scenario, as run;
* ``sends/<producer>.jsonl.gz``: ground truth, one row per send: where the real client stored it
  (``broker``, ``queue``) or the error it got, and when it started (``sent_ms``);
* ``msgtrace.jsonl.gz``: every message of ``RMQ_SYS_TRACE_TOPIC``, body untouched
  (``live/java/DumpTopic.java``): what ``rocketlb_core.trace.msgtrace`` imports;
* ``logs/<process>/<file>.log.gz``: each client's ``rocketmq_client.log`` and each broker's log,
  untouched, compressed.

The recorder runs real processes in real time, so it reads the wall clock (only in
``rocketlb_core.live``: the core never does).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder
from rocketlb_core.live import cluster as live
from rocketlb_core.live.jars import LiveError, line
from rocketlb_core.sim.scenario import ScenarioError, _Reader

FORMAT = "rocketlb-live-recording"
VERSION = 1
BROKER_ACTIONS = ("kill", "pause", "resume", "restart")
CONSUMER_ACTIONS = ("join", "leave", "crash")
TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
MAX_EVENTS = 64
MAX_CLIENTS = 16


@dataclass(frozen=True)
class LiveProducer:
    name: str
    group: str
    count: int
    interval_ms: int
    fault_tolerance: bool


@dataclass(frozen=True)
class LiveConsumer:
    name: str
    group: str
    instance: str


@dataclass(frozen=True)
class LiveEvent:
    at_s: float
    action: str
    target: str


@dataclass(frozen=True)
class LiveScenario:
    name: str
    description: str
    path: str
    text: str
    brokers: int
    topic: str
    queues: int
    trace: bool
    settle_s: float
    producers: tuple[LiveProducer, ...]
    consumers: tuple[LiveConsumer, ...]
    events: tuple[LiveEvent, ...]


def load_scenario(path: Path | str) -> LiveScenario:
    """Read and validate a live scenario; a bad field is a ``ScenarioError`` naming the file
    and the field."""
    import tomllib

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot read it ({exc})") from None
    r = _Reader(str(path))
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML ({exc})") from None
    top = r.table(raw, "", {"name", "topic"},
                  {"description", "brokers", "queues", "trace", "settle_s", "producers",
                   "consumers", "events"})
    brokers = r.num(top, "brokers", "", 2, integer=True, minimum=1,
                    maximum=len(live.BROKER_NAMES))
    producers = []
    for i, p in enumerate(r.array(top, "producers", "", MAX_CLIENTS)):
        where = f"producers[{i}]"
        p = r.table(p, where, {"name", "group", "count"},
                    {"interval_ms", "fault_tolerance"})
        ft = p.get("fault_tolerance", False)
        if not isinstance(ft, bool):
            raise r.fail(f"{where}.fault_tolerance", f"expected true or false, got {ft!r}")
        producers.append(LiveProducer(
            r.text(p, "name", where), r.text(p, "group", where),
            r.num(p, "count", where, integer=True, minimum=1, maximum=100_000),
            r.num(p, "interval_ms", where, 0, integer=True, minimum=0, maximum=60_000), ft))
    consumers = []
    for i, c in enumerate(r.array(top, "consumers", "", MAX_CLIENTS)):
        where = f"consumers[{i}]"
        c = r.table(c, where, {"name", "group"}, {"instance"})
        name = r.text(c, "name", where)
        consumers.append(LiveConsumer(name, r.text(c, "group", where),
                                      r.text(c, "instance", where, name)))
    names = [x.name for x in producers] + [x.name for x in consumers]
    for n in names:
        if names.count(n) > 1:
            raise r.fail("producers/consumers", f"the name {n!r} is used twice")
    broker_names = live.BROKER_NAMES[:brokers]
    events = []
    for i, e in enumerate(r.array(top, "events", "", MAX_EVENTS)):
        where = f"events[{i}]"
        e = r.table(e, where, {"at_s", "action", "target"}, set())
        action, target = r.text(e, "action", where), r.text(e, "target", where)
        if action in BROKER_ACTIONS:
            if target not in broker_names:
                raise r.fail(f"{where}.target", f"{action} needs a broker of this cluster "
                             f"({', '.join(broker_names)}), got {target!r}")
        elif action in CONSUMER_ACTIONS:
            if target not in {c.name for c in consumers}:
                raise r.fail(f"{where}.target", f"{action} needs a consumer of the scenario, "
                             f"got {target!r}")
        else:
            raise r.fail(f"{where}.action", f"one of {', '.join(BROKER_ACTIONS + CONSUMER_ACTIONS)}"
                         f", got {action!r}")
        events.append(LiveEvent(float(r.num(e, "at_s", where, minimum=0, maximum=3600)),
                                action, target))
    if [e.at_s for e in events] != sorted(e.at_s for e in events):
        raise r.fail("events", "events must be in time order (at_s)")
    trace = top.get("trace", True)
    if not isinstance(trace, bool):
        raise r.fail("trace", f"expected true or false, got {trace!r}")
    return LiveScenario(
        r.text(top, "name", ""), r.text(top, "description", "", "", limit=4000), str(path),
        text, brokers, r.text(top, "topic", ""),
        r.num(top, "queues", "", 4, integer=True, minimum=1, maximum=64), trace,
        float(r.num(top, "settle_s", "", 8, minimum=0, maximum=600)), tuple(producers),
        tuple(consumers), tuple(events))


def _now_ms() -> int:
    return int(time.time() * 1000)


def _gzip_copy(src: Path, dst: Path) -> None:
    """``src`` compressed to ``dst`` (no name or time in the gzip header: the same bytes give
    the same file)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with src.open("rb") as f, dst.open("wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out:
        shutil.copyfileobj(f, out)


def _gzip_text(dst: Path, text: str) -> None:
    with dst.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                              mtime=0) as out:
        out.write(text.encode("utf-8"))


def _log_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        return sum(1 for _ in f)


def dump_topic(cluster: live.Cluster, topic: str, timeout_s: float = 120.0) -> list[str]:
    """Every message of ``topic`` as ``live/java/DumpTopic.java`` prints it (JSON lines)."""
    home = cluster.home / "clients" / "dump"
    home.mkdir(parents=True, exist_ok=True)
    run = subprocess.run([*live._client_command(cluster, home, "DumpTopic.java"),
                          cluster.namesrv_addr, topic], capture_output=True, text=True,
                         timeout=timeout_s, check=False, stdin=subprocess.DEVNULL)
    rows = [x for x in run.stdout.splitlines() if x.startswith("{")]
    if run.returncode != 0 or not rows or not rows[-1].startswith('{"done"'):
        raise LiveError(f"dumping {topic} failed ({run.returncode}):\n{run.stderr[-2500:]}")
    if json.loads(rows[-1])["done"] != len(rows) - 1:
        raise LiveError(f"dumping {topic}: the driver's count disagrees with its rows")
    return rows[:-1]


def record(scenario_path: Path | str, line_name: str, out: Path | str, *,
           force: bool = False, progress: bool = True) -> dict[str, Any]:
    """Run ``scenario_path`` against a fresh cluster of ``line_name`` and write the recording to
    ``out`` (see the module docstring); returns ``recording.json``'s content. Every process it
    starts is stopped before it returns, whatever happened."""
    scenario = load_scenario(scenario_path)
    spec = line(line_name)
    out = Path(out)
    say = (lambda msg: print(f"[record {scenario.name}] {msg}", file=sys.stderr, flush=True)) \
        if progress else (lambda msg: None)
    scratch = Path(tempfile.mkdtemp(prefix="rocketlb-live-"))
    home = scratch / "cluster"
    try:
        with atomic_folder(out, "live record", inputs=[Path(scenario_path)], force=force) as tmp:
            meta = _run(scenario, spec.name, home, tmp, say)
            meta["command"] = (f"python -m rocketlb_core.live record {scenario_path} "
                               f"--line {line_name} --out {out}")
            (tmp / "recording.json").write_text(json.dumps(meta, indent=1) + "\n",
                                                encoding="utf-8")
            (tmp / "scenario.toml").write_text(scenario.text, encoding="utf-8")
        return meta
    finally:
        if (home / live.STATE).is_file():
            live.down(home)
        shutil.rmtree(scratch, ignore_errors=True)      # the cluster's stores: ours, scratch


def _run(scenario: LiveScenario, line_name: str, home: Path, tmp: Path,
         say: Any) -> dict[str, Any]:
    spec = line(line_name)
    say(f"starting a {line_name}.x cluster with {scenario.brokers} brokers")
    c = live.up(home, line_name, scenario.brokers, trace_brokers=1 if scenario.trace else 0)
    live.create_topic(c, scenario.topic, scenario.queues)
    route = live.topic_route(c, scenario.topic, brokers=scenario.brokers, wait_s=60)
    consumers: dict[str, live.Consumer] = {}
    specs = {k.name: k for k in scenario.consumers}
    groups = sorted({k.group for k in scenario.consumers})
    snapshots: list[dict[str, Any]] = []

    def snapshot(before: str) -> None:
        snapshots.append({
            "before": before, "wall_ms": _now_ms(),
            "members": {g: live.consumer_ids(c, g) for g in groups},
            "client_log_lines": {n: _log_lines(k.client_log) for n, k in consumers.items()}})

    producers = {}
    for p in scenario.producers:
        producers[p.name] = live.start_producer(
            c, scenario.topic, p.count, group=p.group, interval_ms=p.interval_ms,
            fault_tolerance=p.fault_tolerance, instance=p.name, trace=scenario.trace, go=False)
    t0 = time.monotonic()
    t0_ms = _now_ms()
    for proc in producers.values():
        live.start_sending(proc)
    say(f"{len(producers)} producers sending")
    events = []
    for e in scenario.events:
        delay = t0 + e.at_s - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if groups:
            snapshot(f"{e.action} {e.target}")
        wall = _now_ms()
        if e.action == "kill":
            live.kill_broker(c, e.target)
        elif e.action in ("pause", "resume"):
            live.signal_broker(c, e.target, signal.SIGSTOP if e.action == "pause"
                               else signal.SIGCONT)
        elif e.action == "restart":
            live.restart_broker(c, e.target)
        elif e.action == "join":
            k = specs[e.target]
            consumers[k.name] = live.start_consumer(c, scenario.topic, k.group, k.instance,
                                                    name=k.name, trace=scenario.trace)
        elif e.action == "leave":
            live.stop_consumer(consumers[e.target])
        else:
            live.kill_consumer(consumers[e.target])
        events.append({"at_s": e.at_s, "action": e.action, "target": e.target,
                       "wall_ms": wall, "done_ms": _now_ms()})
        say(f"{e.at_s:6.1f} s  {e.action} {e.target}")
    (tmp / "sends").mkdir()
    for name, proc in producers.items():
        rows = live.collect_sends(proc)
        _gzip_text(tmp / "sends" / f"{name}.jsonl.gz",
                   "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
        say(f"{name}: {sum('broker' in r for r in rows)} of {len(rows)} sends stored")
    time.sleep(scenario.settle_s)
    if groups:
        snapshot("end")
    for running in consumers.values():
        if running.process.poll() is None:
            live.stop_consumer(running)
    if scenario.trace:
        time.sleep(2.0)                   # the consumers' trace dispatchers flush at shutdown
        dumped = dump_topic(c, TRACE_TOPIC)
        _gzip_text(tmp / "msgtrace.jsonl.gz", "".join(r + "\n" for r in dumped))
        say(f"{len(dumped)} messages of {TRACE_TOPIC} dumped")
    live.down(c.home)
    for proc_ in c.processes:
        logs = Path(proc_.folder) / "logs" / "rocketmqlogs"
        for f in sorted(logs.glob("*.log")) if logs.is_dir() else ():
            if f.stat().st_size:
                _gzip_copy(f, tmp / "logs" / proc_.name / f"{f.name}.gz")
    return {
        "format": FORMAT, "version": VERSION, "scenario": scenario.name,
        "description": scenario.description, "line": line_name,
        "server_version": spec.server_version, "client_version": spec.client_version,
        "topic": scenario.topic, "cluster": live.CLUSTER_NAME,
        "brokers": [{"name": p.name, "address": f"127.0.0.1:{p.port}"} for p in c.brokers()],
        "route": [{"broker_name": q.broker_name, "read_queue_nums": q.read_queue_nums,
                   "write_queue_nums": q.write_queue_nums, "perm": q.perm}
                  for q in route.queue_datas],
        "producers": [vars(p) for p in scenario.producers],
        "consumers": [vars(k) for k in scenario.consumers],
        "t0_ms": t0_ms, "events": events, "snapshots": snapshots,
        "isolated": bool(os.environ.get(live.ENV_ISOLATED)),
        # 4.x clients log in the JVM's zone (this machine's); 5.x clients and the brokers GMT+8
        "utc_offset_minutes": time.localtime().tm_gmtoff // 60,
    }
