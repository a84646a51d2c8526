"""scripts/book_cache.py: the executed chapters are forgotten when the package changes."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from book_cache import package_fingerprint, refresh  # noqa: E402


def _package(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "results").mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")
    (pkg / "results" / "report.csv").write_text("a,b\n1,2\n")
    return pkg


def test_cache_kept_while_the_package_is_unchanged_and_removed_when_it_changes(tmp_path):
    pkg, build = _package(tmp_path), tmp_path / "_build"
    cache, env = build / ".jupyter_cache", build / ".doctrees"
    assert refresh(build, package_fingerprint(pkg)) is False  # no cache yet: nothing removed
    (cache / "executed").mkdir(parents=True)
    (cache / "global.db").write_text("db")
    env.mkdir()
    (env / "environment.pickle").write_bytes(b"env")
    (build / "html").mkdir()
    assert refresh(build, package_fingerprint(pkg)) is False
    assert (cache / "global.db").exists() and (env / "environment.pickle").exists()
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "x.pyc").write_bytes(b"\0")  # byte code is not the package
    assert refresh(build, package_fingerprint(pkg)) is False
    (pkg / "results" / "report.csv").write_text("a,b\n1,3\n")  # e.g. `make report`
    assert refresh(build, package_fingerprint(pkg)) is True
    assert not cache.exists() and not env.exists() and (build / "html").exists()
    assert (build / ".package.sha256").read_text().strip() == package_fingerprint(pkg)
    assert refresh(build, package_fingerprint(pkg)) is False


def test_fingerprint_sees_code_names_and_bytes(tmp_path):
    pkg = _package(tmp_path)
    before = package_fingerprint(pkg)
    (pkg / "__init__.py").write_text("x = 2\n")
    changed = package_fingerprint(pkg)
    assert changed != before
    (pkg / "__init__.py").rename(pkg / "other.py")
    assert package_fingerprint(pkg) != changed
