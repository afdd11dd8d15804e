"""The one writer of trace folders (``rocketlb_core.trace.schema``): the simulator's recorder,
``rocketlb trace generate``, ``rocketlb trace layout`` and the importers all write through it, so
the CSV headers, the ``trace.json`` envelope and the Parquet types exist once. Needs pyarrow.

Every folder is written atomically under ``rocketlb_core.atomic``'s rule for output folders.
"""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder
from rocketlb_core.trace.layout import read_any_order, write_sends
from rocketlb_core.trace.schema import (
    BROKER_FIELDS,
    CONDITIONS,
    FILES,
    MEMBERSHIP,
    ROUTE_FIELDS,
    SENDS,
    meta_json,
)

BrokerRow = tuple[str, str, int, str, str]
"""A ``brokers.csv`` row: cluster, broker_name, broker_id, address, room."""
RouteRow = tuple[str, str, int, int, int]
"""A ``route.csv`` row: topic, broker_name, read_queue_nums, write_queue_nums, perm."""
LAYOUT_COMMAND = "replay layout"
"""The command ``relayout`` names in its output marker (unchanged, so earlier outputs match)."""


def csv_text(fields: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A CSV file's text: the header, then one line per row (``\\n`` line ends)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fields)
    writer.writerows(rows)
    return out.getvalue()


def arrow_schema(columns: dict[str, str]) -> Any:
    """The pyarrow schema of a trace table (``SENDS``, ``CONDITIONS``, ``MEMBERSHIP``)."""
    import pyarrow as pa

    types = {"int64": pa.int64(), "int32": pa.int32(), "string": pa.string(),
             "double": pa.float64()}
    return pa.schema([(c, types[t]) for c, t in columns.items()])


def arrow_table(columns: dict[str, str], data: Mapping[str, Sequence[Any]]) -> Any:
    """A pyarrow table of ``columns`` from column lists."""
    import pyarrow as pa

    schema = arrow_schema(columns)
    return pa.table({f.name: pa.array(data[f.name], f.type) for f in schema}, schema=schema)


def write_small_files(folder: Path, meta: dict[str, Any], brokers: Sequence[BrokerRow],
                      routes: Sequence[RouteRow], conditions: Mapping[str, Sequence[Any]],
                      membership: Mapping[str, Sequence[Any]] | None) -> None:
    """Everything of a trace but its sends, into the (temporary) folder ``folder``."""
    import pyarrow.parquet as pq

    (folder / "trace.json").write_text(meta_json(meta))
    (folder / "brokers.csv").write_text(csv_text(BROKER_FIELDS, brokers))
    (folder / "route.csv").write_text(csv_text(ROUTE_FIELDS, routes))
    pq.write_table(arrow_table(CONDITIONS, conditions), folder / "conditions.parquet",
                   compression="zstd")
    if membership is not None:
        pq.write_table(arrow_table(MEMBERSHIP, membership), folder / "membership.parquet",
                       compression="zstd")


def write_trace(folder: Path, meta: dict[str, Any], brokers: Sequence[BrokerRow],
                routes: Sequence[RouteRow],
                sends: Mapping[str, Sequence[Any]] | Callable[[Path], None],
                conditions: Mapping[str, Sequence[Any]],
                membership: Mapping[str, Sequence[Any]] | None, *, command: str,
                inputs: Sequence[Path | str] = (), force: bool = False,
                validate: bool = True) -> None:
    """Write a whole trace folder atomically. ``sends`` is the sends' columns (any order: they
    are written in the replay layout), or a function that writes ``sends.parquet`` into the
    folder it is given (for traces too large for memory, already in the layout).

    Before the folder is moved into place it is read back by ``check_written`` (the code of
    ``rocketlb trace validate --rows``): a trace rocketlb writes is always one it accepts, and a
    trace it would refuse is never written."""
    with atomic_folder(folder, command, inputs=inputs, force=force) as tmp:
        write_small_files(tmp, meta, brokers, routes, conditions, membership)
        if callable(sends):
            sends(tmp / "sends.parquet")
        else:
            write_sends(tmp / "sends.parquet", arrow_table(SENDS, sends))
        if validate:
            check_written(tmp, Path(folder), command)


def check_written(tmp: Path, target: Path, command: str) -> None:
    """Read the trace just written into ``tmp`` (to become ``target``) with ``rocketlb trace
    validate --rows``'s code; a refusal is a ``TraceError`` naming ``target``, and nothing is
    moved into place."""
    from rocketlb_core.trace.read import validate_trace
    from rocketlb_core.trace.schema import TraceError

    try:
        validate_trace(tmp)
    except TraceError as exc:
        why = str(exc).replace(str(tmp), str(target))
        raise TraceError(target, None, None, f"{command} would write a trace that `rocketlb "
                         f"trace validate --rows` refuses, so nothing was written: {why}"
                         ) from None


def relayout(src: Path, dst: Path, producers_per_file: int | None = None, *,
             force: bool = False) -> None:
    """``rocketlb trace layout``: copy the trace ``src`` to ``dst`` with its sends (in any
    order) rewritten into the replay layout, in memory; ``dst`` follows ``atomic_folder``'s
    rule (``src`` is an input). Files of the trace folder other than the trace's own are
    copied when they are regular files, never links."""
    from rocketlb_core.atomic import MARKER, check_output
    from rocketlb_core.errors import UsageError
    from rocketlb_core.trace.read import load_trace

    if producers_per_file is not None and producers_per_file < 1:
        raise UsageError(f"--producers-per-file must be >= 1, got {producers_per_file}")
    check_output(dst, LAYOUT_COMMAND, inputs=[src], force=force)
    small = load_trace(src, sends=False, plan=False)      # everything but the sends
    table = read_any_order(small.folder, small.topic)
    with atomic_folder(dst, LAYOUT_COMMAND, inputs=[src], force=force) as tmp:
        for f in sorted(small.folder.iterdir()):     # the checked files, links followed
            if f.name in ("sends.parquet", MARKER) or not f.exists():
                continue
            if f.name in FILES or (f.is_file() and not f.is_symlink()):
                shutil.copyfile(f, tmp / f.name)
        write_sends(tmp / "sends.parquet", table, producers_per_file)
