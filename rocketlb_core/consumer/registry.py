"""Every allocation strategy by its RocketMQ name (``getName()``), like Maelstrom's workload map:
the one list of strategies. Everything that sweeps, tests or shows strategies derives from it
(``default_strategies``, ``sweep``, the property tests, the comparisons, the replay's default,
the book's board, the benchmark).

Adding a strategy is one module with its factory plus one ``Registration`` line here; the
property tests of ``tests/test_allocation.py`` then run on it by themselves.

``make("CONSISTENT_HASH", virtual_nodes=5)`` builds one with parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rocketlb_core.consumer.base import AllocateStrategy
from rocketlb_core.consumer.consistent_hash import consistent_hash
from rocketlb_core.consumer.nearby import MachineRoomResolver, PrefixResolver, machine_room_nearby
from rocketlb_core.consumer.sticky import consistent_hash_bounded, sticky
from rocketlb_core.consumer.strategies import avg, avg_by_circle, config, machine_room
from rocketlb_core.model import MessageQueue


def _nearby(inner: str | AllocateStrategy = "AVG", separator: str = "-",
            resolver: MachineRoomResolver | None = None,
            **inner_params: Any) -> AllocateStrategy:
    """MACHINE_ROOM_NEARBY (``AllocateMachineRoomNearby``) around ``inner`` (a name or a
    strategy): a room's queues are shared by that room's consumers, an orphan room's (one with
    no live consumer) by all of them; rooms from ``resolver``, else from the
    ``<room><separator>`` prefix of broker names and client ids."""
    built = make(inner, **inner_params) if isinstance(inner, str) else inner
    return machine_room_nearby(built, resolver or PrefixResolver(separator))


@dataclass(frozen=True)
class Registration:
    """One strategy in the registry.

    ``example``: parameters of an instance that works on any view whose broker names and
    client ids start with ``<room>@`` (the property tests' views). ``sweep``: parameters when
    comparisons sweep the registry; ``None`` when the strategy needs a deployment's own
    configuration (a queue list, a set of rooms). ``sweep_label`` names the swept instance
    where its ``name`` does not say enough. Properties the tests check: ``covering`` (every
    queue has exactly one owner under a consistent view), ``balanced`` (max - min <= 1 while
    consumers <= queues). ``uses_rooms``: needs to know where brokers and clients are;
    ``uses_previous``: the previous assignment is an input (sticky strategies). ``spec``: the
    section of the specification (``rocketmq-load-balancing.md``) it implements, or that says
    it is not upstream's (the book's page ``book/guide/strategies.md`` is made from these).
    """

    factory: Callable[..., AllocateStrategy]
    upstream: bool
    example: Mapping[str, Any] = field(default_factory=dict)
    sweep: Mapping[str, Any] | None = field(default_factory=dict)
    sweep_label: str | None = None
    covering: bool = True
    balanced: bool = False
    uses_rooms: bool = False
    uses_previous: bool = False
    spec: str = ""


_ROOM0_QUEUE = MessageQueue("T", "room0@broker-0", 0)

REGISTRY: dict[str, Registration] = {
    "AVG": Registration(avg, upstream=True, balanced=True, spec="spec 3.2"),
    "AVG_BY_CIRCLE": Registration(avg_by_circle, upstream=True, balanced=True,
                                  spec="spec 3.3"),
    "CONFIG": Registration(config, upstream=True, covering=False, sweep=None,
                           example={"message_queues": [_ROOM0_QUEUE]}, spec="spec 3.4"),
    "MACHINE_ROOM": Registration(machine_room, upstream=True, covering=False, sweep=None,
                                 example={"consumeridcs": ["room0"]}, uses_rooms=True,
                                 spec="spec 3.5"),
    "CONSISTENT_HASH": Registration(consistent_hash, upstream=True, spec="spec 3.7"),
    "MACHINE_ROOM_NEARBY": Registration(_nearby, upstream=True, example={"separator": "@"},
                                        uses_rooms=True, spec="spec 3.6"),
    "STICKY": Registration(sticky, upstream=False, balanced=True, uses_previous=True,
                           spec="spec 3.8"),
    "CONSISTENT_HASH_BOUNDED": Registration(consistent_hash_bounded, upstream=False,
                                            sweep={"eps": 0.25},
                                            sweep_label="CONSISTENT_HASH_BOUNDED(0.25)",
                                            spec="spec 3.8"),
}
UPSTREAM = tuple(name for name, r in REGISTRY.items() if r.upstream)


def make(name: str, **params: Any) -> AllocateStrategy:
    """The strategy registered as ``name`` (RocketMQ's spelling), built with ``params``."""
    try:
        registration = REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown allocation strategy {name!r} "
                         f"(known: {', '.join(REGISTRY)})") from None
    return registration.factory(**params)


def example(name: str) -> AllocateStrategy:
    """An instance of ``name`` for views whose brokers and clients are named ``<room>@...``."""
    return make(name, **REGISTRY[name].example)


def sweep(*, stateless: bool = False, rooms_last: bool = False, labels: bool = True,
          **room_params: Any) -> dict[str, AllocateStrategy]:
    """Every strategy a comparison sweeps, in registry order, by ``sweep_label`` (or by
    ``name`` with ``labels=False``). ``room_params`` go to the strategies that use rooms (for
    example ``resolver=``); ``stateless`` leaves out those that need the previous assignment;
    ``rooms_last`` puts the room-aware ones after the others."""
    chosen = [(n, r) for n, r in REGISTRY.items()
              if r.sweep is not None and not (stateless and r.uses_previous)]
    if rooms_last:
        chosen.sort(key=lambda nr: nr[1].uses_rooms)
    out: dict[str, AllocateStrategy] = {}
    for name, r in chosen:
        strategy = make(name, **(r.sweep or {}), **(room_params if r.uses_rooms else {}))
        out[(r.sweep_label if labels else None) or strategy.name] = strategy
    return out


def default_strategies() -> dict[str, AllocateStrategy]:
    """One instance of each strategy that needs no deployment-specific configuration and no
    rooms: what the replay compares unless told otherwise."""
    return {name: make(name, **r.sweep) for name, r in REGISTRY.items()
            if r.sweep is not None and not r.uses_rooms}
