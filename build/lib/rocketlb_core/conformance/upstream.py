"""Running the concrete cases of ``upstream-tests.json`` (upstream's unit tests as data).

Each test class has a handler. Steps that assert a value count as one expectation each; a
property test counts once per line it is checked on (with seeded starts in place of upstream's
unseeded randomness). Classes or cases this package does not model yet are listed as "not
compared", with the reason: never counted as passed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from rocketlb_core.conformance.allocation_vectors import UPSTREAM_HANDLERS
from rocketlb_core.conformance.report import Report
from rocketlb_core.javamath import INT_MAX
from rocketlb_core.model import BrokerData, MessageQueue, QueueData, TopicRoute, publish_queues
from rocketlb_core.producer import (
    FaultTable4,
    FaultTable5,
    MQFaultStrategy,
    ProducerLine,
    ThreadLocalIndex,
    TopicPublishInfo,
)

Handler = Callable[[dict[str, Any], Report], None]
SEEDED_STARTS = 1000
LINES_4_AND_5 = (ProducerLine.V4_9_8, ProducerLine.V5_3_3)


def _fault_table_steps(cls: str, case: dict[str, Any], v5: bool, report: Report) -> None:
    table4 = FaultTable4(ProducerLine.V4_9_8)
    table5 = FaultTable5(rng=random.Random(0))
    clock = 0

    def check(sub: dict[str, Any]) -> Any:
        op, name = sub["op"], str(sub.get("name"))
        if op == "isAvailable":
            return (table5 if v5 else table4).is_available(name, clock)
        if op == "isReachable":
            return table5.is_reachable(name)
        if op == "pickOneAtLeast":
            return table5.pick_one_at_least() if v5 else table4.pick_one_at_least(clock)
        raise ValueError(f"{cls}: unknown check {op!r}")

    for i, step in enumerate(case["steps"]):
        op = step["op"]
        label = f"{cls} {'5.x' if v5 else '4.9.x'} {case['name']} step {i} ({op})"
        if op == "update":
            if v5:
                table5.update(step["name"], step["currentLatency"], step["notAvailableDuration"],
                              step["reachable"], clock)
            else:
                table4.update(step["name"], step["currentLatency"], step["notAvailableDuration"],
                              clock)
        elif op == "remove":
            (table5 if v5 else table4).remove(step["name"])
        elif op == "sleep_ms":
            clock += step["ms"]
        elif op == "await_until_true_within_ms":
            clock += step["ms"]                 # virtual time: the deadline has passed
            report.check(label, check(step["check"]), True)
        else:
            report.check(label, check(step), step["asserted"])


def latency_fault_tolerance(test: dict[str, Any], report: Report) -> None:
    for key, v5 in (("cases_4.9.x", False), ("cases_5.x", True)):
        for case in test.get(key, []):
            _fault_table_steps(test["test_class"], case, v5, report)


def _two_steps(idx: ThreadLocalIndex) -> bool:
    first = idx.next()
    return idx.next() == first + 1


def thread_local_index(test: dict[str, Any], report: Report) -> None:
    cls = test["test_class"]
    for case in test["cases"]:
        name = case["name"]
        present = case.get("present_in", ["rocketmq-all-4.9.8", "rocketmq-all-5.3.3"])
        lines = [ln for ln in LINES_4_AND_5 if f"rocketmq-all-{ln.value}" in present]
        for line in lines:
            label = f"{cls} {name} ({line.value})"
            if name == "testIncrementAndGet3":
                idx = ThreadLocalIndex(line, stored=case["inputs"]["stored_start"])
                out = case["upstream_code_output"]
                report.check(label, (idx.next(), idx.stored),
                             (out["returned"], out["stored_after"]))
            elif name == "testIncrementAndGet":
                ok = all(_two_steps(ThreadLocalIndex(line, rng=random.Random(s)))
                         for s in range(SEEDED_STARTS))
                report.add(label, ok, "second value != first + 1 for some seeded start")
            elif name == "testIncrementAndGet2":
                ok = all(ThreadLocalIndex(line, rng=random.Random(s)).next() >= 0
                         for s in range(SEEDED_STARTS))
                report.add(label, ok, "a first value was negative")
            elif name == "testResultOfResetIsGreaterThanOrEqualToZero":
                ok = True
                for s in range(SEEDED_STARTS):
                    idx = ThreadLocalIndex(line, rng=random.Random(s))
                    idx.reset()
                    ok = ok and idx.next() > 0
                for edge in (0, INT_MAX - 1):           # the two ends of reset's range
                    idx = ThreadLocalIndex(line, stored=0)
                    idx.reset(edge)
                    ok = ok and idx.next() > 0
                report.add(label, ok, "a value after reset() was not positive")
            else:
                report.not_compared.append(f"{cls} {name}: no handler")


def select_retry(test: dict[str, Any], report: Report) -> None:
    for case in test["cases"]:
        queues = [MessageQueue(*q) for q in case["inputs"]["message_queues"]]
        qds = [QueueData(q.broker_name, 1, 1) for q in queues]
        for line in LINES_4_AND_5:
            ok = True
            for seed in range(SEEDED_STARTS):
                tp = TopicPublishInfo(queues, qds, ThreadLocalIndex(line, rng=random.Random(seed)))
                rounds = []
                for _ in range(2):
                    last, seen = None, set()
                    for _ in range(3):
                        q = tp.pick_avoiding(last)
                        seen.add(q.broker_name)
                        last = q.broker_name
                    rounds.append(seen)
                ok = ok and rounds[0] == rounds[1] == {q.broker_name for q in queues}
            report.add(f"{test['test_class']} {case['name']} ({line.value})", ok,
                       "three avoid-last picks did not cover every broker")


def fault_strategy(test: dict[str, Any], report: Report) -> None:
    cls = test["test_class"]
    for case in test["cases"]:
        if case["kind"] == "exact":
            strategy = MQFaultStrategy(ProducerLine.V4_9_8)
            pairs = case["asserted"]["latency_to_duration"]
            report.check(f"{cls} {case['name']}",
                         [[x, strategy.compute_not_available_duration(x)] for x, _ in pairs], pairs)
            continue
        # "index mocked to 0": the first counter step returns 0 (stored -1).
        brokers = ("BrokerA", "BrokerB", "BrokerC")
        queues = [MessageQueue("TopicTest", b, i) for b in brokers for i in range(4)]
        qds = [QueueData(b, 4, 4) for b in brokers]
        scenarios = {"NullLastBroker": ((), None),
                     "FaultBrokerA(isolated A, last A)": (("BrokerA",), "BrokerA"),
                     "FaultBrokerAB(isolated A,B, last B)": (("BrokerA", "BrokerB"), "BrokerB"),
                     "FaultBrokerABC": (brokers, None)}
        for label, expected in case["asserted"].items():
            isolated, last = scenarios[label]
            strategy = MQFaultStrategy(ProducerLine.V4_9_8, send_latency_fault_enable=True)
            for i, b in enumerate(isolated):
                strategy.update_fault_item(b, 3000 + i, isolation=True, now_ms=0)
            tp = TopicPublishInfo(queues, qds, ThreadLocalIndex(ProducerLine.V4_9_8, stored=-1))
            got = strategy.select(tp, last, now_ms=1).broker_name
            ok = got is not None if expected == "non-null" else got == expected
            report.add(f"{cls} {case['name']} {label}", ok, f"expected {expected}, got {got}")


def route_to_publish_info(test: dict[str, Any], report: Report) -> None:
    cls = test["test_class"]
    for case in test["cases"]:
        inputs = case["inputs"]
        if "topicQueueMappingByBroker" in inputs:
            report.not_compared.append(f"{cls} {case['name']}: static-topic queue mappings "
                                       "(5.x) are not modelled")
            continue
        if "orderTopicConf" in inputs:
            route = TopicRoute((), (), inputs["orderTopicConf"])
        else:
            route = TopicRoute(
                tuple(QueueData(d["brokerName"], d["readQueueNums"], d["writeQueueNums"],
                                d["perm"]) for d in inputs["queue_datas"]),
                tuple(BrokerData(d["brokerName"], {int(k): v for k, v in d["brokerAddrs"].items()})
                      for d in inputs["broker_datas"]))
        report.check(f"{cls} {case['name']}", len(publish_queues("TopicTest", route)),
                     case["asserted"]["message_queue_count"])


HANDLERS: dict[str, Handler] = {
    "LatencyFaultToleranceImplTest": latency_fault_tolerance,
    "ThreadLocalIndexTest": thread_local_index,
    "SelectMessageQueueRetryTest": select_retry,
    "MQFaultStrategyTest": fault_strategy,
    "MQClientInstanceTest (route -> publish info)": route_to_publish_info,
}


def run_upstream_tests(doc: dict[str, Any], report: Report) -> None:
    """Run every test class that has a handler; list the others as not compared."""
    handlers = {**HANDLERS, **UPSTREAM_HANDLERS}
    for test in doc["tests"]:
        cls = test["test_class"]
        handler = handlers.get(cls)
        if handler is None:
            count = len(test.get("cases", []))
            report.not_compared.append(f"{cls} ({count} cases): not modelled yet")
            continue
        handler(test, report)
