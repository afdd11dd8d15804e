"""The doctor's terminal report: at most 100 columns, colour only when asked (on a terminal),
nothing from an input printed raw (``cli.printable``-style escapes)."""

from __future__ import annotations

import re
import textwrap

from rocketlb_core.doctor.findings import Finding
from rocketlb_core.doctor.inputs import Inputs
from rocketlb_core.doctor.replayed import SOURCE_REPLAY

WIDTH = 100
_COLOURS = {"critical": "\x1b[1;31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_RESET = "\x1b[0m"
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069\ud800-\udfff]")


def safe(text: str) -> str:
    """``text`` with control and bidirectional characters shown as escapes."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100
                       else f"\\u{ord(m[0]):04x}", text)


def _asked(links: list[str]) -> str:
    """Links into one page, its path named once: ``page#a, #b``.

    >>> _asked(["book/questions.md#asked-x-1", "book/questions.md#asked-x-2"])
    'book/questions.md#asked-x-1, #asked-x-2'
    """
    out: list[str] = []
    page = None
    for link in links:
        path, _, anchor = link.partition("#")
        out.append(f"#{anchor}" if path == page else link)
        page = path
    return ", ".join(out)


def render(inputs: Inputs, findings: list[Finding], notes: list[str], *,
           colour: bool = False, width: int = WIDTH) -> str:
    """The report, no line wider than ``width`` columns (the book prints it at its own)."""

    def _wrap(text: str, indent: str = "  ") -> list[str]:
        return textwrap.wrap(safe(text), width, initial_indent=indent,
                             subsequent_indent=indent, break_long_words=True,
                             break_on_hyphens=False) or [indent]

    def _clip(text: str) -> str:
        text = safe(text)
        return text if len(text) <= width else text[:width - 3] + "..."

    lines: list[str] = []
    kinds: dict[str, int] = {}
    for _, kind in inputs.read:
        kinds[kind] = kinds.get(kind, 0) + 1
    lines += _wrap("rocketlb doctor: read " + (", ".join(
        f"{n} {k}" for k, n in sorted(kinds.items())) or "nothing")
        + (f"; {len(inputs.ignored)} file(s) ignored" if inputs.ignored else "")
        + (f"; {len(inputs.bad)} bad line(s) skipped" if inputs.bad else ""), "")
    for path, why in inputs.ignored[:20]:
        lines += textwrap.wrap(safe(f"ignored {path}: {why}"), width, initial_indent="  ",
                               subsequent_indent="    ", break_long_words=True,
                               break_on_hyphens=False)
    if len(inputs.ignored) > 20:
        lines.append(f"  ... and {len(inputs.ignored) - 20} more ignored")
    lines.append("")
    if not findings:
        lines.append("No balancing problem found in these inputs.")
    for i, f in enumerate(findings, 1):
        head = f"[{f.severity.upper()}] {f.id}"
        if colour:
            head = _COLOURS.get(f.severity, "") + head + _RESET
        lines.append(f"{i}. {head}")
        lines += _wrap(f.title, "   ")
        where = [x for x in (f"group {f.group}" if f.group else "",
                             f"topic {f.topic}" if f.topic else "") if x]
        if f.details.get("since"):
            where.append(f"state from {f.details['since']}")
        if where:
            lines += _wrap(", ".join(where), "   ")
        if f.members:
            lines += _wrap("members: " + ", ".join(f.members), "   ")
        if f.hosts:
            lines += _wrap("hosts: " + ", ".join(f.hosts), "   ")
        if f.queues:
            lines += _wrap("queues: " + ", ".join(f.queues), "   ")
        if f.evidence:
            lines.append("   evidence:")
            for e in f.evidence[:8]:
                lines.append(_clip(f"     {e.path}:{e.line}:"))
                lines += _wrap(" ".join(e.text.split()), "       ")[:4]
            if len(f.evidence) > 8:
                lines.append(f"     ... and {len(f.evidence) - 8} more lines")
        lines += _wrap(f.explanation, "   ")
        lines += _wrap("fix: " + f.fix, "   ")
        if f.before_after:
            how = "replayed" if f.before_after.get("source") == SOURCE_REPLAY else "computed"
            lines += _wrap(f"what the fix changes ({how}): " + f.before_after["text"], "   ")
        lines += _wrap("read: " + f.book, "   ")
        if f.questions:
            lines += _wrap("operators asked: " + _asked(f.questions), "   ")
        lines.append("")
    for n in notes:
        lines += _wrap("note: " + n, "")
    return "\n".join(lines).rstrip("\n") + "\n"
