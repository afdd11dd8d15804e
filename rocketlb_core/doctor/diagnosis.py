"""Every finding of the doctor: the consumers' (``findings``) and the producers' and routes'
(``producers``), most severe first (issue 35)."""

from __future__ import annotations

from rocketlb_core.doctor.findings import SEVERITIES, Finding, consumer_findings
from rocketlb_core.doctor.inputs import Inputs
from rocketlb_core.doctor.producers import producer_findings


def diagnose(inputs: Inputs, *, zone_4x: int | None = None) -> tuple[list[Finding], list[str]]:
    """Every finding, most severe first, and notes on what could not be checked; ``zone_4x``:
    the 4.x logs' offset from UTC in minutes (``rocketlb doctor --log-zone``; ``None``: UTC)."""
    findings, notes = consumer_findings(inputs)
    findings += producer_findings(inputs, zone_4x)[0]
    findings.sort(key=lambda f: (SEVERITIES.index(f.severity), f.group or "", f.topic or "",
                                 f.id))
    return findings, notes
