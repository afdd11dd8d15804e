"""Writing an output folder atomically: everything goes into a temporary folder beside the
target, which replaces the target only when all of it was written. A failure leaves the old
target (or nothing) and no temporary folder behind.

>>> import pathlib, tempfile
>>> out = pathlib.Path(tempfile.mkdtemp()) / "result"
>>> with atomic_folder(out) as tmp:
...     _ = (tmp / "summary.json").write_text("{}")
>>> sorted(p.name for p in out.iterdir())
['summary.json']
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_folder(target: Path) -> Iterator[Path]:
    """Yield a temporary folder; on success it becomes ``target`` (replacing it whole)."""
    target = Path(target).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        yield tmp
        tmp.chmod(0o755)                     # mkdtemp makes it private
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
