"""The cluster simulator: every shipped scenario meets its declared expectations, runs are
deterministic to the byte, bad scenario files fail clearly, and a Hypothesis state machine
checks at-least-once delivery and single ownership after arbitrary joins, leaves, crashes and
broker outages."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from rocketlb_core import data_path
from rocketlb_core.commands.simulate import simulate_to
from rocketlb_core.consumer.metrics import ownership
from rocketlb_core.model import MessageQueue
from rocketlb_core.sim.events import Priority, Scripted
from rocketlb_core.sim.golden import scenarios
from rocketlb_core.sim.scenario import (
    BrokerSpec,
    EventSpec,
    GroupSpec,
    MemberSpec,
    ProducerSpec,
    Scenario,
    ScenarioError,
    TopicSpec,
    load,
)
from rocketlb_core.sim.world import SCRIPT, World, check_expectations, run_scenario

SCENARIOS = scenarios()          # the simulator's (data/scenarios/live/ is for a real cluster)


def test_there_are_at_least_ten_scenarios() -> None:
    names = {p.stem for p in SCENARIOS}
    assert len(names) >= 10
    assert {"seed002-outage-fault-off", "seed002-outage-fault-on", "scale-out-past-queues",
            "crash-without-unregister", "duplicate-client-id", "multi-room",
            "slow-broker-fault-off", "slow-broker-fault-on"} <= names


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario_meets_its_declared_expectations(path: Path) -> None:
    scenario = load(path)
    assert scenario.expect, f"{path.name} declares no expectations"
    summary = run_scenario(scenario, seed=0).summary
    assert check_expectations(summary, scenario.expect) == []
    # Accounting: every message is stored or failed, and nothing stored is delivered nowhere
    # unless the scenario expects unconsumed messages.
    assert summary["messages_sent"] == summary["messages_stored"] + summary["messages_failed"]


def test_fault_tolerance_changes_where_messages_go_during_an_outage() -> None:
    off = run_scenario(load(data_path("scenarios", "seed002-outage-fault-off.toml"))).summary
    on = run_scenario(load(data_path("scenarios", "seed002-outage-fault-on.toml"))).summary
    assert on["messages_failed"] < off["messages_failed"]
    assert on["send_ms_p99"] < off["send_ms_p99"]
    assert on["stored_by_broker"]["broker-a"] < off["stored_by_broker"]["broker-a"]


def test_same_scenario_and_seed_give_identical_bytes(tmp_path: Path) -> None:
    scenario = load(data_path("scenarios", "crash-without-unregister.toml"))
    for run in ("a", "b"):
        simulate_to(scenario, 7, tmp_path / run)
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == [".rocketlb-output.json", "deliveries.parquet", "journal.parquet",
                     "messages.parquet", "summary.json"]
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    simulate_to(scenario, 8, tmp_path / "c")
    assert (tmp_path / "c" / "journal.parquet").read_bytes() != \
        (tmp_path / "a" / "journal.parquet").read_bytes()      # client ids come from the seed


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocketlb_core.simulate", *args],
                          capture_output=True, text=True, timeout=600)


def test_cli_writes_outputs_and_prints_the_summary(tmp_path: Path) -> None:
    proc = _cli(str(data_path("scenarios", "steady-state.toml")), "--seed", "3",
                "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["seed"] == 3
    assert summary["expectations"]["failed"] == []
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["messages_sent"] == summary["messages_sent"]


def test_cli_exits_3_when_an_expectation_fails(tmp_path: Path) -> None:
    text = data_path("scenarios", "steady-state.toml").read_text()
    bad = tmp_path / "wrong.toml"
    bad.write_text(text.replace("messages_unconsumed = 0", "messages_unconsumed = 5"))
    proc = _cli(str(bad))
    assert proc.returncode == 3
    assert "expectation failed: messages_unconsumed: expected 5, got 0" in proc.stderr


@pytest.mark.parametrize(("old", "new", "words"), [
    ("rate_per_s = 200", "rate_per_s = -1", "producers[0].rate_per_s: expected a number > 0"),
    ("rate_per_s = 200", 'rate_per_s = "fast"', "producers[0].rate_per_s: expected a number"),
    ('topic = "TopicTest"\nrate', 'topic = "Nope"\nrate', "producers[0].topic: unknown topic"),
    ("duration_ms = 120_000", "duration_ms = 120_000\ncolour = 1", "colour: unknown field"),
    ('brokers = ["broker-a", "broker-b"]', 'brokers = ["broker-z"]',
     "cluster.topics[0].brokers: expected a list of distinct known brokers"),
    ('name = "GID_steady"', 'name = "GID_steady"\nstrategy = "RANDOM"',
     "consumer_groups[0].strategy: unknown strategy"),
    ("[expect]", '[[events]]\nat_ms = 1\nkind = "meteor"\n\n[expect]', "events[0].kind: unknown"),
    ("[expect]", '[[events]]\nat_ms = 1\nkind = "consumer_crash"\nconsumer = "ghost"\n\n[expect]',
     "events[0].consumer: unknown client"),
    ("duration_ms = 120_000", "duration_ms = ", "not valid TOML"),
])
def test_bad_scenarios_name_the_file_and_the_field(tmp_path: Path, old: str, new: str,
                                                   words: str) -> None:
    text = data_path("scenarios", "steady-state.toml").read_text()
    assert old in text
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(ScenarioError) as info:
        load(bad)
    assert str(bad) in str(info.value)
    assert words in str(info.value)
    proc = _cli(str(bad))
    assert proc.returncode == 2
    assert words in proc.stderr


# ------------------------------------------------------------------ stateful
BROKERS = ("broker-a", "broker-b")
MEMBERS = tuple(f"c{i}" for i in range(5))


def _base() -> Scenario:
    return Scenario(
        name="stateful", description="", path="<hypothesis>", duration_ms=10**9, drain_ms=0,
        line=__import__("rocketlb_core.producer", fromlist=["ProducerLine"]).ProducerLine.V4_9_8,
        name_servers=1, brokers=tuple(BrokerSpec(b) for b in BROKERS),
        topics=(TopicSpec("T", BROKERS, 3, 3),),
        producers=(ProducerSpec("p", "T", 20.0, fault_tolerance=True),),
        groups=(GroupSpec("G", "T", tuple(MemberSpec(m, f"10.3.0.{i}")
                                          for i, m in enumerate(MEMBERS))),),
        events=(), expect={})


class ClusterMachine(RuleBasedStateMachine):
    """Random joins, leaves, crashes, slow messages and broker outages; then a quiet period and
    the checks."""

    @initialize()
    def setup(self) -> None:
        self.world = World(_base(), seed=11)
        env = self.world.env
        for be in self.world.broker_entities.values():
            be.start(env)
        self.world.ownership_changed(env)
        self.world.producers[0].start(env)
        self.members = {c.name: c for c in self.world.consumers["G"]}
        self.do("consumer_start", consumer="c0")

    def do(self, kind: str, **args: str | int) -> None:
        env = self.world.env
        env.schedule(0, Scripted(SCRIPT, EventSpec(env.now, kind, args)), priority=Priority.SCRIPT)
        env.run(until=env.now + 1)

    @rule(name=st.sampled_from(MEMBERS))
    def join(self, name: str) -> None:
        if not self.members[name].alive:
            self.do("consumer_start", consumer=name)

    @rule(name=st.sampled_from(MEMBERS))
    def leave(self, name: str) -> None:
        if self.members[name].alive:
            self.do("consumer_shutdown", consumer=name)

    @rule(name=st.sampled_from(MEMBERS))
    def crash(self, name: str) -> None:
        if self.members[name].alive:
            self.do("consumer_crash", consumer=name)

    @rule(name=st.sampled_from(MEMBERS), ms=st.integers(1_000, 120_000))
    def slow(self, name: str, ms: int) -> None:
        """A message that holds its queue's committed offset back (and, past 2000 offsets,
        stops the queue's pulls) until it is done."""
        if self.members[name].alive:
            self.do("slow_message", consumer=name, duration_ms=ms)

    @rule(broker=st.sampled_from(BROKERS), mode=st.sampled_from(["clean", "silent"]))
    def broker_down(self, broker: str, mode: str) -> None:
        if broker not in self.world.network.down:
            self.do("broker_crash", broker=broker, mode=mode)

    @precondition(lambda self: bool(self.world.network.down))
    @rule()
    def broker_up(self) -> None:
        self.do("broker_restart", broker=sorted(self.world.network.down)[0])

    @rule(ms=st.integers(1_000, 60_000))
    def wait(self, ms: int) -> None:
        self.world.env.run(until=self.world.env.now + ms)

    def teardown(self) -> None:
        world, env = self.world, self.world.env
        for broker in sorted(world.network.down):
            self.do("broker_restart", broker=broker)
        if not any(c.alive for c in self.members.values()):
            self.do("consumer_start", consumer="c0")
        p = world.producers[0]
        p.spec = replace(p.spec, stop_ms=env.now)
        env.run(until=env.now + 400_000)             # quiet: expiry, rebalances, catch-up
        lost = world.ledger.undelivered()
        assert lost == 0, f"{lost} stored messages never delivered"
        alive = {c.client_id: sorted(q for q, pq in c.table.items() if not pq.dropped)
                 for c in self.members.values() if c.alive}
        queues = [MessageQueue("T", b, i) for b in BROKERS for i in range(3)]
        report = ownership(alive, queues)
        assert report.ok, report


ClusterMachine.TestCase.settings = settings(
    max_examples=20, stateful_step_count=8, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
TestClusterMachine = ClusterMachine.TestCase


def test_the_summary_is_computed_from_the_written_records_alone(tmp_path: Path) -> None:
    """``simulate --out`` writes the journal and the ledger; read back from those files alone
    (no simulator state), they give the same summary."""
    import pyarrow.parquet as pq

    from rocketlb_core.sim.kernel import JournalRecord
    from rocketlb_core.sim.ledger import Ledger
    from rocketlb_core.sim.summary import summarise

    path = data_path("scenarios", "crash-without-unregister.toml")
    scenario = load(path)
    simulate_to(scenario, 3, tmp_path / "run")
    journal = [JournalRecord(r["time_ms"], r["kind"], r["entity"], json.loads(r["fields"]))
               for r in pq.read_table(tmp_path / "run" / "journal.parquet").to_pylist()]
    ledger = Ledger()
    for m in pq.read_table(tmp_path / "run" / "messages.parquet").to_pylist():
        queue = MessageQueue(m["topic"], m["broker"], m["queue_id"]) if m["broker"] else None
        ledger.record_send(m["producer"], m["sent_ms"], m["status"], queue, m["offset"],
                           m["attempts"], m["send_ms"], m["error"])
    for d in pq.read_table(tmp_path / "run" / "deliveries.parquet").to_pylist():
        ledger.record_delivery(d["time_ms"], d["consumer"],
                               MessageQueue(d["topic"], d["broker"], d["queue_id"]),
                               d["first_offset"], d["count"])
    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert written.pop("expectations")["declared"] == len(scenario.expect)
    assert summarise(scenario, 3, journal, ledger) == written
    assert written["duplicate_deliveries"] > 0      # the crash re-delivers: ranges overlap
    assert written["groups"]


def test_simulate_to_streams_the_lag_samples_and_keeps_the_rest(tmp_path: Path) -> None:
    """With an output folder the journal is written as the run goes: ``journal.parquet`` holds
    every record the in-memory run journals, in the same order, while the returned result keeps
    every record but the lag samples (which grow with simulated time)."""
    import pyarrow.parquet as pq

    from rocketlb_core.sim.world import SPILLED_KINDS, run_scenario

    scenario = load(data_path("scenarios", "crash-without-unregister.toml"))
    streamed = simulate_to(scenario, 3, tmp_path / "run")
    whole = run_scenario(scenario, 3)
    written = pq.read_table(tmp_path / "run" / "journal.parquet").to_pylist()
    assert [(r["time_ms"], r["kind"], r["entity"], json.loads(r["fields"])) for r in written] \
        == [(r.time_ms, r.kind, r.entity, json.loads(json.dumps(r.fields, default=str)))
            for r in whole.world.env.journal]
    kept = streamed.world.env.journal
    assert [r for r in whole.world.env.journal if r.kind not in SPILLED_KINDS] == kept
    assert any(r["kind"] == "lag" for r in written)
    assert not any(r.kind == "lag" for r in kept)
    assert {k: v for k, v in streamed.summary.items() if k != "expectations"} == whole.summary


def test_every_fault_is_documented_and_recorded_consistently() -> None:
    """``sim.faults.FAULTS`` is the one list of event kinds: the scenarios README names each,
    and each fault that changes a broker leaves a row of a known kind in recorded traces."""
    from rocketlb_core.sim.faults import FAULTS
    from rocketlb_core.trace.schema import CONDITION_KINDS

    readme = " ".join(data_path("scenarios", "README.md").read_text().split())
    assert [name for name in FAULTS if f"`{name} {{" not in readme] == []
    for fault in FAULTS.values():
        if fault.condition is not None:
            args = {a: "x" for a in (*fault.args, *fault.optional)} | {"median_ms": 1,
                                                                      "p99_ms": 2}
            assert fault.condition(args)[1] in CONDITION_KINDS


def test_crash_timing_follows_the_idle_close_scan_and_rebalance_timers() -> None:
    """Spec 5.3 and 4.2 (issue 45): a vanished consumer is dropped by the idle close 120 s
    after its last traffic (notified: its queues move at once) or by the 10 s scan once its
    last heartbeat is more than 120 s old (its queues move at the survivors' next rebalance,
    20 s period), whichever comes first (``tests/test_idle_close.py`` pins which)."""
    from rocketlb_core.sim.experiments import crash_timing

    scenario = load(data_path("scenarios", "crash-without-unregister.toml"))
    offsets = [500, 7_000, 15_000, 22_500, 29_500]
    rows = crash_timing(scenario, "GID_crash", "consumer-2", offsets)
    assert [r["after_heartbeat_s"] for r in rows] == [o / 1000 for o in offsets]
    for r in rows:
        silent = r["after_heartbeat_s"] + r["dropped_s"]          # since the last heartbeat
        assert r["dropped_s"] <= 120 + 15
        assert 120 < silent <= 130 + 15
        wait = 0.002 if r["dropped_by"] == "idle close" else 20.001
        assert 0 <= r["owned_again_s"] - r["dropped_s"] <= wait
    waits = [r["owned_again_s"] for r in rows if r["dropped_by"] == "scan"]
    assert waits == sorted(waits, reverse=True)                  # dying later waits less
    with pytest.raises(ValueError, match="heartbeat period"):
        crash_timing(scenario, "GID_crash", "consumer-2", [30_000])
    with pytest.raises(ValueError, match="no consumer"):
        crash_timing(scenario, "GID_crash", "consumer-9", [1_000])
