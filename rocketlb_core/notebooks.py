"""Executing the book's chapters deterministically (``scripts/regenerate-outputs.sh`` calls this),
and marking which of their cells a reader can run in the web page.

``python -m rocketlb_core.notebooks execute NOTEBOOK...`` runs each notebook top to bottom in a
fresh kernel of the running interpreter and stores its outputs and widget state in place. It drops
what changes from run to run without meaning anything (cell timing, execution metadata), writes
atomically, and leaves the file untouched if any cell fails. nbval later compares these outputs.

``execute`` also tags every code cell (``tag_cells``): ``rocketlb-browser`` when the cell needs
only the core and the standard library, and names defined by earlier such cells (the web page
then offers "run in the browser": ``rocketlb-live.js`` runs it in Pyodide with
``rocketlb_core.interactive.cells``); ``rocketlb-kernel-spark`` when it uses Spark;
``rocketlb-figure`` when it builds live figures (``rocketlb_core.viz.widgets``: they work in
the page by themselves); ``rocketlb-kernel`` otherwise (pandas, Altair, the data files).
Jupyter Book turns a tag into the class ``tag_<tag>`` of the cell's block.
``tests/test_interactive.py`` checks that the stored tags are current;
``tests/test_live_figures.py`` that every browser cell prints in Pyodide what it printed in the
kernel.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import os
import re
import sys
from pathlib import Path
from typing import Any

from rocketlb_core.layers import is_core

CELL_TIMEOUT_S = 600


def execute(path: Path) -> None:
    """Run ``path`` and store its outputs; raises (file unchanged) if a cell errors."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", record_timing=False,
        store_widget_state=True, resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    tag_cells(nb)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    if not _has_widget_state(nb):
        nb.metadata.pop("widgets", None)
    tmp = path.with_suffix(".ipynb.tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, path)


TAGS = ("rocketlb-browser", "rocketlb-kernel-spark", "rocketlb-kernel", "rocketlb-figure")
FIGURES = ("rocketlb_core.viz.widgets", "rocketlb_core.viz.sequence")
"""A cell that builds live figures or draws a sequence diagram: both work in the page by
themselves, so it gets no "needs a kernel" note."""
_STDLIB = frozenset(sys.stdlib_module_names)


def _module_ok(module: str) -> bool:
    return module.split(".")[0] in _STDLIB or is_core(module)


def cell_needs(source: str, known: set[str]) -> tuple[str, set[str]]:
    """The tag of one cell given the names earlier browser cells define, and the names it
    defines. A cell that does not parse as plain Python (magics) needs a kernel."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return TAGS[2], set()
    modules: list[str] = []
    stored: set[str] = set()
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules += [a.name for a in node.names]
            stored |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules.append(node.module or "")
            stored |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Name):
            (stored if isinstance(node.ctx, ast.Store) else loaded).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stored.add(node.name)
        elif isinstance(node, ast.arg):
            stored.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            stored.add(node.name)
    if any("spark" in m for m in modules) or "spark_session" in stored | loaded:
        return TAGS[1], stored
    if any(m in FIGURES for m in modules):
        return TAGS[3], stored
    free = loaded - stored - set(dir(builtins))
    if all(_module_ok(m) for m in modules) and free <= known:
        return TAGS[0], stored
    return TAGS[2], stored


def tag_cells(nb: Any) -> bool:
    """Tag every code cell of ``nb`` (see the module docstring); whether anything changed."""
    known: set[str] = set()
    changed = False
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tag, defines = cell_needs(cell.source, known)
        if tag == TAGS[0]:
            known |= defines
        tags = [t for t in cell.metadata.get("tags", []) if t not in TAGS] + [tag]
        if cell.metadata.get("tags") != tags:
            cell.metadata["tags"] = tags
            changed = True
    return changed


REVIEWS = Path(__file__).resolve().parents[1] / "book" / "reviews"
ERRATA = REVIEWS.parent / "errata.md"
_REVIEW_TITLE = re.compile(r"^# Review of (?P<what>.+?)\s*$", re.MULTILINE)
_ERRATA_HEAD = "## Errata"


def review_errata(path: Path) -> tuple[str, list[str]]:
    """The title (``chapter 2: ...``) and the errata lines (``- ...``) of one review file of
    ``book/reviews/``: the list under its ``## Errata`` heading, up to the next heading.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> text = "# Review of chapter 2: X\\n## Errata\\n- a\\n  b\\n- c\\n## More\\n"
    >>> _ = (d / "02-x.md").write_text(text)
    >>> review_errata(d / "02-x.md")
    ('chapter 2: X', ['a b', 'c'])
    """
    text = path.read_text(encoding="utf-8")
    title = _REVIEW_TITLE.search(text)
    if not title:
        raise ValueError(f"{path}: no '# Review of ...' title on its first heading")
    if _ERRATA_HEAD not in text:
        raise ValueError(f"{path}: no '{_ERRATA_HEAD}' section")
    body = text.split(_ERRATA_HEAD, 1)[1].split("\n#", 1)[0]
    items: list[str] = []
    for line in body.splitlines():
        if line.startswith("- "):
            items.append(line[2:].strip())
        elif line.strip() and items:
            items[-1] += " " + line.strip()
    return title.group("what"), items


def errata_page(reviews: Path = REVIEWS) -> str:
    """``book/errata.md``, made from the reviews' errata: one section per review, in file order
    (chapters first by number, then the pages), each correction one line."""
    out = ["# What changed in this edition", "",
           "Every chapter and page of this edition was read again by a reviewer who did not "
           "write it, briefed to find what is wrong, misleading or imprecise. Each correction a "
           "reader of the previous edition should know is listed here in one line, with its "
           "evidence; the whole review of each chapter (what was checked, every finding, the "
           "evidence) is in the repository under `book/reviews/`.", ""]
    for path in sorted(reviews.glob("*.md")):
        what, items = review_errata(path)
        target = _review_target(path)
        out += [f"## {what[:1].upper() + what[1:]}", ""]
        if target:
            kind = "chapter" if what.startswith("chapter") else "page"
            out += [f"[Read the {kind}]({target}).", ""]
        out += [f"- {item}" for item in items] or ["- Nothing needed correcting."]
        out.append("")
    return "\n".join(out)


def _review_target(path: Path) -> str:
    """The page a review file is about, as a link from ``book/`` (its name without ``.md``)."""
    root = path.parents[2]
    stem = path.stem
    for cand in (root / "notebooks" / f"{stem}.ipynb", root / "book" / f"{stem}.md",
                 root / "book" / "guide" / f"{stem}.md"):
        if cand.exists():
            return (f"../notebooks/{cand.name}" if cand.suffix == ".ipynb"
                    else cand.relative_to(root / "book").as_posix())
    return ""


def _has_widget_state(nb: object) -> bool:
    widgets = getattr(nb, "metadata", {}).get("widgets", {})
    state = widgets.get("application/vnd.jupyter.widget-state+json", {})
    return bool(state.get("state"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rocketlb_core.notebooks")
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("execute", help="execute notebooks in place, deterministically")
    run.add_argument("notebooks", nargs="+", type=Path)
    tag = sub.add_parser("tag", help="only (re)tag the code cells, in place")
    tag.add_argument("notebooks", nargs="+", type=Path)
    sub.add_parser("errata", help="write book/errata.md from the reviews in book/reviews/")
    args = parser.parse_args(argv)
    if args.cmd == "errata":
        tmp = ERRATA.with_suffix(".md.tmp")
        tmp.write_text(errata_page(), encoding="utf-8")
        os.replace(tmp, ERRATA)
        print(f"wrote {ERRATA}", file=sys.stderr)
        return 0
    if args.cmd == "tag":
        import nbformat

        for path in args.notebooks:
            nb = nbformat.read(path, as_version=4)
            if tag_cells(nb):
                tmp = path.with_suffix(".ipynb.tmp")
                nbformat.write(nb, tmp)
                os.replace(tmp, path)
                print(f"tagged {path}", file=sys.stderr)
        return 0
    for path in args.notebooks:
        print(f"executing {path}", file=sys.stderr)
        execute(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
