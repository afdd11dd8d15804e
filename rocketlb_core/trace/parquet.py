"""Parquet helpers of the trace format: what pyarrow raises for a bad file, and a file's columns
checked from its footer. Needs pyarrow (imported when called)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocketlb_core.trace.schema import TraceError, first_line, regular_file


def arrow_errors() -> tuple[type[BaseException], ...]:
    """What pyarrow raises for a file it cannot read (corrupt, truncated, not Parquet), and
    for a string column whose bytes are not UTF-8 (``to_pylist`` raises ``UnicodeDecodeError``:
    a corrupt page can decode to such bytes; found by ``tests/test_fuzz.py``)."""
    import pyarrow as pa

    return (pa.ArrowException, OSError, EOFError, UnicodeDecodeError)


def check_schema(path: Path, columns: dict[str, str], folder: Path | None = None) -> Any:
    """Check a Parquet file's columns and types from its footer; returns the schema. The file
    must be a regular file inside ``folder`` (default: its own folder)."""
    import pyarrow.parquet as pq

    regular_file(path, path.parent if folder is None else folder)
    try:
        schema = pq.read_schema(path)
    except arrow_errors() as exc:
        raise TraceError(path, None, None, f"not a Parquet file ({first_line(exc)})"
                         ) from None
    names = list(schema.names)
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise TraceError(path, None, dup, "the column appears twice")
    for col, typ in columns.items():
        if col not in names:
            raise TraceError(path, None, col, f"missing column (file has {sorted(names)})")
        got = str(schema.field(col).type)
        want = {"string": ("string", "large_string"), "int64": ("int64",),
                "int32": ("int32", "int64"), "double": ("double", "float", "int64")}[typ]
        if got not in want and got != "null":
            raise TraceError(path, None, col, f"type {got}, expected {typ}")
    return schema
