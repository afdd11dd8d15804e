"""``rocketlb simulate SCENARIO [--seed N] [--out DIR] [--record DIR]``: run a scenario file,
print its summary as JSON, write the journal (Parquet) and ``summary.json`` into DIR and the
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
from rocketlb_core.sim.scenario import load
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
    result = run_scenario(scenario, args.seed)
    problems = check_expectations(result.summary, scenario.expect)
    result.summary["expectations"] = {"declared": len(scenario.expect), "failed": problems}
    if args.out is not None:
        write_outputs(result, args.out, force=args.force)
    if args.record is not None:
        from rocketlb_core.trace.record import record_trace

        record_trace(result, args.record, force=args.force)
    print_json(result.summary)
    for line in problems:
        say(args, f"expectation failed: {line}")
    return EXIT_CHECK if problems else 0


def write_outputs(result: RunResult, out_dir: Path, *, force: bool = False) -> None:
    """journal/messages/deliveries as Parquet plus summary.json, replacing ``out_dir`` whole
    (when ``rocketlb_core.atomic``'s rule allows it; ``force`` as there)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    world = result.world
    with atomic_folder(out_dir, "simulate", inputs=[result.world.scenario.path],
                       force=force) as tmp:
        j = world.env.journal
        tables = {
            "journal": pa.table({
                "time_ms": pa.array([r.time_ms for r in j], pa.int64()),
                "kind": pa.array([r.kind for r in j], pa.string()),
                "entity": pa.array([r.entity for r in j], pa.string()),
                "fields": pa.array([json.dumps(r.fields, sort_keys=True, default=str)
                                    for r in j], pa.string())}),
            "messages": pa.table({
                "msg_id": pa.array([m.msg_id for m in world.ledger.messages], pa.int64()),
                "producer": pa.array([m.producer for m in world.ledger.messages], pa.string()),
                "sent_ms": pa.array([m.sent_ms for m in world.ledger.messages], pa.int64()),
                "status": pa.array([m.status for m in world.ledger.messages], pa.string()),
                "topic": pa.array([m.queue.topic if m.queue else None
                                   for m in world.ledger.messages], pa.string()),
                "broker": pa.array([m.queue.broker_name if m.queue else None
                                    for m in world.ledger.messages], pa.string()),
                "queue_id": pa.array([m.queue.queue_id if m.queue else None
                                      for m in world.ledger.messages], pa.int32()),
                "offset": pa.array([m.offset for m in world.ledger.messages], pa.int64()),
                "stored_ms": pa.array([m.stored_ms for m in world.ledger.messages], pa.int64()),
                "attempts": pa.array([m.attempts for m in world.ledger.messages], pa.int32()),
                "send_ms": pa.array([m.send_ms for m in world.ledger.messages], pa.int64()),
                "error": pa.array([m.error for m in world.ledger.messages], pa.string())}),
            "deliveries": pa.table({
                "time_ms": pa.array([d[0] for d in world.ledger.deliveries], pa.int64()),
                "msg_id": pa.array([d[1] for d in world.ledger.deliveries], pa.int64()),
                "consumer": pa.array([d[2] for d in world.ledger.deliveries], pa.string())}),
        }
        for name, table in tables.items():
            pq.write_table(table, tmp / f"{name}.parquet", compression="zstd")
        (tmp / "summary.json").write_text(json.dumps(result.summary, indent=1, sort_keys=True)
                                          + "\n")
