"""Hostile requests to the live figures (issue 44, item 6): what a reader's page sends to
``interactive.handle_json`` (Pyodide) or ``handle`` (the kernel) is data typed in a browser. Any
request gets a JSON answer, an ``{"error": ...}`` naming what is wrong or a view, within one
request's bounded work (``limits.MAX_REQUEST_*``): never an exception out of the page's Python,
never a frozen page, never ``NaN`` in the answer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketlb_core import data_path
from rocketlb_core.interactive import KINDS, handle, handle_json
from rocketlb_core.limits import MAX_REQUEST_BYTES
from tests.helpers import alarm
from tests.test_fuzz import TRIED

HOSTILE_TEXTS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1" * 5000, '"٤"', '"４"',
                 "[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000]


def _answer(kind: str, text: str) -> dict[str, Any]:
    with alarm(20):                  # one request never runs for minutes
        out = handle_json(kind, "hostile", text)
    parsed = json.loads(out)         # valid JSON, without NaN (allow_nan=False on the way out)
    assert isinstance(parsed, dict)
    return parsed


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("text", HOSTILE_TEXTS, ids=lambda t: t[:12])
def test_hostile_json_texts(kind: str, text: str) -> None:
    assert "error" in _answer(kind, text)
    TRIED["requests: hostile JSON"] += 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_request_larger_than_its_bound(kind: str) -> None:
    answer = _answer(kind, json.dumps({"pad": "x" * MAX_REQUEST_BYTES}))
    assert "at most" in answer["error"]


@pytest.mark.parametrize("answer", ["nan", "inf", "1e999", "-inf", "NaN", "٤", "４", "1_0"])
def test_an_exercise_answer_that_is_no_number(answer: str) -> None:
    request = {"exercise": "not_available_ms", "answer": answer,
               "params": {"line": "4.9.8", "latency_ms": 600}}
    out = handle("exercise", "x", request)
    assert out.get("right") is False or "error" in out, out


def test_an_explorer_scenario_too_big_for_one_request() -> None:
    text = data_path("scenarios", "steady-state.toml").read_text(encoding="utf-8")
    assert "duration_ms = 120_000" in text
    big = text.replace("duration_ms = 120_000", "duration_ms = 3_600_000")   # an hour
    with alarm(20):
        out = handle("explorer", "big", {"scenario": "steady-state", "toml": big, "t_ms": 0})
    assert "more than a live figure runs in one request" in out["error"], out
    with alarm(60):                  # the shipped one still runs
        ok = handle("explorer", "ok", {"scenario": "steady-state", "toml": text, "t_ms": 0})
    assert "error" not in ok, ok


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=12), inner,
                                                                max_size=6),
    max_leaves=40)
KEYS = st.sampled_from(["config", "op", "n", "state", "scenario", "toml", "t_ms", "seed",
                        "exercise", "params", "answer", "reveal", "client", "brokers",
                        "consumers", "strategy", "queues", "latency_ms", "line", "racks"])


@settings(max_examples=300, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(KINDS), request=st.dictionaries(KEYS, JSONISH, max_size=6))
def test_any_request_gets_an_answer(kind: str, request: dict[str, Any]) -> None:
    with alarm(20):
        out = handle(kind, "fuzz", request)
    assert isinstance(out, dict)
    json.dumps(out, allow_nan=False)
    TRIED["requests: any"] += 1
    if "error" in out:
        TRIED["requests: any: refused"] += 1
