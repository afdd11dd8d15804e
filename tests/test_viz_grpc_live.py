"""Chapter 11's table of the live Proxy recording (``viz.grpc.live_proxy_frame``): its counts
add up, and the Proxy's own selection explains every stored message of the shipped recording."""

from __future__ import annotations

from rocketlb_core import data_path
from rocketlb_core.viz.grpc import live_proxy_frame


def test_the_live_proxy_table_adds_up() -> None:
    frame = live_proxy_frame(data_path("live", "grpc", "grpc-producer-outage-5"))
    for name in frame.columns:
        c = frame[name]
        assert c["stored"] + c["failed"] == c["sends"]
        assert c["receipt names the storing broker"] + c["receipt names another broker"] \
            == c["stored"]
        assert c["Proxy model agrees"] + c["Proxy counter inferred"] \
            + c["Proxy model unexplained"] == c["sends"]
        assert c["Proxy model unexplained"] == 0
        # the client's choice is not where the Proxy stores: about half the receipts name
        # the other of two brokers (cluster mode: fact proxy.send-selects-its-own-queue)
        assert c["receipt names another broker"] > c["stored"] // 4
