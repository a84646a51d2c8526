"""Solutions: folded raw cells in the chapter files (Run All skips them), shown on the site.

Every cell of an exercise's solution is a raw cell tagged ``solution`` with
``jupyter.source_hidden`` set: the solution's code (a raw cell) and its prose (a raw cell with
``raw_mimetype: text/markdown``, from its ``{solution-start}`` to its ``{solution-end}``).
JupyterLab shows each of them folded, as its first line (a comment naming the exercise), and
neither *Run All* nor running a cell unfolds or runs a raw cell: a student opens a solution by
clicking it, and runs its code by turning the cell into code (``Y``). Markdown cells would not
do: JupyterLab unfolds a markdown cell whenever it runs it.

The book build turns those raw cells back into what they are (:func:`solution_cells_restored`)
before execution: prose into markdown, code into code, so the site runs the solutions and
shows them in sphinx-exercise's folded dropdowns.

:func:`strip_solutions` makes the student edition: the chapter without its solution cells.
"""

from __future__ import annotations

import jupytext
import myst_nb.core.read as nb_read
import nbformat

SOLUTION_TAG = "solution"
MARKDOWN = "text/markdown"

_read_myst_notebook = nb_read.read_myst_markdown_notebook


def is_solution(cell: nbformat.NotebookNode) -> bool:
    """Whether a cell belongs to an exercise's solution."""
    return SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def solution_cells_restored(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Turn every raw solution cell into a markdown or code cell (in place); return the notebook."""
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "raw" or not is_solution(cell):
            continue
        metadata = {k: v for k, v in cell.metadata.items() if k != "raw_mimetype"}
        if cell.metadata.get("raw_mimetype") == MARKDOWN:
            new = nbformat.v4.new_markdown_cell(source=cell.source, metadata=metadata)
        else:
            new = nbformat.v4.new_code_cell(source=cell.source, metadata=metadata)
        new.pop("id", None)
        if "id" in cell:
            new["id"] = cell["id"]
        notebook.cells[index] = new
    return notebook


def _read_with_solutions_restored(*args, **kwargs):
    return solution_cells_restored(_read_myst_notebook(*args, **kwargs))


def strip_solutions(text: str) -> str:
    """A chapter's MyST text without its solution cells (the student edition).

    Examples
    --------
    >>> full = jupytext.writes(nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_markdown_cell("Question"),
    ...     nbformat.v4.new_raw_cell("Answer", metadata={"tags": ["solution"]}),
    ...     nbformat.v4.new_markdown_cell("Next")]), fmt="md:myst")
    >>> "Answer" in strip_solutions(full), "Next" in strip_solutions(full)
    (False, True)
    """
    notebook = jupytext.reads(text, fmt="md:myst")
    notebook.cells = [cell for cell in notebook.cells if not is_solution(cell)]
    return jupytext.writes(notebook, fmt="md:myst")


def setup(app):
    nb_read.read_myst_markdown_notebook = _read_with_solutions_restored
    return {"parallel_read_safe": True, "parallel_write_safe": True}
