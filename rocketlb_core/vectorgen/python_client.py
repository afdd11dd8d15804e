"""Vectors from rocketmq-python-client's own ``QueueSelector`` (issue 34, item 2: "checked
against the Python client where it claims the same behaviour").

``python -m rocketlb_core.vectorgen.python_client [--out tests/vectors/grpc] [--check]
[--cases N]`` makes a venv for the client (``<cache>/vectors/rocketmq-python-client-<version>/``,
``pip install rocketmq-python-client==<version>`` from PyPI, once), runs
``python/python_client_vectors.py`` with that venv's Python (the client's own classes; the
package never imports the client) and writes ``python-client-<version>.jsonl.gz``: routes of
protobuf ``MessageQueue``s (masters and slaves, every permission, shuffled now and then, empty
ones too), one of the three selectors the client makes, its start drawn from
``random.seed(random_seed)``, and up to 40 operations (``next``, ``hash`` of a message group,
``all``, ``update`` to a new route) with each answer or the exception's type::

    {"id": "python-client-5.1.2-00017", "grpc": "python-selector",
     "source": {"package": "rocketmq-python-client", "version": "5.1.2", "seed": 20261126, ...},
     "kind": "producer" | "simple_consumer" | "lite_simple_consumer", "random_seed": int,
     "route": [[broker, brokerId, queueId, permission], ...],
     "ops": [{"op": "next"} | {"op": "hash", "key": str} | {"op": "all"}
             | {"op": "update", "route": [...]}, ...],
     "expect": [[broker, brokerId, queueId] | [[...], ...] | null | {"error": str}, ...]}

``--check`` compares instead of writing. ``grpc.conformance`` replays the file on
``grpc.python_client``; ``tests/test_grpc_python_client.py`` also shows where the Java client's
ports (``grpc.publishing``, ``grpc.subscription``) agree with it and where not.

Not core (it runs pip and the client).
"""

from __future__ import annotations

import argparse
import subprocess
from importlib import resources
from pathlib import Path

from rocketlb_core.live.jars import PYTHON_CLIENT_VERSION as VERSION
from rocketlb_core.live.jars import LiveError, python_client
from rocketlb_core.numbers import INT32_MAX, int_option
from rocketlb_core.vectorgen import write_or_check
from rocketlb_core.vectorgen.remoting import REPO

SEED, CASES = 20261126, 1000
NAME = f"python-client-{VERSION}.jsonl.gz"


def generate(cases: int, seed: int = SEED) -> str:
    """The vector file's text: ``cases`` cases made by the client's own classes."""
    script = resources.files("rocketlb_core.vectorgen") / "python" / "python_client_vectors.py"
    got = subprocess.run([str(python_client()), "-I", str(script), str(seed), str(cases)],
                         capture_output=True, text=True, timeout=900, check=False,
                         encoding="utf-8")
    if got.returncode != 0:
        raise LiveError(f"the Python client's vector generator failed:\n{got.stderr[-1500:]}")
    return got.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rocketlb_core.vectorgen.python_client",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "vectors" / "grpc")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--cases", type=int_option(1, INT32_MAX), default=CASES)
    args = ap.parse_args(argv)
    text = generate(min(args.cases, CASES))
    return 0 if write_or_check(args.out / NAME, text, check=args.check) else 1


if __name__ == "__main__":
    raise SystemExit(main())
