r"""Propensity-stratified evaluation (Jadidinejad et al., SIGIR 2021); home: ``estimators``.

The test interactions are split into strata by the propensity of their item; the metric is
computed per stratum on that stratum's relevant interactions and the strata are combined
with weights: :math:`\sum_s w_s M_s`. Which rows define the bins and the weights, and the
binning rule, are arguments (:func:`stratified`), so that the authors' choices are one call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._ranking import GAINS, gains, ranking_input, relevant
from ._params import Interval, Options, declare
from ._validation import check_choice, check_feedback, check_int, check_propensity
from .metrics import ranking_metrics

__all__ = ["BINNINGS", "STRATA_ROWS", "assign_strata", "strata_table", "stratified"]

#: Binnings of the propensity strata (:func:`assign_strata`).
BINNINGS = ("quantile", "width", "cut")
#: Test rows that may define the strata's edges or weights (:func:`stratified`).
STRATA_ROWS = ("relevant", "all")


def _edges(ref: np.ndarray, n_strata: int, binning: str) -> np.ndarray:
    if binning == "quantile":
        return np.quantile(ref, np.linspace(0, 1, n_strata + 1))
    edges = np.linspace(ref.min(), ref.max(), n_strata + 1)
    if binning == "cut":  # pandas.cut(x, bins=n): the lowest edge moves down by 0.1% of the range
        span = ref.max() - ref.min()
        edges[0] -= 0.001 * span if span > 0 else 0.001 * abs(ref.min())
    return edges


def assign_strata(p: Any, n_strata: int = 2, *, binning: str = "quantile",
                  reference: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Stratum of each propensity (0 = lowest), the strata of :func:`stratified`.

    ``"quantile"``: edges at the quantiles of the reference values, so strata hold (up to
    ties) equal numbers of them; bins are closed on the left. ``"width"``: ``n_strata``
    equal-width bins over ``[min, max]`` of the reference values, closed on the left.
    ``"cut"``: what ``pandas.cut(x, bins=n_strata)`` does, as in the code of Jadidinejad et
    al. (2021): equal-width bins closed on the *right*, the lowest edge lowered by 0.1% of
    the range. A value outside the reference range goes to the first or last stratum.

    Parameters
    ----------
    p : array-like
        Propensities to assign (e.g. of the relevant test interactions); finite and > 0.
    n_strata : int
        Number of strata.
    binning : ``"quantile"``, ``"width"`` or ``"cut"``
        How the edges are placed (see above).
    reference : array-like, optional
        Values that define the edges (default: ``p`` itself), e.g. the propensities of *all*
        test ratings while ``p`` holds only the relevant ones.

    Returns
    -------
    (stratum, edges) : tuple of numpy.ndarray
        int64 stratum of each value (0 = lowest), and the ``n_strata + 1`` edges.

    Raises
    ------
    ValueError
        If ``n_strata`` is not a positive integer, ``binning`` is unknown, or ``p`` (or
        ``reference``) is not a non-empty 1-D array of finite values > 0.

    See Also
    --------
    recbias_tutorial.estimators.stratified : the estimator evaluated on these strata.
    recbias_tutorial.estimators.strata_table : stratum sizes of a test set.

    Examples
    --------
    >>> s, edges = assign_strata([0.01, 0.02, 0.03, 1.0], 2)
    >>> s.tolist()
    [0, 0, 1, 1]
    >>> assign_strata([0.01, 0.02, 0.03, 1.0], 2, binning="width")[0].tolist()
    [0, 0, 0, 1]
    >>> assign_strata([1.0, 2.0, 3.0], 2, binning="cut")[0].tolist()  # 2.0 is in (0.998, 2]
    [0, 0, 1]
    """
    n_strata = check_int(n_strata, "n_strata")
    binning = check_choice(binning, "binning", BINNINGS)

    def values(x: Any, name: str) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.ndim != 1 or x.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D array, got shape {x.shape}")
        if not np.isfinite(x).all() or (x <= 0).any():
            raise ValueError(f"{name} must hold finite propensities > 0")
        return x

    p = values(p, "p")
    ref = p if reference is None else values(reference, "reference")
    edges = _edges(ref, n_strata, binning)
    side = "left" if binning == "cut" else "right"
    stratum = np.clip(np.searchsorted(edges[1:-1], p, side=side), 0, n_strata - 1)
    return stratum.astype(np.int64), edges


def _strata_rows(test: pd.DataFrame, propensity: Any, shape: tuple[int, int], threshold: float,
                 bins_from: str, weights_from: str):
    """Relevant rows, their strata inputs and the rows that define edges and weights."""
    bins_from = check_choice(bins_from, "bins_from", STRATA_ROWS)
    weights_from = check_choice(weights_from, "weights_from", STRATA_ROWS)
    rel = relevant(test, threshold).reset_index(drop=True)
    p = check_propensity(propensity, rel["user"].to_numpy(np.int64),
                         rel["item"].to_numpy(np.int64), shape, upper_one=False)
    p_all = p
    if "all" in (bins_from, weights_from):
        p_all = check_propensity(propensity, test["user"].to_numpy(np.int64),
                                 test["item"].to_numpy(np.int64), shape, upper_one=False)
    return rel, p, (p_all if bins_from == "all" else p), (p_all if weights_from == "all" else p)


def _shares(p_weights: np.ndarray, edges: np.ndarray, n_strata: int, binning: str) -> np.ndarray:
    side = "left" if binning == "cut" else "right"
    s = np.clip(np.searchsorted(edges[1:-1], p_weights, side=side), 0, n_strata - 1)
    return np.bincount(s, minlength=n_strata) / len(s)


@declare(metric=Options(GAINS + ("ndcg",)), n_strata=Interval(int, 1), binning=Options(BINNINGS),
         k=Interval(int, None, optional=True), threshold=Interval(float))
def stratified(scores, test: pd.DataFrame, propensity, *, n_strata: int = 2,
               metric: str = "recall", k: int | None = 10, threshold: float = 4.0,
               exclude: pd.DataFrame | None = None, binning: str = "quantile",
               bins_from: str = "relevant", weights_from: str = "relevant") -> pd.DataFrame:
    r"""Propensity-stratified evaluation (Jadidinejad et al., SIGIR 2021).

    The relevant test interactions are split into ``n_strata`` strata by their propensity:
    ``"quantile"`` bins have (up to ties) equal numbers of interactions; ``"width"`` bins
    split the propensity range evenly, which on heavy-tailed propensities leaves almost
    everything in the first stratum; ``"cut"`` is ``pandas.cut``'s version of equal-width
    bins, as in the authors' code. The metric is computed per stratum on that stratum's
    relevant interactions (Average-Over-All within the stratum) and marginalised,
    :math:`\hat M = \sum_s \mathrm{share}_s M_s`.

    Which test rows define the bin edges (``bins_from``) and the shares (``weights_from``)
    are choices: ``"relevant"`` (the default) uses the relevant test interactions only;
    ``"all"`` uses every test rating, relevant or not, which is what the authors' code does
    (``bins_from="all", weights_from="all", binning="cut"``).

    ``metric`` is a gain (``"recall"``, ``"dcg"``, ``"auc"``) or ``"ndcg"`` (per-user nDCG@k
    normalised by the ideal DCG of the stratum's relevant items, as the paper reports).

    Parameters
    ----------
    scores : array (n_users, n_items)
        Finite scores, higher is better.
    test : DataFrame with ``user``, ``item``, ``rating``
        Logged held-out feedback; no duplicate pairs.
    propensity : array
        Per-item (1-D) or per-pair (2-D) propensities of any positive scale.
    n_strata : int, default 2
        Number of strata.
    metric : {"recall", "dcg", "auc", "ndcg"}, default "recall"
        Metric computed in each stratum.
    k : int or None, default 10
        Cut-off; None means the whole ranking (for ``"dcg"`` and ``"ndcg"``: no cut-off).
    threshold : float, default 4.0
        An item is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (e.g. the training pairs).
    binning : {"quantile", "width", "cut"}, default "quantile"
        How the strata are cut (:func:`assign_strata`).
    bins_from : {"relevant", "all"}, default "relevant"
        Test rows whose propensities define the bin edges.
    weights_from : {"relevant", "all"}, default "relevant"
        Test rows whose shares per stratum are the weights :math:`\mathrm{share}_s`.

    Returns
    -------
    pandas.DataFrame
        One row per stratum ``Q1..Qn`` and a final ``combined`` row; columns ``stratum``,
        ``p_low``, ``p_high``, ``interactions`` (relevant ones), ``users``, ``items``,
        ``share``, ``value``. A stratum with no relevant interaction has ``value`` NaN
        (it counts as 0 in the combined value).

    Raises
    ------
    ValueError
        If ``metric``, ``binning``, ``bins_from`` or ``weights_from`` is unknown or
        ``n_strata`` is not a positive integer; if ``scores``, ``test``, ``k`` or
        ``exclude`` are invalid (as in :func:`recbias_tutorial.estimators.aoa`) or ``test``
        has no relevant item; if ``propensity`` has the wrong shape or is NaN, not finite
        or <= 0 for a test pair that is used.

    See Also
    --------
    recbias_tutorial.estimators.assign_strata : the strata.
    recbias_tutorial.estimators.strata_table : the strata's sizes, without a model.
    recbias_tutorial.stats.reversal_pairs : model pairs whose order reverses in every stratum.
    recbias_tutorial.replications.jadidinejad2021.kendall_taus : the authors' protocol.

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
    scores, k, _ = ranking_input(scores, test, k=k, threshold=threshold)
    if k is None:
        k = scores.shape[1]
    rel, p, p_bins, p_weights = _strata_rows(test, propensity, scores.shape, threshold,
                                             bins_from, weights_from)
    stratum, edges = assign_strata(p, n_strata, binning=binning, reference=p_bins)
    shares = _shares(p_weights, edges, n_strata, binning)
    rows = []
    for s in range(n_strata):
        part = rel[stratum == s]
        if len(part) == 0:
            value = np.nan
        elif metric == "ndcg":
            value = float(ranking_metrics(scores, part, k=k, threshold=threshold,
                                          exclude=exclude, auc=False)["ndcg"].mean())
        else:
            gain = gains(scores, part, metric, k, exclude)  # aoa on the stratum's rows
            value = float(pd.Series(gain).groupby(part["user"].to_numpy(np.int64)).mean().mean())
        rows.append({"stratum": f"Q{s + 1}", "p_low": edges[s], "p_high": edges[s + 1],
                     "interactions": len(part), "users": part["user"].nunique(),
                     "items": part["item"].nunique(), "share": float(shares[s]),
                     "value": value})
    out = pd.DataFrame(rows)
    combined = float(np.nansum(out["share"] * out["value"]))
    out.loc[len(out)] = {"stratum": "combined", "p_low": edges[0], "p_high": edges[-1],
                         "interactions": len(rel), "users": rel["user"].nunique(),
                         "items": rel["item"].nunique(), "share": 1.0, "value": combined}
    return out


def strata_table(test: pd.DataFrame, propensity: Any, *, n_items: int, n_strata: int = 2,
                 binning: str = "quantile", threshold: float = 4.0,
                 bins_from: str = "relevant", weights_from: str = "relevant") -> pd.DataFrame:
    """Sizes of the propensity strata of a test set (no model needed).

    Same rows and size columns as :func:`stratified` (without ``value``), plus
    ``item_share``: the stratum's share of the distinct items of the relevant test rows.

    Parameters
    ----------
    test : DataFrame with ``user``, ``item``, ``rating``
        Held-out feedback; no duplicate pairs.
    propensity : 1-D array of per-item propensities (length ``n_items``)
        Propensities of any positive scale.
    n_items : int
        Catalogue size.
    n_strata, binning, threshold, bins_from, weights_from
        As in :func:`stratified`.

    Returns
    -------
    pandas.DataFrame
        One row per stratum ``Q1..Qn`` and a final ``combined`` row; columns ``stratum``,
        ``p_low``, ``p_high``, ``interactions``, ``users``, ``items``, ``share``,
        ``item_share``.

    Raises
    ------
    ValueError
        If ``n_items`` or ``n_strata`` is not a positive integer or ``binning``,
        ``bins_from`` or ``weights_from`` is unknown; if ``test`` is not valid feedback
        (columns ``user``, ``item``, ``rating``, integer ids, items in
        ``0..n_items - 1``, finite ratings, no duplicate pairs) or has no relevant item; if
        ``propensity`` is not 1-D of length ``n_items`` or is NaN, not finite or <= 0 for a
        test item that is used.

    See Also
    --------
    recbias_tutorial.estimators.stratified : the stratified estimate on the same strata.
    recbias_tutorial.estimators.assign_strata : the strata.

    Examples
    --------
    >>> test = pd.DataFrame({"user": [0, 0, 1, 1], "item": [0, 1, 2, 3], "rating": 5.0})
    >>> strata_table(test, np.array([0.01, 0.02, 0.03, 1.0]), n_items=4,
    ...              binning="width")[["stratum", "interactions", "items", "share"]]
        stratum  interactions  items  share
    0        Q1             3      3   0.75
    1        Q2             1      1   0.25
    2  combined             4      4   1.00
    """
    n_items = check_int(n_items, "n_items")
    _relevant_rows(test, propensity, n_items, threshold)  # validates test and propensity
    rel, p, p_bins, p_weights = _strata_rows(test, propensity, (1, n_items), threshold,
                                             bins_from, weights_from)
    rel = pd.DataFrame({"user": rel["user"].to_numpy(np.int64),
                        "item": rel["item"].to_numpy(np.int64), "p": p})
    stratum, edges = assign_strata(p, n_strata, binning=binning, reference=p_bins)
    shares = _shares(p_weights, edges, n_strata, binning)
    n_items_rel = rel["item"].nunique()
    rows = []
    for s in range(n_strata):
        part = rel[stratum == s]
        rows.append({"stratum": f"Q{s + 1}", "p_low": edges[s], "p_high": edges[s + 1],
                     "interactions": len(part), "users": part["user"].nunique(),
                     "items": part["item"].nunique(), "share": float(shares[s]),
                     "item_share": part["item"].nunique() / n_items_rel})
    rows.append({"stratum": "combined", "p_low": edges[0], "p_high": edges[-1],
                 "interactions": len(rel), "users": rel["user"].nunique(),
                 "items": n_items_rel, "share": 1.0, "item_share": 1.0})
    return pd.DataFrame(rows)


def _relevant_rows(test: pd.DataFrame, propensity: Any, n_items: int,
                   threshold: float) -> pd.DataFrame:
    n_items = check_int(n_items, "n_items")
    check_feedback(test, "test", n_items=n_items)
    p = np.asarray(propensity, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"propensity must be 1-D (one value per item), got {p.ndim}-D")
    rel = relevant(test, threshold)
    if len(rel) == 0:
        raise ValueError(f"test has no relevant items (rating >= threshold={threshold})")
    items = rel["item"].to_numpy(np.int64)
    vals = check_propensity(p, rel["user"].to_numpy(np.int64), items, (1, n_items), upper_one=False)
    return pd.DataFrame({"user": rel["user"].to_numpy(np.int64), "item": items, "p": vals})
