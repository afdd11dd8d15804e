"""The doctor in the book: ``rocketlb doctor``'s report on the artefacts shipped in ``data/``,
as chapter 9 and the page "When your cluster misbehaves" show it (issue 35).

The report is the terminal one (``doctor.report.render``), narrowed to the book's text column
(``render``'s ``width`` at ``BOOK_WIDTH``: 77 characters of code fit at 1280 px), with the
shipped files named as an operator at the repository's root names them (``data/live/...``,
wherever the data folder is), and, for a section about one problem, only that problem's
findings (the others counted on the last line, never hidden silently).

>>> print(doctor_says("data/live/doctor/capture-4", ids=["more-consumers-than-queues"]
...                   ).splitlines()[0])
$ rocketlb doctor data/live/doctor/capture-4
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rocketlb_core.doctor import as_json, examine
from rocketlb_core.doctor import report as _report
from rocketlb_core.doctor.findings import Finding
from rocketlb_core.doctor.inputs import Evidence, Inputs
from rocketlb_core.paths import data_root

BOOK_WIDTH = 76


def _shipped(path: str) -> Path:
    """``data/...`` as a path in the data folder (``paths.data_root``)."""
    parts = Path(path).parts
    if not parts or parts[0] != "data":
        raise ValueError(f"{path}: name a shipped artefact as data/...")
    found = data_root().joinpath(*parts[1:])
    if not found.exists():
        raise FileNotFoundError(f"{path} not found in the data folder")
    return found


def _as_shipped(path: str) -> str:
    """A path the doctor read, named from the repository's root (``data/...``)."""
    root = str(data_root())
    return "data" + path[len(root):] if path.startswith(root + "/") else path


def _relabel(inputs: Inputs, findings: list[Finding]) -> tuple[Inputs, list[Finding]]:
    def ev(e: Evidence) -> Evidence:
        return replace(e, path=_as_shipped(e.path))

    inputs = replace(inputs, read=[(_as_shipped(p), k) for p, k in inputs.read],
                     ignored=[(_as_shipped(p), w) for p, w in inputs.ignored])
    return inputs, [replace(f, evidence=[ev(e) for e in f.evidence]) for f in findings]


def examine_shipped(*paths: str) -> tuple[Inputs, list[Finding], list[str]]:
    """``doctor.examine`` on shipped artefacts (``data/...``), their files named ``data/...``."""
    inputs, findings, notes = examine([_shipped(p) for p in paths])
    inputs, findings = _relabel(inputs, findings)
    return inputs, findings, notes


def _chosen(f: Finding, ids: Sequence[str], group: str | None, topic: str | None) -> bool:
    return ((not ids or f.id in ids) and (group is None or f.group == group)
            and (topic is None or f.topic == topic))


def doctor_says(*paths: str, ids: Sequence[str] = (), group: str | None = None,
                topic: str | None = None, show_ignored: bool = False,
                width: int = BOOK_WIDTH) -> str:
    """The report ``rocketlb doctor PATHS`` prints, at ``width`` columns, with the findings
    whose id is in ``ids`` (all when empty), of ``group`` and ``topic`` when given. The first
    line is the command; when findings were left out, the last line names them. The files of
    no known kind are listed only with ``show_ignored`` (their count is always given)."""
    inputs, findings, notes = examine_shipped(*paths)
    shown = [f for f in findings if _chosen(f, ids, group, topic)]
    if not shown:
        raise ValueError(f"no finding {list(ids)} (group {group}, topic {topic}) in {paths}")
    text = _report.render(inputs, shown, notes if len(shown) == len(findings) else [],
                          width=width)
    if not show_ignored:
        kept, dropping = [], False
        for t in text.split("\n"):
            # an ignored file's line, and its reason wrapped onto the lines below it
            dropping = t.startswith(("  ignored ", "  ... and ")) or (
                dropping and t.startswith("    "))
            if not dropping:
                kept.append(t)
        text = "\n".join(kept)
    head = "$ rocketlb doctor " + " ".join(paths)
    rest = [f for f in findings if f not in shown]
    tail = ""
    if rest:
        tail = "\n" + "\n".join(textwrap.wrap(
            f"({len(rest)} other finding(s) in these inputs, not shown here: "
            + ", ".join(dict.fromkeys(f.id for f in rest)) + ")", width,
            break_on_hyphens=False))
    return head + "\n" + text.rstrip("\n") + tail


def json_excerpt(*paths: str, finding: int = 0, keys: Sequence[str] = (),
                 width: int = BOOK_WIDTH) -> str:
    """An excerpt of ``rocketlb doctor PATHS --json``, after the command: the document's
    top-level keys, and the ``keys`` of its finding number ``finding`` (0: the first),
    indented; a line longer than ``width`` is cut and ends in ``...``."""
    inputs, findings, notes = examine_shipped(*paths)
    doc = as_json(inputs, findings, notes)
    one: dict[str, Any] = doc["findings"][finding]
    excerpt = {"format": doc["format"], "version": doc["version"],
               "inputs": f"[{len(doc['inputs'])} files]",
               "ignored": f"[{len(doc['ignored'])} files]",
               "findings": f"[{len(doc['findings'])} findings; number {finding} below]",
               f"findings[{finding}]": {k: one[k] for k in keys} if keys else one}
    lines = ["$ rocketlb doctor " + " ".join(paths) + " --json   (an excerpt)"]
    lines += json.dumps(excerpt, indent=1, ensure_ascii=False).splitlines()
    return "\n".join(t if len(t) <= width else t[:width - 3] + "..." for t in lines)


def recognised(path: str) -> list[tuple[str, str]]:
    """What the doctor made of each file under ``path`` (``data/...``): (the file, named from
    ``path``, and its kind, or ``ignored: why``), in the order read."""
    inputs, _, _ = examine_shipped(path)
    cut = len(path.rstrip("/")) + 1
    return ([(p[cut:], k) for p, k in inputs.read]
            + [(p[cut:], "ignored: " + why) for p, why in inputs.ignored])


def write_page(*paths: str, page: str, book: str | None = None) -> str:
    """Write what ``rocketlb doctor PATHS --html PAGE`` writes (``doctor.html``: one
    self-contained offline page), its files named ``data/...``; returns what was done. With
    ``book`` (the built book's root, relative to where the page will be served), each
    finding's "read" link points at the built chapter (``.html``) instead of the notebook, and
    its "operators asked" links at the built questions page."""
    from rocketlb_core.doctor.html import render_html, write_html

    inputs, findings, notes = examine_shipped(*paths)
    if book is not None:
        findings = [replace(f, book=book + f.book.replace(".ipynb#", ".html#", 1),
                            questions=[book + q.replace(".md#", ".html#", 1)
                                       for q in f.questions])
                    for f in findings]
    text = render_html(inputs, findings, notes)
    write_html(page, text)
    return (f"$ rocketlb doctor {' '.join(paths)} --html {page}\n"
            f"wrote {page}: {len(findings)} findings, {text.count('<svg')} charts")
