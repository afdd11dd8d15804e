"""The doctor's findings point to the answers operators were given (issue 46, item 2): every kind
of finding names, in ``rocketlb_core.doctor.kinds``, the answers of ``book/questions.md``
("Questions operators ask") about its symptom, by the MyST targets ``(asked-REPO-NUMBER)=``
that stand above their questions there; every finding the doctor reports carries them, in the
terminal report (``operators asked:``), in ``--json`` (``questions``) and in ``--html``.

A target before a paragraph gives that paragraph its id in the built page (docutils moves the
target's id onto the next element), so the ids are checked as docutils makes them
(``make_id``), on the page's text: no build. The findings are those of the shipped recordings
the doctor's own tests diagnose (``tests/test_doctor.py``, ``tests/test_doctor_producers.py``).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from docutils.nodes import make_id

from rocketlb_core import data_path
from rocketlb_core.doctor.html import render_html
from rocketlb_core.doctor.kinds import FINDINGS, KINDS, QUESTIONS, FindingKind, question_links
from tests.test_book_questions import LINK, NOT_COVERED, TEXT, _questions, _toc_files
from tests.test_fuzz import run_command

ROOT = Path(__file__).resolve().parent.parent
TARGET = re.compile(r"^\((?P<name>[^()\s]+)\)=$", re.M)
RECORDINGS = ("doctor/capture-4", "doctor/strategies-4", "producer-outage-4")
"""Shipped recordings whose findings the doctor's tests check: seven findings of five kinds."""


def targets(text: str) -> dict[str, str]:
    """Every MyST target of the questions page's ``text`` -> the first line after it that is
    not blank (the question's first line when the target stands above a question)."""
    lines = text.splitlines()
    out = {}
    for i, line in enumerate(lines):
        if m := TARGET.match(line):
            out[m["name"]] = next((t for t in lines[i + 1:] if t.strip()), "")
    return out


def unknown_anchors(kinds: tuple[FindingKind, ...], text: str) -> list[tuple[str, str]]:
    """(kind, anchor) for each anchor a kind names that is no target above a question of the
    questions page's ``text``."""
    found = {name for name, after in targets(text).items() if after.startswith("**")}
    return [(k.id, a) for k in kinds for a in k.questions if a not in found]


def test_the_questions_page_is_where_the_book_has_it() -> None:
    assert QUESTIONS.removesuffix(".md") in _toc_files(ROOT)
    assert (ROOT / QUESTIONS).read_text(encoding="utf-8") == TEXT


def test_every_anchor_a_kind_names_is_a_target_above_a_question() -> None:
    assert unknown_anchors(FINDINGS, TEXT) == []
    for k in FINDINGS:
        assert len(set(k.questions)) == len(k.questions), k.id


def test_a_misspelt_anchor_is_reported() -> None:
    """The check above on a registry with one anchor misspelt (issue 1547 as 1574), one that
    names a target that is no question's (the heading label of another page), and one right."""
    dup = KINDS["duplicate-client-id"]
    bad = (replace(dup, questions=("asked-rocketmq-1574", *dup.questions[1:])),
           replace(KINDS["queue-0-skew"], questions=("live-producer-modes",)),
           KINDS["broker-read-only"])
    assert unknown_anchors(bad, TEXT) == [("duplicate-client-id", "asked-rocketmq-1574"),
                                          ("queue-0-skew", "live-producer-modes")]


def test_each_target_names_the_issue_of_the_question_below_it_and_is_its_html_id() -> None:
    """``(asked-rocketmq-1547)=`` stands above the question of apache/rocketmq#1547, and no
    ``asked-`` target is left that no kind names; each is the id docutils gives the paragraph,
    and every question keeps being read as one (the page's own checks)."""
    by_issue = {f"asked-{m['repo'].removeprefix('apache/')}-{m['num']}": m
                for _, m, _ in _questions(TEXT)}
    asked = {n: after for n, after in targets(TEXT).items() if n.startswith("asked-")}
    assert asked, "no target above a question"
    for name, first_line in asked.items():
        assert name in by_issue, f"({name})= names no question's issue"
        assert by_issue[name].group(0).startswith(first_line), \
            f"({name})= does not stand above the question of its issue"
        assert make_id(name) == name, f"({name})=: the built page's id would be {make_id(name)}"
    named = {a for k in FINDINGS for a in k.questions}
    assert set(asked) == named, "targets no kind names, or anchors of no target"


def test_every_answer_linked_points_into_the_book() -> None:
    """An answer a finding links is answered, or, where the book does not cover its question
    yet, still points to the section about the symptom: never a bare "does not cover"."""
    answers = {f"asked-{m['repo'].removeprefix('apache/')}-{m['num']}": answer
               for _, m, answer in _questions(TEXT)}
    for k in FINDINGS:
        for a in k.questions:
            assert a in answers, (k.id, a)
            into_book = [m for m in LINK.finditer(answers[a])
                         if not m["target"].startswith("http")]
            assert into_book, (k.id, a, answers[a][:80])
            if answers[a].startswith(NOT_COVERED):
                assert answers[a] != NOT_COVERED, (k.id, a)


# ------------------------------------------------------------------ what the doctor reports


def _report(recording: str) -> tuple[list[dict[str, object]], str]:
    """``rocketlb doctor --json`` and the terminal report of a shipped recording."""
    path = str(data_path("live") / recording)
    status, out, err = run_command(["doctor", "--json", path])
    assert status == 3, err
    doc = json.loads(out)
    status, text, err = run_command(["doctor", path])
    assert status == 3, err
    return list(doc["findings"]), text


def _blocks(text: str) -> list[str]:
    """The terminal report's findings, each on one line (its wrapped lines joined)."""
    return [" ".join(b.split()) for b in text.split("\n\n") if re.match(r"\d+\. \[", b)]


@pytest.mark.parametrize("recording", RECORDINGS)
def test_every_finding_carries_its_kinds_questions_in_json_and_the_report(
        recording: str) -> None:
    findings, text = _report(recording)
    blocks = _blocks(text)
    assert findings
    assert len(blocks) == len(findings)
    for f, block in zip(findings, blocks, strict=True):
        kind = KINDS[str(f["id"])]
        assert f["questions"] == question_links(kind), f["id"]
        assert re.match(rf"\d+\. \[{str(f['severity']).upper()}\] {f['id']} ", block), block
        if kind.questions:
            first, *rest = kind.questions
            said = f"operators asked: {QUESTIONS}#{first}" + "".join(f", #{a}" for a in rest)
            assert said in block, (f["id"], block[-300:])
        else:
            assert "operators asked:" not in block
    assert max(len(line) for line in text.splitlines()) <= 100


def test_the_recordings_show_kinds_with_one_and_with_several_answers() -> None:
    ids = {str(f["id"]) for r in RECORDINGS for f in _report(r)[0]}
    assert {"duplicate-client-id", "mixed-strategies", "broker-isolated",
            "failing-broker-not-avoided"} <= ids
    assert {len(KINDS[i].questions) for i in ids} >= {1, 3}


def test_the_html_page_links_every_answer(tmp_path: Path) -> None:
    """``--html``: each finding's answers as links; the book's copy of the page
    (``doctor.book.write_page`` with the built book's root) points them at the built questions
    page, as it points "read" at the built chapter."""
    from rocketlb_core.doctor import examine
    from rocketlb_core.doctor.book import write_page

    inputs, findings, notes = examine([data_path("live") / "doctor" / "capture-4"])
    page = render_html(inputs, findings, notes)
    for f in findings:
        for q in f.questions:
            assert f'<a href="{q}">{q.partition("#")[2]}</a>' in page, (f.id, q)
    assert sum(len(f.questions) for f in findings) >= 6
    write_page("data/live/doctor/capture-4", page=str(tmp_path / "p.html"), book="../../")
    built = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert 'href="../../book/questions.html#asked-rocketmq-1547"' in built
    assert "questions.md" not in built
