"""Upstream's released sources: the ``-sources.jar`` of RocketMQ modules, from Maven Central.

The book's claims about upstream (its Java excerpts, ``tests/test_book_excerpts.py``; its facts,
``book/facts.toml`` and ``tests/test_book_facts.py``) are checked against these jars, the
authority for what a release does.

* Which jars: the committed lock file ``sources-lock.json`` beside this module lists every
  ``artifact:version`` the book relies on (group ``org.apache.rocketmq``) with the SHA-256 of its
  sources jar. Maven verifies each download against Central's ``.sha1`` (``--strict-checksums``);
  the lock then makes a jar that changed since it was locked fail, by name.
* How: the same Maven path as ``jars.py``: one throw-away POM listing every missing jar as an
  ``artifactItem`` of ``dependency:copy`` (no transitive dependencies: only the sources jars), one
  ``mvn`` run for all of them.
* Where: ``<cache>/sources/<artifact>-<version>-sources.jar`` under ``jars.cache_root()``
  (``.cache/rocketmq`` in the checkout, or ``$ROCKETLB_LIVE_CACHE``), never committed.
* Reading: ``read(artifact, version, path)`` returns one file of a jar (``zipfile``); ``path`` is
  the path inside the jar (``org/apache/rocketmq/...``) or a repository path holding
  ``src/main/java/``.

No network, no Maven: a ``LiveError`` that says so (the tests fail on it, they never skip).

``python -m rocketlb_core.live.sources`` fetches and verifies every locked jar;
``python -m rocketlb_core.live.sources --lock rocketmq-client:5.4.0 ...`` fetches new ones and
adds them to the lock file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from functools import lru_cache
from pathlib import Path

from rocketlb_core.live.jars import LiveError, cache_root, find_tool

GROUP = "org.apache.rocketmq"
LOCK_FILE = Path(__file__).with_name("sources-lock.json")
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
SRC_MARK = "src/main/java/"
_FAILED: dict[tuple[tuple[str, ...], bool], LiveError] = {}


def key(artifact: str, version: str) -> str:
    return f"{artifact}:{version}"


def split_key(text: str) -> tuple[str, str]:
    parts = text.strip().split(":")
    if len(parts) != 2 or not all(parts):
        raise LiveError(f"{text!r}: write a sources jar as ARTIFACT:VERSION "
                        f"(for example rocketmq-client:4.9.8)")
    return parts[0], parts[1]


def load_lock(path: Path = LOCK_FILE) -> dict[str, str]:
    """``{"artifact:version": sha256}`` from the committed lock file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    jars = data.get("jars", {})
    if not isinstance(jars, dict):
        raise LiveError(f"{path}: 'jars' must map artifact:version to a SHA-256")
    return {str(k): str(v) for k, v in jars.items()}


def save_lock(lock: dict[str, str], path: Path = LOCK_FILE) -> None:
    data = {"comment": "SHA-256 of each org.apache.rocketmq sources jar the book is checked "
                       "against (rocketlb_core/live/sources.py); a changed jar fails.",
            "jars": dict(sorted(lock.items(), key=lambda kv: _order(kv[0])))}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _order(k: str) -> tuple[str, tuple[int, ...]]:
    artifact, version = split_key(k)
    return artifact, tuple(int(p) if p.isdigit() else -1 for p in version.split("."))


def sources_dir() -> Path:
    return cache_root() / "sources"


def jar_path(artifact: str, version: str) -> Path:
    return sources_dir() / f"{artifact}-{version}-sources.jar"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(keys: list[str], *, offline: bool = False) -> list[Path]:
    """Download the sources jars ``keys`` (``artifact:version``) that are not cached yet, in one
    Maven run (checksums enforced), into the cache. Returns their paths; verifies nothing
    against the lock (``ensure`` does)."""
    missing = [k for k in dict.fromkeys(keys) if not jar_path(*split_key(k)).is_file()]
    if missing:
        attempt = (tuple(sorted(missing)), offline)
        if attempt in _FAILED:  # one Maven run per process for a set that failed: same error
            raise _FAILED[attempt]
        try:
            _maven_copy(missing, offline=offline)
        except LiveError as e:
            _FAILED[attempt] = e
            raise
    return [jar_path(*split_key(k)) for k in keys]


def _maven_copy(keys: list[str], *, offline: bool) -> None:
    mvn = find_tool("mvn", "install Apache Maven (the project's machines have it) to fetch "
                           "upstream's sources jars from Maven Central")
    items = "\n".join(
        f"          <artifactItem><groupId>{GROUP}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version><classifier>sources</classifier><type>jar</type>"
        f"</artifactItem>"
        for a, v in (split_key(k) for k in keys))
    group, plugin, plugin_version = DEPENDENCY_PLUGIN.split(":")
    pom_text = ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
                "  <modelVersion>4.0.0</modelVersion>\n"
                "  <groupId>rocketlb</groupId><artifactId>sources</artifactId>"
                "<version>1</version>\n"
                "  <packaging>pom</packaging>\n"
                "  <build><plugins><plugin>\n"
                f"    <groupId>{group}</groupId><artifactId>{plugin}</artifactId>"
                f"<version>{plugin_version}</version>\n"
                "    <configuration>\n"
                f"      <artifactItems>\n{items}\n      </artifactItems>\n"
                "    </configuration>\n"
                "  </plugin></plugins></build>\n</project>\n")
    target = sources_dir()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rocketlb-sources-", dir=target) as work:
        pom = Path(work) / "pom.xml"
        pom.write_text(pom_text, encoding="utf-8")
        out = Path(work) / "out"
        cmd = [mvn, "-B", "-q", "-Dstyle.color=never", "--strict-checksums", "-f", str(pom),
               f"{DEPENDENCY_PLUGIN}:copy", f"-DoutputDirectory={out}",
               "-Dmdep.overWriteReleases=true"]
        if offline:
            cmd.insert(1, "-o")
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
        except subprocess.TimeoutExpired:
            raise LiveError(f"Maven took more than 900 s to fetch the sources jars "
                            f"{', '.join(keys)}: is Maven Central reachable?") from None
        if run.returncode != 0:
            lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).strip()
                     for ln in (run.stdout + run.stderr).splitlines()]
            errors = [ln for ln in lines if ln.startswith("[ERROR]") and len(ln) > 12
                      and "-e switch" not in ln and "-X switch" not in ln
                      and "[Help 1]" not in ln.split("->")[0] and "following articles" not in ln]
            tail = "\n".join(errors[:3] or lines[-8:])
            raise LiveError(f"Maven could not fetch the sources jars {', '.join(keys)} from "
                            f"Maven Central (exit {run.returncode}; no network, or a release "
                            f"that is not served?):\n{tail}")
        for k in keys:
            a, v = split_key(k)
            got = out / f"{a}-{v}-sources.jar"
            if not got.is_file():
                raise LiveError(f"Maven reported success but wrote no {got.name}")
            os.replace(got, jar_path(a, v))  # same file system: each jar appears whole


def ensure(artifact: str, version: str, *, lock: dict[str, str] | None = None) -> Path:
    """The cached sources jar of ``artifact:version``, fetched if needed and verified against the
    lock file (a jar the lock does not list, or whose SHA-256 differs, is an error)."""
    return ensure_all([key(artifact, version)], lock=lock)[0]


def ensure_all(keys: list[str], *, lock: dict[str, str] | None = None) -> list[Path]:
    lock = load_lock() if lock is None else lock
    unlocked = [k for k in keys if k not in lock]
    if unlocked:
        raise LiveError(f"sources jar(s) {', '.join(unlocked)} not in {LOCK_FILE.name}: add them "
                        f"with `python -m rocketlb_core.live.sources --lock "
                        f"{' '.join(unlocked)}`")
    paths = fetch(keys)
    for k, p in zip(keys, paths, strict=True):
        _verify(k, p, lock[k])
    return paths


@lru_cache(maxsize=256)
def _verified(path: str, size: int, mtime_ns: int, expected: str) -> bool:
    return sha256(Path(path)) == expected


def _verify(k: str, path: Path, expected: str) -> None:
    st = path.stat()
    if not _verified(str(path), st.st_size, st.st_mtime_ns, expected):
        raise LiveError(f"{path.name}: its SHA-256 {sha256(path)} is not the one locked for {k} "
                        f"in {LOCK_FILE.name} ({expected}): the jar changed. Delete it from "
                        f"{path.parent} to fetch it again; if upstream really republished it, "
                        f"re-lock it on purpose.")


def jar_member(path: str) -> str:
    """The path inside a sources jar of a file named by its jar path or its repository path."""
    path = path.strip().lstrip("/")
    if SRC_MARK in path:
        path = path.split(SRC_MARK, 1)[1]
    return path


@lru_cache(maxsize=512)
def read(artifact: str, version: str, path: str) -> str:
    """The text of ``path`` in the verified sources jar of ``artifact:version``."""
    jar = ensure(artifact, version)
    member = jar_member(path)
    with zipfile.ZipFile(jar) as z:
        try:
            data = z.read(member)
        except KeyError:
            raise LiveError(f"{member} is not in {artifact} {version}'s sources jar") from None
    return data.decode("utf-8")


@lru_cache(maxsize=64)
def java_files(artifact: str, version: str) -> tuple[tuple[str, str], ...]:
    """(path, text) of every ``.java`` file in the verified sources jar of
    ``artifact:version``."""
    jar = ensure(artifact, version)
    with zipfile.ZipFile(jar) as z:
        return tuple((n, z.read(n).decode("utf-8")) for n in sorted(z.namelist())
                     if n.endswith(".java"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rocketlb_core.live.sources",
        description="Fetch and verify upstream's sources jars (every one in the lock file), or "
                    "lock new ones.")
    parser.add_argument("--lock", nargs="+", metavar="ARTIFACT:VERSION",
                        help="fetch these and record their SHA-256 in the lock file")
    args = parser.parse_args(argv)
    try:
        lock = load_lock()
        if args.lock:
            paths = fetch(args.lock)
            for k, p in zip(args.lock, paths, strict=True):
                split_key(k)
                digest = sha256(p)
                if k in lock and lock[k] != digest:
                    raise LiveError(f"{k} is locked with another SHA-256 ({lock[k]}); "
                                    f"remove its line first if that is on purpose")
                lock[k] = digest
            save_lock(lock)
        keys = sorted(lock, key=_order)
        ensure_all(keys, lock=lock)
    except LiveError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps({"jars": len(keys), "folder": str(sources_dir())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
