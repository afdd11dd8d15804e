"""The book's tables: what they claim follows from the simulator run's own journal and the
spec's timers (silent and clean broker crashes), and from the rebalance functions they call."""

from __future__ import annotations

import pytest

from rocketlb_core import data_path
from rocketlb_core.consumer.rebalance import ProcessQueue, update_process_queue_table
from rocketlb_core.model import MessageQueue
from rocketlb_core.sim.scenario import loads
from rocketlb_core.sim.world import run_scenario
from rocketlb_core.viz.charts import visibility_chart
from rocketlb_core.viz.tables import (
    VISIBILITY_STATES,
    broker_visibility_frame,
    hash_remap_frame,
    mixed_strategies_frame,
    rebalance_step_frame,
    start_offset_frame,
)

ROUTE_POLL_S = 30        # spec 4.5: pollNameServerInterval
EXPIRY_S = 120           # spec 7: a name server's idle close, 120 s without a registration
REGISTER_S = 30          # spec 1.3: a broker registers every 30 s


def _outage(mode: str):
    text = data_path("scenarios", "seed002-outage-fault-off.toml").read_text("utf-8")
    assert 'mode = "silent"' in text
    return run_scenario(loads(text.replace('mode = "silent"', f'mode = "{mode}"'),
                              f"outage-{mode}.toml"))


def _interval(frame, party: str, state: str) -> tuple[float, float]:
    rows = frame[(frame.party == party) & (frame.state == state)]
    assert len(rows) == 1, (party, state, rows)
    return float(rows.start_s.iloc[0]), float(rows.end_s.iloc[0])


def test_a_silent_broker_stays_listed_until_expiry_and_then_until_the_next_route_poll() -> None:
    frame = broker_visibility_frame(_outage("silent"), "broker-a")
    assert set(frame.state) <= set(VISIBILITY_STATES)
    assert set(frame.party) == {"namesrv-0", "namesrv-1", "producer-1"}
    crash, restart = 60.0, 240.0
    for ns in ("namesrv-0", "namesrv-1"):
        start, dropped = _interval(frame, ns, "down, still listed")
        assert start == crash
        # the name server's idle close, 120 s after the broker's last registration (every
        # 30 s: at most 30 s before the crash, here the one at 30 s), before any scan
        assert crash + EXPIRY_S - REGISTER_S <= dropped < crash + EXPIRY_S
        assert dropped == 30 + EXPIRY_S
        assert _interval(frame, ns, "down, dropped") == (dropped, restart)
    start, forgotten = _interval(frame, "producer-1", "down, still listed")
    assert start == crash
    assert dropped <= forgotten < dropped + ROUTE_POLL_S
    # the producer learns of the restart at its next poll, not before
    after = frame[(frame.party == "producer-1") & (frame.start_s >= restart)]
    assert list(after.state) == ["up, not yet listed", "up, listed"]
    listed_again = after.iloc[1]
    assert listed_again.start_s - restart < ROUTE_POLL_S
    # every party's intervals tile the whole run, without gaps or overlaps
    for _, rows in frame.groupby("party"):
        assert rows.start_s.iloc[0] == 0
        assert list(rows.start_s.iloc[1:]) == list(rows.end_s.iloc[:-1])


def test_a_clean_crash_leaves_the_name_servers_at_once_but_not_the_producer() -> None:
    frame = broker_visibility_frame(_outage("clean"), "broker-a")
    for ns in ("namesrv-0", "namesrv-1"):
        assert "down, still listed" not in set(frame[frame.party == ns].state)
        assert _interval(frame, ns, "down, dropped")[0] == 60.0
    start, forgotten = _interval(frame, "producer-1", "down, still listed")
    assert start == 60.0
    assert forgotten - start <= ROUTE_POLL_S


@pytest.mark.parametrize("mode", ["silent", "clean"])
def test_the_visibility_chart_draws_every_state_in_its_legend(mode: str) -> None:
    spec = visibility_chart(broker_visibility_frame(_outage(mode), "broker-a"), "t").to_dict()
    assert spec["encoding"]["color"]["scale"]["domain"] == list(VISIBILITY_STATES)
    assert spec["encoding"]["x"]["title"] == "time (s)"


def test_start_offsets_follow_the_consume_from_where_switch_on_both_lines() -> None:
    """Spec 4.3's table: a committed offset wins everywhere, a failed lookup starts nothing,
    and "never committed" depends on the setting and on whether the topic is a retry topic."""
    frames = {line: start_offset_frame(max_offset=5000, search_offset=4200, committed=1200,
                                       group="G", line=line) for line in ("4.9.8", "5.3.3")}
    assert frames["4.9.8"].equals(frames["5.3.3"])       # 4.9.x returns -1, 5.x throws: both skip
    f = frames["4.9.8"].set_index(["consumeFromWhere", "topic"])
    assert set(f["committed 1200"]) == {"1200"}
    assert set(f["lookup failed (-2)"]) == {"skipped"}
    never = f["never committed (-1)"]
    assert never[("CONSUME_FROM_LAST_OFFSET", "TopicTest")] == "5000"
    assert never[("CONSUME_FROM_LAST_OFFSET", "%RETRY%G")] == "0"
    assert never[("CONSUME_FROM_FIRST_OFFSET", "TopicTest")] == "0"
    assert never[("CONSUME_FROM_TIMESTAMP", "TopicTest")] == "4200"
    assert never[("CONSUME_FROM_TIMESTAMP", "%RETRY%G")] == "5000"


def test_a_rebalance_step_table_names_every_outcome_of_an_orderly_step() -> None:
    q = [MessageQueue("T", "broker-a", i) for i in range(4)]
    step = update_process_queue_table(
        {q[0]: ProcessQueue(), q[1]: ProcessQueue()}, "T", {q[1], q[2], q[3]}, now_ms=1_000,
        need_lock=True, lock=lambda mq: mq.queue_id != 2,
        remove_unnecessary=lambda mq, pq: mq.queue_id != 0, pull_from_where=lambda mq: 42)
    table = rebalance_step_frame(step)["queues"]
    assert table["dropped (offset persisted)"] == "-"
    assert table["kept, flagged dropped (busy)"] == "broker-a/0"
    assert table["created"] == "broker-a/3 from 42"
    assert table["not created this round"] == "broker-a/2 (lock refused)"
    # a concurrent consumer (no lock, nothing busy) drops queue 0 and creates 2 and 3
    plain = rebalance_step_frame(update_process_queue_table(
        {q[0]: ProcessQueue(), q[1]: ProcessQueue()}, "T", {q[1], q[2], q[3]}, now_ms=1_000,
        pull_from_where=lambda mq: 7))["queues"]
    assert plain["dropped (offset persisted)"] == "broker-a/0"
    assert plain["created"] == "broker-a/2 from 7 broker-a/3 from 7"


def test_mixed_strategies_leave_queues_unowned_and_doubled_and_agreement_fixes_it() -> None:
    from rocketlb_core.consumer.registry import make

    queues = [MessageQueue("T", b, i) for b in ("broker-a", "broker-b") for i in range(4)]
    ids = ["10.0.0.1@c1", "10.0.0.2@c2", "10.0.0.3@c3"]
    same = mixed_strategies_frame({cid: make("AVG") for cid in ids}, queues)
    assert set(same.state) == {"one owner"}
    assert list(same.queue) == [q.short() for q in sorted(queues)]
    mixed = mixed_strategies_frame({ids[0]: make("AVG"), ids[1]: make("AVG_BY_CIRCLE"),
                                    ids[2]: make("AVG")}, queues)
    taken = sum(len(who.split(", ")) for who in mixed["taken by"] if who != "-")
    shares = (len(make("AVG").allocate("g", ids[0], queues, ids))
              + len(make("AVG_BY_CIRCLE").allocate("g", ids[1], queues, ids))
              + len(make("AVG").allocate("g", ids[2], queues, ids)))
    assert taken == shares == len(queues)          # as many slots as queues, badly placed
    assert {"unowned", "owned twice"} <= set(mixed.state)
    assert (mixed.state == "unowned").sum() == (mixed.state == "owned twice").sum()


def test_hash_remap_moves_exactly_the_keys_of_a_leaving_broker_of_two() -> None:
    frame = hash_remap_frame(keys=4_000).set_index("route change")["keys moved (%)"]
    # every key is on broker-a or broker-b: the two "leaves" rows share the keys between them
    assert abs(frame["broker-a leaves (of a, b)"] + frame["broker-b leaves (of a, b)"] - 100) < 0.11
    assert frame["broker-b leaves (of a, b, c)"] > 100 / 3 + 10   # survivors' keys move too
    assert all(0 <= v <= 100 for v in frame)


def test_the_soak_frame_sums_each_line_and_keeps_failed_scenarios_out_of_the_sums(
        tmp_path) -> None:
    """``live_soak_frame``: the shipped recordings' row and each soak's row per line; a
    scenario whose recording failed is counted, not summed."""
    import json

    from rocketlb_core.viz.tables import live_soak_frame

    def scenario(line: str, sends: int, unexplained: int, logged: int) -> dict:
        return {"line": line, "max_late_ms": sends % 7,
                "producers": {"p": {"sends": sends, "determined": sends - 1, "agree": sends - 2,
                                    "inferred": 1, "reset": 0, "in_flight": 1 - unexplained,
                                    "unexplained": unexplained}},
                "consumers": {"logged": logged, "exact": logged - 2, "near_change": 1,
                              "stale_view": 1, "unexplained": 0}}

    rows = [scenario("4", 100, 0, 9), scenario("4", 50, 1, 4), scenario("5", 80, 0, 6),
            {"line": "5", "error": "record exited 2"}]
    soak = tmp_path / "soak.json"
    soak.write_text(json.dumps({"seed": 7, "rows": rows}))
    shipped = {"a-4": {"line": "4.9.8", "producers": {"p": rows[0]["producers"]["p"]},
                       "consumers": {"c": rows[0]["consumers"]}},
               "a-5.5": {"line": "5.5.0", "producers": {"p": rows[2]["producers"]["p"]},
                         "consumers": {"c": rows[2]["consumers"]}}}
    frame = live_soak_frame([soak], shipped)
    assert list(zip(frame["line"], frame["scenarios"], frame["count"], frame["failed"],
                    strict=True)) == [
        ("4", "shipped", 1, 0), ("4", "soak 7", 2, 0),
        ("5", "soak 7", 2, 1), ("5.5", "shipped", 1, 0)]      # 5.5.0: its own live line
    four = frame.iloc[1]
    assert (four["sends"], four["determined"], four["agree"]) == (150, 148, 146)
    assert (four["sends unexplained"], four["drawn at random"]) == (1, 2)
    assert (four["assignments"], four["explained"]) == (13, 13)
    assert four["max late (ms)"] == max(100 % 7, 50 % 7)
    assert frame.iloc[2]["sends"] == 80
    assert frame["max late (ms)"].isna().tolist() == [True, False, False, True]
    assert str(frame["max late (ms)"].dtype) == "Int64"
