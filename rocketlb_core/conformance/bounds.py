"""Bounds on the values inside a conformance record, checked before any of its work starts
(issue 44, item 2).

The file bounds (``runner``) keep a vector file small; they do not keep its values small. A
942-byte Kafka case asking for 10^9 partitions, a gRPC case with ``max_attempts`` of 10^9, a Proxy
case of 10^9 queues or a message group of 100 MiB in a 100 KB gzip each asked the port for hours
of work or tens of GB. Here every value that sizes work or memory is held to its bound in
``rocketlb_core.limits`` (far above what upstream's classes are ever asked in a vector), and a
count that a port divides by is held above zero, so the record is refused with a message naming
the field before it runs.

* every record: each string at most ``MAX_VECTOR_STRING_CHARS``; each integer inside a Java
  long (or an unsigned 64-bit hash); no float but a finite one;
* Kafka assignors: the partitions of all topics at most ``MAX_VECTOR_PARTITIONS``, each count
  from 0; members at most ``MAX_VECTOR_MEMBERS``;
* Kafka's partitioner: ``sticky_batch_size`` from 1 to int32; a keyed step's ``partitions`` from 1
  to ``MAX_VECTOR_PARTITIONS``;
* gRPC families: ``max_attempts`` from 1 to ``MAX_VECTOR_ATTEMPTS``; a take's ``count`` from 0 to
  it; each of ``sizes`` from 1 to int32; a route's queue counts (``queue_datas``) at most
  ``MAX_QUEUES``;
* the Go client: a consistent hash's ``virtual_nodes`` at most ``MAX_VECTOR_VIRTUAL_NODES`` and
  consumers times them at most ``MAX_VECTOR_RING``; a route's queue counts (``queue_datas``) and
  each count in its ``order_topic_conf`` at most ``MAX_QUEUES``;
* allocation: a consistent hash's ``virtual_node_cnt`` at most ``MAX_VECTOR_VIRTUAL_NODES`` (a
  negative one is upstream's error to check), and
  consumers times virtual nodes at most ``MAX_VECTOR_RING``.

>>> check_record("grpc", {"grpc": "send", "max_attempts": 10**9})
'max_attempts: 1000000000 is outside 1 to 1000'
>>> check_record("kafka-assignor", {"topics": [["t", 10**9]], "members": []})
'topics[0]: 1000000000 is outside 0 to 1000000'
>>> check_record("kafka-assignor", {"topics": [["t", 600_000], ["u", 600_000]]})
'topics: 1200000 partitions in all, more than 1000000'
>>> check_record("grpc", {"grpc": "siphash", "group": "x" * 100, "sizes": [0]})
'sizes[0]: 0 is outside 1 to 2147483647'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from rocketlb_core.limits import (
    MAX_QUEUES,
    MAX_VECTOR_ATTEMPTS,
    MAX_VECTOR_MEMBERS,
    MAX_VECTOR_PARTITIONS,
    MAX_VECTOR_RING,
    MAX_VECTOR_STRING_CHARS,
    MAX_VECTOR_VIRTUAL_NODES,
)
from rocketlb_core.numbers import INT32_MAX, INT64_MIN

_LOW = INT64_MIN
_HIGH = (1 << 64) - 1            # an unsigned 64-bit hash is written as a non-negative number


def _values(obj: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """Every scalar of a record with its path (``steps[3].key``), depth-first, iteratively."""
    stack: list[tuple[str, Any]] = [(where, obj)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))
        else:
            yield path, value


def _int_in(value: Any, lo: int, hi: int, name: str) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None                                   # the family's reader names a wrong type
    if not lo <= value <= hi:
        return f"{name}: {value} is outside {lo} to {hi}"
    return None


def _every_value(obj: dict[str, Any]) -> str | None:
    for path, value in _values(obj):
        if isinstance(value, str) and len(value) > MAX_VECTOR_STRING_CHARS:
            return (f"{path}: a string of {len(value)} characters, more than "
                    f"{MAX_VECTOR_STRING_CHARS}")
        if isinstance(value, float) and not math.isfinite(value):
            return f"{path}: {value} is not a finite number"
        if isinstance(value, int) and not isinstance(value, bool) and not _LOW <= value <= _HIGH:
            return f"{path}: {value} does not fit 64 bits"
    return None


def _kafka_assignor(obj: dict[str, Any]) -> str | None:
    total = 0
    for i, row in enumerate(obj.get("topics") or ()):
        if isinstance(row, list) and len(row) >= 2:
            why = _int_in(row[1], 0, MAX_VECTOR_PARTITIONS, f"topics[{i}]")
            if why:
                return why
            if isinstance(row[1], int):
                total += row[1]
    if total > MAX_VECTOR_PARTITIONS:
        return f"topics: {total} partitions in all, more than {MAX_VECTOR_PARTITIONS}"
    members = obj.get("members")
    if isinstance(members, list) and len(members) > MAX_VECTOR_MEMBERS:
        return f"members: {len(members)}, more than {MAX_VECTOR_MEMBERS}"
    return None


def _kafka_partitioner(obj: dict[str, Any]) -> str | None:
    why = _int_in(obj.get("sticky_batch_size"), 1, INT32_MAX, "sticky_batch_size")
    if why:
        return why
    return _steps(obj, "partitions", 1, MAX_VECTOR_PARTITIONS)


def _steps(obj: dict[str, Any], key: str, lo: int, hi: int) -> str | None:
    """The first step whose ``key`` is outside ``lo..hi``."""
    for i, step in enumerate(obj.get("steps") or ()):
        if isinstance(step, dict) and key in step:
            why = _int_in(step[key], lo, hi, f"steps[{i}].{key}")
            if why:
                return why
    return None


def _grpc(obj: dict[str, Any]) -> str | None:
    if "max_attempts" in obj:
        why = _int_in(obj["max_attempts"], 1, MAX_VECTOR_ATTEMPTS, "max_attempts")
        if why:
            return why
    for i, size in enumerate(obj.get("sizes") or ()):
        why = _int_in(size, 1, INT32_MAX, f"sizes[{i}]")
        if why:
            return why
    why = _steps(obj, "count", 0, MAX_VECTOR_ATTEMPTS)
    if why:
        return why
    for i, row in enumerate(obj.get("queue_datas") or ()):
        if isinstance(row, list):
            for j, value in enumerate(row[1:-1], start=1):    # (broker, counts..., perm)
                why = _int_in(value, 0, MAX_QUEUES, f"queue_datas[{i}][{j}]")
                if why:
                    return why
    return None


def _allocation(obj: dict[str, Any]) -> str | None:
    params = obj.get("params")
    if not isinstance(params, dict) or "virtual_node_cnt" not in params:
        return None
    # below zero is the strategy's own IllegalArgumentException, which vectors check
    return _ring(params["virtual_node_cnt"], obj.get("cid_all"), "params.virtual_node_cnt")


def _ring(nodes: object, consumers: object, field: str) -> str | None:
    why = _int_in(nodes, -INT32_MAX - 1, MAX_VECTOR_VIRTUAL_NODES, field)
    if why:
        return why
    if isinstance(nodes, int) and isinstance(consumers, list) and \
            nodes * len(consumers) > MAX_VECTOR_RING:
        return (f"{field}: {nodes} virtual nodes for each of "
                f"{len(consumers)} consumers, more than {MAX_VECTOR_RING} on the ring")
    return None


def _go_client(obj: dict[str, Any]) -> str | None:
    params = obj.get("params")
    if isinstance(params, dict) and "virtual_nodes" in params:
        why = _ring(params["virtual_nodes"], obj.get("cid_all"), "params.virtual_nodes")
        if why:
            return why
    for i, row in enumerate(obj.get("queue_datas") or ()):
        if isinstance(row, list):
            for j, value in enumerate(row[1:3], start=1):     # (broker, read, write, perm)
                why = _int_in(value, 0, MAX_QUEUES, f"queue_datas[{i}][{j}]")
                if why:
                    return why
    conf = obj.get("order_topic_conf")
    if isinstance(conf, str):
        for item in conf.split(";"):
            parts = item.split(":")
            count = parts[1] if len(parts) > 1 else ""
            digits = count.lstrip("+").lstrip("0")
            if re.fullmatch(r"\+?[0-9]+", count) and (len(digits) > 9 or
                                                      int(digits or "0") > MAX_QUEUES):
                return (f"order_topic_conf: {item[:40]!r} asks for more than {MAX_QUEUES} "
                        "queues")
    return None


_FAMILY = {"kafka-assignor": _kafka_assignor, "kafka-partitioner": _kafka_partitioner,
           "grpc": _grpc, "allocation": _allocation, "go-client": _go_client}


def check_record(kind: str, obj: dict[str, Any]) -> str | None:
    """The first bound ``obj`` (a record of ``kind``) breaks, as ``field: why``, or ``None``."""
    return _every_value(obj) or (_FAMILY[kind](obj) if kind in _FAMILY else None)
