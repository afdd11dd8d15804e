"""``rocketlb doctor --html``'s page as a reader with assistive technology meets it (issue 35,
and the reader's polish): opened in the headless browser from the file, no request made,
and no critical or serious axe-core violation: the severity labels readable against their
background, each chart named for a screen reader with what it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rocketlb_core import data_path
from tests.book import axe
from tests.test_fuzz import run_command


@pytest.mark.parametrize("inputs", [("doctor", "capture-4"), ("producer-outage-4",),
                                    ("doctor", "strategies-5")])
def test_the_html_report_is_accessible_and_loads_nothing(inputs: tuple[str, ...],
                                                         tmp_path: Path, browser) -> None:
    page_file = tmp_path / "report.html"
    status, _, err = run_command(["doctor", str(data_path("live", *inputs)),
                                  "--html", str(page_file)])
    assert status == 3, err
    text = page_file.read_text(encoding="utf-8")
    charts = re.findall(r"<svg role=\"img\"[^>]*>", text)
    assert charts
    assert all('aria-label="' in c for c in charts)
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    try:
        page.goto(page_file.as_uri())
        assert axe(page) == []
        labels = page.eval_on_selector_all(
            "svg[role=img]", "els => els.map(e => e.getAttribute('aria-label'))")
        assert all(label.split(",")[0] in ("Queue ownership", "Lag per queue")
                   or label.startswith("Isolation timeline from ") for label in labels)
    finally:
        page.close()
    assert requests == [page_file.as_uri()]
