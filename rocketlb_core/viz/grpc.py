"""Chapter 11's figures (the RocketMQ 5 gRPC clients): the client, Proxy and brokers as a
sequence diagram, and one outage met by a remoting and a gRPC producer side by side.

``grpc_outage`` runs a scenario (by default ``data/scenarios/grpc-outage.toml``: seed 002's
outage, a gRPC producer beside a remoting one) through the simulator with a ``LedgerSink`` that
counts each producer's messages per queue and per broker over time, at the queue the producer
chose: for the remoting producer the queue that stores it, for the gRPC producer the client's
choice (the simulator's ledger), whose broker a local-mode Proxy keeps but whose queue it does
not (a message without a group goes to a queue of that broker drawn at random); the frames
it returns feed ``charts.bar_chart`` and ``charts.broker_share_chart``. Nothing here balances
anything: the sends are the simulator's (``sim.clients.GrpcProducer`` and
``sim.clients.Producer``), which run the core's ``grpc`` and ``producer`` packages. The
``live_*`` frames read the live recordings through a cluster-mode Proxy (``data/live/grpc/``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rocketlb_core.model import MessageQueue
from rocketlb_core.viz.sequence import SequenceDiagram, sequence_diagram

if TYPE_CHECKING:
    import pandas as pd

PROXY_DIAGRAM = """\
participant P as gRPC producer
participant C as gRPC consumer
participant X as Proxy (cluster mode)
participant A as broker-a
participant B as broker-b
P->>X: QueryRoute: every broker's queues,<br/>all at the Proxy's endpoints
P->>P: takeMessageQueues(isolated, 3):<br/>broker-a/3, then a queue of broker-b
P->>X: SendMessage, attempt 1, names broker-a/3
note over X: does not read the named queue:<br/>its own counter gives broker-a/2
X-xA: SEND_MESSAGE: no answer (paused)
note over P: no answer in 3 s: isolate the Proxy's<br/>endpoints (every broker's)
P->>X: attempt 2 names the broker-b queue
note over X: its counter's next: broker-a/3
X-xA: SEND_MESSAGE: no answer
P->>X: attempt 3 names broker-a/3 again
note over X: its counter's next: broker-b/0
X->>B: SEND_MESSAGE
B-->>X: SEND_OK
X-->>P: SendReceipt naming broker-a/3 (the client's queue)
note over P: the next heartbeat, answered by<br/>the Proxy itself, ends the isolation
C->>X: QueryAssignment (push consumer, every 5 s)
X-->>C: the same list for every consumer:<br/>broker-a/-1, broker-b/-1
C->>X: ReceiveMessage (broker-b/-1)
X->>B: POP (any queue of broker-b)
B-->>X: messages
X-->>C: messages
"""


def proxy_diagram(caption: str = "") -> SequenceDiagram:
    """A send that meets a paused broker behind one cluster-mode Proxy, and a push consumer's
    assignment and receive (rocketmq-client-java 5.0.8 and rocketmq-proxy 5.3.3). The send is
    send 37 of ``data/live/grpc/grpc-producer-outage-5`` (``live_retries_frame``): the client's
    retry to its broker-b candidate went to broker-a, its third attempt, to broker-a/3 again,
    to broker-b/0, because the Proxy's counter picks each attempt's queue."""
    return sequence_diagram(PROXY_DIAGRAM,
                            "RocketMQ 5: the gRPC clients talk to a cluster-mode Proxy", caption)


@dataclass
class SendCounts:
    """A ``sim.ledger.LedgerSink`` that counts each producer's sends: per queue and per
    (bucket, broker) as the ledger has them (the gRPC producer's at the client's choice), failed,
    and the attempts they took."""

    labels: dict[str, str] = field(default_factory=dict)   # producer -> label; {}: all
    bucket_ms: int = 10_000
    queues: Counter[tuple[str, str]] = field(default_factory=Counter)
    buckets: Counter[tuple[str, int, str]] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    retried: Counter[str] = field(default_factory=Counter)
    sent: Counter[str] = field(default_factory=Counter)

    def message(self, msg_id: int, producer: str, sent_ms: int, status: str,
                queue: MessageQueue | None, offset: int, attempts: int, send_ms: int,
                error: str | None) -> None:
        self.sent[producer] += 1
        self.retried[producer] += attempts > 1
        if queue is None:
            self.failed[producer] += 1
            return
        self.queues[(producer, queue.short())] += 1
        self.buckets[(producer, sent_ms // self.bucket_ms, queue.broker_name)] += 1

    def delivery(self, time_ms: int, consumer: str, queue: MessageQueue, first: int,
                 count: int) -> None:
        return None


def grpc_outage(labels: Mapping[str, str], scenario: Path | str | None = None,
                line: str | None = None, seed: int = 0) -> SendCounts:
    """Run ``scenario`` (default ``grpc-outage.toml``; ``line``: the remoting producers' line in
    place of the file's) and count its producers' sends; ``labels``: producer name -> the label
    the frames use (producers not named are left out of the frames)."""
    from rocketlb_core import data_path
    from rocketlb_core.producer.line import ProducerLine
    from rocketlb_core.sim.scenario import load
    from rocketlb_core.sim.world import run_scenario

    sc = load(Path(scenario) if scenario else data_path("scenarios", "grpc-outage.toml"))
    if line is not None:
        sc = replace(sc, line=ProducerLine.parse(line))
    counts = SendCounts(dict(labels))
    run_scenario(sc, seed=seed, sink=counts)
    return counts


def _label(counts: SendCounts, producer: str) -> str | None:
    return counts.labels.get(producer) if counts.labels else producer


def outage_queues_frame(counts: SendCounts) -> pd.DataFrame:
    """Messages per producer and the queue it chose (columns ``producer``, ``queue``,
    ``messages``), queues in order, for ``charts.bar_chart(..., color="producer",
    grouped=True)``: the stored queue for a remoting producer, the client's choice for a gRPC
    one (not where a Proxy stores it; see the module docstring)."""
    import pandas as pd

    rows = [{"producer": lab, "queue": q, "messages": n}
            for (p, q), n in counts.queues.items() if (lab := _label(counts, p))]
    frame = pd.DataFrame(rows)
    return frame.sort_values(["queue", "producer"], kind="stable").reset_index(drop=True)


def outage_over_time_frame(counts: SendCounts) -> pd.DataFrame:
    """Messages stored per producer, broker and bucket (columns ``setting``, ``t_s``,
    ``broker``, ``messages``), for ``charts.broker_share_chart``."""
    import pandas as pd

    brokers = sorted({b for (_, _, b) in counts.buckets})
    last = max(k for (_, k, _) in counts.buckets)
    rows = []
    for p in counts.sent:
        lab = _label(counts, p)
        if lab is None:
            continue
        for k in range(last + 1):
            for b in brokers:
                rows.append({"setting": lab, "t_s": k * counts.bucket_ms // 1000, "broker": b,
                             "messages": counts.buckets[(p, k, b)]})
    return pd.DataFrame(rows)


def outage_summary(counts: SendCounts) -> pd.DataFrame:
    """Per producer: sent, stored, failed, sends that took more than one attempt."""
    import pandas as pd

    rows = {}
    for p in counts.sent:
        lab = _label(counts, p)
        if lab is None:
            continue
        rows[lab] = {"sent": counts.sent[p], "stored": counts.sent[p] - counts.failed[p],
                     "failed": counts.failed[p], "retried": counts.retried[p]}
    return pd.DataFrame.from_dict(rows, orient="index")


def live_proxy_frame(recording: Path | str) -> pd.DataFrame:
    """A live recording through a cluster-mode Proxy (``data/live/grpc/``), checked by
    ``trace.grpc_agreement.check_grpc_recording``: per producer, where the client's choice and
    the Proxy's own selection (``grpc.proxy_send``) met the messages the brokers stored."""
    import pandas as pd

    from rocketlb_core.trace.grpc_agreement import check_grpc_recording

    out = {}
    for name, p in check_grpc_recording(recording)["producers"].items():
        proxy = p["proxy"]
        out[name] = {
            "sends": p["sends"], "stored": p["ok"], "failed": p["failed"],
            "receipt names the storing broker": p["client_choice_is_stored_broker"],
            "receipt names another broker": p["client_choice_is_other_broker"],
            "Proxy model agrees": proxy.get("agree", 0),
            "Proxy counter inferred": proxy.get("inferred", 0) + proxy.get("reload", 0),
            "Proxy model unexplained": p["unexplained"],
            "failed attempts stored anyway": p["failed_attempts_seen_stored"]}
    return pd.DataFrame.from_dict(out, orient="index").T


def live_isolation_frame(recording: Path | str, producer: str = "g1") -> pd.DataFrame:
    """When a gRPC producer of a live recording through a cluster-mode Proxy (``data/live/grpc/``)
    ended its isolation of the Proxy's endpoints, beside the brokers' pauses: one row per event
    (the recording's pause and resume of a broker, each "Rejoin endpoints which is isolated
    before" the client logged), with its time in seconds from the recording's start and the
    brokers paused then (columns ``s``, ``event``, ``paused``). The recording's events carry
    the wall clock of each action (a pause counts from when it returned, a resume until it
    began); the log's times are read by ``trace.grpc_agreement.read_grpc_client_log``."""
    import json

    import pandas as pd

    from rocketlb_core.trace.grpc_agreement import read_grpc_client_log

    rec = Path(recording)
    meta = json.loads((rec / "recording.json").read_text("utf-8"))
    t0 = int(meta["t0_ms"])
    spans: dict[str, list[tuple[int, int]]] = {}
    begun: dict[str, int] = {}
    rows: list[tuple[int, str]] = []
    for e in meta["events"]:
        if e["action"] == "pause":
            begun[e["target"]] = int(e["done_ms"])
            rows.append((int(e["done_ms"]), f"{e['target']} paused"))
        elif e["action"] == "resume":
            spans.setdefault(e["target"], []).append((begun.pop(e["target"]), int(e["wall_ms"])))
            rows.append((int(e["wall_ms"]), f"{e['target']} resumed"))
    for target, start in begun.items():
        spans.setdefault(target, []).append((start, 1 << 62))
    log = read_grpc_client_log(rec / "logs" / producer / "rocketmq-client.log.gz", meta["topic"])
    rows += [(ms, "the producer rejoins the Proxy's endpoints") for ms in log.rejoins_ms]
    out = []
    for ms, event in sorted(rows):
        paused = sorted(b for b, ss in spans.items() if any(a < ms < z for a, z in ss))
        out.append({"s": round((ms - t0) / 1000, 1), "event": event,
                    "paused": (", ".join(paused) or "none") if "rejoins" in event else ""})
    return pd.DataFrame(out)


def live_retries_frame(recording: Path | str, producer: str = "g1") -> pd.DataFrame:
    """Every send of a live recording's gRPC producer that took more than one attempt, attempt by
    attempt: the queue the Proxy's own selector gave the attempt (``grpc.proxy_send``, checked
    against the brokers' copies by ``trace.grpc_agreement``), how the attempt ended (``paused``:
    on a paused broker, it timed out), and the queue the send's receipt names (the client's
    choice). Columns ``send``, ``attempt``, ``Proxy's queue``, ``outcome``, ``receipt``."""
    import pandas as pd

    from rocketlb_core.trace.grpc_agreement import check_grpc_recording

    p = check_grpc_recording(recording)["producers"][producer]
    rows = []
    for s in p["sends_detail"]:
        if s["attempts"] < 2:
            continue
        receipt = "/".join(map(str, s["receipt"])) if s["receipt"] else "none: the send failed"
        for n, (q, outcome) in enumerate(zip(s["proxy_model"], s["outcomes"], strict=True), 1):
            rows.append({"send": s["seq"], "attempt": n,
                         "Proxy's queue": "/".join(map(str, q)) if q else "",
                         "outcome": outcome, "receipt": receipt})
    return pd.DataFrame(rows)


def live_clients_frame(recordings: Mapping[str, Sequence[Path | str]]) -> pd.DataFrame:
    """Every gRPC client of the live recordings through the Proxy (``data/live/grpc/``; a column
    per key, e.g. the line, holding its recordings' clients), each checked as
    ``python -m rocketlb_core.live check``
    does: a producer's receipts against its client's model (Java or Python), a simple
    consumer's receives against its rotation, a push consumer's logged assignments against the
    Proxy's answer, and each group's stored messages consumed. One row per client and what is
    checked of it: ``agrees / checked``, ``unexplained`` beside it."""
    import pandas as pd

    from rocketlb_core.trace.grpc_agreement import check_grpc_recording
    from rocketlb_core.trace.grpc_consumer_agreement import check_grpc_consumers

    rows: dict[tuple[str, str], dict[str, str]] = {}

    def put(client: str, what: str, column: str, agree: int, checked: int,
            unexplained: int) -> None:
        rows.setdefault((client, what), {})[column] = (       # no-break spaces: one line
            f"{agree}\u00a0/\u00a0{checked}"
            + (f", {unexplained} unexplained" if unexplained else ""))

    for column, recording in ((c, r) for c, rs in recordings.items() for r in rs):
        for name, p in check_grpc_recording(recording)["producers"].items():
            lang = "Python" if p.get("language") == "python" else "Java"
            c = p["client"]
            put(f"{name} ({lang} producer)", "receipt's queue is the client model's", column,
                c.get("agree", 0) + c.get("retried", 0) + c.get("inferred", 0), p["ok"],
                c.get("disagree", 0))
            proxy = p["proxy"]
            put(f"{name} ({lang} producer)", "stored copies where the Proxy model puts them",
                column, sum(v for k, v in proxy.items() if k not in ("unexplained", "unobserved")),
                p["sends"] - proxy.get("unobserved", 0), proxy.get("unexplained", 0))
        if not any(True for _ in (Path(recording) / "receives").glob("*.jsonl.gz")):
            continue
        consumers = check_grpc_consumers(recording)
        for name, s in consumers["simple"].items():
            v = s["verdicts"]
            put(f"{name} (simple consumer)", "receive's broker is the rotation's", column,
                v.get("agree", 0) + v.get("inferred", 0), s["non_empty"], s["unexplained"])
        for name, k in consumers["push"].items():
            put(f"{name} (push consumer)", "logged assignment is the Proxy's answer", column,
                k["assignments_equal"], k["assignments_logged"], k["unexplained"])
        for name, g in consumers["groups"].items():
            put(f"{name} (group)", "stored messages consumed", column, g["consumed_stored"],
                g["stored"], g["unexplained"])
    frame = pd.DataFrame.from_dict(rows, orient="index").fillna("")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["client", "checked"])
    return frame
