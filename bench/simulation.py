"""Simulator speed: wall time of one simulated hour of a 100-queue, 10-producer, 20-consumer
cluster at 1,000 messages/s (3.6 M messages, every one selected, sent, stored and delivered
through the package's real code), and events per second.

Baseline, timed in the same run: the bare event kernel dispatching no-op timer events (what one
event costs with no work attached). Run: .venv/bin/python bench/simulation.py [--minutes M]
"""

from __future__ import annotations

import argparse
import json
import time

from rocketlb_core.producer.line import ProducerLine
from rocketlb_core.sim.events import SendTick
from rocketlb_core.sim.kernel import Environment
from rocketlb_core.sim.scenario import (
    BrokerSpec,
    GroupSpec,
    MemberSpec,
    ProducerSpec,
    Scenario,
    TopicSpec,
)
from rocketlb_core.sim.world import run_scenario


def scenario(minutes: float) -> Scenario:
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60.0)
    args = ap.parse_args()
    base = kernel_baseline(300_000)
    t0 = time.perf_counter()
    result = run_scenario(scenario(args.minutes), seed=0)
    wall = time.perf_counter() - t0
    s = result.summary
    events = s["events_processed"]
    row = {"simulated_minutes": args.minutes, "wall_s": round(wall, 2),
           "messages": s["messages_sent"], "messages_per_wall_s": round(s["messages_sent"] / wall),
           "events": events, "events_per_wall_s": round(events / wall),
           "kernel_noop_events_per_s": round(base),
           "speedup_vs_real_time": round(args.minutes * 60 / wall, 1),
           "unconsumed": s["messages_unconsumed"], "failed": s["messages_failed"]}
    for k, v in row.items():
        print(f"{k:28} {v}")
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
