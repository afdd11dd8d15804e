"""The cluster-layout loader: good files load, bad ones fail naming file, row and field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.trace.cluster import load_cluster
from rocketlb_core.trace.schema import TraceError

LAYOUT = data_path("traces", "cluster-overview")


def test_shipped_layout_loads() -> None:
    cluster = load_cluster(LAYOUT)
    assert sorted(cluster.routes) == ["OrderTopic", "TopicTest"]
    assert cluster.rooms() == {"broker-a": "room-1", "broker-b": "room-2", "broker-c": "room-2"}
    route = cluster.routes["OrderTopic"]
    assert {qd.broker_name: qd.write_queue_nums for qd in route.queue_datas} == {
        "broker-a": 8, "broker-b": 4}
    assert {b.broker_name: b.master_addr for b in route.broker_datas} == {
        "broker-a": "10.0.1.11:10911", "broker-b": "10.0.2.11:10911"}


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "layout"
    shutil.copytree(LAYOUT, dst)
    return dst


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(("file", "old", "new", "row", "field", "words"), [
    ("route.csv", "TopicTest,broker-b,4,4,6", "TopicTest,broker-b,4,x,6", 3,
     "write_queue_nums", "not an integer from 0 to 1024"),
    ("route.csv", "TopicTest,broker-b,4,4,6", "TopicTest,broker-b,-1,4,6", 3,
     "read_queue_nums", "not an integer from 0 to 1024"),
    ("route.csv", "TopicTest,broker-b,4,4,6", "TopicTest,broker-b,4,1025,6", 3,
     "write_queue_nums", "not an integer from 0 to 1024"),
    ("route.csv", "TopicTest,broker-b,4,4,6", "TopicTest,broker-b,4,99999999999999999999999,6",
     3, "write_queue_nums", "is not an integer from 0 to 1024"),
    ("route.csv", "TopicTest,broker-b,4,4,6", "TopicTest\x01,broker-b,4,4,6", 3, "topic",
     "control characters"),
    ("route.csv", "TopicTest,broker-b,4,4,6", "T" * 256 + ",broker-b,4,4,6", 3, "topic",
     "a name of 256 characters"),
    ("route.csv", "TopicTest,broker-b,4,4,6", "TopicTest,broker-b,4,4,9", 3, "perm",
     "permission"),
    ("route.csv", "TopicTest,broker-b,4,4,6", "TopicTest,broker-z,4,4,6", 3, "broker_name",
     "unknown broker"),
    ("route.csv", "TopicTest,broker-b,4,4,6", "TopicTest,broker-a,4,4,6", 3, "broker_name",
     "appears twice"),
    ("route.csv", "TopicTest,broker-b,4,4,6", ",broker-b,4,4,6", 3, "topic", "empty value"),
    ("route.csv", "TopicTest,broker-b,4,4,6", "TopicTest,broker-b,4,4", 3, None, "4 values"),
    ("route.csv", "write_queue_nums", "writeQueueNums", 1, "write_queue_nums", "missing column"),
    ("brokers.csv", "broker-b,1,", "broker-b,0,", 5, "broker_id", "appears twice"),
    ("brokers.csv", "broker-c,0,", "broker-c,zero,", 6, "broker_id", "not a non-negative"),
])
def test_malformed_layouts_name_file_row_and_field(
    tmp_path: Path, file: str, old: str, new: str, row: int, field: str | None, words: str,
) -> None:
    folder = _copy(tmp_path)
    _replace(folder / file, old, new)
    with pytest.raises(TraceError) as info:
        load_cluster(folder)
    err = info.value
    assert Path(err.path).name == file
    assert (err.row, err.field) == (row, field)
    assert words in str(err)
    assert file in str(err)


def test_empty_and_missing_files(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "route.csv").write_text("")
    with pytest.raises(TraceError, match=r"route\.csv, row 1: empty file"):
        load_cluster(folder)
    (folder / "route.csv").write_text("topic,broker_name,read_queue_nums,write_queue_nums,perm\n")
    with pytest.raises(TraceError, match="no route rows"):
        load_cluster(folder)
    (folder / "brokers.csv").unlink()
    with pytest.raises(TraceError, match=r"brokers\.csv: file not found"):
        load_cluster(folder)


def test_a_string_column_that_is_not_utf8_is_bad_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A corrupt page can decode to bytes that are not UTF-8 in a string column (the fuzzer's
    bit flip in ``conditions.parquet``): a ``TraceError`` naming the file, not a crash."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq
    import pytest

    from rocketlb_core import data_path
    from rocketlb_core.trace.read import load_trace

    trace = tmp_path / "t"
    shutil.copytree(data_path("traces", "seed002-outage"), trace)
    table = pq.read_table(trace / "conditions.parquet")
    good = table.column("broker").combine_chunks()
    raw = b"\xf4" + b"x" * (good.buffers()[2].size - 1)      # same length, invalid first byte
    bad = pa.Array.from_buffers(pa.string(), len(good),
                                [good.buffers()[0], good.buffers()[1], pa.py_buffer(raw)])
    pq.write_table(table.set_column(table.schema.get_field_index("broker"), "broker", bad),
                   trace / "conditions.parquet")
    with pytest.raises(TraceError, match=r"conditions\.parquet: .*utf-8"):
        load_trace(trace)


def test_names_with_control_characters_are_found_by_code_point() -> None:
    """A name may hold any character but U+0000 to U+001F and U+007F, wherever it is."""
    from rocketlb_core.trace.schema import has_control

    for c in [*range(0, 0x3000), *range(0x3000, 0x110000, 997)]:
        if 0xD800 <= c <= 0xDFFF:
            continue
        assert has_control(f"broker{chr(c)}-a") == (c < 32 or c == 127), hex(c)
    assert not has_control("")
    assert has_control("\x7f")
    assert not has_control("é\u2028")


def test_a_bad_name_after_good_ones_is_found_in_its_row(tmp_path: Path) -> None:
    """Each name of a conditions file is checked once, however many rows repeat it; a bad one
    is still reported with its own row and field, even where the same column held good names
    in every row before it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rocketlb_core.trace.read import load_trace

    trace = tmp_path / "t"
    shutil.copytree(data_path("traces", "seed002-outage"), trace)
    table = pq.read_table(trace / "conditions.parquet")
    column = "broker"
    values = table.column(column).to_pylist()
    row = max(i for i, v in enumerate(values) if v in values[:i])   # held before too
    assert row > 2
    values[row] = values[row] + "\x07"
    pq.write_table(table.set_column(table.schema.get_field_index(column), column,
                                    pa.array(values, pa.string())),
                   trace / "conditions.parquet")
    with pytest.raises(TraceError) as info:
        load_trace(trace)
    assert (info.value.row, info.value.field) == (row + 1, column)
    assert "control characters" in str(info.value)
