"""The order the Go client gives a route's queues (``internal/route.go`` and
``internal/client.go``, v2.1.2).

* The producer (``routeData2PublishInfo``): with ``orderTopicConf`` (``"broker:n;..."``) its
  queues in that text's order; else it sorts the queue data with ``sort.Slice(qds, func(i, j
  int) bool { return i-j >= 0 })``, a comparison of positions (``gosort``: with Go 1.19 and
  later, up to 12 brokers the list reversed, past 12 a permutation fixed by their number; older
  Go differs from 7). Then, for each writable broker with a master address, queues
  ``0..writeQueueNums-1``. The sort is in place: the route's own list is left in that order,
  and 2.1.2 runs the function twice on the same data (``producer_queues``). Java sorts the queue
  data by broker name (spec 2.1), so the same route can give the two producers different lists.
* The consumer (``routeData2SubscribeInfo``): the name server's order, readable brokers, queues
  ``0..readQueueNums-1``, masters or not; ``doBalance`` sorts them before allocating
  (``allocate.balance_order``).

>>> rows = [["broker-a", 2, 2, 6], ["broker-b", 1, 1, 6]]
>>> [q.short() for q in publish_queues("T", rows, {"broker-a": [0], "broker-b": [0]})]
[['broker-b', 0], ['broker-a', 0], ['broker-a', 1]]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rocketlb_core.goclient.allocate import GoPanic, GoQueue
from rocketlb_core.goclient.gosort import slice_permutation
from rocketlb_core.limits import MAX_QUEUES

PERM_READ, PERM_WRITE = 4, 2
_ATOI = re.compile(r"[+-]?[0-9]+")


def _by_position(i: int, j: int) -> bool:
    return i - j >= 0


def publish_order(n: int) -> list[int]:
    """The positions of ``n`` queue data in the order ``routeData2PublishInfo`` leaves them."""
    return slice_permutation(n, _by_position)


def _row(row: Sequence[object]) -> tuple[str, int, int, int]:
    broker, read, write, perm = row
    if not isinstance(broker, str) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in (read, write, perm)):
        raise TypeError(f"a queue data is [broker, read, write, perm], not {list(row)!r}")
    for name, v in (("readQueueNums", read), ("writeQueueNums", write)):
        if not 0 <= v <= MAX_QUEUES:                  # type: ignore[operator]
            raise ValueError(f"{name} {v} is outside 0 to {MAX_QUEUES}")
    return broker, read, write, perm                  # type: ignore[return-value]


def publish_queues(topic: str, queue_datas: Sequence[Sequence[object]],
                   broker_ids: Mapping[str, Sequence[int]],
                   order_topic_conf: str = "") -> list[GoQueue]:
    """``routeData2PublishInfo(topic, route).MqList``: ``queue_datas`` rows ``[broker, read,
    write, perm]`` in the name server's order; ``broker_ids`` the broker ids each broker data
    holds addresses for (a broker with no broker data is skipped, as one without id 0)."""
    if order_topic_conf:
        out = []
        for item in order_topic_conf.split(";"):
            parts = item.split(":")
            if len(parts) < 2:
                raise GoPanic(f"runtime error: index out of range [1] with length {len(parts)}")
            # strconv.Atoi, its error ignored: 0 for anything but [+-]digits
            count = int(parts[1]) if _ATOI.fullmatch(parts[1]) else 0
            if count > MAX_QUEUES:
                raise ValueError(f"orderTopicConf item {item!r}: more than {MAX_QUEUES} queues")
            out += [GoQueue(topic, parts[0], i) for i in range(count)]
        return out
    rows = [_row(r) for r in queue_datas]
    out = []
    for at in publish_order(len(rows)):
        broker, _read, write, perm = rows[at]
        if perm & PERM_WRITE != PERM_WRITE:
            continue
        if 0 not in broker_ids.get(broker, ()):
            continue
        out += [GoQueue(topic, broker, i) for i in range(write)]
    return out


def producer_queues(topic: str, queue_datas: Sequence[Sequence[object]],
                    broker_ids: Mapping[str, Sequence[int]], order_topic_conf: str = "",
                    release: str = "2.1.2", producers: int = 1,
                    index: int | None = None) -> list[GoQueue]:
    """The list the selector of producer ``index`` (1 to ``producers``, default the last) of one
    client is given after a route change, from the name server's route: 2.0.0 to 2.1.1 run
    ``routeData2PublishInfo`` once; 2.1.2 runs it once for each producer in
    ``UpdateTopicRouteInfoWithDefault`` (through the client it is bundled with), each run
    reordering the route data in place, then on a clone of that data once more for each producer
    in ``UpdatePublishInfo`` (fact ``go.publish-order-twice-since-2.1.2``): producer ``index``'s
    list is what ``producers + index`` passes leave (a lone producer, up to 12 brokers with Go
    1.19 and later: two reversals, the name server's order)."""
    if release not in RELEASES:
        raise ValueError(f"release: one of {', '.join(RELEASES)}, not {release!r}")
    index = producers if index is None else index
    if not 1 <= index <= producers:
        raise ValueError(f"index: 1 to {producers}, not {index}")
    passes = producers + index if release == "2.1.2" else 1
    rows = list(queue_datas)
    for _ in range(passes - 1):
        rows = [rows[i] for i in publish_order(len(rows))]
    return publish_queues(topic, rows, broker_ids, order_topic_conf)


RELEASES = ("2.0.0", "2.1.0", "2.1.1", "2.1.2")


def subscribe_queues(topic: str, queue_datas: Sequence[Sequence[object]]) -> list[GoQueue]:
    """``routeData2SubscribeInfo(topic, route)``."""
    out = []
    for row in queue_datas:
        broker, read, _write, perm = _row(row)
        if perm & PERM_READ == PERM_READ:
            out += [GoQueue(topic, broker, i) for i in range(read)]
    return out


def client_id(client_ip: str, instance_name: str, unit_name: str, pid: int | str) -> str:
    """``rmqClient.ClientID()``: ``ip@pid`` when the instance name is ``DEFAULT`` (else
    ``ip@instance``), then ``@unit`` when a unit name is set. A consumer's
    ``ChangeInstanceNameToPID`` renames only its own copy of the options, so a consumer's id
    keeps the plain pid too (fact ``go.client-id``)."""
    out = client_ip + "@" + (str(pid) if instance_name == "DEFAULT" else instance_name)
    return out + ("@" + unit_name if unit_name else "")
