"""Screening a submission before it is graded (used by ``otterhw.py``).

Each code cell is screened: a cell that reaches for the grader's files or internals
(``open``/``os``/``subprocess``/``pickle``/``otter``/shell escapes/dunder attributes, strings
naming ``tests/``...) is replaced by a ``raise``, and the question it belongs to (the next
``grader.check`` call after it) scores 0. The screen blocks the ordinary ways; grading
untrusted code safely needs a sandbox (``otter grade`` with Docker).
"""

from __future__ import annotations

import ast
import re


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


def question_of(nb: dict, index: int) -> str | None:
    """The question a code cell answers: the next ``grader.check`` call after it."""
    for cell in nb["cells"][index:]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        check = _CHECK.search(src) if cell.get("cell_type") == "code" else None
        if check:
            return check.group(1)
    return None
