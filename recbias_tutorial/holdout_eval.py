r"""Evaluate one model under several offline estimators of nDCG@k, with propensity strata.

Jadidinejad, Macdonald & Ounis (SIGIR 2021) judge an offline evaluation protocol by how well
the ranking of *many* models it produces agrees with the ranking under an open-loop (MAR)
ground truth. This module evaluates one model (a score matrix) at a time;
:mod:`recbias_tutorial.zoo_eval` runs it over a zoo and compares the protocols.

* :func:`holdout_evaluator` builds, once per test set, a function ``scores -> tidy frame``
  that computes, for one model, the ground-truth nDCG@k on a MAR test set and the estimates
  of it from a logged (MNAR) held-out split: ``holdout`` (plain per-user nDCG@k), ``IPS`` and
  ``SNIPS`` (the DCG gain weighted by 1/P), ``stratified`` (propensity strata, combined as
  :math:`\sum_s \mathrm{share}_s M_s`) and each stratum ``Q1..Qn`` alone. Every rank
  position is computed once per model and test set (:func:`recbias_tutorial.metrics.rank_positions`)
  and reused for all cut-offs, strata and estimators; the values equal those of
  :func:`recbias_tutorial.estimators.stratified`, :func:`~recbias_tutorial.estimators.snips`
  and :func:`~recbias_tutorial.estimators.ips` (the tests check it).
* :func:`rank_relevant`: the relevant test rows with their rank positions and propensities.
* :func:`assign_strata` and :func:`strata_table`: the propensity strata themselves (the same
  rule as :func:`~recbias_tutorial.estimators.stratified`), without any model.

Tidy frames have the columns ``estimator``, ``n_strata``, ``binning``, ``k`` and ``value``.
Estimators that do not stratify have ``n_strata = 0`` and ``binning = ""``; ``stratified``
and ``Q1..Qn`` carry the number of strata and the binning they come from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._validation import check_feedback, check_k, check_propensity, check_scores
from .estimators import BINNINGS, _check_binning, _check_n_strata, assign_strata
from .metrics import _dcg_gain, _ndcg, _positions, _ranking_input, rank_positions, relevant

__all__ = [
    "BINNINGS",
    "assign_strata",
    "holdout_evaluator",
    "rank_relevant",
    "strata_table",
]

#: Ways to cut the propensity range into strata (as in :func:`estimators.stratified`).

_COLUMNS = ["estimator", "n_strata", "binning", "k", "value"]


# --------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------
def _check_ks(ks: Any, n_items: int) -> tuple[int, ...]:
    if isinstance(ks, (int, np.integer)) and not isinstance(ks, bool):
        ks = (ks,)
    try:
        values = tuple(ks)
    except TypeError:
        raise ValueError(f"ks must be an int or a sequence of ints, got {ks!r}") from None
    if not values:
        raise ValueError("ks must not be empty")
    return tuple(sorted({check_k(k, n_items, "ks") for k in values}))


# --------------------------------------------------------------------------------------
# strata
# --------------------------------------------------------------------------------------
def strata_table(test: pd.DataFrame, propensity: Any, *, n_items: int, n_strata: int = 2,
                 binning: str = "quantile", threshold: float = 4.0) -> pd.DataFrame:
    """Sizes of the propensity strata of a test set (no model needed).

    Same rows and size columns as :func:`estimators.stratified` (without ``value``), plus
    ``item_share``: the stratum's share of the distinct items of the relevant test rows.

    Parameters
    ----------
    test : DataFrame with ``user``, ``item``, ``rating``
    propensity : 1-D array of per-item propensities (length ``n_items``)
    n_items : int
        Catalogue size.
    n_strata, binning, threshold : as in :func:`estimators.stratified`

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
    rel = _relevant_rows(test, propensity, n_items, threshold)
    stratum, edges = assign_strata(rel["p"].to_numpy(), n_strata, binning=binning)
    n_items_rel = rel["item"].nunique()
    rows = []
    for s in range(n_strata):
        part = rel[stratum == s]
        rows.append({"stratum": f"Q{s + 1}", "p_low": edges[s], "p_high": edges[s + 1],
                     "interactions": len(part), "users": part["user"].nunique(),
                     "items": part["item"].nunique(), "share": len(part) / len(rel),
                     "item_share": part["item"].nunique() / n_items_rel})
    rows.append({"stratum": "combined", "p_low": edges[0], "p_high": edges[-1],
                 "interactions": len(rel), "users": rel["user"].nunique(),
                 "items": n_items_rel, "share": 1.0, "item_share": 1.0})
    return pd.DataFrame(rows)


def _relevant_rows(test: pd.DataFrame, propensity: Any, n_items: int,
                   threshold: float) -> pd.DataFrame:
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 1:
        raise ValueError(f"n_items must be a positive integer, got {n_items!r}")
    check_feedback(test, "test", np.iinfo(np.int64).max, n_items)
    p = np.asarray(propensity, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"propensity must be 1-D (one value per item), got {p.ndim}-D")
    rel = relevant(test, threshold)
    if len(rel) == 0:
        raise ValueError(f"test has no relevant items (rating >= threshold={threshold})")
    items = rel["item"].to_numpy(np.int64)
    vals = check_propensity(p, rel["user"].to_numpy(np.int64), items, (1, n_items), upper_one=False)
    return pd.DataFrame({"user": rel["user"].to_numpy(np.int64), "item": items, "p": vals})


# --------------------------------------------------------------------------------------
# one model
# --------------------------------------------------------------------------------------
def rank_relevant(scores: Any, test: pd.DataFrame, *, k: int, threshold: float = 4.0,
                  exclude: pd.DataFrame | None = None, propensity: Any = None) -> pd.DataFrame:
    """The relevant test rows with their rank position (capped at ``k``) and propensity.

    Parameters
    ----------
    scores : array (n_users, n_items)
    test : DataFrame with ``user``, ``item``, ``rating``
    k : int
        Largest cut-off needed; positions ``>= k`` are returned as ``k``.
    threshold : float
        A test row is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (the training pairs).
    propensity : array, optional
        Per-item (1-D) or per-pair (2-D) propensities; column ``p`` is NaN without it.

    Returns
    -------
    DataFrame with columns ``user``, ``item``, ``z`` (0-based position, capped at ``k``), ``p``.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5]])
    >>> test = pd.DataFrame({"user": [0, 0], "item": [1, 2], "rating": [5.0, 4.0]})
    >>> rank_relevant(scores, test, k=2)[["item", "z"]].to_dict("list")
    {'item': [1, 2], 'z': [2, 1]}
    """
    scores, k, rel = _ranking_input(scores, test, k=k, threshold=threshold)
    users = rel["user"].to_numpy(np.int64)
    items = rel["item"].to_numpy(np.int64)
    z = _positions(scores, rel, exclude, k)
    if propensity is None:
        p = np.full(len(rel), np.nan)
    else:
        p = check_propensity(propensity, users, items, scores.shape, upper_one=False)
    return pd.DataFrame({"user": users, "item": items, "z": z, "p": p})


def _mean_ndcg(codes: np.ndarray, z: np.ndarray, k: int, n_codes: int) -> float:
    """Mean over users (codes) with >= 1 row of per-user nDCG@k (ideal DCG of their rows)."""
    if len(codes) == 0:
        return float("nan")
    dcg = np.bincount(codes, weights=_dcg_gain(z, k), minlength=n_codes)
    n_rel = np.bincount(codes, minlength=n_codes)
    has = n_rel > 0
    return float(np.mean(_ndcg(dcg[has], n_rel[has], k)))


class _Strata:
    """One stratification of a prepared test set: (stratum, user) cells and shares."""

    def __init__(self, stratum: np.ndarray, n: int, codes: np.ndarray, n_codes: int):
        self.n = n
        self.cell = stratum * n_codes + codes
        self.n_rel = np.bincount(self.cell, minlength=n * n_codes).reshape(n, n_codes)
        self.has = self.n_rel > 0
        self.n_users = self.has.sum(axis=1)
        self.shares = np.bincount(stratum, minlength=n) / len(stratum)

    def values(self, gain: np.ndarray, k: int) -> np.ndarray:
        """Mean per-user nDCG@k of each stratum (NaN for an empty stratum)."""
        dcg = np.bincount(self.cell, weights=gain, minlength=self.n_rel.size).reshape(self.n_rel.shape)
        ndcg = np.where(self.has, _ndcg(dcg, np.maximum(self.n_rel, 1), k), 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return ndcg.sum(axis=1) / self.n_users


class _RankedSet:
    """A test set prepared once: relevant rows, user codes, propensities and strata."""

    def __init__(self, test, threshold, propensity, n_items, strata_specs):
        rel = relevant(test, threshold)
        if len(rel) == 0:
            raise ValueError(f"test has no relevant items (rating >= threshold={threshold})")
        self.rel = rel
        self.users, self.codes = np.unique(rel["user"].to_numpy(np.int64), return_inverse=True)
        self.n_codes = len(self.users)
        self.counts = np.bincount(self.codes, minlength=self.n_codes).astype(float)
        self.p = None
        self.strata: dict[tuple[int, str], _Strata] = {}
        if propensity is not None:
            self.p = check_propensity(propensity, rel["user"].to_numpy(np.int64),
                                      rel["item"].to_numpy(np.int64), (1, n_items), upper_one=False)
            for n, b in strata_specs:
                stratum = assign_strata(self.p, n, binning=b)[0]
                self.strata[n, b] = _Strata(stratum, n, self.codes, self.n_codes)


def holdout_evaluator(*, holdout: pd.DataFrame, propensity: Any, n_items: int,
                      truth: pd.DataFrame | None = None, exclude: pd.DataFrame | None = None,
                      ks: int | Sequence[int] = 10, n_strata: int = 2,
                      sweep: Iterable[int] = (), binnings: Iterable[str] = ("quantile",),
                      threshold: float = 4.0) -> Callable[[np.ndarray], pd.DataFrame]:
    r"""A function ``scores -> tidy frame`` of the estimators of nDCG@k for one model.

    The test sets and the strata are prepared once; each call ranks the relevant rows of
    ``holdout`` (and ``truth``) once, up to the largest cut-off, and derives every value
    from those positions.

    Estimators (column ``estimator``), for every ``k`` in ``ks``:

    * ``truth`` — mean per-user nDCG@k on ``truth`` (e.g. the MAR test), if given;
    * ``holdout`` — mean per-user nDCG@k on ``holdout`` (the standard protocol);
    * ``IPS`` — :func:`estimators.ips` with the DCG gain, ``propensity`` and, in place of
      the unknown :math:`|S_u|`, the user's number of relevant held-out items;
    * ``SNIPS`` — :func:`estimators.snips` with the DCG gain;
    * ``stratified`` — :func:`estimators.stratified` with ``metric="ndcg"`` (combined row),
      for ``n_strata`` quantile strata and for every number of strata in ``sweep`` and every
      binning in ``binnings``;
    * ``Q1`` … ``Qn`` — the ``n_strata`` quantile strata on their own.

    Parameters
    ----------
    holdout : DataFrame
        Logged held-out feedback (``user``, ``item``, ``rating``).
    propensity : 1-D array
        Per-item propensities (e.g. :func:`propensity.popularity_propensity` of the training
        split), used by IPS, SNIPS and the strata.
    n_items : int
        Catalogue size (checked against ``propensity`` and the score matrices).
    truth : DataFrame, optional
        Randomly exposed test feedback whose nDCG@k is the ground truth.
    exclude : DataFrame, optional
        Pairs removed from the candidates (the training pairs), for every test set.
    ks : int or sequence of int
        Cut-offs.
    n_strata : int
        Number of (quantile) strata of the main ``stratified`` and ``Q*`` rows.
    sweep : iterable of int
        Further numbers of strata for ``stratified`` rows (e.g. ``range(1, 11)``).
    binnings : iterable of ``"quantile"`` / ``"width"``
        Binnings used for the ``sweep``.
    threshold : float
        Relevance threshold.

    Returns
    -------
    callable
        ``evaluate(scores) -> DataFrame`` with columns ``estimator``, ``n_strata``,
        ``binning``, ``k``, ``value``.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5, 0.3]])
    >>> test = pd.DataFrame({"user": [0, 0], "item": [0, 1], "rating": [5.0, 5.0]})
    >>> evaluate = holdout_evaluator(holdout=test, propensity=np.array([0.9, 0.1, 0.5, 0.3]),
    ...                              n_items=4, ks=1)
    >>> evaluate(scores).set_index("estimator")["value"].round(3).to_dict()
    {'holdout': 1.0, 'IPS': 0.556, 'SNIPS': 0.1, 'stratified': 0.5, 'Q1': 0.0, 'Q2': 1.0}
    """
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 1:
        raise ValueError(f"n_items must be a positive integer, got {n_items!r}")
    ks = _check_ks(ks, n_items)
    n_strata = _check_n_strata(n_strata)
    binnings = tuple(_check_binning(b, "binnings") for b in binnings)
    sweep = tuple(_check_n_strata(n, "sweep") for n in sweep)
    if sweep and not binnings:
        raise ValueError("binnings must not be empty when sweep is given")
    p = np.asarray(propensity, dtype=float)
    if p.ndim != 1 or p.shape[0] != n_items:
        raise ValueError(f"propensity must be 1-D of length n_items={n_items}, got shape {p.shape}")
    check_feedback(holdout, "holdout", np.iinfo(np.int64).max, n_items)
    specs = [(n_strata, "quantile")] + [(n, b) for b in binnings for n in sweep
                                        if (n, b) != (n_strata, "quantile")]
    held = _RankedSet(holdout, threshold, p, n_items, specs)
    true = None
    if truth is not None:
        check_feedback(truth, "truth", np.iinfo(np.int64).max, n_items)
        true = _RankedSet(truth, threshold, None, n_items, [])
    k_max = ks[-1]

    def evaluate(scores: np.ndarray) -> pd.DataFrame:
        scores = check_scores(scores)
        if scores.shape[1] != n_items:
            raise ValueError(f"scores must have n_items={n_items} columns, got {scores.shape[1]}")
        rows: list[tuple] = []
        if true is not None:
            z_true = rank_positions(scores, true.rel, exclude=exclude, k=k_max)
            rows += [("truth", 0, "", k, _mean_ndcg(true.codes, z_true, k, true.n_codes)) for k in ks]
        z = rank_positions(scores, held.rel, exclude=exclude, k=k_max)
        c, w = held.codes, 1.0 / held.p
        for k in ks:
            gain = _dcg_gain(z, k)
            rows.append(("holdout", 0, "", k, _mean_ndcg(c, z, k, held.n_codes)))
            ips = np.bincount(c, weights=gain * w, minlength=held.n_codes) / held.counts
            rows.append(("IPS", 0, "", k, float(ips.mean())))
            num = np.bincount(c, weights=gain * w, minlength=held.n_codes)
            den = np.bincount(c, weights=w, minlength=held.n_codes)
            rows.append(("SNIPS", 0, "", k, float((num / den).mean())))
            for (n, b), strata in held.strata.items():
                values = strata.values(gain, k)
                rows.append(("stratified", n, b, k, float(np.nansum(strata.shares * values))))
                if (n, b) == (n_strata, "quantile"):
                    rows += [(f"Q{s + 1}", n, b, k, float(v)) for s, v in enumerate(values)]
        return pd.DataFrame(rows, columns=_COLUMNS)

    return evaluate
