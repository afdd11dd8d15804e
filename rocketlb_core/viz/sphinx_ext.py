"""A small Sphinx extension for the book (listed under ``sphinx.extra_extensions`` in
``_config.yml``).

Jupyter Book 1 always loads sphinx-thebe, which adds its configuration as an inline script that
declares ``const THEBE_JS_URL`` on every page; the page ends up declaring it twice and the browser
logs ``Identifier 'THEBE_JS_URL' has already been declared`` on every page. The book does not use
thebe (``launch_buttons.thebe: false``; pages run their code with the live model, Pyodide served
from the book), so this extension removes sphinx-thebe's inline configuration and its loader from
the pages. A page then logs no error at all, which the browser tests hold it to.

It also:

* sets the theme's ``default_mode`` (an ``html_context`` value) to ``auto``: left empty (Jupyter
  Book's default), a reader's first visit logs ``Got invalid theme mode: . Resetting to auto.``;
* drops the header's search field (``navbar_persistent``) and the article header's search button
  (``rlb-article-header-buttons.html`` in ``viz/templates``): the sidebar's search field is the
  page's one search box; its accessible name says what it shows ("Search Ctrl+K",
  ``viz/templates/search-button-field.html``), and the colour-mode button's icons are hidden
  from screen readers (``viz/templates/theme-switcher.html``: their titles clashed with its
  name);
* serves the live figures' current drawing code: a notebook stores each anywidget's ``_esm`` and
  ``_css`` as they were when its outputs were made; the page gets the package's own
  (``viz/js``), so the figures' labels and keyboard reach the book with the package.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).parent / "templates"


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


def theme_options(app: Any, config: Any) -> None:
    """``config-inited``: one search box (the sidebar's) and a valid default colour mode."""
    options = dict(config.html_theme_options or {})
    options["article_header_end"] = ["rlb-article-header-buttons.html"]
    options["navbar_persistent"] = []          # pydata's header would repeat the search field
    config.html_theme_options = options
    config.html_context = {"default_mode": "auto", **dict(config.html_context or {})}
    config.templates_path = [*list(config.templates_path or []), str(TEMPLATES)]


def _current_code() -> dict[str, tuple[str, str]]:
    """The live figures' ``_esm`` and ``_css`` as the package has them, by anywidget class."""
    from rocketlb_core.viz import widgets

    out = {}
    for name in ("Playground", "Board", "KafkaBoard", "Explorer", "Exercise", "RouteExplorer"):
        cls = getattr(widgets, name, None)
        if cls is None:
            continue
        out[f"rocketlb_core.viz.widgets.{name}"] = (str(cls._esm), str(getattr(cls, "_css", "")))
    return out


def refresh_widgets(app: Any, pagename: str, templatename: str, context: dict[str, Any],
                    doctree: Any) -> None:
    """``html-page-context``: the page's stored widget state with the figures' current code."""
    from myst_nb.core.render import sanitize_script_content

    for script in context.get("script_files") or []:
        attributes = getattr(script, "attributes", {})
        if attributes.get("type") != "application/vnd.jupyter.widget-state+json":
            continue
        state = json.loads(attributes["body"])   # "<\/script>" is JSON for "</script>"
        code = _current_code()
        changed = False
        for model in state.get("state", {}).values():
            st = model.get("state", {})
            current = code.get(st.get("_anywidget_id", ""))
            if current and (st.get("_esm"), st.get("_css")) != current:
                st["_esm"], st["_css"] = current
                changed = True
        if changed:
            attributes["body"] = sanitize_script_content(json.dumps(state))


HIDDEN_SUMMARY = '<summary aria-label="Toggle hidden content">'


def name_toggles(app: Any, pagename: str, templatename: str, context: dict[str, Any],
                 doctree: Any) -> None:
    """``html-page-context``: myst-nb names a hidden cell's toggle "Toggle hidden content" while
    it shows "Show code cell source" (axe: label-content-name-mismatch); the toggle is named by
    what it shows instead."""
    body = context.get("body")
    if isinstance(body, str) and HIDDEN_SUMMARY in body:
        context["body"] = body.replace(HIDDEN_SUMMARY, "<summary>")


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", theme_options)
    app.connect("html-page-context", drop_thebe, priority=900)
    app.connect("html-page-context", refresh_widgets, priority=901)
    app.connect("html-page-context", name_toggles, priority=902)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
