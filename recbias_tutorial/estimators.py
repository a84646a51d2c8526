r"""Offline estimators of ranking quality from logged or randomly exposed feedback.

All estimators share the ranks :math:`Z_{ui}` of :func:`recbias_tutorial.metrics.rank_positions`
and the gains :math:`c(Z)` of DESIGN.md: ``recall`` :math:`1[Z<k]`, ``dcg``
:math:`1[Z<k]/\log_2(Z+2)` and ``auc`` :math:`1 - Z/(|C_u|-1)`. Let :math:`S^*_u` be the relevant
test items of user :math:`u` (``rating >= threshold``).

* :func:`aoa` — Average-Over-All: :math:`\frac{1}{|U|}\sum_u \frac{1}{|S^*_u|}\sum_{i\in S^*_u} c(Z_{ui})`.
* :func:`ips` — :math:`\frac{1}{|U|}\sum_u \frac{1}{|S_u|}\sum_{i\in S^*_u} c(Z_{ui})/P_{ui}` with
  absolute propensities and the true :math:`|S_u|` (Yang et al., 2018).
* :func:`snips` — :math:`\frac{1}{|U|}\sum_u \sum_{i} c(Z_{ui})/P_{ui} \big/ \sum_i 1/P_{ui}`.
* :func:`stratified` — see its docstring.
* :func:`ure_recall`, :func:`recall_at_kbar` and :func:`kbar_curves` (Recall@K̄ for many K̄)
  on randomly exposed data — see their docstrings (they live in ``_random_exposure``).

Every estimator is a mean over users, so :func:`user_bootstrap` resamples users and
:func:`bootstrap_ci` applies it to the per-user terms of :func:`user_values`.
"""

from __future__ import annotations

from typing import Any

import numbers

import numpy as np
import pandas as pd

from ._random_exposure import kbar_curves, recall_at_kbar, ure_recall
from ._validation import as_generator, check_propensity
from .metrics import _dcg_gain, _positions, _ranking_input, n_candidates, ranking_metrics

__all__ = ["ESTIMATORS", "GAINS", "aoa", "bootstrap_ci", "ips", "kbar_curves", "recall_at_kbar",
           "snips", "stratified", "ure_recall", "user_bootstrap", "user_values"]

GAINS = ("recall", "dcg", "auc")
ESTIMATORS = ("aoa", "ips", "snips")


def _gains(scores, rel: pd.DataFrame, metric: str, k: int, exclude) -> np.ndarray:
    if metric == "auc":
        z = _positions(scores, rel, exclude, None)
        n = n_candidates(scores.shape, rel, exclude)
        return np.where(n > 1, 1.0 - z / np.maximum(n - 1, 1), 1.0)
    if metric not in ("recall", "dcg"):
        raise ValueError(f"metric must be one of {GAINS}, got {metric!r}")
    z = _positions(scores, rel, exclude, k)
    if metric == "recall":
        return (z < k).astype(float)
    return _dcg_gain(z, k)


def _prepare(scores, test, metric, k, threshold):
    if metric not in GAINS:
        raise ValueError(f"metric must be one of {GAINS}, got {metric!r}")
    scores, k, rel = _ranking_input(scores, test, threshold=threshold,
                                    k=None if metric == "auc" else k)  # auc: no cut-off
    return scores, rel, k


def user_values(scores, test: pd.DataFrame, propensity=None, *, estimator: str = "aoa",
                n_relevant=None, metric: str = "recall", k: int = 10, threshold: float = 4.0,
                exclude: pd.DataFrame | None = None, clip: float | None = None) -> pd.Series:
    """Per-user terms whose mean is the estimate (``aoa``, ``ips`` or ``snips``).

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5], [0.2, 0.8, 0.4]])
    >>> test = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 1], "rating": [5.0, 4.0, 5.0]})
    >>> user_values(scores, test, k=1).tolist()
    [0.5, 1.0]
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    scores, rel, k = _prepare(scores, test, metric, k, threshold)
    users = rel["user"].to_numpy(np.int64)
    gain = _gains(scores, rel, metric, k, exclude)
    if estimator == "aoa":
        return pd.Series(gain).groupby(users).mean().rename_axis("user")
    if propensity is None:
        raise ValueError(f"propensity is required for {estimator}")
    p = check_propensity(propensity, users, rel["item"].to_numpy(np.int64), scores.shape,
                         upper_one=estimator == "ips", clip=clip)
    if estimator == "snips":
        w = pd.DataFrame({"num": gain / p, "den": 1.0 / p}).groupby(users).sum()
        return (w["num"] / w["den"]).rename_axis("user")
    if n_relevant is None:
        raise ValueError("n_relevant (true number of relevant items per user) is required for ips")
    n_rel = np.asarray(n_relevant, dtype=float)
    if n_rel.shape != (scores.shape[0],) or not np.isfinite(n_rel).all() or (n_rel < 0).any():
        raise ValueError(f"n_relevant must be {scores.shape[0]} non-negative counts, one per user")
    observed = np.bincount(users, minlength=scores.shape[0])
    if (observed > n_rel).any():
        raise ValueError("n_relevant is smaller than the observed relevant test items of some user")
    sums = np.bincount(users, weights=gain / p, minlength=scores.shape[0])
    keep = np.flatnonzero(n_rel >= 1)  # users with relevant items but none observed count as 0
    return pd.Series(sums[keep] / n_rel[keep], index=pd.Index(keep, name="user"))


def aoa(scores, test: pd.DataFrame, *, metric: str = "recall", k: int = 10,
        threshold: float = 4.0, exclude: pd.DataFrame | None = None) -> float:
    """Average-Over-All: the plain average of a gain over held-out relevant items.

    Parameters
    ----------
    scores : array (n_users, n_items)
    test : DataFrame with ``user``, ``item``, ``rating``
    metric : ``"recall"``, ``"dcg"`` or ``"auc"``
    k : cut-off for recall and dcg
    threshold : an item is relevant when ``rating >= threshold``
    exclude : pairs removed from the candidates (e.g. the training pairs)

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5], [0.2, 0.8, 0.4]])
    >>> test = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 1], "rating": [5.0, 4.0, 5.0]})
    >>> aoa(scores, test, k=1)
    0.75
    """
    return float(user_values(scores, test, metric=metric, k=k, threshold=threshold,
                             exclude=exclude).mean())


def snips(scores, test: pd.DataFrame, propensity, *, metric: str = "recall", k: int = 10,
          threshold: float = 4.0, exclude: pd.DataFrame | None = None,
          clip: float | None = None) -> float:
    """Self-normalised IPS: per user, a 1/P-weighted mean of the gains (scale-free in P).

    ``propensity`` is per item (1-D) or per user and item (2-D); ``clip`` is a lower bound
    applied to it (weights 1/P are capped at 1/clip).

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5]])
    >>> test = pd.DataFrame({"user": [0, 0], "item": [0, 1], "rating": [5.0, 5.0]})
    >>> snips(scores, test, np.array([0.5, 0.1, 0.2]), k=1)  # the rare item weighs 5x more
    0.16666666666666666
    """
    return float(user_values(scores, test, propensity, estimator="snips", metric=metric, k=k,
                             threshold=threshold, exclude=exclude, clip=clip).mean())


def ips(scores, test: pd.DataFrame, propensity, *, n_relevant, metric: str = "recall",
        k: int = 10, threshold: float = 4.0, exclude: pd.DataFrame | None = None,
        clip: float | None = None) -> float:
    """Inverse-propensity-scored estimate; unbiased when P and |S_u| are the true ones.

    ``propensity`` must hold absolute observation probabilities in (0, 1]; ``n_relevant`` is
    the true number of relevant items of each user (length n_users), known in simulations.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5]])
    >>> test = pd.DataFrame({"user": [0], "item": [0], "rating": [5.0]})
    >>> ips(scores, test, np.array([0.5, 0.5, 0.5]), n_relevant=[2], k=1)
    1.0
    """
    return float(user_values(scores, test, propensity, estimator="ips", n_relevant=n_relevant,
                             metric=metric, k=k, threshold=threshold, exclude=exclude,
                             clip=clip).mean())


def _check_confidence(confidence) -> float:
    if (isinstance(confidence, bool) or not isinstance(confidence, numbers.Real)
            or not 0 < confidence < 1):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(confidence)


def user_bootstrap(values, *, seed, confidence: float = 0.95,
                   n_resamples: int = 2000) -> pd.DataFrame:
    """Mean and percentile-bootstrap interval of per-user values, resampling users.

    The resamples are those of ``scipy.stats.bootstrap`` (``n_resamples`` draws of as many
    users with replacement). Columns are resampled together (the same users in each
    resample), so intervals of several estimators computed on the same users are comparable.
    Missing values (a user without a value for a column) are ignored in that column's means.

    Parameters
    ----------
    values : array-like or DataFrame
        One row per user, one column per quantity (1-D: a single quantity).
    seed : int or numpy.random.Generator
        Randomness of the resamples.
    confidence : float
        Coverage of the interval, in (0, 1).
    n_resamples : int
        Number of bootstrap resamples.

    Returns
    -------
    pandas.DataFrame
        Index: the columns of ``values``; columns ``estimate``, ``low``, ``high``.

    Examples
    --------
    >>> out = user_bootstrap(pd.DataFrame({"a": [0.0, 1.0] * 50}), seed=0)
    >>> float(out.loc["a", "estimate"]), bool(out.loc["a", "low"] < 0.5 < out.loc["a", "high"])
    (0.5, True)
    """
    frame = values if isinstance(values, pd.DataFrame) else pd.DataFrame(
        np.asarray(values, dtype=float).reshape(len(values), -1))
    x = frame.to_numpy(dtype=float)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError("values must hold at least two users (rows)")
    confidence = _check_confidence(confidence)
    if (isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral)
            or n_resamples < 1):
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    rng = as_generator(seed)
    idx = rng.integers(0, x.shape[0], size=(n_resamples, x.shape[0]))
    present = ~np.isnan(x)
    if not present.any(axis=0).all():
        raise ValueError("values has a column without any value")
    filled = np.where(present, x, 0.0)
    means = np.empty((n_resamples, x.shape[1]))
    for j in range(x.shape[1]):  # mean of the present values of each resample (NaN if none)
        count = present[idx, j].sum(axis=1)
        np.divide(filled[idx, j].sum(axis=1), count, out=means[:, j], where=count > 0)
        means[count == 0, j] = np.nan
    alpha = (1.0 - confidence) / 2.0
    low, high = np.nanquantile(means, [alpha, 1.0 - alpha], axis=0)
    estimate = filled.sum(axis=0) / present.sum(axis=0)
    return pd.DataFrame({"estimate": estimate, "low": low, "high": high}, index=frame.columns)


def bootstrap_ci(scores, test: pd.DataFrame, propensity=None, *, estimator: str = "aoa",
                 seed, confidence: float = 0.95, n_resamples: int = 1000,
                 **kwargs) -> tuple[float, float, float]:
    """Estimate and percentile-bootstrap interval, resampling users.

    :func:`user_bootstrap` of the per-user terms of :func:`user_values`. Returns
    ``(estimate, low, high)``. Keyword arguments go to the estimator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random((50, 20))
    >>> test = pd.DataFrame({"user": np.arange(50), "item": rng.integers(0, 20, 50), "rating": 5.0})
    >>> est, lo, hi = bootstrap_ci(scores, test, seed=1, k=5)
    >>> lo <= est <= hi
    True
    """
    confidence = _check_confidence(confidence)
    values = user_values(scores, test, propensity, estimator=estimator, **kwargs).to_numpy()
    if len(values) < 2:
        raise ValueError("test must cover at least two users with relevant items to bootstrap")
    ci = user_bootstrap(values, seed=seed, confidence=confidence, n_resamples=n_resamples)
    return float(ci["estimate"].iloc[0]), float(ci["low"].iloc[0]), float(ci["high"].iloc[0])


BINNINGS = ("quantile", "width")


def _check_n_strata(n: Any, name: str = "n_strata") -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def _check_binning(binning: Any, name: str = "binning") -> str:
    if binning not in BINNINGS:
        raise ValueError(f"{name} must be one of {BINNINGS}, got {binning!r}")
    return str(binning)


def assign_strata(p: Any, n_strata: int = 2, *, binning: str = "quantile") -> tuple[np.ndarray, np.ndarray]:
    """Stratum of each propensity (0 = lowest), the strata of :func:`stratified`.

    ``"quantile"``: edges at the quantiles of ``p``, so strata hold (up to ties) equal numbers
    of values. ``"width"``: ``n_strata`` equal-width bins over ``[min p, max p]``.

    Parameters
    ----------
    p : array-like
        Propensities of the (relevant) test interactions; finite and > 0.
    n_strata : int
        Number of strata.
    binning : ``"quantile"`` or ``"width"``

    Returns
    -------
    (stratum, edges) : int array of the stratum of each value, and the ``n_strata + 1`` edges.

    Examples
    --------
    >>> s, edges = assign_strata([0.01, 0.02, 0.03, 1.0], 2)
    >>> s.tolist()
    [0, 0, 1, 1]
    >>> assign_strata([0.01, 0.02, 0.03, 1.0], 2, binning="width")[0].tolist()
    [0, 0, 0, 1]
    """
    n_strata = _check_n_strata(n_strata)
    binning = _check_binning(binning)
    p = np.asarray(p, dtype=float)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"p must be a non-empty 1-D array, got shape {p.shape}")
    if not np.isfinite(p).all() or (p <= 0).any():
        raise ValueError("p must hold finite propensities > 0")
    if binning == "quantile":
        edges = np.quantile(p, np.linspace(0, 1, n_strata + 1))
    else:
        edges = np.linspace(p.min(), p.max(), n_strata + 1)
    stratum = np.clip(np.searchsorted(edges[1:-1], p, side="right"), 0, n_strata - 1)
    return stratum.astype(np.int64), edges



def stratified(scores, test: pd.DataFrame, propensity, *, n_strata: int = 2,
               metric: str = "recall", k: int = 10, threshold: float = 4.0,
               exclude: pd.DataFrame | None = None, binning: str = "quantile") -> pd.DataFrame:
    r"""Propensity-stratified evaluation (Jadidinejad et al., SIGIR 2021).

    The relevant test interactions are split into ``n_strata`` strata by their propensity:
    ``"quantile"`` bins have (up to ties) equal numbers of interactions; ``"width"`` bins
    split the propensity range evenly, which on heavy-tailed propensities leaves almost
    everything in the first stratum. The metric is computed per stratum on that stratum's
    interactions (Average-Over-All within the stratum) and marginalised,
    :math:`\hat M = \sum_s \mathrm{share}_s M_s`, with :math:`\mathrm{share}_s` the stratum's
    share of test interactions.

    ``metric`` is a gain (``"recall"``, ``"dcg"``, ``"auc"``) or ``"ndcg"`` (per-user nDCG@k
    normalised by the ideal DCG of the stratum's relevant items, as the paper reports).

    Returns
    -------
    DataFrame with one row per stratum ``Q1..Qn`` and a final ``combined`` row; columns
    ``stratum``, ``p_low``, ``p_high``, ``interactions``, ``users``, ``items``, ``share``,
    ``value``. A stratum with no interaction has ``value`` NaN and share 0.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5, 0.3]])
    >>> test = pd.DataFrame({"user": [0, 0], "item": [0, 1], "rating": [5.0, 5.0]})
    >>> stratified(scores, test, np.array([0.9, 0.1, 0.5, 0.3]), k=1)[["stratum", "share", "value"]]
        stratum  share  value
    0        Q1    0.5    0.0
    1        Q2    0.5    1.0
    2  combined    1.0    0.5
    """
    if metric not in GAINS + ("ndcg",):
        raise ValueError(f"metric must be one of {GAINS + ('ndcg',)}, got {metric!r}")
    n_strata, binning = _check_n_strata(n_strata), _check_binning(binning)
    scores, k, rel = _ranking_input(scores, test, k=k, threshold=threshold)
    rel = rel.reset_index(drop=True)
    p = check_propensity(propensity, rel["user"].to_numpy(np.int64),
                         rel["item"].to_numpy(np.int64), scores.shape, upper_one=False)
    stratum, edges = assign_strata(p, n_strata, binning=binning)
    rows = []
    for s in range(n_strata):
        part = rel[stratum == s]
        if len(part) == 0:
            value = np.nan
        elif metric == "ndcg":
            value = float(ranking_metrics(scores, part, k=k, threshold=threshold,
                                          exclude=exclude, auc=False)["ndcg"].mean())
        else:
            value = aoa(scores, part, metric=metric, k=k, threshold=threshold, exclude=exclude)
        rows.append({"stratum": f"Q{s + 1}", "p_low": edges[s], "p_high": edges[s + 1],
                     "interactions": len(part), "users": part["user"].nunique(),
                     "items": part["item"].nunique(), "share": len(part) / len(rel),
                     "value": value})
    out = pd.DataFrame(rows)
    combined = float(np.nansum(out["share"] * out["value"]))
    out.loc[len(out)] = {"stratum": "combined", "p_low": edges[0], "p_high": edges[-1],
                         "interactions": len(rel), "users": rel["user"].nunique(),
                         "items": rel["item"].nunique(), "share": 1.0, "value": combined}
    return out
