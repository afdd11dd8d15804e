"""Every finding of the doctor: the consumers' (``findings``) and the producers' and routes'
(``producers``), most severe first (issue 35)."""

from __future__ import annotations

from rocketlb_core.doctor.findings import SEVERITIES, Finding, consumer_findings
from rocketlb_core.doctor.grpcgroups import grpc_findings
from rocketlb_core.doctor.inputs import GRPC_JAVA_LOG, GRPC_PYTHON_LOG, PROXY_LOG, Inputs
from rocketlb_core.doctor.producers import producer_findings


def diagnose(inputs: Inputs, *, zone_4x: int | None = None) -> tuple[list[Finding], list[str]]:
    """Every finding, most severe first, and notes on what could not be checked; ``zone_4x``:
    the 4.x logs' offset from UTC in minutes (``rocketlb doctor --log-zone``; ``None``: UTC)."""
    findings, notes = consumer_findings(inputs)
    grpc, grpc_notes = grpc_findings(inputs)
    findings += grpc
    notes += grpc_notes
    findings += producer_findings(inputs, zone_4x)[0]
    findings.sort(key=lambda f: (SEVERITIES.index(f.severity), f.group or "", f.topic or "",
                                 f.id))
    return findings, notes + not_read(inputs)


def not_read(inputs: Inputs) -> list[str]:
    """Notes on the logs recognised and not read (``inputs.other_log``): what they leave
    unchecked, so that "no balancing problem found" is not read as a clean bill for them."""
    grpc = sum(1 for _, why in inputs.ignored if why in (GRPC_JAVA_LOG, GRPC_PYTHON_LOG))
    proxy = sum(1 for _, why in inputs.ignored if why == PROXY_LOG)
    notes = []
    if grpc:
        notes.append(f"{grpc} gRPC client log(s) not read (a Python client's, or a Java one "
                     "naming no client): nothing of those clients' balancing was checked")
    if inputs.grpc_logs:
        notes.append(f"{len(inputs.grpc_logs)} gRPC Java client log(s) read for a push "
                     "consumer's group and assignment only: where the gRPC clients' sends and "
                     "receives went is not in their logs")
    if proxy:
        notes.append(f"{proxy} RocketMQ Proxy log(s) not read: what the Proxy did for its "
                     "gRPC clients was not checked")
    return notes
