"""The course where it is taught: the wheel in a fresh virtual environment, every notebook alone.

The wheel is built from this checkout and installed into a new virtual environment with only
the package's runtime dependencies and its ``notebook`` extra (a kernel and otter's client),
at the versions of the development environment (``pip freeze`` as constraints, so the pip
cache serves them and the fitted-score cache stays valid). Then every chapter (as ``.ipynb``,
the full edition: solutions are raw cells that Run All skips) and every homework student
notebook is copied alone into an empty folder, as a student uploads it to a JupyterHub where
the instructor pip-installed the package, and executed there with that environment's kernel
(a homework notebook as handed out: only its answers still to write, ``...``, may fail, and
every public check runs from the notebook's own metadata).
The data come offline through the package's data-directory setting (``RECBIAS_DATA``); a
stand-in is an error (``RECBIAS_REQUIRE_DATA=1``). Run by ``make test`` after the book build,
whose run warms the caches the chapters read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import pages as book_pages  # noqa: E402

CHAPTERS = book_pages.notebook_pages()  # the lessons, then the replication pages
HOMEWORK = sorted((ROOT / "homework").glob("hw[0-9][0-9]_*.md"))
REQUIRED = os.environ.get("RECBIAS_REQUIRE_SITE") == "1"

if not os.environ.get("RECBIAS_DATA"):
    if REQUIRED:
        pytest.fail("the notebooks need the data: set RECBIAS_DATA", pytrace=False)
    pytest.skip("RECBIAS_DATA is not set", allow_module_level=True)


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-5000:]}")
    return done


def _student_env(home: Path) -> dict:
    """A student's environment: no checkout on the path, the data offline, no stand-in."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "JUPYTER"))}
    env.update(RECBIAS_DATA=os.environ["RECBIAS_DATA"], RECBIAS_OFFLINE="1",
               RECBIAS_REQUIRE_DATA="1", PATH=f"{home / 'bin'}:{env.get('PATH', '')}",
               VIRTUAL_ENV=str(home), JUPYTER_DATA_DIR=str(home / "share" / "jupyter"))
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """The wheel and its runtime + notebook dependencies in a new virtual environment."""
    tmp = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"),
          str(ROOT)])
    wheel = next((tmp / "dist").glob("recbias_tutorial-*.whl"))
    freeze = _run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"]).stdout
    (tmp / "constraints.txt").write_text(freeze)
    home = tmp / "venv"
    _run([sys.executable, "-m", "venv", str(home)])
    _run([str(home / "bin" / "python"), "-m", "pip", "install", "-q", "-c",
          str(tmp / "constraints.txt"), f"{wheel}[notebook]"])
    return home


def test_the_installed_package_is_the_wheel_with_its_results(venv, tmp_path):
    out = _run([str(venv / "bin" / "python"), "-c",
                "import recbias_tutorial, json; from recbias_tutorial import course, "
                "_stored_results as s; "
                "print(json.dumps([recbias_tutorial.__file__, s.stored_papers(), "
                "s._checkout_root() is None]))"],
               cwd=tmp_path, env=_student_env(venv)).stdout
    path, papers, installed = json.loads(out.strip().splitlines()[-1])
    assert Path(path).is_relative_to(venv) and installed
    assert papers == sorted(p.name for p in (ROOT / "recbias_tutorial" / "results").iterdir()
                            if (p / "provenance.json").is_file())
    freeze = _run([str(venv / "bin" / "python"), "-m", "pip", "freeze"]).stdout.lower()
    for absent in ("jupyter-book", "pytest", "jupyterlab", "hypothesis"):  # dev tools only
        assert f"\n{absent}==" not in f"\n{freeze}", f"{absent} is not a runtime dependency"


def _execute(venv: Path, notebook: Path, folder: Path, *, allow_errors: bool = False) -> dict:
    _run([str(venv / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
          "--ExecutePreprocessor.timeout=900", "--ExecutePreprocessor.kernel_name=python3",
          *(["--allow-errors"] if allow_errors else []),
          "--output", "executed.ipynb", notebook.name], cwd=folder, env=_student_env(venv))
    return json.loads((folder / "executed.ipynb").read_text())


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_every_chapter_runs_alone(venv, chapter, tmp_path):
    import jupytext

    folder = tmp_path / "empty"
    folder.mkdir()
    notebook = folder / f"{chapter.stem}.ipynb"
    jupytext.write(jupytext.read(chapter), notebook)
    executed = _execute(venv, notebook, folder)
    code = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert code and all(c.get("execution_count") for c in code), "a code cell did not run"
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors[:1]
    assert sorted(p.name for p in folder.iterdir()) == sorted(["executed.ipynb", notebook.name])


@pytest.fixture(scope="module")
def student_notebooks() -> dict[str, Path]:
    """otter assign's student versions, as the book build's browser edition cached them
    (``book/_ext/lite_site.py``: built here if the cache lacks them)."""
    import lite_site

    return {name: paths["student"] for name, paths in lite_site.homework_versions(HOMEWORK).items()}


@pytest.mark.parametrize("name", [h.stem for h in HOMEWORK])
def test_every_homework_student_notebook_runs_alone(venv, student_notebooks, name, tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    notebook = folder / f"{name}.ipynb"
    shutil.copyfile(student_notebooks[name], notebook)  # the notebook only: no tests/ beside it
    executed = _execute(venv, notebook, folder, allow_errors=True)
    code = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert all(c.get("execution_count") for c in code), "a code cell did not run"
    checks = 0
    for cell in code:
        source = "".join(cell["source"])
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        # as handed out, only an answer still to write may fail: its `...` placeholder
        assert not errors or "..." in source, (source[:200], errors[0]["evalue"][:300])
        if "grader.check(" in source:  # the public check runs from the notebook's metadata
            checks += 1
            assert cell.get("outputs") and not errors, (source, cell.get("outputs"))
    assert checks >= 4, f"only {checks} public checks ran"
