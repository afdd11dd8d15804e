"""``python -m rocketlb_core.replay producer|consumer --trace PATH --out DIR [options]``

producer: replay every producer's recorded sends through the real selection, fault table and
retry loop under the chosen line and ``sendLatencyFaultEnable``; writes ``sends.parquet/`` (one
part file per sends file) and ``summary.json``. consumer: replay a group's recorded membership
through allocation strategies; writes ``assignments.parquet`` and ``summary.json``. ``--engine
(``--master`` or ``$ROCKETLB_SPARK_MASTER``; default embedded ``local[*]``); the summary does not
depend on the engine. Outputs replace DIR atomically; a bad trace leaves nothing behind. On a
terminal, a progress bar counts sends (Python engine) or finished files (Spark engine, classic
or Connect).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rocketlb_core.traces import TraceError

DEFAULT_STRATEGIES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "STICKY",
                      "CONSISTENT_HASH_BOUNDED")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m rocketlb_core.replay", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="kind", required=True)
    for kind in ("producer", "consumer"):
        p = sub.add_parser(kind, help=f"replay a trace's {kind} side")
        p.add_argument("--trace", type=Path, required=True, help="trace folder (data/README.md)")
        p.add_argument("--out", type=Path, required=True, help="output folder (replaced)")
        p.add_argument("--engine", choices=("python", "spark"), default="python")
        p.add_argument("--master", default=None, help="Spark master (local[*], sc://host:15002)")
    prod = sub.choices["producer"]
    prod.add_argument("--line", default="4.9.8", help="4.7.1, 4.9.7, 4.9.8 or 5.3.3")
    prod.add_argument("--fault-tolerance", choices=("recorded", "on", "off"), default="recorded",
                      help="sendLatencyFaultEnable for every producer (default: as recorded)")
    prod.add_argument("--seed", type=int, default=0)
    cons = sub.choices["consumer"]
    cons.add_argument("--group", default=None, help="consumer group (default: the only one)")
    cons.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES))
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        summary = _producer(args) if args.kind == "producer" else _consumer(args)
    except (TraceError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    json.dump(summary, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


def _producer(args: argparse.Namespace) -> dict[str, object]:
    from rocketlb_core.producer import ProducerLine
    from rocketlb_core.replay.engines import (
        print_progress,
        replay_producers_python,
        replay_producers_spark,
    )
    from rocketlb_core.replay.producer import ReplayConfig

    ProducerLine.parse(args.line)
    ft = {"recorded": None, "on": True, "off": False}[args.fault_tolerance]
    config = ReplayConfig(line=args.line, fault_tolerance=ft, seed=args.seed)
    if args.engine == "spark":
        return replay_producers_spark(args.trace, args.out, config, args.master,
                                      progress=lambda d, t: print_progress(d, t, "files"))
    return replay_producers_python(args.trace, args.out, config, print_progress)


def _consumer(args: argparse.Namespace) -> dict[str, object]:
    from rocketlb_core.replay.consumer_engines import replay_consumers

    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    return replay_consumers(args.trace, args.out, args.group, strategies, args.engine,
                            args.master)


if __name__ == "__main__":
    raise SystemExit(main())
