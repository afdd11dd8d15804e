"""MACHINE_ROOM_NEARBY: ``AllocateMachineRoomNearby`` with a pluggable room resolver (spec 3.6).

Queues of a room are shared by the consumers of that room (with the inner strategy); the queues of
a room with no live consumer (an orphan room) are shared by **all** consumers, each orphan room
separately, so with AVG the lowest-sorted consumers take every orphan room's extra queues
(issues 2443, 2444).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from rocketlb_core.consumer.base import (
    AllocateStrategy,
    AllocationArgumentError,
    Assignment,
    _CheckedShare,
    assign_all,
    check,
    unique_ids,
)
from rocketlb_core.javamath import java_string_key
from rocketlb_core.model import MessageQueue


class MachineRoomResolver(Protocol):
    """Where brokers and consumers run (``AllocateMachineRoomNearby.MachineRoomResolver``)."""

    def broker_deploy_in(self, mq: MessageQueue) -> str | None: ...

    def consumer_deploy_in(self, client_id: str) -> str | None: ...


@dataclass(frozen=True)
class MapResolver:
    """Rooms from explicit maps (broker name -> room, client id -> room); missing -> ``None``."""

    broker_room: Mapping[str, str]
    consumer_room: Mapping[str, str]

    def broker_deploy_in(self, mq: MessageQueue) -> str | None:
        return self.broker_room.get(mq.broker_name)

    def consumer_deploy_in(self, client_id: str) -> str | None:
        return self.consumer_room.get(client_id)


@dataclass(frozen=True)
class PrefixResolver:
    """Room = the text before the first ``separator`` of the broker name and of the client id
    (the rule of upstream's ``AllocateMachineRoomNearByTest``: ``IDC1-broker``, ``IDC1-CID-0``)."""

    separator: str = "-"

    def broker_deploy_in(self, mq: MessageQueue) -> str | None:
        return mq.broker_name.split(self.separator)[0]

    def consumer_deploy_in(self, client_id: str) -> str | None:
        return client_id.split(self.separator)[0]


@dataclass(frozen=True)
class _Nearby(_CheckedShare):
    inner: AllocateStrategy
    resolver: MachineRoomResolver

    @property
    def name(self) -> str:
        return f"MACHINE_ROOM_NEARBY-{self.inner.name}"

    def _rooms(self, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> tuple[
            dict[str, list[MessageQueue]], dict[str, list[str]]]:
        mq_by_room: dict[str, list[MessageQueue]] = {}
        for q in mq_all:
            room = self.resolver.broker_deploy_in(q)
            if not room:
                raise AllocationArgumentError(f"Machine room is null for mq {q}")
            mq_by_room.setdefault(room, []).append(q)
        cid_by_room: dict[str, list[str]] = {}
        for cid in cid_all:
            room = self.resolver.consumer_deploy_in(cid)
            if not room:
                raise AllocationArgumentError(f"Machine room is null for consumer id {cid}")
            cid_by_room.setdefault(room, []).append(cid)
        ordered = {r: mq_by_room[r] for r in sorted(mq_by_room, key=java_string_key)}  # TreeMap
        return ordered, cid_by_room

    def share(self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue],
              cid_all: Sequence[str]) -> list[MessageQueue]:
        mq_by_room, cid_by_room = self._rooms(mq_all, cid_all)
        out: list[MessageQueue] = []
        my_room = self.resolver.consumer_deploy_in(current_cid)
        mine = mq_by_room.pop(my_room, None) if my_room is not None else None
        if mine:
            out.extend(self.inner.allocate(consumer_group, current_cid, mine,
                                           cid_by_room[my_room or ""]) or [])
        for room, queues in mq_by_room.items():
            if room not in cid_by_room:
                out.extend(self.inner.allocate(consumer_group, current_cid, queues, cid_all) or [])
        return out

    def assign_all(self, consumer_group: str, mq_all: Sequence[MessageQueue],
                   cid_all: Sequence[str], previous: object = None) -> Assignment:
        if not mq_all or not cid_all:
            check("x", mq_all, cid_all)                    # raises upstream's message
        mq_by_room, cid_by_room = self._rooms(mq_all, cid_all)
        out: Assignment = {cid: [] for cid in unique_ids(cid_all)}
        local = {room: assign_all(self.inner, consumer_group, mq_by_room[room], cids)
                 for room, cids in cid_by_room.items() if mq_by_room.get(room)}
        orphans = [assign_all(self.inner, consumer_group, qs, cid_all)
                   for room, qs in mq_by_room.items() if room not in cid_by_room]
        for cid in out:
            room = self.resolver.consumer_deploy_in(cid) or ""
            out[cid].extend(local.get(room, {}).get(cid, []))
            for orphan in orphans:
                out[cid].extend(orphan.get(cid, []))
        return out


def machine_room_nearby(inner: AllocateStrategy, resolver: MachineRoomResolver) -> _Nearby:
    """MACHINE_ROOM_NEARBY (``AllocateMachineRoomNearby``) around ``inner``."""
    return _Nearby(inner, resolver)
