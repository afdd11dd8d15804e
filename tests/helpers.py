"""Helpers the hostile-input and fuzzing tests share: an alarm that turns a hang into a failure,
a command run in this process, and a digest of a folder (to show an input was left unchanged)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """Raise ``TimeoutError`` in the body if it runs longer than ``seconds``: a hang fails."""
    def hang(signum: int, frame: Any) -> None:
        raise TimeoutError(f"ran longer than {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_command(argv: Sequence[Any], seconds: int | None = None) -> tuple[int, str, str]:
    """``rocketlb ARGV`` in this process (each argument made text), under an ``alarm`` of
    ``seconds`` when given: (status, stdout, stderr)."""
    from rocketlb_core.commands import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            alarm(seconds) if seconds is not None else contextlib.nullcontext():
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def digest(folder: Path) -> str:
    """A hash of every path under ``folder`` and every regular file's bytes (links not
    followed)."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        h.update(str(p.relative_to(folder)).encode())
        if p.is_file() and not p.is_symlink():
            h.update(p.read_bytes())
    return h.hexdigest()
