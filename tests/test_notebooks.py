"""The chapters as files: what nbval compares must be stored, and every chapter is in the book.

nbval compares the outputs a notebook stores; a cell saved without outputs would compare nothing
and still pass. These checks catch that (it happened once: a chapter regenerated without its
outputs), and stored errors, and chapters left out of ``_toc.yml``."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# The numbered chapters; the other notebooks are short pages (issue 35's "When your cluster
# misbehaves"), held to the same stored outputs and table of contents, not to a chapter's floor.
CHAPTERS = [p for p in NOTEBOOKS if p.name[:2].isdigit()]
PAGES = [p for p in NOTEBOOKS if p not in CHAPTERS]


def _displays(source: str) -> bool:
    """Whether running the cell shows something: a final expression, or a print call."""
    tree = ast.parse(source)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        return True
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print"
               for n in ast.walk(tree))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_displaying_cell_has_stored_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    missing = [i for i, c in enumerate(nb.cells)
               if c.cell_type == "code" and _displays(c.source) and not c.outputs]
    assert missing == [], f"{path.name}: cells {missing} have no stored outputs " \
                          "(run bash scripts/regenerate-outputs.sh)"
    errors = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error" or o.get("name") == "stderr"]
    assert errors == [], f"{path.name}: cells {errors} stored an error or stderr"


def test_every_chapter_is_in_the_table_of_contents() -> None:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = {ch["file"] for part in toc["parts"] for ch in part["chapters"]}
    assert {f"notebooks/{p.stem}" for p in NOTEBOOKS} <= files
    assert len(CHAPTERS) == 11
    assert [p.stem for p in PAGES] == ["when-your-cluster-misbehaves"]


def _figures(cell: nbformat.NotebookNode) -> int:
    """Charts (the offline renderer's ``rlb-chart``) and sequence diagrams a cell shows."""
    html = "".join("".join(o.get("data", {}).get("text/html", ""))
                   for o in cell.get("outputs", []))
    return html.count('class="rlb-chart"') + html.count('class="rlb-seq"')


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_teaches_with_pictures_practice_and_key_points(path: Path) -> None:
    """Issue 13's floor for a chapter: two or more charts or diagrams in its stored outputs, four
    or more exercises each with a worked solution, and a key-points box after them (only the
    self-checking widgets may follow it)."""
    nb = nbformat.read(path, as_version=4)
    figures = sum(_figures(c) for c in nb.cells if c.cell_type == "code")
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    solutions = text.count("```{admonition} Solution")
    assert figures >= 2, f"{path.name}: {figures} charts or diagrams"
    assert solutions >= 4, f"{path.name}: {solutions} exercises with a worked solution"
    key = text.rfind("```{admonition} Key points")
    assert key > text.rfind("```{admonition} Solution"), f"{path.name}: no key points at the end"
    after = text[key:].split("```{admonition} Key points", 1)[1]
    assert "\n## " not in after, f"{path.name}: a section follows the key points"


def test_every_diagram_cell_names_a_shipped_diagram() -> None:
    from rocketlb_core.viz.sequence import diagram_source

    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and "diagram(" in cell.source:
                for node in ast.walk(ast.parse(cell.source)):
                    if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "diagram"):
                        name = node.args[0]
                        assert isinstance(name, ast.Constant)
                        assert diagram_source(name.value)


CODE_COLUMN = 77
"""Characters of code a chapter's page shows without sideways scrolling at 1280 px (the browser
test ``test_blocks_fit_the_column_without_sideways_scrolling`` measures it; this is the fast
check of the same rule, run before a book is built)."""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_fits_the_page_column(path: Path) -> None:
    long = [(i, line) for i, c in enumerate(nbformat.read(path, as_version=4).cells)
            if c.cell_type == "code" for line in c.source.splitlines()
            if len(line) > CODE_COLUMN]
    assert not long, f"{path.name}: lines over {CODE_COLUMN} characters (cell, line): {long}"
