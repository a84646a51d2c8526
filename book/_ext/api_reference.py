"""Two small fixes for the API reference (``book/api.md``), which autodoc builds.

* **Top-level names.** The page documents every object once, in the module that is its public
  home (``recbias_tutorial.estimators.snips``). Docstrings may still refer to the flat names
  of ``import recbias_tutorial as rb``, e.g. ``:func:`recbias_tutorial.load_or_standin```.
  For exactly those names (the package's ``_NAMES`` and its registered estimators), a reference that Sphinx cannot resolve
  is retried at ``recbias_tutorial.<module>.<name>``. Any other unresolved reference is left
  alone, so nitpicky mode (``-n``) still reports it.
* **Re-exported constants.** ``data``, ``models``, ``estimators`` and ``carraro2022`` re-export
  constants (``DATASETS``, ``FAMILIES``, ...) whose ``#:`` doc-comments sit in the private
  module that defines them, where autodoc does not look; it would print the docstring of
  ``tuple`` or ``dict`` instead. For a documented constant of the package, the doc-comment is
  taken from the submodule that defines it, and a built-in type's docstring is never shown.
"""

from __future__ import annotations

import importlib
import sys

from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docstrings import prepare_docstring

PACKAGE = "recbias_tutorial"


def _on_missing_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    prefix, _, name = target.rpartition(".")
    if prefix != PACKAGE:
        return None
    module = importlib.import_module(PACKAGE)._home(name)
    if module is None:
        return None
    node["reftarget"] = f"{PACKAGE}.{module}.{name}"
    try:
        return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder,
                                                node["reftype"], node["reftarget"], node,
                                                contnode)
    finally:
        node["reftarget"] = target


def _doc_comment(modname: str, attr: str, obj) -> list[str] | None:
    """The ``#:`` comment of ``attr`` in ``modname`` or in the package module that defines it
    (a submodule such as ``data._loaders``, or a private sibling such as ``_stratification``)."""
    candidates = [modname] + sorted(m for m in sys.modules
                                    if m.startswith(PACKAGE + ".") and m != modname)
    for name in candidates:
        if name != modname and vars(sys.modules[name]).get(attr, object()) is not obj:
            continue
        try:
            analyzer = ModuleAnalyzer.for_module(name)
            analyzer.analyze()
        except Exception:  # no source (or it does not parse): nothing to borrow
            continue
        comment = analyzer.attr_docs.get(("", attr))
        if comment:
            return list(comment)
    return None


def _on_process_docstring(app, what, name, obj, options, lines):
    if what != "data" or not name.startswith(PACKAGE + "."):
        return
    modname, _, attr = name.rpartition(".")
    comment = _doc_comment(modname, attr, obj)
    if comment is not None:
        lines[:] = comment
    elif type(obj).__doc__ and lines == prepare_docstring(type(obj).__doc__):
        lines[:] = []  # the docstring of tuple, dict, ...: not this constant's


def setup(app):
    app.connect("missing-reference", _on_missing_reference)
    app.connect("autodoc-process-docstring", _on_process_docstring, priority=600)  # after napoleon
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
