"""The producer replay's two ways through a send agree: closed-form stretches give exactly the
rows that stepping every send through ``send()`` gives, on fuzzed conditions and traffic for
every line, with fault tolerance on and off, including counters about to wrap."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from rocketlb_core.model import BrokerData, MessageQueue, QueueData, TopicRoute
from rocketlb_core.producer import SendConfig, SendMode
from rocketlb_core.replay.aggregates import Aggregates
from rocketlb_core.replay.config import FAILED, ReplayConfig
from rocketlb_core.replay.draws import (
    LatencyTable,
    draw_bits,
    draw_bits_array,
    producer_key,
)
from rocketlb_core.replay.stepped import rows_of
from rocketlb_core.replay.stretch import ProducerReplayer, replay_producer
from rocketlb_core.replay.timeline import Conditions, TimelineBroker

LINES = ["4.7.1", "4.9.7", "4.9.8", "5.3.3"]
BROKERS = ["broker-a", "broker-b", "broker-c"]


def _route(queues: list[int]) -> TopicRoute:
    return TopicRoute(tuple(QueueData(b, q, q, 6) for b, q in zip(BROKERS, queues, strict=True)),
                      tuple(BrokerData(b, {0: f"10.0.0.{i}:10911"})
                            for i, b in enumerate(BROKERS)))


def _conditions(rng: random.Random, span: int) -> dict[str, list[Any]]:
    rows: list[tuple[Any, ...]] = [(0, b, None, "latency", None, 2.0, 10.0) for b in BROKERS]
    for _ in range(rng.randrange(0, 8)):
        t, b = rng.randrange(0, span), rng.choice(BROKERS)
        kind = rng.choice(["latency", "latency", "down", "up", "partition", "heal"])
        if kind == "latency":
            median = rng.choice([1.0, 3.0, 60.0, 400.0, 700.0, 2500.0])
            rows.append((t, b, None, kind, None, median, median * rng.choice([1.5, 4.0, 10.0])))
        elif kind == "down":
            rows.append((t, b, None, kind, rng.choice(["clean", "silent"]), None, None))
        elif kind in ("partition", "heal"):
            rows.append((t, b, rng.choice(["p0", "p1"]), kind, None, None, None))
        else:
            rows.append((t, b, None, kind, None, None, None))
    rows.sort(key=lambda r: r[0])
    names = ["time_ms", "broker", "client", "kind", "mode", "median_ms", "p99_ms"]
    return {c: [r[i] for r in rows] for i, c in enumerate(names)}


def _due(rng: random.Random, n: int, span: int) -> list[int]:
    if rng.random() < 0.5:                      # bursts: the busy chain matters
        times = [rng.randrange(0, span) // rng.choice([1, 50, 400]) for _ in range(n)]
    else:
        times = [rng.randrange(0, span) for _ in range(n)]
    return sorted(times)


def _same_both_ways(producer: str, due: list[int], route: TopicRoute,
                    conditions: Conditions, config: ReplayConfig) -> None:
    """Stretched rows equal stepped rows for one producer's sends."""
    ft = bool(config.fault_tolerance)
    stepped = list(replay_producer(producer, due, "T", route, conditions, ft, config,
                                   vectorise=False))
    stretched = list(replay_producer(producer, due, "T", route, conditions, ft, config,
                                     vectorise=True))
    assert stretched == stepped, (str(config.line), ft, producer)


@pytest.mark.parametrize("case", range(60))
def test_stretches_equal_stepping(case: int) -> None:
    rng = random.Random(case)
    span = rng.choice([20_000, 300_000, 900_000])
    route = _route(rng.sample([1, 2, 3, 4, 8], 3))
    conditions = Conditions.from_columns(_conditions(rng, span))
    start = rng.choice([None, 2**31 - 1 - rng.randrange(0, 40), rng.randrange(0, 2**31)])
    mode = rng.choice([SendMode.SYNC, SendMode.SYNC, SendMode.ONEWAY, SendMode.ASYNC])
    for line in LINES:
        for ft in (False, True):
            config = ReplayConfig(line=line, fault_tolerance=ft, seed=case, index_start=start,
                                  send_config=SendConfig(mode=mode))
            for producer in ("p0", "p1"):
                _same_both_ways(producer, _due(rng, rng.choice([50, 3000]), span), route,
                                conditions, config)


def _churn(rng: random.Random, span: int, outages: bool = True) -> dict[str, list[Any]]:
    """The churn family's shape (``rocketlb_core.trace.generate.churn_conditions``) on the
    test's three brokers: a new latency every second per broker at its own phase, one second
    in nine slow (median 900 ms), flapping outages and partitions of one client."""
    rows: list[tuple[Any, ...]] = [(0, b, None, "latency", None, 2.0, 10.0) for b in BROKERS]
    for b in BROKERS:
        down_until = -1
        for t in range(rng.randrange(0, 1000), span, 1000):
            median = 900.0 if rng.random() < 1 / 9 else float(rng.randint(1, 30))
            rows.append((t, b, None, "latency", None, median, median * rng.choice([2.8, 3, 8])))
            if outages and t >= down_until and rng.random() < 0.03:
                down_until = t + 1000 * rng.randint(1, 10)
                if rng.random() < 0.8:
                    rows.append((t, b, None, "down", rng.choice(["clean", "silent"]), None,
                                 None))
                    rows.append((down_until, b, None, "up", None, None, None))
                else:
                    rows.append((t, b, "p0", "partition", None, None, None))
                    rows.append((down_until, b, "p0", "heal", None, None, None))
    rows.sort(key=lambda r: r[0])
    names = ["time_ms", "broker", "client", "kind", "mode", "median_ms", "p99_ms"]
    return {c: [r[i] for r in rows] for i, c in enumerate(names)}


@pytest.mark.parametrize("case", range(16))
@pytest.mark.parametrize("path", ["mixed", "vector", "scalar", "mixed-python", "scalar-python"])
def test_stretches_equal_stepping_when_conditions_churn(case: int, path: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The churn family: conditions change every second per broker, so stretches run across
    many changes (and the busy chain, backed up by slow seconds, decides which segment a send
    starts in). Still exactly the stepped rows, whether short stretches go one send at a time
    (mixed, the default: churning runs one at a time too, carrying isolations through) or
    every stretch takes the vector path, or the scalar one; the scalar path's loop compiled
    (the default where numba is installed) or in Python (``-python``)."""
    from rocketlb_core.replay import stretch

    kind, _, loop = path.partition("-")
    monkeypatch.setattr(stretch, "SCALAR_MAX", {"mixed": stretch.SCALAR_MAX, "vector": 0,
                                                "scalar": 1 << 30}[kind])
    if kind == "vector":
        monkeypatch.setattr(stretch, "SCALAR_RUN", 0)
    if loop == "python":
        monkeypatch.setattr(stretch, "USE_COMPILED", False)
    else:
        assert stretch._compiled() is not None    # numba is in requirements.txt
    rng = random.Random(1000 + case)
    span = rng.choice([60_000, 200_000])
    route = _route(rng.sample([1, 2, 3, 4, 8], 3))
    conditions = Conditions.from_columns(_churn(rng, span))
    # every route version's counter starts just before it wraps, in a third of the cases
    start = 2**31 - 1 - rng.randrange(0, 40) if case % 3 == 2 else None
    for line in LINES:
        for ft in (False, True):
            config = ReplayConfig(line=line, fault_tolerance=ft, seed=case, index_start=start)
            for producer in ("p0", "p1"):
                _same_both_ways(producer, _due(rng, rng.choice([300, 2000]), span), route,
                                conditions, config)


def test_stretches_carry_through_latency_changes() -> None:
    """A latency change cannot change which queue round robin picks (with fault tolerance off,
    or while no send is slow enough to isolate): one stretch runs across many of them."""
    rng = random.Random(3)
    route = _route([4, 4, 4])
    conditions = Conditions.from_columns(_churn(rng, 600_000, outages=False))
    r = ProducerReplayer("p0", "T", route, conditions, False, ReplayConfig(), BROKERS)
    due = np.arange(0, 600_000, 200, dtype=np.int64)          # 5 a second: the thread keeps up
    out = r.run(due)
    assert len(conditions.changes) >= 1700                   # three brokers, every second
    timed_out = int((out.status != 0).sum())                 # slower than the 3 s budget
    assert r.stepped <= timed_out + 600_000 // 30_000        # ... and at most one per poll
    assert r.stretches <= len(conditions.changes) // 10


@pytest.mark.parametrize("loop", ["compiled", "python"])
@pytest.mark.parametrize("line", ["4.9.8", "5.3.3"])
def test_stretches_carry_through_isolations(line: str, loop: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """With fault tolerance on, a churning day isolates a broker every few sends and often
    every broker at once. A stretch goes on through each isolation, its end and the least-bad
    pick instead of stopping there (the rows stay the stepped ones: the fuzz tests above), so
    the day is a few long stretches. 4.9.7 and 4.7.1 overwrite the cached queue a least-bad
    pick names, which ends a stretch."""
    from rocketlb_core.replay import stretch

    monkeypatch.setattr(stretch, "USE_COMPILED", loop == "compiled")
    rng = random.Random(5)
    route = _route([4, 4, 4])
    conditions = Conditions.from_columns(_churn(rng, 600_000, outages=False))
    r = ProducerReplayer("p0", "T", route, conditions, True, ReplayConfig(line=line), BROKERS)
    out = r.run(np.arange(0, 600_000, 300, dtype=np.int64))
    isolating = int(((out.end - out.start) >= r._isolates).sum())
    assert isolating >= 50
    assert r.stretches <= isolating // 5
    assert r.stepped <= 10


def test_stretches_do_the_work_on_quiet_traffic() -> None:
    """On quiet traffic nearly every send goes through a stretch, not a step (a replay that
    silently stepped everything would still be right, but 50x slower)."""
    route = _route([4, 4, 4])
    quiet = {"time_ms": [0, 0, 0], "broker": BROKERS, "client": [None] * 3,
             "kind": ["latency"] * 3, "mode": [None] * 3, "median_ms": [2.0, 3.0, 5.0],
             "p99_ms": [10.0, 20.0, 40.0]}
    r = ProducerReplayer("p0", "T", route, Conditions.from_columns(quiet), True, ReplayConfig(),
                         BROKERS)
    r.run(np.arange(0, 200_000 * 7, 7, dtype=np.int64))
    assert r.stepped < 200


def test_batches_continue_the_same_state() -> None:
    """Feeding a producer's sends in several batches gives the rows of one batch."""
    rng = random.Random(7)
    route = _route([2, 2, 2])
    conditions = Conditions.from_columns(_conditions(rng, 300_000))
    due = np.array(_due(rng, 5000, 300_000), dtype=np.int64)
    config = ReplayConfig(fault_tolerance=True)
    errors: dict[str, int] = {}
    whole = ProducerReplayer("p0", "T", route, conditions, True, config, BROKERS, errors)
    rows = list(rows_of("p0", whole.run(due), BROKERS, errors))
    parts = ProducerReplayer("p0", "T", route, conditions, True, config, BROKERS, errors)
    pieces = [rows_of("p0", parts.run(chunk), BROKERS, errors)
              for chunk in np.array_split(due, [1, 17, 2000, 2001])]
    assert [r for piece in pieces for r in piece] == rows


def test_column_aggregates_equal_row_aggregates() -> None:
    rng = random.Random(3)
    route = _route([2, 2, 2])
    conditions = Conditions.from_columns(_conditions(rng, 300_000))
    due = np.array(_due(rng, 5000, 300_000), dtype=np.int64)
    errors: dict[str, int] = {}
    r = ProducerReplayer("p0", "T", route, conditions, False, ReplayConfig(), BROKERS, errors)
    cols = r.run(due)
    by_rows, by_cols = Aggregates(), Aggregates()
    for row in rows_of("p0", cols, BROKERS, errors):
        by_rows.add(row)
    by_cols.add_columns(cols, BROKERS, errors)
    assert by_cols == by_rows


@pytest.mark.parametrize("case", range(6))
def test_column_aggregates_equal_row_aggregates_on_any_columns(case: int) -> None:
    """The batch counts (queues and latency buckets counted, not sorted) are the row-by-row
    counts for any batch: latencies from 0 to hours (exact buckets and rounded ones), any
    broker and queue id, failed sends among them, an empty batch."""
    from rocketlb_core.replay.stepped import Columns

    rng = np.random.default_rng(case)
    n = [0, 1, 7, 1000, 5000, 20000][case]
    due = np.sort(rng.integers(0, 10**9, n))
    waited = np.where(rng.random(n) < 0.7, rng.integers(0, 2048, n),
                      rng.integers(0, 10**7, n))
    failed = rng.random(n) < 0.1
    broker = np.where(failed, -1, rng.integers(0, len(BROKERS), n)).astype(np.int16)
    queue_id = np.where(failed, -1, rng.integers(0, [1, 8, 1024][case % 3], n)).astype(np.int32)
    errors = {"RemotingException": 0, "call timeout": 1}
    cols = Columns(np.arange(n, dtype=np.int64), due, due, due + waited,
                   np.where(failed, FAILED, 0).astype(np.int8), broker, queue_id,
                   rng.integers(1, 4, n).astype(np.int32),
                   np.where(failed, rng.integers(0, 2, n), -1).astype(np.int16))
    by_rows, by_cols = Aggregates(), Aggregates()
    for row in rows_of("p0", cols, BROKERS, errors):
        by_rows.add(row)
    by_cols.add_columns(cols, BROKERS, errors)
    assert by_cols == by_rows


def test_draws_agree_between_scalar_and_array() -> None:
    key = producer_key(5, "producer-7")
    seqs = np.array([0, 1, 2, 10**9, 2**40, 2**62], dtype=np.int64)
    for attempt in (1, 2, 3):
        assert draw_bits_array(key, seqs, attempt).tolist() == [
            draw_bits(key, int(s), attempt) for s in seqs]


def test_latency_tables_follow_the_requested_distribution() -> None:
    table = LatencyTable.build(20.0, 200.0).values
    assert table[len(table) // 2] == 20
    assert table[int(len(table) * 0.99)] == pytest.approx(200, rel=0.02)
    assert (np.diff(table) >= 0).all()


def test_first_and_last_finds_values_only_in_the_middle() -> None:
    from rocketlb_core.replay.stretch import _first_and_last

    used = np.array([1, 0] * 50 + [2] + [0, 1] * 50)
    assert _first_and_last(used, 3) == [(1, 200), (0, 199), (2, 100)]
    short = np.array([3, 1, 3])
    assert _first_and_last(short, 3) == [(3, 2), (1, 1)]


@pytest.mark.parametrize("case", range(40))
def test_segment_matrices_answer_what_the_timeline_answers(case: int) -> None:
    """``broker_matrices``, ``route_matrix``, ``failure_kinds`` (as ``TimelineBroker`` fails an
    attempt) and ``stretch_tables``' row lists, built for every segment at once, say for each
    segment what the scalar lookups say at a time inside it."""
    rng = random.Random(7000 + case)
    cond = Conditions.from_columns(_conditions(rng, rng.choice([50, 5_000, 100_000])))
    names = tuple(sorted(rng.sample(BROKERS, rng.randrange(1, 4))))
    client = rng.choice(["p0", "p1", "p2"])
    tables, bad = cond.broker_matrices(names, client)
    listed = cond.route_matrix(names)
    kinds = cond.failure_kinds(names, client)
    shifted, _, tlists, blists = cond.stretch_tables(names, client, 16)
    edges = [int(t) for t in cond.changes]
    for s in range(len(edges) + 1):
        lo = edges[s - 1] if s else -1
        hi = edges[s] if s < len(edges) else lo + 1000
        for t in sorted({lo, hi - 1, rng.randrange(lo, hi)}):
            for j, b in enumerate(names):
                assert tables[s, j] == cond.table_id_at(b, t)
                assert bad[s, j] == (cond.down_at(b, t) is not None
                                     or cond.partitioned(client, b, t))
                assert listed[s, j] == cond.in_route_at(b, t)
                mode, cut = cond.down_at(b, t), cond.partitioned(client, b, t)
                assert kinds[s, j] == (1 if mode == "clean" and not cut
                                       else 2 if mode is not None or cut else 0)
        assert tlists[s] == shifted[s].tolist()
        assert blists[s] == bad[s].tolist()
    assert len(tlists) == len(edges) + 1


def test_covered_counts_overlapping_and_empty_spans() -> None:
    from rocketlb_core.replay.timeline import _covered

    rng = random.Random(11)
    for _ in range(200):
        spans = [(rng.randrange(0, 60), rng.randrange(0, 60)) for _ in range(rng.randrange(0, 6))]
        times = np.arange(-2, 64, dtype=np.int64)
        want = [any(s <= t < u for s, u in spans) for t in times.tolist()]
        assert _covered(times, spans).tolist() == want


def test_conditions_travel_as_their_source_and_rebuild_the_same_tables() -> None:
    """A Spark task gets the conditions pickled as what they were built from, not as their
    latency tables; it rebuilds the same integers, and the tasks of one worker share them."""
    import pickle

    from rocketlb_core.trace.generate import churn_conditions
    from rocketlb_core.trace.schema import CONDITIONS

    rows = sorted(churn_conditions(600_000, seed=3), key=lambda r: int(r[0]))
    cond = Conditions.from_columns({c: [r[i] for r in rows] for i, c in enumerate(CONDITIONS)})
    blob = pickle.dumps(cond)
    assert len(cond.tables) > 100
    assert len(blob) * 20 < cond.stacked.nbytes
    back = pickle.loads(blob)
    assert back is not cond
    assert np.array_equal(back.stacked, cond.stacked)
    assert np.array_equal(back.changes, cond.changes)
    assert (back.latency, back.down, back.partitions) == (cond.latency, cond.down,
                                                          cond.partitions)
    assert [(t.median_ms, t.p99_ms) for t in back.tables] == \
        [(t.median_ms, t.p99_ms) for t in cond.tables]
    assert pickle.loads(blob) is back
    assert pickle.loads(pickle.dumps(back)) is back


@pytest.mark.parametrize("case", range(30))
def test_span_lookups_answer_as_the_spans_say(case: int) -> None:
    """``down_at``, ``in_route_at`` and ``partitioned`` bisect their spans; they answer what a
    scan of the spans answers, at every edge, also for overlapping spans given directly."""
    from rocketlb_core.conditions import BROKER_EXPIRY_MS

    rng = random.Random(9100 + case)
    cond = Conditions.from_columns(_conditions(rng, rng.choice([50, 300_000])))
    if case % 3 == 0:                       # overlapping and empty spans, in no order
        spans = [(rng.randrange(0, 400), rng.randrange(0, 400), rng.choice(["clean", "silent"]))
                 for _ in range(rng.randrange(1, 6))]
        cuts = [(rng.randrange(0, 400), rng.randrange(0, 400)) for _ in range(3)]
        cond = Conditions(cond.latency, {"broker-a": spans}, {("p0", "broker-a"): cuts},
                          cond.tables, cond.changes, cond.stacked)
    times = {0, 1, 399, 400, *cond.changes.tolist()}
    for spans in cond.down.values():
        for s, u, _ in spans:
            times |= {s - 1, s, u - 1, u, s + BROKER_EXPIRY_MS - 1, s + BROKER_EXPIRY_MS}
    for b in BROKERS:
        for t in sorted(times):
            down = [m for s, u, m in cond.down.get(b, ()) if s <= t < u]
            assert cond.down_at(b, t) == (down[0] if down else None)
            assert cond.in_route_at(b, t) == (not any(
                (s if m == "clean" else s + BROKER_EXPIRY_MS) <= t < u
                for s, u, m in cond.down.get(b, ())))
            for client in ("p0", "p1"):
                assert cond.partitioned(client, b, t) == any(
                    s <= t < u for s, u in cond.partitions.get((client, b), ()))


@pytest.mark.parametrize("case", range(6))
def test_least_bad_picks_sort_with_brokers_that_left_the_route(
        case: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A broker that goes down cleanly leaves the route but keeps its fault item (ten minutes
    after a failed send), and 4.x's least-bad pick sorts it with the others while the brokers
    still listed are all isolated. The compiled loop reads such items too: still exactly the
    stepped rows, and the case is really met (the loop saw items outside its layout and took
    least-bad picks with them)."""
    from rocketlb_core.replay import stretch

    seen = {"outside": 0}
    real = stretch.ProducerReplayer._fault_rows

    def counting(self: Any, names: tuple[str, ...]) -> Any:
        fb, tord, n_items, rotation = real(self, names)
        seen["outside"] += int(len(fb) > len(names))
        return fb, tord, n_items, rotation

    monkeypatch.setattr(stretch.ProducerReplayer, "_fault_rows", counting)
    assert stretch._compiled() is not None
    rng = random.Random(4400 + case)
    span = 400_000
    brokers = [*BROKERS, "broker-d"]               # four items: the pick rotates over two
    rows: list[tuple[Any, ...]] = [(0, b, None, "latency", None, 2.0, 10.0) for b in brokers]
    gone = rng.choice(brokers)
    t_down = rng.randrange(2_000, 20_000)
    rows += [(t_down, gone, None, "down", "clean", None, None),
             (t_down + rng.randrange(200_000, 380_000), gone, None, "up", None, None, None)]
    for b in brokers:
        for t in range(rng.randrange(0, 1000), span, 1000):
            median = 900.0 if rng.random() < 0.4 else float(rng.randint(1, 30))
            rows.append((t, b, None, "latency", None, median, median * 3))
    rows.sort(key=lambda r: r[0])
    names = ["time_ms", "broker", "client", "kind", "mode", "median_ms", "p99_ms"]
    conditions = Conditions.from_columns({c: [r[i] for r in rows] for i, c in enumerate(names)})
    route = TopicRoute(tuple(QueueData(b, 4, 4, 6) for b in brokers),
                       tuple(BrokerData(b, {0: f"10.0.0.{i}:10911"})
                             for i, b in enumerate(brokers)))
    due = sorted(rng.randrange(0, span) for _ in range(3000))
    for line in LINES:
        _same_both_ways("p0", due, route, conditions,
                        ReplayConfig(line=line, fault_tolerance=True, seed=case))
    assert seen["outside"] > 0


def test_failed_sends_and_their_retries_run_in_the_compiled_loop() -> None:
    """On 4.9.8 with fault tolerance on, a send whose attempt fails (a broker down cleanly or
    silently, cut off, or too slow) retries as ``send()`` does inside the compiled loop; only
    a retry it cannot take goes back to stepping. The rows are the stepped ones."""
    from rocketlb_core.replay import stretch

    assert stretch._compiled() is not None
    rng = random.Random(21)
    route = _route([4, 4, 4])
    conditions = Conditions.from_columns(_churn(rng, 600_000))
    due = np.arange(0, 600_000, 150, dtype=np.int64)
    config = ReplayConfig(line="4.9.8", fault_tolerance=True, seed=4)
    r = ProducerReplayer("p0", "T", route, conditions, True, config, BROKERS)
    out = r.run(due)
    retried = int((out.attempts > 1).sum())
    failed = int((out.status != 0).sum())
    assert retried >= 100
    assert failed >= 20
    assert r.stepped * 10 <= retried + failed
    _same_both_ways("p0", due.tolist(), route, conditions, config)


@pytest.mark.parametrize("case", range(12))
def test_retries_in_the_loop_follow_the_send_configuration(case: int) -> None:
    """The loop's retries take the configuration's number of attempts and time budget, as
    ``send()`` does: any retry count and timeout on a churning day, the stepped rows."""
    rng = random.Random(5300 + case)
    span = 200_000
    route = _route(rng.sample([1, 2, 3, 4, 8], 3))
    conditions = Conditions.from_columns(_churn(rng, span))
    sc = SendConfig(retry_times_when_send_failed=rng.choice([0, 1, 2, 4]),
                    send_msg_timeout_ms=rng.choice([200, 600, 1500, 3000]))
    for line in ("4.9.8", "4.9.7"):
        config = ReplayConfig(line=line, fault_tolerance=True, seed=case, send_config=sc)
        _same_both_ways("p0", _due(rng, 2000, span), route, conditions, config)


def test_segment_caches_keep_every_broker_set_a_day_comes_back_to() -> None:
    """A churning day's routes come back to the same few broker sets again and again; the
    per-segment answers for each stay cached (the cache dropped everything when it filled,
    and a 10 M-send day rebuilt them thousands of times)."""
    import itertools

    rng = random.Random(8)
    brokers = [*BROKERS, "broker-d"]
    rows: list[tuple[Any, ...]] = [(t, b, None, "latency", None, float(rng.randint(1, 30)), 40.0)
                                   for b in brokers for t in range(0, 50_000, 1000)]
    rows.sort(key=lambda r: r[0])
    names_ = ["time_ms", "broker", "client", "kind", "mode", "median_ms", "p99_ms"]
    cond = Conditions.from_columns({c: [r[i] for r in rows] for i, c in enumerate(names_)})
    sets = [tuple(c) for k in (1, 2, 3, 4) for c in itertools.combinations(brokers, k)]
    first = [(cond.stretch_tables(s, "p0", 16), cond.failure_kinds(s, "p0"),
              cond.route_differs(s, (True,) * len(s))) for s in sets]
    again = [(cond.stretch_tables(s, "p0", 16), cond.failure_kinds(s, "p0"),
              cond.route_differs(s, (True,) * len(s))) for s in sets]
    assert len(sets) == 15
    for a, b in zip(first, again, strict=True):
        assert all(x is y for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("line", LINES)
def test_route_polls_build_what_the_route_conversion_builds(line: str) -> None:
    """A poll makes the queue list of each route the producer has had once and reuses it;
    the producer still gets, at every poll, what ``TopicPublishInfo.from_route`` makes of
    ``route_at`` (the queues, the sorted queue datas, a new counter at each change)."""
    from rocketlb_core.conditions import ROUTE_POLL_MS
    from rocketlb_core.producer import TopicPublishInfo
    from rocketlb_core.replay.stepped import SteppedReplayer, _start_index
    from rocketlb_core.replay.timeline import route_at

    rng = random.Random(31)
    route = _route([4, 2, 8])
    conditions = Conditions.from_columns(_churn(rng, 3_600_000))
    config = ReplayConfig(line=line, fault_tolerance=True, seed=2)
    r = SteppedReplayer("p0", "T", route, conditions, True, config, BROKERS)
    previous, version, changes = None, 0, 0
    for k in range(120):
        t = k * ROUTE_POLL_MS
        r._poll(t)
        want = route_at(route, conditions, t)
        if want != previous:
            previous, version = want, version + 1
            changes += 1
        expected = TopicPublishInfo.from_route("T", want, line,
                                               index_start=_start_index(2, "p0", version))
        assert r.current == want
        assert r.version == version
        assert r.tp is not None
        assert r.tp.queues == expected.queues
        assert r.tp.queue_datas == expected.queue_datas
        assert r.tp.index.stored == expected.index.stored
    assert changes >= 10


def test_compiled_latency_is_the_table_entry_for_every_bucket() -> None:
    """The compiled loop computes a latency table's entry instead of reading it; for every
    bucket of many tables (churn's and odd ones: tiny medians, huge spreads) it is the entry,
    and a table whose parameters are NaN is read."""
    from numba import njit

    from rocketlb_core.replay import compiled
    from rocketlb_core.trace.generate import churn_conditions
    from rocketlb_core.trace.schema import CONDITIONS

    rng = random.Random(17)
    extra = [(0.3, 0.3), (1.0, 1.0), (0.5, 900.0), (2500.0, 60_000.0), (7.0, 7.5), (1.0, 2e9)]
    extra += [(rng.uniform(0.1, 3000.0), rng.uniform(0.1, 9000.0)) for _ in range(20)]
    rows = sorted(churn_conditions(3_000_000, seed=5), key=lambda r: int(r[0]))
    rows += [(3_000_001 + i, "broker-a", None, "latency", None, m, p)
             for i, (m, p) in enumerate(extra)]
    cond = Conditions.from_columns({c: [r[i] for r in rows] for i, c in enumerate(CONDITIONS)})
    zq, med, sig = cond.table_params()
    assert len(cond.tables) > 150

    @njit
    def every(stacked: Any, n_tables: int, zq: Any, med: Any, sig: Any) -> Any:
        out = np.empty(n_tables << 16, np.int64)
        for t in range(n_tables):
            for b in range(1 << 16):
                out[(t << 16) | b] = compiled._latency(stacked, t << 16, b, zq, med, sig)
        return out

    n = len(cond.tables)
    assert np.array_equal(every(cond.stacked, n, zq, med, sig), cond.stacked)
    nan = med.copy()                           # tables without parameters are read
    nan[::3] = np.nan
    assert np.array_equal(every(cond.stacked, n, zq, nan, sig), cond.stacked)


def test_outages_between_two_route_polls_stop_no_stretch() -> None:
    """A broker down for a few seconds between two route polls leaves the route the producer
    sees unchanged, so its stretch runs on through it (it used to stop at the next poll, a
    churning day's most common stop); the rows are still the stepped ones."""
    rows: list[tuple[Any, ...]] = [(0, b, None, "latency", None, 2.0, 10.0) for b in BROKERS]
    for k in range(20):                                   # polls at 0, 30 s, 60 s, ...
        t = k * 30_000 + 10_000
        rows += [(t, "broker-b", None, "down", "clean", None, None),
                 (t + 5_000, "broker-b", None, "up", None, None, None)]
    rows.sort(key=lambda r: r[0])
    names_ = ["time_ms", "broker", "client", "kind", "mode", "median_ms", "p99_ms"]
    conditions = Conditions.from_columns({c: [r[i] for r in rows] for i, c in enumerate(names_)})
    route = _route([4, 4, 4])
    config = ReplayConfig(line="4.9.8", fault_tolerance=True)
    due = np.arange(0, 600_000, 97, dtype=np.int64)
    r = ProducerReplayer("p0", "T", route, conditions, True, config, BROKERS)
    out = r.run(due)
    assert int((out.attempts > 1).sum()) >= 1               # an outage was met (then isolated)
    assert r.stretches <= 12                 # chunks of 64, 128, ... sends; not one per outage
    _same_both_ways("p0", due.tolist(), route, conditions, config)


def test_compiled_retry_draws_are_the_replay_draws() -> None:
    """A retry in the compiled loop draws ``draw_bits(key, seq, attempt)``'s bucket itself."""
    from rocketlb_core.replay import compiled
    from rocketlb_core.replay.draws import bucket

    rng = random.Random(1)
    for _ in range(5000):
        key, seq, a = rng.getrandbits(64), rng.randrange(0, 2**62), rng.randrange(1, 9)
        assert compiled.draw_bucket(np.uint64(key), seq, a) == bucket(draw_bits(key, seq, a))


def test_failure_kinds_a_cut_off_client_gets_no_answer_from_a_clean_outage() -> None:
    """A broker down cleanly refuses at once, but a client cut off from it gets no answer:
    ``failure_kinds`` says what ``TimelineBroker`` does where both hold."""
    cond = Conditions.from_columns({
        "time_ms": [0, 100, 150, 200, 300], "broker": ["broker-a"] * 5,
        "client": [None, None, "p0", None, "p0"],
        "kind": ["latency", "down", "partition", "up", "heal"],
        "mode": [None, "clean", None, None, None], "median_ms": [2.0, None, None, None, None],
        "p99_ms": [10.0, None, None, None, None]})
    at = {t: int(np.searchsorted(cond.changes, t, side="right")) for t in (120, 170, 250)}
    p0, p1 = cond.failure_kinds(("broker-a",), "p0"), cond.failure_kinds(("broker-a",), "p1")
    assert [int(p0[at[t], 0]) for t in (120, 170, 250)] == [1, 2, 2]
    assert [int(p1[at[t], 0]) for t in (120, 170, 250)] == [1, 1, 0]
    broker = TimelineBroker("p0", cond, 1)
    mq = MessageQueue("T", "broker-a", 0)
    assert broker(mq, 170, 3000).latency_ms == 3000         # the whole budget: no answer


@pytest.mark.parametrize("case", range(8))
@pytest.mark.parametrize("line", ["4.9.8", "5.3.3"])
def test_route_changes_run_inside_the_compiled_loop(case: int, line: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A churning producer's route polls happen inside the compiled loop (a new queue list and
    a counter at the version's seeded start at each change), so route changes stop nothing;
    a poll that finds no queue at all (every broker gone: "No route info"), or a version
    beyond the counter starts the loop was given, stops it before that send. Still exactly
    the stepped rows, and the loop really began the versions."""
    from rocketlb_core.replay import stretch

    assert stretch._compiled() is not None
    monkeypatch.setattr(stretch, "VERSIONS_AHEAD", [1, 2, 64][case % 3])
    rng = random.Random(7700 + case)
    span = 900_000
    columns = _churn(rng, span)
    names = list(columns)
    rows = list(zip(*columns.values(), strict=True))
    for t in range(5_000, span, 45_000):           # a broker leaves the route for a poll
        b = BROKERS[(t // 45_000) % 3]
        rows += [(t, b, None, "down", "clean", None, None),
                 (t + 35_000, b, None, "up", None, None, None)]
    if case % 2:                                   # every broker gone for 40 s, twice
        for t in (rng.randrange(100_000, 300_000), rng.randrange(500_000, 700_000)):
            rows = [r for r in rows if not (r[3] in ("down", "up") and r[2] is None
                                            and t - 20_000 <= r[0] <= t + 60_000)]
            rows += [(t, b, None, "down", "clean", None, None) for b in BROKERS]
            rows += [(t + 40_000, b, None, "up", None, None, None) for b in BROKERS]
    rows.sort(key=lambda r: r[0])
    conditions = Conditions.from_columns({c: [r[i] for r in rows] for i, c in enumerate(names)})
    route = _route(rng.sample([1, 2, 3, 4, 8], 3))
    config = ReplayConfig(line=line, fault_tolerance=True, seed=case,
                          send_config=SendConfig(retry_times_when_send_failed=rng.choice([1, 2])))
    due = _due(rng, 6000, span)
    r = ProducerReplayer("p0", "T", route, conditions, True, config, BROKERS)
    out = r.run(np.asarray(due, np.int64))
    assert r.route_versions_in_loop >= 10                  # of some 25
    if case % 2:
        assert int((out.attempts == 0).sum()) > 0          # sends that found no route
    _same_both_ways("p0", due, route, conditions, config)


def test_route_patterns_are_made_once_per_route_and_conditions() -> None:
    """The producers of a task share one ``RoutePatterns`` (a thousand producers made a
    thousand before); another route gets its own, and each pattern's list is what a poll of
    that route builds."""
    from rocketlb_core.replay.stepped import route_listing
    from rocketlb_core.replay.stretch import RoutePatterns

    rng = random.Random(12)
    conditions = Conditions.from_columns(_churn(rng, 600_000))
    route = _route([4, 2, 8])
    config = ReplayConfig(line="4.9.8", fault_tolerance=True)
    a = ProducerReplayer("p0", "T", route, conditions, True, config, BROKERS)._route_patterns()
    b = ProducerReplayer("p1", "T", route, conditions, True, config, BROKERS)._route_patterns()
    assert a is not None
    assert a is b
    other = _route([4, 2, 8])
    c = ProducerReplayer("p0", "T", other, conditions, True, config, BROKERS)._route_patterns()
    assert c is not None
    assert c is not a
    assert len(a.listed) >= 3
    for p, listed in enumerate(a.listed):
        _, queues, _ = route_listing(route, "T", listed)
        n = int(a.n[p])
        assert n == len(queues)
        assert [a.names[j] for j in a.ql[p, :n].tolist()] == [q.broker_name for q in queues]
        assert a.qi[p, :n].tolist() == [q.queue_id for q in queues]
        assert c.ql[p].tolist() == a.ql[p].tolist()
    fresh = RoutePatterns.of(route, "T", config.line, conditions)
    assert fresh.listed == a.listed
    assert np.array_equal(fresh.segment, a.segment)
