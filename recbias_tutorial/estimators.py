r"""Offline estimators of ranking quality from logged or randomly exposed feedback.

All estimators share the ranks :math:`Z_{ui}` of :func:`recbias_tutorial.metrics.rank_positions`
and the gains :math:`c(Z)`: ``recall`` :math:`1[Z<k]`, ``dcg``
:math:`1[Z<k]/\log_2(Z+2)` and ``auc`` :math:`1 - Z/(|C_u|-1)`. Let :math:`S^*_u` be the relevant
test items of user :math:`u` (``rating >= threshold``).

* :func:`aoa` — Average-Over-All:
  :math:`\frac{1}{|U|}\sum_u \frac{1}{|S^*_u|}\sum_{i\in S^*_u} c(Z_{ui})`.
* :func:`ips` — :math:`\frac{1}{|U|}\sum_u \frac{1}{|S_u|}\sum_{i\in S^*_u} c(Z_{ui})/P_{ui}` with
  absolute propensities and the true :math:`|S_u|` (Yang et al., 2018).
* :func:`snips` — :math:`\frac{1}{|U|}\sum_u \sum_{i} c(Z_{ui})/P_{ui} \big/ \sum_i 1/P_{ui}`.
* :func:`stratified` — see its docstring.
* :func:`ure_recall`, :func:`recall_at_kbar` and :func:`kbar_curves` (Recall@K̄ for many K̄)
  on randomly exposed data — see their docstrings (they live in ``_random_exposure``).

Every estimator is a mean over users, so :func:`~.stats.user_bootstrap` resamples users and
:func:`bootstrap_ci` applies it to the per-user terms of :func:`user_values`.

Each estimator is also an :class:`Estimator` object in one list (:func:`registered`), which
:func:`user_values`, :func:`bootstrap_ci`, :func:`~recbias_tutorial.distributed.estimate`,
:func:`~recbias_tutorial.comparison.compare_methods` and the flat API all read:
:func:`register` adds an estimator to every one of them at once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import _builtin_estimators  # noqa: F401  (registers the package's estimators)
from ._estimator_registry import Estimator, register, registered, unregister
from ._estimator_registry import lookup as _lookup
from ._estimator_registry import per_user_names as _per_user_names
from ._params import Interval, Options, Seed, check_forwarded, declare
from ._random_exposure import kbar_curves, recall_at_kbar, ure_recall
from ._ranking import GAINS, ranking_input
from ._ranking import gains as _gains
from ._stratification import (
    BINNINGS,
    STRATA_ROWS,
    assign_strata,
    strata_table,
    stratified,
)
from ._validation import check_n_relevant, check_propensity
from .stats import user_bootstrap

__all__ = ["BINNINGS", "STRATA_ROWS", "GAINS", "Estimator", "aoa", "assign_strata",
           "bootstrap_ci", "ips", "kbar_curves", "recall_at_kbar", "register", "registered", "snips",
           "strata_table", "stratified", "unregister", "ure_recall", "user_values"]


def __getattr__(name: str):
    # ESTIMATORS: the names of the estimators with per-user terms, read from the registry
    # at each look-up, so that estimators registered later appear
    if name == "ESTIMATORS":
        return _per_user_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Declared rules of the arguments every estimator shares.
_GAIN_RULES = dict(metric=Options(GAINS), k=Interval(int, None, optional=True),
                   threshold=Interval(float))
_CLIP_RULE = dict(clip=Interval(float, 0.0, open="low", optional=True))  # <= 1 for ips: body


def _prepare(scores, test, metric, k, threshold):
    if metric != "auc" and k is None:
        raise ValueError(f"k must be an integer cut-off for metric={metric!r}, got None")
    scores, k, rel = ranking_input(scores, test, threshold=threshold,
                                    k=None if metric == "auc" else k)  # auc: no cut-off
    return scores, rel, k


@declare(estimator=Options(_per_user_names), **_GAIN_RULES, **_CLIP_RULE)
def user_values(scores, test: pd.DataFrame, propensity=None, *, estimator: str = "aoa",
                n_relevant=None, metric: str = "recall", k: int = 10, threshold: float = 4.0,
                exclude: pd.DataFrame | None = None, clip: float | None = None) -> pd.Series:
    """Per-user terms whose mean is the estimate (``aoa``, ``ips`` or ``snips``).

    :func:`aoa`, :func:`ips` and :func:`snips` return the mean of this Series; keeping the
    terms lets :func:`bootstrap_ci` resample users.

    Parameters
    ----------
    scores : array of shape (n_users, n_items)
        Finite scores, higher is better.
    test : DataFrame
        Held-out feedback with columns ``user``, ``item``, ``rating``; no duplicate pairs.
    propensity : array, optional
        Per-item (1-D, length ``n_items``) or per-pair (2-D, ``(n_users, n_items)``)
        propensities; required by ``ips`` and ``snips``, ignored by ``aoa``.
    estimator : str, default "aoa"
        Which per-user term to compute: any registered estimator with per-user terms
        (``estimators.ESTIMATORS``; :func:`register` adds one).
    n_relevant : array-like of length n_users, optional
        True number of relevant items of each user; required by ``ips``.
    metric : {"recall", "dcg", "auc"}, default "recall"
        Gain :math:`c(Z)`.
    k : int, default 10
        Cut-off for ``recall`` and ``dcg``, in ``1..n_items`` (ignored by ``auc``).
    threshold : float, default 4.0
        A test item is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (e.g. the training pairs).
    clip : float, optional
        Lower bound applied to the propensities: in (0, 1] for ``ips``, > 0 for ``snips``.

    Returns
    -------
    pandas.Series
        One value per user, indexed by ``user``: the users with a relevant test item
        (``aoa``, ``snips``) or with ``n_relevant >= 1`` (``ips``; users with relevant items
        of which none is in ``test`` count as 0).

    Raises
    ------
    ValueError
        If ``estimator`` or ``metric`` is unknown; if ``scores`` is not a non-empty 2-D
        array of finite real numbers; if ``test`` is not valid feedback (columns ``user``,
        ``item``, ``rating``, integer ids inside the score matrix, finite ratings, no
        duplicate pairs) or has no relevant item; if ``k`` is not an integer in
        ``1..n_items`` (``recall``, ``dcg``); if ``propensity`` is missing (``ips``,
        ``snips``), has the wrong shape, or is NaN, not finite or <= 0 for a relevant test
        pair after clipping (or above 1 for ``ips``); if ``clip`` is out of range; if
        ``n_relevant`` is missing (``ips``), is not one finite non-negative count per user,
        or is smaller than a user's number of relevant test items; if ``exclude`` is not a
        DataFrame of integer ``user`` and ``item`` ids inside the score matrix.

    See Also
    --------
    recbias_tutorial.estimators.aoa : the mean of the ``aoa`` terms.
    recbias_tutorial.estimators.bootstrap_ci : a user-level bootstrap of these terms.
    recbias_tutorial.stats.user_bootstrap : intervals of several columns of such terms.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5], [0.2, 0.8, 0.4]])
    >>> test = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 1], "rating": [5.0, 4.0, 5.0]})
    >>> user_values(scores, test, k=1).tolist()
    [0.5, 1.0]
    """
    est = _lookup(estimator)  # declared above: a registered name
    scores, rel, k = _prepare(scores, test, metric, k, threshold)
    users = rel["user"].to_numpy(np.int64)
    gain = _gains(scores, rel, metric, k, exclude)
    p = n_rel = None
    if est.propensity is not None:
        if propensity is None:
            raise ValueError(f"propensity is required for {estimator}")
        p = check_propensity(propensity, users, rel["item"].to_numpy(np.int64), scores.shape,
                             upper_one=est.propensity == "absolute", clip=clip)
    if est.needs_n_relevant:
        if n_relevant is None:
            raise ValueError("n_relevant (true number of relevant items per user) is required "
                             f"for {estimator}")
        n_rel = check_n_relevant(n_relevant, scores.shape[0])
        if (np.bincount(users, minlength=scores.shape[0]) > n_rel).any():
            raise ValueError("n_relevant is smaller than the observed relevant test items of "
                             "some user")
    return est.terms(gain, users, p, n_rel, scores.shape[0])


@declare(**_GAIN_RULES)
def aoa(scores, test: pd.DataFrame, *, metric: str = "recall", k: int = 10,
        threshold: float = 4.0, exclude: pd.DataFrame | None = None) -> float:
    """Average-Over-All: the plain average of a gain over held-out relevant items.

    Parameters
    ----------
    scores : array (n_users, n_items)
        Finite scores, higher is better.
    test : DataFrame with ``user``, ``item``, ``rating``
        Held-out feedback; no duplicate pairs.
    metric : ``"recall"``, ``"dcg"`` or ``"auc"``
        Gain :math:`c(Z)` that is averaged.
    k : int, default 10
        Cut-off for recall and dcg.
    threshold : float, default 4.0
        An item is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (e.g. the training pairs).

    Returns
    -------
    float
        Mean over users with a relevant test item of the mean gain of their relevant items.

    Raises
    ------
    ValueError
        If ``metric`` is unknown; if ``scores`` is not a non-empty 2-D array of finite real
        numbers; if ``test`` is not valid feedback (columns ``user``, ``item``, ``rating``,
        integer ids inside the score matrix, finite ratings, no duplicate pairs) or has no
        relevant item; if ``k`` is not an integer in ``1..n_items`` (``recall``, ``dcg``);
        if ``exclude`` is not a DataFrame of integer ``user`` and ``item`` ids inside the
        score matrix.

    See Also
    --------
    recbias_tutorial.estimators.snips : the same average with 1/P weights.
    recbias_tutorial.estimators.bootstrap_ci : the estimate with a bootstrap interval.
    recbias_tutorial.metrics.ranking_metrics : several per-user metrics at once.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5], [0.2, 0.8, 0.4]])
    >>> test = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 1], "rating": [5.0, 4.0, 5.0]})
    >>> aoa(scores, test, k=1)
    0.75
    """
    return float(user_values(scores, test, metric=metric, k=k, threshold=threshold,
                             exclude=exclude).mean())


@declare(**_GAIN_RULES, **_CLIP_RULE)
def snips(scores, test: pd.DataFrame, propensity, *, metric: str = "recall", k: int = 10,
          threshold: float = 4.0, exclude: pd.DataFrame | None = None,
          clip: float | None = None) -> float:
    """Self-normalised IPS: per user, a 1/P-weighted mean of the gains (scale-free in P).

    ``propensity`` is per item (1-D) or per user and item (2-D); ``clip`` is a lower bound
    applied to it (weights 1/P are capped at 1/clip).

    Parameters
    ----------
    scores : array (n_users, n_items)
        Finite scores, higher is better.
    test : DataFrame with ``user``, ``item``, ``rating``
        Logged held-out feedback; no duplicate pairs.
    propensity : array
        Per-item (1-D, length ``n_items``) or per-pair (2-D, ``(n_users, n_items)``)
        propensities; any positive scale (relative propensities are fine).
    metric : ``"recall"``, ``"dcg"`` or ``"auc"``
        Gain :math:`c(Z)`.
    k : int, default 10
        Cut-off for recall and dcg.
    threshold : float, default 4.0
        An item is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (e.g. the training pairs).
    clip : float, optional
        Lower bound applied to the propensities (> 0).

    Returns
    -------
    float
        Mean over users with a relevant test item of their 1/P-weighted mean gain.

    Raises
    ------
    ValueError
        If ``metric`` is unknown; if ``scores``, ``test``, ``k`` or ``exclude`` are invalid
        (as in :func:`recbias_tutorial.estimators.aoa`) or ``test`` has no relevant item; if
        ``propensity`` has the wrong shape or is NaN, not finite or <= 0 for a relevant test
        pair after clipping; if ``clip`` is not a finite number > 0.

    See Also
    --------
    recbias_tutorial.estimators.ips : the unnormalised estimator (absolute propensities).
    recbias_tutorial.estimators.aoa : the unweighted average.
    recbias_tutorial.propensity.popularity_propensity : relative propensities to plug in.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5]])
    >>> test = pd.DataFrame({"user": [0, 0], "item": [0, 1], "rating": [5.0, 5.0]})
    >>> snips(scores, test, np.array([0.5, 0.1, 0.2]), k=1)  # the rare item weighs 5x more
    0.16666666666666666
    """
    return float(user_values(scores, test, propensity, estimator="snips", metric=metric, k=k,
                             threshold=threshold, exclude=exclude, clip=clip).mean())


@declare(**_GAIN_RULES, **_CLIP_RULE)
def ips(scores, test: pd.DataFrame, propensity, *, n_relevant, metric: str = "recall",
        k: int = 10, threshold: float = 4.0, exclude: pd.DataFrame | None = None,
        clip: float | None = None) -> float:
    """Inverse-propensity-scored estimate; unbiased when P and :math:`|S_u|` are the true ones.

    ``propensity`` must hold absolute observation probabilities in (0, 1]; ``n_relevant`` is
    the true number of relevant items of each user (length n_users), known in simulations.

    Parameters
    ----------
    scores : array (n_users, n_items)
        Finite scores, higher is better.
    test : DataFrame with ``user``, ``item``, ``rating``
        Logged held-out feedback; no duplicate pairs.
    propensity : array
        Absolute propensities in (0, 1], per item (1-D, length ``n_items``) or per pair
        (2-D, ``(n_users, n_items)``).
    n_relevant : array-like of length n_users
        True number of relevant items :math:`|S_u|` of each user.
    metric : ``"recall"``, ``"dcg"`` or ``"auc"``
        Gain :math:`c(Z)`.
    k : int, default 10
        Cut-off for recall and dcg.
    threshold : float, default 4.0
        An item is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (e.g. the training pairs).
    clip : float, optional
        Lower bound applied to the propensities, in (0, 1].

    Returns
    -------
    float
        Mean over users with ``n_relevant >= 1`` of their sum of :math:`c(Z_{ui})/P_{ui}`
        over relevant test items, divided by :math:`|S_u|`.

    Raises
    ------
    ValueError
        If ``metric`` is unknown; if ``scores``, ``test``, ``k`` or ``exclude`` are invalid
        (as in :func:`recbias_tutorial.estimators.aoa`) or ``test`` has no relevant item; if
        ``propensity`` has the wrong shape or is NaN, not finite, <= 0 or > 1 for a relevant
        test pair after clipping; if ``clip`` is not in (0, 1]; if ``n_relevant`` is not one
        finite non-negative count per user or is smaller than a user's number of relevant
        test items.

    See Also
    --------
    recbias_tutorial.estimators.snips : self-normalised IPS (any propensity scale).
    recbias_tutorial.debiased_mf.calibrate_propensity : relative to absolute propensities.

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


@declare(estimator=Options(_per_user_names), seed=Seed(),
         confidence=Interval(float, 0.0, 1.0, open="both"), n_resamples=Interval(int, 1))
def bootstrap_ci(scores, test: pd.DataFrame, propensity=None, *, estimator: str = "aoa",
                 seed, confidence: float = 0.95, n_resamples: int = 1000,
                 **kwargs) -> tuple[float, float, float]:
    """Estimate and percentile-bootstrap interval, resampling users.

    :func:`~.stats.user_bootstrap` of the per-user terms of :func:`user_values`. Returns
    ``(estimate, low, high)``. Keyword arguments go to the estimator.

    Parameters
    ----------
    scores : array (n_users, n_items)
        Finite scores, higher is better.
    test : DataFrame with ``user``, ``item``, ``rating``
        Held-out feedback; no duplicate pairs.
    propensity : array, optional
        Propensities, required by ``ips`` and ``snips``.
    estimator : str, default "aoa"
        The estimator whose per-user terms are resampled: "aoa", "ips", "snips" or any other
        name in ``estimators.ESTIMATORS`` (:func:`register` adds one).
    seed : int or numpy.random.Generator
        Randomness of the resamples (required).
    confidence : float, default 0.95
        Coverage of the interval, in (0, 1).
    n_resamples : int, default 1000
        Number of bootstrap resamples.
    **kwargs
        Passed to :func:`user_values` (``metric``, ``k``, ``threshold``, ``exclude``,
        ``clip``, ``n_relevant``).

    Returns
    -------
    (estimate, low, high) : tuple of float
        The estimate and the bounds of its percentile interval.

    Raises
    ------
    ValueError
        On any invalid input of :func:`user_values`; if fewer than two users have a relevant
        test item; if ``seed`` is missing or not a non-negative int or Generator,
        ``confidence`` is not in (0, 1) or ``n_resamples`` is not a positive integer.

    See Also
    --------
    recbias_tutorial.estimators.user_values : the per-user terms that are resampled.
    recbias_tutorial.stats.user_bootstrap : the bootstrap itself, for several columns.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random((50, 20))
    >>> test = pd.DataFrame({"user": np.arange(50), "item": rng.integers(0, 20, 50), "rating": 5.0})
    >>> est, lo, hi = bootstrap_ci(scores, test, seed=1, k=5)
    >>> lo <= est <= hi
    True
    """
    kwargs = check_forwarded(user_values, kwargs)  # its **kwargs: by user_values' rules, once
    values = user_values(scores, test, propensity, estimator=estimator, **kwargs).to_numpy()
    if len(values) < 2:
        raise ValueError("test must cover at least two users with relevant items to bootstrap")
    ci = user_bootstrap(values, seed=seed, confidence=confidence, n_resamples=n_resamples)
    return float(ci["estimate"].iloc[0]), float(ci["low"].iloc[0]), float(ci["high"].iloc[0])
