"""``python -m rocketlb_core.live check``: the model against a recording, from the command line
(``rocketlb_core.live.check``). Run on the shipped recordings (no cluster), on a copy with one
stored message moved to another queue (the check must say so and exit 3), and on recordings
it cannot read (exit 2, the file named)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlb_core import data_path


def _check(recording: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocketlb_core.live", "check", str(recording),
                           *extra], capture_output=True, text=True, timeout=300, check=False)


def test_a_shipped_remoting_recording_is_imported_and_explained() -> None:
    run = _check(data_path("live") / "membership-day-5")
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    assert out[0].endswith("remoting clients (rocketmq-client 5.3.3), servers 5.3.3 "
                           "(line 5.3.3), scenario membership-day")
    rows = {line.split(":")[0].strip(): line for line in out[1:-1]
            if not line.strip().startswith("group ")}
    # every client of the recording, with its own counts (the duplicate-id trap's three too)
    assert set(rows) == {"producer p-slow", "consumer c1", "consumer c2", "consumer c3",
                         "consumer dup-1", "consumer dup-2", "consumer other"}
    # then each group's queues at the end (issue 47)
    groups = [line.split(":")[0].strip() for line in out[1:-1]
              if line.strip().startswith("group ")]
    assert groups == ["group GID_dup at the end", "group GID_live at the end"]
    assert "sends 300, agree 299" in rows["producer p-slow"]
    assert all("unexplained 0" in r for r in rows.values())
    assert out[-1] == "the model explains everything"


def test_the_json_is_the_whole_result() -> None:
    run = _check(data_path("live") / "producer-outage-4", "--json")
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["kind"] == "remoting"
    assert got["unexplained"] == 0
    assert set(got["producers"]) == {"p-off", "p-on"}
    assert sum(p["sends"] for p in got["producers"].values()) == 2000


def test_a_grpc_recording_is_read_as_it_is(tmp_path: Path) -> None:
    """No message trace to import: the gRPC check reads the recording; a copy with one stored
    message moved to another queue of its broker is no longer explained (exit 3)."""
    shipped = data_path("live") / "grpc" / "grpc-producer-outage-5"
    run = _check(shipped)
    assert run.returncode == 0, run.stderr
    assert "grpc clients (org.apache.rocketmq:rocketmq-client-java 5.0.8)" in run.stdout
    assert "proxy.agree" in run.stdout
    assert run.stdout.endswith("explains everything\n")

    moved = tmp_path / "moved"
    shutil.copytree(shipped, moved)
    rows = [json.loads(x) for x in gzip.decompress((moved / "topic.jsonl.gz").read_bytes())
            .decode().splitlines()]
    queues = sorted({r["queue"] for r in rows if r["broker"] == rows[40]["broker"]})
    rows[40]["queue"] = queues[(queues.index(rows[40]["queue"]) + 1) % len(queues)]
    (moved / "topic.jsonl.gz").write_bytes(gzip.compress(
        "".join(json.dumps(r) + "\n" for r in rows).encode()))
    run = _check(moved)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "UNEXPLAINED: " in run.stdout
    detail = json.loads(_check(moved, "--json").stdout)
    assert detail["unexplained"] == sum(p["unexplained"] for p in detail["producers"].values())
    assert detail["unexplained"] >= 1
    assert f"UNEXPLAINED: {detail['unexplained']} " in run.stdout
    assert detail["producers"]["g1"]["unexplained_detail"]


@pytest.mark.parametrize(("damage", "named"), [
    ("missing", "not a recording folder"),
    ("not-json", "recording.json"),
    ("no-topic", "'topic'"),
])
def test_a_recording_it_cannot_read_is_refused_naming_the_file(damage: str, named: str,
                                                               tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    if damage != "missing":
        shutil.copytree(data_path("live") / "producer-outage-4", rec)
        meta = rec / "recording.json"
        if damage == "not-json":
            meta.write_text("{ not json", encoding="utf-8")
        else:
            doc = json.loads(meta.read_text(encoding="utf-8"))
            del doc["topic"]
            meta.write_text(json.dumps(doc), encoding="utf-8")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    run = _check(rec)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.startswith("error: ")
    assert named in run.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == before     # nothing written


def test_importing_a_grpc_recording_says_why_and_what_to_run(tmp_path: Path) -> None:
    """``rocketlb trace import --recording`` on a gRPC recording: a clear refusal naming the
    file, not "msgtrace.jsonl.gz: file not found"; nothing written."""
    rec = data_path("live") / "grpc" / "grpc-producer-outage-5"
    run = subprocess.run([sys.executable, "-m", "rocketlb_core", "trace", "import",
                          "--recording", str(rec), "--out", str(tmp_path / "t")],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode != 0
    assert "recording.json" in run.stderr
    assert "no message trace" in run.stderr
    assert "python -m rocketlb_core.live check" in run.stderr
    assert not (tmp_path / "t").exists()
