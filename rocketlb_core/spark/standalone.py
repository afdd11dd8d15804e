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
worker spawned go with it. ``down`` reads the pids from ``DIR/cluster.json`` and checks that each
is still a Spark daemon before it signals it. Ports are chosen by the JVMs (port 0) and read back
from their logs; the master's REST submission server is off. ``SPARK_LOCAL_IP=127.0.0.1`` makes
every listener (RPC, web UIs, block managers) bind to loopback.

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

from rocketlb_core.spark.java import ensure_java

MARKER = "cluster.json"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
START_TIMEOUT_S = 180.0     # a loaded 2-core machine starts a JVM slowly
STOP_GRACE_S = 15.0
_MASTER_URL = re.compile(r"Starting Spark master at (spark://[\w.\-]+:\d+)")
_REGISTERED = "Successfully registered with master"


class ClusterError(RuntimeError):
    """The cluster could not start (the message names the process and quotes its log)."""


def spark_home() -> Path:
    """The installed PySpark's own Spark home (``bin/spark-class`` and ``jars/``)."""
    import pyspark

    home = Path(pyspark.__file__).parent
    if not (home / "bin" / "spark-class").is_file():
        raise ClusterError(f"{home}: this PySpark has no bin/spark-class")
    return home


@dataclass
class StandaloneCluster:
    """A master and its workers under ``folder`` (logs, work dirs, ``cluster.json``)."""

    folder: Path
    workers: int = 2
    cores: int = 1
    memory: str = "2g"
    master: str = ""
    pids: dict[str, int] = field(default_factory=dict)

    def _env(self) -> dict[str, str]:
        ensure_java()
        env = dict(os.environ)
        env.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
                   SPARK_LOG_DIR=str(self.folder / "logs"), PYSPARK_PYTHON=sys.executable)
        env.pop("SPARK_CONF_DIR", None)
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
        """Wait until ``name``'s log shows ``pattern``; returns the match (or the line)."""
        log = self.folder / "logs" / f"{name}.log"
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            text = log.read_text(errors="replace") if log.exists() else ""
            if isinstance(pattern, str):
                if pattern in text:
                    return pattern
            elif (m := pattern.search(text)) is not None:
                return m.group(1)
            if not _alive(self.pids[name]):
                raise ClusterError(f"the Spark {name} exited while starting; {log}:\n"
                                   + _tail(text))
            if time.monotonic() > deadline:
                raise ClusterError(f"the Spark {name} did not start within "
                                   f"{START_TIMEOUT_S:.0f} s; {log}:\n" + _tail(text))
            time.sleep(0.2)

    def _save(self) -> None:
        tmp = self.folder / (MARKER + ".tmp")
        tmp.write_text(json.dumps({"tool": "rocketlb_core.spark.standalone",
                                   "master": self.master, "pids": self.pids}, indent=1) + "\n")
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
        """Stop every process group this cluster started (workers first), by pid."""
        stop_pids(list(reversed(self.pids.values())))

    def work_dirs(self) -> list[Path]:
        return [self.folder / f"worker-{i}" for i in range(1, self.workers + 1)]


def _claim(folder: Path) -> None:
    """Use ``folder`` only if it is absent, empty or an earlier cluster of ours (stopped)."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER
    if marker.exists():
        old = json.loads(marker.read_text())
        live = [p for p in old.get("pids", {}).values() if _is_spark_daemon(p)]
        if live:
            raise ClusterError(f"{folder}: a cluster is still running there (pids {live}); "
                               "stop it first (python -m rocketlb_core.spark.standalone down "
                               f"--dir {folder})")
    elif any(folder.iterdir()):
        raise ClusterError(f"{folder}: not empty and not a rocketlb cluster folder; "
                           "choose another --dir")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:        # a zombie (exited, not yet reaped by us) is not alive
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def _is_spark_daemon(pid: int) -> bool:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"org.apache.spark.deploy." in cmd


def stop_pids(pids: list[int]) -> None:
    """SIGTERM each pid's process group, wait up to ``STOP_GRACE_S``, then SIGKILL what is left.
    Reaps children of this process, so nothing stays a zombie."""
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
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(") ", 1)[-1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
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
    p = argparse.ArgumentParser(prog="python -m rocketlb_core.spark.standalone",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("up", "down", "status"))
    p.add_argument("--dir", type=Path, required=True, help="the cluster's folder (logs, pids)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--cores", type=int, default=1, help="cores per worker")
    p.add_argument("--memory", default="2g", help="memory per worker (executors get 1g)")
    args = p.parse_args(argv)
    marker = args.dir / MARKER
    if args.action == "up":
        try:
            cluster = StandaloneCluster(args.dir, args.workers, args.cores, args.memory).start()
        except ClusterError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(cluster.master)
        return 0
    if not marker.exists():
        print(f"error: {args.dir}: no cluster was started there", file=sys.stderr)
        return 1
    state = json.loads(marker.read_text())
    mine = {name: pid for name, pid in state["pids"].items() if _is_spark_daemon(pid)}
    if args.action == "status":
        print(json.dumps({"master": state["master"], "running": mine}, indent=1))
        return 0
    stop_pids(list(reversed(mine.values())))
    print(f"stopped {len(mine)} processes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
