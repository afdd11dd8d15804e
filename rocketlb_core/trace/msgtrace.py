"""Reading RocketMQ's message trace (``../shared/reference/real-data.md`` section 1): the records
a client with ``enableMsgTrace`` packs into the bodies of ``RMQ_SYS_TRACE_TOPIC`` messages.

Within a body, ``(char) 1`` separates fields and ``(char) 2`` ends a record
(``TraceConstants``); field order is ``TraceDataEncoder``'s:

* ``Pub``: type, timeStamp, regionId, groupName, topic, msgId, tags, keys, storeHost,
  bodyLength, costTime, msgType, [offsetMsgId,] success[, clientHost]: 13 fields (clients before
  offsetMsgId), 14 (the Java clients), or 15 and more (``clientHost``, the Go client);
* ``SubBefore``: type, timeStamp, regionId, groupName, requestId, msgId, retryTimes, keys;
* ``SubAfter``: type, requestId, msgId, costTime, success, keys[, contextCode[, timeStamp,
  groupName]]. On the CLOUD access channel, 4.9.5-4.9.8 and 5.1.4-5.3.0 end it after
  contextCode with a ``(char) 1`` and **no** ``(char) 2`` (upstream #8429), so the next record
  of the batch runs on in the same chunk. Upstream's own decoder then fails on it; this reader
  splits the chunk where a record type starts a field;
* ``EndTransaction`` and ``Recall`` are recognised and counted, not needed for balancing.

The input is a *dump*: JSON lines, one per trace message, each with at least ``body`` (the
message's text, every character kept), as ``rocketlb_core.live.record`` writes it
(``live/java/DumpTopic.java``: also ``broker``, ``queue``, ``offset``, ``store_ms``,
``born_host``), optionally gzip-compressed (a name ending ``.gz``). A record that does not
parse is a ``TraceError`` naming the file, the line and the field, or, with ``skip_bad=True``,
counted in ``MsgTrace.bad`` with its first error.

>>> import json, pathlib, tempfile
>>> body = "\\1".join([
...     "Pub", "1700000000123", "DefaultRegion", "PG", "T", "7F000001ABCD",
...     "null", "null", "127.0.0.1:10911", "4", "2", "0", "0A0B", "true",
... ]) + "\\2"
>>> dump = pathlib.Path(tempfile.mkdtemp()) / "msgtrace.jsonl"
>>> _ = dump.write_text(json.dumps({"body": body}) + "\\n")
>>> p = read_msgtrace(dump).pubs[0]
>>> p.time_ms, p.group, p.store_host, p.cost_ms, p.success, p.fields
(1700000000123, 'PG', '127.0.0.1:10911', 2, True, 14)
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rocketlb_core.limits import MAX_EPOCH_MS, MAX_LATENCY_MS
from rocketlb_core.numbers import NumberError, parse_int
from rocketlb_core.trace.schema import TraceError, check_name, first_line

CONTENT = "\x01"
FIELD = "\x02"
TYPES = ("Pub", "SubBefore", "SubAfter", "EndTransaction", "Recall")
INT32_MAX = (1 << 31) - 1


@dataclass(frozen=True)
class Pub:
    """A ``Pub`` record: one message a producer stored (``success``) through ``store_host``."""

    line: int                     # the dump's line (1-based)
    time_ms: int                  # when the successful attempt started (the client's clock)
    region: str
    group: str
    topic: str
    msg_id: str
    tags: str | None
    keys: str | None
    store_host: str               # the broker's address, not its name
    body_length: int
    cost_ms: int
    msg_type: int
    offset_msg_id: str | None
    success: bool
    client_host: str | None
    fields: int                   # 13, 14 or 15+
    source: str = ""
    """Where the record was read when not from the dump (``line`` is then that file's): the
    client log that holds it (``with_logged``)."""

    @property
    def producer_id(self) -> str:
        """The producing process as the msgId encodes it (``MessageClientIDSetter``: IPv4, pid;
        hex), e.g. ``127.0.0.1:23517``; empty when the msgId is not in that form."""
        mid = self.msg_id
        if len(mid) < 12 or any(c not in "0123456789ABCDEFabcdef" for c in mid[:12]):
            return ""
        ip = ".".join(str(int(mid[i:i + 2], 16)) for i in range(0, 8, 2))
        return f"{ip}:{int(mid[8:12], 16)}"


@dataclass(frozen=True)
class SubBefore:
    line: int
    time_ms: int
    group: str
    request_id: str
    msg_id: str
    retry_times: int


@dataclass(frozen=True)
class SubAfter:
    line: int
    request_id: str
    msg_id: str
    cost_ms: int
    success: bool
    context_code: int | None
    time_ms: int | None
    group: str | None


@dataclass
class MsgTrace:
    path: str
    pubs: list[Pub] = field(default_factory=list)
    sub_before: list[SubBefore] = field(default_factory=list)
    sub_after: list[SubAfter] = field(default_factory=list)
    other: int = 0                         # EndTransaction, Recall
    unterminated: int = 0                  # SubAfter records without (char) 2 (CLOUD channel)
    messages: int = 0
    bad: int = 0
    first_bad: str | None = None
    from_logs: int = 0
    """Records taken from client logs (``with_logged``), not in the dump."""


def _none(text: str) -> str | None:
    return None if text in ("", "null") else text


def int_field(path: str, line: int, name: str, text: str, low: int = -(1 << 63),
              high: int = (1 << 63) - 1) -> int:
    """``text`` as an integer from ``low`` to ``high`` (``numbers.parse_int``: ASCII digits and
    an optional ``-``, nothing else), else a ``TraceError`` naming the file, the line and the
    field (``rocketlb doctor`` reads its inputs' numbers with it too)."""
    try:
        return parse_int(text, low, high)
    except NumberError as exc:
        raise TraceError(path, line, name, str(exc)) from None


_int = int_field


def _stamp(path: str, line: int, name: str, text: str) -> int:
    """An epoch-ms time of a record: 1970 to 2100 (``limits.MAX_EPOCH_MS``)."""
    return _int(path, line, name, text, 0, MAX_EPOCH_MS)


def _bool(path: str, line: int, name: str, text: str) -> bool:
    if text not in ("true", "false"):
        raise TraceError(path, line, name, f"expected true or false, got {text[:40]!r}")
    return text == "true"


def split_records(body: str) -> Iterator[tuple[list[str], bool]]:
    """The records of one trace body as field lists, with whether each was terminated. A chunk
    that holds several records (a SubAfter without its terminator, then the next record) is
    split where a field is a record type."""
    chunks = body.split(FIELD)
    for n, chunk in enumerate(chunks):
        if not chunk:
            continue
        fields = chunk.split(CONTENT)
        starts = [i for i, f in enumerate(fields) if f in TYPES and i > 0
                  and fields[0] == "SubAfter"]
        cuts = [0, *starts, len(fields)]
        for j in range(len(cuts) - 1):
            part = fields[cuts[j]:cuts[j + 1]]
            if part and part[-1] == "" and len(part) > 1:     # "...contextCode\1" then a type
                part = part[:-1]
            last = j == len(cuts) - 2
            yield part, last and n < len(chunks) - 1


def _record(path: str, line: int, f: list[str], out: MsgTrace) -> None:
    kind = f[0]
    if kind == "Pub":
        if len(f) < 13:
            raise TraceError(path, line, "Pub", f"{len(f)} fields (13, 14 or 15+ expected)")
        has_offset = len(f) >= 14
        check_name(path, line, "Pub.groupName", f[3])
        check_name(path, line, "Pub.topic", f[4])
        out.pubs.append(Pub(
            line, _stamp(path, line, "Pub.timeStamp", f[1]), f[2], f[3], f[4], f[5], _none(f[6]),
            _none(f[7]), f[8], _int(path, line, "Pub.bodyLength", f[9], 0, INT32_MAX),
            _int(path, line, "Pub.costTime", f[10], 0, int(MAX_LATENCY_MS)),
            _int(path, line, "Pub.msgType", f[11]),
            _none(f[12]) if has_offset else None,
            _bool(path, line, "Pub.success", f[13] if has_offset else f[12]),
            _none(f[14]) if len(f) >= 15 else None, len(f)))
    elif kind == "SubBefore":
        if len(f) < 8:
            raise TraceError(path, line, "SubBefore", f"{len(f)} fields (8 expected)")
        out.sub_before.append(SubBefore(
            line, _stamp(path, line, "SubBefore.timeStamp", f[1]), f[3], f[4], f[5],
            _int(path, line, "SubBefore.retryTimes", f[6])))
    elif kind == "SubAfter":
        if len(f) < 6:
            raise TraceError(path, line, "SubAfter", f"{len(f)} fields (6 to 9 expected)")
        code = _int(path, line, "SubAfter.contextCode", f[6]) if len(f) >= 7 and f[6] else None
        stamp = _stamp(path, line, "SubAfter.timeStamp", f[7]) if len(f) >= 9 else None
        out.sub_after.append(SubAfter(
            line, f[1], f[2], _int(path, line, "SubAfter.costTime", f[3]),
            _bool(path, line, "SubAfter.success", f[4]), code, stamp,
            f[8] if len(f) >= 9 else None))
    elif kind in TYPES:
        out.other += 1
    else:
        raise TraceError(path, line, "type", f"not a trace record type: {kind[:40]!r}")


def read_msgtrace(path: Path | str, *, skip_bad: bool = False) -> MsgTrace:
    """Every record of a message-trace dump (see the module docstring), read within the bounds
    of ``rocketlb_core.trace.textfile``."""
    from rocketlb_core.trace.textfile import read_lines

    path = Path(path)
    out = MsgTrace(str(path))
    for line, text in read_lines(path):
        if not text.strip():
            continue
        try:
            try:
                row = json.loads(text)
            except json.JSONDecodeError:
                raise
            except (RecursionError, ValueError) as exc:        # nesting, a 5,000-digit number
                raise TraceError(path, line, None, f"not JSON this reader accepts "
                                 f"({first_line(exc)})") from None
            if not isinstance(row, dict) or not isinstance(row.get("body"), str):
                raise TraceError(path, line, "body", "expected a JSON object with a "
                                 "text field 'body'")
            out.messages += 1
            got: list[tuple[list[str], bool]] = list(split_records(row["body"]))
            staged = MsgTrace(str(path))
            for fields, terminated in got:
                _record(str(path), line, fields, staged)
                if not terminated and fields[0] == "SubAfter":
                    out.unterminated += 1
        except (TraceError, json.JSONDecodeError) as exc:
            if not skip_bad:
                if isinstance(exc, TraceError):
                    raise
                raise TraceError(path, line, None, f"not JSON ({exc.msg})") from None
            out.bad += 1
            out.first_bad = out.first_bad or str(exc)
            continue
        out.pubs += staged.pubs
        out.sub_before += staged.sub_before
        out.sub_after += staged.sub_after
        out.other += staged.other
    return out


def with_logged(trace: MsgTrace, logs: Mapping[str, Any], *, skip_bad: bool = False
                ) -> MsgTrace:
    """``trace`` with the records its clients failed to send: each client log's ``send trace
    data failed, the traceData is <data>`` lines (``clientlog.LostTrace``; ``logs``: path ->
    ``ClientLog``) hold the failed batch's encoded records whole. A record already in the dump
    (a batch that timed out at the client after the broker stored it) is not taken twice. A
    record that does not parse is a ``TraceError`` naming the log, its line and the field, or,
    with ``skip_bad``, counted in ``bad``. Returns a new ``MsgTrace`` (``from_logs``: how many
    records the logs added).

    >>> from rocketlb_core.trace.clientlog import ClientLog, LostTrace
    >>> pub = "\\1".join([
    ...     "Pub", "1700000000123", "DefaultRegion", "PG", "T",
    ...     "7F000001ABCD", "null", "null", "127.0.0.1:10911", "4", "2",
    ...     "0", "0A0B", "true"])
    >>> lost = LostTrace(9, "2026-11-29 06:29:18,486", pub + "\\2")
    >>> log = ClientLog(lost_traces=[lost])
    >>> t = with_logged(MsgTrace("dump.jsonl"), {"c.log": log})
    >>> t.from_logs, t.pubs[0].msg_id, t.pubs[0].source, t.pubs[0].line
    (1, '7F000001ABCD', 'c.log', 9)
    >>> len(with_logged(t, {"c.log": log}).pubs)   # taken once
    1
    """
    def key(p: Pub) -> tuple[Any, ...]:
        return (p.group, p.topic, p.msg_id, p.time_ms, p.store_host, p.cost_ms, p.success)

    out = MsgTrace(trace.path, list(trace.pubs), list(trace.sub_before), list(trace.sub_after),
                   trace.other, trace.unterminated, trace.messages, trace.bad, trace.first_bad,
                   trace.from_logs)
    seen = {key(p) for p in out.pubs}
    subs = {(b.request_id, b.msg_id, b.time_ms) for b in out.sub_before}
    afters = {(a.request_id, a.msg_id, a.cost_ms, a.success) for a in out.sub_after}
    for path, log in sorted(logs.items()):
        for lost in getattr(log, "lost_traces", ()):
            staged = MsgTrace(str(path))
            try:
                for fields, _ in split_records(lost.data):
                    _record(str(path), lost.line, fields, staged)
            except TraceError as exc:
                if not skip_bad:
                    raise
                out.bad += 1
                out.first_bad = out.first_bad or str(exc)
                continue
            for p in staged.pubs:
                if key(p) not in seen:
                    seen.add(key(p))
                    out.pubs.append(replace(p, source=str(path)))
                    out.from_logs += 1
            for b in staged.sub_before:
                if (b.request_id, b.msg_id, b.time_ms) not in subs:
                    subs.add((b.request_id, b.msg_id, b.time_ms))
                    out.sub_before.append(b)
                    out.from_logs += 1
            for a in staged.sub_after:
                if (a.request_id, a.msg_id, a.cost_ms, a.success) not in afters:
                    afters.add((a.request_id, a.msg_id, a.cost_ms, a.success))
                    out.sub_after.append(a)
                    out.from_logs += 1
            out.other += staged.other
    return out
