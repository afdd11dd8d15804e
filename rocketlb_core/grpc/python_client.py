"""rocketmq-python-client 5.1.2's balancing (apache/rocketmq-clients ``python/``, on PyPI): where
it claims the Java client's behaviour and where it differs (issue 34, item 2).

One class does all of it, ``QueueSelector`` (``rocketmq/v5/client/balancer/queue_selector.py``):

* **the start**: ``AtomicInteger(random.randint(1, 1000))`` from the module ``random`` (Java:
  ``RandomUtils.nextInt(0, Integer.MAX_VALUE)``), a Python integer that never wraps (Java's
  ``AtomicInteger`` does, and ``IntMath.mod`` keeps it positive);
* **which queues**: the producer's are the route's writable queues on masters (broker id 0),
  the simple consumer's the readable ones on masters, in the route's order, as Java's; a *lite*
  simple consumer keeps only the first readable one;
* ``select_next_queue``: ``queues[index.get_and_increment() % n]``; no queue:
  ``IllegalArgumentException`` and the counter unchanged;
* ``select_queue_by_hash_key``: ``queues[SHA-256(key, UTF-8) as a big-endian integer % n]``
  (Java: Guava's SipHash-2-4, ``grpc.siphash``): the same message group lands on another queue;
  no queue: ``ZeroDivisionError``;
* ``all_queues``: the queues rotated to start at the next index (the counter steps even when
  there is no queue, then ``ZeroDivisionError``);
* ``update``: the new route's queues, filtered again; the counter kept.

The producer's send (``rocketmq/v5/producer/producer.py``, ``__send`` and
``__check_send_retry_condition``): every attempt takes ``select_next_queue()`` afresh (or the
group's hash queue), so a retry is the next queue whatever its broker (Java takes its
candidates once, on distinct brokers, ``grpc.send``); nothing is isolated; up to
``DEFAULT_MAX_SEND_ATTEMPTS`` 3 attempts, ended early by ``TooManyRequestsException``; no
backoff is waited between attempts. Only the last failure is logged.

Checked bit-exact by ``tests/vectors/grpc/python-client-5.1.2.jsonl.gz``, made by the client's own
``QueueSelector`` in its own venv (``rocketlb_core.vectorgen.python_client``).
Standard library only (core).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

KINDS = ("producer", "simple_consumer", "lite_simple_consumer")
Kind = Literal["producer", "simple_consumer", "lite_simple_consumer"]
MAX_ATTEMPTS = 3
"""``Producer.DEFAULT_MAX_SEND_ATTEMPTS``."""

# definition.proto's Permission: PERMISSION_UNSPECIFIED 0, NONE 1, READ 2, WRITE 3, READ_WRITE 4
READ, WRITE, READ_WRITE = 2, 3, 4


class IllegalArgumentError(ValueError):
    """The client's ``IllegalArgumentException`` (no queue to select from)."""


@dataclass(frozen=True)
class PyQueue:
    """A queue of the route as the client holds it: ``definition.proto``'s ``MessageQueue``
    reduced to what selection reads (the topic is one)."""

    broker: str
    broker_id: int
    queue_id: int
    permission: int

    def short(self) -> list[object]:
        return [self.broker, self.broker_id, self.queue_id]


def start_index(seed: int) -> int:
    """The selector's first index after ``random.seed(seed)``: ``random.randint(1, 1000)``."""
    return random.Random(seed).randint(1, 1000)


def _eligible(queues: Sequence[PyQueue], kind: Kind) -> list[PyQueue]:
    if kind == "producer":
        return [q for q in queues if q.permission in (WRITE, READ_WRITE) and q.broker_id == 0]
    readable = [q for q in queues if q.permission in (READ, READ_WRITE) and q.broker_id == 0]
    return readable[:1] if kind == "lite_simple_consumer" else readable


class QueueSelector:
    """The client's ``QueueSelector`` of one topic (see the module docstring)."""

    def __init__(self, route: Sequence[PyQueue], kind: Kind, index: int) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        self.kind: Kind = kind
        self.index = index
        self.queues = _eligible(route, kind)

    def select_next_queue(self) -> PyQueue:
        if not self.queues:
            raise IllegalArgumentError("no available message queues for selection.")
        q = self.queues[self.index % len(self.queues)]
        self.index += 1
        return q

    def select_queue_by_hash_key(self, key: str) -> PyQueue:
        digest = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest(), "big")
        if not self.queues:
            raise ZeroDivisionError("integer modulo by zero")
        return self.queues[digest % len(self.queues)]

    def all_queues(self) -> list[PyQueue]:
        at = self.index
        self.index += 1
        if not self.queues:
            raise ZeroDivisionError("integer modulo by zero")
        at %= len(self.queues)
        return self.queues[at:] + self.queues[:at]

    def update(self, route: Sequence[PyQueue]) -> None:
        self.queues = _eligible(route, self.kind)


@dataclass(frozen=True)
class PyAttempt:
    attempt: int
    queue: PyQueue
    outcome: str


def python_send(selector: QueueSelector, outcome: Callable[[PyQueue, int], str], *,
                message_group: str | None = None,
                max_attempts: int = MAX_ATTEMPTS) -> list[PyAttempt]:
    """One synchronous ``Producer.send``: the attempts, the last one ``ok`` when it was stored.
    ``outcome(queue, attempt)`` is ``ok``, ``fail`` or ``throttled``
    (``TooManyRequestsException``: no further attempt)."""
    attempts: list[PyAttempt] = []
    for n in range(1, max_attempts + 1):
        q = (selector.select_next_queue() if message_group is None
             else selector.select_queue_by_hash_key(message_group))
        got = outcome(q, n)
        attempts.append(PyAttempt(n, q, got))
        if got in ("ok", "throttled"):
            break
    return attempts


def replay_case(case: dict[str, object]) -> list[object]:
    """A vector case of ``vectorgen.python_client`` replayed here: each operation's answer as
    the case writes it (``[broker, brokerId, queueId]``, a list of them, ``None``, or
    ``{"error": <the client's exception type>}``)."""
    def route(rows: object) -> list[PyQueue]:
        assert isinstance(rows, list)
        return [PyQueue(str(b), int(i), int(q), int(p)) for b, i, q, p in rows]

    kind = case["kind"]
    seed = case["random_seed"]
    assert kind in KINDS and isinstance(seed, int)
    selector = QueueSelector(route(case["route"]), kind, start_index(seed))  # type: ignore[arg-type]
    errors = {IllegalArgumentError: "IllegalArgumentException",
              ZeroDivisionError: "ZeroDivisionError"}
    out: list[object] = []
    ops = case["ops"]
    assert isinstance(ops, list)
    for op in ops:
        try:
            if op["op"] == "next":
                out.append(selector.select_next_queue().short())
            elif op["op"] == "hash":
                out.append(selector.select_queue_by_hash_key(op["key"]).short())
            elif op["op"] == "all":
                out.append([q.short() for q in selector.all_queues()])
            else:
                selector.update(route(op["route"]))
                out.append(None)
        except (IllegalArgumentError, ZeroDivisionError) as exc:
            out.append({"error": errors[type(exc)]})
    return out
