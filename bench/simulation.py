"""Simulator speed and memory (issue 15, part 3).

Two shapes, each run in its own process so its peak memory is its own:
- ``hour``: one simulated hour of a 100-queue, 10-producer, 20-consumer cluster at 1,000 msg/s
  (3.6 M messages), the bench of earlier sessions;
- ``day``: the issue's cluster (1,000 queues on 4 brokers, 20 producers, 50 consumers) at
  10 k msg/s for ``--seconds`` of simulated time, and the same for **10x as long**, so the
  message count grows tenfold while queues, producers and consumers stay. Their journal is
  streamed to Parquet as ``simulate --out`` streams it (``run_scenario``'s ``journal_sink``): the
  lag samples, a sample of every queue each 5 s, which grow with simulated time, stay out of
  memory.

Every message is selected, sent, stored and delivered through the package's real code: the
producers' sends compiled (``rocketlb_core.simfast``, what ``rocketlb simulate`` uses when numba
is installed), and, for the 1x day, the core's producers too (``core``): the same bytes, the
speed the compiled sends are measured against.
Baselines, in the same run: the bare event kernel dispatching no-op timer events (events per
second), and the peak memory of a process that imports the package (and pyarrow) and runs that
kernel. Memory is reported as a ratio to that process, and 10x against 1x (flat: about 1).

``--whole-day`` adds one whole simulated day of the issue's cluster (864 M messages, compiled
producers), the issue's speed target: 10 minutes.

Run: .venv/bin/python bench/simulation.py [--seconds S] [--minutes M] [--skip-hour] [--whole-day]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rocketlb_core.commands.simulate import JOURNAL, _Table, producers
from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.sim.clients import Producer
from rocketlb_core.sim.events import SendTick
from rocketlb_core.sim.kernel import Environment, JournalRecord
from rocketlb_core.sim.scenario import (
    BrokerSpec,
    GroupSpec,
    MemberSpec,
    ProducerSpec,
    Scenario,
    TopicSpec,
)
from rocketlb_core.sim.world import run_scenario


def hour(minutes: float) -> Scenario:
    brokers = tuple(BrokerSpec(f"broker-{i}") for i in range(4))
    return Scenario(
        name="bench-hour", description="", path="<bench>", duration_ms=int(minutes * 60_000),
        drain_ms=10_000, line=ProducerLine.V4_9_8, name_servers=2, brokers=brokers,
        topics=(TopicSpec("TopicTest", tuple(b.name for b in brokers), 25, 25),),
        producers=tuple(ProducerSpec(f"producer-{i}", "TopicTest", 100.0, fault_tolerance=True)
                        for i in range(10)),
        groups=(GroupSpec("GID_bench", "TopicTest", tuple(
            MemberSpec(f"consumer-{i}", f"10.9.0.{i}") for i in range(20))),),
        events=(), expect={})


def day(seconds: float, scale: int) -> Scenario:
    """The issue's cluster: 1,000 queues, 20 producers at 500 msg/s, 50 consumers that keep up,
    for ``seconds`` x ``scale`` of simulated time; brokers answer in 1 ms (p99 4 ms), so one
    sending thread keeps up with 500 msg/s. (More messages by a higher rate would need
    more producers, whose routes and fault tables are per-producer state: one sending thread
    cannot send more than 1,000/s at 1 ms or more a send.)"""
    brokers = tuple(BrokerSpec(f"broker-{i}", median_ms=1.0, p99_ms=4.0) for i in range(4))
    return Scenario(
        name=f"bench-day-x{scale}", description="", path="<bench>",
        duration_ms=int(seconds * scale * 1000), drain_ms=10_000, line=ProducerLine.V4_9_8,
        name_servers=2, brokers=brokers,
        topics=(TopicSpec("TopicTest", tuple(b.name for b in brokers), 250, 250),),
        producers=tuple(ProducerSpec(f"producer-{i}", "TopicTest", 500.0,
                                     fault_tolerance=True) for i in range(20)),
        groups=(GroupSpec("GID_bench", "TopicTest", tuple(
            MemberSpec(f"consumer-{i}", f"10.9.{i // 200}.{i % 200}") for i in range(50)),
            consume_rate_per_s=1000.0),),
        events=(), expect={})


class _Nop:
    def handle(self, env: Environment, event: object) -> None:
        pass


def kernel_baseline(events: int) -> float:
    env = Environment(seed=0)
    env.register("nop", _Nop())
    t0 = time.perf_counter()
    for i in range(events):
        env.schedule(i % 1000, SendTick("nop"))
        env.step()
    return events / (time.perf_counter() - t0)


def peak_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss      # KiB on Linux


def child(args: argparse.Namespace) -> None:
    """One measurement in this process: print it as one JSON line."""
    if args.child == "kernel":
        # the day runs' imports: their journal writer, and the compiled sends (numba, llvmlite)
        import pyarrow.parquet  # noqa: F401

        import rocketlb_core.simfast  # noqa: F401

        row = {"kernel_noop_events_per_s": round(kernel_baseline(300_000))}
    else:
        sc = hour(args.minutes) if args.child == "hour" else day(args.seconds, args.scale)
        streamed = 0
        with tempfile.TemporaryDirectory(prefix="rocketlb-bench-") as tmp:
            # the day runs stream their journal to Parquet as ``simulate --out`` does (the lag
            # samples then stay out of memory); the hour keeps it all in memory, as before
            journal = _Table(Path(tmp) / "journal.parquet", JOURNAL) if args.child == "day" \
                else None

            def spill(r: JournalRecord) -> None:
                nonlocal streamed
                streamed += 1
                assert journal is not None
                journal.add(r.time_ms, r.kind, r.entity,
                            json.dumps(r.fields, sort_keys=True, default=str))

            t0 = time.perf_counter()
            result = run_scenario(sc, seed=0, journal_sink=spill if journal else None,
                                  producer_class=Producer if args.core else producers())
            if journal is not None:
                journal.close()
            wall = time.perf_counter() - t0
        s = result.summary
        row = {"scenario": sc.name + (" core" if args.core else ""), "wall_s": round(wall, 2),
               "messages": s["messages_sent"],
               "messages_per_wall_s": round(s["messages_sent"] / wall),
               "events": s["events_processed"],
               "events_per_wall_s": round(s["events_processed"] / wall),
               "unconsumed": s["messages_unconsumed"], "duplicates": s["duplicate_deliveries"],
               "failed": s["messages_failed"], "backlog": s["producer_backlog"],
               "journal_records": len(result.world.env.journal),
               "journal_streamed": streamed, "summary_sha256": hashlib.sha256(
                   json.dumps(s, sort_keys=True, default=str).encode()).hexdigest()}
    row["peak_kib"] = peak_kib()
    print(json.dumps(row), flush=True)


def measure(*extra: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, str(Path(__file__)), *extra], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60.0, help="simulated minutes of 'hour'")
    ap.add_argument("--seconds", type=float, default=60.0,
                    help="simulated seconds of the 1,000-queue cluster, at 1x and 10x the rate")
    ap.add_argument("--skip-hour", action="store_true")
    ap.add_argument("--whole-day", action="store_true",
                    help="also one whole simulated day of the 1,000-queue cluster (864 M "
                         "messages, compiled producers; about 10 minutes): the issue's target")
    ap.add_argument("--child", choices=("kernel", "hour", "day"), help=argparse.SUPPRESS)
    ap.add_argument("--scale", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--core", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    base = measure("--child", "kernel")
    rows = [measure("--child", "day", "--seconds", str(args.seconds), "--scale", str(k))
            for k in (1, 10)]
    cores = [measure("--child", "day", "--seconds", str(args.seconds), "--scale", str(k), "--core")
             for k in (1, 10)]
    if not args.skip_hour:
        rows.append(measure("--child", "hour", "--minutes", str(args.minutes)))
    print(f"bare kernel: {base['kernel_noop_events_per_s']:,} no-op events/s, "
          f"peak {base['peak_kib'] / 1024:.1f} MiB")
    for r in rows:
        r["peak_vs_kernel"] = round(int(r["peak_kib"]) / int(base["peak_kib"]), 2)
        print(f"{r['scenario']:14} {r['messages']:>11,} msgs  {r['wall_s']:>8} s  "
              f"{r['messages_per_wall_s']:>9,} msg/s  peak {int(r['peak_kib']) / 1024:7.1f} MiB "
              f"({r['peak_vs_kernel']}x the kernel)")
    speedups = []
    for run, core in zip(rows[:2], cores, strict=True):
        core["peak_vs_kernel"] = round(int(core["peak_kib"]) / int(base["peak_kib"]), 2)
        if core["summary_sha256"] != run["summary_sha256"]:
            raise SystemExit(f"{run['scenario']}: the compiled producers' run differs from "
                             "the core's")
        speedups.append(round(float(core["wall_s"]) / float(run["wall_s"]), 2))
        print(f"{core['scenario']:19} {core['messages']:>11,} msgs  {core['wall_s']:>8} s  "
              f"{core['messages_per_wall_s']:>9,} msg/s  same summary; compiled / core speed "
              f"{speedups[-1]:.2f}x")
    ratio = int(rows[1]["peak_kib"]) / int(rows[0]["peak_kib"])
    print(f"peak memory at 10x the messages / at 1x: {ratio:.2f}")
    whole = None
    if args.whole_day:
        whole = measure("--child", "day", "--seconds", "86400")
        whole["peak_vs_kernel"] = round(int(whole["peak_kib"]) / int(base["peak_kib"]), 2)
        print(f"one simulated day: {whole['messages']:,} msgs in {whole['wall_s']} s "
              f"({float(whole['wall_s']) / 60:.1f} min, {whole['messages_per_wall_s']:,} msg/s; "
              f"the target is 10 min), peak {int(whole['peak_kib']) / 1024:.1f} MiB "
              f"({whole['peak_vs_kernel']}x the kernel)")
    print(json.dumps({"kernel": base, "runs": rows, "core": cores,
                      "compiled_over_core": speedups, "whole_day": whole,
                      "peak_10x_over_1x": round(ratio, 3)}), flush=True)


if __name__ == "__main__":
    main()
