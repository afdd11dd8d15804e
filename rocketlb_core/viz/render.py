"""A deterministic, offline Altair renderer.

Altair's default HTML renderer loads Vega from a CDN and gives every chart a random ``div`` id, so
charts neither render offline nor compare under nbval. This renderer emits ``text/html`` with:

* a deterministic id ``rlb-chart-<n>-<sha1 of the spec>`` (``n`` counts charts in the kernel);
* the spec pretty-printed (one JSON member per line, keys sorted), so nbval diffs are line-based;
* a script that calls the page-global ``vegaEmbed``, waiting for it if the page is still loading.

Where ``vegaEmbed`` comes from:

* in the web book the page loads ``_static/vega-bundle.js`` once (``rocketlb_core.viz.assets``),
  and the notebooks' stored outputs were produced with ``ROCKETLB_STATIC_VEGA=1``, so no chart
  carries the 900 KB bundle;
* in an interactive kernel (the variable unset) the first chart of the kernel inlines the bundle
  from ``vl_convert``, so JupyterLab draws charts offline too.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

RENDERER = "rocketlb"
ENV_STATIC = "ROCKETLB_STATIC_VEGA"
_EMBED_OPTIONS = {"actions": False, "renderer": "canvas"}


class _State:
    counter = 0
    bundle_sent = False


def reset() -> None:
    """Restart chart numbering (used by tests; a fresh kernel starts at 1 anyway)."""
    _State.counter = 0
    _State.bundle_sent = False


def _script_json(value: Any) -> str:
    text = json.dumps(value, indent=1, sort_keys=True, ensure_ascii=True)
    # Nothing inside a <script> may close it or open a comment.
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_GLOBALS = "window.vegaEmbed = vegaEmbed; window.vegaLite = vegaLite; window.vega = vega;"


def vega_bundle_js() -> str:
    """Vega, Vega-Lite and vega-embed (from ``vl_convert``, offline) as one script that defines
    ``window.vegaEmbed``. It is wrapped in a function so that its top-level ``const`` names cannot
    collide with a page's own globals (the book theme has some)."""
    import vl_convert

    return "(function(){\n" + vl_convert.javascript_bundle(_GLOBALS) + "\n})();\n"


def _bundle_script() -> str:
    return '<script type="text/javascript">' + vega_bundle_js() + "</script>\n"


def chart_html(spec: dict[str, Any]) -> str:
    """The HTML of one chart: a target ``div`` and the script that draws ``spec`` into it."""
    _State.counter += 1
    spec_json = _script_json(spec)
    digest = hashlib.sha1(spec_json.encode()).hexdigest()[:12]
    div_id = f"rlb-chart-{_State.counter}-{digest}"
    prefix = ""
    if not os.environ.get(ENV_STATIC) and not _State.bundle_sent:
        prefix = _bundle_script()
        _State.bundle_sent = True
    return (
        f'{prefix}<div id="{div_id}" class="rlb-chart"></div>\n'
        '<script type="text/javascript">\n'
        "(function () {\n"
        f'  var id = "{div_id}";\n'
        f"  var spec = {spec_json};\n"
        f"  var opt = {json.dumps(_EMBED_OPTIONS, sort_keys=True)};\n"
        "  function draw() {\n"
        "    var el = document.getElementById(id);\n"
        "    if (!el) { return; }\n"
        "    window.vegaEmbed(el, spec, opt).then(function (r) { el.rlbView = r.view; })"
        ".catch(function (err) {\n"
        '      el.textContent = "chart failed: " + err; console.error(err);\n'
        "    });\n"
        "  }\n"
        "  if (window.vegaEmbed) { draw(); return; }\n"
        "  var tries = 0;\n"
        "  var timer = setInterval(function () {\n"
        "    if (window.vegaEmbed) { clearInterval(timer); draw(); }\n"
        "    else if (++tries > 400) { clearInterval(timer);\n"
        '      console.error("rocketlb: vegaEmbed never loaded for " + id); }\n'
        "  }, 25);\n"
        "})();\n"
        "</script>"
    )


# Every chart of the book: legends and axis titles are never cut short (Vega truncates labels
# longer than 160 px with an ellipsis by default), and the chart draws on white in both themes.
BOOK_CONFIG: dict[str, Any] = {
    "background": "white",
    "legend": {"labelLimit": 0, "titleLimit": 0},
    "axis": {"titleLimit": 0},
    "title": {"limit": 0},
}


def with_book_config(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with ``BOOK_CONFIG`` under its own config (the chart's own settings win)."""
    config = dict(spec.get("config", {}))
    for key, value in BOOK_CONFIG.items():
        if isinstance(value, dict):
            config[key] = {**value, **config.get(key, {})}
        else:
            config.setdefault(key, value)
    return {**spec, "config": config}


def renderer(spec: dict[str, Any], **_metadata: Any) -> dict[str, str]:
    """Altair renderer entry point: a MIME bundle with the chart's HTML."""
    return {"text/html": chart_html(with_book_config(spec))}


def enable_charts() -> None:
    """Register and enable the ``rocketlb`` renderer for Altair (idempotent)."""
    import altair as alt

    if RENDERER not in alt.renderers.names():
        alt.renderers.register(RENDERER, renderer)
    alt.renderers.enable(RENDERER)
