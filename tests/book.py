"""The built web book for the browser tests: built once per run (execution off, so the pages
show exactly the outputs nbval verified), served from loopback, opened in headless Chromium with
every request that would leave 127.0.0.1 recorded and aborted. ``tests/conftest.py`` exposes the
fixtures ``built_book``, ``base_url`` and ``browser``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from rocketlb_core.layers import PACKAGE
from rocketlb_core.viz.assets import build_static_book
from rocketlb_core.viz.loopback import CHROMIUM, CHROMIUM_ARGS, serve

# No console error is accepted: the theme's "Got invalid theme mode" on a first visit is gone
# (default_mode, viz/sphinx_ext.py), and so is sphinx-thebe's duplicate declaration.


@pytest.fixture(scope="session")
def built_book(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Path:
    return build_static_book(root, tmp_path_factory.mktemp("book"))


@pytest.fixture(scope="session")
def base_url(built_book: Path) -> Iterator[str]:
    with serve(built_book) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


# A loaded 2-core CI machine can be slow, and a page that never settles must fail with its name
# and the requests still open, not with Playwright's bare "networkidle" timeout.
LOAD_TIMEOUT_MS = 120_000


def track_requests(page) -> dict[object, str]:  # type: ignore[no-untyped-def]
    """The page's requests still in flight (request -> URL), kept current by event handlers."""
    pending: dict[object, str] = {}
    page.on("request", lambda r: pending.__setitem__(r, r.url))
    page.on("requestfinished", lambda r: pending.pop(r, None))
    page.on("requestfailed", lambda r: pending.pop(r, None))
    return pending


def settle(page, pending: dict[object, str], quiet_ms: int = 500,  # type: ignore[no-untyped-def]
           timeout_ms: int = LOAD_TIMEOUT_MS) -> None:
    """Wait until no request of ``page`` has been in flight for ``quiet_ms`` (what Playwright's
    "networkidle" means), or fail naming the page and the requests still open."""
    quiet = waited = 0
    step = 100
    while quiet < quiet_ms:
        if waited >= timeout_ms:
            raise AssertionError(f"{page.url}: still loading after {timeout_ms} ms; requests "
                                 f"in flight: {sorted(pending.values())}")
        page.wait_for_timeout(step)
        waited += step
        quiet = quiet + step if not pending else 0


class PageWatch:
    """Opens a page, blocks and records non-loopback requests, and records errors."""

    def __init__(self, browser, url: str, width: int = 1280, dark: bool = False) -> None:
        self.external: list[str] = []
        self.errors: list[str] = []
        self.http_errors: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": 900},
                                     color_scheme="dark" if dark else "light")
        if dark:     # the theme's own switch: pydata-sphinx-theme reads localStorage "mode"
            self.page.add_init_script("localStorage.setItem('mode', 'dark');"
                                      "localStorage.setItem('theme', 'dark');")
        self.page.route("**/*", self._route)
        self.page.on("console", lambda m: m.type == "error" and self._error(m.text))
        self.page.on("pageerror", lambda e: self._error(str(e)))
        self.page.on("response", lambda r: r.status >= 400 and self.http_errors.append(
            f"{r.status} {r.url}"))
        self.page.on("requestfailed", lambda r: urlparse(r.url).hostname == "127.0.0.1"
                     and self.http_errors.append(f"failed {r.url}"))
        self.pending = track_requests(self.page)
        self.page.goto(url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
        settle(self.page, self.pending)

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(("data:", "blob:", "about:")) or urlparse(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def _error(self, text: str) -> None:
        self.errors.append(text)

    def wait_drawn(self, html: str, timeout_ms: int = 60_000) -> tuple[int, int]:
        """Wait until every chart (its Vega view) and every widget of the page, whose HTML is
        ``html``, is drawn, so a test measures what a reader sees (a loaded machine draws
        late). Returns (charts, widgets)."""
        charts = html.count('class="rlb-chart"')
        widgets = html.count('type="application/vnd.jupyter.widget-view+json"')
        try:
            if charts:
                self.page.wait_for_function(
                    "n => Array.from(document.querySelectorAll('div.rlb-chart'))"
                    ".filter(e => e.rlbView).length >= n", arg=charts, timeout=timeout_ms)
            if widgets:
                self.page.wait_for_function(
                    """() => Array.from(document.querySelectorAll(
                         'script[type="application/vnd.jupyter.widget-view+json"]'))
                       .every(s => s.parentElement.querySelector('.widget-subarea .lm-Widget'))""",
                    timeout=timeout_ms)
        except Exception as exc:
            raise AssertionError(f"{self.page.url}: charts or widgets did not render; "
                                 f"JavaScript errors: {self.errors}") from exc
        return charts, widgets

    def check_clean(self) -> None:
        assert self.external == [], f"requests left 127.0.0.1: {self.external}"
        assert self.http_errors == [], f"HTTP errors: {self.http_errors}"
        assert self.errors == [], f"JavaScript errors: {self.errors}"




def act(page, figure, action) -> None:  # type: ignore[no-untyped-def]
    """Do ``action`` (a click, a drag, typing) on a live figure and wait until the figure has
    drawn the answer: its ``data-rlb-answers`` count changed and no question is out
    (``viz/js/live_common.js`` sets both once the answer is drawn)."""
    before = figure.evaluate("el => el.getAttribute('data-rlb-answers')")
    action()
    page.wait_for_function(
        "([el, before]) => el.getAttribute('data-rlb-answers') !== before "
        "&& el.getAttribute('data-rlb-busy') === '0'",
        arg=[figure.element_handle(), before], timeout=60_000)


# axe-core (npm, package.json) from node_modules, put into the page by the test itself: the book
# does not ship it and nothing is requested. Violations of these impacts fail a test.
AXE = PACKAGE.parent / "node_modules" / "axe-core" / "axe.min.js"
AXE_FAIL = ("critical", "serious")
_AXE_RUN = """async (selector) => {
  const where = selector ? document.querySelector(selector) : document;
  const r = await axe.run(where, {resultTypes: ['violations']});
  return r.violations.filter(v => ['critical', 'serious'].includes(v.impact)).map(v =>
    v.id + ' (' + v.impact + ', ' + v.nodes.length + '): '
    + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '));
}"""


def axe(page, selector: str | None = None) -> list[str]:  # type: ignore[no-untyped-def]
    """axe-core's critical and serious violations on the page, or inside the first element that
    matches ``selector``: one line each (rule, impact, node count, up to three targets)."""
    if not page.evaluate("() => Boolean(window.axe)"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    # pydata-sphinx-theme gives scrollable code blocks and outputs their tab stop 300 ms after
    # the page last changed (a debounce): let it.
    page.wait_for_timeout(600)
    return list(page.evaluate(_AXE_RUN, selector))


def tab_to(page, target, limit: int = 600) -> int:  # type: ignore[no-untyped-def]
    """Press Tab (Shift+Tab when ``target``, a locator, comes before the focus) and nothing
    else until ``target`` has the focus; returns how many presses it took, or fails after
    ``limit``."""
    handle = target.element_handle()
    back = page.evaluate("""el => { const a = document.activeElement;
        return Boolean(a && a !== document.body && a !== el
                       && (a.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING)); }""",
                         handle)
    for presses in range(limit):
        if page.evaluate("el => document.activeElement === el", handle):
            return presses
        page.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"{page.url}: Tab never reached {target}")


_FOCUSABLE = ("button:not([disabled]), input:not([disabled]), select:not([disabled]), "
              "textarea:not([disabled]), [tabindex='0']")


def tab_through(page, figure) -> tuple[set[str], set[str]]:  # type: ignore[no-untyped-def]
    """From the figure's first control, Tab until the focus leaves the figure. Returns (the
    controls reached, every control the figure has), each named by data-rlb or its label."""
    name = ("el => el.getAttribute('data-rlb') || el.getAttribute('aria-label') "
            "|| el.textContent.trim()")
    every = set(figure.evaluate(f"(f, sel) => Array.from(f.querySelectorAll(sel)).map({name})",
                                _FOCUSABLE))
    tab_to(page, figure.locator(_FOCUSABLE).first)
    reached: set[str] = set()
    for _ in range(len(every) * 3 + 10):
        inside = figure.evaluate(f"f => f.contains(document.activeElement) ? "
                                 f"({name})(document.activeElement) : null")
        if inside is None:
            break
        reached.add(inside)
        page.keyboard.press("Tab")
    return reached, every
