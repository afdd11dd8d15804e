"""Vectors of the gRPC client's balancing from ``rocketmq-client-java``'s own classes (issue 34,
item 2).

``python -m rocketlb_core.vectorgen.grpc [--out tests/vectors/grpc]`` resolves
``org.apache.rocketmq:rocketmq-client-java:5.0.8`` from Maven Central (one shaded jar), compiles
``java/org/apache/rocketmq/client/java/impl/producer/GrpcVectors.java`` against it (in the
client's package, to reach package-private members) and runs it on Java 17, one file a family,
gzip-compressed JSONL, one case a line::

    {"id": "grpc-publishing-00017", "grpc": "publishing",
     "source": {"artifact": "org.apache.rocketmq:rocketmq-client-java", "version": "5.0.8",
                "jvm": 17, "java": "OpenJDK 64-Bit Server VM 17.0.15+6-..."},
     "queues": [[topic, broker, brokerId, "host:port", queueId, permission], ...],
     "index_start": int32, "steps": [...]}

* ``siphash`` (``group``, ``hash``, ``sizes``, ``index``): Guava's ``Hashing.sipHash24()``
  (shaded in the jar) of a message group's UTF-8 bytes, ``asLong()``, and ``LongMath.mod`` by
  each size;
* ``publishing``: a real ``PublishingLoadBalancer`` (its private constructor given the counter's
  start): steps ``take`` (``excluded`` endpoints, ``count``; ``expect``: the candidates as
  ``[broker, queueId]``), ``group`` (``takeMessageQueueByMessageGroup``), ``update`` (a new
  route; ``expect``: ``null``, or the error when it has no writable master queue); every step
  records the counter after it (``stored``);
* ``subscription``: a real ``SubscriptionLoadBalancer``: ``take`` and ``update`` likewise;
* ``send``: a real ``ProducerImpl`` (``maxAttempts`` 1 to 5) whose client manager answers each
  attempt as scripted (``outcomes``: ``ok``, ``fail``: an ``IOException``, ``throttled``:
  ``TooManyRequestsException``); a send is the candidates ``ProducerImpl.send`` takes (its private
  ``takeMessageQueues``, or ``takeMessageQueueByMessageGroup`` for a FIFO message) handed to its
  private ``send0`` retry loop, which the generator waits on; ``expect``: ``candidates``,
  ``attempts`` (the queue of each attempt, recorded where ``send0`` calls the client manager),
  ``ok``; ``heartbeat_ok`` runs ``ClientImpl.doHeartbeat`` answered OK (the endpoints rejoin);
  every step records the ``isolated`` endpoints after it and the counter.

``--check`` regenerates the first ``--cases`` of each file and compares instead of writing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rocketlb_core.live.jars import LiveError, class_path
from rocketlb_core.numbers import INT32_MAX, int_option
from rocketlb_core.vectorgen import write_or_check
from rocketlb_core.vectorgen.remoting import JAVA_ROOT, REPO, jars, javas

VERSION = "5.0.8"
SEED = 20261125
MAIN = "org.apache.rocketmq.client.java.impl.producer.GrpcVectors"
SOURCE = JAVA_ROOT / "org/apache/rocketmq/client/java/impl/producer/GrpcVectors.java"


@dataclass(frozen=True)
class GrpcFile:
    family: str
    cases: int

    @property
    def name(self) -> str:
        return f"grpc-{self.family}-{VERSION}.jsonl.gz"


FILES = (GrpcFile("siphash", 1000), GrpcFile("publishing", 800),
         GrpcFile("subscription", 600), GrpcFile("send", 600))


def generate(family: str, cases: int, work: Path) -> str:
    """The generator's output for the first ``cases`` cases of ``family``."""
    run_java, _ = javas()
    cp = class_path(jars("rocketmq-client-java", VERSION))
    out = work / "classes"
    if not out.is_dir():
        out.mkdir(parents=True)
        javac = str(Path(run_java).with_name("javac"))
        built = subprocess.run([javac, "-encoding", "UTF-8", "-d", str(out), "-cp", cp,
                                str(SOURCE)], capture_output=True, text=True, timeout=600,
                               check=False)
        if built.returncode != 0:
            raise LiveError(f"javac against rocketmq-client-java {VERSION} failed:\n"
                            f"{built.stderr[-1500:]}")
    run = subprocess.run([run_java, "-Dfile.encoding=UTF-8", "-cp", f"{out}{os.pathsep}{cp}",
                          MAIN, family, str(SEED), str(cases), VERSION],
                         capture_output=True, timeout=3600, check=False)
    if run.returncode != 0:
        raise LiveError(f"GrpcVectors {family} failed (exit {run.returncode}): "
                        f"{run.stderr.decode(errors='replace')[-1500:]}")
    return run.stdout.decode("utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rocketlb_core.vectorgen.grpc",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "vectors" / "grpc")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--cases", type=int_option(1, INT32_MAX), default=None)
    ap.add_argument("--only", default=None, metavar="FAMILY")
    args = ap.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="rocketlb-grpc-") as tmp:
        for spec in FILES:
            if args.only is not None and args.only != spec.family:
                continue
            cases = min(args.cases or spec.cases, spec.cases)
            text = generate(spec.family, cases, Path(tmp))
            bad += not write_or_check(args.out / spec.name, text, check=args.check)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
