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
