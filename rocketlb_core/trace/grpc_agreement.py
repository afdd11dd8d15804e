"""The gRPC producer's model against a live recording through the Proxy (issue 34, item 3).

A recording of a scenario with a ``client = "grpc"`` producer (``rocketlb_core.live.record``)
holds, per send, the driver's row (``sends/<producer>.jsonl.gz``: the receipt's queue, which is
the queue the *client* chose, the stored offset, the message id, or the error), the client's own
log (``logs/<producer>/rocketmq-client.log.gz``: every failed attempt, every successful retry,
the route it fetched), every stored message of the topic (``topic.jsonl.gz``: broker, queue,
offset, store time, body ``m<seq>``) and the events (a broker paused, resumed).

Two models are checked, each against what the recording determines:

* **the client** (``rocketlb_core.grpc``: ``PublishingLoadBalancer`` and ``ProducerSendLoop``,
  ported from rocketmq-client-java 5.0.8): run on the client's route as its log gives it, with
  the attempts' outcomes as its log gives them, it must name the receipt's queue of every
  successful send. The counter's start (``RandomUtils.nextInt``) is not recorded: it is inferred
  from the first successful send (verdict ``inferred``), and must then hold for every later one.
  A failed send has no receipt: which queues the client chose for it is not recorded
  (``unobserved``). Behind one Proxy every queue has the same endpoints, so the isolation after
  a failed attempt cannot change a candidate (``takeMessageQueues`` then takes the isolated
  queues anyway, walking on n steps: the same queues); the loop still runs it.
* **the Proxy** (``rocketlb_core.grpc.proxy_send``: ``MessageQueueSelector`` of
  rocketmq-proxy 5.3.3, one counter step per attempt, the sorted write queues): it must put every
  stored copy of every send where the dump found it, one attempt after another, the successful
  attempt's copy at the receipt's offset. Its counter starts at random at each route reload (20 s
  at least apart, ``REFRESH_MS``), which the recording does not show: a send whose copies need a
  new start (before it, or between two of its attempts: the access that finds the view old
  still uses it) is ``reload`` when a reload could have happened by then (at least
  ``REFRESH_MS`` after the earliest moment the previous one could have happened, the first
  load no earlier than the first start of any gRPC client of the recording: the cache is the
  topic's, a consumer may fill it first), else ``unexplained``. The
  first send's start is ``inferred``. A send that fits more than one reading (a reload before
  it or between its attempts) keeps each until a later send decides: the reading with the
  fewest unexplained sends, then reloads, gives the verdicts (a first fit taken greedily once
  called a later send unexplained, CI's red run of issue 45). The successful attempt's queue
  is one whose copy sits at the receipt's offset. A failed attempt whose message was never
  stored leaves no trace of its queue: the model's queue for it is not checked, only counted.
  A failed attempt to a paused broker is stored when it resumes (its request waits in the
  socket), so most failed attempts are seen.
* **each attempt's outcome**, with the Proxy's queue for it: a failed attempt must have met its
  broker paused during the attempt (``paused``), or have been refused while its broker ran
  with the answer the client's log names, "Failed to send message due to too many requests"
  (``busy``: the Proxy's ``TOO_MANY_REQUESTS``, the broker's flow control, seen on a loaded
  host), a successful one its broker running (``ok``); otherwise ``fail_unexplained`` or
  ``ok_while_paused``.

Not recorded, so not checked: the Proxy's counter values (only the queues they gave), when it
reloaded a route, the client's candidates of a failed send, the endpoints the client isolated.
``check_grpc_recording`` returns the counts and every send's verdicts; nothing is fudged: a
send the models do not explain is counted as ``unexplained`` with its detail.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlb_core.errors import InputError
from rocketlb_core.grpc.proxy_send import REFRESH_MS, ProxyQueue, proxy_write_queues
from rocketlb_core.grpc.publishing import GrpcQueue, Permission, PublishingLoadBalancer
from rocketlb_core.grpc.send import Outcome, ProducerSendLoop
from rocketlb_core.trace.clientlog import GMT8_MINUTES, stamp_ms
from rocketlb_core.trace.textfile import read_lines

ENDPOINTS = "proxy"
"""Every queue's endpoints behind the one Proxy (one value: which one does not matter)."""

_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) ", re.ASCII)
_ROUTE = re.compile(r"Fetch topic route successfully, clientId=\S+, topic=(\S+), "
                    r"topicRouteData=TopicRouteData\{messageQueueImpls=\[(.*)\]\}")
_FAILED = re.compile(r"Failed to send message( due to too many requests)?, would attempt to "
                     r"resend (?:right now|after \S+), maxAttempts=(\d+), attempt=(\d+), "
                     r"topic=\S+, messageId\(s\)=\[(\w+)\]", re.ASCII)
_RESENT = re.compile(r"Resend message successfully, topic=\S+, messageId\(s\)=\[(\w+)\], "
                     r"maxAttempts=(\d+), attempt=(\d+)", re.ASCII)
_FINALLY = re.compile(r"Failed to send message\(s\) finally, run out of attempt times, "
                      r"maxAttempts=(\d+), attempt=(\d+), topic=\S+, messageId\(s\)=\[(\w+)\]",
                      re.ASCII)
_REJOIN = re.compile(r"Rejoin endpoints which is isolated before")
_START = re.compile(r"Begin to start the rocketmq client")


class GrpcRecordingError(InputError):
    """A recording the gRPC check cannot read (a missing or malformed file)."""


@dataclass
class ClientLogFacts:
    """What the gRPC client's log says (times in epoch ms)."""

    route: list[tuple[str, int]] = field(default_factory=list)    # (broker, queue id), in order
    routes: list[tuple[int, list[tuple[str, int]]]] = field(default_factory=list)  # (ms, route)
    started_ms: int | None = None
    failed: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # id -> (attempt, ms)
    busy: set[tuple[str, int]] = field(default_factory=set)   # (id, attempt): TOO_MANY_REQUESTS
    resent: dict[str, int] = field(default_factory=dict)          # id -> the attempt that worked
    finally_failed: list[tuple[str, int, int]] = field(default_factory=list)  # (id, attempt, ms)
    rejoins_ms: list[int] = field(default_factory=list)


def read_grpc_client_log(path: Path | str, topic: str) -> ClientLogFacts:
    """The facts of a rocketmq-client-java 5.0.8 log (``rocketmq-client.log``, GMT+8 stamps)."""
    facts = ClientLogFacts()
    for _, text in read_lines(path, errors="replace"):
        m = _STAMP.match(text)
        if m is None:
            continue                       # a stack frame or a continued message
        ms = stamp_ms(m.group(1), GMT8_MINUTES)
        if (r := _ROUTE.search(text)) and r.group(1) == topic:
            route = []
            for item in r.group(2).split(", "):
                broker, _, rest = item.partition(".")
                route.append((broker, int(rest.rsplit(".", 1)[1])))
            if route != facts.route:
                facts.routes.append((ms, route))
            facts.route = route
        elif (f := _FAILED.search(text)) is not None:
            facts.failed.setdefault(f.group(4), []).append((int(f.group(3)), ms))
            if f.group(1):
                facts.busy.add((f.group(4), int(f.group(3))))
        elif (s := _RESENT.search(text)) is not None:
            facts.resent[s.group(1)] = int(s.group(3))
        elif (x := _FINALLY.search(text)) is not None:
            facts.finally_failed.append((x.group(3), int(x.group(2)), ms))
        elif _REJOIN.search(text):
            facts.rejoins_ms.append(ms)
        elif facts.started_ms is None and _START.search(text):
            facts.started_ms = ms
    return facts


@dataclass
class Attempt:
    attempt: int
    ok: bool
    start_ms: int
    end_ms: int
    proxy_queue: ProxyQueue | None = None      # the Proxy model's queue for it
    stored: bool = False                       # a copy of the message is where the model says
    # paused | busy | ok | fail_unexplained | ok_while_paused | unknown_queue
    outcome: str = ""
    busy: bool = False      # the client logged it failed "due to too many requests"


@dataclass
class SendVerdict:
    seq: int
    sent_ms: int
    ok: bool
    attempts: list[Attempt]
    receipt: tuple[str, int] | None            # the client's queue, from the receipt
    stored: list[ProxyQueue]                   # every stored copy of its message
    client: str = ""               # agree | retried | inferred | disagree | unobserved
    client_model: tuple[str, int] | None = None
    proxy: str = ""                # agree | inferred | reload | unobserved | unexplained
    note: str = ""

    def row(self) -> dict[str, Any]:
        return {"seq": self.seq, "ok": self.ok, "attempts": len(self.attempts),
                "receipt": list(self.receipt) if self.receipt else None,
                "client_model": list(self.client_model) if self.client_model else None,
                "stored": [q.short() for q in self.stored],
                "proxy_model": [a.proxy_queue.short() if a.proxy_queue else None
                                for a in self.attempts],
                "outcomes": [a.outcome for a in self.attempts],
                "client": self.client, "proxy": self.proxy, "note": self.note}


def _gz_json_lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise GrpcRecordingError(f"{path}: missing (a gRPC recording has it)")
    return [json.loads(t) for _, t in read_lines(path) if t.startswith("{")]


def _copies_by_seq(dump: list[dict[str, Any]]) -> tuple[dict[int, list[dict[str, Any]]], int]:
    """The topic dump's stored copies by send (body ``m<seq>``), and how many are no send's."""
    copies: dict[int, list[dict[str, Any]]] = {}
    strays = 0
    for x in dump:
        body = x.get("body") or ""
        if body.startswith("m") and body[1:].isdigit():
            copies.setdefault(int(body[1:]), []).append(x)
        else:
            strays += 1
    return copies, strays


def _paused_spans(meta: dict[str, Any], *, certain: bool = False
                  ) -> dict[str, list[tuple[int, int]]]:
    """Each broker's paused (or killed) stretches, from the events' wall clock: a pause from
    when its action started, to when its resume (or restart) returned (when it may have been
    paused); with ``certain``, from when the pause returned to when the resume started (when
    it surely was)."""
    spans: dict[str, list[tuple[int, int]]] = {}
    begun: dict[str, int] = {}
    for e in meta["events"]:
        if e["action"] in ("pause", "kill"):
            begun[e["target"]] = e["done_ms" if certain else "wall_ms"]
        elif e["action"] in ("resume", "restart") and e["target"] in begun:
            spans.setdefault(e["target"], []).append(
                (begun.pop(e["target"]), e["wall_ms" if certain else "done_ms"]))
    for target, start in begun.items():
        spans.setdefault(target, []).append((start, 1 << 62))
    return spans


def _attempts(row: dict[str, Any], log: ClientLogFacts, failed_ids: dict[int, str],
              max_attempts: int) -> list[Attempt]:
    """A send's attempts, their outcomes and time windows, from its row and the client log."""
    start, end = row["sent_ms"], row["sent_ms"] + row.get("cost_ms", 0)
    if "error" in row:
        mid = failed_ids.get(row["seq"])
        fails = sorted(log.failed.get(mid, [])) if mid else []
        last = next((x for x in log.finally_failed if x[0] == mid), None)
        n = last[1] if last else max_attempts
        ends = {a: ms for a, ms in fails} | ({last[1]: last[2]} if last else {})
        ok = False
    else:
        mid = row["msg_id"]
        n = log.resent.get(mid, 1)
        ends = dict(log.failed.get(mid, []))
        ok = True
    out, t = [], start
    for a in range(1, n + 1):
        e = min(max(ends.get(a, end), t), end) if a < n or not ok else end
        out.append(Attempt(a, ok and a == n, t, e, busy=(mid, a) in log.busy))
        t = e
    return out


def _client_check(sends: list[SendVerdict], log: ClientLogFacts, topic: str,
                  max_attempts: int) -> None:
    """The client model: ``PublishingLoadBalancer`` + ``ProducerSendLoop`` per send."""
    def grpc_queues(route: list[tuple[str, int]]) -> list[GrpcQueue]:
        return [GrpcQueue(topic, b, 0, ENDPOINTS, q, Permission.READ_WRITE) for b, q in route]

    versions = log.routes or ([(0, log.route)] if log.route else [])
    queues = grpc_queues(versions[0][1]) if versions else []
    if not queues:
        for s in sends:
            s.client = "unobserved"
            s.note = "the client log has no route of the topic"
        return

    def run(start: int, upto: int) -> list[tuple[str, int] | None]:
        balancer = PublishingLoadBalancer(queues, start)
        loop = ProducerSendLoop(max_attempts=max_attempts)
        rejoins = iter(sorted(log.rejoins_ms))
        pending = next(rejoins, None)
        version = 0
        got: list[tuple[str, int] | None] = []
        for s in sends[:upto]:
            # a new route the client fetched before this send: ``update`` keeps the counter
            while version + 1 < len(versions) and versions[version + 1][0] <= s.sent_ms:
                version += 1
                balancer = balancer.update(grpc_queues(versions[version][1]))
            while pending is not None and pending <= s.sent_ms:
                loop.rejoin([ENDPOINTS])
                pending = next(rejoins, None)
            outcomes: list[Outcome] = ["ok" if a.ok else "fail" for a in s.attempts]

            def answer(_q: GrpcQueue, n: int, o: list[Outcome] = outcomes) -> Outcome:
                return o[n - 1] if n <= len(o) else "fail"

            r = loop.send(balancer, answer)
            got.append((r.attempts[-1].queue.broker, r.attempts[-1].queue.queue_id)
                       if r.ok else None)
        return got

    first = next((i for i, s in enumerate(sends) if s.ok and s.receipt), None)
    if first is None:
        for s in sends:
            s.client = "unobserved"
        return
    starts = [c for c in range(len(queues)) if run(c, first + 1)[first] == sends[first].receipt]
    predicted = run(starts[0], len(sends)) if starts else [None] * len(sends)
    for i, (s, p) in enumerate(zip(sends, predicted, strict=True)):
        s.client_model = p
        if not s.ok or s.receipt is None:
            s.client = "unobserved"
        elif not starts:
            s.client = "disagree"
            s.note = "no counter start gives the first receipt's queue"
        elif i == first:
            s.client = "inferred"
        else:
            s.client = "agree" if p == s.receipt else "disagree"


def _planned(k: int, queues: Sequence[ProxyQueue], pos: int, split: int | None = None,
             new: int = 0) -> list[ProxyQueue]:
    """The Proxy's queue for each of ``k`` attempts: the counter at ``pos`` for the attempts
    before ``split`` (all of them by default), and (a route reload before the send, split 0,
    or between two of its attempts) at ``new`` from ``split`` on."""
    n = len(queues)
    split = k if split is None else split
    return [queues[(pos + j) % n] if j < split else queues[(new + j - split) % n]
            for j in range(k)]


def _fits(s: SendVerdict, planned: Sequence[ProxyQueue],
          receipt_queues: frozenset[ProxyQueue] | None) -> bool:
    """Whether ``planned`` (one queue per attempt) puts ``s``'s stored copies where they are:
    every copy on one attempt's queue, and a successful send's last attempt on a queue whose
    copy sits at the receipt's offset (``receipt_queues``; ``None``: the row has no offset,
    any of its stored queues)."""
    left = Counter(planned)
    for q in s.stored:
        if left[q] <= 0:
            return False
        left[q] -= 1
    if not s.ok:
        return True
    return planned[-1] in (s.stored if receipt_queues is None else receipt_queues)


@dataclass(frozen=True)
class _Track:
    """One reading of the Proxy's counter so far: where it points (``None``: unknown), the
    earliest moment its next route reload can happen, the last selection it made, what the
    reading cost, and its verdicts (a linked list, newest first)."""

    pos: int | None
    next_reload: int | None
    last_start: int | None
    unexplained: int = 0
    reloads: int = 0
    path: tuple[Any, ...] | None = None     # (previous path, (verdict, plan, note, reload_ms))


def _step(t: _Track, s: SendVerdict, queues: Sequence[ProxyQueue], verdict: str,
          plan: list[ProxyQueue] | None, note: str = "", reload_ms: int | None = None) -> _Track:
    n = len(queues)
    if plan is None:
        pos = (t.pos + len(s.attempts)) % n if verdict == "unobserved" and t.pos is not None \
            else None
    else:
        pos = (queues.index(plan[-1]) + 1) % n
    return _Track(pos, t.next_reload if reload_ms is None else reload_ms + REFRESH_MS,
                  t.last_start if plan is None else s.attempts[-1].start_ms,
                  t.unexplained + (verdict == "unexplained"), t.reloads + (verdict == "reload"),
                  (t.path, (verdict, plan, note, reload_ms)))


def _successors(t: _Track, s: SendVerdict, queues: Sequence[ProxyQueue],
                receipt_queues: frozenset[ProxyQueue] | None) -> list[_Track]:
    """Every reading of ``s`` the track ``t`` allows: the counter going on (``agree``), a
    route reload before the send or between two of its attempts when one can have happened
    by then (``reload``), the first stored send's start (``inferred``); else ``unexplained``."""
    n, k = len(queues), len(s.attempts)
    if not s.stored:
        # nothing of it stored (every attempt failed, none kept): the counter moves on
        return [_step(t, s, queues, "unobserved", None)]
    fits = [p for p in range(n) if _fits(s, _planned(k, queues, p), receipt_queues)]
    if t.last_start is None:
        if fits:
            return [_step(t, s, queues, "inferred", _planned(k, queues, p)) for p in fits]
        return [_step(t, s, queues, "unexplained", None,
                      "no counter start puts the first stored send's copies where they are")]
    out = []
    if t.pos is not None and t.pos in fits:
        out.append(_step(t, s, queues, "agree", _planned(k, queues, t.pos)))
    # a new random start: a route reload, at least REFRESH_MS after the previous one (whose
    # earliest moment is known) and after the old counter's last selection; before the send
    # (split 0) or between two of its attempts (the old counter placed those before the split)
    floor = max(x for x in (t.next_reload, t.last_start) if x is not None)
    late_by: int | None = None
    for split in range(k if t.pos is not None else 1):
        earliest = max(floor, s.attempts[split - 1].start_ms) if split else floor
        for p in range(n):
            planned = _planned(k, queues, t.pos or 0, split, p)
            if not _fits(s, planned, receipt_queues):
                continue
            if earliest <= s.attempts[split].end_ms:
                out.append(_step(t, s, queues, "reload", planned, reload_ms=earliest))
            else:
                late = earliest - s.attempts[split].end_ms
                late_by = late if late_by is None else min(late_by, late)
    if out:
        return out
    note = ("no counter start puts its copies where they are" if late_by is None
            else f"a new counter start {late_by} ms before a route reload can "
                 f"have happened ({REFRESH_MS} ms after the previous one)")
    if not fits:
        return [_step(t, s, queues, "unexplained", None, note)]
    return [_step(t, s, queues, "unexplained", _planned(k, queues, p), note) for p in fits]


_KEEP = 6
"""Readings kept per counter position (the least unexplained, then reloads, then the
earliest next reload); a reading no better than another in all three is dropped."""


def _prune(tracks: list[_Track]) -> list[_Track]:
    def key(t: _Track) -> tuple[int, int, int]:
        return (t.unexplained, t.reloads, -(1 << 62) if t.next_reload is None else t.next_reload)

    kept: dict[int | None, list[_Track]] = {}
    for t in sorted(tracks, key=key):
        mine = kept.setdefault(t.pos, [])
        kt = key(t)
        if len(mine) < _KEEP and not any(all(a <= b for a, b in zip(key(m), kt, strict=True))
                                         for m in mine):
            mine.append(t)
    return [t for mine in kept.values() for t in mine]


def _proxy_check(sends: list[SendVerdict], queues: Sequence[ProxyQueue],
                 receipt_queues: dict[int, frozenset[ProxyQueue]],
                 first_load_ms: int | None) -> dict[str, Any]:
    """The Proxy model (see the module docstring), over every reading of the recording at
    once: a send whose copies fit more than one counter start (a reload before a failed
    attempt or after it, two starts for the first send) keeps each, and a later send
    decides. The reading with the fewest unexplained sends, then the fewest reloads, gives
    each send its verdict and each attempt its queue; returns the earliest moments its route
    reloads can have happened. A reload may fall between two attempts of one send (the
    attempt that finds the view 20 s old still uses it; Caffeine reloads meanwhile)."""
    tracks = [_Track(None, None if first_load_ms is None else first_load_ms + REFRESH_MS,
                     None)]
    for s in sends:
        tracks = _prune([x for t in tracks
                         for x in _successors(t, s, queues, receipt_queues.get(s.seq))])
    best = min(tracks, key=lambda t: (t.unexplained, t.reloads))
    steps: list[tuple[str, list[ProxyQueue] | None, str, int | None]] = []
    node = best.path
    while node is not None:
        node, step = node
        steps.append(step)
    steps.reverse()
    reloads: list[int] = []
    for s, (verdict, plan, note, reload_ms) in zip(sends, steps, strict=True):
        s.proxy, s.note = verdict, note or s.note
        if reload_ms is not None:
            reloads.append(reload_ms)
        if plan is None:
            continue
        for a, q in zip(s.attempts, plan, strict=True):
            a.proxy_queue = q
            a.stored = q in s.stored
    return {"reloads_earliest_ms": reloads}


def _receipt_queues(rows: list[dict[str, Any]], copies: dict[int, list[dict[str, Any]]]
                    ) -> dict[int, frozenset[ProxyQueue]]:
    """For each row with a receipt's offset, the queues whose stored copy of its message
    sits at that offset (empty: none does)."""
    return {int(r["seq"]): frozenset(ProxyQueue(x["broker"], int(x["queue"]))
                                     for x in copies.get(int(r["seq"]), [])
                                     if int(x["offset"]) == int(r["offset"]))
            for r in rows if "offset" in r}


def _outcomes(sends: list[SendVerdict], spans: dict[str, list[tuple[int, int]]],
              certain: dict[str, list[tuple[int, int]]] | None = None) -> None:
    """Each attempt's outcome: a failure may have met its broker paused (``spans``, from the
    pause's start to the resume's return), a success must have had it running some of the
    time (outside ``certain``: from the pause's return to the resume's start; ``spans`` when
    not given)."""
    certain = spans if certain is None else certain
    for s in sends:
        for a in s.attempts:
            if a.proxy_queue is None:
                a.outcome = "unknown_queue"
                continue
            stretches = spans.get(a.proxy_queue.broker, [])
            paused_some = any(lo <= a.end_ms and a.start_ms <= hi for lo, hi in stretches)
            running_some = not any(lo <= a.start_ms and a.end_ms <= hi
                                   for lo, hi in certain.get(a.proxy_queue.broker, []))
            if a.ok:
                a.outcome = "ok" if running_some else "ok_while_paused"
            elif paused_some:
                a.outcome = "paused"
            else:
                # the Proxy answered TOO_MANY_REQUESTS (the broker's flow control: a store busy
                # on a loaded host), which the client's log names, and its broker ran
                a.outcome = "busy" if a.busy else "fail_unexplained"


def _first_client_start(rec: Path, meta: dict[str, Any], producer_ms: int | None) -> int | None:
    """The earliest moment the Proxy can have loaded the topic's route: the first start of any
    gRPC client of the recording (the Proxy's route cache is one per topic, shared by the
    producer and the consumers: a consumer that reached it first loaded it, and its 20 s
    refresh counts from then). ``None`` when a client's start is not in its log."""
    starts = [producer_ms]
    for k in meta.get("consumers", []):
        if k.get("client") != "grpc":
            continue
        path = rec / "logs" / k["name"] / "rocketmq-client.log.gz"
        if not path.is_file():
            return None
        starts.append(read_grpc_client_log(path, meta["topic"]).started_ms)
    return None if any(t is None for t in starts) else min(t for t in starts if t is not None)


def grpc_producer_agreement(recording: Path | str, producer: str) -> dict[str, Any]:
    """Check one gRPC producer of ``recording`` (see the module docstring)."""
    rec = Path(recording)
    meta = json.loads((rec / "recording.json").read_text("utf-8"))
    spec = next((p for p in meta["producers"] if p["name"] == producer), None)
    if spec is None or spec.get("client") != "grpc":
        raise GrpcRecordingError(f"{rec}: no gRPC producer {producer!r}")
    topic = meta["topic"]
    rows = _gz_json_lines(rec / "sends" / f"{producer}.jsonl.gz")
    dump = _gz_json_lines(rec / "topic.jsonl.gz")
    log_path = rec / "logs" / producer / "rocketmq-client.log.gz"
    if not log_path.is_file():
        raise GrpcRecordingError(f"{log_path}: missing (the client's log)")
    log = read_grpc_client_log(log_path, topic)
    max_attempts = int(spec.get("max_attempts", 3))

    copies, strays = _copies_by_seq(dump)
    errors = [r["seq"] for r in rows if "error" in r]
    failed_ids = {seq: mid for seq, (mid, _, _) in zip(errors, log.finally_failed, strict=False)}
    sends = []
    for r in rows:
        stored = sorted(ProxyQueue(x["broker"], int(x["queue"])) for x in copies.get(r["seq"], []))
        receipt = (r["client_broker"], int(r["client_queue"])) if "client_broker" in r else None
        sends.append(SendVerdict(r["seq"], r["sent_ms"], "error" not in r,
                                 _attempts(r, log, failed_ids, max_attempts), receipt, stored))
    _client_check(sends, log, topic, max_attempts)
    queues = proxy_write_queues((q["broker_name"], q["write_queue_nums"], q["perm"])
                                for q in meta["route"])
    first_client = _first_client_start(rec, meta, log.started_ms)
    at_offset = _receipt_queues(rows, copies)
    offsets_ok = {seq: bool(qs) for seq, qs in at_offset.items()}
    proxy_info = _proxy_check(sends, queues, at_offset, first_client)
    _outcomes(sends, _paused_spans(meta), _paused_spans(meta, certain=True))

    client = Counter(s.client for s in sends)
    proxy = Counter(s.proxy for s in sends)
    attempts = Counter(a.outcome for s in sends for a in s.attempts)
    landed = [(s.client_model[0], s.attempts[-1].proxy_queue.broker) for s in sends
              if s.ok and s.client_model and s.attempts[-1].proxy_queue is not None]
    unexplained = (client["disagree"] + proxy["unexplained"] + attempts["fail_unexplained"]
                   + attempts["ok_while_paused"])
    return {
        "producer": producer, "sends": len(sends), "ok": sum(s.ok for s in sends),
        "failed": len(errors), "attempts": sum(len(s.attempts) for s in sends),
        "stored_copies": sum(len(s.stored) for s in sends), "stray_messages": strays,
        "log_failed_finally": len(log.finally_failed),
        "client": dict(client), "proxy": dict(proxy), "attempt_outcomes": dict(attempts),
        "failed_attempts_seen_stored": sum(a.stored for s in sends for a in s.attempts
                                           if not a.ok),
        "receipt_offset_is_stored": Counter(offsets_ok.values()).get(True, 0),
        "receipt_offset_not_stored": Counter(offsets_ok.values()).get(False, 0),
        "client_choice_is_stored_broker": sum(a == b for a, b in landed),
        "client_choice_is_other_broker": sum(a != b for a, b in landed),
        "proxy_queues": [q.short() for q in queues], "client_route": [list(q) for q in log.route],
        **proxy_info, "unexplained": unexplained,
        "unexplained_detail": [s.row() for s in sends
                               if s.client == "disagree" or s.proxy == "unexplained"
                               or any(a.outcome in ("fail_unexplained", "ok_while_paused")
                                      for a in s.attempts)][:50],
        "sends_detail": [s.row() for s in sends],
    }


def check_grpc_recording(recording: Path | str) -> dict[str, Any]:
    """Every gRPC producer of ``recording``, checked (``grpc_producer_agreement``; a Python
    one by ``python_producer_agreement``)."""
    meta = json.loads((Path(recording) / "recording.json").read_text("utf-8"))
    return {"producers": {p["name"]: python_producer_agreement(recording, p["name"], meta)
                          if p.get("language") == "python" else
                          grpc_producer_agreement(recording, p["name"])
                          for p in meta["producers"] if p.get("client") == "grpc"},
            "proxy": meta.get("proxy"), "grpc_client": meta.get("grpc_client"),
            "python_client": meta.get("python_client")}


# ---------------------------------------------------------------- the Python gRPC producer
#
# The Python gRPC producer's model against a live recording through the Proxy (issue 34, item 3:
# "the Python client from PyPI if it installs here").
#
# A scenario producer with ``client = "grpc"`` and ``language = "python"`` is rocketmq-python-client
# (``live/py/grpc_produce.py``, in the client's own venv). Its recording holds what a Java gRPC
# producer's does (above): the driver's rows (the receipt's queue: the one the
# *client* chose), the client's log (``logs/<producer>/rocketmq_client.log.gz``: the routes it
# fetched, each send that failed finally) and every stored message of the topic.
#
# The Python client logs no failed attempt but the last of a failed send, so how many attempts a
# stored send took is not written anywhere. The client's own rule gives it: every attempt takes
# the selector's next queue (``grpc.python_client``: ``select_next_queue`` per attempt, nothing
# isolated), so between two receipts the selector moved once per attempt, and a send's attempts
# are its receipt's step from the previous receipt, less the attempts of the failed sends between
# (each ran out of its attempts, ``max_attempts``). Then:
#
# * **the client**: the first receipt's position gives the start (``inferred``); every later
#   receipt must be 1 to ``max_attempts`` steps on (``agree`` for one, ``retried`` for more),
#   else ``disagree``. With ``n`` queues and ``max_attempts < n`` the step names the attempts;
# * **the Proxy** (``grpc.proxy_send``, as for the Java client): those attempts, one counter step
#   each, must put every stored copy where the dump found it (``agree``, ``inferred``,
#   ``reload``, else ``unexplained``);
# * **each attempt's outcome**: the failed attempts (all but a stored send's last) must have met
#   their Proxy-chosen broker paused (``paused``), the last one running (``ok``). The attempts'
#   windows are not logged: a send's time is split evenly among them (every failed attempt of a
#   paused broker waits out the same ``request_timeout``).
#
# Nothing is fudged: a send the models do not explain is ``unexplained`` with its detail.

PY_LOG = "rocketmq_client.log.gz"
"""rocketmq-python-client's log (``~/logs/rocketmq_python/rocketmq_client.log``), as kept."""

_PY_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ", re.ASCII)
_PY_ROUTE = re.compile(r"update topic:(\S+) route, route info: message_queues:\((.*)\)")
_PY_FINALLY = re.compile(r"because of run out of attempt times, topic:\S+, message_id:(\w+),.*"
                         r"attempt:(\d+)", re.ASCII)


def read_python_client_log(path: Path, topic: str, utc_offset_minutes: int
                           ) -> tuple[list[tuple[int, list[tuple[str, int]]]], int | None,
                                      list[str]]:
    """The routes the client fetched (epoch ms, ``(broker, queue id)`` in the route's order,
    when it changed), the first route's time, and the message ids of the sends that ran out
    of attempts."""
    routes: list[tuple[int, list[tuple[str, int]]]] = []
    first: int | None = None
    finally_failed: list[str] = []
    for _, text in read_lines(path, errors="replace"):
        m = _PY_STAMP.match(text)
        if m is None:
            continue
        ms = stamp_ms(f"{m.group(1)}.{m.group(2)}", utc_offset_minutes)
        if (r := _PY_ROUTE.search(text)) and r.group(1) == topic:
            route = []
            for item in r.group(2).split(", "):
                head, _, queue_id = item.rpartition(".")
                broker = head[: -len(topic) - 1] if head.endswith("." + topic) else head
                route.append((broker, int(queue_id)))
            first = ms if first is None else first
            if not routes or routes[-1][1] != route:
                routes.append((ms, route))
        elif (f := _PY_FINALLY.search(text)) is not None:
            finally_failed.append(f.group(1))
    return routes, first, finally_failed


def _windows(row: dict[str, Any], k: int, ok: bool) -> list[Attempt]:
    start, cost = row["sent_ms"], max(0, int(row.get("cost_ms", 0)))
    return [Attempt(a, ok and a == k, start + cost * (a - 1) // k, start + cost * a // k)
            for a in range(1, k + 1)]


def python_producer_agreement(recording: Path | str, producer: str,
                              meta: dict[str, Any]) -> dict[str, Any]:
    """Check one Python gRPC producer of ``recording`` (see the module docstring)."""
    rec = Path(recording)
    spec = next((p for p in meta["producers"] if p["name"] == producer), None)
    if spec is None or spec.get("language") != "python":
        raise GrpcRecordingError(f"{rec}: no Python gRPC producer {producer!r}")
    topic, max_attempts = meta["topic"], int(spec.get("max_attempts", 3))
    rows = _gz_json_lines(rec / "sends" / f"{producer}.jsonl.gz")
    dump = _gz_json_lines(rec / "topic.jsonl.gz")
    log_path = rec / "logs" / producer / PY_LOG
    if not log_path.is_file():
        raise GrpcRecordingError(f"{log_path}: missing (the client's log)")
    routes, first_route_ms, finally_failed = read_python_client_log(
        log_path, topic, int(meta.get("utc_offset_minutes", 0)))

    copies, strays = _copies_by_seq(dump)

    # the client: each receipt's step from the previous one is the attempts it took
    sends: list[SendVerdict] = []
    pos: int | None = None
    version = 0
    for r in rows:
        while version + 1 < len(routes) and routes[version + 1][0] <= r["sent_ms"]:
            version += 1
        route = routes[version][1] if routes else []
        ok = "error" not in r
        receipt = (r["client_broker"], int(r["client_queue"])) if ok else None
        stored = sorted(ProxyQueue(x["broker"], int(x["queue"])) for x in copies.get(r["seq"], []))
        verdict, note, k = "unobserved", "", max_attempts
        if ok and receipt in route:
            at = route.index(receipt)
            if pos is None:
                # the start is unknown: the attempts are its stored copies (at least one)
                verdict, k = "inferred", min(max(1, len(stored)), max_attempts)
            else:
                # ``pos`` is where the selector points now: the send's attempts took the queues
                # from there, the last one the receipt's
                step = (at - pos) % len(route) + 1
                if step <= max_attempts:
                    verdict, k = ("agree" if step == 1 else "retried"), step
                else:
                    verdict = "disagree"
                    note = f"the receipt is {step} queues on, not 1 to {max_attempts}"
            pos = (at + 1) % len(route)
        elif ok:
            verdict, note = "disagree", "the receipt's queue is not in the client's route"
        elif pos is not None and route:
            pos = (pos + max_attempts) % len(route)       # a failed send ran out of attempts
        sends.append(SendVerdict(r["seq"], r["sent_ms"], ok, _windows(r, k, ok), receipt, stored,
                                 client=verdict, note=note))

    at_offset = _receipt_queues(rows, copies)
    offsets_ok = {seq: bool(qs) for seq, qs in at_offset.items()}
    queues = proxy_write_queues((q["broker_name"], q["write_queue_nums"], q["perm"])
                                for q in meta["route"])
    proxy_info = _proxy_check(sends, queues, at_offset, first_route_ms)
    _outcomes(sends, _paused_spans(meta), _paused_spans(meta, certain=True))

    client = Counter(s.client for s in sends)
    proxy = Counter(s.proxy for s in sends)
    attempts = Counter(a.outcome for s in sends for a in s.attempts)
    unexplained = (client["disagree"] + proxy["unexplained"] + attempts["fail_unexplained"]
                   + attempts["ok_while_paused"])
    failed = sum(not s.ok for s in sends)
    return {
        "producer": producer, "language": "python", "sends": len(sends),
        "ok": len(sends) - failed, "failed": failed,
        "attempts": sum(len(s.attempts) for s in sends),
        "stored_copies": sum(len(s.stored) for s in sends), "stray_messages": strays,
        "log_failed_finally": len(finally_failed),
        "client": dict(client), "proxy": dict(proxy), "attempt_outcomes": dict(attempts),
        "receipt_offset_is_stored": sum(offsets_ok.values()),
        "receipt_offset_not_stored": sum(not v for v in offsets_ok.values()),
        "proxy_queues": [q.short() for q in queues],
        "client_route": [list(q) for q in (routes[-1][1] if routes else [])],
        **proxy_info, "unexplained": unexplained,
        "unexplained_detail": [s.row() for s in sends
                               if s.client == "disagree" or s.proxy == "unexplained"
                               or any(a.outcome in ("fail_unexplained", "ok_while_paused")
                                      for a in s.attempts)][:50],
        "sends_detail": [s.row() for s in sends],
    }
