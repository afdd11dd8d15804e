"""``rocketlb compare``: allocation strategies over the standard membership sequences
(scale-out 4 to 20 consumers over 16 queues, scale-in 8 to 2, crash and restart): how many
queues move at each change and how uneven each step is (``rocketlb_core.consumer.compare``).
JSON on stdout, or the book's Markdown table with ``--markdown``."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from rocketlb_core.cli import add_quiet, print_json, subparser


def register(sub: Any) -> None:
    p = subparser(sub, "compare", "strategies over membership sequences: movement and balance",
                  "rocketlb compare --markdown", compare, description=__doc__)
    p.add_argument("--markdown", action="store_true", help="print a Markdown table instead")
    add_quiet(p)


def compare(args: argparse.Namespace) -> int:
    from rocketlb_core.consumer.compare import comparison, markdown

    rows = comparison()
    if args.markdown:
        sys.stdout.write(markdown(rows) + "\n")
    else:
        print_json([dataclasses.asdict(r) | {"moved_total": r.moved_total} for r in rows])
    return 0
