"""A RocketMQ cluster on this machine, from upstream's released jars: one name server and N
brokers (masters, ``broker-a``, ``broker-b``, ...), each its own JVM with a small heap, small
mapped files, its own store, configuration and log folders, all under one *home* folder.

``up`` starts them and waits until each accepts connections; ``down`` stops exactly the
processes ``up`` recorded in ``<home>/cluster.json`` (a process is stopped only if its command
line still carries this home's marker, so a recycled pid is never touched); ``status`` reports
them. The pids in ``cluster.json`` are data, never trusted: a file that is not one ``up`` wrote
(not a regular file, over 1 MiB, not JSON, a field of the wrong type or range, a pid that cannot
be a server's) is a ``LiveError`` naming the file and the field (exit status 2).

Ports are checked before anything starts. Addresses are 127.0.0.1: the name server and the
brokers register and answer there. The 4.x servers bind every interface (their
``NettyServerConfig`` has no bind address; 5.x binds ``bindAddress``, set to 127.0.0.1, but its
HA port still binds every interface), so tests start the cluster in a private network namespace
(``isolated=True``: Linux ``unshare``), where loopback is the only interface there is, and run
clients there with ``run_inside``.

Ports: the name server listens on ``namesrv_port``; broker ``i`` on ``broker_port + 10 * i``,
and RocketMQ also opens that port - 2 (its fast channel) and + 1 (HA).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rocketlb_core.live.jars import (
    LiveError,
    cache_root,
    class_path,
    find_tool,
    java,
    line,
    resolve,
)
from rocketlb_core.model import BrokerData, QueueData, TopicRoute
from rocketlb_core.paths import FileRefused, json_object, read_small_file
from rocketlb_core.paths import shown as _show

STATE = "cluster.json"
ENV_ISOLATED = "ROCKETLB_LIVE_ISOLATED"   # set by run_isolated: the cluster is in a namespace
MARKER_PROP = "rocketlb.live.home"
BROKER_NAMES = tuple(f"broker-{c}" for c in "abcdefgh")
SLAVE_NAMES = tuple(f"slave-{c}" for c in "abcdefgh")
"""A master's slave (issue 45): ``slave-a`` is ``broker-a``'s (``brokerId`` 1, ``brokerRole``
SLAVE, the master's ``brokerName``), started by ``up(..., slaves=["broker-a"])``."""
SLAVE_PORT_STEP = 5
"""A slave listens on its master's port + 5 (and, as every broker, that port - 2 and + 1):
between its master's ports and the next master's."""


def master_of(slave: str) -> str:
    """The master whose slave ``slave`` is: ``slave-a`` -> ``broker-a``."""
    return BROKER_NAMES[SLAVE_NAMES.index(slave)]


def slave_of(master: str) -> str:
    """``broker-a`` -> ``slave-a``."""
    return SLAVE_NAMES[BROKER_NAMES.index(master)]
CLUSTER_NAME = "rocketlb"

_LOGBACK = """<?xml version="1.0" encoding="UTF-8"?>
<!-- written by rocketlb_core.live: every logger of the {what} into one file, as upstream's
     distribution names it (logs/rocketmqlogs/{file}), with its pattern (seconds, GMT+8) -->
<configuration>
  <appender name="file" class="ch.qos.logback.core.FileAppender">
    <file>${{user.home}}/logs/rocketmqlogs/{file}</file>
    <append>true</append>
    <encoder>
      <pattern>%d{{yyy-MM-dd HH:mm:ss,GMT+8}} %p %t - %m%n</pattern>
      <charset>UTF-8</charset>
    </encoder>
  </appender>
  <root level="INFO"><appender-ref ref="file"/></root>
</configuration>
"""


@dataclass
class Process:
    """One JVM of the cluster, as recorded in ``cluster.json``."""

    name: str            # namesrv, broker-a, ...
    role: str            # namesrv | broker | producer | consumer
    port: int
    pid: int = 0
    folder: str = ""


@dataclass
class Cluster:
    home: Path
    line: str
    namesrv_port: int
    processes: list[Process] = field(default_factory=list)
    isolated: bool = False
    broker_heap_mb: int = 256

    @property
    def namesrv_addr(self) -> str:
        return f"127.0.0.1:{self.namesrv_port}"

    def brokers(self) -> list[Process]:
        """The masters (role ``broker``), as the topic's route names them."""
        return [p for p in self.processes if p.role == "broker"]

    def slaves(self) -> list[Process]:
        return [p for p in self.processes if p.role == "slave"]

    def server(self, name: str) -> Process:
        """A broker or a slave of the cluster, by name (a ``LiveError`` otherwise)."""
        found = next((p for p in self.processes if p.name == name
                      and p.role in ("broker", "slave")), None)
        if found is None:
            raise LiveError(f"no broker or slave named {name!r} in this cluster")
        return found

    def save(self) -> None:
        data = {"line": self.line, "namesrv_port": self.namesrv_port, "isolated": self.isolated,
                "broker_heap_mb": self.broker_heap_mb,
                "processes": [asdict(p) for p in self.processes]}
        tmp = self.home / f".{STATE}.tmp"
        tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.home / STATE)

    @classmethod
    def load(cls, home: Path | str) -> Cluster:
        """The cluster recorded in ``home``'s ``cluster.json``, checked field by field (a
        ``LiveError`` naming the file and the field otherwise). Its pids are still only claims:
        ``_ours`` decides which are this home's processes."""
        home = _home(home)
        path = home / STATE
        if not os.path.lexists(path):
            raise LiveError(f"{_show(home)}: no cluster was started here ({STATE} is missing)")
        return _parse_state(home, path, _read_state(path))


MAX_STATE_BYTES = 1 << 20      # cluster.json: up writes about 1 KiB
PID_MAX = 1 << 22              # Linux's PID_MAX_LIMIT: no pid is larger
_PROCESS_FIELDS = {"name", "role", "port", "pid", "folder"}
ROLES = ("namesrv", "broker", "slave", "producer", "consumer", "proxy")
"""What a recorded process is: the cluster's JVMs, and the clients a recording starts
(``start_producer``, ``start_consumer`` add them, so ``down`` stops them too); ``start_proxy``
adds the Proxy (issue 34), ``start_grpc_producer`` its gRPC producers (role ``producer``) and
``start_grpc_consumer`` its gRPC consumers (role ``consumer``); ``up`` a master's slave (role
``slave``, issue 45)."""
MAX_PROCESSES = 1 + 64 + 1024
"""A name server, brokers and clients: far above what a scenario starts."""


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _home(home: Path | str) -> Path:
    """``home``, absolute (as the processes' marker names it)."""
    try:
        return Path(home).resolve()
    except RuntimeError:                    # Python 3.11: a loop of symbolic links
        raise LiveError(f"{_show(home)}: a loop of symbolic links, not a cluster's home"
                        ) from None
    except OSError as exc:
        raise LiveError(f"{_show(home)}: cannot be read ({exc.strerror or exc})") from None


def _read_state(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file (not a link, FIFO or device) of at most
    ``MAX_STATE_BYTES``; never blocks, never reads more (``paths.read_small_file``)."""
    try:
        return read_small_file(path, MAX_STATE_BYTES)
    except FileRefused as exc:
        why = exc.says("the cluster record up writes")
        if exc.reason == "not regular":
            why = "not a regular file (a link, folder, FIFO or device), not the cluster record " \
                  "up writes"
        raise LiveError(f"{_show(path)}: {why}") from None


def _parse_state(home: Path, path: Path, raw: bytes) -> Cluster:
    shown = _show(path)

    def bad(where: str, why: str) -> LiveError:
        return LiveError(f"{shown}: field {where}: {why}; not a cluster record rocketlb wrote")

    def integer(where: str, value: Any, low: int, high: int) -> int:
        if type(value) is not int or not low <= value <= high:
            raise bad(where, f"{_brief(value)} is not an integer from {low} to {high}")
        return value

    def text(where: str, value: Any, limit: int) -> str:
        if not isinstance(value, str) or len(value) > limit:
            raise bad(where, f"{_brief(value)} is not a string of at most {limit} characters")
        return value

    data = json_object(raw, shown, "not a cluster record rocketlb wrote", LiveError)
    for key in ("line", "namesrv_port", "processes"):
        if key not in data:
            raise bad(key, "missing")
    line_name = text("line", data["line"], 64)
    namesrv_port = integer("namesrv_port", data["namesrv_port"], 1, 65535)
    isolated = data.get("isolated", False)
    if not isinstance(isolated, bool):
        raise bad("isolated", f"{_brief(isolated)} is not true or false")
    heap = integer("broker_heap_mb", data.get("broker_heap_mb", 256), 1, 1 << 20)
    rows = data["processes"]
    if not isinstance(rows, list) or len(rows) > MAX_PROCESSES:
        raise bad("processes", f"{_brief(rows)} is not a list of at most "
                               f"{MAX_PROCESSES} processes")
    me = os.getpid()
    procs = []
    for i, row in enumerate(rows):
        where = f"processes[{i}]"
        if not isinstance(row, dict) or not {"name", "role", "port"} <= row.keys() \
                or not row.keys() <= _PROCESS_FIELDS:
            raise bad(where, f"{_brief(row)} is not an object of {sorted(_PROCESS_FIELDS)}")
        name = text(f"{where}.name", row["name"], 255)
        role = row["role"]
        if role not in ROLES:
            raise bad(f"{where}.role", f"{_brief(role)} is not one of {', '.join(ROLES)}")
        port = integer(f"{where}.port", row["port"], 0, 65535)
        pid = row.get("pid", 0)
        if pid != 0:                           # 0: not started yet
            integer(f"{where}.pid", pid, 2, PID_MAX)
            if pid == me:
                raise bad(f"{where}.pid", f"{pid} is this command's own process")
        folder = text(f"{where}.folder", row.get("folder", ""), 4096)
        procs.append(Process(name, role, port, pid, folder))
    return Cluster(home, line_name, namesrv_port, procs, isolated, heap)


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _ours(pid: int, home: Path) -> bool:
    """Whether ``pid`` is alive and is a JVM started for ``home`` (its marker property)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"-D{MARKER_PROP}={home}".encode() in cmdline


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text("utf-8", "replace").splitlines()[-lines:])
    except OSError:
        return "(no output)"


def _write_configs(cluster: Cluster, trace_brokers: int) -> None:
    home = cluster.home
    (home / "conf").mkdir(parents=True, exist_ok=True)
    (home / "conf" / "logback_namesrv.xml").write_text(
        _LOGBACK.format(what="name server", file="namesrv.log"), encoding="utf-8")
    (home / "conf" / "logback_broker.xml").write_text(
        _LOGBACK.format(what="broker", file="broker.log"), encoding="utf-8")
    (home / "conf" / "logback_tools.xml").write_text(
        _LOGBACK.format(what="admin tools", file="tools.log"), encoding="utf-8")
    brokers = cluster.brokers()
    tracing = {p.name for p in brokers[len(brokers) - trace_brokers:]} if trace_brokers else set()
    with_slave = {p.name for p in cluster.slaves()}
    for p in cluster.processes:
        folder = Path(p.folder)
        folder.mkdir(parents=True, exist_ok=True)
        props: dict[str, Any] = {"listenPort": p.port, "bindAddress": "127.0.0.1"}
        if p.role in ("broker", "slave"):
            store = folder / "store"
            slave = p.role == "slave"
            # a master with a slave is a SYNC_MASTER: a send waits for its slave (4.x answers
            # SLAVE_NOT_AVAILABLE at once without one; facts
            # broker.sync-master-answers-slave-not-available-4x,
            # broker.sync-master-waits-only-for-in-sync-replicas-5x)
            role = ("SLAVE" if slave else "SYNC_MASTER" if slave_of(p.name) in with_slave
                    else "ASYNC_MASTER")
            props |= {
                "brokerClusterName": CLUSTER_NAME,
                "brokerName": master_of(p.name) if slave else p.name,
                "brokerId": 1 if slave else 0,
                "brokerIP1": "127.0.0.1", "namesrvAddr": cluster.namesrv_addr,
                "storePathRootDir": store, "storePathCommitLog": store / "commitlog",
                "mappedFileSizeCommitLog": 16 * 1024 * 1024,     # 1 GiB upstream
                "mappedFileSizeConsumeQueue": 20 * 30_000,       # 300,000 entries upstream
                "autoCreateTopicEnable": "true", "flushDiskType": "ASYNC_FLUSH",
                "brokerRole": role, "deleteWhen": "04",
                # RMQ_SYS_TRACE_TOPIC on the last brokers only: a trace broker, as upstream
                # advises, so a broker killed by a scenario takes no trace records with it
                "traceTopicEnable": str(p.name in tracing).lower(),
            }
        (folder / f"{p.role}.properties").write_text(
            "".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")


def _command(cluster: Cluster, p: Process, cp: str, broker_heap_mb: int) -> list[str]:
    spec = line(cluster.line)
    heap = broker_heap_mb if p.role in ("broker", "slave") else 128
    main = spec.broker_main if p.role in ("broker", "slave") else spec.namesrv_main
    return [java(), f"-Xms{heap}m", f"-Xmx{heap}m", f"-XX:MaxDirectMemorySize={heap}m",
            "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
            # 4.x's store unmaps files through DirectByteBuffer by reflection; on Java 17 a
            # broker restarted after a crash cannot recover its store without these
            "--add-opens", "java.base/java.nio=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED",
            f"-D{MARKER_PROP}={cluster.home}", f"-Drocketmq.home.dir={cluster.home}",
            f"-Duser.home={p.folder}", "-cp", cp, main,
            "-c", str(Path(p.folder) / f"{p.role}.properties")]


def up(home: Path | str, line_name: str = "5", brokers: int = 2, *, namesrv_port: int = 19876,
       broker_port: int = 20911, broker_heap_mb: int = 256, trace_brokers: int = 1,
       slaves: Sequence[str] = (), timeout_s: float = 120.0) -> Cluster:
    """Start a name server and ``brokers`` brokers under ``home`` and wait until they accept
    connections; returns the recorded cluster. The last ``trace_brokers`` brokers hold
    ``RMQ_SYS_TRACE_TOPIC`` (message trace). Each master named in ``slaves`` is a
    ``SYNC_MASTER`` with a slave (``slave_of``), started after the masters, and ``up`` returns
    once the name server lists the slave too (it then connects to its master's HA port within
    the 5 s its ``HAClient`` waits between tries). Refuses a home that runs a cluster already,
    a port that is taken, and a missing Java or Maven, each with a clear ``LiveError``."""
    spec = line(line_name)
    if not 1 <= brokers <= len(BROKER_NAMES):
        raise LiveError(f"brokers must be 1 to {len(BROKER_NAMES)}, not {brokers}")
    unknown = [s for s in slaves if s not in BROKER_NAMES[:brokers]]
    if unknown or len(set(slaves)) != len(slaves):
        raise LiveError(f"slaves must name masters of this cluster "
                        f"({', '.join(BROKER_NAMES[:brokers])}) once each, not "
                        f"{', '.join(map(str, slaves))}")
    home = _home(home)
    if os.path.lexists(home / STATE):
        old = Cluster.load(home)
        if any(_ours(p.pid, home) for p in old.processes):
            raise LiveError(f"{home}: a cluster started here is still running; run "
                            f"'python -m rocketlb_core.live down --home {home}' first")
    cp = class_path(resolve(spec.name, "server"))
    procs = [Process("namesrv", "namesrv", namesrv_port, folder=str(home / "namesrv"))]
    procs += [Process(BROKER_NAMES[i], "broker", broker_port + 10 * i,
                      folder=str(home / BROKER_NAMES[i])) for i in range(brokers)]
    procs += [Process(slave_of(m), "slave",
                      broker_port + 10 * BROKER_NAMES.index(m) + SLAVE_PORT_STEP,
                      folder=str(home / slave_of(m))) for m in slaves]
    for p in procs:
        ports = [p.port] if p.role == "namesrv" else [p.port - 2, p.port, p.port + 1]
        for port in ports:
            if not _port_free(port):
                raise LiveError(f"port {port} on 127.0.0.1 is taken (needed by {p.name}); "
                                f"stop what uses it or choose other ports (--namesrv-port, "
                                f"--broker-port)")
    home.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(home, spec.name, namesrv_port, procs,
                      isolated=bool(os.environ.get(ENV_ISOLATED)), broker_heap_mb=broker_heap_mb)
    _write_configs(cluster, min(trace_brokers, brokers))
    try:
        for p in procs:
            _start(cluster, p, cp, timeout_s)
        _wait_registered(cluster, timeout_s)
    except BaseException:
        down(home)
        raise
    return cluster


def _start(cluster: Cluster, p: Process, cp: str, timeout_s: float) -> None:
    """Start one server process of the cluster (its output appended to ``stdout.log``), record
    its pid, and wait until it accepts connections."""
    out = Path(p.folder) / "stdout.log"
    with out.open("ab") as sink:
        proc = subprocess.Popen(_command(cluster, p, cp, cluster.broker_heap_mb),
                                env=dict(os.environ, ROCKETMQ_HOME=str(cluster.home)),
                                stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=p.folder, start_new_session=True)
    p.pid = proc.pid
    cluster.save()
    _wait_ready(cluster, p, proc, timeout_s)


def _wait_ready(cluster: Cluster, p: Process, proc: subprocess.Popen[bytes],
                timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LiveError(f"{p.name} exited with {proc.returncode} while starting; its "
                            f"output ({Path(p.folder) / 'stdout.log'}):\n"
                            f"{_tail(Path(p.folder) / 'stdout.log')}")
        if _accepts(p.port):
            return
        time.sleep(0.2)
    raise LiveError(f"{p.name} did not accept connections on 127.0.0.1:{p.port} within "
                    f"{timeout_s:.0f} s; its output:\n{_tail(Path(p.folder) / 'stdout.log')}")


def _wait_registered(cluster: Cluster, timeout_s: float) -> None:
    """Wait until every broker said it booted, then until the name server lists every broker
    (upstream's ``mqadmin clusterList``): a broker registers a moment after it boots."""
    deadline = time.monotonic() + timeout_s
    pending = {p.name: Path(p.folder) / "stdout.log" for p in cluster.brokers() + cluster.slaves()}
    _wait_booted(pending, deadline, boots=1)
    _wait_listed(cluster, {_listed_as(p) for p in cluster.brokers() + cluster.slaves()},
                 deadline, timeout_s)


def _listed_as(p: Process) -> str:
    """What ``clusterList`` shows of a server: a master's name, a slave's address (it shares
    its master's name, with ``BID`` 1)."""
    return f"127.0.0.1:{p.port}" if p.role == "slave" else p.name


def _boots(path: Path) -> int:
    try:
        return path.read_text("utf-8", "replace").count("boot success")
    except OSError:
        return 0


def _wait_booted(pending: dict[str, Path], deadline: float, boots: int) -> None:
    """Wait until each broker's output says "boot success" ``boots`` times."""
    while pending and time.monotonic() < deadline:
        for name, out in list(pending.items()):
            if _boots(out) >= boots:
                del pending[name]
        time.sleep(0.2)
    if pending:
        raise LiveError(f"brokers {', '.join(sorted(pending))} did not report 'boot success' "
                        f"in time")


def _wait_listed(cluster: Cluster, missing: set[str], deadline: float, timeout_s: float) -> None:
    while True:
        listing = admin(cluster, "clusterList")
        missing = {n for n in missing if not any(
            n in ln.split() for ln in listing.splitlines())}
        if not missing:
            return
        if time.monotonic() > deadline:
            raise LiveError(f"the name server does not list {', '.join(sorted(missing))} "
                            f"within {timeout_s:.0f} s:\n{listing[-1500:]}")
        time.sleep(1.0)


def create_topic(cluster: Cluster, topic: str, queues: int = 4) -> None:
    """Create ``topic`` with ``queues`` read and write queues on every broker (``mqadmin
    updateTopic -b`` per broker address, so it does not depend on the name server's view)."""
    for p in cluster.brokers():
        admin(cluster, "updateTopic", "-b", f"127.0.0.1:{p.port}", "-t", topic,
              "-r", str(queues), "-w", str(queues))


def down(home: Path | str, timeout_s: float = 20.0) -> list[str]:
    """Stop the processes recorded for ``home``: every other process first, all at once (each
    gets ``SIGTERM`` and ``timeout_s`` to shut down, then ``SIGKILL``), then the name servers,
    so that the brokers can unregister; returns the names stopped. Only processes whose command
    line carries this home's marker are signalled."""
    home = _home(home)
    cluster = Cluster.load(home)
    stopped = []
    for wave in ([p for p in cluster.processes if p.role != "namesrv"],
                 [p for p in cluster.processes if p.role == "namesrv"]):
        ours = [p for p in wave if p.pid and _ours(p.pid, home)]
        for p in ours:
            os.kill(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while any(_ours(p.pid, home) for p in ours) and time.monotonic() < deadline:
            for p in ours:
                _reap(p.pid)
            time.sleep(0.1)
        for p in ours:
            if _ours(p.pid, home):
                os.kill(p.pid, signal.SIGKILL)
                while _ours(p.pid, home):
                    _reap(p.pid)
                    time.sleep(0.05)
            stopped.append(p.name)
        for p in wave:
            _reap(p.pid)
    return stopped


def _reap(pid: int) -> None:
    """Collect ``pid``'s exit status if it is our child (so it does not linger as a zombie)."""
    if pid <= 0:
        return
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def status(home: Path | str) -> dict[str, Any]:
    """Each recorded process: its pid, port, whether it runs, and whether it accepts
    connections *from here* (outside an isolated cluster's namespace, nothing does)."""
    cluster = Cluster.load(home)
    return {"home": str(cluster.home), "line": cluster.line,
            "namesrv": cluster.namesrv_addr, "isolated": cluster.isolated,
            "processes": [{"name": p.name, "pid": p.pid, "port": p.port,
                           "running": _ours(p.pid, cluster.home),
                           "accepting": _ours(p.pid, cluster.home) and _accepts(p.port)}
                          for p in cluster.processes]}


def admin(cluster: Cluster, *args: str, timeout_s: float = 120.0) -> str:
    """Run upstream's ``mqadmin`` (``MQAdminStartup``) against the cluster's name server and
    return what it printed. Under an isolated cluster, call it inside the namespace."""
    spec = line(cluster.line)
    cp = class_path(resolve(spec.name, "server"))
    run = subprocess.run([java(), "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                          f"-Duser.home={cluster.home / 'admin'}",
                          "-Djava.net.preferIPv4Stack=true", "-cp", cp, spec.admin_main,
                          *args, "-n", cluster.namesrv_addr],
                         capture_output=True, text=True, timeout=timeout_s, check=False,
                         env=dict(os.environ, ROCKETMQ_HOME=str(cluster.home)))
    if run.returncode != 0:
        raise LiveError(f"mqadmin {' '.join(args)} failed ({run.returncode}):\n"
                        f"{run.stdout[-2000:]}{run.stderr[-2000:]}")
    return run.stdout


def isolation_prefix() -> list[str]:
    """The command prefix that runs a program in a new, private network namespace (only a
    loopback interface, brought up), as an unprivileged user where the kernel allows it."""
    unshare = shutil.which("unshare")
    if not unshare:
        raise LiveError("unshare (util-linux) not found: isolated clusters need it")
    return [unshare, "--map-root-user", "--net", "--", "sh", "-c",
            "ip link set lo up 2>/dev/null || true; exec \"$@\"", "rocketlb-live"]


def run_isolated(argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in a private network namespace (see ``isolation_prefix``)."""
    env = dict(kwargs.pop("env", None) or os.environ, **{ENV_ISOLATED: "1"})
    return subprocess.run([*isolation_prefix(), *argv], env=env, text=True, **kwargs)


STOP_GRACE_S = 120.0
"""How long a run in the namespace has to stop its cluster after SIGTERM before SIGKILL."""


def wait_isolated(argv: Sequence[str]) -> int:
    """Run ``argv`` in a private network namespace and return its exit status. Interrupted
    (Ctrl-C, or SIGTERM raised as ``cli.Terminated``), it sends the run SIGTERM and waits up
    to ``STOP_GRACE_S`` for it, so the run's own ``finally`` stops its cluster by pid (the
    namespace's prefix execs the program: the signal reaches it), then re-raises."""
    env = dict(os.environ, **{ENV_ISOLATED: "1"})
    proc = subprocess.Popen([*isolation_prefix(), *argv], env=env)
    try:
        return proc.wait()
    except BaseException:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise


DRIVER = "Driver.java"
"""The ``live/java/`` class every driver extends: its rows' JSON quoting, its optional
arguments, waiting for its go or stop file, a gRPC client's start tried again. Plain JDK, so
one build serves every line: compiled once per cluster for the remoting drivers
(``driver_classes``) and with the gRPC drivers' log binding (``_grpc_class_path``)."""


def _driver_source(name: str) -> str:
    """The path of ``live/java/<name>``."""
    from importlib import resources

    return str(resources.files("rocketlb_core.live") / "java" / name)


def _javac(classes: Path, sources: Sequence[str], cp: str | None, what: str) -> None:
    """Compile the ``live/java/`` ``sources`` (on the class path ``cp``, if any) into the
    folder ``classes``, emptied first; a failure is a ``LiveError`` naming ``what``."""
    shutil.rmtree(classes, ignore_errors=True)
    javac = Path(java()).with_name("javac")
    built = subprocess.run([str(javac) if javac.is_file() else find_tool("javac", "install a JDK"),
                            "-encoding", "UTF-8", "-d", str(classes),
                            *(["-cp", cp] if cp else []), *map(_driver_source, sources)],
                           capture_output=True, text=True, timeout=300, check=False)
    if built.returncode != 0:
        raise LiveError(f"javac of {what} failed:\n{built.stderr[-1500:]}")


_DRIVER_BUILD = threading.Lock()


def driver_classes(cluster: Cluster) -> Path:
    """``DRIVER`` compiled once per cluster, into ``<home>/driver``: the folder first on a
    remoting driver's class path (a single-file source launch compiles its own file only)."""
    classes = cluster.home / "driver"
    with _DRIVER_BUILD:
        if not (classes / "Driver.class").is_file():
            _javac(classes, (DRIVER,), None, "the drivers' shared class")
    return classes


def _driver_java(cluster: Cluster, home: Path, log_root: str, cp: str) -> list[str]:
    """``java`` for a driver on the class path ``cp``: a small heap, the cluster's marker (so
    ``down`` may stop it), ``home`` as its user.home, its client's log under
    ``home/logs/rocketmqlogs`` (the system property ``log_root`` says where)."""
    return [java(), "-Xmx128m", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true",
            f"-D{MARKER_PROP}={cluster.home}", f"-Duser.home={home}",
            f"-D{log_root}={home / 'logs' / 'rocketmqlogs'}", "-cp", cp]


def _client_command(cluster: Cluster, home: Path, source: str) -> list[str]:
    """``java`` running ``live/java/<source>`` on ``driver_classes`` and the line's client
    jars, ``home`` as its user.home and log root (``_driver_java``)."""
    jars = class_path(resolve(line(cluster.line).name, "client"))
    return [*_driver_java(cluster, home, "rocketmq.client.logRoot",
                          f"{driver_classes(cluster)}{os.pathsep}{jars}"),
            _driver_source(source)]


def _client_home(cluster: Cluster, name: str, signal_file: str) -> tuple[Path, Path]:
    """A client's folder, ``<home>/clients/<name>`` (made if missing), and its ``signal_file``
    there (the file its driver waits for: ``go`` or ``stop``), removed."""
    home = cluster.home / "clients" / name
    home.mkdir(parents=True, exist_ok=True)
    signal_path = home / signal_file
    signal_path.unlink(missing_ok=True)
    return home, signal_path


def _track(cluster: Cluster, name: str, role: str, proc: subprocess.Popen[Any],
           home: Path) -> None:
    """Add a started client's process to the cluster's record, so ``down`` may stop it."""
    cluster.processes.append(Process(name, role, 0, proc.pid, str(home)))
    cluster.save()


@dataclass
class Producer:
    """A running ``Produce.java`` (upstream's ``DefaultMQProducer``): it writes one JSON line per
    send to ``output`` (a file, so it never blocks on a pipe nobody reads)."""

    instance: str
    process: subprocess.Popen[bytes]
    output: Path
    go_file: Path
    count: int
    home: Path

    @property
    def client_log(self) -> Path:
        return self.home / "logs" / "rocketmqlogs" / "rocketmq_client.log"


def start_producer(cluster: Cluster, topic: str, count: int, *, group: str = "rocketlb_live",
                   interval_ms: int = 0, fault_tolerance: bool = False,
                   instance: str = "live-1", trace: bool = False, go: bool = True,
                   mode: str = "sync", keys: int = 0, threads: int = 1, batch: int = 0,
                   retry_not_stored: bool = False, named_bodies: bool = False,
                   back_pressure: int = 0, timeout_s: float = 120.0) -> Producer:
    """Start upstream's ``DefaultMQProducer`` of the cluster's line, to send ``count`` messages
    (``live/java/Produce.java`` on the client jars), and wait until it has started. It sends
    once ``go(producer)`` is called (at once when ``go`` is true); ``collect_sends`` waits for
    it and returns its rows. ``mode`` is how it sends: ``sync``, ``hash`` (ordered, by
    ``SelectMessageQueueByHash`` over ``keys`` keys), ``oneway`` or ``batch`` (``batch``
    messages a send; issue 45); ``threads`` application threads share it (each row then has
    its ``thread``); ``retry_not_stored`` sets ``retryAnotherBrokerWhenNotStoreOK``, and
    ``named_bodies`` gives every message the body ``<instance>/m<seq>`` (a oneway one has it
    anyway), so a dump of the topic tells whose each stored copy is; ``back_pressure`` N (an
    async producer on a 5.x line; 0: off) sets ``enableBackpressureForAsyncMode`` and
    ``backPressureForAsyncSendNum`` N."""
    home, go_file = _client_home(cluster, instance, "go")
    return _launch_producer(
        cluster, instance, count, go, timeout_s, home, go_file, "producer",
        [*_client_command(cluster, home, "Produce.java"), cluster.namesrv_addr, topic, group,
         str(count), str(interval_ms), "on" if fault_tolerance else "off", instance,
         "on" if trace else "off", str(go_file), mode, str(keys), str(threads), str(batch),
         "on" if retry_not_stored else "off", "on" if named_bodies else "off",
         str(back_pressure)])


def _launch_producer(cluster: Cluster, instance: str, count: int, go: bool, timeout_s: float,
                     home: Path, go_file: Path, what: str, command: list[str],
                     env: dict[str, str] | None = None) -> Producer:
    """Run a producer driver's ``command`` (its rows to ``home/sends.jsonl``), wait until it
    has started, and let it send at once when ``go``."""
    output = home / "sends.jsonl"
    with output.open("wb") as sink:
        proc = subprocess.Popen(command, stdout=sink, stderr=(home / "stderr.log").open("ab"),
                                stdin=subprocess.DEVNULL, start_new_session=True, env=env)
    producer = Producer(instance, proc, output, go_file, count, home)
    _track(cluster, instance, "producer", proc, home)
    _await_started(proc, output, timeout_s, f"{what} {instance}", home)
    if go:
        start_sending(producer)
    return producer


def _await_started(proc: subprocess.Popen[Any], output: Path, timeout_s: float, what: str,
                   home: Path) -> None:
    """Wait until a driver (``Produce.java``, ``GrpcProduce.java``, ``GrpcConsume.java``)
    printed its ``started`` line; if it exits or ``timeout_s`` passes first, stop it and raise
    ``LiveError`` with the tail of its ``stderr.log``."""
    deadline = time.monotonic() + timeout_s
    while not output.read_bytes().startswith(b'{"started"'):
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            raise LiveError(f"{what} did not start; {_tail(home / 'stderr.log')}")
        time.sleep(0.05)


def start_sending(producer: Producer) -> None:
    """Let a started producer send."""
    producer.go_file.touch()


def collect_sends(producer: Producer, timeout_s: float = 600.0) -> list[dict[str, Any]]:
    """Wait for a ``start_producer`` driver and return, per send, where the real client stored
    it (``broker``, ``queue``) or the error it got, with ``sent_ms`` (its wall clock)."""
    try:
        producer.process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        producer.process.kill()
        producer.process.wait()
    text = producer.output.read_text("utf-8", "replace")
    rows = [json.loads(x) for x in text.splitlines() if x.startswith("{")]
    if producer.process.returncode != 0 or not rows or rows[-1] != {"done": producer.count}:
        raise LiveError(f"the producer driver failed ({producer.process.returncode}):\n"
                        f"{text[-1500:]}{_tail(producer.home / 'stderr.log', 30)}")
    # several sending threads print their rows as they finish: in seq order, as one thread's
    return sorted(rows[1:-1], key=lambda r: int(r["seq"]))


def signal_broker(cluster: Cluster, name: str, sig: int) -> None:
    """Send ``sig`` to a broker or slave of the cluster: ``SIGSTOP`` pauses it (a silent host:
    its connections stay open and nothing answers), ``SIGCONT`` resumes it."""
    p = cluster.server(name)
    if not _ours(p.pid, cluster.home):
        raise LiveError(f"{name} is not running")
    os.kill(p.pid, sig)


def restart_broker(cluster: Cluster, name: str, timeout_s: float = 120.0) -> None:
    """Start a stopped or killed broker or slave again on its own store and configuration, and
    wait until it booted and the name server lists it again."""
    p = cluster.server(name)
    if _ours(p.pid, cluster.home):
        raise LiveError(f"{name} is still running; kill it first")
    out = Path(p.folder) / "stdout.log"
    boots = _boots(out)
    _start(cluster, p, class_path(resolve(line(cluster.line).name, "server")), timeout_s)
    deadline = time.monotonic() + timeout_s
    _wait_booted({name: out}, deadline, boots + 1)
    _wait_listed(cluster, {_listed_as(p)}, deadline, timeout_s)


def kill_broker(cluster: Cluster, name: str) -> None:
    """SIGKILL a broker or slave of the cluster: its connections reset, as when its process
    dies."""
    p = cluster.server(name)
    if _ours(p.pid, cluster.home):
        os.kill(p.pid, signal.SIGKILL)
        while _ours(p.pid, cluster.home):
            _reap(p.pid)
            time.sleep(0.05)


def _fastjson(text: str) -> Any:
    """Parse what ``mqadmin`` prints with fastjson: JSON, except that integer map keys are not
    quoted (``"brokerAddrs":{0:"127.0.0.1:10911"}``)."""
    import re

    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("{")), None)
    if start is None:
        raise ValueError("no JSON object in the output")
    body = "\n".join(lines[start:])
    return json.loads(re.sub(r'([{,]\s*)(-?\d+)\s*:', r'\1"\2":', body))


def set_consume_mode(cluster: Cluster, topic: str, group: str, mode: str,
                     pop_share: int = -1) -> None:
    """Set ``group``'s request mode on ``topic`` on every broker of the cluster (upstream's
    ``mqadmin setConsumeMode -c CLUSTER -t TOPIC -g GROUP -m MODE -q POP_SHARE``: a
    ``SET_MESSAGE_REQUEST_MODE`` to each master; 5.x): ``PULL`` or ``POP``, with
    ``popShareQueueNum``."""
    admin(cluster, "setConsumeMode", "-c", CLUSTER_NAME, "-t", topic, "-g", group,
          "-m", mode, "-q", str(pop_share))


def topic_route(cluster: Cluster, topic: str, *, brokers: int = 1,
                wait_s: float = 30.0) -> TopicRoute:
    """The topic's route as the cluster's name server answers it (``mqadmin topicRoute``),
    parsed into the package's ``TopicRoute``: what every client of the cluster builds its
    publish list and subscribe set from. Waits up to ``wait_s`` for a route that names at least
    ``brokers`` brokers (a topic just created reaches the name server as each broker
    registers)."""
    deadline = time.monotonic() + wait_s
    while True:
        text = admin(cluster, "topicRoute", "-t", topic)
        try:
            data = _fastjson(text)
            qds = tuple(QueueData(q["brokerName"], int(q["readQueueNums"]),
                                  int(q["writeQueueNums"]), int(q["perm"]))
                        for q in data["queueDatas"])
            bds = tuple(BrokerData(b["brokerName"],
                                   {int(k): v for k, v in b["brokerAddrs"].items()},
                                   b.get("cluster", CLUSTER_NAME)) for b in data["brokerDatas"])
            if len(qds) >= brokers:
                return TopicRoute(qds, bds)
            problem = f"{len(qds)} of {brokers} brokers"
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            problem = str(exc)
        if time.monotonic() > deadline:
            raise LiveError(f"mqadmin topicRoute -t {topic} gave no usable route within "
                            f"{wait_s:.0f} s ({problem}):\n{text[-1500:]}")
        time.sleep(1.0)


@dataclass
class Consumer:
    """A running ``Consume.java`` (upstream's ``DefaultMQPushConsumer``) or ``LitePull.java``
    (its ``DefaultLitePullConsumer``)."""

    instance: str
    process: subprocess.Popen[str]
    stop_file: Path
    home: Path                          # its user.home: logs/rocketmqlogs/rocketmq_client.log
    name: str = ""                      # its folder and process name
    start_error: str | None = None      # start() threw, the instance runs on (Consume.java)

    @property
    def client_log(self) -> Path:
        return self.home / "logs" / "rocketmqlogs" / "rocketmq_client.log"


def start_consumer(cluster: Cluster, topic: str, group: str, instance: str,
                   name: str | None = None, timeout_s: float = 120.0,
                   trace: bool = False, strategy: str = "AVG",
                   subscription: str = "*", model: str = "CLUSTERING",
                   listener: str = "concurrently", kind: str = "push",
                   assign: Sequence[str] = (), rebalance: str = "client",
                   consumes: bool = False) -> Consumer:
    """Start a push consumer of ``group`` on ``topic`` with instance name ``instance`` (its
    client id is ``127.0.0.1@<instance>`` inside an isolated cluster), and wait until it has
    started. ``name`` (default: the instance name) names its folder and process; two consumers
    with one instance name need two names. ``strategy`` (``AVG``, ``AVG_BY_CIRCLE``,
    ``CONSISTENT_HASH``), ``subscription`` (a tag expression), ``model`` (``CLUSTERING`` or
    ``BROADCASTING``) and ``listener`` (``concurrently`` or ``orderly``) are ``Consume.java``'s.
    ``kind="lite-pull"`` starts ``LitePull.java`` instead (upstream's
    ``DefaultLitePullConsumer``: subscribed, or with ``assign`` its own queues, ``broker/id``);
    it takes none of the push consumer's options. ``rebalance="broker"`` (5.x clients): the
    push consumer asks a broker for its queues (``setClientRebalance(false)``) and writes
    ``offsets.json``. ``consumes``: a concurrently consuming push consumer writes
    ``consumes.jsonl`` as an orderly one does (every message, its queue, offset and time). Stop
    it with ``stop_consumer`` (clean) or ``kill_consumer`` (a
    crash)."""
    name = name or instance
    home, stop = _client_home(cluster, name, "stop")
    command = ([*_client_command(cluster, home, "LitePull.java"), cluster.namesrv_addr, topic,
                group, instance, str(stop), "on" if trace else "off", ",".join(assign)]
               if kind == "lite-pull" else
               [*_client_command(cluster, home, "Consume.java"), cluster.namesrv_addr, topic,
                group, instance, str(stop), "on" if trace else "off", strategy, subscription,
                model, listener, rebalance, *(["consumes"] if consumes else [])])
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE, stderr=(home / "stderr.log").open("ab"), text=True,
        stdin=subprocess.DEVNULL, start_new_session=True)
    consumer = Consumer(instance, proc, stop, home, name)
    return _await_consumer(cluster, consumer, timeout_s, "consumer")


def _await_consumer(cluster: Cluster, consumer: Consumer, timeout_s: float,
                    what: str) -> Consumer:
    """Track a started consumer driver and wait for its ``started`` line (its ``start_error``
    noted); if it exits or ``timeout_s`` passes first, kill it and raise ``LiveError`` with the
    tail of its ``stderr.log``."""
    proc, home = consumer.process, consumer.home
    _track(cluster, consumer.name, "consumer", proc, home)
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        # the driver prints whole lines; wait for one with the deadline, not in readline
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        line_out = proc.stdout.readline()
        if line_out.startswith('{"started"'):
            consumer.start_error = json.loads(line_out).get("start_error")
            return consumer
        if not line_out and proc.poll() is not None:
            break
    kill_consumer(consumer)
    raise LiveError(f"{what} {consumer.instance} did not start; "
                    f"{_tail(home / 'stderr.log')}")


@dataclass
class GoConsumer(Consumer):
    """A running ``live/go`` driver: rocketmq-client-go's push consumer (issue 47). Its log is
    the Go client's own, ``rocketmq-client-go.log``; ``stop_consumer`` and ``kill_consumer``
    stop it as they stop ``Consume.java``."""

    @property
    def client_log(self) -> Path:
        return self.home / "logs" / "rocketmqlogs" / "rocketmq-client-go.log"


GO_STRATEGIES = ("AVG", "CONSISTENT_HASH")


def go_driver() -> Path:
    """The live Go driver's binary (``live/go``, the Go client ``GO_CLIENT_VERSION``), built
    once into the cache (``jars.go_build``)."""
    from importlib import resources

    from rocketlb_core.live.jars import GO_CLIENT_VERSION, go_build

    source = Path(str(resources.files("rocketlb_core.live") / "go"))
    return go_build(source, cache_root() / "live" / f"go-client-{GO_CLIENT_VERSION}" / "driver")


def start_go_consumer(cluster: Cluster, topic: str, group: str, instance: str,
                      name: str | None = None, timeout_s: float = 120.0,
                      strategy: str = "AVG") -> GoConsumer:
    """Start the Go client's push consumer of ``group`` on ``topic`` with instance name
    ``instance`` (``strategy``: ``AVG`` or ``CONSISTENT_HASH``), and wait until it has started
    (its client id is ``<address>@<instance>``; with no address but the loopback, as in an
    isolated cluster, the Go client's address is empty: ``@<instance>``)."""
    if strategy not in GO_STRATEGIES:
        raise LiveError(f"the Go driver's strategy is one of {', '.join(GO_STRATEGIES)}, "
                        f"not {strategy!r}")
    name = name or instance
    binary = go_driver()
    home, stop = _client_home(cluster, name, "stop")
    proc = subprocess.Popen(
        [str(binary), "consume", cluster.namesrv_addr, topic, group, instance, str(stop),
         strategy],
        stdout=subprocess.PIPE, stderr=(home / "stderr.log").open("ab"), text=True,
        stdin=subprocess.DEVNULL, start_new_session=True, env=dict(os.environ, HOME=str(home)))
    consumer = GoConsumer(instance, proc, stop, home, name)
    _await_consumer(cluster, consumer, timeout_s, "Go consumer")
    return consumer


def start_go_producer(cluster: Cluster, topic: str, count: int, *, group: str,
                      interval_ms: int = 0, instance: str = "go-1", go: bool = True,
                      timeout_s: float = 120.0) -> Producer:
    """Start the Go client's producer (``live/go``: ``NewRoundRobinQueueSelector``,
    ``RetryTimes`` 3, ``SendSync``) to send ``count`` messages, and wait until it has started;
    it sends once ``start_sending`` is called (at once when ``go``), and writes the Java
    driver's rows (``collect_sends``)."""
    binary = go_driver()
    home, go_file = _client_home(cluster, instance, "go")
    return _launch_producer(
        cluster, instance, count, go, timeout_s, home, go_file, "Go producer",
        [str(binary), "produce", cluster.namesrv_addr, topic, group, instance, str(count),
         str(interval_ms), str(go_file)], env=dict(os.environ, HOME=str(home)))


def stop_consumer(consumer: Consumer, timeout_s: float = 60.0) -> None:
    """A clean shutdown: offsets persisted, unregistered from every broker."""
    consumer.stop_file.touch()
    try:
        consumer.process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_consumer(consumer)
        raise LiveError(f"consumer {consumer.instance} did not shut down within "
                        f"{timeout_s:.0f} s") from None


def kill_consumer(consumer: Consumer) -> None:
    """A crash: SIGKILL, nothing unregistered (its connections close with the process)."""
    if consumer.process.poll() is None:
        consumer.process.kill()
    consumer.process.wait()


def consumer_ids(cluster: Cluster, group: str, broker: str = "broker-a") -> list[str]:
    """The client ids ``broker`` lists for ``group`` (upstream's ``mqadmin consumerConnection``:
    one row per connection, so a duplicated id appears twice), sorted."""
    addr = next(f"127.0.0.1:{p.port}" for p in cluster.brokers() if p.name == broker)
    try:
        text = admin(cluster, "consumerConnection", "-g", group, "-b", addr)
    except LiveError as exc:
        if "Not found the consumer group connection" in str(exc):
            return []
        raise
    ids = []
    for row in text.splitlines():            # "#ClientId #ClientAddr #Language #Version"
        if row.startswith("Below is subscription"):
            break
        cells = row.split()
        if len(cells) >= 4 and "@" in cells[0] and not cells[0].startswith("#"):
            ids.append(cells[0])
    return sorted(ids)


def jvms_under(root: Path) -> list[int]:
    """Pids of this user's JVMs that a live recording started with its scratch folder
    (``rocketlb-live-*``, made by ``tempfile``) under ``root``: their ``MARKER_PROP`` names it.
    A recording someone else runs on this machine is never counted (the tests and
    ``bench/live_soak.py`` kill what this returns, by pid)."""
    prefix = f"-D{MARKER_PROP}={Path(root).resolve()}/".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a.startswith(prefix) and b"/rocketlb-live-" in a for a in cmdline):
            pids.append(int(proc.name))
    return pids


# ---------------------------------------------------------------- the Proxy and its gRPC clients
# (issue 34, item 3). RocketMQ 5's Proxy (``rocketmq-proxy``, ``ProxyStartup``) in cluster mode:
# a process of its own between the gRPC clients and the brokers, which it finds through the
# cluster's name server. Its jars, and the gRPC client's (``rocketmq-client-java``, one shaded
# jar), are resolved from Maven Central into the same cache folders ``vectorgen`` uses.

PROXY_MAIN = "org.apache.rocketmq.proxy.ProxyStartup"
PROXY_NAME = "proxy"
GRPC_CLIENT_VERSION = "5.0.8"
"""``org.apache.rocketmq:rocketmq-client-java``: the gRPC client ``rocketlb_core.grpc`` ports."""
GRPC_LOG_BINDING = ("StaticLoggerBinder.java", "LoggingEventAware.java", "LoggingEventBuilder.java")
"""``live/java/`` sources compiled onto the gRPC client's class path: rocketmq-client-java 5.0.8's
shaded slf4j-api 1.7.30 finds no binding for its shaded logback 1.3.15, so without them the
client logs nothing (``StaticLoggerBinder.java`` says more)."""
PROXY_WILDCARD = """\
rocketmq-proxy {version} binds its two ports on every interface: the gRPC server is
NettyServerBuilder.forPort(grpcServerPort) (GrpcServerBuilder), the remoting server a
NettyServerConfig whose bindAddress is left at 0.0.0.0 (RemotingProtocolServer); ProxyConfig
has no bind address. It is started only in an isolated cluster (up inside run_isolated: the
namespace's loopback is its only interface), unless wildcard=True."""


def artifact_jars(artifact: str, version: str) -> list[Path]:
    """``org.apache.rocketmq:<artifact>:<version>`` and its runtime dependencies, resolved once
    into ``<cache>/vectors/<artifact>-<version>`` (the folder ``vectorgen`` resolves into)."""
    from rocketlb_core.atomic import MARKER
    from rocketlb_core.live.jars import cache_root, resolve_maven

    folder = cache_root() / "vectors" / f"{artifact}-{version}"
    if (folder / MARKER).is_file() and any(folder.glob("*.jar")):
        return sorted(folder.glob("*.jar"))
    return resolve_maven([f"org.apache.rocketmq:{artifact}:{version}"], folder,
                         f"{artifact} {version}")


def proxy_version(cluster: Cluster) -> str:
    """The Proxy's release: the cluster's server version (a 5.x line; 4.x has no Proxy)."""
    version = line(cluster.line).server_version
    if not version.startswith("5"):
        raise LiveError(f"line {cluster.line} runs RocketMQ {version}: the Proxy came with 5.0")
    return version


def proxy(cluster: Cluster) -> Process | None:
    """The cluster's Proxy as recorded, if ``start_proxy`` started one."""
    return next((p for p in cluster.processes if p.role == "proxy"), None)


def proxy_endpoints(cluster: Cluster) -> str:
    """``127.0.0.1:<grpc port>``: what a gRPC client is given as its endpoints."""
    p = proxy(cluster)
    if p is None:
        raise LiveError("no Proxy was started in this cluster (start_proxy)")
    return f"127.0.0.1:{p.port}"


def _proxy_config(cluster: Cluster, grpc_port: int, remoting_port: int) -> dict[str, Any]:
    """``rmq-proxy.json``: ProxyConfig's keys (rocketmq-proxy 5.3.3,
    ``proxy/config/ProxyConfig.java``); every other key keeps upstream's default (among them
    ``sendLatencyEnable`` false: the Proxy picks queues by its counter alone)."""
    return {"rocketMQClusterName": CLUSTER_NAME, "proxyName": PROXY_NAME,
            "namesrvAddr": cluster.namesrv_addr, "proxyMode": "cluster",
            "grpcServerPort": grpc_port, "remotingListenPort": remoting_port,
            "localServeAddr": "127.0.0.1",
            "enablePrintJstack": False,                # no jstack dumps into its log every 60 s
            "grpcShutdownTimeSeconds": 3,              # 30 s upstream: down waits for it
            "metricsExporterType": "DISABLE"}          # (the default: no Prometheus port)


def _proxy_command(cluster: Cluster, p: Process, cp: str, heap_mb: int) -> list[str]:
    folder = Path(p.folder)
    return [java(), f"-Xms{heap_mb}m", f"-Xmx{heap_mb}m", f"-XX:MaxDirectMemorySize={heap_mb}m",
            "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
            f"-D{MARKER_PROP}={cluster.home}", f"-Drocketmq.home.dir={cluster.home}",
            f"-Duser.home={folder}", f"-DRMQ_PROXY_HOME={folder}",
            # upstream's own logback file of the Proxy (logs/rocketmqlogs/proxy.log ...)
            f"-Drmq.logback.configurationFile={folder / 'rmq.proxy.logback.xml'}",
            "-cp", cp, PROXY_MAIN, "-pc", str(folder / "rmq-proxy.json"), "-pm", "cluster",
            "-n", cluster.namesrv_addr]


def start_proxy(cluster: Cluster, *, grpc_port: int = 28081, remoting_port: int = 28080,
                heap_mb: int = 256, wildcard: bool = False,
                timeout_s: float = 120.0) -> Process:
    """Start ``rocketmq-proxy`` of the cluster's line in cluster mode, pointing at the cluster's
    name server, its gRPC server on ``grpc_port`` and its remoting server on ``remoting_port``;
    wait until it said it started and accepts connections; record it (role ``proxy``, its pid)
    in ``cluster.json``, so ``down`` stops it by pid like the others. Its configuration,
    output and logs are under ``<home>/proxy``. Refused outside an isolated cluster unless
    ``wildcard`` (``PROXY_WILDCARD`` says why), and when a Proxy runs already."""
    import zipfile

    version = proxy_version(cluster)
    if not cluster.isolated and not wildcard:
        raise LiveError(PROXY_WILDCARD.format(version=version).replace("\n", " "))
    old = proxy(cluster)
    if old is not None and _ours(old.pid, cluster.home):
        raise LiveError(f"a Proxy of this cluster runs already (pid {old.pid})")
    for port in (grpc_port, remoting_port):
        if not _port_free(port):
            raise LiveError(f"port {port} on 127.0.0.1 is taken (needed by the Proxy); "
                            "choose other ports (grpc_port, remoting_port)")
    jars_ = artifact_jars("rocketmq-proxy", version)
    folder = cluster.home / PROXY_NAME
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rmq-proxy.json").write_text(
        json.dumps(_proxy_config(cluster, grpc_port, remoting_port), indent=1) + "\n",
        encoding="utf-8")
    main_jar = next(j for j in jars_ if j.name == f"rocketmq-proxy-{version}.jar")
    with zipfile.ZipFile(main_jar) as z:
        (folder / "rmq.proxy.logback.xml").write_bytes(z.read("rmq.proxy.logback.xml"))
    p = Process(PROXY_NAME, "proxy", grpc_port, folder=str(folder))
    cluster.processes = [q for q in cluster.processes if q.role != "proxy"] + [p]
    out = folder / "stdout.log"
    with out.open("ab") as sink:
        proc = subprocess.Popen(_proxy_command(cluster, p, class_path(jars_), heap_mb),
                                env=dict(os.environ, ROCKETMQ_HOME=str(cluster.home)),
                                stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=folder, start_new_session=True)
    p.pid = proc.pid
    cluster.save()
    try:
        _wait_ready(cluster, p, proc, timeout_s)
        deadline = time.monotonic() + timeout_s
        while "rocketmq-proxy startup successfully" not in _tail(out, 200):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise LiveError(f"the Proxy did not report 'startup successfully'; its output "
                                f"({out}):\n{_tail(out)}")
            time.sleep(0.2)
    except BaseException:
        stop_proxy(cluster)
        raise
    return p


def stop_proxy(cluster: Cluster, timeout_s: float = 40.0) -> bool:
    """Stop the cluster's Proxy by its recorded pid (SIGTERM; SIGKILL after ``timeout_s``: its
    shutdown hook waits up to ``grpcShutdownTimeSeconds``, 30 s); whether it was running."""
    p = proxy(cluster)
    if p is None or not p.pid or not _ours(p.pid, cluster.home):
        return False
    os.kill(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while _ours(p.pid, cluster.home) and time.monotonic() < deadline:
        _reap(p.pid)
        time.sleep(0.1)
    if _ours(p.pid, cluster.home):
        os.kill(p.pid, signal.SIGKILL)
        while _ours(p.pid, cluster.home):
            _reap(p.pid)
            time.sleep(0.05)
    _reap(p.pid)
    return True


def _grpc_class_path(home: Path, *extra: str) -> str:
    """rocketmq-client-java ``GRPC_CLIENT_VERSION``'s class path for a driver in ``home``, the
    jar's missing SLF4J binding (java/StaticLoggerBinder.java says why) compiled into
    ``home/log-binding`` and put first, so the client writes its log at all; with it
    ``DRIVER`` and the ``live/java`` sources ``extra``."""
    jar_cp = class_path(artifact_jars("rocketmq-client-java", GRPC_CLIENT_VERSION))
    classes = home / "log-binding"
    _javac(classes, (*GRPC_LOG_BINDING, DRIVER, *extra), jar_cp, "the gRPC client's log binding")
    return f"{classes}{os.pathsep}{jar_cp}"


_GRPC_CONSUMER_BUILD = threading.Lock()


def grpc_consumer_class_path(cluster: Cluster) -> str:
    """The class path of ``GrpcConsume.java``, compiled once per cluster (with the log binding,
    into ``<home>/grpc-consumer/log-binding``): each consumer's JVM then starts the compiled
    class, not its source (a source launch compiles it first, seconds of CPU: three consumers
    joining at once on a loaded two-core host took 20 s and more to start)."""
    folder = cluster.home / "grpc-consumer"
    with _GRPC_CONSUMER_BUILD:
        ready = folder / "class-path"
        if not ready.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            ready.write_text(_grpc_class_path(folder, "GrpcConsume.java"), encoding="utf-8")
        return ready.read_text(encoding="utf-8")


def _grpc_java(cluster: Cluster, home: Path, cp: str) -> list[str]:
    """``java`` for a gRPC driver (``_driver_java``): its log, ``rocketmq-client.log``, under
    ``home``."""
    return _driver_java(cluster, home, "rocketmq.log.root", cp)


@dataclass
class GrpcProducer(Producer):
    """A running ``GrpcProduce.java`` (rocketmq-client-java's ``Producer``, through the Proxy).
    Its rows are ``collect_sends``'s, with ``client_broker``/``client_queue`` (the queue the
    client chose, see the driver), ``offset`` and ``msg_id``."""

    language: str = "java"

    @property
    def client_log(self) -> Path:
        if self.language == "python":
            return self.home / "logs" / "rocketmq_python" / "rocketmq_client.log"
        return self.home / "logs" / "rocketmqlogs" / "rocketmq-client.log"


GRPC_LANGUAGES = ("java", "python")
"""The gRPC producers the recorder drives: rocketmq-client-java (``GrpcProduce.java``) and
rocketmq-python-client (``py/grpc_produce.py``, in its own venv: ``jars.python_client``)."""


def start_grpc_producer(cluster: Cluster, topic: str, count: int, *, interval_ms: int = 0,
                        max_attempts: int = 3, instance: str = "grpc-1", go: bool = True,
                        language: str = "java", timeout_s: float = 120.0) -> GrpcProducer:
    """``start_producer`` for the gRPC client: ``live/java/GrpcProduce.java`` on
    rocketmq-client-java ``GRPC_CLIENT_VERSION`` (or, ``language="python"``,
    ``live/py/grpc_produce.py`` on rocketmq-python-client ``jars.PYTHON_CLIENT_VERSION``, which
    takes its attempts from the Proxy's settings: ``max_attempts`` must be 3, the Proxy's
    ``grpcClientProducerMaxAttempts``), given the cluster's Proxy as its endpoints, to send
    ``count`` messages ``interval_ms`` apart (``maxAttempts``: ``max_attempts``). Its log
    (``rocketmq-client.log``, ``rocketmq.log.root``; the Python client's ``~/logs/
    rocketmq_python/rocketmq_client.log``, ``HOME`` set to its folder) is under its folder. It
    sends once ``start_sending`` is called (at once when ``go``); ``collect_sends`` returns its
    rows. The Python process carries the cluster's marker as its last argument, so ``down``
    may stop it by pid like a JVM."""
    if language not in GRPC_LANGUAGES:
        raise LiveError(f"language must be one of {', '.join(GRPC_LANGUAGES)}, not {language!r}")
    if language == "python" and max_attempts != 3:
        raise LiveError("the Python client takes maxAttempts from the Proxy (3): "
                        f"max_attempts {max_attempts} cannot be given to it")
    endpoints = proxy_endpoints(cluster)
    home, go_file = _client_home(cluster, instance, "go")
    output = home / "sends.jsonl"
    env = None
    if language == "python":
        from importlib import resources

        from rocketlb_core.live.jars import python_client

        driver = resources.files("rocketlb_core.live") / "py" / "grpc_produce.py"
        command = [str(python_client()), "-I", str(driver), endpoints, topic, str(count),
                   str(interval_ms), str(go_file), f"-D{MARKER_PROP}={cluster.home}"]
        env = dict(os.environ, HOME=str(home))
    else:
        cp, src = _grpc_class_path(home), _driver_source("GrpcProduce.java")
        command = [*_grpc_java(cluster, home, cp), src, endpoints, topic, str(count),
                   str(interval_ms), str(max_attempts), str(go_file)]
    with output.open("wb") as sink:
        proc = subprocess.Popen(command, stdout=sink, stderr=(home / "stderr.log").open("ab"),
                                stdin=subprocess.DEVNULL, start_new_session=True, env=env)
    producer = GrpcProducer(instance, proc, output, go_file, count, home, language)
    _track(cluster, instance, "producer", proc, home)
    _await_started(proc, output, timeout_s, f"gRPC producer {instance}", home)
    if go:
        start_sending(producer)
    return producer


GRPC_CONSUMER_KINDS = ("simple", "push")
"""``GrpcConsume.java``'s consumers: rocketmq-client-java's ``SimpleConsumer`` and
``PushConsumer``."""


@dataclass
class GrpcConsumer(Consumer):
    """A running ``GrpcConsume.java`` (rocketmq-client-java's ``SimpleConsumer`` or
    ``PushConsumer``, through the Proxy): its rows in ``output`` (``collect_receives``), its
    log ``rocketmq-client.log``. ``stop_consumer`` (a clean ``close()``) and ``kill_consumer``
    (a crash) stop it by its process, like ``Consume.java``."""

    kind: str = "simple"
    output: Path = Path()

    @property
    def client_log(self) -> Path:
        return self.home / "logs" / "rocketmqlogs" / "rocketmq-client.log"


def start_grpc_consumer(cluster: Cluster, topic: str, group: str, kind: str, *,
                        name: str = "grpc-c1", timeout_s: float = 120.0) -> GrpcConsumer:
    """Start ``live/java/GrpcConsume.java`` on rocketmq-client-java ``GRPC_CLIENT_VERSION``: a
    ``kind`` (``simple`` or ``push``) consumer of ``group`` subscribing every message of
    ``topic``, given the cluster's Proxy as its endpoints, and wait until it has started (its
    route fetched). Its folder and process are ``name``; its rows go to ``receives.jsonl``
    there (``collect_receives``), its log (``rocketmq-client.log``) under it."""
    if kind not in GRPC_CONSUMER_KINDS:
        raise LiveError(f"a gRPC consumer is one of {', '.join(GRPC_CONSUMER_KINDS)}, not {kind!r}")
    endpoints = proxy_endpoints(cluster)
    home, stop = _client_home(cluster, name, "stop")
    output = home / "receives.jsonl"
    cp = grpc_consumer_class_path(cluster)
    with output.open("w", encoding="utf-8") as sink:
        proc = subprocess.Popen([*_grpc_java(cluster, home, cp), "GrpcConsume", endpoints, topic,
                                 group, kind, str(stop)],
                                stdout=sink, stderr=(home / "stderr.log").open("ab"), text=True,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    consumer = GrpcConsumer(name, proc, stop, home, name, kind=kind, output=output)
    _track(cluster, name, "consumer", proc, home)
    _await_started(proc, output, timeout_s, f"gRPC {kind} consumer {name}", home)
    return consumer


def collect_receives(consumer: GrpcConsumer) -> list[dict[str, Any]]:
    """A stopped ``GrpcConsume.java``'s rows (``simple``: one per receive call; ``push``: one per
    consumed message), without its ``started`` and ``stopped`` lines; a line cut short by a
    crash is left out."""
    rows = []
    for text in consumer.output.read_text("utf-8", "replace").splitlines():
        if not text.startswith("{"):
            continue
        try:
            row = json.loads(text)
        except ValueError:
            continue                       # the last line of a killed process, half written
        if "started" not in row and "stopped" not in row:
            rows.append(row)
    return rows
