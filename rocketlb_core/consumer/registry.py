"""Every allocation strategy by its RocketMQ name (``getName()``), like Maelstrom's workload map.

``make("CONSISTENT_HASH", virtual_nodes=5)`` builds one with parameters;
``default_strategies()`` is the set the book and the comparisons sweep over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rocketlb_core.consumer.base import AllocateStrategy
from rocketlb_core.consumer.consistent_hash import consistent_hash
from rocketlb_core.consumer.nearby import PrefixResolver, machine_room_nearby
from rocketlb_core.consumer.sticky import consistent_hash_bounded, sticky
from rocketlb_core.consumer.strategies import avg, avg_by_circle, config, machine_room


def _nearby(inner: str = "AVG", separator: str = "-", **inner_params: Any) -> AllocateStrategy:
    return machine_room_nearby(make(inner, **inner_params), PrefixResolver(separator))


REGISTRY: dict[str, Callable[..., AllocateStrategy]] = {
    "AVG": avg,
    "AVG_BY_CIRCLE": avg_by_circle,
    "CONFIG": config,
    "MACHINE_ROOM": machine_room,
    "MACHINE_ROOM_NEARBY": _nearby,
    "CONSISTENT_HASH": consistent_hash,
    "STICKY": sticky,
    "CONSISTENT_HASH_BOUNDED": consistent_hash_bounded,
}
UPSTREAM = ("AVG", "AVG_BY_CIRCLE", "CONFIG", "MACHINE_ROOM", "MACHINE_ROOM_NEARBY",
            "CONSISTENT_HASH")


def make(name: str, **params: Any) -> AllocateStrategy:
    """The strategy registered as ``name`` (RocketMQ's spelling), built with ``params``."""
    try:
        factory = REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown allocation strategy {name!r} "
                         f"(known: {', '.join(REGISTRY)})") from None
    return factory(**params)


def default_strategies() -> dict[str, AllocateStrategy]:
    """One instance of each strategy that needs no deployment-specific configuration."""
    return {name: make(name) for name in ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "STICKY",
                                          "CONSISTENT_HASH_BOUNDED")}
