"""Every chapter and page of the book has its review, and the errata page is made from them.

A review (``book/reviews/<page>.md``) is written by someone who did not write the page, briefed to
find what is wrong, misleading or imprecise: what was checked, what was found (a table), what
changed, and the errata a reader of the previous edition should know. ``book/errata.md`` ("What
changed in this edition") is generated from those errata by
``python -m rocketlb_core.notebooks errata``; these tests hold it current and in the book.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rocketlb_core import notebooks

ROOT = Path(__file__).resolve().parent.parent
REVIEWS = ROOT / "book" / "reviews"
SECTIONS = ("## What was checked", "## Findings", "## Errata")


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc["parts"]:
        files += [c["file"] for c in part["chapters"]]
    return files


GENERATED = ("book/errata", "book/guide/cli-reference", "book/guide/verdicts",
             "book/guide/doctor-findings", "book/guide/conformance-families",
             "book/guide/strategies")
"""Pages made from other sources: the errata from the reviews, the command reference from the
commands' parsers (``rocketlb_core.docs_cli``, held current by ``tests/test_docs_cli.py``), the
registries' pages from the registries (``rocketlb_core.docs_cli`` too, held current by
``tests/test_registry_pages.py``)."""


def _reviewed_pages() -> list[str]:
    """The chapters and pages a review must cover: every notebook in the book, and the book's
    own prose pages; not the API reference (generated from docstrings) nor the ``GENERATED``
    pages."""
    return [f for f in _toc_files()
            if f.startswith("notebooks/") or (f.startswith("book/") and "/api/" not in f
                                              and f not in GENERATED)]


@pytest.mark.parametrize("page", _reviewed_pages())
def test_every_page_has_its_review(page: str) -> None:
    review = REVIEWS / f"{Path(page).name}.md"
    assert review.exists(), f"{page} has no review: write {review.relative_to(ROOT)}"
    text = review.read_text(encoding="utf-8")
    missing = [s for s in SECTIONS if s not in text]
    assert not missing, f"{review.name}: missing {missing}"
    findings = text.split("## Findings", 1)[1].split("\n## ", 1)[0]
    assert "|" in findings or "Nothing found" in findings, \
        f"{review.name}: the findings are a table (or say 'Nothing found')"


def test_every_review_is_of_a_page_of_the_book() -> None:
    pages = {Path(p).name for p in _reviewed_pages()}
    strays = sorted(r.stem for r in REVIEWS.glob("*.md") if r.stem not in pages)
    assert not strays, f"reviews of no page of the book: {strays}"


def test_the_errata_page_is_current_and_in_the_book() -> None:
    page = ROOT / "book" / "errata.md"
    assert page.read_text(encoding="utf-8") == notebooks.errata_page(REVIEWS), \
        "book/errata.md is stale: run python -m rocketlb_core.notebooks errata"
    assert "book/errata" in _toc_files()


def test_the_errata_reader_refuses_a_review_without_its_sections(tmp_path: Path) -> None:
    (tmp_path / "01-x.md").write_text("# Review of chapter 1: X\n## Findings\n", encoding="utf-8")
    with pytest.raises(ValueError, match="Errata"):
        notebooks.errata_page(tmp_path)
    (tmp_path / "01-x.md").write_text("no title\n## Errata\n- a\n", encoding="utf-8")
    with pytest.raises(ValueError, match="Review of"):
        notebooks.errata_page(tmp_path)
