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
    # the duplicate client id trap, in a second group: two processes, one instance name
    dups = [live.start_consumer(c, "TopicLive", "GID_dup", instance, name=name)
            for instance, name in (("dup", "dup-1"), ("dup", "dup-2"), ("other", "other"))]
    time.sleep(settle_s)
    out["dup_ids"] = live.consumer_ids(c, "GID_dup")
    out["dup_logs"] = {k.name: str(k.client_log) for k in dups}
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
    the package's AVG share for that member list (spec 3.2, 4.1). Then a second group runs the
    duplicate client id trap."""
    from rocketlb_core.consumer.metrics import ownership
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
    assert sorted(out["stopped"]) == ["broker-a", "broker-b", "c1", "dup-1", "dup-2",
                                      "namesrv", "other"]             # c2 and c3 were gone

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
    print(f"\nlive {line_name}: {checked} logged assignments, all AVG of the broker's members; "
          f"{retry_lines} retry-topic lines not checked")

    # The duplicate client id trap (spec 9.1, chapter 9) on the real system: two processes on
    # one host with one instanceName report one client id; the broker lists it twice; both
    # compute the first slot's share, and the second slot's queues are consumed by nobody,
    # exactly as the package's AVG over that member list says.
    ids = out["dup_ids"]
    assert ids == ["127.0.0.1@dup", "127.0.0.1@dup", "127.0.0.1@other"]
    held = {}
    for name, path in out["dup_logs"].items():
        last = [r for r in read_client_log(path).rebalances if r.topic == "TopicLive"][-1]
        assert last.cid_all_size == 3
        assert sorted(last.result) == sorted(avg.allocate("GID_dup", last.client_id, queues,
                                                          ids))
        held[name] = set(last.result)
    assert held["dup-1"] == held["dup-2"]                     # the same share, twice
    expected = ownership({cid: avg.allocate("GID_dup", cid, queues, ids) for cid in set(ids)},
                         queues).unowned
    assert expected
    assert sorted(set(queues) - set().union(*held.values())) == sorted(expected)
    print(f"live {line_name}: duplicate id leaves {[q.short() for q in expected]} unconsumed")


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


KILL_SCRIPT = r'''
import json, sys, time
from pathlib import Path
from rocketlb_core.live import cluster as live

home, line_name, count, interval, kill_after = (Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]),
                                                int(sys.argv[4]), float(sys.argv[5]))
c = live.up(home, line_name, 2)
out = {}
try:
    out["status_up"] = live.status(home)
    out["cluster_list"] = live.admin(c, "clusterList")
    live.create_topic(c, "TopicLive", 4)
    route = live.topic_route(c, "TopicLive", brokers=2, wait_s=60)
    out["route"] = [[q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm]
                    for q in route.queue_datas]
    out["brokers"] = [[b.broker_name, {str(k): v for k, v in b.addrs.items()}]
                      for b in route.broker_datas]
    producer = live.start_producer(c, "TopicLive", count, interval_ms=interval)
    time.sleep(kill_after)
    out["kill_ms"] = int(time.time() * 1000)
    live.kill_broker(c, "broker-a")
    out["sends"] = live.collect_sends(producer, count)
finally:
    out["stopped"] = live.down(home)
    out["status_down"] = live.status(home)
print("RESULT " + json.dumps(out))
'''


@pytest.mark.parametrize("line_name", ["4", "5"])
def test_a_killed_broker_the_package_predicts_every_send_or_names_its_cause(
        line_name: str, tmp_path: Path) -> None:
    """A two-broker cluster of ``line_name`` comes up (upstream's mqadmin lists both brokers at
    their loopback addresses) and upstream's producer sends 900 messages, 50 ms apart, with
    ``sendLatencyFaultEnable`` off; 8 s in, broker-a is killed (SIGKILL: its connections
    reset). The package's send loop (``producer.send`` with broker-a refusing) must give the
    final queue of every send, except sends whose inputs the recording does not determine,
    each explained by its cause: a send in flight at the kill, and the new publish info (a
    fresh random counter) the client builds when its route poll drops broker-a.
    """
    from rocketlb_core.producer import send
    from rocketlb_core.producer.models import down

    resolve(line_name, "server")
    resolve(line_name, "client")
    home = tmp_path / "cluster"
    script = tmp_path / "kill.py"
    script.write_text(KILL_SCRIPT, encoding="utf-8")
    count, interval = 900, 50
    try:
        run = live.run_isolated([sys.executable, str(script), str(home), line_name, str(count),
                                 str(interval), "8"], capture_output=True, timeout=900,
                                check=False)
    finally:
        _kill_recorded(home)
    assert run.returncode == 0, run.stderr[-4000:]
    out = json.loads(next(x for x in run.stdout.splitlines() if x.startswith("RESULT "))[7:])
    # the cluster came up: every process running and accepting, inside its namespace
    procs = {p["name"]: p for p in out["status_up"]["processes"]}
    assert set(procs) == {"namesrv", "broker-a", "broker-b"}
    assert all(p["running"] and p["accepting"] for p in procs.values())
    # upstream's mqadmin sees both brokers registered at their loopback addresses
    for name in ("broker-a", "broker-b"):
        row = next(x for x in out["cluster_list"].splitlines() if name in x.split())
        assert f"127.0.0.1:{procs[name]['port']}" in row
    # down stopped what still ran (broker-a was killed by the test), and nothing else runs
    assert sorted(out["stopped"]) == ["broker-b", "namesrv"]   # the producer had finished
    assert not any(p["running"] for p in out["status_down"]["processes"])

    client_line = "4.9.8" if line_name == "4" else "5.3.3"
    route = TopicRoute(tuple(QueueData(*q) for q in out["route"]),
                       tuple(BrokerData(b, {int(k): v for k, v in a.items()}, live.CLUSTER_NAME)
                             for b, a in out["brokers"]))
    queues = publish_queues("TopicLive", route)
    assert len(queues) == 8
    sends, kill_ms = out["sends"], out["kill_ms"]
    assert all("broker" in s for s in sends), [s for s in sends if "error" in s][:5]
    observed = [MessageQueue("TopicLive", s["broker"], s["queue"]) for s in sends]

    strategy = MQFaultStrategy(client_line)
    tp = TopicPublishInfo(list(queues), list(route.queue_datas),
                          ThreadLocalIndex(client_line, stored=queues.index(observed[0]) - 1))
    healthy, refusing = down(), down("broker-a")
    agree, causes = 0, {"in flight at the kill": 0, "new publish info after the route poll": 0}
    new_route = False
    for s, seen in zip(sends, observed, strict=True):
        model = refusing if s["sent_ms"] >= kill_ms else healthy
        predicted = send(strategy, tp, model, now_ms=0).queue
        if predicted == seen:
            agree += 1
        elif abs(s["sent_ms"] - kill_ms) < 3 * interval:
            causes["in flight at the kill"] += 1
        elif not new_route and s["sent_ms"] > kill_ms and seen.broker_name == "broker-b":
            # the route poll dropped broker-a: a new publish list of broker-b's queues, whose
            # counter starts at a new random value, inferred from this send
            new_route = True
            only_b = [q for q in queues if q.broker_name == "broker-b"]
            tp = TopicPublishInfo(only_b, [q for q in route.queue_datas
                                           if q.broker_name == "broker-b"],
                                  ThreadLocalIndex(client_line, stored=only_b.index(seen)))
            causes["new publish info after the route poll"] += 1
        else:
            pytest.fail(f"send {s['seq']} (at kill {s['sent_ms'] - kill_ms:+} ms) went to "
                        f"{seen.short()}, the package predicts {predicted.short()}")
    assert agree + sum(causes.values()) == count
    assert causes["in flight at the kill"] <= 2
    assert causes["new publish info after the route poll"] <= 1
    assert agree >= count - 3
    print(f"\nlive {client_line}: {agree} of {count} sends predicted; {causes}")
    after = [o for s, o in zip(sends, observed, strict=True) if s["sent_ms"] > kill_ms + 200]
    assert after
    assert all(o.broker_name == "broker-b" for o in after)   # nothing lost: every send retried
