"""Chapter 11's figures (the RocketMQ 5 gRPC clients): the client, Proxy and brokers as a
sequence diagram, and one outage met by a remoting and a gRPC producer side by side.

``grpc_outage`` runs a scenario (by default ``data/scenarios/grpc-outage.toml``: seed 002's
outage, a gRPC producer beside a remoting one) through the simulator with a ``LedgerSink`` that
counts each producer's stored messages per queue and per broker over time; the frames it returns
feed ``charts.bar_chart`` and ``charts.broker_share_chart``. Nothing here balances anything: the
sends are the simulator's (``sim.clients.GrpcProducer`` and ``sim.clients.Producer``), which run
the core's ``grpc`` and ``producer`` packages.
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
participant X as Proxy
participant A as broker-a
participant B as broker-b
P->>X: QueryRoute: the writable master queues
P->>P: takeMessageQueues(isolated, 3): candidates on distinct brokers
P->>X: SendMessage to candidate 1 (broker-a/2)
note over X: picks the queue itself (local mode: the client's broker)
X-xA: SEND_MESSAGE: no answer
note over P: isolate broker-a's endpoints
P->>X: SendMessage to candidate 2 (broker-b/0)
X->>B: SEND_MESSAGE
B-->>X: SEND_OK
X-->>P: SendReceipt
C->>X: QueryAssignment (push consumer, every 5 s)
X-->>C: the same list for every consumer: broker-a/-1, broker-b/-1
C->>X: ReceiveMessage (broker-b/-1)
X->>B: POP (any queue of broker-b)
B-->>X: messages
X-->>C: messages
"""


def proxy_diagram(caption: str = "") -> SequenceDiagram:
    """A send that meets a silent broker, and a push consumer's assignment and receive, through
    the Proxy (the messages of rocketmq-client-java 5.0.8 and rocketmq-proxy 5.3.3)."""
    return sequence_diagram(PROXY_DIAGRAM, "RocketMQ 5: the gRPC clients talk to the Proxy",
                            caption)


@dataclass
class SendCounts:
    """A ``sim.ledger.LedgerSink`` that counts each producer's sends: stored per queue, stored
    per (bucket, broker), failed, and the attempts they took."""

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
    """Messages stored per producer and queue (columns ``producer``, ``queue``, ``messages``),
    queues in order, for ``charts.bar_chart(..., color="producer", grouped=True)``."""
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
