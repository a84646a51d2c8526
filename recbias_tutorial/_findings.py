"""Stated findings, checked against the numbers they rest on (the kernels behind ``course``).

A chapter states a finding in three parts: the numbers it rests on, the condition that makes
it true (a Python expression over those numbers) and the words the page shows. The words are
formatted from the same numbers, so the sentence a reader sees and the check cannot drift
apart; a condition that no longer holds raises :class:`FindingFailed`, which fails the book
build (a cell error under ``jupyter-book build -W``) with the finding's name and numbers.

The replication report grades each headline number on one fixed scale (:func:`verdict`):
the paper's value inside our 95% interval, on the same side of a reference value, or not.
"""

from __future__ import annotations

import ast
import math
import numbers
import string
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

#: The verdict scale of the replication report, strongest first.
VERDICTS: tuple[str, ...] = ("reproduced within our interval", "same direction, other level", "differs")

#: What a condition may call besides the finding's own numbers.
_ALLOWED_CALLS = {"abs": abs, "min": min, "max": max, "all": all, "any": any, "len": len,
                  "sum": sum, "round": round, "set": set, "sorted": sorted}
_ALLOWED_NODES = (ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call,
                  ast.Name, ast.Load, ast.Constant, ast.Tuple, ast.List, ast.Subscript,
                  ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.IfExp, ast.Slice)

#: Every finding checked in this kernel, in order: name -> (text, condition, numbers).
CHECKED: dict[str, tuple[str, str, dict]] = {}


#: The takeaways a page stated before its first section: name -> words. Each is confirmed
#: later in the page by a check on the numbers it rests on (:func:`confirm_takeaway`).
TAKEAWAYS: dict[str, str] = {}
#: The takeaways confirmed so far in this kernel.
CONFIRMED: set[str] = set()


class FindingFailed(AssertionError):
    """A finding a page states no longer holds for the numbers it rests on."""


class Verdict(NamedTuple):
    """One headline number graded: the paper's value against ours over seeds or repetitions."""

    verdict: str
    paper: float
    mean: float
    low: float
    high: float
    n: int


def _plain(value: Any) -> Any:
    """A Python scalar for a numpy scalar (glued text then formats like the prose expects)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
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


def _check_numbers(numbers_: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in numbers_.items():
        value = _plain(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"numbers: {key} is {value}; a finding rests on finite numbers")
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
        If ``name`` is not an identifier, ``text`` names a field that is not a number, the
        condition is not an expression over the numbers, or a number is NaN or infinite.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier, got {name!r}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must be a non-empty string, got {text!r}")
    values = _check_numbers(numbers_)
    missing = _text_fields(text) - set(values)
    if missing:
        raise ValueError(f"text: {text!r} names {', '.join(sorted(missing))}, which the finding "
                         "was not given")
    tree = _parse_condition(holds, set(values))
    result = eval(compile(tree, f"<finding {name}>", "eval"),  # noqa: S307 - parsed above
                  {"__builtins__": {}, **_ALLOWED_CALLS}, dict(values))
    if not isinstance(result, (bool, np.bool_)):
        raise ValueError(f"holds: {holds!r} gives {result!r}, not True or False")
    if not result:
        raise FindingFailed(f"finding {name!r} no longer holds: `{holds}` is false for "
                            f"{_number_text(values)}. The page says: {text!r}. Rewrite the "
                            "finding to what the numbers show, or find why they changed.")
    words = text.format(**values)
    CHECKED[name] = (words, holds, values)
    return words


def verdict(paper: float, ours: Any, *, reference: float | None = None, level: float = 0.95,
            interval: tuple[float, float] | None = None) -> Verdict:
    """Grade one headline number on the report's fixed scale.

    * ``"reproduced within our interval"``: the paper's value lies in our ``level`` confidence interval of the
      mean over seeds or repetitions (Student's t; with one value, only equality);
    * ``"same direction, other level"``: not reproduced, but the paper's value and our
      mean lie on the same side of ``reference`` (an effect's zero, or the value the
      paper compares against);
    * ``"differs"``: neither.

    ``interval`` replaces the t interval by one computed elsewhere (e.g. a bootstrap band
    around a single point value ``ours``).
    """
    from scipy import stats

    if not isinstance(paper, numbers.Real) or not math.isfinite(paper):
        raise ValueError(f"paper must be a finite number, got {paper!r}")
    values = np.asarray(ours, dtype=float).ravel()
    if values.size == 0 or not np.isfinite(values).all():
        raise ValueError("ours must hold one or more finite values (one per seed or repetition)")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    if reference is not None and (not isinstance(reference, numbers.Real)
                                  or not math.isfinite(reference)):
        raise ValueError(f"reference must be a finite number or None, got {reference!r}")
    mean = float(values.mean())
    if interval is not None:
        low, high = (float(v) for v in interval)
        if not (np.isfinite([low, high]).all() and low <= high):
            raise ValueError(f"interval must be two finite numbers, low <= high, got {interval!r}")
    elif values.size > 1 and values.std(ddof=1) > 0:
        low, high = stats.t.interval(level, values.size - 1, loc=mean, scale=stats.sem(values))
    else:
        low = high = mean
    if low - 1e-12 <= paper <= high + 1e-12:
        label = VERDICTS[0]
    elif reference is not None and np.sign(paper - reference) == np.sign(mean - reference) != 0:
        label = VERDICTS[1]
    else:
        label = VERDICTS[2]
    return Verdict(label, float(paper), mean, float(low), float(high), int(values.size))


def state_takeaways(texts: Mapping[str, str]) -> dict[str, str]:
    """Record a page's takeaways (name -> words), each to be confirmed later in the page.

    Words carry no number (the numbers are not computed yet where the takeaways are shown);
    stating the same takeaways again (a cell run twice) starts their confirmation afresh.
    """
    if not isinstance(texts, Mapping) or not texts:
        raise ValueError(f"texts must be a non-empty mapping of name -> words, got {texts!r}")
    for name, text in texts.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"texts: a takeaway's name must be a Python identifier, got {name!r}")
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
    words = check_finding(name, TAKEAWAYS[name], holds=holds, **numbers_)
    CONFIRMED.add(name)
    return words


def unconfirmed_takeaways() -> list[str]:
    """The stated takeaways not yet confirmed in this kernel, in the order stated."""
    return [name for name in TAKEAWAYS if name not in CONFIRMED]
