"""The two replay engines. Same inputs, same task function (``replay_file``), same bytes out.

Outputs (``out_dir``, replaced atomically, and only when absent, empty or an earlier output:
``rocketlb_core.atomic``): ``sends.parquet/``, one part file per sends file of
the trace (one row per replayed send; read the folder with ``pyarrow.parquet.read_table`` or
Spark), and ``summary.json``. Both engines write byte-identical part files and summaries.

On a cluster, ``out_dir`` must be a path every executor can write (a shared filesystem): the
tasks write their part files themselves, and the driver only renames the finished folder.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder, check_output
from rocketlb_core.replay.producer import (
    Aggregates,
    Conditions,
    ReplayConfig,
    replay_producer,
    summary_of,
)
from rocketlb_core.replay.task import (
    AGGREGATE_SCHEMA,
    ReplayJob,
    aggregate_rows,
    fault_tolerance_of,
    merge_rows,
    replay_file,
)
from rocketlb_core.trace.parquet import arrow_errors
from rocketlb_core.trace.read import Trace, load_trace
from rocketlb_core.trace.schema import TraceError

COMMAND = "replay producer"


def write_summary(folder: Path, summary: dict[str, Any]) -> None:
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")


def _producers(trace: Trace) -> Iterator[tuple[str, list[int]]]:
    times, names = trace.sends["time_ms"], trace.sends["producer"]
    start = 0
    for i in range(1, len(names) + 1):
        if i == len(names) or names[i] != names[start]:
            yield names[start], times[start:i]
            start = i


def replay_rows(trace: Trace, config: ReplayConfig) -> Iterator[tuple[Any, ...]]:
    """Every producer's replayed sends, producer by producer (``OUTPUT_COLUMNS`` rows), for
    small traces loaded in memory (the what-if tables, the consumer replay's arrivals)."""
    route = trace.layout.routes[trace.topic]
    conditions = Conditions.from_columns(trace.conditions)
    recorded = dict(trace.meta.get("fault_tolerance", {}))
    for producer, times in _producers(trace):
        yield from replay_producer(producer, times, trace.topic, route, conditions,
                                   fault_tolerance_of(config, recorded, producer), config)


def prepare_job(trace_dir: Path, config: ReplayConfig, noop: bool = False
                ) -> tuple[ReplayJob, str]:
    """Validate the trace's small files and plan its sends from the footers (no send rows are
    read here); returns the job every task gets, and the trace's name."""
    small = load_trace(trace_dir, sends=False)
    route = small.layout.routes[small.topic]
    job = ReplayJob(small.topic, route, Conditions.from_columns(small.conditions), config,
                    dict(small.meta.get("fault_tolerance", {})),
                    tuple(sorted({qd.broker_name for qd in route.queue_datas})),
                    small.sends_files, noop)
    return job, str(small.meta.get("name", trace_dir.name))


def _finish(tmp: Path, agg: Aggregates, config: ReplayConfig, name: str) -> dict[str, Any]:
    summary = summary_of(agg, config, name)
    write_summary(tmp, summary)
    return summary


def replay_producers_python(trace_dir: Path, out_dir: Path, config: ReplayConfig,
                            progress: Callable[[int, int], None] | None = None, *,
                            noop: bool = False, force: bool = False) -> dict[str, Any]:
    """Replay every file of a trace in this process (``replay_file`` per file, in order).
    ``out_dir`` follows ``rocketlb_core.atomic``'s rule (``force`` as there)."""

    check_output(out_dir, COMMAND, inputs=[trace_dir], force=force)
    job, name = prepare_job(trace_dir, config, noop)
    total = sum(f.rows for f in job.files)
    done = 0

    def batches(path: str) -> Iterator[tuple[Any, int]]:
        nonlocal done
        first = 0
        for b in _read_batches(path):
            times = b.column(0).to_numpy()
            yield times, first
            first += len(times)
            done += len(times)
            if progress:
                progress(done, total)

    agg = Aggregates()
    with atomic_folder(out_dir, COMMAND, inputs=[trace_dir], force=force) as tmp:
        parts = tmp / "sends.parquet"
        parts.mkdir()
        for f in job.files:
            part, _ = replay_file(job, f, batches(f.path), parts)
            agg.merge(part)
        return _finish(tmp, agg, config, name)


BATCH_ROWS = 1 << 17


def _read_batches(path: str) -> Iterator[Any]:
    """A sends file's ``time_ms`` in batches; a file pyarrow cannot decode is a ``TraceError``."""
    import pyarrow.parquet as pq

    batches = pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS, columns=["time_ms"])
    while True:
        try:
            b = next(batches)
        except StopIteration:
            return
        except arrow_errors() as exc:
            raise TraceError(path, None, "time_ms", f"cannot read its rows: not a Parquet file "
                             f"({exc})") from None
        yield b
_WHOLE_FILES = {                       # one scan partition per file, never split
    "spark.sql.files.maxPartitionBytes": str(1 << 50),
    "spark.sql.files.openCostInBytes": str(1 << 50),
    "spark.sql.execution.arrow.maxRecordsPerBatch": str(BATCH_ROWS),
}
_ERROR_MARK = "ROCKETLB-TRACE-ERROR "


def _spark_task(job: ReplayJob, out: str) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function: partition ``i`` of the union is file ``i``."""

    def task(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        ctx = TaskContext.get()
        f = job.files[ctx.partitionId() if ctx is not None else 0]

        def arrays() -> Iterator[tuple[Any, int]]:
            for b in batches:
                if b.num_rows == 0:
                    continue
                rows = b.column(1).to_numpy()
                if int(rows[-1]) - int(rows[0]) != b.num_rows - 1:
                    raise RuntimeError(f"{f.path}: a batch's rows are not contiguous")
                yield b.column(0).to_numpy(), int(rows[0])

        try:
            agg, stepped = replay_file(job, f, arrays(), Path(out))
        except TraceError as exc:       # carried to the driver, re-raised there as it was
            raise RuntimeError(_ERROR_MARK + json.dumps(
                {"path": exc.path, "row": exc.row, "field": exc.field,
                 "message": str(exc).split(": ", 1)[1]})) from None
        rows = list(aggregate_rows(agg, stepped))
        yield pa.RecordBatch.from_arrays(
            [pa.array([r[0] for r in rows], pa.string()), pa.array([r[1] for r in rows],
                                                                    pa.string()),
             pa.array([r[2] for r in rows], pa.int64())], names=["kind", "key", "value"])

    return task


def _reraise_trace_error(exc: Exception) -> None:
    text = str(exc)
    at = text.find(_ERROR_MARK)
    if at < 0:
        return
    payload, _ = json.JSONDecoder().raw_decode(text[at + len(_ERROR_MARK):])
    raise TraceError(payload["path"], payload["row"], payload["field"],
                     payload["message"]) from None


def _reraise_unreadable(exc: Exception, files: tuple[Any, ...]) -> None:
    """Spark could not decode a sends file (a corrupt page): the same ``TraceError`` the Python
    engine raises, naming the file, instead of a Java stack trace."""
    text = str(exc)
    for f in files:
        if f.path in text and ("Parquet" in text or "parquet" in text):
            raise TraceError(f.path, None, "time_ms", "cannot read its rows: not a Parquet file "
                             f"(Spark: {text.strip().splitlines()[0][:200]})") from None


def replay_producers_spark(trace_dir: Path, out_dir: Path, config: ReplayConfig,
                           master: str | None = None, *, noop: bool = False,
                           progress: Callable[[int, int], None] | None = None,
                           force: bool = False) -> dict[str, Any]:
    """Replay on Spark: one ``mapInArrow`` task per sends file, no shuffle. Spark reads each
    file whole, in order (``time_ms`` and the row index only); the task replays it, writes its
    part file and sends a few aggregate rows to the driver. Nothing else is collected."""
    from functools import reduce

    from pyspark.sql import functions as F

    from rocketlb_core.spark import spark_session

    check_output(out_dir, COMMAND, inputs=[trace_dir], force=force)
    job, name = prepare_job(trace_dir, config, noop)
    spark = spark_session(master)
    with atomic_folder(out_dir, COMMAND, inputs=[trace_dir], force=force) as tmp:
        parts = tmp / "sends.parquet"
        parts.mkdir()
        scans = [spark.read.schema("time_ms bigint").parquet(f.path)
                 .select("time_ms", F.col("_metadata.row_index").alias("row"))
                 for f in job.files]
        frame = reduce(lambda a, b: a.unionAll(b), scans) \
            .mapInArrow(_spark_task(job, str(parts)), AGGREGATE_SCHEMA)
        saved = {k: spark.conf.get(k, None) for k in _WHOLE_FILES}
        try:
            for k, v in _WHOLE_FILES.items():
                spark.conf.set(k, v)
            with spark_progress(spark, len(job.files), progress):
                rows = frame.collect()
        except Exception as exc:
            _reraise_trace_error(exc)
            _reraise_unreadable(exc, job.files)
            raise
        finally:
            for k, old in saved.items():
                if old is None:
                    spark.conf.unset(k)
                else:
                    spark.conf.set(k, old)
        agg, _ = merge_rows((r["kind"], r["key"], int(r["value"])) for r in rows)
        return _finish(tmp, agg, config, name)


@contextmanager
def spark_progress(spark: Any, tasks: int, progress: Callable[[int, int], None] | None
                   ) -> Iterator[None]:
    """Report finished tasks of the running job to ``progress(done, total)``: classic Spark by
    polling the status tracker twice a second, Spark Connect through its progress handler."""
    if progress is None:
        yield
        return
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        def handler(stages: Any, inflight_tasks: int, operation_id: str | None,
                    done: bool) -> None:
            if stages:
                progress(min(sum(st.num_completed_tasks for st in stages), tasks), tasks)

        spark.registerProgressHandler(handler)
        try:
            yield
        finally:
            spark.removeProgressHandler(handler)
            progress(tasks, tasks)
        return
    tracker = spark.sparkContext.statusTracker()
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(0.5):
            done = 0
            for sid in tracker.getActiveStageIds():
                info = tracker.getStageInfo(sid)
                if info is not None:
                    done += info.numCompletedTasks
            progress(min(done, tasks), tasks)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        progress(tasks, tasks)


def print_progress(done: int, total: int, unit: str = "sends") -> None:
    """A one-line progress bar on stderr (only when stderr is a terminal)."""
    if not sys.stderr.isatty() or total == 0:
        return
    width = 40
    filled = int(width * done / total)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {unit}")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()
