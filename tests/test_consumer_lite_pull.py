"""Lite-pull consumers, live (issue 45): upstream's ``DefaultLitePullConsumer`` beside a push
consumer in one group (``data/scenarios/live/lite-pull.toml``): ``c1`` (push) joins at once, ``l1``
(lite-pull, subscribing) 5 s later, ``a1`` (lite-pull, assigning itself ``broker-a/0``) at 20 s
and leaves at 45 s, recorded on lines 4, 5 and 5.5 (``data/live/lite-pull-*``) and checked
offline here (``trace.agreement.check_recording``).

A subscribing lite-pull consumer has its own rebalance (``RebalanceLitePullImpl``) and logs its
assignments as a push consumer does: the allocation check covers it unchanged. An assigning one
has no rebalance, but its heartbeat still names its group, so the brokers list it as a member
and the subscribers count it: they leave it a share of the queues, of which it reads only the
one it assigned itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core import data_path
from rocketlb_core.live.record import LiveConsumer, parse_scenario
from rocketlb_core.sim.scenario import ScenarioError
from tests.test_live_record import SCENARIO, refuses_consumer_field
from tests.test_producer_threads import imported_once

LINES = ["4", "5", "5.5"]


def _recording(line: str) -> Path:
    return data_path("live", f"lite-pull-{line}")


@pytest.fixture(scope="module", params=LINES)
def checked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[str, Path, dict[str, Any]]:
    from rocketlb_core.trace.agreement import check_recording

    trace = imported_once(_recording(request.param), tmp_path_factory)
    return request.param, trace, check_recording(_recording(request.param), trace)


def test_every_member_of_the_mixed_group_is_explained(
        checked: tuple[str, Path, dict[str, Any]]) -> None:
    """Every assignment the push and the subscribing lite-pull consumer logged agrees with the
    allocation on the brokers' member lists, which hold the assigning consumer too; the
    assigning one read its own queue and nothing else; every send agrees."""
    line, _, result = checked
    assert result["producers"]["p-slow"]["unexplained"] == 0
    for name in ("c1", "l1", "a1"):
        c = result["consumers"][name]
        assert c["unexplained"] == 0, (line, name, c["unexplained_detail"][:3])
    assert result["consumers"]["l1"]["logged"] >= 2, line   # its own rebalance, logged
    a1 = result["consumers"]["a1"]
    assert a1["logged"] == 0                                # no rebalance of its own
    assert a1["read"] == ["broker-a/0"]
    assert a1["read_outside"] == 0


def test_the_subscribers_count_the_assigning_consumer(
        checked: tuple[str, Path, dict[str, Any]]) -> None:
    """While ``a1`` was in the group the subscribers' lists had three members: they left it a
    share, and the queues of that share but the one it assigned itself were read by nobody;
    after it left, the two subscribers held every queue between them."""
    from rocketlb_core.viz.tables import live_lite_pull_frame

    line, trace, result = checked
    frame = live_lite_pull_frame({f"lite-pull-{line}": (_recording(line), trace)},
                                 {f"lite-pull-{line}": result})
    rows = frame.set_index("member")
    assert int(rows.loc["c1", "counted"]) == 3
    assert int(rows.loc["l1", "counted"]) == 3
    nobody = set(rows.loc["c1", "read by nobody"].split())
    assert nobody, "the assigning consumer's share is read by nobody"
    assert "broker-a/0" not in nobody
    after = set(rows.loc["c1", "after"].split()) | set(rows.loc["l1", "after"].split())
    assert len(after) == 4


@pytest.mark.parametrize(("fields", "where", "message"), [
    ('kind = "pull"', "kind", "a remoting consumer's is \"lite-pull\""),
    ('kind = "push"', "kind", "a remoting consumer's is \"lite-pull\""),
    ('assign = ["broker-a/0"]', "assign", "only a lite-pull consumer has it"),
    ('kind = "lite-pull"\nassign = []', "assign", "at least one queue"),
    ('kind = "lite-pull"\nassign = ["broker-c/0"]', r"assign\[0\]", "a queue of this cluster"),
    ('kind = "lite-pull"\nassign = ["broker-a/4"]', r"assign\[0\]", "a queue of this cluster"),
    ('kind = "lite-pull"\nassign = ["broker-a/0", "broker-a/0"]', r"assign\[1\]",
     "a queue of this cluster"),
    ('kind = "lite-pull"\nassign = [1]', r"assign\[0\]", "a queue of this cluster"),
    ('kind = "lite-pull"\nlistener = "orderly"', "listener", "only a push consumer has it"),
    ('kind = "lite-pull"\nmodel = "broadcasting"', "model", "only a push consumer has it"),
])
def test_a_bad_lite_pull_consumer_is_refused_naming_the_field(fields: str, where: str,
                                                              message: str) -> None:
    refuses_consumer_field(fields, where, message)


def test_a_lite_pull_consumer_cannot_hang() -> None:
    text = SCENARIO + 'kind = "lite-pull"\n' + "".join(
        f'[[events]]\nat_s = {i}\naction = "{a}"\ntarget = "c1"\n'
        for i, a in enumerate(("join", "hang")))
    with pytest.raises(ScenarioError, match=r"events\[1\]\.action: hang needs a push consumer"):
        parse_scenario(text, "<t>")


def test_the_shipped_scenario_reads_its_members() -> None:
    sc = parse_scenario(data_path("scenarios", "live", "lite-pull.toml").read_text(
        encoding="utf-8"), "lite-pull.toml")
    assert sc.consumers == (LiveConsumer("c1", "GID_lp", "c1"),
                            LiveConsumer("l1", "GID_lp", "l1", kind="lite-pull"),
                            LiveConsumer("a1", "GID_lp", "a1", kind="lite-pull",
                                         assign=("broker-a/0",)))
    meta = json.loads((_recording("5") / "recording.json").read_text(encoding="utf-8"))
    assert meta["consumers"][2] == {"name": "a1", "group": "GID_lp", "instance": "a1",
                                    "kind": "lite-pull", "assign": ["broker-a/0"]}


@pytest.mark.parametrize(("key", "value"), [("kind", "simple"), ("kind", 3),
                                            ("assign", "broker-a/0"), ("assign", [7])])
def test_a_recording_with_a_bad_lite_pull_row_is_refused_naming_it(
        tmp_path: Path, key: str, value: object) -> None:
    import shutil

    from rocketlb_core.trace.importer import load_recording
    from rocketlb_core.trace.schema import TraceError

    copy = tmp_path / "r"
    shutil.copytree(_recording("5"), copy)
    meta = json.loads((copy / "recording.json").read_text(encoding="utf-8"))
    meta["consumers"][2][key] = value
    (copy / "recording.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(TraceError) as info:
        load_recording(copy)
    assert info.value.field == f"consumers[2].{key}"
