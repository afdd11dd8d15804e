"""The real package in the reader's browser: Pyodide from the npm registry and the package's
core, both served from the book's own static folder (``rocketlb_core.viz.assets``), loaded by
``rocketlb-live.js`` in headless Chromium with every non-loopback request blocked. The same
Python source runs in Pyodide and in CPython, and the answers must be equal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from rocketlb_core import data_path
from rocketlb_core.viz.assets import build
from rocketlb_core.viz.loopback import serve
from tests.book import LOAD_TIMEOUT_MS, settle, track_requests

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html data-content_root="./"><head><meta charset="utf-8">
<script src="_static/rocketlb-live.js"></script></head><body><p id="state">idle</p>
<script>rocketlbLive.onState(function (s) { document.getElementById("state").textContent = s; });
</script></body></html>"""

# Every registered strategy on 20 seeded random group shapes (1-32 consumers, 1-4 brokers,
# 1-16 queues per broker, some duplicate ids), plus every line's selection and send loop
# against a broker down cleanly (refused: retries) and silently (timeouts).
ALLOCATIONS = """
import json, random
from rocketlb_core.consumer.base import assign_all, rebalance_view
from rocketlb_core.consumer.registry import REGISTRY, example
from rocketlb_core.model import MessageQueue
rng = random.Random(20261123)
out = []
for shape in range(20):
    brokers, per, consumers = rng.randint(1, 4), rng.randint(1, 16), rng.randint(1, 32)
    queues = [MessageQueue("T", f"room{b % 2}@broker-{b}", i)
              for b in range(brokers) for i in range(per)]
    ids = [f"room{rng.randint(0, 1)}@10.0.0.{rng.randint(1, 40)}@c" for _ in range(consumers)]
    mq_all, cid_all = rebalance_view(queues, ids)
    for name in REGISTRY:
        a = assign_all(example(name), "g", mq_all, cid_all)
        out.append([shape, name, {c: [q.short() for q in qs] for c, qs in sorted(a.items())}])
json.dumps(out, sort_keys=True)
"""

SENDS = """
import json, random
from rocketlb_core.model import MessageQueue, QueueData, TopicRoute, BrokerData
from rocketlb_core.producer import MQFaultStrategy, ProducerLine, TopicPublishInfo, send
from rocketlb_core.producer.models import down
out = []
route = TopicRoute((QueueData("broker-a", 4, 4), QueueData("broker-b", 4, 4),
                    QueueData("broker-c", 2, 2)),
                   tuple(BrokerData(b, {0: f"10.0.0.{i}:10911"}) for i, b in
                         enumerate(("broker-a", "broker-b", "broker-c"))))
for line in ProducerLine:
    for fault in (False, True):
        for mode in ("clean", "silent"):
            strategy = MQFaultStrategy(line, send_latency_fault_enable=fault)
            tp = TopicPublishInfo.from_route("T", route, line, index_start=7,
                                             rng=random.Random(7))
            broker = down("broker-b", mode=mode)
            now = 0
            for k in range(60):
                r = send(strategy, tp, broker, now)
                out.append([line.value, fault, mode, k, r.status,
                            [a.queue.short() for a in r.attempts], r.end_ms])
                now = r.end_ms + 50
json.dumps(out)
"""


def _scenario_code() -> str:
    toml = data_path("scenarios", "crash-without-unregister.toml").read_text()
    return f"""
import json, pathlib
from rocketlb_core.sim.scenario import load
from rocketlb_core.sim.world import run_scenario
path = pathlib.Path("/tmp/scenario.toml")
path.write_text({toml!r})
summary = run_scenario(load(path), 0).summary
summary.pop("scenario_path", None)
json.dumps(summary, sort_keys=True)
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("live")
    build(folder / "_static", root / "node_modules")
    (folder / "index.html").write_text(PAGE)
    with serve(folder) as url:
        yield url + "index.html"


@pytest.fixture(scope="module")
def page(site: str, browser) -> Iterator[tuple[object, list[str], list[str]]]:
    external: list[str] = []
    fetched: list[str] = []

    def route(r) -> None:  # type: ignore[no-untyped-def]
        url = r.request.url
        if url.startswith(("data:", "blob:")) or urlparse(url).hostname == "127.0.0.1":
            fetched.append(url)
            r.continue_()
        else:
            external.append(url)
            r.abort()

    pg = browser.new_page()
    pg.route("**/*", route)
    pending = track_requests(pg)
    pg.goto(site, wait_until="load", timeout=LOAD_TIMEOUT_MS)
    settle(pg, pending)
    yield pg, external, fetched
    pg.close()


def _in_browser(page: object, code: str) -> str:
    value = page.evaluate("code => rocketlbLive.run(code)", code)  # type: ignore[attr-defined]
    assert isinstance(value, str)
    return value


def _in_cpython(code: str) -> str:
    scope: dict[str, object] = {}
    lines = code.strip().splitlines()
    exec("\n".join(lines[:-1]), scope)                     # the same source, in CPython
    return str(eval(lines[-1], scope))


def test_nothing_is_downloaded_until_the_model_is_asked_for(page) -> None:
    pg, external, fetched = page
    assert not pg.evaluate("rocketlbLive.loaded()")
    assert pg.text_content("#state") == "idle"
    assert not [u for u in fetched if "pyodide" in u or "rocketlb-core.zip" in u]
    assert external == []


def test_every_strategy_allocates_in_the_browser_as_in_cpython(page) -> None:
    pg, external, fetched = page
    got = _in_browser(pg, ALLOCATIONS)
    assert pg.text_content("#state") == "model ready"
    assert json.loads(got) == json.loads(_in_cpython(ALLOCATIONS))
    assert len(json.loads(got)) >= 20 * 8
    assert any(u.endswith("pyodide.asm.wasm") for u in fetched)
    assert external == []


def test_every_line_sends_in_the_browser_as_in_cpython(page) -> None:
    pg, external, _ = page
    got = json.loads(_in_browser(pg, SENDS))
    assert got == json.loads(_in_cpython(SENDS))
    from rocketlb_core.producer.line import ProducerLine

    assert {row[0] for row in got} == {line.value for line in ProducerLine}   # 4.7.1 ... 5.5.0
    assert any(len(row[5]) > 1 for row in got)           # a refused connection: a retry
    assert any(row[4] == "FAILED" for row in got)        # a silent broker: the budget is spent
    assert external == []


def test_a_scenario_runs_in_the_browser_as_in_cpython(page) -> None:
    pg, external, _ = page
    code = _scenario_code()
    got = json.loads(_in_browser(pg, code))
    assert got == json.loads(_in_cpython(code))
    assert got["messages_sent"] > 0
    assert external == []


def test_the_model_is_restored_from_the_build_s_snapshot(page) -> None:
    # The page restores Pyodide's memory as the build left it (assets.memory_snapshot): the
    # figures' module is imported already, and modules the snapshot never imported (the
    # simulator above) still come from the core's zip, unpacked after the restore.
    pg, external, fetched = page
    _in_browser(pg, "'ready'")
    timings = pg.evaluate("rocketlbLive.timings")
    assert timings["snapshot"] is True, timings.get("snapshotError")
    assert any(u.endswith("rocketlb-snapshot.bin.gz") for u in fetched)
    got = _in_browser(pg, "import sys, js\n"
                          "str(['rocketlb_core.interactive' in sys.modules, js.document.title"
                          " == '', js.location.hostname])")
    assert got == "[True, True, '127.0.0.1']"              # the page's window, not Node's
    assert timings["start"] <= timings["runtime"] <= timings["core"] <= timings["import"]
    assert external == []


def test_without_the_snapshot_the_model_starts_plainly(
        tmp_path: Path, root: Path, browser) -> None:
    from rocketlb_core.viz.assets import SNAPSHOT

    build(tmp_path / "_static", root / "node_modules")
    (tmp_path / "_static" / "pyodide" / SNAPSHOT).unlink()     # a host that lost the file
    (tmp_path / "index.html").write_text(PAGE)
    with serve(tmp_path) as url:
        pg = browser.new_page()
        uncaught: list[str] = []
        pg.on("pageerror", lambda e: uncaught.append(str(e)))
        try:
            pg.goto(url + "index.html", wait_until="load", timeout=LOAD_TIMEOUT_MS)
            got = _in_browser(pg, ALLOCATIONS)
            timings = pg.evaluate("rocketlbLive.timings")
        finally:
            pg.close()
    assert uncaught == []                   # the missing snapshot is answered, not thrown
    assert timings["snapshot"] is False
    assert "404" in timings["snapshotError"]
    assert json.loads(got) == json.loads(_in_cpython(ALLOCATIONS))


def test_a_reader_who_saves_data_downloads_no_snapshot(site: str, browser) -> None:
    # The snapshot trades download for start-up work: a browser that asks to save data (or
    # reports a 2G/3G link) gets the plain start and never fetches the snapshot.
    pg = browser.new_page()
    fetched: list[str] = []
    pg.on("request", lambda r: fetched.append(r.url))
    pg.add_init_script("Object.defineProperty(navigator, 'connection', "
                       "{value: {saveData: true, effectiveType: '4g'}})")
    try:
        pg.goto(site, wait_until="load", timeout=LOAD_TIMEOUT_MS)
        got = _in_browser(pg, ALLOCATIONS)
        timings = pg.evaluate("rocketlbLive.timings")
    finally:
        pg.close()
    assert timings["snapshot"] is False
    assert "slow or data-saving" in timings["snapshotError"]
    assert not [u for u in fetched if u.endswith("rocketlb-snapshot.bin.gz")]
    assert any(u.endswith("pyodide.asm.wasm") for u in fetched)
    assert json.loads(got) == json.loads(_in_cpython(ALLOCATIONS))
