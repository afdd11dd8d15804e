"""The book's claims about upstream, checked against upstream's released sources (``sources.py``).

Two kinds of claim:

* **Java excerpts.** Every ```` ```java ```` block in a chapter's markdown cells or a book page
  opens with its provenance, one comment line naming the module, the release(s) and the file:

  .. code-block:: java

      // rocketmq-client 4.9.8 · org/apache/rocketmq/client/latency/MQFaultStrategy.java

  (several releases: ``4.7.1, 4.9.8``; the file as a path inside the jar, or as the repository
  path holding ``src/main/java/``). A later provenance line in the same block starts a new piece,
  checked against its own file. ``check_excerpt`` holds each piece to its file line by line in
  every release named: whitespace may differ (indentation, runs of spaces, blank lines) and a line
  that is only ``...`` or ``// ...`` stands for any run of lines; nothing else may.
* **Facts.** ``book/facts.toml`` (data): each ``[[fact]]`` has an ``id``, the ``claim`` in
  short, optionally ``issue = "#NNNN"`` with its one-line ``issue_summary``, and one or more
  ``[[fact.evidence]]``: ``artifact``, ``file``, a Python regular expression ``pattern`` (searched
  with ``re.MULTILINE``; write ``(?s)`` to let ``.`` cross lines), the ``releases`` where it must
  match and the releases where it must ``not_in`` (for "since X": the release before X);
  either list may be empty, not both. ``file = "*"`` searches every ``.java`` file of the jar
  (for "no such property anywhere"). An ``artifact`` may also be a Go module
  (``gosources.MODULES``: ``rocketmq-client-go``, versions without Go's ``v``): ``file`` is then
  a path from the module root (``producer/selector.go``) and ``"*"`` every ``.go`` file but its
  tests. ``check_fact`` checks one. A chapter may point at a fact
  with ``<!-- fact: ID -->``; any other ``<!--`` comment that mentions a fact is an error
  (``fact_comment_problems``), so a misspelt pointer cannot be skipped silently.

Rules a fact keeps beyond its matches (each a test in ``tests/test_book_facts.py``):

* **Since.** An evidence with ``since = "X"`` says its pattern holds from release X of its
  artifact on: X must be in its ``releases``, and the release of that artifact just before X on
  Maven Central (the Go module proxy, for a Go module; ``sources.predecessor``, from the
  versions the lock file records) in its ``not_in`` and locked. A fact whose id ends
  ``-since-X`` or whose claim says "since X", "from X" (not "from X to Y"), "new in X", "added
  in X", "X and later", "X onwards" or "(X: or ...)" (an alternative X added) needs an evidence
  with ``since = "X"`` (``since_problems``). The phrases are a backstop that catches the usual
  wordings; the ``since`` key is the declaration, and a claim worded otherwise still needs it.
* **No vacuous absence.** An evidence with ``not_in`` and no ``releases`` must match its file
  in some locked release of its artifact, so a misspelt pattern cannot pass by matching
  nothing. A name that exists in no release at all is written ``nowhere = true``: the pattern
  must then match in no locked release, and must match the fact's ``claim``, which names what
  is absent (``absence_problems``).
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlb_core.live import gosources, sources
from rocketlb_core.live.jars import LiveError

ROOT = Path(__file__).resolve().parents[2]
FACTS_FILE = ROOT / "book" / "facts.toml"
ELISIONS = frozenset({"...", "// ..."})
PROVENANCE = re.compile(
    r"^\s*//\s*(?P<artifact>rocketmq-[a-z0-9-]+)\s+"
    r"(?P<releases>\d[\w.-]*(?:\s*,\s*\d[\w.-]*)*)\s+·\s+(?P<file>\S+\.java)\s*$")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*java\s*$")
FACT_REF = re.compile(r"<!--\s*fact:\s*(?P<id>[A-Za-z0-9_.-]+)\s*-->")
ANY_FILE = "*"
FACT_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
MENTIONS_FACT = re.compile(r"(?i)\bfacts?\b")
GOOD_FACT_COMMENT = re.compile(r"<!--\s*fact:\s*[a-z0-9][a-z0-9._-]*\s*-->")
VERSION = r"\d+\.\d+\.\d+"
SINCE_ID = re.compile(rf"-since-(?P<v>{VERSION})$")
SINCE_CLAIM = re.compile(
    rf"(?i)\b(?:since|from|new in|added in)\s+(?P<v>{VERSION})\b(?!\s*(?:to|-|–|and|or)\s*\d)"
    rf"|\b(?P<w>{VERSION})\s+(?:(?:and|or)\s+later|onwards?)\b"
    rf"|\(\s*(?P<o>{VERSION}):\s+or\b")


def pages(root: Path = ROOT) -> list[Path]:
    """Every chapter and book page."""
    return sorted((root / "notebooks").glob("*.ipynb")) + sorted((root / "book").glob("*.md"))


def markdown_parts(page: Path) -> list[tuple[str, str]]:
    """(where, markdown) of a page: each markdown cell of a notebook (``cell N (id X)``), or the
    whole page."""
    if page.suffix == ".ipynb":
        nb = json.loads(page.read_text(encoding="utf-8"))
        parts = []
        for i, cell in enumerate(nb.get("cells", [])):
            if cell.get("cell_type") != "markdown":
                continue
            src = cell.get("source", "")
            text = "".join(src) if isinstance(src, list) else str(src)
            cid = cell.get("id")
            parts.append((f"cell {i}" + (f" (id {cid})" if cid else ""), text))
        return parts
    return [("page", page.read_text(encoding="utf-8"))]


@dataclass(frozen=True)
class Piece:
    """One provenance line and the excerpt lines under it."""

    artifact: str
    releases: tuple[str, ...]
    file: str
    line: int                               # the provenance line's number in its cell or page
    body: tuple[tuple[int, str], ...]       # (line number, text)


@dataclass(frozen=True)
class Excerpt:
    page: str
    where: str
    line: int                               # the opening fence's line (1-based)
    pieces: tuple[Piece, ...]
    problems: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        return f"{self.page} {self.where} line {self.line}"


def excerpts(page: Path, root: Path = ROOT) -> list[Excerpt]:
    name = str(page.relative_to(root)) if page.is_relative_to(root) else str(page)
    found = []
    for where, text in markdown_parts(page):
        lines = text.split("\n")
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            fence, start = m.group("fence"), i + 1
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                j += 1
            found.append(_parse(name, where, start, lines[i + 1:j]))
            i = j + 1
    return found


def _parse(page: str, where: str, fence_line: int, lines: list[str]) -> Excerpt:
    pieces: list[Piece] = []
    problems: list[str] = []
    current: dict[str, Any] | None = None
    body: list[tuple[int, str]] = []

    def close() -> None:
        if current is not None:
            pieces.append(Piece(body=tuple(body), **current))

    for n, text in enumerate(lines, start=fence_line + 1):
        m = PROVENANCE.match(text)
        if m:
            close()
            releases = tuple(r.strip() for r in m.group("releases").split(","))
            current = {"artifact": m.group("artifact"), "releases": releases,
                       "file": m.group("file"), "line": n}
            body = []
        elif current is None:
            if text.strip():
                problems.append(
                    f"line {n}: a java excerpt must open with its provenance, for example "
                    f"'// rocketmq-client 4.9.8 · org/apache/rocketmq/client/latency/"
                    f"MQFaultStrategy.java' (found {text.strip()!r})")
                break
        else:
            body.append((n, text))
    close()
    if not pieces and not problems:
        problems.append(f"line {fence_line}: an empty java excerpt")
    return Excerpt(page, where, fence_line, tuple(pieces), tuple(problems))


def _norm(text: str) -> str:
    return " ".join(text.split())


def match_lines(body: list[tuple[int, str]], source: str) -> str | None:
    """None when ``body`` is ``source`` up to whitespace and elisions; else what is wrong, naming
    the excerpt's line."""
    src = [(n, _norm(t)) for n, t in enumerate(source.split("\n"), start=1) if t.strip()]
    texts = [t for _, t in src]
    chunks: list[list[tuple[int, str]]] = [[]]
    for n, t in body:
        if not t.strip():
            continue
        if t.strip() in ELISIONS:
            chunks.append([])
        else:
            chunks[-1].append((n, _norm(t)))
    chunks = [c for c in chunks if c]
    if not chunks:
        return "the excerpt holds no code line, only elisions"
    pos = 0
    for chunk in chunks:
        want = [t for _, t in chunk]
        at = _find(texts, want, pos)
        if at is None:
            # the longest prefix of this chunk found at or after pos names the failing line
            best = 0
            for k in range(pos, len(texts)):
                m = 0
                while m < len(want) and k + m < len(texts) and texts[k + m] == want[m]:
                    m += 1
                best = max(best, m)
            n, line = chunk[best]
            hint = difflib.get_close_matches(line, texts[pos:], n=1, cutoff=0.6)
            where = ("" if not hint else
                     f"; nearest source line {src[texts.index(hint[0], pos)][0]}: {hint[0]!r}")
            if line not in texts:
                how = "is not in the file"
            elif line not in texts[pos:]:
                how = "is in the file only before the lines above it"
            else:
                how = "does not follow the line above it in the file (no '...' between them)"
            return f"line {n}: {line!r} {how}{where}"
        pos = at + len(want)
    return None


def _find(texts: list[str], want: list[str], start: int) -> int | None:
    for k in range(start, len(texts) - len(want) + 1):
        if texts[k:k + len(want)] == want:
            return k
    return None


def check_excerpt(ex: Excerpt) -> list[str]:
    """Every problem of one excerpt, each naming page, cell and line."""
    out = [f"{ex.page} {ex.where}: {p}" for p in ex.problems]
    for piece in ex.pieces:
        for release in piece.releases:
            try:
                text = sources.read(piece.artifact, release, piece.file)
            except LiveError as e:
                out.append(f"{ex.page} {ex.where} line {piece.line}: {e}")
                continue
            wrong = match_lines(list(piece.body), text)
            if wrong:
                out.append(f"{ex.page} {ex.where} {wrong} (against {piece.artifact} {release} "
                           f"{sources.jar_member(piece.file)})")
    return out


# ---------------------------------------------------------------------------------------- facts

@dataclass(frozen=True)
class Evidence:
    artifact: str
    file: str
    pattern: str
    releases: tuple[str, ...]
    not_in: tuple[str, ...] = ()
    since: str | None = None                # the pattern holds from this release on
    nowhere: bool = False                   # absence-only: a name found in no release at all


@dataclass(frozen=True)
class Fact:
    id: str
    claim: str
    evidence: tuple[Evidence, ...]
    issue: str | None = None
    issue_summary: str | None = None


FACT_KEYS = {"id", "claim", "evidence", "issue", "issue_summary"}
EVIDENCE_KEYS = {"artifact", "file", "pattern", "releases", "not_in", "since", "nowhere"}


def load_facts(path: Path = FACTS_FILE) -> list[Fact]:
    """The facts of ``path``, their shape checked (a malformed entry is a ``LiveError`` naming
    it)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise LiveError(f"{path}: {e}") from None
    facts: list[Fact] = []
    seen: set[str] = set()
    for i, raw in enumerate(data.get("fact", [])):
        label = f"{path.name} fact #{i + 1} ({raw.get('id', 'no id')})"
        extra = set(raw) - FACT_KEYS
        if extra:
            raise LiveError(f"{label}: unknown key(s) {sorted(extra)}")
        fid = raw.get("id")
        if not isinstance(fid, str) or not FACT_ID.match(fid):
            raise LiveError(f"{label}: 'id' must be lowercase letters, digits, '.', '_', '-'")
        if fid in seen:
            raise LiveError(f"{label}: id {fid!r} is used twice")
        seen.add(fid)
        if not isinstance(raw.get("claim"), str) or not raw["claim"].strip():
            raise LiveError(f"{label}: 'claim' (the sentence, in short) is missing")
        issue = raw.get("issue")
        if issue is not None:
            if not isinstance(issue, str) or not re.fullmatch(r"#\d+", issue):
                raise LiveError(f"{label}: 'issue' is written '#NNNN'")
            if not isinstance(raw.get("issue_summary"), str) or not raw["issue_summary"].strip():
                raise LiveError(f"{label}: an 'issue' needs its one-line 'issue_summary'")
        evidence = []
        for j, ev in enumerate(raw.get("evidence", [])):
            elabel = f"{label} evidence #{j + 1}"
            extra = set(ev) - EVIDENCE_KEYS
            if extra:
                raise LiveError(f"{elabel}: unknown key(s) {sorted(extra)}")
            for k in ("artifact", "file", "pattern"):
                if not isinstance(ev.get(k), str) or not ev[k]:
                    raise LiveError(f"{elabel}: '{k}' is missing")
            try:
                re.compile(ev["pattern"])
            except re.error as e:
                raise LiveError(f"{elabel}: 'pattern' is not a regular expression: {e}") from None
            rel, not_in = ev.get("releases", []), ev.get("not_in", [])
            if (not isinstance(rel, list) or not isinstance(not_in, list)
                    or not (rel or not_in)
                    or not all(isinstance(r, str) for r in rel + not_in)):
                raise LiveError(f"{elabel}: 'releases' and 'not_in' are lists of versions, "
                                f"at least one of them not empty")
            since, nowhere = ev.get("since"), ev.get("nowhere", False)
            if since is not None and (not isinstance(since, str) or since not in rel):
                raise LiveError(f"{elabel}: 'since' is a version, one of its 'releases' (the "
                                f"pattern must match from that release on)")
            if not isinstance(nowhere, bool) or (nowhere and (rel or since)):
                raise LiveError(f"{elabel}: 'nowhere = true' is for an evidence with 'not_in' "
                                f"only (a name found in no release)")
            evidence.append(Evidence(ev["artifact"], ev["file"], ev["pattern"], tuple(rel),
                                     tuple(not_in), since, nowhere))
        if not evidence:
            raise LiveError(f"{label}: no [[fact.evidence]]")
        facts.append(Fact(fid, raw["claim"].strip(), tuple(evidence), issue,
                          raw.get("issue_summary")))
    return facts


def check_fact(fact: Fact) -> list[str]:
    """Every way ``fact``'s evidence fails against the sources jars."""
    out = []
    for n, ev in enumerate(fact.evidence, start=1):
        rx = re.compile(ev.pattern, re.MULTILINE)
        for release, must in [(r, True) for r in ev.releases] + [(r, False) for r in ev.not_in]:
            where = f"{fact.id} evidence #{n}: {ev.artifact} {release} {ev.file}"
            try:
                texts = _texts(ev.artifact, release, ev.file)
            except LiveError as e:
                out.append(f"{where}: {e}")
                continue
            found = any(rx.search(text) is not None for text in texts)
            if found != must:
                out.append(f"{where}: /{ev.pattern}/ " + ("does not match" if must else
                                                          "matches, where it must not"))
    return out


def _texts(artifact: str, release: str, file: str) -> list[str]:
    """The text of ``file`` in that release, or of every source file (``*``: each ``.java`` of a
    jar, each ``.go`` but tests of a Go module)."""
    if file == ANY_FILE:
        return [t for _, t in sources.java_files(artifact, release)]
    return [sources.read(artifact, release, file)]


def since_claims(fact: Fact) -> list[str]:
    """The releases X of which ``fact`` says "since X": its id's ``-since-X`` and its claim's
    "since X", "from X" (not "from X to Y"), "new in X", "added in X", "X and later", "X onwards"
    and "(X: or ...)".

    >>> f = Fact("a.b-since-5.3.0", "From 5.1.4 (RIP-63) a; 4.8.0 and later b; from 5.0.0 to "
    ...          "5.1.3 c; since 4.9.0 d; 5.5.0 onwards e; from 4.9.8 and 5.3.3 f; g (5.4.0: or "
    ...          "h); (4.9.8: i; 5.3.3: j).", ())
    >>> since_claims(f)
    ['5.3.0', '5.1.4', '4.8.0', '4.9.0', '5.5.0', '5.4.0']
    """
    found = [m.group("v") for m in SINCE_ID.finditer(fact.id)]
    found += [m.group("v") or m.group("w") or m.group("o")
              for m in SINCE_CLAIM.finditer(fact.claim)]
    return list(dict.fromkeys(found))


def since_problems(fact: Fact, *, lock: dict[str, str] | None = None,
                   versions: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """Every way ``fact`` breaks the "since" rule (no jar is read): a release X it says "since"
    of with no evidence ``since = "X"``; an evidence ``since = "X"`` whose artifact's release
    just before X on Maven Central (from the lock's ``versions``) is missing from its ``not_in``
    or is not locked."""
    lock = sources.load_lock() if lock is None else lock
    versions = sources.load_versions() if versions is None else versions
    out = []
    declared = {ev.since for ev in fact.evidence}
    for x in since_claims(fact):
        if x not in declared:
            out.append(f"{fact.id}: it says 'since {x}' (id or claim) but no evidence has "
                       f"since = \"{x}\" (the evidence whose pattern is new in {x})")
    for n, ev in enumerate(fact.evidence, start=1):
        if ev.since is None:
            continue
        where = f"{fact.id} evidence #{n} (since {ev.since}, {ev.artifact})"
        try:
            before = sources.predecessor(ev.artifact, ev.since, versions)
        except LiveError as e:
            out.append(f"{where}: {e}")
            continue
        if before is None:
            out.append(f"{where}: {ev.since} is the first release of {ev.artifact} on "
                       f"{sources.registry(ev.artifact)}: 'since' it says nothing")
            continue
        if before not in ev.not_in:
            out.append(f"{where}: the release before {ev.since} on "
                       f"{sources.registry(ev.artifact)} is {before}: "
                       f"put it in not_in (the pattern must not match there)")
        if sources.key(ev.artifact, before) not in lock:
            out.append(f"{where}: {sources.key(ev.artifact, before)} (the release before "
                       f"{ev.since}) is not locked: `python -m rocketlb_core.live.sources "
                       f"--lock {sources.key(ev.artifact, before)}`")
    return out


def absence_problems(fact: Fact, *, lock: dict[str, str] | None = None) -> list[str]:
    """Every absence-only evidence of ``fact`` (``not_in``, no ``releases``) whose pattern
    matches its file in no locked release of its artifact (a typo would pass: it denies
    nothing), or, written ``nowhere = true``, matches in one, or does not match the claim."""
    lock = sources.load_lock() if lock is None else lock
    out = []
    for n, ev in enumerate(fact.evidence, start=1):
        if ev.releases:
            continue
        where = f"{fact.id} evidence #{n}: {ev.artifact} {ev.file}"
        rx = re.compile(ev.pattern, re.MULTILINE)
        locked = sorted((sources.split_key(k)[1] for k in lock
                         if sources.split_key(k)[0] == ev.artifact),
                        key=sources.version_key, reverse=True)
        found = None
        for release in locked:
            try:
                texts = _texts(ev.artifact, release, ev.file)
            except gosources.MissingFile:
                continue                    # the file is not in that release
            except LiveError as e:
                out.append(f"{where}: {e}")
                break
            if any(rx.search(t) for t in texts):
                found = release
                break
        if ev.nowhere:
            if found is not None:
                out.append(f"{where}: /{ev.pattern}/ matches in {ev.artifact} {found}, so it "
                           f"is not 'nowhere': drop nowhere = true")
            if not rx.search(fact.claim):
                out.append(f"{where}: nowhere = true, but /{ev.pattern}/ does not match the "
                           f"claim, which must name what is absent")
        elif found is None:
            out.append(f"{where}: /{ev.pattern}/ (not_in only) matches in no locked release of "
                       f"{ev.artifact} ({', '.join(locked) or 'none'}), so a typo would pass: "
                       f"give it a release where it matches, or, for a name that never "
                       f"existed, nowhere = true")
    return out


def fact_comment_problems(root: Path = ROOT) -> list[str]:
    """Every ``<!--`` comment of a chapter's markdown cells or a book page that mentions a fact
    but is not one ``<!-- fact: ID -->`` with a valid id (lowercase letters, digits, '.', '_',
    '-'), naming page, cell and text."""
    out = []
    for page in pages(root):
        name = str(page.relative_to(root)) if page.is_relative_to(root) else str(page)
        for where, text in markdown_parts(page):
            for m in COMMENT.finditer(text):
                comment = m.group(0)
                if MENTIONS_FACT.search(comment) and not GOOD_FACT_COMMENT.fullmatch(comment):
                    line = text.count("\n", 0, m.start()) + 1
                    out.append(f"{name} {where} line {line}: {comment!r} is not "
                               f"'<!-- fact: ID -->' with a valid id")
            out += [f"{name} {where} line {n}: {text.splitlines()[n - 1][:60]!r} starts a line "
                    "inside a paragraph: MyST ends the paragraph there (an HTML block), and "
                    "the rest of the line is shown raw; move the comment after a word"
                    for n in comment_breaks(text)]
    return out


def comment_breaks(text: str) -> list[int]:
    r"""The lines (from 1) of ``text`` that begin with a fact comment right after a line of the
    same paragraph (outside code fences): CommonMark lets an HTML comment interrupt a paragraph,
    so the paragraph ends before it.

    >>> comment_breaks("One\n<!-- fact: a.b --> two\n\n<!-- fact: c.d -->\n"
    ...                "```\nx\n<!-- fact: e -->\n```")
    [2]
    """
    out = []
    fence = False
    previous = ""
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            fence = not fence
        elif not fence and stripped.startswith("<!--") and MENTIONS_FACT.search(line) \
                and previous.strip() and not previous.lstrip().startswith(("#", "|", "<!--")):
            out.append(n)
        previous = line
    return out


def fact_references(root: Path = ROOT) -> list[tuple[str, str]]:
    """(page and cell, fact id) of every ``<!-- fact: ID -->`` in the chapters and pages."""
    refs = []
    for page in pages(root):
        for where, text in markdown_parts(page):
            for m in FACT_REF.finditer(text):
                refs.append((f"{page.relative_to(root)} {where}", m.group("id")))
    return refs


def needed_jars(root: Path = ROOT, facts_file: Path = FACTS_FILE) -> list[str]:
    """Every ``artifact:version`` the excerpts and facts name."""
    keys: list[str] = []
    for page in pages(root):
        for ex in excerpts(page, root):
            for piece in ex.pieces:
                keys += [sources.key(piece.artifact, r) for r in piece.releases]
    for fact in load_facts(facts_file):
        for ev in fact.evidence:
            keys += [sources.key(ev.artifact, r) for r in ev.releases + ev.not_in]
    return list(dict.fromkeys(keys))
