"""The gRPC producer's send retry loop (rocketmq-client-java 5.0.8,
``org/apache/rocketmq/client/java/impl/producer/ProducerImpl.java``: ``send``, ``send0``,
``isolate``; ``impl/ClientImpl.java``: ``doHeartbeat``, ``isolated``).

One send:

1. the candidates are taken once, before the first attempt: for a message without a group
   ``takeMessageQueues(isolated, maxAttempts)`` (``grpc.publishing``; ``maxAttempts`` of the
   producer, 3 by default), for a FIFO message the one queue of its message group (SipHash-2-4);
2. attempt ``n`` (from 1) goes to ``candidates[IntMath.mod(n - 1, len(candidates))]``: with
   fewer candidates than attempts (fewer brokers, or a FIFO message) the loop wraps to the first
   candidate again;
3. a failed attempt adds its broker's endpoints to the client's ``isolated`` set; with attempts
   left, the next one is sent at once, or after the retry policy's delay when the failure was
   ``TooManyRequestsException`` (the policy starts as ``immediatelyRetryPolicy(maxAttempts)``;
   once the Proxy's settings arrive, ``PublishingSettings.sync`` takes their backoff and keeps
   the client's ``maxAttempts``: the Proxy's defaults, ``grpcClientProducerBackoff*``, wait
   ``min(10 ms * 2^(n - 1), 1 s)`` before attempt ``n``); a success
   ends the send (later attempts of the same send never see the isolation's effect on the
   candidates: those were fixed in step 1);
4. the isolation ends when a heartbeat to those endpoints is answered ``OK`` (``rejoin``), and
   until then every later send's candidates skip them (unless every endpoint is isolated). The
   endpoints are the Proxy's, and the Proxy answers the heartbeat itself
   (``ClientActivity.heartbeat`` registers the producer and answers ``OK`` whatever the brokers'
   state): behind one cluster-mode Proxy every broker shares those endpoints, so one failure
   isolates all of them (the candidates then come from the all-isolated pass) and the next
   heartbeat ends it, while the broker may still be down; only a Proxy per broker (local mode),
   which stops answering when its broker's process or host does, lets the isolation keep a
   failed broker away.

Which candidate each attempt uses, and the isolated set after each send, are what the vectors
of ``tests/vectors/grpc/grpc-send-5.0.8.jsonl.gz`` check (``ProducerImpl`` itself, driven with a
scripted client manager).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from rocketlb_core.grpc.publishing import GrpcQueue, PublishingLoadBalancer

Outcome = Literal["ok", "fail", "throttled"]
"""An attempt's answer: a send receipt; a failure (an exception, or a status other than OK);
``TooManyRequestsException`` (a failure retried after the policy's delay)."""


@dataclass(frozen=True)
class GrpcAttempt:
    attempt: int
    queue: GrpcQueue
    outcome: Outcome
    after_delay: bool           # sent after the retry policy's delay (the previous was throttled)


@dataclass(frozen=True)
class GrpcSendResult:
    ok: bool
    candidates: list[GrpcQueue]
    attempts: list[GrpcAttempt]


@dataclass
class ProducerSendLoop:
    """A producer's ``maxAttempts`` and its ``isolated`` endpoints (shared by its sends)."""

    max_attempts: int = 3
    isolated: set[str] = field(default_factory=set)

    def candidates(self, balancer: PublishingLoadBalancer,
                   message_group: str | None = None) -> list[GrpcQueue]:
        if message_group is None:
            return balancer.take_message_queues(self.isolated, self.max_attempts)
        return [balancer.take_message_queue_by_message_group(message_group)]

    def send(self, balancer: PublishingLoadBalancer, outcome: Callable[[GrpcQueue, int], Outcome],
             message_group: str | None = None) -> GrpcSendResult:
        """One send: ``outcome(queue, attempt)`` answers each attempt."""
        candidates = self.candidates(balancer, message_group)
        attempts: list[GrpcAttempt] = []
        attempt, delayed = 1, False
        while True:
            mq = candidates[(attempt - 1) % len(candidates)]
            got = outcome(mq, attempt)
            attempts.append(GrpcAttempt(attempt, mq, got, delayed))
            if got == "ok":
                return GrpcSendResult(True, candidates, attempts)
            self.isolated.add(mq.endpoints)
            if attempt >= self.max_attempts:
                return GrpcSendResult(False, candidates, attempts)
            attempt, delayed = attempt + 1, got == "throttled"

    def rejoin(self, endpoints: Iterable[str]) -> None:
        """Heartbeats answered ``OK`` by these endpoints: they leave the isolated set."""
        for e in endpoints:
            self.isolated.discard(e)
