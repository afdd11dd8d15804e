"""Sequence diagrams for the book, drawn at build time from a text source into inline SVG.

The source is a small subset of Mermaid's ``sequenceDiagram`` language, so a reader who knows
Mermaid can read it and nothing has to be fetched from a CDN to draw it::

    participant P as Producer
    participant B as broker-a
    P->>B: SEND_MESSAGE          (a request: solid line)
    B-->>P: SendResult           (a reply: dashed line)
    P-xB: timeout                (a failed call: ends in a cross)
    P->>P: updateFaultItem       (a call on itself)
    note over P,B: text          (also: note left of P / note right of P)
    loop up to 3 attempts        (also: alt / else / opt / par / and ... end)
    end

``<br>`` breaks a line of text. The SVG draws with ``currentColor``, so it follows the page's text
colour in the light and the dark theme; it scales down to the column (``max-width: 100%``).
Layout and output are deterministic: the same source gives the same bytes.

The diagrams the book shows live as text files in ``rocketlb_core/viz/diagrams/``
(``diagram(name)``); ``sequence_diagram(source)`` draws any source.
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass, field
from importlib import resources

FONT_PX = 13
CHAR_PX = 7.0          # average advance of a 13 px sans-serif character, a little generous
LINE_PX = 16
BOX_H = 34
MIN_GAP = 120
MARGIN = 12


class SequenceError(ValueError):
    """A sequence-diagram source that cannot be drawn; names the line."""


@dataclass
class _Item:
    kind: str                      # msg, note, open, else, close
    line: int
    a: str = ""
    b: str = ""
    text: str = ""
    style: str = ""                # msg: solid/dashed/cross; note: over/left/right; frame keyword
    y: float = 0.0
    h: float = 0.0


@dataclass
class _Frame:
    keyword: str
    text: str
    y0: float
    depth: int
    members: set[str] = field(default_factory=set)
    elses: list[tuple[float, str]] = field(default_factory=list)
    y1: float = 0.0
    right: float = 0.0             # the right end of self-call labels inside the frame


_PARTICIPANT = re.compile(r"^(participant|actor)\s+([A-Za-z0-9_.]+)(?:\s+as\s+(.+))?$")
_MESSAGE = re.compile(r"^([A-Za-z0-9_.]+)\s*(-->>|->>|-x|--x)\s*([A-Za-z0-9_.]+)\s*:\s*(.*)$")
_NOTE = re.compile(r"^note\s+(over|left of|right of)\s+([A-Za-z0-9_.]+)(?:\s*,\s*([A-Za-z0-9_.]+))?"
                   r"\s*:\s*(.*)$", re.IGNORECASE)
_OPEN = re.compile(r"^(loop|alt|opt|par|critical)\b\s*(.*)$")
_ELSE = re.compile(r"^(else|and)\b\s*(.*)$")


def _lines(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"<br\s*/?>", text)]


def _width(text: str) -> float:
    return max((len(t) for t in _lines(text)), default=0) * CHAR_PX


def _parse(source: str) -> tuple[dict[str, str], list[_Item]]:
    labels: dict[str, str] = {}
    items: list[_Item] = []
    depth = 0
    for number, raw in enumerate(source.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%%") or line == "sequenceDiagram" or line == "autonumber":
            continue
        if m := _PARTICIPANT.match(line):
            labels.setdefault(m.group(2), (m.group(3) or m.group(2)).strip())
        elif m := _MESSAGE.match(line):
            style = {"->>": "solid", "-->>": "dashed", "-x": "cross", "--x": "cross"}[m.group(2)]
            items.append(_Item("msg", number, m.group(1), m.group(3), m.group(4).strip(), style))
        elif m := _NOTE.match(line):
            where = m.group(1).lower().split()[0]
            items.append(_Item("note", number, m.group(2), m.group(3) or m.group(2),
                               m.group(4).strip(), where))
        elif m := _OPEN.match(line):
            items.append(_Item("open", number, text=m.group(2).strip(), style=m.group(1)))
            depth += 1
        elif m := _ELSE.match(line):
            if depth == 0:
                raise SequenceError(f"line {number}: '{m.group(1)}' outside alt/par: {line!r}")
            items.append(_Item("else", number, text=m.group(2).strip(), style=m.group(1)))
        elif line == "end":
            if depth == 0:
                raise SequenceError(f"line {number}: 'end' without loop/alt/opt/par")
            items.append(_Item("close", number))
            depth -= 1
        else:
            raise SequenceError(f"line {number}: not a participant, message, note or frame: "
                                f"{line!r}")
    if depth:
        raise SequenceError(f"{depth} loop/alt/opt/par block(s) not closed with 'end'")
    for it in items:
        for who in (it.a, it.b):
            if who and who not in labels:
                labels[who] = who            # Mermaid declares participants on first use too
    if not items:
        raise SequenceError("the diagram has no messages")
    return labels, items


def sequence_svg(source: str, title: str = "") -> str:
    """The SVG text of one diagram (deterministic)."""
    labels, items = _parse(source)
    names = list(labels)
    col = {n: i for i, n in enumerate(names)}
    box_w = [max(96.0, _width(labels[n]) + 24) for n in names]
    # gaps between neighbouring lifelines: wide enough for every label that spans them
    gaps = [max(MIN_GAP, (box_w[i] + box_w[i + 1]) / 2 + 16) for i in range(len(names) - 1)]
    for it in items:
        if it.kind == "msg" and it.a != it.b:
            i, j = sorted((col[it.a], col[it.b]))
            need = _width(it.text) + 24
            have = sum(gaps[i:j])
            if need > have:
                extra = (need - have) / (j - i)
                for k in range(i, j):
                    gaps[k] += extra
    note_pad = max((_width(it.text) + 30 for it in items
                    if it.kind == "note" and it.style in ("left", "right")), default=0.0)
    xs = [MARGIN + max(box_w[0] / 2, note_pad if note_pad else 0.0)]
    for g in gaps:
        xs.append(xs[-1] + g)
    x_of = {n: xs[col[n]] for n in names}
    width = xs[-1] + box_w[-1] / 2 + MARGIN

    # vertical layout
    y = MARGIN + BOX_H + 18.0
    frames: list[_Frame] = []
    stack: list[_Frame] = []
    for it in items:
        if it.kind == "msg":
            n = len(_lines(it.text))
            it.y = y + LINE_PX * n
            it.h = LINE_PX * n + (30 if it.a == it.b else 16)
            y += it.h
            for f in stack:
                f.members |= {it.a, it.b}
                if it.a == it.b:
                    f.right = max(f.right, x_of[it.a] + _width(it.text) + 48)
        elif it.kind == "note":
            n = len(_lines(it.text))
            it.y = y
            it.h = LINE_PX * n + 10
            y += it.h + 10
            for f in stack:
                f.members |= {it.a, it.b}
        elif it.kind == "open":
            f = _Frame(it.style, it.text, y, len(stack))
            stack.append(f)
            frames.append(f)
            y += 26
        elif it.kind == "else":
            y += 4
            stack[-1].elses.append((y, it.text))
            y += 24
        else:
            f = stack.pop()
            f.y1 = y + 4
            if stack:
                stack[-1].members |= f.members
                stack[-1].right = max(stack[-1].right, f.right + 8)
            y += 14
    height = y + 10 + BOX_H + MARGIN

    digest = hashlib.sha1(source.encode()).hexdigest()[:10]
    out: list[str] = []
    span = [0.0, width]

    def reach(lo: float, hi: float) -> None:
        span[0], span[1] = min(span[0], lo), max(span[1], hi)

    def text(x: float, y0: float, t: str, anchor: str = "middle", weight: str = "") -> None:
        w = f' font-weight="{weight}"' if weight else ""
        tw = _width(t) * (1.08 if weight else 1.0)
        lo = {"start": x, "middle": x - tw / 2}.get(anchor, x - tw)
        reach(lo, lo + tw)
        for k, part in enumerate(_lines(t)):
            out.append(f'<text x="{x:.1f}" y="{y0 + k * LINE_PX:.1f}" text-anchor="{anchor}" '
                       f'stroke="none"{w}>{html.escape(part)}</text>')

    # frames, behind everything
    for f in frames:
        members = f.members or set(names)
        left = min(x_of[m] for m in members) - 60 + 8 * f.depth
        right = max(x_of[m] for m in members) + 60 - 8 * f.depth
        right = max(right, f.right - 8 * f.depth)
        reach(left, right)
        out.append(f'<rect x="{left:.1f}" y="{f.y0:.1f}" width="{right - left:.1f}" '
                   f'height="{f.y1 - f.y0:.1f}" fill="none" stroke-width="1" rx="3"/>')
        label = f.keyword
        tab = len(label) * CHAR_PX + 14
        out.append(f'<path d="M{left:.1f},{f.y0:.1f} h{tab:.1f} v12 l-6,6 h{-tab + 6:.1f} z" '
                   f'fill-opacity="0.12" stroke-width="1"/>')
        text(left + 6, f.y0 + 14, label, "start", "600")
        if f.text:
            text(left + tab + 8, f.y0 + 14, f"[{f.text}]", "start")
        for ey, etext in f.elses:
            out.append(f'<line x1="{left:.1f}" y1="{ey:.1f}" x2="{right:.1f}" y2="{ey:.1f}" '
                       f'stroke-dasharray="5,4" stroke-width="1"/>')
            if etext:
                text(left + 8, ey + 16, f"[{etext}]", "start")

    # participants and lifelines
    for who in names:
        x = x_of[who]
        w = box_w[col[who]]
        out.append(f'<line x1="{x:.1f}" y1="{MARGIN + BOX_H:.1f}" x2="{x:.1f}" '
                   f'y2="{height - MARGIN - BOX_H:.1f}" stroke-dasharray="3,4" '
                   f'stroke-opacity="0.55" stroke-width="1"/>')
        for top in (MARGIN, height - MARGIN - BOX_H):
            out.append(f'<rect x="{x - w / 2:.1f}" y="{top:.1f}" width="{w:.1f}" '
                       f'height="{BOX_H}" rx="4" fill-opacity="0.07" stroke-width="1.2"/>')
            text(x, top + BOX_H / 2 + 4.5, labels[who], weight="600")

    # messages and notes
    for it in items:
        if it.kind == "msg":
            dash = ' stroke-dasharray="6,4"' if it.style == "dashed" else ""
            xa, xb = x_of[it.a], x_of[it.b]
            if it.a == it.b:
                y0 = it.y + 4
                out.append(f'<path d="M{xa:.1f},{y0:.1f} h34 v18 h-30" fill="none" '
                           f'stroke-width="1.3"{dash}/>')
                out.append(f'<path d="M{xa + 2:.1f},{y0 + 18:.1f} l8,-4.5 v9 z" stroke="none"/>')
                text(xa + 40, y0 + 13 - LINE_PX * (len(_lines(it.text)) - 1), it.text, "start")
                continue
            sign = 1 if xb > xa else -1
            end = xb - sign * 2
            out.append(f'<line x1="{xa:.1f}" y1="{it.y:.1f}" x2="{end:.1f}" y2="{it.y:.1f}" '
                       f'stroke-width="1.3"{dash}/>')
            if it.style == "cross":
                cx = xb - sign * 10
                out.append(f'<path d="M{cx - 5:.1f},{it.y - 5:.1f} l10,10 M{cx + 5:.1f},'
                           f'{it.y - 5:.1f} l-10,10" stroke-width="2" fill="none"/>')
            else:
                out.append(f'<path d="M{end:.1f},{it.y:.1f} l{-sign * 10},-4.5 v9 z" '
                           f'stroke="none"/>')
            mid = (xa + xb) / 2
            text(mid, it.y - 6 - LINE_PX * (len(_lines(it.text)) - 1), it.text)
        elif it.kind == "note":
            xa, xb = sorted((x_of[it.a], x_of[it.b]))
            w = _width(it.text) + 20
            if it.style == "over":
                left = min(xa - 20, (xa + xb) / 2 - w / 2)
                right = max(xb + 20, (xa + xb) / 2 + w / 2)
            elif it.style == "left":
                left, right = xa - 10 - w, xa - 10
            else:
                left, right = xb + 10, xb + 10 + w
            reach(left, right)
            out.append(f'<rect x="{left:.1f}" y="{it.y:.1f}" width="{right - left:.1f}" '
                       f'height="{it.h:.1f}" rx="3" fill="#e0b400" fill-opacity="0.22" '
                       f'stroke="#c49a00" stroke-width="1"/>')
            text((left + right) / 2, it.y + 17, it.text)
    lo, hi = span[0] - MARGIN / 2, span[1] + MARGIN / 2
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="rlb-seq-svg" viewBox="{lo:.0f} 0 '
        f'{hi - lo:.0f} {height:.0f}" width="{hi - lo:.0f}" height="{height:.0f}" '
        f'style="max-width: 100%; height: auto" role="img" aria-labelledby="rlb-seq-{digest}" '
        f'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" '
        f'font-size="{FONT_PX}" fill="currentColor" stroke="currentColor">',
        f'<title id="rlb-seq-{digest}">{html.escape(title or "sequence diagram")}</title>',
    ]
    return "\n".join([*head, *out, "</svg>"])


class SequenceDiagram:
    """A drawn diagram: shows itself as HTML (a ``figure`` with the SVG and a caption) in
    Jupyter and in the built book."""

    def __init__(self, source: str, title: str = "", caption: str = "") -> None:
        self.source = source
        self.title = title
        self.caption = caption
        self.svg = sequence_svg(source, title)

    def _repr_html_(self) -> str:
        head = (f'<div class="rlb-seq-title">{html.escape(self.title)}</div>'
                if self.title else "")
        cap = (f"<figcaption>{html.escape(self.caption)}</figcaption>" if self.caption else "")
        return (f'<figure class="rlb-seq">{head}<div class="rlb-seq-scroll">{self.svg}</div>'
                f"{cap}</figure>")

    def __repr__(self) -> str:
        return f"SequenceDiagram({self.title!r})"


def sequence_diagram(source: str, title: str = "", caption: str = "") -> SequenceDiagram:
    """Draw ``source`` (see the module docstring)."""
    return SequenceDiagram(source, title, caption)


def diagram_source(name: str) -> str:
    """The text of the shipped diagram ``name`` (``rocketlb_core/viz/diagrams/<name>.seq``)."""
    if not re.fullmatch(r"[a-z0-9-]+", name):
        raise SequenceError(f"not a diagram name: {name!r}")
    try:
        return (resources.files("rocketlb_core.viz") / "diagrams" / f"{name}.seq").read_text()
    except FileNotFoundError:
        raise SequenceError(f"no diagram {name!r} in rocketlb_core/viz/diagrams/") from None


def diagram(name: str, caption: str = "") -> SequenceDiagram:
    """A shipped diagram. Its first line, ``%% title: ...``, gives the title."""
    source = diagram_source(name)
    first = source.splitlines()[0] if source else ""
    title = first.split(":", 1)[1].strip() if first.startswith("%% title:") else name
    return SequenceDiagram(source, title, caption)
