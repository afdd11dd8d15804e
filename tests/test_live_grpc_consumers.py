"""RocketMQ 5's gRPC consumers through the Proxy (issue 34, item 3): the scenario format's
``client = "grpc"`` consumers (``kind = "simple" | "push"``), and the shipped recordings of
``data/scenarios/live/grpc-clients.toml`` (``data/live/grpc/grpc-clients-*``) checked without a
cluster by ``trace.grpc_agreement`` (the producer) and ``trace.grpc_consumer_agreement`` (the
simple consumers' receive rotation, the push consumers' assignments, every stored message
consumed by each group). The live recording is ``tests/test_live_grpc.py``'s."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core import data_path
from rocketlb_core.live.record import LiveConsumer, parse_scenario
from rocketlb_core.sim.scenario import ScenarioError
from tests.test_live_record import SCENARIO, refuses_consumer_field


@pytest.mark.parametrize(("fields", "where", "message"), [
    ('client = "http"', "client", "one of remoting, grpc, got 'http'"),
    ('client = "grpc"', "kind", "a gRPC consumer needs it: simple or push"),
    ('client = "grpc"\nkind = "pull"', "kind", "one of simple, push, got 'pull'"),
    ('client = "grpc"\nkind = 1', "kind", "expected text, got 1"),
    # a remoting consumer's kind is lite-pull or none (issue 45): simple and push are gRPC's
    ('kind = "push"', "kind", "a remoting consumer's is \"lite-pull\" .*simple and push are "
     "a gRPC consumer's"),
    ('client = "remoting"\nkind = "simple"', "kind", "a remoting consumer's is \"lite-pull\" "
     ".*simple and push are a gRPC consumer's"),
    ('client = "grpc"\nkind = "push"\ninstance = "i"', "instance", "only a remoting consumer"),
])
def test_a_bad_grpc_consumer_is_refused_naming_the_field(fields: str, where: str,
                                                         message: str) -> None:
    refuses_consumer_field(fields, where, message)


def test_grpc_consumers_are_read_and_take_their_events() -> None:
    """``client`` defaults to remoting (no kind); a gRPC consumer has a kind and no instance;
    ``join``, ``leave`` and ``crash`` apply to either."""
    text = SCENARIO + ('[[consumers]]\nname = "s"\ngroup = "GS"\nclient = "grpc"\n'
                       'kind = "simple"\n[[consumers]]\nname = "p"\ngroup = "GP"\n'
                       'client = "grpc"\nkind = "push"\n')
    text += "".join(f'[[events]]\nat_s = {i}\naction = "{a}"\ntarget = "{t}"\n'
                    for i, (a, t) in enumerate([("join", "s"), ("join", "p"), ("join", "c1"),
                                                ("crash", "s"), ("leave", "p")]))
    sc = parse_scenario(text)
    assert sc.consumers == (LiveConsumer("c1", "G", "c1"),
                            LiveConsumer("s", "GS", "s", "grpc", "simple"),
                            LiveConsumer("p", "GP", "p", "grpc", "push"))
    with pytest.raises(ScenarioError, match=r"events\[5\]: leave s at 5 s: it is gone"):
        parse_scenario(text + '[[events]]\nat_s = 5\naction = "leave"\ntarget = "s"\n', "<t>")


RECORDINGS = sorted(p.name for p in (data_path("live") / "grpc").glob("grpc-clients-*"))


def _check(folder: Path) -> dict[str, Any]:
    from rocketlb_core.trace.grpc_consumer_agreement import check_grpc_consumers

    return check_grpc_consumers(folder)


def assert_consumers_agree(result: dict[str, Any]) -> None:
    """The consumers' checks of a ``grpc-clients`` recording: nothing unexplained; each simple
    consumer's rotation inferred once and then agreeing on every call that got messages, seen on
    both brokers; every push consumer's logged assignments equal to the Proxy model's; every
    stored message consumed by each group."""
    assert result["unexplained"] == 0, json.dumps(
        {k: {n: x["unexplained_detail"][:5] for n, x in part.items() if x["unexplained"]}
         for k, part in result.items() if isinstance(part, dict)})[:4000]
    assert result["simple"]
    assert result["push"]
    seen: set[str] = set()
    for s in result["simple"].values():
        assert s["verdicts"].get("inferred") == 1
        assert s["verdicts"].get("agree", 0) == s["non_empty"] - 1
        seen |= set(s["brokers_received"])
    assert seen == {"broker-a", "broker-b"}                 # the rotation, on both brokers
    assert sum(s["verdicts"].get("agree", 0) for s in result["simple"].values()) >= 10
    for p in result["push"].values():
        assert p["assignments_logged"] >= 1
        assert p["assignments_equal"] == p["assignments_logged"]
        assert p["model_assignment"] == [["broker-b", -1], ["broker-a", -1]] or \
            p["model_assignment"] == [["broker-a", -1], ["broker-b", -1]]
    assert sum(p["consumed"] for p in result["push"].values()) >= 1
    for g in result["groups"].values():
        assert g["missing"] == 0
        assert g["strays"] == 0
        assert g["consumed_stored"] == g["stored"] > 0


def summary(result: dict[str, Any]) -> str:
    def brief(x: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in x.items() if not k.endswith("detail")}
    return json.dumps({k: {n: brief(x) for n, x in part.items()} if isinstance(part, dict)
                       else part for k, part in result.items()})


@pytest.mark.parametrize("name", RECORDINGS)
def test_the_shipped_grpc_clients_recording_agrees(name: str) -> None:
    """A shipped ``grpc-clients`` recording (no cluster): the producer as
    ``grpc-producer-outage``'s, the simple and push consumers as ``assert_consumers_agree``."""
    from rocketlb_core.live import cluster as live
    from rocketlb_core.live.jars import LINES
    from rocketlb_core.trace.grpc_agreement import check_grpc_recording
    from tests.test_live_grpc import _assert_agrees

    folder = data_path("live") / "grpc" / name
    produced = check_grpc_recording(folder)
    _assert_agrees(produced)
    line_name = name.removeprefix("grpc-clients-")
    assert produced["proxy"]["version"] == LINES[line_name].server_version
    assert produced["grpc_client"]["version"] == live.GRPC_CLIENT_VERSION
    result = _check(folder)
    assert_consumers_agree(result)
    print(f"\n{name}: {summary(result)}")


def test_there_is_a_shipped_grpc_clients_recording_of_line_5() -> None:
    assert "grpc-clients-5" in RECORDINGS


def _rewrite(path: Path, edit: Any) -> None:
    rows = [json.loads(x) for x in gzip.decompress(path.read_bytes()).splitlines()]
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in edit(rows)).encode()))


def test_the_consumer_check_names_what_it_cannot_explain(tmp_path: Path) -> None:
    """No fudge: a simple consumer's call that got messages from the other broker disagrees, a
    consumed message the topic does not hold is a stray and leaves its stored message missing,
    and a logged assignment that is not the Proxy model's is counted."""
    folder = tmp_path / "rec"
    shutil.copytree(data_path("live") / "grpc" / "grpc-clients-5", folder)
    other = {"broker-a": "broker-b", "broker-b": "broker-a"}
    moved: dict[str, Any] = {}

    def simple(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        call = [c for c in rows if c.get("messages")][3]
        for m in call["messages"]:
            m["client_broker"] = m["broker"] = other[m["broker"]]
        moved["call"] = call["call"]
        return rows

    _rewrite(folder / "receives" / "s1.jsonl.gz", simple)

    def push(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        victims = [r for r in rows if r["seq"] == rows[0]["seq"]]
        for r in victims:
            r["offset"] += 1000
        moved["seq"] = rows[0]["seq"]
        return [r for r in rows if r["seq"] != rows[0]["seq"]] + victims

    pushed = sorted(p.name for p in (folder / "receives").iterdir() if p.name.startswith("p"))
    for p in pushed:
        _rewrite(folder / "receives" / p, push)
    result = _check(folder)
    s1 = result["simple"]["s1"]
    assert s1["verdicts"]["disagree"] == 1
    assert [d["call"] for d in s1["unexplained_detail"]] == [moved["call"]]
    g = result["groups"]["GID_push"]
    assert g["strays"] >= 1
    assert g["missing"] >= 1
    assert any(d.get("body") == f"m{moved['seq']}" for d in g["unexplained_detail"])

    log = folder / "logs" / "p2" / "rocketmq-client.log.gz"
    text = gzip.decompress(log.read_bytes()).decode()
    assert ".-1}" in text
    log.write_bytes(gzip.compress(text.replace("TopicGrpc.-1}", "TopicGrpc.0}", 1).encode()))
    p2 = _check(folder)["push"]["p2"]
    assert p2["assignments_equal"] == p2["assignments_logged"] - 1


def test_collect_receives_keeps_the_rows_and_drops_a_line_a_crash_cut_short(
        tmp_path: Path) -> None:
    """``collect_receives`` returns a driver's rows without its ``started`` and ``stopped``
    lines; the last line of a killed JVM, half written, is left out."""
    import subprocess
    import sys

    from rocketlb_core.live import cluster as live

    out = tmp_path / "receives.jsonl"
    out.write_text('{"started":"id"}\n{"call":0,"start_ms":1,"end_ms":2,"messages":[]}\n'
                   'some stderr noise\n{"call":1,"start_ms":3,"end_ms":4,"error":"x"}\n'
                   '{"stopped":true}\n{"call":2,"start_ms":5,"mess', encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-c", "pass"], text=True)
    proc.wait()
    k = live.GrpcConsumer("s", proc, tmp_path / "stop", tmp_path, "s", kind="simple", output=out)
    assert [r["call"] for r in live.collect_receives(k)] == [0, 1]
    assert k.client_log == tmp_path / "logs" / "rocketmqlogs" / "rocketmq-client.log"
    with pytest.raises(live.LiveError, match="one of simple, push, not 'pull'"):
        live.start_grpc_consumer(live.Cluster(tmp_path, "5", 19876, []), "T", "G", "pull")
