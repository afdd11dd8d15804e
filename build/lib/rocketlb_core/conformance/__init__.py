"""Conformance: replay upstream's golden vectors (``shared/conformance``) against the package.

``rocketlb conformance FILE...`` reads producer scenario files, primitives,
allocation files and ``upstream-tests.json`` (plain or ``.gz``), runs every case and prints a
summary per file, then ``N passed, M failed`` where N + M counts every compared expectation.
"""

from rocketlb_core.conformance.report import Expectation, Report
from rocketlb_core.conformance.runner import ConformanceFileError, run_file

__all__ = ["ConformanceFileError", "Expectation", "Report", "run_file"]
