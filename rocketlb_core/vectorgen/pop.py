"""The broker's ``allocate4Pop`` on the newest lines: ``allocation-pop.jsonl`` (made on 5.3.3)
replayed on ``rocketmq-broker`` 5.4.0 and 5.5.0's ``QueryAssignmentProcessor`` (issue 34).

``python -m rocketlb_core.vectorgen.pop [VERSION ...]`` fetches the broker jar alone (no
dependencies: ``allocate4Pop`` needs only the client's strategies and the common classes, taken
from ``rocketmq-client`` of the same release) into ``<cache>/vectors/rocketmq-broker-<v>-only``,
runs ``java/rocketlb/PopReplay.java`` (the processor made without its constructor: the method
reads no field) on every group and case, the ``rebalance_view`` ones included, and compares
with the file's expectations as ``rocketlb conformance`` does (an error: its type, and its
message unless a ``NullPointerException``). Exit 0 when every case agrees. Nothing is written:
the file holds for those releases as it is (``QueryAssignmentProcessor.java`` is byte-identical
in the 5.3.3 and 5.5.0 sources jars).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rocketlb_core.live.jars import LiveError, cache_root, class_path, find_tool
from rocketlb_core.vectorgen.remoting import JAVA_ROOT, REPO, jars, javas

POP_FILE = REPO / "tests" / "vectors" / "allocation-pop.jsonl.gz"


def broker_jar(version: str) -> Path:
    folder = cache_root() / "vectors" / f"rocketmq-broker-{version}-only"
    jar = folder / f"rocketmq-broker-{version}.jar"
    if jar.is_file():
        return jar
    folder.mkdir(parents=True, exist_ok=True)
    mvn = find_tool("mvn", "install Apache Maven")
    run = subprocess.run([mvn, "-B", "-q", "--strict-checksums",
                          "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy",
                          f"-Dartifact=org.apache.rocketmq:rocketmq-broker:{version}",
                          f"-DoutputDirectory={folder}"],
                         capture_output=True, text=True, timeout=1800, check=False)
    if run.returncode != 0 or not jar.is_file():
        raise LiveError(f"Maven could not fetch rocketmq-broker {version}: {run.stdout[-800:]}")
    return jar


def _same(got: Any, want: dict[str, Any]) -> bool:
    if "error" in want:
        if not isinstance(got, dict) or "error" not in got:
            return False
        if want["error"]["type"] == "NullPointerException":
            return bool(got["error"]["type"] == "NullPointerException")
        return bool(got["error"] == want["error"])
    return bool(got == want["result"])


def check(version: str, work: Path) -> tuple[int, list[str]]:
    """(cases compared, ids of those that differ) for ``version``."""
    run_java, _ = javas()
    cp = class_path([broker_jar(version), *jars("rocketmq-client", version)])
    out = work / version
    out.mkdir(parents=True, exist_ok=True)
    built = subprocess.run([str(Path(run_java).with_name("javac")), "-encoding", "UTF-8", "-d",
                            str(out), "-cp", cp, str(JAVA_ROOT / "rocketlb" / "PopReplay.java")],
                           capture_output=True, text=True, timeout=600, check=False)
    if built.returncode != 0:
        raise LiveError(f"javac PopReplay against {version} failed:\n{built.stderr[-1500:]}")
    groups = gzip.decompress(POP_FILE.read_bytes())
    run = subprocess.run([run_java, "-Dfile.encoding=UTF-8", "-cp", f"{out}{os.pathsep}{cp}",
                          "rocketlb.PopReplay"], input=groups, capture_output=True, timeout=1800,
                         check=False)
    if run.returncode != 0:
        raise LiveError(f"PopReplay on {version} failed: {run.stderr.decode()[-1500:]}")
    compared, wrong = 0, []
    answers = [json.loads(x) for x in run.stdout.decode("utf-8").splitlines()
               if x.startswith("{\"id\"")]          # the broker's logger may print too
    for g, a in zip((json.loads(x) for x in groups.decode("utf-8").splitlines() if x), answers,
                    strict=True):
        view = g.get("rebalance_view", {}).get("cases", [])
        for want, got in [*zip(g["cases"], a["cases"], strict=True),
                          *zip(view, a["view"], strict=True)]:
            compared += 1
            if not _same(got, want):
                wrong.append(f"{g['id']} {want.get('current_cid')!r}")
    return compared, wrong


def main(argv: list[str] | None = None) -> int:
    versions = (argv if argv is not None else sys.argv[1:]) or ["5.5.0"]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="rocketlb-pop-") as tmp:
        for v in versions:
            compared, wrong = check(v, Path(tmp))
            bad += bool(wrong)
            print(f"rocketmq-broker {v}: {compared} allocate4Pop cases, {len(wrong)} differ "
                  f"{wrong[:5]}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
