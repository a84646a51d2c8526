"""Every chapter as a student runs it: opened in JupyterLab (jupytext), Run All, then read.

One JupyterLab server and one headless Chromium for all chapters (``lab_driver``). For each
chapter: every code cell runs (Run All stops at a failing cell), no page error and no
``Javascript Error`` output, every chart drawn (an SVG or canvas per Vega-Lite output) and as
many as the built site draws, a legend click still filters a chart, no raw MyST, the
self-check questions rendered (one ``<details>`` per option), the prose's
numbers filled in by the kernel, the solutions and the plumbing folded to their first line,
and the ``.md`` saved byte-identical. Run by ``make test`` after the book build (which warms
the fitted-score cache the chapters read).
"""

from __future__ import annotations

import os
import re
import shutil
import pytest

import lab_driver as lab

REQUIRED = os.environ.get("RECBIAS_REQUIRE_SITE") == "1"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SITE = lab.ROOT / "_build" / "html" / "book"
if CHROMIUM is None:
    if REQUIRED:
        pytest.fail("JupyterLab checks cannot run: no chromium on this machine", pytrace=False)
    pytest.skip("no chromium on this machine", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
jupytext = pytest.importorskip("jupytext")

# an {eval} left unevaluated shows its expression: an f-string or a glued name
UNRESOLVED = re.compile(r'f"\{|\{ch\d_\w+|:\.\d+[f%]\}')
SELFCHECK = re.compile(r'^<div class="selfcheck">\n.*?^</div>\n', re.S | re.M)  # as test_selfcheck.py


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(URL of a JupyterLab serving a copy of book/, the copy's folder)."""
    folder = tmp_path_factory.mktemp("lab")
    with lab.lab_server(folder) as url:
        yield url, folder / "book"


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def runs(browser, served):
    """Each chapter run once, in order; its page facts, errors and Run All time."""
    out = {}

    def run(name):
        if name not in out:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            lab.open_chapter(page, served[0], name)
            try:
                seconds = lab.run_all(page)
            except AssertionError as stalled:  # say whether the kernel died meanwhile
                log = (served[1].parent / "lab.log").read_text(errors="replace").splitlines()
                said = [line for line in log if re.search(r"restart|died|dead|Traceback", line, re.I)]
                raise AssertionError(f"{stalled}; JupyterLab's log: {said[-5:] or 'no restart'}") from None
            facts = lab.facts(page)
            facts["legend_works"] = lab.legend_click_changes_a_chart(page)
            lab.save(page)
            page.close()
            lab.shutdown_kernels(served[0])
            out[name] = {**facts, "errors": errors, "seconds": seconds}
        return out[name]

    return run


def _hidden_first_lines(name):
    nb = jupytext.read(lab.ROOT / "book" / name)
    cells = [c for c in nb.cells if c.metadata.get("jupyter", {}).get("source_hidden")]
    return cells, sorted(c.source.splitlines()[0] for c in cells)


@pytest.mark.parametrize("name", lab.CHAPTERS)
def test_chapter_runs_in_jupyterlab_and_draws_its_charts(runs, name):
    facts = runs(name)
    print(f"{name}: Run All in JupyterLab took {facts['seconds']:.0f} s")
    assert facts["errors"] == []
    assert not [o for o in facts["outputs"] if "Javascript Error" in o or "Traceback" in o]
    assert facts["charts"] >= 1 and facts["drawn"] == facts["charts"], (
        f"{facts['drawn']} of {facts['charts']} charts drawn")
    page = SITE / name.replace(".md", ".html")
    if page.exists():  # after the book build: the same charts as the site
        assert facts["charts"] == page.read_text(encoding="utf-8").count('class="recbias-chart"')
    if 'bind="legend"' in (lab.ROOT / "book" / name).read_text(encoding="utf-8"):
        assert facts["legend_works"], "no chart reacts to a click on its legend"


@pytest.mark.parametrize("name", lab.CHAPTERS)
def test_chapter_reads_in_jupyterlab_as_on_the_site(runs, name):
    facts = runs(name)
    text = facts["markdown"]  # the prose as rendered (code cells may hold f-strings)
    for raw in lab.RAW_MYST:
        assert raw not in text, f"raw MyST in JupyterLab: {raw!r}"
    assert not re.search(r"^\([\w-]+\)=$", text, re.M), "a raw (label)= target"
    assert not UNRESOLVED.search(text), UNRESOLVED.search(text).group()
    # the self-check questions render as HTML, one clickable <details> per option
    source = (lab.ROOT / "book" / name).read_text(encoding="utf-8")
    assert facts["selfcheck"] == [block.count("<summary") for block in SELFCHECK.findall(source)]
    # solutions and plumbing folded: only their first line shows, the rest does not
    cells, first_lines = _hidden_first_lines(name)
    assert sorted(facts["folded"]) == first_lines
    shown = "\n".join(c.source for c in jupytext.read(lab.ROOT / "book" / name).cells
                      if c not in cells)
    for cell in cells:  # lines only a folded cell has are not on the page
        own = [line.strip() for line in cell.source.splitlines()[1:]
               if len(line.strip()) > 25 and line.strip() not in shown]
        assert not any(line in facts["text"] for line in own[:3]), own[:3]


@pytest.mark.parametrize("name", lab.CHAPTERS)
def test_chapter_saved_from_jupyterlab_is_unchanged(runs, served, name):
    """Saved after Run All, the .md is byte-identical: no rewritten header, no outputs."""
    runs(name)
    assert (served[1] / name).read_bytes() == (lab.ROOT / "book" / name).read_bytes()


@pytest.mark.parametrize("cells, expected", [
    (["x = 1", "import time\ntime.sleep(120)"],
     r"at cell 2 of 2 \(\[\*\]: 'import time'\); 1 running, 0 not run, kernel busy$"),
    (["x = 1", "1 / 0", "y = 2"],
     r"at cell 3 of 3 \(\[ \]: 'y = 2'\); 0 running, 1 not run, kernel idle; "
     r"error output in cell 2: '.*1 / 0 ZeroDivisionError: division by zero'$"),
], ids=["running", "failed"])
def test_a_stalled_run_all_says_where_it_stood(browser, served, cells, expected):
    """A Run All that does not finish names the cell it stands at, the first error output
    and the kernel's state (a bare timeout once left a CI failure with nothing to go on)."""
    header = (lab.ROOT / "book" / lab.CHAPTERS[0]).read_text(encoding="utf-8").split("\n---\n")[0]
    body = "".join(f"```{{code-cell}} ipython3\n{c}\n```\n\n" for c in cells)
    (served[1] / "stalled.md").write_text(f"{header}\n---\n\n# A page that stalls\n\n{body}",
                                          encoding="utf-8")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        lab.open_chapter(page, served[0], "stalled.md")
        with pytest.raises(AssertionError, match="Run All did not finish in 5 s: " + expected):
            lab.run_all(page, timeout_s=5)
    finally:
        page.close()
        lab.shutdown_kernels(served[0])
        (served[1] / "stalled.md").unlink()
