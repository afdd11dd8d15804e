"""Whole-group allocation: 1024 queues by 128 consumers, every strategy.

For each strategy, two ways to get all 128 shares, timed in the same run:
* per-client: what upstream does, each consumer calling ``allocate`` with the full view
  (128 calls; CONSISTENT_HASH rebuilds its ring in every call);
* whole-group: ``assign_all``, one pass (the ring built once).
Targets from the issue (upstream Java on this machine, spec 12): AVG for all 128 shares in
0.13 ms; CONSISTENT_HASH within 31 ms (Java: 310 ms).

Run: .venv/bin/python bench/allocation.py [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from rocketlb_core.consumer.base import assign_all, rebalance_view
from rocketlb_core.consumer.registry import REGISTRY, make
from rocketlb_core.consumer.strategies import avg
from rocketlb_core.model import MessageQueue

QUEUES, CONSUMERS = 1024, 128


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    raw_q = [MessageQueue("TopicTest", f"room{b % 2}-broker-{b}", i)
             for b in range(16) for i in range(QUEUES // 16)]
    raw_c = [f"room{i % 2}-10.0.{i // 250}.{i % 250}@{4000 + i}" for i in range(CONSUMERS)]
    mq_all, cid_all = rebalance_view(raw_q, raw_c)
    previous = assign_all(avg(), "g", mq_all, cid_all[:-8])
    # every registered strategy: as comparisons sweep it, else as its example
    strategies = {name: make(name, **(r.sweep if r.sweep is not None else r.example))
                  for name, r in REGISTRY.items()}
    rows = []
    for name, s in strategies.items():
        prev = previous if name == "STICKY" else None
        whole = best(lambda s=s, prev=prev: assign_all(s, "g", mq_all, cid_all, prev), args.repeat)
        per_client = best(lambda s=s: [s.allocate("g", c, mq_all, cid_all) for c in cid_all],
                          max(1, args.repeat // 2) if "HASH" in name or name == "STICKY"
                          else args.repeat)
        rows.append({"strategy": name, "whole_group_ms": round(whole, 3),
                     "per_client_ms": round(per_client, 3),
                     "speedup": round(per_client / whole, 1)})
    print(f"{QUEUES} queues x {CONSUMERS} consumers, all shares (best of {args.repeat})")
    print(f"{'strategy':26} {'whole-group ms':>15} {'per-client ms':>14} {'speedup':>8}")
    for r in rows:
        print(f"{r['strategy']:26} {r['whole_group_ms']:15.3f} {r['per_client_ms']:14.3f} "
              f"{r['speedup']:7.1f}x")
    print("targets: AVG <= 0.13 ms (upstream Java), CONSISTENT_HASH <= 31 ms")
    print(json.dumps({"rows": rows}), flush=True)


if __name__ == "__main__":
    main()
