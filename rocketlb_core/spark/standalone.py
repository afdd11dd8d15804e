"""A Spark standalone cluster on this machine, from the installed PySpark alone (nothing
downloaded): one master and ``workers`` workers, each its own JVM process, all on 127.0.0.1.

The replay runs on it exactly as on a user's own cluster: the executors are other processes, with
their own Python workers, which is what ``local[*]`` never shows::

    with standalone_cluster(Path("/tmp/rlb-cluster"), workers=2) as cluster:
        replay_producers_spark(trace, out, ReplayConfig(), cluster.master)

or from a shell (the processes stay up until ``down``)::

    python -m rocketlb_core.spark.standalone up --dir /tmp/rlb-cluster --workers 2
    rocketlb replay producer --trace T --out O --engine spark --master spark://127.0.0.1:PORT
    python -m rocketlb_core.spark.standalone down --dir /tmp/rlb-cluster

Every process is started in a session (and so a process group) of its own; stopping sends
SIGTERM to each group, then SIGKILL after a grace period, so the executors and Python workers a
worker spawned go with it. Each daemon carries this folder's marker on its command line, a Java
system property ``-Drocketlb.standalone.home=<the folder, absolute>`` (through
``SPARK_DAEMON_JAVA_OPTS``; ``up`` checks that it arrived). ``down`` and ``status`` read the pids
from ``DIR/cluster.json`` as data, never trusted: they signal or report a pid only while its
``/proc/PID/cmdline`` carries this folder's marker and it leads its own process group, so a stale
or edited ``cluster.json`` cannot make them touch another process (another Spark's daemon, a
user's ``SparkSubmit``, a recycled pid). A ``cluster.json`` that is not one ``up`` wrote (not a
regular file, over 1 MiB, not JSON, a missing field, a pid that cannot be a daemon's) ends them
with exit status 2 and one line naming the file and the field (``rocketlb_core.cli``). Ports are
chosen by the JVMs (port 0) and read back from their logs; the master's REST submission server
is off. ``SPARK_LOCAL_IP=127.0.0.1`` makes every listener (RPC, web UIs, block managers) bind to
loopback.

Workers share this machine's file system, so any output folder works here; on a real cluster the
replay's output folder must be one path that the driver and every worker see (a shared mount),
because each task writes its part file there (README, "Spark on a cluster").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlb_core.cli import run
from rocketlb_core.errors import InputError, UsageError
from rocketlb_core.numbers import int_option
from rocketlb_core.paths import FileRefused, json_object, read_small_file
from rocketlb_core.paths import shown as _show
from rocketlb_core.spark.java import ensure_java

MARKER = "cluster.json"
TOOL = "rocketlb_core.spark.standalone"
MARKER_PROP = "rocketlb.standalone.home"    # -D<this>=<folder> on every daemon's command line
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
START_TIMEOUT_S = 180.0     # a loaded 2-core machine starts a JVM slowly
STOP_GRACE_S = 15.0
MAX_WORKERS = 64
MAX_STATE_BYTES = 1 << 20   # cluster.json: up writes about 200 bytes
PID_MAX = 1 << 22           # Linux's PID_MAX_LIMIT: no pid is larger
_MASTER_URL = re.compile(r"Starting Spark master at (spark://[\w.\-]+:\d+)")
_RECORDED_URL = re.compile(r"(spark://[\w.\-]{1,253}:\d{1,5})?")
_NAME = re.compile(r"master|worker-[1-9]\d{0,2}")
_REGISTERED = "Successfully registered with master"


class ClusterError(RuntimeError):
    """The cluster could not start (the message names the process and quotes its log)."""


class StateError(InputError):
    """The cluster's folder or its ``cluster.json`` is missing or not one ``up`` wrote (exit
    status 2; the message names the file and the field)."""


def spark_home() -> Path:
    """The installed PySpark's own Spark home (``bin/spark-class`` and ``jars/``)."""
    import pyspark

    home = Path(pyspark.__file__).parent
    if not (home / "bin" / "spark-class").is_file():
        raise ClusterError(f"{home}: this PySpark has no bin/spark-class")
    return home


def marker_arg(home: Path) -> str:
    """The argument every daemon of the cluster in ``home`` (absolute) carries."""
    return f"-D{MARKER_PROP}={home}"


def _java_opts_quote(arg: str) -> str:
    """``arg`` as one option of ``SPARK_DAEMON_JAVA_OPTS``: Spark's launcher splits that variable
    at white space and honours quotes and backslashes (``CommandBuilderUtils.parseOptionString``),
    so every character but a letter or digit is escaped with a backslash."""
    return "".join(c if c.isascii() and c.isalnum() else "\\" + c for c in arg)


@dataclass
class StandaloneCluster:
    """A master and its workers under ``folder`` (logs, work dirs, ``cluster.json``)."""

    folder: Path
    workers: int = 2
    cores: int = 1
    memory: str = "2g"
    master: str = ""
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        """The folder, absolute, as its marker names it."""
        return self.folder.resolve()

    def _env(self) -> dict[str, str]:
        ensure_java()
        env = dict(os.environ)
        env.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
                   SPARK_LOG_DIR=str(self.folder / "logs"), PYSPARK_PYTHON=sys.executable)
        env.pop("SPARK_CONF_DIR", None)
        opts = env.get("SPARK_DAEMON_JAVA_OPTS", "").strip()
        env["SPARK_DAEMON_JAVA_OPTS"] = " ".join(
            x for x in (opts, _java_opts_quote(marker_arg(self.home))) if x)
        return env

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        log = (self.folder / "logs" / f"{name}.log").open("ab")
        try:
            proc = subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *argv],
                                    stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, env=env, start_new_session=True)
        finally:
            log.close()
        self.pids[name] = proc.pid
        self._save()

    def _wait_for(self, name: str, pattern: re.Pattern[str] | str) -> str:
        """Wait until ``name``'s log shows ``pattern``; returns the match (or the line). Then
        the daemon must carry the folder's marker, or ``down`` could never stop it."""
        log = self.folder / "logs" / f"{name}.log"
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            text = log.read_text(errors="replace") if log.exists() else ""
            found: str | None = None
            if isinstance(pattern, str):
                found = pattern if pattern in text else None
            elif (m := pattern.search(text)) is not None:
                found = m.group(1)
            if found is not None:
                if not _ours(self.pids[name], self.home):
                    raise ClusterError(
                        f"the Spark {name} (pid {self.pids[name]}) does not carry the folder's "
                        f"marker {marker_arg(self.home)!r} on its command line, so down could "
                        "not find it; choose a --dir whose path has plain characters")
                return found
            if not _alive(self.pids[name]):
                raise ClusterError(f"the Spark {name} exited while starting; {log}:\n"
                                   + _tail(text))
            if time.monotonic() > deadline:
                raise ClusterError(f"the Spark {name} did not start within "
                                   f"{START_TIMEOUT_S:.0f} s; {log}:\n" + _tail(text))
            time.sleep(0.2)

    def _save(self) -> None:
        tmp = self.folder / (MARKER + ".tmp")
        tmp.write_text(json.dumps({"tool": TOOL, "master": self.master, "pids": self.pids},
                                  indent=1) + "\n")
        tmp.replace(self.folder / MARKER)

    def start(self) -> StandaloneCluster:
        """Start the master, then the workers; returns once every worker has registered."""
        _claim(self.folder)
        (self.folder / "logs").mkdir(exist_ok=True)
        props = self.folder / "spark-daemon.conf"
        props.write_text("spark.master.rest.enabled false\n")
        env = self._env()
        common = ["--host", "127.0.0.1", "--port", "0", "--webui-port", "0",
                  "--properties-file", str(props)]
        try:
            self._spawn("master", [MASTER_CLASS, *common], env)
            self.master = self._wait_for("master", _MASTER_URL)
            self._save()
            for i in range(1, self.workers + 1):
                work = self.folder / f"worker-{i}"
                work.mkdir(exist_ok=True)
                self._spawn(f"worker-{i}", [WORKER_CLASS, *common, "--cores", str(self.cores),
                                            "--memory", self.memory, "--work-dir", str(work),
                                            self.master], env)
            for i in range(1, self.workers + 1):
                self._wait_for(f"worker-{i}", _REGISTERED)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop every process group this cluster started (workers first), by pid: the pids
        ``Popen`` gave this process, not ones read from a file."""
        stop_pids(list(reversed(self.pids.values())))

    def work_dirs(self) -> list[Path]:
        return [self.folder / f"worker-{i}" for i in range(1, self.workers + 1)]


def _claim(folder: Path) -> None:
    """Use ``folder`` only if it is absent, empty or an earlier cluster of ours (stopped)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StateError(f"{_show(folder)}: cannot be the cluster's folder "
                         f"({exc.strerror or exc})") from None
    if os.path.lexists(folder / MARKER):
        state = load_state(folder)
        live = [p for p in state["pids"].values() if _ours(p, folder.resolve())]
        if live:
            raise ClusterError(f"{folder}: a cluster is still running there (pids {live}); "
                               "stop it first (python -m rocketlb_core.spark.standalone down "
                               f"--dir {folder})")
    elif any(folder.iterdir()):
        raise ClusterError(f"{folder}: not empty and not a rocketlb cluster folder; "
                           "choose another --dir")


# ---------------------------------------------------------------- cluster.json, as data

def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def cluster_home(folder: Path) -> Path:
    """``folder`` (the ``--dir`` of ``down``/``status``), absolute; a ``StateError`` if it is
    not an existing folder."""
    try:
        home = folder.resolve(strict=True)
    except FileNotFoundError:
        raise StateError(f"{_show(folder)}: no such folder (no cluster was started there)"
                         ) from None
    except RuntimeError:                         # Python 3.11: a symbolic link loop
        raise StateError(f"{_show(folder)}: a loop of symbolic links, not a cluster folder"
                         ) from None
    except OSError as exc:
        raise StateError(f"{_show(folder)}: cannot be read ({exc.strerror or exc})") from None
    if not home.is_dir():
        raise StateError(f"{_show(folder)}: not a folder (give the --dir that up was given)")
    return home


def _read_state(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file (not a link, FIFO or device) of at most
    ``MAX_STATE_BYTES``; never blocks, never reads more (``paths.read_small_file``)."""
    try:
        return read_small_file(path, MAX_STATE_BYTES)
    except FileRefused as exc:
        why = exc.says("the cluster record up writes")
        if exc.reason == "missing":
            why = "missing: no cluster was started in this folder"
        elif exc.reason == "not regular":
            why = f"{exc.detail}, not the cluster record up writes (a file)"
        raise StateError(f"{_show(path)}: {why}") from None


def load_state(folder: Path) -> dict[str, Any]:
    """``folder``'s ``cluster.json``, checked field by field: ``{"tool", "master", "pids"}``
    with each pid an integer a daemon could have (not 0, 1, negative, past Linux's largest pid,
    or this process). What it says is still only a claim: ``_ours`` decides which pids are the
    cluster's daemons."""
    path = folder / MARKER
    shown = _show(path)
    raw = _read_state(path)
    data = json_object(raw, shown, "not the cluster record up writes", StateError)
    if data.get("tool") != TOOL:
        raise StateError(f"{shown}: field tool: {_brief(data.get('tool'))}, not {TOOL!r}: not "
                         "a cluster record of this tool")
    master = data.get("master")
    if not isinstance(master, str) or not _RECORDED_URL.fullmatch(master):
        raise StateError(f"{shown}: field master: {_brief(master)} is not a spark:// URL "
                         "(or empty)")
    pids = data.get("pids")
    if not isinstance(pids, dict):
        raise StateError(f"{shown}: field pids: {'missing' if pids is None else _brief(pids)}; "
                         "up writes an object of daemon name to pid")
    if len(pids) > 1 + MAX_WORKERS:
        raise StateError(f"{shown}: field pids: {len(pids)} entries, more than a master and "
                         f"{MAX_WORKERS} workers")
    me = os.getpid()
    for name, pid in pids.items():
        if not _NAME.fullmatch(name):
            raise StateError(f"{shown}: field pids: {_brief(name)} is not a daemon's name "
                             "(master, worker-N)")
        if type(pid) is not int or not 1 < pid <= PID_MAX:
            raise StateError(f"{shown}: field pids.{name}: {_brief(pid)} is not a process id "
                             f"a daemon can have (an integer from 2 to {PID_MAX})")
        if pid == me:
            raise StateError(f"{shown}: field pids.{name}: {pid} is this command's own process, "
                             "not a daemon")
    return {"tool": TOOL, "master": master, "pids": dict(pids)}


# ---------------------------------------------------------------- processes

def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat_ = _stat_fields(pid)      # a zombie (exited, not yet reaped by us) is not alive
    return stat_ is not None and stat_[0] != b"Z"


def _stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state, ppid, pgrp, session,
    ...), or None if there is no such process. Bytes: a command name may be any bytes."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = raw.rsplit(b") ", 1)[-1].split()
    return fields if len(fields) > 3 else None


def _ours(pid: int, home: Path) -> bool:
    """Whether ``pid`` is a live daemon of the cluster in ``home`` (absolute): its command line
    carries ``marker_arg(home)`` as one argument, and it leads its own process group (``up``
    starts each daemon in a session of its own), so signalling the group reaches only it and
    what it spawned."""
    if type(pid) is not int or not 1 < pid <= PID_MAX or pid == os.getpid():
        return False
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if os.fsencode(marker_arg(home)) not in argv:
        return False
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != b"Z" and fields[2] == str(pid).encode()


def stop_pids(pids: list[int]) -> None:
    """SIGTERM each pid's process group, wait up to ``STOP_GRACE_S``, then SIGKILL what is left.
    Reaps children of this process, so nothing stays a zombie. The caller vouches for the pids:
    ``up``'s own children, or pids ``_ours`` accepted."""
    for pid in pids:
        _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while time.monotonic() < deadline and any(_group_alive(p) for p in pids):
        _reap(pids)
        time.sleep(0.2)
    for pid in pids:
        if _group_alive(pid):
            _signal_group(pid, signal.SIGKILL)
    deadline = time.monotonic() + STOP_GRACE_S
    while time.monotonic() < deadline and any(_group_alive(p) for p in pids):
        _reap(pids)
        time.sleep(0.1)
    _reap(pids)


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def group_members(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (read from /proc)."""
    found = []
    want = str(pgid).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(entry.name)
        if fields is not None and fields[0] != b"Z" and fields[2] == want:
            found.append(int(entry.name))
    return found


def _group_alive(pgid: int) -> bool:
    return bool(group_members(pgid)) or _alive(pgid)


def _reap(pids: list[int]) -> None:
    for pid in pids:
        with suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.splitlines()[-lines:])


@contextmanager
def standalone_cluster(folder: Path, workers: int = 2, cores: int = 1,
                       memory: str = "2g") -> Iterator[StandaloneCluster]:
    """Start a cluster under ``folder`` for the block; every process it started is stopped
    when the block ends, however it ends."""
    cluster = StandaloneCluster(folder, workers, cores, memory)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 done; 2 a folder or ``cluster.json`` that is not a cluster's (one line
    naming the file and field), or arguments out of range; 1 the cluster did not start (its
    log quoted) or an internal error."""
    p = argparse.ArgumentParser(prog="python -m rocketlb_core.spark.standalone",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("up", "down", "status"))
    p.add_argument("--dir", type=Path, required=True, help="the cluster's folder (logs, pids)")
    p.add_argument("--workers", type=int_option(1, 64), default=2)
    p.add_argument("--cores", type=int_option(1, 256), default=1, help="cores per worker")
    p.add_argument("--memory", default="2g", help="memory per worker (executors get 1g)")
    args = p.parse_args(argv)
    return run(lambda: _command(args))


def _command(args: argparse.Namespace) -> int:
    if args.action == "up":
        if not 1 <= args.workers <= MAX_WORKERS or not 1 <= args.cores <= 1024:
            raise UsageError(f"--workers must be 1 to {MAX_WORKERS} and --cores 1 to 1024")
        try:
            cluster = StandaloneCluster(args.dir, args.workers, args.cores, args.memory).start()
        except ClusterError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(cluster.master)
        return 0
    home = cluster_home(args.dir)
    state = load_state(args.dir)
    mine = {name: pid for name, pid in state["pids"].items() if _ours(pid, home)}
    if args.action == "status":
        print(json.dumps({"master": state["master"], "running": mine}, indent=1))
        return 0
    stop_pids(list(reversed(mine.values())))
    print(f"stopped {len(mine)} processes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
