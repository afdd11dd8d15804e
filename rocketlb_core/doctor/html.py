"""``rocketlb doctor --html PATH``: one self-contained offline page of the findings, with three
charts drawn as inline SVG: queue ownership and lag per queue (``consumerProgress``, else the
client logs' last assignments) and the isolation timeline (``broker-isolated`` and
``failing-broker-not-avoided``).

Nothing is loaded from anywhere: no script, no stylesheet, no font, no image is referenced, so
the page opens the same offline, in a mail attachment or on a ticket. (The book's charts,
``rocketlb_core.viz``, need Altair, pandas and an inlined Vega bundle of several megabytes: too
heavy for an incident page, and the doctor stays on the standard library.)

``write_html`` writes the page atomically (a temporary file beside it, then ``os.replace``) and
only over a file it wrote before: a page carries ``GENERATOR`` in its first line, and any other
file, a folder or a symbolic link where the page should go is refused with an ``OutputError``
(exit 2), as ``rocketlb_core.atomic`` refuses output folders rocketlb did not write.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from rocketlb_core.atomic import atomic_file, check_output_file
from rocketlb_core.doctor.findings import Finding
from rocketlb_core.doctor.inputs import Inputs
from rocketlb_core.doctor.replayed import SOURCE_REPLAY
from rocketlb_core.doctor.report import safe

GENERATOR = '<!-- written by rocketlb doctor --html; rocketlb may replace this file -->'
_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7",
            "#9c755f", "#bab0ac", "#e15759")
_SEVERITY = {"critical": "#a93226", "warning": "#875a00", "info": "#1f618d"}
"""Severity colours with at least 4.5:1 contrast on the findings' background (WCAG AA)."""
_NAMED = 64
"""Queues a chart's accessible name lists (``aria-label``) before "and N more"."""


def _ink(fill: str) -> str:
    """Black or white, whichever reads better on ``fill`` (#rgb or #rrggbb).

    >>> _ink("#edc948"), _ink("#8e44ad"), _ink("#999")
    ('#000', '#fff', '#000')
    """
    h = fill[1:] if len(fill) == 7 else "".join(c * 2 for c in fill[1:])
    r, g, b = (int(h[i:i + 2], 16) / 255 for i in (0, 2, 4))

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    lum = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    return "#000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#fff"


def _named(items: list[str]) -> str:
    more = len(items) - _NAMED
    return "; ".join(items[:_NAMED]) + (f"; and {more} more" if more > 0 else "")
_CSS = """body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222}h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ccc}
.f{border-left:5px solid #999;padding:.3em 1em;margin:1em 0;background:#fafafa}
.sev{font-weight:bold;text-transform:uppercase}pre{white-space:pre-wrap;font-size:12px;
background:#f0f0f0;padding:.5em}small{color:#666}svg text{font:11px sans-serif}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;font-size:12px}"""


def _t(text: object) -> str:
    return escape(safe(str(text)))


def _finding(i: int, f: Finding) -> str:
    colour = _SEVERITY.get(f.severity, "#999")
    rows = [f'<div class="f" id="finding-{i}" style="border-color:{colour}">',
            f'<p><span class="sev" style="color:{colour}">{_t(f.severity)}</span> '
            f'<code>{_t(f.id)}</code>: {_t(f.title)}</p>']
    where = [x for x in (f"group {f.group}" if f.group else "",
                         f"topic {f.topic}" if f.topic else "") if x]
    for label, values in (("where", where), ("members", f.members), ("hosts", f.hosts),
                          ("queues", f.queues)):
        if values:
            rows.append(f"<p><b>{label}:</b> {_t(', '.join(values))}</p>")
    if f.evidence:
        quoted = "\n".join(_t(f"{e.path}:{e.line}: {e.text}") for e in f.evidence[:8])
        rows.append(f"<p><b>evidence:</b></p><pre>{quoted}</pre>")
    rows.append(f"<p>{_t(f.explanation)}</p><p><b>fix:</b> {_t(f.fix)}</p>")
    if f.before_after:
        how = "replayed" if f.before_after.get("source") == SOURCE_REPLAY else "computed"
        rows.append(f"<p><b>what the fix changes ({how}):</b> "
                    f"{_t(f.before_after['text'])}</p>")
    rows.append(f'<p><b>read:</b> <a href="{_t(f.book)}">{_t(f.book)}</a></p>')
    if f.questions:
        asked = ", ".join(f'<a href="{_t(q)}">{_t(q.partition("#")[2] or q)}</a>'
                          for q in f.questions)
        rows.append(f"<p><b>operators asked:</b> {asked}</p>")
    rows[-1] += "</div>"
    return "\n".join(rows)


def _ownership(inputs: Inputs) -> dict[tuple[str, str], list[tuple[str, str, int]]]:
    """(group, topic) -> [(queue, owner or "", diff)] from ``consumerProgress -s true``, else
    (diff -1) the client logs' last assignment of each member."""
    out: dict[tuple[str, str], list[tuple[str, str, int]]] = {}
    seen: set[tuple[str, str, str]] = set()
    for pf in sorted(inputs.progress, key=lambda p: not p.with_clients):
        for r in pf.rows:
            if pf.group is None or r.topic.startswith("%"):
                continue
            rows = out.setdefault((pf.group, r.topic), [])
            q = f"{r.broker}/{r.queue_id}"
            if (pf.group, r.topic, q) not in seen:
                seen.add((pf.group, r.topic, q))
                rows.append((q, (r.client or "") if pf.with_clients else "?", r.diff))
    for cl in inputs.client_logs:
        for (g, t), last in cl.last.items():
            if t.startswith("%") or ((g, t) in out and not any(x[2] == -1 for x in out[(g, t)])):
                continue
            rows = out.setdefault((g, t), [])
            rows += [(q.short(), last.client_id, -1) for q in last.result]
    return {k: sorted(v) for k, v in sorted(out.items()) if v}


def _ownership_svg(rows: list[tuple[str, str, int]]) -> str:
    owners = sorted({o for _, o, _ in rows if o and o != "?"})
    colour = {o: _COLOURS[i % len(_COLOURS)] for i, o in enumerate(owners)}
    w, h = 120, 22
    parts = []
    queues = list(dict.fromkeys(q for q, _, _ in rows))
    for i, q in enumerate(queues):
        held = [o for qq, o, _ in rows if qq == q]
        x = (i % 8) * (w + 4)
        y = (i // 8) * (h + 18)
        fill = "#e74c3c" if held == [""] else "#999" if held == ["?"] else \
            colour.get(held[0], "#999") if len(held) == 1 else "#8e44ad"
        who = ", ".join(o or "nobody" for o in held)
        parts.append(f'<g><title>{_t(q)}: {_t(who)}</title><rect x="{x}" y="{y}" width="{w}" '
                     f'height="{h}" fill="{fill}"/><text x="{x + 4}" y="{y + 15}" '
                     f'fill="{_ink(fill)}">{_t(q)}</text><text x="{x}" y="{y + h + 12}">'
                     f'{_t(who[:22])}</text></g>')
    height = ((len(queues) + 7) // 8) * (h + 18) + 4
    legend = " ".join(f'<span style="color:{c}">&#9632;</span> {_t(o)}'
                      for o, c in colour.items())
    label = _named([f"{q}: " + ", ".join(o or "nobody" for qq, o, _ in rows if qq == q)
                    for q in queues])
    return (f'<svg role="img" aria-label="{_t("Queue ownership, " + label)}" '
            f'width="{8 * (w + 4)}" height="{height}">{"".join(parts)}</svg><p><small>{legend} '
            '<span style="color:#e74c3c">&#9632;</span> nobody '
            '<span style="color:#8e44ad">&#9632;</span> two or more</small></p>')


def _lag_svg(rows: list[tuple[str, str, int]]) -> str:
    top = max(d for _, _, d in rows) or 1
    bar, width = 16, 600
    parts = []
    for i, (q, owner, d) in enumerate(rows):
        y = i * (bar + 4)
        length = int(width * max(d, 0) / top)
        parts.append(f'<g><title>{_t(q)}: {d} waiting</title><text x="0" y="{y + 12}">'
                     f'{_t(q)}</text><rect x="110" y="{y}" width="{length}" height="{bar}" '
                     f'fill="{"#e74c3c" if owner == "" else "#4e79a7"}"/><text '
                     f'x="{114 + length}" y="{y + 12}">{d}</text></g>')
    label = _named([f"{q}: {d} waiting" + ("" if owner else ", no owner")
                    for q, owner, d in rows])
    return (f'<svg role="img" aria-label="{_t("Lag per queue, " + label)}" '
            f'width="{width + 180}" height="{len(rows) * (bar + 4)}">{"".join(parts)}</svg>')


def _timeline_svg(findings: list[Finding]) -> str:
    """A bar per isolation window, a tick per failed attempt the producer did not avoid."""
    lanes: list[tuple[str, list[tuple[int, int]], list[int]]] = []
    for f in findings:
        d = f.details
        if f.id == "broker-isolated":
            spans = [(int(w["start_ms"]), int(w["end_ms"])) for w in d.get("windows", [])]
            lanes.append((f"{f.title.split(' avoided ')[0]} -> {d.get('broker')}", spans, []))
        elif f.id == "failing-broker-not-avoided":
            ticks = [int(t) for t in d.get("failure_ms", [])]
            lanes.append((f"{f.title.split(' kept ')[0]} -> {d.get('broker')}", [], ticks))
    if not lanes:
        return ""
    times = [t for _, spans, ticks in lanes for s in spans for t in s] + \
        [t for _, _, ticks in lanes for t in ticks]
    t0, t1 = min(times), max(times)
    span = max(t1 - t0, 1)
    width, left, lane = 700, 260, 26
    parts = []
    for i, (label, spans, ticks) in enumerate(lanes):
        y = i * lane + 4
        parts.append(f'<text x="0" y="{y + 13}">{_t(label[:40])}</text>')
        for a, b in spans:
            x = left + int(width * (a - t0) / span)
            w = max(2, int(width * (b - a) / span))
            parts.append(f'<g><title>isolated for {(b - a) // 1000} s</title><rect x="{x}" '
                         f'y="{y}" width="{w}" height="18" fill="#d68910"/></g>')
        for t in ticks:
            x = left + int(width * (t - t0) / span)
            parts.append(f'<rect x="{x}" y="{y}" width="2" height="18" fill="#c0392b"/>')
    axis = len(lanes) * lane + 16
    parts.append(f'<text x="{left}" y="{axis}">{_t(_stamp(t0))}</text><text '
                 f'x="{left + width}" y="{axis}" text-anchor="end">{_t(_stamp(t1))}</text>')
    label = _named([f"{name}: " + ", ".join(
        x for x in (f"{len(spans)} isolation(s), {sum(b - a for a, b in spans) // 1000} s in all"
                    if spans else "", f"{len(ticks)} failed attempt(s) not avoided"
                    if ticks else "") if x) for name, spans, ticks in lanes])
    return (f'<svg role="img" aria-label="'
            f'{_t(f"Isolation timeline from {_stamp(t0)} to {_stamp(t1)}, {label}")}" '
            f'width="{left + width + 10}" '
            f'height="{axis + 6}">{"".join(parts)}</svg><p><small><span style="color:#d68910">'
            '&#9632;</span> the broker isolated (the core\'s fault-strategy rules for the '
            'client\'s line) <span style="color:#c0392b">&#9632;</span> a failed attempt the '
            'producer did not avoid</small></p>')


def _stamp(ms: int) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime(
        "%Y-%m-%d %H:%M:%S UTC")


def render_html(inputs: Inputs, findings: list[Finding], notes: list[str]) -> str:
    """The page (module docstring)."""
    kinds: dict[str, int] = {}
    for _, kind in inputs.read:
        kinds[kind] = kinds.get(kind, 0) + 1
    body = [GENERATOR, "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="generator" content="rocketlb doctor">',
            "<title>rocketlb doctor report</title>", f"<style>{_CSS}</style></head><body>",
            "<h1>rocketlb doctor</h1>",
            f"<p>Read {_t(', '.join(f'{n} {k}' for k, n in sorted(kinds.items())) or 'nothing')}"
            f"; {len(inputs.ignored)} file(s) ignored; {len(inputs.bad)} bad line(s) skipped."
            "</p>", f"<h2>Findings ({len(findings)})</h2>"]
    if not findings:
        body.append("<p>No balancing problem found in these inputs.</p>")
    body += [_finding(i, f) for i, f in enumerate(findings, 1)]
    owned = _ownership(inputs)
    body.append('<h2 id="ownership">Queue ownership</h2>')
    if not owned:
        body.append("<p>No consumerProgress output or consumer client log given.</p>")
    for (g, t), rows in owned.items():
        source = "client logs" if any(d == -1 for _, _, d in rows) else "consumerProgress"
        body.append(f"<h3>{_t(g)} / {_t(t)} <small>({source})</small></h3>"
                    + _ownership_svg(rows))
    body.append('<h2 id="lag">Lag per queue</h2>')
    lagged = {k: [r for r in v if r[2] >= 0] for k, v in owned.items()}
    if not any(lagged.values()):
        body.append("<p>No consumerProgress output given.</p>")
    for (g, t), rows in lagged.items():
        if rows:
            body.append(f"<h3>{_t(g)} / {_t(t)}: {sum(max(d, 0) for *_, d in rows)} "
                        f"messages waiting</h3>" + _lag_svg(rows))
    body.append('<h2 id="isolation">Isolation timeline</h2>')
    body.append(_timeline_svg(findings) or "<p>No failed send in the client logs given.</p>")
    if notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_t(n)}</li>" for n in notes)
                    + "</ul>")
    body.append("</body></html>")
    return "\n".join(body) + "\n"


def check_html_target(path: Path) -> None:
    """Raise ``OutputError`` unless ``path`` is absent or a page this module wrote."""
    check_output_file(path, GENERATOR, "the doctor")


def write_html(path: Path | str, page: str) -> None:
    """Write ``page`` to ``path`` atomically, only where ``check_html_target`` allows."""
    atomic_file(path, page, GENERATOR, "the doctor")
