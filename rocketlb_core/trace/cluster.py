"""A trace's cluster layout: ``brokers.csv`` and ``route.csv``, read and validated with errors
that name the file, the row and the field (schemas in ``data/README.md``). Pure Python.

* ``brokers.csv``: ``cluster, broker_name, broker_id, address, room`` (broker id 0 is the master);
* ``route.csv``: ``topic, broker_name, read_queue_nums, write_queue_nums, perm`` (the name
  server's ``QueueData`` per topic and broker).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rocketlb_core.limits import MAX_CSV_BYTES, MAX_CSV_ROWS, MAX_QUEUES
from rocketlb_core.model import BrokerData, QueueData, TopicRoute
from rocketlb_core.numbers import INT64_MAX, NumberError, parse_int
from rocketlb_core.trace.schema import (
    BROKER_FIELDS,
    ROUTE_FIELDS,
    TraceError,
    check_name,
    regular_file,
)


@dataclass(frozen=True)
class BrokerRecord:
    """One row of ``brokers.csv``."""

    cluster: str
    broker_name: str
    broker_id: int
    address: str
    room: str


@dataclass(frozen=True)
class ClusterLayout:
    """A cluster as a name server sees it: broker addresses and per-topic routes."""

    brokers: tuple[BrokerRecord, ...]
    routes: dict[str, TopicRoute]

    def rooms(self) -> dict[str, str]:
        """Broker name -> machine room (from any of its replicas; they share a room)."""
        return {b.broker_name: b.room for b in self.brokers}


def _rows(path: Path, fields: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    regular_file(path, path.parent, MAX_CSV_BYTES)
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:     # a BOM is allowed
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None:
                raise TraceError(path, 1, None, "empty file: expected a header row")
            header = [h.strip() for h in header]
            missing = [f for f in fields if f not in header]
            if missing:
                raise TraceError(path, 1, missing[0], f"missing column (header has {header})")
            if len(set(header)) != len(header):
                dup = next(h for h in header if header.count(h) > 1)
                raise TraceError(path, 1, dup, "the column appears twice in the header")
            for values in reader:
                line = reader.line_num
                if line > MAX_CSV_ROWS + 1:
                    raise TraceError(path, line, None, f"more than {MAX_CSV_ROWS} rows")
                if not values or all(not v.strip() for v in values):
                    continue
                if len(values) != len(header):
                    raise TraceError(path, line, None,
                                     f"{len(values)} values for {len(header)} columns")
                yield line, dict(zip(header, values, strict=True))
    except UnicodeDecodeError as exc:
        raise TraceError(path, None, None, f"not UTF-8 text (byte {exc.start})") from None
    except csv.Error as exc:
        raise TraceError(path, reader.line_num, None, f"malformed CSV ({exc})") from None


def _field(path: Path, line: int, row: dict[str, str], name: str) -> str:
    """A name (``check_name``): the cell without the spaces around it."""
    raw = row[name].strip()
    if raw == "":
        raise TraceError(path, line, name, "empty value")
    return check_name(path, line, name, raw)


def _int_field(path: Path, line: int, row: dict[str, str], name: str, lo: int, hi: int,
               expect: str) -> int:
    """A number cell exactly as written (``numbers.parse_int``: no spaces, ``+``, ``_`` or
    other digits than ASCII), from ``lo`` to ``hi``."""
    raw = row[name]
    if raw.strip() == "":
        raise TraceError(path, line, name, "empty value")
    try:
        return parse_int(raw, lo, hi)
    except NumberError:
        raise TraceError(path, line, name, f"{raw[:24]!r} is not {expect}, written in ASCII "
                         "digits") from None


def load_cluster(folder: Path | str) -> ClusterLayout:
    """Read and validate ``brokers.csv`` and ``route.csv`` from ``folder``."""
    folder = Path(folder)
    bpath, rpath = folder / "brokers.csv", folder / "route.csv"
    brokers: list[BrokerRecord] = []
    seen: set[tuple[str, int]] = set()
    for line, row in _rows(bpath, BROKER_FIELDS):
        rec = BrokerRecord(
            cluster=_field(bpath, line, row, "cluster"),
            broker_name=_field(bpath, line, row, "broker_name"),
            broker_id=_int_field(bpath, line, row, "broker_id", 0, INT64_MAX,
                                 "a non-negative integer (a Java long)"),
            address=_field(bpath, line, row, "address"),
            room=_field(bpath, line, row, "room"),
        )
        if (rec.broker_name, rec.broker_id) in seen:
            raise TraceError(bpath, line, "broker_id",
                             f"{rec.broker_name} id {rec.broker_id} appears twice")
        seen.add((rec.broker_name, rec.broker_id))
        brokers.append(rec)
    known = {b.broker_name for b in brokers}
    per_topic: dict[str, list[QueueData]] = {}
    pairs: set[tuple[str, str]] = set()
    count = f"an integer from 0 to {MAX_QUEUES}"
    for line, row in _rows(rpath, ROUTE_FIELDS):
        topic = _field(rpath, line, row, "topic")
        name = _field(rpath, line, row, "broker_name")
        if name not in known:
            raise TraceError(rpath, line, "broker_name", f"unknown broker {name!r} "
                             f"(not in {bpath.name})")
        if (topic, name) in pairs:
            raise TraceError(rpath, line, "broker_name", f"{topic}/{name} appears twice")
        pairs.add((topic, name))
        per_topic.setdefault(topic, []).append(QueueData(
            broker_name=name,
            read_queue_nums=_int_field(rpath, line, row, "read_queue_nums", 0, MAX_QUEUES,
                                       count),
            write_queue_nums=_int_field(rpath, line, row, "write_queue_nums", 0, MAX_QUEUES,
                                        count),
            perm=_int_field(rpath, line, row, "perm", 0, 7, "a permission from 0 to 7"),
        ))
    if not per_topic:
        raise TraceError(rpath, None, None, "no route rows")
    broker_datas = tuple(
        BrokerData(name, {b.broker_id: b.address for b in brokers if b.broker_name == name},
                   next(b.cluster for b in brokers if b.broker_name == name))
        for name in sorted(known)
    )
    routes = {
        topic: TopicRoute(tuple(qds), tuple(bd for bd in broker_datas
                                            if any(q.broker_name == bd.broker_name for q in qds)))
        for topic, qds in per_topic.items()
    }
    return ClusterLayout(tuple(brokers), routes)
