"""Sequence diagrams drawn from text (``rocketlb_core.viz.sequence``): every shipped source
draws, the output is deterministic and well-formed SVG, bad sources name their line, and what is
drawn follows the source."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from importlib import resources

import pytest

from rocketlb_core.viz.sequence import SequenceError, diagram, diagram_source, sequence_svg

SVG = "{http://www.w3.org/2000/svg}"
SHIPPED = sorted(p.name[:-4] for p in (resources.files("rocketlb_core.viz") / "diagrams")
                 .iterdir() if p.name.endswith(".seq"))


def test_the_book_ships_its_diagrams() -> None:
    want = {"send-path", "rebalance-flow", "fault-tolerance", "heartbeat-and-notify"}
    assert want <= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_diagram_draws_the_same_bytes_twice(name: str) -> None:
    d = diagram(name)
    assert d.svg == diagram(name).svg
    root = ET.fromstring(d.svg)
    assert root.tag == f"{SVG}svg"
    assert root.find(f"{SVG}title").text == d.title
    assert d.title != name
    texts = [t.text for t in root.iter(f"{SVG}text")]
    for line in diagram_source(name).splitlines():
        if ":" in line and "->>" in line:
            assert line.split(":", 1)[1].strip().split("<br>")[0] in texts, line


def test_messages_participants_notes_and_frames_are_drawn() -> None:
    svg = sequence_svg("participant P as Producer\nparticipant B as broker-a\n"
                       "loop three times\nP->>B: SEND\nB-->>P: OK\nend\n"
                       "alt fails\nP-xB: timeout\nelse works\nP->>P: report\nend\n"
                       "note over P,B: isolated for 600 s")
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert texts.count("Producer") == 2                        # top and bottom
    assert texts.count("broker-a") == 2
    for want in ("SEND", "OK", "timeout", "report", "isolated for 600 s", "loop", "alt",
                 "[three times]", "[fails]", "[works]"):
        assert want in texts
    dashed = [e for e in root.iter(f"{SVG}line") if e.get("stroke-dasharray") == "6,4"]
    assert len(dashed) == 1                                    # the one reply
    assert 'stroke="currentColor"' in svg                      # follows the theme's colour


@pytest.mark.parametrize(("source", "where"), [
    ("participant A\nA->>B: x\nend", "line 3"),
    ("participant A\nA->>B: x\nwhat is this", "line 3"),
    ("loop forever\nA->>B: x", "not closed"),
    ("else x\nA->>B: y", "line 1"),
    ("participant A", "no messages"),
])
def test_a_bad_source_names_its_line(source: str, where: str) -> None:
    with pytest.raises(SequenceError, match=where):
        sequence_svg(source)


def test_unknown_or_unsafe_diagram_names_are_refused() -> None:
    with pytest.raises(SequenceError, match="no diagram"):
        diagram("no-such-diagram")
    with pytest.raises(SequenceError, match="not a diagram name"):
        diagram("../../etc/passwd")


def test_text_is_escaped() -> None:
    svg = sequence_svg('A->>B: <script>alert("x")</script> & more')
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg
    ET.fromstring(svg)
