"""The trace format (``data/README.md``): names, columns, the folder's files, ``TraceError``,
the checks every reader shares, and ``trace.json``. Pure Python: the browser can check a trace's
metadata and names with it.

A trace is a folder:

* ``trace.json``: format, version, name, description, provenance, topic, time span;
* ``brokers.csv`` and ``route.csv``: the cluster layout (``rocketlb_core.trace.cluster``);
* ``sends.parquet``: what the producers' applications asked to send, in the replay layout
  (``rocketlb_core.trace.layout``: one producer per row group, by time within a producer);
* ``conditions.parquet``: what the brokers were like over time (latency, down, partitions);
* ``membership.parquet``: a consumer group's joins, leaves and crashes (optional).

Readers: ``rocketlb_core.trace.read`` (Parquet, validated), ``rocketlb_core.spark.traces``
(Spark). Writer: ``rocketlb_core.trace.write``, the one every producer of traces uses.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, BinaryIO

from rocketlb_core.errors import InputError
from rocketlb_core.limits import (
    MAX_CONSUME_RATE,
    MAX_META_BYTES,
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
    MAX_TIME_MS,
)
from rocketlb_core.producer.line import ProducerLine

FORMAT = "rocketlb-trace"
VERSION = 1
SENDS = {"time_ms": "int64", "producer": "string", "topic": "string", "key": "string",
         "size": "int32"}
CONDITIONS = {"time_ms": "int64", "broker": "string", "client": "string", "kind": "string",
              "mode": "string", "median_ms": "double", "p99_ms": "double"}
MEMBERSHIP = {"time_ms": "int64", "group": "string", "member": "string", "client_id": "string",
              "event": "string", "room": "string"}
CONDITION_KINDS = {"latency", "down", "up", "partition", "heal"}
MEMBER_EVENTS = {"join", "leave", "crash", "kill"}
NULLABLE = {"key", "client", "mode", "median_ms", "p99_ms"}
BROKER_FIELDS = ("cluster", "broker_name", "broker_id", "address", "room")
ROUTE_FIELDS = ("topic", "broker_name", "read_queue_nums", "write_queue_nums", "perm")
FILES = ("trace.json", "brokers.csv", "route.csv", "sends.parquet", "conditions.parquet",
         "membership.parquet")


class TraceError(InputError):
    """A trace file is malformed. ``row`` is the 1-based line number in the file (1 = header)."""

    def __init__(self, path: Path | str, row: int | None, field: str | None, message: str):
        self.path, self.row, self.field = str(path), row, field
        message = " ".join(message.split())            # one line, whatever a library said
        if len(message) > 500:
            message = message[:497] + "..."
        where = self.path
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")


META_FIELDS = {"format", "version", "name", "description", "topic", "start_ms", "end_ms", "line",
               "seed", "provenance", "fault_tolerance", "groups"}
GROUP_FIELDS = {"strategy", "model", "consume_rate_per_s"}


def regular_file(path: Path | str, folder: Path | None = None,
                 max_bytes: int | None = None) -> os.stat_result:
    """Check that ``path`` is a regular file (links followed) and, given ``max_bytes``, no
    larger; returns its ``stat``. Given ``folder``, the trace folder ``path`` belongs to, it must
    also stay inside it (a symbolic link may point within it, never out of it); without, it is a
    file the user named (an importer's input). Devices, pipes, sockets and folders are refused,
    so reading a trace or an input can never hang or read without end."""
    if folder is not None:
        outside_link(Path(path), folder)
    try:
        st = os.stat(path)              # never opens it: a pipe cannot block here
    except FileNotFoundError:
        raise TraceError(path, None, None, "file not found") from None
    except OSError as exc:
        why = "a symbolic link loop" if exc.errno == errno.ELOOP else exc.strerror
        raise TraceError(path, None, None, f"cannot read it ({why})") from None
    if stat.S_ISDIR(st.st_mode):
        raise TraceError(path, None, None, "a folder where a file was expected")
    if not stat.S_ISREG(st.st_mode):
        raise TraceError(path, None, None, "not a regular file (a device, a pipe or a socket)")
    if max_bytes is not None and st.st_size > max_bytes:
        raise TraceError(path, None, None, f"{st.st_size} bytes: larger than the "
                         f"{max_bytes}-byte limit for this file (data/README.md)")
    return st


def open_regular(path: Path | str, folder: Path | None = None,
                 max_bytes: int | None = None) -> BinaryIO:
    """``path`` opened for reading in binary, once ``regular_file`` accepts it (the same
    arguments). The open never blocks and is checked again: a file swapped for a pipe or a
    device after the check is refused too."""
    regular_file(path, folder, max_bytes)
    try:        # O_NONBLOCK: a file swapped for a pipe after the check still cannot block
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise TraceError(path, None, None, f"cannot read it ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise TraceError(path, None, None, "not a regular file (a device, a pipe or a socket)")
    return os.fdopen(fd, "rb")


def read_json(path: Path | str, max_bytes: int, folder: Path | None = None) -> Any:
    """The JSON value in ``path``: a regular file (``regular_file``; ``folder`` as there) of at
    most ``max_bytes`` bytes, no more of which is ever read (a file that grew after the check is
    refused too), UTF-8 text (a BOM allowed) of standard JSON (NaN and Infinity refused). Any
    fault is a ``TraceError`` naming the file, and the line of a JSON syntax error."""

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    with open_regular(path, folder, max_bytes) as f:
        try:
            raw = f.read(max_bytes + 1)
        except OSError as exc:
            raise TraceError(path, None, None, f"cannot read it ({exc.strerror or exc})"
                             ) from None
    if len(raw) > max_bytes:
        raise TraceError(path, None, None, f"larger than the {max_bytes}-byte limit for this "
                         "file (data/README.md)")
    try:
        return json.loads(raw.decode("utf-8-sig"), parse_constant=no_constant)
    except UnicodeDecodeError as exc:
        raise TraceError(path, None, None, f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise TraceError(path, exc.lineno, None, f"invalid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        raise TraceError(path, None, None, f"invalid JSON ({first_line(exc)})") from None


def outside_link(path: Path, folder: Path) -> None:
    """Refuse ``path`` when it is a symbolic link (or a chain of them) that ends outside the
    trace folder ``folder``, or a loop of links. The one rule for links of a trace, for every
    reader (``validate``, ``validate --rows``, both replay engines, ``layout``)."""
    if not path.is_symlink():
        return
    try:
        target, home = path.resolve(strict=True), folder.resolve(strict=True)
    except FileNotFoundError:
        raise TraceError(path, None, None, "a symbolic link to nothing (file not found)"
                         ) from None
    except (OSError, RuntimeError):      # ELOOP; RuntimeError: Python 3.11's "Symlink loop"
        raise TraceError(path, None, None, "a symbolic link loop") from None
    if home not in target.parents:
        raise TraceError(path, None, None, f"a symbolic link that leaves the trace folder "
                         f"(to {target}); copy the file into the folder instead")


_CONTROL = re.compile("[\x00-\x1f\x7f]")


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character, U+0000 to U+001F or U+007F (names may
    not)."""
    return _CONTROL.search(text) is not None


def is_name(value: object) -> bool:
    """A name as ``check_name`` accepts it."""
    return isinstance(value, str) and 0 < len(value) <= MAX_NAME_CHARS and not has_control(value)


def check_name(path: Path | str, row: int | None, field: str, value: Any) -> str:
    """A name (topic, broker, producer, client, group, member, room...): non-empty text of at
    most ``MAX_NAME_CHARS`` characters without control characters."""
    if not isinstance(value, str) or not value:
        raise TraceError(path, row, field, f"expected a non-empty name, got {value!r}")
    if len(value) > MAX_NAME_CHARS:
        raise TraceError(path, row, field, f"a name of {len(value)} characters (at most "
                         f"{MAX_NAME_CHARS})")
    if has_control(value):
        raise TraceError(path, row, field, f"control characters in the name {value[:40]!r}")
    return value


def check_meta(path: Path) -> dict[str, Any]:
    """Read and check ``trace.json``; returns its object."""
    meta = read_json(path, MAX_META_BYTES, path.parent)
    if not isinstance(meta, dict):
        raise TraceError(path, None, None, "expected a JSON object")
    if meta.get("format") != FORMAT:
        raise TraceError(path, None, "format", f"expected {FORMAT!r}")
    if meta.get("version") != VERSION or isinstance(meta.get("version"), bool):
        raise TraceError(path, None, "version", f"expected {VERSION}")
    unknown = sorted(set(meta) - META_FIELDS)
    if unknown:
        raise TraceError(path, None, unknown[0][:80], "unknown field (known: "
                         f"{', '.join(sorted(META_FIELDS))})")
    check_name(path, None, "topic", meta.get("topic"))
    for key in ("name", "description", "provenance", "line"):
        if key in meta and not (isinstance(meta[key], str) and len(meta[key]) <= MAX_TEXT_CHARS):
            raise TraceError(path, None, key, f"expected text of at most {MAX_TEXT_CHARS} "
                             "characters")
    if "line" in meta:
        try:
            ProducerLine.parse(meta["line"])
        except ValueError as exc:
            raise TraceError(path, None, "line", str(exc)) from None
    for key in ("start_ms", "end_ms", "seed"):
        v = meta.get(key, 0)
        top = MAX_TIME_MS if key != "seed" else (1 << 63) - 1
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= top:
            raise TraceError(path, None, key, f"expected an integer from 0 to {top}, got {v!r}")
    if meta.get("start_ms", 0) > meta.get("end_ms", MAX_TIME_MS):
        raise TraceError(path, None, "end_ms", "end_ms is before start_ms")
    ft = meta.get("fault_tolerance", {})
    if not isinstance(ft, dict):
        raise TraceError(path, None, "fault_tolerance", "expected an object: producer -> bool")
    for name, on in ft.items():
        check_name(path, None, "fault_tolerance", name)
        if not isinstance(on, bool):
            raise TraceError(path, None, f"fault_tolerance.{name}", "expected true or false")
    groups = meta.get("groups", {})
    if not isinstance(groups, dict):
        raise TraceError(path, None, "groups", "expected an object: group -> settings")
    for name, g in groups.items():
        check_name(path, None, "groups", name)
        where = f"groups.{name}"
        if not isinstance(g, dict):
            raise TraceError(path, None, where, "expected an object")
        bad = sorted(set(g) - GROUP_FIELDS)
        if bad:
            raise TraceError(path, None, f"{where}.{bad[0][:80]}", "unknown field (known: "
                             f"{', '.join(sorted(GROUP_FIELDS))})")
        if "strategy" in g and not isinstance(g["strategy"], str):
            raise TraceError(path, None, f"{where}.strategy", "expected a strategy's name")
        if g.get("model", "CLUSTERING") not in ("CLUSTERING", "BROADCASTING"):
            raise TraceError(path, None, f"{where}.model", "expected CLUSTERING or BROADCASTING")
        rate = g.get("consume_rate_per_s", 2000.0)
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not (
                0 < rate <= MAX_CONSUME_RATE):
            raise TraceError(path, None, f"{where}.consume_rate_per_s",
                             f"expected a number > 0 and <= {MAX_CONSUME_RATE:.0f}, got {rate!r}")
    return meta


def meta_json(meta: dict[str, Any]) -> str:
    """The text of ``trace.json`` for ``meta`` (format and version added)."""
    return json.dumps({"format": FORMAT, "version": VERSION, **meta}, indent=1,
                      sort_keys=True) + "\n"


def first_line(exc: BaseException) -> str:
    """The first line of what a library said, at most 200 characters."""
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
