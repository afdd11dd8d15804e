"""The page "Questions operators ask" (``book/questions.md``, issue 46): real questions from
upstream's issue trackers, each answered by pointing into the book.

Every question cites an issue of the collected list (``book/questions/sources.md``), once; every
answer either ends in a link into the book or says that the book does not cover the question
yet; every relative link leads to a page of the book, and to a section that exists there: a MyST
label ``(name)=`` (a heading's slug only where ``_config.yml`` turns on MyST's heading anchors,
since without them the build cannot resolve one), and the section a link's text names in quotes
(``[chapter 3, "One timeout, ten minutes"](...)``) is a heading of that page, or a term of the
glossary; and the closing counts are the page's own. No network, no build: the page is parsed
as text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "book" / "questions.md"
SOURCES = ROOT / "book" / "questions" / "sources.md"
NOT_COVERED = "The book does not cover this yet."
MIN_QUESTIONS = 40
MAX_LINE = 100

QUESTION = re.compile(r"\*\*(?P<q>.+?)\*\*\s+\(\[(?P<repo>apache/[\w.-]+)#(?P<num>\d+)\]"
                      r"\((?P<url>https://github\.com/[^)\s]+)\)\)", re.S)
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]+)\]\((?P<target>[^)\s]+)\)")
REF = re.compile(r"\{ref\}`(?:[^`<]*<(?P<named>[^>`]+)>|(?P<bare>[^`<>]+))`")
LABEL = re.compile(r"^\((?P<name>[^()\s]+)\)=\s*$")
HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*$")
QUOTED = re.compile(r'"(?P<title>[^"]+)"')
CLOSING = re.compile(r"This page quotes (?P<total>\d+) questions: the book answers "
                     r"(?P<answered>\d+) of them, and does not cover (?P<nc>\d+) yet\.")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _markdown(path: Path) -> str:
    """A page's markdown: a book page's text, or a notebook's markdown cells."""
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "markdown"]
        return "\n\n".join("".join(c["source"]) if isinstance(c["source"], list)
                           else c["source"] for c in cells)
    return path.read_text(encoding="utf-8")


def _outline(text: str) -> tuple[list[str], dict[str, str | None], set[str]]:
    """(headings, labels with the heading that follows each, glossary terms) of a page's
    markdown, outside code blocks (a directive's body, ```{name}, is markdown)."""
    headings: list[str] = []
    labels: dict[str, str | None] = {}
    terms: set[str] = set()
    pending: list[str] = []
    stack: list[str] = []
    for line in text.splitlines():
        fence = line.strip()
        if fence.startswith("```"):
            info = fence.lstrip("`").strip()
            if not info and stack:
                stack.pop()
            else:
                stack.append(info.split()[0] if info else "code")
            continue
        if any(not kind.startswith("{") for kind in stack):
            continue
        if stack and stack[-1] == "{glossary}":
            if line.strip() and not line[0].isspace():
                terms.update(t.strip() for t in line.split("/"))
            continue
        if m := LABEL.match(line):
            pending.append(m["name"])
            labels[m["name"]] = None
        elif m := HEADING.match(line):
            title = _norm(m["title"])
            headings.append(title)
            for name in pending:
                labels[name] = title
            pending = []
    return headings, labels, terms


def _slug(title: str) -> str:
    """MyST's default heading slug (``default_slugify``), GitHub's rule."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _heading_anchors(root: Path) -> bool:
    """Whether the book's MyST makes heading slugs into link targets."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")) or {}
    sphinx = (config.get("sphinx") or {}).get("config") or {}
    return bool((config.get("parse") or {}).get("myst_heading_anchors")
                or sphinx.get("myst_heading_anchors"))


def _toc_files(root: Path) -> set[str]:
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = {toc["root"]}
    for part in toc["parts"]:
        files |= {c["file"] for c in part["chapters"]}
    return files


def _book_pages(root: Path) -> list[Path]:
    return sorted((root / "notebooks").glob("*.ipynb")) + sorted((root / "book").glob("*.md"))


def link_problems(text: str, page: Path, root: Path = ROOT) -> list[str]:
    """Every relative link or ``{ref}`` of ``text`` (the markdown of ``page``) that leads nowhere
    the book can resolve: a file that is missing or not in the table of contents, an anchor that
    is no label there, a label no page defines, or a quoted section title that is not the
    target's heading (a label's: the heading it stands before)."""
    toc = _toc_files(root)
    slugs = _heading_anchors(root)
    outlines = {p: _outline(_markdown(p)) for p in _book_pages(root)}
    every_label = {name: title for _, labels, _ in outlines.values()
                   for name, title in labels.items()}
    problems = []
    for m in LINK.finditer(text):
        target, link_text = m["target"], _norm(m["text"])
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue                                            # http(s), mailto: not ours
        where = f"[{link_text}]({target})"
        file, _, anchor = target.partition("#")
        if file:
            path = (page.parent / file).resolve()
            if not path.is_file():
                problems.append(f"{where}: no file {file}")
                continue
            doc = path.relative_to(root).with_suffix("").as_posix() if path.is_relative_to(
                root) else str(path)
            if doc not in toc:
                problems.append(f"{where}: {doc} is not in _toc.yml, so it is not built")
            headings, labels, terms = outlines.get(path) or _outline(_markdown(path))
            titles = set(headings) | terms
            if anchor:
                if anchor in labels:
                    titles = {labels[anchor] or ""}
                elif slugs and anchor in {_slug(h) for h in headings}:
                    titles = {h for h in headings if _slug(h) == anchor}
                else:
                    problems.append(f"{where}: no label ({anchor})= in {file}")
                    continue
        else:
            if anchor not in every_label:
                problems.append(f"{where}: no page defines the label ({anchor})=")
                continue
            titles = {every_label[anchor] or ""}
        for q in QUOTED.finditer(link_text):
            if q["title"] not in titles:
                problems.append(f'{where}: "{q["title"]}" is no section there')
    for m in REF.finditer(text):
        name = (m["named"] or m["bare"]).strip()
        if name not in every_label:
            problems.append(f"{{ref}}`{name}`: no page defines the label ({name})=")
    return problems


def _blocks(text: str) -> list[str]:
    return [_norm(b) for b in re.split(r"\n\s*\n", text) if b.strip()]


def _questions(text: str) -> list[tuple[str, re.Match[str], str]]:
    """(section, question, answer) for every question of the page, in order."""
    blocks = _blocks(text)
    out = []
    section = ""
    for i, block in enumerate(blocks):
        if block.startswith("## "):
            section = block[3:]
        elif block.startswith("**"):
            m = QUESTION.fullmatch(block)
            assert m, f"a bold paragraph that is not a question with its issue: {block[:80]}"
            assert i + 1 < len(blocks), f"{m['q']}: no answer"
            out.append((section, m, blocks[i + 1]))
    return out


TEXT = PAGE.read_text(encoding="utf-8")
QUESTIONS = _questions(TEXT)


def test_the_page_has_enough_questions_and_is_in_the_book() -> None:
    assert len(QUESTIONS) >= MIN_QUESTIONS, len(QUESTIONS)
    assert "book/questions" in _toc_files(ROOT)
    assert TEXT.startswith("# Questions operators ask\n")
    assert "`book/questions/sources.md`" in TEXT           # named, not linked: not a book page
    long = [i for i, line in enumerate(TEXT.splitlines(), 1) if len(line) > MAX_LINE]
    assert not long, f"lines over {MAX_LINE} characters: {long}"


def test_every_question_cites_an_issue_of_the_list_once() -> None:
    sources = SOURCES.read_text(encoding="utf-8")
    listed = set(re.findall(r"\]\((https://github\.com/apache/[\w.-]+/issues/\d+)\)", sources))
    assert len(listed) >= MIN_QUESTIONS, "the list's issue links were not found"
    urls = [m["url"] for _, m, _ in QUESTIONS]
    assert [u for u in urls if u not in listed] == []
    assert len(set(urls)) == len(urls), "an issue is cited twice"
    for _, m, _ in QUESTIONS:
        assert m["url"] == f"https://github.com/{m['repo']}/issues/{m['num']}", m["url"]


@pytest.mark.parametrize(("section", "question", "answer"), QUESTIONS,
                         ids=[f"{m['repo']}#{m['num']}" for _, m, _ in QUESTIONS])
def test_every_answer_ends_in_the_book_or_says_it_does_not_cover_it(
        section: str, question: re.Match[str], answer: str) -> None:
    assert section, "a question before the first section"
    links = [m for m in LINK.finditer(answer) if not m["target"].startswith("http")]
    if NOT_COVERED in answer:
        assert answer.startswith(NOT_COVERED), answer
    else:
        assert links, f"{question['q']}: the answer links nowhere into the book"
        tail = answer[links[-1].end():]
        assert re.fullmatch(r"[.)]*", tail), f"{question['q']}: the answer ends in {tail!r}"
        assert 1 <= len(re.findall(r"[.?!](?:\s|$)", answer)) <= 4, answer   # 1 to 4 sentences


def test_every_link_leads_to_a_section_of_the_book() -> None:
    assert link_problems(TEXT, PAGE) == []


def test_the_closing_counts_are_the_pages() -> None:
    m = CLOSING.search(_blocks(TEXT)[-1])
    assert m, "the closing paragraph does not give the counts"
    not_covered = sum(NOT_COVERED in a for _, _, a in QUESTIONS)
    assert (int(m["total"]), int(m["answered"]), int(m["nc"])) == \
        (len(QUESTIONS), len(QUESTIONS) - not_covered, not_covered)


# ------------------------------------------------------------- the checks themselves, on known text

def test_the_link_check_finds_each_kind_of_dead_link() -> None:
    page = ROOT / "book" / "x.md"
    good = ('[chapter 3, "One timeout, ten minutes"](../notebooks/03-latency-fault-tolerance.ipynb)'
            ' [chapter 10](#live-producer-modes) [the glossary, "Retry topic"](glossary.md)'
            " {ref}`ordered <live-producer-modes>` [upstream](https://github.com/apache/rocketmq)")
    assert link_problems(good, page) == []
    bad = {
        "[a](../notebooks/99-none.ipynb)": "no file",
        "[a](questions/sources.md)": "not in _toc.yml",
        "[a](#no-such-label)": "no page defines",
        "[a](../notebooks/03-latency-fault-tolerance.ipynb#one-timeout-ten-minutes)":
            "no label" if not _heading_anchors(ROOT) else "",
        '[chapter 3, "No such section"](../notebooks/03-latency-fault-tolerance.ipynb)':
            "is no section",
        '[chapter 10, "The check"](#live-producer-modes)': "is no section",
        "{ref}`no-such-label`": "no page defines",
    }
    for text, expected in bad.items():
        problems = link_problems(text, page)
        assert (expected in " ".join(problems)) if expected else problems == [], (text, problems)


def test_the_outline_reads_labels_headings_and_terms_outside_code() -> None:
    text = ("(a-label)=\n## A heading\n\n```bash\n# not a heading\n```\n\n"
            "```{admonition} Note\n### Inside a directive\n```\n\n"
            "```{glossary}\nTerm one\n  Its definition.\n\nTwo / Three\n  Another.\n```\n")
    headings, labels, terms = _outline(text)
    assert headings == ["A heading", "Inside a directive"]
    assert labels == {"a-label": "A heading"}
    assert terms == {"Term one", "Two", "Three"}
    assert _slug("5.x: availability and reachability") == "5x-availability-and-reachability"


def test_the_question_reader_refuses_a_bold_line_without_its_issue() -> None:
    with pytest.raises(AssertionError, match="not a question"):
        _questions("## S\n\n**Why?**\n\nAn answer.\n")
    [(section, m, answer)] = _questions(
        "## S\n\n**Why?**\n([apache/rocketmq#1](https://github.com/apache/rocketmq/issues/1))"
        "\n\nAn\nanswer.\n")
    assert (section, m["q"], m["num"], answer) == ("S", "Why?", "1", "An answer.")
