"""Issue 32's third soak (soak seed 20261128, scenario seed 92987622203664, line 4: 4.9.8
clients, 4.9.7 servers), ``tests/fixtures/live/restart-answers-4``: two brokers of seven queues,
five consumers of one group (c5 with c4's ``instanceName``), broker-a killed at 13.3 s and
restarted at 22.8 s. The restart took 18 s by the recorder's clock, which waits until the name
server lists the broker again; broker-a's new process started after 8 s and, 4.4 s before the
recorder saw it back, answered c1's ``findConsumerIdList`` with the one member that had sent it a
heartbeat yet: c1 logged ``cidAllSize=1`` and took all fourteen queues. The check left broker-a's
view out until the recorder's time, so that assignment was unexplained; a killed broker is now
down only until its new process's first log line (``RESTART_ANSWERS``)."""

from __future__ import annotations

from typing import Any


def test_a_restarted_brokers_first_answer_explains_an_assignment(check_live: Any) -> None:
    result = check_live("restart-answers-4")
    consumers = result["consumers"]
    assert all(c["unexplained"] == 0 for c in consumers.values()), {
        n: c["unexplained_detail"] for n, c in consumers.items() if c["unexplained"]}
    assert sum(c["logged"] for c in consumers.values()) == 32
    assert consumers["c1"]["stale_view"] >= 1        # the restarted broker's own view, [c1]
    for p in result["producers"].values():
        assert p["unexplained"] == 0
