"""The doctor in the book (``doctor.book``): the report on shipped artefacts as chapter 9 and
"When your cluster misbehaves" print it: narrowed to the book's column, the files named from the
repository's root, one problem's findings with the others counted, never hidden."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from rocketlb_core.doctor import report
from rocketlb_core.doctor.book import (
    BOOK_WIDTH,
    doctor_says,
    examine_shipped,
    json_excerpt,
    recognised,
    write_page,
)

CAPTURE = "data/live/doctor/capture-4"
ROOT = Path(__file__).resolve().parents[1]


def test_one_problem_is_shown_with_the_command_and_the_others_counted() -> None:
    text = doctor_says(CAPTURE, ids=["duplicate-client-id"], group="GID_dup")
    lines = text.splitlines()
    assert lines[0] == f"$ rocketlb doctor {CAPTURE}"
    assert "[CRITICAL] duplicate-client-id" in text
    assert "GID_idle" not in text
    assert "GID_mixed" not in text
    assert "more-consumers-than-queues" in " ".join(lines[-3:])      # counted, not hidden
    assert f"{CAPTURE}/consumerConnection-GID_dup.txt:3:" in text     # data/..., with its line
    assert "/work/" not in text
    assert "ignored data" not in text


def test_every_line_fits_the_books_column_and_the_terminal_keeps_its_width() -> None:
    for text in (doctor_says(CAPTURE, show_ignored=True),
                 doctor_says("data/live/producer-outage-4", ids=["broker-isolated"]),
                 json_excerpt(CAPTURE, keys=["id", "before_after", "book"])):
        assert max(len(t) for t in text.splitlines()) <= BOOK_WIDTH
    assert report.WIDTH == 100
    assert json_excerpt(CAPTURE).startswith(f"$ rocketlb doctor {CAPTURE} --json")
    with pytest.raises(ValueError, match="no finding"):
        doctor_says(CAPTURE, ids=["no-such-finding"])
    assert report.WIDTH == 100


def test_the_whole_report_is_the_terminal_report() -> None:
    inputs, findings, notes = examine_shipped(CAPTURE)
    text = doctor_says(CAPTURE, show_ignored=True, width=report.WIDTH)
    assert text.split("\n", 1)[1] == report.render(inputs, findings, notes).rstrip("\n")
    assert all(e.path.startswith(CAPTURE + "/") for f in findings for e in f.evidence)


def test_files_are_named_as_read_and_only_shipped_paths_are_taken() -> None:
    files = dict(recognised(CAPTURE))
    assert files["consumerConnection-GID_dup.txt"] == "consumerConnection"
    assert files["logs/dup-1/rocketmq_client.log.gz"] == "clientLog"
    assert files["provenance.json"].startswith("ignored: ")
    with pytest.raises(ValueError, match="data/"):
        doctor_says("/tmp")
    with pytest.raises(FileNotFoundError):
        doctor_says("data/live/no-such-capture")


def test_chapter_9_ends_each_problem_with_the_doctor() -> None:
    """Each of chapter 9's problem sections says what the doctor says about it."""
    nb = nbformat.read(ROOT / "notebooks" / "09-troubleshooting.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    sections = [s for s in text.split("\n## ")[1:] if not s.startswith("Exercises")]
    assert len(sections) == 6
    for s in sections:
        assert "**What `rocketlb doctor` says.**" in s, s.splitlines()[0]
        assert "rocketlb doctor data/live/" in s or "--html" in s, s.splitlines()[0]


def test_the_books_html_page_links_into_the_built_book(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rocketlb_core.atomic import OutputError

    page = tmp_path / "doctor.html"
    said = write_page(CAPTURE, page=str(page), book="../../")
    assert said.startswith(f"$ rocketlb doctor {CAPTURE} --html {page}")
    text = page.read_text()
    assert 'href="../../notebooks/09-troubleshooting.html#duplicate-client-ids' in text
    assert ".ipynb#" not in text
    assert "http" not in text                    # self-contained: nothing to fetch
    assert str(tmp_path) not in text.replace(str(page), "")
    foreign = tmp_path / "mine.html"
    foreign.write_text("not the doctor's")
    with pytest.raises(OutputError):
        write_page(CAPTURE, page=str(foreign))


def test_the_shipped_page_is_what_the_doctor_writes_now(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The book links notebooks/doctor-capture-4.html (written by the page's cell): current."""
    page = tmp_path / "doctor-capture-4.html"
    write_page(CAPTURE, page=str(page), book="../../")
    shipped = (ROOT / "notebooks" / "doctor-capture-4.html").read_text()
    assert page.read_text() == shipped, \
        "run bash scripts/regenerate-outputs.sh notebooks/when-your-cluster-misbehaves.ipynb"
