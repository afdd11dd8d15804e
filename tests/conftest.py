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


def pytest_collection_modifyitems(config, items) -> None:  # type: ignore[no-untyped-def]
    """``--quick``: deselect (never skip) the tests of ``SLOW_MARKERS`` and ``SLOW_FIXTURES``."""
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


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    """The fuzzing harness's count of cases tried (tests/test_fuzz.py), per family."""
    import sys

    fuzz = sys.modules.get("tests.test_fuzz")
    if fuzz is not None and fuzz.TRIED:
        terminalreporter.write_sep("-", "fuzzing: cases tried")
        for family, count in sorted(fuzz.TRIED.items()):
            terminalreporter.write_line(f"{family}: {count}")


# The built web book and a headless Chromium, shared by every browser test (tests/book.py).
from tests.book import base_url, browser, built_book  # noqa: E402, F401
