"""Run All times of every chapter in JupyterLab, first run and after a kernel restart.

A student opens each chapter ``.md`` in JupyterLab (jupytext), runs *Run All*, then *Restart
Kernel and Run All*. Both are timed in headless Chromium through ``tests/lab_driver.py`` (the
same driver as the JupyterLab tests), one JupyterLab server for all chapters. The fitted-score
cache makes the second run cheaper than the first; run ``make clean-cache`` before this script
for a cold first run. Also printed: the code lines a JupyterLab reader sees in the cells the
site hides (plumbing), now one folded first line per cell.

Run: ``RECBIAS_DATA=../shared/data .venv/bin/python benchmarks/bench_lab.py [chapter ...]``
(a few minutes on 2 cores).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import jupytext  # noqa: E402
import lab_driver as lab  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402


def plumbing_lines(name: str) -> tuple[int, int]:
    """(lines of the cells the site hides, lines of them a JupyterLab reader sees)."""
    nb = jupytext.read(lab.ROOT / "book" / name)
    hidden = [c for c in nb.cells if c.cell_type == "code"
              and {"hide-input", "remove-input", "remove-cell"} & set(c.metadata.get("tags", []))]
    total = sum(len(c.source.splitlines()) for c in hidden)
    seen = sum(1 if c.metadata.get("jupyter", {}).get("source_hidden")
               else len(c.source.splitlines()) for c in hidden)
    return total, seen


def main(chapters: list[str]) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, lab.lab_server(Path(tmp)) as url, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for name in chapters:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            lab.open_chapter(page, url, name)
            first = lab.run_all(page)
            second = lab.run_all(page, restart=True)
            page.close()
            lab.shutdown_kernels(url)
            rows.append((name, first, second, *plumbing_lines(name)))
            print(f"{name:34s} first {first:6.1f} s   after restart {second:6.1f} s", flush=True)
        browser.close()
    print("\nchapter                            first (s)  restart (s)  plumbing lines: hidden / seen")
    for name, first, second, total, seen in rows:
        print(f"{name:34s} {first:9.1f}  {second:11.1f}  {total:6d} / {seen}")


if __name__ == "__main__":
    main(sys.argv[1:] or lab.CHAPTERS)
