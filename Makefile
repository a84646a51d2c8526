# Two commands for users: `make book` and `make test` (see README.md).
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JB     := $(BIN)/jupyter-book build . -W -n --keep-going
# the tests run on every core, one test file per worker (its fixtures are set up once)
XDIST  := -n $(or $(TEST_JOBS),2) --dist loadfile

.PHONY: book student notebooks test pytest site-test lab bench clean clean-cache homework grade replicate report

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@# the Lite kernel's extension is for the browser edition's app only: JupyterLab leaves it out
	$(BIN)/jupyter labextension disable --level=sys_prefix @jupyterlite/pyodide-kernel-extension >/dev/null 2>&1
	touch $(STAMP)

## make book: build the course into _build/html (executes every chapter, cached; the cache is
## forgotten when the package or its stored results change: scripts/book_cache.py)
book: $(STAMP)
	$(BIN)/python scripts/book_cache.py
	$(JB)

## make student: the student edition, without solutions: the site in
## _build/student/source/_build/html and the chapter notebooks (.md and .ipynb) in _build/student/notebooks
student: $(STAMP)
	$(BIN)/python book/_ext/student_edition.py _build/student
	$(BIN)/jupyter-book build _build/student/source -W -n --keep-going
	RECBIAS_REQUIRE_STUDENT=1 $(BIN)/python -m pytest -q tests/test_student_edition.py

## make notebooks: the chapter notebooks the site's launch buttons open (student edition .ipynb,
## an install cell first, requirements.txt for Binder) in _build/student/notebooks: push that
## folder to the repository's notebooks branch (README: "Teaching with the notebooks")
notebooks: $(STAMP)
	$(BIN)/python book/_ext/student_edition.py _build/student

## make test: unit, statistical and doc tests, then the book build, then checks on the built site
## (static checks, and every chapter page in headless Chromium: console, charts, maths, solutions),
## then every chapter opened in JupyterLab and run (Run All) as a student does, then the wheel in a
## fresh virtual environment running every chapter and homework notebook alone in an empty folder,
## then the browser edition: its notebooks under Pyodide's package versions, its Lite app in Chromium
test: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) --ignore=tests/test_site.py --ignore=tests/test_browser.py --ignore=tests/test_lab.py --ignore=tests/test_wheel.py --ignore=tests/test_lessons.py --ignore=tests/test_browser_edition.py
	$(JB)
	RECBIAS_REQUIRE_SITE=1 $(BIN)/python -m pytest -q $(XDIST) tests/test_site.py tests/test_lessons.py tests/test_browser.py tests/test_lab.py tests/test_wheel.py tests/test_browser_edition.py

## make homework: the problem sets of homework/ for otter-grader, in _build/homework: student/<set>/
## (notebook + public checks), autograder/<set>.zip (all tests) and solutions/<set>.ipynb
homework: $(STAMP)
	$(BIN)/python homework/otterhw.py build _build/homework

## make grade SUBMISSIONS=<dir> [TIME_LIMIT=seconds] [JOBS=n]: grade every notebook under <dir>
## offline (no Docker), JOBS at a time (default every core), each notebook's cells stopped after
## TIME_LIMIT s in all (default 180; graded on what finished); writes
## _build/homework/grades/<dir name>/grades.csv and feedback/<student>__<set>.txt
grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=<folder of notebooks>"; exit 2; }
	test -f _build/homework/autograder/hw01_missing_data.zip || $(BIN)/python homework/otterhw.py build _build/homework
	$(BIN)/python homework/otterhw.py grade "$(SUBMISSIONS)" --homework _build/homework $(if $(TIME_LIMIT),--time-limit $(TIME_LIMIT),) $(if $(JOBS),--jobs $(JOBS),)

## make replicate: the replications at the authors' full scale (every core; resumable: run it
## again after an interruption), stored with provenance in recbias_tutorial/results/<paper>/;
## options of scripts/replicate.py in ARGS, e.g. ARGS="--neural-datasets coat yahoo_r3"
replicate: $(STAMP)
	$(BIN)/python scripts/replicate.py $(ARGS)
	$(BIN)/python -m recbias_tutorial.replications.report

## make report: the replication report (each paper's headline numbers, ours beside them, a
## verdict each) from the stored results, to recbias_tutorial/results/report.csv
report: $(STAMP)
	$(BIN)/python -m recbias_tutorial.replications.report

## make bench: every benchmark figure in one run (time, peak memory, ratios to Cornac / argpartition)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_ranking.py
	$(BIN)/python benchmarks/bench_exact_ranks.py
	$(BIN)/python benchmarks/bench_scale.py
	$(BIN)/python benchmarks/bench_distributed.py
	$(BIN)/python benchmarks/bench_jadidinejad.py
	$(BIN)/python benchmarks/bench_homework.py
	$(BIN)/python benchmarks/bench_replicate.py
	$(BIN)/python benchmarks/bench_ncf.py
	$(BIN)/python benchmarks/bench_portable.py

## make lab: open the chapters as notebooks in JupyterLab (jupytext is the default viewer)
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings
lab: $(STAMP)
	mkdir -p $(LAB_SETTINGS)
	printf '%s\n' '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}}' > $(LAB_SETTINGS)/overrides.json
	$(BIN)/jupyter lab book/ $(if $(filter 0,$(shell id -u)),--allow-root,)

clean:
	rm -rf _build

## make clean-cache: forget executed chapters and every cached fitted score matrix
clean-cache:
	rm -rf _build/.jupyter_cache
	if [ -x $(BIN)/python ]; then $(BIN)/python -c "from recbias_tutorial.models import clear_fit_cache; print('removed', clear_fit_cache())"; fi
