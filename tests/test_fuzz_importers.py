"""Hostile inputs found by machine, for the importers (``rocketlb trace import``): what a real
cluster writes (recording.json, the message-trace dump, client and broker logs), mutated at the
level of bytes, of gzip, of lines and of single fields, then imported.

The oracle (``tests/test_fuzz.py``'s, with the validator's eye): exit 0 and a trace that
``rocketlb trace validate --rows`` accepts, or exit 2 with one line that names a file of the
recording; nothing half-written beside ``--out``; the recording itself unchanged. Each case runs
under an alarm in this process, whose memory the module's fixture bounds (``test_fuzz``); the
cases tried are counted in the run's summary. More cases on demand:
``ROCKETLB_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest tests/test_fuzz_importers.py``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketlb_core import data_path
from tests.helpers import digest
from tests.test_fuzz import (  # noqa: F401  (the module's memory bound is a fixture)
    EXAMPLES,
    HOSTILE_INTS,
    HOSTILE_TEXT,
    TRIED,
    _memory_stays_bounded,
    run_command,
)

FUZZ = settings(max_examples=max(20, EXAMPLES // 5), derandomize=True, deadline=None,
                database=None, suppress_health_check=list(HealthCheck))
RECORDINGS = ("producer-outage-4", "producer-outage-5", "membership-day-4", "membership-day-5",
              "slave-statuses-4", "async-back-pressure-5")
HOSTILE_FIELD_TEXT = [*HOSTILE_TEXT, "\x1b[2J\x07", "-1", "1e30", "1" + "0" * 25, "2026-13-45",
                      "1970-01-01 00:00:00,000", "null", "true", "0", "\u202eevil", "a\x01b\x02c"]
_TOKEN = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d{3}|-?\d+|[A-Za-z_][\w.@:-]*")


def _hostile(rng: Any) -> Any:
    return rng.choice([*HOSTILE_INTS, *HOSTILE_FIELD_TEXT, None, [], {}, 1.5, True])


def _mutate_json(rng: Any, value: Any, depth: int = 0) -> Any:
    """``value`` with one hostile change somewhere inside it."""
    if isinstance(value, dict) and value and depth < 4:
        key = rng.choice(sorted(value))
        out = dict(value)
        if rng.random() < 0.2:
            del out[key]
        else:
            out[key] = _mutate_json(rng, value[key], depth + 1)
        return out
    if isinstance(value, list) and value and depth < 4:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        if rng.random() < 0.2:
            del out_list[i]
        else:
            out_list[i] = _mutate_json(rng, out_list[i], depth + 1)
        return out_list
    return _hostile(rng)


def _mutate_text(rng: Any, text: str, kind: str) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text + "x"
    at = rng.randrange(len(lines))
    line = lines[at]
    if kind == "field":
        tokens = list(_TOKEN.finditer(line))
        if tokens:
            m = rng.choice(tokens)
            value = str(rng.choice([*HOSTILE_INTS, *HOSTILE_FIELD_TEXT]))
            line = line[:m.start()] + value + line[m.end():]
    elif kind == "json-field":
        try:
            row = json.loads(line)
            body = str(row.get("body", ""))
            parts = body.split("\x01")
            i = rng.randrange(len(parts))
            parts[i] = str(rng.choice([*HOSTILE_INTS, *HOSTILE_FIELD_TEXT]))
            row["body"] = "\x01".join(parts)
            line = json.dumps(row) + "\n"
        except (ValueError, AttributeError):
            line = "{" + line
    elif kind == "bytes":
        cut = rng.randrange(len(line) + 1)
        line = line[:cut] + "".join(chr(rng.randrange(0, 0x250)) for _ in range(8)) + line[cut:]
    elif kind == "truncate":
        return "".join(lines[:at]) + line[: rng.randrange(len(line) + 1)]
    elif kind == "duplicate":
        return "".join([*lines[:at + 1], line, *lines[at + 1:]])
    elif kind == "reorder":
        rng.shuffle(lines)
        return "".join(lines)
    return "".join([*lines[:at], line, *lines[at + 1:]])


def _files(rec: Path) -> list[Path]:
    return [rec / "recording.json", rec / "msgtrace.jsonl.gz",
            *sorted((rec / "logs").glob("*/*.log.gz"))]


def _mutate_file(rng: Any, path: Path, kind: str) -> None:
    if kind in ("field", "json-field", "bytes", "truncate", "duplicate", "reorder"):
        if path.name == "recording.json":
            meta = json.loads(path.read_text())
            path.write_text(json.dumps(_mutate_json(rng, meta)) if kind == "field"
                            else _mutate_text(rng, path.read_text(), kind))
            return
        text = gzip.decompress(path.read_bytes()).decode("utf-8", "surrogatepass")
        new = _mutate_text(rng, text, kind)
        path.write_bytes(gzip.compress(new.encode("utf-8", "surrogatepass")))
    elif kind == "gz-truncate":
        data = path.read_bytes()
        path.write_bytes(data[: rng.randrange(len(data) + 1)])
    elif kind == "gz-flip":
        buf = bytearray(path.read_bytes())
        for _ in range(rng.randrange(1, 5)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(buf))
    elif kind == "plain":                      # not gzip at all, under a .gz name
        path.write_bytes(gzip.decompress(path.read_bytes()) if path.suffix == ".gz"
                         else b"\x1f\x8b" + path.read_bytes())
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "delete":
        path.unlink()
    elif kind == "folder":
        path.unlink()
        path.mkdir()
    elif kind == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif kind == "link":
        path.unlink()
        path.symlink_to(rng.choice(["/dev/zero", "/dev/urandom", "/etc/passwd", str(path)]))


KINDS = ["field", "field", "field", "json-field", "bytes", "truncate", "duplicate", "reorder",
         "gz-truncate", "gz-flip", "plain", "empty", "delete", "folder", "fifo", "link"]


def check_import(family: str, status: int, stdout: str, stderr: str, rec: Path,
                 out: Path) -> None:
    TRIED[family] += 1
    assert "Traceback" not in stderr, stderr[-3000:]
    assert status in (0, 2), f"status {status}: {stderr[-3000:]}"
    assert "\x1b" not in stderr
    assert "\x07" not in stderr
    if status == 2:
        TRIED[f"{family}: refused"] += 1
        assert stderr.startswith("error: "), stderr[:500]
        assert len(stderr.strip().splitlines()) == 1, stderr[:2000]
        assert str(rec) in stderr or str(out) in stderr, stderr[:500]
        assert stdout == ""
        assert not out.exists()
    else:
        s, _, err = run_command(["trace", "validate", "--rows", str(out)])
        assert s == 0, f"an import wrote a trace validate --rows refuses: {err}"
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}")]


def _import_and_check(family: str, rec: Path, out: Path, skip_bad: bool) -> None:
    """``trace import --recording rec --out out`` held to the oracle, and ``rec`` unchanged."""
    before = digest(rec)
    argv = ["trace", "import", "--recording", str(rec), "--out", str(out)]
    status, stdout, stderr = run_command(argv + (["--skip-bad"] if skip_bad else []))
    check_import(family, status, stdout, stderr, rec, out)
    assert digest(rec) == before, "the import changed its input"


@FUZZ
@given(name=st.sampled_from(RECORDINGS), rng=st.randoms(use_true_random=False),
       kind=st.sampled_from(KINDS), which=st.integers(0, 1000), skip_bad=st.booleans())
def test_mutated_recordings(name: str, rng: Any, kind: str, which: int,
                            skip_bad: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        rec = Path(tmp) / "rec"
        shutil.copytree(data_path("live", name), rec)
        files = _files(rec)
        _mutate_file(rng, files[which % len(files)], kind)
        _import_and_check("importer: recording", rec, Path(tmp) / "out", skip_bad)


@FUZZ
@given(name=st.sampled_from(RECORDINGS), rng=st.randoms(use_true_random=False),
       kinds=st.lists(st.sampled_from(["field", "json-field", "bytes", "duplicate"]),
                      min_size=1, max_size=6))
def test_many_hostile_fields_in_the_msgtrace_form(name: str, rng: Any, kinds: list[str]) -> None:
    """``--msgtrace`` with ``--client-log``/``--broker-log`` given one by one, and a layout
    folder: several hostile fields at once, in any of the files."""
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        rec = Path(tmp) / "rec"
        shutil.copytree(data_path("live", name), rec)
        files = _files(rec)[1:]
        for kind in kinds:
            _mutate_file(rng, rng.choice(files), kind)
        meta = json.loads((rec / "recording.json").read_text())
        layout = rec / "layout"
        layout.mkdir()
        (layout / "brokers.csv").write_text(
            "cluster,broker_name,broker_id,address,room\n"
            + "".join(f"c,{b['name']},0,{b['address']},r\n" for b in meta["brokers"]))
        (layout / "route.csv").write_text(
            "topic,broker_name,read_queue_nums,write_queue_nums,perm\n" + "".join(
                f"{meta['topic']},{q['broker_name']},{q['read_queue_nums']},"
                f"{q['write_queue_nums']},{q['perm']}\n" for q in meta["route"]))
        argv = ["trace", "import", "--msgtrace", str(rec / "msgtrace.jsonl.gz"), "--topic",
                meta["topic"], "--line", meta["client_version"], "--layout", str(layout)]
        for log in files[1:]:
            flag = "--broker-log" if log.parent.name.startswith("broker-") else "--client-log"
            if flag == "--client-log" or log.name == "broker.log.gz":
                argv += [flag, str(log)]
        before = digest(rec)
        out = Path(tmp) / "out"
        status, stdout, stderr = run_command([*argv, "--out", str(out)])
        check_import("importer: msgtrace and logs", status, stdout, stderr, rec, out)
        assert digest(rec) == before, "the import changed its input"


@FUZZ
@given(name=st.sampled_from(("membership-day-4", "membership-day-5")),
       rng=st.randoms(use_true_random=False), lines=st.integers(1, 6), skip_bad=st.booleans())
def test_hostile_idle_lines_beside_a_broker_log(name: str, rng: Any, lines: int,
                                               skip_bad: bool) -> None:
    """Issue 45: a broker's ``remoting.log`` now decides whether a ``remove not active channel``
    was a kill or the idle close of a vanished host (``trace.brokerlog``). IDLE lines with the
    address and second of a real close (so a kill becomes a crash 120 s earlier, possibly
    before its join), or hostile stamps and addresses, appended to a broker's remoting log:
    the import still exits 0 with a valid trace or 2 with one line naming the recording."""
    with tempfile.TemporaryDirectory(prefix="rocketlb-fuzz-") as tmp:
        rec = Path(tmp) / "rec"
        shutil.copytree(data_path("live", name), rec)
        broker = rng.choice(sorted((rec / "logs").glob("broker-*")))
        log = gzip.decompress((broker / "broker.log.gz").read_bytes()).decode("utf-8")
        closes = re.findall(r"^(\S+ \S+) .*remove not active channel\[.*? R:/([^\]\s]+)\]",
                            log, re.M)
        extra = []
        for _ in range(lines):
            stamp, addr = rng.choice(closes) if closes else ("2026-11-24 09:44:58",
                                                             "127.0.0.1:1")
            if rng.random() < 0.5:
                stamp = rng.choice([stamp, *HOSTILE_FIELD_TEXT])
            if rng.random() < 0.5:
                addr = rng.choice([addr, *HOSTILE_FIELD_TEXT, "/" + addr, "x" * 300])
            extra.append(f"{stamp} WARN NettyServerCodecThread_2 - NETTY SERVER PIPELINE: "
                         f"IDLE exception [{addr}]\n")
        remoting = broker / "remoting.log.gz"
        old = gzip.decompress(remoting.read_bytes()).decode("utf-8") if remoting.exists() else ""
        remoting.write_bytes(gzip.compress((old + "".join(extra)).encode("utf-8",
                                                                         "surrogatepass")))
        _import_and_check("importer: idle lines", rec, Path(tmp) / "out", skip_bad)
