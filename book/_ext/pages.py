"""The book's pages by part, read from ``_toc.yml``: one list for the tests and the tools.

* :func:`lessons` — the part *The course*: chapters 1-6, lessons for students;
* :func:`replication_pages` — the part *Replications*: one page per paper, then the report;
* :func:`notebook_pages` — both, in the book's order: the chapters that run code;
* :func:`executed_back_matter` — the pages of *Back matter* that run code (the appendix).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The captions of the two parts of ``_toc.yml`` that hold executed pages.
COURSE, REPLICATIONS, BACK_MATTER = "The course", "Replications", "Back matter"


def _part(caption: str, root: Path = ROOT) -> list[Path]:
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc["parts"]:
        if part["caption"] == caption:
            return [root / f"{entry['file']}.md" for entry in part["chapters"]]
    raise ValueError(f"_toc.yml has no part {caption!r}")


def lessons(root: Path = ROOT) -> list[Path]:
    """The lesson pages (``book/ch0N_*.md``), in the book's order."""
    return _part(COURSE, root)


def replication_pages(root: Path = ROOT) -> list[Path]:
    """The replication pages (one per paper, then the report), in the book's order."""
    return _part(REPLICATIONS, root)


def notebook_pages(root: Path = ROOT) -> list[Path]:
    """Every executed page: the lessons, then the replication pages."""
    return lessons(root) + replication_pages(root)


def executed_back_matter(root: Path = ROOT) -> list[Path]:
    """The pages of *Back matter* that run code (a jupytext header with a kernelspec)."""
    return [p for p in _part(BACK_MATTER, root)
            if "\nkernelspec:" in p.read_text(encoding="utf-8").split("\n---", 1)[0]]
