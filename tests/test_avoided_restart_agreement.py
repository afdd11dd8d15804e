"""Issue 32's soak (soak seed 20261126, scenario seed 79886120187287, line 4: 4.9.8 clients,
4.9.7 servers), ``tests/fixtures/live/avoided-restart-4``: two brokers of five queues;
broker-a killed at 7.1 s and restarted at 21.3 s; a producer with ``sendLatencyFaultEnable``
on, whose failed attempt at broker-a isolated it for 600 s (a ``RemotingException``). At 50.6 s
its route listed broker-a again (ten queues), still avoided: every counter start from broker-a's
five positions picks broker-b/0, so the first send after the change fits six starts of ten. The
check took the first that fitted and was four positions off: 85 unexplained sends. It now keeps
every start the sends agree with until one is left (``producer_agreement``), and counts a send as
inferred only where the starts it keeps predicted differently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocketlb_core.trace.agreement import INFERRED

RECORDING = Path(__file__).parent / "fixtures" / "live" / "avoided-restart-4"


def test_starts_that_pick_alike_are_kept_until_the_sends_tell_them_apart(
        check_live: Any) -> None:
    result = check_live(RECORDING)
    p = result["producers"]["p1-on"]
    assert p["fault_tolerance"] is True
    assert p["unexplained"] == 0, [c for c in p["others"] if c["verdict"] != INFERRED][:5]
    assert p["route_changes"] == 3
    # one inferred send per route change, and one more where the kept starts differed
    assert p["inferred"] <= p["route_changes"] + 1
    after = [c for c in p["others"] if c["time_ms"] >= 50_600]
    assert [c["verdict"] for c in after] == [INFERRED] * len(after)
    assert 1 <= len(after) <= 2
    assert result["producers"]["p2-off"]["unexplained"] == 0
