"""Java arithmetic helpers. Expected values were printed by a real JVM (OpenJDK 17)."""

from __future__ import annotations

import pytest

from rocketlb_core.javamath import (
    INT_MAX,
    INT_MIN,
    jabs,
    java_split,
    java_string_compare,
    java_string_hash,
    java_string_key,
    jdiv,
    jmod,
    mask31,
    wrap32,
    wrap64,
)


@pytest.mark.parametrize(("x", "expected"), [
    (0, 0), (INT_MAX, INT_MAX), (INT_MAX + 1, INT_MIN), (INT_MIN - 1, INT_MAX),
    (2**32, 0), (2**32 + 5, 5), (-(2**32) - 1, -1), (3 * 2**31, INT_MIN),
])
def test_wrap32(x: int, expected: int) -> None:
    assert wrap32(x) == expected


def test_wrap64() -> None:
    assert wrap64(2**63) == -(2**63)
    assert wrap64(-(2**63) - 1) == 2**63 - 1


def test_abs_of_min_int_stays_negative() -> None:
    assert jabs(INT_MIN) == INT_MIN
    assert jabs(INT_MIN + 1) == INT_MAX
    assert jabs(-5) == 5


@pytest.mark.parametrize(("a", "b", "expected"), [
    (7, 3, 1), (-7, 3, -1), (7, -3, 1), (-7, -3, -1), (INT_MIN, 8, 0), (INT_MIN, 7, -2),
    (INT_MIN, 10, -8), (-1, 4, -1),
])
def test_truncating_remainder(a: int, b: int, expected: int) -> None:
    assert jmod(a, b) == expected


def test_remainder_and_division_by_zero_raise() -> None:
    with pytest.raises(ZeroDivisionError):
        jmod(1, 0)
    with pytest.raises(ZeroDivisionError):
        jdiv(1, 0)


def test_truncating_division() -> None:
    assert (jdiv(-7, 2), jdiv(7, -2), jdiv(7, 2)) == (-3, -3, 3)


def test_mask31() -> None:
    assert mask31(INT_MIN) == 0
    assert mask31(-1) == INT_MAX
    assert mask31(wrap32(INT_MAX + 1)) == 0


def test_utf16_order_differs_from_code_point_order() -> None:
    # U+FF21 (fullwidth A) is above the surrogate range, U+1F600 is encoded as D83D DE00.
    high, astral = "\uff21", "\U0001f600"
    assert high < astral                              # Python: code points
    assert java_string_compare(astral, high) == -1    # Java: code units
    assert sorted([high, astral], key=java_string_key) == [astral, high]
    assert java_string_compare("a", "ab") == -1
    assert java_string_compare("b", "ab") == 1
    assert java_string_compare("x", "x") == 0


@pytest.mark.parametrize(("s", "expected"), [
    ("RocketMQ", -453554280),            # "RocketMQ".hashCode() on OpenJDK 17
    ("\U0001f600x", 54959989),           # a surrogate pair, then 'x'
    ("", 0),
    ("polygenelubricants", INT_MIN),     # the classic string whose hash is Integer.MIN_VALUE
])
def test_java_string_hash(s: str, expected: int) -> None:
    assert java_string_hash(s) == expected


@pytest.mark.parametrize(("s", "parts"), [
    ("room1@broker-a", ["room1", "broker-a"]),
    ("room1@broker-a@", ["room1", "broker-a"]),   # trailing empty piece dropped
    ("@broker", ["", "broker"]),                   # leading empty piece kept
    ("room1@", ["room1"]),
    ("a@b@c", ["a", "b", "c"]),
    ("@", []),
    ("@@", []),
    ("", [""]),
    ("plain", ["plain"]),
])
def test_java_split(s: str, parts: list[str]) -> None:
    assert java_split(s, "@") == parts
