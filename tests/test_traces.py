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
