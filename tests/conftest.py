"""Shared fixtures. Tests use the real parts: a real SparkSession, real kernels, real Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the whole run, made by the package's helper."""
    from rocketlb_core import spark_session

    session = spark_session("local[2]")
    yield session
    session.stop()


LIVE_FIXTURES = ROOT / "tests" / "fixtures" / "live"


@pytest.fixture
def check_live(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Import a live recording (a name under ``tests/fixtures/live/``, or a folder) into
    ``tmp_path / "trace"`` and check the model against it (``trace.agreement``); returns
    ``check_recording``'s result."""
    from rocketlb_core.trace.agreement import check_recording
    from rocketlb_core.trace.importer import import_recording

    def run(recording: str | Path) -> dict:  # type: ignore[type-arg]
        rec = LIVE_FIXTURES / recording if isinstance(recording, str) else recording
        import_recording(rec, tmp_path / "trace")
        return check_recording(rec, tmp_path / "trace")

    return run


SLOW_MARKERS = ("spark", "browser", "live", "jvm", "kernel")
"""What the fast lane (``--quick``: ``bash scripts/test.sh --quick``) leaves out: a test with one of
these markers, or one that uses a fixture that starts one of them (``SLOW_FIXTURES``)."""
SLOW_FIXTURES = ("spark", "built_book", "browser", "base_url")


def pytest_addoption(parser) -> None:  # type: ignore[no-untyped-def]
    parser.addoption("--quick", action="store_true",
                     help="deselect every test that waits on a JVM, Spark, a browser or a kernel "
                          "(the fast lane of scripts/test.sh --quick)")


# What shares a resource runs in one pytest-xdist worker (``--dist loadgroup``, scripts/test.sh):
# the built book and the browser (one build, one Chromium), the Spark session, the JVM tests (one
# Maven cache, upstream's jars), the kernels, the live clusters, and each chapter's cells (one
# kernel runs a notebook's cells in order). Everything else is spread over the workers one test
# at a time.
GROUP_OF_MARKER = {"browser": "browser", "spark": "spark", "jvm": "jvm", "live": "live",
                   "kernel": "kernel"}
GROUP_OF_FIXTURE = {"built_book": "browser", "base_url": "browser", "browser": "browser",
                    "spark": "spark"}


def xdist_group(item) -> str | None:  # type: ignore[no-untyped-def]
    """The worker group of ``item`` (None: any worker)."""
    if type(item).__module__.startswith("nbval"):
        return "notebook-" + Path(str(item.fspath)).stem
    for fixture in getattr(item, "fixturenames", ()):
        if fixture in GROUP_OF_FIXTURE:
            return GROUP_OF_FIXTURE[fixture]
    for marker, group in GROUP_OF_MARKER.items():
        if item.get_closest_marker(marker):
            return group
    return None


def _set_group(item, group: str) -> None:  # type: ignore[no-untyped-def]
    """Give ``item`` the node id ``<node id>@<group>``, as xdist does for an ``xdist_group``
    mark. xdist 3.8 writes ``item._nodeid``, which pytest 9 no longer reads (its node id is the
    structured ``item._id``), so with the pinned pair xdist's own marks group nothing: a
    chapter's cells ran on two kernels. Both attributes are written here."""
    nodeid = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(nodeid)
    item._nodeid = nodeid
    assert item.nodeid == nodeid


def pytest_collection_modifyitems(config, items) -> None:  # type: ignore[no-untyped-def]
    """``--quick``: deselect (never skip) the tests of ``SLOW_MARKERS`` and ``SLOW_FIXTURES``.
    In a worker of a run with ``--dist loadgroup``, each item that shares a resource gets its
    group as the suffix of its node id (``@group``, ``_set_group``), which is what xdist's
    scheduler reads."""
    if getattr(config.option, "loadgroup", False):
        for item in items:
            group = xdist_group(item)
            if group is not None and "@" not in item.nodeid:
                _set_group(item, group)
    if not config.getoption("--quick"):
        return
    keep, drop = [], []
    for item in items:
        slow = (any(item.get_closest_marker(m) for m in SLOW_MARKERS)
                or any(f in SLOW_FIXTURES for f in getattr(item, "fixturenames", ())))
        (drop if slow else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


FUZZ_TRIED_BY_WORKERS: dict[str, int] = {}
"""The fuzzing harness's counts of cases tried, as the xdist workers report them."""


def _fuzz_tried() -> dict[str, int]:
    import sys

    fuzz = sys.modules.get("tests.test_fuzz")
    return dict(fuzz.TRIED) if fuzz is not None else {}


def pytest_sessionfinish(session) -> None:  # type: ignore[no-untyped-def]
    """In an xdist worker: hand the fuzz counts to the controller."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["fuzz_tried"] = _fuzz_tried()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:  # type: ignore[no-untyped-def]
    """In the xdist controller: add up what each worker tried."""
    for family, count in getattr(node, "workeroutput", {}).get("fuzz_tried", {}).items():
        FUZZ_TRIED_BY_WORKERS[family] = FUZZ_TRIED_BY_WORKERS.get(family, 0) + count


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    """The fuzzing harness's count of cases tried (tests/test_fuzz.py), per family, over every
    worker."""
    tried = dict(FUZZ_TRIED_BY_WORKERS)
    for family, count in _fuzz_tried().items():
        tried[family] = tried.get(family, 0) + count
    if tried:
        terminalreporter.write_sep("-", "fuzzing: cases tried")
        for family, count in sorted(tried.items()):
            terminalreporter.write_line(f"{family}: {count}")


# The built web book and a headless Chromium, shared by every browser test (tests/book.py).
from tests.book import base_url, browser, built_book  # noqa: E402, F401
