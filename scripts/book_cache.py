"""Forget the book's executed chapters when the package or its stored results change.

``make book`` runs this before ``jupyter-book build``. Jupyter Book's execution cache
(``execute_notebooks: cache``) keys a chapter on its own text only, so after ``make replicate``
or ``make report`` rewrites ``recbias_tutorial/results/`` (or the package's code changes) a chapter
whose text did not change would be shown from its old execution: old numbers, and findings
never re-checked. This keeps a fingerprint of every file of the package beside the cache and
removes the cache when it differs. (A fresh clone, as in CI, has no cache: nothing to do.)

Run: ``python scripts/book_cache.py [cache folder]`` (default ``_build/.jupyter_cache``).
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


def refresh(cache: Path, fingerprint: str) -> bool:
    """Remove ``cache`` if it was filled under another fingerprint; record ``fingerprint``.

    The record is a sibling file (``<cache>.package``), written after the removal, so an
    interrupted call leaves either the old cache with its old record or no cache.
    Returns True when a cache was removed.
    """
    record = cache.with_name(cache.name + ".package")
    old = record.read_text().strip() if record.exists() else None
    removed = False
    if old != fingerprint:
        if cache.exists():
            shutil.rmtree(cache)
            removed = True
        record.parent.mkdir(parents=True, exist_ok=True)
        tmp = record.with_name(record.name + ".tmp")
        tmp.write_text(fingerprint + "\n")
        tmp.replace(record)
    return removed


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / ".jupyter_cache"
    if refresh(folder, package_fingerprint()):
        print(f"{folder}: the package or its stored results changed since the chapters ran; "
              "every chapter runs again")
