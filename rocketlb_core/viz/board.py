"""``GroupBoard``: drag consumers in and out of a group and between machine rooms, and see how
every allocation strategy splits the queues, with the queues that just moved highlighted.

Every state (each candidate out of the group, in room-1 or in room-2) is computed by the package
(``assign_all`` under a consistent view) and embedded in the widget, so it works in the static
web book; in a live kernel an observer recomputes the current state through the package too.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from rocketlb_core.consumer.base import assign_all, rebalance_view
from rocketlb_core.consumer.nearby import MapResolver
from rocketlb_core.consumer.registry import sweep
from rocketlb_core.model import MessageQueue

ZONES = ("out", "room-1", "room-2")
BROKER_ROOMS = {"broker-a": "room-1", "broker-b": "room-2"}
_JS = Path(__file__).parent / "js"


def board_queues(per_broker: int = 4) -> list[MessageQueue]:
    return [MessageQueue("TopicTest", b, i) for b in BROKER_ROOMS for i in range(per_broker)]


def board_strategies(zones: dict[str, str], ids: dict[str, str]) -> dict[str, Any]:
    """Every stateless strategy the registry sweeps, rooms from the board's zones."""
    rooms = MapResolver(BROKER_ROOMS, {ids[c]: z for c, z in zones.items() if z != "out"})
    return sweep(stateless=True, rooms_last=True, labels=False, resolver=rooms)


def board_view(zones: dict[str, str], ids: dict[str, str],
               queues: list[MessageQueue]) -> dict[str, list[str]]:
    """For one state: per strategy, the owner (consumer name, "" for none) of each queue."""
    members = [c for c, z in zones.items() if z != "out"]
    out: dict[str, list[str]] = {}
    by_id = {ids[c]: c for c in members}
    for name, strategy in board_strategies(zones, ids).items():
        if not members:
            out[name] = [""] * len(queues)
            continue
        mq_all, cid_all = rebalance_view(queues, [ids[c] for c in members])
        assignment = assign_all(strategy, "GID_board", mq_all, cid_all)
        owner = {q: by_id[cid] for cid, qs in assignment.items() for q in qs}
        out[name] = [owner.get(q, "") for q in queues]
    return out


def board_ids(names: list[str]) -> dict[str, str]:
    """The client id each candidate reports (distinct, stable)."""
    return {c: f"10.0.0.{i + 1}@{c}" for i, c in enumerate(names)}


def state_key(zones: dict[str, str], names: list[str]) -> str:
    return "|".join(f"{c}={zones[c]}" for c in names)


class GroupBoard(anywidget.AnyWidget):
    _esm = (_JS / "group_board.js").read_text(encoding="utf-8")
    _css = (_JS / "group_board.css").read_text(encoding="utf-8")
    consumers = traitlets.List(traitlets.Unicode()).tag(sync=True)
    zones = traitlets.Dict().tag(sync=True)
    queues = traitlets.List(traitlets.Unicode()).tag(sync=True)
    views = traitlets.Dict().tag(sync=True)

    @traitlets.observe("zones")
    def _recompute(self, change: dict[str, Any]) -> None:
        """Live kernel: compute the new state through the package (the JS shows it)."""
        if not self.consumers or not self.queues:
            return                                  # still being constructed
        names = list(self.consumers)
        key = state_key(change["new"], names)
        view = board_view(dict(change["new"]), board_ids(names),
                          board_queues(len(self.queues) // 2))
        if self.views.get(key) != view:
            self.views = {**self.views, key: view}


def group_board(consumers: int = 5, start: dict[str, str] | None = None) -> GroupBoard:
    """A board with ``consumers`` candidates (3^consumers states are precomputed)."""
    names = [f"c{i + 1}" for i in range(consumers)]
    ids = board_ids(names)
    queues = board_queues()
    views = {}
    for combo in itertools.product(ZONES, repeat=consumers):
        zones = dict(zip(names, combo, strict=True))
        views[state_key(zones, names)] = board_view(zones, ids, queues)
    first = start or {c: ("room-1" if i < 2 else "room-2" if i < 3 else "out")
                      for i, c in enumerate(names)}
    return GroupBoard(consumers=names, zones=first, queues=[q.short() for q in queues],
                      views=views)
