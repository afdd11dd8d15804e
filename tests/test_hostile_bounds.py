"""Issue 30, cases 8 and 12: bounds that hold for time, not only size.

Case 8: the consumer replay's lag loop stepped every second of trace time per queue and
strategy, so a membership trace ending after 31 days (inside ``limits.MAX_TIME_MS``) ran for
many minutes. The lag is now computed only where something changes (``replay.lag``), with the
same bytes as stepping, and its samples are bounded (``limits.MAX_LAG_ROWS``).

Case 12: ``simulate`` with a 31-day ``drain_ms``, or 31 days at 0.001 msg/s, ran for many
minutes: timers (pulls every 500 ms, producer ticks every 100 ms, lag samples...) fire whether or
not anything happens. The loader now refuses a run whose timer firings pass
``limits.MAX_SIM_TIMER_FIRINGS``, naming the file and the field.

The hang detector is a subprocess timeout (generous: these must finish, not be fast)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core import data_path
from rocketlb_core.limits import MAX_LAG_ROWS, MAX_SIM_TIMER_FIRINGS, MAX_TIME_MS
from rocketlb_core.replay.lag import (
    BUCKET_MS,
    SAMPLE_MS,
    OwnershipSpan,
    lag_timeline,
    sample_step,
)

ROCKETLB = str(Path(sys.executable).with_name("rocketlb"))
HANG_SECONDS = 300


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ROCKETLB, *args], capture_output=True, text=True,
                          timeout=HANG_SECONDS)


# ---------------------------------------------------------------- case 8: the lag, stepped


def stepped(spans: Sequence[OwnershipSpan], queues: Sequence[str],
            arrivals: dict[str, Counter[int]], rate_per_s: float, end_ms: int,
            sample_ms: int = SAMPLE_MS) -> tuple[dict[str, Any], list[tuple[float, str, int]]]:
    """The lag loop as it was before issue 30 (every second of the trace, one by one): the
    reference the closed form must equal."""
    lag = dict.fromkeys(queues, 0)
    peak = dict.fromkeys(queues, 0)
    waiting = 0
    rows: list[tuple[float, str, int]] = []
    per_second = rate_per_s * BUCKET_MS / 1000
    span_i = 0
    for b in range(end_ms // BUCKET_MS + 1):
        t = b * BUCKET_MS
        while span_i + 1 < len(spans) and spans[span_i + 1].time_ms <= t:
            span_i += 1
        owners = spans[span_i].owners if spans and spans[0].time_ms <= t else {}
        load: Counter[str] = Counter(m for q in queues for m in owners.get(q, ()))
        for q in queues:
            drain = max((per_second / load[m] for m in owners.get(q, ())), default=0.0)
            lag[q] = max(0, lag[q] + arrivals.get(q, Counter())[b] - int(drain))
            peak[q] = max(peak[q], lag[q])
            waiting += lag[q]
            if t % sample_ms == 0:
                rows.append((t / 1000, q, lag[q]))
    summary = {"lag_max_by_queue": dict(sorted(peak.items())), "lag_max": max(peak.values(),
                                                                                default=0),
               "lag_message_seconds": waiting * BUCKET_MS // 1000}
    return summary, rows


def _random_case(rng: random.Random, end_ms: int
                 ) -> tuple[list[OwnershipSpan], list[str], dict[str, Counter[int]], float]:
    queues = [f"broker-{c}/{i}" for c in "ab" for i in range(rng.randrange(1, 4))]
    members = [f"m{i}" for i in range(rng.randrange(1, 5))]
    times = sorted(rng.randrange(-2_000, end_ms + 3_000) for _ in range(rng.randrange(0, 8)))
    if rng.random() < 0.2:
        rng.shuffle(times)                      # out of order: the walk's own rule decides
    spans = [OwnershipSpan(t, {q: tuple(sorted(rng.sample(members, rng.randrange(
        0, min(3, len(members) + 1))))) for q in queues if rng.random() < 0.8}) for t in times]
    arrivals: dict[str, Counter[int]] = {}
    for q in queues:
        if rng.random() < 0.9:
            last = end_ms // BUCKET_MS
            arrivals[q] = Counter({rng.randrange(-3, last + 5): rng.randrange(1, 400)
                                   for _ in range(rng.randrange(0, 40))})
    rate = rng.choice([0.5, 1.0, 3.0, 7.5, 50.0, 333.3, 2000.0, 1e7])
    return spans, queues, arrivals, rate


def test_the_lag_in_closed_form_is_the_stepped_lag() -> None:
    rng = random.Random(30)
    for case in range(400):
        end = rng.choice([-1_000, -1, 0, 999, 1_000, 10_000, rng.randrange(0, 400_000)])
        spans, queues, arrivals, rate = _random_case(rng, max(end, 0))
        got = lag_timeline(spans, queues, arrivals, rate, end)
        assert got == stepped(spans, queues, arrivals, rate, end), (case, end)


def test_a_long_trace_samples_within_the_bound_and_keeps_the_summary(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """More rows at 10 s than the bound (here lowered to 1,000, so that stepping the reference
    stays quick): the samples are every multiple of 10 s that fits; the summary is the stepped
    one, the samples too."""
    from rocketlb_core.replay import lag

    monkeypatch.setattr(lag, "MAX_LAG_ROWS", 1_000)
    rng = random.Random(8)
    end = 6 * 3_600_000 + 7_777
    queues = [f"broker-a/{i}" for i in range(8)]
    arrivals = {q: Counter({rng.randrange(0, end // BUCKET_MS): rng.randrange(1, 9_000)
                            for _ in range(200)}) for q in queues}
    spans = [OwnershipSpan(rng.randrange(0, end), {q: (f"m{rng.randrange(3)}",)
                                                   for q in queues if rng.random() < 0.7})
             for _ in range(30)]
    spans.sort(key=lambda s: s.time_ms)
    summary, rows = lag_timeline(spans, queues, arrivals, 2000.0, end)
    step = sample_step(end // BUCKET_MS, len(queues)) * BUCKET_MS
    assert step > SAMPLE_MS
    assert step % SAMPLE_MS == 0
    assert len(queues) * (end // step) <= len(rows) <= 1_000
    assert (summary, rows) == stepped(spans, queues, arrivals, 2000.0, end, step)


def test_sample_step_keeps_ten_seconds_where_it_fits() -> None:
    base = SAMPLE_MS // BUCKET_MS
    assert sample_step(1_200, 8) == base                    # membership-day: unchanged
    assert sample_step(86_400, 8) == base                   # a day of eight queues fits
    for last in (0, 9, 10, 12_499, 12_500, 2_678_400, MAX_TIME_MS // BUCKET_MS):
        for queues in (1, 8, 1_024, MAX_LAG_ROWS, MAX_LAG_ROWS + 1):
            step = sample_step(last, queues)
            assert step % base == 0
            assert (last // step + 1) * queues <= max(MAX_LAG_ROWS, queues)
            if step > base:                                 # the smallest that fits
                assert (last // (step - base) + 1) * queues > MAX_LAG_ROWS


@pytest.fixture(scope="module")
def month_long(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """membership-day with ``end_ms`` 31 days (the most ``MAX_TIME_MS`` allows)."""
    folder = tmp_path_factory.mktemp("hostile") / "membership-month"
    shutil.copytree(data_path("traces", "membership-day"), folder)
    meta = json.loads((folder / "trace.json").read_text())
    meta["end_ms"] = MAX_TIME_MS
    (folder / "trace.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
    return folder


STRATEGIES = "AVG,STICKY,kafka-cooperative-sticky,kafka-uniform"


def test_a_month_long_membership_trace_replays_like_its_twenty_minutes(
        month_long: Path, tmp_path: Path) -> None:
    """Case 8: finishes (it ran past 120 s before) with the 20-minute trace's summary: the
    traffic and the changes are the same, the last owners drain every queue, and nothing is
    unowned after the last change. Its lag samples stay within ``MAX_LAG_ROWS``."""
    import pyarrow.parquet as pq

    short = _run("replay", "consumer", "--trace", str(data_path("traces", "membership-day")),
                 "--out", str(tmp_path / "short"), "--strategies", STRATEGIES, "-q")
    assert short.returncode == 0, short.stderr
    long = _run("replay", "consumer", "--trace", str(month_long), "--out",
                str(tmp_path / "long"), "--strategies", STRATEGIES, "-q")
    assert long.returncode == 0, long.stderr
    assert json.loads(long.stdout) == json.loads(short.stdout)
    lag = pq.read_table(tmp_path / "long" / "lag.parquet").to_pydict()
    per_strategy = Counter(lag["strategy"])
    assert set(per_strategy) == set(STRATEGIES.split(","))
    assert max(per_strategy.values()) <= MAX_LAG_ROWS
    assert max(lag["time_s"]) > 30 * 86_400
    assert all(t % 10 == 0 for t in lag["time_s"])


@pytest.mark.parametrize("strategy", ["CONFIG", "MACHINE_ROOM"])
def test_a_strategy_that_needs_a_deployments_configuration_is_refused(
        strategy: str, tmp_path: Path) -> None:
    """Found on the way: these two are known names, but need a queue list or a set of rooms
    that a trace does not record; they crashed with a TypeError (exit 1)."""
    result = _run("replay", "consumer", "--trace", str(data_path("traces", "membership-day")),
                  "--out", str(tmp_path / "out"), "--strategies", f"AVG,{strategy}", "-q")
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert strategy in result.stderr
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- case 12: simulate

STEADY = data_path("scenarios", "steady-state.toml").read_text()


def _scenario(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def _refused_or_done(result: subprocess.CompletedProcess[str], path: Path, field: str) -> None:
    """Exit 0 (the run finished) or exit 2 with one line naming the file and the field."""
    assert result.returncode in (0, 2), result.stderr[-2000:]
    if result.returncode == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert str(path) in lines[0], lines[0]
        assert f"{field}:" in lines[0], lines[0]
        assert "Traceback" not in result.stderr


def test_simulate_with_a_month_of_drain_ends(tmp_path: Path) -> None:
    text = STEADY.replace("drain_ms = 30_000", "drain_ms = 2_678_400_000")
    assert text != STEADY
    path = _scenario(tmp_path, "drain-month", text)
    result = _run("simulate", str(path))
    _refused_or_done(result, path, "drain_ms")
    assert result.returncode == 2
    assert "timer firings" in result.stderr


def test_simulate_a_month_at_a_thousandth_of_a_message_a_second_ends(tmp_path: Path) -> None:
    text = (STEADY.replace("duration_ms = 120_000", "duration_ms = 2_678_400_000")
            .replace("drain_ms = 30_000", "drain_ms = 0")
            .replace("rate_per_s = 200", "rate_per_s = 0.001"))
    path = _scenario(tmp_path, "month-trickle", text)
    result = _run("simulate", str(path))
    _refused_or_done(result, path, "duration_ms")
    assert result.returncode == 2
    assert "timer firings" in result.stderr
    # the producer's ticks alone: the field to change is tick_ms
    lone = text.split("[[consumer_groups]]")[0].replace("[expect]", "")
    path = _scenario(tmp_path, "month-ticks", lone)
    result = _run("simulate", str(path))
    _refused_or_done(result, path, "tick_ms")
    assert result.returncode == 2


def test_every_shipped_scenario_is_far_within_the_timer_bound() -> None:
    from rocketlb_core.sim.golden import scenarios
    from rocketlb_core.sim.scenario import load, timer_firings

    for path in [*scenarios(), *data_path("scenarios", "recordings").glob("*.toml")]:
        assert sum(timer_firings(load(path)).values()) * 10 < MAX_SIM_TIMER_FIRINGS, path


def test_timer_firings_count_what_a_run_fires() -> None:
    """The estimate is not below what a run processes when little else happens (one message
    a second: nearly every event is a timer)."""
    from dataclasses import replace

    from rocketlb_core.sim.scenario import loads, timer_firings
    from rocketlb_core.sim.world import run_scenario

    sc = loads(STEADY.replace("rate_per_s = 200", "rate_per_s = 1"), "<steady>")
    sc = replace(sc, drain_ms=600_000, expect={})
    work = timer_firings(sc)
    unweighted = work["ticks"] + work["producers"] + work["servers"] + \
        work["lag"] // (1 + 8) + work["consumers"] // (1 + 8)
    run = run_scenario(sc, 0).summary
    assert unweighted * 0.9 <= run["events_processed"] <= unweighted
