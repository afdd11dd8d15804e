"""Replaying the gRPC client's vectors (``tests/vectors/grpc/grpc-*-5.0.8.jsonl.gz``, made by
``rocketlb_core.vectorgen.grpc`` from rocketmq-client-java 5.0.8's own classes; schema there).

Each case starts from its ``queues`` and ``index_start`` and applies its steps to the port
(``grpc.publishing``, ``grpc.subscription``, ``grpc.send``, ``grpc.siphash``), comparing every
``expect``, the counter after each step (``stored``) and, for sends, the isolated endpoints.
``rocketlb conformance`` dispatches a record with a ``grpc`` field here.

``proxy-assignment`` (``tests/vectors/grpc/proxy-assignment-{5.3.3,5.5.0}.jsonl.gz``, made by
``rocketlb_core.vectorgen.proxy`` from each release's real ``RouteActivity.queryAssignment``):
one request a case, its route and group config given, the Proxy's whole answer compared
(``proxy_assignment_answer``: status code and message, every assignment as
``[topic, broker, brokerId, endpoints, queueId, permission]``, or the exception it failed with),
by the rules of the release in the case's ``source`` or of another (the cross-check).
``broker-assignment`` (``broker-assignment-{5.3.3,5.5.0}.jsonl.gz``, from each release's real
``QueryAssignmentProcessor``): one ``QUERY_ASSIGNMENT`` a case, the broker's route cache, consumer
list, stored mode and config given; the assignments compared as a set (the broker's
``HashSet``), each ``[topic, broker, queueId, mode]``, or ``null``
(``broker_assignment_answer``).
``proxy-group-queue`` (``proxy-group-queue-{5.3.3,5.5.0}.jsonl.gz``, from each release's real
``SendMessageActivity.SendMessageQueueSelector`` on a real ``MessageQueueView``): one route and
its write selector's counter a case, then one to four sends (group, lite topic, message count);
the sorted write queues compared, and every send's queue (``[broker, queueId]`` or ``null``) and
the counter after it (``proxy_group_queue_answer``, ``grpc.proxy_send``), by the rules of the
case's release or of another.
``python-selector`` (``python-client-5.1.2.jsonl.gz``, from rocketmq-python-client's own
``QueueSelector``, ``rocketlb_core.vectorgen.python_client``): a route, a selector kind and its
random start, then its operations; every answer compared (``grpc.python_client.replay_case``).
"""

from __future__ import annotations

from typing import Any

from rocketlb_core.conformance.report import Report
from rocketlb_core.grpc.assignment import (
    broker_query_assignment,
    proxy_endpoints,
    proxy_group_flags,
    proxy_query_assignment,
)
from rocketlb_core.grpc.proxy_send import (
    ProxyQueue,
    ProxyQueueSelector,
    proxy_sharding_key,
    proxy_write_queues,
)
from rocketlb_core.grpc.publishing import GrpcQueue, PublishingLoadBalancer
from rocketlb_core.grpc.python_client import replay_case
from rocketlb_core.grpc.send import Outcome, ProducerSendLoop
from rocketlb_core.grpc.siphash import message_group_index, sip_hash24
from rocketlb_core.grpc.subscription import SubscriptionLoadBalancer
from rocketlb_core.javamath import wrap32
from rocketlb_core.model import MessageQueue

ERRORS = {"IllegalArgumentException": ValueError}


def _queues(rows: list[Any]) -> list[GrpcQueue]:
    return [GrpcQueue.of(r) for r in rows]


def _shorts(qs: list[GrpcQueue]) -> list[list[object]]:
    return [q.short() for q in qs]


def run_grpc_case(obj: dict[str, Any], report: Report) -> None:
    family = obj["grpc"]
    cid = obj["id"]
    if family == "proxy-assignment":
        report.check(cid, proxy_assignment_answer(obj), obj["expect"])
        return
    if family == "proxy-group-queue":
        report.check(cid, proxy_group_queue_answer(obj), _group_queue_expect(obj))
        return
    if family == "broker-assignment":
        report.check(cid, broker_assignment_answer(obj), _sorted_rows(obj["expect"]))
        return
    if family == "python-selector":
        report.check(cid, replay_case(obj), obj["expect"])
        return
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


def proxy_assignment_answer(obj: dict[str, Any], release: str | None = None) -> dict[str, Any]:
    """What the port answers a ``proxy-assignment`` case, in the vectors' form, by the rules of
    ``release`` (default: the release that made the case)."""
    release = release or str(obj["source"]["version"])
    config = obj["group_config"]
    fifo, lite = proxy_group_flags(
        release, None if config is None else bool(config["consume_message_orderly"]),
        None if config is None else config.get("lite_bind_topic"))
    queue_datas = [(str(b), int(read), int(perm)) for b, read, _write, perm in obj["queue_datas"]]
    broker_datas = [(str(name), {int(i): proxy_endpoints([(str(sc), str(h), int(p))
                                                          for sc, h, p in addrs])
                                 for i, addrs in ids.items()})
                    for name, ids in obj["broker_datas"]]
    try:
        got = proxy_query_assignment(str(obj["topic"]), queue_datas, broker_datas, fifo=fifo,
                                     lite=lite)
    except ArithmeticError as e:
        return {"error": {"type": "ArithmeticException", "message": str(e)}}
    except ValueError:
        return {"error": {"type": "NullPointerException", "message": None}}
    if got is None:
        return {"code": "FORBIDDEN", "message": "no readable queue", "assignments": []}
    return {"code": "OK", "message": "OK",
            "assignments": [[q.topic, q.broker, q.broker_id, q.endpoints, q.queue_id,
                             q.permission.value] for q in got]}


def _sorted_rows(expect: dict[str, Any]) -> dict[str, Any]:
    rows = expect["assignments"]
    return {**expect, "assignments": None if rows is None else sorted(rows, key=_row_key)}


def _row_key(row: list[Any]) -> tuple[str, int, str]:
    return str(row[1]), int(row[2]), str(row[3])


def broker_assignment_answer(obj: dict[str, Any]) -> dict[str, Any]:
    """What the port answers a ``broker-assignment`` case, in the vectors' form."""
    config = obj["broker_config"]
    stored = obj["stored_mode"]
    mq_set = (None if obj["mq_set"] is None
              else [MessageQueue(str(t), str(b), int(q)) for t, b, q in obj["mq_set"]])
    got, mode = broker_query_assignment(
        str(obj["topic"]), str(obj["group"]), str(obj["client_id"]), str(obj["strategy"]),
        mq_set, obj["consumer_ids"], model=str(obj["message_model"]),
        mode=None if stored is None else str(stored["mode"]),
        pop_share_queue_num=None if stored is None else int(stored["pop_share_queue_num"]),
        default_mode=str(config["default_message_request_mode"]),
        default_pop_share_queue_num=int(config["default_pop_share_queue_num"]),
        server_load_balancer_enable=bool(config["server_load_balancer_enable"]),
        broker_name=str(config["broker_name"]))
    rows = None if got is None else sorted(
        ([q.topic, q.broker_name, q.queue_id, mode] for q in got), key=_row_key)
    return {"code": 0, "assignments": rows}


def _group_queue_expect(obj: dict[str, Any]) -> dict[str, Any]:
    return {"write_queues": obj["write_queues"],
            "sends": [[s["expect"], s["index"]] for s in obj["sends"]]}


def proxy_group_queue_answer(obj: dict[str, Any], release: str | None = None) -> dict[str, Any]:
    """What the port answers a ``proxy-group-queue`` case, in the vectors' form, by the rules
    of ``release`` (default: the release that made the case)."""
    release = release or str(obj["source"]["version"])
    masterless = set(obj["masterless"])
    queues = proxy_write_queues((str(b), int(n), int(perm)) for b, n, perm in obj["queue_datas"]
                                if b not in masterless)
    index = int(obj["index_start"])
    sends: list[list[Any]] = []
    for send in obj["sends"]:
        got: ProxyQueue | None = None
        if queues:                      # none: the selector answers null (FORBIDDEN)
            selector = ProxyQueueSelector(queues, index)
            got = selector.select(str(send["group"]), lite_topic=send["lite_topic"] or "",
                                  messages=int(send["messages"]), release=release)
            index = selector.index
        else:                           # no key: selectOne still steps the counter
            key = proxy_sharding_key(str(send["group"]), lite_topic=send["lite_topic"] or "",
                                     messages=int(send["messages"]), release=release)
            index = index if key else wrap32(index + 1)
        sends.append([None if got is None else got.short(), index])
    return {"write_queues": [q.short() for q in queues], "sends": sends}
