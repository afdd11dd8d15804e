"""Producer selection speed: select + report per send, every line, fault tolerance on and off.

Baseline (timed in the same run): the most straightforward Python a producer could do per send:
``queues[i % n]`` and a dict store for the report. The ratio package/baseline is what to track;
absolute ns/send move with the machine. Upstream Java for reference (spec 12, 32 queues):
17-60 ns per select with the table empty, 2.2-3.0 us (4.9.8) with every broker isolated.

Run: .venv/bin/python bench/producer_select.py [--sends N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import time

from rocketlb_core.model import MessageQueue, QueueData
from rocketlb_core.producer import MQFaultStrategy, ThreadLocalIndex, TopicPublishInfo

BROKERS = ("broker-a", "broker-b", "broker-c", "broker-d")
QUEUES = [MessageQueue("TopicTest", b, i) for b in BROKERS for i in range(8)]   # 32 queues
QDS = [QueueData(b, 8, 8) for b in BROKERS]


def baseline(sends: int) -> float:
    queues, n, table = QUEUES, len(QUEUES), {}
    t0 = time.perf_counter()
    for now in range(sends):
        mq = queues[(now + 1) % n]
        table[mq.broker_name] = (5, now)
    return time.perf_counter() - t0


def package(line: str, fault: bool, isolated: int, sends: int) -> float:
    s = MQFaultStrategy(line, send_latency_fault_enable=fault)
    tp = TopicPublishInfo(QUEUES, QDS, ThreadLocalIndex(line, stored=0))
    far = 10**12                                     # isolations that outlast the run
    for k in range(isolated):
        s.update_fault_item(BROKERS[k], 30000 + k, True, now_ms=0)
        s.table.items[BROKERS[k]].start_timestamp = far
    select, report = s.select, s.update_fault_item
    t0 = time.perf_counter()
    for now in range(sends):
        mq = select(tp, None, now)
        if fault and mq.broker_name in BROKERS[:isolated]:
            continue                                 # keep isolated brokers isolated
        report(mq.broker_name, 5, False, now)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sends", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n, r = args.sends, args.repeat
    base = min(baseline(n) for _ in range(r)) / n * 1e9
    rows = []
    for line in ("4.7.1", "4.9.7", "4.9.8", "5.3.3"):
        for label, fault, iso in (("fault off", False, 0), ("fault on, table empty", True, 0),
                                  ("fault on, 1 of 4 isolated", True, 1),
                                  ("fault on, all isolated", True, 4)):
            ns = min(package(line, fault, iso, n) for _ in range(r)) / n * 1e9
            rows.append({"line": line, "case": label, "ns_per_send": round(ns, 1),
                         "ratio_to_baseline": round(ns / base, 2)})
    print(f"baseline (queues[i % n] + dict store): {base:.1f} ns/send")
    print(f"{'line':7} {'case':28} {'ns/send':>9} {'x baseline':>10}")
    for row in rows:
        print(f"{row['line']:7} {row['case']:28} {row['ns_per_send']:9.1f} "
              f"{row['ratio_to_baseline']:10.2f}")
    print(json.dumps({"baseline_ns_per_send": round(base, 1), "rows": rows}), flush=True)


if __name__ == "__main__":
    main()
