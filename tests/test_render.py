"""The offline Altair renderer: deterministic ids, no bundle in stored outputs, safe scripts."""

from __future__ import annotations

import re

import altair as alt
import pandas as pd
import pytest

from rocketlb_core.viz import render


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    render.reset()
    monkeypatch.setenv(render.ENV_STATIC, "1")


def _chart(value: int = 1) -> alt.Chart:
    return alt.Chart(pd.DataFrame({"x": ["a", "b"], "y": [value, 2]})).mark_bar().encode(
        x="x:N", y="y:Q")


def test_same_chart_same_html_across_kernels() -> None:
    first = render.chart_html(_chart().to_dict())
    render.reset()
    assert render.chart_html(_chart().to_dict()) == first
    assert re.search(r'id="rlb-chart-1-[0-9a-f]{12}"', first)


def test_data_change_changes_output() -> None:
    a = render.chart_html(_chart(1).to_dict())
    render.reset()
    b = render.chart_html(_chart(5).to_dict())
    assert a != b
    assert '"y": 5' in b


def test_ids_count_up_and_spec_is_one_member_per_line() -> None:
    html1 = render.chart_html(_chart().to_dict())
    html2 = render.chart_html(_chart().to_dict())
    assert 'id="rlb-chart-1-' in html1
    assert 'id="rlb-chart-2-' in html2
    assert html1.count("\n") > 20


def test_static_mode_never_inlines_the_bundle() -> None:
    html = render.chart_html(_chart().to_dict())
    assert len(html) < 20_000
    assert "vegaEmbed" in html


def test_interactive_mode_inlines_the_bundle_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(render.ENV_STATIC)
    first = render.chart_html(_chart().to_dict())
    second = render.chart_html(_chart().to_dict())
    assert len(first) > 500_000          # Vega + Vega-Lite + vega-embed, from vl_convert
    assert len(second) < 20_000
    assert "cdn.jsdelivr" not in first


def test_script_cannot_be_closed_by_data() -> None:
    df = pd.DataFrame({"x": ["</script><script>alert(1)</script>"], "y": [1]})
    html = render.chart_html(alt.Chart(df).mark_bar().encode(x="x:N", y="y:Q").to_dict())
    assert html.count("</script>") == 1
    assert "\\u003c/script\\u003e" in html


def test_enable_registers_the_renderer() -> None:
    from rocketlb_core.viz import enable_charts

    enable_charts()
    assert alt.renderers.active == render.RENDERER
    bundle = _chart()._repr_mimebundle_()
    assert "rlb-chart-" in bundle[0]["text/html"] if isinstance(bundle, tuple) else \
        "rlb-chart-" in bundle["text/html"]
