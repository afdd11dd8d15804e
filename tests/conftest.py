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
