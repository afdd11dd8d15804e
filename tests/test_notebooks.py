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
    assert len(NOTEBOOKS) == 8
