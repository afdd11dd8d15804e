"""Chapter 11's figures (``rocketlb_core.viz.grpc``): the Proxy diagram draws, and the outage
counts agree with the simulator's own summary of the same run."""

from __future__ import annotations

import json

from rocketlb_core import data_path
from rocketlb_core.viz.grpc import (
    grpc_outage,
    outage_over_time_frame,
    outage_queues_frame,
    outage_summary,
    proxy_diagram,
)


def test_the_proxy_diagram_draws() -> None:
    html = proxy_diagram(caption="c")._repr_html_()
    assert 'class="rlb-seq"' in html
    assert "QueryAssignment" in html


def test_the_outage_counts_agree_with_the_golden_summary() -> None:
    labels = {"producer-1": "gRPC", "producer-remoting": "remoting"}
    counts = grpc_outage(labels)
    golden = json.loads(data_path("scenarios", "golden", "grpc-outage.json").read_text())
    summary = golden["summary"]
    queues = outage_queues_frame(counts)
    per_queue = queues.groupby("queue")["messages"].sum().to_dict()
    assert per_queue == {q: v["stored"] for q, v in
                         summary["groups"]["GID_outage"]["queues"].items()}
    table = outage_summary(counts)
    assert int(table["sent"].sum()) == summary["messages_sent"]
    assert int(table["failed"].sum()) == summary["messages_failed"]
    assert table.loc["gRPC", "failed"] == 0           # its retry stores the send
    over_time = outage_over_time_frame(counts)
    assert set(over_time["setting"]) == {"gRPC", "remoting"}
    assert int(over_time["messages"].sum()) == summary["messages_stored"]
    # while broker-a is down (60 s to 240 s) neither producer stores anything on it
    down = over_time[(over_time["broker"] == "broker-a") & over_time["t_s"].between(60, 230)]
    assert int(down["messages"].sum()) == 0
