"""Reading a conformance file, recognising its kind, and dispatching its cases.

A conformance file is held to the input bounds (``rocketlb_core.limits``): it must be a regular
file (a device, a pipe, a socket or a folder is refused before it is opened, so nothing can block
or read without end), at most ``MAX_VECTOR_BYTES`` as read, counted after gunzip while
decompressing (a gzip bomb stops there), and each line's JSON is parsed with its depth and number
sizes bounded by the parser (too deep or too long a number is an error naming the line, never a
``RecursionError``). Lines end at ``\n`` (a ``\r`` before it is whitespace to JSON).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rocketlb_core import limits
from rocketlb_core.conformance.bounds import check_record
from rocketlb_core.conformance.report import Report
from rocketlb_core.errors import InputError
from rocketlb_core.kafka.assignors import KafkaAssignorError

CHUNK = 1 << 20


class ConformanceFileError(InputError):
    """A file that is not a readable conformance file (names the file and the line)."""


RECORD_ERRORS: tuple[type[BaseException], ...] = (
    LookupError, TypeError, ValueError, ArithmeticError, AttributeError, AssertionError,
    RecursionError, MemoryError, KafkaAssignorError)
"""What a record a port cannot read raises (a missing key, a wrong type, a zero to divide by,
a Kafka assignor's error the vector does not expect, an assertion of a port's input): each is
the record's fault, reported as exit 2 naming the line, never a traceback."""


def _regular(path: Path) -> int:
    """Open ``path`` (links followed) for reading if it is a regular file, else refuse it: its
    kind is checked with ``stat`` before opening, and again on the open descriptor (opened
    non-blocking, so a file swapped for a pipe in between cannot block either)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        why = "a symbolic link loop" if exc.errno == errno.ELOOP else exc.strerror
        raise ConformanceFileError(f"{path}: cannot read ({why})") from None
    if stat.S_ISDIR(st.st_mode):
        raise ConformanceFileError(f"{path}: a folder, not a conformance file")
    if not stat.S_ISREG(st.st_mode):
        raise ConformanceFileError(f"{path}: not a regular file (a device, a pipe or a socket)")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ConformanceFileError(f"{path}: cannot read ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConformanceFileError(f"{path}: not a regular file (a device, a pipe or a socket)")
    return fd


def _too_large(path: Path, unpacked: bool) -> ConformanceFileError:
    what = "unpacks to more than" if unpacked else "is larger than"
    return ConformanceFileError(f"{path}: {what} {limits.MAX_VECTOR_BYTES} bytes, the limit "
                                "for a conformance file (limits.MAX_VECTOR_BYTES)")


def _read_bounded(path: Path) -> bytearray:
    """The file's bytes, gunzipped when they start with gzip's magic, at most
    ``MAX_VECTOR_BYTES`` of them: the bound is on the bytes as read, checked chunk by chunk
    while decompressing (memory stays within the bound plus a chunk)."""
    bound = limits.MAX_VECTOR_BYTES
    fd = _regular(path)
    with os.fdopen(fd, "rb", buffering=0) as f:
        try:
            first = f.read(CHUNK)
            if first[:2] == b"\x1f\x8b":
                return _gunzip(path, first, f, bound)
            if os.fstat(fd).st_size > bound:
                raise _too_large(path, False)
            out = bytearray(first)
            while first:
                if len(out) > bound:
                    raise _too_large(path, False)
                first = f.read(CHUNK)
                out += first
            return out
        except OSError as exc:
            raise ConformanceFileError(f"{path}: cannot read ({exc.strerror})") from None


def _gunzip(path: Path, data: bytes, f: Any, bound: int) -> bytearray:
    """Every gzip member of the file (as gzip(1) reads them: zero padding between members
    allowed), decompressed at most ``CHUNK`` * 8 bytes a call, stopping past ``bound``."""
    out = bytearray()
    z = zlib.decompressobj(zlib.MAX_WBITS | 16)
    while True:
        try:
            got = z.decompress(data, CHUNK * 8)
        except zlib.error as exc:
            raise ConformanceFileError(f"{path}: corrupt gzip data ({exc})") from None
        out += got
        if len(out) > bound:
            raise _too_large(path, True)
        if z.eof:                                    # the next member, if any
            data = z.unused_data.lstrip(b"\x00")
            while len(data) < 2:
                more = f.read(CHUNK)
                if not more:
                    break
                data = (data + more).lstrip(b"\x00")
            if not data:
                return out
            if data[:2] != b"\x1f\x8b":
                raise ConformanceFileError(f"{path}: corrupt gzip data (garbage after the "
                                           "compressed data)")
            z = zlib.decompressobj(zlib.MAX_WBITS | 16)
            continue
        data = z.unconsumed_tail
        if not data and not got:                     # nothing pending: read on
            data = f.read(CHUNK)
            if not data:
                raise ConformanceFileError(f"{path}: corrupt gzip data (truncated)")


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _loads(path: Path, number: int, text: str) -> Any:
    """``json.loads``, with every way it can fail as a ``ConformanceFileError`` naming the
    line: invalid JSON, nesting deeper than the interpreter's recursion limit, a number of more
    than 4,300 digits."""
    where = f"{path}, line {number}"
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ConformanceFileError(f"{where}: invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise ConformanceFileError(f"{where}: JSON nested too deeply") from None
    except ValueError as exc:          # int(...) of more than sys.get_int_max_str_digits()
        raise ConformanceFileError(f"{where}: invalid JSON ({str(exc).split(':')[0]})"
                                   ) from None


_TEXT_LINE = re.compile(rb"[^\n]*\S[^\n]*")      # a line with something on it


def _lines(path: Path, raw: bytes | bytearray) -> Iterator[tuple[int, str]]:
    """The file's non-blank lines (ending at ``\n``) with their numbers, decoded one at a time:
    no list of them is made, and blank lines are skipped by the regex engine (a file of
    nothing but newlines takes a second, not a loop turn per line)."""
    number, at = 1, 0
    for m in _TEXT_LINE.finditer(raw):
        number += raw.count(b"\n", at, m.start())
        at = m.start()
        try:
            yield number, m.group().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConformanceFileError(f"{path}, line {number}: not UTF-8 text (byte "
                                       f"{exc.start + 1} of the line)") from None


def _jsonl(path: Path, raw: bytes | bytearray) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in _lines(path, raw):
        if not line.strip():             # only Unicode spaces
            continue
        obj = _loads(path, number, line)
        if not isinstance(obj, dict):
            raise ConformanceFileError(f"{path}, line {number}: expected a JSON object")
        yield number, obj


def _kind_of(obj: dict[str, Any]) -> str | None:
    if "steps" in obj and "message_queues" in obj:
        return "producer"
    if "kind" in obj and obj.get("kind") in ("thread_local_index", "not_available_duration"):
        return "primitives"
    if "strategy" in obj and "cases" in obj:
        return "allocation"
    if "assignor" in obj and "members" in obj and "expected" in obj:
        return "kafka-assignor"
    if "partitioner" in obj and "steps" in obj:
        return "kafka-partitioner"
    if "grpc" in obj and "source" in obj:
        return "grpc"
    if "go" in obj and "source" in obj:
        return "go-client"
    return None


def run_file(path: Path | str) -> Report:
    """Run every case of one file. Raises ``ConformanceFileError`` for unreadable files."""
    path = Path(path)
    raw = _read_bounded(path)
    text_at = re.search(rb"\S", raw)
    if text_at is None:
        raise ConformanceFileError(f"{path}: empty file")
    first = text_at.start()
    if raw[first:first + 1] == b"{" and raw.find(b"\n{", first) < 0:
        try:
            whole = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):     # not one document: read as lines below
            whole = None
        if isinstance(whole, dict) and isinstance(whole.get("tests"), list):
            from rocketlb_core.conformance.upstream import run_upstream_tests

            upstream = Report(str(path), "upstream-tests")
            try:
                run_upstream_tests(whole, upstream)
            except RECORD_ERRORS as exc:
                raise ConformanceFileError(f"{path}: malformed upstream-tests file "
                                           f"({_why(exc)})"[:500]) from None
            return upstream
    report: Report | None = None
    for number, obj in _jsonl(path, raw):
        kind = _kind_of(obj)
        if kind is None:
            raise ConformanceFileError(
                f"{path}, line {number}: not a conformance record (unknown fields "
                f"{sorted(obj)[:6]})"[:500])
        if report is None:
            report = Report(str(path), kind)
        elif kind != report.kind:
            raise ConformanceFileError(
                f"{path}, line {number}: a {kind} record in a {report.kind} file")
        why = check_record(kind, obj)
        if why:
            raise ConformanceFileError(f"{path}, line {number}: a {kind} record out of bounds "
                                       f"({why}; rocketlb_core/limits.py)"[:500])
        try:
            _dispatch(kind, obj, report)
        except RECORD_ERRORS as exc:
            if isinstance(exc, ConformanceFileError):
                raise
            raise ConformanceFileError(
                f"{path}, line {number}: malformed {kind} record ({_why(exc)})"[:500]
            ) from None
    if report is None:
        raise ConformanceFileError(f"{path}: no records")
    return report


def _dispatch(kind: str, obj: dict[str, Any], report: Report) -> None:
    if kind == "producer":
        from rocketlb_core.conformance.producer_vectors import run_producer_case

        run_producer_case(obj, report)
    elif kind == "primitives":
        from rocketlb_core.conformance.producer_vectors import run_primitive

        run_primitive(obj, report)
    elif kind == "kafka-assignor":
        from rocketlb_core.kafka.conformance import run_assignor_case

        run_assignor_case(obj, report)
    elif kind == "kafka-partitioner":
        from rocketlb_core.kafka.conformance import run_partitioner_case

        run_partitioner_case(obj, report)
    elif kind == "grpc":
        from rocketlb_core.grpc.conformance import run_grpc_case

        run_grpc_case(obj, report)
    elif kind == "go-client":
        from rocketlb_core.goclient.conformance import run_go_case

        run_go_case(obj, report)
    else:
        from rocketlb_core.conformance.allocation_vectors import run_group

        run_group(obj, report)
