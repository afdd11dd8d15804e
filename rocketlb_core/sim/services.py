"""What a simulated entity may ask of the world it lives in: the small interface the world
passes to every client and server when it builds them (SimPy's environment, for a cluster).
Entities hold no reference to ``World`` itself, so what they can reach is exactly this list.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rocketlb_core.model import MessageQueue, TopicRoute
    from rocketlb_core.producer.line import ProducerLine
    from rocketlb_core.sim.cluster import Broker, BrokerEntity, Network
    from rocketlb_core.sim.kernel import Environment
    from rocketlb_core.sim.ledger import Ledger


class DeferredStores(Protocol):
    """Messages stored but not yet counted in the brokers' stores and the ledger: a producer
    that adds them up elsewhere (``simfast``'s compiled sends) brings them in when asked."""

    def settle(self, queues: Sequence[MessageQueue] | None) -> None:
        """Count what is deferred for ``queues`` (``None``: every queue)."""


class Services(Protocol):
    """The world as an entity sees it."""

    @property
    def line(self) -> ProducerLine:
        """The RocketMQ line every client and server runs (its rules: ``line.rules``)."""

    @property
    def tick_ms(self) -> int:
        """How often producers send what has come due."""

    @property
    def duration_ms(self) -> int:
        """When the scenario stops sending."""

    @property
    def changes(self) -> int:
        """How many scripted events (faults, latency changes) have been applied: the network
        and the brokers' latencies change only then, so a cache of them keys on this."""

    deferred: DeferredStores | None
    """What counts stored messages later (``settle_stores``); ``None``: nothing is deferred."""

    @property
    def network(self) -> Network:
        """Who can reach whom (down brokers, partitions)."""

    @property
    def brokers(self) -> Mapping[str, Broker]:
        """Each broker's state: its queues, stored messages, consumer table, offsets."""

    @property
    def ledger(self) -> Ledger:
        """Every message's fate, for the summary."""

    def settle_stores(self, queues: Sequence[MessageQueue] | None = None) -> None:
        """Before reading stored counts (a broker's ``store`` or ``max_offset``, the ledger's
        ``QueueAccount.stored``) of ``queues`` (``None``: any): count what is deferred."""

    def broker_entity(self, name: str) -> BrokerEntity:
        """The broker ``name`` as a server (heartbeats, unregister)."""

    def query_route(self, client: str, topic: str, rng: random.Random) -> TopicRoute | None:
        """A topic's route from a name server that is up (``None``: none answers)."""

    def register_broker(self, env: Environment, broker: Broker) -> None:
        """A broker registers with every name server that is up."""

    def last_request(self, client: str, broker: str) -> int | None:
        """When ``client`` last sent ``broker`` anything, if it has gone quiet there (its
        host vanished, a partition); ``None`` while it still talks to it."""

    def ownership_changed(self, env: Environment) -> None:
        """Queue ownership may have changed: the world re-reads it (for the summary)."""
