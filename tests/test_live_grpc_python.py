"""rocketmq-python-client's gRPC producer through the Proxy, live (issue 34, item 3: the Python
client from PyPI, which installs here). The shipped recordings
(``data/live/grpc/grpc-python-producer-outage-*``, scenario
``data/scenarios/live/grpc-python-producer-outage.toml``) are checked offline by
``trace.grpc_agreement.python_producer_agreement``: the client's rule (a fresh queue for
every attempt, the counter started at random) names every receipt and how many attempts each
send took, and the Proxy's model (``grpc.proxy_send``) places every stored copy with those
attempts. A copy with one receipt moved is caught; a scenario that gives the Python client what
it cannot take is refused naming the field."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.live import cluster as live
from rocketlb_core.live.jars import LiveError
from rocketlb_core.live.record import parse_scenario
from rocketlb_core.sim.scenario import ScenarioError
from rocketlb_core.trace.grpc_agreement import check_grpc_recording

SHIPPED = sorted((data_path("live") / "grpc").glob("grpc-python-producer-outage-*"))


def test_the_python_recordings_are_shipped() -> None:
    assert [p.name for p in SHIPPED][:1] == ["grpc-python-producer-outage-5"]


@pytest.mark.parametrize("recording", SHIPPED, ids=lambda p: p.name)
def test_a_shipped_python_recording_agrees(recording: Path) -> None:
    result = check_grpc_recording(recording)
    assert result["python_client"] == {"package": "rocketmq-python-client", "version": "5.1.2"}
    (p,) = result["producers"].values()
    assert p["language"] == "python"
    assert p["unexplained"] == 0, json.dumps(p["unexplained_detail"][:5])
    assert p["client"].get("disagree", 0) == 0
    assert p["proxy"].get("unexplained", 0) == 0
    # broker-a's pause was met, and the Python client's retries took the next queues
    assert p["attempt_outcomes"].get("paused", 0) >= 1
    assert p["client"].get("retried", 0) >= 1
    assert p["client"]["agree"] + p["client"]["retried"] >= p["ok"] - 1
    assert p["receipt_offset_not_stored"] == 0
    assert p["stray_messages"] == 0
    assert p["log_failed_finally"] == p["failed"]


def test_a_receipt_moved_to_another_queue_is_unexplained(tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    shutil.copytree(SHIPPED[0], moved)
    path = moved / "sends" / "py1.jsonl.gz"
    rows = [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]
    row = rows[150]
    assert row["status"] == "SEND_OK"
    row["client_queue"] = (row["client_queue"] + 2) % 4          # two queues on, same broker
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    (p,) = check_grpc_recording(moved)["producers"].values()
    assert p["unexplained"] >= 1
    assert any(d["seq"] in (150, 151) for d in p["unexplained_detail"])


SCENARIO = """name = "t"
description = "t"
topic = "T"
"""


@pytest.mark.parametrize(("producer", "where", "message"), [
    ('client = "remoting"\nlanguage = "python"', "producers[0].language",
     "a remoting producer's is one of java, go"),
    ('client = "grpc"\nlanguage = "go"', "producers[0].language",
     "a grpc producer's is one of java, python"),
    ('client = "grpc"\nlanguage = "python"\nmax_attempts = 5', "producers[0].max_attempts",
     "the Python client takes its attempts from the Proxy"),
])
def test_a_python_producer_it_cannot_drive_is_refused(producer: str, where: str,
                                                      message: str) -> None:
    text = SCENARIO + f'[[producers]]\nname = "p"\ngroup = "G"\ncount = 1\n{producer}\n'
    with pytest.raises(ScenarioError, match=re.escape(f"<t>: {where}: {message}")):
        parse_scenario(text, "<t>")


def test_one_grpc_producer_a_scenario() -> None:
    """The Proxy keeps one queue counter per topic: two gRPC producers' attempts would
    interleave in it, and the check follows one."""
    two = "".join(f'[[producers]]\nname = "p{i}"\ngroup = "G"\ncount = 1\nclient = "grpc"\n'
                  for i in range(2))
    with pytest.raises(ScenarioError, match=r"<t>: producers: one gRPC producer a scenario"):
        parse_scenario(SCENARIO + two, "<t>")
    one = parse_scenario(SCENARIO + two.split("[[producers]]")[1].join(["[[producers]]", ""])
                         + '[[producers]]\nname = "r"\ngroup = "G"\ncount = 1\n', "<t>")
    assert [(p.client, p.language) for p in one.producers] == [("grpc", "java"),
                                                               ("remoting", "java")]


def test_start_grpc_producer_refuses_what_the_python_client_cannot_take(tmp_path: Path) -> None:
    c = live.Cluster(tmp_path.resolve(), "5", 19876, [], isolated=True)
    with pytest.raises(LiveError, match="language must be one of java, python"):
        live.start_grpc_producer(c, "T", 1, language="go")
    with pytest.raises(LiveError, match="takes maxAttempts from the Proxy"):
        live.start_grpc_producer(c, "T", 1, language="python", max_attempts=2)
    assert list(tmp_path.iterdir()) == []                  # nothing started, nothing written
