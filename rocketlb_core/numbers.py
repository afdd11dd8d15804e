"""One reader for every number written as text (issue 44): a count, offset, id, time, size or
rate read from a CSV cell, a log line, a command-line option or a TOML file.

Python's own readers are too kind for inputs: ``int("1_0")`` is 10, ``int("+4")`` and
``int(" 4 ")`` are 4, ``int("٤")`` (an Arabic-Indic four) and ``int("４")`` (a full-width one) are
4, ``float("nan")`` and ``float("1e999")`` are numbers, and TOML writes ``1_0``, ``+4``, ``0x10``,
``inf`` and ``nan`` as numbers too. A route with ``write_queue_nums = 1_0`` was replayed as 10
queues. Here a number is ASCII digits with an optional leading ``-`` (a float may add a fraction
and an exponent), nothing else, at most ``MAX_CHARS`` characters, finite, and inside the range
the field documents; anything else is a ``NumberError`` whose message the caller puts beside the
file, row and field.

>>> parse_int("42", 0, 100)
42
>>> parse_int("-3", -10, 10)
-3
>>> for text in ("1_0", "+4", " 4", "٤", "４", "0x10", "4.0", ""):
...     try:
...         parse_int(text, 0, 100)
...     except NumberError as exc:
...         print(exc)
'1_0' is not an integer written in ASCII digits
'+4' is not an integer written in ASCII digits
' 4' is not an integer written in ASCII digits
'٤' is not an integer written in ASCII digits
'４' is not an integer written in ASCII digits
'0x10' is not an integer written in ASCII digits
'4.0' is not an integer written in ASCII digits
'' is not an integer written in ASCII digits
>>> parse_int("2147483648", 0, INT32_MAX)
Traceback (most recent call last):
...
rocketlb_core.numbers.NumberError: 2147483648 is outside 0 to 2147483647
>>> parse_float("2.5e1", 0, 100)
25.0
>>> parse_float("1e999", 0, 1e6)
Traceback (most recent call last):
...
rocketlb_core.numbers.NumberError: '1e999' is not a finite number
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

MAX_CHARS = 32
"""The longest number text read (a Java long is 20 characters with its sign; a double's
shortest form at most 24): a longer one is refused before any conversion."""
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


class NumberError(ValueError):
    """A number's text or value that a field does not accept; the message names the text."""


def _shown(text: str) -> str:
    return repr(text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + "...")


def parse_int(text: str, lo: int, hi: int) -> int:
    """``text`` as an integer in ``lo..hi`` (both included): ASCII digits, an optional leading
    ``-``, nothing else."""
    if len(text) > MAX_CHARS or not _INT.fullmatch(text):
        raise NumberError(f"{_shown(text)} is not an integer written in ASCII digits")
    value = int(text)
    if not lo <= value <= hi:
        raise NumberError(f"{value} is outside {lo} to {hi}")
    return value


def parse_float(text: str, lo: float, hi: float) -> float:
    """``text`` as a finite number in ``lo..hi`` (both included): ASCII digits with an optional
    leading ``-``, fraction and exponent; no ``inf``, ``nan``, ``_``, ``+`` or spaces."""
    if len(text) > MAX_CHARS or not _FLOAT.fullmatch(text):
        raise NumberError(f"{_shown(text)} is not a number written in ASCII digits")
    value = float(text)
    if not math.isfinite(value):
        raise NumberError(f"{_shown(text)} is not a finite number")
    if not lo <= value <= hi:
        raise NumberError(f"{text} is outside {lo:g} to {hi:g}")
    return value


def int_option(lo: int, hi: int) -> Callable[[str], int]:
    """An ``argparse`` ``type=`` for an integer option in ``lo..hi``: a bad value is argparse's
    usage error (exit 2) naming the option.

    >>> ap = argparse.ArgumentParser(prog="x", exit_on_error=False)
    >>> _ = ap.add_argument("--seed", type=int_option(0, INT64_MAX))
    >>> ap.parse_args(["--seed", "7"]).seed
    7
    >>> ap.parse_args(["--seed", "1_0"])
    Traceback (most recent call last):
    ...
    argparse.ArgumentError: argument --seed: '1_0' is not an integer written in ASCII digits
    """
    return _option(parse_int, lo, hi, f"integer from {lo} to {hi}")


def float_option(lo: float, hi: float) -> Callable[[str], float]:
    """An ``argparse`` ``type=`` for a finite number option in ``lo..hi``."""
    return _option(parse_float, lo, hi, f"number from {lo:g} to {hi:g}")


def _option(parse: Callable[[str, Any, Any], T], lo: Any, hi: Any, name: str
            ) -> Callable[[str], T]:
    def read(text: str) -> T:
        try:
            return parse(text, lo, hi)
        except NumberError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    read.__name__ = name              # argparse names the type in its own messages
    return read


# ---------------------------------------------------------------- TOML's numbers, as written

_BARE = re.compile(r"[A-Za-z0-9_+\-.:]+")
_PLAIN_VALUE = re.compile(
    r"-?(?:[0-9]{1,3}(?:_[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE]-?[0-9]+)?|true|false")


def check_toml_numbers(text: str) -> None:
    """Refuse a TOML document whose values write a number other than plainly (``1_0``, ``+4``,
    ``0x10``, ``0o7``, ``0b1``, ``inf``, ``nan``, a date): ``tomllib`` reads those as numbers,
    this reader's rule does not. One liberty TOML's readers expect is kept: thousands grouped by
    ``_`` (``300_000``, ``1_200_000``, as the shipped scenarios write durations); any other
    underscore (``1_0``, ``30_00``) is refused. Keys, strings and comments are left alone.
    Raises ``NumberError`` naming the line.

    >>> check_toml_numbers('a_b = 10\\nname = "x_1 +4"  # 1_0\\n[t.u_v]\\nr = [1, -2.5e3, true]')
    >>> check_toml_numbers('duration_ms = 1_200_000')
    >>> check_toml_numbers('duration_ms = 30_00')
    Traceback (most recent call last):
    ...
    rocketlb_core.numbers.NumberError: line 1: '30_00' is not a number written in ASCII digits
    >>> check_toml_numbers('rate = 1_0')
    Traceback (most recent call last):
    ...
    rocketlb_core.numbers.NumberError: line 1: '1_0' is not a number written in ASCII digits
    >>> check_toml_numbers('x = { n = +4 }')
    Traceback (most recent call last):
    ...
    rocketlb_core.numbers.NumberError: line 1: '+4' is not a number written in ASCII digits
    """
    i, n, line = 0, len(text), 1
    in_value, depth, at_line_start = False, 0, True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            at_line_start = True
            if depth == 0:
                in_value = False
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c in "\"'":
            triple = text.startswith(c * 3, i)
            end_mark = c * 3 if triple else c
            j = i + len(end_mark)
            while j < n and not text.startswith(end_mark, j):
                if c == '"' and text[j] == "\\":
                    j += 1
                if text[j] == "\n":
                    line += 1
                j += 1
            i = j + len(end_mark)
            at_line_start = False
            continue
        if c == "[" and at_line_start and not in_value:          # a table header
            while i < n and text[i] != "\n":
                i += 1
            continue
        at_line_start = False
        if c == "=":
            in_value = True
            i += 1
            continue
        if c in "[{" and in_value:
            depth += 1
        elif c in "]}" and in_value:
            depth = max(0, depth - 1)
        m = _BARE.match(text, i)
        if not m:
            i += 1
            continue
        token, i = m.group(), m.end()
        rest = text[i:i + 64].lstrip(" \t")
        if rest.startswith("="):                                  # a key
            continue
        if in_value and not _PLAIN_VALUE.fullmatch(token):
            raise NumberError(f"line {line}: {_shown(token)} is not a number written in "
                              "ASCII digits")
