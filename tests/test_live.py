"""A real RocketMQ on this machine (issue 14): upstream's released name server and brokers,
resolved through Maven Central, started by ``rocketlb_core.live`` in a private network
namespace (nothing of theirs is reachable from outside it), with upstream's own producers and
push consumers. A shipped live scenario of ``data/scenarios/live/`` and a random one per line
are recorded afresh (``python -m rocketlb_core.live record``), imported (message trace, client
and broker logs) and the model checked against them, as ``tests/test_live_recordings.py`` does
for the shipped recordings: every determined send predicted, every logged assignment
reproduced.

Every JVM the recorder starts carries its cluster's marker and is killed by pid in a
``finally``, whatever the test did."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rocketlb_core.live import cluster as live
from rocketlb_core.live.jars import LiveError, resolve

pytestmark = pytest.mark.live

def test_a_taken_port_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.listen()
        with pytest.raises(LiveError, match=f"port {port} on 127.0.0.1 is taken"):
            live.up(tmp_path / "c", "4", 1, namesrv_port=port)
    assert not (tmp_path / "c" / live.STATE).exists()


def test_missing_java_or_maven_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))      # an empty folder: no java, no mvn
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("ROCKETLB_LIVE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(LiveError, match="mvn not found on PATH"):
        resolve("5", "server")
    with pytest.raises(LiveError, match="java not found on PATH"):
        live.java()


def test_jvms_under_counts_only_a_recordings_marker_under_its_root(tmp_path: Path) -> None:
    mine, other = tmp_path / "mine", tmp_path / "other"
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                               f"-D{live.MARKER_PROP}={root.resolve()}/rocketlb-live-x/c"])
             for root in (mine, other)]
    try:
        for _ in range(50):                         # until the children have their cmdline
            if live.jvms_under(mine):
                break
            time.sleep(0.1)
        assert live.jvms_under(mine) == [procs[0].pid]
        assert live.jvms_under(tmp_path / "nothing") == []
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_down_never_signals_a_process_it_did_not_start(tmp_path: Path) -> None:
    """A recorded pid that now belongs to another program (pids are recycled) is left alone."""
    home = tmp_path / "c"
    home.mkdir()
    other = subprocess.Popen(["sleep", "60"])
    try:
        live.Cluster(home.resolve(), "5", 19876,
                     [live.Process("namesrv", "namesrv", 19876, other.pid, str(home))]).save()
        assert live.down(home) == []
        assert other.poll() is None
        assert live.status(home)["processes"][0]["running"] is False
    finally:
        other.kill()
        other.wait()



def _live_jvms(scratch: Path) -> list[int]:
    """Pids of the JVMs a recording started with its scratch folder under ``scratch``."""
    return live.jvms_under(scratch)


def _record(scenario: Path, line_name: str, out: Path, scratch: Path,
            *extra: str) -> subprocess.CompletedProcess[str]:
    """``python -m rocketlb_core.live record ... --isolated``, its scratch under ``scratch``."""
    scratch.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "rocketlb_core.live", "record", str(scenario), "--line", line_name,
         "--out", str(out), "--isolated", *extra],
        capture_output=True, text=True, timeout=900, check=False,
        env=dict(os.environ, TMPDIR=str(scratch)))


@pytest.mark.parametrize(("line_name", "scenario"), [("4", "producer-outage")])
def test_live_scenarios_recorded_imported_and_checked_against_the_model(
        line_name: str, scenario: str, tmp_path: Path) -> None:
    """Record a shipped live scenario on a fresh cluster of ``line_name``; every process
    stopped; the recording imports; the package predicts every determined send of the real
    producers and reproduces every assignment the real consumers logged (the duplicate id trap
    too). One shipped scenario on one line (CI's 60 minutes: both scenarios on both lines
    took 11 minutes of a 63-minute run, the membership day on line 5 alone 196 s): the other
    pairs are the shipped recordings (lines 4, 5 and 5.5), checked offline by
    ``test_live_recordings``, and every CI run records a random scenario per line live as well
    (``test_a_random_live_scenario_agrees_with_the_model``: consumers joining, leaving and
    crashing, now and then the duplicate client id trap, broker faults), so membership is
    recorded live on both lines in every run. The test still checks either shipped scenario:
    add ``("5", "membership-day")`` to the parametrization to record the day live."""
    from rocketlb_core import data_path
    from rocketlb_core.trace.agreement import check_recording
    from rocketlb_core.trace.importer import import_recording
    from tests.test_live_recordings import (
        assert_day_agrees,
        assert_failures_as_simulated,
        assert_outage_agrees,
    )

    resolve(line_name, "server")
    resolve(line_name, "client")
    scratch = tmp_path / "scratch"
    try:
        out = tmp_path / f"{scenario}-{line_name}"
        run = _record(data_path("scenarios") / "live" / f"{scenario}.toml", line_name, out,
                      scratch)
        assert run.returncode == 0, run.stderr[-4000:]
        assert _live_jvms(scratch) == []            # down stopped all it started
        meta = json.loads((out / "recording.json").read_text())
        assert meta["isolated"] is True
        import_recording(out, tmp_path / f"trace-{scenario}")
        result = check_recording(out, tmp_path / f"trace-{scenario}")
        if scenario == "producer-outage":
            assert_outage_agrees(result)
            assert_failures_as_simulated(out)
        else:
            # A live run on a loaded 2-core machine: 13 of 18 exact was seen (the shipped
            # recordings have 16 and 17 of 18); every assignment is still explained.
            assert_day_agrees(out, tmp_path / f"trace-{scenario}", result, min_exact=0.5)
        print(f"\nlive {line_name} {scenario}: " + json.dumps(
            {k: {n: {f: v for f, v in x.items() if f in (
                "sends", "agree", "inferred", "reset", "logged", "exact", "near_change")}
                for n, x in result[k].items()} for k in ("producers", "consumers")}))
    finally:
        for pid in _live_jvms(scratch):
            os.kill(pid, signal.SIGKILL)


def _print_gaps(recording: Path, result: dict, meta: dict) -> None:
    """What a failed random scenario needs for its diagnosis, printed (a CI run keeps only its
    output): the events as run, each unexplained send and assignment with the member lists
    tried, the brokers' disagreement, and the consumer's log before the line (no stack frames)."""
    import gzip

    t0 = min(e["wall_ms"] for e in meta["events"]) if meta["events"] else 0
    print("events (ms after the first):",
          [(e["wall_ms"] - t0, e["action"], e["target"]) for e in meta["events"]])
    for name, p in result["producers"].items():
        for other in p["others"]:
            if other.get("verdict") == "unexplained":
                print(f"send {name}: {json.dumps(other, default=str)}")
    print(f"brokers disagree: {json.dumps(result.get('brokers_disagree'))}")
    for name, c in result["consumers"].items():
        for d in c.get("unexplained_detail", []):
            print(f"assignment {name}: {json.dumps(d)}")
            logs = [f for f in (recording / "logs" / name).glob("*.log.gz")]
            if not logs or "line" not in d:
                continue                  # a member with no log of that name
            text = gzip.decompress(logs[0].read_bytes()).decode("utf-8", "replace").splitlines()
            for n in range(max(0, d["line"] - 120), min(len(text), d["line"] + 3)):
                if any(k in text[n] for k in _TELLING) and not text[n].startswith("\t"):
                    print(f"  {name}:{n + 1}: {text[n][:300]}")


_TELLING = ("rebalance", "route info changed", "notification", "WARN", "ERROR", "Exception",
            "closeChannel", "cidAll", "ConsumerId")


class AgreementGap(AssertionError):
    """Sends or assignments of a live recording the agreement check does not explain."""


@pytest.mark.parametrize("line_name", ["4", "5"])
def test_a_random_live_scenario_agrees_with_the_model(line_name: str, tmp_path: Path) -> None:
    """One random scenario (``rocketlb_core.live.generate``) per line, a fresh seed each run
    (``ROCKETLB_LIVE_SOAK_SEED`` fixes it): recorded, imported and checked; no send and no
    logged assignment unexplained, and every event started within ``MAX_LATE_MS`` of its planned
    time or the recording says why (it waited for an earlier event of its target). The seed is
    printed and in every assertion's message: ``bench/live_soak.py --seed S --scenarios 1``
    replays it."""
    from rocketlb_core.live.generate import generate_scenario, scenario_seed
    from rocketlb_core.live.record import MAX_LATE_MS, lateness
    from rocketlb_core.trace.agreement import check_recording
    from rocketlb_core.trace.importer import import_recording

    soak_seed = int(os.environ.get("ROCKETLB_LIVE_SOAK_SEED")
                    or int.from_bytes(os.urandom(4), "big"))
    seed = scenario_seed(soak_seed, 0)
    replay = (f"soak seed {soak_seed} (scenario seed {seed}); replay: .venv/bin/python "
              f"bench/live_soak.py --scenarios 1 --seed {soak_seed} --line {line_name} "
              "--modes")
    print(f"\nrandom live scenario, line {line_name}: {replay}")
    resolve(line_name, "server")
    resolve(line_name, "client")
    toml = tmp_path / "scenario.toml"
    # its producers also draw how they send (sync, ordered by key, oneway: issue 45)
    toml.write_text(generate_scenario(seed, line_name, modes=True), encoding="utf-8")
    out, trace, scratch = tmp_path / "recording", tmp_path / "trace", tmp_path / "scratch"
    try:
        run = _record(toml, line_name, out, scratch)
        assert run.returncode == 0, f"{replay}\n{run.stderr[-4000:]}"
        assert _live_jvms(scratch) == [], replay
    finally:
        for pid in _live_jvms(scratch):
            os.kill(pid, signal.SIGKILL)
    meta = json.loads((out / "recording.json").read_text())
    clock = lateness(meta)
    print(f"events started at most {clock['max_late_ms']} ms late; late: {clock['late']}")
    unexplained_late = [x for x in clock["late"] if "waited_for" not in x]
    assert unexplained_late == [], \
        f"{replay}: events over MAX_LATE_MS = {MAX_LATE_MS} ms late: {unexplained_late}"
    import_recording(out, trace)
    result = check_recording(out, trace)
    sends = {n: {k: v for k, v in p.items() if k != "others"}
             for n, p in result["producers"].items()}
    assigned = {n: {k: v for k, v in c.items() if k not in ("unexplained_lines", "held_at_end")}
                for n, c in result["consumers"].items()}
    print(f"sends: {json.dumps(sends)}\nassignments: {json.dumps(assigned)}")
    bad_sends = {n: p["unexplained"] for n, p in sends.items() if p["unexplained"]}
    bad = {n: c["unexplained_lines"][:5] or c.get("others", [])[:5]
           for n, c in result["consumers"].items() if c["unexplained"]}
    # a group checked as a whole: a broker-assigned one's consumption, an orderly one's locks
    bad.update({g: (e.get("others") or e.get("unexplained_detail", []))[:5]
                for g, e in result.get("groups", {}).items()
                if e.get("unexplained")})
    if bad_sends or bad:
        _print_gaps(out, result, meta)
        # a gap is a race more often than not (a replay of the seed may not show it): the
        # recording is kept where the next engineer finds it, outside the test's tmp_path
        kept = Path(__file__).parent.parent / ".cache" / "live-gaps" / f"{line_name}-{soak_seed}"
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(out, kept)
        raise AgreementGap(f"{replay}: unexplained sends {bad_sends}; unexplained assignments "
                           f"(first lines) {bad}; the recording is kept in {kept}")


_START_THREW = """
import dataclasses, json, socket, sys
from pathlib import Path
from rocketlb_core.live import cluster as live
home = Path(sys.argv[1])
c = live.up(home, sys.argv[2], brokers=1)
try:
    with socket.socket() as s:                 # a port nothing listens on: the lookup fails
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    lost = dataclasses.replace(c, namesrv_port=closed, processes=list(c.processes))
    k = live.start_consumer(lost, "TopicStart", "GID_start", "k1", timeout_s=120)
    live.stop_consumer(k)
    print(json.dumps({"start_error": k.start_error, "exit": k.process.returncode}))
finally:
    live.down(home)
"""


_TERM_SCENARIO = """name = "term"
topic = "TopicTerm"
brokers = 1
trace = false
[[producers]]
name = "p"
group = "PG_term"
count = 100000
interval_ms = 50
"""


def test_a_recording_sent_sigterm_stops_its_cluster_and_writes_nothing(tmp_path: Path) -> None:
    """``live record --isolated`` sent SIGTERM (a CI job cancelled, ``kill``) while its
    producer sends: the outer process passes it on to the run in the namespace, whose
    ``finally`` stops every JVM it started by pid; the exit status says so (143) and no
    recording is left half-written."""
    scenario, out, scratch = tmp_path / "term.toml", tmp_path / "out", tmp_path / "scratch"
    scenario.write_text(_TERM_SCENARIO, encoding="utf-8")
    scratch.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rocketlb_core.live", "record", str(scenario), "--line", "4",
         "--out", str(out), "--isolated"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=dict(os.environ, TMPDIR=str(scratch)))
    try:
        deadline = time.monotonic() + 300
        # the name server, the broker and the producer: three JVMs, then it sends
        while len(_live_jvms(scratch)) < 3 and proc.poll() is None:
            assert time.monotonic() < deadline, "the cluster did not start"
            time.sleep(0.5)
        assert proc.poll() is None, proc.communicate()
        time.sleep(3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=200)
        assert proc.returncode == 128 + signal.SIGTERM, err[-3000:]
        assert "terminated" in err
        assert _live_jvms(scratch) == []
        assert not out.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _live_jvms(scratch):
            os.kill(pid, signal.SIGKILL)


def test_a_consumer_whose_start_threw_is_reported_and_stops(tmp_path: Path) -> None:
    """A push consumer's ``start()`` throws when its first route lookup fails (4.9.8 wraps the
    ``RemotingException`` in an ``IllegalStateException``; seen live on a loaded host: a name
    server timeout), yet the client instance it started runs on (on the loaded host it
    heartbeated and rebalanced). The driver reports it (``start_error``) and goes on instead of
    dying in ``main`` with the JVM still up (the recorder then waited for a line that never
    came, until its 20-minute timeout); asked to stop, it stops. Here the name server's
    address is a closed port, so the lookup fails at once."""
    resolve("4", "server")
    resolve("4", "client")
    home, scratch = tmp_path / "cluster", tmp_path / "scratch"
    scratch.mkdir()
    try:
        run = live.run_isolated([sys.executable, "-c", _START_THREW, str(home), "4"],
                                capture_output=True, timeout=400, check=False,
                                env=dict(os.environ, TMPDIR=str(scratch)))
        assert run.returncode == 0, run.stderr[-3000:]
        got = json.loads(run.stdout.strip().splitlines()[-1])
        assert "IllegalStateException" in (got["start_error"] or ""), got
        assert "Remoting" in got["start_error"], got
        assert got["exit"] == 0
    finally:
        for pid in _live_jvms(tmp_path):
            os.kill(pid, signal.SIGKILL)
