"""The two editions of the chapters: solutions folded and skipped by Run All, or removed.

* Full edition (book/): every solution cell (prose and code) is a folded raw cell tagged
  ``solution`` (JupyterLab's Run All neither runs nor unfolds it); the book build turns those
  raw cells back into markdown and code (book/_ext/solutions.py).
* Student edition (``make student``): the same chapters with every solution removed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import solutions  # noqa: E402
import student_edition  # noqa: E402

CHAPTERS = student_edition.chapters(ROOT / "book")


def _in_solution(notebook):
    """For each cell, whether it lies between a solution-start and its solution-end."""
    inside, flags = False, []
    for cell in notebook.cells:
        inside = inside or "{solution-start}" in cell.source
        flags.append(inside)
        if "{solution-end}" in cell.source:
            inside = False
    return flags


def test_there_are_chapters_with_exercises():
    assert len(CHAPTERS) >= 5
    assert all("{exercise}" in p.read_text() for p in CHAPTERS)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_full_edition_solutions_are_folded_raw_cells(path):
    notebook = jupytext.read(path)
    flags = _in_solution(notebook)
    assert any(flags), "no solution in the chapter"
    for cell, inside in zip(notebook.cells, flags):
        tags = cell.metadata.get("tags", [])
        if inside:
            # raw: Run All neither runs nor unfolds it (it unfolds markdown cells it runs)
            assert cell.cell_type == "raw", f"solution cell is {cell.cell_type}: {cell.source[:60]!r}"
            assert "solution" in tags
            assert cell.source.startswith(("% Solution of exercise", "# Solution of exercise"))
            assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, (
                f"solution cell not folded in JupyterLab: {cell.source[:60]!r}")
        else:
            assert "solution" not in tags, f"a cell outside a solution is tagged: {cell.source[:60]!r}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_site_build_restores_solution_prose_and_code(path):
    notebook = solutions.solution_cells_restored(jupytext.read(path))
    assert not any(c.cell_type == "raw" for c in notebook.cells)
    kinds = {c.cell_type for c in notebook.cells if "solution" in c.metadata.get("tags", [])}
    assert kinds == {"code", "markdown"}
    assert not any("raw_mimetype" in c.metadata for c in notebook.cells)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_student_edition_has_the_exercises_and_no_solution(path):
    full = path.read_text()
    text = solutions.strip_solutions(full)
    for needle in ("{solution-start}", "{solution-end}", "{raw-cell}", '"solution"'):
        assert needle not in text
    assert text.count("{exercise}") == full.count("{exercise}")
    notebook = jupytext.reads(text, fmt="md:myst")
    # what stays folded is plumbing the site hides too, never a solution
    assert all("hide-input" in c.metadata.get("tags", []) for c in notebook.cells
               if c.metadata.get("jupyter", {}).get("source_hidden"))
    assert not any("solution" in c.metadata.get("tags", []) for c in notebook.cells)
    # every code cell of the main text survives, unchanged
    code = [c.source for c in jupytext.read(path).cells if c.cell_type == "code"]
    assert [c.source for c in notebook.cells if c.cell_type == "code"] == code


def test_write_student_edition(tmp_path):
    written = student_edition.write_student_edition(tmp_path)
    assert [p.name for p in written] == [p.name for p in CHAPTERS]
    for p in CHAPTERS:
        md = (tmp_path / "notebooks" / p.name).read_text()
        assert "{solution-start}" not in md
        nb = jupytext.read(tmp_path / "notebooks" / f"{p.stem}.ipynb")
        assert not any("{solution" in c.source for c in nb.cells)
    assert (tmp_path / "source" / "_toc.yml").exists()


STUDENT_SITE = ROOT / "_build" / "student" / "source" / "_build" / "html"


@pytest.mark.skipif(not (STUDENT_SITE / "index.html").exists()
                    and os.environ.get("RECBIAS_REQUIRE_STUDENT") != "1",
                    reason="the student edition is not built (make student)")
def test_built_student_site_has_no_solution():
    pages = [STUDENT_SITE / "book" / f"{p.stem}.html" for p in CHAPTERS]
    assert all(p.exists() for p in pages), [p.name for p in pages if not p.exists()]
    for page in pages:
        html = page.read_text()
        assert 'class="admonition exercise' in html or "exercise" in html
        assert "solution" not in html.replace("solutions", ""), page.name
