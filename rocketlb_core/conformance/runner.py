"""Reading a conformance file, recognising its kind, and dispatching its cases."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rocketlb_core.conformance.report import Report
from rocketlb_core.errors import InputError


class ConformanceFileError(InputError):
    """A file that is not a readable conformance file (names the file and the line)."""


def _open_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConformanceFileError(f"{path}: cannot read ({exc.strerror})") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ConformanceFileError(f"{path}: corrupt gzip data ({exc})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConformanceFileError(f"{path}: not UTF-8 text ({exc})") from None


def _jsonl(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConformanceFileError(f"{path}, line {number}: invalid JSON ({exc.msg})") from None
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
    return None


def run_file(path: Path | str) -> Report:
    """Run every case of one file. Raises ``ConformanceFileError`` for unreadable files."""
    path = Path(path)
    text = _open_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise ConformanceFileError(f"{path}: empty file")
    if stripped.startswith("{") and "\n{" not in stripped.strip():
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, dict) and isinstance(whole.get("tests"), list):
            from rocketlb_core.conformance.upstream import run_upstream_tests

            upstream = Report(str(path), "upstream-tests")
            run_upstream_tests(whole, upstream)
            return upstream
    report: Report | None = None
    for number, obj in _jsonl(path, text):
        kind = _kind_of(obj)
        if kind is None:
            raise ConformanceFileError(
                f"{path}, line {number}: not a conformance record (unknown fields "
                f"{sorted(obj)[:6]})")
        if report is None:
            report = Report(str(path), kind)
        elif kind != report.kind:
            raise ConformanceFileError(
                f"{path}, line {number}: a {kind} record in a {report.kind} file")
        try:
            _dispatch(kind, obj, report)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConformanceFileError):
                raise
            raise ConformanceFileError(
                f"{path}, line {number}: malformed {kind} record ({type(exc).__name__}: {exc})"
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
    else:
        from rocketlb_core.conformance.allocation_vectors import run_group

        run_group(obj, report)
