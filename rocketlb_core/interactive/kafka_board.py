"""The Kafka rack board (book chapter 8): a consumer group of 1 to 6 members on one topic of 1 to
12 partitions, each member in a rack or in none (``client.rack``), the partitions' replicas on
the three racks, and Kafka's ``RangeAssignor`` and ``CooperativeStickyAssignor`` computing the
split with and without the members' racks (KIP-881, ``kafka.assignors``).

A request's state::

    {"partitions": 6, "replicas": 1,
     "racks": {"c1": "rack-a", "c2": "rack-b", "c3": "none", ...}}

The cluster has one broker a rack (``rack-a``, ``rack-b``, ``rack-c``); partition ``p``'s
replicas are on the racks ``p``, ``p + 1``, ... (mod 3), ``replicas`` of them (1 to 3), as a
replica placement that starts each partition's leader on the next broker would put them. A
member's id is its name (``c1`` ... ``c6``), subscribed to the one topic.

Rows, in this order: range and cooperative sticky, each once with every member's ``client.rack``
unset (what the assignor did before KIP-881, and does for a member that sets none) and once
with the racks the board gives. The assignor is rack-aware only when some member's rack holds a
replica and some partition is not on every rack that holds replicas (with three replicas each
partition is everywhere, and the racks change nothing). The cooperative sticky rows are the
settled state: the protocol's two rebalances, the first from what each member held after the
previous state (the board remembers it, as the members do), the second from the first's
result; range keeps no history.

A partition is "off-rack" when its owner runs in a rack (told to the assignor or not) and no
replica of it lives there: the owner fetches it across racks. "Moved": its owner differs from
the previous state's in that row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocketlb_core.interactive.fields import integer, numbered, table
from rocketlb_core.kafka.assignors import (
    Member,
    StickyMember,
    TopicPartition,
    cooperative_sticky_assign,
    range_assign,
)

RACKS = ("rack-a", "rack-b", "rack-c")
CHOICES = ("none", *RACKS)
TOPIC = "orders"
MAX_MEMBERS = 6
MAX_PARTITIONS = 12
ASSIGNORS = ("range", "cooperative-sticky")


@dataclass(frozen=True)
class KafkaBoardState:
    """A checked board state (see the module docstring)."""

    partitions: int
    replicas: int
    racks: tuple[tuple[str, str], ...]

    def replica_racks(self) -> list[list[str]]:
        """Each partition's replicas' racks, in placement order."""
        return [[RACKS[(p + i) % len(RACKS)] for i in range(self.replicas)]
                for p in range(self.partitions)]

    def members(self, with_racks: bool) -> list[Member]:
        return [Member(c, (TOPIC,), rack=r if with_racks and r != "none" else None)
                for c, r in self.racks]


def parse_state(raw: Any) -> KafkaBoardState:
    st = table(raw, "state")
    pairs = numbered(st, "racks", "state", "members", MAX_MEMBERS, CHOICES)
    return KafkaBoardState(
        integer(st, "partitions", "state", 6, low=1, high=MAX_PARTITIONS),
        integer(st, "replicas", "state", 1, low=1, high=len(RACKS)), tuple(pairs))


def _owners(assignment: Mapping[str, list[TopicPartition]], partitions: int) -> list[str]:
    out = [""] * partitions
    for member, tps in assignment.items():
        for _, p in tps:
            out[p] = member
    return out


class KafkaBoard:
    """The board's memory: each row's owners in the previous state, and what each member held
    after the previous state under the cooperative sticky assignor (with and without racks)."""

    def __init__(self) -> None:
        self.previous: dict[str, list[str]] = {}
        self.held: dict[bool, dict[str, list[TopicPartition]]] = {False: {}, True: {}}
        self.generation = 0

    def _cooperative(self, state: KafkaBoardState, with_racks: bool,
                     racks: Mapping[str, list[list[str]]]) -> dict[str, list[TopicPartition]]:
        """Two rebalances: the first from what each member held, the second from its result."""
        held = self.held[with_racks]
        assignment: dict[str, list[TopicPartition]] = {}
        for round_ in range(2):
            members = [StickyMember(m.member_id, m.topics, rack=m.rack,
                                    owned=tuple(tp for tp in held.get(m.member_id, ())
                                                if tp[1] < state.partitions),
                                    generation=self.generation + round_
                                    if m.member_id in held else None)
                       for m in state.members(with_racks)]
            assignment = cooperative_sticky_assign({TOPIC: state.partitions}, members,
                                                   racks=racks)
            held = {m: list(tps) for m, tps in assignment.items()}
        self.held[with_racks] = held
        return assignment

    def rows(self, state: KafkaBoardState) -> list[tuple[str, bool, list[str]]]:
        """(assignor, with the members' racks, owner of each partition) for every row."""
        racks = {TOPIC: state.replica_racks()}
        out = []
        for name in ASSIGNORS:
            for with_racks in (False, True):
                if name == "range":
                    got = range_assign({TOPIC: state.partitions}, state.members(with_racks),
                                       racks=racks)
                else:
                    got = self._cooperative(state, with_racks, racks)
                out.append((name, with_racks, _owners(got, state.partitions)))
        self.generation += 2
        return out

    def view(self, state: KafkaBoardState) -> dict[str, Any]:
        replica_racks = state.replica_racks()
        rack_of = dict(state.racks)
        labels = [f"P{p}" for p in range(state.partitions)]
        rows = []
        current: dict[str, list[str]] = {}
        for name, with_racks, owners in self.rows(state):
            key = f"{name}/{'racks' if with_racks else 'none'}"
            before = self.previous.get(key, [])
            moved = [p < len(before) and before[p] != who for p, who in enumerate(owners)]
            current[key] = owners
            off = [bool(who) and rack_of[who] != "none" and rack_of[who] not in replica_racks[p]
                   for p, who in enumerate(owners)]
            counts = {c: owners.count(c) for c, _ in state.racks}
            rows.append({"assignor": name, "client_rack": with_racks, "owners": owners,
                         "moved": moved, "off_rack": off, "n_moved": sum(moved),
                         "n_off_rack": sum(off), "unowned": owners.count(""),
                         "spread": max(counts.values()) - min(counts.values())})
        self.previous = current
        return {"partitions": labels, "replica_racks": replica_racks,
                "members": [c for c, _ in state.racks], "racks": rack_of,
                "rack_choices": list(CHOICES), "rows": rows}


def step(session: KafkaBoard | None, request: Mapping[str, Any]
         ) -> tuple[KafkaBoard, dict[str, Any]]:
    """One interaction: ``{"state": ..., "op": "view" | "reset"}`` (``reset`` forgets the
    previous state: nothing is outlined, the sticky assignor starts from nothing)."""
    req = table(request, "request")
    state = parse_state(req.get("state"))
    if session is None or req.get("op") == "reset":
        session = KafkaBoard()
    return session, session.view(state)
