"""Java arithmetic helpers. Expected values were printed by a real JVM (OpenJDK 17)."""

from __future__ import annotations

import functools
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from rocketlb_core.javamath import (
    INT_MAX,
    INT_MIN,
    JavaHashMap,
    jabs,
    java_copy_capacity,
    java_copy_threshold,
    java_hash_order,
    java_split,
    java_spread,
    java_string_compare,
    java_string_hash,
    java_string_key,
    jdiv,
    jmod,
    mask31,
    utf16_units,
    wrap32,
    wrap64,
)


@pytest.mark.parametrize(("x", "expected"), [
    (0, 0), (INT_MAX, INT_MAX), (INT_MAX + 1, INT_MIN), (INT_MIN - 1, INT_MAX),
    (2**32, 0), (2**32 + 5, 5), (-(2**32) - 1, -1), (3 * 2**31, INT_MIN),
])
def test_wrap32(x: int, expected: int) -> None:
    assert wrap32(x) == expected


def test_wrap64() -> None:
    assert wrap64(2**63) == -(2**63)
    assert wrap64(-(2**63) - 1) == 2**63 - 1


def test_abs_of_min_int_stays_negative() -> None:
    assert jabs(INT_MIN) == INT_MIN
    assert jabs(INT_MIN + 1) == INT_MAX
    assert jabs(-5) == 5


@pytest.mark.parametrize(("a", "b", "expected"), [
    (7, 3, 1), (-7, 3, -1), (7, -3, 1), (-7, -3, -1), (INT_MIN, 8, 0), (INT_MIN, 7, -2),
    (INT_MIN, 10, -8), (-1, 4, -1),
])
def test_truncating_remainder(a: int, b: int, expected: int) -> None:
    assert jmod(a, b) == expected


def test_remainder_and_division_by_zero_raise() -> None:
    with pytest.raises(ZeroDivisionError):
        jmod(1, 0)
    with pytest.raises(ZeroDivisionError):
        jdiv(1, 0)


def test_truncating_division() -> None:
    assert (jdiv(-7, 2), jdiv(7, -2), jdiv(7, 2)) == (-3, -3, 3)


def test_mask31() -> None:
    assert mask31(INT_MIN) == 0
    assert mask31(-1) == INT_MAX
    assert mask31(wrap32(INT_MAX + 1)) == 0


def test_utf16_order_differs_from_code_point_order() -> None:
    # U+FF21 (fullwidth A) is above the surrogate range, U+1F600 is encoded as D83D DE00.
    high, astral = "\uff21", "\U0001f600"
    assert high < astral                              # Python: code points
    assert java_string_compare(astral, high) == -1    # Java: code units
    assert sorted([high, astral], key=java_string_key) == [astral, high]
    assert java_string_compare("a", "ab") == -1
    assert java_string_compare("b", "ab") == 1
    assert java_string_compare("x", "x") == 0


@pytest.mark.parametrize(("s", "expected"), [
    ("RocketMQ", -453554280),            # "RocketMQ".hashCode() on OpenJDK 17
    ("\U0001f600x", 54959989),           # a surrogate pair, then 'x'
    ("", 0),
    ("polygenelubricants", INT_MIN),     # the classic string whose hash is Integer.MIN_VALUE
])
def test_java_string_hash(s: str, expected: int) -> None:
    assert java_string_hash(s) == expected


@pytest.mark.parametrize(("s", "parts"), [
    ("room1@broker-a", ["room1", "broker-a"]),
    ("room1@broker-a@", ["room1", "broker-a"]),   # trailing empty piece dropped
    ("@broker", ["", "broker"]),                   # leading empty piece kept
    ("room1@", ["room1"]),
    ("a@b@c", ["a", "b", "c"]),
    ("@", []),
    ("@@", []),
    ("", [""]),
    ("plain", ["plain"]),
])
def test_java_split(s: str, parts: list[str]) -> None:
    assert java_split(s, "@") == parts


# ------------------------------------------------------------------ java.util.HashMap's order

HASHMAP_JAVA = Path(__file__).resolve().parents[1] / "rocketlb_core" / "kafka" / "java" / \
    "HashMapOrder.java"


def _units_hex(s: str) -> str:
    return "".join(f"{u:04x}" for u in utf16_units(s))


def _from_hex(h: str) -> str:
    raw = bytes.fromhex(h)
    return raw.decode("utf-16-be", "surrogatepass")


def _equal_hash_keys(rnd: random.Random, blocks: int, prefix: str = "",
                     suffix: str = "") -> list[str]:
    """Strings of ``blocks`` "Aa"/"BB" blocks ("Aa" and "BB" have the same ``hashCode``): all
    ``2 ** blocks`` of them share one hash (with the same prefix and suffix), in random order."""
    keys = [prefix + "".join("BB" if i >> b & 1 else "Aa" for b in range(blocks)) + suffix
            for i in range(2 ** blocks)]
    rnd.shuffle(keys)
    return keys


def _same_bucket_keys(rnd: random.Random, count: int, bits: int, base: str) -> list[str]:
    """``count`` strings with different hashes whose spread hashes agree on their low ``bits``
    bits: one bin in every table of up to ``2 ** bits`` buckets."""
    want = rnd.randrange(1 << bits)
    mask = (1 << bits) - 1
    out: dict[str, None] = {}
    while len(out) < count:
        s = base + "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(4))
        if java_spread(java_string_hash(s)) & mask == want:
            out[s] = None
    return list(out)


def _random_keys(rnd: random.Random, count: int) -> list[str]:
    alphabet = "abcXYZ019-_.\u00e9\u4e2d\U0001f600\uff21"
    return list(dict.fromkeys("".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 9)))
                              for _ in range(count)))


@functools.lru_cache(maxsize=1)
def _hashmap_sequences(seed: int = 20261125) -> list[tuple[int | None, list[tuple[str, str]]]]:
    """Insertion sequences built to collide: (initial capacity or None, [(op, key), ...]), op
    ``put`` or ``cia``; every table size from 16 to 1024 and beyond, bins of one hash (which
    Java orders by ``compareTo`` once treeified), bins of different hashes (by hash), repeats,
    ``put`` only, ``computeIfAbsent`` only, both mixed, and removals."""
    rnd = random.Random(seed)
    out: list[tuple[int | None, list[tuple[str, str]]]] = []
    for case in range(288):
        keys: list[str] = []
        kind = case % 6
        if kind == 0:       # one equal-hash family, 2 to 512 keys
            keys = _equal_hash_keys(rnd, rnd.randint(1, 9))
        elif kind == 1:     # several equal-hash families, and noise
            for _ in range(rnd.randint(1, 5)):
                keys += _equal_hash_keys(rnd, rnd.randint(2, 7), rnd.choice(["", "m-", "x"]),
                                         rnd.choice(["", "-1", "zz"]))
            keys += _random_keys(rnd, rnd.randint(0, 300))
        elif kind == 2:     # one bucket, different hashes
            keys = _same_bucket_keys(rnd, rnd.randint(2, 120), rnd.randint(4, 10), "t-")
        elif kind == 3:     # both kinds in one map
            keys = (_same_bucket_keys(rnd, rnd.randint(5, 60), rnd.randint(5, 9), "k")
                    + _equal_hash_keys(rnd, rnd.randint(3, 6), "k")
                    + _random_keys(rnd, rnd.randint(0, 200)))
        elif kind == 4:     # plain random keys, table sizes 16 to 2048
            keys = _random_keys(rnd, int(2 ** rnd.uniform(0, 11)))
        else:               # the same bucket as an equal-hash family
            fam = _equal_hash_keys(rnd, rnd.randint(3, 5), "q")
            keys = fam + _same_bucket_keys(rnd, rnd.randint(5, 40), 6, "q")
        keys = list(dict.fromkeys(keys))
        rnd.shuffle(keys)
        if rnd.random() < 0.3:          # repeats (computeIfAbsent on a present key may resize)
            keys += rnd.sample(keys, min(len(keys), rnd.randint(1, 20)))
            rnd.shuffle(keys)
        style = case // 6 % 4
        ops = [("put" if style in (0, 3) or (style == 2 and rnd.random() < 0.5) else "cia", k)
               for k in keys]
        if style == 3:                  # removals (from tree bins too), then more insertions
            gone = rnd.sample(keys, rnd.randint(0, len(keys)))
            ops += [("rm", k) for k in gone]
            ops += [(rnd.choice(["put", "cia"]), k) for k in rnd.sample(gone, len(gone) // 2)]
            if rnd.random() < 0.5:
                ops += [("rm", k) for k in rnd.sample(keys, len(keys) // 2)]
        capacity = rnd.choice([None, None, None, 0, 1, 5, 16, 33, 100, 700])
        out.append((capacity, ops))
    return out


def _model(capacity: int | None, ops: list[tuple[str, str]]) -> JavaHashMap:
    m = JavaHashMap(capacity)
    for op, key in ops:
        {"put": m.put, "cia": m.compute_if_absent, "rm": m.remove}[op](key)
    return m


def test_hashmap_sequences_reach_trees_and_every_table_size() -> None:
    """The sequences exercise what the model must get right: tree bins (by hash and by
    compareTo), resizes of tree bins, and tables from 16 to 2048 buckets."""
    sizes, trees = set(), 0
    for capacity, ops in _hashmap_sequences():
        m = _model(capacity, ops)
        sizes.add(m.capacity)
        trees += m.tree_bins() > 0
        assert not m.undefined
    assert {16, 32, 64, 128, 256, 512, 1024, 2048} <= sizes
    assert trees >= 20


@pytest.mark.jvm
def test_hashmap_order_is_what_the_jvm_prints() -> None:
    """``JavaHashMap`` against ``java.util.HashMap`` of the JVM on this machine (Java 17):
    ``put`` only, ``computeIfAbsent`` only and mixed, removals, colliding keys, tree bins."""
    java = shutil.which("java")
    assert java is not None, "no java on PATH: this test compares with a real JVM (CI has one)"
    sequences = _hashmap_sequences()
    lines: list[str] = []
    for capacity, ops in sequences:
        lines.append("new" if capacity is None else f"new {capacity}")
        lines += [f"{op} {_units_hex(k)}" for op, k in ops]
        lines.append("end")
    proc = subprocess.run([java, str(HASHMAP_JAVA)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=300, check=True)
    printed = proc.stdout.splitlines()
    assert len(printed) == len(sequences)
    for n, ((capacity, ops), line) in enumerate(zip(sequences, printed, strict=True)):
        want = [_from_hex(h) for h in line.split("\t")] if line else []
        assert _model(capacity, ops).keys() == want, f"sequence {n}"


def test_compute_if_absent_grows_the_table_at_the_next_call() -> None:
    """``computeIfAbsent`` resizes at the start of the call that finds the size past the
    threshold: after 13 keys the table still has 16 buckets, ``put`` has 32 (issue 33's
    ``RangeAssignor`` 3.4 case: the order Kafka printed for topics t1 ... t13)."""
    topics = [f"t{i}" for i in range(1, 14)]
    m = _model(None, [("cia", t) for t in topics])
    assert m.capacity == 16
    assert m.keys() == ["t4", "t5", "t10", "t6", "t7", "t12", "t8", "t11", "t9", "t13",
                        "t1", "t2", "t3"]
    assert _model(None, [("put", t) for t in topics]).capacity == 32
    m.compute_if_absent("t1")               # present: the call still resizes
    assert m.capacity == 32


def test_eight_equal_hashes_stay_a_list_and_more_become_a_tree() -> None:
    keys = ["AaAaAa", "AaAaBB", "AaBBAa", "AaBBBB", "BBAaAa", "BBAaBB", "BBBBAa", "BBBBBB"]
    assert len({java_string_hash(k) for k in keys}) == 1
    assert java_hash_order(keys) == keys
    many = _equal_hash_keys(random.Random(1), 7)            # 128 keys, one hash: a tree
    m = _model(None, [("put", k) for k in many])
    assert m.capacity == 256
    assert m.tree_bins() == 1
    assert sorted(m.keys()) == sorted(many)


# ------------------------------------------------------------------ copies: the JVM matters


def _javas() -> dict[int, str]:
    from rocketlb_core.kafka.vectors import find_javas
    return find_javas()


@functools.lru_cache(maxsize=1)
def _copy_sequences(seed: int = 20261126) -> list[tuple[str, list[str], list[str]]]:
    """(how, keys put first, keys copied in that order): ``copyset`` (``new HashSet<>(c)``),
    ``copymap`` (``new HashMap<>(m)``) or ``putall`` (into a map holding the first keys), with
    sizes at every boundary where Java 17 and Java 19+ size a copy differently (3 * 2**k),
    around them, colliding keys (tree bins) and plain ones."""
    rnd = random.Random(seed)
    out: list[tuple[str, list[str], list[str]]] = []
    sizes = [0, 1, 5, 11, 12, 13, 23, 24, 25, 47, 48, 49, 95, 96, 97, 191, 192, 193, 384, 700]
    for case in range(180):
        n = sizes[case % len(sizes)]
        kind = case // len(sizes) % 3
        if kind == 0:
            keys = _random_keys(rnd, n * 2)[:n]
        elif kind == 1:
            keys = (_equal_hash_keys(rnd, 4, "c") + _random_keys(rnd, n * 2))[:n]
        else:
            keys = _same_bucket_keys(rnd, n, rnd.randint(4, 8), "s")
        how = ("copyset", "copymap", "putall")[case % 3]
        first = _random_keys(rnd, rnd.choice([0, 3, 12, 40])) if how == "putall" else []
        first = [k for k in first if k not in set(keys)]
        out.append((how, first, keys))
    return out


def _copy_model(how: str, first: list[str], keys: list[str], jvm: int) -> list[str]:
    if how != "putall":
        return JavaHashMap.copy_of(keys, jvm=jvm, hash_set=how == "copyset").keys()
    m = JavaHashMap()
    for k in first:
        m.put(k)
    m.put_all(keys, jvm=jvm)
    return m.keys()


def test_copies_are_sized_by_the_jvm() -> None:
    """``new HashSet<>(c)`` of 12 keys: 32 buckets on Java 17, 16 from Java 19 on
    (``calculateHashMapCapacity``); ``new HashMap<>(m)`` of 6: 16 and 8."""
    assert java_copy_capacity(12) == 32
    assert java_copy_capacity(12, jvm=25) == 16
    assert java_copy_capacity(11) == java_copy_capacity(11, jvm=25) == 16
    assert [java_copy_threshold(n, jvm=21) for n in (0, 1, 3, 6, 12)] == [0, 2, 4, 8, 16]
    assert [java_copy_threshold(n) for n in (0, 1, 3, 6, 12)] == [1, 2, 5, 9, 17]
    twelve = [f"k{i}" for i in range(12)]
    assert JavaHashMap.copy_of(twelve, hash_set=False).capacity == 32
    assert JavaHashMap.copy_of(twelve, hash_set=False, jvm=25).capacity == 16
    differ = sum(_copy_model(h, f, k, 17) != _copy_model(h, f, k, 25)
                 for h, f, k in _copy_sequences())
    assert differ >= 20, differ


@pytest.mark.parametrize("jvm", [17, 25])
def test_copies_are_what_each_jvm_prints(jvm: int) -> None:
    """``JavaHashMap.copy_of`` and ``put_all`` against ``java.util.HashMap``/``HashSet`` of Java
    17 and Java 25 (each where installed): the copy constructors and ``putAll``."""
    javas = _javas()
    if jvm not in javas:
        pytest.skip(f"no Java {jvm} on this machine")
    sequences = _copy_sequences()
    lines: list[str] = []
    for how, first, keys in sequences:
        lines.append("new")
        lines += [f"put {_units_hex(k)}" for k in first]
        lines += [f"stage {_units_hex(k)}" for k in keys]
        lines += [how, "end"]
    proc = subprocess.run([javas[jvm], str(HASHMAP_JAVA)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=300, check=True)
    printed = proc.stdout.splitlines()
    assert len(printed) == len(sequences)
    for n, ((how, first, keys), line) in enumerate(zip(sequences, printed, strict=True)):
        want = [_from_hex(h) for h in line.split("\t")] if line else []
        assert _copy_model(how, first, keys, jvm) == want, f"sequence {n} ({how})"
