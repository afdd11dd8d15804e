"""Hostile inputs to the cluster tools (issue 30, case 18): ``python -m
rocketlb_core.spark.standalone down|status --dir D`` and ``python -m rocketlb_core.live
down|status --home H`` given a ``cluster.json`` that is stale, garbage or written to make them
signal a process that is not theirs.

The oracle, for every case: exit 0, or exit 2 with one line on stderr naming the folder's file;
never a traceback; and no process outside the cluster signalled: a plain sentinel, a decoy whose
command line looks like a Spark daemon (``org.apache.spark.deploy.master.Master``, the only check
``down`` made before) and carries near misses of the folder's marker, and this test process stay
alive whatever pids the file names. Every command runs as a subprocess with a time limit and a
memory cap (``RLIMIT_AS``). No JVM is started here: a process that carries the folder's marker
stands in for a daemon where one is needed; ``tests/test_spark_cluster.py`` runs the real
cluster.

The fuzz families are Hypothesis tests with a fixed seed (``derandomize``) and a bounded number of
cases (``ROCKETLB_FUZZ_EXAMPLES`` scales them, as in ``tests/test_fuzz.py``); the counts of cases
tried are written at the end of the module's run.
"""

from __future__ import annotations

import json
import math
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketlb_core.live import cluster as live
from rocketlb_core.spark import standalone
from rocketlb_core.spark.standalone import MARKER_PROP, TOOL, StateError, load_state, marker_arg

EXAMPLES = int(os.environ.get("ROCKETLB_FUZZ_EXAMPLES", "500")) * 3 // 20     # 75 by default
TRIED: Counter[str] = Counter()
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
RUN_SECONDS = 30              # a command taking longer is a hang
MEMORY_CAP = 1 << 30          # bytes of address space for each command
SPARK_DECOY = "org.apache.spark.deploy.master.Master"
SLEEP = "import time; time.sleep(600)"


def _caps() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    resource.setrlimit(resource.RLIMIT_CPU, (RUN_SECONDS, RUN_SECONDS))


def run_tool(tool: str, action: str, folder: Path | str) -> tuple[int, str, str]:
    """``python -m rocketlb_core.spark.standalone|live ACTION`` on ``folder``, capped."""
    module, option = (("rocketlb_core.spark.standalone", "--dir") if tool == "standalone"
                      else ("rocketlb_core.live", "--home"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCKETLB_")}
    proc = subprocess.run([sys.executable, "-m", module, action, option, os.fspath(folder)],
                          capture_output=True, text=True, errors="replace", env=env,
                          stdin=subprocess.DEVNULL, timeout=RUN_SECONDS, preexec_fn=_caps)
    return proc.returncode, proc.stdout, proc.stderr


def spawn(*argv: str, session: bool = True) -> subprocess.Popen[bytes]:
    """A harmless sleeping Python whose command line carries ``argv`` (a decoy, a sentinel, or
    a stand-in daemon), in a session of its own unless ``session`` is false."""
    proc = subprocess.Popen([sys.executable, "-c", SLEEP, *argv], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=session)
    _wait_exec(proc.pid, argv[-1] if argv else SLEEP)
    return proc


def _wait_exec(pid: int, word: str) -> None:
    """Wait until ``pid``'s command line shows ``word`` (the exec has happened)."""
    for _ in range(500):
        try:
            if word.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                return
        except OSError:
            pass
        time.sleep(0.01)
    raise AssertionError(f"pid {pid} never showed {word!r}")


def alive(proc: subprocess.Popen[bytes]) -> bool:
    return proc.poll() is None


def finish(*procs: subprocess.Popen[bytes] | None) -> None:
    """Kill what a test started, by pid, and reap it."""
    for proc in procs:
        if proc is not None and proc.poll() is None:
            proc.kill()
        if proc is not None:
            proc.wait(timeout=10)


def check_refused(family: str, status: int, stdout: str, stderr: str, names: str) -> None:
    """The oracle's common part: 0, or 2 with one ``error:`` line naming ``names``."""
    TRIED[family] += 1
    assert "Traceback" not in stderr, stderr[-3000:]
    assert status in (0, 2), f"status {status}: {stderr[-3000:]}"
    if status == 2:
        TRIED[f"{family}: refused"] += 1
        assert stdout == "", stdout[:500]
        assert stderr.startswith("error: "), stderr[:500]
        assert len(stderr.splitlines()) == 1, stderr[:2000]
        assert names in stderr, stderr[:500]


class _Report:
    """Writes ``TRIED`` in pytest's terminal summary (``conftest.py`` does the same for
    ``tests/test_fuzz.py``)."""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if TRIED:
            terminalreporter.write_sep("-", "hostile cluster files: cases tried")
            for family, count in sorted(TRIED.items()):
                terminalreporter.write_line(f"{family}: {count}")


@pytest.fixture(scope="module", autouse=True)
def _report(request: pytest.FixtureRequest) -> None:
    manager = request.config.pluginmanager
    if not manager.has_plugin("rocketlb-hostile-cluster-report"):
        manager.register(_Report(), "rocketlb-hostile-cluster-report")


# ---------------------------------------------------------------- regressions: spark.standalone

def _state(folder: Path, pids: dict[str, Any], **extra: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = {"tool": TOOL, "master": "spark://127.0.0.1:7077", "pids": pids, **extra}
    (folder / "cluster.json").write_text(json.dumps(data))
    return folder


def test_down_leaves_a_spark_process_that_is_not_this_folders(tmp_path: Path) -> None:
    """Before: any process whose command line held ``org.apache.spark.deploy.`` was killed,
    with its whole process group, if a ``cluster.json`` named its pid."""
    folder = tmp_path / "c"
    other = tmp_path / "other"
    decoy = spawn(SPARK_DECOY, marker_arg(other.resolve()))       # another folder's master
    user = spawn("org.apache.spark.deploy.SparkSubmit")           # a user's own Spark
    try:
        _state(folder, {"master": decoy.pid, "worker-1": user.pid})
        status, out, err = run_tool("standalone", "status", folder)
        assert (status, err) == (0, "")
        assert json.loads(out)["running"] == {}
        status, out, err = run_tool("standalone", "down", folder)
        assert (status, out, err) == (0, "stopped 0 processes\n", "")
        assert alive(decoy)
        assert alive(user)
    finally:
        finish(decoy, user)


def test_down_stops_only_processes_carrying_the_folders_marker(tmp_path: Path) -> None:
    """A stand-in daemon (a session leader carrying the marker, with a child in its group) is
    stopped with its group; a near miss of the marker, or the marker on a process that does not
    lead its own group, is left alone."""
    folder = tmp_path / "c"
    folder.mkdir()
    home = folder.resolve()
    child_code = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
                  f"{SLEEP!r}, 'group-child']); time.sleep(600)")
    daemon = subprocess.Popen([sys.executable, "-c", child_code, SPARK_DECOY, marker_arg(home)],
                              stdin=subprocess.DEVNULL, start_new_session=True)
    near = [spawn(SPARK_DECOY, arg) for arg in (
        f"{marker_arg(home)}/", f"{marker_arg(home)}x", f"x{marker_arg(home)}",
        f"-D{MARKER_PROP}={folder.name}", f"{marker_arg(home)} extra")]
    follower = spawn(SPARK_DECOY, marker_arg(home), session=False)  # in pytest's own group
    try:
        _wait_exec(daemon.pid, marker_arg(home))
        for _ in range(500):
            if len(standalone.group_members(daemon.pid)) == 2:
                break
            time.sleep(0.01)
        members = standalone.group_members(daemon.pid)
        assert len(members) == 2
        pids = {"master": daemon.pid, "worker-1": follower.pid}
        pids |= {f"worker-{i}": p.pid for i, p in enumerate(near, start=2)}
        _state(folder, pids)
        status, out, err = run_tool("standalone", "status", folder)
        assert status == 0, err
        assert json.loads(out)["running"] == {"master": daemon.pid}
        status, out, err = run_tool("standalone", "down", folder)
        assert (status, out) == (0, "stopped 1 processes\n"), err
        daemon.wait(timeout=10)
        assert standalone.group_members(daemon.pid) == []
        assert all(alive(p) for p in near)
        assert alive(follower)
    finally:
        finish(daemon, follower, *near)
        for pid in standalone.group_members(daemon.pid):
            os.kill(pid, signal.SIGKILL)


def test_down_survives_a_process_named_in_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    """Before: ``down`` read every ``/proc/PID/stat`` as UTF-8 text while it waited for a group
    to go, so any process on the machine whose command name was not UTF-8 made it crash."""
    odd = tmp_path / os.fsdecode(b"\xff\xfe-odd")
    shutil.copy(sys.executable, odd)
    strange = subprocess.Popen([odd, "-c", SLEEP], stdin=subprocess.DEVNULL)
    folder = tmp_path / "c"
    folder.mkdir()
    daemon = spawn(SPARK_DECOY, marker_arg(folder.resolve()))
    try:
        assert b"\xff\xfe" in Path(f"/proc/{strange.pid}/stat").read_bytes()
        _state(folder, {"master": daemon.pid})
        status, out, err = run_tool("standalone", "down", folder)
        assert (status, out, err) == (0, "stopped 1 processes\n", "")
        daemon.wait(timeout=10)
        assert alive(strange)
    finally:
        finish(daemon, strange)


HOSTILE_STATES: list[tuple[str, str, str]] = [     # (what, cluster.json's text, field named)
    ("no pids", json.dumps({"tool": TOOL, "master": ""}), "field pids"),
    ("pids a list", json.dumps({"tool": TOOL, "master": "", "pids": [5]}), "field pids"),
    ("garbage", "\x00\x01garbage{", "not JSON"),
    ("invalid UTF-8", "\udcff{}", "not UTF-8"),
    ("not JSON", "{'pids': {}}", "not JSON"),
    ("truncated", '{"tool": "rocketlb_core.spark.standalone", "pi', "not JSON"),
    ("a list", "[1, 2]", "a JSON list"),
    ("nested", "[" * 100_000 + "]" * 100_000, "cluster.json"),
    ("no tool", json.dumps({"master": "", "pids": {}}), "field tool"),
    ("negative pid", json.dumps({"tool": TOOL, "master": "", "pids": {"master": -1}}),
     "field pids.master"),
    ("pid 0", json.dumps({"tool": TOOL, "master": "", "pids": {"master": 0}}),
     "field pids.master"),
    ("pid 1", json.dumps({"tool": TOOL, "master": "", "pids": {"master": 1}}),
     "field pids.master"),
    ("pid string", json.dumps({"tool": TOOL, "master": "", "pids": {"master": "123"}}),
     "field pids.master"),
    ("pid huge", json.dumps({"tool": TOOL, "master": "", "pids": {"master": 10**30}}),
     "field pids.master"),
    ("pid float", json.dumps({"tool": TOOL, "master": "", "pids": {"master": 1e300}}),
     "field pids.master"),
    ("pid true", json.dumps({"tool": TOOL, "master": "", "pids": {"master": True}}),
     "field pids.master"),
    ("pid NaN", '{"tool": "' + TOOL + '", "master": "", "pids": {"master": NaN}}',
     "field pids.master"),
    ("odd name", json.dumps({"tool": TOOL, "master": "", "pids": {"\x1b[2J": 5}}),
     "field pids"),
    ("master not a URL", json.dumps({"tool": TOOL, "master": 7, "pids": {}}), "field master"),
]


@pytest.mark.parametrize(("what", "text", "field"), HOSTILE_STATES,
                         ids=[h[0] for h in HOSTILE_STATES])
@pytest.mark.parametrize("action", ["down", "status"])
def test_a_hostile_cluster_json_is_one_clear_line(tmp_path: Path, what: str, text: str,
                                                  field: str, action: str) -> None:
    """Before: a raw traceback (KeyError, JSONDecodeError, TypeError) and exit status 1."""
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "cluster.json").write_text(text, errors="surrogateescape")
    status, out, err = run_tool("standalone", action, folder)
    assert status == 2, err
    check_refused("standalone regression", status, out, err, str(folder / "cluster.json"))
    assert field in err


def test_own_pid_is_refused_as_a_field() -> None:
    """The command's own pid in the file (only a process that knows it can write it)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = _state(Path(tmp), {"master": os.getpid()})
        with pytest.raises(StateError, match=r"field pids\.master: \d+ is this command's own"):
            load_state(folder)


def _kinds(folder: Path, kind: str) -> None:
    """Make ``folder/cluster.json`` a file that is not a file."""
    path = folder / "cluster.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        if os.geteuid() == 0:
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))     # /dev/zero's numbers
        else:
            path.symlink_to("/dev/zero")
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "link loop":
        path.symlink_to(path)
    elif kind == "two links":
        (folder / "other.json").symlink_to(path)
        path.symlink_to(folder / "other.json")
    elif kind == "link to a good file":
        _state(folder / "elsewhere", {})
        path.symlink_to(folder / "elsewhere" / "cluster.json")
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        with path.open("wb") as f:                  # 4 GiB, sparse: costs no disk
            f.truncate(4 << 30)
    elif kind == "huge JSON":
        path.write_text(json.dumps({"tool": TOOL, "master": "", "pids": {},
                                    "x": "x" * (2 << 20)}))
    elif kind == "missing":
        pass
    elif kind == "unreadable":
        path.write_text("{}")
        path.chmod(0)
    else:
        raise AssertionError(kind)


FILE_KINDS = ["fifo", "device", "link to /dev/zero", "link loop", "two links",
              "link to a good file", "folder", "huge", "huge JSON", "missing", "unreadable"]


@pytest.mark.parametrize("kind", FILE_KINDS)
@pytest.mark.parametrize("tool", ["standalone", "live"])
def test_a_cluster_json_that_is_not_a_file(tmp_path: Path, kind: str, tool: str) -> None:
    """Before: a FIFO blocked forever, a device or a huge file was read whole, a link loop was a
    traceback. Now each is one line naming the file (an unreadable file is read by root)."""
    folder = tmp_path / "c"
    folder.mkdir()
    _kinds(folder, kind)
    for action in ("down", "status"):
        status, out, err = run_tool(tool, action, folder)
        if kind == "unreadable" and os.geteuid() == 0:
            assert status == 2, err                             # root reads it: "{}"
            assert "field" in err, err
        else:
            assert status == 2, err
        check_refused(f"{tool} file kinds", status, out, err, str(folder))


@pytest.mark.parametrize("tool", ["standalone", "live"])
def test_a_folder_that_is_not_there(tmp_path: Path, tool: str) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for folder in (tmp_path / "absent", loop, a_file, tmp_path / "a\nnew\x1bline"):
        for action in ("down", "status"):
            status, out, err = run_tool(tool, action, folder)
            assert status == 2, err
            check_refused(f"{tool} folders", status, out, err,
                          str(folder).replace("\n", "\\n").replace("\x1b", "\\x1b"))


# ---------------------------------------------------------------- regressions: live

def _live_state(home: Path, processes: Any, **extra: Any) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    data = {"line": "5", "namesrv_port": 19876, "isolated": False, "broker_heap_mb": 256,
            "processes": processes, **extra}
    (home / "cluster.json").write_text(json.dumps(data, allow_nan=True))
    return home


def _proc(pid: Any = 0, **over: Any) -> dict[str, Any]:
    return {"name": "broker-a", "role": "broker", "port": 20911, "pid": pid,
            "folder": "/tmp/x", **over}


LIVE_STATES: list[tuple[str, Any, dict[str, Any], str]] = [
    ("pid a string", [_proc("123")], {}, "processes[0].pid"),             # was TypeError
    ("pid huge", [_proc(2**70)], {}, "processes[0].pid"),                  # was OverflowError
    ("pid float", [_proc(1.5)], {}, "processes[0].pid"),                   # was TypeError
    ("pid negative", [_proc(-5)], {}, "processes[0].pid"),
    ("pid 1", [_proc(1)], {}, "processes[0].pid"),
    ("port infinite", [_proc()], {"namesrv_port": math.inf}, "namesrv_port"),  # OverflowError
    ("name a number", [_proc(name=5)], {}, "processes[0].name"),
    ("a process a list", [[1, 2]], {}, "processes[0]"),
    ("processes a dict", {"a": 1}, {}, "processes"),
    ("role unknown", [_proc(role="king")], {}, "processes[0].role"),
]


@pytest.mark.parametrize(("what", "processes", "extra", "field"), LIVE_STATES,
                         ids=[h[0] for h in LIVE_STATES])
def test_live_hostile_state(tmp_path: Path, what: str, processes: Any, extra: dict[str, Any],
                            field: str) -> None:
    home = _live_state(tmp_path / "h", processes, **extra)
    for action in ("down", "status"):
        status, out, err = run_tool("live", action, home)
        assert status == 2, err
        check_refused("live regression", status, out, err, str(home / "cluster.json"))
        assert f"field {field}" in err


def test_live_deep_json_is_one_line(tmp_path: Path) -> None:
    """Before: ``RecursionError`` escaped ``Cluster.load`` (a traceback, exit 1)."""
    home = tmp_path / "h"
    home.mkdir()
    (home / "cluster.json").write_text("[" * 100_000 + "]" * 100_000)
    status, out, err = run_tool("live", "status", home)
    check_refused("live regression", status, out, err, str(home / "cluster.json"))
    assert status == 2


def test_live_down_stops_only_its_marker(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    prop = f"-D{live.MARKER_PROP}"
    server = spawn(f"{prop}={home.resolve()}")
    decoys = [spawn(SPARK_DECOY, f"{prop}={home.resolve()}x"), spawn("plain")]
    try:
        _live_state(home, [_proc(server.pid, name="namesrv", role="namesrv")]
                    + [_proc(d.pid, name=f"broker-{c}") for d, c in zip(decoys, "ab", strict=True)])
        status, out, err = run_tool("live", "status", home)
        assert status == 0, err
        running = {p["name"]: p["running"] for p in json.loads(out)["processes"]}
        assert running == {"namesrv": True, "broker-a": False, "broker-b": False}
        status, out, err = run_tool("live", "down", home)
        assert (status, out) == (0, "stopped: namesrv\n"), err
        server.wait(timeout=10)
        assert all(alive(d) for d in decoys)
    finally:
        finish(server, *decoys)


# ---------------------------------------------------------------- the fuzz families

@pytest.fixture(scope="module")
def bystanders() -> Iterator[dict[str, Any]]:
    """One fixed folder for every case (so decoys can carry near misses of its marker), a
    sentinel, and decoys; each must outlive every case."""
    tmp = Path(tempfile.mkdtemp(prefix="rocketlb-hostile-")).resolve()
    folder = tmp / "cluster"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(spawn("sentinel"))
        procs.append(spawn(SPARK_DECOY, f"{marker_arg(folder)}x", f"x{marker_arg(folder)}",
                           f"{marker_arg(folder)}/"))
        procs.append(spawn(SPARK_DECOY, marker_arg(folder), session=False))   # not a leader
        procs.append(spawn(f"-D{live.MARKER_PROP}={folder}x", f"-D{live.MARKER_PROP}={folder}/"))
        yield {"tmp": tmp, "folder": folder, "procs": procs,
               "pids": [p.pid for p in procs] + [os.getpid(), os.getppid()]}
    finally:
        finish(*procs)
        shutil.rmtree(tmp, ignore_errors=True)


def _rarely(draw: Any, valid: Any, hostile: Any, odds: int) -> Any:
    """A valid value, or one time in ``odds`` (0: never) a hostile one."""
    if odds and draw(st.integers(0, odds - 1)) == 0:
        return draw(hostile)
    return draw(valid)


def _pids(pids: list[int]) -> tuple[Any, Any]:
    """(pids a valid file may hold: the bystanders', this process's, stale ones; pids no file
    ``up`` wrote holds)."""
    valid = st.one_of(st.sampled_from(pids), st.sampled_from([2, 300, 4194304]),
                      st.integers(2, 4194304))
    hostile = st.one_of(st.sampled_from(
        [0, 1, -1, 4194305, 2**31, 2**63, -(2**63), 10**40, "12", "", None, True, False, 1.0,
         2.5, 1e300, math.nan, [], {}, [pids[0]], {"pid": pids[0]}, -pids[0], str(pids[0])]),
        st.integers(-(2**70), 2**70))
    return valid, hostile


HOSTILE_VALUES: list[Any] = [None, True, 0, -1, 2**64, 1.5, math.nan, math.inf, "", "x" * 5000,
                             "\x1b]0;pwned\x07", "\ud800", [], {}, [[[[]]]],
                             "spark://127.0.0.1:1"]
ODDS = [0, 0, 20, 5, 2]           # how hostile a case is; 0: only valid values


def _mutate_keys(draw: Any, data: dict[str, Any], odds: int) -> None:
    """Delete a key or give it a hostile value, one time in ``odds`` per key."""
    for key in sorted(data):
        how = _rarely(draw, st.just("keep"), st.sampled_from(["delete", "value"]), odds)
        if how == "delete":
            del data[key]
        elif how == "value":
            data[key] = draw(st.sampled_from(HOSTILE_VALUES))


@st.composite
def hostile_standalone(draw: Any, pids: list[int]) -> bytes:
    """The bytes of a ``cluster.json`` for ``spark.standalone``: a valid record (naming other
    processes' pids), one with hostile names, pids and fields, or broken bytes."""
    odds = draw(st.sampled_from(ODDS))
    valid_pid, hostile_pid = _pids(pids)
    names = draw(st.lists(st.sampled_from(["master", "worker-1", "worker-2", "worker-64"]),
                          max_size=4, unique=True))
    bad_name = st.sampled_from(["worker-0", "worker-9999", "", "Master", "\x1b[31m", "../x",
                                "worker-1\n"])
    names += [draw(bad_name) for _ in range(_rarely(draw, st.just(0), st.integers(1, 2),
                                                    odds))]
    master = _rarely(draw, st.sampled_from(["", "spark://127.0.0.1:7077"]),
                     st.sampled_from(["http://x", "spark://127.0.0.1:7077\n", "x" * 300]), odds)
    data: dict[str, Any] = {"tool": TOOL, "master": master,
                            "pids": {n: _rarely(draw, valid_pid, hostile_pid, odds)
                                     for n in names}}
    _mutate_keys(draw, data, odds)
    if _rarely(draw, st.just(False), st.booleans(), odds):
        data["pids"] = {f"worker-{i}": pids[0] for i in range(1, 200)}
    return _encode(draw, data, odds)


@st.composite
def hostile_live(draw: Any, pids: list[int]) -> bytes:
    """The bytes of a ``cluster.json`` for ``live``, valid or hostile as for standalone."""
    odds = draw(st.sampled_from(ODDS))
    valid_pid, hostile_pid = _pids(pids)
    procs: list[Any] = []
    for name in draw(st.lists(st.sampled_from(["namesrv", "broker-a", "broker-b"]),
                              max_size=3, unique=True)):
        row: dict[str, Any] = {
            "name": _rarely(draw, st.just(name), st.sampled_from(["x" * 300, "\x1b[2J", 5]),
                            odds),
            "role": _rarely(draw, st.sampled_from(["namesrv", "broker"]), st.just("king"), odds),
            "port": _rarely(draw, st.integers(0, 65535),
                            st.sampled_from([65536, -1, "19876", 1e9]), odds),
            "pid": _rarely(draw, st.one_of(st.just(0), valid_pid), hostile_pid, odds),
            "folder": _rarely(draw, st.sampled_from(["/tmp/x", ""]), st.sampled_from([7, None]),
                              odds)}
        _mutate_keys(draw, row, odds)
        if _rarely(draw, st.just(False), st.booleans(), odds):
            row["extra"] = 1
        procs.append(_rarely(draw, st.just(row), st.sampled_from(HOSTILE_VALUES), odds))
    data: dict[str, Any] = {"line": "5", "namesrv_port": 19876, "isolated": False,
                            "broker_heap_mb": 256, "processes": procs}
    _mutate_keys(draw, data, odds)
    return _encode(draw, data, odds)


def _encode(draw: Any, data: Any, odds: int) -> bytes:
    """``data`` as JSON, then, one time in ``odds``, broken: truncated, bytes flipped, wrapped,
    nested deep, a BOM, invalid UTF-8, or replaced by another JSON value or random bytes."""
    raw = json.dumps(data, allow_nan=True, ensure_ascii=draw(st.booleans())).encode(
        "utf-8", "surrogatepass")
    how = _rarely(draw, st.just("as is"), st.sampled_from(
        ["truncate", "flip", "bom", "invalid utf-8", "wrap", "deep", "scalar", "empty",
         "random"]), odds)
    if how == "truncate":
        raw = raw[:draw(st.integers(0, len(raw)))]
    elif how == "flip":
        buf = bytearray(raw)
        for _ in range(draw(st.integers(1, 4))):
            if buf:
                buf[draw(st.integers(0, len(buf) - 1))] ^= 1 << draw(st.integers(0, 7))
        raw = bytes(buf)
    elif how == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif how == "invalid utf-8":
        raw = raw.replace(b'"', b'"\xff', 1)
    elif how == "wrap":
        raw = b"[" + raw + b"]"
    elif how == "deep":
        depth = draw(st.sampled_from([900, 5_000, 200_000]))
        raw = b"[" * depth + raw + b"]" * depth
    elif how == "scalar":
        raw = draw(st.sampled_from([b"null", b"1", b'"x"', b"NaN", b"-Infinity", b"1e999",
                                    b"9" * 5000, b"true"]))
    elif how == "empty":
        raw = b""
    elif how == "random":
        raw = draw(st.binary(max_size=200))
    return raw


def _fuzz_case(tool: str, by: dict[str, Any], raw: bytes, action: str) -> None:
    folder: Path = by["folder"]
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "cluster.json").write_bytes(raw)
    status, out, err = run_tool(tool, action, folder)
    check_refused(f"{tool} {action} fuzz", status, out, err, str(folder / "cluster.json"))
    if status == 0:
        if action == "down":
            assert out in ("stopped 0 processes\n", "stopped: nothing was running\n"), out
        elif tool == "standalone":
            assert json.loads(out)["running"] == {}
        else:
            assert not any(p["running"] for p in json.loads(out)["processes"])
    dead = [p.args for p in by["procs"] if not alive(p)]
    assert dead == [], f"a process that is not the cluster's was signalled: {dead}"


@FUZZ
@given(data=st.data(), action=st.sampled_from(["down", "status"]))
def test_fuzz_standalone_cluster_json(bystanders: dict[str, Any], data: Any,
                                      action: str) -> None:
    raw = data.draw(hostile_standalone(bystanders["pids"]))
    _fuzz_case("standalone", bystanders, raw, action)


@FUZZ
@given(data=st.data(), action=st.sampled_from(["down", "status"]))
def test_fuzz_live_cluster_json(bystanders: dict[str, Any], data: Any, action: str) -> None:
    raw = data.draw(hostile_live(bystanders["pids"]))
    _fuzz_case("live", bystanders, raw, action)
