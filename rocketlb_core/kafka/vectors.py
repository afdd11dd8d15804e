"""Conformance vectors from Kafka's own released classes (issue 16).

``python -m rocketlb_core.kafka.vectors [--out tests/vectors/kafka]`` resolves ``kafka-clients``
through Maven Central (cached in ``.cache/kafka/<version>``, ignored by git, or under
``$ROCKETLB_LIVE_CACHE``), compiles ``java/KafkaVectors.java`` against it, and runs it: seeded
random consumer groups (1 to 8 topics of 0 to 100 partitions, 1 to 40 members, equal and unequal
subscriptions, static members, non-ASCII names) handed to the real assignor, written as
gzip-compressed JSONL, one case a line::

    {"id": "range-000017", "assignor": "range",
     "source": {"artifact": "org.apache.kafka:kafka-clients", "version": "4.3.1",
                "identical_on": ["3.9.1"], "seed": 20261124, "jvm": 17},
     # partitions 0: no metadata
     "topics": [[topic, partitions], ...],
     # each partition's replicas' racks
     "racks": {topic: [[rack | null, ...], ...]},
     "members": [{"id": ..., "instance": null | group.instance.id,
                  "rack": null | client.rack, "topics": [...]}, ...],
     # runs, in Kafka's order
     "expected": {member id: [[topic, [partition, ...]], ...]}}

``members`` are in the order they went into the group's ``HashMap``. ``identical_on``: the
other releases that printed the same bytes for the same seed; ``seed``: the seed of the
generator's ``java.util.Random`` (``VectorFile.seed``), which draws the file's cases one after
the other, so the same command prints the same bytes. Every case of a family carries every field
its assignor reads, absent values written out (issue 33): the client's assignor cases their
``Cluster``'s ``racks`` (outside the racks family one replica a partition, on a broker without a
rack: ``[null]``) and each member's ``instance`` and ``rack``; the sticky cases each member's
``owned`` and ``generation`` and ``generation_in_subscription`` (``true`` for the cooperative
assignor, whose subscription always carries it, and for the generations family); the server-side
cases each member's ``instance`` (``null``: dynamic) and ``vanished`` (``[]``: no topic left the
metadata). The partitioner's file holds scenarios instead (``kafka.partitioner``;
``PartitionerVectors.java`` says what each step records). ``--check`` regenerates the first
``--cases`` of each file and compares them with the files instead of writing.

``uniform`` and ``server-range``: KIP-848's server-side ``UniformAssignor`` and
``RangeAssignor`` (``UniformVectors.java``, against ``kafka-group-coordinator``) on groups with
one subscription, and (the ``unequal`` files) on groups whose members subscribe to different
topics, each member then listing its ``topics`` (the coordinator's heterogeneous builders,
``kafka.uniform_heterogeneous``): ``topics`` carry their topic ids, ``members`` their current
target assignment (``owned``), ``expected`` each member's partitions per topic, sorted (the
coordinator's are sets). The uniform assignor of 4.0 gives the extra partitions to the first
members in its order; 4.1 and later pass them on (``assignors.uniform_assign``). The server's
range assignor is the same from 4.0 to 4.3, and not sticky.

Where releases differ (``FILES``): ``RangeAssignor`` before KIP-881 (3.4 and earlier) orders a
member's partitions differently (``assignors.range_assign``); ``RoundRobinAssignor`` is the same
from 3.4 to 4.3. The sticky assignors' cases carry a history (a first rebalance, then members
leaving and joining, sometimes a stale claim); 3.4's sticky assignors give other results on
about a third of them (1,121 of 3,000 eager cases, 511 of them in the shares themselves): not
ported, so no 3.4 file.

``*-sticky-unequal-*``: the sticky assignors on groups whose members subscribe to different
topics (Kafka's general builder, ``kafka.sticky_general``), with histories where members change
their subscription and topics lose their metadata. On one of its first 7,441 cases (7440, kept
after the first 2,000 as ``extra``) Kafka's classes never return: the generator gives each case
20 s (a case takes milliseconds) and records ``{"error": {"type": "NoTermination"}}``.

``*-collide-*`` (issue 33): member ids and topic names built to collide in Java's ``HashMap``:
many with one ``String.hashCode`` (blocks of ``Aa`` and ``BB``), many of different hashes in one
bucket of every table up to 16 to 1,024 buckets, and ordinary names, in groups of 1 to ~800
members or topics, so that bins grow past eight keys, tables resize because of them, and bins
become red-black trees (``javamath.JavaHashMap``). Each file's first two cases are issue 33's
minimal ones: eight member ids of one hash on a topic of eight partitions, and one consumer on
``t1`` ... ``t13`` (for the sticky assignors: ``m0`` on ``t13``, ``m1`` on ``t6`` and ``t10``
owning ``t1-0`` ... ``t13-0`` in generation 1); the third is the second with two partitions a
topic (two consumers; ``m1`` owning ``t1-0``, ``t1-1``, ...), where ``computeIfAbsent`` on a key
already present grows the table. ``--only collide`` regenerates just those files.

The JVM (issue 33): from Java 19 on, ``new HashSet<>(collection)``, ``new HashMap<>(map)`` and
``putAll`` size their table by ``HashMap.calculateHashMapCapacity``, so the coordinator's
``UniformAssignor`` iterates its copied sets of topic ids (and of a member's partitions) in
another order on Java 17 than on Java 21 or 25 for some groups. Each ``VectorFile`` names the
major Java release it is made on (``jvm``; files on another than 17 are named ``-java<N>``); every
file records it in every case's ``source.jvm`` (the client's files too, made on Java 17), which
the conformance check hands to the server-side ports. ``--java PATH`` (repeatable) gives the
``java`` executables to use; each file runs on the one of its release, else one under
``$JAVA_HOME``, ``PATH`` or ``/usr/lib/jvm``; ``--jvm N`` keeps only the files made on Java N.
The ``uniform-jvm`` family holds groups built to meet the sizes where the two differ (12, 24 or
48 topic ids; case 0 issue 33's minimal case).

``*-sticky-generations``: the sticky assignors' cases with subscriptions built as the
``ConsumerCoordinator`` builds them, the generation id in the subscription for the eager
assignor too (``"generation_in_subscription": true``, ``assignors.StickyMember``), members of
generations 1 to 3 and a stale claim wherever one can be made: where two members claim one
partition, the higher generation keeps it, the other claimant's generation read from its
subscription.

``*-racks``: the client's range and sticky assignors with racks (KIP-881, issue 33): brokers
in racks ``r0`` ... (some without one), each partition's replicas on 1 to 3 of them (in one case
in six on all of them, where Kafka does not use racks), members with a ``client.rack`` in their
subscription (``"rack"``: mostly a broker's rack, sometimes ``null``, ``""`` or one no broker is
in); the case's ``"racks"`` gives each topic's partitions' replicas' racks (``null``: a broker
without a rack). The sticky cases mix equal and different subscriptions (both builders). No 3.4
file (racks came in 3.5); the server-side assignors of kafka-group-coordinator 4.3.1 read no
racks (``UniformAssignor`` and ``RangeAssignor`` never call ``rackId`` or
``racksForPartition``), so there is no server-side family.

``*-vanish``: the server-side assignors after topics left the metadata (issue 33): the case's
``topics`` are those the metadata still has, ``vanished`` the others by name and id
(``[[name, [msb, lsb]], ...]``), which members' ``owned`` may still name (the coordinator keeps
them in the target assignment, keyed by id; ``uniform_assign(vanished=...)``); the coordinator
resolves subscriptions through the metadata, so they leave every subscription, except in one case
in ten where a member still subscribes to one (Kafka throws ``PartitionAssignorException``).

``*-empty``: the server-side assignors when every member, holding partitions from a first
rebalance or not, now subscribes to nothing (issue 48): Kafka answers a ``GroupAssignment``
without members (``{}``), not every member with nothing; the conformance compares exactly, so a
member absent from ``expected`` must be absent from the port's answer and one there with ``[]``
must be there.

``partitioner-metadata``: the partitioner's scenarios with metadata that changes (issue 33):
``{"op": "metadata", "available": [...]}`` steps hand it a new ``Cluster``, whose length is the
topic's new partition count (it grows) and whose entries say which partitions have a leader;
later steps use it.

``server-range-static``: the server's range assignor with static members (issue 33): three in
four members of the second rebalance carry a ``group.instance.id`` (each member's ``instance``,
``null`` for a dynamic one), which the assignor orders first, by instance id
(``assignors.server_range_assign``); half the groups have one subscription, half several.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rocketlb_core.atomic import MARKER
from rocketlb_core.live.jars import ENV_CACHE, LiveError, class_path, find_tool, java, resolve_maven
from rocketlb_core.numbers import INT32_MAX, int_option
from rocketlb_core.vectorgen import write_or_check

JAVA_ROOT = Path(__file__).with_name("java")
JAVA_SOURCES = {
    "kafka-clients": (JAVA_ROOT / "KafkaVectors.java",
                      JAVA_ROOT / "org/apache/kafka/clients/producer/internals/"
                                  "PartitionerVectors.java"),
    "kafka-group-coordinator": (JAVA_ROOT / "UniformVectors.java",),
}
PARTITIONER_MAIN = "org.apache.kafka.clients.producer.internals.PartitionerVectors"
SEED = 20261124


@dataclass(frozen=True)
class VectorFile:
    assignor: str
    version: str                        # the release whose output the file holds
    also: tuple[str, ...]               # releases that must print the same bytes
    cases: int
    family: str = ""                    # "unequal": the sticky assignors' general builder;
                                        # "collide": names built to collide in Java's HashMaps
    extra: tuple[int, ...] = ()         # later cases of the same run, kept after the first ones
    jvm: int = 17                       # the major Java release the generator runs on
    seed: int = SEED                    # the generator's java.util.Random seed (source.seed)

    @property
    def name(self) -> str:
        family = f"-{self.family}" if self.family else ""
        on = f"-java{self.jvm}" if self.jvm != 17 else ""
        return f"kafka-{self.assignor}{family}-{self.version}{on}.jsonl.gz"

    @property
    def artifact(self) -> str:
        """KIP-848's server-side assignors live in the group coordinator, the rest in the
        client."""
        return ("kafka-group-coordinator" if self.assignor in ("uniform", "server-range")
                else "kafka-clients")


FILES = (VectorFile("range", "4.3.1", ("3.9.1",), 3500),
         VectorFile("range", "3.4.0", (), 3500),
         VectorFile("roundrobin", "4.3.1", ("3.9.1", "3.4.0"), 3500),
         VectorFile("sticky", "4.3.1", ("3.9.1",), 2000),
         VectorFile("cooperative-sticky", "4.3.1", ("3.9.1",), 2000),
         VectorFile("sticky", "4.3.1", ("3.9.1",), 2000, "unequal", (7440,)),
         VectorFile("cooperative-sticky", "4.3.1", ("3.9.1",), 2000, "unequal", (7440,)),
         VectorFile("partitioner", "4.3.1", ("3.9.1", "3.4.0"), 450),
         VectorFile("partitioner", "4.3.1", ("3.9.1", "3.4.0"), 600, "metadata"),
         VectorFile("uniform", "4.3.1", ("4.1.0",), 2000),
         VectorFile("uniform", "4.0.0", (), 2000),
         VectorFile("server-range", "4.3.1", ("4.0.0",), 1500),
         VectorFile("uniform", "4.3.1", ("4.1.0",), 2000, "unequal"),
         VectorFile("server-range", "4.3.1", ("4.0.0",), 1500, "unequal"),
         VectorFile("uniform", "4.3.1", ("4.1.0",), 2000, jvm=25),
         VectorFile("uniform", "4.0.0", (), 2000, jvm=25),
         VectorFile("server-range", "4.3.1", ("4.0.0",), 1500, jvm=25),
         VectorFile("uniform", "4.3.1", ("4.1.0",), 2000, "unequal", jvm=25),
         VectorFile("server-range", "4.3.1", ("4.0.0",), 1500, "unequal", jvm=25),
         VectorFile("uniform", "4.3.1", ("4.1.0",), 200, "jvm"),
         VectorFile("uniform", "4.0.0", (), 200, "jvm"),
         VectorFile("uniform", "4.3.1", ("4.1.0",), 200, "jvm", jvm=25),
         VectorFile("uniform", "4.0.0", (), 200, "jvm", jvm=25),
         VectorFile("sticky", "4.3.1", ("3.9.1",), 1000, "generations"),
         VectorFile("cooperative-sticky", "4.3.1", ("3.9.1",), 1000, "generations"),
         VectorFile("range", "4.3.1", ("3.9.1",), 1000, "racks"),
         VectorFile("sticky", "4.3.1", ("3.9.1",), 1000, "racks"),
         VectorFile("cooperative-sticky", "4.3.1", ("3.9.1",), 1000, "racks"),
         VectorFile("uniform", "4.3.1", ("4.1.0",), 1000, "vanish"),
         VectorFile("uniform", "4.3.1", ("4.1.0",), 1000, "vanish", jvm=25),
         VectorFile("server-range", "4.3.1", ("4.0.0",), 500, "vanish"),
         VectorFile("server-range", "4.3.1", ("4.0.0",), 500, "vanish", jvm=25),
         VectorFile("server-range", "4.3.1", ("4.0.0",), 500, "static"),
         VectorFile("server-range", "4.3.1", ("4.0.0",), 500, "static", jvm=25),
         VectorFile("uniform", "4.3.1", ("4.1.0",), 100, "empty"),
         VectorFile("uniform", "4.0.0", (), 100, "empty"),
         VectorFile("server-range", "4.3.1", ("4.0.0",), 100, "empty"),
         VectorFile("range", "4.3.1", ("3.9.1",), 300, "collide"),
         VectorFile("range", "3.4.0", (), 300, "collide"),
         VectorFile("roundrobin", "4.3.1", ("3.9.1", "3.4.0"), 150, "collide"),
         VectorFile("sticky", "4.3.1", ("3.9.1",), 300, "collide"),
         VectorFile("cooperative-sticky", "4.3.1", ("3.9.1",), 300, "collide"))
"""``partitioner``: ``BuiltInPartitioner`` and ``partitionForKey`` (``PartitionerVectors.java``),
one scenario a line, each a sequence of steps; the others are assignors, one group a line."""


def java_major(executable: str) -> int:
    """The major release of a ``java`` executable (``java -version``: "17.0.15" -> 17, "1.8.0"
    -> 8)."""
    run = subprocess.run([executable, "-version"], capture_output=True, text=True, timeout=60,
                         check=False)
    found = re.search(r'version "(\d+)(?:\.(\d+))?', run.stderr + run.stdout)
    if not found:
        raise LiveError(f"{executable} -version printed no version")
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def find_javas(given: list[str] | None = None) -> dict[int, str]:
    """The ``java`` executables at hand by major release: those ``given`` (``--java``), the one
    on ``$JAVA_HOME``/``PATH``, then any under ``/usr/lib/jvm`` (the first found for a release
    wins)."""
    out: dict[int, str] = {}
    candidates = list(given or [])
    with contextlib.suppress(LiveError):
        candidates.append(java())
    candidates += sorted(glob.glob("/usr/lib/jvm/*/bin/java"))
    for c in candidates:
        if not os.path.isfile(c):
            continue
        try:
            out.setdefault(java_major(c), c)
        except (LiveError, OSError, subprocess.SubprocessError):
            continue
    return out


def cache_dir(artifact: str, version: str) -> Path:
    """``.cache/kafka/<artifact>-<version>`` in the checkout, or the same under
    ``$ROCKETLB_LIVE_CACHE/kafka``."""
    env = os.environ.get(ENV_CACHE)
    root = Path(env) / "kafka" if env else Path(__file__).resolve().parents[2] / ".cache" / "kafka"
    return root / f"{artifact}-{version}"


def jars(artifact: str, version: str) -> list[Path]:
    """``org.apache.kafka:<artifact>:<version>`` and its runtime dependencies, resolved once."""
    folder = cache_dir(artifact, version)
    if (folder / MARKER).is_file() and any(folder.glob("*.jar")):
        return sorted(folder.glob("*.jar"))
    return resolve_maven([f"org.apache.kafka:{artifact}:{version}"], folder,
                         f"{artifact} {version}")


def generate(assignor: str, version: str, cases: int, label: str, work: Path,
             family: str = "", java_exe: str | None = None, seed: int = SEED) -> bytes:
    """The generator's output for ``cases`` cases on ``version`` (``label``: the version it
    writes into ``source``, so outputs of two releases compare byte for byte; ``family``: a
    named family of cases, ``unequal`` for the sticky assignors' general builder; ``seed``: the
    seed of the generator's one ``java.util.Random``, which draws every case in turn)."""
    artifact = VectorFile(assignor, version, (), 0).artifact
    cp = class_path(jars(artifact, version))
    out = work / f"{artifact}-{version}"
    if not out.is_dir():
        out.mkdir(parents=True)
        javac = find_tool("javac", "install a JDK (17), or set JAVA_HOME")
        built = subprocess.run([javac, "-d", str(out), "-cp", cp,
                                *map(str, JAVA_SOURCES[artifact])],
                               capture_output=True, text=True, timeout=600, check=False)
        if built.returncode != 0:
            raise LiveError(f"javac against {artifact} {version} failed:\n"
                            f"{built.stderr[-1500:]}")
    main, tail = {"partitioner": ([PARTITIONER_MAIN], []),
                  "uniform": (["UniformVectors"], ["uniform"]),
                  "server-range": (["UniformVectors"], ["range"])
                  }.get(assignor, (["KafkaVectors", assignor], []))
    run = subprocess.run([java_exe or java(), "-cp", f"{out}{os.pathsep}{cp}", *main, str(seed),
                          str(cases), label, *tail, *([family] if family else [])],
                         capture_output=True, timeout=1800,
                         check=False)
    if run.returncode != 0:
        raise LiveError(f"the {assignor} generator on {artifact} {version} failed "
                        f"(exit {run.returncode}): {run.stderr.decode(errors='replace')[-800:]}")
    return run.stdout


def file_text(spec: VectorFile, cases: int, work: Path, java_exe: str | None = None) -> str:
    """The JSONL text of ``spec`` (its first ``cases``, then its ``extra`` cases when all are
    asked for), ``identical_on`` checked by running every release in ``spec.also``, each case's
    ``source.seed`` the seed it was drawn from (``spec.seed``) and ``source.jvm`` the major
    release of ``java_exe`` (which must be ``spec.jvm``)."""
    exe = java_exe or java()
    if java_major(exe) != spec.jvm:
        raise LiveError(f"{spec.name} is made on Java {spec.jvm}, not by {exe}")
    extra = [i for i in spec.extra if i >= cases] if cases >= spec.cases else []
    upto = max([cases, *(i + 1 for i in extra)])
    primary = generate(spec.assignor, spec.version, upto, spec.version, work, spec.family, exe,
                       spec.seed)
    for other in spec.also:
        if generate(spec.assignor, other, upto, spec.version, work, spec.family,
                    exe, spec.seed) != primary:
            raise LiveError(f"{spec.assignor}: kafka-clients {other} no longer prints what "
                            f"{spec.version} prints: update FILES")
    printed = primary.decode("utf-8").splitlines()
    lines = []
    for line in printed[:cases] + [printed[i] for i in extra]:
        obj = json.loads(line)
        obj["source"]["identical_on"] = list(spec.also)
        obj["source"]["seed"] = spec.seed
        obj["source"]["jvm"] = spec.jvm
        lines.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rocketlb_core.kafka.vectors",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("tests/vectors/kafka"))
    ap.add_argument("--check", action="store_true",
                    help="compare the first --cases of each file with a fresh run; write nothing")
    ap.add_argument("--cases", type=int_option(1, INT32_MAX), default=None)
    ap.add_argument("--only", default=None, metavar="TEXT",
                    help="only the files whose name contains TEXT")
    ap.add_argument("--java", action="append", default=None, metavar="PATH",
                    help="a java executable to run the generators with (repeatable); each file "
                         "runs on the one of its release (VectorFile.jvm), found among these, "
                         "$JAVA_HOME, PATH and /usr/lib/jvm/*/bin/java")
    ap.add_argument("--jvm", type=int_option(8, 99), default=None, metavar="MAJOR",
                    help="only the files made on this Java release")
    args = ap.parse_args(argv)
    bad = 0
    javas = find_javas(args.java)
    with tempfile.TemporaryDirectory(prefix="rocketlb-kafka-") as tmp:
        for spec in FILES:
            if args.only is not None and args.only not in spec.name:
                continue
            if args.jvm is not None and spec.jvm != args.jvm:
                continue
            if spec.jvm not in javas:
                print(f"skipped  {args.out / spec.name}: no Java {spec.jvm} found "
                      "(--java PATH)", file=sys.stderr)
                continue
            cases = args.cases or spec.cases
            if args.check:
                cases = min(cases, spec.cases)          # a file shorter than --cases: all of it
            text = file_text(spec, cases, Path(tmp), javas[spec.jvm])
            bad += not write_or_check(args.out / spec.name, text, check=args.check)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
