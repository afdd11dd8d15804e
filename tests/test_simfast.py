"""The simulator's compiled sends (``rocketlb_core.simfast``) against the core simulator: the
random stream against ``random.Random``, and whole runs (journal, summary, ledger, every
producer's random stream, counter and fault table, every broker's store) byte for byte, on the
shipped scenarios and on generated worlds whose brokers are slow enough to time out, isolate
and leave every broker isolated (the least-bad pick, handed back to the core)."""

from __future__ import annotations

import inspect
import json
import random
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.sim.golden import journal_digest, scenarios
from rocketlb_core.sim.scenario import (
    BrokerSpec,
    EventSpec,
    GroupSpec,
    MemberSpec,
    ProducerSpec,
    Scenario,
    TopicSpec,
    load,
)
from rocketlb_core.sim.world import RunResult, run_scenario

pytest.importorskip("numba")

from rocketlb_core.simfast import mt, producer
from rocketlb_core.simfast.producer import CompiledProducer


# ------------------------------------------------------------------ the random stream
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**64), ops=st.lists(st.integers(0, 2), min_size=1, max_size=2000),
       warm=st.integers(0, 700))
def test_stream_matches_random(seed: int, ops: list[int], warm: int) -> None:
    """Words, ``random()`` and ``gauss()`` in any mix (across regenerations of the 624 words,
    with a cached gauss value taken over), and the state given back, are ``random.Random``'s."""
    ref = random.Random(seed)
    for _ in range(warm):
        ref.getrandbits(32)
    if warm % 2:
        ref.gauss(0.0, 1.0)                    # a cached second value goes across
    s = mt.State()
    s.take(ref)
    i, has, nxt = int(s.rs[0]), bool(s.rs[1]), float(s.gn[0])
    for op in ops:
        if op == 0:
            y, i = mt.word(s.mt, i)
            assert y == ref.getrandbits(32)
        elif op == 1:
            u, i = mt.uniform(s.mt, i)
            assert u == ref.random()
        else:
            z, i, has, nxt = mt.gauss(s.mt, i, has, nxt)
            assert z == ref.gauss(0.0, 1.0)
    s.rs[0], s.rs[1], s.gn[0] = i, has, nxt
    back = random.Random(0)
    s.give(back)
    assert back.getstate() == ref.getstate()


def test_round_is_pythons() -> None:
    """Ties to even, as ``round()``: on halves, their neighbours and random values."""
    rng = np.random.default_rng(5)
    xs = [k + 0.5 for k in range(50)] + [np.nextafter(k + 0.5, 0) for k in range(50)]
    xs += [np.nextafter(k + 0.5, 100) for k in range(50)] + list(rng.uniform(0, 5e3, 2000))
    xs += [0.0, 0.49999999999999994, 2.0**51 + 0.5, 4.0e15 - 1]
    for x in xs:
        assert producer._round(float(x)) == round(float(x)), x


# ------------------------------------------------------------------ whole runs
def _state(r: RunResult) -> dict[str, Any]:
    w, led = r.world, r.world.ledger
    return {
        "journal": journal_digest(w.env.journal),
        "summary": json.dumps(r.summary, sort_keys=True, default=str),
        "ledger": [led.sent, led.stored, led.failed, led.retries, list(led.errors.items()),
                   list(led.send_ms.items()), list(led.stored_by_broker.items()),
                   [(q.short(), a.stored, sorted(a.deliveries.items()))
                    for q, a in led.queues.items()]],
        "producers": [(p.rng.getstate(), p.tp.index.stored if p.tp else None,
                       [(i.name, i.current_latency, i.start_timestamp)
                        for i in p.strategy.table.items.values()], p.sent, p.busy_until)
                      for p in w.producers],
        "stores": [list(b.store.items()) for b in w.brokers.values()],
    }


class _Spy:
    """Counts what the compiled loop took (``run_sends`` wrapped, not replaced)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: Counter[str] = Counter()
        real = producer.run_sends
        at = list(inspect.signature(real.py_func).parameters).index("out")

        def counted(*args: Any) -> tuple[int, int]:
            m, why = real(*args)
            out = args[at][:m]
            self.seen["sends"] += m
            self.seen["failed"] += int((out[:, producer.POS] < 0).sum())
            self.seen["bail"] += why == producer.BAIL
            return m, why
        monkeypatch.setattr(producer, "run_sends", counted)


def _same(sc: Scenario, seed: int) -> None:
    core = _state(run_scenario(sc, seed))
    fast = _state(run_scenario(sc, seed, producer_class=CompiledProducer))
    for key in core:
        assert fast[key] == core[key], f"{sc.name} seed {seed}: {key} differs"


@pytest.mark.parametrize("path", scenarios(), ids=lambda p: p.stem)
def test_shipped_scenarios_same_bytes(path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = _Spy(monkeypatch)
    sc = load(path)
    for seed in (0, 1):
        _same(sc, seed)
    sent = sum(p.rate_per_s for p in sc.producers)
    assert sent == 0 or spy.seen["sends"] > 0      # the compiled loop did send


def _world(line: str, fault: bool, brokers: list[tuple[float, float]], rate: float,
           events: list[EventSpec], seconds: int = 40, producers: int = 2) -> Scenario:
    bs = tuple(BrokerSpec(f"broker-{chr(97 + i)}", median_ms=m, p99_ms=p)
               for i, (m, p) in enumerate(brokers))
    return Scenario(
        name="gen", description="", path="<test>", duration_ms=seconds * 1000, drain_ms=5000,
        line=ProducerLine.parse(line), name_servers=2, brokers=bs,
        topics=(TopicSpec("T", tuple(b.name for b in bs), 4, 4),),
        producers=tuple(ProducerSpec(f"p-{i}", "T", rate, fault_tolerance=fault)
                        for i in range(producers)),
        groups=(GroupSpec("G", "T", (MemberSpec("c-0", "10.1.0.1"),
                                     MemberSpec("c-1", "10.1.0.2"))),),
        events=tuple(events), expect={})


def test_slow_brokers_fail_retry_and_hand_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Brokers that answer in seconds: attempts time out and isolate their broker, and the send
    fails in the loop (a timeout spends the whole budget: the retry's pick is a "call timeout");
    a send that finds every broker isolated goes to the core."""
    spy = _Spy(monkeypatch)
    for line in ("4.9.8", "4.9.7"):
        for fault in (True, False):
            sc = _world(line, fault, [(900.0, 6000.0), (1500.0, 9000.0), (40.0, 3000.0)], 20.0,
                        [EventSpec(15_000, "broker_latency",
                                   {"broker": "broker-c", "median_ms": 2500.0,
                                    "p99_ms": 9000.0})])
            _same(sc, 3)
    assert spy.seen["failed"] > 0
    assert spy.seen["bail"] > 0


EVENTS = st.sampled_from([
    ("broker_latency", {"median_ms": 2000.0, "p99_ms": 8000.0}),
    ("broker_latency", {"median_ms": 3.0, "p99_ms": 20.0}),
    ("broker_crash", {"mode": "clean"}), ("broker_crash", {"mode": "silent"}),
    ("broker_restart", {}), ("broker_pause", {"duration_ms": 4000}),
    ("partition", {"client": "p-0"}), ("heal", {"client": "p-0"}),
])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=st.sampled_from(["4.9.8", "4.9.7", "4.7.1", "5.3.3"]), fault=st.booleans(),
       brokers=st.lists(st.tuples(st.sampled_from([1.0, 5.0, 300.0, 1200.0]),
                                  st.sampled_from([4.0, 50.0, 2500.0, 9000.0])),
                        min_size=1, max_size=4),
       rate=st.sampled_from([5.0, 37.5, 120.0, 400.0]),
       events=st.lists(st.tuples(st.integers(1_000, 30_000), st.integers(0, 3), EVENTS),
                       max_size=6),
       seed=st.integers(0, 2**32))
def test_generated_worlds_same_bytes(line: str, fault: bool, brokers: list[tuple[float, float]],
                                     rate: float, events: list[Any], seed: int) -> None:
    """Any line, fault strategy on or off, slow and fast brokers, latency changes, crashes,
    pauses, partitions of a producer: the compiled producers run exactly as the core's."""
    specs = [EventSpec(at, kind, {"broker": f"broker-{chr(97 + b % len(brokers))}", **args})
             for at, b, (kind, args) in sorted(events, key=lambda e: e[0])]
    _same(_world(line, fault, brokers, rate, specs, seconds=35), seed)


@pytest.mark.parametrize("median", [2999.4, 2999.5, 3000.0, 3000.5])
def test_latency_at_the_budget(median: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """A broker that answers in exactly its median (p99 = median): 2999 ms is an answer, 3000
    ms (the whole budget; 2999.5 rounds to even, 3000) a timeout that isolates it."""
    spy = _Spy(monkeypatch)
    _same(_world("4.9.8", True, [(median, median), (2.0, 4.0)], 5.0, [], seconds=20), 0)
    assert spy.seen["sends"] > 0
    if median >= 2999.5:
        assert spy.seen["failed"] > 0


@pytest.mark.parametrize("index", [4, 300, 610, 612, 613, 620, 621, 622, 623, 624])
@pytest.mark.parametrize("cached", [False, True])
def test_handed_back_send_leaves_no_trace(index: int, cached: bool) -> None:
    """A send whose attempt times out, isolating the only broker, and whose retry then finds
    every broker isolated goes back to the core: the loop puts back the random stream (across a
    regeneration of its words too), the counter and the fault table, as they were."""
    ref = random.Random(index)
    if cached:
        ref.gauss(0.0, 1.0)                      # a pair drawn, its second value cached
    while ref.getstate()[1][-1] != index:        # the words' index: ``index`` drawn of 624
        ref.getrandbits(32)
    st_ = mt.State()
    st_.take(ref)
    before = (st_.mt.copy(), st_.rs.copy(), st_.gn.copy())
    ps = np.array([0, 0, 7, 0, 0, 0, 0, 0], np.int64)
    fi = np.zeros((1, 4), np.int64)
    conf = np.array([1, 3000, 3, 30000, 1], np.int64)
    m, why = producer.run_sends(
        now=1_000, start_ms=0, end_ms=10_000, interval=10.0, ps=ps, qb=np.zeros(4, np.int64),
        conf=conf, lat_max=np.array([50, 100, 550, 1000, 2000, 3000, 15000], np.int64),
        nad=np.array([0, 0, 30000, 60000, 120000, 180000, 600000], np.int64),
        bf=np.array([[5000.0, 0.0]]), fi=fi, saved=np.zeros((3, 5), np.int64), mt=st_.mt,
        rs=st_.rs, gn=st_.gn, backup=st_.backup, out=np.zeros((8, 5), np.int64),
        gslot=np.arange(4), count=np.zeros(4, np.int64), known=np.zeros(4, np.int64),
        fresh=np.zeros(4, np.int64), bcount=np.zeros(1, np.int64),
        bseen=np.zeros(2, np.int64), stored_ms=np.zeros(8, np.int64))
    assert (m, why) == (0, producer.BAIL)
    assert (st_.mt == before[0]).all()
    assert (st_.rs == before[1]).all()
    assert (st_.gn == before[2]).all()
    assert ps.tolist() == [0, 0, 7, 0, 0, 0, 0, 0]
    assert not fi.any()
    back = random.Random(0)
    st_.give(back)
    assert back.getstate() == ref.getstate()


def test_simulate_out_same_files(tmp_path: Any) -> None:
    """``rocketlb simulate --out`` (compiled producers, messages streamed one by one to the
    sink) writes the same files, byte for byte, as a run with the core's producers."""
    from rocketlb_core.commands.simulate import producers, simulate_to
    from rocketlb_core.sim.clients import Producer

    assert producers() is CompiledProducer
    sc = _world("4.9.8", True, [(900.0, 6000.0), (2.0, 30.0), (5.0, 2500.0)], 60.0, [
        EventSpec(8_000, "broker_crash", {"broker": "broker-b", "mode": "clean"}),
        EventSpec(20_000, "broker_restart", {"broker": "broker-b"})])
    simulate_to(sc, 4, tmp_path / "core", producer_class=Producer)
    simulate_to(sc, 4, tmp_path / "fast")
    names = sorted(f.name for f in (tmp_path / "core").iterdir())
    assert "messages.parquet" in names
    assert names == sorted(f.name for f in (tmp_path / "fast").iterdir())
    for name in names:
        assert (tmp_path / "fast" / name).read_bytes() == (tmp_path / "core" / name).read_bytes()
