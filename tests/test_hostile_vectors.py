"""Hostile values inside conformance vectors (issue 44, items 2 and 6): a record whose values ask
for unbounded work or memory, or that a port cannot compute with (a zero to divide by, a
not-a-number), is refused before it runs, by exit 2 naming the file, the line and the field;
never exit 1, a traceback, a hang or gigabytes.

The named cases are the ones a hostile round found (each took minutes or GB, or crashed, before
``conformance.bounds``); the family below writes a hostile number into every integer of one
record of each shipped vector file, every family the runner reads (RocketMQ's producer and
allocation vectors, the gRPC clients' and the Proxy's, Kafka's assignors and partitioner).
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import run_command
from tests.test_fuzz import TRIED, _capped

VECTORS = Path(__file__).parent / "vectors"
FILES = sorted(p.relative_to(VECTORS).as_posix()
               for p in VECTORS.rglob("*.jsonl.gz"))
HOSTILE = [0, -1, -(2**31), 2**31 - 1, 2**31, 10**9, 2**63 - 1, 2**64, -(2**63) - 1, 10**30]


def _first(name: str) -> dict[str, Any]:
    with gzip.open(VECTORS / name, "rt", encoding="utf-8") as fh:
        obj = json.loads(fh.readline())
    assert isinstance(obj, dict)
    return obj


def _write(tmp: Path, obj: Any, name: str = "v.jsonl") -> Path:
    path = tmp / name
    path.write_text(json.dumps(obj) + "\n", encoding="utf-8")
    return path


def _refused(path: Path, field: str) -> None:
    status, _, err = run_command(["conformance", str(path)], seconds=60)
    assert status == 2, err[-2000:]
    assert f"{path}, line 1" in err, err
    assert field in err, err


# ---------------------------------------------------------------- the cases a hostile round found

def test_a_kafka_case_of_a_billion_partitions(tmp_path: Path) -> None:
    obj = _first("kafka/kafka-range-4.3.1.jsonl.gz")
    obj["topics"] = [[obj["topics"][0][0], 10**9]]
    _refused(_write(tmp_path, obj), "topics[0]")


def test_a_grpc_send_of_a_billion_attempts(tmp_path: Path) -> None:
    obj = _first("grpc/grpc-send-5.0.8.jsonl.gz")
    obj["max_attempts"] = 10**9
    _refused(_write(tmp_path, obj), "max_attempts")


def test_a_proxy_route_of_a_billion_queues(tmp_path: Path) -> None:
    obj = _first("grpc/proxy-group-queue-5.5.0.jsonl.gz")
    obj["queue_datas"][0][1] = 10**9
    _refused(_write(tmp_path, obj), "queue_datas[0][1]")


def test_a_message_group_of_100_mib_in_a_small_gzip(tmp_path: Path) -> None:
    obj = _first("grpc/grpc-siphash-5.0.8.jsonl.gz")
    obj["group"] = "x" * (100 << 20)
    path = tmp_path / "group.jsonl.gz"
    path.write_bytes(gzip.compress(json.dumps(obj).encode() + b"\n", compresslevel=6))
    assert path.stat().st_size < 200_000
    done = _capped(["conformance", str(path)], memory=2 << 30, seconds=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "group: a string of" in done.stderr


@pytest.mark.parametrize(("name", "change", "field"), [
    ("grpc/grpc-siphash-5.0.8.jsonl.gz", lambda o: o.update(sizes=[0]), "sizes[0]"),
    ("kafka/kafka-partitioner-4.3.1.jsonl.gz",
     lambda o: o.update(sticky_batch_size=0), "sticky_batch_size"),
    ("kafka/kafka-partitioner-4.3.1.jsonl.gz",
     lambda o: [s.update(partitions=0) for s in o["steps"] if "partitions" in s], "partitions"),
    ("allocation-consistent-hash.jsonl.gz",
     lambda o: o["params"].update(virtual_node_cnt=10**9), "virtual_node_cnt"),
])
def test_a_count_the_port_divides_by_or_loops_over(tmp_path: Path, name: str, change: Any,
                                                   field: str) -> None:
    obj = _first(name)
    change(obj)
    _refused(_write(tmp_path, obj), field)


def _go_record(family: str, strategy: str | None = None) -> dict[str, Any]:
    with gzip.open(VECTORS / "go" / "go-client-v2.1.2.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if obj["go"] == family and strategy in (None, obj.get("strategy")):
                assert isinstance(obj, dict)
                return obj
    raise AssertionError(f"no {family} {strategy} record")


@pytest.mark.parametrize(("family", "strategy", "change", "field"), [
    ("allocate", "consistent-hash", lambda o: o["params"].update(virtual_nodes=10**9),
     "params.virtual_nodes"),
    ("route", None, lambda o: o["queue_datas"].append(["b", 1, 10**9, 6]), "queue_datas["),
    ("route", None, lambda o: o.update(order_topic_conf="broker-a:99999999999999999999"),
     "order_topic_conf"),
    ("selector", None, lambda o: o["ops"][0].update(route=10**6), "ops[0].route"),
    ("selector", None, lambda o: o["ops"][0].update(route=-1), "ops[0].route"),
    ("allocate", "averagely", lambda o: o["mq_all"].append(["T", "b"]), "mq_all["),
    ("selector", None, lambda o: o["routes"][0].append(["T", 7, 0]), "routes[0]["),
])
def test_a_go_client_record_that_asks_too_much_or_is_malformed(
        tmp_path: Path, family: str, strategy: str | None, change: Any, field: str) -> None:
    obj = _go_record(family, strategy)
    change(obj)
    _refused(_write(tmp_path, obj), field)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_constants_are_not_numbers(tmp_path: Path, constant: str) -> None:
    obj = _first("grpc/grpc-send-5.0.8.jsonl.gz")
    obj["max_attempts"] = "@"
    text = json.dumps(obj).replace('"max_attempts": "@"', f'"max_attempts": {constant}', 1)
    assert constant in text
    path = tmp_path / "v.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    status, _, err = run_command(["conformance", str(path)], seconds=60)
    assert status == 2, err
    assert "not a JSON number" in err


def test_the_shipped_vectors_are_within_the_bounds() -> None:
    """The bounds refuse none of upstream's own cases (the first 200 of each file)."""
    from rocketlb_core.conformance.bounds import check_record
    from rocketlb_core.conformance.runner import _kind_of

    for name in FILES:
        with gzip.open(VECTORS / name, "rt", encoding="utf-8") as fh:
            for _, line in zip(range(200), fh, strict=False):
                obj = json.loads(line)
                kind = _kind_of(obj)
                assert kind is not None, name
                assert check_record(kind, obj) is None, (name, obj.get("id"))


# ---------------------------------------------------------------- the family: every integer

def _int_paths(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(obj, bool):
        return []
    if isinstance(obj, int):
        return [path]
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) \
        else ()
    return [p for k, v in items for p in _int_paths(v, (*path, k))]


def _set(obj: Any, path: tuple[Any, ...], value: int) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


@settings(max_examples=120, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(FILES), pick=st.integers(min_value=0), value=st.sampled_from(HOSTILE),
       seed=st.integers(min_value=0, max_value=2**32))
def test_a_hostile_number_anywhere_in_a_record(tmp_path_factory: pytest.TempPathFactory,
                                               name: str, pick: int, value: int,
                                               seed: int) -> None:
    obj = _first(name)
    paths = _int_paths(obj)
    if not paths:
        return
    rng = random.Random(seed)
    for path in {paths[pick % len(paths)], rng.choice(paths)}:
        _set(obj, path, value)
    path = _write(tmp_path_factory.mktemp("vec"), obj)
    status, _, err = run_command(["conformance", str(path)], seconds=60)
    TRIED["vectors: a hostile number"] += 1
    if status == 2:
        TRIED["vectors: a hostile number: refused"] += 1
    assert "Traceback" not in err, err[-3000:]
    assert status in (0, 2, 3), f"{name}: status {status}: {err[-3000:]}"
