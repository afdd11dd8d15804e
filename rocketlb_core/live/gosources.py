"""Upstream's Go client: the module zips of ``github.com/apache/rocketmq-client-go/v2``, from the
Go module proxy, pinned by their go.sum hash.

``sources.py`` reads a Go module as it reads a Maven sources jar, under an artifact name of its
own (``MODULES``: ``rocketmq-client-go`` is the module ``github.com/apache/rocketmq-client-go/v2``).
Its versions are written without Go's leading ``v`` (``2.1.2`` is the module version
``v2.1.2``), in facts and in the lock file alike, so ``sources.version_key`` and
``sources.predecessor`` order them as they order Maven's.

* Where from: the Go module proxy, ``$GOPROXY``'s first ``http(s)`` entry, else
  ``https://proxy.golang.org`` (``proxy``); ``<proxy>/<module>/@v/v<version>.zip``, read with
  ``urllib`` (no ``go`` command needed).
* Where to: ``<cache>/sources/<artifact>-<version>.zip`` under ``jars.cache_root()``, written
  through a ``.part`` file beside it and renamed, so a zip is there whole or not at all.
* Pinned by: the go.sum hash of the zip (``hash_zip``: Go's ``dirhash.Hash1`` over the zip's
  files, ``h1:`` + base64 of a SHA-256), which the lock file holds for ``artifact:version``
  (``sources-lock.json``'s ``jars``, beside the jars' SHA-256) and which Go's own ``go.sum``
  lines carry, so a lock entry can be checked against any project's go.sum.
* Reading: a path relative to the module root (``producer/selector.go``); ``go_files`` is every
  ``.go`` file that is not a ``_test.go`` (a fact's ``file = "*"``).
* Which releases exist (``proxy_versions``): the proxy's ``@v/list``, pseudo-versions dropped,
  together with the versions already recorded or locked, each confirmed by its ``@v/<v>.info``:
  the list is not complete (for rocketmq-client-go it names only a pseudo-version, although the
  proxy serves v2.0.0 to v2.1.2).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from functools import lru_cache
from pathlib import Path

from rocketlb_core.live.jars import LiveError, cache_root

MODULES = {"rocketmq-client-go": "github.com/apache/rocketmq-client-go/v2"}
"""The Go artifacts: the name a fact and the lock use, and the module path it stands for."""
DEFAULT_PROXY = "https://proxy.golang.org"
MAX_ZIP = 500 << 20
"""The most bytes a module zip may have, packed or unpacked (Go's own limit, ``modzip``)."""
HASH = re.compile(r"h1:[A-Za-z0-9+/]{43}=")
"""A go.sum hash (``fullmatch``): ``h1:`` and the base64 of 32 bytes."""
TAGGED = re.compile(r"v\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+incompatible)?")
"""A tagged module version (``fullmatch``), a pseudo-version among them (``PSEUDO``)."""
PSEUDO = re.compile(r"v\d+\.(?:0\.0-|\d+\.\d+-(?:[^+]*\.)?0\.)\d{14}-[A-Za-z0-9]+"
                    r"(?:\+[0-9A-Za-z-]+)?")
_FAILED: dict[str, LiveError] = {}


class MissingFile(LiveError):
    """The file a claim names is not in that release's sources (jar or module zip)."""


def is_go(artifact: str) -> bool:
    return artifact in MODULES


def module_version(version: str) -> str:
    """Go's version of ``version`` (``2.1.2`` -> ``v2.1.2``); a version written with its ``v``
    is refused, so that facts and the lock spell a release one way.

    >>> module_version("2.1.2")
    'v2.1.2'
    """
    if not re.fullmatch(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?", version):
        raise LiveError(f"{version!r}: write a Go module's version without its 'v', as "
                        f"MAJOR.MINOR.PATCH (for example rocketmq-client-go:2.1.2)")
    return "v" + version


def proxy(goproxy: str | None = None) -> str:
    """The Go module proxy: the first ``http(s)`` entry of ``goproxy`` (default ``$GOPROXY``;
    entries are separated by ``,`` or ``|``), else ``https://proxy.golang.org``.

    >>> proxy("direct,https://goproxy.example/|off"), proxy("off"), proxy("")
    ('https://goproxy.example', 'https://proxy.golang.org', 'https://proxy.golang.org')
    """
    goproxy = os.environ.get("GOPROXY", "") if goproxy is None else goproxy
    for entry in re.split(r"[,|]", goproxy):
        entry = entry.strip()
        if entry.startswith(("https://", "http://")):
            return entry.rstrip("/")
    return DEFAULT_PROXY


def escape(path: str) -> str:
    """A module path as the proxy protocol writes it: each capital letter as ``!`` and its
    lower case.

    >>> escape("github.com/BurntSushi/toml")
    'github.com/!burnt!sushi/toml'
    """
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), path)


def _url(artifact: str, tail: str) -> str:
    return f"{proxy()}/{escape(MODULES[artifact])}/@v/{tail}"


def zip_url(artifact: str, version: str) -> str:
    return _url(artifact, f"{module_version(version)}.zip")


def prefix(artifact: str, version: str) -> str:
    """The folder every file of the module zip lies under: ``<module>@v<version>/``."""
    return f"{MODULES[artifact]}@{module_version(version)}/"


def zip_path(artifact: str, version: str) -> Path:
    return cache_root() / "sources" / f"{artifact}-{module_version(version)[1:]}.zip"


def _get(url: str, limit: int) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as r:  # the proxy's https URL
            data: bytes = r.read(limit + 1)
    except urllib.error.HTTPError as e:
        body = e.read(200).decode("utf-8", "replace").strip()
        raise LiveError(f"could not read {url}: HTTP {e.code} {body or e.reason} (a version "
                        f"the Go module proxy does not serve?)") from None
    except OSError as e:
        raise LiveError(f"could not read {url} (no network?): {e}") from None
    if len(data) > limit:
        raise LiveError(f"{url} is larger than {limit} bytes")
    return data


def fetch(artifact: str, version: str) -> Path:
    """The cached module zip of ``artifact:version``, downloaded from the proxy if it is not
    there yet (verifies nothing: ``sources.ensure`` does, against the lock)."""
    path = zip_path(artifact, version)
    if path.is_file():
        return path
    url = zip_url(artifact, version)
    if url in _FAILED:                      # one download per process for a zip that failed
        raise _FAILED[url]
    try:
        data = _get(url, MAX_ZIP)
    except LiveError as e:
        _FAILED[url] = e
        raise
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, part = tempfile.mkstemp(prefix=path.name + ".", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(part, 0o644)               # as a jar Maven writes (mkstemp's is 0600)
        os.replace(part, path)              # same folder: the zip appears whole
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise
    return path


def _raw_name(info: zipfile.ZipInfo) -> bytes:
    """The entry's name as the zip stores it (the bytes Go hashes): ``zipfile`` decoded it as
    UTF-8 when the entry says so, else as code page 437, both reversible."""
    return info.filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")


def hash_zip(path: Path, under: str | None = None) -> str:
    """The go.sum hash of the module zip ``path`` (Go's ``dirhash.HashZip`` with ``Hash1``):
    ``h1:`` + base64 of the SHA-256 of one line ``"<sha256 hex>  <name>\\n"`` per file, in the
    order of the names' bytes. With ``under``, every name must start with it (the module's
    ``<module>@v<version>/``). A zip that cannot be read, a name with a newline, a name twice or
    more than ``MAX_ZIP`` unpacked bytes: a ``LiveError`` naming the file."""
    st = path.stat()
    return _hash_zip(str(path), st.st_size, st.st_mtime_ns, under)


@lru_cache(maxsize=64)
def _hash_zip(path: str, size: int, mtime_ns: int, under: str | None) -> str:
    name = Path(path).name
    if size > MAX_ZIP:
        raise LiveError(f"{name}: larger than {MAX_ZIP} bytes, not a module zip")
    lines: list[bytes] = []
    total = 0
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            raw = [_raw_name(i) for i in infos]
            if len(set(raw)) != len(raw):
                raise LiveError(f"{name}: a file is in the zip twice")
            for info, entry in sorted(zip(infos, raw, strict=True), key=lambda p: p[1]):
                if b"\n" in entry:
                    raise LiveError(f"{name}: a file name holds a newline ({entry!r})")
                if under is not None and not entry.startswith(under.encode("utf-8")):
                    raise LiveError(f"{name}: {entry.decode('utf-8', 'replace')!r} is not under "
                                    f"{under} (not that module version's zip)")
                h = hashlib.sha256()
                with z.open(info) as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        total += len(block)
                        if total > MAX_ZIP:
                            raise LiveError(f"{name}: more than {MAX_ZIP} bytes unpacked")
                        h.update(block)
                lines.append(h.hexdigest().encode("ascii") + b"  " + entry + b"\n")
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
        raise LiveError(f"{name}: not a readable zip ({e})") from None
    digest = hashlib.sha256(b"".join(lines)).digest()
    return "h1:" + base64.b64encode(digest).decode("ascii")


def read(path: Path, artifact: str, version: str, file: str) -> str:
    """The text of ``file`` (relative to the module root) in the module zip ``path``."""
    member = prefix(artifact, version) + file.strip().lstrip("/")
    with zipfile.ZipFile(path) as z:
        try:
            data = z.read(member)
        except KeyError:
            raise MissingFile(f"{file} is not in {artifact} {version}'s module zip") from None
    return data.decode("utf-8")


def go_files(path: Path, artifact: str, version: str) -> tuple[tuple[str, str], ...]:
    """(path relative to the module root, text) of every ``.go`` file of the module zip
    ``path`` that is not a test (``_test.go``), in name order."""
    root = prefix(artifact, version)
    with zipfile.ZipFile(path) as z:
        return tuple((n[len(root):], z.read(n).decode("utf-8")) for n in sorted(z.namelist())
                     if n.startswith(root) and n.endswith(".go") and not n.endswith("_test.go"))


def proxy_versions(artifact: str, known: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The released versions of ``artifact`` the proxy serves, without their ``v``: those its
    ``@v/list`` names (pseudo-versions dropped) and each of ``known`` (the versions recorded or
    locked), confirmed by its ``@v/v<version>.info``; one the proxy no longer serves is a
    ``LiveError`` naming it (needs the network)."""
    listed = [v[1:] for v in _get(_url(artifact, "list"), 1 << 20).decode("utf-8").split()
              if TAGGED.fullmatch(v) and not PSEUDO.fullmatch(v)]
    for version in dict.fromkeys(known):
        if version in listed:
            continue
        url = _url(artifact, f"{module_version(version)}.info")
        data = _get(url, 1 << 16)
        try:
            info = json.loads(data)
        except ValueError:
            raise LiveError(f"{url} is not JSON") from None
        if not isinstance(info, dict) or info.get("Version") != module_version(version):
            raise LiveError(f"{url} does not describe {module_version(version)}: {info!r}")
        listed.append(version)
    if not listed:
        raise LiveError(f"the Go module proxy ({proxy()}) names no release of "
                        f"{MODULES[artifact]}: lock one first (--lock {artifact}:X.Y.Z)")
    return listed
