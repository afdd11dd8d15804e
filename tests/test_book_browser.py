"""The built web book in headless Chromium (Debian's package), served from a loopback server.

Every page is opened. The test fails on any request that leaves 127.0.0.1 (such requests are also
aborted, so nothing leaks), any HTTP error (the favicon included), any console error at all, any
chart that did not draw, any widget that did not render, and a page with other than one search
box. On chapter 1 it then clicks a broker
in the route explorer and a radio button under the chart, and checks that the display changed:
both work with no kernel at all.

The book is built here, with execution off, so the pages show exactly the outputs nbval verified.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.book import PageWatch, axe

pytestmark = pytest.mark.browser

def _pages(html: Path) -> list[str]:
    return sorted(str(p.relative_to(html)) for p in html.rglob("*.html")
                  if not p.relative_to(html).parts[0].startswith("_"))


def test_every_page_renders_offline(built_book: Path, survey: dict[str, dict]) -> None:
    pages = _pages(built_book)
    assert "notebooks/01-the-cluster.html" in pages
    assert "index.html" in pages
    assert sorted(survey) == pages
    charts_seen = widgets_seen = 0
    for rel, seen in survey.items():
        want_charts, want_widgets = seen["drawn"]
        assert seen["canvases"] == want_charts, rel
        # one search box (the sidebar's), none in the article header
        assert seen["search_fields"] == 1, rel
        assert seen["header_search"] == 0, rel
        # our own icon, served from the book (a missing one would be an HTTP error below)
        assert len(seen["icons"]) == 1, rel
        assert seen["icons"][0].endswith("favicon.svg"), rel
        assert seen["mode"] == "auto", rel
        charts_seen += want_charts
        widgets_seen += want_widgets
        assert seen["unclean"] is None, f"{rel}: {seen['unclean']}"
    assert charts_seen >= 1
    assert widgets_seen >= 1
    # axe-core (npm, from node_modules): no critical or serious violation on any page
    assert {rel: seen["axe"] for rel, seen in survey.items() if seen["axe"]} == {}


# The chart with the topic picker: the chapter's charts that have radio buttons.
_PICKER_CANVAS = ("Array.from(document.querySelectorAll('div.rlb-chart'))"
                  ".find(d => d.querySelector('input[type=radio]')).querySelector('canvas')")


def _canvas(page) -> str:
    return page.evaluate(f"() => {_PICKER_CANVAS}.toDataURL()")


def test_chapter_1_interactions_work_without_a_kernel(base_url: str, browser) -> None:
    watch = PageWatch(browser, base_url + "notebooks/01-the-cluster.html")
    page = watch.page
    page.wait_for_selector('[data-rlb="perm-broker-b"]', timeout=30_000)
    page.wait_for_selector("div.rlb-chart canvas", timeout=30_000)

    publish = page.locator('[data-rlb="publish-list"]')
    subscribe = page.locator('[data-rlb="subscribe-set"]')
    assert "(8 queues)" in publish.inner_text()
    assert "broker-b/3" in publish.inner_text()
    page.click('[data-rlb="perm-broker-b"]')          # RW -> R-
    page.wait_for_function(
        "document.querySelector('[data-rlb=\"publish-list\"]').innerText.includes('(4 queues)')")
    assert "broker-b/" not in publish.inner_text()
    assert "broker-b/3" in subscribe.inner_text()      # still read
    assert "R-" in page.locator('[data-rlb="perm-broker-b"]').inner_text()
    page.click('[data-rlb="perm-broker-b"]')          # R- -> -W
    page.wait_for_function(
        "!document.querySelector('[data-rlb=\"subscribe-set\"]').innerText.includes('broker-b/')")
    assert "broker-b/0" in publish.inner_text()

    before = _canvas(page)
    radios = page.locator("div.rlb-chart input[type=radio]")
    assert radios.count() == 2
    checked = page.locator("div.rlb-chart input[type=radio]:checked").get_attribute("value")
    other = next(radios.nth(i) for i in range(2) if radios.nth(i).get_attribute("value") != checked)
    other.check()
    page.wait_for_function(f"before => {_PICKER_CANVAS}.toDataURL() !== before",
                           arg=before, timeout=10_000)
    assert _canvas(page) != before, "the chart did not redraw after choosing another topic"
    assert axe(page, "article") == []                  # after the interactions
    watch.check_clean()
    page.close()


def test_chapter_5_drag_a_consumer_into_the_group(base_url: str, browser) -> None:
    """A real HTML5 drag: c4 from 'not in the group' to room-1; every strategy's row updates and
    the moved queues are counted, with no kernel."""
    watch = PageWatch(browser, base_url + "notebooks/05-allocation-strategies.html")
    page = watch.page
    page.wait_for_selector('[data-rlb="zone-out"] [data-rlb="chip-c4"]', timeout=30_000)
    grid = page.locator('[data-rlb="assignment-grid"]')
    before = grid.inner_text()
    assert "c4" not in before
    page.drag_and_drop('[data-rlb="chip-c4"]', '[data-rlb="zone-room-1"]')
    page.wait_for_function(
        "before => document.querySelector('[data-rlb=\"assignment-grid\"]').innerText "
        "!== before", arg=before, timeout=10_000)
    assert page.locator('[data-rlb="zone-room-1"] [data-rlb="chip-c4"]').count() == 1
    assert "c4" in grid.inner_text()
    assert int(page.locator('[data-rlb="moved-AVG"]').inner_text()) > 0
    assert page.locator("td.rlb-moved").count() > 0
    watch.check_clean()
    page.close()


def test_chapter_3_toggle_fault_tolerance_on_the_outage_chart(base_url: str, browser) -> None:
    watch = PageWatch(browser, base_url + "notebooks/03-latency-fault-tolerance.html")
    page = watch.page
    chart = page.locator("div.rlb-chart", has=page.locator("input[type=radio][value=off]"))
    chart.locator("canvas").wait_for(timeout=30_000)
    before = chart.locator("canvas").evaluate("c => c.toDataURL()")
    chart.locator("input[type=radio][value=off]").check()
    page.wait_for_function(
        "([id, before]) => document.getElementById(id).querySelector('canvas').toDataURL() "
        "!== before", arg=[chart.get_attribute("id"), before], timeout=10_000)
    watch.check_clean()
    page.close()


# Every element that can be wider than the text: it must fit the column, or sit in a box of its
# own that scrolls sideways inside the column (the theme does that for code and tables).
_LAYOUT = """() => {
  const art = document.querySelector('article.bd-article') || document.querySelector('main');
  const col = art.getBoundingClientRect();
  const bad = [];
  document.querySelectorAll('article pre, article table, article .cell_output, '
      + 'article .widget-subarea, article .rlb-live, article .rlb-chart, article img')
    .forEach(el => {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || (r.right <= col.right + 1 && r.left >= col.left - 1)) { return; }
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        const o = getComputedStyle(a).overflowX;
        if ((o === 'auto' || o === 'scroll') && a.getBoundingClientRect().right <= col.right + 1) {
          return;
        }
      }
      bad.push(el.tagName.toLowerCase() + '.' + String(el.className).slice(0, 40)
               + ' +' + Math.round(r.right - col.right) + 'px');
    });
  // a raw dict, list or tuple repr as a cell's whole output: show a table or text instead
  const reprs = Array.from(document.querySelectorAll('article .cell_output pre'))
    .map(p => p.textContent.trim()).filter(t => /^[\\[{(]/.test(t)).map(t => t.slice(0, 50));
  return {bad, reprs};
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_pages_fit_their_column_and_show_no_raw_reprs(built_book: Path, base_url: str, browser,
                                                      survey: dict[str, dict],
                                                      width: int) -> None:
    """Measured as a reader sees it, on a desktop (the survey's pass) and on a phone (issue
    13's finished pages)."""
    problems = {}
    for rel in _pages(built_book):
        if width == 1280:
            found = survey[rel]["layout"]
        else:
            watch = PageWatch(browser, base_url + rel, width=width)
            watch.wait_drawn((built_book / rel).read_text())
            found = watch.page.evaluate(_LAYOUT)
            watch.check_clean()
            watch.page.close()
        if found["bad"] or found["reprs"]:
            problems[rel] = found
    assert problems == {}


# Issues 36 and 50 (item 6): what a reader sees fits the text column at 1280 px (about 684 px,
# 77 characters of code) on every page, the API reference and the index included. Measured as a
# reader meets it, on every element of the article: one that scrolls sideways (its overflow is
# not visible and its content is wider than its box: a code block, a DataFrame's output box, a
# live figure's table), or one that sticks out past the column's right edge while no box of its
# own clips it (a signature, a table). For each, the innermost such element, its tag and class,
# and the lines too long for it: the first 60 characters of each, or of its text when no line is
# (a wide table).
_SIDEWAYS = """() => {
  const art = document.querySelector('article.bd-article') || document.querySelector('main');
  const col = art.getBoundingClientRect();
  const clipped = el => {
    for (let a = el.parentElement; a && a !== art; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible') { return true; }
    }
    return false;
  };
  const wide = [];
  art.querySelectorAll('*').forEach(el => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) { return; }
    const st = getComputedStyle(el);
    const scroll = st.overflowX !== 'visible' ? el.scrollWidth - el.clientWidth : 0;
    const stick = clipped(el) ? 0 : Math.round(r.right - col.right);
    const over = Math.max(scroll, stick);
    if (over > 1) { wide.push({el, over}); }
  });
  return wide.filter(w => !wide.some(o => o.el !== w.el && w.el.contains(o.el))).map(w => {
    const st = getComputedStyle(w.el);
    const probe = document.createElement('span');
    probe.textContent = 'M'.repeat(100);
    probe.style.font = st.font;
    probe.style.whiteSpace = 'pre';
    probe.style.position = 'absolute';
    document.body.appendChild(probe);
    const ch = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const room = Math.min(w.el.clientWidth || 1e9, col.right - w.el.getBoundingClientRect().left)
      - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
    const fit = Math.floor(room / ch);
    const text = w.el.textContent.trim();
    const lines = w.el.textContent.split('\\n').filter(t => t.length > fit)
      .map(t => ({start: t.trim().slice(0, 60), bare: t.trim().length}));
    return {over: w.over, fit, lines, first: text.split('\\n')[0],
            what: w.el.tagName.toLowerCase() + '.' + String(w.el.className).slice(0, 40),
            text: lines.length ? '' : text.slice(0, 60)};
  });
}"""


def _every_page() -> list[str]:
    """Every page of the built book, as the toc and Sphinx make them (the chapters, the
    pages, the guide, the API reference, the index and the search page), without building
    it: the parametrisation needs the list before the session fixture builds the book."""
    import yaml

    root = Path(__file__).parents[1]
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return ["index.html", "genindex.html", "py-modindex.html", "search.html"] + [
        f + ".html" for f in files]


def test_the_page_list_is_every_page(built_book: Path) -> None:
    """The parametrised list below is the built book's pages, so no page escapes the width
    test (a page added to the toc is measured at once)."""
    assert sorted(_every_page()) == _pages(built_book)


@pytest.mark.parametrize("rel", _every_page())
def test_blocks_fit_the_column_without_sideways_scrolling(survey: dict[str, dict],
                                                         rel: str) -> None:
    found = survey[rel]["sideways"]
    assert found == [], "\n".join(
        f"{b['what']} +{b['over']}px (fits {b['fit']} characters): "
        f"{[t['start'] for t in b['lines']] or [b['text']]}" for b in found)


# Charts: no legend entry, axis title or chart title cut short (Vega ends a cut label with "…"),
# and nothing drawn outside the canvas. Diagrams: every label inside the SVG's view box.
_CLIPPED = """() => {
  const bad = [];
  document.querySelectorAll('div.rlb-chart').forEach(el => {
    const view = el.rlbView;
    if (!view) { bad.push(el.id + ': not drawn'); return; }
    const canvas = el.querySelector('canvas');
    const w = canvas.width / (window.devicePixelRatio || 1) + 1;
    const walk = (item, ox, oy) => {
      const x = ox + (item.x || 0), y = oy + (item.y || 0);
      if (item.mark && item.mark.marktype === 'text') {
        const t = [].concat(item.text === undefined ? [] : item.text).join(' ');
        if (t.includes('…')) { bad.push(el.id + ': cut text "' + t + '"'); }
      }
      if (item.mark && item.mark.role && /legend/.test(item.mark.role) && item.bounds
          && (item.bounds.x2 + ox > w + 2)) {
        bad.push(el.id + ': legend outside the canvas');
      }
      const group = item.mark && item.mark.marktype === 'group';
      (item.items || []).forEach(child => walk(child, group ? x : ox, group ? y : oy));
    };
    walk(view.scenegraph().root, view.origin()[0], view.origin()[1]);
  });
  document.querySelectorAll('svg.rlb-seq-svg').forEach((svg, i) => {
    const vb = svg.viewBox.baseVal;
    svg.querySelectorAll('text').forEach(t => {
      const b = t.getBBox();
      if (b.x < vb.x - 1 || b.x + b.width > vb.x + vb.width + 1) {
        bad.push('diagram ' + i + ': label outside "' + t.textContent + '"');
      }
    });
  });
  return bad;
}"""


def test_no_chart_legend_or_diagram_label_is_cut(survey: dict[str, dict]) -> None:
    assert sum(seen["diagrams"] for seen in survey.values()) >= 7
    assert {rel: seen["clipped"] for rel, seen in survey.items() if seen["clipped"]} == {}


@pytest.fixture(scope="module")
def survey(built_book: Path, base_url: str, browser) -> dict[str, dict]:
    """Every page of the built book opened once, at 1280 px in the light theme, as a reader
    meets it (every chart and widget drawn), and what this module's tests measure on it: what
    was drawn, the search boxes, the icon, the theme's mode, the layout (``_LAYOUT``), the
    blocks that scroll sideways or stick out (``_SIDEWAYS``), cut labels (``_CLIPPED``),
    axe-core's violations, and any request that left 127.0.0.1, HTTP or JavaScript error
    (``unclean``). One pass instead of one per test (issue 49: each page load waits on the
    drawing); each test still asserts its own property, page by page. axe runs last on a page,
    as it adds its script."""
    out: dict[str, dict] = {}
    for rel in _pages(built_book):
        text = (built_book / rel).read_text()
        watch = PageWatch(browser, base_url + rel)
        page = watch.page
        seen: dict = {"drawn": watch.wait_drawn(text)}
        seen["canvases"] = page.locator("div.rlb-chart canvas").count()
        seen["search_fields"] = page.locator(".search-button-field").count()
        seen["header_search"] = page.locator(".article-header-buttons .search-button").count()
        seen["icons"] = [page.locator("link[rel=icon]").nth(i).get_attribute("href") or ""
                         for i in range(page.locator("link[rel=icon]").count())]
        seen["mode"] = page.evaluate("document.documentElement.dataset.mode")
        seen["layout"] = page.evaluate(_LAYOUT)
        seen["sideways"] = page.evaluate(_SIDEWAYS)
        seen["clipped"] = page.evaluate(_CLIPPED)
        seen["diagrams"] = text.count('class="rlb-seq-svg"')
        seen["axe"] = axe(page)
        try:
            watch.check_clean()
            seen["unclean"] = None
        except AssertionError as e:
            seen["unclean"] = str(e)
        page.close()
        out[rel] = seen
    return out


# Dark mode: every piece of text in the article (prose, code, tables, widgets, diagrams) must
# keep a contrast of at least 3:1 (WCAG's floor for large text and UI parts) with what is behind
# it. Charts draw on their own white card, so the canvas is left out.
_CONTRAST = """() => {
  const rgb = s => {
    const m = s.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(',').map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const lin = v => {
    v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  };
  const lum = c => 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  const behind = el => {
    for (let a = el; a; a = a.parentElement) {
      const c = rgb(getComputedStyle(a).backgroundColor);
      if (c && c.a > 0.5) return c;
    }
    return rgb(getComputedStyle(document.body).backgroundColor) || {r: 255, g: 255, b: 255, a: 1};
  };
  const bad = [];
  const seen = new Set();
  document.querySelectorAll('article *').forEach(el => {
    if (el.closest('.rlb-chart') || el.closest('.MathJax')) return;
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) return;
    const r = el.getBoundingClientRect();
    const st = getComputedStyle(el);
    if (r.width === 0 || st.visibility === 'hidden' || st.display === 'none') return;
    if (+st.opacity === 0) return;
    let fg = rgb(el instanceof SVGElement ? st.fill : st.color);
    if (!fg) return;
    const bg = behind(el instanceof SVGElement ? el.ownerSVGElement || el : el);
    const fgc = {r: fg.r * fg.a + bg.r * (1 - fg.a), g: fg.g * fg.a + bg.g * (1 - fg.a),
                 b: fg.b * fg.a + bg.b * (1 - fg.a)};
    const L1 = lum(fgc), L2 = lum(bg);
    const ratio = (Math.max(L1, L2) + 0.05) / (Math.min(L1, L2) + 0.05);
    if (ratio < 3) {
      const key = el.tagName + ':' + el.textContent.trim().slice(0, 30);
      if (!seen.has(key)) { seen.add(key); bad.push(key + ' ' + ratio.toFixed(2)); }
    }
  });
  return bad.slice(0, 15);
}"""


def test_every_page_is_readable_in_dark_mode(built_book: Path, base_url: str, browser) -> None:
    problems = {}
    for rel in _pages(built_book):
        watch = PageWatch(browser, base_url + rel, dark=True)
        page = watch.page
        watch.wait_drawn((built_book / rel).read_text())
        assert page.evaluate("document.documentElement.dataset.theme") == "dark", rel
        found = page.evaluate(_CONTRAST)
        if found:
            problems[rel] = found
        watch.check_clean()
        page.close()
    assert problems == {}


# The API reference (book/api/, Sphinx autodoc): one page per package, built from the docstrings
# with the book's -W -n; a few public names each, their doctest examples rendered.
API_ENTRIES = {
    "producer": ["rocketlb_core.producer.send", "rocketlb_core.producer.MQFaultStrategy",
                 "rocketlb_core.producer.TopicPublishInfo"],
    "consumer": ["rocketlb_core.consumer.strategies.avg", "rocketlb_core.consumer.rebalance"],
    "sim": ["rocketlb_core.sim.world.run_scenario", "rocketlb_core.sim.kernel"],
    "trace": ["rocketlb_core.trace.read.load_trace", "rocketlb_core.trace.read.validate_trace"],
    "replay": ["rocketlb_core.replay.engines.replay_producers_python"],
    "kafka": ["rocketlb_core.kafka.assignors.range_assign"],
    "interactive": ["rocketlb_core.interactive.handle", "rocketlb_core.interactive.handle_json"],
    "model": ["rocketlb_core.model.MessageQueue", "rocketlb_core.model.TopicRoute"],
}


def test_the_api_reference_is_in_the_book(built_book: Path) -> None:
    index = (built_book / "book" / "api" / "index.html").read_text()
    for package, names in API_ENTRIES.items():
        page = (built_book / "book" / "api" / f"{package}.html").read_text()
        assert f'href="{package}.html"' in index, package
        for name in names:
            assert f'id="{name}"' in page or f'id="module-{name}"' in page, name
    producer = (built_book / "book" / "api" / "producer.html").read_text()
    assert 'class="doctest' in producer                  # a docstring's example, rendered
    toc = (built_book / "book" / "preface.html").read_text()
    assert 'href="api/index.html"' in toc                # listed in the book's navigation


SEARCH_TERMS = ("sendLatencyFaultEnable", "retryTimesWhenSendFailed",
                "AllocateMessageQueueAveragelyByCircle")
"""Key terms of questions on the questions page (``book/questions.md``), as an operator types
them into the book's search (issue 46 item 4)."""


@pytest.mark.parametrize("term", SEARCH_TERMS)
def test_the_books_search_finds_the_operators_questions_by_their_key_terms(
        base_url: str, browser, term: str) -> None:
    """The book's own search (Sphinx's offline index, no server) finds the questions page for
    a question's key term, the way a reader searches it from any page."""
    page_md = Path(__file__).resolve().parent.parent / "book" / "questions.md"
    assert re.search(rf"\b{term}\b", page_md.read_text(encoding="utf-8"))
    watch = PageWatch(browser, base_url + f"search.html?q={term}")
    page = watch.page
    page.wait_for_function(
        "() => document.querySelector('#search-results')"
        " && !document.querySelector('#search-progress')?.innerText?.includes('Preparing')"
        " && document.querySelectorAll('#search-results ul.search li').length > 0",
        timeout=60_000)
    links = page.eval_on_selector_all("#search-results ul.search li a",
                                      "as => as.map(a => a.getAttribute('href'))")
    assert any("book/questions.html" in (h or "") for h in links), (term, links[:10])
    watch.check_clean()
    page.close()


def test_the_landing_page_and_every_chapter_link_to_the_questions_page(built_book: Path) -> None:
    """Issue 46 item 4: the built landing page (the preface) and every chapter carry a link
    that resolves to the questions page."""
    target = (built_book / "book" / "questions.html").resolve()
    assert target.is_file()
    pages = [built_book / "book" / "preface.html",
             *sorted((built_book / "notebooks").glob("*.html"))]
    assert len(pages) == 1 + len(list((Path(__file__).resolve().parent.parent / "notebooks")
                                      .glob("*.ipynb")))
    for page in pages:
        hrefs = re.findall(r'href="([^"#]*questions\.html)[^"]*"', page.read_text("utf-8"))
        assert any((page.parent / h).resolve() == target for h in hrefs), (page.name, hrefs)
