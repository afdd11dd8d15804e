"""The simulator and the replay model one cluster (``rocketlb_core.conditions``): the same
latency for the same normal draw, the same refusal times, the same timers."""

from __future__ import annotations

import random
from collections import Counter
from statistics import NormalDist

import pytest

from rocketlb_core import conditions
from rocketlb_core.replay import consumer as replay_consumer
from rocketlb_core.replay import stepped as replay_stepped
from rocketlb_core.replay import timeline as replay_timeline
from rocketlb_core.replay.draws import BUCKET_BITS, BUCKETS, LatencyTable, fail_fast_ms
from rocketlb_core.sim import clients as sim_clients
from rocketlb_core.sim import cluster as sim_cluster
from rocketlb_core.sim.cluster import Broker


@pytest.mark.parametrize(("median", "p99"), [(2.0, 10.0), (5.0, 5.0), (700.0, 2000.0),
                                             (3.0, 1.0), (0.5, 40.0)])
def test_the_replay_latency_table_is_the_simulators_quantile_function(median: float,
                                                                      p99: float) -> None:
    """Bucket ``b`` of the replay's table holds the latency the simulator gives at the normal
    quantile of ``(b + 0.5) / 2^16``, for every bucket."""
    broker = Broker("b", "room", "10.0.0.1:10911", median, p99)
    table = LatencyTable.build(median, p99)
    normal = NormalDist()
    for b in range(0, BUCKETS, 97):
        z = normal.inv_cdf((b + 0.5) / BUCKETS)
        assert int(table.values[b]) == broker.latency_ms(z) == conditions.latency_ms(median, p99,
                                                                                     z)


def test_both_sides_have_the_same_latency_distribution() -> None:
    """The simulator's draws (``random.gauss``) and the replay's (uniform buckets) agree on
    the median and the 99th percentile the scenario asked for."""
    broker = Broker("b", "room", "10.0.0.1:10911", 4.0, 40.0)
    rng = random.Random(7)
    sim = sorted(broker.latency_ms(rng.gauss(0.0, 1.0)) for _ in range(40_000))
    table = LatencyTable.build(4.0, 40.0)
    replay = sorted(int(table.values[rng.getrandbits(BUCKET_BITS)]) for _ in range(40_000))
    for q in (0.5, 0.99):
        s, r = sim[int(q * len(sim))], replay[int(q * len(replay))]
        assert abs(s - r) <= max(1, 0.05 * r), (q, s, r)
    assert sim[len(sim) // 2] == 4
    assert 36 <= replay[int(0.99 * len(replay))] <= 44


def test_a_refused_connection_takes_the_same_times_on_both_sides() -> None:
    rng = random.Random(3)
    replay = Counter(fail_fast_ms(rng.getrandbits(64)) for _ in range(30_000))
    assert sorted(replay) == list(conditions.FAIL_FAST_MS)
    assert max(replay.values()) - min(replay.values()) < 1_000       # each about as likely


def test_timers_have_one_home() -> None:
    """The simulator and the replay use the shared constants, not copies of their own."""
    for name in ("ROUTE_POLL_MS", "HEARTBEAT_MS", "REBALANCE_WAIT_MS", "PERSIST_OFFSET_MS"):
        assert getattr(sim_clients, name) is getattr(conditions, name)
    for name in ("REGISTER_PERIOD_MS", "BROKER_EXPIRY_MS", "CHANNEL_EXPIRY_MS",
                 "CHANNEL_SCAN_MS"):
        assert getattr(sim_cluster, name) is getattr(conditions, name)
    assert replay_stepped.ROUTE_POLL_MS is conditions.ROUTE_POLL_MS
    assert replay_timeline.BROKER_EXPIRY_MS is conditions.BROKER_EXPIRY_MS
    assert replay_consumer.CHANNEL_EXPIRY_MS is conditions.CHANNEL_EXPIRY_MS


def test_the_vectorised_latency_table_is_the_definition_bucket_for_bucket() -> None:
    """``LatencyTable.build`` (NumPy's exp, boundaries recomputed with libm's) equals the
    scalar definition in all 2^16 buckets: for every table the churn generator writes, for
    exact halves (a median of 2.5 ms and no spread rounds to 2, half to even), and for random
    medians and spreads."""
    from rocketlb_core.trace.generate import CHURN_SLOW

    rng = random.Random(11)
    pairs = [CHURN_SLOW, (2.5, 2.5), (0.5, 0.5), (1.5, 1.5), (30.0, 240.0), (1.0, 3.0)]
    pairs += [(rng.uniform(0.2, 2000.0), 0.0) for _ in range(3)]
    pairs += [(m, m * rng.uniform(1.0, 40.0)) for m in
              (rng.choice([rng.uniform(0.3, 50.0), float(rng.randint(1, 900))])
               for _ in range(20))]
    for median, p99 in pairs:
        fast = LatencyTable.build(median, p99).values
        assert fast.tolist() == LatencyTable.build_scalar(median, p99).values.tolist(), \
            (median, p99)
