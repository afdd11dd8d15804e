"""The Go client's producer, live (issue 47, item 2): rocketmq-client-go v2.1.2's default producer
(``live/go``: round robin, ``RetryTimes`` 3, ``SendSync``) beside upstream's Java producer while
broker-a is paused for 20 s (``data/scenarios/live/go-producer-outage.toml``), recorded on lines 4,
5 and 5.5 (``data/live/go-producer-outage-*``) and checked offline here
(``trace.go_agreement``): every Go send is where the Go model puts it, its failures included
(a send whose four attempts all met the paused broker, each waiting out its 3 s timeout), and
every Java send where the Java model puts it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rocketlb_core import data_path
from rocketlb_core.live.record import parse_scenario
from rocketlb_core.sim.scenario import ScenarioError
from tests.test_live_record import SCENARIO
from tests.test_producer_threads import shipped_lines


def _recording(line: str) -> Path:
    return data_path("live", f"go-producer-outage-{line}")


checked = shipped_lines("go-producer-outage")


def test_every_go_send_is_where_the_go_model_puts_it(
        checked: tuple[str, Path, dict[str, Any]]) -> None:
    line, _, result = checked
    gp, java = result["producers"]["gp"], result["producers"]["p-java"]
    assert gp["language"] == "go"
    assert (gp["sends"], gp["agree"], gp["unexplained"]) == (300, 300, 0), (line, gp["others"][:3])
    assert gp["first_attempt"] + gp["retried"] + gp["failed"] == 300
    assert gp["failed"] >= 1, line              # four attempts on the paused broker's queues
    assert java["unexplained"] == 0, line


def test_the_check_fails_under_the_java_retry_rule(
        checked: tuple[str, Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries that skip the broker that failed (Java's rule) do not explain the Go producer's
    failed sends."""
    from rocketlb_core.trace import go_agreement as ga
    from rocketlb_core.trace.agreement import check_recording

    line, trace, _ = checked
    real = ga._outcomes

    def skip_last(queues: Any, counter: int, start: int, tries: int, paused: Any,
                  killed: Any) -> Any:
        out = real(queues, counter, start, tries, paused, killed)
        return [(q, k) for q, k in out if q is not None] or \
            [(queues[(counter + 1 + len(queues) // 2) % len(queues)], 2)]
    monkeypatch.setattr(ga, "_outcomes", skip_last)
    assert check_recording(_recording(line), trace)["producers"]["gp"]["unexplained"] > 0


def test_the_check_fails_with_a_counter_that_starts_elsewhere(
        checked: tuple[str, Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    from rocketlb_core.trace import go_agreement as ga
    from rocketlb_core.trace.agreement import check_recording

    line, trace, _ = checked
    real = ga._outcomes
    monkeypatch.setattr(ga, "_outcomes", lambda queues, counter, *rest:
                        real(queues, counter + 1, *rest))
    assert check_recording(_recording(line), trace)["producers"]["gp"]["unexplained"] > 100


def test_a_java_send_that_ended_within_its_deadline_keeps_its_0_ms_attempts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On 5.3.3 a Java send's first attempt timed out with ``RT: 3001ms`` (a 2,997 ms request
    timeout after 3 ms of its budget), yet the send failed "Send [3] times ... cost [3000]ms":
    the loop found its budget not yet spent and made two 0 ms attempts, each stepping the
    counter. Without reading that from the error (``within_deadline``), the check stops the
    loop there, and every later send of that producer is one queue off."""
    from rocketlb_core.trace import agreement
    from rocketlb_core.trace.agreement import check_recording
    from rocketlb_core.trace.importer import import_recording

    recording = _recording("5")
    import_recording(recording, tmp_path / "trace")
    assert check_recording(recording, tmp_path / "trace")["producers"]["p-java"][
        "unexplained"] == 0
    monkeypatch.setattr(agreement, "_SEND_FAILED", __import__("re").compile(r"(?!)"))
    assert check_recording(recording, tmp_path / "trace")["producers"]["p-java"][
        "unexplained"] > 100


@pytest.mark.parametrize(("fields", "where", "message"), [
    ('language = "rust"', "language", "one of java, go"),
    ('language = "go"\nmode = "oneway"', "mode", "leave it out"),
    ('language = "go"\nthreads = 2', "threads", "leave it out"),
    ('language = "go"\nfault_tolerance = true', "fault_tolerance", "no latency fault"),
])
def test_a_bad_go_producer_field_is_refused(fields: str, where: str, message: str) -> None:
    text = SCENARIO + f'\n[[producers]]\nname = "g9"\ngroup = "PG_x"\ncount = 5\n{fields}\n'
    with pytest.raises(ScenarioError) as err:
        parse_scenario(text, "s.toml")
    assert f"producers[0].{where}" in str(err.value)
    assert message in str(err.value)
