"""Producer vectors of the newest remoting lines, from their released jars (issue 34, item 1).

``python -m rocketlb_core.vectorgen.remoting [--out tests/vectors/rocketmq]`` writes
``producer-5.4.0.jsonl.gz`` and ``producer-5.5.0.jsonl.gz``: every scenario of the public
``producer-5.3.3.jsonl`` (``tests/vectors/producer-5.3.3.jsonl.gz``: 422 scenarios, 10,320
selections, the same steps, as ``producer-4.9.7.jsonl`` replays 4.9.8's) replayed on
``org.apache.rocketmq:rocketmq-client:<version>`` resolved from Maven Central, each expectation
(``select``, ``probe``, ``detect``, ``final_index_stored``) what that jar's classes answered.

How the real classes run (``java/rocketlb/ProducerReplay.java``): ``MQFaultStrategy`` through its
production constructor with a real ``ClientConfig``, ``TopicPublishInfo``, ``ThreadLocalIndex``
(its stored value set, and its ``Random`` replaced by one returning the scenario's
``reset_value``, through reflection) and ``LatencyFaultToleranceImpl`` as released, except that
the two classes of the fault table (``LatencyFaultToleranceImpl`` and its ``FaultItem``) are
rewritten by ``java/ClockRewrite.java`` (Java 24+'s ``java.lang.classfile``) so that each
``System.currentTimeMillis()`` calls ``rocketlb.VClock`` instead: the only change, and the
rewriter prints how many calls it replaced. The replay runs on Java 17.

Self-check: the generator first replays the scenarios on 5.3.3's jar and requires every
expectation of the public file (made upstream's way, from the tag's sources) back; then it writes
each release's file, its ``source`` naming the artifact, version, JVM and ``identical_on`` (the
other releases, 5.3.3 included, whose answers were the same). ``--check`` regenerates and
compares instead of writing.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import MARKER
from rocketlb_core.kafka.vectors import find_javas
from rocketlb_core.live.jars import LiveError, cache_root, class_path, find_tool, resolve_maven
from rocketlb_core.vectorgen import read_cases, write_or_check

JAVA_ROOT = Path(__file__).with_name("java")
REPO = Path(__file__).resolve().parents[2]
BASE = REPO / "tests" / "vectors" / "producer-5.3.3.jsonl.gz"
VERSIONS = ("5.4.0", "5.5.0")
CONTROL = "5.3.3"
ARTIFACT = "org.apache.rocketmq:rocketmq-client"
CLOCK_CLASSES = ("org/apache/rocketmq/client/latency/LatencyFaultToleranceImpl",
                 "org/apache/rocketmq/client/latency/LatencyFaultToleranceImpl$FaultItem")
RUN_JVM = 17
REWRITE_JVM = 25


def jars(artifact: str, version: str) -> list[Path]:
    """``org.apache.rocketmq:<artifact>:<version>`` and its runtime dependencies, resolved once
    into ``<cache>/vectors/<artifact>-<version>``."""
    folder = cache_root() / "vectors" / f"{artifact}-{version}"
    if (folder / MARKER).is_file() and any(folder.glob("*.jar")):
        return sorted(folder.glob("*.jar"))
    return resolve_maven([f"org.apache.rocketmq:{artifact}:{version}"], folder,
                         f"{artifact} {version}")


def javas() -> tuple[str, str]:
    """The Java 17 that runs the replay and the Java 24+ that rewrites the clock calls."""
    found = find_javas()
    if RUN_JVM not in found:
        raise LiveError("no Java 17 found (the replay runs on it)")
    rewrite = [found[v] for v in sorted(found) if v >= 24]
    if not rewrite:
        raise LiveError("no Java 24 or later found (ClockRewrite.java needs java.lang.classfile)")
    return found[RUN_JVM], rewrite[-1]


def build(artifact: str, version: str, main_sources: list[Path], work: Path,
          clock_classes: tuple[str, ...] = ()) -> str:
    """Compile ``main_sources`` against the release's jars, rewrite ``clock_classes`` of its
    main jar, and return the class path that runs them (rewritten classes first)."""
    run_java, rewrite_java = javas()
    deps = jars(artifact, version)
    cp = class_path(deps)
    out = work / f"{artifact}-{version}"
    classes, patched = out / "classes", out / "patched"
    classes.mkdir(parents=True, exist_ok=True)
    patched.mkdir(exist_ok=True)
    javac = str(Path(run_java).with_name("javac"))
    if not os.path.isfile(javac):
        javac = find_tool("javac", "install a JDK (17)")
    built = subprocess.run([javac, "-encoding", "UTF-8", "-d", str(classes), "-cp", cp,
                            *map(str, main_sources)],
                           capture_output=True, text=True, timeout=600, check=False)
    if built.returncode != 0:
        raise LiveError(f"javac against {artifact} {version} failed:\n{built.stderr[-1500:]}")
    if clock_classes:
        main_jar = [j for j in deps if j.name == f"{artifact}-{version}.jar"]
        if not main_jar:
            raise LiveError(f"{artifact}-{version}.jar not among the resolved jars")
        rw = subprocess.run([rewrite_java, str(JAVA_ROOT / "ClockRewrite.java"), str(main_jar[0]),
                             str(patched), "rocketlb/VClock", *clock_classes],
                            capture_output=True, text=True, timeout=600, check=False)
        if rw.returncode != 0:
            raise LiveError(f"ClockRewrite on {main_jar[0].name} failed:\n{rw.stderr[-1500:]}")
        counts = dict(line.split() for line in rw.stdout.splitlines())
        if counts.get(clock_classes[0], "0") == "0" or len(counts) != len(clock_classes):
            raise LiveError(f"ClockRewrite replaced no clock call in {clock_classes[0]}: {counts}")
    return os.pathsep.join([str(patched), str(classes), cp])


def base_records(path: Path = BASE) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def replay(version: str, records: list[dict[str, Any]], work: Path) -> list[dict[str, Any]]:
    """What ``rocketmq-client:<version>`` answers for every step of ``records`` (one result
    per scenario: ``outs`` per step, ``final_index_stored``)."""
    run_java, _ = javas()
    cp = build("rocketmq-client", version,
               [JAVA_ROOT / "rocketlb" / "VClock.java", JAVA_ROOT / "rocketlb" /
                "ProducerReplay.java"], work, CLOCK_CLASSES)
    stdin = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    run = subprocess.run([run_java, "-Dfile.encoding=UTF-8", "-cp", cp,
                          "rocketlb.ProducerReplay"], input=stdin.encode("utf-8"),
                         capture_output=True, timeout=1800, check=False)
    if run.returncode != 0:
        raise LiveError(f"ProducerReplay on {version} failed (exit {run.returncode}): "
                        f"{run.stderr.decode(errors='replace')[-1500:]}")
    out = [json.loads(line) for line in run.stdout.decode("utf-8").splitlines() if line]
    if [o["id"] for o in out] != [r["id"] for r in records]:
        raise LiveError(f"ProducerReplay on {version} answered for other scenarios")
    return out


def with_answers(record: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """``record`` with every expectation replaced by ``answer``'s (probe: the queue list as
    ``queue_list_unchanged`` or, when the jar rewrote it, ``queue_list``)."""
    rec = copy.deepcopy(record)
    original = rec["message_queues"]
    for step, got in zip(rec["steps"], answer["outs"], strict=True):
        op = step["op"]
        if op in ("select", "detect"):
            step["expect"] = got
        elif op == "probe":
            expect = {"available": got["available"], "reachable": got["reachable"],
                      "index_stored": got["index_stored"]}
            if got["queue_list"] == original:
                expect["queue_list_unchanged"] = True
            else:
                expect["queue_list"] = got["queue_list"]
            step["expect"] = expect
    rec["final_index_stored"] = answer["final_index_stored"]
    return rec


def _expectations(rec: dict[str, Any]) -> list[Any]:
    return [s.get("expect") for s in rec["steps"]] + [rec.get("final_index_stored")]


def file_records(work: Path) -> dict[str, list[dict[str, Any]]]:
    """Each release's records (``producer-<version>.jsonl``), after the 5.3.3 self-check."""
    base = base_records()
    control = [with_answers(r, a) for r, a in zip(base, replay(CONTROL, base, work),
                                                   strict=True)]
    wrong = [r["id"] for r, c in zip(base, control, strict=True)
             if _expectations(r) != _expectations(c)]
    if wrong:
        raise LiveError(f"the harness does not reproduce producer-5.3.3.jsonl on the 5.3.3 jar "
                        f"({len(wrong)} scenarios, first {wrong[0]})")
    answers = {CONTROL: control}
    for v in VERSIONS:
        answers[v] = [with_answers(r, a) for r, a in zip(base, replay(v, base, work),
                                                         strict=True)]
    java_version = subprocess.run([javas()[0], "-version"], capture_output=True, text=True,
                                  check=False).stderr.splitlines()[0]
    out: dict[str, list[dict[str, Any]]] = {}
    for v in VERSIONS:
        same = [o for o in (CONTROL, *VERSIONS) if o != v and all(
            _expectations(a) == _expectations(b) for a, b in zip(answers[v], answers[o],
                                                                 strict=True))]
        recs = []
        for rec in answers[v]:
            rec = copy.deepcopy(rec)
            rec["source"] = {
                "tag": f"rocketmq-all-{v}", "artifact": ARTIFACT, "version": v,
                "jvm": RUN_JVM, "java": java_version,
                "note": (f"the steps of producer-5.3.3.jsonl replayed on {ARTIFACT}:{v} from "
                         f"Maven Central (MQFaultStrategy, TopicPublishInfo, ThreadLocalIndex, "
                         f"LatencyFaultToleranceImpl as released; System.currentTimeMillis() "
                         f"of the fault table redirected to a virtual clock)"),
                "identical_on": same}
            recs.append(rec)
        out[v] = recs
    return out


def text_of(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for r in records)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rocketlb_core.vectorgen.remoting",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "vectors" / "rocketmq")
    ap.add_argument("--check", action="store_true",
                    help="regenerate and compare with the files; write nothing")
    args = ap.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="rocketlb-remoting-") as tmp:
        for v, recs in file_records(Path(tmp)).items():
            target = args.out / f"producer-{v}.jsonl.gz"
            text = text_of(recs)
            if args.check and len(read_cases(target)) != len(text.splitlines()):
                print(f"DIFFERS  {target} (not {len(text.splitlines())} scenarios)",
                      file=sys.stderr)
                bad += 1
                continue
            bad += not write_or_check(
                target, text, check=args.check,
                what=f", identical on {recs[0]['source']['identical_on']}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
