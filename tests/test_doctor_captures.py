"""The shipped ``mqadmin`` captures for the doctor (``data/live/doctor/*``) name their files as
they are stored: the folder's marker (``.rocketlb-output.json``: every path the writer wrote,
which ``rocketlb_core.atomic`` reads before it replaces the folder) and ``provenance.json``'s
``files`` (the command of each output). capture-5's first marker listed ``.txt`` names for
outputs stored gzipped; the capture writer (``live.capture.keep_output``) names a file as it
writes it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.atomic import MARKER, atomic_folder, read_marker
from rocketlb_core.live.capture import GZIP_LINES, keep_output

CAPTURES = sorted(p.parent for p in data_path("live", "doctor").glob("*/provenance.json"))


def _stored(folder: Path) -> set[str]:
    """Every path under ``folder`` (files and folders), relative, but the marker."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")} - {MARKER}


def test_the_shipped_captures() -> None:
    assert {p.name for p in CAPTURES} == {"capture-4", "capture-5", "strategies-4",
                                          "strategies-5"}


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_every_path_a_capture_marker_lists_is_stored_and_every_stored_path_is_listed(
        capture: Path) -> None:
    marker = read_marker(capture)
    assert marker is not None, f"{capture}: no valid {MARKER}"
    assert marker["command"] == "live capture"
    listed = marker["paths"]
    assert listed == sorted(set(listed))
    missing = [p for p in listed if not (capture / p).exists() or (capture / p).is_symlink()]
    assert missing == [], f"{capture.name}'s {MARKER} lists files it does not hold"
    assert set(listed) == _stored(capture)


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_provenance_names_each_output_as_stored(capture: Path) -> None:
    meta = json.loads((capture / "provenance.json").read_text())
    marker = read_marker(capture)
    assert marker is not None
    listed = set(marker["paths"])
    suffix = ".txt.gz" if meta["line"] in GZIP_LINES else ".txt"
    assert meta["files"]
    for f in meta["files"]:
        assert f["file"].endswith(suffix), f
        assert f["file"] in listed
        assert (capture / f["file"]).is_file()
    outputs = {p for p in listed if "/" not in p and p.endswith((".txt", ".txt.gz"))}
    assert outputs == {f["file"] for f in meta["files"]}


@pytest.mark.parametrize("line", ["4", "5"])
def test_the_capture_writer_names_each_output_as_written(tmp_path: Path, line: str) -> None:
    """``keep_output`` inside the capture's ``atomic_folder``: the name it returns (what
    ``provenance.json`` records) is the file the marker lists and the folder holds, gzipped
    on line 5 with the text unchanged."""
    out = tmp_path / f"capture-{line}"
    texts = {"clusterList": "#Cluster Name #Broker Name\nrocketlb broker-a\n",
             "topicRoute-TopicDoc": '{\n\t"brokerDatas":[]\n}\n'}
    with atomic_folder(out, "live capture") as tmp:
        names = {n: keep_output(tmp, n, t, line) for n, t in texts.items()}
    marker = read_marker(out)
    assert marker is not None
    assert marker["paths"] == sorted(names.values())
    for name, file in names.items():
        assert file == f"{name}.txt" + (".gz" if line in GZIP_LINES else "")
        raw = (out / file).read_bytes()
        text = gzip.decompress(raw).decode() if file.endswith(".gz") else raw.decode()
        assert text == texts[name]
