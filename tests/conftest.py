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
