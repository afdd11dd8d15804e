"""The newest remoting lines, 5.4.0 and 5.5.0 (issue 34, item 1): their producer vectors, made
from the releases' jars (``rocketlb_core.vectorgen.remoting``), pass on their own line; and the
cross-check: their producer selection is 5.3.3's, so the same files replayed under 5.3.3's rules
pass too and hold exactly the answers of ``producer-5.3.3.jsonl``: identical behaviour, proved on
every step (422 scenarios, 10,320 selections). They still fail under 4.9.8's rules, so the files
do tell lines apart."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core.conformance import Report, run_file
from rocketlb_core.conformance.producer_vectors import run_producer_case
from rocketlb_core.producer import ProducerLine
from rocketlb_core.producer.line import RULES

VECTORS = Path(__file__).parent / "vectors"
NEW = ("5.4.0", "5.5.0")
COUNTED = {"select", "probe", "pick", "detect"}


def _records(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def base() -> list[dict[str, Any]]:
    return _records(VECTORS / "producer-5.3.3.jsonl.gz")


@pytest.mark.parametrize("version", NEW)
def test_the_new_files_pass_on_their_line(version: str) -> None:
    path = VECTORS / "rocketmq" / f"producer-{version}.jsonl.gz"
    report = run_file(path)
    recs = _records(path)
    assert report.failures() == []
    assert report.passed == sum(1 for r in recs for s in r["steps"] if s["op"] in COUNTED)
    assert len(recs) == 422
    assert sum(1 for r in recs for s in r["steps"] if s["op"] == "select") == 10_320
    source = recs[0]["source"]
    assert source["artifact"] == "org.apache.rocketmq:rocketmq-client"
    assert source["version"] == version
    assert source["jvm"] == 17
    assert ProducerLine.parse(source["tag"]) == ProducerLine(version)


@pytest.mark.parametrize("version", NEW)
def test_cross_check_the_new_lines_select_as_5_3_3_does(version: str,
                                                        base: list[dict[str, Any]]) -> None:
    """Identical behaviour: the jar's answers are 5.3.3's, step for step, and 5.3.3's rules
    pass the file (so no difference between the lines can hide in these scenarios)."""
    recs = _records(VECTORS / "rocketmq" / f"producer-{version}.jsonl.gz")
    assert [r["id"] for r in recs] == [r["id"] for r in base]
    for new, old in zip(recs, base, strict=True):
        assert new["steps"] == old["steps"], new["id"]
        assert new["final_index_stored"] == old["final_index_stored"]
    report = Report(version, "producer")
    for rec in recs:
        rec = copy.deepcopy(rec)
        rec["source"]["tag"] = "rocketmq-all-5.3.3"
        run_producer_case(rec, report)
    assert report.failed == 0
    assert report.passed > 12_000
    assert set(recs[0]["source"]["identical_on"]) == {"5.3.3", *NEW} - {version}


@pytest.mark.parametrize("version", NEW)
def test_the_new_files_fail_under_the_4x_rules(version: str) -> None:
    report = Report(version, "producer")
    for rec in _records(VECTORS / "rocketmq" / f"producer-{version}.jsonl.gz"):
        rec = copy.deepcopy(rec)
        rec["source"]["tag"] = "rocketmq-all-4.9.8"
        try:
            run_producer_case(rec, report)
        except ValueError:
            report.add(rec["id"], False, "not replayable on that line")
    assert report.failed > 0


def test_the_rows_differ_from_5_3_3_only_in_the_rebalance_rule() -> None:
    """5.4.0's row is 5.3.3's; 5.5.0's differs only in ``rebalance_skips_empty``
    (``RebalanceImpl.rebalanceByTopic``, rocketmq-client 5.5.0)."""
    old = RULES[ProducerLine.V5_3_3]
    assert RULES[ProducerLine.V5_4_0] == old
    new = RULES[ProducerLine.V5_5_0]
    differs = {k for k in vars(old) if getattr(old, k) != getattr(new, k)}
    assert differs == {"rebalance_skips_empty"}
    assert ProducerLine.parse("rocketmq-all-5.5.0") is ProducerLine.V5_5_0
    assert ProducerLine.parse("5.5") is ProducerLine.V5_5_0
    assert ProducerLine.parse("5.x") is ProducerLine.V5_3_3      # unchanged default
