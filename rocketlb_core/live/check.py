"""``python -m rocketlb_core.live check RECORDING``: the model against a recording you made.

A recording (``python -m rocketlb_core.live record``, or one of ``data/live/``) is checked the
way the live tests check theirs, and the counts printed, one row per client:

* a recording of the classic remoting clients is imported into a scratch trace
  (``trace.importer.import_recording``: the message trace, the client and broker logs) and
  checked by ``trace.agreement.check_recording``: every producer's determined sends against
  the send loop, every assignment a consumer logged against the allocation on the imported
  member lists;
* a recording of gRPC clients through the Proxy has no message trace (rocketmq-client-java
  writes none; the Proxy traces no gRPC send): ``trace.grpc_agreement.check_grpc_recording``
  reads it as it is (the clients' rows and logs, the topic's stored messages), and
  ``trace.grpc_consumer_agreement.check_grpc_consumers`` its simple and push consumers and
  their groups (every stored message consumed);
* a recording through the Proxy that holds remoting clients too (issue 47: remoting and gRPC
  consumers in one group) has both checks: the remoting clients imported and checked as in
  the first case, the gRPC ones as in the second, and each group's messages counted by which
  side consumed them.

``--json`` prints the whole result instead (every verdict, every unexplained detail). Exit
status: 0 when the model explains everything, 3 when something is unexplained (the rows say
what), 2 when the recording cannot be read (the error names the file and the field).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from rocketlb_core.trace.importer import load_recording, remoting_clients

SECTIONS = ("producers", "consumers", "groups")


def is_grpc(meta: dict[str, Any]) -> bool:
    """Was the recording made through the Proxy (``live.record`` writes ``proxy``)?"""
    return "proxy" in meta or "grpc_client" in meta


def check_live_recording(recording: Path | str) -> dict[str, Any]:
    """The agreement result of ``recording`` (see the module docstring), with ``kind``
    (``remoting`` or ``grpc``), the line and versions it was recorded on, and ``unexplained``:
    the sum of every client's ``unexplained`` count."""
    recording = Path(recording)
    meta = load_recording(recording)
    if is_grpc(meta):
        from rocketlb_core.trace.grpc_agreement import check_grpc_recording

        result = check_grpc_recording(recording)
        if any(k.get("client") == "grpc" for k in meta.get("consumers", [])):
            from rocketlb_core.trace.grpc_consumer_agreement import check_grpc_consumers

            consumers = check_grpc_consumers(recording)
            result["consumers"] = {**consumers["simple"], **consumers["push"]}
            result["groups"] = consumers["groups"]
        if remoting_clients(meta):
            # remoting clients beside the gRPC ones (issue 47): their own checks, as below
            remoting = _remoting_check(recording)
            result["producers"] = {**remoting["producers"], **result["producers"]}
            result["consumers"] = {**remoting["consumers"], **result.get("consumers", {})}
            for key in ("groups_at_end", "brokers_disagree", "nameserver_route"):
                if key in remoting:
                    result[key] = remoting[key]
    else:
        result = _remoting_check(recording)
    total = sum(_unexplained(entry) for section in SECTIONS
                for entry in result.get(section, {}).values())
    grpc, python = meta.get("grpc_client"), meta.get("python_client")
    named = []
    if isinstance(grpc, dict) and (
            any(p.get("client") == "grpc" and p.get("language", "java") == "java"
                for p in meta["producers"])
            or any(k.get("client") == "grpc" for k in meta["consumers"])):
        named.append(f"{grpc.get('artifact', 'gRPC client')} {grpc.get('version', '?')}")
    if isinstance(python, dict):
        named.append(f"{python.get('package', 'Python client')} {python.get('version', '?')}")
    if remoting_clients(meta):
        named.append(f"rocketmq-client {meta['client_version']}")
    clients = (", ".join(named) if is_grpc(meta)
               else f"rocketmq-client {meta['client_version']}")
    return {"recording": str(recording), "kind": "grpc" if is_grpc(meta) else "remoting",
            "scenario": meta["scenario"], "line": meta["line"],
            "server_version": meta["server_version"], "clients": clients,
            **result, "unexplained": total}


def _remoting_check(recording: Path) -> dict[str, Any]:
    """The remoting clients of ``recording``, imported and checked (``trace.agreement``)."""
    from rocketlb_core.trace.agreement import check_recording
    from rocketlb_core.trace.importer import import_recording

    with tempfile.TemporaryDirectory(prefix="rocketlb-check-") as scratch:
        trace = Path(scratch) / "trace"
        import_recording(recording, trace)
        return check_recording(recording, trace)


def _unexplained(entry: Any) -> int:
    """A client's ``unexplained`` count: each check's own total (a gRPC producer's already holds
    its models' nested counts, so those are not added again)."""
    own = entry.get("unexplained", 0) if isinstance(entry, dict) else 0
    return own if isinstance(own, int) and not isinstance(own, bool) else 0


def counts(entry: dict[str, Any]) -> dict[str, int]:
    """A client's verdict counts: its integer fields, and one level of nested counts as
    ``model.verdict`` (a gRPC producer's ``client.agree``, ``proxy.reload``)."""
    out: dict[str, int] = {}
    for k, v in entry.items():
        if isinstance(v, int) and not isinstance(v, bool):
            out[k] = v
        elif isinstance(v, dict):
            out.update({f"{k}.{f}": n for f, n in v.items()
                        if isinstance(n, int) and not isinstance(n, bool)})
    return out


def render(result: dict[str, Any]) -> str:
    """The result as text: a header, then one line per client with its counts."""
    lines = [f"{result['recording']}: {result['kind']} clients ({result['clients']}), servers "
             f"{result['server_version']} (line {result['line']}), scenario "
             f"{result['scenario']}"]
    for section in SECTIONS:
        for name, entry in sorted(result.get(section, {}).items()):
            shown = ", ".join(f"{k} {v}" for k, v in counts(entry).items())
            lines.append(f"  {section[:-1]} {name}: {shown}")
    for group, end in sorted(result.get("groups_at_end", {}).items()):
        lines.append(f"  group {group} at the end: {len(end['running'])} running, held twice "
                     f"{', '.join(end['held_twice']) or 'none'}, held by nobody "
                     f"{', '.join(end['held_by_nobody']) or 'none'}; reads beyond one an "
                     f"offset {end['read_twice']}")
    lines.append("the model explains everything" if result["unexplained"] == 0 else
                 f"UNEXPLAINED: {result['unexplained']} (--json gives each one's detail)")
    return "\n".join(lines)
