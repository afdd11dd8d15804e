"""Issue 32, a random live scenario (seed 118099173311735, line 4: 4.9.8 clients, 4.9.7
servers), ``tests/fixtures/live/pause-kill-4``: two brokers of three queues, two fault-off
producers (p1-off every 80 ms, p2-off every 40 ms), broker-a paused at 15.4 s and killed while
paused at 18.3 s. The check left 415 of p1-off's sends and 2 of p2-off's unexplained; two gaps
of the check's observed brokers (``ObservedBrokers``), each tested here on its own:

* a failed attempt's exception: p1-off's send 296 met ``MQBrokerException: CODE: 2
  [TIMEOUT_CLEAN_QUEUE]broker busy`` at broker-b (RT 239 ms). 4.9.8's ``sendDefaultImpl``
  retries an ``MQBrokerException`` only on a code of ``retryResponseCodes`` (17, 14, 1, 16, 204,
  205; 5.x adds 2 and GO_AWAY) and otherwise throws at once, though the line says ``resend at
  once``: no second select.
  The check made every logged failure a remoting error, so its loop retried, and its counter
  stayed one queue ahead from then on;
* the log line's lateness: p2-off's refused connects to killed broker-a (RT 2 and 39 ms) were
  logged 11 and 28 ms after the attempts began by ``stamp - RT``; the check did not match them
  (10 ms), fell back on the trace's condition of broker-a (``silent`` since the pause: the
  importer keeps a down broker's first mode) and timed the send out.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import pytest

from rocketlb_core.model import MessageQueue, QueueData
from rocketlb_core.producer import (
    AttemptResult,
    MQFaultStrategy,
    Outcome,
    ThreadLocalIndex,
    TopicPublishInfo,
    send,
)
from rocketlb_core.replay.timeline import Conditions
from rocketlb_core.trace.agreement import (
    FAILURE_MATCH_MS,
    LOG_LAG_MS,
    ObservedBrokers,
    check_recording,
)
from rocketlb_core.trace.clientlog import ClientLog, read_client_log
from rocketlb_core.trace.importer import import_recording
from tests.test_live_recordings import assert_sends_explained

RECORDING = Path(__file__).parent / "fixtures" / "live" / "pause-kill-4"


def _client_log(gz: Path) -> ClientLog:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rocketmq_client.log"
        path.write_bytes(gzip.decompress(gz.read_bytes()))
        return read_client_log(path)


def _no_conditions() -> Conditions:
    return Conditions.from_columns({k: [] for k in (
        "time_ms", "broker", "client", "kind", "mode", "median_ms", "p99_ms")})


def _tp() -> TopicPublishInfo:
    qs = [MessageQueue("T", "b", i) for i in range(3)]
    return TopicPublishInfo(qs, [QueueData("b", 3, 3)], ThreadLocalIndex("4.9.8", stored=-1))


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    trace = tmp_path_factory.mktemp("pause-kill") / "trace"
    import_recording(RECORDING, trace)
    return check_recording(RECORDING, trace)


def test_every_send_of_the_recording_is_explained(result: dict[str, object]) -> None:
    assert_sends_explained(result, {"p1-off", "p2-off"}, 700)
    consumers = result["consumers"]
    assert isinstance(consumers, dict)
    assert all(c["unexplained"] == 0 for c in consumers.values())


def test_the_client_log_keeps_a_failures_broker_error_code() -> None:
    """The exception on the line after ``sendKernelImpl exception``: p1-off's one
    ``MQBrokerException`` (code 2, at broker-b) and its refused connects and timeouts (none)."""
    log = _client_log(RECORDING / "logs" / "p1-off" / "rocketmq_client.log.gz")
    coded = [f for f in log.send_failures if f.response_code is not None]
    assert [(f.queue.broker_name, f.rt_ms, f.response_code) for f in coded] == [
        ("broker-b", 239, 2)]
    assert len(log.send_failures) > 10
    # ... and the send failed there, without a retry (the ground truth's error)
    rows = [json.loads(x) for x in gzip.decompress(
        (RECORDING / "sends" / "p1-off.jsonl.gz").read_bytes()).decode().splitlines()]
    assert "TIMEOUT_CLEAN_QUEUE" in rows[296]["error"]
    assert rows[297]["queue"] == (rows[295]["queue"] + 2) % 3       # one select for send 296


@pytest.mark.parametrize(("code", "attempts"), [(2, 1), (None, 2), (1, 2)])
def test_a_logged_broker_error_is_the_attempts_answer(code: int | None, attempts: int) -> None:
    """A logged failure with ``SYSTEM_BUSY`` (2) ends the send at once, one select; a remoting
    error (no code) or ``SYSTEM_ERROR`` (1, a retry code) goes on to the next queue."""
    model = ObservedBrokers(_no_conditions(), {}, failed={"b": [(100, 239, code)]})
    tp = _tp()
    r = send(MQFaultStrategy("4.9.8"), tp, model, now_ms=100)
    assert len(r.attempts) == attempts
    assert r.attempts[0].outcome is (Outcome.REMOTING_ERROR if code is None
                                     else Outcome.BROKER_ERROR)
    assert r.attempts[0].latency_ms == 239
    assert (tp.index.stored == 0) == (attempts == 1)          # the counter: one select
    assert (r.status == "FAILED") == (attempts == 1)


@pytest.mark.parametrize(("late", "matched"), [
    (0, True), (-FAILURE_MATCH_MS, True), (28, True), (FAILURE_MATCH_MS + LOG_LAG_MS, True),
    (-FAILURE_MATCH_MS - 1, False), (FAILURE_MATCH_MS + LOG_LAG_MS + 1, False), (40, False)])
def test_a_failure_logged_late_is_still_the_attempts(late: int, matched: bool) -> None:
    """``stamp - RT`` is never before the attempt began but may be after it (the line is
    written after the attempt ended; live, 28 ms on a loaded host), less than the 40 ms between
    two sends."""
    model = ObservedBrokers(_no_conditions(), {}, failed={"b": [(1000 + late, 2)]})
    assert model.logged_failure("b", 1000) == (1000 + late + 2 if matched else None)
    res = model(MessageQueue("T", "b", 0), 1000, 3000)
    if matched:
        assert res == AttemptResult(Outcome.REMOTING_ERROR, max(0, late + 2))
    else:                                   # not this attempt's: the trace's condition (up)
        assert res.outcome is Outcome.SEND_OK
