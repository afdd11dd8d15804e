"""The simulator's events: one frozen dataclass per kind, addressed to an entity by name
(``Event.target``), and the named priorities that order events of the same millisecond
(SimPy's ``URGENT``/``NORMAL``, spelled for this cluster).

Entities dispatch on the event's type (``match event: case Heartbeat(): ...``), never on a
string. A consumer's periodic timers carry the ``incarnation`` they were set in, so a timer
of an earlier life (before a crash and a restart) is recognised and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from rocketlb_core.sim.kernel import Event

if TYPE_CHECKING:
    from rocketlb_core.sim.scenario import EventSpec


PULL_TICK_MS = 500
"""A consumer pulls from the queues it owns this often."""
CONSUME_MAX_SPAN = 2000
"""``consumeConcurrentlyMaxSpan``: a concurrent push consumer puts a pull off 50 ms while the
messages still in its process queue span more offsets than this (``getMaxSpan()``, last key less
first; consumed ones leave it). The simulator consumes a pulled range at once, so a slow message
alone never brings its queue there: its pulls go on, its committed offset stays behind."""
LAG_SAMPLE_MS = 5_000
"""The world journals every group's lag per queue this often."""


class Priority(IntEnum):
    """Which of two events at the same millisecond runs first (lower first)."""

    SCRIPT = -1       # the scenario's events: the world changes before anybody acts on it
    NORMAL = 0        # timers and messages
    REBALANCE = 1     # a rebalance sees everything else that happened in its millisecond
    SAMPLE = 2        # lag samples: a snapshot after the millisecond's work


# ------------------------------------------------------------------ clients
@dataclass(frozen=True, slots=True)
class LifeTimer(Event):
    """A client's periodic timer, tagged with the incarnation (life) it was set in."""

    incarnation: int = 0


@dataclass(frozen=True, slots=True)
class RoutePoll(LifeTimer):
    """A client polls the name servers for its topic's route (``pollNameServerInterval``)."""


@dataclass(frozen=True, slots=True)
class Heartbeat(LifeTimer):
    """A consumer heartbeats every broker it knows."""


@dataclass(frozen=True, slots=True)
class Pull(LifeTimer):
    """A consumer pulls from the queues it owns."""


@dataclass(frozen=True, slots=True)
class PersistOffsets(LifeTimer):
    """A consumer commits its offsets to the brokers."""


@dataclass(frozen=True, slots=True)
class SendTick(Event):
    """A producer sends the messages that have come due."""


@dataclass(frozen=True, slots=True)
class Rebalance(Event):
    """A rebalance run; only the latest scheduled one (its ``token``) runs."""

    token: int


@dataclass(frozen=True, slots=True)
class Notify(Event):
    """``NOTIFY_CONSUMER_IDS_CHANGED`` arriving at a consumer (one-way, may be lost)."""

    group: str


# ------------------------------------------------------------------ servers
@dataclass(frozen=True, slots=True)
class BrokerRegister(Event):
    """A broker registers with every name server (every 30 s)."""


@dataclass(frozen=True, slots=True)
class ChannelScan(Event):
    """A broker drops client channels idle for too long."""


@dataclass(frozen=True, slots=True)
class BrokerScan(Event):
    """A name server drops brokers it has not heard from for too long."""


@dataclass(frozen=True, slots=True)
class IdleCheck(Event):
    """A broker's Netty ``IdleStateHandler`` for a client's channel that went quiet (its host
    vanished, or a partition cut it): closes it 120 s after its last traffic either way."""

    group: str
    channel: str


@dataclass(frozen=True, slots=True)
class HeldPulls(Event):
    """A broker answers the pulls it holds for a client that went quiet: on a message's
    arrival, or at the 15 s suspend timeout (each answer is a write on the channel)."""

    channel: str


@dataclass(frozen=True, slots=True)
class BrokerIdle(Event):
    """A name server's ``IdleStateHandler`` for a broker's connection (registrations every
    30 s): closes it, and drops the broker, 120 s after the last one."""

    broker: str
    since: int


# ------------------------------------------------------------------ the scenario
@dataclass(frozen=True, slots=True)
class Scripted(Event):
    """One of the scenario's events (``rocketlb_core.sim.faults``) at its time."""

    spec: EventSpec


@dataclass(frozen=True, slots=True)
class LagSample(Event):
    """The world journals every group's lag per queue (every 5 s)."""
