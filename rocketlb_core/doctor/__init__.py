"""``rocketlb doctor``: diagnose a real cluster's balancing from what the cluster already writes
(issue 35).

Point it at files and folders holding any subset of: ``mqadmin`` outputs (``consumerConnection
-g``, ``consumerProgress -g [-s true]``, ``topicRoute -t``, ``clusterList``, ``brokerStatus``;
4.9.x and 5.x formats), client logs (``rocketmq_client.log``), broker logs (``broker.log``) and
message-trace dumps. Each file is recognised by its content (``doctor.inputs``); the checks
(``doctor.findings`` for the consumer groups, ``doctor.producers`` for producers, rebalance
storms and route permissions) compute, with the core's allocation strategies and fault
strategy, what each problem costs and what its fix would change; a producer finding's fix is
tried on the recorded producer day when the inputs hold one (a message-trace dump and the
producers' client logs: ``doctor.replayed`` reconstructs the day with the trace importer and
replays it with the Python engine of ``rocketlb replay producer``, as recorded and with the
fix), else on the core's fault strategy alone; ``doctor.report`` prints them for a terminal or
as JSON (schema version ``VERSION``, documented in ``data/README.md``), ``doctor.html`` as one
self-contained offline page.

Data layer: the standard library and the trace importers' parsers; the replay of a producer
day needs numpy and pyarrow (the ``[replay]`` extra; without them the findings say so and fall
back to the core's fault strategy).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rocketlb_core.doctor.diagnosis import diagnose
from rocketlb_core.doctor.findings import Finding
from rocketlb_core.doctor.inputs import Inputs, read_inputs

FORMAT = "rocketlb-doctor"
VERSION = 2
"""2: a producer finding's ``before_after`` may come from the replayed producer day, with
another metric (``source``, ``replay``; data/README.md). 1: before that."""


def examine(paths: Sequence[Path | str], *, skip_bad: bool = False,
            zone_4x: int | None = None) -> tuple[Inputs, list[Finding], list[str]]:
    """Read ``paths`` and diagnose them: (what was read, the findings, notes). ``zone_4x``:
    the 4.x clients' log times' offset from UTC in minutes (``None``: UTC; 5.x clients write
    GMT+8 whatever the host's zone)."""
    inputs = read_inputs(paths, skip_bad=skip_bad)
    findings, notes = diagnose(inputs, zone_4x=zone_4x)
    return inputs, findings, notes


def as_json(inputs: Inputs, findings: list[Finding], notes: list[str]) -> dict[str, Any]:
    """The ``--json`` document (schema version ``VERSION``; ``data/README.md``)."""
    return {"format": FORMAT, "version": VERSION,
            "inputs": [{"file": p, "kind": k} for p, k in inputs.read],
            "ignored": [{"file": p, "reason": r} for p, r in inputs.ignored],
            "skipped_bad_lines": len(inputs.bad),
            "findings": [f.as_json() for f in findings],
            "notes": notes}


__all__ = ["FORMAT", "VERSION", "Finding", "Inputs", "as_json", "diagnose", "examine",
           "read_inputs"]
