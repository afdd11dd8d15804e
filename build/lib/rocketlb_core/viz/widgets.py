"""Widgets for the book. Their views are computed by the package in Python and embedded in the
widget state, so they respond in the static web book (no kernel) exactly as in a live one.

``RouteExplorer``: click a broker to cycle its permission (``RW`` -> ``R-`` -> ``-W``) and watch
the producer's publish list and the consumer's subscribe set change (spec 1.3 and 1.4).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets
import traitlets

from rocketlb_core.model import (
    PERM_READ,
    PERM_WRITE,
    TopicRoute,
    perm_label,
    publish_queues,
    sort_queues,
    subscribe_queues,
)

_JS = Path(__file__).parent / "js"
PERM_CYCLE = (PERM_READ | PERM_WRITE, PERM_READ, PERM_WRITE)


def perm_key(perms: dict[str, int]) -> str:
    """The lookup key of one permission assignment, e.g. ``broker-a=RW|broker-b=R-``."""
    return "|".join(f"{name}={perm_label(perms[name])}" for name in sorted(perms))


def route_views(topic: str, route: TopicRoute) -> dict[str, dict[str, list[str]]]:
    """For every combination of ``RW``/``R-``/``-W`` over the route's brokers, the publish list
    (in the producer's order) and the subscribe set (sorted) that route would give."""
    names = [qd.broker_name for qd in route.sorted_queue_datas()]
    views: dict[str, dict[str, list[str]]] = {}
    for combo in itertools.product(PERM_CYCLE, repeat=len(names)):
        perms = dict(zip(names, combo, strict=True))
        variant = replace(route, queue_datas=tuple(
            replace(qd, perm=perms[qd.broker_name]) for qd in route.queue_datas))
        views[perm_key(perms)] = {
            "publish": [q.short() for q in publish_queues(topic, variant)],
            "subscribe": [q.short() for q in sort_queues(subscribe_queues(topic, variant))],
        }
    return views


class RouteExplorer(anywidget.AnyWidget):
    """Broker permission toggles and the queue lists they produce (see the module docstring)."""

    _esm = (_JS / "route_explorer.js").read_text(encoding="utf-8")
    _css = (_JS / "route_explorer.css").read_text(encoding="utf-8")
    topic = traitlets.Unicode("").tag(sync=True)
    brokers = traitlets.List(traitlets.Dict()).tag(sync=True)
    cycle = traitlets.List(traitlets.Unicode()).tag(sync=True)
    views = traitlets.Dict().tag(sync=True)


def route_explorer(topic: str, route: TopicRoute, caption: str = "") -> Any:
    """A ``RouteExplorer`` for ``topic`` under an ipywidgets caption."""
    explorer = RouteExplorer(
        topic=topic,
        brokers=[{"name": qd.broker_name, "perm": perm_label(qd.perm)}
                 for qd in route.sorted_queue_datas()],
        cycle=[perm_label(p) for p in PERM_CYCLE],
        views=route_views(topic, route),
    )
    header = ipywidgets.HTML(caption or f"<b>{topic}</b>: click a broker to change its permission")
    return ipywidgets.VBox([header, explorer])
