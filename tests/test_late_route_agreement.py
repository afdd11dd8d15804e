"""Issue 32, a random live scenario (soak seed 20261125, scenario seed 5702429421613, line 5:
5.3.3 clients and servers), ``tests/fixtures/live/late-route-5``: four brokers of eight queues,
a fault-on producer every 50 ms, brokers paused, killed and restarted. The producer's first
send failed with ``sendDefaultImpl call timeout``: its route lookup (the name server on a loaded
host) logged ``route info changed`` 3,039 ms after the send began, past the 3,000 ms
``sendMsgTimeout``. ``sendDefaultImpl`` then selects a queue, finds ``timeout < costTime`` and
throws before any attempt; the check had the route in force and predicted a stored send, one
unexplained send (``LATE_ROUTE`` now)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from rocketlb_core.model import QueueData, TopicRoute
from rocketlb_core.replay.timeline import Conditions
from rocketlb_core.trace.agreement import (
    AGREE,
    LATE_ROUTE,
    NO_ROUTE,
    check_recording,
    producer_agreement,
)
from rocketlb_core.trace.importer import import_recording

RECORDING = Path(__file__).parent / "fixtures" / "live" / "late-route-5"


def test_the_send_whose_route_came_after_its_timeout_failed_before_any_attempt(
        tmp_path: Path) -> None:
    rows = [json.loads(x) for x in gzip.decompress(
        (RECORDING / "sends" / "p1-on.jsonl.gz").read_bytes()).decode().splitlines()]
    assert rows[0]["error"].endswith("sendDefaultImpl call timeout")
    import_recording(RECORDING, tmp_path / "trace")
    result = check_recording(RECORDING, tmp_path / "trace")
    p = result["producers"]["p1-on"]
    assert p["unexplained"] == 0, p
    assert p["no_route"] == 1
    first = [c for c in p["others"] if c["seq"] == 0]
    assert first == [{"seq": 0, "time_ms": first[0]["time_ms"], "observed": "FAILED",
                      "predicted": LATE_ROUTE, "verdict": AGREE}]
    assert all(c["unexplained"] == 0 for c in result["consumers"].values())


def _agreement(route_after_ms: int):
    """Two sends 4 s apart; the first's lookup logs the route ``route_after_ms`` after it."""
    queues = (QueueData("broker-a", 2, 2, 6),)
    truth = [{"seq": 0, "sent_ms": 1_000, "error": "x"},
             {"seq": 1, "sent_ms": 5_000, "broker": "broker-a", "queue": 1}]
    conditions = Conditions.from_columns({k: [] for k in (
        "time_ms", "broker", "client", "kind", "mode", "median_ms", "p99_ms")})
    return producer_agreement(
        truth, line="5.3.3", fault_tolerance=True, topic="T",
        route=TopicRoute(queues, ()), conditions=conditions, origin_ms=0, costs={},
        route_changes=[(1_000 + route_after_ms, queues)])


def test_only_a_lookup_past_the_timeout_fails_the_send() -> None:
    late = _agreement(3_001)
    assert late.checks[0].predicted == LATE_ROUTE
    assert late.checks[0].verdict == AGREE
    assert late.summary()["no_route"] == 1
    in_time = _agreement(3_000)          # upstream throws only when timeout < costTime
    assert in_time.checks[0].predicted not in (LATE_ROUTE, NO_ROUTE)
    assert in_time.checks[0].verdict != AGREE      # the model stores it; it failed live


def test_a_restarted_broker_holds_none_of_its_old_connections() -> None:
    """broker-a of this recording was killed and started again, appending to the same log: the
    consumer c1 had joined it before the kill. The new process's table is empty, so its view
    drops c1's old connection when the process starts (``main - rocketmqHome=``), before c1
    joins again on a new connection; reading on would hold c1 twice (issue 32, CI's random
    scenario)."""
    from rocketlb_core.trace.agreement import BrokerViews
    from rocketlb_core.trace.brokerlog import broker_view, read_broker_log

    log = read_broker_log(RECORDING / "logs" / "broker-a" / "broker.log.gz")
    assert [n for n, _ in log.starts] == [2, 352]
    view = broker_view(log)
    old = next(v for v in view if v.event == "join")
    gone = [v for v in view if v.event == "restart"]
    assert [(v.channel, v.client_id) for v in gone] == [(old.channel, old.client_id)]
    rejoin = next(v for v in view if v.event == "join" and v.channel != old.channel)
    assert rejoin.client_id == old.client_id
    assert gone[0].time_ms < rejoin.time_ms
    views = BrokerViews({"broker-a": view})
    assert views.at("broker-a", "GID_live", gone[0].time_ms) == []
    assert views.at("broker-a", "GID_live", rejoin.time_ms) == [old.client_id]
