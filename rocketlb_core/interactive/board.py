"""The allocation board (book chapter 5): a consumer group of 1 to 32 candidates, each out of
the group or in one of two machine rooms, over 1 to 4 brokers of 1 to 16 queues, and every
allocation strategy of the registry computing the split (spec sections 5 and 6).

A request's state::

    {"brokers": 2, "queues": 4, "duplicate": false, "pop_share": 1,
     "zones": {"c1": "room-1", "c2": "room-2", "c3": "out", ...},
     "client": "remoting", "orderly": false}

Brokers are named the way ``AllocateMessageQueueByMachineRoom`` expects (``room-1@broker-a``,
``room-2@broker-b``, ``room-1@broker-c``, ``room-2@broker-d``: rooms alternate). A member's
client id is ``10.0.0.<k>@c<k>`` and does not change when it moves between rooms; the room of a
client comes from the board (a ``MapResolver``), as a deployment's own resolver would tell
``AllocateMachineRoomNearby``. With ``duplicate`` on, c2 runs on c1's host with the same
``instanceName`` and reports c1's client id (spec 9.1): both compute the same share.

Rows, in this order:

* AVG, AVG_BY_CIRCLE, CONSISTENT_HASH, CONSISTENT_HASH_BOUNDED(0.25): the registry's sweep;
* STICKY: the previous state's STICKY split is its input, so a board remembers it;
* CONFIG: every member configured with the first queue of every broker (upstream returns the
  configured list to everyone: no balancing at all);
* MACHINE_ROOM: each member configured with its own room (``consumeridcs``), the usual setup;
  upstream still divides by the whole group, so rooms go short;
* MACHINE_ROOM_NEARBY: AVG inside each room, then the rooms without consumers shared by all;
* POP(AVG, share=k): 5.x ``allocate4Pop``; every member may pop its own AVG share and those of
  the next k members (k <= 0 or k >= members - 1: everybody pops every queue).

With ``client`` ``grpc`` (chapter 11; default ``remoting``) the group is also seen as a gRPC
push consumer group, whose assignment the servers compute; two rows follow the ones above:

* PROXY(gRPC push): what the Proxy answers every member's ``QueryAssignment``
  (``grpc.proxy_query_assignment``, rocketmq-proxy 5.3.3 and 5.5.0): each readable broker's
  master queue -1 ("any queue": the broker's pop picks), or with ``orderly`` on (the group's
  ``consumeMessageOrderly``) each broker's every read queue; the same for every member;
* BROKER(POP, share=k): what a broker's ``QueryAssignmentProcessor`` answers a remoting push
  consumer that rebalances on the server, in POP mode with ``popShareQueueNum`` k
  (``grpc.broker_query_assignment``, AVG inside ``allocate4Pop``).

Each server row also carries ``assigned``: what the server answers each member, queue -1 kept
as it is (``A(-1)``), where the grid can only show every queue of that broker owned.

A queue "moved" when its set of owners differs from the previous state's (only queues on the
board in both states count); "idle" members own nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rocketlb_core.consumer.base import AllocateStrategy, assign_all, rebalance_view
from rocketlb_core.consumer.nearby import MapResolver
from rocketlb_core.consumer.pop import allocate4pop
from rocketlb_core.consumer.registry import make, sweep
from rocketlb_core.grpc.assignment import broker_query_assignment, proxy_query_assignment
from rocketlb_core.interactive.fields import choice, flag, integer, numbered, table
from rocketlb_core.model import PERM_READ, PERM_WRITE, MessageQueue

ZONES = ("out", "room-1", "room-2")
ROOMS = ZONES[1:]
BROKERS = ("a", "b", "c", "d")
GROUP = "GID_board"
TOPIC = "TopicTest"
MAX_CONSUMERS = 32
CLIENTS = ("remoting", "grpc")
"""``state.client``: the classic clients' own allocation only, or the servers' rows too."""
PROXY_PORT = 8081


def broker_name(k: int) -> str:
    return f"{ROOMS[k % 2]}@broker-{BROKERS[k]}"


def client_id(name: str) -> str:
    return f"10.0.0.{int(name[1:])}@{name}"


def queue_label(broker: str, queue_id: int) -> str:
    """``A0`` for broker-a's queue 0; ``A(-1)`` for its queue -1 (any queue of broker-a)."""
    letter = broker[-1].upper()
    return f"{letter}({queue_id})" if queue_id < 0 else f"{letter}{queue_id}"


def initial_state(consumers: int = 5, brokers: int = 2, queues: int = 4, *,
                  client: str = "remoting", orderly: bool = False,
                  pop_share: int = 1) -> dict[str, Any]:
    """A board's first state, as ``viz.widgets.board`` makes it (c1, c2 in room-1, c3 in
    room-2, the rest out of the group), with the servers' rows when ``client`` is ``grpc``
    (chapter 11)."""
    zones = {f"c{k}": ("room-1" if k <= 2 else "room-2" if k == 3 else "out")
             for k in range(1, consumers + 1)}
    return {"brokers": brokers, "queues": queues, "duplicate": False, "pop_share": pop_share,
            "zones": zones, "client": client, "orderly": orderly}


@dataclass(frozen=True)
class BoardState:
    """A checked board state (see the module docstring)."""

    brokers: int
    queues: int
    duplicate: bool
    pop_share: int
    zones: tuple[tuple[str, str], ...]
    client: str = "remoting"
    orderly: bool = False

    @property
    def members(self) -> list[str]:
        return [c for c, z in self.zones if z != "out"]

    def mq_all(self) -> list[MessageQueue]:
        return [MessageQueue(TOPIC, broker_name(b), i)
                for b in range(self.brokers) for i in range(self.queues)]

    def ids(self) -> dict[str, str]:
        """Each member's client id (c2 takes c1's with ``duplicate`` on)."""
        out = {c: client_id(c) for c in self.members}
        if self.duplicate and "c2" in out:
            out["c2"] = client_id("c1")
        return out


def parse_state(raw: Any) -> BoardState:
    st = table(raw, "state")
    pairs = numbered(st, "zones", "state", "consumers", MAX_CONSUMERS, ZONES)
    return BoardState(integer(st, "brokers", "state", 2, low=1, high=len(BROKERS)),
                      integer(st, "queues", "state", 4, low=1, high=16),
                      flag(st, "duplicate", "state", False),
                      integer(st, "pop_share", "state", 1, low=-1, high=MAX_CONSUMERS),
                      tuple(pairs), choice(st, "client", "state", CLIENTS, "remoting"),
                      flag(st, "orderly", "state", False))


Owners = list[list[str]]
"""Per queue (in board order), the members that consume it (sorted by number)."""


def _owners(assignment: Mapping[str, Sequence[MessageQueue]], by_id: Mapping[str, list[str]],
            queues: list[MessageQueue]) -> Owners:
    index = {q: i for i, q in enumerate(queues)}
    out: list[set[str]] = [set() for _ in queues]
    for cid, share in assignment.items():
        for q in share:
            if q.queue_id == -1:                       # pop: any queue of that broker
                hits = [i for p, i in index.items() if p.broker_name == q.broker_name]
            else:
                hits = [index[q]] if q in index else []
            for i in hits:
                out[i].update(by_id.get(cid, ()))
    return [sorted(s, key=lambda c: int(c[1:])) for s in out]


def server_assignments(state: BoardState) -> list[tuple[str, dict[str, list[MessageQueue]]]]:
    """The servers' rows (``client`` ``grpc``): each row's answer per client id, in the
    order the servers give it."""
    names = [broker_name(b) for b in range(state.brokers)]
    route = [(name, state.queues, PERM_READ | PERM_WRITE) for name in names]
    masters = {name: {0: f"{name}:{PROXY_PORT}"} for name in names}
    ids = list(state.ids().values())
    proxy = proxy_query_assignment(TOPIC, route, masters, fifo=state.orderly) or []
    told = [MessageQueue(q.topic, q.broker, q.queue_id) for q in proxy]
    rows = [(f"PROXY(gRPC push{', orderly' if state.orderly else ''})",
             {cid: list(told) for cid in ids})]
    pops: dict[str, list[MessageQueue]] = {}
    for cid in ids:
        got, _ = broker_query_assignment(TOPIC, GROUP, cid, "AVG", state.mq_all(), ids,
                                         mode="POP", pop_share_queue_num=state.pop_share)
        pops[cid] = sorted(got or (), key=lambda q: (names.index(q.broker_name), q.queue_id))
    rows.append((f"BROKER(POP, share={state.pop_share})", pops))
    return rows


class Board:
    """The board's memory: the previous state's owners per row and its STICKY split."""

    def __init__(self) -> None:
        self.previous: dict[str, dict[str, list[str]]] = {}
        self.sticky: dict[str, list[MessageQueue]] | None = None
        self.assigned: dict[str, dict[str, list[str]]] = {}

    def rows(self, state: BoardState) -> list[tuple[str, Owners]]:
        """Every strategy's owners for ``state`` (updates the STICKY memory)."""
        queues = state.mq_all()
        ids = state.ids()
        by_id: dict[str, list[str]] = {}
        for c, cid in ids.items():
            by_id.setdefault(cid, []).append(c)
        zone = dict(state.zones)
        rooms = MapResolver({broker_name(b): ROOMS[b % 2] for b in range(state.brokers)},
                            {cid: zone[cs[0]] for cid, cs in by_id.items()})
        mq_all, cid_all = rebalance_view(queues, list(ids.values()))
        rows: list[tuple[str, Owners]] = []

        def whole(strategy: AllocateStrategy, previous: Any = None) -> Owners:
            if not cid_all:
                return [[] for _ in queues]
            return _owners(assign_all(strategy, GROUP, mq_all, cid_all, previous), by_id, queues)

        stateless = sweep(stateless=True, rooms_last=True, resolver=rooms)
        nearby = stateless.pop("MACHINE_ROOM_NEARBY-AVG")
        for name, strategy in stateless.items():
            rows.append((name, whole(strategy)))
        sticky = make("STICKY")
        split = assign_all(sticky, GROUP, mq_all, cid_all, self.sticky) if cid_all else {}
        self.sticky = {cid: list(qs) for cid, qs in split.items()}
        rows.append(("STICKY", _owners(split, by_id, queues)))
        first = [MessageQueue(TOPIC, broker_name(b), 0) for b in range(state.brokers)]
        rows.append(("CONFIG", whole(make("CONFIG", message_queues=first))))
        per_member: dict[str, list[MessageQueue]] = {}
        for cid, cs in by_id.items():
            room = make("MACHINE_ROOM", consumeridcs=[zone[cs[0]]])
            per_member[cid] = list(room.allocate(GROUP, cid, mq_all, cid_all) or [])
        rows.append(("MACHINE_ROOM", _owners(per_member, by_id, queues)))
        rows.append(("MACHINE_ROOM_NEARBY", whole(nearby)))
        avg = make("AVG")
        pops = {cid: allocate4pop(avg, GROUP, cid, mq_all, cid_all, state.pop_share)
                for cid in by_id} if cid_all else {}
        rows.append((f"POP(AVG, share={state.pop_share})", _owners(pops, by_id, queues)))
        self.assigned = {}
        if state.client == "grpc":
            for name, answer in server_assignments(state):
                rows.append((name, _owners(answer, by_id, queues)))
                self.assigned[name] = {c: [queue_label(q.broker_name, q.queue_id)
                                           for q in answer.get(cid, ())]
                                       for c, cid in ids.items()}
        return rows

    def view(self, state: BoardState) -> dict[str, Any]:
        queues = state.mq_all()
        labels = [queue_label(q.broker_name, q.queue_id) for q in queues]
        members = state.members
        out_rows = []
        current: dict[str, dict[str, list[str]]] = {}
        for name, owners in self.rows(state):
            key = name.split("(")[0]                 # POP(AVG, share=k) is one row whatever k
            before = self.previous.get(key, {})
            moved = [label in before and before[label] != who
                     for label, who in zip(labels, owners, strict=True)]
            current[key] = dict(zip(labels, owners, strict=True))
            busy = {c for who in owners for c in who}
            row = {"strategy": name, "owners": owners, "moved": moved,
                   "n_moved": sum(moved), "n_idle": sum(c not in busy for c in members),
                   "unowned": sum(not who for who in owners),
                   "shared": sum(len(who) > 1 for who in owners)}
            if name in self.assigned:
                row["server"] = True
                row["assigned"] = self.assigned[name]
            out_rows.append(row)
        self.previous = current
        return {"queues": labels, "brokers": [broker_name(b) for b in range(state.brokers)],
                "members": members, "ids": state.ids(), "rows": out_rows,
                "client": state.client, "orderly": state.orderly}


def step(session: Board | None, request: Mapping[str, Any]) -> tuple[Board, dict[str, Any]]:
    """One interaction: ``{"state": ..., "op": "view" | "reset"}`` (``reset`` forgets the
    previous state: nothing is outlined, STICKY starts from nothing)."""
    req = table(request, "request")
    state = parse_state(req.get("state"))
    if session is None or req.get("op") == "reset":
        session = Board()
    return session, session.view(state)
