"""RocketMQ 5's gRPC clients through the Proxy, live (issue 34, item 3).

The recorder starts a 5.3.3 cluster in a private network namespace, the Proxy (rocketmq-proxy
5.3.3, cluster mode) beside it, and upstream's gRPC producer, simple consumers and push
consumers (rocketmq-client-java 5.0.8), pauses a broker and resumes it, and dumps the topic:
``data/scenarios/live/grpc-clients.toml``. ``trace.grpc_agreement`` then checks the client's
model (``rocketlb_core.grpc``) against every receipt and the Proxy's queue selection
(``grpc.proxy_send``) against every stored copy, and ``trace.grpc_consumer_agreement`` the
consumers (``tests/test_live_grpc_consumers.py``). The producer-only recording
(``data/live/grpc/grpc-producer-outage-5``) is checked the same way without a cluster.

Every JVM the recorder starts carries its cluster's marker and is killed by pid in a
``finally``, whatever the test did."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core.live import cluster as live
from rocketlb_core.live.jars import LiveError, resolve


def _why(p: dict[str, Any]) -> str:
    """What a failure needs to be explained without the recording (CI keeps none): the
    unexplained sends, the six sends before the first of them, and the reloads inferred."""
    first = p["unexplained_detail"][0]["seq"] if p["unexplained_detail"] else 0
    around = [s for s in p["sends_detail"] if first - 6 <= s["seq"] <= first]
    return json.dumps({"unexplained": p["unexplained_detail"][:10], "before": around,
                       "reloads_earliest_ms": p["reloads_earliest_ms"]})


def _assert_agrees(result: dict[str, Any]) -> dict[str, Any]:
    """One gRPC producer's check: nothing unexplained, and the pause seen."""
    (p,) = result["producers"].values()
    assert p["unexplained"] == 0, _why(p)
    assert p["client"].get("disagree", 0) == 0
    assert p["proxy"].get("unexplained", 0) == 0
    assert p["receipt_offset_not_stored"] == 0
    assert p["stray_messages"] == 0
    # the pause had an effect: attempts failed on the paused broker, and the client's log
    # says so for each failed send
    assert p["attempt_outcomes"].get("paused", 0) >= 1
    assert p["log_failed_finally"] == p["failed"]
    assert p["client"].get("agree", 0) >= p["ok"] - 1        # all but the inferred one
    return p


def _summary(p: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in p.items()
                       if k not in ("sends_detail", "unexplained_detail")})


def test_the_shipped_grpc_recording_agrees() -> None:
    """The recording in ``data/live/`` (no cluster): every receipt's queue is the client
    model's, every stored copy the Proxy model's, every failed attempt met its broker paused."""
    from rocketlb_core import data_path
    from rocketlb_core.trace.grpc_agreement import check_grpc_recording

    result = check_grpc_recording(data_path("live") / "grpc" / "grpc-producer-outage-5")
    p = _assert_agrees(result)
    assert result["proxy"]["version"] == "5.3.3"
    assert result["grpc_client"]["version"] == live.GRPC_CLIENT_VERSION
    print(f"\nshipped gRPC recording: {_summary(p)}")


def test_the_proxy_is_refused_outside_a_namespace_and_on_4x(tmp_path: Path) -> None:
    """The Proxy binds its ports on every interface (``live.PROXY_WILDCARD``): outside an
    isolated cluster it is refused before anything starts; a 4.x line has no Proxy."""
    c = live.Cluster(tmp_path.resolve(), "5", 19876, [], isolated=False)
    with pytest.raises(LiveError, match="every interface"):
        live.start_proxy(c)
    with pytest.raises(LiveError, match=r"the Proxy came with 5\.0"):
        live.start_proxy(live.Cluster(tmp_path.resolve(), "4", 19876, [], isolated=True))
    assert live.proxy(c) is None
    assert not (tmp_path / live.STATE).exists()


def test_a_recorded_proxy_is_stopped_by_pid(tmp_path: Path) -> None:
    """``cluster.json`` takes the role ``proxy``; ``stop_proxy`` and ``down`` signal the recorded
    pid only while its command line carries the home's marker (a stand-in process here, with
    the marker a started Proxy has)."""
    home = tmp_path.resolve() / "c"
    home.mkdir()

    def stand_in() -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                                 f"-D{live.MARKER_PROP}={home}"])

    procs = [stand_in(), stand_in()]
    try:
        for _ in range(50):                              # until both have their cmdline
            if all(live._ours(p.pid, home) for p in procs):
                break
            time.sleep(0.1)
        c = live.Cluster(home, "5", 19876,
                         [live.Process("proxy", "proxy", 28081, procs[0].pid, str(home))],
                         isolated=True)
        c.save()
        loaded = live.Cluster.load(home)
        assert live.proxy(loaded) == live.Process("proxy", "proxy", 28081, procs[0].pid,
                                                  str(home))
        assert live.proxy_endpoints(loaded) == "127.0.0.1:28081"
        assert live.stop_proxy(loaded) is True
        assert not live._ours(procs[0].pid, home)        # SIGTERM (and reaped)
        assert live.stop_proxy(loaded) is False          # nothing of ours runs there now
        live.Cluster(home, "5", 19876,
                     [live.Process("proxy", "proxy", 28081, procs[1].pid, str(home))]).save()
        assert live.down(home) == ["proxy"]
        assert not live._ours(procs[1].pid, home)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()


def test_the_proxy_config_keys_are_5_3_3_proxy_config_fields(tmp_path: Path) -> None:
    """Every key ``start_proxy`` writes to ``rmq-proxy.json`` is a field of rocketmq-proxy
    5.3.3's ``ProxyConfig`` (fastjson would ignore a misspelt one silently), and its source has
    no bind address for either port (why the Proxy runs only in a namespace)."""
    from rocketlb_core.live import sources

    text = sources.read("rocketmq-proxy", "5.3.3",
                        "org/apache/rocketmq/proxy/config/ProxyConfig.java")
    c = live.Cluster(tmp_path.resolve(), "5", 19876, [], isolated=True)
    for k in live._proxy_config(c, 28081, 28080):
        assert re.search(rf"private [\w<>]+ {k}\b", text), k
    assert "bindAddress" not in text
    assert "grpcServerHost" not in text


def _mutated(tmp_path: Path, change: Any) -> dict[str, Any]:
    """The shipped recording with ``change(folder)`` applied to a copy, checked."""
    import shutil

    from rocketlb_core import data_path
    from rocketlb_core.trace.grpc_agreement import check_grpc_recording

    folder = tmp_path / "rec"
    shutil.copytree(data_path("live") / "grpc" / "grpc-producer-outage-5", folder)
    change(folder)
    (p,) = check_grpc_recording(folder)["producers"].values()
    return p


def _rewrite(path: Path, edit: Any) -> None:
    import gzip

    rows = [json.loads(x) for x in gzip.decompress(path.read_bytes()).splitlines()]
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in edit(rows)).encode()))


def test_the_grpc_check_names_what_it_cannot_explain(tmp_path: Path) -> None:
    """No fudge: a receipt moved to another queue is a client ``disagree``; a stored copy moved
    to another queue is a Proxy ``unexplained`` (the counter jumps, too soon for a reload); a
    pause moved before the first send makes broker-a's early successes ``ok_while_paused``."""
    def receipt(folder: Path) -> None:
        def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            r = rows[150]
            r["client_queue"] = (r["client_queue"] + 1) % 4
            return rows
        _rewrite(folder / "sends" / "g1.jsonl.gz", edit)

    p = _mutated(tmp_path / "a", receipt)
    assert p["client"]["disagree"] == 1
    assert [d["seq"] for d in p["unexplained_detail"]] == [150]

    def copy(folder: Path) -> None:
        def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            r = next(x for x in rows if x["body"] == "m200")
            r["queue"] = (r["queue"] + 2) % 4
            return rows
        _rewrite(folder / "topic.jsonl.gz", edit)

    p = _mutated(tmp_path / "b", copy)
    # send 200 needs a new counter start, and 201 the old one back: both 20 s too soon for a
    # route reload of the Proxy (the previous one was at send 44)
    assert p["proxy"]["unexplained"] == 2
    assert [d["seq"] for d in p["unexplained_detail"]] == [200, 201]
    assert "before a route reload can have happened" in p["unexplained_detail"][0]["note"]

    def paused_early(folder: Path) -> None:
        meta = json.loads((folder / "recording.json").read_text())
        meta["events"][0]["wall_ms"] = meta["t0_ms"] - 1000     # "paused" before any send
        meta["events"][0]["done_ms"] = meta["t0_ms"] - 1000
        (folder / "recording.json").write_text(json.dumps(meta))

    p = _mutated(tmp_path / "c", paused_early)
    assert p["attempt_outcomes"]["ok_while_paused"] >= 10     # broker-a's sends before 4 s
    assert p["unexplained"] == p["attempt_outcomes"]["ok_while_paused"]


@pytest.mark.live
def test_the_grpc_clients_recorded_through_the_proxy_agree(tmp_path: Path) -> None:
    """Record ``grpc-clients`` on line 5 in a namespace (the Proxy, the gRPC producer and the
    simple and push consumers started by the recorder, stopped by pid with the cluster), then
    check it: no send, stored copy or attempt unexplained (the producer, as
    ``grpc-producer-outage``, whose shipped recording is checked above); every simple
    consumer's receive on the model's queue and broker, on both brokers; every push
    consumer's assignment the Proxy model's; every stored message consumed by each group
    (``tests/test_live_grpc_consumers.py``)."""
    from rocketlb_core import data_path
    from rocketlb_core.trace.grpc_agreement import check_grpc_recording
    from rocketlb_core.trace.grpc_consumer_agreement import check_grpc_consumers
    from tests.test_live_grpc_consumers import assert_consumers_agree, summary

    # everything resolved outside the namespace (it has no network)
    resolve("5", "server")
    resolve("5", "client")
    live.artifact_jars("rocketmq-proxy", "5.3.3")
    live.artifact_jars("rocketmq-client-java", live.GRPC_CLIENT_VERSION)
    scratch, out = tmp_path / "scratch", tmp_path / "recording"
    scratch.mkdir()
    began = time.monotonic()
    try:
        run = subprocess.run(
            [sys.executable, "-m", "rocketlb_core.live", "record",
             str(data_path("scenarios") / "live" / "grpc-clients.toml"), "--line", "5",
             "--out", str(out), "--isolated"],
            capture_output=True, text=True, timeout=900, check=False,
            env=dict(os.environ, TMPDIR=str(scratch)))
        assert run.returncode == 0, run.stderr[-4000:]
        assert live.jvms_under(scratch) == []          # down stopped all it started
    finally:
        for pid in live.jvms_under(scratch):
            os.kill(pid, signal.SIGKILL)
    assert live.jvms_under(scratch) == []
    took = time.monotonic() - began
    meta = json.loads((out / "recording.json").read_text())
    assert meta["isolated"] is True
    assert meta["proxy"]["config"]["proxyMode"] == "cluster"
    assert {k["kind"] for k in meta["consumers"]} == {"simple", "push"}
    assert sorted(p.name for p in (out / "receives").iterdir()) == [
        f"{k['name']}.jsonl.gz" for k in sorted(meta["consumers"], key=lambda k: k["name"])]
    p = _assert_agrees(check_grpc_recording(out))
    consumers = check_grpc_consumers(out)
    print(f"\nlive gRPC recording ({took:.0f} s): {_summary(p)}\n{summary(consumers)}")
    assert_consumers_agree(consumers)


def test_a_proxy_route_reload_between_two_attempts_of_one_send() -> None:
    """The Proxy's view of the topic reloads (a new random counter) at the first access 20 s
    after it was loaded; the attempt that makes that access still uses the old view, so the
    new counter can begin between two attempts of one send. The check takes that, and only
    when 20 s can have passed since the earliest moment of the previous load."""
    from rocketlb_core.grpc.proxy_send import ProxyQueue, proxy_write_queues
    from rocketlb_core.trace.grpc_agreement import Attempt, SendVerdict, _proxy_check

    queues = proxy_write_queues([("broker-b", 4, 6), ("broker-a", 4, 6)])
    a = [ProxyQueue("broker-a", i) for i in range(4)]
    b = [ProxyQueue("broker-b", i) for i in range(4)]

    def sends() -> list[SendVerdict]:
        return [
            SendVerdict(0, 0, True, [Attempt(1, True, 0, 20)], None, [b[1]]),
            SendVerdict(1, 100, True, [Attempt(1, True, 100, 120)], None, [b[2]]),
            # attempts on b3 and a0 fail (their copies stored late), the third is on a3: not
            # a1, where the old counter would have put it
            SendVerdict(2, 25_000, True, [Attempt(1, False, 25_000, 28_000),
                                          Attempt(2, False, 28_000, 31_000),
                                          Attempt(3, True, 31_000, 31_050)],
                        None, sorted([b[3], a[0], a[3]])),
            SendVerdict(3, 31_100, True, [Attempt(1, True, 31_100, 31_120)], None, [b[0]]),
        ]

    got = sends()
    info = _proxy_check(got, queues, {}, first_load_ms=0)
    assert [s.proxy for s in got] == ["inferred", "agree", "reload", "agree"]
    assert [x.proxy_queue for x in got[2].attempts] == [b[3], a[0], a[3]]
    assert info["reloads_earliest_ms"] == [28_000]      # after attempt 2 began, 20 s after 0

    late = sends()                                      # loaded at 15 s: no reload before 35 s
    _proxy_check(late, queues, {}, first_load_ms=15_000)
    assert [s.proxy for s in late][:3] == ["inferred", "agree", "unexplained"]
    assert "before a route reload can have happened" in late[2].note


def test_a_send_that_fits_two_readings_keeps_both_until_a_later_send_decides() -> None:
    """CI's red run (seq 64 to 66): a send that failed on a0, a1, a2, then one whose two
    copies are on a2 and a3, then one on a3. The second fits a reload before it ([a2, a3])
    and a reload between its attempts ([a3, a2]: the old counter's a3, then a new start);
    only the second lets the next send's a3 follow. A check that took the first fit called
    the next send unexplained; the receipt's offset says which copy the successful attempt
    stored, and when it is a3's the next send is unexplained indeed (a second reload 4 s
    after the first)."""
    from rocketlb_core.grpc.proxy_send import ProxyQueue, proxy_write_queues
    from rocketlb_core.trace.grpc_agreement import Attempt, SendVerdict, _proxy_check

    queues = proxy_write_queues([("broker-b", 4, 6), ("broker-a", 4, 6)])
    a = [ProxyQueue("broker-a", i) for i in range(4)]
    b = [ProxyQueue("broker-b", i) for i in range(4)]

    def sends() -> list[SendVerdict]:
        return [
            SendVerdict(0, 0, True, [Attempt(1, True, 0, 20)], None, [b[2]]),
            SendVerdict(1, 100, True, [Attempt(1, True, 100, 120)], None, [b[3]]),
            SendVerdict(2, 25_000, False, [Attempt(1, False, 25_000, 28_000),
                                           Attempt(2, False, 28_000, 31_000),
                                           Attempt(3, False, 31_000, 34_000)],
                        None, [a[0], a[1], a[2]]),
            SendVerdict(3, 34_100, True, [Attempt(1, False, 34_100, 37_100),
                                          Attempt(2, True, 37_100, 37_150)],
                        None, [a[2], a[3]]),
            SendVerdict(4, 41_000, True, [Attempt(1, True, 41_000, 41_020)], None, [a[3]]),
        ]

    got = sends()
    info = _proxy_check(got, queues, {3: frozenset([a[2]])}, first_load_ms=0)
    assert [s.proxy for s in got] == ["inferred", "agree", "agree", "reload", "agree"]
    assert [x.proxy_queue for x in got[3].attempts] == [a[3], a[2]]
    assert info["reloads_earliest_ms"] == [34_100]

    other = sends()                         # the receipt's offset is a3's copy's
    _proxy_check(other, queues, {3: frozenset([a[3]])}, first_load_ms=0)
    assert [s.proxy for s in other] == ["inferred", "agree", "agree", "reload",
                                        "unexplained"]
    assert [x.proxy_queue for x in other[3].attempts] == [a[2], a[3]]
    assert "before a route reload can have happened" in other[4].note


def test_an_attempt_outcome_reads_the_pause_as_the_events_bound_it() -> None:
    """A failure may have met its broker paused from the pause's start to the resume's return;
    a success is ``ok_while_paused`` only inside the stretch the broker surely was paused
    (from the pause's return to the resume's start: the resume's SIGCONT may come at once).
    A failure on a running broker is ``busy`` when the client logged it failed "due to too
    many requests" (seen live on a loaded host), else ``fail_unexplained``."""
    from rocketlb_core.grpc.proxy_send import ProxyQueue
    from rocketlb_core.trace.grpc_agreement import (
        Attempt,
        SendVerdict,
        _outcomes,
        _paused_spans,
    )

    meta = {"events": [
        {"action": "pause", "target": "broker-a", "wall_ms": 1_000, "done_ms": 1_010},
        {"action": "resume", "target": "broker-a", "wall_ms": 5_000, "done_ms": 5_040}]}
    assert _paused_spans(meta) == {"broker-a": [(1_000, 5_040)]}
    assert _paused_spans(meta, certain=True) == {"broker-a": [(1_010, 5_000)]}
    a, b = ProxyQueue("broker-a", 0), ProxyQueue("broker-b", 0)

    def outcome(q: ProxyQueue, ok: bool, start: int, end: int, busy: bool = False) -> str:
        s = SendVerdict(0, start, ok, [Attempt(1, ok, start, end, q, busy=busy)], None, [])
        _outcomes([s], _paused_spans(meta), _paused_spans(meta, certain=True))
        return s.attempts[0].outcome

    assert outcome(a, True, 3_000, 5_020) == "ok"            # stored as the resume ran
    assert outcome(a, True, 3_000, 4_990) == "ok_while_paused"
    assert outcome(a, False, 4_000, 5_030) == "paused"
    assert outcome(a, False, 6_000, 6_100) == "fail_unexplained"
    assert outcome(b, False, 3_000, 3_100, busy=True) == "busy"
    assert outcome(b, False, 3_000, 3_100) == "fail_unexplained"
