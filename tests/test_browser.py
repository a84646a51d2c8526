"""What a reader sees: every chapter page of the built site in headless Chromium.

The site is served on localhost (as a reader's browser would load it, not over file://) and
each chapter page is checked for: no console error or uncaught exception; every chart drawn
as an SVG that fits inside the text column, and every table and display equation too; maths
rendered by MathJax; every exercise solution folded. Run by ``make test`` after the build; needs Playwright (test extra) and a
Chromium (Debian's ``chromium``; ``.ci/run`` installs it when missing).
"""

from __future__ import annotations

import functools
import os
import shutil
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
PAGES = sorted(p.name for p in (SITE / "book").glob("ch*.html"))
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
    chapter = int(name[2:4])
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


# --- one chapter as a student opens it: executed outside the book, shown by JupyterLab --------
@pytest.fixture(scope="module")
def lab_notebook(tmp_path_factory):
    """Chapter 1 executed as a student runs it (no RECBIAS_CHARTS): charts as Vega-Lite v5."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    folder = tmp_path_factory.mktemp("lab")
    nb = folder / "ch01_missing_data.ipynb"
    subprocess.run([sys.executable, "-m", "jupytext", "--to", "ipynb", "--output", str(nb),
                    str(root / "book" / "ch01_missing_data.md")], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k != "RECBIAS_CHARTS"}
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                    "--inplace", "--ExecutePreprocessor.timeout=600", str(nb)],
                   check=True, capture_output=True, cwd=root / "book", env=env)
    return nb


@pytest.fixture(scope="module")
def lab_url(lab_notebook):
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # every cell rendered (no windowing), so that the page's text is the whole notebook
    settings = lab_notebook.parent / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    viewers = lab_notebook.parent / "settings" / "@jupyterlab" / "docmanager-extension"
    viewers.mkdir(parents=True, exist_ok=True)  # .md chapters open as notebooks, as in make lab
    (viewers / "plugin.jupyterlab-settings").write_text(
        '{"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}')
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(lab_notebook.parent / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(lab_notebook.parent / "workspaces")}
    args = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
            "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=recbias",
            f"--ServerApp.root_dir={lab_notebook.parent}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")
    server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(f"{url}/api/status?token=recbias", timeout=1)
            break
        except OSError:
            time.sleep(0.5)
    yield url
    server.terminate()
    server.wait(timeout=30)


def test_a_chapter_in_jupyterlab_shows_its_charts(browser, lab_url, lab_notebook):
    import json

    n_charts = sum("application/vnd.vegalite.v5+json" in out.get("data", {})
                   for cell in json.loads(lab_notebook.read_text())["cells"]
                   for out in cell.get("outputs", []))
    assert n_charts >= 2, "the executed chapter has no JupyterLab chart outputs"
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{lab_url}/lab/tree/{lab_notebook.name}?token=recbias", wait_until="load")
    page.wait_for_selector(".jp-RenderedVegaLite", state="attached", timeout=60_000)
    page.wait_for_timeout(3000)
    facts = page.evaluate("""() => ({
        charts: document.querySelectorAll('.jp-RenderedVegaLite').length,
        drawn: [...document.querySelectorAll('.jp-RenderedVegaLite')].filter(
            el => el.querySelector('svg, canvas')).length,
        text: document.body.innerText})""")
    page.close()
    assert facts["charts"] == n_charts and facts["drawn"] == n_charts
    assert "Error loading script" not in facts["text"]
    assert "needs the Vega bundle" not in facts["text"]
    assert errors == []


def test_a_chapter_in_jupyterlab_renders_its_myst(browser, lab_url, lab_notebook):
    """Chapter 1 in JupyterLab after Run All: MyST rendered (jupyterlab-myst), the numbers of
    the prose filled in by the kernel, every solution folded and none of them run."""
    import json
    import re

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{lab_url}/lab/tree/{lab_notebook.name}?token=recbias", wait_until="load")
    page.wait_for_selector(".jp-Notebook .jp-MarkdownCell", timeout=60_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()
    page.wait_for_function(
        "() => /Coat has [0-9,]+ users/.test(document.querySelector('.jp-Notebook').innerText)",
        timeout=180_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=180_000)
    page.wait_for_timeout(2000)
    text = page.evaluate("() => document.querySelector('.jp-Notebook').innerText")
    folded = page.evaluate(
        "() => [...document.querySelectorAll('.jp-Notebook .jp-InputPlaceholder')].map(e => e.innerText.trim())")
    page.close()
    for raw in ("{eval}", "{glue", "{cite", "{exercise}", "{solution-start}", "{prf:"):
        assert raw not in text, f"raw MyST in JupyterLab: {raw!r}"
    assert not re.search(r"^\([\w-]+\)=$", text, re.M), "a raw (label)= target"
    numbers = re.search(r"Coat has ([0-9,]+) users and ([0-9,]+) coats", text)
    assert numbers, "the prose's numbers are not shown"
    saved = json.loads(lab_notebook.read_text())
    assert "Missing Completely At Random" in text  # a definition, rendered
    # solutions folded: the exercise shows, its solution's prose and code do not
    assert "For which values of" in text
    solution_cells = [c for c in saved["cells"] if "solution" in c["metadata"].get("tags", [])]
    assert solution_cells and all(c["metadata"]["jupyter"]["source_hidden"] for c in solution_cells)
    assert all(c["cell_type"] == "raw" for c in solution_cells)  # Run All neither runs nor unfolds raw
    # folded: each solution cell shows only its first line, a comment naming the exercise
    assert sorted(folded) == sorted("".join(c["source"]).splitlines()[0] for c in solution_cells)
    assert all(line.startswith(("% Solution of exercise", "# Solution of exercise")) for line in folded)
    assert "flip = pd.DataFrame" not in text and "prefers algorithm 1 for any stronger" not in text
    assert errors == []


def test_a_chapter_opens_in_jupyterlab_unchanged(browser, lab_url, lab_notebook):
    """The .md chapter opened by jupytext in JupyterLab and saved is byte-identical: its header
    matches the installed jupytext and the kernel JupyterLab starts (no rewritten front matter)."""
    import shutil

    root = Path(__file__).resolve().parents[1]
    shutil.copy(root / "book" / "ch01_missing_data.md", lab_notebook.parent / "ch01_missing_data.md")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{lab_url}/lab/tree/ch01_missing_data.md?token=recbias", wait_until="load")
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell", timeout=60_000)
    page.wait_for_timeout(5000)
    tab = page.locator(".lm-TabBar-tab.lm-mod-current", has_text="ch01_missing_data.md")
    assert tab.count() == 1, "the chapter did not open as a notebook (jupytext)"
    page.keyboard.press("Control+s")
    page.wait_for_timeout(3000)
    page.close()
    saved = (lab_notebook.parent / "ch01_missing_data.md").read_bytes()
    assert saved == (root / "book" / "ch01_missing_data.md").read_bytes()
