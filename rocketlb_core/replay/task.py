"""One task of the producer replay: one file of sends in, one Parquet part file and a few
aggregate rows out. Both engines run ``replay_file`` unchanged: the Python engine over the
files in turn, Spark in one ``mapInArrow`` task per file. Same input, same bytes out.

The part file (``sends.parquet/part-NNNNN.parquet``) has ``OUTPUT_COLUMNS``; strings are
dictionary-encoded, times delta-encoded, row groups are exactly ``ROW_GROUP_ROWS`` rows
whatever the input batches were, and the file appears by an atomic rename, so a retried or
speculative task attempt rewrites the same bytes under the same name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rocketlb_core.kafka.producer import KafkaProducerReplayer
from rocketlb_core.model import TopicRoute
from rocketlb_core.replay.aggregates import Aggregates
from rocketlb_core.replay.config import OUTPUT_COLUMNS, STATUSES, ReplayConfig
from rocketlb_core.replay.stepped import Columns
from rocketlb_core.replay.stretch import ProducerReplayer
from rocketlb_core.replay.timeline import Conditions
from rocketlb_core.trace.layout import SendsFile
from rocketlb_core.trace.schema import TraceError

ROW_GROUP_ROWS = 1 << 20
AGGREGATE_SCHEMA = "kind string, key string, value bigint"


@dataclass(frozen=True)
class ReplayJob:
    """Everything a task needs (small: shipped to Spark tasks in the closure)."""

    topic: str
    route: TopicRoute
    conditions: Conditions
    config: ReplayConfig
    recorded: dict[str, bool]          # producer -> fault tolerance as recorded
    brokers: tuple[str, ...]
    files: tuple[SendsFile, ...]
    noop: bool = False                 # replace the per-send work by a no-op (the floor)

    def fault_tolerance(self, producer: str) -> bool:
        return fault_tolerance_of(self.config, self.recorded, producer)


def fault_tolerance_of(config: ReplayConfig, recorded: dict[str, bool], producer: str) -> bool:
    """``sendLatencyFaultEnable`` for a producer: the configuration's, else as recorded."""
    if config.fault_tolerance is not None:
        return config.fault_tolerance
    return bool(recorded.get(producer, False))


def _schema(producers: list[str]) -> Any:
    import pyarrow as pa

    return pa.schema([("producer", pa.dictionary(pa.int32(), pa.string())),
                      ("seq", pa.int64()), ("due_ms", pa.int64()), ("start_ms", pa.int64()),
                      ("end_ms", pa.int64()), ("status", pa.dictionary(pa.int8(), pa.string())),
                      ("broker", pa.dictionary(pa.int16(), pa.string())),
                      ("queue_id", pa.int32()), ("attempts", pa.int32()),
                      ("error", pa.string())])


class _PartWriter:
    """Buffers output batches and writes row groups of exactly ``ROW_GROUP_ROWS`` rows."""

    def __init__(self, path: Path, producers: list[str], brokers: tuple[str, ...]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.path = path
        self.tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self.schema = _schema(producers)
        self.dicts = (pa.array(producers, pa.string()), pa.array(STATUSES, pa.string()),
                      pa.array(brokers, pa.string()))
        delta = {c: "DELTA_BINARY_PACKED" for c in ("seq", "due_ms", "start_ms", "end_ms")}
        self.writer = pq.ParquetWriter(self.tmp, self.schema, compression="zstd",
                                       compression_level=1, store_schema=False,
                                       use_dictionary=["producer", "status", "broker", "error"],
                                       column_encoding=delta)
        self.pending: list[Any] = []
        self.buffered = 0

    def add(self, run: int, c: Columns, errors: dict[str, int]) -> None:
        import pyarrow as pa

        n = len(c.seq)
        failed = c.error >= 0
        if failed.any():
            vocab = pa.array(sorted(errors, key=errors.__getitem__), pa.string())
            error = pa.DictionaryArray.from_arrays(pa.array(c.error, mask=~failed),
                                                   vocab).dictionary_decode()
        else:
            error = pa.nulls(n, pa.string())
        batch = pa.RecordBatch.from_arrays([
            pa.DictionaryArray.from_arrays(pa.array(np.full(n, run, np.int32)), self.dicts[0]),
            pa.array(c.seq), pa.array(c.due), pa.array(c.start), pa.array(c.end),
            pa.DictionaryArray.from_arrays(pa.array(c.status), self.dicts[1]),
            pa.DictionaryArray.from_arrays(pa.array(c.broker, mask=c.broker < 0), self.dicts[2]),
            pa.array(c.queue_id, mask=c.queue_id < 0), pa.array(c.attempts), error],
            schema=self.schema)
        self.pending.append(batch)
        self.buffered += n
        while self.buffered >= ROW_GROUP_ROWS:
            self._flush(ROW_GROUP_ROWS)

    def _flush(self, rows: int) -> None:
        import pyarrow as pa

        table = pa.Table.from_batches(self.pending, self.schema)
        self.writer.write_table(table.slice(0, rows), row_group_size=rows)
        rest = table.slice(rows)
        self.pending = rest.to_batches() if rest.num_rows else []
        self.buffered = rest.num_rows

    def close(self) -> None:
        if self.buffered:
            self._flush(self.buffered)
        self.writer.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        self.writer.close()
        self.tmp.unlink(missing_ok=True)


def _noop(due: np.ndarray[Any, Any], seq0: int) -> Columns:
    n = len(due)
    return Columns(np.arange(seq0, seq0 + n, dtype=np.int64), due, due, due,
                   np.zeros(n, np.int8), np.zeros(n, np.int16), np.zeros(n, np.int32),
                   np.ones(n, np.int32), np.full(n, -1, np.int16))


def replay_file(job: ReplayJob, f: SendsFile, batches: Iterable[tuple[np.ndarray[Any, Any], int]],
                out_dir: Path) -> tuple[Aggregates, int]:
    """Replay one file. ``batches``: (time_ms array, row number of its first row, 0-based),
    in file order. Writes ``out_dir/part-<index>.parquet``; returns the aggregates and how many
    sends were stepped rather than stretched."""
    producers = [p for p, _ in f.runs]
    bounds = np.cumsum([0] + [n for _, n in f.runs])
    writer = _PartWriter(out_dir / f"part-{f.index:05d}.parquet", producers, job.brokers)
    agg, errors = Aggregates(), dict[str, int]()
    replayer: ProducerReplayer | KafkaProducerReplayer | None = None
    run, expected, last_time, stepped = -1, 0, 0, 0
    head_min = 2**63 - 1                 # the first row group's smallest time, as received
    try:
        for times, first in batches:
            if first != expected:
                raise RuntimeError(f"{f.path}: rows arrived from row {first}, expected row "
                                   f"{expected}: the file was split or reordered")
            head = times[:max(0, f.first_group_rows - first)]
            if len(head):
                head_min = min(head_min, int(head.min()))
            expected = first + len(times)
            pos = 0
            while pos < len(times):
                row = first + pos
                while row >= bounds[run + 1]:
                    run += 1
                    if replayer is not None:
                        stepped += replayer.stepped
                    replayer = None
                take = min(len(times) - pos, int(bounds[run + 1]) - row)
                due = np.ascontiguousarray(times[pos:pos + take], dtype=np.int64)
                if replayer is None:
                    producer = producers[run]
                    if job.config.partitioner == "kafka":
                        replayer = KafkaProducerReplayer(producer, job.topic, job.route,
                                                         job.conditions, job.config,
                                                         job.brokers, errors)
                    else:
                        replayer = ProducerReplayer(producer, job.topic, job.route,
                                                    job.conditions, job.fault_tolerance(producer),
                                                    job.config, job.brokers, errors)
                    last_time = int(due[0]) if take else 0
                if take and (due[0] < last_time or (take > 1 and (np.diff(due) < 0).any())):
                    k = 0 if due[0] < last_time else int(np.argmax(np.diff(due) < 0)) + 1
                    raise TraceError(f.path, row + k + 1, "time_ms",
                                     f"times must not decrease within producer "
                                     f"{producers[run]!r}")
                last_time = int(due[-1])
                if job.noop:
                    cols = _noop(due, replayer.seq)
                    replayer.seq += take
                else:
                    cols = replayer.run(due)
                agg.add_columns(cols, job.brokers, errors)
                writer.add(run, cols, errors)
                pos += take
        if expected != f.rows:
            raise RuntimeError(f"{f.path}: {expected} rows arrived, the file has {f.rows}: "
                               "the file was split")
        if f.first_time is not None and head_min != f.first_time:
            raise RuntimeError(f"{f.path}: the task got another file's rows")
        if replayer is not None:
            stepped += replayer.stepped
        writer.close()
    except BaseException:
        writer.abort()
        raise
    return agg, stepped


def aggregate_rows(agg: Aggregates, stepped: int) -> Iterator[tuple[str, str, int]]:
    """Aggregates as (kind, key, value) rows: what a Spark task sends to the driver."""
    yield from (("sends", "", agg.sends), ("stored", "", agg.stored),
                ("retries", "", agg.retries), ("stepped", "", stepped),
                ("latency_max", "", agg.latency_max))
    yield from (("failure", k, v) for k, v in agg.failures.items())
    yield from (("queue", k, v) for k, v in agg.by_queue.items())
    yield from (("latency", str(k), v) for k, v in agg.latency.items())


def merge_rows(rows: Iterable[tuple[str, str, int]]) -> tuple[Aggregates, int]:
    agg, stepped = Aggregates(), 0
    for kind, key, value in rows:
        if kind == "stepped":
            stepped += value
        elif kind in ("sends", "stored", "retries"):
            setattr(agg, kind, getattr(agg, kind) + value)
        elif kind == "failure":
            agg.failures[key] += value
        elif kind == "queue":
            agg.by_queue[key] += value
            agg.by_broker[key.rsplit("/", 1)[0]] += value
        elif kind == "latency":
            agg.latency[int(key)] += value
        elif kind == "latency_max":
            agg.latency_max = max(agg.latency_max, value)
    return agg, stepped


__all__ = ["AGGREGATE_SCHEMA", "OUTPUT_COLUMNS", "ReplayJob", "aggregate_rows",
           "fault_tolerance_of", "merge_rows", "replay_file"]
