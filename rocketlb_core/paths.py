"""Where the repository's data lives, wherever the code runs from (a notebook, a test, Spark),
and ``read_small_file``, the one bounded reader of a small file rocketlb wrote and reads back
(a cluster's ``cluster.json``), with ``json_object``, its reading as the object it should be."""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENV_DATA = "ROCKETLB_DATA"


def data_root() -> Path:
    """``$ROCKETLB_DATA`` if set, else the ``data/`` folder of this checkout."""
    env = os.environ.get(ENV_DATA)
    root = Path(env) if env else Path(__file__).resolve().parent.parent / "data"
    if not root.is_dir():
        raise FileNotFoundError(f"data folder {root} not found (set {ENV_DATA} to point at it)")
    return root


def data_path(*parts: str) -> Path:
    """A path inside the data folder, e.g. ``data_path("traces/cluster-overview")``."""
    path = data_root().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"{path} not found in the data folder")
    return path


class FileRefused(Exception):
    """Why ``read_small_file`` refused a file. ``reason``: ``"missing"``, ``"unreadable"``
    (``detail``: what the system said, or ``"a symbolic link"``), ``"not regular"`` (``detail``:
    what it is: a symbolic link, a folder, a FIFO, a device or a socket), ``"swapped"`` (not a
    regular file any more once opened) or ``"too large"``. Callers turn it into their own error."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail

    def says(self, what: str) -> str:
        """The usual words for it, of a file that should be ``what``: ``cannot be read (...)``,
        ``not a regular file, not <what>`` or ``larger than ..., not <what>``."""
        if self.reason in ("missing", "unreadable"):
            return f"cannot be read ({self.detail})"
        if self.reason in ("not regular", "swapped"):
            return f"not a regular file, not {what}"
        return f"larger than {self.detail}, not {what}"


_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
          (stat.S_ISSOCK, "a socket"))


def read_small_file(path: Path | str, max_bytes: int) -> bytes:
    """The bytes of ``path`` if it is a regular file (not a link, folder, FIFO or device) of at
    most ``max_bytes``; else ``FileRefused``. Never follows a link, never blocks (a file swapped
    for a FIFO after the check is refused too), never reads more than ``max_bytes + 1`` bytes."""
    try:
        st = os.lstat(path)
    except FileNotFoundError as exc:
        raise FileRefused("missing", exc.strerror or str(exc)) from None
    except OSError as exc:
        raise FileRefused("unreadable", exc.strerror or str(exc)) from None
    if not stat.S_ISREG(st.st_mode):
        raise FileRefused("not regular", next(
            (kind for test, kind in _KINDS if test(st.st_mode)), "not a regular file"))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        why = "a symbolic link" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise FileRefused("unreadable", why) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileRefused("swapped", "not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise FileRefused("unreadable", exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    if size > max_bytes:
        raise FileRefused("too large", f"{max_bytes >> 20} MiB" if max_bytes >= 1 << 20 and
                          not max_bytes % (1 << 20) else f"{max_bytes} bytes")
    return b"".join(chunks)


def shown(path: Path | str) -> str:
    r"""``path`` for a one-line message: control and other unprintable characters escaped.

    >>> shown("cluster.json"), shown("a\nb.json")
    ('cluster.json', 'a\\nb.json')
    """
    text = os.fspath(path)
    return text if text.isprintable() else repr(text)[1:-1]


def json_object(raw: bytes, where: str, not_what: str,
                error: Callable[[str], Exception]) -> dict[str, Any]:
    """``raw``, the bytes of a record rocketlb wrote (``read_small_file``'s), as the JSON object
    it holds; else ``error`` of a message naming the file (``where``, ``shown``) and what it
    holds instead: ``not UTF-8 text``, ``not JSON (...)`` or ``JSON nested too deeply``, then
    ``not_what``; or ``a JSON <type>, not the object up writes``.

    >>> json_object(b'{"a": 1}', "c.json", "not a record", ValueError)
    {'a': 1}
    >>> json_object(b'[1]', "c.json", "not a record", ValueError)
    Traceback (most recent call last):
    ValueError: c.json: a JSON list, not the object up writes
    """
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise error(f"{where}: not UTF-8 text, {not_what}") from None
    except ValueError as exc:
        raise error(f"{where}: not JSON ({shown(str(exc))}), {not_what}") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply, {not_what}") from None
    if not isinstance(data, dict):
        raise error(f"{where}: a JSON {type(data).__name__}, not the object up writes")
    return data
