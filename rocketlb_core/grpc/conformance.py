"""Replaying the gRPC client's vectors (``tests/vectors/grpc/grpc-*-5.0.8.jsonl.gz``, made by
``rocketlb_core.vectorgen.grpc`` from rocketmq-client-java 5.0.8's own classes; schema there).

Each case starts from its ``queues`` and ``index_start`` and applies its steps to the port
(``grpc.publishing``, ``grpc.subscription``, ``grpc.send``, ``grpc.siphash``), comparing every
``expect``, the counter after each step (``stored``) and, for sends, the isolated endpoints.
``rocketlb conformance`` dispatches a record with a ``grpc`` field here.
"""

from __future__ import annotations

from typing import Any

from rocketlb_core.conformance.report import Report
from rocketlb_core.grpc.publishing import GrpcQueue, PublishingLoadBalancer
from rocketlb_core.grpc.send import Outcome, ProducerSendLoop
from rocketlb_core.grpc.siphash import message_group_index, sip_hash24
from rocketlb_core.grpc.subscription import SubscriptionLoadBalancer

ERRORS = {"IllegalArgumentException": ValueError}


def _queues(rows: list[Any]) -> list[GrpcQueue]:
    return [GrpcQueue.of(r) for r in rows]


def _shorts(qs: list[GrpcQueue]) -> list[list[object]]:
    return [q.short() for q in qs]


def run_grpc_case(obj: dict[str, Any], report: Report) -> None:
    family = obj["grpc"]
    cid = obj["id"]
    if family == "siphash":
        group = obj["group"]
        got = {"hash": sip_hash24(group.encode("utf-8", errors="replace")),
               "index": [message_group_index(group, s) for s in obj["sizes"]]}
        report.check(cid, got, {"hash": obj["hash"], "index": obj["index"]})
        return
    queues = _queues(obj["queues"])
    if family == "publishing":
        _publishing(obj, PublishingLoadBalancer(queues, obj["index_start"]), report)
    elif family == "subscription":
        _subscription(obj, SubscriptionLoadBalancer(queues, obj["index_start"]), report)
    elif family == "send":
        _send(obj, PublishingLoadBalancer(queues, obj["index_start"]), report)
    else:
        raise ValueError(f"unknown grpc family {family!r}")


def _update(balancer: Any, step: dict[str, Any]) -> tuple[Any, Any]:
    """``update`` of either balancer: (the balancer after it, what the step saw)."""
    try:
        return balancer.update(_queues(step["queues"])), None
    except ValueError:
        return balancer, {"type": "IllegalArgumentException"}


def _publishing(obj: dict[str, Any], lb: PublishingLoadBalancer, report: Report) -> None:
    for i, step in enumerate(obj["steps"]):
        case = f"{obj['id']} step {i} ({step['op']})"
        op = step["op"]
        got: Any
        if op == "take":
            got = _shorts(lb.take_message_queues(step["excluded"], step["count"]))
        elif op == "group":
            got = lb.take_message_queue_by_message_group(step["group"]).short()
        elif op == "update":
            lb, got = _update(lb, step)
        else:
            raise ValueError(f"unknown step op {op!r}")
        report.check(case, [got, lb.stored], [step["expect"], step["stored"]])


def _subscription(obj: dict[str, Any], lb: SubscriptionLoadBalancer, report: Report) -> None:
    for i, step in enumerate(obj["steps"]):
        case = f"{obj['id']} step {i} ({step['op']})"
        op = step["op"]
        got: Any
        if op == "take":
            got = lb.take_message_queue().short()
        elif op == "update":
            lb, got = _update(lb, step)
        else:
            raise ValueError(f"unknown step op {op!r}")
        report.check(case, [got, lb.stored], [step["expect"], step["stored"]])


def _send(obj: dict[str, Any], lb: PublishingLoadBalancer, report: Report) -> None:
    loop = ProducerSendLoop(max_attempts=int(obj["max_attempts"]))
    for i, step in enumerate(obj["steps"]):
        case = f"{obj['id']} step {i} ({step['op']})"
        op = step["op"]
        got: Any = None
        want: Any = step.get("expect")
        if op == "send":
            script: list[Outcome] = list(step["outcomes"])

            def outcome(_q: GrpcQueue, attempt: int, script: list[Outcome] = script) -> Outcome:
                if attempt > len(script):
                    return "fail"           # more attempts than the real loop made: a mismatch
                return script[attempt - 1]

            result = loop.send(lb, outcome, step["group"])
            got = {"candidates": _shorts(result.candidates),
                   "attempts": [a.queue.short() for a in result.attempts], "ok": result.ok}
        elif op == "heartbeat_ok":
            loop.rejoin([step["endpoints"]])
        elif op == "update":
            lb, got = _update(lb, step)
        else:
            raise ValueError(f"unknown step op {op!r}")
        report.check(case, [got, sorted(loop.isolated), lb.stored],
                     [want, step["isolated"], step["stored"]])
