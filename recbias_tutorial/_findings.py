"""Stated findings, checked against the numbers they rest on (the kernels behind ``course``).

A chapter states a finding in three parts: the numbers it rests on, the condition that makes
it true (a Python expression over those numbers) and the words the page shows. The words are
formatted from the same numbers, so the sentence a reader sees and the check cannot drift
apart; a condition that no longer holds raises :class:`FindingFailed`, which fails the book
build (a cell error under ``jupyter-book build -W``) with the finding's name and numbers.

The replication report grades each headline number on one fixed scale (:data:`VERDICTS`),
against a declared margin, with the interval made for its kind of number
(:mod:`recbias_tutorial._verdicts`, re-exported here): a paper value from one run, a mean over
seeds, a contrast, Kendall's τ over a few models.
"""

from __future__ import annotations

import ast
import cmath
import numbers
import string
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._validation import check_identifier
from ._tau_verdict import TauVerdict, tau_verdict  # noqa: F401 (re-exported)
from ._verdicts import (VERDICTS, ContrastVerdict, Verdict,  # noqa: F401 (re-exported)
                        contrast_verdict, mean_verdict, single_run_verdict, verdict)


#: What a condition may call besides the finding's own numbers.
_ALLOWED_CALLS = {"abs": abs, "min": min, "max": max, "all": all, "any": any, "len": len,
                  "sum": sum, "round": round, "set": set, "sorted": sorted}
_ALLOWED_NODES = (ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call,
                  ast.Name, ast.Load, ast.Constant, ast.Tuple, ast.List, ast.Subscript,
                  ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.IfExp, ast.Slice)

#: Every finding checked in this kernel, in order: name -> (words, condition, numbers).
CHECKED: dict[str, tuple[str, str, dict]] = {}
#: What each name was stated with: name -> (text, condition, cell id or None).
_STATED: dict[str, tuple[str, str, str | None]] = {}


#: The takeaways a page stated before its first section: name -> words. Each is confirmed
#: later in the page by a check on the numbers it rests on (:func:`confirm_takeaway`).
TAKEAWAYS: dict[str, str] = {}
#: The takeaways confirmed so far in this kernel.
CONFIRMED: set[str] = set()


class FindingFailed(AssertionError):
    """A finding a page states no longer holds for the numbers it rests on."""


def _plain(value: Any) -> Any:
    """A Python scalar for a numpy scalar (glued text then formats like the prose expects)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def _number_text(numbers_: Mapping[str, Any]) -> str:
    def show(v: Any) -> str:
        return f"{v:.4g}" if isinstance(v, float) else repr(v)
    return ", ".join(f"{k} = {show(v)}" for k, v in numbers_.items())


def _parse_condition(condition: str, names: set[str]) -> ast.Expression:
    if not isinstance(condition, str) or not condition.strip():
        raise ValueError(f"holds must be a non-empty Python expression, got {condition!r}")
    try:
        tree = ast.parse(condition.strip(), mode="eval")
    except SyntaxError as err:
        raise ValueError(f"holds: {condition!r} is not a Python expression ({err.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise ValueError(f"holds: {condition!r} uses {type(node).__name__}; a condition "
                             "compares the finding's numbers (and abs, min, max, all, any, len, "
                             "sum, round, set, sorted)")
        if isinstance(node, ast.Name) and node.id not in names and node.id not in _ALLOWED_CALLS:
            raise ValueError(f"holds: {condition!r} names {node.id!r}, which is not one of the "
                             f"finding's numbers ({', '.join(sorted(names)) or 'none'})")
    return tree


def _non_finite(value: Any) -> Any:
    """A NaN or infinite number inside ``value`` (a number, or a list, tuple, set, mapping or
    array of them, at any depth), or None when every number in it is finite."""
    if hasattr(value, "to_numpy") and not isinstance(value, (str, bytes)):
        value = value.to_numpy()  # a pandas Series or Index
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            bad = ~np.isfinite(value)
            return value[bad].flat[0] if bad.any() else None
        return None if value.dtype != object else _non_finite(value.tolist())
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return next((b for b in map(_non_finite, value) if b is not None), None)
    value = _plain(value)
    if isinstance(value, (float, complex)) and not cmath.isfinite(value):
        return value
    return None


def _check_numbers(numbers_: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in numbers_.items():
        check_identifier(key, f"numbers: the number name {key!r}")
        if key in _ALLOWED_CALLS:
            raise ValueError(f"numbers: {key!r} is a function conditions may call; give the "
                             "number another name")
        value = _plain(value)
        bad = _non_finite(value)
        if bad is not None:
            what = f"is {bad}" if bad is value else f"holds {bad} (inside it)"
            raise ValueError(f"numbers: {key} {what}; a finding rests on finite numbers")
        if isinstance(value, (list, tuple)):
            value = type(value)(_plain(v) for v in value)
        out[key] = value
    return out


def _text_fields(text: str) -> set[str]:
    try:
        return {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(text) if f}
    except ValueError as err:
        raise ValueError(f"text: {text!r} is not a format string ({err})") from None


def check_finding(name: str, text: str, *, holds: str, **numbers_: Any) -> str:
    """Check a finding against its numbers and return its words; raise if it no longer holds.

    Parameters
    ----------
    name : str
        The finding's name, a Python identifier (``"ch2_snips_cut"``); the words are
        published under it, and each number under ``f"{name}_{key}"``.
    text : str
        The words the page shows, a format string over the numbers
        (``"raises the MAE for {n_worse} of the four models"``).
    holds : str
        The condition that makes the finding true, a Python expression over the numbers
        (``"n_worse >= 3"``).
    **numbers_
        The numbers (or short strings) the finding rests on.

    Returns
    -------
    str
        ``text`` formatted with the numbers.

    Raises
    ------
    FindingFailed
        If the condition is false: the message names the finding, the condition and the
        numbers.
    ValueError
        If ``name`` is not an identifier (or is a Python keyword) or names another finding
        already stated in this kernel; ``text`` names a field that is not a number or cannot
        be formatted with the numbers; the condition is not an expression over the numbers,
        or fails on them (the message names the finding and its numbers); a number's name is
        a keyword or a function conditions may call; or a number is NaN or infinite, or holds
        one (in a list, tuple, mapping or array).
    """
    return _check_finding(name, text, holds, numbers_, takeaway=False)


def _check_finding(name: str, text: str, holds: str, numbers_: Mapping[str, Any], *,
                   takeaway: bool) -> str:
    """:func:`check_finding`; ``takeaway``: the check of a stated takeaway (its own name)."""
    check_identifier(name, "name")
    if not takeaway and name in TAKEAWAYS:
        raise ValueError(f"name: {name!r} is a stated takeaway; a finding under its name would "
                         "replace the takeaway's words: confirm it with confirm_takeaway, or "
                         "give the finding a name of its own")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must be a non-empty string, got {text!r}")
    values = _check_numbers(numbers_)
    missing = _text_fields(text) - set(values)
    if missing:
        raise ValueError(f"text: {text!r} names {', '.join(sorted(missing))}, which the finding "
                         "was not given")
    tree = _parse_condition(holds, set(values))
    _check_restatement(name, text, holds)
    try:
        words = text.format(**values)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as err:
        raise ValueError(f"text: {text!r} of finding {name!r} cannot be formatted with "
                         f"{_number_text(values)} ({type(err).__name__}: {err})") from None
    try:
        result = eval(compile(tree, f"<finding {name}>", "eval"),  # noqa: S307 - parsed above
                      {"__builtins__": {}, **_ALLOWED_CALLS}, dict(values))
    except Exception as err:  # noqa: BLE001 - any failure of the condition, named
        raise ValueError(f"holds: `{holds}` of finding {name!r} cannot be evaluated for "
                         f"{_number_text(values)} ({type(err).__name__}: {err})") from None
    if not isinstance(result, (bool, np.bool_)):
        raise ValueError(f"holds: {holds!r} gives {result!r}, not True or False")
    if not result:
        raise FindingFailed(f"finding {name!r} no longer holds: `{holds}` is false for "
                            f"{_number_text(values)}. The page says: {text!r}. Rewrite the "
                            "finding to what the numbers show, or find why they changed.")
    CHECKED[name] = (words, holds, values)
    if _STATED.get(name, (None, None))[:2] != (text, holds):  # new, or edited in its own cell
        _STATED[name] = (text, holds, _cell_id())
    return words


def _cell_id() -> str | None:
    """The id of the notebook cell running now (JupyterLab sends it with each execution
    request; the book build's nbclient does not), or None."""
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent() if kernel is not None else None
        return (parent or {}).get("metadata", {}).get("cellId") or None
    except Exception:  # noqa: BLE001 - no kernel, an older one: no cell to tell apart
        return None


def _check_restatement(name: str, text: str, holds: str) -> None:
    """Refuse a second, different finding under a name already stated in this kernel.

    A cell run again restates its findings: the same words and condition (its numbers may
    have changed) are accepted from anywhere, and an edited finding from the cell that stated
    it (JupyterLab tells cells apart; elsewhere, in the book build or plain Python, a changed
    finding needs a name of its own, or a fresh kernel). Anything else would replace the
    first finding and the prose quoting it without a word.
    """
    if name not in _STATED:
        return
    old_text, old_holds, old_cell = _STATED[name]
    if (old_text, old_holds) == (text, holds):
        return
    cell = _cell_id()
    if cell is not None and cell == old_cell:
        return
    raise ValueError(f"name: a finding {name!r} was already stated in this kernel with other "
                     f"words or another condition ({old_text!r}, holds `{old_holds}`); each "
                     "finding needs its own name (restart the kernel if you renamed one)")


def state_takeaways(texts: Mapping[str, str]) -> dict[str, str]:
    """Record a page's takeaways (name -> words), each to be confirmed later in the page.

    Words carry no number (the numbers are not computed yet where the takeaways are shown);
    stating the same takeaways again (a cell run twice) starts their confirmation afresh.
    """
    if not isinstance(texts, Mapping) or not texts:
        raise ValueError(f"texts must be a non-empty mapping of name -> words, got {texts!r}")
    for name, text in texts.items():
        # validated as glue validates it, before anything is recorded: a name refused later
        # (a keyword) would stay stated and fail the page's final check for the session
        check_identifier(name, "texts: a takeaway's name")
        if name in _STATED and name not in TAKEAWAYS:
            raise ValueError(f"texts: takeaway {name!r} shares its name with a finding stated "
                             "in this kernel; its words would replace the finding's: give the "
                             "takeaway a name of its own")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"texts: takeaway {name!r} needs non-empty words, got {text!r}")
        if _text_fields(text):
            raise ValueError(f"texts: takeaway {name!r} has format fields ({text!r}); a "
                             "takeaway states no number: the sections show them")
        other = TAKEAWAYS.get(name)
        if other is not None and other != text:
            raise ValueError(f"texts: takeaway {name!r} was stated with other words "
                             f"({other!r})")
    for name, text in texts.items():
        TAKEAWAYS[name] = text
        CONFIRMED.discard(name)
    return dict(texts)


def confirm_takeaway(name: str, *, holds: str, **numbers_: Any) -> str:
    """Check a stated takeaway against the numbers it rests on (as :func:`check_finding`)."""
    if name not in TAKEAWAYS:
        raise ValueError(f"name: {name!r} is not a stated takeaway (stated: "
                         f"{', '.join(sorted(TAKEAWAYS)) or 'none'})")
    words = _check_finding(name, TAKEAWAYS[name], holds, numbers_, takeaway=True)
    CONFIRMED.add(name)
    return words


def unconfirmed_takeaways() -> list[str]:
    """The stated takeaways not yet confirmed in this kernel, in the order stated."""
    return [name for name in TAKEAWAYS if name not in CONFIRMED]
