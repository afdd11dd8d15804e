"""Broadcasting groups, live (issue 45): two groups of two members each, one consuming
concurrently and one orderly, the second member of each joining 10 s after the first, while a
producer sends 5 messages a second for 100 s (``data/scenarios/live/broadcasting.toml``),
recorded on lines 4, 5 and 5.5 (``data/live/broadcasting-*``) and checked offline here
(``trace.broadcast_agreement``).

Every member takes every queue (its ``messageQueueChanged`` sets), and starts each queue at its
end when it creates it (it has no offsets of its own): what was stored before that is not its
to read. On 4.9.8 an orderly member also asks the broker for each queue's lock and never renews
it: the second orderly member is refused until the first one's locks are 60 s old, and starts
only then (issue #1286). 5.3.3 and 5.5.0 take no lock. Each check can fail: under another
line's lock rule, with a gap in what a member read, or with a queue read that was never
created, items go unexplained."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketlb_core import data_path
from rocketlb_core.live.record import LiveConsumer, parse_scenario
from rocketlb_core.sim.scenario import ScenarioError
from rocketlb_core.trace.schema import TraceError
from tests.test_fuzz import TRIED
from tests.test_live_record import SCENARIO
from tests.test_producer_modes import HOSTILE
from tests.test_producer_threads import imported_once

LINES = ["4", "5", "5.5"]
MEMBERS = ("b1", "b2", "o1", "o2")


def _recording(line: str) -> Path:
    return data_path("live", f"broadcasting-{line}")


@pytest.fixture(scope="module", params=LINES)
def checked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[str, dict[str, Any]]:
    from rocketlb_core.trace.agreement import check_recording

    trace = imported_once(_recording(request.param), tmp_path_factory)
    return request.param, check_recording(_recording(request.param), trace)


def _ranges(line: str, member: str) -> dict[str, list[int]]:
    path = _recording(line) / "ranges" / f"{member}.json"
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_every_broadcasting_member_is_explained(checked: tuple[str, dict[str, Any]]) -> None:
    """Every member's sets are the route's four readable queues, every queue it created and
    every offset it read agree with the model, and the producer's sends too: nothing
    unexplained on any line. On 4.9.8 the second orderly member is refused (``LOCK_HELD``)
    and starts later than the concurrent member that joined with it, so it misses what was
    stored meanwhile; on 5.x it is never refused (when it starts depends on its first
    rebalance that finds the route, on either listener)."""
    line, result = checked
    assert result["producers"]["p-slow"]["unexplained"] == 0
    for name in MEMBERS:
        c = result["consumers"][name]
        assert c["model"] == "broadcasting", name
        assert c["unexplained"] == 0, (line, name, c["others"][:5])
        assert c["start_agree"] == 4, (line, name)          # each of the four queues read
        assert c["agree"] >= 5, (line, name)                 # a set and four creations
    o2, b2 = result["consumers"]["o2"], result["consumers"]["b2"]
    firsts = {m: min(r[0] for r in _ranges(line, m).values()) for m in ("b2", "o2")}
    if line == "4":
        assert o2["lock_held"] >= 4                          # every queue refused at least once
        assert firsts["o2"] > firsts["b2"] + 50, firsts      # ~60 s later, 5 msg/s over 4 queues
    else:
        assert o2["lock_held"] == 0
        assert b2["lock_held"] == 0


def test_the_check_fails_what_the_model_does_not_say(tmp_path: Path) -> None:
    """Under 5.3.3's rule (no lock) 4.9.8's refusals are unexplained; under 4.9.8's rule the
    5.3.3 orderly member's creations, while the first member's lock was live, are too. A gap in
    what a member read, and a queue it read but never created, are unexplained; a queue
    created after its last message, and not read, is ``NOTHING_AFTER``."""
    from rocketlb_core.model import MessageQueue, QueueData, TopicRoute
    from rocketlb_core.trace.broadcast_agreement import (
        NOTHING_AFTER,
        UNEXPLAINED,
        Member,
        broadcast_agreement,
        check_broadcast,
    )

    four = check_broadcast(_recording("4"), line="5.3.3")["o2"]
    assert four["lock_held"] == 0
    assert four["unexplained"] >= 4
    # an orderly member read from where its first pull put the start, not its rebalance
    early = check_broadcast(_recording("5"), first_pull=False)
    assert early["o1"]["unexplained"] + early["o2"]["unexplained"] >= 2
    assert {c["kind"] for m in ("o1", "o2") for c in early[m]["others"]} == {"read"}
    assert early["b1"]["unexplained"] == early["b2"]["unexplained"] == 0
    five = check_broadcast(_recording("5"), line="4.9.8")["o2"]
    assert five["unexplained"] == 4, five["others"]          # each queue granted too early
    assert {c["kind"] for c in five["others"]} == {"create"}
    # a gap: one offset of one queue not read
    copy = tmp_path / "broadcasting-5"
    shutil.copytree(_recording("5"), copy)
    ranges = _ranges("5", "b1")
    key = sorted(ranges)[0]
    first, last, n = ranges[key]
    ranges[key] = [first, last, n - 1]
    (copy / "ranges" / "b1.json").write_text(json.dumps(ranges), encoding="utf-8")
    got = check_broadcast(copy)["b1"]
    assert got["unexplained"] == 1
    assert got["others"][0]["queue"] == key
    # a queue read but never created; a queue created after its last message
    mq = MessageQueue("T", "broker-a", 0)
    route = TopicRoute((QueueData("broker-a", 1, 1, 6),))
    m = Member("m", False, [(5, frozenset({mq}))], [(5, mq, "added")], [],
               {"broker-a/0": (2, 2, 1)})
    a = broadcast_agreement([m], line="5.3.3", topic="T", route=route,
                            stored={"broker-a/0": [1, 2]})
    assert [c.verdict for c in a.checks if c.kind == "read"] == [UNEXPLAINED]
    m2 = Member("m", False, [(5, frozenset({mq}))], [(5, mq, "added")], [], {})
    a2 = broadcast_agreement([m2], line="5.3.3", topic="T", route=route,
                             stored={"broker-a/0": [1, 2]})
    assert [c.verdict for c in a2.checks if c.kind == "read"] == [NOTHING_AFTER]
    stray = Member("m", False, [], [], [], {"broker-a/0": (0, 1, 2)})
    a3 = broadcast_agreement([stray], line="5.3.3", topic="T", route=route,
                             stored={"broker-a/0": [1, 2]})
    assert [c.verdict for c in a3.checks] == [UNEXPLAINED]
    # a set that is not the route's
    m4 = Member("m", False, [(5, frozenset())], [], [], {})
    a4 = broadcast_agreement([m4], line="5.3.3", topic="T", route=route, stored={})
    assert [c.verdict for c in a4.checks] == [UNEXPLAINED]


@pytest.mark.parametrize(("fields", "where", "message"), [
    ('model = "pop"', "model", "one of clustering, broadcasting, got 'pop'"),
    ('listener = "batch"', "listener", "one of concurrently, orderly, got 'batch'"),
    ('model = 1', "model", "expected text, got 1"),
    ('client = "grpc"\nkind = "push"\nmodel = "broadcasting"', "model",
     "only a remoting consumer has it"),
    ('client = "grpc"\nkind = "simple"\nlistener = "orderly"', "listener",
     "only a remoting consumer has it"),
])
def test_a_bad_broadcasting_consumer_is_refused_naming_the_field(fields: str, where: str,
                                                                 message: str) -> None:
    with pytest.raises(ScenarioError, match=rf"<t>: consumers\[0\]\.{where}: {message}"):
        parse_scenario(SCENARIO + fields + "\n", "<t>")


def test_the_shipped_scenario_reads_its_members() -> None:
    sc = parse_scenario(data_path("scenarios", "live", "broadcasting.toml").read_text(
        encoding="utf-8"), "broadcasting.toml")
    assert sc.consumers == (LiveConsumer("b1", "GID_bc", "b1", model="broadcasting"),
                            LiveConsumer("b2", "GID_bc", "b2", model="broadcasting"),
                            LiveConsumer("o1", "GID_bco", "o1", model="broadcasting",
                                         listener="orderly"),
                            LiveConsumer("o2", "GID_bco", "o2", model="broadcasting",
                                         listener="orderly"))


@pytest.mark.parametrize(("value", "field"), [("pop", "consumers[0].model"),
                                              (1, "consumers[0].model")])
def test_a_recording_with_a_bad_model_is_refused_naming_it(tmp_path: Path, value: object,
                                                           field: str) -> None:
    from rocketlb_core.trace.importer import load_recording

    copy = tmp_path / "r"
    shutil.copytree(_recording("5"), copy)
    meta = json.loads((copy / "recording.json").read_text(encoding="utf-8"))
    meta["consumers"][0]["model"] = value
    (copy / "recording.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(TraceError) as info:
        load_recording(copy)
    assert info.value.field == field


@given(which=st.integers(0, 3), value=st.one_of(HOSTILE, st.just(KeyError)),
       key=st.one_of(st.sampled_from(["broker-a/0", "broker-a/1", "b/x", "/0", "broker-a/70000"]),
                     st.text(max_size=8)))
@settings(max_examples=120, derandomize=True, deadline=None, database=None)
def test_a_hostile_range_is_read_or_refused_naming_it(which: int, value: object,
                                                      key: str) -> None:
    """``ranges/<member>.json`` with one entry replaced (or removed) by anything: read as
    ``[first, last, count]`` within its bounds, or refused naming the file and the queue."""
    import tempfile

    from rocketlb_core.trace.broadcast_agreement import read_ranges

    ranges: dict[str, Any] = dict(_ranges("4", MEMBERS[which]))
    if value is KeyError:
        ranges.pop(key, None)
    else:
        ranges[key] = value
    TRIED["live check: a broadcasting member's ranges"] += 1
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        path = Path(tmp) / "ranges.json"
        path.write_text(json.dumps(ranges), encoding="utf-8")
        got, refused = _attempt(lambda: read_ranges(path))
    if refused is not None:
        TRIED["live check: a broadcasting member's ranges: refused"] += 1
        assert refused.path == str(path)
        assert refused.field
        return
    for k, (first, last, n) in got.items():
        assert 0 <= first <= last
        assert 1 <= n <= last - first + 1
        assert int(k.rpartition("/")[2]) <= 65_535


def _attempt(read: Any) -> tuple[Any, TraceError | None]:
    """``read()``, or the ``TraceError`` it raised (any other error fails the test)."""
    try:
        return read(), None
    except TraceError as exc:
        return None, exc


LOG_LINES = [
    "2026-11-28 14:10:59,101 INFO RocketmqClient - messageQueueChanged G T [MessageQueue "
    "[topic=T, brokerName=broker-a, queueId=0]] [MessageQueue [topic=T, brokerName=broker-a, "
    "queueId=0]]",
    "2026-11-28 14:11:08,360 WARN RocketmqClient - doRebalance, G, add a new mq failed, "
    "MessageQueue [topic=T, brokerName=broker-b, queueId=0], because lock failed",
    "2026-11-28 14:12:08,454 INFO RocketmqClient - doRebalance, G, add a new mq, MessageQueue "
    "[topic=T, brokerName=broker-b, queueId=0]",
    "2026-11-28 22:19:41.761 INFO  [9395] [PullMessageService] [o.a.r.c.i.c.DefaultMQPushConsumer"
    "Impl#?:?] - the first time to pull message, so fix offset from broker. pullRequest: "
    "PullRequest [consumerGroup=G, messageQueue=MessageQueue [topic=T, brokerName=broker-b, "
    "queueId=0], nextOffset=9] NewOffset: 10 brokerBusy: false",
]


@given(which=st.integers(0, 3), cut=st.integers(0, 400),
       insert=st.one_of(st.text(max_size=6), st.sampled_from(["]", "[", ", ", "-1", "99999999999",
                                                               "queueId=", "x" * 300])))
@settings(max_examples=150, derandomize=True, deadline=None, database=None)
def test_a_hostile_queue_line_is_read_or_refused_naming_it(which: int, cut: int,
                                                           insert: str) -> None:
    """A broadcasting set or queue-creation line with text inserted anywhere: read (with its
    fields in their bounds) or refused naming the line; never another error."""
    from rocketlb_core.limits import MAX_QUEUES
    from rocketlb_core.trace.clientlog import FirstPull, QueueSetChanged, parse_queue_line

    text = LOG_LINES[which]
    at = cut % (len(text) + 1)
    mutated = text[:at] + insert + text[at:]
    TRIED["live check: a broadcasting log line"] += 1
    got, refused = _attempt(lambda: parse_queue_line(Path("c.log"), 9, mutated))
    if refused is not None:
        TRIED["live check: a broadcasting log line: refused"] += 1
        assert refused.row == 9
        assert refused.field
        return
    if isinstance(got, QueueSetChanged):
        assert len(got.queues) <= MAX_QUEUES
        assert all(q.topic == got.topic for q in got.queues)
        assert all(q.queue_id >= -1 for q in got.queues)
    elif isinstance(got, FirstPull):
        assert got.queue.queue_id >= -1
    elif got is not None:
        assert got.outcome in ("added", "lock_refused", "failed")


NOT_LATEST = Path(__file__).parent / "fixtures" / "live" / "not-latest-4"
"""A random scenario of soak seed 20261799 (scenario seed 127368869168593, line 4: 4.9.8 clients,
4.9.7 brokers), cut to what the broadcasting check reads: `bc1` (broadcasting, concurrently) read
broker-b's and broker-c's queues without a gap from its start, then nothing more of them: at its
rebalance after broker-b's restart its subscription got a new version, its heartbeat was skipped
(`lock heartBeat, but failed.`), and both brokers refused its pulls with code 25 to the end."""


def test_a_member_stalled_by_an_old_subscription() -> None:
    """Each of those eight queues is ``STALLED_NOT_LATEST``, not unexplained: read from the
    model's start without a gap, short of the end, and refused as not latest after its last
    read; without reading the refusals they are unexplained, and the member that was not
    refused (``bc2``) read every queue to its end."""
    from rocketlb_core.trace.broadcast_agreement import STALLED_NOT_LATEST, check_broadcast
    from rocketlb_core.trace.clientlog import read_not_latest

    got = check_broadcast(NOT_LATEST)
    assert got["bc1"]["unexplained"] == 0
    assert got["bc1"]["stalled_not_latest"] == 8
    assert got["bc2"]["unexplained"] == got["bc2"]["stalled_not_latest"] == 0
    refused = read_not_latest(NOT_LATEST / "logs" / "bc1" / "rocketmq_client.log.gz")
    assert {addr for _, addr in refused} == {"127.0.0.1:20921", "127.0.0.1:20931"}
    blind = check_broadcast(NOT_LATEST, stall=False)["bc1"]
    assert blind["unexplained"] == 8
    assert {c["queue"].split("/")[0] for c in blind["others"]} == {"broker-b", "broker-c"}
    assert STALLED_NOT_LATEST not in {c["verdict"] for c in blind["others"]}


@given(cut=st.integers(0, 200), insert=st.one_of(
    st.text(max_size=6), st.sampled_from(["\n", "CODE: 25", " BROKER: ", "x" * 400, "\r"])))
@settings(max_examples=80, derandomize=True, deadline=None, database=None)
def test_a_hostile_not_latest_line_is_read_or_skipped(cut: int, insert: str) -> None:
    """The code-25 reader over a log whose refusal line has text inserted anywhere: each record
    it keeps has a stamp and an address within bounds; nothing else is raised."""
    import gzip
    import tempfile

    from rocketlb_core.trace.clientlog import MAX_ADDRESS, read_not_latest

    lines = ["2026-11-28 15:39:32,861 WARN RocketmqClient - execute the pull request exception",
             "org.apache.rocketmq.client.exception.MQBrokerException: CODE: 25  DESC: the "
             "consumer's subscription not latest BROKER: 127.0.0.1:20921"]
    at = cut % (len(lines[1]) + 1)
    lines[1] = lines[1][:at] + insert + lines[1][at:]
    TRIED["live check: a code-25 refusal line"] += 1
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        path = Path(tmp) / "rocketmq_client.log.gz"
        path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
        got = read_not_latest(path)
    for stamp, addr in got:
        assert stamp == "2026-11-28 15:39:32,861"
        assert 0 < len(addr) <= MAX_ADDRESS


MIXED = Path(__file__).parent / "fixtures" / "live" / "mixed-listeners-4"
"""CI's random scenario of soak seed 475485046 (scenario seed 123309566245994, line 4), cut to what
the broadcasting check reads: a broadcasting group whose `bc1` consumes concurrently and whose
`bc2`, launched 20 s later, consumes orderly (brokers killed and restarted meanwhile)."""


def test_a_concurrent_member_takes_no_lock() -> None:
    """Only an orderly member (on a line that locks) takes the broker's lock: ``bc2`` created
    the queues ``bc1`` had created 18 s before, and that is no lock granted twice. The rule is
    still held: the same creations by two orderly members are unexplained."""
    from rocketlb_core.model import MessageQueue, QueueData, TopicRoute
    from rocketlb_core.trace.broadcast_agreement import (
        AGREE,
        UNEXPLAINED,
        Member,
        broadcast_agreement,
        check_broadcast,
    )

    got = check_broadcast(MIXED)
    assert got["bc1"]["listener"] == "concurrently"
    assert got["bc2"]["listener"] == "orderly"
    assert got["bc1"]["unexplained"] == got["bc2"]["unexplained"] == 0
    mq = MessageQueue("T", "broker-a", 0)
    route = TopicRoute((QueueData("broker-a", 1, 1, 6),))
    for first_orderly, verdict in ((False, AGREE), (True, UNEXPLAINED)):
        a = Member("a", first_orderly, [], [(0, mq, "added")], [], {})
        b = Member("b", True, [], [(18_000, mq, "added")], [], {})
        checked = broadcast_agreement([a, b], line="4.9.8", topic="T", route=route, stored={})
        assert [c.verdict for c in checked.checks if c.member == "b"
                and c.kind == "create"] == [verdict]


def test_a_queue_dropped_and_created_again_starts_at_its_end_again() -> None:
    """A broadcasting member that dropped a queue (its broker left the route: a kill) and
    created it again when the broker came back starts at the queue's end again; what was stored
    while it did not hold the queue is not its to read (live on 5.3.3, soak scenario
    207695328380917). What was stored while it held the queue is."""
    from rocketlb_core.model import MessageQueue, QueueData, TopicRoute
    from rocketlb_core.trace.broadcast_agreement import (
        NOTHING_AFTER,
        UNEXPLAINED,
        Member,
        broadcast_agreement,
    )

    mq = MessageQueue("T", "broker-a", 0)
    other = MessageQueue("T", "broker-b", 0)
    route = TopicRoute((QueueData("broker-a", 1, 1, 6), QueueData("broker-b", 1, 1, 6)))
    sets = [(5, frozenset({mq, other})), (20, frozenset({other})), (40, frozenset({mq, other}))]
    m = Member("m", False, sets, [(5, mq, "added"), (40, mq, "added")], [], {})
    # stored at 30 and 35, while the member did not hold it: nothing to read
    a = broadcast_agreement([m], line="5.3.3", topic="T", route=route,
                            stored={"broker-a/0": [1, 30, 35]})
    assert [c.verdict for c in a.checks if c.kind == "read"] == [NOTHING_AFTER]
    # stored at 10, while it held it the first time: it should have read it
    b = broadcast_agreement([m], line="5.3.3", topic="T", route=route,
                            stored={"broker-a/0": [1, 10, 30]})
    assert [c.verdict for c in b.checks if c.kind == "read"] == [UNEXPLAINED]
    # stored at 50, after it created it again: it should have read it
    c = broadcast_agreement([m], line="5.3.3", topic="T", route=route,
                            stored={"broker-a/0": [1, 30, 50]})
    assert [x.verdict for x in c.checks if x.kind == "read"] == [UNEXPLAINED]
