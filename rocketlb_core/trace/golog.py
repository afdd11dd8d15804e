"""The Go client's log (rocketmq-client-go v2, ``rlog`` on logrus's text format; issue 47).

The client logs each change of a push consumer's share at info level (``consumer/consumer.go``,
``doBalance``)::

    time="2026-11-28 18:05:03.120 +0000" level=info msg="MessageQueue do balance done"
    cidAllSize=2 clientID="@c3" consumerGroup=GID_live mqAllSize=8
    rebalanceResultSet="[MessageQueue [topic=TopicLive, brokerName=broker-a, queueId=0] ...]"
    rebalanceResultSize=4 topic=TopicLive

(one line; logrus sorts the fields, quotes a value holding anything but letters, digits and
``-._/@^+`` with Go's ``%q``). ``read_go_log`` reads those lines as the Java client's
``rebalanced result changed`` lines are read (``clientlog.Rebalance``), each timestamp written
again in the zone the caller checks Java logs in, so one check reads both clients. The time is
``time="..."`` in logrus's default RFC 3339 (to the second) or with milliseconds and a zone
(``2006-01-02 15:04:05.000 -0700``, the live driver's, ``live/go``); any other line is not a
rebalance and is passed over.

Standard library only.

>>> line = ('time="2026-11-28 18:05:03.120 +0000" level=info msg="MessageQueue do balance '
...         'done" cidAllSize=2 clientID="@c3" consumerGroup=G mqAllSize=2 rebalanceResultSet='
...         '"[MessageQueue [topic=T, brokerName=broker-a, queueId=1]]" rebalanceResultSize=1 '
...         'topic=T')
>>> r = parse_go_line("go.log", 1, line, utc_offset_minutes=480)
>>> r.stamp, r.client_id, r.cid_all_size, [q.short() for q in r.result]
('2026-11-29 02:05:03.120', '@c3', 2, ['broker-a/1'])
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rocketlb_core.model import MessageQueue
from rocketlb_core.trace.clientlog import ClientLog, Rebalance, parsed_lines
from rocketlb_core.trace.schema import TraceError

BALANCE_DONE = "MessageQueue do balance done"
LOG_NAME = "rocketmq-client-go.log"
_FIELD = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)')
_QUEUE = re.compile(r"MessageQueue \[topic=(.*?), brokerName=(.*?), queueId=(-?\d+)\]")
_TIMES = ("%Y-%m-%d %H:%M:%S.%f %z", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S.%f%z")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            "\\": "\\", '"': '"', "'": "'"}


def unquote(text: str) -> str:
    """A value as logrus wrote it: Go's ``%q`` undone (``\\n``, ``\\"``, ``\\xNN``, ``\\uNNNN``,
    ``\\UNNNNNNNN``), or the bare token. A ``ValueError`` for a broken escape.

    >>> unquote('"a \\\\"b\\\\" \\\\u00e9"'), unquote("GID_1")
    ('a "b" é', 'GID_1')
    """
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return text
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        kind = body[i + 1:i + 2]
        width = {"x": 2, "u": 4, "U": 8}.get(kind)
        if width is not None:
            digits = body[i + 2:i + 2 + width]
            if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise ValueError(f"a broken \\{kind} escape at {i}")
            out.append(chr(int(digits, 16)))
            i += 2 + width
        elif kind in _ESCAPES:
            out.append(_ESCAPES[kind])
            i += 2
        else:
            raise ValueError(f"an unknown escape \\{kind} at {i}")
    return "".join(out)


def _stamp(path: Path | str, n: int, text: str, offset_minutes: int) -> str:
    for fmt in _TIMES:
        try:
            t = datetime.strptime(text, fmt)
        except ValueError:
            continue
        local = t.astimezone(timezone(timedelta(minutes=offset_minutes)))
        return local.strftime("%Y-%m-%d %H:%M:%S.") + f"{local.microsecond // 1000:03d}"
    raise TraceError(path, n, "time", f"not a time the Go client's log writes: {text[:40]!r}")


def parse_go_line(path: Path | str, n: int, text: str, *,
                  utc_offset_minutes: int) -> Rebalance | None:
    """The rebalance line ``n`` holds, or ``None``; its stamp written at ``utc_offset_minutes``
    east of UTC. A line that says it is one but cannot be read is a ``TraceError`` naming the
    file, the line and the field."""
    if BALANCE_DONE not in text:
        return None
    try:
        fields = {k: unquote(v) for k, v in _FIELD.findall(text)}
    except ValueError as exc:
        raise TraceError(path, n, None, f"a value logrus did not quote so: {exc}") from None
    if fields.get("msg") != BALANCE_DONE:
        return None
    for key in ("time", "clientID", "consumerGroup", "topic", "mqAllSize", "cidAllSize",
                "rebalanceResultSet"):
        if key not in fields:
            raise TraceError(path, n, key, f"a {BALANCE_DONE!r} line without it")
    sizes = {}
    for key in ("mqAllSize", "cidAllSize"):
        if not (fields[key].isascii() and fields[key].isdigit() and len(fields[key]) <= 9):
            raise TraceError(path, n, key, f"a count expected, got {fields[key][:20]!r}")
        sizes[key] = int(fields[key])
    found = _QUEUE.findall(fields["rebalanceResultSet"])
    result = tuple(MessageQueue(t, b, int(q)) for t, b, q in found)
    listed = fields["rebalanceResultSet"].strip()
    if not (listed.startswith("[") and listed.endswith("]")) or \
            (len(found) == 0) != (listed == "[]"):
        raise TraceError(path, n, "rebalanceResultSet",
                         f"a list of MessageQueue [...] expected, got {listed[:60]!r}")
    if "rebalanceResultSize" in fields and fields["rebalanceResultSize"] != str(len(result)):
        raise TraceError(path, n, "rebalanceResultSize",
                         f"{fields['rebalanceResultSize'][:12]!r} queues said, "
                         f"{len(result)} listed")
    return Rebalance(str(path), n, _stamp(path, n, fields["time"], utc_offset_minutes),
                     "AVG", fields["consumerGroup"], fields["topic"], fields["clientID"],
                     sizes["mqAllSize"], sizes["cidAllSize"], result)


def read_go_log(path: Path | str, *, utc_offset_minutes: int, strategy: str = "AVG",
                skip_bad: bool = False) -> ClientLog:
    """Every rebalance of a Go client's log (``.gz`` by name), in file order, each stamp at
    ``utc_offset_minutes``; ``strategy`` is the one the application set (the Go client does not
    log it)."""
    out = ClientLog()

    def parse(p: Path, n: int, text: str) -> Rebalance | None:
        r = parse_go_line(p, n, text, utc_offset_minutes=utc_offset_minutes)
        return None if r is None else Rebalance(r.path, r.line, r.stamp, strategy, r.group,
                                                r.topic, r.client_id, r.mq_all_size,
                                                r.cid_all_size, r.result)

    out.rebalances.extend(parsed_lines(Path(path), parse, skip_bad, out.bad))
    return out
