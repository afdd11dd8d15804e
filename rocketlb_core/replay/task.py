"""One task of the producer replay: one file of sends in, one Parquet part file and a few
aggregate rows out. Both engines run ``replay_file`` unchanged: the Python engine over the
files in turn, Spark in one ``mapInArrow`` task per file. Same input, same bytes out.

A task checks the values it reads as it reads them, never trusting the footers' statistics
(which ``rocketlb_core.trace.layout`` planned from, and which a hostile or broken writer may get
wrong): each run's ``producer`` is the planned name, ``topic`` the trace's, ``size`` >= 0,
``time_ms`` within 0..``MAX_TIME_MS`` and non-decreasing within a producer (``check_values``:
vectorised, a few array passes per batch). A violation is a ``TraceError`` naming the file, the
row and the field.

The part file (``sends.parquet/part-NNNNN.parquet``) has ``OUTPUT_COLUMNS``; strings are
dictionary-encoded, times delta-encoded, row groups are exactly ``ROW_GROUP_ROWS`` rows
whatever the input batches were, and the file appears by an atomic rename, so a retried or
speculative task attempt rewrites the same bytes under the same name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rocketlb_core.kafka.producer import KafkaProducerReplayer
from rocketlb_core.limits import MAX_TIME_MS
from rocketlb_core.model import TopicRoute
from rocketlb_core.replay.aggregates import Aggregates
from rocketlb_core.replay.config import OUTPUT_COLUMNS, STATUSES, ReplayConfig
from rocketlb_core.replay.grpc_producer import GrpcProducerReplayer
from rocketlb_core.replay.stepped import Columns
from rocketlb_core.replay.stretch import ProducerReplayer
from rocketlb_core.replay.timeline import Conditions
from rocketlb_core.trace.layout import SendsFile
from rocketlb_core.trace.schema import TraceError

ROW_GROUP_ROWS = 1 << 20
AGGREGATE_SCHEMA = "kind string, key string, value bigint"
CLIENT_KEY = "rocketlb.client"
"""The part files' footer key naming the client a replay sent through (``--client grpc``;
absent for the remoting client, whose files are as they always were)."""
VALUE_COLUMNS = ("producer", "topic", "size")     # read beside time_ms, to be checked
Values = tuple[Any, Any, Any]                       # pyarrow arrays: producer, topic, size
Batch = tuple[np.ndarray[Any, Any], int, Values]    # time_ms, its first row (0-based), values


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

    def __init__(self, path: Path, producers: list[str], brokers: tuple[str, ...],
                 client: str | None = None) -> None:
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
        if client is not None:                 # the footer names a client other than remoting
            self.writer.add_key_value_metadata({CLIENT_KEY: client})
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


def _all_equal(values: Any, name: str) -> bool:
    """Whether every value of the pyarrow array ``values`` (plain, dictionary, or chunked of
    either) is ``name``. A dictionary array is checked by its few distinct words."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if values.null_count:
        return False
    if isinstance(values, pa.ChunkedArray):
        return all(_all_equal(chunk, name) for chunk in values.chunks)
    if pa.types.is_dictionary(values.type):
        words = values.dictionary
        if len(words) == 1:
            return bool(words[0].as_py() == name)
        hit = pc.equal(words, name).fill_null(False).to_numpy(zero_copy_only=False)
        return bool(hit[values.indices.to_numpy(zero_copy_only=False)].all())
    return bool(pc.all(pc.equal(values, name)).as_py())


def read_batches(path: str, columns: list[str], batch_rows: int) -> Iterator[Any]:
    """A sends file's ``columns`` in record batches (names as dictionaries: checked by their
    few distinct words); a file pyarrow cannot decode is a ``TraceError``."""
    import pyarrow.parquet as pq

    from rocketlb_core.trace.parquet import arrow_errors

    try:
        batches = pq.ParquetFile(path, read_dictionary=["producer", "topic"]).iter_batches(
            batch_size=batch_rows, columns=columns)
        while True:
            try:
                b = next(batches)
            except StopIteration:
                return
            yield b
    except arrow_errors() as exc:
        raise TraceError(path, None, columns[0], f"cannot read its rows: not a Parquet file "
                         f"({exc})") from None


class FileValues:
    """A sends file's ``VALUE_COLUMNS``, read by the task itself (pyarrow, dictionaries) beside
    the ``time_ms`` Spark hands it: ``take(first, n)`` gives rows ``first`` to ``first + n``,
    in file order. Spark's conversion of strings to Arrow would cost the replay more than its
    whole per-send work; reading the names here costs almost nothing."""

    def __init__(self, path: str, batch_rows: int) -> None:
        self.path = path
        self.batches = read_batches(path, list(VALUE_COLUMNS), batch_rows)
        self.batch: Any = None
        self.offset = 0
        self.next_row = 0

    def take(self, first: int, n: int) -> Values:
        import pyarrow as pa

        if first != self.next_row:
            raise RuntimeError(f"{self.path}: rows asked from row {first}, expected row "
                               f"{self.next_row}")
        pieces = []
        while n:
            if self.batch is None or self.offset == self.batch.num_rows:
                self.batch, self.offset = next(self.batches, None), 0
                if self.batch is None:
                    raise RuntimeError(f"{self.path}: fewer rows than Spark read")
                continue
            k = min(n, self.batch.num_rows - self.offset)
            pieces.append(self.batch.slice(self.offset, k))
            self.offset += k
            self.next_row += k
            n -= k
        if len(pieces) == 1:
            return (pieces[0].column(0), pieces[0].column(1), pieces[0].column(2))
        names, topics, sizes = (pa.chunked_array([b.column(i) for b in pieces])
                                for i in range(3))
        return names, topics, sizes


def _first_other(path: str, row: int, values: Any, field: str, want: str,
                 say: Callable[[str], str]) -> TraceError:
    """The error for the first value of ``values`` (whose first row is ``row``, 0-based) that
    is not ``want``; called only once ``_all_equal`` said there is one."""
    for k, v in enumerate(values.to_pylist()):
        if v is None:
            return TraceError(path, row + k + 1, field, "missing value")
        if v != want:
            return TraceError(path, row + k + 1, field, say(v[:300]))
    return TraceError(path, row + 1, field, say("?"))


def check_values(path: str, row: int, due: np.ndarray[Any, Any], values: Values,
                 producer: str, topic: str) -> None:
    """Check one run's slice of rows as read (``row``: its first row, 0-based): ``time_ms``
    within 0..MAX_TIME_MS, every ``producer`` the planned one, every ``topic`` the trace's,
    ``size`` >= 0 and present. A few vectorised passes; the slow path only names the row."""
    import pyarrow.compute as pc

    low, high = int(due.min()), int(due.max())
    if low < 0 or high > MAX_TIME_MS:
        k = int(np.argmax((due < 0) | (due > MAX_TIME_MS)))
        raise TraceError(path, row + k + 1, "time_ms", f"{int(due[k])} is outside "
                         f"0..{MAX_TIME_MS} (ms from the trace's start, at most 31 days)")
    names, topics, sizes = values
    if not _all_equal(names, producer):
        raise _first_other(path, row, names, "producer", producer, lambda v: (
            f"{v!r} in rows the file's footer statistics give to producer {producer!r}: the "
            "footer disagrees with the data (rewrite the trace with `rocketlb trace layout`)"))
    if not _all_equal(topics, topic):
        raise _first_other(path, row, topics, "topic", topic,
                           lambda v: f"{v!r} is not the trace's topic {topic!r}")
    if sizes.null_count or pc.min(sizes).as_py() < 0:
        k, v = next((k, v) for k, v in enumerate(sizes.to_pylist()) if v is None or v < 0)
        raise TraceError(path, row + k + 1, "size",
                         "missing value" if v is None else f"negative value {v}")


def replay_file(job: ReplayJob, f: SendsFile, batches: Iterable[Batch],
                out_dir: Path) -> tuple[Aggregates, int]:
    """Replay one file. ``batches``: (time_ms array, row number of its first row, 0-based,
    the ``VALUE_COLUMNS`` as pyarrow arrays), in file order; every value is checked as read
    (``check_values``). Writes ``out_dir/part-<index>.parquet``; returns the aggregates and
    how many sends were stepped rather than stretched."""
    producers = [p for p, _ in f.runs]
    bounds = np.cumsum([0] + [n for _, n in f.runs])
    writer = _PartWriter(out_dir / f"part-{f.index:05d}.parquet", producers, job.brokers,
                         job.config.client)
    agg, errors = Aggregates(), dict[str, int]()
    replayer: ProducerReplayer | KafkaProducerReplayer | GrpcProducerReplayer | None = None
    run, expected, last_time, stepped = -1, 0, 0, 0
    try:
        for times, first, values in batches:
            if first != expected:
                raise RuntimeError(f"{f.path}: rows arrived from row {first}, expected row "
                                   f"{expected}: the file was split or reordered")
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
                check_values(f.path, row, due, tuple(v.slice(pos, take) for v in values),
                             producers[run], job.topic)
                if replayer is None:
                    producer = producers[run]
                    if job.config.partitioner == "kafka":
                        replayer = KafkaProducerReplayer(producer, job.topic, job.route,
                                                         job.conditions, job.config,
                                                         job.brokers, errors)
                    elif job.config.client == "grpc":
                        replayer = GrpcProducerReplayer(producer, job.topic, job.route,
                                                        job.conditions, job.config,
                                                        job.brokers, errors)
                    else:
                        replayer = ProducerReplayer(producer, job.topic, job.route,
                                                    job.conditions, job.fault_tolerance(producer),
                                                    job.config, job.brokers, errors)
                    last_time = int(due[0])
                if due[0] < last_time or (take > 1 and (np.diff(due) < 0).any()):
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


__all__ = ["AGGREGATE_SCHEMA", "OUTPUT_COLUMNS", "VALUE_COLUMNS", "Batch", "FileValues",
           "ReplayJob", "aggregate_rows", "check_values", "fault_tolerance_of", "merge_rows",
           "read_batches", "replay_file"]
