"""Vectors from rocketmq-client-go's own code (issue 47, item 1: "the Go client, exact").

``python -m rocketlb_core.vectorgen.go_client [--out tests/vectors/go] [--check] [--cases N]``
builds ``go/`` (a Go program whose ``go.mod`` pins ``github.com/apache/rocketmq-client-go/v2``
at ``VERSION`` and whose ``go.sum`` pins every module's hash; the go command fetches them from
the Go module proxy and checks them) into ``<cache>/vectors/go-client-<version>/`` and runs it.
It calls the client's own functions: the allocation strategies, the producer's selectors, the
route conversions (the two unexported ones through ``go:linkname``) and the client id, and writes
``go-client-<version>.jsonl.gz`` (the record families: ``goclient.conformance``). The Go
toolchain that built it is recorded in each record's ``source``: Go's ``sort.Slice`` (the
producer's route order) is the toolchain's.

``--check`` compares instead of writing. ``rocketlb conformance`` replays the file on
``rocketlb_core.goclient``; ``tests/test_go_client.py`` also runs the Java client's ports on the
same cases and shows where the two clients agree.

Not core (it runs the go command).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib import resources
from pathlib import Path

from rocketlb_core.live.jars import GO_CLIENT_VERSION as VERSION
from rocketlb_core.live.jars import LiveError, cache_root, go_build
from rocketlb_core.numbers import INT32_MAX, int_option
from rocketlb_core.vectorgen import write_or_check
from rocketlb_core.vectorgen.remoting import REPO

MODULE = "github.com/apache/rocketmq-client-go/v2"
SEED, CASES = 20261128, 1400
NAME = f"go-client-{VERSION}.jsonl.gz"


def build() -> Path:
    """The generator's binary, built from ``go/`` (``jars.go_build``)."""
    source = Path(str(resources.files("rocketlb_core.vectorgen") / "go"))
    return go_build(source, cache_root() / "vectors" / f"go-client-{VERSION}" / "rocketlbvectors")


def generate(cases: int, seed: int = SEED) -> str:
    """The vector file's text: ``cases`` cases made by the Go client's own code."""
    got = subprocess.run([str(build()), str(seed), str(cases)], capture_output=True, text=True,
                         timeout=900, check=False, encoding="utf-8")
    if got.returncode != 0:
        raise LiveError(f"the Go client's vector generator failed:\n{got.stderr[-1500:]}")
    return got.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rocketlb_core.vectorgen.go_client",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "vectors" / "go")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--cases", type=int_option(1, INT32_MAX), default=CASES)
    args = ap.parse_args(argv)
    try:
        text = generate(min(args.cases, CASES))
    except LiveError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0 if write_or_check(args.out / NAME, text, check=args.check) else 1


if __name__ == "__main__":
    raise SystemExit(main())
