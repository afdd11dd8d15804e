"""``python -m rocketlb_core.simulate SCENARIO [--seed N] [--out DIR]``: run a scenario file,
print its summary as JSON, write the journal (Parquet) and ``summary.json`` into DIR, and exit
1 when the scenario's declared expectations fail (2 for a bad scenario file)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rocketlb_core.sim.scenario import ScenarioError, load
from rocketlb_core.sim.world import check_expectations, run_scenario, write_outputs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rocketlb_core.simulate", description=__doc__)
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="folder for the journal and summary")
    ap.add_argument("--record", type=Path, default=None,
                    help="also write the run's traffic as a trace folder (data/README.md)")
    args = ap.parse_args(argv)
    try:
        scenario = load(args.scenario)
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = run_scenario(scenario, args.seed)
    problems = check_expectations(result.summary, scenario.expect)
    result.summary["expectations"] = {"declared": len(scenario.expect), "failed": problems}
    if args.out is not None:
        write_outputs(result, args.out)
    if args.record is not None:
        from rocketlb_core.sim.record import record_trace

        record_trace(result, args.record)
    json.dump(result.summary, sys.stdout, indent=1, sort_keys=True)
    print()
    for line in problems:
        print(f"expectation failed: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
