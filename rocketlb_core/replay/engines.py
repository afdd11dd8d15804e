"""The Python engine of the producer replay, and what both engines share (the Spark engine is
``rocketlb_core.spark.producer_replay``). Same inputs, same task function (``replay_file``),
same bytes out.

Outputs (``out_dir``, replaced atomically, and only when absent, empty or an earlier output:
``rocketlb_core.atomic``): ``sends.parquet/``, one part file per sends file of
the trace (one row per replayed send; read the folder with ``pyarrow.parquet.read_table`` or
Spark), and ``summary.json``. Both engines write byte-identical part files and summaries.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder, check_output
from rocketlb_core.replay.aggregates import Aggregates, summary_of
from rocketlb_core.replay.config import ReplayConfig
from rocketlb_core.replay.stretch import replay_producer
from rocketlb_core.replay.task import (
    VALUE_COLUMNS,
    Batch,
    ReplayJob,
    fault_tolerance_of,
    read_batches,
    replay_file,
)
from rocketlb_core.replay.timeline import Conditions
from rocketlb_core.trace.read import Trace, load_trace

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


def finish(tmp: Path, agg: Aggregates, config: ReplayConfig, name: str) -> dict[str, Any]:
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

    def batches(path: str) -> Iterator[Batch]:
        nonlocal done
        first = 0
        for b in _read_batches(path):
            times = b.column(0).to_numpy()
            yield times, first, (b.column(1), b.column(2), b.column(3))
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
        return finish(tmp, agg, config, name)


BATCH_ROWS = 1 << 17


def _read_batches(path: str) -> Iterator[Any]:
    """A sends file's ``time_ms`` and ``VALUE_COLUMNS`` in batches (``task.read_batches``)."""
    return read_batches(path, ["time_ms", *VALUE_COLUMNS], BATCH_ROWS)


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
