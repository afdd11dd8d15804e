"""A Go client vector record (``rocketlb_core.vectorgen.go_client``) replayed on the port.

Families (the record's ``go`` field):

* ``allocate``: a strategy and its parameters, ``group``, ``current``, ``mq_all``, ``cid_all``
  (in the order the strategy was called with, not sorted); ``expect`` the share, ``null`` for
  Go's nil, or ``{"panic": message}``;
* ``selector``: a selector (``round-robin``, ``hash``, ``manual``), the ``routes`` it was shown
  and ``ops`` on one selector (a topic, a route's index, a last broker, a sharding key or the
  message's own queue); ``expect`` the queue each op took;
* ``route``: a route's queue data and broker data (the name server's order) and its
  ``orderTopicConf``; ``subscribe`` and ``publish`` the two lists, ``order_topic`` the flag;
* ``client-id``: the client's options; ``expect`` its id, the process id written ``<pid>``;
* ``publish-order``: ``n`` brokers through the producer's conversion; ``order`` the positions
  it lists them in (``gosort``: Go's ``sort.Slice`` on positions).

Standard library only.
"""

from __future__ import annotations

from typing import Any

from rocketlb_core.conformance.report import Report
from rocketlb_core.goclient import route as go_route
from rocketlb_core.goclient.allocate import GoPanic, GoQueue, strategy
from rocketlb_core.goclient.selector import Hash, Manual, RoundRobin
from rocketlb_core.limits import MAX_QUEUES

FAMILIES = ("allocate", "selector", "route", "client-id", "publish-order")


def _queues(rows: Any, field: str) -> list[GoQueue]:
    if not isinstance(rows, list):
        raise TypeError(f"{field}: a list of queues")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != 3:
            raise TypeError(f"{field}[{i}]: a queue is [topic, broker, queue id]")
        try:
            out.append(GoQueue.of(row))
        except TypeError:
            raise TypeError(f"{field}[{i}]: a queue is [topic, broker, queue id]") from None
    return out


def _rows(qs: list[GoQueue] | None) -> list[list[object]] | None:
    return None if qs is None else [q.row() for q in qs]


def allocate_answer(obj: dict[str, Any]) -> Any:
    """What the port allocates for an ``allocate`` record, as the vector writes it."""
    mq_all = _queues(obj["mq_all"], "mq_all")
    cid_all = obj["cid_all"]
    if not isinstance(cid_all, list) or not all(isinstance(c, str) for c in cid_all):
        raise TypeError("cid_all: a list of client ids")
    if not isinstance(obj["current"], str) or not isinstance(obj["group"], str):
        raise TypeError("current and group: strings")
    params = obj["params"]
    if not isinstance(params, dict):
        raise TypeError("params: an object")
    try:
        return _rows(strategy(obj["strategy"], params)(obj["group"], obj["current"], mq_all,
                                                       cid_all))
    except GoPanic as panic:
        return {"panic": str(panic)}


def selector_answer(obj: dict[str, Any]) -> list[Any]:
    """The queue each op of a ``selector`` record takes."""
    kind = obj["selector"]
    if not isinstance(obj["routes"], list) or not isinstance(obj["ops"], list):
        raise TypeError("routes and ops: lists")
    routes = [_queues(route, f"routes[{i}]") for i, route in enumerate(obj["routes"])]
    sel: RoundRobin | Hash | Manual
    if kind == "round-robin":
        sel = RoundRobin()
    elif kind == "hash":
        sel = Hash()
    elif kind == "manual":
        sel = Manual()
    else:
        raise ValueError(f"unknown Go selector {kind!r}")
    out: list[Any] = []
    for i, op in enumerate(obj["ops"]):
        at = op["route"]
        if not isinstance(at, int) or isinstance(at, bool) or not 0 <= at < len(routes):
            raise IndexError(f"ops[{i}].route: {at!r} names no route (there are {len(routes)})")
        queues = routes[at]
        if isinstance(sel, Manual):
            got = sel.select(op["topic"], queues, queue=_queues([op["queue"]],
                                                                f"ops[{i}].queue")[0])
        else:
            got = sel.select(op["topic"], queues, last_broker=op.get("last_broker", ""),
                             key=op.get("key", ""))
        out.append(None if got is None else got.row())
    return out


def route_answer(obj: dict[str, Any]) -> dict[str, Any]:
    """The ``subscribe``, ``publish`` and ``order_topic`` of a ``route`` record."""
    topic, rows, conf = obj["topic"], obj["queue_datas"], obj["order_topic_conf"]
    ids: dict[str, list[int]] = {}
    for name, broker_ids in obj["broker_datas"]:
        ids.setdefault(name, list(broker_ids))     # the first broker data of a name is found
    return {"subscribe": _rows(go_route.subscribe_queues(topic, rows)),
            "publish": _rows(go_route.publish_queues(topic, rows, ids, conf)) or None,
            "order_topic": bool(conf)}


def run_go_case(obj: dict[str, Any], report: Report) -> None:
    family, cid = obj["go"], obj["id"]
    if family == "allocate":
        report.check(cid, allocate_answer(obj), obj["expect"])
    elif family == "selector":
        report.check(cid, selector_answer(obj), obj["expect"])
    elif family == "route":
        report.check(cid, route_answer(obj), {k: obj[k] for k in
                                              ("subscribe", "publish", "order_topic")})
    elif family == "client-id":
        got = go_route.client_id(obj["client_ip"], obj["instance_name"], obj["unit_name"],
                                 "<pid>")
        report.check(cid, got, obj["expect"])
    elif family == "publish-order":
        n = obj["n"]
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_QUEUES * 4:
            raise ValueError(f"n: {n!r} is outside 0 to {MAX_QUEUES * 4}")
        report.check(cid, go_route.publish_order(n), obj["order"])
    else:
        raise ValueError(f"unknown Go family {family!r} (one of {', '.join(FAMILIES)})")
