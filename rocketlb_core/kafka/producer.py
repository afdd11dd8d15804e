"""A Kafka producer replayed on a recorded trace (issue 16, part 4): the sends a RocketMQ
producer made, sent instead through Kafka's partitioner (``kafka.partitioner``, exact against
``kafka-clients``) under the same recorded broker conditions (``replay.timeline``), with the
same counter-based draws (``replay.draws``). ``rocketlb replay producer --partitioner kafka``.

What is Kafka's here, and what is a model:

- **Partitions.** A queue is a partition; its leader is the queue's broker, and with no
  replicas nothing fails over. A partition has no leader from the moment its broker goes down
  cleanly (a controlled shutdown), or ``BROKER_SESSION_TIMEOUT_MS`` after it falls silent (the
  KRaft controller fences it), until it is back: Kafka's own timing, not RocketMQ's name
  servers'. A record whose partition has no leader waits in the producer for one.
- **Choosing** (Kafka's own code): records carry no key in the recorded traces, so each goes to
  the sticky partition of ``BuiltInPartitioner``, which switches after ``batch.size`` bytes
  (16,384; a record is ``RECORD_BYTES``) to a random available partition, weighted by how few
  batches wait for each (KIP-794) when their counts differ.
- **Waiting batches** (a model): Kafka's accumulator reports, per partition, the batches not yet
  sent; here, the batches of records appended but not yet acknowledged, less the
  ``MAX_IN_FLIGHT`` requests a connection may have outstanding.
- **Sending** (a model of the defaults): the producer is asynchronous, so a record starts when
  it is due; each attempt meets the broker as a RocketMQ send would (its latency draw; a clean
  outage refuses in a few ms, a silent one times out after ``request.timeout.ms``); a failed
  attempt is retried to the **same** partition after ``retry.backoff.ms`` until
  ``delivery.timeout.ms`` has passed since the record was due, and then the record fails.
  Batching and ``linger.ms`` are not modelled: a record is acknowledged on its own.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np

from rocketlb_core.kafka.partitioner import BuiltInPartitioner
from rocketlb_core.model import TopicRoute, publish_queues
from rocketlb_core.replay.config import FAILED, STATUS_CODE, ReplayConfig
from rocketlb_core.replay.draws import draw_bits, fail_fast_ms, producer_key
from rocketlb_core.replay.stepped import Columns
from rocketlb_core.replay.timeline import Conditions

BATCH_SIZE = 16_384
"""``batch.size``: the bytes after which the sticky partition switches."""
RECORD_BYTES = 1_024
"""The size of a replayed record (what the recorded traces hold for every send)."""
MAX_IN_FLIGHT = 5
"""``max.in.flight.requests.per.connection``: batches a partition may have sent and unanswered
before the next ones wait in its queue (the model's count of waiting batches)."""
REQUEST_TIMEOUT_MS = 30_000
"""``request.timeout.ms``: an unanswered attempt fails after this."""
RETRY_BACKOFF_MS = 100
"""``retry.backoff.ms``: the wait before a failed batch is sent again."""
DELIVERY_TIMEOUT_MS = 120_000
"""``delivery.timeout.ms``: a record not acknowledged this long after it was due fails."""
EXPIRED = "Expiring record(s): delivery.timeout.ms has passed since it was due"
BROKER_SESSION_TIMEOUT_MS = 9_000
"""``broker.session.timeout.ms`` (KRaft): a broker silent this long is fenced, its partitions
left without a leader."""
RANDOM_ATTEMPT = 1 << 20
"""The draw stream of the partitioner's random numbers (attempt numbers of sends stay
below it)."""


class KafkaProducerReplayer:
    """One producer's sends through Kafka's partitioner: the ``ProducerReplayer`` interface
    (``run(due) -> Columns``, ``seq``, ``stepped``), so both engines run it unchanged."""

    def __init__(self, producer: str, topic: str, route: TopicRoute, conditions: Conditions,
                 config: ReplayConfig, brokers: Sequence[str],
                 errors: dict[str, int] | None = None) -> None:
        self.producer, self.conditions = producer, conditions
        self.key = producer_key(config.seed, producer)
        self.queues = sorted(publish_queues(topic, route))
        self.broker_code = {b: i for i, b in enumerate(brokers)}
        self.errors = errors if errors is not None else {}
        self.seq = 0
        self.stepped = 0
        self.draws = 0
        self.pending: list[list[int]] = [[] for _ in self.queues]   # ack times: heaps
        self.partitioner = BuiltInPartitioner(BATCH_SIZE, self._random)

    def _random(self) -> int:
        """``Utils.toPositive(ThreadLocalRandom.current().nextInt())``, from the draws."""
        self.draws += 1
        return int(draw_bits(self.key, self.draws, RANDOM_ATTEMPT) >> 33)

    def _error_code(self, error: str) -> int:
        return self.errors.setdefault(error, len(self.errors))

    def _leader_back(self, broker: str, t: int) -> int | None:
        """When ``broker`` leads its partitions again, if it leads none at ``t``."""
        for start, until, mode in self.conditions.down.get(broker, ()):
            gone = start if mode == "clean" else start + BROKER_SESSION_TIMEOUT_MS
            if gone <= t < until:
                return until
        return None

    def _available(self, t: int) -> list[bool]:
        return [self._leader_back(q.broker_name, t) is None for q in self.queues]

    def _load_stats(self, t: int, available: list[bool]) -> None:
        """What the accumulator would report at ``t``: waiting batches per available
        partition."""
        sizes, ids = [], []
        for p, ok in enumerate(available):
            acks = self.pending[p]
            while acks and acks[0] <= t:
                heapq.heappop(acks)
            if ok:
                batches = -(-len(acks) * RECORD_BYTES // BATCH_SIZE)
                sizes.append(max(0, batches - MAX_IN_FLIGHT))
                ids.append(p)
        n = len(self.queues)
        self.partitioner.update_load_stats(sizes + [0] * (n - len(sizes)),
                                           ids + [0] * (n - len(ids)), len(sizes))

    def _deliver(self, p: int, due: int) -> tuple[int, int, str | None]:
        """(end, attempts, error or None) of one record sent to partition ``p`` at ``due``."""
        broker = self.queues[p].broker_name
        t, attempt = due, 0
        while True:
            back = self._leader_back(broker, t)
            if back is not None:                 # no leader: wait for one
                t = back
                if t - due >= DELIVERY_TIMEOUT_MS:
                    return due + DELIVERY_TIMEOUT_MS, attempt, EXPIRED
                continue
            attempt += 1
            bits = draw_bits(self.key, self.seq, attempt)
            mode = self.conditions.down_at(broker, t)
            cut = self.conditions.partitioned(self.producer, broker, t)
            if mode is None and not cut:
                return t + self.conditions.latency_at(broker, t).latency(bits), attempt, None
            spent = fail_fast_ms(bits) if mode == "clean" and not cut else REQUEST_TIMEOUT_MS
            t += spent + RETRY_BACKOFF_MS
            if t - due >= DELIVERY_TIMEOUT_MS:
                return due + DELIVERY_TIMEOUT_MS, attempt, EXPIRED

    def run(self, due: np.ndarray[Any, Any]) -> Columns:
        out = Columns.empty(due)
        for i in range(len(due)):
            t = int(due[i])
            self.stepped += 1
            info = self.partitioner.current
            available: list[bool] | None = None
            if info is None:                     # the first record: choose a partition
                available = self._available(t)
                self._load_stats(t, available)
                info = self.partitioner.peek(available)
            p = info.partition
            end, attempts, error = self._deliver(p, t)
            if info.produced_bytes + RECORD_BYTES >= BATCH_SIZE:
                # this record fills the batch: the partitioner switches, with what the
                # accumulator reports now (the stats and leaders matter only at a switch)
                available = available or self._available(t)
                self._load_stats(t, available)
                self.partitioner.update_partition_info(info, RECORD_BYTES, available)
            else:
                info.produced_bytes += RECORD_BYTES
            heapq.heappush(self.pending[p], end)
            q = self.queues[p]
            out.seq[i], out.start[i], out.end[i] = self.seq, t, end
            out.status[i] = FAILED if error else STATUS_CODE["SEND_OK"]
            out.broker[i] = self.broker_code[q.broker_name]
            out.queue_id[i] = -1 if error else q.queue_id
            out.attempts[i] = attempts
            out.error[i] = self._error_code(error) if error else -1
            self.seq += 1
        return out
