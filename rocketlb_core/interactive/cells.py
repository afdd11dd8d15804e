"""Running a chapter's code cell in the reader's browser ("run in the browser", book pages).

``rocketlb-live.js`` offers the control on the cells ``rocketlb_core.notebooks.tag_cells`` tagged
``rocketlb-browser`` (core and standard library only). It runs the page's earlier such cells
first, once, then the one clicked, as the reader edited it, in one namespace per page, as a
kernel would. What a cell prints is captured; a last expression's value is shown the way
Jupyter shows it (``repr``, or ``pprint`` for a value whose ``repr`` is long).

This is the reader's own code in the reader's own browser (Pyodide); the kernel never receives
it, and nothing else calls ``run``.
"""

from __future__ import annotations

import ast
import contextlib
import io
import pprint
import traceback
from typing import Any

_PAGES: dict[str, dict[str, Any]] = {}
WIDTH = 79


def show(value: Any) -> str:
    """A last expression's value as text (IPython's plain-text form for the usual cases)."""
    text = repr(value)
    if len(text) > WIDTH and isinstance(value, (dict, list, tuple, set, frozenset)):
        return pprint.pformat(value, width=WIDTH, sort_dicts=False)
    return text


def run(page: str, code: str) -> dict[str, str | None]:
    """Run ``code`` in ``page``'s namespace: ``{"stdout", "result", "error"}``."""
    scope = _PAGES.setdefault(page, {"__name__": "__main__"})
    out = io.StringIO()
    result: str | None = None
    error: str | None = None
    try:
        tree = ast.parse(code, "<cell>")
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        body = ast.Module(tree.body[:-1] if last else tree.body, type_ignores=[])
        with contextlib.redirect_stdout(out):
            exec(compile(body, "<cell>", "exec"), scope)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), scope)
                if value is not None:
                    result = show(value)
    except BaseException as exc:
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return {"stdout": out.getvalue(), "result": result, "error": error}
