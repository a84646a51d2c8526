"""``{eval}`` inline expressions on the built site, resolved from the glued values.

The chapters quote numbers with MyST's ``{eval}`` role so that the same prose shows them in
JupyterLab (``jupyterlab-myst`` evaluates the expression in the kernel, where
``recbias_tutorial.course.glue_values`` made every published value a variable) and on the
site. myst-nb evaluates ``{eval}`` only in its ``inline`` execution mode, which gives up the
execution cache; here the build keeps ``cache`` mode and resolves each expression from the
values the notebook glued under the same names.

Two forms are accepted, both plain Python that the kernel evaluates the same way:

* a bare name, ``{eval}`ch1_winner``` -> ``str(value)``;
* an f-string of literal text and ``{name}`` / ``{name:spec}`` fields,
  ``{eval}`f"{ch1_gap:.3f}"``` -> ``format(value, spec)``.

Anything else (calls, arithmetic, attributes) or a name that was not glued is a build
warning, which ``-W`` turns into an error.
"""

from __future__ import annotations

import ast

from myst_nb.core.execute.base import EvalNameError, NotebookClientBase
from nbformat import NotebookNode


class _Unresolved(ValueError):
    pass


def _glued_value(glue_data: dict, name: str):
    if name not in glue_data:
        raise _Unresolved(f"{name!r} was not published by a cell (course.glue_values / course.glue)")
    text = glue_data[name].get("data", {}).get("text/plain")
    if text is None:
        raise _Unresolved(f"{name!r} has no text value")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def resolve(expression: str, glue_data: dict) -> str:
    """The text of an ``{eval}`` expression, from the glued values (the two allowed forms)."""
    try:
        tree = ast.parse(expression.strip(), mode="eval").body
    except SyntaxError as exc:
        raise EvalNameError(f"{expression!r} is not a Python expression: {exc}") from None
    if isinstance(tree, ast.Name):
        return str(_glued_value(glue_data, tree.id))
    if not isinstance(tree, ast.JoinedStr):
        raise EvalNameError(expression)
    parts = []
    for part in tree.values:
        if isinstance(part, ast.Constant):
            parts.append(str(part.value))
            continue
        if not (isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name)
                and part.conversion == -1):
            raise EvalNameError(expression)
        spec = ""
        if part.format_spec is not None:
            if not all(isinstance(v, ast.Constant) for v in part.format_spec.values):
                raise EvalNameError(expression)
            spec = "".join(str(v.value) for v in part.format_spec.values)
        parts.append(format(_glued_value(glue_data, part.value.id), spec))
    return "".join(parts)


def _eval_from_glue(self: NotebookClientBase, name: str) -> list[NotebookNode]:
    text = resolve(name, self.glue_data)
    return [NotebookNode(output_type="execute_result", execution_count=None,
                         data={"text/plain": text}, metadata={})]


def setup(app):
    # Only the base class: the inline client (nb_execution_mode: inline) keeps its own
    # kernel evaluation.
    NotebookClientBase.eval_variable = _eval_from_glue
    return {"parallel_read_safe": True, "parallel_write_safe": True}
