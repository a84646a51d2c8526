"""The browser edition: its notebooks under Pyodide's package versions, and its Lite app.

* The core install: the wheel built from this checkout, in a new virtual environment of a
  Python >= 3.12 (Pyodide's numpy, scipy and pandas need it), with every package pinned to the
  version Pyodide ships (``browser/pyodide-constraints.txt``, from the ``pyodide-lock.json``
  of the Pyodide that the Lite kernel loads): no Cornac, no Numba, no pooch, no vl-convert,
  no joblib. Every notebook of the Lite site then runs there as the reader's browser runs it
  (its set-up cell installs nothing outside Pyodide), on the real data (``RECBIAS_DATA``, as
  a reader who uploaded them to ``data/``); each homework set runs as its solution version
  (every cell, every public check passing through ``course.public_checks``).
* The built site holds the Lite app, the wheel and those notebooks, and headless Chromium
  opens the app from the site (served on localhost) and lists them.

Pyodide itself (WebAssembly) is not run here: its packages come from its CDN, which this
machine cannot reach (README, "The browser edition"). Run by ``make test`` after the build.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
LITE = SITE / "lite"
CONSTRAINTS = ROOT / "browser" / "pyodide-constraints.txt"
REQUIRED = os.environ.get("RECBIAS_REQUIRE_SITE") == "1"
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import lite_site  # noqa: E402

BROWSER = lite_site.in_browser()
KERNEL = "pyodide-versions"
ABSENT = ("cornac", "numba", "pooch", "vl-convert-python", "joblib", "otter-grader")


def _skip_or_fail(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"browser-edition checks cannot run: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


if not (LITE / "index.html").exists():
    _skip_or_fail("the book (with its Lite site) is not built")


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-5000:]}")
    return done


def _constraints() -> dict[str, str]:
    lines = CONSTRAINTS.read_text().splitlines()
    return dict(line.split("==") for line in lines if line and not line.startswith("#"))


def _python() -> str | None:
    """A CPython >= 3.12 that runs on this machine (pyenv's versions, then PATH)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted((str(p) for p in pyenv.glob("3.1[234].*/bin/python3")), reverse=True)
    found += [shutil.which(f"python3.{minor}") for minor in (14, 13, 12)]
    for python in filter(None, found):
        done = subprocess.run([python, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"],
                              capture_output=True)
        if done.returncode == 0:
            return python
    return None


def test_the_constraints_are_the_pyodide_the_lite_kernel_loads():
    from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION

    head = CONSTRAINTS.read_text().splitlines()[0]
    assert f"Pyodide {PYODIDE_VERSION}'s" in head, (
        f"the Lite kernel loads Pyodide {PYODIDE_VERSION}; {CONSTRAINTS.name} says {head!r}: "
        "regenerate it (python scripts/pyodide_versions.py)")
    pins = _constraints()
    for name in ("numpy", "scipy", "pandas", "altair"):
        assert name in pins
    for name in ABSENT[:4]:  # what the core must do without: Pyodide has none of them
        assert name not in pins


def test_the_core_dependencies_are_what_pyodide_ships():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = sorted(dep.split(">")[0].split("=")[0].split("<")[0].strip()
                   for dep in project["dependencies"])
    assert names == ["altair", "numpy", "pandas", "scipy"]
    assert set(names) <= set(_constraints())


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """The wheel, the packages the browser notebooks also install, and a kernel, in a new
    virtual environment, at Pyodide's versions."""
    python = _python()
    if python is None:
        _skip_or_fail("no Python >= 3.12 here for Pyodide's numpy, scipy and pandas")
    tmp = tmp_path_factory.mktemp("pyodide-versions")
    wheel = next((LITE / "pypi").glob("recbias_tutorial-*.whl"))  # the site's own wheel
    home = tmp / "venv"
    _run([python, "-m", "venv", str(home)])
    extra = sorted({p for packages in BROWSER.values() for p in packages})
    _run([str(home / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile",
          "-c", str(CONSTRAINTS), str(wheel), *extra, "ipykernel"])  # no .pyc: half the time
    _run([str(home / "bin" / "python"), "-m", "ipykernel", "install", "--prefix", str(home),
          "--name", KERNEL])
    return home


def test_the_core_installs_at_pyodides_versions_without_the_extras(venv):
    freeze = _run([str(venv / "bin" / "python"), "-m", "pip", "freeze"]).stdout.lower()
    installed = dict(line.split("==") for line in freeze.splitlines() if "==" in line)
    pins = _constraints()
    for name in ("numpy", "scipy", "pandas", "altair"):
        assert installed[name] == pins[name], name
    for name in ABSENT:
        assert name not in installed, f"{name} is installed with the browser edition's packages"


def _kernel_env(venv: Path) -> dict:
    """The reader's kernel: the venv's Python, the data from the folder the reader uploaded
    (here the CI's), no checkout on the path, no caches (the core has no joblib)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "JUPYTER", "RECBIAS_"))}
    env.update(PATH=f"{venv / 'bin'}:{env.get('PATH', '')}", VIRTUAL_ENV=str(venv),
               RECBIAS_OFFLINE="1")
    if os.environ.get("RECBIAS_DATA"):
        env.update(RECBIAS_DATA=os.environ["RECBIAS_DATA"], RECBIAS_REQUIRE_DATA="1")
    return env


def _execute(venv: Path, notebook, folder: Path):
    """Run ``notebook`` (saved in ``folder``, as the Lite drive holds it) on the venv's kernel."""
    import jupyter_client
    import nbformat
    from nbclient import NotebookClient

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / notebook.metadata.get("recbias_name", "notebook.ipynb")
    nbformat.write(notebook, path)
    specs = jupyter_client.kernelspec.KernelSpecManager(
        kernel_dirs=[str(venv / "share" / "jupyter" / "kernels")])
    manager = jupyter_client.KernelManager(kernel_name=KERNEL, kernel_spec_manager=specs)
    client = NotebookClient(notebook, km=manager, timeout=600, allow_errors=True,
                            resources={"metadata": {"path": str(folder)}})
    client.execute(env=_kernel_env(venv))
    return notebook


def _errors(cell) -> list[str]:
    return [f"{o.get('ename')}: {o.get('evalue', '')[:300]}" for o in cell.get("outputs", [])
            if o.get("output_type") == "error"]


PAGES = [p for p in BROWSER if p.parent.name == "book"]
SETS = [p for p in BROWSER if p.parent.name == "homework"]


@pytest.mark.parametrize("source", PAGES, ids=[p.stem for p in PAGES])
def test_every_browser_page_runs_at_pyodides_versions(venv, source, tmp_path):
    import nbformat

    notebook = nbformat.read(LITE / "files" / f"{source.stem}.ipynb", as_version=4)
    notebook.metadata["recbias_name"] = f"{source.stem}.ipynb"
    executed = _execute(venv, notebook, tmp_path / "drive")
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code), "a code cell did not run"
    failed = [(i, _errors(c)) for i, c in enumerate(code) if _errors(c)]
    assert not failed, f"{len(code) - len(failed)} of {len(code)} cells ran: {failed[:2]}"


@pytest.mark.parametrize("source", SETS, ids=[p.stem for p in SETS])
def test_every_browser_homework_set_runs_with_its_public_checks(venv, source, tmp_path):
    import nbformat

    versions = lite_site.homework_versions([source])[source.stem]  # cached by the book build
    site = nbformat.read(LITE / "files" / f"{source.stem}.ipynb", as_version=4)
    want = lite_site.homework_notebook(versions["student"], BROWSER[source], source.stem)
    assert [c.source for c in site.cells] == [c.source for c in want.cells], (
        "the site's notebook is not the student version with the browser's init cell")
    assert not any("import otter" in c.source for c in site.cells), (
        "otter's client does not install in the browser")
    solution = lite_site.homework_notebook(versions["solution"], BROWSER[source], source.stem)
    solution.metadata["recbias_name"] = f"{source.stem}.ipynb"
    executed = _execute(venv, solution, tmp_path / "drive")
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code), "a code cell did not run"
    failed = [(i, _errors(c)) for i, c in enumerate(code) if _errors(c)]
    assert not failed, f"{len(code) - len(failed)} of {len(code)} cells ran: {failed[:2]}"
    checks = [c for c in code if "grader.check(" in c.source]
    assert len(checks) >= 4
    for cell in checks:
        shown = "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)
        assert "All test cases passed!" in shown, (cell.source, shown[:500])


def test_the_site_holds_the_lite_app_the_wheel_and_the_notebooks():
    assert (LITE / "lab" / "index.html").is_file() and (LITE / "jupyter-lite.json").is_file()
    wheels = sorted(p.name for p in (LITE / "pypi").glob("*.whl"))
    assert wheels == ["recbias_tutorial-0.1.0-py3-none-any.whl"]
    index = json.loads((LITE / "pypi" / "all.json").read_text())
    assert "recbias-tutorial" in index  # the normalised name piplite looks up
    files = sorted(p.name for p in (LITE / "files").glob("*.ipynb"))
    assert files == sorted(f"{p.stem}.ipynb" for p in BROWSER)
    kernels = json.dumps(json.loads((LITE / "jupyter-lite.json").read_text()))
    assert "pyodide" in kernels.lower()
    extensions = sorted(p.name for p in (LITE / "extensions").iterdir())
    assert extensions == ["@jupyterlite", "jupyterlab-myst"]
    for name in ("data/README.md",):
        assert (LITE / "files" / name).is_file()
    assert not list(LITE.rglob("*.ascii")) and not list(LITE.rglob("ydata-*")), "a dataset file"


def test_every_notebook_page_has_its_browser_button():
    import html
    import re

    import pages as book_pages

    marked = lite_site.settings()
    link = re.compile(r'<a\b[^>]*href="([^"]*lite/lab/index\.html[^"]*)"[^>]*>(.*?)</a>', re.S)
    for page in book_pages.notebook_pages():
        value = marked[page.stem]
        found = link.findall((SITE / "book" / f"{page.stem}.html").read_text(encoding="utf-8"))
        assert len(found) == 1, (page.stem, found)
        href, inner = found[0]
        text = html.unescape(re.sub(r"<[^>]+>", " ", inner)).split()
        if isinstance(value, list):
            assert " ".join(text) == "Run in your browser", page.stem
            assert html.unescape(href) == f"../lite/lab/index.html?path={page.stem}.ipynb"
        else:
            assert " ".join(text) == f"Not in the browser: {value}", page.stem


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_chromium_opens_the_lite_app_and_lists_the_notebooks():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        _skip_or_fail("no chromium on this machine")
    sync_api = pytest.importorskip("playwright.sync_api")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(SITE)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=args)
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/lite/lab/index.html")
            page.wait_for_selector(".jp-DirListing-item", timeout=60_000)
            names = page.eval_on_selector_all(
                ".jp-DirListing-item .jp-DirListing-itemText", "els => els.map(e => e.textContent)")
            browser.close()
    finally:
        server.shutdown()
    assert sorted(n for n in names if n.endswith(".ipynb")) == sorted(
        f"{p.stem}.ipynb" for p in BROWSER)
    assert "data" in names
    assert not errors, errors[:3]
