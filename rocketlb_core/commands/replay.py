"""``rocketlb replay producer|consumer --trace PATH --out DIR [options]``

producer: replay every producer's recorded sends through the real selection, fault table and
retry loop under the chosen line and ``sendLatencyFaultEnable`` (or, ``--client grpc``, through
the gRPC producer's publishing load balancer and retry loop); writes ``sends.parquet/`` (one
part file per sends file) and ``summary.json``. consumer: replay a group's recorded membership
through allocation strategies; writes ``assignments.parquet`` and ``summary.json``. ``--engine
spark`` runs the same replay on Spark, with the same bytes out, on the master of your choice
(``--master`` or ``$ROCKETLB_SPARK_MASTER``; default embedded ``local[*]``); the summary does not
depend on the engine. Outputs replace DIR atomically, and only when DIR is absent, empty or an
earlier rocketlb output (``--force`` for another folder); a bad trace leaves nothing behind. On a
terminal, a progress bar counts sends (Python engine) or finished files (Spark engine, classic
or Connect).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rocketlb_core.cli import (
    add_engine,
    add_out,
    add_quiet,
    add_seed,
    check_seed,
    epilog,
    print_json,
    subparser,
)
from rocketlb_core.consumer.registry import default_strategies
from rocketlb_core.errors import UsageError

EXAMPLES = {
    "producer": "rocketlb replay producer --trace data/traces/seed002-outage "
                "--out out/off --fault-tolerance off",
    "consumer": "rocketlb replay consumer --trace data/traces/membership-day "
                "--out out/members --strategies AVG,STICKY",
}


def register(sub: Any) -> None:
    rp = sub.add_parser("replay", help="replay a recorded trace (what-if)", description=__doc__,
                        epilog=epilog(EXAMPLES["producer"]),
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = rp.add_subparsers(dest="kind", required=True, metavar="SIDE")
    for kind, func in (("producer", producer), ("consumer", consumer)):
        p = subparser(kinds, kind, f"replay a trace's {kind} side", EXAMPLES[kind], func)
        p.add_argument("--trace", type=Path, required=True, help="trace folder (data/README.md)")
        add_out(p)
        add_engine(p)
        add_quiet(p)
    prod = kinds.choices["producer"]
    prod.add_argument("--line", default="4.9.8", help="4.7.1, 4.9.7, 4.9.8 or 5.3.3")
    prod.add_argument("--fault-tolerance", choices=("recorded", "on", "off"), default="recorded",
                      help="sendLatencyFaultEnable for every producer (default: as recorded)")
    prod.add_argument("--partitioner", choices=("rocketmq", "kafka"), default="rocketmq",
                      help="kafka: send through Kafka's sticky, adaptive partitioner instead "
                           "(rocketlb_core.kafka.producer; --line and --fault-tolerance unused)")
    prod.add_argument("--client", choices=("remoting", "grpc"), default="remoting",
                      help="grpc: send through the gRPC producer of rocketmq-client-java 5.0.8 "
                           "instead (its publishing load balancer, endpoint isolation and "
                           "retry loop: rocketlb_core.replay.grpc_producer; --line and "
                           "--fault-tolerance unused; the balancer's start from --seed)")
    add_seed(prod)
    cons = kinds.choices["consumer"]
    cons.add_argument("--group", default=None, help="consumer group (default: the only one)")
    cons.add_argument("--strategies", default=",".join(default_strategies()),
                      help="comma-separated names from the registry (rocketlb_core.consumer."
                           "registry), or Kafka's assignors: kafka-range, kafka-roundrobin, "
                           "kafka-sticky, kafka-cooperative-sticky, ...")
    add_seed(cons)


def producer(args: argparse.Namespace) -> int:
    from rocketlb_core.producer import ProducerLine
    from rocketlb_core.replay.config import ReplayConfig
    from rocketlb_core.replay.engines import print_progress, replay_producers_python

    try:
        ProducerLine.parse(args.line)
    except ValueError as exc:
        raise UsageError(f"--line: {exc}") from None
    check_seed(args.seed)
    if args.client == "grpc" and args.partitioner == "kafka":
        raise UsageError("--client grpc and --partitioner kafka exclude each other")
    ft = {"recorded": None, "on": True, "off": False}[args.fault_tolerance]
    config = ReplayConfig(line=args.line, fault_tolerance=ft, seed=args.seed,
                          partitioner=None if args.partitioner == "rocketmq" else "kafka",
                          client=None if args.client == "remoting" else "grpc")
    quiet = args.quiet
    if args.engine == "spark":
        from rocketlb_core.spark.producer_replay import replay_producers_spark

        summary = replay_producers_spark(
            args.trace, args.out, config, args.master, force=args.force,
            progress=None if quiet else lambda d, t: print_progress(d, t, "files"))
    else:
        summary = replay_producers_python(args.trace, args.out, config,
                                          None if quiet else print_progress, force=args.force)
    print_json(summary)
    return 0


def consumer(args: argparse.Namespace) -> int:
    check_seed(args.seed)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    if args.engine == "spark":
        from rocketlb_core.spark.consumer_replay import replay_consumers_spark

        summary = replay_consumers_spark(args.trace, args.out, args.group, strategies,
                                         args.master, force=args.force, seed=args.seed)
    else:
        from rocketlb_core.replay.consumer_engines import replay_consumers_python

        summary = replay_consumers_python(args.trace, args.out, args.group, strategies,
                                          force=args.force, seed=args.seed)
    print_json(summary)
    return 0
