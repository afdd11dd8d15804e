"""The doctor at scale (issue 44, item 3), without timing anything: what made its cost grow
faster than its input is gone, and each bound says so in the report.

* A group's states from a broker log are made on demand, one per second of changes, and only
  the latest are checked, ``MAX_STATE_MEMBERS`` members in all (the doctor once copied the whole
  member list per join or leave: more than 8.9 GB on 100 k lines);
* each broker log's groups are found in one pass (once a pass over every line per group);
* allocation is one whole-group pass per state.
``bench/doctor.py`` measures the time and memory at 1x and 10x.
"""

from __future__ import annotations

import json
from pathlib import Path

from rocketlb_core.doctor.findings import MAX_STATE_MEMBERS, LogStates
from rocketlb_core.doctor.inputs import Evidence, MemberLine
from tests.helpers import run_command

CH = ("ClientChannelInfo [channel=[id: 0x{ch:08x}, L:/127.0.0.1:20911 - R:/127.0.0.1:{port}], "
      "clientId=127.0.0.1@{cid}, language=JAVA, version=479, lastUpdateTimestamp=1795484645948]")


def _stamp(second: int) -> str:
    return f"2026-11-24 {second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"


def _line(event: str, cid: str, second: int) -> MemberLine:
    return MemberLine(event, "G", cid, cid, "10.0.0.1:1", Evidence("b.log", second,
                                                                   _stamp(second) + " x"))


def test_changes_within_a_second_are_one_state() -> None:
    lines = [_line("join", f"c{i}", 5) for i in range(50)] + [_line("leave", "c0", 6)]
    states = list(LogStates(lines))
    assert [len(ms) for _, ms in states] == [50, 49]
    assert [since[-2:] for since, _ in states] == ["05", "06"]


def test_only_the_latest_states_are_checked_within_the_bound() -> None:
    joins = 6_000                       # one a second, never leaving: 18 M members in all states
    st = LogStates([_line("join", f"c{i}", i) for i in range(joins)])
    sizes = [len(ms) for _, ms in st]
    assert sum(sizes) <= MAX_STATE_MEMBERS
    assert sizes[-1] == joins                       # the latest state is always checked
    assert st.skipped == joins - len(sizes) > 0
    assert st[-1:][0][1][-1].client_id == f"c{joins - 1}"


def test_a_large_churning_group_is_diagnosed_with_a_note(tmp_path: Path) -> None:
    lines = []
    for i in range(6_000):
        ch = CH.format(ch=i, port=20000 + i, cid=f"c{i}")
        lines.append(f"{_stamp(i)} INFO HeartbeatThread_1 - new consumer connected, group: "
                     f"GID_big CONSUME_PASSIVELY CLUSTERING channel: {ch}")
    for g in range(2_000):               # and many groups of one member each
        ch = CH.format(ch=10_000 + g, port=30000 + g, cid=f"m{g}")
        lines.append(f"{_stamp(7_000)} INFO HeartbeatThread_1 - new consumer connected, "
                     f"group: GID_{g} CONSUME_PASSIVELY CLUSTERING channel: {ch}")
    (tmp_path / "broker.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, out, err = run_command(["doctor", str(tmp_path), "--json"], seconds=300)
    assert status in (0, 3), err
    report = json.loads(out)
    assert any("GID_big" in n and "not checked" in n for n in report["notes"]), report["notes"]
