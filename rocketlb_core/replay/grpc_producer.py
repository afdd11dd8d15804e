"""The gRPC producer replayed on a recorded trace (issue 34, item 4): the sends a producer made,
sent instead through rocketmq-client-java 5.0.8's ``PublishingLoadBalancer`` and
``ProducerImpl``'s send loop (the core's ``rocketlb_core.grpc``, exact against the client's own
classes), under the same recorded broker conditions (``replay.timeline``) and the same
counter-based draws (``replay.draws``). ``rocketlb replay producer --client grpc``.

What is the client's here, and what is assumed:

- **Candidates and retries** (the core, unchanged): each send takes its candidates once,
  ``takeMessageQueues(isolated, maxAttempts)`` with ``maxAttempts`` 3 (the builder's default),
  on distinct brokers, skipping isolated endpoints (taking them anyway when every endpoint is
  isolated); attempt ``n`` goes to candidate ``(n - 1) mod len``; a failed attempt isolates its
  endpoints and the next attempt goes at once (no throttling is recorded, so the retry policy's
  delay never applies). The balancer's counter starts at a draw from ``--seed`` (upstream:
  ``RandomUtils.nextInt(0, Integer.MAX_VALUE)``; ``ReplayConfig.index_start`` pins it) and
  survives route updates (``PublishingLoadBalancer.update``).
- **Endpoints** (assumed): the Proxy in *local* mode, inside each broker, so each broker's
  queues carry its own endpoints (its master's address in the trace's layout) and an isolation
  excludes one broker. Behind a cluster-mode Proxy every queue carries the Proxy's endpoints:
  one isolation excludes them all, so the all-isolated pass takes every broker anyway and
  isolation changes nothing.
- **Where the message lands** (the Proxy's, not the client's): the replay writes the queue the
  client chose, which its receipt shows. A local-mode Proxy keeps the send on that broker but
  draws the queue of it at random (a new ``MessageQueueView`` per send: book fact
  ``proxy.local-mode-fresh-view-random-queue``), so per broker the replay is exact and per
  queue it is the client's view. A cluster-mode Proxy picks the queue itself, broker included
  (``proxy.send-selects-its-own-queue``; its selection is ``grpc.proxy_send``, checked live by
  ``trace.grpc_agreement``).
- **Timers** (the client's constants): the producer starts at its first send, fetching the
  route then; ``updateRouteCache`` runs 10 s later and every 30 s after that
  (``ClientImpl.startUp``); heartbeats go to every endpoint of the route 1 s after the start
  and every 10 s (``ClientManagerImpl.HEART_BEAT_*``), and one answered (the broker up and
  reachable from this producer at that moment) ends that endpoint's isolation. The Proxy's
  route drops a broker as the name servers do (``Conditions.in_route_at``).
- **Attempts** (as the remoting replay's broker model): a broker up and reachable answers after
  its latency draw, if that is within the attempt's ``requestTimeout`` (3 s, the builder's
  default: per attempt, there is no overall send budget), else the attempt fails at the
  deadline like any other (``DEADLINE``; the broker may still store it, which the replay,
  like the remoting one, does not count); a broker down cleanly refuses at once
  (``fail_fast_ms``); a silent broker, or one cut off from the producer, lets the attempt run
  out its ``requestTimeout``. The sending thread is
  blocked on each send (``Producer.send``, synchronous), as in the remoting replay.
- **Message groups**: the trace's sends carry no message group (``key`` is the message key,
  which the gRPC client's selection never reads), so every send is a normal message; FIFO
  sends (``takeMessageQueueByMessageGroup``) are not replayed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from rocketlb_core.grpc.publishing import (
    MASTER_BROKER_ID,
    AtomicCounter,
    GrpcQueue,
    Permission,
    PublishingLoadBalancer,
)
from rocketlb_core.grpc.send import Outcome, ProducerSendLoop
from rocketlb_core.javamath import INT_MAX
from rocketlb_core.model import TopicRoute
from rocketlb_core.replay.config import FAILED, STATUS_CODE, ReplayConfig
from rocketlb_core.replay.draws import draw_bits, fail_fast_ms, producer_key
from rocketlb_core.replay.stepped import Columns, route_listing
from rocketlb_core.replay.timeline import Conditions

CLIENT = "grpc"
"""``ReplayConfig.client`` and ``--client`` for this replay."""
MAX_ATTEMPTS = 3
"""``ProducerBuilder.setMaxAttempts``'s default."""
REQUEST_TIMEOUT_MS = 3_000
"""``ClientConfigurationBuilder``'s ``requestTimeout`` default: one attempt's deadline."""
ROUTE_INITIAL_MS, ROUTE_PERIOD_MS = 10_000, 30_000
"""``ClientImpl.startUp``: ``updateRouteCache`` at a fixed delay of 30 s after 10 s."""
HEARTBEAT_INITIAL_MS, HEARTBEAT_PERIOD_MS = 1_000, 10_000
"""``ClientManagerImpl.HEART_BEAT_INITIAL_DELAY`` and ``HEART_BEAT_PERIOD``."""
REFUSED = "UNAVAILABLE: connection refused"
"""What the application sees when the last attempt met a broker down cleanly."""
DEADLINE = "DEADLINE_EXCEEDED: no answer within requestTimeout (3 s)"
"""... met a silent broker, one cut off from the producer, or one slower than 3 s."""
NO_QUEUE = "No writable message queue found"
"""... found no broker in the route (``PublishingLoadBalancer``'s constructor)."""


def balancer_start(seed: int, producer: str) -> int:
    """The balancer's counter start for a producer: ``RandomUtils.nextInt(0,
    Integer.MAX_VALUE)``, drawn from the replay's seed."""
    digest = hashlib.blake2b(f"{seed}/{producer}/grpc-index".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % INT_MAX


def endpoints_of(route: TopicRoute, broker: str) -> str:
    """A broker's endpoints behind a local-mode Proxy: its master's address (else its name)."""
    for bd in route.broker_datas:
        if bd.broker_name == broker and MASTER_BROKER_ID in bd.addrs:
            return str(bd.addrs[MASTER_BROKER_ID])
    return broker


def grpc_queues(topic: str, route: TopicRoute) -> list[GrpcQueue]:
    """The route's writable master queues as the Proxy hands them to the client: the remoting
    producer's queue list (``publish_queues``: brokers by name, queue ids ascending)."""
    _, queues, _ = route_listing(route, topic, tuple(True for _ in route.queue_datas))
    return [GrpcQueue(topic, q.broker_name, MASTER_BROKER_ID,
                      endpoints_of(route, q.broker_name), q.queue_id, Permission.READ_WRITE)
            for q in queues]


class GrpcProducerReplayer:
    """One producer's sends through the gRPC client's balancer and send loop: the
    ``ProducerReplayer`` interface (``run(due) -> Columns``, ``seq``, ``stepped``), so both
    engines run it unchanged."""

    def __init__(self, producer: str, topic: str, route: TopicRoute, conditions: Conditions,
                 config: ReplayConfig, brokers: Sequence[str],
                 errors: dict[str, int] | None = None) -> None:
        self.producer, self.topic, self.route, self.conditions = producer, topic, route, \
            conditions
        self.key = producer_key(config.seed, producer)
        start = (config.index_start if config.index_start is not None
                 else balancer_start(config.seed, producer))
        self.counter = AtomicCounter(start)
        self.loop = ProducerSendLoop(MAX_ATTEMPTS)
        self.broker_code = {b: i for i, b in enumerate(brokers)}
        self.errors = errors if errors is not None else {}
        self.endpoints = {qd.broker_name: endpoints_of(route, qd.broker_name)
                          for qd in route.queue_datas}
        self.balancer: PublishingLoadBalancer | None = None
        self.listed: tuple[bool, ...] | None = None
        self.heard: set[str] = set()          # the endpoints the route lists (heartbeats)
        self._balancers: dict[tuple[bool, ...], PublishingLoadBalancer | None] = {}
        self.next_route = self.next_heartbeat = -1
        self.busy = 0
        self.seq = 0
        self.stepped = 0

    # ------------------------------------------------------------------ timers
    def _use_route(self, t: int) -> None:
        """A route fetch at ``t``: the balancer for the brokers the Proxy lists then (one per
        pattern, all sharing the one counter); none when no queue is writable."""
        listed = tuple(self.conditions.in_route_at(qd.broker_name, t)
                       for qd in self.route.queue_datas)
        if listed == self.listed:
            return
        self.listed = listed
        if listed not in self._balancers:
            _, queues, _ = route_listing(self.route, self.topic, listed)
            self._balancers[listed] = PublishingLoadBalancer(
                [GrpcQueue(self.topic, q.broker_name, MASTER_BROKER_ID,
                           self.endpoints[q.broker_name], q.queue_id, Permission.READ_WRITE)
                 for q in queues], self.counter) if queues else None
        self.balancer = self._balancers[listed]
        self.heard = {self.endpoints[qd.broker_name]
                      for qd, on in zip(self.route.queue_datas, listed, strict=True) if on}

    def _heartbeat(self, t: int) -> None:
        """Heartbeats at ``t`` to the route's endpoints: an answered one rejoins."""
        answered = [qd.broker_name for qd in self.route.queue_datas
                    if self.endpoints[qd.broker_name] in self.loop.isolated
                    and self.endpoints[qd.broker_name] in self.heard
                    and self.conditions.down_at(qd.broker_name, t) is None
                    and not self.conditions.partitioned(self.producer, qd.broker_name, t)]
        self.loop.rejoin(self.endpoints[b] for b in answered)

    def _advance(self, limit: int) -> None:
        """Run the route fetches and heartbeats due before ``limit``, in time order
        (heartbeats while nothing is isolated change nothing: skipped)."""
        while True:
            if not self.loop.isolated and self.next_heartbeat < limit:
                behind = (limit - 1 - self.next_heartbeat) // HEARTBEAT_PERIOD_MS + 1
                self.next_heartbeat += behind * HEARTBEAT_PERIOD_MS
            t = min(self.next_route, self.next_heartbeat)
            if t >= limit:
                return
            if t == self.next_route:
                self._use_route(t)
                self.next_route += ROUTE_PERIOD_MS
            else:
                self._heartbeat(t)
                self.next_heartbeat += HEARTBEAT_PERIOD_MS

    def _error_code(self, error: str) -> int:
        return self.errors.setdefault(error, len(self.errors))

    # ------------------------------------------------------------------ sends
    def run(self, due: np.ndarray[Any, Any]) -> Columns:
        out = Columns.empty(due)
        for i in range(len(due)):
            self._send(out, i, int(due[i]))
        return out

    def _send(self, out: Columns, i: int, due: int) -> None:
        self.stepped += 1
        start = max(due, self.busy)
        if self.balancer is None and self.listed is None:      # the producer starts
            self._use_route(start)
            self.next_route = start + ROUTE_INITIAL_MS
            self.next_heartbeat = start + HEARTBEAT_INITIAL_MS
        self._advance(start + 1)
        out.seq[i], out.start[i] = self.seq, start
        seq = self.seq
        self.seq += 1
        if self.balancer is None:
            out.end[i] = start
            out.status[i], out.broker[i], out.queue_id[i], out.attempts[i] = FAILED, -1, -1, 0
            out.error[i] = self._error_code(NO_QUEUE)
            return
        clock = start
        error = ""

        def outcome(q: GrpcQueue, attempt: int) -> Outcome:
            nonlocal clock, error
            bits = draw_bits(self.key, seq, attempt)
            mode = self.conditions.down_at(q.broker, clock)
            cut = self.conditions.partitioned(self.producer, q.broker, clock)
            if mode is None and not cut:
                took = self.conditions.latency_at(q.broker, clock).latency(bits)
                if took <= REQUEST_TIMEOUT_MS:
                    clock += took
                    return "ok"
                clock += REQUEST_TIMEOUT_MS      # a slow broker that is up: the deadline first
                error = DEADLINE
                self._advance(clock)
                return "fail"
            refused = mode == "clean" and not cut
            clock += fail_fast_ms(bits) if refused else REQUEST_TIMEOUT_MS
            error = REFUSED if refused else DEADLINE
            self._advance(clock)           # heartbeats before the failure is known
            return "fail"

        r = self.loop.send(self.balancer, outcome)
        self.busy = clock
        out.end[i] = clock
        out.attempts[i] = len(r.attempts)
        if r.ok:
            q = r.attempts[-1].queue
            out.status[i] = STATUS_CODE["SEND_OK"]
            out.broker[i], out.queue_id[i], out.error[i] = self.broker_code[q.broker], \
                q.queue_id, -1
        else:
            out.status[i], out.broker[i], out.queue_id[i] = FAILED, -1, -1
            out.error[i] = self._error_code(error)
