"""A small Sphinx extension for the book (listed under ``sphinx.extra_extensions`` in
``_config.yml``).

Jupyter Book 1 always loads sphinx-thebe, which adds its configuration as an inline script that
declares ``const THEBE_JS_URL`` on every page; the page ends up declaring it twice and the browser
logs ``Identifier 'THEBE_JS_URL' has already been declared`` on every page. The book does not use
thebe (``launch_buttons.thebe: false``; pages run their code with the live model, Pyodide served
from the book), so this extension removes sphinx-thebe's inline configuration and its loader from
the pages. A page then logs no error at all, which the browser tests hold it to.
"""

from __future__ import annotations

from typing import Any


def _is_thebe(script: Any) -> bool:
    body = str(getattr(script, "attributes", {}).get("body", "") or "")
    name = str(getattr(script, "filename", "") or "")
    return "THEBE_JS_URL" in body or name.endswith("sphinx-thebe.js")


def drop_thebe(app: Any, pagename: str, templatename: str, context: dict[str, Any],
               doctree: Any) -> None:
    """``html-page-context``: the page's scripts without sphinx-thebe's."""
    scripts = context.get("script_files")
    if scripts:
        context["script_files"] = [s for s in scripts if not _is_thebe(s)]


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
