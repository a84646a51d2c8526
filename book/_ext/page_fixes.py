"""Small fixes to every built page: duplicated inline scripts, chart and code widths.

* Jupyter Book 1 registers sphinx-thebe's inline configuration twice, so every page declared
  ``const THEBE_JS_URL`` twice and logged a SyntaxError in the browser console. Identical
  inline scripts are kept once.
* Charts scale down to the text column (their SVG keeps its aspect ratio), so legends and
  panels are never hidden behind a scrollbar or lost in print.
* Long code lines wrap instead of needing sideways scrolling; tables use a smaller font and
  wrap their column headers, so that wide tables fit the column.
* Self-check questions (``<div class="selfcheck">`` in a lesson's Markdown, one ``<details>``
  per option): right and wrong feedback in green and red boxes, no disclosure triangle
  (the option's own ``▸`` marks it, turned when open; JupyterLab shows the same ``▸``
  without this CSS).
* Predict boxes (``{admonition}`` of class ``predict``, above a chart with a slider) in amber,
  with a question mark, apart from the notes and takeaways.
* Search works when the site is opened from disk (file://): Sphinx's search page loads its
  index with a script tag (fine), then fetches each hit's page for a summary, which the
  browser refuses for file:// URLs (CORS) and logs as errors. Over file:// the summaries are
  switched off; the hits are listed as over http.
"""

from __future__ import annotations

import re
from pathlib import Path

CSS_NAME = "recbias-page.css"
CSS = """/* recbias_tutorial: charts fit the text column; code wraps */
.recbias-chart { max-width: 100%; }
.recbias-chart .vega-embed { max-width: 100%; }
.recbias-chart svg, .recbias-chart canvas { max-width: 100%; height: auto; }
div.cell div.highlight pre, div.cell_output pre { white-space: pre-wrap; word-break: break-word; }
div.cell_output table.dataframe { font-size: 0.78rem; }
div.cell_output table.dataframe th, div.cell_output table.dataframe td { padding: 0.25em 0.45em; }
div.cell_output table.dataframe th { white-space: normal; }
/* self-check questions: each option a <details>, its feedback shown on click (no script) */
.selfcheck { border: 1px solid #d0d7de; border-radius: 6px; padding: 0.5em 0.9em; margin: 1.2em 0; }
.selfcheck p.selfcheck-question { margin: 0.2em 0 0.4em 0; }
.selfcheck details { margin: 0.15em 0; }
.selfcheck summary { list-style: none; cursor: pointer; }
.selfcheck summary::-webkit-details-marker { display: none; }
.selfcheck summary:hover { text-decoration: underline; }
.selfcheck details[open] > summary { font-weight: 600; }
.selfcheck .selfcheck-mark { display: inline-block; transition: transform 0.15s; }
.selfcheck details[open] .selfcheck-mark { transform: rotate(90deg); }
.selfcheck p.selfcheck-feedback { margin: 0.2em 0 0.4em 1.2em; padding: 0.25em 0.6em;
  border-left: 4px solid; border-radius: 3px; }
.selfcheck p.selfcheck-right { border-color: #1a7f37; background: rgba(26, 127, 55, 0.1); }
.selfcheck p.selfcheck-wrong { border-color: #b42318; background: rgba(180, 35, 24, 0.1); }
/* predict boxes (admonition of class predict, above a chart with a slider): amber */
div.admonition.predict { border-color: #b7791f; }
div.admonition.predict > .admonition-title { background-color: rgba(183, 121, 31, 0.12); }
div.admonition.predict > .admonition-title::after { color: #b7791f; content: "\f059"; }
"""
JS_NAME = "recbias-page.js"
JS = """// recbias_tutorial: search over file:// (no fetch of each hit's page, which CORS refuses)
if (window.location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") {
  DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}
"""


def _on_builder_inited(app) -> None:
    if app.builder.format != "html":
        return
    static_dir = Path(app.doctreedir).parent / "page_static"
    static_dir.mkdir(parents=True, exist_ok=True)
    for name, text in ((CSS_NAME, CSS), (JS_NAME, JS)):
        target = static_dir / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    app.config.html_static_path.append(str(static_dir))
    app.add_css_file(CSS_NAME)
    # after documentation_options.js (priority 200), before searchtools.js runs a query
    app.add_js_file(JS_NAME, priority=210)


_INLINE = re.compile(r"[ \t]*<script>(.*?)</script>\n?", re.S)


def _dedupe_inline_scripts(html: str) -> str:
    """Keep the first copy of each identical inline ``<script>`` (no ``src``) of a page."""
    seen: set[str] = set()

    def keep_first(match: re.Match) -> str:
        body = match.group(1)
        if body in seen:
            return ""
        seen.add(body)
        return match.group(0)

    return _INLINE.sub(keep_first, html)


def _on_build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = _dedupe_inline_scripts(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    app.connect("build-finished", _on_build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
