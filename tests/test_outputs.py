"""No command deletes a folder it did not write (``rocketlb_core.atomic``), for every command
that writes one: absent, empty or an earlier rocketlb output may be replaced; anything else is
refused unless --force, which still refuses /, home, the current folder and its ancestors, and
the inputs. Files and links where a folder should be, --out inside the trace, and two runs at
once are refused too. Every command runs for real, in process or as a subprocess."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.atomic import LOCK_SUFFIX, MARKER, atomic_folder

OUTAGE = data_path("traces", "seed002-outage")
MEMBERS = data_path("traces", "membership-day")
SCENARIO = data_path("scenarios", "steady-state.toml")


def _replay(kind: str, trace: Path) -> Callable[[Path, list[str]], list[str]]:
    return lambda out, extra: ["replay", kind, "--trace", str(trace), "--out", str(out), *extra]


COMMANDS: dict[str, Callable[[Path, list[str]], list[str]]] = {
    "simulate --out": lambda out, extra: ["simulate", str(SCENARIO), "--out", str(out), *extra],
    "simulate --record": lambda out, extra: ["simulate", str(SCENARIO), "--record", str(out),
                                             *extra],
    "replay producer": _replay("producer", OUTAGE),
    "replay consumer": _replay("consumer", MEMBERS),
    "replay layout": lambda out, extra: ["trace", "layout", str(OUTAGE), "--out", str(out),
                                         *extra],
    "replay generate": lambda out, extra: ["trace", "generate", "--sends", "5000",
                                           "--producers", "4", "--out", str(out), *extra],
}
INPUT_OF = {"simulate --out": SCENARIO, "simulate --record": SCENARIO,
            "replay producer": OUTAGE, "replay consumer": MEMBERS, "replay layout": OUTAGE}


def run(argv: list[str]) -> tuple[int, str, str]:
    """Run ``rocketlb ARGV`` in this process: (status, stdout, stderr)."""
    from rocketlb_core.commands import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:               # argparse
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _users_folder(path: Path) -> dict[str, bytes]:
    path.mkdir(parents=True)
    (path / "thesis.txt").write_text("three years of work")
    (path / "data").mkdir()
    (path / "data" / "results.csv").write_text("a,b\n1,2\n")
    return _tree(path)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_folder_holding_the_users_files_is_refused(tmp_path: Path, command: str) -> None:
    out = tmp_path / "mine"
    before = _users_folder(out)
    status, stdout, stderr = run(COMMANDS[command](out, []))
    assert status == 2, stderr
    assert stdout == ""
    assert str(out) in stderr
    assert "refusing" in stderr
    assert "--force" in stderr
    assert "Traceback" not in stderr
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]   # no temp folder, no lock


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_absent_empty_and_earlier_outputs_are_written(tmp_path: Path, command: str) -> None:
    out = tmp_path / "new" / "out"
    status, _, stderr = run(COMMANDS[command](out, []))
    assert status == 0, stderr
    marker = json.loads((out / MARKER).read_text())
    assert marker["command"] == command.removesuffix(" --out")
    assert marker["format"] == "rocketlb-output"
    assert set(marker["paths"]) | {MARKER} == {
        p.relative_to(out).as_posix() for p in out.rglob("*")}
    first = _tree(out)
    status, _, stderr = run(COMMANDS[command](out, []))        # an earlier output: replaced
    assert status == 0, stderr
    assert _tree(out) == first                                 # deterministic, and whole
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(COMMANDS[command](empty, []))[0] == 0
    assert _tree(empty) == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "new"]
    (out / "notes.txt").write_text("my notes on the output")   # ours, plus a file of the user's
    status, _, stderr = run(COMMANDS[command](out, []))
    assert status == 2
    assert "notes.txt" in stderr
    assert "did not write" in stderr
    assert (out / "notes.txt").read_text() == "my notes on the output"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_force_replaces_a_foreign_folder_but_never_a_protected_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    out = tmp_path / "scratch"
    _users_folder(out)
    status, _, stderr = run(COMMANDS[command](out, ["--force"]))
    assert status == 0, stderr
    assert not (out / "thesis.txt").exists()
    assert (out / MARKER).exists()
    # the current folder and its ancestors, home and / are refused even with --force
    work = tmp_path / "work" / "deep"
    before = _users_folder(work)
    monkeypatch.chdir(work)
    home = tmp_path / "home"
    _users_folder(home)
    monkeypatch.setenv("HOME", str(home))
    for target, why in ((Path("."), "it is the current folder"),
                        (work.parent, "it holds the current folder"),
                        (Path(".."), "it holds the current folder"),
                        (home, "it is the home folder"), (Path("/"), "it is the root folder")):
        status, _, stderr = run(COMMANDS[command](target, ["--force"]))
        assert status == 2, (target, stderr)
        assert why in stderr
    assert _tree(work) == before
    assert (home / "thesis.txt").exists()


@pytest.mark.parametrize("command", sorted(INPUT_OF))
def test_inputs_are_never_an_output(tmp_path: Path, command: str) -> None:
    """--out inside the trace (refused always), the input itself or a folder holding it (even
    with --force). The inputs are copied, so nothing shipped is at risk if the rule broke."""
    src = INPUT_OF[command]
    home = tmp_path / "in"
    copy = home / src.name
    home.mkdir()
    if src.is_dir():
        shutil.copytree(src, copy)
    else:
        shutil.copy(src, copy)
    before = _tree(home)

    def argv(out: Path, extra: list[str]) -> list[str]:
        return [str(copy) if a == str(src) else a for a in COMMANDS[command](out, extra)]

    targets = [home, copy.parent] + ([copy, copy / "out", copy / "sends.parquet"]
                                     if src.is_dir() else [])
    for target in targets:
        for extra in ([], ["--force"]):
            status, _, stderr = run(argv(target, extra))
            assert status == 2, (target, extra, stderr)
            assert "input" in stderr
    assert _tree(home) == before


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_file_or_a_link_where_the_folder_should_be(tmp_path: Path, command: str) -> None:
    file = tmp_path / "results.txt"
    file.write_text("not a folder")
    real = tmp_path / "real"
    _users_folder(real)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    for target, words in ((file, "it is a file"), (link, "symbolic link")):
        for extra in ([], ["--force"]):
            status, _, stderr = run(COMMANDS[command](target, extra))
            assert status == 2
            assert words in stderr
    assert file.read_text() == "not a folder"
    assert (real / "thesis.txt").exists()


def test_a_failed_run_leaves_the_earlier_output_as_it_was(tmp_path: Path) -> None:
    """A trace whose error is found mid-replay (times out of order in the middle of a
    producer): the earlier output stays whole, and no temporary folder or lock is left."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    assert run(COMMANDS["replay producer"](out, []))[0] == 0
    before = _tree(out)
    bad = tmp_path / "bad"
    shutil.copytree(OUTAGE, bad)
    table = pq.read_table(bad / "sends.parquet")
    times = table.column("time_ms").to_pylist()
    times[len(times) // 2] = 0
    pq.write_table(table.set_column(0, "time_ms", pa.array(times)),
                   bad / "sends.parquet", row_group_size=1 << 20)
    status, _, stderr = run(["replay", "producer", "--trace", str(bad),
                             "--out", str(out)])
    assert status == 2, stderr
    assert "time_ms" in stderr
    assert "row" in stderr
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "out"]


def test_a_stale_lock_file_does_not_block(tmp_path: Path) -> None:
    """The lock is an flock: a file left by a killed run holds no lock."""
    out = tmp_path / "out"
    (tmp_path / f".out{LOCK_SUFFIX}").write_text("12345\n")
    assert run(COMMANDS["replay producer"](out, []))[0] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_run_fails_clearly_while_another_holds_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with atomic_folder(out, "replay producer") as tmp:
        (tmp / "half.txt").write_text("being written")
        status, _, stderr = run(COMMANDS["replay producer"](out, []))
        assert status == 2
        assert "another rocketlb run" in stderr
        assert str(out) in stderr
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "half.txt"]


HOLDER = """
import sys
from pathlib import Path
from rocketlb_core.atomic import atomic_folder
with atomic_folder(Path(sys.argv[1]), "replay generate") as tmp:
    (tmp / "first.txt").write_text("the first run's output")
    print("writing", flush=True)
    sys.stdin.readline()            # hold the folder until the test says so
"""


def test_two_processes_writing_one_folder_one_wins_whole(tmp_path: Path) -> None:
    """Two real processes: the first holds the folder while it writes; the second (the real
    command) fails at once with exit 2 and writes nothing; the folder is then exactly the
    first's output, nothing mixed."""
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert first.stdout is not None
        assert first.stdin is not None
        assert first.stdout.readline().strip() == "writing"
        second = subprocess.run([sys.executable, "-m", "rocketlb_core", "trace", "generate",
                                 "--sends", "1000", "--producers", "2", "--out", str(out)],
                                capture_output=True, text=True, timeout=300)
        assert second.returncode == 2, second.stderr
        assert "another rocketlb run" in second.stderr
        assert str(out) in second.stderr
        assert "Traceback" not in second.stderr
        first.stdin.write("done\n")
        first.stdin.flush()
        assert first.wait(timeout=120) == 0
    finally:
        first.kill()
        first.wait()
    assert _tree(out) == {"first.txt": b"the first run's output",
                          MARKER: (out / MARKER).read_bytes()}
    assert json.loads((out / MARKER).read_text())["paths"] == ["first.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
