"""A soak of random live scenarios (issue 32): for each scenario ``i``, generate it from
``scenario_seed(SEED, i)`` (``rocketlb_core.live.generate``), record it on a fresh cluster of each
line (``python -m rocketlb_core.live record ... --isolated``), import the recording
(``trace.importer.import_recording``), check the model against it
(``trace.agreement.check_recording``), and print the agreement table per line:

* per producer: sends, determined, agree, inferred, reset, in flight, unexplained (and any other
  verdict count the check reports);
* per scenario, the consumers' logged assignments summed: exact, near change, every other
  verdict count the check reports, unexplained;
* how late the recorder started its events (``max_late_ms``; over ``MAX_LATE_MS`` is late).

    .venv/bin/python bench/live_soak.py --scenarios 3 --seed 1 --line 4 [--out DIR]
    .venv/bin/python bench/live_soak.py --recheck DIR      # the check again, after a change
    .venv/bin/python bench/live_soak.py --export DIR FILE --machine TEXT   # for data/live/soak

A scenario that fails (the recording, the import or the check) is a row with its error, and the
soak goes on. The table is also written as JSON to ``DIR/soak.json``, beside each scenario's
TOML, recording, imported trace and the recorder's output (``DIR/<line>/<seed>/``). Replay one
scenario with ``python -m rocketlb_core.live generate --seed <scenario seed>``, or the whole soak
with the same ``--seed``. Every JVM the recordings start carries a marker under ``DIR/tmp`` and
is killed by pid when a scenario ends, whatever happened (other clusters on the machine are
never touched). Records one scenario at a time: a live recording takes 2 to 3 minutes of wall
time on a loaded 2-core machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rocketlb_core.live import cluster as live  # noqa: E402
from rocketlb_core.live.generate import generate_scenario, scenario_seed  # noqa: E402
from rocketlb_core.live.record import MAX_LATE_MS, lateness  # noqa: E402

RECORD_TIMEOUT_S = 1200
SEND_COLUMNS = ("sends", "determined", "agree", "inferred", "reset", "in_flight")
ASSIGN_COLUMNS = ("logged", "exact", "near_change")


def stop_jvms(root: Path) -> list[int]:
    """SIGKILL every JVM started under ``root`` (by pid); returns the pids."""
    pids = live.jvms_under(root)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return pids


def counts(summary: dict[str, Any]) -> dict[str, int]:
    """The integer fields of a summary (verdict counts), whatever the check names them."""
    return {k: v for k, v in summary.items() if isinstance(v, int) and not isinstance(v, bool)}


def run_one(seed: int, line: str, folder: Path, scratch: Path, modes: bool = False
            ) -> dict[str, Any]:
    """Record, import and check one scenario on one line; the row of the table (``modes``:
    its producers draw how they send, ``generate_scenario(..., modes=True)``)."""
    row: dict[str, Any] = {"scenario_seed": seed, "line": line, "name": f"random-{seed}"}
    folder.mkdir(parents=True, exist_ok=True)
    toml = folder / "scenario.toml"
    toml.write_text(generate_scenario(seed, line, modes=modes), encoding="utf-8")
    out = folder / "recording"
    scratch.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        with (folder / "record.log").open("w") as log:
            run = subprocess.run(
                [sys.executable, "-m", "rocketlb_core.live", "record", str(toml), "--line", line,
                 "--out", str(out), "--isolated", "--force"],
                stdout=log, stderr=subprocess.STDOUT, timeout=RECORD_TIMEOUT_S, check=False,
                cwd=ROOT, env=dict(os.environ, TMPDIR=str(scratch)))
    except subprocess.TimeoutExpired:
        row["error"] = f"record: no result within {RECORD_TIMEOUT_S} s"
        return row
    finally:
        row["record_s"] = round(time.monotonic() - started, 1)
        left = stop_jvms(scratch)
        if left:
            row["jvms_left_running"] = len(left)
    text = (folder / "record.log").read_text("utf-8", "replace")
    row["warnings"] = [x.split("] ", 1)[-1] for x in text.splitlines() if "warning:" in x]
    if run.returncode != 0:
        row["error"] = f"record exited {run.returncode}: " + text[-1500:]
        return row
    return check_one(row, folder)


def check_one(row: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Import and check the recording in ``folder`` (``run_one``'s layout) into ``row``."""
    from rocketlb_core.trace.agreement import check_recording
    from rocketlb_core.trace.importer import import_recording

    out, trace = folder / "recording", folder / "trace"
    meta = json.loads((out / "recording.json").read_text(encoding="utf-8"))
    clock = lateness(meta)
    row["max_late_ms"], row["late_events"] = clock["max_late_ms"], clock["late"]
    row.pop("error", None)
    try:
        import_recording(out, trace, force=True)
        result = check_recording(out, trace)
    except Exception as exc:                   # a failed import or check is a row, not the end
        row["error"] = f"{type(exc).__name__}: {exc}"[:1500]
        return row
    row["producers"] = {
        name: {"fault_tolerance": p.get("fault_tolerance"), **counts(p)}
        for name, p in result["producers"].items()}
    total: dict[str, int] = {}
    for k in result["consumers"].values():
        for f, v in counts(k).items():
            total[f] = total.get(f, 0) + v
    row["consumers"] = total
    row["consumers_each"] = {n: counts(k) for n, k in result["consumers"].items()}
    row["unexplained_lines"] = [x for k in result["consumers"].values()
                                for x in k.get("unexplained_lines", [])][:20]
    return row


def _cols(rows: list[dict[str, Any]], first: tuple[str, ...]) -> list[str]:
    extra = sorted({f for r in rows for f in r} - set(first) - {"unexplained",
                                                                 "fault_tolerance"})
    return [*first, *extra, "unexplained"]


def table(rows: list[dict[str, Any]], line: str) -> str:
    """The agreement table of one line, as text."""
    mine = [r for r in rows if r["line"] == line]
    out = [f"\n== line {line}: {len(mine)} scenarios =="]
    sends = [{"seed": r["scenario_seed"], "producer": n, "ft": "on" if p["fault_tolerance"]
              else "off", **{k: v for k, v in p.items() if k != "fault_tolerance"}}
             for r in mine for n, p in r.get("producers", {}).items()]
    cols = _cols([{k: v for k, v in s.items() if k not in ("seed", "producer", "ft")}
                  for s in sends], SEND_COLUMNS)
    out.append("sends:")
    out.append(f"{'scenario seed':>16} {'producer':<9} {'ft':<3} "
               + " ".join(f"{c:>11}" for c in cols))
    for s in sends:
        out.append(f"{s['seed']:>16} {s['producer']:<9} {s['ft']:<3} "
                   + " ".join(f"{s.get(c, 0):>11}" for c in cols))
    assigned = [{"seed": r["scenario_seed"], **r["consumers"]} for r in mine
                if "consumers" in r]
    acols = _cols([{k: v for k, v in a.items() if k != "seed"} for a in assigned],
                  ASSIGN_COLUMNS)
    out.append("assignments (the scenario's consumers summed):")
    out.append(f"{'scenario seed':>16} " + " ".join(f"{c:>11}" for c in acols))
    for a in assigned:
        out.append(f"{a['seed']:>16} " + " ".join(f"{a.get(c, 0):>11}" for c in acols))
    out.append(f"events (late: over {MAX_LATE_MS} ms after the planned time):")
    for r in mine:
        late = r.get("late_events") or []
        why = "; ".join(f"{x['action']} {x['target']} +{x['late_ms']} ms"
                        + (f" (waited for {x['waited_for']})" if "waited_for" in x else "")
                        for x in late)
        state = f"ERROR {r['error'][:300]!r}" if "error" in r else "ok"
        out.append(f"{r['scenario_seed']:>16} max late {r.get('max_late_ms', '-')!s:>6} ms, "
                   f"{len(late)} late{': ' + why if why else ''}; record {r['record_s']} s; "
                   f"{state}")
    tot_s = {c: sum(s.get(c, 0) for s in sends) for c in cols}
    tot_a = {c: sum(a.get(c, 0) for a in assigned) for c in acols}
    out.append(f"total sends: {json.dumps(tot_s)}")
    out.append(f"total assignments: {json.dumps(tot_a)}")
    out.append(f"failed scenarios: {sum('error' in r for r in mine)}; max lateness "
               f"{max((r.get('max_late_ms', 0) for r in mine), default=0)} ms")
    return "\n".join(out)


def recheck(out: Path) -> int:
    """Check every recorded scenario of the soak in ``out`` again; rewrite its soak.json."""
    report = json.loads((out / "soak.json").read_text(encoding="utf-8"))
    for row in report["rows"]:
        folder = out / str(row["line"]) / str(row["scenario_seed"])
        if (folder / "recording" / "recording.json").is_file():
            check_one(row, folder)
    (out / "soak.json").write_text(json.dumps(report, indent=1) + "\n")
    for ln in report["lines"]:
        print(table(report["rows"], ln))
    print(f"\nJSON: {out / 'soak.json'}")
    return 0


KEPT = ("scenario_seed", "line", "record_s", "max_late_ms", "late_events", "warnings",
        "producers", "consumers", "index")


def export(out: Path, dst: Path, machine: str) -> None:
    """The soak in ``out`` trimmed to what the book shows (``data/live/soak/``, documented in
    ``data/README.md``): its rows' counts, the kinds each scenario held
    (``live.record.kinds``), and for a failed scenario its recorder's own error lines instead
    of the output's tail."""
    report = json.loads((out / "soak.json").read_text(encoding="utf-8"))
    from rocketlb_core.live.record import kinds, load_scenario

    rows = []
    for r in report["rows"]:
        row = {k: r[k] for k in KEPT if k in r}
        toml = out / str(r["line"]) / str(r["scenario_seed"]) / "scenario.toml"
        if toml.is_file():                   # what the scenario held (issue 45's kinds)
            row["kinds"] = kinds(load_scenario(toml))
        if "error" in r:
            log = out / str(r["line"]) / str(r["scenario_seed"]) / "record.log"
            text = log.read_text("utf-8", "replace") if log.is_file() else ""
            why = [x for x in text.splitlines() if x.startswith(("error:", "Caused by:"))]
            if r["error"].startswith("record exited -9"):
                why = ["stopped: the soak was ended while this scenario ran"]
            row["error"] = (" / ".join(why) or r["error"].strip().splitlines()[0])[:300]
        rows.append(row)
    kept = {"seed": report["seed"], "scenarios": len(rows), "lines": report["lines"],
            "max_late_limit_ms": report["max_late_limit_ms"], "machine": machine,
            "command": f"bench/live_soak.py --scenarios {report['scenarios']} --seed "
                       f"{report['seed']} --line "
                       f"{'both' if len(report['lines']) > 1 else report['lines'][0]}"
                       f"{' --modes' if report.get('modes') else ''}"
                       + (" (stopped after the rows below)" if len(rows) < report["scenarios"]
                          * len(report["lines"]) else "")
                       + ", then --recheck with the check of this commit",
            "rows": rows}
    dst.write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recheck", type=Path, default=None, metavar="DIR",
                        help="import and check again the recordings of an earlier soak in DIR "
                             "(after a change to the check), rewriting DIR/soak.json")
    parser.add_argument("--scenarios", type=int)
    parser.add_argument("--seed", type=int, help="the soak's seed (>= 0)")
    parser.add_argument("--line", choices=("4", "5", "5.5", "both"), default="both",
                        help="the live line (rocketlb_core.live.jars.LINES); both: 4 and 5")
    parser.add_argument("--out", type=Path, default=None,
                        help="where recordings and soak.json go (default: a new temp folder)")
    parser.add_argument("--export", nargs=2, type=Path, metavar=("DIR", "FILE"),
                        help="write the soak in DIR, trimmed, to FILE (data/live/soak/)")
    parser.add_argument("--machine", default="", help="with --export: where it ran, how loaded")
    parser.add_argument("--modes", action="store_true",
                        help="producers also draw how they send (sync, hash, oneway, batch) "
                             "and their threads (issue 45)")
    args = parser.parse_args(argv)
    if args.export is not None:
        export(args.export[0], args.export[1], args.machine)
        return 0
    if args.recheck is not None:
        return recheck(args.recheck)
    if args.scenarios is None or args.seed is None:
        parser.error("--scenarios and --seed are required (or --recheck DIR)")
    if args.scenarios < 1 or args.seed < 0:
        parser.error("--scenarios must be >= 1 and --seed >= 0")
    out = args.out or Path(tempfile.mkdtemp(prefix="rocketlb-soak-"))
    out.mkdir(parents=True, exist_ok=True)
    scratch = out / "tmp"
    lines = ["4", "5"] if args.line == "both" else [args.line]
    rows: list[dict[str, Any]] = []
    report = {"seed": args.seed, "scenarios": args.scenarios, "lines": lines,
              "modes": args.modes, "max_late_limit_ms": MAX_LATE_MS, "rows": rows}
    print(f"soak seed {args.seed}: {args.scenarios} scenarios on line(s) {', '.join(lines)}; "
          f"output in {out}", file=sys.stderr, flush=True)
    try:
        for i in range(args.scenarios):
            seed = scenario_seed(args.seed, i)
            for ln in lines:
                print(f"[{i + 1}/{args.scenarios}] scenario seed {seed}, line {ln} ...",
                      file=sys.stderr, flush=True)
                try:
                    row = run_one(seed, ln, out / ln / str(seed), scratch / f"{ln}-{seed}",
                                  args.modes)
                except Exception as exc:         # the soak goes on
                    row = {"scenario_seed": seed, "line": ln, "record_s": 0,
                           "error": f"{type(exc).__name__}: {exc}"[:1500]}
                row["index"] = i
                rows.append(row)
                print(f"  -> {row.get('error', 'ok')[:200]} (record {row['record_s']} s, "
                      f"max late {row.get('max_late_ms', '-')} ms)", file=sys.stderr, flush=True)
                (out / "soak.json").write_text(json.dumps(report, indent=1) + "\n")
    finally:
        stop_jvms(scratch)
        (out / "soak.json").write_text(json.dumps(report, indent=1) + "\n")
    for ln in lines:
        print(table(rows, ln))
    print(f"\nJSON: {out / 'soak.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
