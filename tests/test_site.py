"""Checks on the built book (run by `make test` after `jupyter-book build`).

Charts must work without network: every page loads the Vega bundle from ``_static`` and no
script comes from a CDN; every chart's Vega-Lite spec is embedded in its page.
"""

import json
import os
import re
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

SITE = Path(__file__).resolve().parents[1] / "_build" / "html"
CDN = re.compile(r"cdn\.jsdelivr\.net|cdnjs\.cloudflare\.com|unpkg\.com|cdn\.plot\.ly|code\.jquery\.com")

if not (SITE / "index.html").exists():
    if os.environ.get("RECBIAS_REQUIRE_SITE") == "1":
        pytest.fail(f"the book is not built: {SITE} has no index.html", pytrace=False)
    pytest.skip("the book is not built (run `make book`)", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import pages as book_pages  # noqa: E402

# every executed page: the lessons (chapters 1-6), then the replication pages
PAGES = [SITE / "book" / f"{p.stem}.html" for p in book_pages.notebook_pages()]
LESSONS = [SITE / "book" / f"{p.stem}.html" for p in book_pages.lessons()]


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def test_chapters_were_built():
    assert PAGES, "no chapter page in the built site"
    missing = [p.name for p in PAGES if not p.exists()]
    assert not missing, f"pages of _toc.yml not built: {missing}"


def test_bundle_is_local_and_scoped():
    bundle = (SITE / "_static" / "vega-offline.js").read_text(encoding="utf-8")
    assert "window.vegaEmbed" in bundle
    body = bundle.split("\n", 1)[1]  # after the version stamp
    assert body.startswith("(function () {") and body.rstrip().endswith("})();")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_cdn_script(page):
    doc = soup(page)
    for tag in doc.find_all("script", src=True):
        assert not tag["src"].startswith(("http:", "https:", "//")), f"remote script {tag['src']}"
    assert any("vega-offline.js" in tag["src"] for tag in doc.find_all("script", src=True))
    for tag in doc.find_all("script", src=False):
        text = tag.get_text()
        # sphinx-thebe declares (never loads: launch buttons are off) its bundle URL on every page
        text = re.sub(r'const THEBE_JS_URL = "https://unpkg\.com/thebe@[^"]+";?', "", text)
        assert not CDN.search(text), f"inline script in {page.name} refers to a CDN"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_chart_has_its_spec(page):
    doc = soup(page)
    divs = doc.find_all("div", class_="recbias-chart")
    scripts = [s.get_text() for s in doc.find_all("script") if "vegaEmbed(el, spec" in s.get_text()]
    assert len(divs) == len(scripts)
    for div, script in zip(divs, scripts):
        assert f'document.getElementById("{div["id"]}")' in script
        spec = json.loads(re.search(r"var spec = (\{.*?\});\n", script, re.S).group(1))
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        assert any(key in spec for key in ("mark", "layer", "facet", "hconcat", "vconcat", "concat", "spec"))
        assert "data" in spec or "datasets" in spec


def test_chapter_one_has_charts():
    page = SITE / "book" / "ch01_missing_data.html"
    assert len(soup(page).find_all("div", class_="recbias-chart")) >= 2


def test_inline_scripts_are_not_duplicated():
    for page in PAGES:
        bodies = [s.string for s in soup(page).find_all("script") if s.string and s.string.strip()]
        dupes = {b for b in bodies if bodies.count(b) > 1}
        assert not dupes, f"{page.name}: duplicated inline script {sorted(dupes)[0][:80]!r}"


def test_charts_fit_the_column():
    css = (SITE / "_static" / "recbias-page.css").read_text(encoding="utf-8")
    assert ".recbias-chart svg" in css and "max-width: 100%" in css
    for page in PAGES:
        links = [link.get("href", "") for link in soup(page).find_all("link")]
        assert any("recbias-page.css" in href for href in links), page.name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_prose_numbers_theorems_and_tables(page):
    """Every {eval} resolved into text; no raw MyST left; tables without NaN or '.0' counts."""
    doc = soup(page)
    article = doc.find("article") or doc
    text = article.get_text(" ")
    for raw in ("{eval}", "{glue", "{prf:", "{cite", "{solution-start}", "{raw-cell}"):
        assert raw not in text, f"{page.name}: raw {raw!r}"
    assert not article.select(".problematic"), f"{page.name}: an unresolved role"
    for table in article.select("table.dataframe"):
        cells = [td.get_text(strip=True) for td in table.find_all("td")]
        assert "NaN" not in cells and "<NA>" not in cells, f"{page.name}: a NaN without a word"


def test_theorems_and_definitions_are_directives():
    kinds = {p.name: {c for d in soup(p).select("div.proof") for c in d.get("class", [])} for p in PAGES}
    assert "definition" in kinds["ch01_missing_data.html"]
    assert "theorem" in kinds["ch05_ure.html"]
    for page in PAGES:
        assert "**Theorem" not in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_every_chapter_has_launch_buttons_to_its_notebook(page):
    """Colab and Binder open the chapter's .ipynb on the repository's notebooks branch."""
    links = {a.get_text(strip=True): a["href"] for a in soup(page).select(
        ".dropdown-launch-buttons a, [class*='launch'] a") if a.get("href")}
    notebook = f"{page.stem}.ipynb"
    assert links.get("Colab", "").endswith(f"/blob/notebooks/{notebook}"), links
    assert links["Colab"].startswith("https://colab.research.google.com/github/")
    assert links.get("Binder", "").startswith("https://mybinder.org/v2/gh/"), links
    assert notebook in links["Binder"]


def test_pages_that_are_not_notebooks_have_no_launch_buttons():
    assert not soup(SITE / "book" / "api.html").select(".dropdown-launch-buttons")
