"""Checked reading of a live figure's request (a JSON object from the page or the kernel).

A request is data from a reader's browser: every field is checked for type and range, and a bad
one raises ``RequestError`` naming the field, never a crash deep in the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rocketlb_core.errors import InputError


class RequestError(InputError):
    """A live figure's request that the model cannot run (the message names the field)."""


def table(raw: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise RequestError(f"{where}: expected an object, got {type(raw).__name__}")
    return raw


def integer(raw: Mapping[str, Any], key: str, where: str, default: int | None = None, *,
            low: int, high: int) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{where}.{key}: expected an integer, got {value!r}"[:200])
    if not low <= value <= high:
        raise RequestError(f"{where}.{key}: {value} is outside [{low}, {high}]")
    return value


def flag(raw: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise RequestError(f"{where}.{key}: expected true or false, got {value!r}"[:200])
    return value


def choice(raw: Mapping[str, Any], key: str, where: str, options: Sequence[str],
           default: str | None = None) -> str:
    value = raw.get(key, default)
    if value not in options:
        raise RequestError(f"{where}.{key}: expected one of {', '.join(options)}, "
                           f"got {value!r}"[:300])
    return str(value)


def items(raw: Mapping[str, Any], key: str, where: str, *, low: int, high: int) -> list[Any]:
    value = raw.get(key)
    if not isinstance(value, list):
        raise RequestError(f"{where}.{key}: expected a list, got {type(value).__name__}")
    if not low <= len(value) <= high:
        raise RequestError(f"{where}.{key}: {len(value)} entries, expected {low} to {high}")
    return value


def numbered(raw: Mapping[str, Any], key: str, where: str, noun: str, most: int,
             options: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``raw[key]``: a table of ``c1`` ... ``cN`` (1 <= N <= ``most``, none missing), each one
    of ``options``; the (name, option) pairs in order. The boards' consumers (``board``: each
    one's zone; ``kafka_board``: each member's rack)."""
    field = f"{where}.{key}"
    got = table(raw.get(key), field)
    if not 1 <= len(got) <= most:
        raise RequestError(f"{field}: {len(got)} {noun}, expected 1 to {most}")
    pairs = []
    for k in range(1, len(got) + 1):
        name = f"c{k}"
        if name not in got:
            raise RequestError(f"{field}: expected {noun} c1 to c{len(got)}; {name} is missing")
        if got[name] not in options:
            raise RequestError(f"{field}.{name}: expected one of {', '.join(options)}, "
                               f"got {got[name]!r}"[:200])
        pairs.append((name, str(got[name])))
    return tuple(pairs)
