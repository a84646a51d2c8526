"""What a reader sees: every chapter page of the built site in headless Chromium.

The site is served on localhost (as a reader's browser would load it, not over file://) and
each chapter page is checked for: no console error or uncaught exception; every chart drawn
as an SVG that fits inside the text column, and every table and display equation too; maths
rendered by MathJax; every exercise solution folded; on every lesson page, at least three
self-check questions whose feedback is hidden until an option is clicked, and above every chart
with a control a predict box naming where its slider starts, each control redrawing the chart.
Run by ``make test`` after the build; needs Playwright (test extra) and a Chromium (Debian's
``chromium``; ``.ci/run`` installs it when missing).
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parents[1] / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
REQUIRED = os.environ.get("RECBIAS_REQUIRE_SITE") == "1"

if not (SITE / "index.html").exists() or CHROMIUM is None:
    reason = "the book is not built" if CHROMIUM else "no chromium on this machine"
    if REQUIRED:
        pytest.fail(f"browser checks cannot run: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import pages as book_pages  # noqa: E402

# every executed page in the book's order (lessons, then replication pages): its number
NUMBERS = {f"{p.stem}.html": i for i, p in enumerate(book_pages.notebook_pages(), start=1)}
PAGES = list(NUMBERS)
LESSONS = [f"{p.stem}.html" for p in book_pages.lessons()]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no request log in the test output
        pass

    def do_GET(self):
        if self.path == "/favicon.ico":  # browsers ask every site for one; not a page's error
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()


@pytest.fixture(scope="module")
def base_url():
    handler = functools.partial(_Quiet, directory=str(SITE))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def pages(browser, base_url):
    """Load every chapter once at 1280 px; record console errors and the page's layout facts."""
    out = {}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    for name in PAGES:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda msg, e=errors: e.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc, e=errors: e.append(str(exc)))
        page.goto(f"{base_url}/book/{name}", wait_until="load")
        page.wait_for_timeout(1500)  # charts and MathJax render after load
        facts = page.evaluate("""() => {
            const column = document.querySelector('article.bd-article') || document.querySelector('main');
            const width = column.getBoundingClientRect().width;
            const charts = [...document.querySelectorAll('.recbias-chart')].map(el => {
                const svg = el.querySelector('svg');
                return {svg: !!svg, width: svg ? svg.getBoundingClientRect().width : 0,
                        text: el.textContent.slice(0, 80)};
            });
            const solutions = [...document.querySelectorAll('.solution.dropdown')].map(el =>
                [...el.children].filter(c => !c.classList.contains('admonition-title')).every(c => {
                    const cs = getComputedStyle(c);
                    return cs.visibility === 'hidden' || cs.display === 'none'
                        || c.getBoundingClientRect().height === 0; }));
            const figures = [...document.querySelectorAll('.recbias-chart')].map(el => {
                const fig = el.closest('figure');
                const num = fig && fig.querySelector('figcaption .caption-number');
                return num ? num.textContent.trim() : null; });
            const tables = [...document.querySelectorAll('table')].map(t => t.scrollWidth);
            // a display equation wider than its box hides behind a scrollbar and is cut in print
            const displays = [...document.querySelectorAll('mjx-container[display="true"]')].map(m => {
                const inner = m.querySelector('mjx-math');
                return {width: Math.max(m.scrollWidth, inner ? inner.getBoundingClientRect().width : 0),
                        box: m.clientWidth, text: (m.getAttribute('aria-label') || m.textContent).slice(0, 60)};
            });
            return {column: width, charts: charts, figures: figures, tables: tables, displays: displays,
                    math: document.querySelectorAll('mjx-container').length,
                    rawMath: document.body.innerText.includes('\\\\(') ,
                    solutions: solutions};
        }""")
        out[name] = {"errors": errors, **facts}
        page.close()
    context.close()
    return out


@pytest.mark.parametrize("name", PAGES)
def test_no_console_error(pages, name):
    assert pages[name]["errors"] == []


@pytest.mark.parametrize("name", PAGES)
def test_charts_render_inside_the_column(pages, name):
    facts = pages[name]
    for i, chart in enumerate(facts["charts"]):
        assert chart["svg"], f"chart {i} did not render: {chart['text']!r}"
        assert chart["width"] <= facts["column"] + 1, (
            f"chart {i} is {chart['width']:.0f} px wide, the column {facts['column']:.0f} px")


@pytest.mark.parametrize("name", PAGES)
def test_tables_fit_the_column(pages, name):
    facts = pages[name]
    for i, width in enumerate(facts["tables"]):
        assert width <= facts["column"] + 1, (
            f"table {i} is {width} px wide, the column {facts['column']:.0f} px")


@pytest.mark.parametrize("name", PAGES)
def test_display_math_fits_its_box(pages, name):
    for eq in pages[name]["displays"]:
        assert eq["width"] <= eq["box"] + 1, (
            f"equation {eq['text']!r} is {eq['width']:.0f} px wide, its box {eq['box']} px")


@pytest.mark.parametrize("name", PAGES)
def test_every_chart_is_a_numbered_figure(pages, name):
    chapter = NUMBERS[name]
    for i, number in enumerate(pages[name]["figures"]):
        assert number, f"chart {i} has no numbered caption"
        assert number.startswith(f"Fig. {chapter}."), number


def test_search_works_from_disk(browser):
    """The site opened from disk (file://): the search page lists hits, no console error."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto((SITE / "search.html").as_uri() + "?q=propensity", wait_until="load")
    page.wait_for_selector("#search-results ul.search li", timeout=30_000)
    page.wait_for_timeout(1000)
    hits = page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(e => e.href)")
    page.close()
    assert any("ch02_ips_snips.html" in h for h in hits), hits
    assert all(h.startswith("file://") for h in hits)
    assert errors == []


@pytest.mark.parametrize("name", PAGES)
def test_math_is_rendered(pages, name):
    assert pages[name]["math"] > 0 and not pages[name]["rawMath"]


@pytest.mark.parametrize("name", PAGES)
def test_solutions_are_folded(pages, name):
    assert pages[name]["solutions"], "no exercise solution on the page"
    assert all(pages[name]["solutions"]), "a solution is open when the page loads"



@pytest.mark.parametrize("name", LESSONS)
def test_self_check_questions_give_feedback_on_click(browser, base_url, name):
    """At least three questions, each with exactly one right option; every feedback hidden at
    first; clicking the right option and a wrong one shows each its own feedback (coloured)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base_url}/book/{name}", wait_until="load")
    questions = page.locator("article.bd-article div.selfcheck")
    count = questions.count()
    assert count >= 3, f"{count} self-check questions"
    # the content of a closed <details> keeps its box but is not rendered (content-visibility)
    hidden = page.evaluate("""() => [...document.querySelectorAll('.selfcheck-feedback')]
        .every(p => !p.checkVisibility())""")
    assert hidden, "a feedback shows before its option is clicked"
    for i in range(count):
        question = questions.nth(i)
        right = question.locator("details:has(p.selfcheck-right)")
        wrong = question.locator("details:has(p.selfcheck-wrong)")
        assert right.count() == 1 and wrong.count() >= 2, (i, right.count(), wrong.count())
        for option, word in ((right.first, "Right:"), (wrong.first, "Wrong:")):
            option.locator("summary").click()
            feedback = option.locator("p.selfcheck-feedback")
            feedback.wait_for(state="visible", timeout=5_000)
            text = feedback.inner_text()
            assert text.startswith(word) and len(text.split()) >= 4, text
        colours = [o.locator("p.selfcheck-feedback").evaluate(
            "p => getComputedStyle(p).backgroundColor + '|' + getComputedStyle(p).borderLeftColor")
            for o in (right.first, wrong.first)]
        assert colours[0] != colours[1], f"right and wrong feedback look alike: {colours}"
        # the other options stay closed
        assert question.locator("details[open]").count() == 2
    page.close()
    assert errors == []


# Every chapter in JupyterLab (Run All, charts, MyST, folding, saved unchanged): test_lab.py


# every control of a lesson's chart: its start named in a predict box above it, and it moves the chart
_CONTROLS = """() => {
    const charts = [...document.querySelectorAll('article.bd-article .recbias-chart')]
        .filter(c => c.querySelector('.vega-bindings input, .vega-bindings select'));
    const before = (a, b) => !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
    const heads = [...document.querySelectorAll('article.bd-article h2')];
    const boxes = [...document.querySelectorAll('article.bd-article div.admonition.predict')];
    return charts.map((chart, i) => {
        const head = heads.filter(h => before(h, chart)).pop();
        const mine = boxes.filter(b => before(b, chart) && (!head || before(head, b)));
        const controls = [...chart.querySelectorAll('.vega-bindings input[type=range], '
            + '.vega-bindings select, .vega-bindings input[type=radio]:checked')].map(el =>
            ({kind: el.type === 'range' ? 'range' : el.tagName === 'SELECT' ? 'select' : 'radio',
              value: el.value}));
        return {index: i, figure: (chart.closest('figure') || chart).id || '',
                predict: mine.length ? mine[mine.length - 1].innerText : null, controls: controls};
    });
}"""


def _numbers(text: str) -> list[float]:
    import re
    text = text.replace("\u2212", "-")
    return [float(m) for m in re.findall(r"-?\d+(?:\.\d+)?", text)]


def _chart_svg(page, index: int) -> str:
    return page.evaluate("""i => [...document.querySelectorAll('article.bd-article .recbias-chart')]
        .filter(c => c.querySelector('.vega-bindings input, .vega-bindings select'))[i]
        .querySelector('svg').innerHTML""", index)


@pytest.mark.parametrize("name", LESSONS)
def test_every_slider_asks_for_a_prediction_and_moves_its_chart(browser, base_url, name):
    """Issue "lessons a student learns by doing": before a chart with a control, in its section,
    a box (``{admonition}`` of class ``predict``) asks the reader to predict, naming where each
    slider starts (its value is a number of the box); moving each control redraws the chart."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base_url}/book/{name}", wait_until="load")
    page.wait_for_timeout(1500)
    charts = page.evaluate(_CONTROLS)
    for chart in charts:
        where = f"chart {chart['index']} ({chart['figure']})"
        assert chart["predict"], f"{where}: no predict box above it in its section"
        for control in chart["controls"]:
            if control["kind"] == "range":
                assert any(abs(n - float(control["value"])) < 1e-9
                           for n in _numbers(chart["predict"])), (
                    f"{where}: the slider starts at {control['value']}, which its predict box "
                    f"does not name: {chart['predict']!r}")
    for chart in charts:
        i = chart["index"]
        bound = page.locator("article.bd-article .recbias-chart").filter(
            has=page.locator(".vega-bindings input, .vega-bindings select")).nth(i)
        for j, control in enumerate(chart["controls"]):
            before = _chart_svg(page, i)
            if control["kind"] == "range":
                page.evaluate("""([i, j]) => {
                    const chart = [...document.querySelectorAll('article.bd-article .recbias-chart')]
                        .filter(c => c.querySelector('.vega-bindings input, .vega-bindings select'))[i];
                    const el = chart.querySelectorAll('.vega-bindings input[type=range]')[j];
                    el.value = (+el.value === +el.max) ? el.min : el.max;
                    el.dispatchEvent(new Event('input', {bubbles: true}));
                    el.dispatchEvent(new Event('change', {bubbles: true})); }""",
                              [i, sum(c["kind"] == "range" for c in chart["controls"][:j])])
            elif control["kind"] == "select":
                select = bound.locator(".vega-bindings select").first
                options = select.locator("option").all_inner_texts()
                select.select_option(index=1 if options and select.input_value() == select.locator(
                    "option").first.get_attribute("value") else 0)
            else:
                radios = bound.locator(".vega-bindings input[type=radio]")
                other = next(k for k in range(radios.count()) if not radios.nth(k).is_checked())
                radios.nth(other).check()
            page.wait_for_timeout(400)
            assert _chart_svg(page, i) != before, f"chart {i} ({chart['figure']}): control {j} " \
                f"({control['kind']}) does not change the chart"
    page.close()
    assert errors == []
