"""The event kernel: virtual milliseconds, deterministic ordering, seeded randomness per entity,
and an append-only journal (house style 6 to 10).

Events are frozen dataclasses addressed to an entity by name (``rocketlb_core.sim.events``:
one type per kind, and the named priorities). The queue orders them by
``(time_ms, priority, sequence)``, SimPy's rule, so two events at the same millisecond run in a
fixed order: by priority, then in the order they were scheduled. Nothing reads the wall clock.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Say(Event):
...     word: str
>>> env = Environment(seed=1)
>>> log = []
>>> class Echo:
...     def handle(self, env, event):
...         log.append((env.now, event.word))
>>> env.register("echo", Echo())
>>> env.schedule(5, Say("echo", "b"))
>>> env.schedule(5, Say("echo", "a"), priority=-1)
>>> env.run(until=10)
>>> log
[(5, 'a'), (5, 'b')]
"""

from __future__ import annotations

import hashlib
import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Event:
    """Base of every event: the entity it is addressed to."""

    target: str


class Entity(Protocol):
    def handle(self, env: Environment, event: Event) -> None: ...


@dataclass(slots=True)
class JournalRecord:
    """One thing that happened: when, what, who, and the details (JSON-able values)."""

    time_ms: int
    kind: str
    entity: str
    fields: dict[str, Any] = field(default_factory=dict)


class Environment:
    """The simulated world's clock, event queue, entities, randomness and journal."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.now = 0
        self._queue: list[tuple[int, int, int, Event]] = []
        self._seq = 0
        self.entities: dict[str, Entity] = {}
        self.journal: list[JournalRecord] = []
        self.events_processed = 0
        self.journal_sink: Callable[[JournalRecord], None] | None = None
        self.spill_kinds: frozenset[str] = frozenset()

    def register(self, name: str, entity: Entity) -> None:
        if name in self.entities:
            raise ValueError(f"entity {name!r} registered twice")
        self.entities[name] = entity

    def rng(self, name: str) -> random.Random:
        """A random stream of its own for ``name``, derived from the run's seed: adding an entity
        never changes another entity's draws."""
        digest = hashlib.sha256(f"{self.seed}/{name}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def schedule(self, delay_ms: int, event: Event, priority: int = 0) -> None:
        if delay_ms < 0:
            raise ValueError(f"cannot schedule {delay_ms} ms in the past")
        self.schedule_at(self.now + delay_ms, event, priority)

    def schedule_at(self, time_ms: int, event: Event, priority: int = 0) -> None:
        if time_ms < self.now:
            raise ValueError(f"cannot schedule at {time_ms}, before now ({self.now})")
        self._seq += 1
        heapq.heappush(self._queue, (time_ms, priority, self._seq, event))

    def log(self, kind: str, entity: str, **fields: Any) -> None:
        """Journal a record. With a ``journal_sink``, every record also goes to it as it is
        made, and those of ``spill_kinds`` go there only (the lag samples, which grow with
        simulated time and which no summary reads: ``run_scenario(journal_sink=...)``)."""
        record = JournalRecord(self.now, kind, entity, fields)
        if self.journal_sink is not None:
            self.journal_sink(record)
            if kind in self.spill_kinds:
                return
        self.journal.append(record)

    def step(self) -> bool:
        """Process the next event; ``False`` when none is left."""
        if not self._queue:
            return False
        time_ms, _, _, event = heapq.heappop(self._queue)
        self.now = time_ms
        self.events_processed += 1
        entity = self.entities.get(event.target)
        if entity is not None:
            entity.handle(self, event)
        return True

    def run(self, until: int) -> None:
        """Process every event scheduled before ``until`` (ms), then set the clock to it."""
        queue = self._queue
        while queue and queue[0][0] < until:
            self.step()
        self.now = max(self.now, until)
