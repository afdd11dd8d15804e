"""The Spark engine of the producer replay (``rocketlb_core.replay.engines`` is the Python
one): the same task function (``replay_file``) in one ``mapInArrow`` task per sends file, the
same bytes out. On a cluster, ``out_dir`` must be a path every executor can write (a shared
filesystem): the tasks write their part files themselves, and the driver only renames the
finished folder.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder, check_output
from rocketlb_core.replay.config import ReplayConfig
from rocketlb_core.replay.engines import BATCH_ROWS, COMMAND, finish, prepare_job
from rocketlb_core.replay.task import (
    AGGREGATE_SCHEMA,
    Batch,
    FileValues,
    ReplayJob,
    aggregate_rows,
    merge_rows,
    replay_file,
)
from rocketlb_core.spark.session import spark_session
from rocketlb_core.trace.schema import TraceError

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
        values = FileValues(f.path, BATCH_ROWS)        # checked as read, beside time_ms

        def arrays() -> Iterator[Batch]:
            for b in batches:
                if b.num_rows == 0:
                    continue
                rows = b.column(1).to_numpy()
                if int(rows[-1]) - int(rows[0]) != b.num_rows - 1:
                    raise RuntimeError(f"{f.path}: a batch's rows are not contiguous")
                yield b.column(0).to_numpy(), int(rows[0]), values.take(int(rows[0]),
                                                                       b.num_rows)

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
        return finish(tmp, agg, config, name)


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
