"""The problem sets of homework/ built and graded with otter-grader, offline.

Each set: the reference solution scores full marks, a blank student notebook scores 0 without
crashing the grader, typical wrong answers lose exactly their question's points, the student
version leaks no solution and no hidden test. On the first set: a cell that raises, a cell
that reads or overwrites the grader's files, and grading twice giving the same CSV.
About 10 s per set (three notebooks graded in one kernel each).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

if importlib.util.find_spec("otter") is None:
    if os.environ.get("RECBIAS_REQUIRE_DATA"):
        raise RuntimeError("otter-grader is not installed: pip install -e '.[homework]'")
    pytest.skip("otter-grader is not installed (pip install -e '.[homework]')",
                allow_module_level=True)

_spec = importlib.util.spec_from_file_location("otterhw", ROOT / "homework" / "otterhw.py")
otterhw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(otterhw)

SETS = [p.stem for p in otterhw.problem_sets()]

# Typical wrong answers: (question, text in the reference answer cell, replacement). Every
# edit of a set goes into one notebook; each must cost exactly its own question's points.
WRONG = {
    "hw01_missing_data": [
        ("q2", 'rb.kl_divergence(coat.mnar["rating"], coat.mar["rating"])',
         'rb.kl_divergence(coat.mar["rating"], coat.mnar["rating"])'),  # KL the wrong way
        ("q3", 'rb.aoa(scores["MostPop"], test, k=10, exclude=train)',
         'rb.aoa(scores["MostPop"], test, k=10)'),  # training pairs not excluded
        ("q5", 'aoa_bias_pop = "overestimates"', 'aoa_bias_pop = "underestimates"'),
    ],
    "hw02_ips_snips": [
        ("q1", 'float(selection_exponent(test, coat.mar, train=train, n_items=coat.n_items)["gamma"])',
         'fit_popularity_exponent(train, coat.n_items)'),  # the wrong gamma (count distribution)
        ("q2", "rb.snips(mostpop, test, p, k=10, exclude=train)",
         "rb.aoa(mostpop, test, k=10, exclude=train)"),  # AOA where SNIPS was asked
        ("q4", "rb.ips(personalised, world.mnar, world.propensity,",
         "rb.ips(personalised, world.mnar, "
         "rb.popularity_propensity(world.mnar, world.n_items, gamma=1.0),"),  # relative P in IPS
    ],
    "hw03_intervened_test_sets": [
        ("q1", 'rb.kl_divergence(split.gt["rating"], split.heldout["rating"], base=2)',
         'rb.kl_divergence(split.heldout["rating"], split.gt["rating"], base=2)'),  # KL reversed
        ("q2", 'strategy="wtd", size=SIZE, train=split.train, mar=split.weights,',
         'strategy="wtd", size=SIZE, train=split.train, mar=split.gt,'),  # weights from D_gt
        ("q5", 'wtd_at_full_size = "equal"', 'wtd_at_full_size = "lower"'),
    ],
    "hw04_simpsons_paradox": [
        ("q3", 'reversal = tuple(found.loc[found["margin"] > 0, ["a", "b"]].iloc[0])',
         'reversal = tuple(found.loc[found["margin"] > 0, ["b", "a"]].iloc[0])'),  # pair swapped
        ("q5", 'float((t1b.loc[m, ["Q1", "Q2"]] * shares).sum())',
         'float(t1b.loc[m, ["Q1", "Q2"]].mean())'),  # strata not weighted by their shares
        ("q6", "strat_table = rb.stratified(personalised, test, world.propensity, n_strata=2, k=10, "
         "exclude=train)", "strat_table = pd.DataFrame({'stratum': ['combined'], 'value': "
         "[rb.aoa(personalised, test, k=10, exclude=train)]})"),  # holdout where stratified asked
    ],
    "hw05_ure": [
        ("q1", "rb.ure_recall(scores, random_test, k=10, exclude=train)",
         "rb.recall_at_kbar(scores, random_test, k_bar=10)"),  # Recall@K-bar where URE was asked
        ("q2", "k=10, exclude=train)  # SOLUTION\ntrue10", "k=10)  # SOLUTION\ntrue10"),
        # ^ training pairs not excluded
    ],
    "hw06_which_evaluation": [
        ("q1", 'recall = summary[summary["metric"] == "recall"].set_index("method")',
         'recall = summary[summary["metric"] == "ndcg"].set_index("method")'),  # nDCG, not recall
        ("q2", 'by_rmse = summary[summary["metric"] == "recall"].sort_values("rmse")',
         'by_rmse = summary[summary["metric"] == "recall"].sort_values("abs_bias")'),
        # ^ the least biased method instead of the most accurate one
        ("q3", 'aoa_error_is = "bias"', 'aoa_error_is = "spread"'),
    ],
}


def _edit(nb: dict, old: str, new: str) -> None:
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code" and old in src:
            cell["source"] = src.replace(old, new)
            return
    raise AssertionError(f"{old!r} is not in the reference notebook")


def _write(nb: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb))
    return path


def _grades(csv_path: Path) -> dict[tuple[str, str], float]:
    with open(csv_path) as f:
        return {(r["student"], r["question"]): float(r["points"]) for r in csv.DictReader(f)}


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("homework")
    return out, otterhw.build(out)


@pytest.fixture(scope="session")
def graded(built, tmp_path_factory):
    """Reference, blank and wrong-answer notebooks of every set, graded once."""
    out, sets = built
    subs = tmp_path_factory.mktemp("submissions")
    for name, paths in sets.items():
        ref = json.loads(paths["solution"].read_text())
        _write(ref, subs / "reference" / f"{name}.ipynb")
        _write(json.loads(paths["student"].read_text()), subs / "blank" / f"{name}.ipynb")
        wrong = json.loads(paths["solution"].read_text())
        for _, old, new in WRONG.get(name, []):
            _edit(wrong, old, new)
        _write(wrong, subs / "wrong" / f"{name}.ipynb")
    csv_path = otterhw.grade(subs, tmp_path_factory.mktemp("grades"), out)
    rows = list(csv.DictReader(open(csv_path)))
    return rows, csv_path.parent


def _by(rows, student, name):
    return {r["question"]: (float(r["points"]), float(r["possible"])) for r in rows
            if r["student"] == student and r["set"] == name}


@pytest.mark.parametrize("name", SETS)
def test_reference_full_marks_blank_zero(graded, name):
    rows, _ = graded
    ref, blank = _by(rows, "reference", name), _by(rows, "blank", name)
    assert 4 <= len(ref) <= 8
    assert all(p == poss > 0 for p, poss in ref.values()), ref
    assert blank.keys() == ref.keys() and all(p == 0 for p, _ in blank.values()), blank


@pytest.mark.parametrize("name", SETS)
def test_wrong_answers_lose_exactly_their_points(graded, name):
    rows, _ = graded
    wrong_qs = {q for q, _, _ in WRONG[name]}
    assert len(wrong_qs) >= 2
    got = _by(rows, "wrong", name)
    for q, (p, poss) in got.items():
        assert p == (0 if q in wrong_qs else poss), (q, got)


def test_feedback_files(graded):
    _, out = graded
    text = (out / "feedback" / f"wrong__{SETS[0]}.txt").read_text()
    assert "not correct (hidden check)" in text and "correct" in text
    assert "assert" not in text and "# HIDDEN" not in text  # no hidden test code


@pytest.mark.parametrize("name", SETS)
def test_student_version_has_no_solution_and_no_hidden_test(built, name):
    out, sets = built
    student = sets[name]["student"].parent
    source = ROOT / "homework" / f"{name}.md"
    assert otterhw.solution_lines(source) and otterhw.hidden_test_lines(source)
    assert otterhw.leaks(student, source) == []
    for path in student.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert "# HIDDEN" not in text and "'hidden': True" not in text, path
            assert "# SOLUTION" not in text and "BEGIN SOLUTION" not in text, path


def test_error_cell_and_tampering_graded_per_question(built, tmp_path):
    """A raising cell costs its question only; reading or overwriting the hidden tests gives 0
    for that question (the cell never runs, so the other questions are graded honestly)."""
    out, sets = built
    name = SETS[0]
    nb = json.loads(sets[name]["solution"].read_text())
    _edit(nb, 'share_mnar = float(', 'share_mnar = 1 / 0 + float(')  # q1 raises
    _edit(nb, 'kl_mnar_mar = rb.kl_divergence(', 'open("tests/q2.py", "w").write('
          '"OK_FORMAT = True\\ntest = {\'name\': \'q2\', \'points\': 1, \'suites\': []}")\n'
          'kl_mnar_mar = rb.kl_divergence(')  # q2 overwrites its hidden test
    _edit(nb, 'aoa_bias_pop = "overestimates"', 'import os\nprint(os.listdir("tests"))\n'
          'aoa_bias_pop = "overestimates"')  # q5 reads the grader's folder
    sub = tmp_path / "subs"
    _write(nb, sub / f"mallory_{name}.ipynb")
    got = _grades(otterhw.grade(sub, tmp_path / "grades", out))
    zero = {"q1", "q2", "q5"}
    ref = _by(list(csv.DictReader(open(tmp_path / "grades" / "grades.csv"))), "mallory", name)
    for (student, q), p in got.items():
        assert p == (0 if q in zero else ref[q][1]), (q, p)
    feedback = (tmp_path / "grades" / "feedback" / f"mallory__{name}.txt").read_text()
    assert "removed" in feedback


def test_screen_flags_grader_access_and_passes_answers():
    bad = ['open("tests/q1.py").read()', "import os", "import otter", "!cat tests/q1.py",
           "grader.results = 1", "x = ().__class__", 'eval("1")', 'p = "tests/q1.py"',
           "from pathlib import Path"]
    for src in bad:
        assert otterhw.screen_cell(src), src
    good = ['x = rb.aoa(s, test, k=10, exclude=train)', 'grader.check("q1")',
            'table = pd.DataFrame({"a": [1]}).T', 'y = "overestimates"']
    for src in good:
        assert otterhw.screen_cell(src) is None, src


def test_grading_twice_gives_the_same_csv(built, graded, tmp_path):
    out, sets = built
    name = SETS[0]
    sub = tmp_path / "subs"
    _write(json.loads(sets[name]["solution"].read_text()), sub / f"ref_{name}.ipynb")
    first = otterhw.grade(sub, tmp_path / "a", out).read_bytes()
    second = otterhw.grade(sub, tmp_path / "b", out).read_bytes()
    assert first == second


def test_a_class_with_a_never_ending_submission_and_a_corrupt_file(built, tmp_path, capsys):
    """A cell that never ends costs its own question (the notebook is stopped at its time
    limit and graded on what finished); a corrupt file is reported, not graded; the normal
    notebooks are graded as alone, two at a time; the CSV, the feedback and the summary say so.
    The limit leaves a normal notebook room on a loaded machine (make test runs two test files
    at once), where 20 s once stopped a reference solution's last cells."""
    out, sets = built
    name = SETS[0]
    ref = json.loads(sets[name]["solution"].read_text())
    endless = json.loads(sets[name]["solution"].read_text())
    _edit(endless, 'kl_mnar_mar = rb.kl_divergence(', 'while True:\n    pass\n'
          'kl_mnar_mar = rb.kl_divergence(')  # q2's answer is never reached
    sub = tmp_path / "subs"
    for student in ("ann", "ben"):
        _write(ref, sub / f"{student}_{name}.ipynb")
    _write(endless, sub / f"loop_{name}.ipynb")
    (sub / f"corrupt_{name}.ipynb").write_text('{"cells": [ not json')
    csv_path = otterhw.grade(sub, tmp_path / "grades", out, time_limit=60, n_jobs=2)
    rows = list(csv.DictReader(open(csv_path)))
    full = _by(rows, "ann", name)
    assert full == _by(rows, "ben", name) and all(p == poss > 0 for p, poss in full.values())
    looped = _by(rows, "loop", name)
    assert looped == {q: (0.0 if q == "q2" else poss, poss) for q, (_, poss) in full.items()}
    status = {r["student"]: r["status"] for r in rows}
    assert status == {"ann": "graded", "ben": "graded", "loop": "timed out"}
    feedback = (tmp_path / "grades" / "feedback" / f"loop__{name}.txt").read_text()
    assert "(timed out)" in feedback and "question q2) was stopped" in feedback
    printed = capsys.readouterr()
    assert "corrupt" in printed.err and "not a notebook" in printed.err
    assert ("4 notebooks: 2 graded, 1 timed out (graded on what finished), 0 not graded, "
            "1 unreadable") in printed.out


def _sleep_with_a_child(seconds):
    import subprocess
    import sys

    if not seconds:
        return seconds
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                             start_new_session=True)  # as a Jupyter kernel is started
    Path(os.environ["CHILD_PID_FILE"]).write_text(str(child.pid))
    import time

    time.sleep(seconds)
    return seconds


def test_the_pool_kills_a_worker_deaf_to_its_limit_with_its_kernel(tmp_path, monkeypatch):
    import psutil

    pool = importlib.import_module("grading_pool")
    monkeypatch.setenv("CHILD_PID_FILE", str(tmp_path / "pid"))
    done = pool.run_pool([("slow", (600,)), ("quick", (0,))], _sleep_with_a_child, n_jobs=2,
                         hard_limit=5)
    assert done["quick"] == ("ok", 0)
    assert done["slow"][0] == "killed" and done["slow"][1] >= 5
    pid = int((tmp_path / "pid").read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_grade_refuses_a_bad_time_limit_or_job_count(built, tmp_path):
    out, _ = built
    for bad in (0, -1, float("nan"), "60"):
        with pytest.raises(ValueError, match="time_limit must be"):
            otterhw.grade(tmp_path, tmp_path / "g", out, time_limit=bad)
    with pytest.raises(ValueError, match="n_jobs must be"):
        otterhw.grade(tmp_path, tmp_path / "g", out, n_jobs=0)


def _pool():
    return importlib.import_module("grading_pool")


def _enter(limit):
    with _pool().time_limited(limit):
        pass


#: Bad grading arguments: (label, call, the argument the message must name). None may start
#: a worker or a kernel (n_jobs=0 used to spin forever).
BAD_GRADING = [
    ("run_pool n_jobs 0", lambda: _pool().run_pool([("a", (1,))], abs, n_jobs=0, hard_limit=5),
     "n_jobs"),
    ("run_pool n_jobs negative", lambda: _pool().run_pool([("a", (1,))], abs, n_jobs=-1,
                                                          hard_limit=5), "n_jobs"),
    ("run_pool n_jobs fractional", lambda: _pool().run_pool([("a", (1,))], abs, n_jobs=1.5,
                                                            hard_limit=5), "n_jobs"),
    ("run_pool n_jobs bool", lambda: _pool().run_pool([("a", (1,))], abs, n_jobs=True,
                                                      hard_limit=5), "n_jobs"),
    ("run_pool hard_limit 0", lambda: _pool().run_pool([("a", (1,))], abs, n_jobs=1,
                                                       hard_limit=0), "hard_limit"),
    ("run_pool hard_limit NaN", lambda: _pool().run_pool([("a", (1,))], abs, n_jobs=1,
                                                         hard_limit=float("nan")), "hard_limit"),
    ("run_pool fn not callable", lambda: _pool().run_pool([("a", (1,))], 3, n_jobs=1,
                                                          hard_limit=5), "fn"),
    ("run_pool a key twice", lambda: _pool().run_pool([("a", (1,)), ("a", (2,))], abs, n_jobs=1,
                                                      hard_limit=5), "tasks"),
    ("run_pool tasks not pairs", lambda: _pool().run_pool([1, 2], abs, n_jobs=1, hard_limit=5),
     "tasks"),
    ("time_limited 0", lambda: _enter(0), "limit"),
    ("time_limited negative", lambda: _enter(-1), "limit"),
    ("time_limited NaN", lambda: _enter(float("nan")), "limit"),
    ("time_limited inf", lambda: _enter(float("inf")), "limit"),
    ("time_limited bool", lambda: _enter(True), "limit"),
    ("time_limited text", lambda: _enter("5"), "limit"),
    ("grade time_limit bool", lambda: otterhw.grade(ROOT, ROOT / "g", ROOT, time_limit=True),
     "time_limit"),
    ("grade time_limit inf", lambda: otterhw.grade(ROOT, ROOT / "g", ROOT,
                                                   time_limit=float("inf")), "time_limit"),
    ("grade n_jobs bool", lambda: otterhw.grade(ROOT, ROOT / "g", ROOT, n_jobs=True), "n_jobs"),
    ("grade n_jobs negative", lambda: otterhw.grade(ROOT, ROOT / "g", ROOT, n_jobs=-2), "n_jobs"),
    ("grade_one time_limit 0", lambda: otterhw.grade_one(ROOT / "x.ipynb", ROOT / "x.zip",
                                                         time_limit=0), "time_limit"),
    ("grade_one time_limit bool", lambda: otterhw.grade_one(ROOT / "x.ipynb", ROOT / "x.zip",
                                                            time_limit=True), "time_limit"),
]


@pytest.mark.parametrize("label, call, argument", BAD_GRADING, ids=[c[0] for c in BAD_GRADING])
def test_bad_grading_arguments_are_refused_before_any_work(label, call, argument):
    import nbconvert.preprocessors as pre

    before = pre.ExecutePreprocessor
    with pytest.raises(ValueError) as info:
        call()
    assert argument in str(info.value), f"{label}: {info.value}"
    assert pre.ExecutePreprocessor is before  # no time limit left installed
