"""Golden files for the shipped scenarios (house style 13): scenario in, summary out.

Each scenario under ``data/scenarios/`` has ``data/scenarios/golden/<name>.json``: its summary
with seed 0, as ``rocketlb simulate`` prints it, plus the SHA-256 of its journal. The test
compares them byte for byte, so a change of behaviour cannot pass as "still deterministic".
They are regenerated only on purpose, by ``python -m rocketlb_core.sim.golden`` (then review
the diff: every changed number is a changed behaviour).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from rocketlb_core.paths import data_path
from rocketlb_core.sim.scenario import load
from rocketlb_core.sim.world import run_scenario


def scenarios() -> list[Path]:
    """Every shipped simulator scenario file, in a fixed order (``live/`` holds scenarios for a
    real cluster, ``rocketlb_core.live.record``: not the simulator's)."""
    root = data_path("scenarios")
    return sorted(p for p in root.rglob("*.toml") if p.relative_to(root).parts[0] != "live")


def golden_path(scenario: Path) -> Path:
    return data_path("scenarios") / "golden" / f"{scenario.stem}.json"


def journal_digest(journal: list[Any]) -> str:
    """SHA-256 over the journal's records (time, kind, entity, fields as sorted JSON)."""
    h = hashlib.sha256()
    for r in journal:
        h.update(json.dumps([r.time_ms, r.kind, r.entity, r.fields], sort_keys=True,
                            default=str).encode())
        h.update(b"\n")
    return h.hexdigest()


def golden_text(scenario: Path, seed: int = 0) -> str:
    """What the golden file of ``scenario`` must hold, computed now."""
    result = run_scenario(load(scenario), seed)
    doc = {"summary": result.summary, "journal_sha256": journal_digest(result.world.env.journal),
           "journal_records": len(result.world.env.journal)}
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main() -> int:
    for path in scenarios():
        out = golden_path(path)
        out.parent.mkdir(exist_ok=True)
        text = golden_text(path)
        changed = not out.exists() or out.read_text() != text
        out.write_text(text)
        print(f"{'changed ' if changed else 'same    '} {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
