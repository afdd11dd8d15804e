"""``rocketlb conformance FILE...``: replay conformance vectors (producer, primitives,
allocation, ``upstream-tests.json``, and Kafka's assignors and partitioner from
``tests/vectors/kafka/``; plain or gzip) against the package. A report per file goes
to stderr, ending with the line ``N passed, M failed``; stdout gets the same as JSON. Exit 0 only
when nothing failed, 3 when a vector failed; 2 when a file is missing, malformed or of an
unknown kind."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rocketlb_core.cli import EXIT_CHECK, add_quiet, print_json, say, subparser
from rocketlb_core.numbers import INT32_MAX, int_option


def register(sub: Any) -> None:
    p = subparser(sub, "conformance", "replay upstream's conformance vectors",
                  "rocketlb conformance tests/vectors/*.jsonl.gz", conformance,
                  checks="a vector did not match", description=__doc__)
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.add_argument("--show", type=int_option(0, INT32_MAX), default=5, metavar="K",
                   help="failures to show per file (default 5)")
    add_quiet(p)


def conformance(args: argparse.Namespace) -> int:
    from rocketlb_core.conformance.runner import run_file

    passed = failed = 0
    files = []
    for path in args.files:
        report = run_file(path)
        passed += report.passed
        failed += report.failed
        shown = report.failures()[: args.show]
        files.append({"file": str(path), "kind": report.kind, "passed": report.passed,
                      "failed": report.failed, "not_compared": list(report.not_compared),
                      "failures": [{"case": o.case, "detail": o.detail} for o in shown]})
        extra = f", {len(report.not_compared)} not compared" if report.not_compared else ""
        say(args, f"{path}: {report.kind}: {report.passed} passed, {report.failed} failed{extra}")
        for outcome in shown:
            say(args, f"  FAIL {outcome.case}: {outcome.detail}")
        for note in report.not_compared:
            say(args, f"  not compared: {note}")
    say(args, f"{passed} passed, {failed} failed")
    print_json({"passed": passed, "failed": failed, "files": files})
    return 0 if failed == 0 else EXIT_CHECK
