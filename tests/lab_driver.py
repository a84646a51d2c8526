"""Drive JupyterLab in headless Chromium as a student does: open a chapter, Run All, read it.

Used by ``tests/test_lab.py`` (every chapter, once) and ``benchmarks/bench_lab.py`` (Run All
times, first and after a kernel restart). One JupyterLab server serves a copy of ``book/``;
the ``.md`` chapters open as notebooks through jupytext, as with ``make lab``.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "recbias"
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import pages as _book_pages  # noqa: E402

# every executed page: the lessons, then the replication pages (names inside book/)
CHAPTERS = [p.name for p in _book_pages.notebook_pages()]
RAW_MYST = ("{eval}", "{glue", "{cite", "{exercise}", "{solution-start}", "{prf:", "```{")

# what the page shows once a chapter has run: text, charts, folded inputs, outputs
_FACTS = """() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const vega = [...nb.querySelectorAll('.jp-RenderedVegaLite')];
  return {
    text: nb.innerText,
    // jupyterlab-myst renders a Markdown cell into div.myst (no .jp-RenderedMarkdown): read both
    markdown: [...nb.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown, .jp-MarkdownCell .myst')].map(e => e.innerText).join(String.fromCharCode(10)),
    charts: vega.length,
    drawn: vega.filter(el => el.querySelector('svg, canvas')).length,
    folded: [...nb.querySelectorAll('.jp-InputPlaceholder')].map(e => e.innerText.trim()),
    outputs: [...nb.querySelectorAll('.jp-OutputArea-output')].map(e => e.innerText.slice(0, 300)),
    // self-check questions (plain HTML in the Markdown): the options of each, as <details>
    selfcheck: [...nb.querySelectorAll('div.selfcheck')].map(d => d.querySelectorAll('details > summary').length),
  };
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def lab_server(folder: Path):
    """A JupyterLab on localhost serving a copy of ``book/`` in ``folder``; yields its URL."""
    shutil.copytree(ROOT / "book", folder / "book", ignore=shutil.ignore_patterns("_build"))
    settings = folder / "settings" / "@jupyterlab"
    (settings / "notebook-extension").mkdir(parents=True, exist_ok=True)
    # every cell rendered (no windowing), so that the page's text is the whole notebook
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        '{"windowingMode": "none"}')
    (settings / "docmanager-extension").mkdir(parents=True, exist_ok=True)
    (settings / "docmanager-extension" / "plugin.jupyterlab-settings").write_text(
        '{"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}')
    env = {k: v for k, v in os.environ.items() if k != "RECBIAS_CHARTS"}  # as a student runs it
    env.update(JUPYTERLAB_SETTINGS_DIR=str(folder / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(folder / "workspaces"))
    port = _free_port()
    args = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
            "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}",
            "--LabApp.expose_app_in_browser=True",  # to open a file with a given viewer
            f"--ServerApp.root_dir={folder / 'book'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")
    log = open(folder / "lab.log", "w")
    server = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def _menu(page, menu: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}")).first.click()


# where Run All stands: each code cell's prompt, first line, error output and whether it has
# run (a number; a folded cell shows none, so it counts as run once no prompt is pending);
# the kernel's status
_PROGRESS = """() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const cells = [...nb.querySelectorAll('.jp-CodeCell')].map((c, i) => {
    const prompt = (c.querySelector('.jp-InputPrompt') || {textContent: ''}).textContent.trim().replace(/:$/, '');
    return {
      index: i,
      prompt,
      ran: /\\[\\d+\\]/.test(prompt) || (!!c.querySelector('.jp-InputPlaceholder') && !prompt.includes('*')),
      first: ((c.querySelector('.jp-InputPlaceholder, .cm-line') || {innerText: ''}).innerText || '').trim().slice(0, 80),
      error: [...c.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
             .map(e => e.innerText.slice(-300)).join(' | '),
    };
  });
  const status = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator')
                 || document.querySelector('.jp-Notebook-ExecutionIndicator');
  return {cells, kernel: status ? status.getAttribute('data-status') : 'no indicator'};
}"""


def run_all_stalled(page, timeout_s: float) -> str:
    """Why Run All has not finished in ``timeout_s``: the cell it stands at (running or first
    unrun), the first error output and the kernel's status, as one line."""
    state = page.evaluate(_PROGRESS)
    cells = state["cells"]
    running = [c for c in cells if "*" in c["prompt"]]
    unrun = [c for c in cells if not c["ran"] and c not in running]
    errors = [c for c in cells if c["error"]]
    at = running[0] if running else (unrun[0] if unrun else None)
    where = (f"cell {at['index'] + 1} of {len(cells)} ({at['prompt'] or 'no prompt'}: "
             f"{at['first']!r})" if at else f"every one of {len(cells)} cells numbered")
    return (f"Run All did not finish in {timeout_s:.0f} s: at {where}; {len(running)} running, "
            f"{len(unrun)} not run, kernel {state['kernel']}"
            + (f"; error output in cell {errors[0]['index'] + 1}: "
               f"{' '.join(errors[0]['error'].split())[-200:]!r}"
               if errors else ""))


def _wait_until_run(page, timeout_s: float) -> None:
    """Until every code cell has run and the kernel is idle (a failing cell stops Run All:
    the cells after it keep an empty prompt and this times out, saying where it stood)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            f"""() => {{ const s = ({_PROGRESS})();
                return s.cells.length > 0 && s.cells.every(c => c.ran) && s.kernel === 'idle'; }}""",
            timeout=timeout_s * 1000, polling=500)
    except PlaywrightTimeout:
        raise AssertionError(run_all_stalled(page, timeout_s)) from None


def open_chapter(page, url: str, name: str) -> None:
    """Open one chapter alone, as a notebook (the jupytext viewer ``make lab`` makes the
    default; named here, since a file opened before the settings load gets the text editor),
    in a workspace of its own (no tab restored from a previous chapter)."""
    workspace = re.sub(r"\W", "-", name)
    page.goto(f"{url}/lab/workspaces/{workspace}?token={TOKEN}&reset", wait_until="load")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands"
                           " && window.jupyterapp.commands.hasCommand('docmanager:open')",
                           timeout=90_000)
    page.wait_for_timeout(1000)
    page.evaluate("""name => window.jupyterapp.commands.execute(
        'docmanager:open', {path: name, factory: 'Jupytext Notebook'})""", name)
    try:
        page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell",
                               timeout=90_000)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                               timeout=90_000)
    except Exception:  # say what the page shows instead (a dialog, an error)
        shot = Path(os.environ.get("TMPDIR", "/tmp")) / f"lab-{workspace}.png"
        page.screenshot(path=str(shot))
        raise AssertionError(f"{name} did not open in JupyterLab; the page: {shot}; its text: "
                             f"{page.evaluate('() => document.body.innerText')[:500]!r}") from None


# Run All has started: a prompt shows [*] or a number, an output arrived, or the kernel is
# busy (a page whose code cells are all folded shows no prompt)
_STARTED = f"""() => {{ const s = ({_PROGRESS})();
    return s.kernel === 'busy' || s.cells.some(c => /\\[(\\*|\\d+)\\]/.test(c.prompt))
        || !!document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output'); }}"""


def _started_or_rerun(page, wait_s: float = 30) -> None:
    """Run All has started (:data:`_STARTED`); if the menu click
    was lost (seen once in CI: the kernel idle, no cell queued, the test waiting its full
    timeout), give the same command through JupyterLab's command registry."""
    try:
        page.wait_for_function(_STARTED, timeout=wait_s * 1000, polling=250)
    except Exception:
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(_STARTED, timeout=120_000, polling=250)


def run_all(page, *, restart: bool = False, timeout_s: float = 600) -> float:
    """Run All (or Restart Kernel and Run All); the wall time until every cell has run."""
    start = time.perf_counter()
    if restart:
        _menu(page, "Kernel", "Restart Kernel and Run All Cells")
        page.locator(".jp-Dialog-button.jp-mod-accept").click()
        # the old prompts stay until the restarted kernel takes the queued cells ([*])
        page.wait_for_function(
            """() => [...document.querySelectorAll(
                 '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')]
                 .some(p => p.textContent.includes('*'))""", timeout=120_000)
    else:
        _menu(page, "Run", "Run All Cells")
        _started_or_rerun(page)
    _wait_until_run(page, timeout_s)
    seconds = time.perf_counter() - start
    page.wait_for_timeout(1500)  # charts draw after their output arrives (not timed)
    return seconds


def shutdown_kernels(url: str) -> None:
    """Stop every kernel of the server (a chapter's kernel keeps its memory until then)."""
    import json

    with urllib.request.urlopen(f"{url}/api/kernels?token={TOKEN}", timeout=10) as r:
        kernels = json.load(r)
    for kernel in kernels:
        req = urllib.request.Request(f"{url}/api/kernels/{kernel['id']}?token={TOKEN}",
                                     method="DELETE")
        urllib.request.urlopen(req, timeout=30).close()


def facts(page) -> dict:
    return page.evaluate(_FACTS)


def save(page) -> None:
    page.keyboard.press("Control+s")
    page.wait_for_timeout(2000)


def legend_click_changes_a_chart(page) -> bool:
    """Click the first legend entry of each chart; True if some chart's marks change opacity
    (a legend-bound selection works)."""
    return page.evaluate("""async () => {
      const sig = el => [...el.querySelectorAll('.mark-symbol path, .mark-line path, .mark-rule line, .mark-rect path')]
        .map(p => [p.getAttribute('opacity'), p.getAttribute('fill-opacity'), p.getAttribute('stroke-opacity')].join()).join('|');
      for (const chart of document.querySelectorAll('.jp-RenderedVegaLite')) {
        const entry = chart.querySelector('.role-legend-symbol path, .role-legend-label text');
        if (!entry) continue;
        const before = sig(chart);
        const box = entry.getBoundingClientRect();
        for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click']) {
          entry.dispatchEvent(new MouseEvent(type, {bubbles: true, clientX: box.x + box.width / 2,
                                                    clientY: box.y + box.height / 2}));
        }
        await new Promise(r => setTimeout(r, 400));
        if (sig(chart) !== before) return true;
      }
      return false;
    }""")
