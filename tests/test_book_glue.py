"""Numbers a chapter computes reach its prose by myst-nb's glue, never typed by hand.

A markdown cell writes ``{glue:text}`ch07_failed` `` (or ``{glue}``, ``{glue:md}``,
``{glue:figure}``); a code cell computed it with ``glue("ch07_failed", value, display=False)``.
The page shows the stored output, so a changed model changes the sentence when the chapter is
regenerated. These tests hold every reference to a value the same notebook glues (a reference to
nothing would render as an error only at build time, or in another page's value), keys unique
across the book, each key prefixed with its chapter, and no glued value left unused.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ROLE = re.compile(r"\{glue(?::(?:text|md|any|figure|math))?\}`(?P<key>[A-Za-z0-9_.-]+)"
                  r"(?::[^`]*)?`")
DIRECTIVE = re.compile(r"^```\{glue(?::\w+)?\}\s+(?P<key>[A-Za-z0-9_.-]+)", re.MULTILINE)


def glued(path: Path) -> list[str]:
    """The keys a notebook's stored outputs glue (``myst_nb.glue`` writes a ``scrapbook`` name)."""
    nb = nbformat.read(path, as_version=4)
    return [out.get("metadata", {})["scrapbook"]["name"]
            for cell in nb.cells if cell.cell_type == "code"
            for out in cell.get("outputs", [])
            if "scrapbook" in out.get("metadata", {})]


def referenced(path: Path) -> list[str]:
    """The keys a notebook's markdown cells show."""
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return [m.group("key") for m in ROLE.finditer(text)] + \
        [m.group("key") for m in DIRECTIVE.finditer(text)]


def _prefix(path: Path) -> str:
    stem = path.stem
    return f"ch{stem[:2]}_" if stem[:2].isdigit() else ""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_glued_reference_is_computed_in_its_notebook(path: Path) -> None:
    have = set(glued(path))
    missing = sorted(set(referenced(path)) - have)
    assert not missing, (f"{path.name}: prose shows {missing}, which no cell glues "
                         "(glue(KEY, value, display=False), then regenerate the outputs)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_glued_value_is_used_and_named_for_its_chapter(path: Path) -> None:
    keys = glued(path)
    unused = sorted(set(keys) - set(referenced(path)))
    assert not unused, f"{path.name}: glued but never shown: {unused}"
    prefix = _prefix(path)
    if prefix:
        wrong = sorted(k for k in keys if not k.startswith(prefix))
        assert not wrong, f"{path.name}: glue keys must start with {prefix!r}: {wrong}"


def test_glue_keys_are_unique_across_the_book() -> None:
    seen: dict[str, str] = {}
    twice = []
    for path in NOTEBOOKS:
        for key in set(glued(path)):
            if key in seen:
                twice.append((key, seen[key], path.name))
            seen[key] = path.name
    assert not twice, twice


def test_the_reference_pattern_reads_each_form() -> None:
    text = ("{glue:text}`ch07_a` and {glue:text}`ch07_b:,` and {glue}`ch07_c` "
            "and {glue:md}`ch07_d`\n```{glue:figure} ch07_e\n```")
    keys = [m.group("key") for m in ROLE.finditer(text)] + \
        [m.group("key") for m in DIRECTIVE.finditer(text)]
    assert keys == ["ch07_a", "ch07_b", "ch07_c", "ch07_d", "ch07_e"]
