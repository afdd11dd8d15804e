"""``SelectMessageQueueByHash`` (``rocketlb_core.producer.selectors``) against the JDK itself:
the same keys and queue counts through Java's own ``hashCode`` and ``%``/``Math.abs`` in a small
program (``tests/java/SelectByHash.java``, run with the machine's Java 17), on both upstream
rules (4.9.8/5.3.3, and 4.7.1's abs-first rule with its index error)."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from rocketlb_core.javamath import JavaIndexOutOfBoundsError
from rocketlb_core.model import MessageQueue
from rocketlb_core.producer.selectors import java_hash, keys_moved, select_by_hash

JAVA_SOURCE = Path(__file__).parent / "java" / "SelectByHash.java"
COUNTS = (1, 2, 3, 5, 7, 8, 16, 24)


def _keys(seed: int) -> list[str | int]:
    rng = random.Random(seed)
    alphabet = "abcXYZ0189-_ é订单😀\u0000"
    keys: list[str | int] = ["", "polygenelubricants", "order-1", "TopicTest"]
    keys += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
             for _ in range(1500)]
    keys += [rng.randrange(-(1 << 31), 1 << 31) for _ in range(300)]
    keys += [rng.randrange(-(1 << 63), 1 << 63) for _ in range(300)]
    keys += [-(1 << 31), (1 << 31) - 1, 1 << 31, -(1 << 63), 0, -1]
    return keys


def _line(key: str | int) -> str:
    if isinstance(key, str):
        return f"s:{key}"
    return f"i:{key}" if -(1 << 31) <= key < (1 << 31) else f"l:{key}"


@pytest.mark.jvm
def test_select_by_hash_matches_the_jdk_on_both_rules(tmp_path: Path) -> None:
    java = shutil.which("java")
    assert java, "Java 17 is part of the project's machines (README); install a JDK"
    keys = _keys(7)
    keys_file = tmp_path / "keys.txt"
    keys_file.write_text("\n".join(_line(k) for k in keys) + "\n", encoding="utf-8")
    out = subprocess.run([java, str(JAVA_SOURCE), str(keys_file), *map(str, COUNTS)],
                         capture_output=True, text=True, check=True, timeout=300).stdout.split("\n")
    rows = iter(out)
    checked = errors = 0
    for key in keys:
        for n in COUNTS:
            queues = [MessageQueue("T", "b", i) for i in range(n)]
            new, old = next(rows).split()
            assert select_by_hash(queues, key).queue_id == int(new), (key, n)
            if old == "X":
                errors += 1
                with pytest.raises(JavaIndexOutOfBoundsError):
                    select_by_hash(queues, key, line="4.7.1")
            else:
                assert select_by_hash(queues, key, line="4.7.1").queue_id == int(old), (key, n)
            checked += 1
    assert checked == len(keys) * len(COUNTS)
    assert errors > 0          # Integer.MIN_VALUE hash codes, with a count that does not divide it


def test_java_hash_refuses_what_has_no_single_java_type() -> None:
    with pytest.raises(TypeError):
        java_hash(True)
    with pytest.raises(TypeError):
        java_hash(1.5)  # type: ignore[arg-type]


def test_only_the_leaving_brokers_keys_move_when_a_broker_leaves() -> None:
    a = [MessageQueue("T", "broker-a", i) for i in range(4)]
    b = [MessageQueue("T", "broker-b", i) for i in range(4)]
    keys = [f"order-{i}" for i in range(4000)]
    moved, total = keys_moved(keys, a + b, b)
    on_a = sum(select_by_hash(a + b, k).broker_name == "broker-a" for k in keys)
    assert (moved, total) == (on_a, 4000)
    assert keys_moved(keys, a + b, a + b) == (0, 4000)
