"""A real RocketMQ on this machine (issue 14): upstream's released name server and brokers,
resolved through Maven Central, started by ``rocketlb_core.live`` in a private network
namespace (nothing of theirs is reachable from outside it); upstream's own ``mqadmin`` asks the
name server about them, and upstream's own ``DefaultMQProducer`` sends through them. The
package must predict the queue of every send the real client made.

Every process the cluster starts is recorded in its ``cluster.json`` and killed by pid in a
``finally``, whatever the test did."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlb_core.live import cluster as live
from rocketlb_core.live.jars import LiveError, resolve
from rocketlb_core.model import BrokerData, MessageQueue, QueueData, TopicRoute, publish_queues
from rocketlb_core.producer import MQFaultStrategy, ThreadLocalIndex, TopicPublishInfo

pytestmark = pytest.mark.live

INSIDE = r'''
import json, sys
from pathlib import Path
from rocketlb_core.live import cluster as live

home, line_name, topic, sends = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
out = {}
c = live.up(home, line_name, 2)
try:
    out["status_up"] = live.status(home)
    out["cluster_list"] = live.admin(c, "clusterList")
    live.create_topic(c, topic, 4)
    route = live.topic_route(c, topic, brokers=2, wait_s=60)
    out["route"] = {"queue_datas": [[q.broker_name, q.read_queue_nums, q.write_queue_nums,
                                     q.perm] for q in route.queue_datas],
                    "broker_datas": [[b.broker_name, {str(k): v for k, v in b.addrs.items()}]
                                     for b in route.broker_datas]}
    out["sends"] = live.produce(c, topic, sends)
finally:
    out["stopped"] = live.down(home)
    out["status_down"] = live.status(home)
print("RESULT " + json.dumps(out))
'''


def _kill_recorded(home: Path) -> None:
    """Whatever happened, no JVM of this cluster outlives the test."""
    state = home / live.STATE
    if not state.is_file():
        return
    for p in json.loads(state.read_text())["processes"]:
        if p["pid"] and live._ours(p["pid"], home.resolve()):
            os.kill(p["pid"], signal.SIGKILL)


GROUP_SCRIPT = r'''
import json, sys, time
from pathlib import Path
from rocketlb_core.live import cluster as live

home, line_name, settle_s = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
c = live.up(home, line_name, 2)
out = {"steps": []}
try:
    live.create_topic(c, "TopicLive", 4)
    route = live.topic_route(c, "TopicLive", brokers=2, wait_s=60)
    out["route"] = [[q.broker_name, q.read_queue_nums] for q in route.queue_datas]
    consumers = {}

    def settle(what):
        time.sleep(settle_s)
        out["steps"].append({
            "what": what, "ids": live.consumer_ids(c, "GID_live"),
            "lines": {n: len(k.client_log.read_text("utf-8", "replace").splitlines())
                      if k.client_log.exists() else 0 for n, k in consumers.items()}})

    for name in ("c1", "c2", "c3"):
        consumers[name] = live.start_consumer(c, "TopicLive", "GID_live", name)
        settle(f"{name} joins")
    live.stop_consumer(consumers["c2"])
    settle("c2 shuts down")
    live.kill_consumer(consumers["c3"])
    settle("c3 is killed")
    out["logs"] = {n: str(k.client_log) for n, k in consumers.items()}
finally:
    out["stopped"] = live.down(home)
print("RESULT " + json.dumps(out))
'''


@pytest.mark.parametrize("line_name", ["4", "5"])
def test_every_assignment_the_real_consumers_logged_is_avg_of_the_brokers_member_list(
        line_name: str, tmp_path: Path) -> None:
    """Three push consumers join one by one, one shuts down cleanly, one is killed. After each
    change the group settles; upstream's mqadmin gives the member list a broker holds. Every
    ``rebalanced result changed`` line the real clients wrote for the topic in that step must be
    the package's AVG share for that member list (spec 3.2, 4.1)."""
    from rocketlb_core.consumer.registry import make
    from rocketlb_core.trace.clientlog import read_client_log

    resolve(line_name, "server")
    resolve(line_name, "client")
    home = tmp_path / "cluster"
    script = tmp_path / "group.py"
    script.write_text(GROUP_SCRIPT, encoding="utf-8")
    try:
        run = live.run_isolated([sys.executable, str(script), str(home), line_name, "8"],
                                capture_output=True, timeout=900, check=False)
    finally:
        _kill_recorded(home)
    assert run.returncode == 0, run.stderr[-4000:]
    out = json.loads(next(x for x in run.stdout.splitlines() if x.startswith("RESULT "))[7:])
    assert sorted(out["stopped"]) == ["broker-a", "broker-b", "c1", "namesrv"]  # c2, c3 gone

    steps = out["steps"]
    assert [s["ids"] for s in steps] == [
        ["127.0.0.1@c1"], ["127.0.0.1@c1", "127.0.0.1@c2"],
        ["127.0.0.1@c1", "127.0.0.1@c2", "127.0.0.1@c3"],
        ["127.0.0.1@c1", "127.0.0.1@c3"], ["127.0.0.1@c1"]]
    queues = sorted(MessageQueue("TopicLive", b, i) for b, n in out["route"] for i in range(n))
    avg = make("AVG")
    checked = retry_lines = 0
    for name, path in out["logs"].items():
        records = read_client_log(path).rebalances
        assert records, f"{name} logged no rebalance"
        start = 0
        for step in steps:
            end = step["lines"].get(name, 0)
            for r in records:
                if not start < r.line <= end:
                    continue
                if r.topic != "TopicLive":       # the group's retry topic: its queues appear
                    retry_lines += 1             # as brokers create it, not in the route above
                    continue
                assert r.group == "GID_live"
                assert r.strategy == "AVG"
                assert r.cid_all_size == len(step["ids"]), (name, step["what"], r)
                want = avg.allocate("GID_live", r.client_id, queues, step["ids"])
                assert sorted(r.result) == sorted(want), (name, step["what"], r)
                checked += 1
            start = max(start, end)
    # c1 logs a change at every step, c2 at its two, c3 at its one or two
    assert checked >= 5 + 2 + 1
    assert retry_lines >= 1


@pytest.mark.parametrize("line_name", ["4", "5"])
def test_a_live_cluster_runs_and_the_package_predicts_every_send(line_name: str,
                                                                 tmp_path: Path) -> None:
    resolve(line_name, "server")          # outside the namespace: Maven needs the network
    resolve(line_name, "client")
    home = tmp_path / "cluster"
    script = tmp_path / "inside.py"
    script.write_text(INSIDE, encoding="utf-8")
    sends = 200
    try:
        run = live.run_isolated([sys.executable, str(script), str(home), line_name,
                                 "TopicLive", str(sends)],
                                capture_output=True, timeout=900, check=False)
    finally:
        _kill_recorded(home)
    assert run.returncode == 0, run.stderr[-4000:]
    out = json.loads(next(x for x in run.stdout.splitlines() if x.startswith("RESULT "))[7:])

    # the cluster came up: every process running and accepting, inside its namespace
    procs = {p["name"]: p for p in out["status_up"]["processes"]}
    assert set(procs) == {"namesrv", "broker-a", "broker-b"}
    assert all(p["running"] and p["accepting"] for p in procs.values())
    # upstream's mqadmin sees both brokers registered at their loopback addresses
    listing = out["cluster_list"]
    for name in ("broker-a", "broker-b"):
        line = next(x for x in listing.splitlines() if name in x)
        assert f"127.0.0.1:{procs[name]['port']}" in line
    # and down stopped exactly them
    assert sorted(out["stopped"]) == ["broker-a", "broker-b", "namesrv"]
    assert not any(p["running"] for p in out["status_down"]["processes"])

    # the real producer's choices, predicted by the package from the real route
    route = TopicRoute(tuple(QueueData(*q) for q in out["route"]["queue_datas"]),
                       tuple(BrokerData(b, {int(k): v for k, v in a.items()}, live.CLUSTER_NAME)
                             for b, a in out["route"]["broker_datas"]))
    queues = publish_queues("TopicLive", route)
    assert len(queues) == 8
    real = out["sends"]
    assert len(real) == sends
    assert all(r.get("status") == "SEND_OK" for r in real), [r for r in real if "error" in r]
    observed = [MessageQueue("TopicLive", r["broker"], r["queue"]) for r in real]
    # the one input the route does not determine: the counter's random start, inferred from
    # the first send (the client draws it when it builds its publish info)
    first = queues.index(observed[0])
    tp = TopicPublishInfo(queues, list(route.queue_datas),
                          ThreadLocalIndex(f"{line_name}.9.8" if line_name == "4" else "5.3.3",
                                           stored=first - 1))
    strategy = MQFaultStrategy("4.9.8" if line_name == "4" else "5.3.3")
    predicted = [strategy.select(tp, None, now_ms=0) for _ in range(sends)]
    agree = sum(p == o for p, o in zip(predicted, observed, strict=True))
    assert agree == sends, [(i, p.short(), o.short()) for i, (p, o)
                            in enumerate(zip(predicted, observed, strict=True)) if p != o][:10]
    assert {q.broker_name for q in observed} == {"broker-a", "broker-b"}


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
