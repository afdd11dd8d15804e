"""Conformance vectors made here from upstream's released jars (issue 34), like ``kafka.vectors``.

* ``remoting``: the remoting producer's selection on the newest lines (``rocketmq-client`` 5.4.0
  and 5.5.0): the 5.3.3 scenarios replayed on each release's own ``MQFaultStrategy``
  (``java/rocketlb/ProducerReplay.java``), the fault table's wall clock redirected by
  ``java/ClockRewrite.java``; written to ``tests/vectors/rocketmq/``.
* ``grpc`` (issue 34, item 2): the gRPC client's balancing (``rocketmq-client-java`` 5.0.8's
  ``PublishingLoadBalancer``, ``SubscriptionLoadBalancer``, the ``ProducerImpl`` retry loop,
  Guava's SipHash-2-4) and the broker's ``allocate4Pop`` (``java/rocketlb/GrpcVectors.java``),
  written to ``tests/vectors/grpc/``.
* ``proxy`` (issue 34, item 2): the push consumer's assignment as the servers compute it, on
  rocketmq-proxy 5.3.3 and 5.5.0's class path: the Proxy's ``RouteActivity.queryAssignment``
  (``java/rocketlb/ProxyAssignmentVectors.java``) and the broker's ``QueryAssignmentProcessor``
  (``java/rocketlb/BrokerAssignmentVectors.java``), written to
  ``tests/vectors/grpc/{proxy,broker}-assignment-<version>.jsonl.gz``.
* ``python_client`` (issue 34, item 2): rocketmq-python-client 5.1.2's own ``QueueSelector``, run
  in a venv of its own from PyPI (``python/python_client_vectors.py``), written to
  ``tests/vectors/grpc/python-client-5.1.2.jsonl.gz``; ``grpc.python_client`` replays it.

Not core (they run Maven and Java); the ports they check are (``rocketlb_core.grpc``).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path


def read_cases(path: Path, limit: int | None = None) -> list[str]:
    """The first ``limit`` lines of a vector file (all when ``None``)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        out: list[str] = []
        for line in f:
            if limit is not None and len(out) >= limit:
                break
            out.append(line.rstrip("\n"))
    return out


def write_or_check(target: Path, text: str, *, check: bool, what: str = "") -> bool:
    """A vector file from its generated ``text``: with ``check``, compare ``text``'s lines with
    the file's first as many (a generation of fewer cases than the file holds checks its head)
    and write nothing; else write it gzip-compressed with no name and no time in the header (the
    same text, the same bytes), through ``<target>.part`` so a failed run leaves the old file
    whole. Says which on stderr (``what`` after the file's name); returns whether the file
    holds ``text`` (always, once written)."""
    lines = text.splitlines()
    if check:
        same = read_cases(target, len(lines)) == lines
        print(f"{'same' if same else 'DIFFERS'}  {target} ({len(lines)} cases{what})",
              file=sys.stderr)
        return same
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    with open(part, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                                filename="") as gz:
        gz.write(text.encode("utf-8"))
    part.replace(target)
    print(f"wrote {target}: {len(lines)} cases{what}", file=sys.stderr)
    return True
