"""``python -m rocketlb_core.replay producer|consumer --trace PATH --out DIR [options]``

producer: replay every producer's recorded sends through the real selection, fault table and
retry loop under the chosen line and ``sendLatencyFaultEnable``; writes ``sends.parquet/`` (one
part file per sends file) and ``summary.json``. consumer: replay a group's recorded membership
through allocation strategies; writes ``assignments.parquet`` and ``summary.json``. ``--engine
(``--master`` or ``$ROCKETLB_SPARK_MASTER``; default embedded ``local[*]``); the summary does not
depend on the engine. Outputs replace DIR atomically, and only when DIR is absent, empty or an
earlier rocketlb output (``--force`` for another folder); a bad trace leaves nothing behind. On a
terminal, a progress bar counts sends (Python engine) or finished files (Spark engine, classic
or Connect).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rocketlb_core.cli import epilog, parser, print_json, run
from rocketlb_core.errors import UsageError

DEFAULT_STRATEGIES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "STICKY",
                      "CONSISTENT_HASH_BOUNDED")


EXAMPLES = {
    "producer": "python -m rocketlb_core.replay producer --trace data/traces/seed002-outage "
                "--out out/off --fault-tolerance off",
    "consumer": "python -m rocketlb_core.replay consumer --trace data/traces/membership-day "
                "--out out/members --strategies AVG,STICKY",
}
FORCE_HELP = ("replace --out even when it holds files rocketlb did not write (never /, the home "
              "folder, the current folder or its ancestors, or the trace)")


def _parser() -> argparse.ArgumentParser:
    ap = parser("python -m rocketlb_core.replay", __doc__, EXAMPLES["producer"])
    sub = ap.add_subparsers(dest="kind", required=True)
    for kind in ("producer", "consumer"):
        p = sub.add_parser(kind, help=f"replay a trace's {kind} side",
                           description=f"Replay a trace's {kind} side.",
                           epilog=epilog(EXAMPLES[kind]),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--trace", type=Path, required=True, help="trace folder (data/README.md)")
        p.add_argument("--out", type=Path, required=True,
                       help="output folder (absent, empty, or an earlier output: replaced)")
        p.add_argument("--force", action="store_true", help=FORCE_HELP)
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
    ap = _parser()
    return run(lambda: _main(ap.parse_args(argv)))


def _main(args: argparse.Namespace) -> int:
    summary = _producer(args) if args.kind == "producer" else _consumer(args)
    print_json(summary)
    return 0


def _producer(args: argparse.Namespace) -> dict[str, object]:
    from rocketlb_core.producer import ProducerLine
    from rocketlb_core.replay.engines import (
        print_progress,
        replay_producers_python,
        replay_producers_spark,
    )
    from rocketlb_core.replay.producer import ReplayConfig

    try:
        ProducerLine.parse(args.line)
    except ValueError as exc:
        raise UsageError(f"--line: {exc}") from None
    if not 0 <= args.seed < 1 << 63:
        raise UsageError(f"--seed must be from 0 to 2^63-1, got {args.seed}")
    ft = {"recorded": None, "on": True, "off": False}[args.fault_tolerance]
    config = ReplayConfig(line=args.line, fault_tolerance=ft, seed=args.seed)
    if args.engine == "spark":
        return replay_producers_spark(args.trace, args.out, config, args.master,
                                      progress=lambda d, t: print_progress(d, t, "files"),
                                      force=args.force)
    return replay_producers_python(args.trace, args.out, config, print_progress,
                                   force=args.force)


def _consumer(args: argparse.Namespace) -> dict[str, object]:
    from rocketlb_core.replay.consumer_engines import replay_consumers

    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    return replay_consumers(args.trace, args.out, args.group, strategies, args.engine,
                            args.master, force=args.force)


if __name__ == "__main__":
    raise SystemExit(main())
