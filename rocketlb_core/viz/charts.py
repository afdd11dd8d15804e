"""Chart builders for the book (Altair). Data in, chart out; no I/O, no Spark.

Render them with ``rocketlb_core.viz.enable_charts()`` active so they draw offline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocketlb_core.model import TopicRoute, publish_queues, subscribe_queues

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd


def queue_layout_frame(routes: dict[str, TopicRoute]) -> pd.DataFrame:
    """Per topic and broker: how many queues producers write to and consumers read from.

    Computed through the package's route conversions (spec 1.3 and 1.4), not from raw counts:
    a read-only broker contributes no publish queues, a broker with fewer write than read queues
    contributes fewer publish queues than subscribe queues.
    """
    import pandas as pd

    rows = []
    for topic in sorted(routes):
        route = routes[topic]
        pub = publish_queues(topic, route)
        sub = subscribe_queues(topic, route)
        for qd in route.sorted_queue_datas():
            name = qd.broker_name
            rows.append({"topic": topic, "broker": name, "side": "producers write to",
                         "queues": sum(q.broker_name == name for q in pub)})
            rows.append({"topic": topic, "broker": name, "side": "consumers read from",
                         "queues": sum(q.broker_name == name for q in sub)})
    return pd.DataFrame(rows)


def queue_layout_chart(frame: pd.DataFrame) -> alt.Chart:
    """Grouped bars of ``queue_layout_frame``, with a radio button (no kernel needed) per topic."""
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
