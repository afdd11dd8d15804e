"""``rocketlb simulate SCENARIO [--seed N] [--out DIR] [--record DIR]``: run a scenario file,
print its summary as JSON, write into DIR the messages and deliveries (Parquet, streamed as the run
goes, so memory stays flat in the message count), the journal and ``summary.json``, and the
run's traffic as a trace into ``--record``, and exit 3 when the scenario's declared expectations
fail (2 for a bad scenario file or an output folder that may not be written: both are checked
before the run starts)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rocketlb_core.atomic import atomic_folder, check_output
from rocketlb_core.cli import (
    EXIT_CHECK,
    add_out,
    add_quiet,
    add_seed,
    check_seed,
    print_json,
    say,
    subparser,
)
from rocketlb_core.errors import UsageError
from rocketlb_core.model import MessageQueue
from rocketlb_core.sim.clients import Producer
from rocketlb_core.sim.scenario import Scenario, load
from rocketlb_core.sim.world import RunResult, check_expectations, run_scenario


def register(sub: Any) -> None:
    p = subparser(sub, "simulate", "run a scenario file in virtual time",
                  "rocketlb simulate data/scenarios/steady-state.toml --out out/s", simulate,
                  checks="a declared expectation failed", description=__doc__)
    p.add_argument("scenario", type=Path)
    add_seed(p)
    add_out(p, required=False, help="folder for the journal and summary")
    p.add_argument("--record", type=Path, default=None,
                   help="also write the run's traffic as a trace folder (data/README.md)")
    add_quiet(p)


def producers() -> type[Producer]:
    """The producers a run uses: the compiled ones (``rocketlb_core.simfast``: the same bytes,
    several times faster) when numpy and numba are installed, else the core's."""
    try:
        from rocketlb_core.simfast import producer_class
    except ImportError:                                # no numpy: the core alone
        return Producer
    return producer_class()


def simulate(args: argparse.Namespace) -> int:
    check_seed(args.seed)
    scenario = load(args.scenario)
    outs = {"--out": args.out, "--record": args.record}
    checked = {k: check_output(v, "simulate" if k == "--out" else "simulate --record",
                               inputs=[args.scenario], force=args.force)
               for k, v in outs.items() if v is not None}
    if len(checked) == 2:
        a, b = checked["--out"], checked["--record"]
        if a == b or a in b.parents or b in a.parents:
            raise UsageError(f"--out {args.out} and --record {args.record} overlap: give them "
                             "separate folders")
    if args.out is not None:
        result = simulate_to(scenario, args.seed, args.out, force=args.force)
    else:
        result = run_scenario(scenario, args.seed, producer_class=producers())
        add_expectations(result, scenario)
    problems = result.summary["expectations"]["failed"]
    if args.record is not None:
        from rocketlb_core.trace.record import record_trace

        record_trace(result, args.record, force=args.force)
    print_json(result.summary)
    for line in problems:
        say(args, f"expectation failed: {line}")
    return EXIT_CHECK if problems else 0


def add_expectations(result: RunResult, scenario: Scenario) -> None:
    """Put the scenario's declared expectations, and those that failed, into the summary."""
    problems = check_expectations(result.summary, scenario.expect)
    result.summary["expectations"] = {"declared": len(scenario.expect), "failed": problems}


MESSAGES = {"msg_id": "int64", "producer": "string", "sent_ms": "int64", "status": "string",
            "topic": "string", "broker": "string", "queue_id": "int32", "offset": "int64",
            "stored_ms": "int64", "attempts": "int32", "send_ms": "int64", "error": "string"}
DELIVERIES = {"time_ms": "int64", "consumer": "string", "topic": "string", "broker": "string",
              "queue_id": "int32", "first_offset": "int64", "count": "int64"}
JOURNAL = {"time_ms": "int64", "kind": "string", "entity": "string", "fields": "string"}
ROW_GROUP = 1 << 16


ROW_GROUP_TEXT = 8 << 20
"""A row group is also cut once its strings hold this many characters (a journal's lag
samples are some 20 KB each)."""


class _Table:
    """One Parquet file written a row group at a time (``ROW_GROUP`` rows, or fewer once their
    strings reach ``ROW_GROUP_TEXT``), so a run's memory does not grow with its message count
    or its length."""

    def __init__(self, path: Path, columns: dict[str, str]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.schema = pa.schema([(k, getattr(pa, t)()) for k, t in columns.items()])
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")
        self.columns: list[list[Any]] = [[] for _ in columns]
        self.text = 0

    def add(self, *row: Any) -> None:
        for column, value in zip(self.columns, row, strict=True):
            column.append(value)
            if type(value) is str:
                self.text += len(value)
        if len(self.columns[0]) >= ROW_GROUP or self.text >= ROW_GROUP_TEXT:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if self.columns[0]:
            self.writer.write_table(pa.Table.from_arrays(
                [pa.array(c, f.type) for c, f in zip(self.columns, self.schema, strict=True)],
                schema=self.schema))
            self.columns = [[] for _ in self.columns]
            self.text = 0

    def close(self) -> None:
        self.flush()
        self.writer.close()


class ParquetSink:
    """``sim.ledger.LedgerSink`` streaming ``messages.parquet`` (one row a send) and
    ``deliveries.parquet`` (one row a delivered range of offsets) into ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.messages = _Table(folder / "messages.parquet", MESSAGES)
        self.deliveries = _Table(folder / "deliveries.parquet", DELIVERIES)

    def message(self, msg_id: int, producer: str, sent_ms: int, status: str,
                queue: MessageQueue | None, offset: int, attempts: int, send_ms: int,
                error: str | None) -> None:
        stored = queue is not None
        self.messages.add(msg_id, producer, sent_ms, status, queue.topic if queue else None,
                          queue.broker_name if queue else None,
                          queue.queue_id if queue else None, offset,
                          sent_ms + send_ms if stored else -1, attempts, send_ms, error)

    def delivery(self, time_ms: int, consumer: str, queue: MessageQueue, first: int,
                 count: int) -> None:
        self.deliveries.add(time_ms, consumer, queue.topic, queue.broker_name, queue.queue_id,
                            first, count)

    def close(self) -> None:
        self.messages.close()
        self.deliveries.close()


def simulate_to(scenario: Scenario, seed: int, out_dir: Path, *, force: bool = False,
                producer_class: type[Producer] | None = None) -> RunResult:
    """Run ``scenario`` with ``seed``, writing ``out_dir`` whole (``rocketlb_core.atomic``'s rule;
    ``force`` as there): ``messages.parquet`` and ``deliveries.parquet`` streamed as the run
    goes, ``journal.parquet`` too (its lag samples are not kept in memory: ``run_scenario``'s
    ``journal_sink``), then ``summary.json`` (with the expectations). The returned result's
    in-memory journal has every record but the lag samples. ``producer_class``: ``producers()``
    unless given."""
    with atomic_folder(out_dir, "simulate", inputs=[scenario.path], force=force) as tmp:
        sink = ParquetSink(tmp)
        journal = _Table(tmp / "journal.parquet", JOURNAL)
        try:
            result = run_scenario(scenario, seed, sink, lambda r: journal.add(
                r.time_ms, r.kind, r.entity, json.dumps(r.fields, sort_keys=True, default=str)),
                producer_class=producer_class or producers())
        finally:
            sink.close()
            journal.close()
        add_expectations(result, scenario)
        (tmp / "summary.json").write_text(json.dumps(result.summary, indent=1, sort_keys=True)
                                          + "\n")
    return result
