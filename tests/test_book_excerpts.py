"""Every Java excerpt in the book is upstream's released source.

Each ```java block of a chapter (markdown cells) or a book page opens with its provenance, e.g.
``// rocketmq-client 4.9.8 · org/apache/rocketmq/client/latency/MQFaultStrategy.java``; the
block must be that file of that release's sources jar (Maven Central, checksummed and locked:
``rocketlb_core/live/sources.py``) line for line, up to whitespace and explicit elisions (a
line ``...`` or ``// ...``). The jars are fetched through Maven on first use; without network or
Maven the fixture fails, naming what is missing (never a skip).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketlb_core.live import claims, sources

EXCERPTS = [ex for page in claims.pages() for ex in claims.excerpts(page)]
MIN_EXCERPTS = 14


@pytest.fixture(scope="module", autouse=True)
def sources_jars() -> None:
    """Every jar the book names, fetched in one Maven run and verified against the lock."""
    sources.ensure_all(claims.needed_jars())


def test_the_book_has_its_excerpts() -> None:
    assert len(EXCERPTS) >= MIN_EXCERPTS, [ex.label for ex in EXCERPTS]


@pytest.mark.parametrize("excerpt", EXCERPTS, ids=lambda ex: ex.label)
def test_each_excerpt_is_its_release(excerpt: claims.Excerpt) -> None:
    problems = claims.check_excerpt(excerpt)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------- the check itself, on known text

SELECT = "org/apache/rocketmq/client/producer/selector/SelectMessageQueueByHash.java"
GOOD = f"""Some prose.

```java
// rocketmq-client 4.9.8 · {SELECT}
public MessageQueue select(List<MessageQueue> mqs, Message msg, Object arg) {{
        int value = arg.hashCode() % mqs.size();
    ...
    return mqs.get(value);
}}
```
"""


def _problems(tmp_path: Path, markdown: str) -> list[str]:
    (tmp_path / "book").mkdir(exist_ok=True)
    page = tmp_path / "book" / "page.md"
    page.write_text(markdown, encoding="utf-8")
    found = claims.excerpts(page, tmp_path)
    assert len(found) == 1
    return claims.check_excerpt(found[0])


def test_whitespace_and_elisions_pass(tmp_path: Path) -> None:
    assert _problems(tmp_path, GOOD) == []


def test_a_changed_line_fails_naming_page_and_line(tmp_path: Path) -> None:
    problems = _problems(tmp_path, GOOD.replace("% mqs.size()", "% (mqs.size() - 1)"))
    assert len(problems) == 1
    assert problems[0].startswith("book/page.md page line 6:"), problems
    assert "int value = arg.hashCode() % (mqs.size() - 1);" in problems[0]


def test_a_dropped_elision_fails(tmp_path: Path) -> None:
    problems = _problems(tmp_path, GOOD.replace("    ...\n", ""))
    assert len(problems) == 1, problems
    assert "line 7:" in problems[0], problems
    assert "no '...'" in problems[0], problems


def test_an_excerpt_without_provenance_fails(tmp_path: Path) -> None:
    problems = _problems(tmp_path, GOOD.replace(f"// rocketmq-client 4.9.8 · {SELECT}\n", ""))
    assert len(problems) == 1, problems
    assert "must open with its provenance" in problems[0], problems


def test_a_release_where_the_file_differs_fails(tmp_path: Path) -> None:
    avg = "org/apache/rocketmq/client/consumer/rebalance/AllocateMessageQueueAveragely.java"
    text = ("```java\n"
            f"// rocketmq-client 4.9.8, 5.3.3 · {avg}\n"
            "for (int i = 0; i < range; i++) {\n"
            "    result.add(mqAll.get((startIndex + i) % mqAll.size()));\n"
            "}\n```\n")
    problems = _problems(tmp_path, text)
    assert len(problems) == 1, problems
    assert "rocketmq-client 5.3.3" in problems[0], problems


def test_a_notebook_cell_is_named(tmp_path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("intro"),
                nbformat.v4.new_markdown_cell(GOOD.replace("return mqs", "return mqz"))]
    nb.cells[1].id = "abc"
    (tmp_path / "notebooks").mkdir()
    page = tmp_path / "notebooks" / "01-x.ipynb"
    nbformat.write(nb, page)
    [ex] = claims.excerpts(page, tmp_path)
    [problem] = claims.check_excerpt(ex)
    assert problem.startswith("notebooks/01-x.ipynb cell 1 (id abc) line 8:"), problem


def test_the_lock_holds_exactly_the_jars_the_book_names() -> None:
    """Each jar the excerpts and facts name is locked, and nothing else is (so a clean machine
    fetches only what the checks read)."""
    assert sorted(sources.load_lock()) == sorted(claims.needed_jars())
