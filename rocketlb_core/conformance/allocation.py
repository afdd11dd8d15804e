"""Allocation conformance (``allocation-*.jsonl``): filled in with the consumer strategies."""

from __future__ import annotations

from typing import Any

from rocketlb_core.conformance.report import Report

UPSTREAM_HANDLERS: dict[str, Any] = {}


def run_group(obj: dict[str, Any], report: Report) -> None:
    cases = len(obj.get("cases", [])) + len(obj.get("rebalance_view", {}).get("cases", []))
    report.not_compared.append(f"{obj['id']} ({cases} cases): allocation strategies are not "
                               "implemented yet")
