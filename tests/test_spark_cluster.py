"""The replay on a real Spark standalone cluster: a master and two workers, each its own process
on 127.0.0.1, started from the installed PySpark (``rocketlb_core.spark.standalone``). The
replay command runs as a user would run it (``--engine spark --master spark://...``) in a process
of its own, so its driver, the two executors and their Python workers are all separate
processes. Its outputs must be byte-identical to the Python engine's, its progress bar must
draw on a terminal, every listener must be on loopback, and every process the cluster started
(the executors and Python workers too) must be gone when the cluster stops, even when a check
failed.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rocketlb_core import data_path
from rocketlb_core.replay.config import ReplayConfig
from rocketlb_core.replay.consumer_engines import replay_consumers_python
from rocketlb_core.replay.engines import replay_producers_python
from rocketlb_core.spark.standalone import (
    ClusterError,
    StandaloneCluster,
    group_members,
    main,
    standalone_cluster,
)
from rocketlb_core.trace.generate import generate

pytestmark = pytest.mark.spark


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _rows(path: Path, cols: tuple[str, ...]) -> list[tuple[object, ...]]:
    """A table's rows, in a stable order (Spark writes the consumer tables as part files)."""
    rows = [tuple(r[c] for c in cols) for r in pq.read_table(path).to_pylist()]
    return sorted(rows, key=lambda r: tuple(str(v) for v in r))


def _listeners(pids: set[int]) -> list[str]:
    """host:port of every listening TCP socket these processes hold (from /proc)."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and cols[9] in inodes:          # 0A: LISTEN
                addr, port = cols[1].split(":")
                found.append(f"{_ip(addr, width)}:{int(port, 16)}")
    return found


def _ip(hexaddr: str, width: int) -> str:
    raw = bytes.fromhex(hexaddr)
    if width == 8:
        return ".".join(str(b) for b in raw[::-1])
    words = [raw[i:i + 4][::-1] for i in range(0, 16, 4)]
    flat = b"".join(words)
    if flat[:12] == b"\0" * 10 + b"\xff\xff":
        return ".".join(str(b) for b in flat[12:])             # an IPv4-mapped address
    return flat.hex()


def _cli(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run ``rocketlb`` with stderr on a pseudo-terminal (so the progress bar draws)."""
    master_fd, slave_fd = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCKETLB_")}
    proc = subprocess.Popen([sys.executable, "-m", "rocketlb_core", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=slave_fd, text=True)
    os.close(slave_fd)
    err = bytearray()
    while True:
        try:
            chunk = os.read(master_fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read() if proc.stdout else ""
    proc.wait(timeout=900)
    os.close(master_fd)
    return proc.returncode, out, err.decode(errors="replace")


def test_the_replay_on_a_standalone_cluster(tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    generate(trace, 60_000, producers=4, rate=400.0, files=4, seed=3)
    config = ReplayConfig(fault_tolerance=True, line="5.3.3")
    expected = replay_producers_python(trace, tmp_path / "py", config)
    members = data_path("traces", "membership-day")
    expected_c = replay_consumers_python(members, tmp_path / "py-c", None, ["AVG", "STICKY"])

    seen: set[int] = set()
    with standalone_cluster(tmp_path / "cluster", workers=2, cores=1) as cluster:
        assert cluster.master.startswith("spark://127.0.0.1:")
        groups = list(cluster.pids.values())
        assert len(set(groups)) == 3                         # master + 2 workers

        code, out, err = _cli(["replay", "producer", "--trace", str(trace), "--out",
                               str(tmp_path / "cl"), "--engine", "spark", "--master",
                               cluster.master, "--fault-tolerance", "on", "--line", "5.3.3"],
                              tmp_path)
        assert code == 0, err[-3000:]
        assert json.loads(out) == expected
        assert _files(tmp_path / "cl") == _files(tmp_path / "py")
        assert "4/4 files" in err                           # the progress bar drew

        code, out, err = _cli(["replay", "consumer", "--trace", str(members), "--out",
                               str(tmp_path / "cl-c"), "--engine", "spark", "--master",
                               cluster.master, "--strategies", "AVG,STICKY"], tmp_path)
        assert code == 0, err[-3000:]
        assert json.loads(out) == expected_c
        for table, cols in (("assignments.parquet", ("strategy", "change", "time_ms", "member",
                                                     "client_id", "broker", "queue_id")),
                            ("lag.parquet", ("strategy", "time_s", "queue", "lag"))):
            assert _rows(tmp_path / "cl-c" / table, cols) == _rows(tmp_path / "py-c" / table,
                                                                   cols), table

        # The tasks ran in the workers' executors, one application per replay, on both workers.
        for work in cluster.work_dirs():
            apps = sorted(work.glob("app-*"))
            assert len(apps) == 2, work
            logs = "".join(p.read_text(errors="replace") for p in work.glob("app-*/*/stderr"))
            assert "Finished task" in logs, work

        for pgid in groups:
            seen.update(group_members(pgid))
        assert len(seen) >= 3
        listening = _listeners(seen)
        assert listening
        assert all(a.startswith("127.0.0.1:") for a in listening), listening

        # A second cluster may not take a folder whose cluster is still running.
        with pytest.raises(ClusterError, match="still running"):
            StandaloneCluster(tmp_path / "cluster").start()
    for pgid in groups:
        assert group_members(pgid) == [], f"process group {pgid} outlived the cluster"
    assert [pid for pid in seen if _running(pid)] == []


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[-1][:1] != "Z"
    except OSError:
        return False


def test_up_status_down_from_the_command_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "c"
    try:
        assert main(["up", "--dir", str(folder), "--workers", "1"]) == 0
        master = capsys.readouterr().out.strip()
        assert master.startswith("spark://127.0.0.1:")
        assert main(["status", "--dir", str(folder)]) == 0
        status = json.loads(capsys.readouterr().out)
        assert status["master"] == master
        assert sorted(status["running"]) == ["master", "worker-1"]
    finally:
        state = json.loads((folder / "cluster.json").read_text()) if (
            folder / "cluster.json").exists() else {"pids": {}}
        main(["down", "--dir", str(folder)])
    assert "stopped 2 processes" in capsys.readouterr().out
    for pid in state["pids"].values():
        assert group_members(pid) == []


def test_a_folder_that_is_not_ours_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ClusterError, match="not a rocketlb cluster folder"):
        StandaloneCluster(tmp_path).start()
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_a_failure_inside_the_block_still_stops_every_process(tmp_path: Path) -> None:
    started: list[int] = []

    def failing_check() -> None:
        with standalone_cluster(tmp_path / "c", workers=1) as cluster:
            started.extend(cluster.pids.values())
            raise RuntimeError("a check failed")

    with pytest.raises(RuntimeError, match="a check failed"):
        failing_check()
    assert len(started) == 2
    assert [pid for pid in started if group_members(pid) or _running(pid)] == []
