"""The brokers' and name servers' idle close in the simulator (issue 45).

A broker's Netty pipeline closes a connection with no traffic either way for 120 s
(``IdleStateHandler(0, 0, 120)``), and the close notifies the group (``doChannelCloseEvent``);
its 10 s scan drops a channel whose last heartbeat is over 120 s old and notifies nobody. A host
that vanishes is dropped by whichever comes first. Live (5.3.3): a consumer frozen 2.4 s after a
heartbeat lost its queues 120.1 s later, 11 ms after the IDLE exception; one frozen 25 s after a
heartbeat was dropped by the scan. A name server closes a silent broker's connection the same
way, 120 s after its last registration."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from rocketlb_core import data_path
from rocketlb_core.conditions import (
    CHANNEL_SCAN_MS,
    HOLD_CHECK_MS,
    IDLE_CLOSE_MS,
    PULL_SUSPEND_MS,
)
from rocketlb_core.sim.experiments import crash_timing
from rocketlb_core.sim.scenario import EventSpec, load, loads
from rocketlb_core.sim.world import run_scenario

CRASH = data_path("scenarios", "crash-without-unregister.toml")


def _drops(journal: list[Any], channel: str) -> list[tuple[int, str, str]]:
    return [(r.time_ms, r.entity, r.fields.get("by", "closed")) for r in journal
            if r.kind in ("channel_expired", "channel_closed") and r.fields["channel"] == channel]


def test_a_death_soon_after_a_heartbeat_is_closed_idle_and_moves_at_once() -> None:
    """Crash 0.5 s to 29.5 s after a heartbeat. The heartbeat falls on a scan tick here, so
    the scan drops the channel at heartbeat + 130 s, the first tick more than 120 s after it;
    the idle close comes 120 s after the last pull (the queues flow: held pulls are answered
    at once), so first when the death came less than 10 s after the heartbeat. Then every
    broker closes it idle and the survivors, notified, own its queues within milliseconds;
    later deaths go the scan's way, up to 20 s more (the periodic rebalance)."""
    rows = crash_timing(load(CRASH), "GID_crash", "consumer-2",
                        [500, 4_000, 9_500, 10_500, 22_500, 29_500])
    scan_lag_s = CHANNEL_SCAN_MS / 1000
    for r in rows:
        after = r["after_heartbeat_s"]
        if after < scan_lag_s:
            assert r["dropped_by"] == "idle close"
            assert r["dropped_s"] == IDLE_CLOSE_MS / 1000
            assert r["owned_again_s"] - r["dropped_s"] <= 0.002     # notified: at once
        else:
            assert r["dropped_by"] == "scan"
            assert 120 < after + r["dropped_s"] <= 130
            assert 0 <= r["owned_again_s"] - r["dropped_s"] <= 20.001
    assert [r["dropped_by"] for r in rows] == ["idle close"] * 3 + ["scan"] * 3


def test_a_pull_held_on_an_idle_queue_keeps_the_channel_open_15_to_20_s_longer() -> None:
    """No messages: the broker holds the vanished consumer's pulls for the 15 s suspend
    timeout and answers them at its hold service's next 5 s pass (passes at 5 s steps from
    the broker's start at 0: the pulls held at 61 s are answered at 80 s), a write, so the
    idle close could come only 139 s after the death; the scan (at most 130 s after the
    heartbeat) comes first."""
    quiet = replace(load(CRASH), producers=())
    crash_ms = 60_000 + 1_000                         # 1 s after its heartbeat at 60 s
    events = tuple(e for e in quiet.events if e.kind != "consumer_crash")
    events = (EventSpec(crash_ms, "consumer_crash", {"consumer": "consumer-2"}), *events)
    at = run_scenario(replace(quiet, events=events, duration_ms=crash_ms + 20_000, drain_ms=0))
    for broker in ("broker-a", "broker-b"):
        channel = at.world.brokers[broker].consumers["GID_crash"]["consumer-2"]
        assert channel.last_write_ms == 80_000
        assert 0 <= channel.last_write_ms - (crash_ms + PULL_SUSPEND_MS) < HOLD_CHECK_MS
    run = run_scenario(replace(quiet, events=events, duration_ms=crash_ms + 200_000))
    assert {by for _, _, by in _drops(run.world.env.journal, "consumer-2")} == {"scan"}


def test_a_partition_closes_the_channel_idle_when_the_scan_would_come_later() -> None:
    """consumer-1 (pulling broker-a's queues) cut from broker-a for 150 s, 20 s after a
    heartbeat: broker-a's scan drops it 130 s after that heartbeat, 110 s after the cut,
    before the idle close (120 s after the cut). Cut 5 s after the heartbeat, the idle close
    comes first (125 s after the heartbeat), and broker-a notifies consumer-2 at once."""
    base = load(data_path("scenarios", "partition-consumer.toml"))
    for offset, by in ((5_000, "idle close"), (20_000, "scan")):
        cut = 30_000 + offset
        events = (EventSpec(cut, "partition", {"client": "consumer-1", "broker": "broker-a"}),
                  EventSpec(cut + 150_000, "heal", {"client": "consumer-1",
                                                     "broker": "broker-a"}))
        run = run_scenario(replace(base, events=events))
        journal = run.world.env.journal
        [(t, broker, how)] = [d for d in _drops(journal, "consumer-1") if d[0] < cut + 150_000]
        assert (broker, how) == ("broker-a", by)
        if by == "idle close":
            assert t == cut + IDLE_CLOSE_MS
            assert any(r.kind == "notified" and r.entity == "consumer-2" and r.time_ms == t + 1
                       for r in journal)


def test_a_silent_broker_leaves_the_name_servers_120_s_after_its_last_registration() -> None:
    """The name server's idle close, not its scan: broker-a (registering every 30 s from 0)
    vanishes at 65 s, so both name servers drop it at 60 s + 120 s exactly."""
    text = """
name = "silent-broker"
duration_ms = 240_000
[cluster]
name_servers = 2
brokers = [{ name = "broker-a" }, { name = "broker-b" }]
topics = [{ name = "T", brokers = ["broker-a", "broker-b"], read_queues = 2, write_queues = 2 }]
[[events]]
at_ms = 65_000
kind = "broker_crash"
broker = "broker-a"
mode = "silent"
"""
    journal = run_scenario(loads(text, "<silent>")).world.env.journal
    gone = [(r.time_ms, r.entity, r.fields["by"]) for r in journal
            if r.kind == "broker_expired"]
    assert gone == [(180_000, "namesrv-0", "idle close"), (180_000, "namesrv-1", "idle close")]


# ------------------------------------------------------------------ reading it from real logs

_JOIN = ("2026-11-24 09:44:36 INFO HeartbeatThread_1 - new consumer connected, group: GID_live "
         "CONSUME_PASSIVELY CLUSTERING channel: ClientChannelInfo [channel=[id: 0xab47bb76, "
         "L:/127.0.0.1:20921 - R:/127.0.0.1:46830], clientId=127.0.0.1@c3, language=JAVA, "
         "version=479, lastUpdateTimestamp=1795484676905]\n")
_CLOSE = ("2026-11-24 09:46:58 WARN NettyEventExecutor - NETTY EVENT: remove not active channel["
          "ClientChannelInfo [channel=[id: 0xab47bb76, L:/127.0.0.1:20921 ! R:/127.0.0.1:46830], "
          "clientId=127.0.0.1@c3, language=JAVA, version=479, lastUpdateTimestamp=1795484687295]] "
          "from ConsumerGroupInfo groupChannelTable, consumer group: GID_live\n")


def _idle(address: str, stamp: str = "2026-11-24 09:46:57") -> str:
    return (f"{stamp} WARN NettyServerCodecThread_2 - NETTY SERVER PIPELINE: IDLE exception "
            f"[{address}]\n")


def test_a_connection_the_idle_close_dropped_is_read_as_a_vanished_host(tmp_path: Path) -> None:
    """5.3.3's broker logs one line, ``remove not active channel``, whether the client's
    process died (its connection reset: a kill, notified at once) or the broker's idle close
    dropped a host gone quiet 120 s before (lines taken from the recording membership-day-5,
    the close moved 2 min later). ``remoting.log`` beside it tells them apart: an IDLE line
    for that connection's address in the same second or the one before makes it a crash
    120 s earlier; another address's, or no remoting log, leaves it a kill."""
    from rocketlb_core.trace.brokerlog import membership_of, read_broker_log

    folder = tmp_path / "broker-b"
    folder.mkdir()
    (folder / "broker.log").write_text(_JOIN + _CLOSE)
    close_ms = 1795484818000                          # 09:46:58 GMT+8, epoch ms
    assert [e.event for e in read_broker_log(folder / "broker.log").events] == ["join", "kill"]
    (folder / "remoting.log").write_text(_idle("127.0.0.1:9999") + _idle("127.0.0.1:46830",
                                                                         "2026-11-24 09:40:00"))
    assert read_broker_log(folder / "broker.log").events[1].event == "kill"
    (folder / "remoting.log").write_text(_idle("127.0.0.1:46830"))
    log = read_broker_log(folder / "broker.log")
    assert [(e.event, e.idle) for e in log.events] == [("join", False), ("crash", True)]
    rows, _ = membership_of([log])
    assert rows[-1] == (close_ms - IDLE_CLOSE_MS, "GID_live", "127.0.0.1@c3", "crash")


def test_an_idle_line_in_the_broker_log_itself_counts_too(tmp_path: Path) -> None:
    """A logback configuration that sends every logger to one file (the live recorder's 4.x
    brokers) puts the IDLE line in broker.log, before the close it caused."""
    from rocketlb_core.trace.brokerlog import read_broker_log

    (tmp_path / "broker.log").write_text(_JOIN + _idle("127.0.0.1:46830", "2026-11-24 09:46:58")
                                         + _CLOSE)
    assert [e.event for e in read_broker_log(tmp_path / "broker.log").events] == ["join",
                                                                                 "crash"]
