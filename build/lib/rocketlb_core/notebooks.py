"""Executing the book's chapters deterministically (``scripts/regenerate-outputs.sh`` calls this).

``python -m rocketlb_core.notebooks execute NOTEBOOK...`` runs each notebook top to bottom in a
fresh kernel of the running interpreter and stores its outputs and widget state in place. It drops
what changes from run to run without meaning anything (cell timing, execution metadata), writes
atomically, and leaves the file untouched if any cell fails. nbval later compares these outputs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

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
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    if not _has_widget_state(nb):
        nb.metadata.pop("widgets", None)
    tmp = path.with_suffix(".ipynb.tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, path)


def _has_widget_state(nb: object) -> bool:
    widgets = getattr(nb, "metadata", {}).get("widgets", {})
    state = widgets.get("application/vnd.jupyter.widget-state+json", {})
    return bool(state.get("state"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rocketlb_core.notebooks")
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("execute", help="execute notebooks in place, deterministically")
    run.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for path in args.notebooks:
        print(f"executing {path}", file=sys.stderr)
        execute(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
