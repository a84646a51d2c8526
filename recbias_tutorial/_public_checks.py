"""A homework notebook's public checks without otter-grader (the browser edition).

otter's client cannot be installed in the browser (every otter-grader release needs
``wrapt<2``; Pyodide ships wrapt 2), so the browser edition's homework notebooks open with
``grader = course.public_checks("<set>.ipynb")`` instead of ``otter.Notebook(...)``. It reads
the same public checks from the notebook's own metadata (``metadata.otter.tests``, otter's
OK format: doctest cases) and runs them as otter does, in the calling cell's namespace, so
``grader.check("q1")`` says the same pass or fail. Grading stays otter's (``make grade``).
"""

from __future__ import annotations

import doctest
import json
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one question's public checks: ``passed``, and the failures' report."""

    question: str
    passed: bool
    report: str

    def __repr__(self) -> str:
        if self.passed:
            return f"{self.question} results: All test cases passed!"
        return f"{self.question} results:\n{self.report}"


class PublicChecks:
    """The public checks of one notebook, by question (see :func:`public_checks`)."""

    def __init__(self, notebook: str | Path) -> None:
        path = Path(notebook)
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))["metadata"]["otter"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(f"notebook: {str(path)!r} is not a homework notebook with otter's "
                             f"public checks in its metadata ({type(err).__name__})") from None
        if not meta.get("OK_FORMAT"):
            raise ValueError(f"notebook: {str(path)!r} holds checks in a format other than "
                             "otter's OK format")
        self.notebook = path
        self.tests = dict(meta.get("tests", {}))

    def check(self, question: str, global_env: dict | None = None) -> CheckResult:
        """Run ``question``'s public checks in ``global_env`` (default: the caller's globals)."""
        if question not in self.tests:
            raise ValueError(f"question: {question!r} has no public check here "
                             f"(known: {sorted(self.tests)})")
        env = global_env if global_env is not None else sys._getframe(1).f_globals
        failures = []
        for suite in self.tests[question]["suites"]:
            if suite.get("type") != "doctest":
                raise ValueError(f"question {question!r}: checks of type {suite.get('type')!r}")
            for number, case in enumerate(suite["cases"], 1):
                failed = _run_case(case["code"], env, f"{question}_{number}")
                if failed:
                    failures.append(f"    {question} - {number} result:\n"
                                    f"        \N{CROSS MARK} Test case failed\n{failed}")
        return CheckResult(question, not failures, "\n".join(failures))


def _run_case(code: str, env: dict, name: str) -> str:
    """'' if the doctest ``code`` passes in a copy of ``env``, else its report."""
    lines: list[str] = []
    test = doctest.DocTestParser().get_doctest(code, dict(env), name, None, 0)
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.ELLIPSIS)
    runner.run(test, out=lines.append, clear_globs=False)
    return "".join(lines).replace("\n", "\n        ") if runner.failures else ""


def public_checks(notebook: str | Path) -> PublicChecks:
    """The public checks of a homework notebook (``grader.check("q1")``), without otter.

    Parameters
    ----------
    notebook : str or Path
        The homework notebook (its student version: the checks ride in its metadata).

    Returns
    -------
    PublicChecks
        ``.check(question)`` runs that question's public checks in the caller's namespace
        and returns a result that shows as otter's does.

    Raises
    ------
    ValueError
        If ``notebook`` holds no public checks in otter's format, or ``question`` is unknown.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> meta = {"otter": {"OK_FORMAT": True, "tests": {"q1": {"name": "q1", "points": [0],
    ...         "suites": [{"cases": [{"code": ">>> assert x > 0\\n", "hidden": False,
    ...         "locked": False}], "scored": True, "setup": "", "teardown": "",
    ...         "type": "doctest"}]}}}}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "hw.ipynb"
    >>> _ = path.write_text(json.dumps({"cells": [], "metadata": meta}))
    >>> grader = public_checks(path)
    >>> x = 1
    >>> grader.check("q1")
    q1 results: All test cases passed!
    >>> grader.check("q1", {"x": -1}).passed
    False
    """
    return PublicChecks(notebook)
