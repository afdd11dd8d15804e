"""The book's live figures, computed by the package: one implementation for both places a
figure runs.

* In the static web book, the figure's JavaScript calls ``handle_json`` in the page's Pyodide
  (``rocketlb-live.js`` loads the core on the first interaction).
* In JupyterLab, the same JavaScript sends the same request to the kernel, whose widget
  (``rocketlb_core.viz.widgets``) calls ``handle``.

Either way the answer comes from this module and the modules it dispatches to; the JavaScript
only draws. Figures:

``playground``  the producer's selection and send loop (``interactive.playground``)
``board``       every allocation strategy on a group you drag (``interactive.board``)
``kafka-board`` Kafka's assignors on racks you choose (``interactive.kafka_board``)
``explorer``    a scenario run and a time scrubber (``interactive.explorer``)
``exercise``    a self-checking answer (``interactive.exercises``)

A figure keeps state between interactions (a producer's counter and fault table, the board's
previous split, a scenario run) in a session named by the page; sessions live in this process.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from rocketlb_core.errors import InputError
from rocketlb_core.interactive import board, exercises, explorer, kafka_board, playground
from rocketlb_core.limits import MAX_REQUEST_BYTES

KINDS = ("playground", "board", "explorer", "exercise", "kafka-board")
MAX_SESSIONS = 64
"""Sessions kept per process (the least recently used go first)."""

_SESSIONS: OrderedDict[tuple[str, str], Any] = OrderedDict()


def handle(kind: str, session: str, request: Any) -> dict[str, Any]:
    """Answer one interaction of a live figure. Bad requests answer ``{"error": message}``
    (the figure shows it) instead of raising."""
    try:
        if kind not in KINDS:
            raise InputError(f"unknown live figure {kind!r} (known: {', '.join(KINDS)})")
        if kind == "exercise":
            return exercises.check(request)
        step = {"playground": playground.step, "board": board.step,
                "explorer": explorer.step, "kafka-board": kafka_board.step}[kind]
        key = (kind, str(session))
        state, view = step(_SESSIONS.get(key), request)  # type: ignore[operator]
        _SESSIONS[key] = state
        _SESSIONS.move_to_end(key)
        while len(_SESSIONS) > MAX_SESSIONS:
            _SESSIONS.popitem(last=False)
        return dict(view)
    except InputError as exc:
        return {"error": str(exc)}
    except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as exc:
        # a request no field check caught: an answer saying so, never an exception in the page
        return {"error": f"request: cannot be answered ({type(exc).__name__}: {exc})"[:300]}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def handle_json(kind: str, session: str, request: str) -> str:
    """``handle`` with the request and the answer as JSON text (what Pyodide passes): at most
    ``MAX_REQUEST_BYTES``, no ``NaN`` or ``Infinity``, nesting no deeper than the parser allows
    (each refusal an ``{"error": ...}`` answer)."""
    if not isinstance(request, str) or len(request) > MAX_REQUEST_BYTES:
        return json.dumps({"error": f"request: not JSON text of at most {MAX_REQUEST_BYTES:,} "
                                    "characters"})
    try:
        parsed = json.loads(request, parse_constant=_no_constant)
    except RecursionError:
        return json.dumps({"error": "request: not JSON (nested too deeply)"})
    except ValueError as exc:
        return json.dumps({"error": f"request: not JSON ({exc})"[:300]})
    return json.dumps(handle(kind, session, parsed), sort_keys=True, allow_nan=False)
