"""What the cluster is like, shared by the simulator (``rocketlb_core.sim``) and the replay
(``rocketlb_core.replay``), so the two model one cluster: the latency model, the time a
refused connection takes, and the clients' and servers' timers (spec 1.3, 1.4, 3.4, 4.1).
Pure Python; ``tests/test_conditions.py`` checks that both sides draw from these.

Latency: a broker's send latency is log-normal with a given median and 99th percentile:
``max(1, round(median * exp(sigma * z)))`` with ``sigma = ln(p99 / median) / z99`` and ``z`` a
standard normal draw (the simulator draws ``z`` with ``random.gauss``; the replay takes it from
a quantile table, ``rocketlb_core.replay.draws.LatencyTable``).

>>> latency_ms(2.0, 10.0, 0.0), latency_ms(2.0, 10.0, P99_Z)
(2, 10)
"""

from __future__ import annotations

import math

# ------------------------------------------------------------------ latency model
P99_Z = 2.3263
"""The standard normal quantile of 0.99."""


def lognormal_sigma(median_ms: float, p99_ms: float) -> float:
    """The log-normal's sigma for a median and a 99th percentile (a p99 below the median is
    taken as the median: no spread)."""
    return math.log(max(p99_ms, median_ms) / median_ms) / P99_Z


def latency_ms(median_ms: float, p99_ms: float, z: float) -> int:
    """The latency at the standard normal value ``z``: at least 1 ms, rounded."""
    return max(1, round(median_ms * math.exp(lognormal_sigma(median_ms, p99_ms) * z)))


FAIL_FAST_MS = (1, 2, 3)
"""A refused connection (a broker down cleanly: its port closed) fails after one of these, each
as likely; a silent broker instead lets the call run to its timeout."""

# ------------------------------------------------------------------ timers (upstream defaults)
ROUTE_POLL_MS = 30_000
"""``pollNameServerInterval``: clients refresh topic routes (spec 1.4)."""
HEARTBEAT_MS = 30_000
"""``heartbeatBrokerInterval``: clients heartbeat every broker (spec 3.4)."""
REBALANCE_WAIT_MS = 20_000
"""``RebalanceService``'s wait between rebalances (spec 4.1)."""
PERSIST_OFFSET_MS = 5_000
"""``persistConsumerOffsetInterval``."""
REGISTER_PERIOD_MS = 30_000
"""Brokers register with every name server this often (spec 1.3)."""
BROKER_EXPIRY_MS = 120_000
"""A name server drops a broker it has not heard from for this long: a silent broker leaves
the routes that much later (spec 1.3)."""
CHANNEL_EXPIRY_MS = 120_000
"""A broker drops a client channel idle for this long: a crashed consumer stays in its group's
view that long (spec 3.4)."""
IDLE_CLOSE_MS = 120_000
"""``serverChannelMaxIdleTimeSeconds``: a broker's and a name server's Netty pipeline holds an
``IdleStateHandler(0, 0, 120)``, which closes a connection with no traffic either way for this
long; the close runs ``doChannelCloseEvent`` (broker: the group is notified) or
``onChannelDestroy`` (name server: the broker leaves the routes). rocketmq-remoting 4.9.7
``NettyRemotingServer``, 5.3.3 the same (issue 45)."""
PULL_SUSPEND_MS = 15_000
"""``brokerSuspendMaxTimeMillis``: a push consumer's pull finding nothing new is held by the
broker this long, answered at once when a message arrives (long polling)."""
HOLD_CHECK_MS = 5_000
"""``PullRequestHoldService`` looks at the held pulls of a quiet queue this often (it waits up to
5 s between passes, from the broker's start), so a held pull's timeout is answered 15 to 20 s
after it was held (fact ``broker.held-pull-answered-15-to-20s-on-quiet-queue``)."""
CHANNEL_SCAN_MS = 10_000
"""How often a broker scans for idle channels."""
