"""``ARCHITECTURE.md`` stays a map, and the benchmarks' figures have one source (issue 50).

The map: each concept row has one home and one short sentence, no line runs on like a commit
message, every path it names exists, and every module of ``rocketlb_core/`` is in it (by its
path, its package folder or its dotted name), as is every top-level folder. The benchmarks: the
figures table of ``book/guide/benchmarks.md`` is a copy of ``bench/README.md``'s, its source.
Pure file reading: no import of the package.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rocketlb_core"
MAP = ROOT / "ARCHITECTURE.md"

LINE_LIMIT = 220
"""A line of prose may be this long; only table rows whose cells keep their limits may be longer."""
DESCRIPTION_LIMIT = 200
"""The one sentence of a concept row."""
NAME_LIMIT = 80
"""A concept table's concept and home cells."""
CELL_LIMIT = 120
"""Any cell of the other tables (the layers)."""
CONCEPT_HEADER = ["concept", "home", "what"]
CONCEPT_SECTION = "## Where each concept lives"
PATH_SUFFIXES = (".py", ".md", ".toml", ".java")
TOP_FOLDERS = ("notebooks/", "book/", "data/", "data/scenarios/", "bench/", "tests/", "scripts/",
               ".ci/")

_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _spans(text: str) -> list[str]:
    """The contents of the inline code spans of ``text`` (a run of N backticks closed by N)."""
    return [m.group(2).strip() for m in _SPAN.finditer(text)]


def _cells(row: str) -> list[str]:
    """The cells of a table row, splitting on ``|`` outside code spans."""
    cells, cell, ticks, i = [], "", 0, 0
    body = row.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    while i < len(body):
        ch = body[i]
        if ch == "`":
            j = i
            while j < len(body) and body[j] == "`":
                j += 1
            run = j - i
            ticks = 0 if ticks == run else (ticks or run)
            cell += body[i:j]
            i = j
            continue
        if ch == "|" and not ticks:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += ch
        i += 1
    cells.append(cell.strip())
    return cells


def _is_separator(row: str) -> bool:
    """A table's second line: ``|---|---|``."""
    cells = row.strip().strip("|").split("|")
    return row.startswith("|") and all(re.fullmatch(r"\s*:?-{3,}:?\s*", c) for c in cells)


def tables(text: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """Every table of a markdown text: (the ``## `` section it is in, header cells, body rows'
    cells), body rows as their raw lines' cells."""
    out: list[tuple[str, list[str], list[list[str]]]] = []
    section, lines, i = "", text.splitlines(), 0
    fence = False
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("## "):
            section = line.strip()
        if (not fence and line.startswith("|") and i + 1 < len(lines)
                and _is_separator(lines[i + 1])):
            header = _cells(line)
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            out.append((section, header, rows))
            continue
        i += 1
    return out


def concept_rows(text: str) -> list[list[str]]:
    """The body rows of every table under ``## Where each concept lives``."""
    return [row for section, _, body in tables(text) if section == CONCEPT_SECTION
            for row in body]


def line_problems(text: str) -> list[str]:
    """Lines over ``LINE_LIMIT``, except table rows whose every cell keeps its limit; table rows
    whose cells are too long, wherever they are; concept rows without exactly one home."""
    problems: list[str] = []
    for section, header, body in tables(text):
        is_concept = section == CONCEPT_SECTION
        if is_concept and header != CONCEPT_HEADER:
            problems.append(f"{section}: a concept table's header is {header}, "
                            f"not {CONCEPT_HEADER}")
        for row in body:
            if is_concept:
                if len(row) != 3:
                    problems.append(f"concept row with {len(row)} cells: {row}")
                    continue
                name, home, what = row
                if len(what) > DESCRIPTION_LIMIT:
                    problems.append(f"{name!r}: its sentence has {len(what)} characters "
                                    f"(at most {DESCRIPTION_LIMIT}): {what[:60]}...")
                for label, cell in (("concept", name), ("home", home)):
                    if len(cell) > NAME_LIMIT:
                        problems.append(f"{name!r}: its {label} cell has {len(cell)} "
                                        f"characters (at most {NAME_LIMIT})")
                if not re.fullmatch(r"`[^`\s]+`", home):
                    problems.append(f"{name!r}: its home is not one path in backticks: {home}")
            else:
                for cell in row:
                    if len(cell) > CELL_LIMIT:
                        problems.append(f"{section}: a cell of {len(cell)} characters "
                                        f"(at most {CELL_LIMIT}): {cell[:60]}...")
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > LINE_LIMIT and not line.startswith("|"):
            problems.append(f"line {number}: {len(line)} characters (at most {LINE_LIMIT})")
    return problems


def _looks_like_path(span: str) -> bool:
    return (not re.search(r"\s", span) and not span.startswith(("http:", "https:"))
            and ("/" in span or span.endswith(PATH_SUFFIXES)))


def _exists(path: str) -> bool:
    """A path of the map: from the repository's root, or from ``rocketlb_core/`` (the tables'
    convention); a trailing ``/`` must be a folder; ``*`` is a glob that must match."""
    for base in (ROOT, PACKAGE):
        if "*" in path:
            if any(base.glob(path)):
                return True
        elif (base / path).is_dir() if path.endswith("/") else (base / path).exists():
            return True
    return False


def path_problems(text: str, where: Path = ROOT) -> list[str]:
    """Paths in backticks that name nothing in the tree, and local links that lead nowhere."""
    problems = [f"`{s}` does not exist" for s in _spans(text)
                if _looks_like_path(s) and not _exists(s)]
    for target in _LINK.findall(text):
        if target.startswith(("http:", "https:", "#", "mailto:")):
            continue
        if not (where / target.split("#")[0]).exists():
            problems.append(f"link ({target}) leads nowhere")
    return problems


def _tokens(text: str) -> set[str]:
    """Every word of the map's code spans, without surrounding punctuation."""
    out: set[str] = set()
    for span in _spans(text):
        for word in span.split():
            out.add(word.strip("()[],;:'\""))
    return out


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts
                  and p.name not in ("__init__.py", "__main__.py"))


def coverage_problems(text: str) -> list[str]:
    """Modules the map names neither by path (from the root or the package), nor by their
    package folder (a subpackage's, not ``rocketlb_core/`` itself), nor by dotted name."""
    names = _tokens(text)
    missing = []
    for path in modules():
        inner = path.relative_to(PACKAGE).as_posix()
        dotted = inner[:-3].replace("/", ".")
        ways = {inner, f"rocketlb_core/{inner}", dotted, f"rocketlb_core.{dotted}"}
        if "/" in inner:
            folder = inner.rpartition("/")[0] + "/"
            ways |= {folder, f"rocketlb_core/{folder}"}
        if not ways & names:
            missing.append(inner)
    return missing


def test_the_concept_rows_are_short_and_no_line_runs_on() -> None:
    text = MAP.read_text(encoding="utf-8")
    assert len(concept_rows(text)) >= 50, "the concept tables were not found"
    problems = line_problems(text)
    assert not problems, "ARCHITECTURE.md is a map, not a log:\n" + "\n".join(problems)


def test_every_path_the_map_names_exists() -> None:
    problems = path_problems(MAP.read_text(encoding="utf-8"))
    assert not problems, "ARCHITECTURE.md names what is not there:\n" + "\n".join(problems)


def test_every_module_and_top_level_folder_is_on_the_map() -> None:
    text = MAP.read_text(encoding="utf-8")
    missing = coverage_problems(text)
    assert not missing, f"modules ARCHITECTURE.md does not cover (give each a home row or " \
                        f"name it in one): {missing}"
    homes = {row[1].strip("`") for row in concept_rows(text) if len(row) == 3}
    absent = [f for f in TOP_FOLDERS if f not in homes]
    assert not absent, f"top-level folders without a home row: {absent}"


def test_the_checks_find_a_planted_violation() -> None:
    text = MAP.read_text(encoding="utf-8")
    long = "| a planted concept | `model.py` | " + "word " * 50 + "|\n"
    at = text.index("| queues, routes")
    assert any("planted" in p for p in line_problems(text[:at] + long + text[at:]))
    assert path_problems("see `trace/no_such_module.py`") == \
        ["`trace/no_such_module.py` does not exist"]
    uncovered = coverage_problems("only `model.py` and `replay/`")
    assert {"cli.py", "trace/read.py"} <= set(uncovered)
    assert not {"model.py", "replay/lag.py"} & set(uncovered)


BENCH = ROOT / "bench" / "README.md"
GUIDE = ROOT / "book" / "guide" / "benchmarks.md"
FIGURES = "## Current figures"


def figures_table(text: str) -> list[str]:
    """The lines of the first table under the ``## Current figures`` heading."""
    after = text.split(FIGURES + "\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in after.splitlines() if line.startswith("|")]


def test_the_guide_shows_the_benchmarks_table_of_bench_readme() -> None:
    source = figures_table(BENCH.read_text(encoding="utf-8"))
    assert len(source) >= 2 + 8, "bench/README.md's figures table lost its rows"
    assert figures_table(GUIDE.read_text(encoding="utf-8")) == source, \
        "book/guide/benchmarks.md's figures differ from bench/README.md's (the source): " \
        "copy the table under '## Current figures' from bench/README.md"


def test_the_benchmarks_table_names_every_benchmark() -> None:
    rows = figures_table(BENCH.read_text(encoding="utf-8"))[2:]
    named = {_cells(r)[0].strip("`") for r in rows}
    scripts = {p.name for p in (ROOT / "bench").glob("*.py")}
    assert named == scripts, f"bench/README.md's table: {sorted(named ^ scripts)}"
