"""Chart builders for the book (Altair). Data in, chart out; no I/O, no Spark.

Render them with ``rocketlb_core.viz.enable_charts()`` active so they draw offline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Sequence

    import altair as alt
    import pandas as pd


def _legend(columns: int) -> alt.Legend:
    """The book's legend: under the chart, in ``columns`` columns, never cut (``render``)."""
    import altair as alt

    return alt.Legend(orient="bottom", columns=columns)


def queue_layout_chart(frame: pd.DataFrame) -> alt.Chart:
    """Grouped bars of ``rocketlb_core.viz.tables.queue_layout_frame``, with a radio button (no
    kernel needed) per topic."""
    import altair as alt

    topics = sorted(frame["topic"].unique())
    pick = alt.param(name="topic", value=topics[0],
                     bind=alt.binding_radio(options=topics, name="topic: "))
    return (
        alt.Chart(frame, title="Queues per broker, as producers and consumers see them")
        .mark_bar()
        .encode(
            x=alt.X("broker:N", title=None, axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("side:N"),
            y=alt.Y("queues:Q", title="queues", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color("side:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=["topic:N", "broker:N", "side:N", "queues:Q"],
        )
        .add_params(pick)
        .transform_filter(alt.datum.topic == pick)
        .properties(width=360, height=220)
    )


def broker_share_chart(frame: pd.DataFrame, setting_name: str = "sendLatencyFaultEnable",
                       title: str = "Where messages went, per 10 s") -> alt.Chart:
    """Stacked bars of messages per broker over time, with a radio button (no kernel needed)
    choosing which setting's replay is shown. ``frame`` from
    ``rocketlb_core.viz.tables.broker_share_over_time``."""
    import altair as alt

    settings = list(dict.fromkeys(frame["setting"]))
    pick = alt.param(name="setting", value=settings[0],
                     bind=alt.binding_radio(options=settings, name=f"{setting_name}: "))
    return (
        alt.Chart(frame, title=title).mark_bar()
        .encode(x=alt.X("t_s:O", title="time (s)", axis=alt.Axis(labelAngle=0, labelOverlap=True)),
                y=alt.Y("messages:Q", title="messages", stack="zero"),
                color=alt.Color("broker:N", title=None, legend=alt.Legend(orient="bottom"),
                                scale=alt.Scale(scheme="tableau10")),
                tooltip=["setting:N", "t_s:O", "broker:N", "messages:Q"])
        .add_params(pick).transform_filter(alt.datum.setting == pick)
        .properties(width=560, height=220)
    )


def latency_table_chart(frame: pd.DataFrame) -> alt.Chart:
    """Step lines: reported latency -> how long the broker is avoided, per line."""
    import altair as alt

    return (
        alt.Chart(frame, title="How long a broker is avoided after a report")
        .mark_line(interpolate="step-after", point=True)
        .encode(x=alt.X("latency_ms:Q", title="reported latency (ms)",
                        scale=alt.Scale(type="symlog")),
                y=alt.Y("not_available_s:Q", title="not available for (s)"),
                color=alt.Color("line:N", title="RocketMQ"),
                tooltip=["line:N", "latency_ms:Q", "not_available_s:Q"])
        .properties(width=480, height=220)
    )




def bar_chart(frame: pd.DataFrame, x: str, y: str, color: str | None = None,
              title: str = "", y_title: str | None = None, grouped: bool = False) -> alt.Chart:
    """A plain bar chart (for the book's small counts); ``y_title`` names the unit. With
    ``color`` the bars stack, or stand side by side when ``grouped``."""
    import altair as alt

    enc: dict[str, Any] = {"x": alt.X(f"{x}:N", title=None, sort=None,
                                      axis=alt.Axis(labelAngle=-45)),
                           "y": alt.Y(f"{y}:Q", title=y_title or y),
                           "tooltip": list(frame.columns)}
    if color:
        enc["color"] = alt.Color(f"{color}:N", title=None, sort=None,
                                 legend=_legend(2))
        if grouped:
            enc["xOffset"] = alt.XOffset(f"{color}:N", sort=None)
    return alt.Chart(frame, title=title).mark_bar().encode(**enc).properties(width=480,
                                                                               height=200)


def facet_bars_chart(frame: pd.DataFrame, x: str, y: str, facet: str, title: str = "",
                     color: str | None = None) -> alt.Chart:
    """Small bar charts side by side, one per value of ``facet`` (each with its own y scale:
    the measures have different units, named in the facet value)."""
    import altair as alt

    enc: dict[str, Any] = {
        "x": alt.X(f"{x}:N", title=None, sort=None, axis=alt.Axis(labelAngle=-40)),
        "y": alt.Y(f"{y}:Q", title=None),
        "color": alt.Color(f"{color or x}:N", title=None, sort=None,
                           legend=_legend(3)),
        "tooltip": list(frame.columns),
    }
    return (
        alt.Chart(frame).mark_bar().encode(**enc).properties(width=150, height=160)
        .facet(column=alt.Column(f"{facet}:N", title=None, sort=None,
                                 header=alt.Header(labelFontWeight="bold", labelLimit=0)),
               title=title)
        .resolve_scale(y="independent")
    )


def line_chart(frame: pd.DataFrame, x: str, y: str, color: str, title: str = "",
               x_title: str | None = None, y_title: str | None = None) -> alt.Chart:
    """Lines with points of ``y`` over a quantitative ``x``, one per ``color``."""
    import altair as alt

    return (
        alt.Chart(frame, title=title).mark_line(point=True)
        .encode(x=alt.X(f"{x}:Q", title=x_title or x, axis=alt.Axis(tickMinStep=1)),
                y=alt.Y(f"{y}:Q", title=y_title or y, axis=alt.Axis(tickMinStep=1)),
                color=alt.Color(f"{color}:N", title=None, sort=None,
                                legend=_legend(3)),
                tooltip=list(frame.columns))
        .properties(width=480, height=220)
    )


def scatter_chart(frame: pd.DataFrame, x: str, y: str, color: str, shape: str,
                  title: str = "", x_title: str | None = None,
                  y_title: str | None = None) -> alt.Chart:
    """Points of ``y`` against ``x``: colour for one field, shape for another."""
    import altair as alt

    return (
        alt.Chart(frame, title=title).mark_point(size=90, filled=True, opacity=0.85)
        .encode(x=alt.X(f"{x}:Q", title=x_title or x),
                y=alt.Y(f"{y}:Q", title=y_title or y, axis=alt.Axis(tickMinStep=1)),
                color=alt.Color(f"{color}:N", title=None,
                                legend=_legend(3)),
                shape=alt.Shape(f"{shape}:N", title=None,
                                legend=_legend(1)),
                tooltip=list(frame.columns))
        .properties(width=480, height=240)
    )


def interval_chart(frame: pd.DataFrame, y: str, states: Sequence[str], colors: Sequence[str],
                   title: str = "", tooltip: Sequence[str] = (),
                   legend_columns: int | None = None, width: int = 560) -> alt.Chart:
    """A Gantt: one row per ``y``, bars from ``start_s`` to ``end_s`` coloured by ``state``
    (``legend_columns``: wrap a long legend; ``width``: the plot's, narrower when the rows'
    labels are long, so the chart fits the book's column)."""
    import altair as alt

    legend = alt.Legend(orient="bottom") if legend_columns is None else \
        alt.Legend(orient="bottom", columns=legend_columns)
    return (
        alt.Chart(frame, title=title).mark_bar()
        .encode(x=alt.X("start_s:Q", title="time (s)", scale=alt.Scale(nice=False)),
                x2="end_s:Q", y=alt.Y(f"{y}:N", title=None, sort=None),
                color=alt.Color("state:N", title=None, legend=legend,
                                scale=alt.Scale(domain=list(states), range=list(colors))),
                tooltip=[f"{y}:N", *tooltip, "state:N", "start_s:Q", "end_s:Q"])
        .properties(width=width, height=alt.Step(16))
    )


def ownership_chart(frame: pd.DataFrame, title: str = "Who owned each queue") -> alt.Chart:
    """A Gantt of queue ownership (``rocketlb_core.viz.tables.ownership_frame``)."""
    return interval_chart(frame, "queue", ["one owner", "unowned", "owned twice"],
                          ["#59a14f", "#e15759", "#f28e2b"], title, tooltip=["owners:N"])


def visibility_chart(frame: pd.DataFrame, title: str) -> alt.Chart:
    """Who listed a broker against whether it was up
    (``rocketlb_core.viz.tables.broker_visibility_frame``): red is a stale "still there"."""
    from rocketlb_core.viz.tables import VISIBILITY_STATES

    return interval_chart(frame, "party", VISIBILITY_STATES,
                          ["#59a14f", "#e15759", "#bab0ac", "#f28e2b"], title)


def step_chart(frame: pd.DataFrame, x: str, y: str, color: str, title: str = "",
               x_title: str = "time (s)") -> alt.Chart:
    """Step lines of ``y`` over ``x`` per ``color`` (counts that change at events)."""
    import altair as alt

    return (
        alt.Chart(frame, title=title).mark_line(interpolate="step-after", point=True)
        .encode(x=alt.X(f"{x}:Q", title=x_title),
                y=alt.Y(f"{y}:Q", axis=alt.Axis(tickMinStep=1)),
                color=alt.Color(f"{color}:N", title=None), tooltip=list(frame.columns))
        .properties(width=520, height=180)
    )


def lag_chart(frame: pd.DataFrame, title: str = "Messages waiting per queue") -> alt.Chart:
    """Lag curves per queue (``rocketlb_core.viz.tables.lag_frame``); hover highlights one."""
    import altair as alt

    hover = alt.selection_point(fields=["queue"], on="pointerover", nearest=True)
    return (
        alt.Chart(frame, title=title).mark_line(interpolate="step-after")
        .encode(x=alt.X("time_s:Q", title="time (s)"), y=alt.Y("lag:Q", title="messages"),
                color=alt.Color("queue:N", title=None,
                                legend=_legend(4)),
                opacity=alt.condition(hover, alt.value(1.0), alt.value(0.35)),
                tooltip=["queue:N", "time_s:Q", "lag:Q"])
        .add_params(hover).properties(width=560, height=200)
    )


def time_series_chart(frame: pd.DataFrame, x: str, y: str, color: str, row: str,
                      title: str = "", x_title: str = "time (s)", y_title: str | None = None,
                      y_scale: Literal["linear", "symlog"] = "linear") -> alt.Chart:
    """Step lines of ``y`` over time per ``color``, one panel per value of ``row`` sharing the
    time axis. A time with no row for a ``color`` counts as 0 (imputed). ``y_scale``
    ``"symlog"`` shows counts of very different sizes in one panel (name it in ``y_title``)."""
    import altair as alt

    return (
        alt.Chart(frame).mark_line(interpolate="step-after", point=True)
        .encode(x=alt.X(f"{x}:Q", title=x_title),
                y=alt.Y(f"{y}:Q", title=y_title or y, scale=alt.Scale(type=y_scale),
                        impute=alt.ImputeParams(value=0)),
                color=alt.Color(f"{color}:N", title=None, sort=None, legend=_legend(3)),
                tooltip=list(frame.columns))
        .properties(width=520, height=150)
        .facet(row=alt.Row(f"{row}:N", title=None, sort=None,
                           header=alt.Header(labelFontWeight="bold", labelLimit=0)),
               title=title)
    )
