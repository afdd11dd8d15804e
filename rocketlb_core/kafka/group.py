"""A recorded membership timeline as a Kafka consumer group sees it (issue 16, part 4).

The consumer replay (``rocketlb_core.replay.consumer``) runs Kafka's assignors on the same
recorded day as RocketMQ's strategies. What changes is who is in the group when, and under which
identity (``../shared/reference/peers.md``, Kafka):

- **Identity.** The group coordinator gives each joining consumer its own member id,
  ``client.id`` + ``-`` + a random UUID, so two processes with one ``client.id`` are two
  members: Kafka has no duplicate-client-id trap. A member that rejoins after a restart gets a
  new id. The UUIDs here come from a ``random.Random`` seeded by ``seed`` (every choice seeded).
- **Leaving.** A clean shutdown sends ``LeaveGroup``: the group rebalances at once. A consumer
  that dies without it (``crash``: its host vanished; ``kill``: its process was killed) stays a
  member until ``session.timeout.ms`` passes without a heartbeat (45 s, the default since Kafka
  3.0, KIP-735): the coordinator does not watch TCP connections, so a killed process waits as
  long as a vanished host (RocketMQ's broker drops a closed channel at once, and waits 120 s
  for a silent one).
- **Partitions.** A queue is a partition: the group's topic has as many partitions as the trace
  has queues, numbered in ``MessageQueue`` order, and the assignor's partition ``p`` is the
  ``p``-th queue.

Settled states only, as for RocketMQ: the group's assignment once every member has rejoined.
Under the eager protocol (range, round robin) every member gives up every partition while the
group rebalances; that pause (a few seconds: the members' next poll) is not counted.
"""

from __future__ import annotations

import heapq
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

SESSION_TIMEOUT_MS = 45_000
"""``session.timeout.ms``: a member silent this long is removed (default since Kafka 3.0)."""

COOPERATIVE_GAP_MS = 3_000
"""Between the cooperative protocol's two rebalances: the members that gave partitions up
rejoin at once, the others learn of the rebalance from their next heartbeat
(``heartbeat.interval.ms``, 3 s by default), so the second completes within about one
heartbeat interval. An assumption of the model (the replay has no clock finer than the
recorded changes); the partitions that move are unowned for this long."""

KIP848_HEARTBEAT_MS = 5_000
"""``group.consumer.heartbeat.interval.ms`` (KIP-848's default): a member learns of a new
target, and the coordinator of a revocation, on a heartbeat."""

KAFKA_PREFIX = "kafka-"
"""Strategy names of the consumer replay that run a Kafka assignor: ``kafka-range``,
``kafka-roundrobin``, ``kafka-sticky``, ``kafka-cooperative-sticky`` (``assignors.ASSIGNORS``
after the prefix), ``kafka-uniform`` and ``kafka-server-range`` (KIP-848:
``assignors.uniform_assign`` and ``server_range_assign`` on the coordinator)."""


@dataclass(frozen=True)
class KafkaChange:
    time_ms: int
    view: tuple[tuple[str, str, str], ...]   # (Kafka member id, member, client id), the group
    alive: frozenset[str]                    # member ids that are really consuming


def member_timeline(rows: Sequence[tuple[int, str, str, str]], seed: int = 0
                    ) -> list[KafkaChange]:
    """The group after each change, from ``(time_ms, event, member, client_id)`` rows in the
    trace's order (``join``, ``leave``, ``kill``, ``crash``). A member that dies and restarts
    before its session times out is two members for a while: the dead one keeps its share."""
    rng = random.Random(seed)
    pending = [(t, i, event, member, cid, "") for i, (t, event, member, cid) in enumerate(rows)]
    heapq.heapify(pending)
    group: dict[str, tuple[str, str]] = {}          # member id -> (member, client id)
    current: dict[str, str] = {}                    # member -> its live member id
    out: list[KafkaChange] = []
    while pending:
        t, i, kind, member, cid, mid = heapq.heappop(pending)
        if kind == "join":
            old = current.get(member)
            if old is not None:                      # joined twice without leaving: one process
                continue
            # the coordinator's UUID.randomUUID(), drawn from the seeded generator
            mid = f"{cid}-{uuid.UUID(int=rng.getrandbits(128), version=4)}"
            group[mid] = (member, cid)
            current[member] = mid
        elif kind == "leave":
            left = current.pop(member, None)
            if left is not None:
                group.pop(left, None)
        elif kind in ("crash", "kill"):
            dead = current.pop(member, None)
            if dead is not None:
                heapq.heappush(pending, (t + SESSION_TIMEOUT_MS, i, "expire", member, cid, dead))
        elif kind == "expire":
            group.pop(mid, None)
        change = KafkaChange(t, tuple(sorted((m, who, c) for m, (who, c) in group.items())),
                             frozenset(current.values()))
        if out and out[-1].time_ms == t:
            out[-1] = change
        elif not out or (out[-1].view, out[-1].alive) != (change.view, change.alive):
            out.append(change)
    return out
