r"""Full-catalogue ranks and per-user ranking metrics.

The rank of a test pair :math:`(u, i)` is its 0-based position :math:`Z_{ui}` in the stable
descending sort of the user's scores over the candidate items :math:`C_u` (all items minus the
pairs in ``exclude``; the item being ranked always stays a candidate): the number of candidates
scored strictly higher plus the number of tied candidates with a smaller id. Every item of the
catalogue is ranked: sampled-negative metrics are inconsistent (Krichene & Rendle, 2020).

Work is vectorised over users and items and done in chunks of users, so the score matrix is
never copied whole. :func:`recall_curves` gives Recall@K for many K from one sort per user.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ._ranking import (as_sets, curves_frame, dcg_gain, exclude_matrix, n_candidates, ndcg,
                       positions, ranking_input, recall_per_user)
from ._params import Interval, declare
from ._validation import check_cutoffs, check_feedback, check_frame, check_k
from .scorer import check_scores

__all__ = ["rank_positions", "ranking_metrics", "recall_curves", "subset_metrics"]


@declare(k=Interval(int, None, optional=True))
def rank_positions(scores, test: pd.DataFrame, *, exclude: pd.DataFrame | None = None,
                   k: int | None = None) -> np.ndarray:
    """Position :math:`Z_{ui}` of every test pair in its user's full-catalogue ranking.

    Parameters
    ----------
    scores : array of shape (n_users, n_items)
        Finite scores, higher is better.
    test : DataFrame
        Pairs to rank (columns ``user``, ``item``; other columns are ignored).
    exclude : DataFrame, optional
        Pairs removed from the candidates (typically the training pairs).
    k : int, optional
        When given, only positions below ``k`` are computed exactly and larger ones are
        returned as ``k`` (all that top-k metrics need; much faster). ``None``: exact.

    Returns
    -------
    numpy.ndarray
        int64 positions, one per row of ``test``, in its order (0 = ranked first).

    Raises
    ------
    ValueError
        If ``scores`` is not a non-empty 2-D array of finite real numbers; if ``test`` (or
        ``exclude``) is not a DataFrame with integer ``user`` and ``item`` columns holding
        ids inside the score matrix, or ``test`` is empty; if ``k`` is not an integer in
        ``1..n_items``.

    See Also
    --------
    recbias_tutorial.metrics.ranking_metrics : per-user metrics from these positions.
    recbias_tutorial.metrics.subset_metrics : metrics of many subsets of one ranked test set.
    recbias_tutorial.metrics.recall_curves : Recall@K for many K from one sort per user.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5, 0.5]])
    >>> test = pd.DataFrame({"user": [0, 0, 0], "item": [1, 2, 3]})
    >>> rank_positions(scores, test).tolist()
    [3, 1, 2]
    >>> rank_positions(scores, test, exclude=pd.DataFrame({"user": [0], "item": [0]})).tolist()
    [2, 0, 1]
    """
    scores = check_scores(scores)
    n_users, n_items = scores.shape
    check_feedback(test, "test", n_users, n_items, require_rating=False, unique=False)
    if k is not None:
        k = check_k(k, n_items)
    return positions(scores, test, exclude, k)


@declare(k=Interval(int, None), threshold=Interval(float))
def ranking_metrics(scores, test: pd.DataFrame, *, k: int = 10, threshold: float = 4.0,
                    exclude: pd.DataFrame | None = None, auc: bool = True) -> pd.DataFrame:
    """Per-user Recall@k, Precision@k, nDCG@k, MAP@k and AUC over the full catalogue.

    Users with at least one relevant test item (``rating >= threshold``) get a row.
    nDCG@k is normalised by the ideal DCG of the user's relevant test items; AP@k divides by
    ``min(k, |relevant|)``; AUC is the share of (relevant, other candidate) pairs ordered
    correctly, where the other candidates are the non-relevant candidate items (as in
    Cornac's ``AUC`` metric).

    Parameters
    ----------
    scores : array of shape (n_users, n_items)
        Finite scores, higher is better.
    test : DataFrame
        Held-out feedback with columns ``user``, ``item`` and ``rating``; no duplicate pairs.
    k : int, default 10
        Cut-off, in ``1..n_items``.
    threshold : float, default 4.0
        A test item is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (typically the training pairs), as in
        :func:`recbias_tutorial.metrics.rank_positions`.
    auc : bool, default True
        Also compute AUC (needs the exact position of every relevant item).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``user``, with columns ``n_relevant``, ``recall``, ``precision``,
        ``ndcg``, ``map`` and (unless ``auc=False``, which skips the full ranking and is much
        faster) ``auc``.

    Raises
    ------
    ValueError
        If ``scores`` is not a non-empty 2-D array of finite real numbers; if ``test`` is
        not a non-empty DataFrame with columns ``user``, ``item``, ``rating`` (integer ids
        inside the score matrix, finite ratings, no duplicate pairs) or has no relevant
        item; if ``k`` is not an integer in ``1..n_items``; if ``exclude`` has ids outside
        the score matrix.

    See Also
    --------
    recbias_tutorial.metrics.rank_positions : the positions the metrics are computed from.
    recbias_tutorial.metrics.subset_metrics : the same metrics for many subsets at once.
    recbias_tutorial.estimators.aoa : the mean of one gain over users, as a float.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5, 0.7]])
    >>> test = pd.DataFrame({"user": [0, 0], "item": [1, 3], "rating": [5.0, 4.0]})
    >>> ranking_metrics(scores, test, k=2).round(3).to_dict("records")
    [{'n_relevant': 2, 'recall': 0.5, 'precision': 0.5, 'ndcg': 0.387, 'map': 0.25, 'auc': 0.25}]
    """
    scores, k, rel = ranking_input(scores, test, k=k, threshold=threshold)
    z = positions(scores, rel, exclude, None if auc else k)
    users = rel["user"].to_numpy(np.int64)
    frame = pd.DataFrame({"user": users, "z": z,
                          "n_cand": n_candidates(scores.shape, rel, exclude)})
    frame = frame.sort_values(["user", "z"], kind="stable")
    frame["hit"] = frame["z"] < k
    frame["rank_among_rel"] = frame.groupby("user").cumcount()  # relevant items ranked above
    frame["dcg"] = dcg_gain(frame["z"].to_numpy(), k)
    frame["prec_at_hit"] = np.where(frame["hit"], (frame["rank_among_rel"] + 1) / (frame["z"] + 1), 0.0)
    # negatives ranked below a relevant item: candidates below it minus relevant ones below it
    g = frame.groupby("user", sort=True)
    n_rel = g.size()
    frame["n_rel"] = frame["user"].map(n_rel)
    below = frame["n_cand"] - 1 - frame["z"]
    rel_below = frame["n_rel"] - 1 - frame["rank_among_rel"]
    frame["neg_below"] = below - rel_below
    g = frame.groupby("user", sort=True)
    hits = g["hit"].sum()
    n_neg = g["n_cand"].first() - n_rel
    out = pd.DataFrame({
        "n_relevant": n_rel,
        "recall": hits / n_rel,
        "precision": hits / k,
        "ndcg": ndcg(g["dcg"].sum(), n_rel.to_numpy(), k),
        "map": g["prec_at_hit"].sum() / np.minimum(n_rel, k),
        "auc": g["neg_below"].sum() / (n_rel * n_neg).where(n_neg > 0),
    })
    if not auc:
        out = out.drop(columns="auc")
    out.index.name = "user"
    return out


# --------------------------------------------------------------------------------------
# many cut-offs at once
# --------------------------------------------------------------------------------------
@declare(threshold=Interval(float))
def recall_curves(scores, test, ks, *, threshold: float = 4.0,
                  exclude: pd.DataFrame | None = None, per_user: bool = False) -> pd.DataFrame:
    r"""Full-catalogue Recall@K for many K at once (one sort per user instead of one per K).

    For every relevant pair of ``test`` the position :math:`Z_{ui}` in the stable descending
    sort of the user's scores over all items minus ``exclude`` is computed once (ties: smaller
    item id first, as in :func:`rank_positions`); Recall@K is the mean over users with a
    relevant test item of the share of their relevant test items with :math:`Z < K`. Each
    value equals :func:`recbias_tutorial.estimators.aoa` with ``metric="recall"`` and the
    same ``k``, ``threshold`` and ``exclude``.

    Applied to a randomly exposed set :math:`D_{rand}`, this is the URE estimate of
    :func:`recbias_tutorial.estimators.ure_recall` (equal to it when the scores have no ties).

    Parameters
    ----------
    scores : array (n_users, n_items)
    test : DataFrame, or mapping name -> DataFrame
        Pairs with ``user``, ``item``, ``rating``. Several sets share one sort of the scores.
    ks : sequence of int
        Cut-offs in 1..n_items.
    threshold : float
        A pair is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (the training pairs); the item being ranked always
        stays a candidate, as in :func:`rank_positions`.
    per_user : bool
        Return per-user values (for a user-level bootstrap) instead of means.

    Returns
    -------
    pandas.DataFrame
        ``per_user=False``: one row per set (index ``set``; ``"test"`` for a single frame),
        one column per K. ``per_user=True``: rows indexed by (``set``, ``user``).

    Raises
    ------
    ValueError
        If ``scores`` is not a non-empty 2-D array of finite real numbers; if ``test`` is
        neither a DataFrame nor a non-empty mapping of DataFrames, or one of its frames is
        not valid feedback (columns ``user``, ``item``, ``rating``, ids inside the score
        matrix, finite ratings, no duplicate pairs) or has no relevant item; if ``ks`` is
        not a non-empty list of integers in ``1..n_items``; if ``exclude`` has ids outside
        the score matrix.

    See Also
    --------
    recbias_tutorial.metrics.rank_positions : the positions behind every value.
    recbias_tutorial.estimators.ure_recall : URE, one K on randomly exposed data.
    recbias_tutorial.estimators.kbar_curves : Recall@K̄ ranking random items among themselves.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5, 0.3], [0.2, 0.8, 0.4, 0.6]])
    >>> test = pd.DataFrame({"user": [0, 0, 1], "item": [1, 2, 1], "rating": [5.0, 4.0, 5.0]})
    >>> recall_curves(scores, test, [1, 2, 4]).loc["test"].tolist()
    [0.5, 0.75, 1.0]
    >>> recall_curves(scores, test, [1], exclude=pd.DataFrame({"user": [0], "item": [0]}))[1].item()
    0.75
    """
    scores = check_scores(scores)
    sets = as_sets(test, "test")
    ks = check_cutoffs(ks, scores.shape[1], "ks")
    excl = exclude_matrix(exclude, scores.shape)
    rels = {}
    for name, frame in sets.items():
        label = f"test[{name!r}]" if len(sets) > 1 else "test"
        rel = ranking_input(scores, frame, k=None, threshold=threshold, name=label)[2]
        rels[name] = rel
    # exact positions, by comparisons or one sort per user, whichever is cheaper per chunk
    pos = np.split(positions(scores, pd.concat(rels.values()), excl, None),
                   np.cumsum([len(r) for r in rels.values()])[:-1])
    frames = {name: recall_per_user(rel["user"].to_numpy(np.int64), z, ks)
              for (name, rel), z in zip(rels.items(), pos)}
    return curves_frame(frames, per_user)


@declare(k=Interval(int, 1), threshold=Interval(float))
def subset_metrics(positions: np.ndarray, test: pd.DataFrame, subsets: Mapping[Any, np.ndarray], *,
                   k: int = 10, threshold: float = 4.0) -> pd.DataFrame:
    """Recall, Precision, nDCG and MAP@k of many subsets of one ranked test set at once.

    The rank of a test pair does not depend on the other pairs of the test set, so the
    metrics of any subset follow from the positions of its rows. The result equals
    ``ranking_metrics(scores, test.iloc[rows], k=k, threshold=threshold, exclude=...,
    auc=False).mean()`` for every subset, without ranking again.

    Parameters
    ----------
    positions : array of int, one per row of ``test``
        Positions ``Z`` of the rows (0 = top), e.g. from
        :func:`recbias_tutorial.metrics.rank_positions` (``k=k`` is enough: larger
        positions may be capped at ``k``).
    test : DataFrame
        The ranked pairs (``user``, ``rating``).
    subsets : mapping key -> array of int
        Row positions (0-based, into ``test``) of each subset; rows must be distinct.
    k : int, default 10
        Cut-off.
    threshold : float, default 4.0
        A row is relevant when ``rating >= threshold``.

    Returns
    -------
    pandas.DataFrame
        Indexed by the subset keys, columns ``recall``, ``precision``, ``ndcg``, ``map``
        (means over users with >= 1 relevant row in the subset; NaN when there is none) and
        ``n_users``.

    Raises
    ------
    ValueError
        If ``k`` is not a positive integer or ``threshold`` not a finite number; if
        ``test`` is not a DataFrame with columns ``user`` and ``rating``; if
        ``positions`` does not have one entry per row of ``test`` or holds anything but
        whole numbers >= 0; if ``subsets`` is not a mapping, or one of its subsets has row
        positions outside ``0..len(test) - 1``.

    See Also
    --------
    recbias_tutorial.metrics.rank_positions : the positions this function takes.
    recbias_tutorial.metrics.ranking_metrics : the same metrics of one test set, per user.

    Examples
    --------
    >>> test = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 0], "rating": [5.0, 4.0, 5.0]})
    >>> z = np.array([0, 10, 3])
    >>> subsets = {"all": np.arange(3), "first": np.array([0])}
    >>> subset_metrics(z, test, subsets, k=10)["recall"].tolist()
    [0.75, 1.0]
    """
    check_frame(test, "test", ["user", "rating"])
    z_all = np.asarray(positions)
    if z_all.shape != (len(test),):
        raise ValueError(f"positions must have one entry per row of test ({len(test)}), got shape {z_all.shape}")
    if z_all.dtype == bool or not np.issubdtype(z_all.dtype, np.number) or (
            z_all.size and not (np.isfinite(z_all).all() and (z_all >= 0).all()
                                and (z_all == np.floor(z_all)).all())):
        raise ValueError("positions must hold whole numbers >= 0 (0 = ranked first), as from "
                         "rank_positions")
    if not isinstance(subsets, Mapping):
        raise ValueError(f"subsets must be a mapping key -> row positions, got {type(subsets).__name__}")
    keys = list(subsets)
    rows = [np.asarray(subsets[key], dtype=np.int64).ravel() for key in keys]
    for key, r in zip(keys, rows):
        if r.size and (r.min() < 0 or r.max() >= len(test)):
            raise ValueError(f"subsets[{key!r}] has row positions outside 0..{len(test) - 1}")
    users_all = test["user"].to_numpy(np.int64)
    relevant = test["rating"].to_numpy(np.float64) >= threshold
    set_id = np.repeat(np.arange(len(keys)), [r.size for r in rows])
    flat = np.concatenate(rows) if rows else np.empty(0, np.int64)
    mask = relevant[flat]
    flat, set_id = flat[mask], set_id[mask]
    z = z_all[flat].astype(np.int64)
    span = int(users_all.max()) + 1 if len(test) else 1
    groups, g = np.unique(set_id * span + users_all[flat], return_inverse=True)
    n_groups = groups.size
    n_rel = np.bincount(g, minlength=n_groups).astype(float)
    hit = z < k
    hits = np.bincount(g, weights=hit, minlength=n_groups)
    dcg = np.bincount(g, weights=dcg_gain(z, k), minlength=n_groups)
    # AP@k: at the j-th hit (0-based, by position) of a user, precision = (j + 1) / (Z + 1)
    h = np.flatnonzero(hit)
    order = np.lexsort((z[h], g[h]))
    hg, hz = g[h][order], z[h][order]
    first = np.searchsorted(hg, hg, side="left")
    ap = np.bincount(hg, weights=(np.arange(hg.size) - first + 1) / (hz + 1.0), minlength=n_groups)
    n_cut = np.minimum(n_rel, k)
    per_group = {
        "recall": hits / n_rel,
        "precision": hits / k,
        "ndcg": ndcg(dcg, n_cut.astype(np.int64), k) if n_groups else dcg,
        "map": ap / n_cut if n_groups else ap,
    }
    group_set = groups // span
    n_users = np.bincount(group_set, minlength=len(keys))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = {name: np.bincount(group_set, weights=v, minlength=len(keys)) / n_users
               for name, v in per_group.items()}
    frame = pd.DataFrame(out, index=pd.Index(keys, tupleize_cols=False))
    frame["n_users"] = n_users
    return frame
