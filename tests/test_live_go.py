"""Java and Go consumers in one group, live (issue 47, item 2): rocketmq-client-go v2.1.2's push
consumer (``live/go``) beside upstream's Java push consumers (``data/scenarios/live/
mixed-go-java.toml``), recorded on lines 4, 5 and 5.5 (``data/live/mixed-go-java-*``) and checked
offline here. Each member's every logged assignment is explained by its own client's model on the
brokers' member lists: the Java members' by the Java strategies, the Go members' by
``goclient`` (its log read by ``trace.golog``). With AVG, which both clients compute alike on the
same sorted lists, the group ends with every queue held once; with the consistent hash, which
each client builds on its own ring, queues end held twice and held by nobody, and the messages
of a queue held twice are read twice."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from rocketlb_core import data_path
from rocketlb_core.live.record import parse_scenario
from rocketlb_core.sim.scenario import ScenarioError
from rocketlb_core.trace.golog import parse_go_line, read_go_log
from rocketlb_core.trace.schema import TraceError
from tests.test_live_record import SCENARIO
from tests.test_producer_threads import shipped_lines


def _recording(line: str) -> Path:
    return data_path("live", f"mixed-go-java-{line}")


checked = shipped_lines("mixed-go-java")


def test_every_member_is_explained_by_its_own_clients_model(
        checked: tuple[str, Path, dict[str, Any]]) -> None:
    line, _, result = checked
    assert result["producers"]["p-slow"]["unexplained"] == 0
    for name in ("c1", "g1", "c2", "h1", "gh1"):
        c = result["consumers"][name]
        assert c["logged"] >= 1, (line, name)
        assert c["unexplained"] == 0, (line, name, c["unexplained_detail"][:3])
    assert result["consumers"]["g1"]["language"] == "go"
    assert result["consumers"]["gh1"]["strategy"] == "CONSISTENT_HASH"


def test_avg_shares_the_queues_and_the_hashes_do_not(
        checked: tuple[str, Path, dict[str, Any]]) -> None:
    line, _, result = checked
    avg, hashed = result["groups_at_end"]["GID_avg"], result["groups_at_end"]["GID_hash"]
    assert avg["running"] == ["c1", "c2"]
    assert (avg["held_twice"], avg["held_by_nobody"]) == ([], [])
    assert hashed["running"] == ["h1", "gh1"]
    assert hashed["held_twice"], line
    assert hashed["held_by_nobody"], line
    # a queue held twice the whole time is read twice: more than the handovers' repeats
    assert hashed["read_twice"] > 20, line
    assert avg["read_twice"] < hashed["read_twice"], line


def test_the_check_fails_with_the_java_ring_for_the_go_member(
        checked: tuple[str, Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The Go member's assignments are explained by its own ring only: modelled with Java's
    consistent hash (MD5 ring) they are not."""
    from rocketlb_core.consumer.consistent_hash import consistent_hash
    from rocketlb_core.goclient import allocate as ga
    from rocketlb_core.trace.agreement import check_recording

    line, trace, _ = checked
    java_ring = consistent_hash(10)

    def as_java(group: str, current: str, mq_all: Any, cid_all: Any) -> Any:
        from rocketlb_core.model import MessageQueue

        got = java_ring.allocate(group, current, [MessageQueue(q.topic, q.broker_name,
                                                               q.queue_id) for q in mq_all],
                                 list(cid_all))
        return [ga.GoQueue(q.topic, q.broker_name, q.queue_id) for q in got]
    monkeypatch.setitem(ga.LIVE_STRATEGIES, "CONSISTENT_HASH", as_java)
    result = check_recording(_recording(line), trace)
    assert result["consumers"]["gh1"]["unexplained"] > 0, line
    assert result["consumers"]["h1"]["unexplained"] == 0


def test_the_go_log_is_the_clients_own() -> None:
    path = _recording("4") / "logs" / "g1" / "rocketmq-client-go.log.gz"
    log = read_go_log(path, utc_offset_minutes=0)
    assert {r.group for r in log.rebalances} == {"GID_avg"}
    assert {r.topic for r in log.rebalances} == {"TopicLive", "%RETRY%GID_avg"}
    assert {r.client_id for r in log.rebalances} == {"@g1"}   # no address but the loopback
    text = gzip.decompress(path.read_bytes()).decode()
    assert "level=info" in text


GOOD = ('time="2026-11-28 18:05:03.120 +0000" level=info msg="MessageQueue do balance done" '
        'cidAllSize=2 clientID=@g1 consumerGroup=G mqAllSize=2 rebalanceResultSet="[MessageQueue '
        '[topic=T, brokerName=broker-a, queueId=1]]" rebalanceResultSize=1 topic=T')


@pytest.mark.parametrize(("change", "field"), [
    (lambda t: t.replace("cidAllSize=2 ", ""), "cidAllSize"),
    (lambda t: t.replace("cidAllSize=2", "cidAllSize=two"), "cidAllSize"),
    (lambda t: t.replace("mqAllSize=2", "mqAllSize=99999999999999"), "mqAllSize"),
    (lambda t: t.replace("rebalanceResultSize=1", "rebalanceResultSize=3"),
     "rebalanceResultSize"),
    (lambda t: t.replace('"[MessageQueue', '"{MessageQueue'), "rebalanceResultSet"),
    (lambda t: t.replace("2026-11-28 18:05:03.120 +0000", "yesterday"), "time"),
    (lambda t: t.replace("clientID=@g1", 'clientID="@g1\\q"'), None),
    (lambda t: t.replace("clientID=@g1", 'clientID="\\u12"'), None),
    (lambda t: t.replace("topic=T", ""), "topic"),
])
def test_a_broken_balance_line_is_an_error_naming_its_field(change: Any,
                                                             field: str | None) -> None:
    assert parse_go_line("g.log", 1, GOOD, utc_offset_minutes=0) is not None
    with pytest.raises(TraceError) as err:
        parse_go_line("g.log", 7, change(GOOD), utc_offset_minutes=0)
    assert err.value.row == 7
    assert err.value.field == field


def test_other_go_lines_and_times() -> None:
    assert parse_go_line("g.log", 1, 'time="x" level=info msg="push consumer quit"',
                         utc_offset_minutes=0) is None
    rfc = GOOD.replace("2026-11-28 18:05:03.120 +0000", "2026-11-28T18:05:03+08:00")
    r = parse_go_line("g.log", 1, rfc, utc_offset_minutes=0)
    assert r is not None
    assert r.stamp == "2026-11-28 10:05:03.000"
    empty = GOOD.replace('"[MessageQueue [topic=T, brokerName=broker-a, queueId=1]]"', "[]") \
        .replace("rebalanceResultSize=1", "rebalanceResultSize=0")
    r = parse_go_line("g.log", 1, empty, utc_offset_minutes=0)
    assert r is not None
    assert r.result == ()


@pytest.mark.parametrize(("fields", "where", "message"), [
    ('language = "rust"', "language", "one of java, go"),
    ('language = "go"\nkind = "lite-pull"', "kind", "leave it out"),
    ('language = "go"\nmodel = "broadcasting"', "model", "leave it out"),
    ('language = "go"\nlistener = "orderly"', "listener", "leave it out"),
    ('language = "go"\nstrategy = "AVG_BY_CIRCLE"', "strategy", "AVG, CONSISTENT_HASH"),
    ('strategy = "ROUND"', "strategy", "AVG, AVG_BY_CIRCLE, CONSISTENT_HASH"),
    ('kind = "lite-pull"\nstrategy = "AVG"', "strategy", "only a remoting push consumer"),
])
def test_a_bad_go_consumer_field_is_refused(fields: str, where: str, message: str) -> None:
    text = SCENARIO + f'\n[[consumers]]\nname = "g9"\ngroup = "GID_x"\n{fields}\n'
    with pytest.raises(ScenarioError) as err:
        parse_scenario(text, "s.toml")
    assert f"consumers[1].{where}" in str(err.value)
    assert message in str(err.value)


def test_a_go_consumer_cannot_hang() -> None:
    text = SCENARIO + ('\n[[consumers]]\nname = "g9"\ngroup = "GID_x"\nlanguage = "go"\n'
                       '\n[[events]]\nat_s = 1.0\naction = "join"\ntarget = "g9"\n'
                       '\n[[events]]\nat_s = 2.0\naction = "hang"\ntarget = "g9"\n')
    with pytest.raises(ScenarioError, match="hang needs a Java consumer"):
        parse_scenario(text, "s.toml")
