"""The Go client's released sources: module zips from the Go module proxy, pinned by their go.sum
hash (``rocketlb_core/live/gosources.py``, read through ``sources.py`` as the jars are).

The zips are downloaded on first use (the real proxy, like the jars from Maven Central); without
network the fixture fails, naming the URL (never a skip). The hash is checked against the go.sum
lines Go itself writes for these releases, and a changed zip, a zip of another version and a
wrong lock entry are each shown to fail by name.
"""

from __future__ import annotations

import base64
import json
import shutil
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from rocketlb_core.live import claims, gosources, sources
from rocketlb_core.live.jars import LiveError

GO = "rocketmq-client-go"
# go.sum's lines for github.com/apache/rocketmq-client-go/v2 (what `go mod download` records)
GO_SUM = {
    "2.0.0": "h1:D6jFj3DcNjWyjWn5N/R7Eq8v5kLqlgkFnT/DNQFnWlM=",
    "2.1.0": "h1:3eABKfxc1WmS2lLTTbKMe1gZfZV6u1Sx9orFnOfABV0=",
    "2.1.1": "h1:WY/LkOYSQaVyV+HOqdiIgF4LE3beZ/jwdSLKZlzpabw=",
    "2.1.2": "h1:yt73olKe5N6894Dbm+ojRf/JPiP0cxfDNNffKwhpJVg=",
}
KEY = sources.key(GO, "2.1.2")


@pytest.fixture(scope="module", autouse=True)
def go_zips() -> dict[str, Path]:
    """The four releases' zips, fetched from the proxy and verified against the lock."""
    keys = [sources.key(GO, v) for v in GO_SUM]
    return dict(zip(GO_SUM, sources.ensure_all(keys), strict=True))


@pytest.mark.parametrize("version", list(GO_SUM))
def test_the_hash_is_the_go_sum_hash(go_zips: dict[str, Path], version: str) -> None:
    got = gosources.hash_zip(go_zips[version], gosources.prefix(GO, version))
    assert got == GO_SUM[version]
    assert sources.load_lock()[sources.key(GO, version)] == GO_SUM[version]


def test_the_lock_records_the_releases_the_proxy_serves() -> None:
    assert sources.load_versions()[GO] == ("2.0.0", "2.1.0", "2.1.1", "2.1.2")
    assert sources.predecessor(GO, "2.1.0") == "2.0.0"
    assert sources.predecessor(GO, "2.1.2") == "2.1.1"
    assert sources.predecessor(GO, "2.0.0") is None


def _rezip(src: Path, dest: Path, change: str | None = None) -> None:
    """``src`` written again as ``dest``, entry by entry, with one byte of the file ending
    ``change`` flipped."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if change is not None and info.filename.endswith(change):
                data = data[:100] + bytes([data[100] ^ 1]) + data[101:]
            zout.writestr(info.filename, data)


def _cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where ``sources`` looks for the 2.1.2 zip once the cache is ``tmp_path``."""
    monkeypatch.setenv("ROCKETLB_LIVE_CACHE", str(tmp_path))
    path = sources.jar_path(GO, "2.1.2")
    assert path == tmp_path / "sources" / "rocketmq-client-go-2.1.2.zip"
    path.parent.mkdir(parents=True)
    return path


def test_the_same_files_zipped_again_still_verify(go_zips: dict[str, Path], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The hash is of the files, not of the zip's bytes (so the control below is fair)."""
    path = _cached(tmp_path, monkeypatch)
    _rezip(go_zips["2.1.2"], path)
    assert path.read_bytes() != go_zips["2.1.2"].read_bytes()
    assert sources.ensure(GO, "2.1.2") == path


def test_a_zip_with_one_byte_changed_is_refused_by_name(go_zips: dict[str, Path], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = _cached(tmp_path, monkeypatch)
    _rezip(go_zips["2.1.2"], path, change="/producer/selector.go")
    with pytest.raises(LiveError) as e:
        sources.ensure(GO, "2.1.2")
    message = str(e.value)
    assert message.startswith("rocketmq-client-go-2.1.2.zip: its go.sum hash h1:"), message
    assert f"is not the one locked for {KEY}" in message, message
    assert GO_SUM["2.1.2"] in message, message


def test_a_zip_with_one_raw_byte_changed_is_refused_by_name(
        go_zips: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _cached(tmp_path, monkeypatch)
    data = bytearray(go_zips["2.1.2"].read_bytes())
    data[len(data) // 3] ^= 0xFF                  # inside some entry's packed bytes
    path.write_bytes(bytes(data))
    with pytest.raises(LiveError) as e:
        sources.ensure(GO, "2.1.2")
    message = str(e.value)
    assert KEY in message, message
    assert "rocketmq-client-go-2.1.2.zip" in message, message


def test_another_versions_zip_is_refused_by_name(go_zips: dict[str, Path], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = _cached(tmp_path, monkeypatch)
    shutil.copyfile(go_zips["2.1.1"], path)
    with pytest.raises(LiveError) as e:
        sources.ensure(GO, "2.1.2")
    message = str(e.value)
    assert message.startswith(f"{KEY}: rocketmq-client-go-2.1.2.zip: "), message
    assert "is not under github.com/apache/rocketmq-client-go/v2@v2.1.2/" in message, message


def test_a_hostile_lock_entry_fails_naming_the_key() -> None:
    wrong = "h1:" + base64.b64encode(bytes(32)).decode()
    with pytest.raises(LiveError) as e:
        sources.ensure(GO, "2.1.2", lock={KEY: wrong})
    message = str(e.value)
    assert f"is not the one locked for {KEY}" in message, message
    assert wrong in message, message
    with pytest.raises(LiveError, match=r"not in sources-lock\.json"):
        sources.ensure(GO, "2.1.2", lock={})


GOOD_JAR = "rocketmq-client:4.9.8"


@pytest.mark.parametrize(("jars", "says"), [
    ({KEY: "b88a140edc6b3f402a61ef63eca4f60eb4d081bdf215be53b60a99bc8c49928e"},
     f"{KEY} is a Go module, locked by its go.sum hash"),
    ({KEY: "h1:short="}, f"{KEY} is a Go module"),
    ({KEY: GO_SUM["2.1.2"] + "\n"}, f"{KEY} is a Go module"),
    ({KEY: 7}, f"{KEY} is a Go module"),
    ({"rocketmq-client-go:v2.1.2": GO_SUM["2.1.2"]}, "write a Go module's version without its 'v'"),
    ({"rocketmq-client-go:2.1": GO_SUM["2.1.2"]}, "write a Go module's version without its 'v'"),
    ({GOOD_JAR: GO_SUM["2.1.2"]}, f"{GOOD_JAR} must be locked by the SHA-256"),
    ({GOOD_JAR: "D03A6C87957A00F036E783FDFD79B8FE41EFE6293930CFC66365BE1F4B2ECD35"},
     f"{GOOD_JAR} must be locked by the SHA-256"),
    ({GOOD_JAR: "d03a6c87957a00f036e783fdfd79b8fe41efe6293930cfc66365be1f4b2ecd3"},
     f"{GOOD_JAR} must be locked by the SHA-256"),
    ({GOOD_JAR: None}, f"{GOOD_JAR} must be locked by the SHA-256"),
    ({"rocketmq-client-go": GO_SUM["2.1.2"]}, "write a sources jar as ARTIFACT:VERSION"),
    ({"a:b:c": GO_SUM["2.1.2"]}, "write a sources jar as ARTIFACT:VERSION"),
    ([KEY], "'jars' must map artifact:version"),
])
def test_a_malformed_lock_entry_is_refused_by_name(tmp_path: Path, jars: object,
                                                   says: str) -> None:
    path = tmp_path / "sources-lock.json"
    path.write_text(json.dumps({"jars": jars, "versions": {}}), encoding="utf-8")
    with pytest.raises(LiveError) as e:
        sources.load_lock(path)
    assert says in str(e.value), str(e.value)


def test_go_files_are_the_go_sources_without_tests() -> None:
    files = dict(sources.java_files(GO, "2.1.2"))
    assert "producer/selector.go" in files
    assert "consumer/strategy.go" in files
    assert "producer/selector_test.go" not in files
    assert all(name.endswith(".go") and not name.endswith("_test.go") for name in files)
    assert "func NewRoundRobinQueueSelector()" in files["producer/selector.go"]
    assert sources.read(GO, "2.1.2", "producer/selector.go") == files["producer/selector.go"]
    assert sources.read(GO, "2.1.2", "go.mod").startswith("module github.com/apache/")


def test_a_missing_file_is_named() -> None:
    with pytest.raises(gosources.MissingFile, match=r"producer/nothing\.go is not in "
                                                    r"rocketmq-client-go 2\.1\.2's module zip"):
        sources.read(GO, "2.1.2", "producer/nothing.go")
    fact = claims.Fact("go.x", "c", (claims.Evidence(GO, "producer/nothing.go", "x", ("2.1.2",)),))
    [problem] = claims.check_fact(fact)
    assert "rocketmq-client-go 2.1.2 producer/nothing.go" in problem, problem


def test_the_proxy_is_goproxys_first_http_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOPROXY", "off|https://mirror.example/go/,direct")
    assert gosources.zip_url(GO, "2.1.2") == (
        "https://mirror.example/go/github.com/apache/rocketmq-client-go/v2/@v/v2.1.2.zip")
    monkeypatch.setenv("GOPROXY", "direct")
    assert gosources.zip_url(GO, "2.1.2").startswith("https://proxy.golang.org/github.com/")


def test_no_network_names_the_url_and_leaves_no_part(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = _cached(tmp_path, monkeypatch)
    monkeypatch.setenv("GOPROXY", "http://127.0.0.1:9")       # the discard port: refused
    url = "http://127.0.0.1:9/github.com/apache/rocketmq-client-go/v2/@v/v2.1.2.zip"
    with pytest.raises(LiveError, match=f"could not read {url}"):
        sources.ensure(GO, "2.1.2")
    assert list(path.parent.iterdir()) == []


def test_a_release_the_proxy_does_not_serve_is_named() -> None:
    """2.0.1 was never released (the proxy refuses it), so it is not among the versions."""
    assert "2.0.1" not in sources.load_versions()[GO]
    with pytest.raises(LiveError, match=r"@v/v2\.0\.1\.info: HTTP 4\d\d"):
        gosources.proxy_versions(GO, ["2.1.2", "2.0.1"])
    assert "2.1.2" in gosources.proxy_versions(GO, ["2.1.2"])


@pytest.mark.parametrize(("version", "kept"), [
    ("v2.1.2", True), ("v2.0.0-rc2", True), ("v2.0.0+incompatible", True),
    ("v2.1.3-0.20251226070945-2173d070fd1b", False), ("v0.0.0-20191109021931-daa7c04131f5", False),
    ("v1.2.4-pre.0.20200101000000-abcdefabcdef", False), ("2.1.2", False), ("v2.1", False),
])
def test_the_versions_list_drops_pseudo_versions(version: str, kept: bool) -> None:
    assert bool(gosources.TAGGED.fullmatch(version)
                and not gosources.PSEUDO.fullmatch(version)) == kept


def _go_fact(fid: str) -> claims.Fact:
    return next(f for f in claims.load_facts() if f.id == fid)


def test_a_changed_go_pattern_fails_in_each_release_by_name() -> None:
    fact = _go_fact("go.hash-selector-fnv32a")
    ev = fact.evidence[1]
    changed = replace(fact, evidence=(replace(ev, pattern=ev.pattern.replace("New32a", "New64a")),))
    problems = claims.check_fact(changed)
    assert [p.split(":")[1].strip() for p in problems] == [
        f"rocketmq-client-go {v} producer/selector.go" for v in GO_SUM], problems
    assert all("does not match" in p for p in problems), problems


def test_a_go_since_holds_the_release_before_it() -> None:
    fact = _go_fact("go.retry-codes")
    [ev] = [e for e in fact.evidence if e.since == "2.1.2"]
    assert claims.since_problems(fact) == []
    [problem] = claims.since_problems(replace(fact, evidence=(replace(ev, not_in=()),)))
    assert "the release before 2.1.2 on the Go module proxy is 2.1.1" in problem, problem
    moved = replace(ev, releases=("2.1.1", "2.1.2"), not_in=("2.1.0",), since="2.1.1")
    problems = claims.check_fact(replace(fact, evidence=(moved,)))
    assert any("2.1.1" in p and "does not match" in p for p in problems), problems
