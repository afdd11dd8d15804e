"""A master killed beside its slave, live (issue 45; question apache/rocketmq#2485):
``data/live/slave-reads-4``, ``-5`` and ``-5.5`` (scenario ``data/scenarios/live/slave-reads.toml``:
broker-a a ``SYNC_MASTER`` with slave-a, killed at 15 s while a producer sends, restarted at
70 s; ``c1``, concurrently consuming, and ``o1``, orderly, join at 25 s), checked offline here.

A producer's list skips a broker whose route lists no master (spec 1.3): the check reads the
brokers a logged route change lists without one (``RouteChange.masterless``), and without that
reading the 4.9.8 recording leaves sends unexplained. A 4.x slave serves pulls, so ``c1`` read
broker-a's messages at once; a 5.x slave refuses them unless ``slaveReadEnable`` (fact
broker.slave-refuses-pulls-unless-slave-read-enable-5x), so there ``c1`` waited for the master
too. ``o1`` locks a queue on its master alone (fact consumer.orderly-lock-asks-the-master-only):
it read broker-a's messages only after the restart, on every line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rocketlb_core.paths import data_path

RECORDINGS = sorted(data_path("live").glob("slave-reads-*"))
_TRACES: dict[Path, Path] = {}


def _imported(rec: Path, tmp: pytest.TempPathFactory) -> Path:
    from rocketlb_core.trace.importer import import_recording

    if rec not in _TRACES:
        _TRACES[rec] = tmp.mktemp(rec.name) / "trace"
        import_recording(rec, _TRACES[rec])
    return _TRACES[rec]


@pytest.fixture(scope="module")
def frame(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from rocketlb_core.viz.tables import live_slave_reads_frame

    return live_slave_reads_frame({r.name: (r, _imported(r, tmp_path_factory))
                                   for r in RECORDINGS})


def test_each_line_has_its_recording() -> None:
    assert [p.name for p in RECORDINGS] == ["slave-reads-4", "slave-reads-5",
                                            "slave-reads-5.5"]


def test_everything_is_explained_and_read_once(frame: Any) -> None:
    assert (frame["unexplained"] == 0).all()
    assert set(frame["line"]) == {"4.9.7", "5.3.3", "5.5.0"}
    # every member read broker-a's messages (stored before the kill) in the end
    assert (frame["broker-a messages"] > 50).all()


def test_a_4x_slave_serves_pulls_and_a_5x_one_refuses_them(frame: Any) -> None:
    by = frame.set_index(["line", "member"])
    # 4.x: the concurrently consuming member read broker-a's backlog from slave-a, long before
    # the restart; the orderly one only after it
    assert by.loc[("4.9.7", "c1"), "first after the restart (s)"] < -30
    for line in ("4.9.7", "5.3.3", "5.5.0"):
        assert by.loc[(line, "o1"), "first after the restart (s)"] > 0
    # 5.x: slave-a answered every pull with a refusal, so c1 waited for the master as well
    for line in ("5.3.3", "5.5.0"):
        assert by.loc[(line, "c1"), "first after the restart (s)"] > 0


def test_the_producer_check_needs_the_masterless_route(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read as if every logged route kept broker-a's master, the 4.9.8 recording's sends after
    the route dropped it are predicted at broker-a: unexplained."""
    from rocketlb_core.model import TopicRoute
    from rocketlb_core.trace.agreement import check_recording

    rec = RECORDINGS[0]
    trace = _imported(rec, tmp_path_factory)
    got = check_recording(rec, trace)["producers"]["p-steady"]
    assert got["unexplained"] == 0
    monkeypatch.setattr(TopicRoute, "without_masters", lambda self, names: self)
    got = check_recording(rec, trace)["producers"]["p-steady"]
    assert got["unexplained"] > 50


def test_the_orderly_member_was_refused_while_its_route_had_no_master(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On 5.x the member tries the lock every second; after the master's restart its route
    still listed no master until its next poll, so those tries sent no request and the broker
    logged no refusal: read without the member's own route, they are unexplained."""
    from rocketlb_core.trace import lock_agreement

    for rec in RECORDINGS[1:]:
        got = lock_agreement.check_orderly(rec)["GID_ord"]
        assert got["unexplained"] == 0
        assert got["refused_seen"] > 20
    monkeypatch.setattr(lock_agreement, "_masterless_spans", lambda *a, **k: {})
    missed = sum(lock_agreement.check_orderly(r)["GID_ord"]["unexplained"]
                 for r in RECORDINGS[1:])
    assert missed > 0
