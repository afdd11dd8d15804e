"""The RocketMQ lines the package reproduces, and what differs between them, as data.

Spec sections 2.4, 2.4a and 11. Each line is one frozen ``LineRules`` row in ``RULES``; code
asks the row a named question (``line.rules.counter_clamps``), never "is this 5.x?". Adding a
line is one row here plus its conformance vectors. Six lines are modelled, each checked
against vectors produced by running that tag's Java classes (the two newest made here from
Maven Central's jars, ``rocketlb_core.vectorgen.remoting``):

* ``4.7.1``: the code the classic articles read (every tag up to 4.7.1): clamping counter,
  ``lastBrokerName`` consulted (the wrong way round) in the fault scan, shuffle in
  ``pickOneAtLeast``, cached queues rewritten in the least-bad branch;
* ``4.9.7``: the 4.9 line before the fix of upstream issue 7779 (cached queue rewritten; read-only
  brokers counted by ``getQueueIdByBroker``);
* ``4.9.8``: the last 4.x release, the 4.x reference;
* ``5.3.3``: the 5.x reference: available/reachable filters, 10 s isolation, optional detector;
* ``5.4.0`` and ``5.5.0``: the newest releases (issue 34). Their producer selection is 5.3.3's:
  ``MQFaultStrategy``'s selection, ``TopicPublishInfo``, ``LatencyFaultToleranceImpl`` and
  ``ThreadLocalIndex`` are unchanged, and every 5.3.3 scenario replayed on their jars gives the
  same answers (``tests/vectors/rocketmq/``). What changed around them: 5.4.0 folds the report
  after a ``RemotingException`` into one call, ``updateFaultItem(broker, elapsed, true,
  !isStartDetectorEnable())``, the same values as 5.3.3's two branches; ``DefaultMQProducer``'s
  ``backPressureForAsyncSendNum`` drops from 10000 to 1024 (async sends in flight); 5.5.0 makes
  ``MQFaultStrategy`` a ``StartAndShutdown`` (``start()`` starts the detector), and changes
  ``RebalanceImpl.rebalanceByTopic``: an empty queue set or consumer id list no longer reaches
  the strategy (``rebalance_skips_empty``), and ``buildProcessQueueTableByBrokerName`` files a
  queue under its real broker name (``getBrokerNameFromMessageQueue``) when locking.

>>> ProducerLine.V4_7_1.rules.counter_clamps, ProducerLine.V5_3_3.rules.selection
(True, '5.x')
>>> ProducerLine.V5_5_0.rules.rebalance_skips_empty, ProducerLine.V5_4_0.rules.rebalance_skips_empty
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Literal

from rocketlb_core.producer.tables import (
    ISOLATION_LATENCY_4,
    ISOLATION_LATENCY_5,
    LATENCY_MAX_4,
    LATENCY_MAX_5,
    NOT_AVAILABLE_4,
    NOT_AVAILABLE_5,
    RETRYABLE_CODES_4,
    RETRYABLE_CODES_5,
)


@dataclass(frozen=True)
class LineRules:
    """Everything that differs between lines, one named answer each (spec section in brackets).

    Producer counter (``ThreadLocalIndex``, 2.1):
        ``counter_clamps``: ``getAndIncrement`` with ``Math.abs`` and a clamp to 0 (before 4.8);
        ``counter_draws_raw``: the first value is ``Random.nextInt()`` as drawn (5.x), not its
        absolute value; ``counter_resets_on_retry``: ``reset()`` exists, and a sync retry with
        the fault strategy on calls it (5.x).
    Selection (``MQFaultStrategy``, ``TopicPublishInfo``, 2.2 to 2.5):
        ``selection``: the 4.x scan-then-least-bad path, or the 5.x filters;
        ``retry_walks_locally``: the fault-off retry takes one counter step, then walks (4.7.1);
        ``fault_scan_wants_last_broker``: the fault scan accepts only the last broker's queues
        (4.7.1's inverted check); ``shuffles_fault_items``: ``pickOneAtLeast`` shuffles before
        sorting (4.7.1); ``rewrites_cached_queue``: the least-bad branch overwrites the cached
        queue object (issues 7779, 3548); ``write_count_needs_writable``:
        ``getQueueIdByBroker`` counts writable route entries only (4.9.8, issue 7713).
    Fault tables and reports (2.3, 2.6):
        ``latency_max``, ``not_available_duration``, ``isolation_latency_ms``: the tables and
        the latency an isolating report uses; ``reports_reachable``: a report carries
        ``reachable`` (5.x); ``client_error_isolates``: an ``MQClientException`` isolates (4.x);
        ``broker_error_reachable``: an ``MQBrokerException`` leaves the broker reachable (4.x);
        ``logs_isolation``: ``FaultItem.updateNotAvailableDuration`` logs ``<broker> will be
        isolated for <N> ms.`` whenever a report moves a broker's isolation later (5.1.4 on:
        what ``trace.agreement`` reads to know which slow sends isolated their broker).
    Send loop (2.6, 2.7):
        ``retryable_codes``: response codes a sync send retries on; ``caps_request_timeout``:
        ``sendMsgMaxTimeoutPerRequest`` caps an attempt that has a retry after it (5.3.3; the
        field first appears in 5.3.3);
        ``async_retry_checks_budget``: an async retry stops when the time is spent (5.x);
        ``async_connect_throws``: ``invokeAsync`` throws to its caller when it cannot connect,
        so the thread that made the hop selects the retry's broker (4.x; from 5.3.0 the
        connection's listener fails the call: fact remoting.async-connect-failure-since-5.3.0).
    Cluster and consumers (1.2, 3.4, 4.3):
        ``broker_scan_ms``: the name server's scan for expired brokers; ``client_id_nanotime``:
        the default instance name is ``<pid>#<nanotime>`` (``<pid>`` before 4.9.0);
        ``rebalance_min_interval_ms``: ``rebalanceImmediately`` waits this long after the last
        rebalance (5.x: 1 s); ``offset_lookup_raises``: a failed offset lookup raises
        (``computePullFromWhereWithException``) instead of returning -1;
        ``rebalance_skips_empty``: a clustering rebalance of a topic with an empty queue set or
        an empty consumer id list stops there and counts as balanced (5.5.0: the next run in
        20 s); before, the empty list reached the strategy, whose argument check threw, and the
        rebalance counted as unbalanced (``RebalanceService`` runs again after its 1 s
        ``minInterval``); a missing (``null``) one was skipped as balanced on every 5.x;
        ``broadcast_orderly_locks``: the ``BROADCASTING`` branch of ``rebalanceByTopic`` passes
        ``isOrder``, so an orderly broadcasting member creates a queue only once the broker
        grants its lock, a lock it never renews (up to 5.3.1; 5.3.2 passes ``false``: fact
        consumer.broadcast-orderly-takes-broker-lock-until-5.3.1).
    """

    counter_clamps: bool
    counter_draws_raw: bool
    counter_resets_on_retry: bool
    selection: Literal["4.x", "5.x"]
    retry_walks_locally: bool
    fault_scan_wants_last_broker: bool
    shuffles_fault_items: bool
    rewrites_cached_queue: bool
    write_count_needs_writable: bool
    latency_max: tuple[int, ...]
    not_available_duration: tuple[int, ...]
    isolation_latency_ms: int
    reports_reachable: bool
    client_error_isolates: bool
    broker_error_reachable: bool
    retryable_codes: frozenset[int]
    caps_request_timeout: bool
    async_retry_checks_budget: bool
    broker_scan_ms: int
    client_id_nanotime: bool
    rebalance_min_interval_ms: int
    offset_lookup_raises: bool
    rebalance_skips_empty: bool = False
    logs_isolation: bool = False
    async_connect_throws: bool = True
    broadcast_orderly_locks: bool = True


_4_9_8 = LineRules(
    counter_clamps=False, counter_draws_raw=False, counter_resets_on_retry=False,
    selection="4.x", retry_walks_locally=False, fault_scan_wants_last_broker=False,
    shuffles_fault_items=False, rewrites_cached_queue=False, write_count_needs_writable=True,
    latency_max=LATENCY_MAX_4, not_available_duration=NOT_AVAILABLE_4,
    isolation_latency_ms=ISOLATION_LATENCY_4, reports_reachable=False,
    client_error_isolates=True, broker_error_reachable=True, retryable_codes=RETRYABLE_CODES_4,
    caps_request_timeout=False, async_retry_checks_budget=False, broker_scan_ms=10_000,
    client_id_nanotime=True, rebalance_min_interval_ms=0, offset_lookup_raises=False)
_4_9_7 = replace(_4_9_8, rewrites_cached_queue=True, write_count_needs_writable=False)
_4_7_1 = replace(_4_9_7, counter_clamps=True, retry_walks_locally=True,
                 fault_scan_wants_last_broker=True, shuffles_fault_items=True,
                 client_id_nanotime=False)
_5_3_3 = LineRules(
    counter_clamps=False, counter_draws_raw=True, counter_resets_on_retry=True,
    selection="5.x", retry_walks_locally=False, fault_scan_wants_last_broker=False,
    shuffles_fault_items=False, rewrites_cached_queue=False, write_count_needs_writable=False,
    latency_max=LATENCY_MAX_5, not_available_duration=NOT_AVAILABLE_5,
    isolation_latency_ms=ISOLATION_LATENCY_5, reports_reachable=True,
    client_error_isolates=False, broker_error_reachable=False, retryable_codes=RETRYABLE_CODES_5,
    caps_request_timeout=True, async_retry_checks_budget=True, broker_scan_ms=5_000,
    client_id_nanotime=True, rebalance_min_interval_ms=1_000, offset_lookup_raises=True,
    logs_isolation=True, async_connect_throws=False, broadcast_orderly_locks=False)
_5_4_0 = replace(_5_3_3)
_5_5_0 = replace(_5_3_3, rebalance_skips_empty=True)


class ProducerLine(StrEnum):
    """A RocketMQ release line (its rules: ``RULES[line]``, or ``line.rules``)."""

    V4_7_1 = "4.7.1"
    V4_9_7 = "4.9.7"
    V4_9_8 = "4.9.8"
    V5_3_3 = "5.3.3"
    V5_4_0 = "5.4.0"
    V5_5_0 = "5.5.0"

    @property
    def rules(self) -> LineRules:
        return RULES[self]

    @classmethod
    def parse(cls, value: str | ProducerLine) -> ProducerLine:
        """Accept ``"4.9.8"``, ``"rocketmq-all-4.9.8"``, ``"5.x"``, ``"<=4.7.1"``, ...

        >>> ProducerLine.parse("rocketmq-all-5.3.3")
        <ProducerLine.V5_3_3: '5.3.3'>
        >>> ProducerLine.parse("<=4.7.1")
        <ProducerLine.V4_7_1: '4.7.1'>
        """
        if isinstance(value, ProducerLine):
            return value
        text = value.strip().removeprefix("rocketmq-all-").removeprefix("<=")
        text = {"4.9.x": "4.9.8", "5.x": "5.3.3", "4.9": "4.9.8", "5": "5.3.3", "5.4": "5.4.0",
                "5.5": "5.5.0"}.get(text, text)
        try:
            return cls(text)
        except ValueError:
            known = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown producer line {value!r} (known: {known})") from None


RULES: dict[ProducerLine, LineRules] = {
    ProducerLine.V4_7_1: _4_7_1,
    ProducerLine.V4_9_7: _4_9_7,
    ProducerLine.V4_9_8: _4_9_8,
    ProducerLine.V5_3_3: _5_3_3,
    ProducerLine.V5_4_0: _5_4_0,
    ProducerLine.V5_5_0: _5_5_0,
}
"""One row per line: the only place that says how lines differ."""
