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

* Which releases exist: the lock file also records, per artifact, the versions Maven Central
  lists in its ``maven-metadata.xml``, in version order (``versions``; ``order_versions``). A
  fact "since X" must hold the release just before X (``predecessor``: the previous version of
  that artifact on Central, pre-releases such as ``5.0.0-ALPHA`` skipped) in its ``not_in``, and
  that release must be locked (``claims.since_problems``). The table is committed, so the check
  needs no network.

* Go modules: an artifact of ``gosources.MODULES`` (``rocketmq-client-go``) is a Go module
  instead, its versions written without Go's ``v``: its zip comes from the Go module proxy and
  is locked by its go.sum hash (``h1:...``, in the same ``jars`` map), its versions are what the
  proxy serves, and ``read``, ``java_files`` (for a Go module: its ``.go`` files but tests),
  ``fetch`` and ``ensure`` take it as they take a jar (``gosources.py``).

No network, no Maven: a ``LiveError`` that says so (the tests fail on it, they never skip).

``python -m rocketlb_core.live.sources`` fetches and verifies every locked jar;
``python -m rocketlb_core.live.sources --lock rocketmq-client:5.4.0 ...`` fetches new ones, adds
them to the lock file and records their artifacts' versions (``--lock rocketmq-client-go:2.1.2``:
a Go module, from the proxy);
``python -m rocketlb_core.live.sources --versions [ARTIFACT ...]`` records the versions on Central
(on the Go module proxy, for a Go module) of those artifacts (default: every artifact in the
lock) again.
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
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from functools import lru_cache
from pathlib import Path

from rocketlb_core.live import gosources
from rocketlb_core.live.gosources import MissingFile
from rocketlb_core.live.jars import LiveError, cache_root, find_tool

GROUP = "org.apache.rocketmq"
LOCK_FILE = Path(__file__).with_name("sources-lock.json")
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
SRC_MARK = "src/main/java/"
CENTRAL = "https://repo.maven.apache.org/maven2"
SHA256 = re.compile(r"[0-9a-f]{64}")
PRE_RELEASE = re.compile(r"(?i)[-.](?:alpha|beta|preview|milestone|m|rc|cr|snapshot)[-.]?\d*$")
_FAILED: dict[tuple[tuple[str, ...], bool], LiveError] = {}


def key(artifact: str, version: str) -> str:
    return f"{artifact}:{version}"


def split_key(text: str) -> tuple[str, str]:
    parts = text.strip().split(":")
    if len(parts) != 2 or not all(parts):
        raise LiveError(f"{text!r}: write a sources jar as ARTIFACT:VERSION "
                        f"(for example rocketmq-client:4.9.8)")
    return parts[0], parts[1]


def _read_lock(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    if not isinstance(data, dict):
        raise LiveError(f"{path}: not a lock file (a JSON object)")
    return data


def load_lock(path: Path = LOCK_FILE) -> dict[str, str]:
    """``{"artifact:version": digest}`` from the committed lock file: a jar's SHA-256 (64
    lowercase hex digits), a Go module's go.sum hash (``h1:`` and 44 base64 characters); an
    entry of another shape is a ``LiveError`` naming it."""
    jars = _read_lock(path).get("jars", {})
    if not isinstance(jars, dict):
        raise LiveError(f"{path}: 'jars' must map artifact:version to a SHA-256")
    lock: dict[str, str] = {}
    for k, v in jars.items():
        artifact, version = split_key(str(k))
        if gosources.is_go(artifact):
            gosources.module_version(version)
            if not isinstance(v, str) or not gosources.HASH.fullmatch(v):
                raise LiveError(f"{path}: {k} is a Go module, locked by its go.sum hash "
                                f"('h1:' and 44 base64 characters), not {v!r}")
        elif not isinstance(v, str) or not SHA256.fullmatch(v):
            raise LiveError(f"{path}: {k} must be locked by the SHA-256 of its sources jar (64 "
                            f"lowercase hex digits), not {v!r}")
        lock[str(k)] = v
    return lock


def load_versions(path: Path = LOCK_FILE) -> dict[str, tuple[str, ...]]:
    """``{artifact: versions}``: every version of each artifact on Maven Central when it was
    recorded (``--versions``), in version order."""
    table = _read_lock(path).get("versions", {})
    if not isinstance(table, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in table.values()):
        raise LiveError(f"{path}: 'versions' must map an artifact to its list of versions")
    return {str(a): tuple(order_versions(v)) for a, v in table.items()}


def save_lock(lock: dict[str, str], path: Path = LOCK_FILE, *,
              versions: dict[str, tuple[str, ...]] | None = None) -> None:
    """Write the lock file: ``lock``'s jars, and ``versions`` (the file's own when ``None``)."""
    versions = load_versions(path) if versions is None else versions
    comment = ("SHA-256 of each org.apache.rocketmq sources jar the book is checked against "
               "(rocketlb_core/live/sources.py), and the go.sum hash (h1:) of each Go module zip "
               "(rocketmq-client-go: github.com/apache/rocketmq-client-go/v2 from the Go module "
               "proxy, versions without their v; rocketlb_core/live/gosources.py); a changed jar "
               "or zip fails. 'versions': each artifact's versions on Maven Central "
               "(maven-metadata.xml) or on the Go module proxy, in version order, for the rule "
               "'since X: the release before X is in not_in and locked'.")
    jars = [f"    {json.dumps(k)}: {json.dumps(v)}"
            for k, v in sorted(lock.items(), key=lambda kv: _order(kv[0]))]
    table = [f"    {json.dumps(a)}: {json.dumps(order_versions(v))}"
             for a, v in sorted(versions.items())]
    text = ("{\n"
            f"  \"comment\": {json.dumps(comment)},\n"
            "  \"jars\": {\n" + ",\n".join(jars) + "\n  },\n"
            "  \"versions\": {\n" + ",\n".join(table) + "\n  }\n}\n")
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _order(k: str) -> tuple[str, tuple[tuple[int, ...], int, str]]:
    artifact, version = split_key(k)
    return artifact, version_key(version)


def is_pre_release(version: str) -> bool:
    """A version whose qualifier names a pre-release (alpha, beta, preview, milestone, rc,
    snapshot): never "the release before" anything.

    >>> [is_pre_release(v) for v in ["5.0.0-ALPHA", "5.0.0-PREVIEW", "4.1.0-incubating", "5.0.0"]]
    [True, True, False, False]
    """
    return PRE_RELEASE.search(version) is not None


def version_key(version: str) -> tuple[tuple[int, ...], int, str]:
    """A sort key ordering versions numerically: the numbers of the leading dotted part, then a
    pre-release before its release, then the rest of the qualifier.

    >>> order_versions(["5.10.0", "5.0.0", "5.0.0-PREVIEW", "4.9.8", "5.9.1", "4.1.0-incubating"])
    ['4.1.0-incubating', '4.9.8', '5.0.0-PREVIEW', '5.0.0', '5.9.1', '5.10.0']
    """
    m = re.match(r"\d+(?:\.\d+)*", version)
    numbers = tuple(int(p) for p in m.group(0).split(".")) if m else ()
    rest = version[m.end():] if m else version
    return numbers, 0 if is_pre_release(version) else 1, rest.lower()


def order_versions(versions: list[str] | tuple[str, ...]) -> list[str]:
    """``versions`` without repeats, in version order (``version_key``)."""
    return sorted(dict.fromkeys(versions), key=version_key)


def registry(artifact: str) -> str:
    """Where ``artifact``'s releases are listed: Maven Central, or for a Go module the Go
    module proxy."""
    return "the Go module proxy" if gosources.is_go(artifact) else "Maven Central"


def predecessor(artifact: str, version: str,
                versions: dict[str, tuple[str, ...]] | None = None) -> str | None:
    """The release of ``artifact`` on Maven Central just before ``version`` (pre-releases
    skipped), from the lock's ``versions``; ``None`` when ``version`` is the first. A
    ``LiveError`` when the artifact's versions are not recorded or ``version`` is not among them.

    >>> table = {"rocketmq-proxy": ("5.2.0", "5.3.3", "5.4.0", "5.5.0"),
    ...          "rocketmq-client": ("4.9.8", "5.0.0-ALPHA", "5.0.0", "5.0.0-PREVIEW", "5.1.0")}
    >>> [predecessor("rocketmq-proxy", v, table) for v in ["5.5.0", "5.3.3", "5.2.0"]]
    ['5.4.0', '5.2.0', None]
    >>> [predecessor("rocketmq-client", v, table) for v in ["5.0.0", "5.1.0"]]
    ['4.9.8', '5.0.0']
    """
    table = load_versions() if versions is None else versions
    if artifact not in table:
        raise LiveError(f"the versions of {artifact} on {registry(artifact)} are not recorded in "
                        f"{LOCK_FILE.name}: record them with `python -m rocketlb_core.live.sources "
                        f"--versions {artifact}`")
    known = order_versions(table[artifact])
    if version not in known:
        raise LiveError(f"{artifact} {version} is not among its versions on {registry(artifact)} "
                        f"recorded in {LOCK_FILE.name} (a typo, or record them again with "
                        f"`python -m rocketlb_core.live.sources --versions {artifact}`)")
    before = [v for v in known[:known.index(version)] if not is_pre_release(v)]
    return before[-1] if before else None


def central_versions(artifact: str) -> list[str]:
    """The versions of ``org.apache.rocketmq:artifact`` that Maven Central's
    ``maven-metadata.xml`` lists, in version order (needs the network)."""
    url = f"{CENTRAL}/{GROUP.replace('.', '/')}/{artifact}/maven-metadata.xml"
    try:
        with urllib.request.urlopen(url, timeout=60) as r:  # a fixed https URL
            text = r.read()
    except OSError as e:
        raise LiveError(f"could not read {url} (no network?): {e}") from None
    try:
        root = ET.fromstring(text)  # Maven Central's own metadata
    except ET.ParseError as e:
        raise LiveError(f"{url} is not XML: {e}") from None
    found = [v.text.strip() for v in root.iterfind("./versioning/versions/version")
             if v.text and v.text.strip()]
    if not found:
        raise LiveError(f"{url} lists no version")
    return order_versions(found)


def sources_dir() -> Path:
    return cache_root() / "sources"


def jar_path(artifact: str, version: str) -> Path:
    """Where the sources of ``artifact:version`` are cached: its sources jar, or for a Go module
    its module zip."""
    if gosources.is_go(artifact):
        return gosources.zip_path(artifact, version)
    return sources_dir() / f"{artifact}-{version}-sources.jar"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(keys: list[str], *, offline: bool = False) -> list[Path]:
    """Download the sources jars ``keys`` (``artifact:version``) that are not cached yet, in one
    Maven run (checksums enforced), into the cache, and the Go modules among them from the Go
    module proxy (``gosources.fetch``; ``offline``: none). Returns their paths; verifies
    nothing against the lock (``ensure`` does)."""
    for k in dict.fromkeys(keys):
        artifact, version = split_key(k)
        if gosources.is_go(artifact) and not jar_path(artifact, version).is_file():
            if offline:
                raise LiveError(f"{k} is not cached, and offline nothing is downloaded")
            gosources.fetch(artifact, version)
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


def digest(k: str, path: Path) -> str:
    """What the lock holds for ``k`` cached at ``path``: the go.sum hash of a Go module's zip
    (``gosources.hash_zip``), else the jar's SHA-256."""
    artifact, version = split_key(k)
    if gosources.is_go(artifact):
        return gosources.hash_zip(path, gosources.prefix(artifact, version))
    return sha256(path)


def _verify(k: str, path: Path, expected: str) -> None:
    if gosources.is_go(split_key(k)[0]):
        try:
            got = digest(k, path)
        except LiveError as e:
            raise LiveError(f"{k}: {e}. Delete it from {path.parent} to fetch it again.") from None
        if got != expected:
            raise LiveError(f"{path.name}: its go.sum hash {got} is not the one locked for {k} "
                            f"in {LOCK_FILE.name} ({expected}): the module zip changed. Delete "
                            f"it from {path.parent} to fetch it again; if upstream really "
                            f"republished it, re-lock it on purpose.")
        return
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
    """The text of ``path`` in the verified sources jar of ``artifact:version`` (for a Go
    module: ``path`` relative to the module root, in its verified zip). A file that is not there
    is a ``MissingFile``."""
    jar = ensure(artifact, version)
    if gosources.is_go(artifact):
        return gosources.read(jar, artifact, version, path)
    member = jar_member(path)
    with zipfile.ZipFile(jar) as z:
        try:
            data = z.read(member)
        except KeyError:
            raise MissingFile(f"{member} is not in {artifact} {version}'s sources jar") from None
    return data.decode("utf-8")


@lru_cache(maxsize=64)
def java_files(artifact: str, version: str) -> tuple[tuple[str, str], ...]:
    """(path, text) of every ``.java`` file in the verified sources jar of
    ``artifact:version``; for a Go module, of every ``.go`` file but its tests (``_test.go``),
    the path relative to the module root."""
    jar = ensure(artifact, version)
    if gosources.is_go(artifact):
        return gosources.go_files(jar, artifact, version)
    with zipfile.ZipFile(jar) as z:
        return tuple((n, z.read(n).decode("utf-8")) for n in sorted(z.namelist())
                     if n.endswith(".java"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rocketlb_core.live.sources",
        description="Fetch and verify upstream's sources jars (every one in the lock file), or "
                    "lock new ones.")
    parser.add_argument("--lock", nargs="+", metavar="ARTIFACT:VERSION",
                        help="fetch these, record their SHA-256 (a Go module: its go.sum hash) "
                             "in the lock file, and record their artifacts' versions on Maven "
                             "Central (a Go module: on the Go module proxy)")
    parser.add_argument("--versions", nargs="*", metavar="ARTIFACT",
                        help="record the versions on Maven Central (maven-metadata.xml), or on "
                             "the Go module proxy, of these artifacts (none named: every "
                             "artifact in the lock file)")
    args = parser.parse_args(argv)
    try:
        lock = load_lock()
        versions = load_versions()
        refresh: list[str] = []
        if args.lock:
            paths = fetch(args.lock)
            for k, p in zip(args.lock, paths, strict=True):
                artifact, _ = split_key(k)
                got = digest(k, p)
                if k in lock and lock[k] != got:
                    raise LiveError(f"{k} is locked with another digest ({lock[k]}); "
                                    f"remove its line first if that is on purpose")
                lock[k] = got
                refresh.append(artifact)
        if args.versions is not None:
            refresh += args.versions or [split_key(k)[0] for k in lock]
        for artifact in dict.fromkeys(refresh):
            if gosources.is_go(artifact):
                known = [*versions.get(artifact, ()),
                         *(split_key(k)[1] for k in lock if split_key(k)[0] == artifact)]
                versions[artifact] = tuple(order_versions(
                    gosources.proxy_versions(artifact, known)))
            else:
                versions[artifact] = tuple(central_versions(artifact))
        if args.lock or refresh:
            save_lock(lock, versions=versions)
        keys = sorted(lock, key=_order)
        ensure_all(keys, lock=lock)
    except LiveError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps({"jars": len(keys), "folder": str(sources_dir())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
