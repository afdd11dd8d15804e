"""Replaying producer scenarios and primitives (``producer-*.jsonl``; schema in the vectors'
README). Each scenario builds a fresh ``MQFaultStrategy`` and ``TopicPublishInfo`` with the
recorded counter start and clock, then applies its steps in order."""

from __future__ import annotations

from typing import Any

from rocketlb_core.conformance.report import Report
from rocketlb_core.model import MessageQueue, QueueData
from rocketlb_core.producer import (
    FaultTable4,
    FaultTable5,
    MQFaultStrategy,
    ProducerLine,
    ThreadLocalIndex,
    TopicPublishInfo,
    compute_not_available_duration,
)


def mq_of(value: list[Any]) -> MessageQueue:
    topic, broker, queue_id = value
    return MessageQueue(str(topic), str(broker), int(queue_id))


def line_of(obj: dict[str, Any]) -> ProducerLine:
    tag = obj.get("source", {}).get("tag")
    return ProducerLine.parse(tag or obj["line"])


def build(obj: dict[str, Any]) -> tuple[MQFaultStrategy, TopicPublishInfo]:
    """The strategy and publish info a scenario starts from."""
    line = line_of(obj)
    qds = [QueueData(d["brokerName"], d.get("readQueueNums", d["writeQueueNums"]),
                     d["writeQueueNums"], d["perm"]) for d in obj["queue_datas"]]
    tp = TopicPublishInfo([mq_of(q) for q in obj["message_queues"]], qds,
                          ThreadLocalIndex(line, stored=obj["index_start"]))
    strategy = MQFaultStrategy(
        line, send_latency_fault_enable=obj["send_latency_fault_enable"],
        start_detector_enable=obj.get("start_detector_enable", False),
        latency_max=obj.get("latency_max"),
        not_available_duration=obj.get("not_available_duration"),
        worst_index_start=obj.get("worst_index_start", 0))
    return strategy, tp


def run_producer_case(obj: dict[str, Any], report: Report) -> None:
    strategy, tp = build(obj)
    original = list(tp.queues)
    clock = int(obj["clock_start"])
    sid = obj["id"]
    counted_before = len(report.outcomes)
    for i, step in enumerate(obj["steps"]):
        op = step["op"]
        case = f"{sid} step {i} ({op})"
        if op == "select":
            expect = step["expect"]
            try:
                got: Any = strategy.select(tp, step["last"], clock,
                                           reset_index=step.get("reset_index", False),
                                           reset_value=step.get("reset_value")).as_list()
            except (ZeroDivisionError, IndexError) as exc:
                got = {"error": type(exc).__name__}
            if isinstance(expect, dict) and "error" in expect:
                report.add(case, isinstance(got, dict), f"expected an error, got {got!r}")
            else:
                report.check(case, got, expect)
        elif op == "report":
            strategy.update_fault_item(step["broker"], step["latency"], step["isolation"], clock,
                                       reachable=step.get("reachable", True))
        elif op == "advance":
            clock += int(step["ms"])
        elif op == "probe":
            report.check(case, _probe(strategy, tp, original, step, clock), step["expect"])
        elif op == "pick":
            table = strategy.table
            if not isinstance(table, FaultTable4):
                raise ValueError("a pick step needs a 4.x line")
            report.check(case, table.pick_one_at_least(clock), step["expect"])
        elif op == "detect":
            table5 = strategy.table
            if not isinstance(table5, FaultTable5):
                raise ValueError("a detect step needs the 5.x line")
            resolve, ok = step["resolve"], step["detect_ok"]
            def detector(addr: str, _timeout: int, ok: dict[str, bool] = ok) -> bool:
                return bool(ok.get(addr, False))

            probed = table5.detect_by_one_round(clock, resolve.get, detector)
            report.check(case, {"probed_endpoints_sorted": sorted(probed)}, step["expect"])
        else:
            raise ValueError(f"unknown step op {op!r}")
    final = obj.get("final_index_stored")
    if final is not None and tp.index.stored != final and len(report.outcomes) > counted_before:
        last = report.outcomes[-1]
        report.outcomes[-1] = type(last)(
            last.case, False, f"final_index_stored: expected {final}, got {tp.index.stored}")


def _probe(strategy: MQFaultStrategy, tp: TopicPublishInfo, original: list[MessageQueue],
           step: dict[str, Any], clock: int) -> dict[str, Any]:
    expect = step["expect"]
    got: dict[str, Any] = {
        "available": {b: strategy.is_available(b, clock) for b in step["brokers"]},
        "index_stored": tp.index.stored,
    }
    if "reachable" in expect:
        got["reachable"] = {b: strategy.is_reachable(b) for b in step["brokers"]}
    if "queue_list" in expect:
        got["queue_list"] = [q.as_list() for q in tp.queues]
    else:
        got["queue_list_unchanged"] = tp.queues == original
    return got


def run_primitive(obj: dict[str, Any], report: Report) -> None:
    line = line_of(obj)
    kind = obj["kind"]
    if kind == "thread_local_index":
        index = ThreadLocalIndex(line, stored=obj["stored_start"])
        returned, stored = [], []
        for _ in obj["returned"]:
            returned.append(index.next())
            stored.append(index.stored)
        report.check(f"{line.value} counter from {obj['stored_start']}",
                     {"returned": returned, "stored_after": stored},
                     {"returned": obj["returned"], "stored_after": obj["stored_after"]})
    elif kind == "not_available_duration":
        strategy = MQFaultStrategy(line)
        lat_max, nad = obj.get("latency_max"), obj.get("not_available_duration")
        got = {
            "tables": [list(strategy.latency_max), list(strategy.not_available_duration)],
            "durations": [compute_not_available_duration(x, strategy.latency_max,
                                                         strategy.not_available_duration)
                          for x in obj["latencies"]],
            "isolation_uses_latency": strategy.isolation_latency,
        }
        want = {"tables": [lat_max, nad] if lat_max else got["tables"],
                "durations": obj["durations"],
                "isolation_uses_latency": obj["isolation_uses_latency"]}
        report.check(f"{line.value} duration table", got, want)
    else:
        raise ValueError(f"unknown primitive kind {kind!r}")
