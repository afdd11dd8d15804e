"""Whole-group allocation: 1024 queues by 128 consumers, every strategy.

For each strategy, two ways to get all 128 shares, timed in the same run:
* per-client: what upstream does, each consumer calling ``allocate`` with the full view
  (128 calls; CONSISTENT_HASH rebuilds its ring in every call);
* whole-group: ``assign_all``, one pass (the ring built once).
Targets from the issue (upstream Java on this machine, spec 12): AVG for all 128 shares in
0.13 ms; CONSISTENT_HASH within 31 ms (Java: 310 ms).

Kafka's assignors (``rocketlb_core.kafka.assignors``, issue 16) at the same size, one topic of
1024 partitions, 128 members (the sticky ones with the history of a group of 120 before), as a
ratio to AVG's whole-group time in the same run; with ``--large``, Kafka's own large case for
the sticky assignors (``AbstractStickyAssignorTest``: 1,000,000 partitions, 2,000 members; about
1.4 s in upstream's Java), once each. Then the sticky assignors' general builder (members on
different topics) in the shape of upstream's
``testLargeAssignmentAndGroupWithNonEqualSubscription``: every member on every topic but the
last, which is on the first topic only; the time of the second rebalance, where every member but
the first brings what the first gave it (8 topics of 128 partitions by 128 members; with
``--large``, upstream's 500 topics of 2,000 by 2,000 members, which its test allows 90 s).

With ``--large``, each large case also runs in Kafka's own Java (issue 48): kafka-clients
4.3.1's ``StickyAssignor`` and ``CooperativeStickyAssignor`` on the same group
(``kafka/java/KafkaBench.java``, built against the jars ``rocketlb_core.kafka.vectors`` fetches),
``--java-reps`` calls in one fresh JVM, timed around ``assign()`` alone: the first call (a
consumer group leader's one assignment after its start) and the best (the JIT warm). The row
gives the port's time over each.

Run: .venv/bin/python bench/allocation.py [--repeat R] [--large [--java-reps N]]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from collections.abc import Callable

from rocketlb_core.consumer.base import assign_all, rebalance_view
from rocketlb_core.consumer.registry import REGISTRY, make
from rocketlb_core.consumer.strategies import avg
from rocketlb_core.kafka.assignors import ASSIGNORS, Member, StickyMember
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
    ap.add_argument("--large", action="store_true",
                    help="also Kafka's large case for the sticky assignors (1 M x 2,000), "
                         "beside Kafka's Java")
    ap.add_argument("--large-repeat", type=_at_least_one, default=3,
                    help="the port's calls on each large case (the best is kept)")
    ap.add_argument("--java-reps", type=_at_least_one, default=3,
                    help="Java's calls on each large case, in one JVM")
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
    avg_ms = float(next(r["whole_group_ms"] for r in rows if r["strategy"] == "AVG"))
    kafka = kafka_rows(QUEUES, CONSUMERS, args.repeat, avg_ms)
    large: list[dict[str, object]] = []
    if args.large:
        java = JavaBench()
        large += java.beside(kafka_rows(1_000_000, 2_000, args.large_repeat, avg_ms,
                                        names=("sticky", "cooperative-sticky")), "large",
                             args.java_reps)
    kafka += general_rows(8, 128, CONSUMERS, args.repeat, avg_ms)
    if args.large:
        large += java.beside(general_rows(500, 2_000, 2_000, args.large_repeat, avg_ms),
                             "unequal", args.java_reps)
    print(f"Kafka's assignors; ratio to AVG's whole group ({avg_ms:.3f} ms)")
    for r in kafka + large:
        print(f"{r['assignor']:30} {r['partitions']:>9,} x {r['members']:>5,}  "
              f"{r['ms']:12.1f} ms  {r['vs_avg']:10.1f}x AVG")
    if large:
        print(f"the large cases beside kafka-clients {KAFKA_VERSION} in Java "
              f"(the port's best of {args.large_repeat}; Java's first call and best of "
              f"{args.java_reps} in one JVM)")
        print(f"{'assignor':30} {'port ms':>9} {'Java 1st':>9} {'Java best':>9} "
              f"{'port/1st':>9} {'port/best':>9}")
        for r in large:
            print(f"{r['assignor']:30} {r['ms']:9.0f} {r['java_first_ms']:9.0f} "
                  f"{r['java_best_ms']:9.0f} {r['port_over_java_first']:9.2f} "
                  f"{r['port_over_java_best']:9.2f}")
    kafka += large
    print(json.dumps({"rows": rows, "kafka": kafka}), flush=True)


KAFKA_VERSION = "4.3.1"


def _at_least_one(text: str) -> int:
    """A count of calls: 1 to 100."""
    n = int(text)
    if not 1 <= n <= 100:
        raise argparse.ArgumentTypeError(f"{text}: a count from 1 to 100")
    return n


class JavaBench:
    """``KafkaBench.java`` compiled once against kafka-clients ``KAFKA_VERSION``'s jars."""

    def __init__(self) -> None:
        import tempfile
        from pathlib import Path

        from rocketlb_core.kafka.vectors import JAVA_ROOT, jars
        from rocketlb_core.live.jars import class_path, find_tool, java

        self.java = java()
        cp = class_path(jars("kafka-clients", KAFKA_VERSION))
        self.out = Path(tempfile.mkdtemp(prefix="rocketlb-kafkabench-"))
        built = subprocess.run([find_tool("javac", "install a JDK (17)"), "-nowarn", "-d",
                                str(self.out), "-cp", cp, str(JAVA_ROOT / "KafkaBench.java")],
                               capture_output=True, text=True, check=False)
        if built.returncode != 0:
            raise SystemExit(f"javac KafkaBench.java failed:\n{built.stderr[-2000:]}")
        self.cp = f"{self.out}{os.pathsep}{cp}"

    def times(self, case: str, assignor: str, reps: int) -> list[float]:
        run = subprocess.run([self.java, "-cp", self.cp, "KafkaBench", case, assignor,
                              str(reps)], capture_output=True, text=True, check=False)
        if run.returncode != 0:
            raise SystemExit(f"KafkaBench {case} {assignor} failed:\n{run.stderr[-2000:]}")
        line = next(x for x in run.stdout.splitlines() if x.startswith("{"))
        return [float(ms) for ms in json.loads(line)["ms"]]

    def beside(self, rows: list[dict[str, object]], case: str, reps: int
               ) -> list[dict[str, object]]:
        """Each row of the port with Java's first and best call on the same case."""
        for r in rows:
            ms = self.times(case, str(r["assignor"]).split(" ")[0], reps)
            port = float(r["ms"])  # type: ignore[arg-type]
            r.update(java_first_ms=round(ms[0], 1), java_best_ms=round(min(ms), 1),
                     port_over_java_first=round(port / ms[0], 2),
                     port_over_java_best=round(port / min(ms), 2))
        return rows


def kafka_rows(partitions: int, members: int, repeat: int, avg_ms: float,
               names: tuple[str, ...] = ("range", "roundrobin", "sticky", "cooperative-sticky")
               ) -> list[dict[str, object]]:
    """Each of ``names`` on one topic; the sticky ones see members 0..n-9 owning the round-robin
    split of a group without the last eight (so they keep, and give up, partitions)."""
    ids = [f"consumer-{i:05d}-{(i * 2654435761) % 10**8:08d}" for i in range(members)]
    before = ids[:-8] if members > 8 else ids
    owned: dict[str, list[tuple[str, int]]] = {m: [] for m in before}
    for p in range(partitions):
        owned[before[p % len(before)]].append(("T", p))
    out = []
    for name in names:
        if "sticky" in name:
            group: list[Member] = [StickyMember(m, ("T",), None, tuple(owned.get(m, ())),
                                                1 if m in owned else None) for m in ids]
        else:
            group = [Member(m, ("T",)) for m in ids]
        ms = best(lambda name=name, group=group: ASSIGNORS[name]({"T": partitions}, group),
                  repeat)
        out.append({"assignor": name, "partitions": partitions, "members": members,
                    "ms": round(ms, 2), "vs_avg": round(ms / avg_ms, 1)})
    return out


def general_rows(topics: int, partitions: int, members: int, repeat: int, avg_ms: float
                 ) -> list[dict[str, object]]:
    """The sticky assignors' general builder in upstream's non-equal shape (see the module
    docstring): the second rebalance, timed."""
    names = [f"topic{i:04d}" for i in range(topics)]
    counts = {t: partitions for t in names}
    subs = {f"consumer{i:05d}": tuple(names[:1]) if i == members - 1 else tuple(names)
            for i in range(members)}
    out = []
    for name in ("sticky", "cooperative-sticky"):
        first = ASSIGNORS[name](counts, [StickyMember(m, t) for m, t in subs.items()])
        group: list[Member] = [StickyMember(m, t, None, tuple(first[m]), 1)
                               for m, t in list(subs.items())[1:]]
        ms = best(lambda name=name, group=group: ASSIGNORS[name](counts, group), repeat)
        out.append({"assignor": f"{name} (unequal)", "partitions": topics * partitions,
                    "members": members, "ms": round(ms, 2), "vs_avg": round(ms / avg_ms, 1)})
    return out


if __name__ == "__main__":
    main()
