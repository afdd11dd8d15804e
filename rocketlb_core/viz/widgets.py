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


# ---------------------------------------------------------------------------------------------
# Live figures: one implementation, two places. The view stored with the widget is computed here,
# in the kernel, by rocketlb_core.interactive; a reader's interaction asks the kernel (this
# class's message handler) when the notebook has one, and the page's Pyodide otherwise. Both call
# the same rocketlb_core.interactive.handle.

def _esm(name: str) -> str:
    return (_JS / "live_common.js").read_text(encoding="utf-8") + "\n" + (
        _JS / name).read_text(encoding="utf-8")


class LiveFigure(anywidget.AnyWidget):
    """Base of the live figures: ``request`` produced ``view``; messages
    ``{"rlb_ask": n, "session": s, "request": r}`` are answered ``{"rlb_reply": n, "view": v}``."""

    kind = "?"
    _css = (_JS / "live.css").read_text(encoding="utf-8")
    request = traitlets.Dict().tag(sync=True)
    view = traitlets.Dict().tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        from rocketlb_core.interactive import handle

        super().__init__(**kwargs)
        if self.request and not self.view:
            self.view = handle(self.kind, f"{self.kind}-initial-{id(self)}", self.request)
            if "error" in self.view:
                raise ValueError(f"{self.kind}: {self.view['error']}")
        self.on_msg(self._answer)

    def _answer(self, _widget: Any, content: Any, _buffers: Any) -> None:
        from rocketlb_core.interactive import handle

        if isinstance(content, dict) and "rlb_ask" in content:
            session = f"{self.kind}-{id(self)}-{content.get('session')}"
            self.send({"rlb_reply": content["rlb_ask"],
                       "view": handle(self.kind, session, content.get("request"))})


class Playground(LiveFigure):
    """The producer playground (``rocketlb_core.interactive.playground``)."""

    kind = "playground"
    _esm = _esm("playground.js")
    presets = traitlets.Dict().tag(sync=True)
    latency_presets = traitlets.Dict().tag(sync=True)


def playground(config: dict[str, Any] | None = None, preset: str | None = None) -> Playground:
    """A playground set up with ``config``, or with one of its menu's ``preset`` set-ups (three
    healthy brokers on 4.9.8 with the fault strategy on, the default; a slow broker-b; seed
    002's two experiments)."""
    from rocketlb_core.interactive.playground import PRESETS_MS, setups

    presets = setups()
    if preset is not None and preset not in presets:
        raise ValueError(f"unknown preset {preset!r} (known: {', '.join(presets)})")
    start = config or presets[preset or next(iter(presets))]
    return Playground(request={"config": start, "op": "view"}, presets=presets,
                      latency_presets=dict(PRESETS_MS))


class Board(LiveFigure):
    """The allocation board (``rocketlb_core.interactive.board``)."""

    kind = "board"
    _esm = _esm("board.js")


def board(consumers: int = 5, brokers: int = 2, queues: int = 4,
          zones: dict[str, str] | None = None) -> Board:
    """A board; by default c1, c2 in room-1, c3 in room-2 and the rest out of the group."""
    start = zones or {f"c{k}": ("room-1" if k <= 2 else "room-2" if k == 3 else "out")
                      for k in range(1, consumers + 1)}
    return Board(request={"state": {"brokers": brokers, "queues": queues, "duplicate": False,
                                    "pop_share": 1, "zones": start}, "op": "view"})


class KafkaBoard(LiveFigure):
    """Kafka's assignors with racks (``rocketlb_core.interactive.kafka_board``)."""

    kind = "kafka-board"
    _esm = _esm("kafka_board.js")


def kafka_board(partitions: int = 8, replicas: int = 1,
                racks: dict[str, str] | None = None) -> KafkaBoard:
    """A Kafka rack board; by default c1 and c2 in rack-a, c3 in rack-b, c4 in rack-c."""
    start = racks or {"c1": "rack-a", "c2": "rack-a", "c3": "rack-b", "c4": "rack-c"}
    return KafkaBoard(request={"state": {"partitions": partitions, "replicas": replicas,
                                         "racks": start}, "op": "view"})


class Explorer(LiveFigure):
    """The rebalance explorer (``rocketlb_core.interactive.explorer``)."""

    kind = "explorer"
    _esm = _esm("explorer.js")
    scenarios = traitlets.Dict().tag(sync=True)


def explorer(scenario: str = "crash-without-unregister", t_ms: int = 0) -> Explorer:
    """An explorer over the shipped scenarios it offers, starting on ``scenario`` at ``t_ms``."""
    from rocketlb_core import data_path
    from rocketlb_core.interactive.explorer import SCENARIOS
    from rocketlb_core.sim.scenario import loads

    scenarios = {}
    for name in SCENARIOS:
        text = data_path("scenarios", f"{name}.toml").read_text(encoding="utf-8")
        scenarios[name] = {"toml": text, "description": loads(text, name).description}
    return Explorer(scenarios=scenarios, request={
        "scenario": scenario, "toml": scenarios[scenario]["toml"], "seed": 0, "t_ms": t_ms})


class Exercise(LiveFigure):
    """A self-checking exercise (``rocketlb_core.interactive.exercises``)."""

    kind = "exercise"
    _esm = _esm("exercise.js")
    prompt = traitlets.Unicode("").tag(sync=True)
    exercise = traitlets.Unicode("").tag(sync=True)
    params = traitlets.Dict().tag(sync=True)


def exercise(prompt: str, name: str, **params: Any) -> Exercise:
    """An exercise: ``prompt`` for the reader, checked by ``exercises.EXERCISES[name](params)``."""
    from rocketlb_core.interactive.exercises import EXERCISES

    if name not in EXERCISES:
        raise ValueError(f"unknown exercise {name!r} (known: {', '.join(EXERCISES)})")
    EXERCISES[name](params)                        # bad parameters fail here, not in the page
    return Exercise(prompt=prompt, exercise=name, params=params)
