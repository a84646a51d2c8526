r"""Kendall's τ over a few models graded against a margin (private; see :mod:`._verdicts`).

Re-exported by :mod:`recbias_tutorial._findings` and
:mod:`recbias_tutorial.replications.report`. The τ a paper prints for a few models depends on
two orders: the truth's and the test set's. Our evidence fixes only the pairs each of them
separates over the repetitions (a paired Wilcoxon test); every other pair may fall either way.
The τ values attainable over all the orders consistent with both are what our run allows,
and they are graded as any interval is (:func:`._verdicts.decide`, on a set of values).
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ._params import Interval, declare
from ._validation import as_real_array
from ._verdicts import (DIFFERS, REPRODUCED, UNDETERMINED, VERDICTS, ContrastVerdict, _EPS,
                        _fmt)

#: Most models :func:`tau_verdict` enumerates the orders of (7! = 5,040 per side).
MAX_MODELS = 7


class TauVerdict(NamedTuple):
    """Kendall's τ over a few models, graded on the τ values our evidence allows.

    ``tau`` is τ between the test set's and the truth's means; ``attainable`` the τ values
    over the orders of the models consistent with the truth and with the test set (each
    fixing only the pairs it separates, ``separated`` and ``test_separated`` of ``pairs``),
    ``low``/``high`` their range; ``paired`` says whether the paired test could be used (with
    too few repetitions, the orders of the means alone); ``tau_separated`` is τ over the
    truth's separated pairs only; ``taus`` each repetition's τ and ``share_equal`` the share
    of them equal to the paper's.
    """

    verdict: str
    paper: float
    tau: float
    low: float
    high: float
    n: int
    separated: int
    pairs: int
    tau_separated: float
    share_equal: float
    taus: tuple
    margin: float
    why: str
    attainable: tuple
    test_separated: int
    paired: bool


def _tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b along the last axis (models) of broadcastable arrays; NaN if constant."""
    i, j = np.triu_indices(x.shape[-1], k=1)
    sx, sy = np.sign(x[..., i] - x[..., j]), np.sign(y[..., i] - y[..., j])
    den = np.sqrt((sx != 0).sum(-1) * (sy != 0).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (sx * sy).sum(-1) / den, np.nan)


def _two_tables(truth: Any, test: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    for name, frame in (("truth", truth), ("test", test)):
        if not isinstance(frame, pd.DataFrame) or frame.empty:
            raise ValueError(f"{name} must be a non-empty DataFrame (one row per repetition, "
                             f"one column per model), got {type(frame).__name__}")
        values = as_real_array(frame.to_numpy(), name)
        if not np.isfinite(values).all():
            raise ValueError(f"{name} must hold finite numbers")
        if not frame.index.is_unique or not frame.columns.is_unique:
            raise ValueError(f"{name} must have one row per repetition and one column per "
                             "model (a label twice)")
    if set(truth.columns) != set(test.columns) or set(truth.index) != set(test.index):
        raise ValueError("truth and test must have the same models (columns) and repetitions "
                         f"(rows): got {list(truth.columns)} x {len(truth)} and "
                         f"{list(test.columns)} x {len(test)}")
    if not 3 <= truth.shape[1] <= MAX_MODELS:
        raise ValueError(f"truth must hold 3 to {MAX_MODELS} models (every order of them is "
                         f"enumerated), got {truth.shape[1]}")
    if len(truth) < 2:
        raise ValueError(f"truth must hold at least two repetitions, got {len(truth)}")
    return truth.astype(float), test.loc[truth.index, truth.columns].astype(float)


def paired_test_minimum(alpha: float) -> int:
    """The fewest repetitions with which the two-sided paired Wilcoxon test can reject at
    ``alpha`` (its smallest p-value is 2 / 2^n): 6 at α = 0.05."""
    return next(n for n in itertools.count(1) if 2 * 0.5 ** n < alpha)


def signed_rank_p(d: np.ndarray) -> float:
    """Two-sided p-value of the paired Wilcoxon signed-rank test of the differences ``d``,
    from the exact distribution of the statistic over every sign flip (zeros dropped, tied
    ranks averaged): scipy.stats.wilcoxon's exact and permutation p-values, computed by
    counting instead of resampling (tests check the two agree)."""
    from scipy.stats import rankdata

    d = np.asarray(d, float)
    d = d[d != 0]
    if d.size == 0:
        return 1.0
    doubled = np.rint(2 * rankdata(np.abs(d))).astype(int)  # averaged ranks are halves
    counts = np.zeros(int(doubled.sum()) + 1)
    counts[0] = 1.0
    for r in doubled:  # the number of sign patterns giving each statistic
        counts[r:] = counts[r:] + counts[:-r].copy()
    probs = counts / counts.sum()
    t = int(doubled[d > 0].sum())
    return float(min(1.0, 2 * min(probs[:t + 1].sum(), probs[t:].sum())))


def _separated(values: np.ndarray, alpha: float, paired: bool) -> dict:
    """{(i, j): +1 if model i is above j, -1 if below} for the pairs the repetitions separate:
    a paired Wilcoxon test at ``alpha``, or, with too few repetitions, the means' order."""
    order = {}
    for i, j in itertools.combinations(range(values.shape[1]), 2):
        d = np.sort(values[:, i] - values[:, j])
        if np.all(np.abs(d) <= 1e-15):
            continue
        if paired:
            if signed_rank_p(d) < alpha:
                order[(i, j)] = 1 if d.sum() > 0 else -1
        elif abs(d.sum()) > 1e-12 * d.size:
            order[(i, j)] = 1 if d.sum() > 0 else -1
    return order


def _orders(k: int, order: dict) -> np.ndarray:
    """The pair signs (orders x pairs, +1: i above j) of every strict order of ``k`` models
    that agrees with ``order``."""
    i, j = np.triu_indices(k, k=1)
    perms = np.array(list(itertools.permutations(range(k))))
    ranks = np.empty_like(perms)
    ranks[np.arange(len(perms))[:, None], perms] = np.arange(k, 0, -1)  # perm[0] on top
    signs = np.sign(ranks[:, i] - ranks[:, j]).astype(np.int32)
    keep = np.ones(len(perms), bool)
    for (a, b), s in order.items():
        keep &= signs[:, list(zip(i, j)).index((a, b))] == s
    return signs[keep]


def _attainable(test_signs: np.ndarray, truth_signs: np.ndarray) -> np.ndarray:
    """The distinct τ between any order of the first set and any of the second."""
    pairs = truth_signs.shape[1]
    seen = np.zeros(2 * pairs + 1, bool)
    for start in range(0, len(test_signs), 512):
        seen[np.unique(test_signs[start:start + 512] @ truth_signs.T) + pairs] = True
    return (np.flatnonzero(seen) - pairs) / pairs


def _values_text(values: np.ndarray) -> str:
    return ", ".join(f"{v:.2g}" for v in values) if len(values) else "none"


@declare(paper=Interval(float, -1.0, 1.0, optional=True), margin=Interval(float, 0.0, open="low"),
         alpha=Interval(float, 0.0, 1.0, open="both"))
def tau_verdict(paper: float | None, truth: pd.DataFrame, test: pd.DataFrame, *, margin: float,
                alpha: float = 0.05, contrasts: tuple = ()) -> TauVerdict:
    """Grade Kendall's τ over a few models against the τ values our evidence allows.

    A pair of models is separated by the truth (by the test set) when a paired Wilcoxon test
    over the repetitions of ``truth`` (of ``test``) rejects equality at ``alpha``; every
    other pair may fall either way. The τ between every order consistent with the test set
    and every order consistent with the truth form the attainable set: the paper's τ is
    "reproduced within our interval" when every attainable value lies within ``paper ±
    margin``, "differs" when none does, "undetermined" otherwise (the truth, or the test
    set's own noise, leaves pairs that decide it open). With fewer repetitions than the paired
    test needs to reject at ``alpha`` (its smallest p-value is 2 / 2^n: 6 at 0.05), the orders
    of the means alone decide, and ``why`` says so. Each verdict in ``contrasts`` (from
    :func:`contrast_verdict`: the paper's comparisons that rest on this τ) must agree too:
    the result is the weakest of them.

    Parameters
    ----------
    paper : float or None
        The paper's τ, in [-1, 1]; None where the paper states none (the result then has
        every number but the verdict, ``""``, and ``share_equal``, NaN).
    truth, test : pandas.DataFrame
        One row per repetition, one column per model (3 to 7 models): the metric on the
        ground truth and on the test set, the same rows and columns.
    margin : float
        The smallest difference of τ that matters, > 0: with ``P`` pairs τ moves in steps of
        ``2 / P`` (one swap), so any margin below one step asks for the paper's value itself.
    alpha : float, default 0.05
        Level of the Wilcoxon tests.
    contrasts : tuple of str or ContrastVerdict, default ()
        Verdicts of the contrasts the paper draws on this τ.

    Returns
    -------
    TauVerdict

    Raises
    ------
    ValueError
        If ``paper`` is not in [-1, 1], ``margin`` not > 0, ``alpha`` not in (0, 1),
        ``truth`` or ``test`` not a DataFrame of finite numbers with the same 3 to 7 models
        and at least two repetitions, or ``contrasts`` not a tuple of verdicts.

    Examples
    --------
    >>> truth = pd.DataFrame({"a": [1.0, 1.1, 0.9, 1.0, 1.2, 0.95], "b": [2.0, 2.1, 2.2, 1.9, 2.0, 2.05],
    ...                       "c": [2.02, 2.12, 2.18, 1.95, 1.98, 2.0]})  # b and c: a tie
    >>> test = truth + [0, 0.5, 0]  # b above c on the test set, every time
    >>> v = tau_verdict(1.0, truth, test, margin=0.3)
    >>> v.verdict, v.separated, v.attainable
    ('undetermined', 2, (0.3333333333333333, 1.0))
    """
    truth, test = _two_tables(truth, test)
    if not isinstance(contrasts, tuple) or not all(
            (c.verdict if isinstance(c, ContrastVerdict) else c) in VERDICTS for c in contrasts):
        raise ValueError(f"contrasts must be a tuple of verdicts (contrast_verdict), got "
                         f"{contrasts!r}")
    k, n = truth.shape[1], len(truth)
    pairs = k * (k - 1) // 2
    t, x = truth.to_numpy(), test.to_numpy()
    paired = n >= paired_test_minimum(alpha)
    order, test_order = _separated(t, alpha, paired), _separated(x, alpha, paired)
    values = _attainable(_orders(k, test_order), _orders(k, order))
    means_t, means_x = np.sort(t, axis=0).mean(axis=0), np.sort(x, axis=0).mean(axis=0)
    on_means = float(_tau_b(means_x, means_t))
    sep = [s * np.sign(means_x[i] - means_x[j]) for (i, j), s in order.items()]
    tau_sep = float(np.mean(sep)) if sep else float("nan")
    per_rep = tuple(float(v) for v in _tau_b(x, t))
    low, high = (float(values.min()), float(values.max())) if len(values) else (np.nan, np.nan)
    base = dict(tau=on_means, low=low, high=high, n=n, separated=len(order), pairs=pairs,
                tau_separated=tau_sep, taus=per_rep, margin=float(margin),
                attainable=tuple(float(v) for v in values), test_separated=len(test_order),
                paired=paired)
    if paper is None:
        return TauVerdict(verdict="", paper=float("nan"), share_equal=float("nan"), why="", **base)
    share = float(np.mean([abs(v - paper) < 1e-9 for v in per_rep]))
    shown = f"the τ values our run allows ({_values_text(values)})"
    band = f"the paper's {_fmt(paper)} ± {_fmt(margin)}"
    inside = np.abs(values - paper) <= margin + _EPS
    if not len(values):
        label, why = UNDETERMINED, ("the pairs the repetitions separate form a cycle: no order "
                                    "of the models agrees with all of them")
    elif inside.all():
        label, why = REPRODUCED, f"{shown} lie within {band}"
    elif not inside.any():
        label, why = DIFFERS, f"none of {shown} lies within {band}"
    else:
        label, why = UNDETERMINED, (
            f"{shown} hold {band} and others: the truth leaves {pairs - len(order)} of the "
            f"{pairs} pairs unordered, the test set's noise {pairs - len(test_order)}")
    if not paired:
        why = (f"only {n} repetitions, too few for the paired test at α = {alpha:g} (it needs "
               f"{paired_test_minimum(alpha)}): the orders of the means alone; ") + why
    labels = [label] + [c.verdict if isinstance(c, ContrastVerdict) else c for c in contrasts]
    weakest = VERDICTS[max(VERDICTS.index(v) for v in labels)]
    if weakest != label:
        why += f"; a contrast it rests on is {weakest}"
    return TauVerdict(verdict=weakest, paper=float(paper), share_equal=share, why=why, **base)
