"""The route explorer's precomputed views agree with the package's route conversions."""

from __future__ import annotations

from dataclasses import replace

from rocketlb_core import data_path, publish_queues, subscribe_queues
from rocketlb_core.model import PERM_READ, PERM_WRITE, sort_queues
from rocketlb_core.trace.cluster import load_cluster
from rocketlb_core.viz.widgets import RouteExplorer, perm_key, route_explorer, route_views

ROUTE = load_cluster(data_path("traces", "cluster-overview")).routes["TopicTest"]


def test_every_permission_combination_is_precomputed() -> None:
    views = route_views("TopicTest", ROUTE)
    assert len(views) == 3 ** 3


def test_views_match_the_package() -> None:
    views = route_views("TopicTest", ROUTE)
    perms = {"broker-a": PERM_WRITE, "broker-b": PERM_READ | PERM_WRITE, "broker-c": PERM_READ}
    variant = replace(ROUTE, queue_datas=tuple(replace(q, perm=perms[q.broker_name])
                                               for q in ROUTE.queue_datas))
    view = views[perm_key(perms)]
    assert view["publish"] == [q.short() for q in publish_queues("TopicTest", variant)]
    assert view["subscribe"] == [q.short() for q in
                                 sort_queues(subscribe_queues("TopicTest", variant))]
    assert view["publish"] == ["broker-a/0", "broker-a/1", "broker-a/2", "broker-a/3",
                               "broker-b/0", "broker-b/1", "broker-b/2", "broker-b/3"]
    assert all(not q.startswith("broker-a") for q in view["subscribe"])


def test_widget_starts_from_the_recorded_permissions() -> None:
    box = route_explorer("TopicTest", ROUTE)
    explorer = box.children[1]
    assert isinstance(explorer, RouteExplorer)
    assert explorer.brokers == [{"name": "broker-a", "perm": "RW"},
                                {"name": "broker-b", "perm": "RW"},
                                {"name": "broker-c", "perm": "R-"}]
    key = "|".join(f"{b['name']}={b['perm']}" for b in explorer.brokers)
    assert len(explorer.views[key]["publish"]) == 8
    assert len(explorer.views[key]["subscribe"]) == 12
