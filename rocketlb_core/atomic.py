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
* ``force=True`` replaces a folder that is not ours, but never ``/``, the home folder or one of
  its ancestors, the current folder or one of its ancestors, an input or a folder holding an
  input (every path a command reads is an input: a trace, a recording folder, a layout folder,
  each log file);
* always refused: a file or a symbolic link where the folder should be, a target inside an
  input (``--out`` inside the trace or the recording), a name longer than
  ``MAX_OUT_NAME_BYTES`` or a path that is not UTF-8;
* two runs writing the same target at once: a lock file beside it (``.NAME.rocketlb-lock``, an
  ``flock``, so a crashed run never holds it) lets one write; the other fails at once, naming
  the folder, and neither sees the other's files;
* a run killed where no ``finally`` runs (SIGKILL; SIGTERM and SIGHUP are turned into an
  exception by ``rocketlb_core.cli``, so they clean up like Ctrl-C) leaves its lock file, which
  names its temporary folders (``_Journal``). The next run on the same target finishes or rolls
  back the replacement: a previous output set aside and not yet replaced is put back, and the
  temporary folders are removed (``_recover``).

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

import contextlib
import errno
import json
import os
import shutil
import stat
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


def _homes() -> list[Path]:
    """The home folder, as ``$HOME`` and as the password database say (they may differ)."""
    homes = []
    for home in (os.environ.get("HOME"), _pw_home()):
        if home:
            with contextlib.suppress(OSError, RuntimeError):
                homes.append(Path(home).resolve())
    return homes


def _pw_home() -> str | None:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return None


def _protected(target: Path, inputs: Sequence[Path]) -> str | None:
    """Why ``target`` may never be replaced, even with force (None when it may)."""
    if target == Path(target.anchor):
        return "it is the root folder"
    for home in _homes():
        if _inside(home, target):
            return "it is the home folder" if home == target else f"it holds the home folder {home}"
    cwd = Path.cwd().resolve()
    if _inside(cwd, target):
        return ("it is the current folder" if cwd == target
                else "it holds the current folder")
    for src in inputs:
        if _inside(src, target):
            return f"it is or holds the input {src}"
    return None


MAX_OUT_NAME_BYTES = 200
"""The longest last component of an output folder's path: the lock file and the temporary
folders beside it add up to 14 bytes to it, and a file system's names stop at 255."""


def _resolve(path: Path | str, what: str) -> Path:
    """``Path(path).resolve()``, with a link loop or an unreadable parent an ``OutputError``."""
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError) as exc:
        raise OutputError(f"{path}: cannot resolve this {what} ({_why(exc)}); nothing was "
                          "changed") from None


def _why(exc: BaseException) -> str:
    if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP:
        return "a symbolic link loop"
    return getattr(exc, "strerror", None) or str(exc)


def check_output(target: Path | str, command: str, *, inputs: Sequence[Path | str] = (),
                 force: bool = False) -> Path:
    """Raise ``OutputError`` unless ``atomic_folder`` may write ``target``; returns the target
    as an absolute path. Commands call it before long work, so a refusal costs nothing;
    ``atomic_folder`` checks again (under its lock) before it replaces anything."""
    try:
        path = _absolute(target)
    except (OSError, RuntimeError) as exc:
        raise OutputError(f"{target}: cannot use this folder for {command}'s output "
                          f"({_why(exc)}); nothing was changed") from None
    srcs = [_resolve(s, "input") for s in inputs]
    hint = "choose another folder (--out), or a new one"
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise OutputError(f"{path}: refusing to write {command}'s output here: the path is not "
                          f"valid UTF-8 text; {hint}") from None
    if len(os.fsencode(path.name)) > MAX_OUT_NAME_BYTES:
        raise OutputError(f"{path}: refusing to write {command}'s output here: its name is "
                          f"{len(os.fsencode(path.name))} bytes long (at most "
                          f"{MAX_OUT_NAME_BYTES}: rocketlb adds a lock file and temporary "
                          f"folders beside it); {hint}")
    if path.is_symlink():
        raise OutputError(f"{path}: refusing to write {command}'s output here: it is a "
                          f"symbolic link (to {os.readlink(path)}); {hint}")
    if path.exists() and not path.is_dir():
        raise OutputError(f"{path}: refusing to write {command}'s output here: it is a file, "
                          f"not a folder; {hint}")
    for src in srcs:
        if _inside(path, src) and path != src:
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


class _Journal:
    """The lock file's content: the pid holding it and the temporary folders it made beside the
    target (``tmp``: the output being written; ``old``: where the previous output waits while
    the new one moves in). A run killed by SIGKILL or a power cut leaves it behind; the next
    run on the same target reads it under the lock (``_recover``)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.state: dict[str, Any] = {"pid": os.getpid()}

    def write(self, **names: str | None) -> None:
        self.state.update(names)
        data = (json.dumps(self.state) + "\n").encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)
        os.fsync(self.fd)


def _left_behind(fd: int, target: Path) -> dict[str, Path]:
    """The temporary folders that the run which last held the lock named in it and left
    behind: only names of the form ``.NAME-...`` beside the target, folders of this user."""
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}                   # an old pid-only lock, or empty: nothing was named
    out = {}
    for key in ("tmp", "old"):
        name = data.get(key) if isinstance(data, dict) else None
        if (isinstance(name, str) and name.startswith(f".{target.name}-") and "/" not in name
                and "\0" not in name):
            folder = target.parent / name
            with contextlib.suppress(OSError):
                st = folder.lstat()
                if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
                    out[key] = folder
    return out


def _recover(fd: int, target: Path) -> str | None:
    """Finish or roll back what a killed run left (see ``_Journal``): a previous output set
    aside and not replaced is put back; a new output already in place is kept and the old one
    removed; an unfinished temporary folder is removed. Returns what was done, or None."""
    left = _left_behind(fd, target)
    done = []
    old = left.get("old")
    if old is not None:
        previous = old / "previous"
        if previous.is_dir() and not previous.is_symlink() and not os.path.lexists(target):
            os.replace(previous, target)
            done.append(f"restored the earlier output that an interrupted run had set aside "
                        f"({old.name})")
        shutil.rmtree(old, ignore_errors=True)
    tmp = left.get("tmp")
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
        done.append(f"removed the temporary folder {tmp.name} of an interrupted run")
    return "; ".join(done) or None


@contextmanager
def _lock(target: Path) -> Iterator[_Journal]:
    """Hold the lock file beside ``target`` for the block; fail at once if another run does.
    What a killed earlier run left is recovered first (``_recover``)."""
    import fcntl

    path = target.parent / f".{target.name}{LOCK_SUFFIX}"
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise OutputError(f"{target}: cannot write beside this folder (lock file {path}: "
                              f"{_why(exc)}); choose another folder") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode("ascii", "replace")
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                holder = str(json.loads(holder)["pid"])
            os.close(fd)
            raise OutputError(
                f"{target}: another rocketlb run (pid {holder.strip() or '?'}) is writing this "
                f"folder now (lock file {path}); wait for it to finish, or choose another "
                "folder") from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)                 # the holder we waited on removed it: take a fresh one
    try:
        _recover(fd, target)
        journal = _Journal(fd)
        journal.write()
        yield journal
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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{path}: cannot make the folder that holds it ({_why(exc)}); "
                          "nothing was changed") from None
    with _lock(path) as journal:
        path = check_output(path, command, inputs=inputs, force=force)
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
        except OSError as exc:
            raise OutputError(f"{path}: cannot write beside this folder ({_why(exc)}); "
                              "nothing was changed") from None
        journal.write(tmp=tmp.name)
        old: Path | None = None
        try:
            yield tmp
            tmp.chmod(0o755)                     # mkdtemp makes it private
            write_marker(tmp, command)
            check_output(path, command, inputs=inputs, force=force)
            if os.path.lexists(path):            # aside first: a failed rename loses nothing
                old = Path(tempfile.mkdtemp(prefix=f".{path.name}-old-", dir=path.parent))
                journal.write(old=old.name)      # a kill from here on is undone by the next run
                os.replace(path, old / "previous")
            os.replace(tmp, path)
            journal.write(tmp=None)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            if old is not None and not os.path.lexists(path) and (old / "previous").exists():
                os.replace(old / "previous", path)
            raise
        finally:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)


# ---------------------------------------------------------------- single files

def check_output_text(path: Path | str, what: str) -> None:
    """Raise ``OutputError`` unless the text of ``path`` can name a file or folder ``what``
    writes: not empty (``Path("")`` is the current folder), no NUL character (no system call
    takes one) and valid UTF-8 (not an undecodable byte of the command line).

    >>> check_output_text("a\\0b.md", "x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rocketlb_core.atomic.OutputError: a\\x00b.md: x cannot write there: the path holds a NUL...
    """
    text = os.fspath(path)
    why = None
    if not text:
        why = "the path is empty"
    elif "\0" in text:
        why = "the path holds a NUL character"
    else:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            why = "the path is not valid UTF-8 text"
    if why is not None:
        shown = text.replace("\0", "\\x00") if text else "''"
        raise OutputError(f"{shown}: {what} cannot write there: {why}")


def check_output_dir(path: Path | str, what: str) -> Path:
    """Raise ``OutputError`` unless ``path`` is a folder ``what`` may write single files into
    (``atomic_file``, each through ``check_output_file``): named as ``check_output_text``
    allows, an existing folder, not a symbolic link (a link may lead anywhere: name the folder
    itself). Nothing is made: a missing folder is refused. Returns the path.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "link").symlink_to(d)
    >>> check_output_dir(d / "link", "x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rocketlb_core.atomic.OutputError: .../link is a symbolic link (to ...), not a folder: ...
    """
    check_output_text(path, what)
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise OutputError(f"{path}: no such folder; make it first, or name another") from None
    except OSError as exc:
        raise OutputError(f"{path}: cannot use this folder ({exc.strerror})") from None
    if stat.S_ISLNK(st.st_mode):
        raise OutputError(f"{path} is a symbolic link (to {os.readlink(path)}), not a folder: "
                          f"{what} writes only into the folder itself; name it")
    if not stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{path} is not a folder (a file, a pipe or a device); name the "
                          f"folder {what} writes into")
    return path


def check_output_file(path: Path | str, mark: str, what: str) -> Path:
    """Raise ``OutputError`` unless ``path`` may take a file rocketlb writes: absent (in a
    folder that exists), or a regular file whose text starts with ``mark`` (one rocketlb wrote,
    ``what`` names the writer). A folder, a link, a device or a file of the user's is refused,
    naming ``path`` and what to do. Returns the path.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "mine.txt").write_text("notes")
    >>> check_output_file(d / "mine.txt", "# made by x", "x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rocketlb_core.atomic.OutputError: .../mine.txt exists and rocketlb did not write it; ...
    """
    check_output_text(path, what)
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise OutputError(f"{path}: its folder does not exist") from None
        return path
    except OSError as exc:
        raise OutputError(f"{path}: cannot write there ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(f"{path} is not a regular file (a folder, a link or a device): "
                          f"{what} writes only where no file is, or over a file it wrote")
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(mark.encode()) + 2)
    except OSError as exc:
        raise OutputError(f"{path}: cannot read it to see who wrote it ({exc.strerror})"
                          ) from None
    if not head.startswith(mark.encode()):
        raise OutputError(f"{path} exists and rocketlb did not write it; name another file "
                          "or remove it")
    return path


def atomic_file(path: Path | str, text: str, mark: str, what: str) -> None:
    """Write ``text`` (which must start with ``mark``) to ``path`` atomically, only where
    ``check_output_file`` allows: a temporary file beside it, then ``os.replace``, so a full
    disk, a missing permission or a crash leaves the old file (or none) and no temporary file;
    every error is an ``OutputError`` naming ``path``, never the temporary file.

    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "scenario.toml"
    >>> atomic_file(out, "# made by x\\nname = 1\\n", "# made by x", "x")
    >>> atomic_file(out, "# made by x\\nname = 2\\n", "# made by x", "x")
    >>> out.read_text().splitlines()[1]
    'name = 2'
    """
    if not text.startswith(mark):
        raise ValueError("the text must start with its writer's mark")
    path = check_output_file(path, mark, what)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write there ({exc.strerror})") from None
    mask = os.umask(0)
    os.umask(mask)
    try:
        os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        check_output_file(path, mark, what)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot write it ({exc.strerror})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
