"""Build and grade the problem sets with otter-grader, offline (no Docker, no network).

    python homework/otterhw.py build [OUT]                 # make homework (OUT: _build/homework)
    python homework/otterhw.py grade SUBMISSIONS [--out DIR] [--homework OUT]   # make grade

**build**: each ``homework/hwNN_*.md`` (a jupytext MyST notebook in otter's assign format) is
converted to ``.ipynb`` and passed to ``otter assign``. Written under OUT:

* ``student/<set>/<set>.ipynb`` and ``student/<set>/tests/`` -- to hand out: no solution,
  no hidden test; ``grader.check("q1")`` runs the public checks of a question;
* ``autograder/<set>.zip`` -- otter's autograder (all tests, public and hidden);
* ``solutions/<set>.ipynb`` -- the instructor's notebook with the solutions.

The build then searches every student notebook and its public tests for any solution line
and any hidden test line, and fails if one is found.

**grade**: every ``*.ipynb`` under SUBMISSIONS (recursively, sorted) is graded with
``otter.api.grade_submission`` (otter's non-containerised grading: the notebook runs in a
local kernel, then otter runs every test of its set). The set of a notebook is read from its
otter init cell (``otter.Notebook("hw01_missing_data.ipynb")``) or its file name; the student
is the file's stem (minus the set name), or its folder's name when the file is named like the
set. Before a notebook runs, each code cell is screened: a cell that reaches for the grader's
files or internals (``open``/``os``/``subprocess``/``pickle``/``otter``/shell escapes/dunder
attributes, strings naming ``tests/``...) is replaced by a ``raise`` and the question it
belongs to (the next ``grader.check`` call after it) scores 0; such a cell outside every
question scores 0 for the whole set. Written: ``grades.csv`` (student, set, question, points,
possible, total; sorted, so that grading twice gives the same file) and
``feedback/<student>__<set>.txt``. Hidden tests' code is never copied into the feedback.
The screen blocks the ordinary ways; grading untrusted code safely needs a sandbox
(``otter grade`` with Docker).
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

HOMEWORK = Path(__file__).resolve().parent
ROOT = HOMEWORK.parent
DEFAULT_OUT = ROOT / "_build" / "homework"
SET_GLOB = "hw[0-9][0-9]_*.md"

# ---------------------------------------------------------------------------------------- build


def problem_sets() -> list[Path]:
    """The source notebooks, in order."""
    return sorted(HOMEWORK.glob(SET_GLOB))


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")


def _bin(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    return str(exe) if exe.exists() else name


def solution_lines(source: Path) -> set[str]:
    """Stripped lines of the source that are solutions (marked ``# SOLUTION`` or inside
    ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` of a code cell)."""
    out, inside, in_code = set(), False, False
    for line in source.read_text().splitlines():
        s = line.strip()
        if s.startswith("```{code-cell}"):
            in_code = True
            continue
        if s == "```":
            in_code = False
            continue
        if not in_code:
            continue
        if re.match(r"#\s*BEGIN SOLUTION", s):
            inside = True
            continue
        if re.match(r"#\s*END SOLUTION", s):
            inside = False
            continue
        if inside or s.endswith("# SOLUTION"):
            body = s.removesuffix("# SOLUTION").strip()
            if len(body) > 12:  # short lines (e.g. "table") are not evidence
                out.add(body)
    return out


def hidden_test_lines(source: Path) -> set[str]:
    """Stripped lines of the hidden test cells (first line ``# HIDDEN``)."""
    out = set()
    for cell in re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", source.read_text(), flags=re.S):
        lines = cell.splitlines()
        if lines and lines[0].strip().upper() == "# HIDDEN":
            out |= {s.strip() for s in lines[1:] if len(s.strip()) > 12
                    and not s.strip().startswith(("import ", "from "))}
    return out


def leaks(student_dir: Path, source: Path) -> list[str]:
    """Solution or hidden-test lines found in a student folder (notebook and public tests)."""
    text = "\n".join(p.read_text() for p in sorted(student_dir.rglob("*")) if p.is_file()
                     and p.suffix in {".ipynb", ".py"})
    # compare on the notebook's JSON-decoded cell sources and the raw test files
    plain = text
    for nb in student_dir.glob("*.ipynb"):
        cells = json.loads(nb.read_text())["cells"]
        plain += "\n" + "\n".join("".join(c["source"]) for c in cells)
    found = [f"solution: {s}" for s in sorted(solution_lines(source)) if s in plain]
    found += [f"hidden test: {s}" for s in sorted(hidden_test_lines(source)) if s in plain]
    return found


def build(out: Path = DEFAULT_OUT, sets: list[Path] | None = None) -> dict[str, dict]:
    """Build student notebooks, autograder zips and solutions for every set under ``out``."""
    out = Path(out)
    sets = problem_sets() if sets is None else sets
    built = {}
    for source in sets:
        name = source.stem
        with tempfile.TemporaryDirectory(prefix=f"{name}-") as tmp:
            tmp = Path(tmp)
            _run([_bin("jupytext"), "--quiet", "--to", "ipynb", "-o", str(tmp / f"{name}.ipynb"),
                  str(source)], ROOT)
            _run([_bin("otter"), "assign", "--no-pdfs", f"{name}.ipynb", "dist"], tmp)
            dist = tmp / "dist"
            student = out / "student" / name
            shutil.rmtree(student, ignore_errors=True)
            shutil.copytree(dist / "student", student)
            (out / "autograder").mkdir(parents=True, exist_ok=True)
            (out / "solutions").mkdir(parents=True, exist_ok=True)
            zips = sorted((dist / "autograder").glob("*.zip"))
            if len(zips) != 1:
                raise RuntimeError(f"{name}: otter assign wrote {len(zips)} autograder zips")
            shutil.copyfile(zips[0], out / "autograder" / f"{name}.zip")
            shutil.copyfile(dist / "autograder" / f"{name}.ipynb",
                            out / "solutions" / f"{name}.ipynb")
        found = leaks(student, source)
        if found:
            raise RuntimeError(f"{name}: the student version leaks:\n  " + "\n  ".join(found))
        built[name] = {"student": student / f"{name}.ipynb",
                       "autograder": out / "autograder" / f"{name}.zip",
                       "solution": out / "solutions" / f"{name}.ipynb"}
        print(f"built {name}: student, autograder, solution")
    return built


# ---------------------------------------------------------------------------------------- screen

_BAD_MODULES = {"os", "sys", "subprocess", "shutil", "pathlib", "glob", "pickle", "dill",
                "importlib", "builtins", "io", "ctypes", "inspect", "gc", "otter", "socket",
                "zipfile", "tempfile", "runpy", "code", "multiprocessing", "signal", "marshal",
                "fileinput", "IPython"}
_BAD_CALLS = {"open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars",
              "getattr", "setattr", "delattr", "get_ipython", "breakpoint", "input"}
_BAD_NAMES = {"Checker", "GradingResults", "Notebook", "__builtins__", "__loader__",
              "__spec__", "otter"}
_BAD_STRINGS = re.compile(r"tests?[/\\]|\.pkl|\.zip|autograder|otter|\.\.[/\\]|^/", re.I)


def screen_cell(source: str) -> str | None:
    """Why a code cell must not run (it reaches for the grader), or None."""
    lines = source.splitlines()
    if any(s.lstrip().startswith(("!", "%")) for s in lines):
        return "shell escapes and magics are not allowed in answers"
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None  # it cannot run anyway: its question fails on its own
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for m in mods:
                if m.split(".")[0] in _BAD_MODULES:
                    return f"imports {m}"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in _BAD_CALLS:
            return f"calls {node.func.id}()"
        elif isinstance(node, ast.Name) and node.id in _BAD_NAMES:
            return f"uses {node.id}"
        elif isinstance(node, ast.Name) and node.id == "grader" and not isinstance(node.ctx, ast.Load):
            return "rebinds grader"
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("__") or node.attr in {"open", "write_text", "write_bytes",
                                                           "read_text", "read_bytes", "unlink",
                                                           "system", "popen"}:
                return f"uses .{node.attr}"
            if isinstance(node.value, ast.Name) and node.value.id == "grader" \
                    and node.attr not in {"check", "check_all"}:
                return f"uses grader.{node.attr}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and _BAD_STRINGS.search(node.value):
            return f"names a grading path ({node.value[:40]!r})"
    return None


_CHECK = re.compile(r"""grader\.check\(\s*["'](\w+)["']\s*\)""")
_INIT = re.compile(r"""otter\.Notebook\(\s*["']([\w.-]+)\.ipynb["']""")


def screen_notebook(nb: dict) -> tuple[dict, dict[str, str], list[str]]:
    """Neutralise cells that reach for the grader.

    Returns the cleaned notebook, ``{question: reason}`` for questions that score 0, and the
    reasons found outside every question (the whole set scores 0)."""
    cells = nb["cells"]
    pending: list[tuple[int, str]] = []  # (cell index, reason) waiting for their question
    zero: dict[str, str] = {}
    for idx, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if idx < 3 and _INIT.search(src) and "grader = otter.Notebook" in src:
            continue  # otter's own init cell
        check = _CHECK.fullmatch(src.strip())
        if check:
            for _, reason in pending:
                zero.setdefault(check.group(1), reason)
            pending = []
            continue
        reason = screen_cell(src)
        if reason:
            cell["source"] = (f"raise RuntimeError('cell removed by the grader: {reason}')")
            cell["outputs"] = []
            pending.append((idx, reason))
    return nb, zero, [r for _, r in pending]


# ---------------------------------------------------------------------------------------- grade


def set_of(nb: dict, path: Path, known: list[str]) -> str | None:
    for cell in nb.get("cells", [])[:3]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        m = _INIT.search(src)
        if m and m.group(1) in known:
            return m.group(1)
    return next((k for k in known if k in path.name), None)


def student_of(path: Path, set_name: str | None) -> str:
    stem = path.stem
    if set_name and stem == set_name:
        return path.parent.name
    if set_name:
        stem = stem.replace(set_name, "").strip("_- .") or path.parent.name
    return stem


def _questions(zip_path: Path) -> list[str]:
    with zipfile.ZipFile(zip_path) as z:
        names = [Path(n).stem for n in z.namelist() if n.startswith("tests/") and n.endswith(".py")]
    return sorted(names, key=lambda q: (len(q), q))


def grade_one(path: Path, zip_path: Path) -> tuple[dict, list[str]]:
    """Grade one notebook: {question: (points, possible, note)} and general notes."""
    from otter.api import grade_submission

    nb = json.loads(Path(path).read_text())
    nb, zero, outside = screen_notebook(nb)
    questions = _questions(zip_path)
    notes = []
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        sub = Path(tmp) / Path(path).name
        sub.write_text(json.dumps(nb))
        sink = io.StringIO()
        with redirect_stdout(sink), redirect_stderr(sink):
            try:
                res = grade_submission(str(sub), str(zip_path), quiet=True)
                err = None
            except Exception as exc:  # noqa: BLE001 - a broken notebook scores 0, never crashes
                res, err = None, exc
    if err is not None:
        notes.append(f"the notebook could not be graded: {type(err).__name__}: {err}")
    if outside:
        notes.append("a cell outside the questions reached for the grader "
                     f"({outside[0]}): every question scores 0")
    out = {}
    for q in questions:
        tf = None
        if res is not None:
            try:
                tf = res.get_result(q)
            except Exception:  # noqa: BLE001 - missing result: 0 points
                tf = None
        possible = float(tf.possible) if tf is not None else 0.0
        if tf is None:
            possible = _possible(zip_path, q)
            out[q] = (0.0, possible, "not graded")
            continue
        score = float(tf.score)
        if q in zero or outside:
            why = zero.get(q) or outside[0]
            out[q] = (0.0, possible, f"0: a cell of this answer was removed ({why})")
            continue
        if score >= possible:
            note = "correct"
        else:
            failed = [r for r in tf.test_case_results if not r.passed]
            if any(not r.test_case.hidden for r in failed):
                note = "the public check fails: run grader.check(\"%s\") and read its message" % q
            else:
                note = "the answer has the right form but is not correct (hidden check)"
        out[q] = (score, possible, note)
    return out, notes


def _possible(zip_path: Path, q: str) -> float:
    with zipfile.ZipFile(zip_path) as z:
        text = z.read(f"tests/{q}.py").decode()
    m = re.search(r"'points':\s*(\[[^\]]*\]|[\d.]+)", text)
    val = json.loads(m.group(1)) if m else 1
    return float(sum(val) if isinstance(val, list) else val)


def grade(submissions: Path, out: Path, homework: Path = DEFAULT_OUT) -> Path:
    """Grade every notebook under ``submissions``; write ``grades.csv`` and feedback files."""
    submissions, out, homework = Path(submissions), Path(out), Path(homework)
    zips = {p.stem: p for p in sorted((homework / "autograder").glob("*.zip"))}
    if not zips:
        raise SystemExit(f"no autograder in {homework / 'autograder'}: run `make homework` first")
    notebooks = sorted(p for p in submissions.rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts)
    if not notebooks:
        raise SystemExit(f"no notebook (*.ipynb) under {submissions}")
    rows, feedback_dir = [], out / "feedback"
    shutil.rmtree(feedback_dir, ignore_errors=True)
    feedback_dir.mkdir(parents=True)
    for path in notebooks:
        try:
            nb = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            print(f"skipped {path}: not a notebook ({exc})", file=sys.stderr)
            continue
        set_name = set_of(nb, path, list(zips))
        student = student_of(path, set_name)
        if set_name is None:
            print(f"skipped {path}: no problem set recognised", file=sys.stderr)
            continue
        results, notes = grade_one(path, zips[set_name])
        total = sum(p for p, _, _ in results.values())
        possible = sum(p for _, p, _ in results.values())
        for q, (points, poss, _) in results.items():
            rows.append({"student": student, "set": set_name, "question": q,
                         "points": _num(points), "possible": _num(poss), "total": _num(total)})
        lines = [f"{set_name} - {student}: {_num(total)} / {_num(possible)}", ""]
        lines += [f"{q}: {_num(p)} / {_num(poss)}  {note}" for q, (p, poss, note) in results.items()]
        lines += [""] + notes if notes else []
        (feedback_dir / f"{student}__{set_name}.txt").write_text("\n".join(lines) + "\n")
        print(f"{path}: {set_name} {student} {_num(total)}/{_num(possible)}")
    rows.sort(key=lambda r: (r["student"], r["set"], len(r["question"]), r["question"]))
    csv_path = out / "grades.csv"
    with csv_path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["student", "set", "question", "points", "possible",
                                          "total"])
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {csv_path} ({len(rows)} rows) and {feedback_dir}/")
    return csv_path


def _num(x: float) -> str:
    return f"{x:g}"


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="student notebooks, autograder zips and solutions")
    b.add_argument("out", nargs="?", default=str(DEFAULT_OUT))
    g = sub.add_parser("grade", help="grade every notebook in a folder")
    g.add_argument("submissions")
    g.add_argument("--out", default=None, help="default: _build/homework/grades/<folder name>")
    g.add_argument("--homework", default=str(DEFAULT_OUT), help="what `build` wrote")
    args = parser.parse_args(argv)
    if args.cmd == "build":
        build(Path(args.out))
    else:
        out = args.out or str(Path(args.homework) / "grades" / Path(args.submissions).resolve().name)
        grade(Path(args.submissions), Path(out), Path(args.homework))


if __name__ == "__main__":
    main()
