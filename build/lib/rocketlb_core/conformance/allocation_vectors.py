"""Allocation conformance: ``allocation-*.jsonl`` groups and the allocation classes of
``upstream-tests.json`` (schema in the vectors' README).

Every case calls the per-client entry point exactly as upstream is called (same arguments, same
order) and compares the returned list element by element; errors compare type and, for
``IllegalArgumentException``, the exact message. ``rebalance_view`` cases first sort the raw
inputs the way ``RebalanceImpl`` does and check that sort too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from rocketlb_core.conformance.report import Report
from rocketlb_core.consumer.base import AllocateStrategy, AllocationArgumentError, rebalance_view
from rocketlb_core.consumer.consistent_hash import consistent_hash, java_string_hashcode, md5_hash
from rocketlb_core.consumer.nearby import MapResolver, PrefixResolver, machine_room_nearby
from rocketlb_core.consumer.pop import Pop
from rocketlb_core.consumer.registry import REGISTRY, make
from rocketlb_core.consumer.strategies import avg
from rocketlb_core.javamath import JavaNullPointerError
from rocketlb_core.model import MessageQueue

ERROR_TYPES: dict[str, type[Exception]] = {
    "IllegalArgumentException": AllocationArgumentError,
    "NullPointerException": JavaNullPointerError,
}
HASHES = {"md5": md5_hash, "java_string_hashcode": java_string_hashcode}


def _mqs(values: Sequence[Sequence[Any]] | None) -> list[MessageQueue] | None:
    return None if values is None else [MessageQueue(t, b, q) for t, b, q in values]


VECTOR_PARAMS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "CONFIG": lambda p: {"message_queues": _mqs(p.get("config_list"))},
    "MACHINE_ROOM": lambda p: {"consumeridcs": p.get("consumeridcs")},
    "CONSISTENT_HASH": lambda p: {"virtual_nodes": p.get("virtual_node_cnt"),
                                  "hash_function": HASHES[p.get("hash", "md5")]},
    "MACHINE_ROOM_NEARBY": lambda p: {
        "inner": strategy_from(p["inner"]["strategy"], p["inner"]["params"]),
        "resolver": MapResolver(p["broker_room"], p["consumer_room"])},
}
"""A vector's upstream parameter names -> the registry factory's (none: no parameters)."""


def strategy_from(name: str, params: dict[str, Any]) -> AllocateStrategy:
    """Build a strategy from a vector's ``strategy`` and ``params`` (may raise as upstream):
    the registry's, or pop's ``allocate4Pop`` wrapper around one."""
    if name == "POP":
        inner = strategy_from(params["inner"]["strategy"], params["inner"]["params"])
        return Pop(inner, params["pop_share_queue_num"])
    if name not in REGISTRY:
        raise ValueError(f"unknown strategy {name!r}")
    translate = VECTOR_PARAMS.get(name)
    return make(name, **(translate(params) if translate is not None else {}))


def _outcome(make: Callable[[], AllocateStrategy], group: str, cid: str | None,
             mq_all: list[MessageQueue] | None, cid_all: list[str] | None) -> Any:
    try:
        result = make().allocate(group, cid, mq_all, cid_all)
    except (AllocationArgumentError, JavaNullPointerError) as exc:
        return exc
    return None if result is None else [q.as_list() for q in result]


def _compare(report: Report, label: str, got: Any, case: dict[str, Any]) -> None:
    if "error" in case:
        want = case["error"]
        etype = ERROR_TYPES[want["type"]]
        ok = isinstance(got, etype) and (etype is JavaNullPointerError
                                         or str(got) == want["message"])
        report.add(label, ok, f"expected {want['type']}({want['message']!r}), got {got!r}")
    else:
        if isinstance(got, Exception):
            got = f"{type(got).__name__}: {got}"
        report.check(label, got, case["result"])


def run_group(obj: dict[str, Any], report: Report) -> None:
    name, params, group = obj["strategy"], obj["params"], obj["consumer_group"]

    def make() -> AllocateStrategy:
        return strategy_from(name, params)

    mq_all, cid_all = _mqs(obj["mq_all"]), obj["cid_all"]
    for case in obj["cases"]:
        cid = case["current_cid"]
        _compare(report, f"{obj['id']} cid={cid!r}",
                 _outcome(make, group, cid, mq_all, cid_all), case)
    view = obj.get("rebalance_view")
    if view:
        assert mq_all is not None and cid_all is not None
        sorted_mq, sorted_cid = rebalance_view(mq_all, cid_all)
        same = ([q.as_list() for q in sorted_mq] == view["mq_all"]
                and sorted_cid == view["cid_all"])
        for case in view["cases"]:
            label = f"{obj['id']} rebalance_view cid={case['current_cid']!r}"
            if not same:
                report.add(label, False, "RebalanceImpl's sort of the inputs differs")
                continue
            _compare(report, label, _outcome(make, group, case["current_cid"], sorted_mq,
                                             sorted_cid), case)


# ---------------------------------------------------------------- upstream-tests.json
def _ids_by_cid(strategy: AllocateStrategy, mq_all: list[MessageQueue], cid_all: list[str],
                group: str = "") -> dict[str, list[int]]:
    return {cid: [q.queue_id for q in strategy.allocate(group, cid, mq_all, cid_all) or []]
            for cid in cid_all}


def _simple_case(test: dict[str, Any], report: Report) -> None:
    for case in test["cases"]:
        inp = case["inputs"]
        label = f"{test['test_class']} {case['name']}"
        params = {k: v for k, v in inp.items() if k in ("config_list", "consumeridcs",
                                                         "virtual_node_cnt")}
        strategy = strategy_from(inp["strategy"], params)
        mq_all, cid_all = _mqs(inp["mq_all"]), inp["cid_all"]
        asserted = case["asserted"]
        if case["kind"] == "exception":
            want = asserted.get("error") or {
                "type": asserted["error_type"],
                "message": case.get("upstream_code_output", {}).get("message", "")}
            def made(s: AllocateStrategy = strategy) -> AllocateStrategy:
                return s

            got = _outcome(made, inp.get("consumer_group", ""), inp["current_cid"], mq_all,
                           cid_all)
            _compare(report, label, got, {"error": want})
        elif "result_size" in asserted:
            got_list = strategy.allocate("", inp["current_cid"], mq_all, cid_all) or []
            report.check(label, len(got_list), asserted["result_size"])
        else:
            assert mq_all is not None
            want_ids = asserted.get("queue_ids_by_cid") or \
                case["upstream_code_output"]["queue_ids_by_cid"]
            got_ids = _ids_by_cid(strategy, mq_all, cid_all, inp.get("consumer_group", ""))
            sizes = asserted.get("result_sizes_in_cid_order")
            ok = got_ids == want_ids and (sizes is None or
                                          [len(got_ids[c]) for c in cid_all] == sizes)
            report.add(label, ok, f"expected {want_ids}, got {got_ids}")


def _ch_properties(strategy: AllocateStrategy, mq_all: list[MessageQueue],
                   cid_all: list[str]) -> tuple[bool, list[dict[str, list[int]]]]:
    """testAllocate's three properties; returns (ok, [initial, after remove, after add])."""
    def owners(cids: list[str]) -> dict[MessageQueue, str]:
        own: dict[MessageQueue, str] = {}
        for cid in cids:
            for q in strategy.allocate("testConsumerGroup", cid, mq_all, cids) or []:
                if q in own:
                    return {}
                own[q] = cid
        return own
    initial = owners(cid_all)
    removed = owners(cid_all[1:])
    added = owners([*cid_all[1:], "CID-NEW"])
    ok = all(len(o) == len(mq_all) for o in (initial, removed, added))
    ok = ok and all(removed[q] == c for q, c in initial.items() if c != cid_all[0])
    ok = ok and all(removed[q] == c for q, c in added.items() if c != "CID-NEW")
    snaps = [{c: [q.queue_id for q in mq_all if o.get(q) == c] for c in cids}
             for o, cids in ((initial, cid_all), (removed, cid_all[1:]),
                             (added, [*cid_all[1:], "CID-NEW"]))]
    return ok, snaps


def consistent_hash_test(test: dict[str, Any], report: Report) -> None:
    cls = test["test_class"]
    for case in test["cases"]:
        label = f"{cls} {case['name']}"
        if case["kind"] == "property":
            inp = case["inputs"]
            strategy = consistent_hash(inp["virtual_node_cnt"])
            mq_all = _mqs(inp["mq_all"])
            assert mq_all is not None
            ok, snaps = _ch_properties(strategy, mq_all, inp["cid_all"])
            out = case["upstream_code_output"]
            want = [out["queue_ids_by_cid_initial"], out["queue_ids_by_cid_after_remove"],
                    out["queue_ids_by_cid_after_add"]]
            report.add(label, ok and snaps == want, f"properties {ok}, snapshots differ: {snaps}")
        elif case["kind"] == "property-random":
            inp = case["inputs"]
            rng = random.Random(100)
            ok = True
            for _ in range(inp["loop"]):
                queues = [MessageQueue("topic_test", "brokerName", i)
                          for i in range(rng.randint(1, 20))]
                cids = [f"CID-{i}" for i in range(rng.randint(1, 20))]
                ok = ok and _ch_properties(consistent_hash(inp["virtual_node_cnt"]), queues,
                                           cids)[0]
            report.add(label + " (seeded)", ok, "a property failed on a seeded random case")
        else:
            _simple_case({"test_class": cls, "cases": [case]}, report)


def _nearby_fixture(brokers: int, consumer_rooms: int, queues: int,
                    consumers: int) -> tuple[list[MessageQueue], list[str]]:
    mq_all = [MessageQueue("topic_test", f"IDC{k}-brokerName", i)
              for k in range(1, brokers + 1) for i in range(queues)]
    cid_all = [f"IDC{k}-CID-{i}" for k in range(1, consumer_rooms + 1) for i in range(consumers)]
    return mq_all, cid_all


def _nearby_ok(mq_all: list[MessageQueue], cid_all: list[str]) -> bool:
    strategy = machine_room_nearby(avg(), PrefixResolver("-"))
    rooms_with_consumers = {c.split("-")[0] for c in cid_all}
    seen: list[MessageQueue] = []
    for cid in cid_all:
        share = strategy.allocate("Test-C-G", cid, mq_all, cid_all)
        room = cid.split("-")[0]
        for q in share:
            q_room = q.broker_name.split("-")[0]
            if q_room in rooms_with_consumers and q_room != room:
                return False
        seen.extend(share)
    if not cid_all:
        return True
    return sorted(seen) == sorted(mq_all)


def nearby_test(test: dict[str, Any], report: Report) -> None:
    cls = test["test_class"]
    for case in test["cases"]:
        label = f"{cls} {case['name']}"
        inp = case["inputs"]
        if case["kind"] == "property-random":
            rng = random.Random(10)
            ok = True
            for _ in range(inp["loop"]):
                b, c = rng.randint(1, 10), rng.randint(1, 10)
                ok = ok and _nearby_ok(*_nearby_fixture(b, c, rng.randint(1, 100) // b + 1,
                                                        rng.randint(1, 200) // c + 1))
            report.add(label + " (seeded)", ok, "a property failed on a seeded random case")
            continue
        if "idc_count" in inp:
            args = (inp["idc_count"], inp["idc_count"])
        elif "extra_consumer_idcs" in inp:
            args = (inp["broker_idc_count"], inp["broker_idc_count"] + inp["extra_consumer_idcs"])
        else:
            fewer = inp["consumer_idcs_fewer_by"]
            args = (inp["broker_idc_count"], inp["broker_idc_count"] - fewer)
        mq_all, cid_all = _nearby_fixture(*args, inp["queues_per_idc"], inp["consumers_per_idc"])
        report.add(label, _nearby_ok(mq_all, cid_all), "a machine-room property failed")


UPSTREAM_HANDLERS: dict[str, Callable[[dict[str, Any], Report], None]] = {
    "AllocateMessageQueueAveragelyTest": _simple_case,
    "AllocateMessageQueueAveragelyByCircleTest": _simple_case,
    "AllocateMessageQueueByConfigTest": _simple_case,
    "AllocateMessageQueueByMachineRoomTest": _simple_case,
    "AllocateMessageQueueConsitentHashTest": consistent_hash_test,
    "AllocateMachineRoomNearByTest": nearby_test,
}


def _rebalance_push(test: dict[str, Any], report: Report) -> None:
    from rocketlb_core.consumer.rebalance import (
        OffsetLookupError,
        compute_pull_from_where,
        pull_threshold_for_queue,
    )

    cls = test["test_class"]
    lite = cls == "RebalanceLitePullImplTest"
    for case in test["cases"]:
        label = f"{cls} {case['name']}"
        if case.get("kind") == "table":
            for i, row in enumerate(case["rows"]):
                def run(line: str, row: dict[str, Any] = row) -> Any:
                    try:
                        return compute_pull_from_where(
                            row["consumeFromWhere"], row["readOffset"], row.get("topic", "topic1"),
                            max_offset=row.get("maxOffset", 0),
                            search_offset=row.get("searchOffset", 0), line=line, lite_pull=lite)
                    except OffsetLookupError:
                        return "throws"
                if "asserted" in row:
                    report.check(f"{label} row {i}", run("4.9.8"), row["asserted"])
                    if row["readOffset"] >= -1:
                        report.check(f"{label} row {i} (5.x)", run("5.3.3"), row["asserted"])
                else:
                    report.check(f"{label} row {i} (4.9.x)", run("4.9.8"), row["asserted_4.9.x"])
                    report.check(f"{label} row {i} (5.x)", run("5.3.3"), "throws")
        elif "assigned_queue_counts" in case.get("inputs", {}):
            inp = case["inputs"]
            start = inp.get("pullThresholdForQueue", inp.get("pullThresholdSizeForQueue"))
            topic = inp.get("then pullThresholdForTopic", inp.get("then pullThresholdSizeForTopic"))
            counts = inp["assigned_queue_counts"]
            got = [start] + [pull_threshold_for_queue(topic, start, n) for n in counts[1:]]
            want = next(iter(case["asserted"].values()))
            report.check(label, got, want)
        else:
            info = {f"after_{n}_queues": {k: str(pull_threshold_for_queue(1024, 1024, n))
                                          for k in ("pullThresholdSizeForQueue",
                                                    "pullThresholdForQueue")} for n in (2, 3)}
            report.check(label, info, case["asserted"])


UPSTREAM_HANDLERS["RebalancePushImplTest"] = _rebalance_push
UPSTREAM_HANDLERS["RebalanceLitePullImplTest"] = _rebalance_push
