"""The browser edition: a JupyterLite site in ``_build/html/lite/``, and a button on every page.

The pages and homework sets that run on the package's core (NumPy, SciPy, pandas, Altair: what
Pyodide ships; no Cornac, no Numba) are listed in ``_config.yml``'s
``sphinx.config.recbias_browser.notebooks`` with ``true``, or with the list of pure-Python
packages they also need, installed from PyPI in the browser (``[powerlaw]``); every other
notebook page is listed with the reason it cannot run there, which its button says. At the end
of an HTML build this extension writes their notebooks (:func:`write_contents`) and builds a
JupyterLite site around
them with the Pyodide kernel and the package's own wheel (:func:`build_site`), offline: the
reader's browser then loads Pyodide and the packages it ships from Pyodide's CDN, and the
package from the site.

Each notebook opens with :func:`setup_cell` (in the browser: install the package from the site,
read data from the ``data/`` folder of the browser's file list); a homework set is its student
version (``homework/otterhw.py``: otter assign, cached in ``_build/.lite/`` by the sources'
sha256) with otter's client, which cannot be installed in Pyodide, replaced by the package's
runner of the same public checks (:func:`recbias_tutorial.course.public_checks`).
``tests/test_browser_edition.py`` runs these notebooks under Pyodide's package versions.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: the repository (also from the student edition's copy of this file, under _build/student)
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
LITE = "lite"  # the site's folder inside the HTML output
CACHE = ROOT / "_build" / ".lite"
DATA_DIR = "data"  # where a reader puts dataset files in the Lite file browser
SETUP_TAG = "browser-setup"
INIT_TAG = "browser-checks"
#: the extensions of the development environment the Lite app keeps (MyST rendering in the
#: markdown cells, the Pyodide kernel); jupytext, widgets and ipylab are left out.
LAB_EXTENSIONS = ("@jupyterlite/pyodide-kernel-extension", "jupyterlab-myst")


def settings(root: Path = ROOT) -> dict[str, list[str] | str]:
    """``{notebook stem: the further packages it needs in the browser (a list, maybe empty),
    or the reason it cannot run there}``, from ``_config.yml``
    (``sphinx.config.recbias_browser.notebooks``), checked."""
    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return checked(config["sphinx"]["config"].get("recbias_browser", {}), root)


def checked(config: dict, root: Path = ROOT) -> dict[str, list[str] | str]:
    """The browser settings, refusing a name that is no page or set, and a page left out."""
    unknown = set(config) - {"notebooks"}
    if unknown:
        raise ValueError(f"recbias_browser: unknown setting(s) {sorted(unknown)}")
    notebooks = dict(config.get("notebooks") or {})
    known = {p.stem for p in _sources(root)}
    missing, extra = sorted(known - set(notebooks)), sorted(set(notebooks) - known)
    if missing or extra:
        raise ValueError(f"recbias_browser.notebooks must name every notebook page and homework "
                         f"set once: missing {missing}, unknown {extra}")
    out: dict[str, list[str] | str] = {}
    for name, value in notebooks.items():
        if value is True:
            value = []
        good = ((isinstance(value, str) and value.strip())
                or (isinstance(value, list) and all(isinstance(v, str) and v for v in value)))
        if not good:
            raise ValueError(f"recbias_browser.notebooks.{name} must be true, a list of the "
                             f"packages it also needs, or the reason it cannot run in the "
                             f"browser, got {value!r}")
        out[name] = value
    return out


def _sources(root: Path = ROOT) -> list[Path]:
    sys.path.insert(0, str(root / "book" / "_ext"))
    import pages

    return (pages.notebook_pages(root) + pages.executed_back_matter(root)
            + sorted((root / "homework").glob("hw[0-9][0-9]_*.md")))


def in_browser(root: Path = ROOT) -> dict[Path, list[str]]:
    """``{source: the further packages it needs}`` of the browser edition (``book/*.md``,
    ``homework/*.md``), in book order."""
    marked = settings(root)
    return {p: marked[p.stem] for p in _sources(root) if isinstance(marked[p.stem], list)}


def setup_cell(packages: list[str] = ()):
    """The first cell of a browser notebook: in Pyodide, install the package from the site (and
    ``packages`` from PyPI) and look for datasets in the file browser's ``data/`` folder;
    elsewhere, nothing."""
    import nbformat

    wanted = ", ".join(f'"{p}"' for p in ["recbias_tutorial", *packages])
    cell = nbformat.v4.new_code_cell(
        "# The browser edition (JupyterLite): install the course's package into this page's\n"
        "# Python. Datasets: put their files in the folder data/<name>/ of the file browser\n"
        "# (e.g. data/coat/train.ascii and test.ascii); without them a page runs on a\n"
        "# simulated stand-in and says so.\n"
        "import os, sys\n"
        "if sys.platform == \"emscripten\":\n"
        "    import piplite\n"
        f"    await piplite.install([{wanted}])\n"
        f"    os.environ.setdefault(\"RECBIAS_DATA\", \"/drive/{DATA_DIR}\")")
    cell.metadata["tags"] = [SETUP_TAG]
    return cell


def checks_cell(name: str):
    """The homework's init cell for the browser: the package runs otter's public checks."""
    import nbformat

    cell = nbformat.v4.new_code_cell(
        "# Initialize the public checks (the browser edition: otter's client does not install\n"
        "# in the browser; the package runs the same checks from this notebook's metadata)\n"
        "from recbias_tutorial.course import public_checks\n"
        f"grader = public_checks(\"{name}.ipynb\")")
    cell.metadata.update(deletable=False, editable=False, tags=[INIT_TAG])
    return cell


def chapter_notebook(source: Path, packages: list[str] = ()):
    """A page as a browser notebook: the full edition as JupyterLab opens it (solutions are
    folded raw cells that Run All skips), the set-up cell first."""
    import jupytext

    notebook = jupytext.read(source)
    notebook.cells.insert(0, setup_cell(packages))
    notebook.metadata.pop("jupytext", None)
    return notebook


def homework_notebook(student: Path, packages: list[str] = (), name: str | None = None):
    """A homework notebook (otter assign's student or solution version) for the browser, saved
    as ``<name>.ipynb`` (default: its own name): otter's init cell replaced."""
    import nbformat

    notebook = nbformat.read(student, as_version=4)
    name = name or student.stem
    init = [i for i, c in enumerate(notebook.cells[:3])
            if c.cell_type == "code" and "otter.Notebook(" in c.source]
    if len(init) != 1:
        raise ValueError(f"{student.name}: no otter init cell among its first cells")
    notebook.cells[init[0]] = checks_cell(name)
    if any("import otter" in c.source for c in notebook.cells if c.cell_type == "code"):
        raise ValueError(f"{student.name}: imports otter beyond its init cell")
    notebook.cells.insert(0, setup_cell(packages))
    return notebook


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def homework_versions(sets: list[Path], cache: Path = CACHE) -> dict[str, dict[str, Path]]:
    """``{set: {"student": notebook, "solution": notebook}}`` built by otter assign, cached in
    ``cache`` by the sha256 of the set's source and of the builder."""
    if not sets:
        return {}
    sys.path.insert(0, str(ROOT / "homework"))
    import otterhw

    def build(source: Path) -> dict[str, Path]:
        key = _digest([source, ROOT / "homework" / "otterhw.py"])
        folder = cache / "homework" / f"{source.stem}-{key}"
        paths = {kind: folder / f"{kind}.ipynb" for kind in ("student", "solution")}
        if not all(p.is_file() for p in paths.values()):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            with tempfile.TemporaryDirectory(dir=folder) as tmp:
                built = otterhw.build(Path(tmp), [source])[source.stem]
                for kind, path in paths.items():
                    shutil.copyfile(built[kind], path)
        return paths

    with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:  # otter
        return dict(zip([s.stem for s in sets], pool.map(build, sets)))  # runs in subprocesses


def write_contents(out: Path, root: Path = ROOT, book: Path | None = None) -> list[Path]:
    """Write the browser edition's notebooks (and the data folder's README) into ``out``; the
    pages are read from ``book`` (default ``root/book``; the student edition's, stripped of its
    solutions, when it builds)."""
    import nbformat

    sources = in_browser(root)
    book = book or root / "book"
    homework = [p for p in sources if p.parent.name == "homework"]
    versions = homework_versions(homework)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for source, packages in sources.items():
        notebook = (homework_notebook(versions[source.stem]["student"], packages,
                                      source.stem) if source in homework
                    else chapter_notebook(book / source.name, packages))
        target = out / f"{source.stem}.ipynb"
        nbformat.write(notebook, target)
        written.append(target)
    (out / DATA_DIR).mkdir(exist_ok=True)
    (out / DATA_DIR / "README.md").write_text(
        "# Datasets for the browser edition\n\n"
        "No dataset ships with the course. Put a dataset's files in a folder of its name here\n"
        "(upload them in the file browser): `coat/train.ascii` and `coat/test.ascii` from the\n"
        "authors' page, `yahoo_r3/ydata-ymusic-rating-study-v1_0-{train,test}.txt` from Yahoo!\n"
        "Webscope. The notebooks read them from here and check every file's sha256; without\n"
        "them a page runs on a simulated stand-in of the same shape and says so.\n",
        encoding="utf-8")
    return written


def wheel(dest: Path, root: Path = ROOT) -> Path:
    """The package's wheel, built from this checkout (no dependencies) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dest),
                    str(root)], check=True, capture_output=True, text=True)
    return next(dest.glob("recbias_tutorial-*.whl"))


def _extensions(dest: Path) -> Path:
    """A folder holding only :data:`LAB_EXTENSIONS` (links into this environment's own)."""
    shutil.rmtree(dest, ignore_errors=True)
    source = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
    for name in LAB_EXTENSIONS:
        if not (source / name).is_dir():
            raise FileNotFoundError(f"the Lite app needs the lab extension {name} "
                                    f"(pip install -e '.[lite]'): not in {source}")
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).symlink_to(source / name, target_is_directory=True)
    return dest


def build_site(html: Path, root: Path = ROOT, book: Path | None = None) -> Path:
    """Build the JupyterLite site into ``html/lite`` (offline); return that folder."""
    work = CACHE / "build"
    shutil.rmtree(work, ignore_errors=True)
    contents = work / "contents"
    write_contents(contents, root, book)
    whl = wheel(work / "wheels", root)
    out = html / LITE
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(Path(sys.executable).with_name("jupyter")), "lite", "build",
           "--contents", str(contents), "--output-dir", str(out), "--piplite-wheels", str(whl),
           "--apps", "lab", "--apps", "notebooks", "--no-sourcemaps",
           "--no-unused-shared-packages", "--ignore-sys-prefix",  # only LAB_EXTENSIONS:
           "--FederatedExtensionAddon.extra_labextensions_path="
           f"{_extensions(work / 'labextensions')}"]
    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"jupyter lite build failed:\n{done.stdout[-3000:]}\n"
                           f"{done.stderr[-3000:]}")
    for junk in out.glob("rspack.config*.js"):  # the app's build recipes, not the app
        junk.unlink()
    return out


def lite_url(pagename: str, notebook: str) -> str:
    """The Lite app opening ``notebook``, relative to the page ``pagename``."""
    up = "../" * pagename.count("/")
    return f"{up}{LITE}/lab/index.html?path={notebook}"


def add_browser_button(app, pagename, templatename, context, doctree):
    if "kernelspec" not in app.env.metadata.get(pagename, {}) or "header_buttons" not in context:
        return
    stem = pagename.rsplit("/", 1)[-1]
    marked = app.config.recbias_browser_marked[stem]
    if isinstance(marked, list):
        entry = {"type": "link", "text": "Run in your browser", "icon": "fas fa-play",
                 "tooltip": "Open this page's notebook in JupyterLite: Python in your browser, "
                            "nothing to install", "url": lite_url(pagename, f"{stem}.ipynb")}
        tooltip = "Run in your browser"
    else:
        entry = {"type": "link", "text": f"Not in the browser: {marked}", "icon": "fas fa-ban",
                 "tooltip": f"Not in the browser edition: {marked}",
                 "url": lite_url(pagename, "")[:-len("?path=")]}
        tooltip = f"Not in the browser: {marked}"
    context["header_buttons"].append({
        "type": "group", "tooltip": tooltip, "icon": "fas fa-globe", "label": "browser-buttons",
        "buttons": [entry]})


def build_finished(app, exception):
    if exception is None and app.builder.format == "html":
        build_site(Path(app.outdir), ROOT, Path(app.srcdir) / "book")  # the student edition's too


def setup(app):
    app.add_config_value("recbias_browser", {}, "html")
    app.add_config_value("recbias_browser_marked", {}, "html")  # set from it, checked
    app.connect("config-inited", lambda app, config: setattr(
        config, "recbias_browser_marked", checked(config.recbias_browser, ROOT)))
    app.connect("html-page-context", add_browser_button, priority=503)
    app.connect("build-finished", build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
