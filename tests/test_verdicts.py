"""The verdicts' registry (``rocketlb_core.trace.verdicts``) against the checks' code, and the
verdicts no other test shows.

The registry is the one list of what the live agreement checks write: every constant and every
word a check's code writes where a verdict goes is registered (read from the code's syntax:
assignments to ``verdict``, ``client``, ``proxy``, ``outcome``, ..., the verdict argument of
``SendCheck``, ``OrderedCheck`` and ``_step``, a ``"verdict"`` key, comparisons and counts of
those), every registered one is in its module with its value, each counts where the registry
says (run through the checks' own summaries), and every test, fixture, fact and spec section
it cites exists. The book's page generated from it is held current by
``tests/test_registry_pages.py``.
"""

from __future__ import annotations

import ast
import gzip
import importlib
import json
import re
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rocketlb_core import data_path
from rocketlb_core.trace import verdicts
from rocketlb_core.trace.verdicts import CHECKS, KINDS, LABEL, READING, VERDICT, VERDICTS

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT.parent / "shared" / "reference" / "rocketmq-load-balancing.md"
MODULES = sorted({c.module for c in CHECKS})
NOT_VERDICTS = {("rocketlb_core.trace.grpc_agreement", "ENDPOINTS"),
                ("rocketlb_core.trace.grpc_agreement", "PY_LOG"),
                ("rocketlb_core.trace.async_agreement", "PERMIT_TIMEOUT")}
"""Module-level text constants of the checks' modules that are not verdicts."""

WHERE = {"verdict", "pending_verdict", "found", "client", "proxy", "outcome"}
"""Names and attributes a check writes a verdict to (``found``: the allocation's kind)."""
COUNTERS = {"client", "proxy", "attempts", "verdicts"}
"""Counters of verdicts a check reads by word (``client["disagree"]``)."""
POSITIONAL = {"SendCheck": 4, "OrderedCheck": 5, "_step": 3, "BroadcastCheck": 5,
              "LockCheck": 5}
"""Calls whose verdict is a positional argument, and its index."""


def _check(key: str) -> Any:
    return next(c for c in CHECKS if c.key == key)


def _leaves(node: ast.AST) -> Iterator[ast.AST]:
    """The words and names an expression can evaluate to (through ``a if c else b``, tuples,
    ``and``/``or``)."""
    if isinstance(node, ast.IfExp):
        yield from _leaves(node.body)
        yield from _leaves(node.orelse)
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for e in node.elts:
            yield from _leaves(e)
    elif isinstance(node, ast.BoolOp):
        for v in node.values:
            yield from _leaves(v)
    else:
        yield node


def _named(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _verdict_positions(tree: ast.AST) -> Iterator[ast.AST]:
    """Every expression of ``tree`` in a place a verdict goes."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if _named(target) in WHERE and node.value is not None:
                    yield node.value
                elif (isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                      and len(target.elts) == len(node.value.elts)):
                    yield from (v for t, v in zip(target.elts, node.value.elts, strict=True)
                                if _named(t) in WHERE)
        elif isinstance(node, ast.Call):
            yield from (k.value for k in node.keywords if k.arg in WHERE)
            at = POSITIONAL.get(_named(node.func) or "")
            if at is not None and len(node.args) > at:
                yield node.args[at]
        elif isinstance(node, ast.Dict):
            yield from (v for k, v in zip(node.keys, node.values, strict=True)
                        if isinstance(k, ast.Constant) and k.value == "verdict")
        elif isinstance(node, ast.Compare) and _named(node.left) in WHERE:
            yield from node.comparators
        elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
              and node.value.id in COUNTERS and isinstance(node.slice, ast.Constant)):
            yield node.slice


def _written(module: str) -> tuple[set[str], set[str]]:
    """(the words, the module-level constants) ``module``'s code writes where a verdict goes."""
    mod = importlib.import_module(module)
    tree = ast.parse(Path(mod.__file__ or "").read_text(encoding="utf-8"))
    constants = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                 if isinstance(t, ast.Name)}
    words: set[str] = set()
    names: set[str] = set()
    for expr in _verdict_positions(tree):
        for leaf in _leaves(expr):
            if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str) and leaf.value:
                words.add(leaf.value)
            elif isinstance(leaf, ast.Name) and leaf.id in constants:
                names.add(leaf.id)
    return words, names


def _registered(module: str) -> list[verdicts.Verdict]:
    keys = {c.key for c in CHECKS if c.module == module}
    return [v for v in VERDICTS if v.check in keys]


def _is_constant(v: verdicts.Verdict) -> bool:
    """A module constant (``AGREE``), not a word the code writes (``client.agree``)."""
    return v.name.isupper()


# ------------------------------------------------------------------ the registry, whole


def test_the_registry_is_well_formed() -> None:
    assert len(VERDICTS) >= 50
    keys = [(v.check, v.name) for v in VERDICTS]
    assert len(keys) == len(set(keys)), "a verdict registered twice"
    assert [c.key for c in CHECKS] == list(dict.fromkeys(v.check for v in VERDICTS)), \
        "the checks in CHECKS' order, each with its verdicts together"
    for v in VERDICTS:
        assert v.kind in KINDS, v
        assert (v.counted_as is None) == (v.kind == READING or v.name == "LOST"
                                          or v.check == "consumer-model"), v
        assert v.explains.endswith("."), v
        assert v.upstream, v
        assert not v.upstream.endswith("."), v
        assert 40 <= len(v.explains) <= 420, (v.name, len(v.explains))
        assert any("::" in s for s in v.shown_by), f"{v.check} {v.name}: no test shows it"
        assert isinstance(v.value, str) or v.kind == READING, v


@pytest.mark.parametrize("module", MODULES)
def test_every_verdict_a_check_writes_is_registered_and_every_registered_one_is_written(
        module: str) -> None:
    mod = importlib.import_module(module)
    words, names = _written(module)
    mine = _registered(module)
    constants = {v.name for v in mine if _is_constant(v)}
    verdict_constants = {v.name for v in mine if _is_constant(v) and v.kind == VERDICT}
    assert names - verdict_constants == set(), \
        f"{module}: constants written as verdicts, not registered as verdicts"
    assert {v.value for v in mine if not _is_constant(v)} == words, module
    for v in mine:
        if _is_constant(v):
            assert getattr(mod, v.name) == v.value, (module, v.name)
    # every text constant of the module is a registered one (or known not to be a verdict)
    tree = ast.parse(Path(mod.__file__ or "").read_text(encoding="utf-8"))
    texts = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Name) and t.id.isupper()
             and isinstance(getattr(mod, t.id, None), (str, int))
             and not isinstance(getattr(mod, t.id), bool)}
    strings = {n for n in texts if isinstance(getattr(mod, n), str)}
    assert strings - constants - {n for m, n in NOT_VERDICTS if m == module} == set(), module


def test_the_constants_are_taken_from_the_registry() -> None:
    """One source: the checks' modules call ``verdicts.text`` and ``verdicts.number`` for every
    registered constant; none spells its value again."""
    for module in MODULES:
        mod = importlib.import_module(module)
        src = Path(mod.__file__ or "").read_text(encoding="utf-8")
        for v in _registered(module):
            if _is_constant(v):
                how = "text" if isinstance(v.value, str) else "number"
                assert f'{v.name} = verdicts.{how}("{v.check}", "{v.name}")\n' in src, \
                    (module, v.name)


def test_each_verdict_counts_where_the_registry_says() -> None:
    """Through the checks' own summaries: one check of each verdict counts 1 under its key."""
    from rocketlb_core.trace.agreement import AGREE, Agreement, SendCheck
    from rocketlb_core.trace.ordered_agreement import OrderedAgreement, OrderedCheck

    for v in verdicts.of_check("producer"):
        if v.counted_as is None:
            continue
        check = (SendCheck(0, 0, "FAILED", str(v.value), AGREE) if v.kind == LABEL
                 else SendCheck(0, 0, "broker-a/0", "broker-b/0", str(v.value)))
        assert Agreement([check]).summary()[v.counted_as] == 1, v.name
    for v in verdicts.of_check("ordered"):
        summary = OrderedAgreement([OrderedCheck(0, 0, "k", "a/0", "a/0", str(v.value))]
                                   ).summary()
        assert summary[v.counted_as or ""] == 1, v.name
    assert _allocation_counts() == {v.counted_as: 1 for v in verdicts.of_check("allocation")
                                    if v.counted_as}
    prefix = {"grpc-client": "client", "grpc-proxy": "proxy",
              "grpc-attempt": "attempt_outcomes", "grpc-simple": "verdicts"}
    for v in VERDICTS:
        if v.check in prefix:
            assert v.name == v.counted_as == f"{prefix[v.check]}.{v.value}", v
    from collections import Counter

    from rocketlb_core.model import MessageQueue
    from rocketlb_core.trace.go_agreement import GoProducerAgreement
    from rocketlb_core.trace.pop_agreement import BrokerRebalance, broker_agreement

    queues = [MessageQueue("T", "b", i) for i in range(2)]
    logged = BrokerRebalance(1, "2026-11-28 10:00:00.000", "AVG", "g", "T", "c1",
                             (("b", 0, "PULL"), ("b", 1, "PULL")))
    cases = {"exact": [["c1"]], "near_change": [["c0", "c1"], ["c1"]],
             "STALE_VIEW": [["c0", "c1"], (verdicts.text("allocation", "STALE_VIEW"), ["c1"])],
             "unexplained": [["c0", "c1"]]}
    for v in verdicts.of_check("broker-assignment"):
        got = broker_agreement([logged], lambda r, c=cases[v.name]: c, queues, None, None)
        assert got.summary()[v.counted_as or ""] == 1, v.name
    for v in verdicts.of_check("go-producer"):
        summary = GoProducerAgreement(Counter({str(v.value): 1})).summary()
        assert summary[v.counted_as or ""] == 1, v.name
        assert summary["sends"] == 1


def _allocation_counts() -> dict[str, int]:
    """``allocation_agreement`` on four logged assignments of AVG: one on the list at the
    logged time, one on the list after a change, one on a broker's own view, one on none."""
    from rocketlb_core.model import MessageQueue
    from rocketlb_core.trace.agreement import STALE_VIEW, allocation_agreement

    queues = [MessageQueue("T", "b", i) for i in range(4)]

    def logged(cid: str, result: list[int], cids: int) -> SimpleNamespace:
        return SimpleNamespace(group="G", client_id=cid, cid_all_size=cids, mq_all_size=4,
                               result=[queues[i] for i in result])

    rebalances = [logged("c1", [0, 1], 2), logged("c1", [0, 1, 2, 3], 1),
                  logged("c1", [0, 1], 3), logged("c1", [3], 2)]
    lists = iter([[["c1", "c2"]], [["c1", "c2"], ["c1"]], [["c1", "c2"], (STALE_VIEW,
                                                                       ["c1", "c2", "c3"])],
                  [["c1", "c2"]]])
    got = allocation_agreement(rebalances, lambda _: next(lists), queues, "AVG").summary()
    return {k: n for k, n in got.items() if k != "logged" and n}


# ------------------------------------------------------------------ what each entry cites


def _tests_and_fixtures() -> Iterator[tuple[verdicts.Verdict, str]]:
    for v in VERDICTS:
        for s in v.shown_by:
            yield v, s


def test_every_test_and_fixture_it_cites_exists() -> None:
    missing = []
    for v, s in _tests_and_fixtures():
        if "::" in s:
            path, name = s.split("::")
            file = ROOT / path
            defined = file.is_file() and any(
                isinstance(n, ast.FunctionDef) and n.name == name
                for n in ast.parse(file.read_text(encoding="utf-8")).body)
            if not defined:
                missing.append(f"{v.check} {v.name}: {s}")
        elif not (ROOT / s).is_dir():
            missing.append(f"{v.check} {v.name}: {s}")
    assert missing == []


def test_every_fact_and_spec_section_it_cites_exists() -> None:
    facts = {f["id"] for f in tomllib.loads(
        (ROOT / "book" / "facts.toml").read_text(encoding="utf-8"))["fact"]}
    headings = (set(re.findall(r"^#+ (\d+(?:\.\d+[a-z]?)?)[. ]", SPEC.read_text("utf-8"), re.M))
                if SPEC.is_file() else None)
    for v in VERDICTS:
        cited = re.findall(r"(?:fact|facts) ([a-z0-9.\-, ]+?)(?:\)|;|$)", v.upstream)
        for ids in cited:
            for fid in (x.strip() for x in ids.split(",")):
                assert fid in facts, f"{v.check} {v.name}: no fact {fid!r}"
        for group in re.findall(r"spec ([\d., ]+[a-z]?)", v.upstream):
            for section in re.findall(r"\d+(?:\.\d+[a-z]?)?", group):
                assert headings is None or section in headings, (v.name, section)


def test_the_grpc_verdicts_a_shipped_recording_is_said_to_show_are_there() -> None:
    """Each gRPC verdict shown by a shipped recording occurs in it; one that counts as
    unexplained does not (the tests that show it change a copy)."""
    from rocketlb_core.trace.grpc_agreement import check_grpc_recording
    from rocketlb_core.trace.grpc_consumer_agreement import check_grpc_consumers

    unexplained = {"client.disagree", "proxy.unexplained", "attempt_outcomes.fail_unexplained",
                   "attempt_outcomes.ok_while_paused", "verdicts.disagree",
                   "verdicts.error_unexplained"}
    counted: dict[str, dict[str, int]] = {}

    def counts(folder: str) -> dict[str, int]:
        if folder not in counted:
            rec = ROOT / folder
            out: dict[str, int] = {}
            for p in check_grpc_recording(rec)["producers"].values():
                for part in ("client", "proxy", "attempt_outcomes"):
                    for k, n in p[part].items():
                        out[f"{part}.{k}"] = out.get(f"{part}.{k}", 0) + n
            meta = json.loads((rec / "recording.json").read_text(encoding="utf-8"))
            if any(k.get("client") == "grpc" for k in meta["consumers"]):
                for s in check_grpc_consumers(rec)["simple"].values():
                    for k, n in s["verdicts"].items():
                        out[f"verdicts.{k}"] = out.get(f"verdicts.{k}", 0) + n
            counted[folder] = out
        return counted[folder]

    seen = 0
    for v, s in _tests_and_fixtures():
        if v.check.startswith("grpc-") and s.startswith("data/live/grpc/"):
            n = counts(s).get(v.name, 0)
            assert (n == 0) if v.name in unexplained else (n > 0), (v.name, s, n)
            seen += 1
    assert seen >= 15


# ------------------------------------------------------------------ verdicts shown only here


def _route(*brokers: str) -> Any:
    from rocketlb_core.model import BrokerData, QueueData, TopicRoute

    return TopicRoute(tuple(QueueData(b, 1, 1, 6) for b in brokers),
                      tuple(BrokerData(b, {0: f"10.0.0.{i}:10911"}, "c")
                            for i, b in enumerate(brokers)))


def _conditions(*downs: tuple[int, int, str]) -> Any:
    """The trace's conditions with ``(down, up, broker)`` stretches (refused, ``clean``)."""
    from rocketlb_core.replay.timeline import Conditions

    rows = sorted([(t0, b, "down", "clean") for t0, _, b in downs]
                  + [(t1, b, "up", None) for _, t1, b in downs])
    return Conditions.from_columns({
        "time_ms": [r[0] for r in rows], "broker": [r[1] for r in rows],
        "client": [None] * len(rows), "kind": [r[2] for r in rows],
        "mode": [r[3] for r in rows], "median_ms": [None] * len(rows),
        "p99_ms": [None] * len(rows)})


@pytest.mark.parametrize(("down_at", "verdict"), [(2_050, "in flight at a change"),
                                                   (3_000, "unexplained")])
def test_a_send_under_way_when_its_broker_went_down_is_in_flight(down_at: int,
                                                                 verdict: str) -> None:
    """A 4.9.8 producer, fault tolerance off, two brokers of one queue. Its first send (at 1 s,
    stored at broker-a) gives the counter; the second (at 2 s, 100 ms long) should go to
    broker-b, but the client stored it at broker-a: broker-b went down at 2.05 s, while the
    send was under way, so it is ``IN_FLIGHT``; a change after the send explains nothing."""
    from rocketlb_core.trace.agreement import IN_FLIGHT, INFERRED, producer_agreement

    truth = [{"seq": 0, "sent_ms": 1_000, "broker": "broker-a", "queue": 0, "cost_ms": 5},
             {"seq": 1, "sent_ms": 2_000, "broker": "broker-a", "queue": 0, "cost_ms": 100}]
    got = producer_agreement(truth, line="4.9.8", fault_tolerance=False, topic="T",
                             route=_route("broker-a", "broker-b"),
                             conditions=_conditions((down_at, 9_000, "broker-b")),
                             origin_ms=0, costs={})
    assert [c.verdict for c in got.checks] == [INFERRED, verdict]
    assert (verdict == IN_FLIGHT) == (got.summary()["in_flight"] == 1)
    assert got.checks[1].predicted == "broker-b/0"


def test_a_logged_failures_fault_item_holds_the_logged_rt() -> None:
    """``LOGGED_RT``: the fault item of a failed attempt the client logged (ending at 1,008 ms
    with ``RT`` 8) holds 8, whatever the loop measured; another report holds its own."""
    from rocketlb_core.producer.fault import FaultTable4
    from rocketlb_core.trace.agreement import _LoggedRT, _ReportedStrategy

    strategy = _ReportedStrategy("4.9.8", send_latency_fault_enable=True)
    strategy.logged_rt = _LoggedRT({("broker-a", 1_008): 8})
    strategy.update_fault_item("broker-a", 13, True, 1_008)
    strategy.update_fault_item("broker-b", 13, True, 1_008)
    assert isinstance(strategy.table, FaultTable4)
    assert strategy.table.items["broker-a"].current_latency == 8
    assert strategy.table.items["broker-b"].current_latency == 13


def test_an_ordered_send_just_after_a_route_line_may_use_the_old_list() -> None:
    """Two brokers, then three: a key's queue moves. A send 10 ms after the new route's line
    stored at the old list's queue is ``ROUTE_NOT_INSTALLED``; 30 ms after, it is unexplained."""
    from rocketlb_core.model import publish_queues
    from rocketlb_core.producer.selectors import select_by_hash
    from rocketlb_core.trace.ordered_agreement import (
        LOG_BEFORE_INSTALL_MS,
        ROUTE_NOT_INSTALLED,
        UNEXPLAINED,
        ordered_agreement,
    )

    two, three = _route("broker-a", "broker-b"), _route("broker-a", "broker-b", "broker-c")
    key = next(k for k in (f"k{i}" for i in range(100))
               if select_by_hash(publish_queues("T", two), k)
               != select_by_hash(publish_queues("T", three), k))
    old = select_by_hash(publish_queues("T", two), key)

    def verdict(after_ms: int) -> str:
        row = {"seq": 0, "sent_ms": 5_000 + after_ms, "key": key, "broker": old.broker_name,
               "queue": old.queue_id}
        got = ordered_agreement([row], line="4.9.8", topic="T", route=three, origin_ms=0,
                                route_changes=[(0, two.queue_datas), (5_000, three.queue_datas)],
                                stopped={})
        return got.checks[0].verdict

    assert verdict(10) == ROUTE_NOT_INSTALLED
    assert verdict(LOG_BEFORE_INSTALL_MS + 10) == UNEXPLAINED


def test_a_send_nothing_of_which_was_stored_is_unobserved() -> None:
    """A gRPC send whose every attempt failed and left no copy: the Proxy model does not check
    its queues, and its counter moves on one step per attempt (the next send agrees); its
    attempts have no queue, so their outcomes are not checked (``unknown_queue``)."""
    from rocketlb_core.grpc.proxy_send import ProxyQueue, proxy_write_queues
    from rocketlb_core.trace.grpc_agreement import (
        Attempt,
        SendVerdict,
        _outcomes,
        _proxy_check,
    )

    queues = proxy_write_queues([("broker-a", 2, 6), ("broker-b", 2, 6)])
    a = [ProxyQueue("broker-a", i) for i in range(2)]
    b = [ProxyQueue("broker-b", i) for i in range(2)]
    sends = [SendVerdict(0, 0, True, [Attempt(1, True, 0, 10)], None, [a[0]]),
             SendVerdict(1, 100, False, [Attempt(1, False, 100, 3_100),
                                         Attempt(2, False, 3_100, 6_100)], None, []),
             SendVerdict(2, 7_000, True, [Attempt(1, True, 7_000, 7_010)], None, [b[1]])]
    _proxy_check(sends, queues, {}, first_load_ms=0)
    assert [s.proxy for s in sends] == ["inferred", "unobserved", "agree"]
    _outcomes(sends, {})
    assert [[x.outcome for x in s.attempts] for s in sends] == [
        ["ok"], ["unknown_queue", "unknown_queue"], ["ok"]]


def test_a_failed_receive_on_a_running_broker_is_unexplained(tmp_path: Path) -> None:
    """``grpc-clients-5`` with a late call of s1 (broker-a resumed long before) turned into a
    failed one: ``error_unexplained``, counted in ``unexplained``; its first failed call, made
    while broker-a was paused, stays ``error_paused``."""
    from rocketlb_core.trace.grpc_consumer_agreement import simple_consumer_agreement

    folder = tmp_path / "rec"
    shutil.copytree(data_path("live") / "grpc" / "grpc-clients-5", folder)
    path = folder / "receives" / "s1.jsonl.gz"
    rows = [json.loads(x) for x in gzip.decompress(path.read_bytes()).splitlines()]
    before = simple_consumer_agreement(folder, "s1")
    call = [c for c in rows if c.get("messages")][-1]
    call.pop("messages")
    call["error"] = "StatusRuntimeException: UNAVAILABLE"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    after = simple_consumer_agreement(folder, "s1")
    assert after["verdicts"]["error_unexplained"] == 1
    assert after["verdicts"]["error_paused"] == before["verdicts"]["error_paused"] == 1
    assert after["unexplained"] == before["unexplained"] + 1 == 1
    assert [d["call"] for d in after["unexplained_detail"]] == [call["call"]]
