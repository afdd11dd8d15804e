"""The gRPC consumers' models against a live recording through the Proxy (issue 34, item 3).

A recording of a scenario with ``client = "grpc"`` consumers (``rocketlb_core.live.record``)
holds each consumer's rows (``receives/<consumer>.jsonl.gz``, written by
``live/java/GrpcConsume.java``: a simple consumer's one row per ``receive`` call, a push
consumer's one row per consumed message; each message with the queue the client asked for,
``client_broker``/``client_queue``, and where it really was, ``broker``/``queue``/``offset``,
from its receipt handle), each consumer's own log (``logs/<consumer>/rocketmq-client.log.gz``:
the route it fetched, a push consumer's assignments), every stored message of the topic
(``topic.jsonl.gz``) and the events (a broker paused, resumed; a consumer joined, left,
crashed).

* **The simple consumer** (``rocketlb_core.grpc.subscription.SubscriptionLoadBalancer``, from
  rocketmq-client-java 5.0.8's ``SimpleConsumerImpl.receive0``: one ``takeMessageQueue`` per
  call): run on the route the client's log gives (a later route replaces it at its time,
  keeping the counter), it names the queue of every call. The counter's start
  (``RandomUtils.nextInt``) is not recorded: it is inferred from the first call that got
  messages (verdict ``inferred``); every later call that got messages must have asked the
  model's queue (``client_queue``: the message view's queue is the request's) and every message
  of it must come from the model's broker (the Proxy pops from the named broker, any queue:
  ``ReceiveMessageActivity.ReceiveMessageQueueSelector``), else ``disagree``. An empty call is
  counted (``empty``), and so is a failed one: ``error_paused`` when the model's broker was
  paused during it, ``error_unexplained`` otherwise.
* **The push consumer**: every assignment the client logs (``PushConsumerImpl.scanAssignments``:
  "Assignments of topic=... has changed, ... => ...") must equal what the Proxy's
  ``RouteActivity.queryAssignment`` answers for the recording's route
  (``rocketlb_core.grpc.assignment.proxy_query_assignment``: every readable broker, queue -1,
  in the route's order); every consumed message must have come through a queue of the
  consumer's assignment at the time (the last logged before it) and from that queue's broker.
* **A group with remoting members too** (issue 47): the remoting members are checked like any
  remoting consumer (``trace.agreement``: the brokers' lists hold them alone, the Proxy keeps
  its gRPC clients to itself); the group's messages read by them (``ranges/<member>.json``) count
  as consumed, and the group reports how many stored messages both sides consumed
  (``consumed_by_both``), only the gRPC members (``grpc_only``), only the remoting ones
  (``remoting_only``), and how many the gRPC members consumed more than once (``grpc_twice``).
* **Both, per group**: every consumed message must be a stored message of the topic (a first
  delivery: its broker, queue and offset in the dump, with the same body; a redelivery comes
  from the group's retry topic, so only its body and broker are matched), else a ``stray``;
  every stored message must have been consumed by the group at least once by the end, else
  ``missing``. Deliveries after the first of a message are counted (``redelivered``), and so
  are deliveries the broker marked as a later attempt (``attempt`` > 1).

``check_grpc_consumers`` returns the counts with the detail of everything unexplained; nothing
is fudged: a disagreement, a failed receive on a running broker, a stray, a missing message or
a wrong assignment is counted in ``unexplained``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from rocketlb_core.grpc.assignment import proxy_query_assignment
from rocketlb_core.grpc.publishing import GrpcQueue, Permission
from rocketlb_core.grpc.subscription import SubscriptionLoadBalancer
from rocketlb_core.trace.clientlog import GMT8_MINUTES, stamp_ms
from rocketlb_core.trace.grpc_agreement import (
    ENDPOINTS,
    GrpcRecordingError,
    _gz_json_lines,
    _paused_spans,
    read_grpc_client_log,
)
from rocketlb_core.trace.textfile import read_lines

_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) ", re.ASCII)
_ASSIGNED = re.compile(r"Assignments of topic=(\S+) has changed, .* => "
                       r"Assignments\{assignmentList=\[(.*)\]\}, clientId=")
_QUEUE = re.compile(r"messageQueue=([^,}\]]+)")

Queue = tuple[str, int]                    # (broker name, queue id)


def read_assignments(path: Path | str, topic: str) -> list[tuple[int, list[Queue]]]:
    """Every assignment of ``topic`` a rocketmq-client-java 5.0.8 push consumer logged, with its
    time (epoch ms): ``MessageQueueImpl.toString`` is ``broker.topic.queueId``."""
    out = []
    for _, text in read_lines(path, errors="replace"):
        m = _STAMP.match(text)
        a = _ASSIGNED.search(text) if m else None
        if m is None or a is None or a.group(1) != topic:
            continue
        queues = []
        for item in _QUEUE.findall(a.group(2)):
            broker, _, rest = item.partition(".")
            queues.append((broker, int(rest.rsplit(".", 1)[1])))
        out.append((stamp_ms(m.group(1), GMT8_MINUTES), queues))
    return out


def _client_log(rec: Path, name: str) -> Path:
    path = rec / "logs" / name / "rocketmq-client.log.gz"
    if not path.is_file():
        raise GrpcRecordingError(f"{path}: missing (the client's log)")
    return path


def _route_queues(topic: str, route: list[tuple[str, int]]) -> list[GrpcQueue]:
    return [GrpcQueue(topic, b, 0, ENDPOINTS, q, Permission.READ_WRITE) for b, q in route]


def _model_queues(calls: list[dict[str, Any]], versions: list[tuple[int, list[tuple[str, int]]]],
                  topic: str, start: int) -> list[Queue]:
    """The balancer's queue for each call, from counter ``start``; a route the client fetched
    before a call replaces the balancer's queues, keeping the counter (``update``)."""
    balancer = SubscriptionLoadBalancer(_route_queues(topic, versions[0][1]), start)
    version, out = 0, []
    for call in calls:
        while version + 1 < len(versions) and versions[version + 1][0] <= call["start_ms"]:
            version += 1
            balancer = balancer.update(_route_queues(topic, versions[version][1]))
        q = balancer.take_message_queue()
        out.append((q.broker, q.queue_id))
    return out


def _receives(recording: Path | str, consumer: str, order: str
              ) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    """The recording's folder, its ``recording.json`` and the consumer's rows sorted by
    ``order`` (a simple consumer's ``call``, a push consumer's ``ms``)."""
    rec = Path(recording)
    meta = json.loads((rec / "recording.json").read_text("utf-8"))
    rows = sorted(_gz_json_lines(rec / "receives" / f"{consumer}.jsonl.gz"),
                  key=lambda r: int(r[order]))
    return rec, meta, rows


def simple_consumer_agreement(recording: Path | str, consumer: str) -> dict[str, Any]:
    """Check one gRPC simple consumer of ``recording`` (see the module docstring)."""
    rec, meta, calls = _receives(recording, consumer, "call")
    topic = meta["topic"]
    log = read_grpc_client_log(_client_log(rec, consumer), topic)
    versions = log.routes or ([(0, log.route)] if log.route else [])
    spans = _paused_spans(meta)
    verdicts: Counter[str] = Counter()
    detail: list[dict[str, Any]] = []
    first = next((i for i, c in enumerate(calls) if c.get("messages")), None)
    if not versions or first is None:
        why = "the client log has no route of the topic" if not versions else "no messages"
        return {"consumer": consumer, "calls": len(calls), "verdicts": {}, "unexplained": 0,
                "note": why, "unexplained_detail": []}
    n = len(versions[0][1])
    asked = calls[first]["messages"][0]
    asked_q = (asked["client_broker"], int(asked["client_queue"]))
    starts = [s for s in range(n) if _model_queues(calls[:first + 1], versions, topic, s)[first]
              == asked_q]
    model = _model_queues(calls, versions, topic, starts[0]) if starts else []
    brokers: Counter[str] = Counter()
    for i, call in enumerate(calls):
        want = model[i] if model else None
        msgs = call.get("messages")
        if "error" in call:
            paused = want is not None and any(lo <= call["end_ms"] and call["start_ms"] <= hi
                                              for lo, hi in spans.get(want[0], []))
            verdict = "error_paused" if paused else "error_unexplained"
        elif not msgs:
            verdict = "empty"
        elif want is None:
            verdict = "disagree"
        else:
            client_qs = {(m["client_broker"], int(m["client_queue"])) for m in msgs}
            stored_bs = {m.get("broker") for m in msgs}
            fits = client_qs == {want} and stored_bs == {want[0]}
            verdict = ("inferred" if i == first else "agree") if fits else "disagree"
            if fits:
                brokers[want[0]] += 1
        verdicts[verdict] += 1
        if verdict in ("disagree", "error_unexplained"):
            detail.append({"call": call["call"], "start_ms": call["start_ms"],
                           "model": list(want) if want else None, "verdict": verdict,
                           "error": call.get("error"),
                           "asked": sorted({(m["client_broker"], m["client_queue"])
                                            for m in msgs or ()}),
                           "brokers": sorted({m.get("broker") for m in msgs or ()})})
    return {
        "consumer": consumer, "calls": len(calls),
        "non_empty": sum(bool(c.get("messages")) for c in calls),
        "messages": sum(len(c.get("messages") or ()) for c in calls),
        "ack_errors": sum("ack_error" in m for c in calls for m in c.get("messages") or ()),
        "verdicts": dict(verdicts), "brokers_received": dict(brokers),
        "counter_start_mod_n": starts[0] if starts else None, "route_queues": n,
        "client_route": [list(q) for q in versions[0][1]],
        "unexplained": verdicts["disagree"] + verdicts["error_unexplained"],
        "unexplained_detail": detail[:50],
    }


def push_consumer_agreement(recording: Path | str, consumer: str) -> dict[str, Any]:
    """Check one gRPC push consumer of ``recording`` (see the module docstring)."""
    rec, meta, rows = _receives(recording, consumer, "ms")
    topic = meta["topic"]
    logged = read_assignments(_client_log(rec, consumer), topic)
    answer = proxy_query_assignment(
        topic, [(q["broker_name"], q["read_queue_nums"], q["perm"]) for q in meta["route"]],
        {q["broker_name"]: {0: ENDPOINTS} for q in meta["route"]})
    model = [(q.broker, q.queue_id) for q in answer or ()]
    wrong = [{"ms": ms, "logged": [list(q) for q in got], "model": [list(q) for q in model]}
             for ms, got in logged if got != model]
    outside: list[dict[str, Any]] = []
    for r in rows:
        held = [got for ms, got in logged if ms <= r["ms"]]
        via = (r["client_broker"], int(r["client_queue"]))
        if not held or via not in held[-1] or r.get("broker") != via[0]:
            outside.append({"seq": r.get("seq"), "ms": r["ms"], "via": list(via),
                            "broker": r.get("broker"),
                            "assignment": [list(q) for q in held[-1]] if held else None})
    return {
        "consumer": consumer, "consumed": len(rows),
        "assignments_logged": len(logged), "assignments_equal": len(logged) - len(wrong),
        "model_assignment": [list(q) for q in model],
        "brokers_consumed": dict(Counter(r.get("broker") for r in rows)),
        "outside_assignment": len(outside),
        "unexplained": len(wrong) + len(outside),
        "unexplained_detail": (wrong + outside)[:50],
    }


def _deliveries(rec: Path, consumer: dict[str, Any]) -> list[dict[str, Any]]:
    rows = _gz_json_lines(rec / "receives" / f"{consumer['name']}.jsonl.gz")
    if consumer["kind"] == "simple":
        return [m for c in rows for m in c.get("messages") or ()]
    return rows


def group_agreement(recording: Path | str, group: str) -> dict[str, Any]:
    """Every stored message consumed by ``group`` at least once, every consumed message a stored
    one (see the module docstring)."""
    rec = Path(recording)
    meta = json.loads((rec / "recording.json").read_text("utf-8"))
    members = [k for k in meta["consumers"] if k.get("client") == "grpc" and k["group"] == group]
    stored: dict[tuple[str, int, int], str] = {}
    for x in _gz_json_lines(rec / "topic.jsonl.gz"):
        stored[(x["broker"], int(x["queue"]), int(x["offset"]))] = x.get("body") or ""
    by_seq: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for key, body in stored.items():
        by_seq.setdefault((key[0], body), []).append(key)
    consumed: Counter[tuple[str, int, int]] = Counter()
    strays: list[dict[str, Any]] = []
    deliveries = 0
    attempts_later = 0
    for k in members:
        for m in _deliveries(rec, k):
            deliveries += 1
            attempts_later += int(m.get("attempt", 1)) > 1
            body, broker = f"m{m['seq']}", str(m.get("broker"))
            if not m.get("retry"):
                key = (broker, int(m.get("queue", -1)), int(m.get("offset", -1)))
                if stored.get(key) == body:
                    consumed[key] += 1
                    continue
            elif by_seq.get((broker, body)):
                for key in by_seq[(broker, body)]:
                    consumed[key] += 1
                continue
            strays.append({"consumer": k["name"], **m})
    remoting = [k for k in meta["consumers"]
                if k.get("client", "remoting") != "grpc" and k["group"] == group]
    pulled = _remoting_reads(rec, remoting, stored)
    missing = [{"broker": b, "queue": q, "offset": o, "body": stored[(b, q, o)]}
               for b, q, o in sorted(stored) if not consumed[(b, q, o)]
               and (b, q, o) not in pulled]
    mixed = {
        "remoting_consumers": [k["name"] for k in remoting],
        "consumed_by_both": sum(1 for key in stored if consumed[key] and key in pulled),
        "grpc_only": sum(1 for key in stored if consumed[key] and key not in pulled),
        "remoting_only": sum(1 for key in stored if not consumed[key] and key in pulled),
        "grpc_twice": sum(1 for key in stored if consumed[key] > 1),
    } if remoting else {}
    return {
        "group": group, "consumers": [k["name"] for k in members], "stored": len(stored),
        "deliveries": deliveries, "consumed_stored": sum(1 for key in stored if consumed[key]),
        "redelivered": sum(max(0, c - 1) for c in consumed.values()),
        "later_attempts": attempts_later, "strays": len(strays), **mixed,
        "missing": len(missing), "unexplained": len(strays) + len(missing),
        "unexplained_detail": (strays + missing)[:50],
    }


def _remoting_reads(rec: Path, members: list[dict[str, Any]],
                    stored: dict[tuple[str, int, int], str]) -> set[tuple[str, int, int]]:
    """The stored messages the group's remoting members read (issue 47: a group of remoting
    and gRPC consumers), from each member's ``ranges/<member>.json`` (per queue the first and
    last offset read and how many reads): a queue's whole range when its reads fill it, else
    only its first and last offsets (which of the others were read is not recorded: they
    count as not read)."""
    from rocketlb_core.trace.broadcast_agreement import read_ranges

    out: set[tuple[str, int, int]] = set()
    for k in members:
        path = rec / "ranges" / f"{k['name']}.json"
        if not path.is_file():
            continue                          # a member that read nothing writes no ranges
        for key, (first, last, count) in read_ranges(path).items():
            broker, _, queue = key.rpartition("/")
            offsets = (range(first, last + 1) if count == last - first + 1
                       else (first, last))
            out.update(q for o in offsets if (q := (broker, int(queue), o)) in stored)
    return out


def check_grpc_consumers(recording: Path | str) -> dict[str, Any]:
    """Every gRPC consumer of ``recording`` and every group of them, checked."""
    meta = json.loads((Path(recording) / "recording.json").read_text("utf-8"))
    grpc = [k for k in meta["consumers"] if k.get("client") == "grpc"]
    simple = {k["name"]: simple_consumer_agreement(recording, k["name"])
              for k in grpc if k["kind"] == "simple"}
    push = {k["name"]: push_consumer_agreement(recording, k["name"])
            for k in grpc if k["kind"] == "push"}
    groups = {g: group_agreement(recording, g) for g in sorted({k["group"] for k in grpc})}
    return {"simple": simple, "push": push, "groups": groups,
            "unexplained": sum(x["unexplained"] for part in (simple, push, groups)
                               for x in part.values())}
