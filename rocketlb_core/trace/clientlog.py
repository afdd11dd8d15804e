"""Reading what a RocketMQ client logs about its assignments (``../shared/reference/
real-data.md`` section 2): the ``rebalanced result changed`` line ``RebalanceImpl`` writes at
INFO into ``rocketmq_client.log`` whenever a rebalance changed a consumer's queues. It is the
only record a real cluster keeps of who owned which queue, and when.

4.9.x writes ``rebalanced result changed. allocateMessageQueueStrategyName=..., group=...,
topic=..., clientId=..., mqAllSize=..., cidAllSize=..., rebalanceResultSize=...,
rebalanceResultSet=[MessageQueue [topic=..., brokerName=..., queueId=...], ...]``; 5.x starts
it with ``client``. 5.x's ``broker rebalanced result changed`` (server-side assignment) is a
different record and is not read here. Other lines are skipped.

A line that holds the phrase but does not parse is an error naming the file, the line and the
field (``TraceError``), or, with ``skip_bad=True``, counted in ``ClientLog.bad``.

>>> import tempfile, pathlib
>>> log = pathlib.Path(tempfile.mkdtemp()) / "rocketmq_client.log"
>>> _ = log.write_text("2026-11-23 22:40:01,123 INFO RebalanceService - rebalanced result "
...     "changed. allocateMessageQueueStrategyName=AVG, group=G, topic=T, clientId=127.0.0.1@c1, "
...     "mqAllSize=8, cidAllSize=2, rebalanceResultSize=1, rebalanceResultSet=[MessageQueue "
...     "[topic=T, brokerName=broker-a, queueId=3]]\\n")
>>> r = read_client_log(log).rebalances[0]
>>> r.client_id, r.cid_all_size, [q.short() for q in r.result], r.line
('127.0.0.1@c1', 2, ['broker-a/3'], 1)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from rocketlb_core.model import MessageQueue
from rocketlb_core.trace.schema import TraceError

PHRASE = "rebalanced result changed. allocateMessageQueueStrategyName="
_LINE = re.compile(
    r"(?P<stamp>^.*?)\s*(?:\S+ - )?(?P<client>client )?rebalanced result changed\. "
    r"allocateMessageQueueStrategyName=(?P<strategy>[^,]*), group=(?P<group>[^,]*), "
    r"topic=(?P<topic>[^,]*), clientId=(?P<client_id>[^,]*), mqAllSize=(?P<mq_all>[^,]*), "
    r"cidAllSize=(?P<cid_all>[^,]*), rebalanceResultSize=(?P<size>[^,]*), "
    r"rebalanceResultSet=\[(?P<set>.*)\]\s*$")
_QUEUE = re.compile(r"MessageQueue \[topic=([^,\]]*), brokerName=([^,\]]*), queueId=(-?\d+)\]")
_FIELDS = ("strategy", "group", "topic", "client_id", "mq_all", "cid_all", "size", "set")


@dataclass(frozen=True)
class Rebalance:
    """One ``rebalanced result changed`` line: a consumer's new share of one topic."""

    path: str
    line: int
    stamp: str                          # the line's timestamp text, as written
    strategy: str
    group: str
    topic: str
    client_id: str
    mq_all_size: int
    cid_all_size: int
    result: tuple[MessageQueue, ...]


@dataclass
class ClientLog:
    rebalances: list[Rebalance] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)        # with skip_bad: what was skipped, why


def _int(path: Path, n: int, name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise TraceError(path, n, name, f"{text!r} is not a whole number") from None
    if value < 0:
        raise TraceError(path, n, name, f"{value} is negative")
    return value


def parse_line(path: Path, n: int, text: str) -> Rebalance | None:
    """The rebalance record on line ``n`` of ``path`` (``None``: no such record there)."""
    if PHRASE not in text or "broker rebalanced result changed" in text:
        return None
    m = _LINE.search(text.rstrip("\r\n"))
    if m is None:
        missing = next((f for f in ("group=", "topic=", "clientId=", "mqAllSize=",
                                    "cidAllSize=", "rebalanceResultSize=", "rebalanceResultSet=[")
                        if f not in text), "rebalanceResultSet")
        raise TraceError(path, n, missing.rstrip("=["), "a rebalanced-result line that does "
                         f"not have the fields of 4.9.x/5.x (missing or malformed {missing!r})")
    size = _int(path, n, "rebalanceResultSize", m["size"])
    queues = tuple(MessageQueue(t, b, int(q)) for t, b, q in _QUEUE.findall(m["set"]))
    if len(queues) != size:
        raise TraceError(path, n, "rebalanceResultSet",
                         f"{len(queues)} queues listed, rebalanceResultSize says {size}")
    for q in queues:
        if q.topic != m["topic"]:
            raise TraceError(path, n, "rebalanceResultSet",
                             f"queue of topic {q.topic!r} in a rebalance of {m['topic']!r}")
    if not m["client_id"]:
        raise TraceError(path, n, "clientId", "empty")
    return Rebalance(str(path), n, m["stamp"].strip(), m["strategy"], m["group"], m["topic"],
                     m["client_id"], _int(path, n, "mqAllSize", m["mq_all"]),
                     _int(path, n, "cidAllSize", m["cid_all"]), queues)


def read_client_log(path: Path | str, *, skip_bad: bool = False) -> ClientLog:
    """Every rebalance record of one client log file, in file order."""
    path = Path(path)
    out = ClientLog()
    try:
        handle = path.open(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise TraceError(path, None, None, f"cannot read: {exc.strerror or exc}") from None
    with handle:
        for n, text in enumerate(handle, start=1):
            try:
                record = parse_line(path, n, text)
            except TraceError as exc:
                if not skip_bad:
                    raise
                out.bad.append(str(exc))
                continue
            if record is not None:
                out.rebalances.append(record)
    return out
