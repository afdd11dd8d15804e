"""Every claim the book makes about upstream, in ``book/facts.toml``, holds in upstream's released
sources jars (``rocketlb_core/live/sources.py``: Maven Central, checksummed and locked).

A fact names the artifact, file and releases where its pattern must match, and the releases
where it must not (for "since X": the release before X). The jars are fetched through Maven on
first use; without network or Maven the fixture fails, naming what is missing (never a skip).

Beyond its matches each fact keeps the rules of ``claims`` (its module docstring): a "since X"
holds the release before X on Maven Central (the lock's ``versions``) in ``not_in``, locked; an
absence-only pattern matches in some locked release (or, ``nowhere``, in the claim); and every
``<!--`` comment that mentions a fact parses. Each rule is shown to fail on a bad fact below.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from rocketlb_core.live import claims, sources
from rocketlb_core.live.jars import LiveError

FACTS = claims.load_facts()
MIN_FACTS = 40


@pytest.fixture(scope="module", autouse=True)
def sources_jars() -> None:
    """Every jar the book names and every locked jar (an absence-only pattern is looked for in
    all of its artifact's), fetched in one Maven run and verified against the lock."""
    sources.ensure_all(list(dict.fromkeys(claims.needed_jars() + sorted(sources.load_lock()))))


def test_the_file_holds_the_facts() -> None:
    assert len(FACTS) >= MIN_FACTS


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f.id)
def test_each_fact_holds_in_its_releases(fact: claims.Fact) -> None:
    problems = claims.check_fact(fact)
    assert not problems, f"{fact.id} ({fact.claim}):\n" + "\n".join(problems)


def test_every_fact_a_chapter_points_at_exists() -> None:
    ids = {f.id for f in FACTS}
    missing = [(where, fid) for where, fid in claims.fact_references() if fid not in ids]
    assert not missing, missing


def test_every_comment_that_mentions_a_fact_parses() -> None:
    problems = claims.fact_comment_problems()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f.id)
def test_each_since_holds_the_release_before_it(fact: claims.Fact) -> None:
    problems = claims.since_problems(fact)
    assert not problems, f"{fact.id} ({fact.claim}):\n" + "\n".join(problems)


@pytest.mark.parametrize("fact", [f for f in FACTS if any(not e.releases for e in f.evidence)],
                         ids=lambda f: f.id)
def test_each_absence_denies_something_that_exists(fact: claims.Fact) -> None:
    problems = claims.absence_problems(fact)
    assert not problems, f"{fact.id} ({fact.claim}):\n" + "\n".join(problems)


def test_the_lock_records_the_versions_of_every_locked_artifact() -> None:
    """Each locked jar is a version Maven Central listed for its artifact when the versions were
    recorded (``--versions``), so the release before a since is read from the lock, offline."""
    versions = sources.load_versions()
    missing = [k for k in sources.load_lock()
               if sources.split_key(k)[1] not in versions.get(sources.split_key(k)[0], ())]
    assert not missing, f"record them: python -m rocketlb_core.live.sources --versions ({missing})"
    for artifact, listed in versions.items():
        assert list(listed) == sources.order_versions(listed), artifact


# ------------------------------------------------------------- the check itself, on known facts

def _fact(fid: str) -> claims.Fact:
    return next(f for f in FACTS if f.id == fid)


def test_a_changed_number_fails() -> None:
    fact = _fact("client.persist-consumer-offset-interval-5s")
    ev = fact.evidence[0]
    changed = replace(fact, evidence=(replace(ev, pattern=ev.pattern.replace("5", "10")),))
    problems = claims.check_fact(changed)
    assert len(problems) == len(ev.releases), problems
    assert all("does not match" in p for p in problems)


def test_a_wrong_since_fails() -> None:
    fact = _fact("producer.retry-codes.system-busy-since-5.3.0")
    ev = fact.evidence[0]
    # "since 5.2.0" instead of 5.3.0: 5.2.0 must now match, and 5.3.0 must not
    changed = replace(fact, evidence=(replace(ev, releases=("5.2.0",), not_in=("5.3.0",)),))
    problems = claims.check_fact(changed)
    assert any("5.2.0" in p and "does not match" in p for p in problems), problems
    assert any("5.3.0" in p and "must not" in p for p in problems), problems


def _small_book(root: Path, cells: list[str], last_id: str, page: str) -> None:
    """A book under ``root``: one chapter of markdown ``cells`` (the last one's id ``last_id``)
    and one page ``book/p.md`` of ``page``."""
    (root / "notebooks").mkdir()
    (root / "book").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(c) for c in cells]
    nb.cells[-1].id = last_id
    nbformat.write(nb, root / "notebooks" / "01-x.ipynb")
    (root / "book" / "p.md").write_text(page, encoding="utf-8")


def test_an_unparseable_fact_comment_fails(tmp_path: Path) -> None:
    _small_book(tmp_path, ["A sentence. <!-- fact: a.good-id -->\n"
                           "<!-- an artifact note, no pointer -->",
                           "One. <!-- fact: Bad Id -->\nTwo. <!-- fact: a, b "
                           "-->\nThree <!-- see fact a.good-id -->\n"
                           "Four <!-- fact: a.good-id"], "abc",
                "x\n\ny <!-- Fact: a.good-id -->\n")
    problems = claims.fact_comment_problems(tmp_path)
    assert len(problems) == 5, problems
    assert problems[0] == ("notebooks/01-x.ipynb cell 1 (id abc) line 1: '<!-- fact: Bad Id -->' "
                           "is not '<!-- fact: ID -->' with a valid id"), problems
    assert "line 2: '<!-- fact: a, b -->'" in problems[1], problems
    assert "see fact" in problems[2], problems
    assert "'<!-- fact: a.good-id'" in problems[3], problems
    assert problems[4].startswith("book/p.md page line 3: '<!-- Fact: a.good-id -->'"), problems
    assert [fid for _, fid in claims.fact_references(tmp_path)] == ["a.good-id"]


def test_a_fact_comment_that_starts_a_line_of_a_paragraph_fails(tmp_path: Path) -> None:
    """CommonMark lets an HTML comment interrupt a paragraph: a fact comment at the start of a
    paragraph's second line ends the paragraph there, and the rest of its line is raw HTML (as
    it was in 37 places of the built book). Alone after a blank line, or in a code fence, or
    after a word, it is fine."""
    _small_book(tmp_path, ["- An item,\n  <!-- fact: a.b --> its second line.\n\n"
                           "<!-- fact: a.c -->\n\n```\nx\n<!-- fact: a.d -->\n```\n"
                           "A line, <!-- fact: a.e --> and\nmore."], "c0",
                "x\n<!-- fact: a.f --> y\n")
    problems = claims.fact_comment_problems(tmp_path)
    assert [p.split(": '")[0] for p in problems] == [
        "notebooks/01-x.ipynb cell 0 (id c0) line 2", "book/p.md page line 2"], problems
    assert all("starts a line inside a paragraph" in p for p in problems)


def _since_fact() -> tuple[claims.Fact, claims.Evidence]:
    fact = _fact("proxy.query-assignment-lite-group-not-fifo-since-5.5.0")
    [ev] = [e for e in fact.evidence if e.since == "5.5.0"]
    assert ev.artifact == "rocketmq-proxy"
    assert "5.4.0" in ev.not_in
    return fact, ev


def test_a_since_without_the_release_before_it_in_not_in_fails() -> None:
    fact, ev = _since_fact()
    # rocketmq-proxy has no 5.3.4 nor 5.4.x patch on Central: the release before 5.5.0 is 5.4.0
    assert sources.predecessor("rocketmq-proxy", "5.5.0") == "5.4.0"
    changed = replace(fact, evidence=(replace(ev, not_in=("5.3.3",)),))
    [problem] = claims.since_problems(changed)
    assert "the release before 5.5.0 on Maven Central is 5.4.0: put it in not_in" in problem


def test_a_since_whose_release_before_is_not_locked_fails() -> None:
    fact, _ = _since_fact()
    lock = {k: v for k, v in sources.load_lock().items() if k != "rocketmq-proxy:5.4.0"}
    [problem] = claims.since_problems(fact, lock=lock)
    assert "rocketmq-proxy:5.4.0 (the release before 5.5.0) is not locked" in problem, problem
    assert "--lock rocketmq-proxy:5.4.0" in problem, problem


def test_a_claimed_since_needs_a_since_evidence() -> None:
    fact, ev = _since_fact()
    changed = replace(fact, evidence=(replace(ev, since=None),))
    [problem] = claims.since_problems(changed)
    assert "says 'since 5.5.0'" in problem, problem
    assert 'no evidence has since = "5.5.0"' in problem, problem
    # the claim alone says it too: "From 5.1.4", "4.8.0 and later", "(5.5.0: or ...)"
    for claim, x in [("From 5.1.4 the client logs it.", "5.1.4"),
                     ("4.8.0 and later take the modulo first.", "4.8.0"),
                     ("a message group (5.5.0: or a lite topic)", "5.5.0")]:
        plain = replace(fact, id="a.b", claim=claim, evidence=(replace(ev, since=None),))
        assert any(f"'since {x}'" in p for p in claims.since_problems(plain)), claim
    ranges = replace(fact, id="a.b", claim="from 5.0.0 to 5.1.3 (4.9.8: a; 5.3.3: b)",
                     evidence=(replace(ev, since=None),))
    assert claims.since_problems(ranges) == []


def test_a_since_that_is_no_release_of_its_artifact_fails() -> None:
    fact, ev = _since_fact()
    # 5.3.2 is a release of rocketmq-client but not of rocketmq-proxy
    changed = replace(fact, id="a.b", claim="c", evidence=(
        replace(ev, releases=("5.3.2",), since="5.3.2"),))
    [problem] = claims.since_problems(changed)
    assert "rocketmq-proxy 5.3.2 is not among its versions on Maven Central" in problem, problem


def test_an_absence_only_typo_fails() -> None:
    fact = _fact("producer.send-msg-max-timeout-per-request-since-5.3.3")
    [ev] = [e for e in fact.evidence if not e.releases]
    assert claims.absence_problems(replace(fact, evidence=(ev,))) == []
    typo = replace(ev, pattern="sendMsgMaxTimeoutPerReqest")
    assert claims.check_fact(replace(fact, evidence=(typo,))) == []      # passes vacuously...
    [problem] = claims.absence_problems(replace(fact, evidence=(typo,)))  # ...not any more
    assert "matches in no locked release of rocketmq-client" in problem, problem


def test_a_nowhere_absence_must_name_what_the_claim_denies() -> None:
    fact = _fact("client.set-client-ip-no-local-ip-property")
    ev = next(e for e in fact.evidence if e.nowhere)
    assert claims.absence_problems(replace(fact, evidence=(ev,))) == []
    typo = replace(ev, pattern=r"rocketmq\.client\.localIp")
    [problem] = claims.absence_problems(replace(fact, evidence=(typo,)))
    assert "does not match the claim" in problem, problem
    exists = replace(ev, pattern="sendMsgMaxTimeoutPerRequest")
    problems = claims.absence_problems(replace(fact, evidence=(exists,)))
    assert any("matches in rocketmq-client 5.5.0" in p and "not 'nowhere'" in p
               for p in problems), problems


def test_an_unknown_release_fails_by_name() -> None:
    fact = _fact("client.heartbeat-broker-interval-30s")
    changed = replace(fact, evidence=(replace(fact.evidence[0], releases=("4.9.99",)),))
    [problem] = claims.check_fact(changed)
    assert "rocketmq-client:4.9.99" in problem, problem
    assert "not in sources-lock.json" in problem, problem


@pytest.mark.parametrize(("text", "says"), [
    ('[[fact]]\nid = "a"\n', "'claim'"),
    ('[[fact]]\nid = "a"\nclaim = "c"\n', "no [[fact.evidence]]"),
    ('[[fact]]\nid = "a"\nclaim = "c"\nissue = "#1"\n', "issue_summary"),
    ('[[fact]]\nid = "a"\nclaim = "c"\ncolour = 1\n', "unknown key"),
    ('[[fact]]\nid = "a"\nclaim = "c"\n[[fact.evidence]]\nartifact = "x"\nfile = "f"\n'
     'pattern = "("\nreleases = ["1"]\n', "not a regular expression"),
    ('[[fact]]\nid = "a"\nclaim = "c"\n[[fact.evidence]]\nartifact = "x"\nfile = "f"\n'
     'pattern = "p"\n', "at least one"),
    ('[[fact]]\nid = "a"\nclaim = "c"\n[[fact.evidence]]\nartifact = "x"\nfile = "f"\n'
     'pattern = "p"\nreleases = ["1"]\n[[fact]]\nid = "a"\nclaim = "d"\n', "used twice"),
    ('[[fact]]\nid = "a"\nclaim = "c"\n[[fact.evidence]]\nartifact = "x"\nfile = "f"\n'
     'pattern = "p"\nreleases = ["2"]\nnot_in = ["1"]\nsince = "3"\n', "'since' is a version"),
    ('[[fact]]\nid = "a"\nclaim = "c"\n[[fact.evidence]]\nartifact = "x"\nfile = "f"\n'
     'pattern = "p"\nreleases = ["2"]\nnowhere = true\n', "'nowhere = true' is for"),
])
def test_a_malformed_entry_is_refused(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "facts.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LiveError, match=says.replace("[", r"\[").replace("]", r"\]")):
        claims.load_facts(path)
