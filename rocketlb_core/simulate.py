"""``python -m rocketlb_core.simulate SCENARIO [--seed N] [--out DIR] [--record DIR]``: run a
scenario file, print its summary as JSON, write the journal (Parquet) and ``summary.json`` into
DIR, and exit 3 when the scenario's declared expectations fail (2 for a bad scenario file or an
output folder that may not be written: both are checked before the run starts)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rocketlb_core.atomic import check_output
from rocketlb_core.cli import EXIT_CHECK, parser, print_json, run
from rocketlb_core.errors import UsageError
from rocketlb_core.sim.scenario import load
from rocketlb_core.sim.world import check_expectations, run_scenario, write_outputs

FORCE_HELP = ("replace --out/--record even when they hold files rocketlb did not write (never /, "
              "the home folder, the current folder or its ancestors, or an input)")


def main(argv: list[str] | None = None) -> int:
    ap = parser("python -m rocketlb_core.simulate", __doc__.split("\n\n")[0],
                "python -m rocketlb_core.simulate data/scenarios/steady-state.toml --out out/s",
                checks="a declared expectation failed")
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="folder for the journal and summary")
    ap.add_argument("--record", type=Path, default=None,
                    help="also write the run's traffic as a trace folder (data/README.md)")
    ap.add_argument("--force", action="store_true", help=FORCE_HELP)
    return run(lambda: _main(ap.parse_args(argv)))


def _main(args: argparse.Namespace) -> int:
    if not 0 <= args.seed < 1 << 63:
        raise UsageError(f"--seed must be from 0 to 2^63-1, got {args.seed}")
    scenario = load(args.scenario)
    outs = {"--out": args.out, "--record": args.record}
    checked = {k: check_output(v, "simulate" if k == "--out" else "simulate --record",
                               inputs=[args.scenario], force=args.force)
               for k, v in outs.items() if v is not None}
    if len(checked) == 2:
        a, b = checked["--out"], checked["--record"]
        if a == b or a in b.parents or b in a.parents:
            raise UsageError(f"--out {args.out} and --record {args.record} overlap: give them "
                             "separate folders")
    result = run_scenario(scenario, args.seed)
    problems = check_expectations(result.summary, scenario.expect)
    result.summary["expectations"] = {"declared": len(scenario.expect), "failed": problems}
    if args.out is not None:
        write_outputs(result, args.out, force=args.force)
    if args.record is not None:
        from rocketlb_core.sim.record import record_trace

        record_trace(result, args.record, force=args.force)
    print_json(result.summary)
    for line in problems:
        print(f"expectation failed: {line}", file=sys.stderr)
    return EXIT_CHECK if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
