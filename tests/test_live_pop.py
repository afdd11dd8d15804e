"""Remoting push consumers whose queues a broker computes, live (issue 45: pop on 5.x): upstream's
``DefaultMQPushConsumer`` with ``setClientRebalance(false)`` (``live/java/Consume.java``,
``rebalance = "broker"``) in a group switched to POP with ``popShareQueueNum`` 1 (``mqadmin
setConsumeMode``) and in a group left in PULL mode (``data/scenarios/live/pop-consumers.toml``),
recorded on lines 5 and 5.5 (``data/live/pop-consumers-*``; line 4 has neither) and checked
offline here (``trace.pop_agreement``): every assignment a member logged ("broker rebalanced
result changed") is what the released ``QueryAssignmentProcessor`` (the package's
``broker_query_assignment``) answers on a member list a broker held then: in POP mode with one
or two members every broker's queue -1 (``popShareQueueNum`` >= members - 1), with three the
member's AVG share and the next member's, each queue in POP mode; in PULL mode AVG."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rocketlb_core import data_path
from rocketlb_core.live.record import ConsumeMode, parse_scenario
from rocketlb_core.sim.scenario import ScenarioError
from rocketlb_core.trace.schema import TraceError
from tests.test_consumer_broadcast import _attempt
from tests.test_fuzz import TRIED
from tests.test_live_record import SCENARIO, _toml_value
from tests.test_producer_modes import HOSTILE
from tests.test_producer_threads import shipped_lines

LINES = ("5", "5.5")


def _recording(line: str) -> Path:
    return data_path("live", f"pop-consumers-{line}")


checked = shipped_lines("pop-consumers", LINES)


def test_every_broker_assignment_is_the_brokers_answer(
        checked: tuple[str, Path, dict[str, Any]]) -> None:
    line, _, result = checked
    assert result["producers"]["p-slow"]["unexplained"] == 0
    for name in ("b1", "b2", "b3", "q1", "q2"):
        c = result["consumers"][name]
        assert c["rebalance"] == "broker"
        assert c["logged"] >= 1, (line, name)
        assert c["unexplained"] == 0, (line, name, c["unexplained_detail"][:2])
    assert {result["consumers"][n]["mode"] for n in ("b1", "b2", "b3")} == {"POP"}
    assert {result["consumers"][n]["mode"] for n in ("q1", "q2")} == {"PULL"}


def test_pop_share_gives_everything_then_two_shares(
        checked: tuple[str, Path, dict[str, Any]]) -> None:
    """With one or two members every member pops each broker's queue -1; once b3 joined, each
    took real queues in POP mode, held when the scenario ended: its AVG share and the next
    member's (3 + 3, 3 + 2 or 2 + 3 of the 8 queues)."""
    line, _, result = checked
    b1 = result["consumers"]["b1"]["assignments"]
    assert b1[0][1] == ["broker-a/-1:POP", "broker-b/-1:POP"], line
    last = {n: result["consumers"][n]["held_at_end"] for n in ("b1", "b2", "b3")}
    for name, queues in last.items():
        assert all(q.endswith(":POP") and "/-1" not in q for q in queues), (line, name)
        assert len(queues) in (5, 6), (line, name, queues)
    pulled = [q for n in ("q1", "q2") for q in result["consumers"][n]["held_at_end"]]
    assert sorted(pulled) == sorted(f"broker-{b}/{i}:PULL" for b in "ab" for i in range(4))


def test_the_check_fails_with_another_pop_share(
        checked: tuple[str, Path, dict[str, Any]], tmp_path: Path) -> None:
    """The same recording said to hold popShareQueueNum -1 (the broker's default: every member
    pops everything): the three-member assignments are not explained."""
    from rocketlb_core.trace.agreement import check_recording

    line, trace, _ = checked
    copy = tmp_path / "rec"
    shutil.copytree(_recording(line), copy)
    meta = json.loads((copy / "recording.json").read_text())
    meta["consume_modes"][0]["pop_share"] = -1
    (copy / "recording.json").write_text(json.dumps(meta))
    result = check_recording(copy, trace)
    assert sum(result["consumers"][n]["unexplained"] for n in ("b1", "b2", "b3")) >= 3


def test_the_groups_consumption(checked: tuple[str, Path, dict[str, Any]]) -> None:
    """Every stored message reached each group: the PULL group's from their queues, the POP
    group's too, but for the few that came back through the pop retry topic a minute later
    (popped by b1 or b2 just before b3's join dropped their queue -1, never acknowledged),
    matched to the stored messages by body; no consumed message is other than a stored one."""
    line, _, result = checked
    pull, pop = result["groups"]["GID_bpull"], result["groups"]["GID_pop"]
    assert pull["stored"] == pop["stored"] == 300
    assert pull["consumed"] == pop["consumed"] == 300, (line, pop)
    assert pop["redelivered"] >= 1, (line, pop)
    assert pop["missing"] == pull["missing"] == 0
    assert pull["strays"] == pop["strays"] == 0
    assert pull["unexplained"] == pop["unexplained"] == 0


@pytest.mark.parametrize(("text", "where", "message"), [
    ('\n[[consumers]]\nname = "k"\ngroup = "G"\nrebalance = "server"\n', "consumers[1].rebalance",
     "one of client, broker"),
    ('\n[[consumers]]\nname = "k"\ngroup = "G"\nrebalance = "broker"\nlistener = "orderly"\n',
     "consumers[1].rebalance", "a Java remoting push consumer"),
    ('\n[[consumers]]\nname = "k"\ngroup = "G"\nrebalance = "broker"\nlanguage = "go"\n',
     "consumers[1].rebalance", "a Java remoting push consumer"),
    ('\n[[consume_modes]]\ngroup = "nobody"\nmode = "POP"\n', "consume_modes[0].group",
     "a group of the scenario's remoting consumers"),
    ('\n[[consume_modes]]\ngroup = "G"\nmode = "PUSH"\n', "consume_modes[0].mode",
     "one of PULL, POP"),
    ('\n[[consume_modes]]\ngroup = "G"\nmode = "POP"\npop_share = 65\n',
     "consume_modes[0].pop_share", ""),
    ('\n[[consume_modes]]\ngroup = "G"\nmode = "PULL"\npop_share = 1\n',
     "consume_modes[0].pop_share", "only the POP mode has it"),
])
def test_a_bad_pop_field_is_refused_naming_it(text: str, where: str, message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(SCENARIO + text, "s.toml")
    assert where in str(err.value)
    assert message in str(err.value)


def test_the_shipped_scenario_reads_its_modes() -> None:
    sc = parse_scenario(data_path("scenarios", "live", "pop-consumers.toml").read_text(
        encoding="utf-8"), "pop-consumers.toml")
    assert sc.consume_modes == (ConsumeMode("GID_pop", "POP", 1),)
    assert {k.rebalance for k in sc.consumers} == {"broker"}


def test_a_bad_broker_rebalance_line_names_the_file_and_line(tmp_path: Path) -> None:
    from rocketlb_core.trace.pop_agreement import read_broker_rebalances

    head = ("2026-11-29 05:31:52.727 INFO  [1] [RebalanceService] [o.a.r.c.i.c.RebalanceImpl#?:?]"
            " - broker rebalanced result changed. allocateMessageQueueStrategyName=AVG, "
            "group=G, topic=T, clientId=c, assignmentSet=[")
    good = "MessageQueueAssignment [MessageQueue=MessageQueue [topic=T, brokerName=b, " \
           "queueId=-1], Mode=POP]"
    path = tmp_path / "rocketmq_client.log"
    path.write_text(head + good + "]\n")
    (r,) = read_broker_rebalances(path)
    assert r.assignment == (("b", -1, "POP"),)
    for bad in (good.replace("-1", "70000"), good.replace("POP", "PUSH"),
                good.replace("topic=T,", "topic=U,")):
        path.write_text("\n" + head + bad + "]\n")
        with pytest.raises(TraceError) as err:
            read_broker_rebalances(path)
        assert err.value.path == str(path)
        assert err.value.row == 2


@given(value=st.one_of(HOSTILE, st.just(KeyError)),
       key=st.one_of(st.sampled_from(["broker-a/0", "b/x", "/0", "broker-a/70000"]),
                     st.text(max_size=8)),
       part=st.sampled_from(["offsets", "deliveries", "redelivered"]))
@settings(max_examples=120, derandomize=True, deadline=None, database=None)
def test_a_hostile_offsets_file_is_read_or_refused_naming_it(value: object, key: str,
                                                              part: str) -> None:
    """``offsets/<member>.json`` with one entry replaced (or removed) by anything: read within
    its bounds, or refused naming the file."""
    import tempfile

    from rocketlb_core.trace.pop_agreement import read_offsets

    doc = json.loads((_recording("5") / "offsets" / "b1.json").read_text())
    if part == "redelivered":
        doc[part] = [] if value is KeyError else [value, "m1"]
    elif value is KeyError:
        doc[part].pop(key, None)
    else:
        doc[part][key] = value
    TRIED["live check: a broker-assigned member's offsets"] += 1
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        path = Path(tmp) / "offsets.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        got_back, refused = _attempt(lambda: read_offsets(path))
    if refused is not None:
        TRIED["live check: a broker-assigned member's offsets: refused"] += 1
        assert refused.path == str(path)
        return
    offsets, sent, again = got_back
    assert all(isinstance(b, str) and len(b) <= 64 for b in again)
    for (broker, queue), got in offsets.items():
        assert broker
        assert 0 <= queue <= 65_535
        assert all(0 <= o < 2**63 for o in got)
    assert all(0 <= n < 2**63 for n in sent.values())


REBALANCE_VALUES = st.one_of(st.none(), st.sampled_from(["client", "broker"]),
                             st.one_of(st.text(max_size=8), st.integers(-3, 3), st.booleans()))
MODE_VALUES = st.one_of(st.sampled_from(["PULL", "POP"]),
                        st.one_of(st.text(max_size=6), st.integers(-3, 3), st.booleans()))
SHARE_VALUES = st.one_of(st.none(), st.integers(-1, 64),
                         st.one_of(st.integers(-5, 70), st.booleans(), st.text(max_size=4),
                                   st.floats(allow_nan=False, allow_infinity=False, width=32)))


@given(rebalance=REBALANCE_VALUES, mode=MODE_VALUES, share=SHARE_VALUES,
       group=st.sampled_from(["G", "H"]), listener=st.sampled_from(["concurrently", "orderly"]))
@example(rebalance="broker", mode="POP", share=1, group="G", listener="concurrently")
@example(rebalance="broker", mode="POP", share=64, group="G", listener="concurrently")
@example(rebalance=None, mode="PULL", share=None, group="G", listener="orderly")
@example(rebalance="client", mode="POP", share=-1, group="G", listener="orderly")
@example(rebalance="broker", mode="POP", share=65, group="G", listener="concurrently")
@settings(max_examples=300, derandomize=True, deadline=None, database=None)
def test_a_consumers_rebalance_and_a_groups_mode_are_read_in_range_or_refused_by_field(
        rebalance: object, mode: object, share: object, group: str, listener: str) -> None:
    """A remoting push consumer's ``rebalance`` is ``client`` or ``broker`` (a concurrent,
    clustering Java one for ``broker``); a ``[[consume_modes]]`` entry names a group of the
    scenario's remoting consumers, a ``mode`` of PULL or POP and, for POP only, a ``pop_share``
    from -1 to 64. Anything else is a ``ScenarioError`` naming the file and the field."""
    text = (f'name = "m"\ntopic = "T"\n[[consumers]]\nname = "c"\ngroup = "G"\n'
            f'listener = "{listener}"\n')
    text += f"rebalance = {_toml_value(rebalance)}\n" if rebalance is not None else ""
    text += f'\n[[consume_modes]]\ngroup = "{group}"\nmode = {_toml_value(mode)}\n'
    text += f"pop_share = {_toml_value(share)}\n" if share is not None else ""
    ok_consumer = rebalance in (None, "client") or (rebalance == "broker"
                                                     and listener == "concurrently")
    ok_mode = (group == "G" and mode in ("PULL", "POP")
               and (share is None or (mode == "POP" and type(share) is int
                                      and -1 <= share <= 64)))
    TRIED["live scenario: a consumer's rebalance and a group's mode"] += 1
    if not (ok_consumer and ok_mode):
        TRIED["live scenario: a consumer's rebalance and a group's mode: refused"] += 1
        with pytest.raises(ScenarioError, match=r"^<t>: (consumers\[0\]\.(rebalance|listener)"
                                                r"|consume_modes\[0\]\.(group|mode|pop_share)"
                                                r"|line \d+:|not valid TOML)"):
            parse_scenario(text, "<t>")
        return
    sc = parse_scenario(text, "<t>")
    assert sc.consumers[0].rebalance == (rebalance or "client")
    (m,) = sc.consume_modes
    assert (m.group, m.mode) == ("G", mode)
    assert m.pop_share == (share if share is not None else -1)



@pytest.mark.parametrize(("edit", "field"), [
    (lambda m: m["consume_modes"][0].update(mode="PUSH"), "consume_modes[0]"),
    (lambda m: m["consume_modes"][0].update(pop_share=99), "consume_modes[0]"),
    (lambda m: m["consume_modes"][0].update(group="nobody"), "consume_modes[0]"),
    (lambda m: m.update(consume_modes={"GID_pop": "POP"}), "consume_modes"),
    (lambda m: m["consumers"][0].update(rebalance="server"), "consumers[0].rebalance"),
])
def test_a_recording_with_a_bad_mode_is_refused_naming_it(tmp_path: Path, edit: Any,
                                                          field: str) -> None:
    from rocketlb_core.trace.importer import load_recording

    copy = tmp_path / "r"
    shutil.copytree(_recording("5"), copy)
    meta = json.loads((copy / "recording.json").read_text(encoding="utf-8"))
    edit(meta)
    (copy / "recording.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(TraceError) as info:
        load_recording(copy)
    assert info.value.field == field


def test_generated_scenarios_draw_a_pop_group_on_5x_lines_only() -> None:
    """``generate_scenario(seed, line, modes=True)`` on a 5.x line may add, last of all, a
    group ``GID_pop`` in POP mode (``popShareQueueNum`` -1, 1 or 2) of two or three members
    whose queues a broker computes, staying to the end, with every killed broker restarted;
    on line 4, or with no line, never; the rest of each seed's scenario unchanged."""
    from collections import Counter

    from rocketlb_core.live.generate import POP_GROUP, generate_scenario

    seen: Counter[object] = Counter()
    for seed in range(200):
        four = parse_scenario(generate_scenario(seed, "4", modes=True), "4")
        assert not four.consume_modes
        assert not any(k.rebalance == "broker" for k in four.consumers)
        five = parse_scenario(generate_scenario(seed, "5", modes=True), "5")
        pop = [k for k in five.consumers if k.group == POP_GROUP]
        assert [k for k in five.consumers if k.group != POP_GROUP] == list(four.consumers)
        if not pop:
            assert five.events == four.events
            continue
        assert 2 <= len(pop) <= 3
        assert all(k.rebalance == "broker" for k in pop)
        (mode,) = five.consume_modes
        assert (mode.group, mode.mode) == (POP_GROUP, "POP")
        seen[mode.pop_share] += 1
        joins = {e.target for e in five.events if e.action == "join"}
        assert {k.name for k in pop} <= joins
        assert not {e.target for e in five.events if e.action in ("leave", "crash")} & {
            k.name for k in pop}
        killed = {e.target for e in five.events if e.action == "kill"}
        assert killed <= {e.target for e in five.events if e.action == "restart"}
    assert sum(seen.values()) >= 40, seen
    assert set(seen) == {-1, 1, 2}, seen
