"""Every public producer vector, primitive and upstream test case, replayed through the package
(from the committed gzip copies, so a clone without ../shared runs them too)."""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core.conformance import Report, run_file
from rocketlb_core.conformance.producer_vectors import run_producer_case

VECTORS = Path(__file__).parent / "vectors"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"
PRODUCER_FILES = ["producer-4.7.1.jsonl", "producer-4.9.7.jsonl", "producer-4.9.8.jsonl",
                  "producer-5.3.3.jsonl"]
COUNTED_OPS = {"select", "probe", "pick", "detect"}
ALLOCATION_FILES = sorted(p.name.removesuffix(".gz") for p in VECTORS.glob("allocation-*.gz"))


def _records(name: str) -> list[dict[str, Any]]:
    text = gzip.decompress((VECTORS / f"{name}.gz").read_bytes()).decode()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("name", PRODUCER_FILES)
def test_every_producer_expectation_holds(name: str) -> None:
    report = run_file(VECTORS / f"{name}.gz")
    expected = sum(1 for rec in _records(name) for s in rec["steps"] if s["op"] in COUNTED_OPS)
    assert report.failures() == []
    assert report.passed == expected


@pytest.mark.parametrize("name", ALLOCATION_FILES)
def test_every_allocation_case_holds(name: str) -> None:
    report = run_file(VECTORS / f"{name}.gz")
    expected = sum(len(rec["cases"]) + len(rec.get("rebalance_view", {}).get("cases", []))
                   for rec in _records(name))
    assert report.failures() == []
    assert report.passed == expected


def test_allocation_files_cover_every_upstream_strategy() -> None:
    strategies = {rec["strategy"] for name in ALLOCATION_FILES for rec in _records(name)}
    assert strategies == {"AVG", "AVG_BY_CIRCLE", "CONFIG", "CONSISTENT_HASH", "MACHINE_ROOM",
                          "MACHINE_ROOM_NEARBY", "POP"}


def test_primitives() -> None:
    report = run_file(VECTORS / "producer-primitives.jsonl.gz")
    assert report.failures() == []
    assert report.passed == len(_records("producer-primitives.jsonl"))


def test_upstream_producer_tests() -> None:
    report = run_file(VECTORS / "upstream-tests.json.gz")
    assert report.failures() == []
    compared = {o.case.split(" ")[0] for o in report.outcomes}
    assert {"LatencyFaultToleranceImplTest", "ThreadLocalIndexTest", "SelectMessageQueueRetryTest",
            "MQFaultStrategyTest", "MQClientInstanceTest", "AllocateMessageQueueAveragelyTest",
            "AllocateMessageQueueAveragelyByCircleTest", "AllocateMessageQueueByConfigTest",
            "AllocateMessageQueueByMachineRoomTest", "AllocateMessageQueueConsitentHashTest",
            "AllocateMachineRoomNearByTest"} <= compared
    assert report.passed >= 55


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared is not beside this clone")
@pytest.mark.parametrize("copy_gz", sorted(p.name for p in VECTORS.glob("*.gz")))
def test_committed_copies_equal_the_shared_vectors(copy_gz: str) -> None:
    original = SHARED / copy_gz.removesuffix(".gz")
    assert gzip.decompress((VECTORS / copy_gz).read_bytes()) == original.read_bytes()


@pytest.mark.parametrize(("name", "as_tag"), [
    ("producer-4.9.7.jsonl", "rocketmq-all-4.9.8"),   # the cached-queue rewrite matters
    ("producer-4.9.8.jsonl", "rocketmq-all-4.9.7"),
    ("producer-4.7.1.jsonl", "rocketmq-all-4.9.8"),   # lastBrokerName, counter, avoid-last pick
    ("producer-4.9.8.jsonl", "rocketmq-all-4.7.1"),
    ("producer-5.3.3.jsonl", "rocketmq-all-4.9.8"),
])
def test_each_lines_differences_are_exercised(name: str, as_tag: str) -> None:
    """Replaying one line's vectors with another line's rules must fail somewhere."""
    report = Report(name, "producer")
    for rec in _records(name):
        rec = copy.deepcopy(rec)
        rec["source"]["tag"] = as_tag
        if as_tag.endswith("4.7.1"):
            rec["index_start"] = abs(rec["index_start"]) if rec["index_start"] > -2**31 else 0
        try:
            run_producer_case(rec, report)
        except ValueError:
            report.add(rec["id"], False, "not replayable on that line")
    assert report.failed > 0


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocketlb_core", "conformance", *args],
                          capture_output=True, text=True, timeout=300)


def test_cli_prints_per_file_summaries_and_a_final_count() -> None:
    files = [str(VECTORS / "producer-primitives.jsonl.gz"),
             str(VECTORS / "producer-4.9.8.jsonl.gz")]
    proc = _cli(*files)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()           # the report, for people
    assert lines[0].endswith("primitives: 55 passed, 0 failed")
    assert lines[-1] == f"{55 + 12044} passed, 0 failed"
    result = json.loads(proc.stdout)                     # the result, for programs
    assert (result["passed"], result["failed"]) == (55 + 12044, 0)
    assert [f["passed"] for f in result["files"]] == [55, 12044]


def test_cli_exits_3_and_counts_a_wrong_expectation(tmp_path: Path) -> None:
    recs = _records("producer-4.9.8.jsonl")[:3]
    step = next(s for s in recs[1]["steps"] if s["op"] == "select")
    step["expect"] = [step["expect"][0], "no-such-broker", 0]
    bad = tmp_path / "tampered.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in recs))
    proc = _cli(str(bad))
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines()[-1].endswith(" passed, 1 failed")
    assert "FAIL " + recs[1]["id"] in proc.stderr
    result = json.loads(proc.stdout)
    assert result["failed"] == 1
    assert result["files"][0]["failures"][0]["case"].startswith(recs[1]["id"])


@pytest.mark.parametrize(("content", "words"), [
    ('{"id": 1, "steps": [], "message_queues": []\n', "line 1: invalid JSON"),
    ('{"hello": "world"}\n', "line 1: not a conformance record"),
    ("", "empty file"),
    ('{"kind": "thread_local_index", "line": "4.9.x"}\n', "line 1: malformed primitives record"),
    ('[1, 2]\n', "line 1: expected a JSON object"),
])
def test_cli_rejects_malformed_files(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(content)
    proc = _cli(str(path))
    assert proc.returncode == 2
    assert str(path) in proc.stderr
    assert words in proc.stderr


def test_cli_rejects_a_missing_file(tmp_path: Path) -> None:
    proc = _cli(str(tmp_path / "nope.jsonl"))
    assert proc.returncode == 2
    assert "cannot read" in proc.stderr
