"""Output folders: written atomically, and never at the cost of anything rocketlb did not write.

Every command that writes a folder (``simulate --out/--record``, ``replay producer|consumer``,
``replay.layout``, ``replay.generate``) goes through ``atomic_folder``, the one place that
decides whether a folder may be (re)placed:

* everything is written into a temporary folder beside the target, which replaces the target
  only when all of it was written; a failure leaves the old target as it was and no temporary
  folder behind;
* the target may be replaced only when it is **absent**, **empty**, or a **previous output of
  rocketlb** holding nothing else: every output carries a marker file (``MARKER``) naming the
  command, the format version and every path it wrote, and a folder holding any other path (a
  file the user added, say) is not ours to delete. Anything else is refused with an
  ``OutputError`` that names the folder and how to proceed;
* ``force=True`` replaces a folder that is not ours, but never ``/``, the home folder, the
  current folder or one of its ancestors, an input or a folder holding an input;
* always refused: a file or a symbolic link where the folder should be, and a target inside an
  input folder (``--out`` inside the trace);
* two runs writing the same target at once: a lock file beside it (``.NAME.rocketlb-lock``, an
  ``flock``, so a crashed run never leaves a stale lock) lets one write; the other fails at once,
  naming the folder, and neither sees the other's files.

>>> import pathlib, tempfile
>>> out = pathlib.Path(tempfile.mkdtemp()) / "result"
>>> with atomic_folder(out, "example") as tmp:
...     _ = (tmp / "summary.json").write_text("{}")
>>> sorted(p.name for p in out.iterdir())
['.rocketlb-output.json', 'summary.json']
>>> (out / "notes.txt").write_text("mine")
4
>>> with atomic_folder(out, "example") as tmp:  # doctest: +ELLIPSIS
...     pass
Traceback (most recent call last):
...
rocketlb_core.atomic.OutputError: ... holds notes.txt, which rocketlb did not write...
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rocketlb_core.errors import InputError

MARKER = ".rocketlb-output.json"
MARKER_FORMAT = "rocketlb-output"
MARKER_VERSION = 1
LOCK_SUFFIX = ".rocketlb-lock"


class OutputError(InputError):
    """An output folder rocketlb may not write; the message names it and says what to do."""


def _absolute(path: Path | str) -> Path:
    """``path`` made absolute with its parents' symbolic links resolved, but not its own last
    component (so a link at the target itself is seen, and never followed)."""
    p = Path(path)
    if p.name in ("", ".", ".."):
        return p.resolve()
    return p.parent.resolve() / p.name


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def _entries(folder: Path) -> list[str]:
    """Every path under ``folder`` (files, links and folders), relative, '/'-separated."""
    out = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        rel = Path(root).relative_to(folder)
        out += [(rel / name).as_posix() for name in dirs + files]
    return sorted(out)


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker of a rocketlb output folder, or None when it has no valid one."""
    path = folder / MARKER
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not (isinstance(data, dict) and data.get("format") == MARKER_FORMAT
            and isinstance(data.get("version"), int) and isinstance(data.get("command"), str)
            and isinstance(data.get("paths"), list)
            and all(isinstance(p, str) for p in data["paths"])):
        return None
    return data


def _foreign(folder: Path) -> str | None:
    """Why ``folder`` (an existing folder) is not rocketlb's to replace, or None when it is
    empty or holds only what a previous rocketlb output wrote."""
    entries = _entries(folder)
    if not entries:
        return None
    marker = read_marker(folder)
    if marker is None:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        return (f"it is not empty ({shown}) and is not an output of rocketlb (no valid "
                f"{MARKER})")
    ours = set(marker["paths"]) | {MARKER}
    extra = [e for e in entries if e not in ours]
    if extra:
        shown = ", ".join(extra[:3]) + (", ..." if len(extra) > 3 else "")
        return (f"it is an earlier output of `{marker['command']}` but also holds {shown}, "
                f"which rocketlb did not write")
    return None


def _protected(target: Path, inputs: Sequence[Path]) -> str | None:
    """Why ``target`` may never be replaced, even with force (None when it may)."""
    if target == Path(target.anchor):
        return "it is the root folder"
    home = os.environ.get("HOME")
    if home and target == Path(home).resolve():
        return "it is the home folder"
    cwd = Path.cwd().resolve()
    if _inside(cwd, target):
        return ("it is the current folder" if cwd == target
                else "it holds the current folder")
    for src in inputs:
        if _inside(src, target):
            return f"it is or holds the input {src}"
    return None


def check_output(target: Path | str, command: str, *, inputs: Sequence[Path | str] = (),
                 force: bool = False) -> Path:
    """Raise ``OutputError`` unless ``atomic_folder`` may write ``target``; returns the target
    as an absolute path. Commands call it before long work, so a refusal costs nothing;
    ``atomic_folder`` checks again (under its lock) before it replaces anything."""
    path = _absolute(target)
    srcs = [Path(s).resolve() for s in inputs]
    hint = "choose another folder (--out), or a new one"
    if path.is_symlink():
        raise OutputError(f"{path}: refusing to write {command}'s output here: it is a "
                          f"symbolic link (to {os.readlink(path)}); {hint}")
    if path.exists() and not path.is_dir():
        raise OutputError(f"{path}: refusing to write {command}'s output here: it is a file, "
                          f"not a folder; {hint}")
    for src in srcs:
        if src.is_dir() and _inside(path, src) and path != src:
            raise OutputError(f"{path}: refusing to write {command}'s output inside the input "
                              f"folder {src}; {hint}")
    why = _protected(path, srcs)
    if why is not None:
        raise OutputError(f"{path}: refusing to replace this folder with {command}'s output: "
                          f"{why}. Nothing was changed; {hint}")
    if path.is_dir() and not force:
        why = _foreign(path)
        if why is not None:
            raise OutputError(
                f"{path}: refusing to replace this folder with {command}'s output: {why}. "
                f"Nothing was changed; {hint}, or pass --force to replace it and everything "
                f"in it")
    return path


@contextmanager
def _lock(target: Path) -> Iterator[None]:
    """Hold the lock file beside ``target`` for the block; fail at once if another run does."""
    import fcntl

    path = target.parent / f".{target.name}{LOCK_SUFFIX}"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise OutputError(
                f"{target}: another rocketlb run (pid {holder}) is writing this folder now "
                f"(lock file {path}); wait for it to finish, or choose another folder") from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)                 # the holder we waited on removed it: take a fresh one
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.unlink(path)              # while still holding it: no one can take a stale file
        os.close(fd)


def write_marker(folder: Path, command: str) -> None:
    """Write ``folder``'s marker: the command, the format version and every path in it."""
    paths = [p for p in _entries(folder) if p != MARKER]
    (folder / MARKER).write_text(json.dumps(
        {"format": MARKER_FORMAT, "version": MARKER_VERSION, "command": command,
         "paths": paths}, indent=1) + "\n", encoding="utf-8")


@contextmanager
def atomic_folder(target: Path | str, command: str, *, inputs: Sequence[Path | str] = (),
                  force: bool = False) -> Iterator[Path]:
    """Yield a temporary folder; on success it becomes ``target`` whole, with the marker of
    ``command``. Refuses (``OutputError``, nothing changed) a target it may not replace (see the
    module docstring); ``inputs`` are the folders and files the command reads."""
    path = check_output(target, command, inputs=inputs, force=force)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _lock(path):
        path = check_output(path, command, inputs=inputs, force=force)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
        old: Path | None = None
        try:
            yield tmp
            tmp.chmod(0o755)                     # mkdtemp makes it private
            write_marker(tmp, command)
            check_output(path, command, inputs=inputs, force=force)
            if path.exists():                    # aside first: a failed rename loses nothing
                old = Path(tempfile.mkdtemp(prefix=f".{path.name}-old-", dir=path.parent))
                os.replace(path, old / "previous")
            os.replace(tmp, path)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            if old is not None and not path.exists() and (old / "previous").exists():
                os.replace(old / "previous", path)
            raise
        finally:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
