"""Build and grade the problem sets with otter-grader, offline (no Docker, no network).

    python homework/otterhw.py build [OUT]                 # make homework (OUT: _build/homework)
    python homework/otterhw.py grade SUBMISSIONS [--out DIR] [--homework OUT]   # make grade

**build**: each ``homework/hwNN_*.md`` (a jupytext MyST notebook in otter's assign format) is
converted to ``.ipynb`` and passed to ``otter assign``. Written under OUT:

* ``student/<set>/<set>.ipynb`` -- to hand out: no solution, no hidden test; its public checks
  ride in its metadata (``tests: files: false``), so the notebook runs alone in any folder
  where the package is installed; ``grader.check("q1")`` runs the public checks of a question;
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
question scores 0 for the whole set (``screening.py``). Each notebook's cells may run
``--time-limit`` seconds in all (default 180): the cell running then is interrupted and the
notebook is graded on what finished; notebooks are graded ``--jobs`` at a time (default every
core; ``grading_pool.py``). Written: ``grades.csv`` (student, set, question, points, possible,
total, status: graded / timed out / not graded; sorted, so that grading twice gives the same
file) and ``feedback/<student>__<set>.txt``; printed: a summary (graded, timed out, not
graded, unreadable). Hidden tests' code is never copied into the feedback.
The screen blocks the ordinary ways; grading untrusted code safely needs a sandbox
(``otter grade`` with Docker).
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(HOMEWORK))  # its sibling grading_pool, however this file is loaded
from grading_pool import (DEFAULT_TIME_LIMIT, TEST_ALLOWANCE, default_jobs,  # noqa: E402
                          mark_cells, run_pool, time_limited)
from screening import _INIT, question_of, screen_cell, screen_notebook  # noqa: E402,F401

from recbias_tutorial._validation import check_int, check_real  # noqa: E402

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
        notebook = json.loads(nb.read_text())
        plain += "\n" + "\n".join("".join(c["source"]) for c in notebook["cells"])
        plain += "\n" + "\n".join(_strings(notebook.get("metadata", {})))  # the public checks
    found = [f"solution: {s}" for s in sorted(solution_lines(source)) if s in plain]
    found += [f"hidden test: {s}" for s in sorted(hidden_test_lines(source)) if s in plain]
    return found


def _strings(value) -> list[str]:
    """Every string inside nested dicts and lists (a notebook's metadata)."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [s for item in items for s in _strings(item)]


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


def _check_time_limit(time_limit) -> float:
    """A positive number of seconds (a bool is not one)."""
    return check_real(time_limit, "time_limit", low=0.0, low_open=True)


def grade_one(path: Path, zip_path: Path, time_limit: float = DEFAULT_TIME_LIMIT
              ) -> tuple[dict, list[str], str]:
    """Grade one notebook: {question: (points, possible, note)}, general notes, and the status
    ("graded", or "timed out" when cells were stopped at ``time_limit`` seconds)."""
    from otter.api import grade_submission

    time_limit = _check_time_limit(time_limit)
    nb = json.loads(Path(path).read_text())
    nb, zero, outside = screen_notebook(nb)
    mark_cells(nb)
    questions = _questions(zip_path)
    notes = []
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        sub = Path(tmp) / Path(path).name
        sub.write_text(json.dumps(nb))
        sink = io.StringIO()
        with redirect_stdout(sink), redirect_stderr(sink), time_limited(time_limit) as clock:
            try:
                res = grade_submission(str(sub), str(zip_path), quiet=True)
                err = None
            except Exception as exc:  # noqa: BLE001 - a broken notebook scores 0, never crashes
                res, err = None, exc
    if err is not None:
        notes.append(f"the notebook could not be graded: {type(err).__name__}: {err}")
    if clock.stopped:
        where = ", ".join(f"cell {i + 1}" + (f" (question {q})" if (q := question_of(nb, i))
                                               else "") for i in clock.stopped)
        notes.append(f"time limit: the notebook's cells may run {_num(time_limit)} s in all; "
                     f"{where} was stopped there (KeyboardInterrupt) and the answers are graded "
                     "on what finished")
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
    return out, notes, ("timed out" if clock.stopped else "graded")


def _not_graded(zip_path: Path, why: str) -> tuple[dict, list[str], str]:
    return ({q: (0.0, _possible(zip_path, q), "not graded") for q in _questions(zip_path)},
            [why], "not graded")


def _possible(zip_path: Path, q: str) -> float:
    with zipfile.ZipFile(zip_path) as z:
        text = z.read(f"tests/{q}.py").decode()
    m = re.search(r"'points':\s*(\[[^\]]*\]|[\d.]+)", text)
    val = json.loads(m.group(1)) if m else 1
    return float(sum(val) if isinstance(val, list) else val)


def grade(submissions: Path, out: Path, homework: Path = DEFAULT_OUT, *,
          time_limit: float = DEFAULT_TIME_LIMIT, n_jobs: int | None = None) -> Path:
    """Grade every notebook under ``submissions``; write ``grades.csv`` and feedback files.

    Each notebook's cells may run ``time_limit`` seconds in all (then it is graded on what
    finished); ``n_jobs`` notebooks are graded at a time (default: every core). Prints a
    summary: graded, timed out, not graded, unreadable."""
    submissions, out, homework = Path(submissions), Path(out), Path(homework)
    time_limit = _check_time_limit(time_limit)
    n_jobs = default_jobs() if n_jobs is None else check_int(n_jobs, "n_jobs", low=1)
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
    tasks, who, unreadable = [], {}, []
    for path in notebooks:
        try:
            nb = json.loads(path.read_text())
            if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
                raise ValueError("no list of cells")
        except (OSError, ValueError) as exc:
            unreadable.append(f"{path}: not a notebook ({exc})")
            continue
        set_name = set_of(nb, path, list(zips))
        if set_name is None:
            unreadable.append(f"{path}: no problem set recognised")
            continue
        who[path] = (student_of(path, set_name), set_name)
        tasks.append((path, (path, zips[set_name], time_limit)))
    import nbconvert.preprocessors  # noqa: F401 - imported once here, inherited by each fork
    import otter.api  # noqa: F401

    hard = time_limit + 2 * TEST_ALLOWANCE + 60  # only a notebook deaf to interrupts gets here
    done = run_pool(tasks, grade_one, n_jobs=n_jobs, hard_limit=hard)
    counts = {"graded": 0, "timed out": 0, "not graded": 0}
    for path, _ in tasks:
        student, set_name = who[path]
        status, value = done[path]
        if status == "ok":
            results, notes, state = value
        elif status == "killed":
            results, notes, state = _not_graded(zips[set_name], (
                f"stopped after {value} s: the notebook did not stop at its time limit of "
                f"{_num(time_limit)} s when interrupted, so nothing could be graded"))
        else:
            results, notes, state = _not_graded(zips[set_name],
                                                f"the notebook could not be graded: {value}")
        counts[state] += 1
        total = sum(p for p, _, _ in results.values())
        possible = sum(p for _, p, _ in results.values())
        for q, (points, poss, _) in results.items():
            rows.append({"student": student, "set": set_name, "question": q,
                         "points": _num(points), "possible": _num(poss), "total": _num(total),
                         "status": state})
        lines = [f"{set_name} - {student}: {_num(total)} / {_num(possible)} ({state})", ""]
        lines += [f"{q}: {_num(p)} / {_num(poss)}  {note}" for q, (p, poss, note) in results.items()]
        lines += [""] + notes if notes else []
        (feedback_dir / f"{student}__{set_name}.txt").write_text("\n".join(lines) + "\n")
        print(f"{path}: {set_name} {student} {_num(total)}/{_num(possible)} ({state})")
    rows.sort(key=lambda r: (r["student"], r["set"], len(r["question"]), r["question"]))
    csv_path = out / "grades.csv"
    with csv_path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["student", "set", "question", "points", "possible",
                                          "total", "status"])
        w.writeheader()
        w.writerows(rows)
    for line in unreadable:
        print(f"skipped {line}", file=sys.stderr)
    print(f"wrote {csv_path} ({len(rows)} rows) and {feedback_dir}/")
    print(f"summary: {len(notebooks)} notebooks: {counts['graded']} graded, "
          f"{counts['timed out']} timed out (graded on what finished), {counts['not graded']} "
          f"not graded, {len(unreadable)} unreadable; time limit {_num(time_limit)} s, "
          f"{n_jobs} at a time")
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
    g.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT,
                   help="seconds a notebook's cells may run in all; then it is graded on what "
                        f"finished (default {DEFAULT_TIME_LIMIT})")
    g.add_argument("--jobs", type=int, default=None, help="notebooks at a time (default: every core)")
    args = parser.parse_args(argv)
    if args.cmd == "build":
        build(Path(args.out))
    else:
        out = args.out or str(Path(args.homework) / "grades" / Path(args.submissions).resolve().name)
        grade(Path(args.submissions), Path(out), Path(args.homework),
              time_limit=args.time_limit, n_jobs=args.jobs)


if __name__ == "__main__":
    main()
