"""Hostile inputs at the value level: a number written any way but plain ASCII digits is refused
by every text reader (issue 44, item 1), with an error naming the file, row and field.

Python reads ``int("1_0")`` as 10, ``int("+4")``, ``int(" 4")``, ``int("٤")`` and ``int("４")`` as
4, and TOML reads ``1_0``, ``+4`` and ``0x4`` as numbers. Each reader below goes through
``rocketlb_core.numbers``; the property writes a number in each hostile way into a real input
(a shipped trace's layout, a shipped scenario, a real client log line, a real message-trace
record, a command-line option) and checks it is refused, and that the same number written
plainly is read as that number (so the template itself is valid and the test can fail).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketlb_core import data_path, numbers
from rocketlb_core.errors import InputError
from rocketlb_core.live.record import parse_scenario
from rocketlb_core.sim import scenario as sim_scenario
from rocketlb_core.trace import clientlog, msgtrace
from rocketlb_core.trace.cluster import load_cluster
from rocketlb_core.trace.schema import TraceError
from tests import helpers
from tests.test_fuzz import TRIED

CASES = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))
DIGITS = {
    "arabic-indic": "٠١٢٣٤٥٦٧٨٩",
    "full-width": "０１２３４５６７８９",
    "devanagari": "०१२३४५६७८९",
}


def hostile(n: int, how: str) -> str:
    """``n`` (>= 10) written the way ``how`` says, never as plain ASCII digits."""
    text = str(n)
    if how in DIGITS:
        return text.translate(str.maketrans("0123456789", DIGITS[how]))
    return {
        "underscore": text[0] + "_" + text[1:],
        "plus": "+" + text,
        "space-before": " " + text,
        "space-after": text + " ",
        "hex": hex(n),
        "point": text + ".0",
        "exponent": text + "e0",
    }[how]


HOW = ["underscore", "plus", "space-before", "space-after", "hex", "point", "exponent", *DIGITS]
TOML_HOW = ["underscore", "plus", "hex", *DIGITS]      # what TOML's grammar could read as a number
NUMBERS = st.integers(min_value=10, max_value=999)


# ---------------------------------------------------------------- the reader itself

@given(n=st.integers(min_value=-(10**12), max_value=10**12))
@CASES
def test_plain_digits_read_as_python_reads_them(n: int) -> None:
    assert numbers.parse_int(str(n), -(10**12), 10**12) == n
    assert numbers.parse_float(str(n), -1e12, 1e12) == float(n)


@given(n=NUMBERS, how=st.sampled_from(HOW))
@CASES
def test_every_other_writing_is_refused(n: int, how: str) -> None:
    text = hostile(n, how)
    with pytest.raises(numbers.NumberError):
        numbers.parse_int(text, 0, 10**6)
    if how not in ("point", "exponent"):
        with pytest.raises(numbers.NumberError):
            numbers.parse_float(text, 0, 1e6)


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e999", "NaN", "Infinity"])
def test_no_float_that_is_not_finite(text: str) -> None:
    with pytest.raises(numbers.NumberError):
        numbers.parse_float(text, -1e308, 1e308)


def test_a_size_outside_its_int32_is_refused() -> None:
    with pytest.raises(numbers.NumberError, match="outside 0 to 2147483647"):
        numbers.parse_int(str(2**31), 0, numbers.INT32_MAX)


# ---------------------------------------------------------------- trace layouts (CSV)

def _layout(tmp: Path) -> Path:
    folder = tmp / "layout"
    folder.mkdir(exist_ok=True)
    for name in ("brokers.csv", "route.csv"):
        shutil.copy(data_path("traces", "seed002-outage", name), folder / name)
    return folder


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize(("file", "field", "index", "plain"), [
    ("route.csv", "write_queue_nums", 3, 10),
    ("route.csv", "read_queue_nums", 2, 16),
    ("route.csv", "perm", 4, None),
    ("brokers.csv", "broker_id", 2, 12),
])
def test_layout_cells(tmp_path: Path, file: str, field: str, index: int, plain: int | None,
                      how: str) -> None:
    folder = _layout(tmp_path)
    path = folder / file
    lines = path.read_text(encoding="utf-8").splitlines()
    cells = lines[2].split(",")
    value = plain if plain is not None else 6
    if plain is not None:       # the plain writing is read (the template is valid)
        cells[index] = str(plain)
        path.write_text("\n".join([*lines[:2], ",".join(cells)]) + "\n", encoding="utf-8")
        load_cluster(folder)
    cells[index] = hostile(max(value, 10), how) if field != "perm" else hostile(16, how)
    if "," in cells[index]:
        pytest.skip("not a CSV cell")
    path.write_text("\n".join([*lines[:2], ",".join(cells)]) + "\n", encoding="utf-8")
    with pytest.raises(TraceError) as info:
        load_cluster(folder)
    TRIED["numbers: layout cells"] += 1
    assert (Path(info.value.path).name, info.value.row, info.value.field) == (file, 3, field)


# ---------------------------------------------------------------- scenarios (TOML)

@given(n=NUMBERS, how=st.sampled_from(TOML_HOW))
@CASES
def test_simulator_scenario_numbers(n: int, how: str) -> None:
    text = data_path("scenarios", "steady-state.toml").read_text(encoding="utf-8")
    assert "duration_ms = 120_000" in text
    plain = sim_scenario.loads(text.replace("duration_ms = 120_000", f"duration_ms = {n}000"),
                               "s.toml")
    assert plain.duration_ms == n * 1000
    bad = text.replace("duration_ms = 120_000", f"duration_ms = {hostile(n, how)}000")
    TRIED["numbers: scenario TOML"] += 1
    with pytest.raises(InputError, match=r"s\.toml"):
        sim_scenario.loads(bad, "s.toml")


@given(n=NUMBERS, how=st.sampled_from(TOML_HOW))
@CASES
def test_live_scenario_numbers(n: int, how: str) -> None:
    text = data_path("live", "producer-outage-5", "scenario.toml").read_text(encoding="utf-8")
    assert "count = 1000\n" in text
    assert parse_scenario(text.replace("count = 1000\n", f"count = {n}\n", 1),
                          "l.toml").producers[0].count == n
    TRIED["numbers: live scenario TOML"] += 1
    with pytest.raises(InputError, match=r"l\.toml"):
        parse_scenario(text.replace("count = 1000\n", f"count = {hostile(n, how)}\n", 1),
                       "l.toml")


# ---------------------------------------------------------------- what a real cluster writes

REBALANCE = ("2026-11-24 09:44:06.696 INFO  [3495] [RebalanceService] [o.a.r.c.i.c.RebalanceImpl"
             "#?:?] - client rebalanced result changed. allocateMessageQueueStrategyName=AVG, "
             "group=GID_live, topic=TopicLive, clientId=127.0.0.1@c1, mqAllSize={all}, "
             "cidAllSize=1, rebalanceResultSize=1, rebalanceResultSet=[MessageQueue "
             "[topic=TopicLive, brokerName=broker-b, queueId={q}]]")


@given(n=NUMBERS, how=st.sampled_from(HOW), field=st.sampled_from(["mqAllSize", "queueId"]))
@CASES
def test_client_log_numbers(n: int, how: str, field: str) -> None:
    path = Path("rocketmq_client.log")
    plain = clientlog.parse_line(path, 7, REBALANCE.format(all=n, q=n))
    assert plain is not None
    assert plain.mq_all_size == n
    assert [q.queue_id for q in plain.result] == [n]
    line = REBALANCE.format(all=hostile(n, how) if field == "mqAllSize" else n,
                            q=hostile(n, how) if field == "queueId" else n)
    TRIED["numbers: client log"] += 1
    try:
        parsed = clientlog.parse_line(path, 7, line)
    except TraceError as exc:
        row = exc.row
    else:   # a line not taken as a rebalance at all is not read as one with n in it
        row = None
        assert parsed is None or n not in (parsed.mq_all_size,
                                           *[q.queue_id for q in parsed.result])
    assert row in (7, None)


PUB = ("Pub\x011795484340031\x01DefaultRegion\x01PG_on\x01TopicLive\x01"
       "7F0000017AD560E53B9376CCE73B0000\x01rocketlb\x01null\x01127.0.0.1:10911\x01{size}\x01"
       "{cost}\x010\x017F00000100002A9F0000000000000000\x01true\x02")


@given(n=NUMBERS, how=st.sampled_from(HOW), field=st.sampled_from(["bodyLength", "costTime"]))
@CASES
def test_message_trace_numbers(tmp_path_factory: pytest.TempPathFactory, n: int, how: str,
                               field: str) -> None:
    import gzip
    import json

    folder = tmp_path_factory.mktemp("msgtrace")

    def dump(body: str) -> Path:
        path = folder / "msgtrace.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(json.dumps({"broker": "broker-b", "queue": 0, "offset": 0,
                                 "store_ms": 1795484340702, "body": body}) + "\n")
        return path

    plain = msgtrace.read_msgtrace(dump(PUB.format(size=n, cost=n)))
    assert [(p.body_length, p.cost_ms) for p in plain.pubs] == [(n, n)]
    bad = PUB.format(size=hostile(n, how) if field == "bodyLength" else n,
                     cost=hostile(n, how) if field == "costTime" else n)
    TRIED["numbers: message trace"] += 1
    with pytest.raises(TraceError) as info:
        msgtrace.read_msgtrace(dump(bad))
    assert info.value.field == f"Pub.{field}"


# ---------------------------------------------------------------- command-line options

@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("argv", [
    ["simulate", "data/scenarios/steady-state.toml", "--seed", "{}"],
    ["trace", "generate", "--sends", "{}", "--out", "/nonexistent/never-written"],
    ["trace", "import", "--recording", "data/live/producer-outage-5", "--log-utc-offset", "{}",
     "--out", "/nonexistent/never-written"],
])
def test_command_line_numbers(argv: list[str], how: str) -> None:
    args = [a.format(hostile(60, how)) if a == "{}" else a for a in argv]
    status, _, err = helpers.run_command(args, seconds=60)
    TRIED["numbers: options"] += 1
    assert status == 2, err
    option = argv[argv.index("{}") - 1]
    assert f"argument {option}" in err, err
    assert "ASCII digits" in err, err


@pytest.mark.parametrize("how", HOW)
def test_live_generate_seed(how: str) -> None:
    from rocketlb_core.live.__main__ import main

    with pytest.raises(SystemExit) as info:
        main(["generate", "--seed", hostile(60, how)])
    assert info.value.code == 2


# ---------------------------------------------------------------- the doctor's inputs

@given(n=NUMBERS, how=st.sampled_from([h for h in HOW if not h.startswith("space")]),
       column=st.sampled_from([3, 4]))
@CASES
def test_doctor_progress_numbers(tmp_path_factory: pytest.TempPathFactory, n: int, how: str,
                                 column: int) -> None:
    """A consumerProgress row's broker or consumer offset written other than in ASCII digits:
    the doctor refuses it by file and line (exit 2), never reads it as ``n``."""
    sample = data_path("live", "doctor", "capture-4", "consumerProgress-s-GID_clean.txt")
    lines = sample.read_text(encoding="utf-8").splitlines()
    row = next(i for i, ln in enumerate(lines) if ln.startswith("TopicDoc"))
    cells = lines[row].split()
    cells[column] = hostile(n, how)
    folder = tmp_path_factory.mktemp("progress")
    lines[row] = "  ".join(cells)
    path = folder / "consumerProgress-s-GID_clean.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, _, err = helpers.run_command(["doctor", str(folder)], seconds=60)
    TRIED["numbers: doctor inputs"] += 1
    assert status == 2, err
    assert f"{path.name}" in err, err
    assert f"row {row + 1}" in err, err


# ---------------------------------------------------------------- ranges between fields

def test_a_p99_below_its_median_is_refused(tmp_path: Path) -> None:
    """A latency's p99 is at least its median: a trace row or a scenario that says otherwise
    is refused by field (it was read as no spread at all)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rocketlb_core.trace.read import validate_trace

    trace = tmp_path / "t"
    shutil.copytree(data_path("traces", "slow-broker"), trace)
    rows = pq.read_table(trace / "conditions.parquet").to_pylist()
    rows[2]["median_ms"], rows[2]["p99_ms"] = 700.0, 70.0
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(trace / "conditions.parquet")),
                   trace / "conditions.parquet")
    with pytest.raises(TraceError) as info:
        validate_trace(trace)
    assert (info.value.row, info.value.field) == (3, "p99_ms")
    text = data_path("scenarios", "slow-broker-fault-on.toml").read_text(encoding="utf-8")
    assert "p99_ms" in text
    import re

    bad = re.sub(r"p99_ms = [0-9_.]+", "p99_ms = 1", text, count=1)
    with pytest.raises(InputError, match="p99_ms"):
        sim_scenario.loads(bad, "s.toml")


def test_a_producer_stopping_before_it_starts_is_refused() -> None:
    text = data_path("scenarios", "steady-state.toml").read_text(encoding="utf-8")
    assert "rate_per_s = 200\n" in text
    ok = text.replace("rate_per_s = 200\n", "rate_per_s = 200\nstart_ms = 1000\nstop_ms = 5000\n",
                      1)
    assert sim_scenario.loads(ok, "s.toml").producers[0].stop_ms == 5000
    bad = text.replace("rate_per_s = 200\n", "rate_per_s = 200\nstart_ms = 5000\nstop_ms = 1000\n",
                       1)
    with pytest.raises(InputError, match=r"stop_ms: 1000 is before start_ms 5000"):
        sim_scenario.loads(bad, "s.toml")
