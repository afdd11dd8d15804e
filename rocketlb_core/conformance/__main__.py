"""``python -m rocketlb_core.conformance FILE...``: run conformance files, print a summary per
file, and last a line ``N passed, M failed``. Exit 0 only when nothing failed, 3 when a vector
failed; 2 when a file is missing, malformed or of an unknown kind."""

from __future__ import annotations

import argparse
from pathlib import Path

from rocketlb_core.cli import EXIT_CHECK, parser, run
from rocketlb_core.conformance.runner import run_file


def main(argv: list[str] | None = None) -> int:
    ap = parser("python -m rocketlb_core.conformance",
                "Replay RocketMQ conformance vectors (producer, primitives, allocation, "
                "upstream-tests.json; plain or gzip) against rocketlb_core.",
                "python -m rocketlb_core.conformance tests/vectors/*.jsonl.gz",
                checks="a vector did not match")
    ap.add_argument("files", nargs="+", type=Path, metavar="FILE")
    ap.add_argument("--show", type=int, default=5, metavar="K",
                    help="failures to show per file (default 5)")
    return run(lambda: _main(ap.parse_args(argv)))


def _main(args: argparse.Namespace) -> int:
    passed = failed = 0
    for path in args.files:
        report = run_file(path)
        passed += report.passed
        failed += report.failed
        extra = f", {len(report.not_compared)} not compared" if report.not_compared else ""
        print(f"{path}: {report.kind}: {report.passed} passed, {report.failed} failed{extra}")
        for outcome in report.failures()[: args.show]:
            print(f"  FAIL {outcome.case}: {outcome.detail}")
        for note in report.not_compared:
            print(f"  not compared: {note}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else EXIT_CHECK


if __name__ == "__main__":
    raise SystemExit(main())
