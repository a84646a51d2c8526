r"""Evaluate a whole model zoo and compare the rankings that offline estimators give it.

Jadidinejad, Macdonald & Ounis (SIGIR 2021) judge an offline evaluation protocol by how well
the ranking of *many* models it produces agrees with the ranking under an open-loop (MAR)
ground truth. This module does the bookkeeping over the models:

* :func:`evaluate_zoo` fits and scores models one at a time
  (:func:`recbias_tutorial.models.iter_scores`, one score matrix in memory) and applies an
  evaluator of one model to each (typically
  :func:`recbias_tutorial.holdout_eval.holdout_evaluator`).
* :func:`agreement` (Kendall's :math:`\tau` and Pearson's :math:`r` of every estimator against
  the truth over the models), :func:`steiger` (is one estimator's correlation with the truth
  significantly higher than another's?) and :func:`reversal_pairs` (pairs of models whose
  overall order reverses inside every stratum: Simpson's paradox).

Tidy frames have the columns ``model``, ``estimator``, ``n_strata``, ``binning``, ``k`` and
``value`` (those of :mod:`recbias_tutorial.holdout_eval` plus ``model``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from itertools import permutations
from typing import Any

import numpy as np
import pandas as pd

from . import stats as _stats

__all__ = ["agreement", "evaluate_zoo", "reversal_pairs", "steiger"]


# --------------------------------------------------------------------------------------
# a whole zoo
# --------------------------------------------------------------------------------------
def evaluate_zoo(models: Mapping[str, Any], train: pd.DataFrame, *, n_users: int, n_items: int,
                 evaluate: Callable[[np.ndarray], pd.DataFrame], seed: int | None = None,
                 progress: bool = False) -> pd.DataFrame:
    """Fit, score and evaluate models one at a time; concatenate the tidy results.

    Uses :func:`recbias_tutorial.models.iter_scores`, so only one score matrix is alive at a
    time. ``evaluate`` is typically a :func:`recbias_tutorial.holdout_eval.holdout_evaluator`.

    Returns
    -------
    DataFrame with a ``model`` column first, then the columns of ``evaluate``'s frames.
    ``frame.attrs["seconds"]`` holds the wall time of each model (fit + score + evaluate).

    Examples
    --------
    >>> from recbias_tutorial.holdout_eval import holdout_evaluator
    >>> from recbias_tutorial.models import AvgRating, PosPop
    >>> train = pd.DataFrame({"user": [0, 1, 2, 2], "item": [0, 0, 1, 2],
    ...                       "rating": [5.0, 1.0, 5.0, 4.0]})
    >>> test = pd.DataFrame({"user": [0, 1], "item": [1, 2], "rating": 5.0})
    >>> ev = holdout_evaluator(holdout=test, propensity=np.ones(3), n_items=3, ks=1)
    >>> out = evaluate_zoo({"PosPop": PosPop(), "AvgRating": AvgRating()}, train,
    ...                    n_users=3, n_items=3, evaluate=ev)
    >>> out.query("estimator == 'holdout'")[["model", "value"]].to_dict("list")
    {'model': ['PosPop', 'AvgRating'], 'value': [0.0, 0.5]}
    """
    from .models import iter_scores  # lazy: models imports Cornac

    if not callable(evaluate):
        raise ValueError("evaluate must be a callable scores -> DataFrame")
    frames, seconds = [], {}
    start = time.perf_counter()
    for name, scores in iter_scores(models, train, n_users=n_users, n_items=n_items, seed=seed,
                                    progress=progress):
        frame = evaluate(scores)
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"evaluate must return a DataFrame, got {type(frame).__name__}")
        frames.append(frame.assign(model=name))
        del scores
        now = time.perf_counter()
        seconds[name] = now - start
        start = now
    out = pd.concat(frames, ignore_index=True)
    out = out[["model"] + [c for c in out.columns if c != "model"]]
    out.attrs["seconds"] = seconds
    return out


# --------------------------------------------------------------------------------------
# comparing protocols
# --------------------------------------------------------------------------------------
_KEYS = ["estimator", "n_strata", "binning", "k"]


def _check_tidy(frame: Any) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a DataFrame, got {type(frame).__name__}")
    missing = [c for c in ["model"] + _KEYS + ["value"] if c not in frame.columns]
    if missing:
        raise ValueError(f"frame is missing column(s) {missing}")
    return frame


def _wide(frame: pd.DataFrame) -> pd.DataFrame:
    """Models as rows, one column per (estimator, n_strata, binning, k)."""
    if frame.duplicated(["model"] + _KEYS).any():
        raise ValueError("frame has duplicated (model, estimator, n_strata, binning, k) rows")
    return frame.set_index(["model"] + _KEYS)["value"].unstack(_KEYS)


def agreement(frame: pd.DataFrame, *, truth: str = "truth") -> pd.DataFrame:
    """Kendall's tau-b and Pearson's r of every estimator against the truth, over the models.

    Parameters
    ----------
    frame : tidy DataFrame from :func:`evaluate_zoo`
    truth : str
        Name of the ground-truth estimator (compared at the same ``k``).

    Returns
    -------
    DataFrame with columns ``estimator``, ``n_strata``, ``binning``, ``k``, ``tau``,
    ``tau_p`` (two-sided p-value of tau), ``pearson`` and ``n_models``. Models with a NaN
    value (an empty stratum) are left out of that row.

    Examples
    --------
    >>> frame = pd.DataFrame({"model": list("abcd") * 2, "estimator": ["truth"] * 4 + ["x"] * 4,
    ...                       "n_strata": 0, "binning": "", "k": 10,
    ...                       "value": [0.1, 0.2, 0.3, 0.4, 1.0, 3.0, 2.0, 4.0]})
    >>> agreement(frame)[["estimator", "tau", "n_models"]].round(3).to_dict("records")
    [{'estimator': 'x', 'tau': 0.667, 'n_models': 4}]
    """
    frame = _check_tidy(frame)
    if truth not in set(frame["estimator"]):
        raise ValueError(f"truth={truth!r} is not an estimator of frame")
    wide = _wide(frame)
    rows = []
    for key in wide.columns:
        est, n, b, k = key
        if est == truth:
            continue
        x = wide[(truth, 0, "", k)]
        y = wide[key]
        ok = x.notna() & y.notna()
        row = dict(zip(_KEYS, key))
        if ok.sum() >= 2:
            tau, p = _stats.kendall_tau(x[ok].to_numpy(), y[ok].to_numpy())
            r = float(np.corrcoef(x[ok], y[ok])[0, 1])
        else:
            tau = p = r = float("nan")
        rows.append({**row, "tau": tau, "tau_p": p, "pearson": r, "n_models": int(ok.sum())})
    return pd.DataFrame(rows)


def steiger(frame: pd.DataFrame, *, y: str = "stratified", z: str = "holdout",
            truth: str = "truth", n_strata: int = 2, binning: str = "quantile") -> pd.DataFrame:
    r"""Steiger's test of :math:`r(\text{truth}, y)` against :math:`r(\text{truth}, z)` per ``k``.

    The correlations are Pearson correlations of the metric values over the models (as in
    Jadidinejad et al., 2021): ``r_xy`` = corr(truth, y), ``r_xz`` = corr(truth, z) and
    ``r_yz`` = corr(y, z), with ``n`` = number of models; the statistic and two-sided
    p-value are those of :func:`recbias_tutorial.stats.steiger_test`. ``n_strata`` and
    ``binning`` select the rows of a stratifying estimator (``y`` or ``z``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> t = rng.random(30)
    >>> frame = pd.concat([pd.DataFrame({"model": range(30), "estimator": e, "n_strata": n,
    ...                                  "binning": b, "k": 10, "value": v})
    ...                    for e, n, b, v in [("truth", 0, "", t),
    ...                                       ("stratified", 2, "quantile", t + 0.1 * rng.random(30)),
    ...                                       ("holdout", 0, "", t + 0.5 * rng.random(30))]])
    >>> res = steiger(frame)
    >>> bool(res.loc[0, "r_xy"] > res.loc[0, "r_xz"]), bool(res.loc[0, "p_value"] < 0.05)
    (True, True)
    """
    frame = _check_tidy(frame)
    wide = _wide(frame)

    def column(est: str, k: int) -> pd.Series:
        for key in ((est, 0, "", k), (est, n_strata, binning, k)):
            if key in wide.columns:
                return wide[key]
        raise ValueError(f"frame has no rows for estimator {est!r} at k={k} "
                         f"(n_strata={n_strata}, binning={binning!r})")

    rows = []
    for k in sorted(frame["k"].unique()):
        x, a, b = column(truth, k), column(y, k), column(z, k)
        ok = x.notna() & a.notna() & b.notna()
        r = np.corrcoef(np.vstack([x[ok], a[ok], b[ok]]))
        n = int(ok.sum())
        t, p = _stats.steiger_test(r[0, 1], r[0, 2], r[1, 2], n)
        rows.append({"k": int(k), "r_xy": r[0, 1], "r_xz": r[0, 2], "r_yz": r[1, 2], "n": n,
                     "statistic": t, "p_value": p})
    return pd.DataFrame(rows)


def reversal_pairs(table: pd.DataFrame, *, overall: str, strata: Sequence[str]) -> pd.DataFrame:
    """Ordered model pairs (a, b) with a ahead overall, and how b fares in every stratum.

    For every pair with ``table[overall][a] > table[overall][b]`` the result has
    ``d_<overall>`` = a − b (> 0) and ``d_<stratum>`` = a − b in each stratum,
    ``n_reversed`` = number of strata where b is strictly ahead, and ``margin`` =
    ``min`` over strata of (b − a): positive exactly when the order reverses in *every*
    stratum (Simpson's paradox). Rows are sorted by ``margin``, largest first, so the first
    row is either the most pronounced paradox or, when there is none, the closest case.

    Parameters
    ----------
    table : DataFrame indexed by model, one column per evaluation
    overall : str
        Column of the pooled evaluation.
    strata : sequence of str
        Columns of the per-stratum evaluations.

    Examples
    --------
    >>> kidney = pd.DataFrame({"overall": [273 / 350, 289 / 350], "small": [81 / 87, 234 / 270],
    ...                        "large": [192 / 263, 55 / 80]}, index=["A", "B"])
    >>> reversal_pairs(kidney, overall="overall", strata=["small", "large"])[
    ...     ["a", "b", "n_reversed"]].to_dict("records")
    [{'a': 'B', 'b': 'A', 'n_reversed': 2}]
    """
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"table must be a DataFrame, got {type(table).__name__}")
    strata = list(strata)
    if not strata:
        raise ValueError("strata must name at least one column")
    missing = [c for c in [overall, *strata] if c not in table.columns]
    if missing:
        raise ValueError(f"table is missing column(s) {missing}")
    if not table.index.is_unique:
        raise ValueError("table must have one row per model (unique index)")
    values = table[[overall, *strata]].to_numpy(dtype=float)
    names = table.index.to_numpy()
    ia, ib = np.array(list(permutations(range(len(table)), 2)), dtype=np.int64).reshape(-1, 2).T
    keep = values[ia, 0] > values[ib, 0]
    ia, ib = ia[keep], ib[keep]
    diff = values[ia] - values[ib]
    out = pd.DataFrame({"a": names[ia], "b": names[ib]})
    for j, col in enumerate([overall, *strata]):
        out[f"d_{col}"] = diff[:, j]
    out["n_reversed"] = (diff[:, 1:] < 0).sum(axis=1)
    out["margin"] = (-diff[:, 1:]).min(axis=1)
    return out.sort_values(["margin", f"d_{overall}"], ascending=[False, False],
                           kind="stable").reset_index(drop=True)
