"""The ``rocketlb`` tool: one command with subcommands, like ``mqadmin`` or
``kafka-consumer-groups``. Each subcommand lives in its own module here and registers itself in
``SUBCOMMANDS``; the conventions they share (options, exit statuses, JSON on stdout) are
``rocketlb_core.cli``'s.

==============================  ===============================================================
``rocketlb simulate``           run a scenario file in virtual time (``commands.simulate``)
``rocketlb replay producer``    a trace's sends under another line or fault tolerance
``rocketlb replay consumer``    a trace's membership through allocation strategies
``rocketlb trace layout``       rewrite a trace's sends into the replay layout
``rocketlb trace generate``     a large synthetic trace for scale tests
``rocketlb trace validate``     check a trace folder and describe it
``rocketlb conformance``        replay upstream's vectors against the package
``rocketlb compare``            strategies over membership sequences: movement and balance
``rocketlb doctor``             diagnose a real cluster's balancing from mqadmin outputs and logs
==============================  ===============================================================

The ``python -m rocketlb_core.simulate`` (``.replay``, ``.replay.layout``, ``.replay.generate``,
``.conformance``, ``.consumer.compare``) forms are aliases of these.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from importlib import import_module
from typing import Protocol

from rocketlb_core.cli import epilog, run

SUBCOMMANDS = ("simulate", "replay", "trace", "conformance", "compare", "doctor")
"""Each name is a module of this package with ``register(subparsers)``: the one list."""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="rocketlb", description="Apache RocketMQ's load balancing, bit-exact: simulate, "
        "replay recorded traffic, check against upstream.",
        epilog=epilog("rocketlb simulate data/scenarios/steady-state.toml --out out/s"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        import_module(f"rocketlb_core.commands.{name}").register(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    """The ``rocketlb`` console script."""
    ap = build_parser()
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    body: Callable[[argparse.Namespace], int] = args.func
    return run(lambda: body(args))


class AliasMain(Protocol):
    def __call__(self, argv: list[str] | None = None) -> int: ...


def alias(*prefix: str) -> AliasMain:
    """The ``main`` of a ``python -m`` alias: ``rocketlb PREFIX... ARGS``."""

    def main_(argv: list[str] | None = None) -> int:
        return main([*prefix, *(sys.argv[1:] if argv is None else argv)])

    return main_
