"""The doctor's findings' registry (``rocketlb_core.doctor.kinds``) against the doctor's code,
and the findings no other test shows.

Every ``Finding(...)`` the doctor's modules build (read from their syntax: its id, its
severities, its book section) is a registered kind with those severities and that section, and
every registered kind is built somewhere; a ``Finding`` of another id or severity is refused;
the tests and spec sections the registry cites exist. The book's page generated from it is
held current by ``tests/test_registry_pages.py``.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from docutils.nodes import make_id

from rocketlb_core.doctor.findings import KNOWN_BUGS, Finding
from rocketlb_core.doctor.kinds import ABOUT, FINDINGS, KINDS, SEVERITIES
from tests.test_book_questions import _markdown, _outline
from tests.test_doctor_inputs import _rebalance, _row
from tests.test_fuzz import run_command

ROOT = Path(__file__).resolve().parent.parent
DOCTOR = ROOT / "rocketlb_core" / "doctor"
SPEC = ROOT.parent / "shared" / "reference" / "rocketmq-load-balancing.md"


def _words(node: ast.AST) -> set[str]:
    """The strings an expression can be (through ``a if c else b``)."""
    if isinstance(node, ast.IfExp):
        return _words(node.body) | _words(node.orelse)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    return set()


def _built() -> dict[str, tuple[set[str], set[str]]]:
    """Every finding id the doctor's modules build, with the severities and book sections its
    ``Finding(...)`` calls give it (``f"known-bug-{bug}"``: one per ``KNOWN_BUGS`` entry)."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for path in sorted(DOCTOR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "Finding"):
                continue
            severities = _words(node.args[1])
            book = node.args[7]
            if isinstance(node.args[0], ast.JoinedStr):      # the known bugs' findings
                assert ast.unparse(node.args[0]) == "f'known-bug-{bug}'"
                for bug, (*_, section) in KNOWN_BUGS.items():
                    out[f"known-bug-{bug}"] = (severities, {section})
                continue
            (ident,) = _words(node.args[0])
            assert isinstance(book, ast.Call)
            assert ast.unparse(book.func) == "BOOK.format"
            parts = [a.value for a in book.args if isinstance(a, ast.Constant)]
            section = f"notebooks/{parts[0]}.ipynb#{parts[1]}"
            seen = out.setdefault(ident, (set(), set()))
            seen[0].update(severities)
            seen[1].add(section)
    return out


def test_every_finding_the_doctor_builds_is_registered_with_its_severities_and_section(
        ) -> None:
    built = _built()
    assert sorted(built) == sorted(KINDS), "built and registered finding ids differ"
    for ident, (severities, sections) in built.items():
        assert severities == set(KINDS[ident].severities), ident
        assert sections == {KINDS[ident].book}, ident


def test_the_registry_is_well_formed() -> None:
    assert len(FINDINGS) == len(KINDS) >= 15
    assert [k.about for k in FINDINGS] == sorted((k.about for k in FINDINGS),
                                                 key=list(ABOUT).index), "grouped by ABOUT"
    for k in FINDINGS:
        assert k.severities, k.id
        assert all(s in SEVERITIES for s in k.severities), k.id
        assert list(k.severities) == sorted(k.severities, key=SEVERITIES.index), k.id
        assert k.finds.endswith("."), k.id
        assert 40 <= len(k.finds) <= 300, k.id
        assert re.fullmatch(r"spec \d+(\.\d+[a-z]?)?(, \d+(\.\d+[a-z]?)?)*", k.spec), k.id
        assert k.shown_by, k.id


def test_every_test_spec_section_and_chapter_section_it_cites_exists() -> None:
    headings = (set(re.findall(r"^#+ (\d+(?:\.\d+[a-z]?)?)[. ]", SPEC.read_text("utf-8"), re.M))
                if SPEC.is_file() else None)
    stale = set()
    for k in FINDINGS:
        for s in k.shown_by:
            path, name = s.split("::")
            tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
            assert any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body), s
        for section in re.findall(r"\d+(?:\.\d+[a-z]?)?", k.spec):
            assert headings is None or section in headings, (k.id, section)
        notebook, _, anchor = k.book.partition("#")
        text = _markdown(ROOT / notebook)
        # a heading's id (docutils' make_id of its title) or a MyST target "(name)=" above one
        ids = ({make_id(t.replace("`", "")) for t in _outline(text)[0]}
               | set(re.findall(r"^\(([\w-]+)\)=$", text, re.M)))
        if anchor not in ids:
            stale.add(k.id)
    assert stale == set(), "findings whose chapter section is no heading or target there"


def test_the_data_readme_names_every_finding() -> None:
    """``rocketlb doctor --json``'s schema (``data/README.md``) lists every id."""
    text = (ROOT / "data" / "README.md").read_text(encoding="utf-8")
    assert [k.id for k in FINDINGS if f"`{k.id}`" not in text] == []


@pytest.mark.parametrize(("ident", "severity"), [("no-such-finding", "warning"),
                                                 ("broker-isolated", "critical"),
                                                 ("duplicate-client-id", "loud")])
def test_a_finding_the_registry_does_not_have_is_refused(ident: str, severity: str) -> None:
    with pytest.raises(ValueError, match=r"not registered in rocketlb_core\.doctor\.kinds"):
        Finding(ident, severity, "t", None, None, "e", "f", "b")
    assert Finding("broker-isolated", "info", "t", None, None, "e", "f", "b").id


# ------------------------------------------------------------------ findings shown only here


def _created(cid: str, version: str) -> str:
    return ("2026-11-25 21:49:59,000 INFO RocketmqClient - Created a new client Instance, "
            f"InstanceIndex:0, ClientID:{cid}, ClientConfig:ClientConfig [x=y], "
            f"ClientVersion:{version}, SerializerType:JSON\n")


def _findings(folder: Path) -> list[dict[str, object]]:
    status, out, err = run_command(["doctor", "--json", str(folder)])
    assert status == 3, err
    return list(json.loads(out)["findings"])


def test_a_queue_no_member_owns_is_reported(tmp_path: Path) -> None:
    """``consumerProgress -s true`` shows queue 1 with no client and 5 messages waiting; the one
    member's log explains nothing of it: ``unowned-queues``, critical (messages wait)."""
    (tmp_path / "progress.txt").write_text(
        _row("#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset",
             "#Client IP", "#Diff", "#LastTime")
        + _row("%RETRY%GID_x", "broker-a", "0", "0", "0", "N/A", "0", "N/A")
        + _row("TopicX", "broker-a", "0", "10", "10", "127.0.0.1", "0", "2026-11-25 21:50:00")
        + _row("TopicX", "broker-a", "1", "12", "7", "N/A", "5", "2026-11-25 21:50:00")
        + "\nConsume TPS: 0.00\nConsume Diff Total: 5\n")
    (tmp_path / "a.log").write_text(
        _rebalance("2026-11-25 21:50:00,000", "AVG", "10.0.0.1@a", [0], 1))
    (f,) = _findings(tmp_path)
    assert (f["id"], f["severity"], f["queues"]) == ("unowned-queues", "critical",
                                                     ["broker-a/1"])
    assert f["questions"] == [f"book/questions.md#{q}"
                              for q in KINDS["unowned-queues"].questions]


def test_members_on_two_client_versions_are_reported(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(
        _created("10.0.0.1@a", "V4_9_8")
        + _rebalance("2026-11-25 21:50:00,000", "AVG", "10.0.0.1@a", [0, 1], 2))
    (tmp_path / "b.log").write_text(
        _created("10.0.0.2@b", "V5_3_3")
        + _rebalance("2026-11-25 21:50:00,000", "AVG", "10.0.0.2@b", [2, 3], 2))
    (f,) = _findings(tmp_path)
    assert (f["id"], f["severity"]) == ("mixed-client-versions", "info")
    assert f["details"] == {"versions": {"V4_9_8": 1, "V5_3_3": 1}}
    assert f["questions"] == []          # no answer of book/questions.md fits (doctor.kinds)


def test_a_producer_on_a_version_that_rewrites_its_queue_list_is_reported(
        tmp_path: Path) -> None:
    (tmp_path / "p.log").write_text(
        _created("10.0.0.1@p", "V4_9_7")
        + "2026-11-25 21:50:00,100 INFO RocketmqClient - the producer [PG] start OK. "
          "sendMessageWithVIPChannel=false\n")
    (f,) = _findings(tmp_path)
    assert (f["id"], f["severity"], f["members"]) == ("known-bug-rewritten-queue-list",
                                                      "warning", ["10.0.0.1@p"])
