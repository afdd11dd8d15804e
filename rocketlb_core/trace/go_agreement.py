"""The Go client's producer against a live recording (issue 47, item 2): every synchronous send
of rocketmq-client-go's producer (``live/go``) predicted by ``goclient``'s model.

The producer's list is the recording's route in the name server's order, reordered as a lone
2.1.2 producer does (``goclient.route.producer_queues``); its one round-robin counter starts at
0 and steps before every attempt (``goclient.producer``). A send is predicted attempt by attempt: an
attempt on a broker the scenario had stopped (paused or killed, ``ordered_agreement
.stopped_spans``) while the send ran fails, and the loop goes on to the next queue whatever its
broker; any other attempt is stored. The recording's row says where the real client stored the
message (or that it failed), and the counter steps once for each attempt the model makes.

Each send's verdict (the check ``go-producer`` of ``trace.verdicts``' registry):

* ``AGREE``: stored where the model's first attempt goes;
* ``RETRIED``: stored after the model's failed attempts on stopped brokers, where its last
  attempt goes;
* ``FAILED``: every attempt on a stopped broker, and the real send failed too;
* ``UNEXPLAINED``: anything else (the counter is then re-synchronised on the stored queue,
  so one miss is not counted again for every later send).

Standard library only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rocketlb_core.goclient.allocate import GoQueue
from rocketlb_core.goclient.producer import RETRY_TIMES
from rocketlb_core.goclient.route import producer_queues
from rocketlb_core.trace import verdicts

AGREE = verdicts.text("go-producer", "AGREE")
RETRIED = verdicts.text("go-producer", "RETRIED")
FAILED = verdicts.text("go-producer", "FAILED")
UNEXPLAINED = verdicts.text("go-producer", "UNEXPLAINED")

SLACK_MS = 300
"""An attempt this close to a stretch's start or end may have met the broker either way (the
event's wall time is when the recorder acted; the attempt's start is estimated): both are
tried."""
TIMEOUT_MS = 3000
"""A request to a paused broker fails after ``InvokeSync``'s 3 s timeout (2.1.2:
``3*time.Second``); one to a killed broker's closed port fails at once."""


@dataclass
class GoProducerAgreement:
    """Each send's verdict counted (``verdicts``), the name server's order taken, and the
    detail of every unexplained send."""

    verdicts: Counter[str] = field(default_factory=Counter)
    order: list[str] = field(default_factory=list)
    unexplained: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"sends": sum(self.verdicts.values()), "agree": self.verdicts[AGREE],
                "retried": self.verdicts[RETRIED], "failed": self.verdicts[FAILED],
                "unexplained": self.verdicts[UNEXPLAINED]}


def _state(broker: str, t: int, spans: Mapping[str, Sequence[tuple[int, int]]],
           wait: int = 0) -> str:
    """How a request sent at ``t`` that waits up to ``wait`` ms for its answer fares: ``down``
    (the broker stopped for the whole wait), ``up``, or ``unsure`` (within ``SLACK_MS`` of a
    stretch's edge). A paused broker answers what it holds when it resumes, so a request sent
    while it is paused is answered if the pause ends within the wait."""
    for a, b in spans.get(broker, ()):
        if a + SLACK_MS <= t and t + wait <= b - SLACK_MS:
            return "down"
        if a - SLACK_MS <= t <= b + SLACK_MS:
            return "unsure"
    return "up"


def _outcomes(queues: Sequence[GoQueue], counter: int, start: int, tries: int,
              paused: Mapping[str, Sequence[tuple[int, int]]],
              killed: Mapping[str, Sequence[tuple[int, int]]]
              ) -> list[tuple[GoQueue | None, int]]:
    """Every (stored queue or ``None``, attempts) the loop can end with: attempt ``k`` takes
    ``queues[(counter + k + 1) % n]`` at its estimated start."""
    out: list[tuple[GoQueue | None, int]] = []

    def walk(k: int, t: int) -> None:
        if k == tries:
            out.append((None, k))
            return
        q = queues[(counter + k + 1) % len(queues)]
        p = _state(q.broker_name, t, paused, TIMEOUT_MS)
        d = _state(q.broker_name, t, killed)
        if (p == "up" and d == "up") or "unsure" in (p, d):
            out.append((q, k + 1))
        if p != "up":
            walk(k + 1, t + TIMEOUT_MS)
        elif d != "up":
            walk(k + 1, t)
    walk(0, start)
    return out


def go_producer_agreement(truth: Sequence[Mapping[str, Any]], *, topic: str,
                          route_rows: Sequence[Sequence[Any]], origin_ms: int,
                          paused: Mapping[str, Sequence[tuple[int, int]]],
                          killed: Mapping[str, Sequence[tuple[int, int]]],
                          retry_times: int = RETRY_TIMES) -> GoProducerAgreement:
    """Each row of ``truth`` (``agreement.read_sends``: ``seq``, ``sent_ms``, ``broker`` and
    ``queue`` or ``error``, in seq order) against the model. ``route_rows`` are the route's
    ``[broker, read, write, perm]``; the order the name server listed them in, which the
    recording does not keep, is taken as the one of their orders that explains the most sends
    (``order``). ``paused`` and ``killed``: each broker's paused and killed stretches in trace
    time (``origin_ms`` is the trace's zero)."""
    from itertools import permutations

    best: GoProducerAgreement | None = None
    for rows in permutations(route_rows):
        got = _agreement(truth, topic, list(rows), origin_ms, paused, killed, retry_times)
        if best is None or len(got.unexplained) < len(best.unexplained):
            best = got
        if len(rows) > 5:                       # 6! orders and more: the recorded one only
            break
    assert best is not None
    return best


def _agreement(truth: Sequence[Mapping[str, Any]], topic: str, rows: list[Sequence[Any]],
               origin_ms: int, paused: Mapping[str, Sequence[tuple[int, int]]],
               killed: Mapping[str, Sequence[tuple[int, int]]],
               retry_times: int) -> GoProducerAgreement:
    queues = producer_queues(topic, rows, {r[0]: [0] for r in rows}, release="2.1.2")
    out = GoProducerAgreement(order=[str(r[0]) for r in rows])
    where = [(q.broker_name, q.queue_id) for q in queues]
    counter = 0
    for row in truth:
        start = int(row["sent_ms"]) - origin_ms
        real = (str(row["broker"]), int(row["queue"])) if "error" not in row else None
        possible = _outcomes(queues, counter, start, 1 + retry_times, paused, killed)
        match = next(((q, k) for q, k in possible
                      if (None if q is None else (q.broker_name, q.queue_id)) == real), None)
        if match is not None:
            counter += match[1]
            verdict = FAILED if match[0] is None else AGREE if match[1] == 1 else RETRIED
            out.verdicts[verdict] += 1
            continue
        verdict = UNEXPLAINED
        out.verdicts[verdict] += 1
        out.unexplained.append({"seq": row["seq"], "t_ms": start, "real": real,
                                "model": [None if q is None else q.short()
                                          for q, _ in possible]})
        if real is not None and real in where:
            counter = where.index(real)                   # re-synchronised on the real queue
        else:
            counter += 1 + retry_times
    return out
