"""Golden files: every shipped scenario's summary and journal digest, byte for byte
(``rocketlb_core.sim.golden``; regenerate on purpose: ``python -m rocketlb_core.sim.golden``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlb_core.sim.golden import golden_path, golden_text, scenarios


def test_every_scenario_has_a_golden_file() -> None:
    missing = [p.name for p in scenarios() if not golden_path(p).is_file()]
    assert scenarios()
    assert missing == []
    stale = {p.stem for p in golden_path(scenarios()[0]).parent.glob("*.json")} - {
        p.stem for p in scenarios()}
    assert stale == set(), "golden files of scenarios that no longer exist"


@pytest.mark.parametrize("path", scenarios(), ids=lambda p: p.stem)
def test_scenario_matches_its_golden_file(path: Path) -> None:
    assert golden_text(path) == golden_path(path).read_text(), (
        f"{path.name} behaves differently: if on purpose, run python -m rocketlb_core.sim.golden "
        "and review the diff")
