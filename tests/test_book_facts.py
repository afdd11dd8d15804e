"""Every claim the book makes about upstream, in ``book/facts.toml``, holds in upstream's released
sources jars (``rocketlb_core/live/sources.py``: Maven Central, checksummed and locked).

A fact names the artifact, file and releases where its pattern must match, and the releases
where it must not (for "since X": the release before X). The jars are fetched through Maven on
first use; without network or Maven the fixture fails, naming what is missing (never a skip).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rocketlb_core.live import claims, sources
from rocketlb_core.live.jars import LiveError

FACTS = claims.load_facts()
MIN_FACTS = 40


@pytest.fixture(scope="module", autouse=True)
def sources_jars() -> None:
    """Every jar the book names, fetched in one Maven run and verified against the lock."""
    sources.ensure_all(claims.needed_jars())


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
])
def test_a_malformed_entry_is_refused(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "facts.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LiveError, match=says.replace("[", r"\[").replace("]", r"\]")):
        claims.load_facts(path)
