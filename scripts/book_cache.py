"""Forget the book's executed chapters when the package or its stored results change.

``make book`` runs this before ``jupyter-book build``. Jupyter Book's execution cache
(``execute_notebooks: cache``) keys a chapter on its own text only, so after ``make replicate``
or ``make report`` rewrites ``recbias_tutorial/results/`` (or the package's code changes) a chapter
whose text did not change would be shown from its old execution: old numbers, and findings
never re-checked. This keeps a fingerprint of every file of the package in the build folder
and, when it differs, removes the execution cache and Sphinx's saved environment (which would
otherwise call every unchanged page up to date). A fresh clone, as in CI, has neither.

Run: ``python scripts/book_cache.py [build folder]`` (default ``_build``).
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_fingerprint(package: Path = ROOT / "recbias_tutorial") -> str:
    """sha256 over the path and bytes of every file of the package (code, results, data files),
    byte-compiled files left out."""
    h = hashlib.sha256()
    for path in sorted(p for p in package.rglob("*") if p.is_file()
                       and "__pycache__" not in p.parts and p.suffix != ".pyc"):
        h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


#: What a build folder keeps from earlier builds that ties pages to their old execution.
STALE = (".jupyter_cache", ".doctrees")


def refresh(build: Path, fingerprint: str) -> bool:
    """Remove ``build``'s execution cache and saved environment if they were made under
    another fingerprint; record ``fingerprint`` (``<build>/.package.sha256``).

    The record is written after the removal, so an interrupted call leaves either the old
    cache with its old record or no cache. Returns True when something was removed.
    """
    record = build / ".package.sha256"
    old = record.read_text().strip() if record.exists() else None
    removed = False
    if old != fingerprint:
        for name in STALE:
            if (build / name).exists():
                shutil.rmtree(build / name)
                removed = True
        build.mkdir(parents=True, exist_ok=True)
        tmp = record.with_name(record.name + ".tmp")
        tmp.write_text(fingerprint + "\n")
        tmp.replace(record)
    return removed


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build"
    if refresh(folder, package_fingerprint()):
        print(f"{folder}: the package or its stored results changed since the chapters ran; "
              "every chapter runs again")
