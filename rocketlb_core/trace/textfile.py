"""Reading the text files an importer is given (a message-trace dump, client and broker logs),
line by line, within bounds (``rocketlb_core.limits``): only regular files (a pipe or a device
is refused before it is opened, so nothing can block or read without end), gzip by name
(``.gz``) with the bound on the *decompressed* bytes, and at most ``MAX_IMPORT_LINES`` lines of
at most ``MAX_LINE_BYTES`` each. Lines end at ``\\n`` only (a ``\\r`` before it is left to the
parser). Any breach is a ``TraceError`` naming the file and the line.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from rocketlb_core.limits import MAX_IMPORT_BYTES, MAX_IMPORT_LINES, MAX_LINE_BYTES
from rocketlb_core.trace.schema import TraceError, open_regular


def _open(path: Path) -> tuple[Any, IO[bytes]]:
    raw = open_regular(path)
    if path.name.endswith(".gz"):
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    return raw, raw


def read_lines(path: Path | str, *, errors: str = "strict") -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line of ``path`` (see the module docstring); text is
    decoded as UTF-8 with ``errors`` (``strict``: a bad byte is a ``TraceError``)."""
    path = Path(path)
    f, raw = _open(path)
    total = n = 0
    try:
        while True:
            try:
                line = f.readline(MAX_LINE_BYTES + 1)
            except (OSError, EOFError, zlib.error) as exc:      # a damaged or truncated .gz
                raise TraceError(path, n + 1, None, f"cannot read it ({exc})") from None
            if not line:
                return
            n += 1
            total += len(line)
            if len(line) > MAX_LINE_BYTES:
                raise TraceError(path, n, None, f"a line longer than {MAX_LINE_BYTES} bytes "
                                 "(limits.MAX_LINE_BYTES, data/README.md)")
            if total > MAX_IMPORT_BYTES:
                raise TraceError(path, n, None, f"more than {MAX_IMPORT_BYTES} bytes"
                                 f"{' after decompression' if path.name.endswith('.gz') else ''}"
                                 " (limits.MAX_IMPORT_BYTES, data/README.md)")
            if n > MAX_IMPORT_LINES:
                raise TraceError(path, n, None, f"more than {MAX_IMPORT_LINES} lines "
                                 "(limits.MAX_IMPORT_LINES, data/README.md)")
            try:
                text = line.decode("utf-8", errors)
            except UnicodeDecodeError as exc:
                raise TraceError(path, n, None, f"not UTF-8 text (byte {exc.start} of the "
                                 "line)") from None
            yield n, text
    finally:
        f.close()
        raw.close()
