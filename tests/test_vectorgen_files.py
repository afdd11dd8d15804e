"""The vector files' one writer (``rocketlb_core.vectorgen.write_or_check``), used by every
generator (``kafka.vectors``, ``vectorgen.remoting``, ``vectorgen.grpc``, ``vectorgen.proxy``):
the same text gives the same bytes, a check writes nothing and compares the head a shorter
generation made, and a write goes through ``.part``."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from rocketlb_core.vectorgen import read_cases, write_or_check

TEXT = "".join(f'{{"case": {i}}}\n' for i in range(5))


def test_a_write_is_the_same_bytes_each_time(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a" / "v.jsonl.gz", tmp_path / "b" / "v.jsonl.gz"
    assert write_or_check(a, TEXT, check=False)
    assert write_or_check(b, TEXT, check=False, what=", on 5.5.0")
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes()).decode() == TEXT
    assert read_cases(a) == TEXT.splitlines()
    assert read_cases(a, 2) == TEXT.splitlines()[:2]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["v.jsonl.gz"]   # no .part
    assert f"wrote {b}: 5 cases, on 5.5.0" in capsys.readouterr().err


def test_a_check_compares_and_writes_nothing(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "v.jsonl.gz"
    write_or_check(target, TEXT, check=False)
    before = target.read_bytes()
    head = "".join(TEXT.splitlines(keepends=True)[:3])
    assert write_or_check(target, head, check=True)             # a shorter run: its head
    assert not write_or_check(target, head.replace("1", "9"), check=True)
    assert not write_or_check(target, TEXT + '{"case": 5}\n', check=True)    # one case more
    assert target.read_bytes() == before
    err = capsys.readouterr().err
    assert f"same  {target} (3 cases)" in err
    assert f"DIFFERS  {target}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.jsonl.gz"]
