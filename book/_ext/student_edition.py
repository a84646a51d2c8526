"""The student edition: the book's sources and chapter notebooks without the solutions.

``python book/_ext/student_edition.py OUT`` (``make student``) writes

* ``OUT/source``: a copy of the book (``_config.yml``, ``_toc.yml``, ``book/``) whose chapters
  have every solution removed (:func:`solutions.strip_solutions`); ``make student`` then builds
  it into ``OUT/source/_build/html``;
* ``OUT/notebooks``: each chapter without its solutions, as a MyST notebook (``.md``, opens in
  JupyterLab with jupytext) and as an ``.ipynb``, to hand out; each runs alone wherever the
  package is installed (the stored full-scale results ship inside it). The ``.ipynb`` open
  with a cell that installs the package where it is missing (Colab, Binder), and a
  ``requirements.txt`` names it for Binder: this folder is what the site's launch buttons
  open, once pushed to the repository's notebooks branch (``book/_ext/launch_links.py``).

The exercises stay, with their labels; only the solution blocks go.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import jupytext

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solutions import strip_solutions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def chapters(book: Path) -> list[Path]:
    """The chapter notebooks of ``book`` (MyST files with a kernelspec)."""
    return sorted(p for p in book.glob("*.md") if "kernelspec:" in p.read_text(encoding="utf-8")[:600])


def launch_repository() -> str:
    """The course's repository, from its one place: ``_config.yml``'s ``recbias_launch``."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config["sphinx"]["config"]["recbias_launch"]["repository"].rstrip("/")


def package_spec(repository: str) -> str:
    """What pip installs where a notebook is launched: the package, from the repository."""
    return f"recbias_tutorial[notebook] @ git+{repository}"


def install_cell(repository: str):
    """The first cell of a handed-out notebook: installs the package only where it is missing
    (Colab, Binder); on a hub where the instructor installed it, it does nothing."""
    import nbformat

    return nbformat.v4.new_code_cell(
        "# Colab / Binder: install the course's package where it is missing (elsewhere: nothing)\n"
        "import importlib.util\n"
        "if importlib.util.find_spec(\"recbias_tutorial\") is None:\n"
        f"    %pip install -q \"{package_spec(repository)}\"")


def write_student_edition(out: Path) -> list[Path]:
    """Write the student sources and notebooks under ``out``; return the stripped chapters."""
    source, notebooks = out / "source", out / "notebooks"
    if source.exists():  # keep the student build's own _build (its execution cache)
        for child in source.iterdir():
            if child.name != "_build":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    source.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(notebooks, ignore_errors=True)
    notebooks.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "book", source / "book",
                    ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    repository = launch_repository()
    written = []
    for chapter in chapters(source / "book"):
        text = strip_solutions(chapter.read_text(encoding="utf-8"))
        chapter.write_text(text, encoding="utf-8")
        (notebooks / chapter.name).write_text(text, encoding="utf-8")
        notebook = jupytext.reads(text, fmt="md:myst")
        notebook.cells.insert(0, install_cell(repository))
        jupytext.write(notebook, notebooks / f"{chapter.stem}.ipynb")
        written.append(chapter)
    (notebooks / "requirements.txt").write_text(f"{package_spec(repository)}\n")  # for Binder
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: student_edition.py OUT")
    for path in write_student_edition(Path(sys.argv[1]).resolve()):
        print(f"student edition: {path.name} without solutions")
