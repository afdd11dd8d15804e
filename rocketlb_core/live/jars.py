"""RocketMQ's released jars, resolved through Maven Central and cached in the repository.

Three RocketMQ lines can run here (``LINES``):

* ``5.5``: name server, broker and clients 5.5.0, the newest release (issue 34);
* ``5``: name server, broker and clients 5.3.3;
* ``4``: clients 4.9.8, name server and broker **4.9.7**: Apache never published the 4.9.8 server
  modules (``rocketmq-broker``, ``rocketmq-namesrv``) to Maven Central (only ``rocketmq-client``
  and ``rocketmq-tools`` 4.9.8 are there), so the newest 4.x server that resolves is 4.9.7. The
  balancing this project models lives in the clients; the broker side of spec section 5 is the
  same in both.

Each line has two roles, resolved separately because Maven would otherwise mix versions on one
class path: ``server`` (name server and broker, with the admin tools) and ``client`` (the
Remoting client). ``resolve(line, role)`` writes a throw-away POM, runs ``mvn
dependency:copy-dependencies`` with checksums enforced, and moves the jars into
``<cache>/<line>/<role>/`` atomically (``rocketlb_core.atomic``). Nothing is committed; the cache
folder (``.cache/rocketmq`` in the checkout, or ``$ROCKETLB_LIVE_CACHE``) is ignored by git.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rocketlb_core.atomic import MARKER, atomic_folder
from rocketlb_core.errors import InputError

ENV_CACHE = "ROCKETLB_LIVE_CACHE"
ROLES = ("server", "client")


class LiveError(InputError):
    """Something the live cluster needs is missing or refused (Java, Maven, a port, a jar)."""


@dataclass(frozen=True)
class LiveLine:
    """One RocketMQ line as it can run here: the versions of its two roles and its main
    classes."""

    name: str
    server_version: str
    client_version: str
    namesrv_main: str = "org.apache.rocketmq.namesrv.NamesrvStartup"
    broker_main: str = "org.apache.rocketmq.broker.BrokerStartup"
    admin_main: str = "org.apache.rocketmq.tools.command.MQAdminStartup"

    def artifacts(self, role: str) -> tuple[tuple[str, str], ...]:
        """(artifactId, version) pairs of ``role`` (group ``org.apache.rocketmq``)."""
        if role == "server":
            v = self.server_version
            return (("rocketmq-namesrv", v), ("rocketmq-broker", v), ("rocketmq-tools", v))
        if role == "client":
            return (("rocketmq-client", self.client_version),)
        raise LiveError(f"unknown role {role!r} (one of {', '.join(ROLES)})")


LINES = {"4": LiveLine("4", server_version="4.9.7", client_version="4.9.8"),
         "5": LiveLine("5", server_version="5.3.3", client_version="5.3.3"),
         "5.5": LiveLine("5.5", server_version="5.5.0", client_version="5.5.0")}


def line(name: str) -> LiveLine:
    try:
        return LINES[str(name)]
    except KeyError:
        raise LiveError(f"unknown RocketMQ line {name!r}: choose one of "
                        f"{', '.join(sorted(LINES))}") from None


def cache_root() -> Path:
    """``$ROCKETLB_LIVE_CACHE``, else ``.cache/rocketmq`` at the top of this checkout."""
    env = os.environ.get(ENV_CACHE)
    return Path(env) if env else Path(__file__).resolve().parents[2] / ".cache" / "rocketmq"


def find_tool(name: str, hint: str) -> str:
    """The path of ``name`` on PATH (``java`` also under ``$JAVA_HOME/bin``), or a clear error."""
    if name == "java" and os.environ.get("JAVA_HOME"):
        candidate = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
        if candidate.is_file():
            return str(candidate)
    found = shutil.which(name)
    if not found:
        raise LiveError(f"{name} not found on PATH: {hint}")
    return found


def java() -> str:
    return find_tool("java", "install a JDK (17 is what the project's machines have), or set "
                             "JAVA_HOME")


def jar_dir(line_name: str, role: str) -> Path:
    return cache_root() / line(line_name).name / role


def cached(line_name: str, role: str) -> list[Path]:
    """The cached jars of ``role`` (empty when not resolved yet)."""
    folder = jar_dir(line_name, role)
    if not (folder / MARKER).is_file():
        return []
    return sorted(folder.glob("*.jar"))


def resolve(line_name: str, role: str, *, offline: bool = False) -> list[Path]:
    """The jars of ``role`` for ``line_name``, resolving them through Maven if not cached."""
    jars = cached(line_name, role)
    if jars:
        return jars
    spec = line(line_name)
    resolve_maven([f"org.apache.rocketmq:{a}:{v}" for a, v in spec.artifacts(role)],
                  jar_dir(line_name, role), f"live jars {spec.name} {role}", offline=offline)
    return cached(line_name, role)


def resolve_maven(coordinates: list[str], target: Path, label: str, *,
                  offline: bool = False) -> list[Path]:
    """Resolve ``group:artifact:version`` coordinates and their runtime dependencies through
    Maven (checksums enforced) into ``target``, written whole (``rocketlb_core.atomic``)."""
    mvn = find_tool("mvn", "install Apache Maven (the project's machines have it) to resolve "
                           "released jars from Maven Central")
    deps = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>"
        for g, a, v in (c.split(":") for c in coordinates))
    pom_text = ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
                "  <modelVersion>4.0.0</modelVersion>\n"
                "  <groupId>rocketlb</groupId><artifactId>jars</artifactId><version>1</version>\n"
                "  <packaging>pom</packaging>\n"
                f"  <dependencies>\n{deps}\n  </dependencies>\n</project>\n")
    with tempfile.TemporaryDirectory(prefix="rocketlb-mvn-") as work:
        pom = Path(work) / "pom.xml"
        pom.write_text(pom_text, encoding="utf-8")
        with atomic_folder(target, label) as tmp:
            cmd = [mvn, "-B", "-q", "--strict-checksums", "-f", str(pom),
                   "dependency:copy-dependencies", f"-DoutputDirectory={tmp}",
                   "-DincludeScope=runtime"]
            if offline:
                cmd.insert(1, "-o")
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
            if run.returncode != 0:
                tail = "\n".join((run.stdout + run.stderr).strip().splitlines()[-8:])
                raise LiveError(f"Maven could not resolve {', '.join(coordinates)} "
                                f"(exit {run.returncode}):\n{tail}")
            if not any(Path(tmp).glob("*.jar")):
                raise LiveError(f"Maven resolved no jar for {', '.join(coordinates)}")
    return sorted(target.glob("*.jar"))


def class_path(jars: list[Path]) -> str:
    return os.pathsep.join(str(j) for j in jars)


PYTHON_CLIENT_VERSION = "5.1.2"
"""rocketmq-python-client (apache/rocketmq-clients ``python/``, PyPI): the Python gRPC client the
live recordings drive (``live/py/grpc_produce.py``) and the vectors come from."""


GO_CLIENT_VERSION = "v2.1.2"
"""The Go client (``github.com/apache/rocketmq-client-go/v2``) the live Go driver and the Go
vectors are built on: pinned by ``go.mod`` and ``go.sum`` in ``live/go`` and ``vectorgen/go``."""


def go_build(source: Path, out: Path) -> Path:
    """``go build`` of the Go program in ``source`` (its ``go.mod`` and ``go.sum``: the modules
    from the Go module proxy, each checked against ``go.sum``; ``-mod=readonly``: nothing in
    ``source`` is written) to ``out``, through ``<out>.part``. Built once per process; a
    ``LiveError`` when the go command is missing or fails."""
    key = (str(source), str(out))
    if key in _GO_BUILT and out.is_file():
        return out
    go = find_tool("go", "install Go (the project's machines have it) to build the Go client's "
                         "programs")
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    env = dict(os.environ, GOFLAGS="-mod=readonly -modcacherw", CGO_ENABLED="0")
    try:
        got = subprocess.run([go, "build", "-trimpath", "-o", str(part), "."], cwd=source,
                             env=env, capture_output=True, text=True, timeout=900, check=False)
    except subprocess.TimeoutExpired:
        raise LiveError(f"the go command took more than 900 s to build {source}: is the Go "
                        f"module proxy reachable?") from None
    if got.returncode != 0:
        raise LiveError(f"the go command could not build {source} (no network for the module "
                        f"proxy, or a module whose hash is not go.sum's?):\n{got.stderr[-1500:]}")
    part.replace(out)
    _GO_BUILT.add(key)
    return out


_GO_BUILT: set[tuple[str, str]] = set()


def python_client(version: str = PYTHON_CLIENT_VERSION) -> Path:
    """The Python of a venv holding ``rocketmq-python-client==version`` from PyPI
    (``<cache>/vectors/rocketmq-python-client-<version>/``, made once, like the jars from Maven
    Central): the package itself never imports the client. ``LiveError`` when pip fails."""
    import subprocess
    import sys

    venv = cache_root() / "vectors" / f"rocketmq-python-client-{version}"
    python = venv / "bin" / "python"
    ready = venv / "installed"
    if not ready.is_file():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True,
                       timeout=300)
        got = subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                              "--disable-pip-version-check", f"rocketmq-python-client=={version}"],
                             capture_output=True, text=True, timeout=900, check=False)
        if got.returncode != 0:
            raise LiveError(f"pip could not install rocketmq-python-client=={version}:\n"
                            f"{got.stderr[-1500:]}")
        ready.write_text(version + "\n", encoding="utf-8")
    return python

