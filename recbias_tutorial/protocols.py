r"""The intervened-test-set protocol of Carraro & Bridge, vectorised.

Carraro & Bridge (SAC 2020; J. Intell. Inf. Syst. 2022) evaluate recommenders on *intervened*
test sets drawn from MNAR held-out data (see :mod:`recbias_tutorial.sampling`) and compare
each with the same metric on MAR ground truth. One **repetition** of their protocol is

1. split the MNAR feedback 60/40 into :math:`D_{tr}` / :math:`D_{he}` and the MAR feedback
   15/15/70 into :math:`D_w` (weights of WTD) / :math:`D_{val}` (hyper-parameter selection) /
   :math:`D_{gt}` (ground truth), uniformly at random with a seed (:func:`split_feedback`);
2. fit every model once on :math:`D_{tr}`;
3. draw the intervened test sets from :math:`D_{he}` (FULL, and REG, SKEW, WTD, WTD_H at
   every sample size :math:`\rho_p`) and compute Recall, Precision, nDCG and MAP@k of every
   model on each of them and on :math:`D_{gt}` (full-catalogue ranking, training pairs
   excluded).

Step 3 never re-scores a model. The position :math:`Z_{ui}` of a test pair in its user's
ranking depends only on the scores and on the excluded training pairs, not on the other
pairs of the test set, so the positions of all held-out and ground-truth pairs are computed
once per model (:func:`recbias_tutorial.metrics.rank_positions`) and every test set is
evaluated from the positions of its rows by :func:`subset_metrics`, which reproduces
:func:`recbias_tutorial.metrics.ranking_metrics` exactly.

Cornac's ``UserKNN`` and ``ItemKNN`` score one user at a time and allocate a neighbour
buffer of the size of the user (item) space for every item, which takes minutes on
Yahoo! R3. :class:`BatchUserKNN` and :class:`BatchItemKNN` are the same Cornac models
(same ``fit``, same similarity matrix, same prediction formula) with a vectorised
``score_batch`` that :func:`recbias_tutorial.models.fit_scores` uses automatically.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from cornac.exception import ScoreException
from cornac.models import ItemKNN, Recommender, UserKNN

from . import models as _models
from . import stats as _stats
from .datasets import FeedbackData
from .metrics import rank_positions
from .sampling import STRATEGIES, intervene, random_split

__all__ = [
    "BatchItemKNN",
    "BatchUserKNN",
    "METRICS",
    "ProtocolSplit",
    "Repetition",
    "SIZES",
    "best_sizes",
    "difference_from_truth",
    "kendall_vs_truth",
    "mean_difference",
    "restrict_to_mar_users",
    "run_protocol",
    "run_repetition",
    "split_feedback",
    "subset_metrics",
    "tune",
    "wilcoxon_vs_truth",
]

#: Metrics computed on every test set (all "@k").
METRICS: tuple[str, ...] = ("recall", "precision", "ndcg", "map")
#: The sample sizes rho_p of the paper: 0.1, 0.2, ..., 1.0 (fractions of the held-out set).
SIZES: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(1, 11))
_EPS_DENOM = 1e-8  # Cornac's compute_score: num / (denom + 1e-8)


# --------------------------------------------------------------------------------------
# vectorised Cornac KNN
# --------------------------------------------------------------------------------------
def _top_k_mask(weights: np.ndarray, ratings: np.ndarray, k: int, nonnegative: bool) -> np.ndarray:
    """Which candidates Cornac's ``TopK`` heap keeps, per row of ``weights``.

    ``weights`` (rows: requests; columns: candidate neighbours in Cornac's insertion order)
    holds the similarity of each neighbour, 0 for non-candidates (Cornac skips them);
    ``ratings`` holds each neighbour's rating (the same for every row). Cornac visits the
    candidates in reverse insertion order and keeps a min-heap of ``(weight, rating)`` pairs,
    admitting a pair when the heap is not full or its weight is *strictly* above the heap's
    minimum. Hence it keeps every candidate above the k-th largest weight w*, and among those
    tied at w* it keeps, of the tied ones among the first k visited candidates with weight
    >= w*, those with the largest ratings (each later, larger weight evicts the smallest
    pair). This function returns exactly that set. ``nonnegative`` promises ``weights >= 0``
    (the default cosine on ratings > 0), which saves a pass.
    """
    n = weights.shape[1]
    cand = weights != 0
    if n <= k:
        return cand
    w = weights if nonnegative else np.where(cand, weights, -np.inf)
    kth = np.partition(w, n - k, axis=1)[:, n - k]
    above = w > kth[:, None]
    tied = w == kth[:, None]
    room = k - above.sum(axis=1)
    keep = above | tied
    excess = np.flatnonzero(np.count_nonzero(tied, axis=1) > room)  # more ties than places
    if excess.size:
        a, t = above[excess], tied[excess]
        visited = np.cumsum((a | t)[:, ::-1], axis=1, dtype=np.int32)[:, ::-1]
        admitted = t & (visited <= k)  # tied and among the first k visited with weight >= w*
        # if no candidate is above w*, the k admitted ties are kept; otherwise later, larger
        # weights evicted the admitted ties with the smallest ratings
        mixed = np.flatnonzero(a.any(axis=1))
        if mixed.size:
            order = np.argsort(-ratings, kind="stable")
            by_rating = admitted[mixed][:, order]
            kept = by_rating & (np.cumsum(by_rating, axis=1, dtype=np.int32) <= room[excess[mixed], None])
            admitted[mixed[:, None], order[None, :]] = kept
        keep[excess] = a | admitted
    few = cand.sum(axis=1) <= k  # with at most k candidates all of them are kept
    if few.any():
        keep[few] = cand[few]
    return keep


def _knn_average(weights: np.ndarray, ratings: np.ndarray, k: int,
                 nonnegative: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Numerator and denominator of Cornac's weighted average over the top-k neighbours.

    ``weights`` (requests x candidates, in Cornac's insertion order) holds the similarity of
    each candidate neighbour (0 = not a candidate); ``ratings`` (one per candidate) their
    mean-centred ratings.
    """
    w = weights * _top_k_mask(weights, ratings, k, nonnegative)
    return w @ ratings, (w if nonnegative else np.abs(w)).sum(axis=1)


class _BatchKNNMixin:
    """``score`` / ``score_batch`` shared by the two vectorised KNN models."""

    def score(self, user_idx: int, item_idx: int | None = None):
        """Score of ``item_idx`` (or all known items) for ``user_idx``, via :meth:`score_batch`."""
        if not self.knows_user(user_idx):
            raise ScoreException(f"Can't make score prediction for (user_id={user_idx})")
        if item_idx is not None and not self.knows_item(item_idx):
            raise ScoreException(f"Can't make score prediction for (item_id={item_idx})")
        row = self.score_batch(np.array([user_idx]))[0]
        return row if item_idx is None else float(row[item_idx])


class BatchUserKNN(_BatchKNNMixin, UserKNN):
    """Cornac's ``UserKNN`` with a vectorised ``score_batch``: same fit, same scores.

    For user *u* and item *i*, the candidate neighbours are the users who rated *i* in
    training with a non-zero similarity to *u*; Cornac keeps *k* of them with its ``TopK``
    heap and scores ``mean_u + sum(sim * centred rating) / (sum(|sim|) + 1e-8)``
    (``cornac.models.knn.similarity.compute_score``). This class computes the same set of
    neighbours, including Cornac's order-dependent choice among neighbours tied with the
    *k*-th similarity (frequent: Cornac's cosine is computed over co-rated items only, so on
    sparse data many similarities are exactly 1), with matrix products for items with at
    most *k* raters and one vectorised top-k per remaining item. Scores equal Cornac's up to
    floating-point summation order; ``tests/test_protocols.py`` checks it.

    Parameters are those of :class:`cornac.models.UserKNN` (``verbose`` defaults to False).

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial.models import fit_scores
    >>> train = pd.DataFrame({"user": [0, 0, 1, 1, 2], "item": [0, 1, 0, 2, 1],
    ...                       "rating": [5.0, 3.0, 4.0, 2.0, 4.0]})
    >>> fit_scores(BatchUserKNN(k=2), train, n_users=3, n_items=3).shape
    (3, 3)
    """

    def __init__(self, name: str = "UserKNN", k: int = 20, *, verbose: bool = False, **kwargs: Any) -> None:
        super().__init__(name=name, k=k, verbose=verbose, **kwargs)

    def score_batch(self, user_indices: np.ndarray) -> np.ndarray:
        """Scores of all known items for several users (Cornac indices) at once."""
        users = np.asarray(user_indices, dtype=np.int64)
        iu = self.iu_mat  # row i: raters of item i (centred ratings) in Cornac's insertion order
        pattern = iu.copy()
        pattern.data = np.ones_like(pattern.data)
        sims = self.sim_mat[users].toarray()  # (batch, n_users)
        sims_t = np.ascontiguousarray(sims.T)  # (n_users, batch): fast gathers of raters
        # first every candidate (rater with a non-zero similarity) is a neighbour ...
        num = np.asarray(iu @ sims.T).T
        den = np.asarray(pattern @ np.abs(sims).T).T
        n_cand = np.asarray(pattern @ (sims != 0).T.astype(np.float64)).T
        # ... then redo the (user, item) pairs with more than k candidates, item by item
        crowded = n_cand > self.k
        nonnegative = bool(self.sim_mat.data.min(initial=0.0) >= 0)
        for i in np.flatnonzero(crowded.any(axis=0)):
            rows = np.flatnonzero(crowded[:, i])
            lo, hi = iu.indptr[i], iu.indptr[i + 1]
            weights = sims_t.take(iu.indices[lo:hi], axis=0).take(rows, axis=1).T.copy()
            num[rows, i], den[rows, i] = _knn_average(weights, iu.data[lo:hi], self.k, nonnegative)
        return self.mean_arr[users][:, None] + num / (den + _EPS_DENOM)


class BatchItemKNN(_BatchKNNMixin, ItemKNN):
    """Cornac's ``ItemKNN`` with a vectorised ``score_batch``: same fit, same scores.

    For user *u* and item *i*, the candidate neighbours are the items *u* rated in training
    with a non-zero similarity to *i*; Cornac keeps *k* of them (see :class:`BatchUserKNN` for
    the tie rule, reproduced here) and scores ``mean_u + sum(sim * centred rating) /
    (sum(|sim|) + 1e-8)``. Users with at most *k* training ratings are scored by two matrix
    products, the others by one vectorised top-k each.

    Parameters are those of :class:`cornac.models.ItemKNN` (``verbose`` defaults to False).

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial.models import fit_scores
    >>> train = pd.DataFrame({"user": [0, 0, 1, 1, 2], "item": [0, 1, 0, 2, 1],
    ...                       "rating": [5.0, 3.0, 4.0, 2.0, 4.0]})
    >>> fit_scores(BatchItemKNN(k=2), train, n_users=3, n_items=3).shape
    (3, 3)
    """

    def __init__(self, name: str = "ItemKNN", k: int = 20, *, verbose: bool = False, **kwargs: Any) -> None:
        super().__init__(name=name, k=k, verbose=verbose, **kwargs)

    def score_batch(self, user_indices: np.ndarray) -> np.ndarray:
        """Scores of all known items for several users (Cornac indices) at once."""
        users = np.asarray(user_indices, dtype=np.int64)
        if not self.sim_mat.has_sorted_indices:  # Cornac visits sim_mat rows in stored order
            return np.stack([ItemKNN.score(self, int(u)) for u in users])
        ratings = self.ui_mat[users].tocsr()  # centred; Cornac stores exact means as EPS
        ratings.sort_indices()  # candidates in sim_mat's (ascending) column order
        sims = self.sim_mat.toarray()  # (n_items, n_items); row i = similarities to item i
        nonnegative = bool(self.sim_mat.data.min(initial=0.0) >= 0)
        n_rated = np.diff(ratings.indptr)
        out = np.empty((len(users), self.num_items))
        few = np.flatnonzero(n_rated <= self.k)
        if few.size:  # every rated non-zero-similarity item is a neighbour
            sub = ratings[few]
            pattern = sub.copy()
            pattern.data = np.ones_like(pattern.data)
            num = np.asarray(sub @ sims.T)
            den = np.asarray(pattern @ np.abs(sims).T)
            out[few] = num / (den + _EPS_DENOM)
        for r in np.flatnonzero(n_rated > self.k):
            lo, hi = ratings.indptr[r], ratings.indptr[r + 1]
            num, den = _knn_average(sims[:, ratings.indices[lo:hi]], ratings.data[lo:hi], self.k,
                                    nonnegative)
            out[r] = num / (den + _EPS_DENOM)
        return self.mean_arr[users][:, None] + out


# --------------------------------------------------------------------------------------
# data preparation and splits
# --------------------------------------------------------------------------------------
def _check_seed(seed: Any, name: str = "seed") -> int:
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise ValueError(f"{name} must be a non-negative int, got {seed!r}")
    return int(seed)


def restrict_to_mar_users(data: FeedbackData, *, n_users: int | None = None,
                          seed: int | None = None) -> FeedbackData:
    """Keep only the users who have MAR feedback (optionally a random subset of them).

    Users are re-indexed ``0..n-1`` in increasing order of their original id; items keep
    their ids. The MNAR log is restricted to the kept users, so the protocol runs on "the
    MNAR log of the users with MAR data". ``info["user_ids"]`` holds the original ids.

    Parameters
    ----------
    data : FeedbackData
        A dataset with a MAR part (Coat, Yahoo! R3).
    n_users : int, optional
        Keep a uniformly random subset of this many of those users (seeded by ``seed``).
    seed : int, optional
        Seed of the subset; required with ``n_users``.

    Examples
    --------
    >>> import pandas as pd
    >>> f = lambda u, i: pd.DataFrame({"user": u, "item": i, "rating": 4.0})
    >>> data = FeedbackData("toy", 4, 2, mnar=f([0, 1, 3, 3], [0, 1, 0, 1]), mar=f([1, 3], [0, 0]))
    >>> small = restrict_to_mar_users(data)
    >>> small.n_users, small.mnar["user"].tolist(), small.info["user_ids"].tolist()
    (2, [0, 1, 1], [1, 3])
    """
    if not isinstance(data, FeedbackData):
        raise ValueError(f"data must be a FeedbackData, got {type(data).__name__}")
    if data.mar is None or len(data.mar) == 0:
        raise ValueError(f"data ({data.name}) has no MAR feedback to restrict to")
    users = np.unique(data.mar["user"].to_numpy(np.int64))
    if n_users is not None:
        if isinstance(n_users, bool) or not isinstance(n_users, Integral) or not 0 < n_users <= users.size:
            raise ValueError(f"n_users must be an int in [1, {users.size}], got {n_users!r}")
        rng = np.random.default_rng(_check_seed(seed))
        users = np.sort(rng.choice(users, size=int(n_users), replace=False))
    new_id = np.full(data.n_users, -1, dtype=np.int64)
    new_id[users] = np.arange(users.size)

    def keep(frame: pd.DataFrame | None) -> pd.DataFrame | None:
        if frame is None:
            return None
        out = frame[new_id[frame["user"].to_numpy(np.int64)] >= 0].copy()
        out["user"] = new_id[out["user"].to_numpy(np.int64)]
        return out.reset_index(drop=True)

    suffix = "users with MAR data" if n_users is None else f"{users.size} random users with MAR data"
    return dataclasses.replace(
        data, name=f"{data.name} ({suffix})", n_users=int(users.size), mnar=keep(data.mnar),
        mar=keep(data.mar), full=keep(data.full),
        propensity=None if data.propensity is None else data.propensity[users],
        info={**data.info, "user_ids": users},
    )


@dataclasses.dataclass(frozen=True, eq=False)
class ProtocolSplit:
    """The five parts of one repetition (each with a fresh ``RangeIndex``).

    Attributes
    ----------
    train : DataFrame
        :math:`D_{tr}`, MNAR training data (60% of the MNAR log by default).
    heldout : DataFrame
        :math:`D_{he}`, MNAR held-out data the intervened test sets are drawn from.
    weights : DataFrame
        :math:`D_w`, MAR data used only for the WTD weights.
    val : DataFrame
        :math:`D_{val}`, MAR data for hyper-parameter selection.
    gt : DataFrame
        :math:`D_{gt}`, MAR ground truth.
    seed : int
        Seed of the split.
    """

    train: pd.DataFrame
    heldout: pd.DataFrame
    weights: pd.DataFrame
    val: pd.DataFrame
    gt: pd.DataFrame
    seed: int


def split_feedback(data: FeedbackData, *, seed: int, mnar_fractions: Sequence[float] = (0.6, 0.4),
                   mar_fractions: Sequence[float] = (0.15, 0.15, 0.7)) -> ProtocolSplit:
    """Split MNAR into D_tr / D_he and MAR into D_w / D_val / D_gt, uniformly at random.

    Uses :func:`recbias_tutorial.sampling.random_split` twice with one generator seeded by
    ``seed`` (MNAR first, then MAR).

    Examples
    --------
    >>> from recbias_tutorial.simulate import simulate
    >>> split = split_feedback(simulate(50, 40, seed=0), seed=1)
    >>> round(len(split.train) / (len(split.train) + len(split.heldout)), 1)
    0.6
    """
    if not isinstance(data, FeedbackData):
        raise ValueError(f"data must be a FeedbackData, got {type(data).__name__}")
    if data.mar is None or len(data.mar) == 0:
        raise ValueError(f"data ({data.name}) has no MAR feedback: the protocol needs D_w, D_val, D_gt")
    if len(mnar_fractions) != 2:
        raise ValueError(f"mnar_fractions must have 2 parts (train, heldout), got {mnar_fractions!r}")
    if len(mar_fractions) != 3:
        raise ValueError(f"mar_fractions must have 3 parts (weights, val, gt), got {mar_fractions!r}")
    seed = _check_seed(seed)
    rng = np.random.default_rng(seed)
    train, heldout = random_split(data.mnar, mnar_fractions, seed=rng)
    weights, val, gt = random_split(data.mar, mar_fractions, seed=rng)
    parts = [p.reset_index(drop=True) for p in (train, heldout, weights, val, gt)]
    return ProtocolSplit(*parts, seed=seed)


# --------------------------------------------------------------------------------------
# metrics of many subsets of a ranked test set
# --------------------------------------------------------------------------------------
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
    threshold : float, default 4.0
        A row is relevant when ``rating >= threshold``.

    Returns
    -------
    DataFrame
        Indexed by the subset keys, columns ``recall``, ``precision``, ``ndcg``, ``map``
        (means over users with >= 1 relevant row in the subset; NaN when there is none) and
        ``n_users``.

    Examples
    --------
    >>> test = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 0], "rating": [5.0, 4.0, 5.0]})
    >>> z = np.array([0, 10, 3])
    >>> subset_metrics(z, test, {"all": np.arange(3), "first": np.array([0])}, k=10)["recall"].tolist()
    [0.75, 1.0]
    """
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    if not isinstance(test, pd.DataFrame) or not {"user", "rating"} <= set(test.columns):
        raise ValueError("test must be a DataFrame with columns 'user' and 'rating'")
    z_all = np.asarray(positions)
    if z_all.shape != (len(test),):
        raise ValueError(f"positions must have one entry per row of test ({len(test)}), got shape {z_all.shape}")
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
    dcg = np.bincount(g, weights=np.where(hit, 1.0 / np.log2(np.maximum(z, 0) + 2.0), 0.0), minlength=n_groups)
    # AP@k: at the j-th hit (0-based, by position) of a user, precision = (j + 1) / (Z + 1)
    h = np.flatnonzero(hit)
    order = np.lexsort((z[h], g[h]))
    hg, hz = g[h][order], z[h][order]
    first = np.searchsorted(hg, hg, side="left")
    ap = np.bincount(hg, weights=(np.arange(hg.size) - first + 1) / (hz + 1.0), minlength=n_groups)
    n_cut = np.minimum(n_rel, k)
    ideal = np.cumsum(1.0 / np.log2(np.arange(k) + 2.0))
    per_group = {
        "recall": hits / n_rel,
        "precision": hits / k,
        "ndcg": dcg / ideal[n_cut.astype(np.int64) - 1] if n_groups else dcg,
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


# --------------------------------------------------------------------------------------
# one repetition of the protocol
# --------------------------------------------------------------------------------------
ModelFactory = Callable[[], Recommender]


def _check_factories(factories: Any, name: str = "factories") -> Mapping[str, ModelFactory]:
    if not isinstance(factories, Mapping) or not factories:
        raise ValueError(f"{name} must be a non-empty mapping name -> zero-argument model factory")
    for key, factory in factories.items():
        if not callable(factory):
            raise ValueError(f"{name}[{key!r}] must be callable (returning a fresh cornac Recommender)")
    return factories


def _ranked(factories: Mapping[str, ModelFactory], split: ProtocolSplit, frames: Mapping[str, pd.DataFrame],
            *, n_users: int, n_items: int, k: int) -> dict[str, dict[str, np.ndarray]]:
    """Fit each model once on D_tr and rank every frame's pairs: {model: {frame: Z}}."""
    fresh = {name: factory() for name, factory in factories.items()}
    out: dict[str, dict[str, np.ndarray]] = {}
    for name, scores in _models.iter_scores(fresh, split.train, n_users=n_users, n_items=n_items,
                                            seed=split.seed, progress=False):
        out[name] = {label: rank_positions(scores, frame, exclude=split.train, k=k)
                     for label, frame in frames.items()}
    return out


def tune(data: FeedbackData, candidates: Mapping[str, Mapping[str, ModelFactory]], *, seed: int,
         k: int = 10, threshold: float | None = None) -> pd.DataFrame:
    """Recall@k on D_val of every hyper-parameter setting, models fitted on D_tr.

    Parameters
    ----------
    data : FeedbackData
    candidates : mapping model -> mapping setting label -> model factory
        E.g. ``{"UserKNN": {"k=20": lambda: BatchUserKNN(k=20), ...}, ...}``.
    seed : int
        Seed of :func:`split_feedback` (the paper tunes on one repetition's D_val).
    k : int, default 10
    threshold : float, optional
        Relevance threshold; default ``data.threshold``.

    Returns
    -------
    DataFrame
        Columns ``model``, ``setting``, ``recall`` and ``best`` (the setting with the highest
        recall of each model; the first one listed on ties).

    Examples
    --------
    >>> from recbias_tutorial.simulate import simulate
    >>> from recbias_tutorial.models import PosPop
    >>> table = tune(simulate(60, 40, seed=0), {"PosPop": {"t=4": PosPop, "t=5": lambda: PosPop(5.0)}}, seed=0)
    >>> table.columns.tolist()
    ['model', 'setting', 'recall', 'best']
    """
    if not isinstance(candidates, Mapping) or not candidates:
        raise ValueError("candidates must be a non-empty mapping model -> {setting: factory}")
    threshold = data.threshold if threshold is None else float(threshold)
    split = split_feedback(data, seed=seed)
    rows = []
    for model, settings in candidates.items():
        settings = _check_factories(settings, f"candidates[{model!r}]")
        ranked = _ranked(settings, split, {"val": split.val}, n_users=data.n_users, n_items=data.n_items, k=k)
        for setting, z in ranked.items():
            m = subset_metrics(z["val"], split.val, {0: np.arange(len(split.val))}, k=k, threshold=threshold)
            rows.append({"model": model, "setting": setting, "recall": float(m["recall"].iloc[0])})
    table = pd.DataFrame(rows)
    best = table.groupby("model", sort=False)["recall"].idxmax()
    table["best"] = table.index.isin(best.to_numpy())
    return table


@dataclasses.dataclass(frozen=True, eq=False)
class Repetition:
    """Tidy results of one or more repetitions.

    Attributes
    ----------
    metrics : DataFrame
        ``seed, model, strategy, size, metric, value``; ``strategy == "gt"`` (size 1.0) is
        the MAR ground truth D_gt, the others the intervened test sets.
    test_sets : DataFrame
        ``seed, strategy, size, n_rows, n_users, relevant, kl_to_gt``: size of each test set,
        its share of relevant rows and KL(test set || D_gt) of the rating values.
    ratings : DataFrame
        ``seed, strategy, size, rating, share``: rating-value distribution of each test set.
    """

    metrics: pd.DataFrame
    test_sets: pd.DataFrame
    ratings: pd.DataFrame


def _check_sizes(sizes: Any) -> tuple[float, ...]:
    out = tuple(sizes)
    if not out or any(isinstance(s, bool) or not isinstance(s, Real) or not 0 < s <= 1 for s in out):
        raise ValueError(f"sizes must be fractions in (0, 1], got {sizes!r}")
    return tuple(float(s) for s in out)


def run_repetition(data: FeedbackData, factories: Mapping[str, ModelFactory], *, seed: int,
                   strategies: Sequence[str] = STRATEGIES, sizes: Sequence[float] = SIZES,
                   item_power: float = 2.0, k: int = 10, threshold: float | None = None,
                   support: Sequence[float] | None = None) -> Repetition:
    """One repetition of the protocol: split, fit once, evaluate on every test set.

    Every model is fitted once on D_tr and ranks the pairs of D_he and D_gt once (full
    catalogue, D_tr excluded); each intervened test set (``full`` at size 1 only, the other
    strategies at every size) is then evaluated from those positions with
    :func:`subset_metrics`. Each test set is drawn with its own generator, seeded by
    ``(seed, strategy index, size index)``.

    Parameters
    ----------
    data : FeedbackData
        MNAR log and MAR feedback.
    factories : mapping name -> callable
        Zero-argument callables returning a fresh (seeded) Cornac recommender.
    seed : int
        Seed of the split and of the samples.
    strategies : sequence of str, default all of :data:`recbias_tutorial.sampling.STRATEGIES`
    sizes : sequence of float, default :data:`SIZES`
        Sample sizes rho_p as fractions of D_he.
    item_power : float, default 2.0
        Exponent of the WTD/WTD_H item weight (2 in the paper, 1 in its public notebook).
    k : int, default 10
    threshold : float, optional
        Relevance threshold; default ``data.threshold``.
    support : sequence of float, optional
        Rating values for the distributions and KL; default the values in the data.

    Returns
    -------
    Repetition

    Examples
    --------
    >>> from recbias_tutorial.simulate import simulate
    >>> from recbias_tutorial.models import AvgRating, PosPop
    >>> rep = run_repetition(simulate(80, 50, seed=0), {"AvgRating": AvgRating, "PosPop": PosPop},
    ...                      seed=0, sizes=(0.5, 1.0))
    >>> sorted(rep.metrics["strategy"].unique())
    ['full', 'gt', 'reg', 'skew', 'wtd', 'wtd_h']
    """
    factories = _check_factories(factories)
    seed = _check_seed(seed)
    sizes = _check_sizes(sizes)
    strategies = tuple(strategies)
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or not strategies:
        raise ValueError(f"strategies must be a non-empty subset of {list(STRATEGIES)}, got {list(strategies)}")
    threshold = data.threshold if threshold is None else float(threshold)
    split = split_feedback(data, seed=seed)
    if support is None:
        support = np.unique(np.concatenate([data.mnar["rating"].to_numpy(float), data.mar["rating"].to_numpy(float)]))

    samples: dict[tuple[str, float], np.ndarray] = {}
    for s_idx, strategy in enumerate(STRATEGIES):
        if strategy not in strategies:
            continue
        for z_idx, size in enumerate((1.0,) if strategy == "full" else sizes):
            rng = np.random.default_rng([seed, s_idx, z_idx])
            sample = intervene(split.heldout, strategy=strategy, size=size, train=split.train,
                               mar=split.weights, item_power=item_power, seed=rng)
            samples[(strategy, size)] = sample.index.to_numpy()  # heldout has a RangeIndex

    ranked = _ranked(factories, split, {"heldout": split.heldout, "gt": split.gt},
                     n_users=data.n_users, n_items=data.n_items, k=k)
    frames = []
    for model, z in ranked.items():
        he = subset_metrics(z["heldout"], split.heldout, samples, k=k, threshold=threshold)
        gt = subset_metrics(z["gt"], split.gt, {("gt", 1.0): np.arange(len(split.gt))}, k=k, threshold=threshold)
        both = pd.concat([gt, he])[list(METRICS)]
        both.index = pd.MultiIndex.from_tuples(both.index, names=["strategy", "size"])
        long = both.reset_index().melt(["strategy", "size"], var_name="metric", value_name="value")
        frames.append(long.assign(seed=seed, model=model))
    metrics = pd.concat(frames, ignore_index=True)[["seed", "model", "strategy", "size", "metric", "value"]]

    sets, shares = [], []
    gt_ratings = split.gt["rating"].to_numpy(float)
    for (strategy, size), rows in {("gt", 1.0): None, **samples}.items():
        frame = split.gt if rows is None else split.heldout.iloc[rows]
        r = frame["rating"].to_numpy(float)
        sets.append({"seed": seed, "strategy": strategy, "size": size, "n_rows": len(frame),
                     "n_users": frame["user"].nunique(), "relevant": float(np.mean(r >= threshold)),
                     "kl_to_gt": _stats.kl_divergence(r, gt_ratings, support=support)})
        dist = _stats.rating_distribution(r, support=support)
        shares.append(pd.DataFrame({"seed": seed, "strategy": strategy, "size": size,
                                    "rating": dist.index.to_numpy(), "share": dist.to_numpy()}))
    return Repetition(metrics, pd.DataFrame(sets), pd.concat(shares, ignore_index=True))


def run_protocol(data: FeedbackData, factories: Mapping[str, ModelFactory], *, seeds: Sequence[int],
                 **kwargs: Any) -> Repetition:
    """:func:`run_repetition` for every seed, results concatenated.

    Examples
    --------
    >>> from recbias_tutorial.simulate import simulate
    >>> from recbias_tutorial.models import PosPop
    >>> out = run_protocol(simulate(80, 50, seed=0), {"PosPop": PosPop}, seeds=[0, 1], sizes=(1.0,))
    >>> sorted(out.metrics["seed"].unique().tolist())
    [0, 1]
    """
    seeds = list(seeds)
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be a non-empty sequence of distinct ints, got {seeds!r}")
    reps = [run_repetition(data, factories, seed=s, **kwargs) for s in seeds]
    return Repetition(*(pd.concat([getattr(r, f.name) for r in reps], ignore_index=True)
                        for f in dataclasses.fields(Repetition)))


# --------------------------------------------------------------------------------------
# summaries: the paper's tables and figures
# --------------------------------------------------------------------------------------
def _check_metrics_frame(metrics: Any) -> pd.DataFrame:
    needed = {"seed", "model", "strategy", "size", "metric", "value"}
    if not isinstance(metrics, pd.DataFrame) or not needed <= set(metrics.columns):
        raise ValueError(f"metrics must be a DataFrame with columns {sorted(needed)} (Repetition.metrics)")
    if not (metrics["strategy"] == "gt").any():
        raise ValueError("metrics has no ground-truth rows (strategy == 'gt')")
    return metrics


def difference_from_truth(metrics: pd.DataFrame) -> pd.DataFrame:
    """Each intervened value next to its ground truth, with the percentage difference.

    ``pct_diff = 100 * (value - truth) / truth``, paired by seed, model and metric.

    Examples
    --------
    >>> m = pd.DataFrame({"seed": 0, "model": "a", "metric": "recall", "strategy": ["gt", "reg"],
    ...                   "size": 1.0, "value": [0.2, 0.3]})
    >>> difference_from_truth(m)["pct_diff"].round(6).tolist()
    [50.0]
    """
    metrics = _check_metrics_frame(metrics)
    truth = metrics[metrics["strategy"] == "gt"][["seed", "model", "metric", "value"]].rename(columns={"value": "truth"})
    out = metrics[metrics["strategy"] != "gt"].merge(truth, on=["seed", "model", "metric"], how="left")
    with np.errstate(divide="ignore", invalid="ignore"):
        out["pct_diff"] = 100.0 * (out["value"] - out["truth"]) / out["truth"]
    return out


def mean_difference(diff: pd.DataFrame) -> pd.DataFrame:
    """Average over seeds, then the percentage difference of the averages.

    For each model, metric, strategy and size: the mean value on the intervened test sets,
    the mean ground truth and ``pct_diff = 100 * (mean value - mean truth) / mean truth``
    (robust to a repetition whose ground truth is 0), with ``n_seeds``.

    Examples
    --------
    >>> d = pd.DataFrame({"model": "a", "metric": "recall", "strategy": "reg", "size": 1.0,
    ...                   "seed": [0, 1], "value": [0.3, 0.5], "truth": [0.2, 0.2]})
    >>> mean_difference(d)["pct_diff"].tolist()
    [100.0]
    """
    needed = {"model", "metric", "strategy", "size", "seed", "value", "truth"}
    if not isinstance(diff, pd.DataFrame) or not needed <= set(diff.columns):
        raise ValueError(f"diff must be a DataFrame with columns {sorted(needed)} (difference_from_truth)")
    g = diff.groupby(["model", "metric", "strategy", "size"], sort=False)
    out = g.agg(value=("value", "mean"), truth=("truth", "mean"), n_seeds=("seed", "nunique")).reset_index()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["pct_diff"] = 100.0 * (out["value"] - out["truth"]) / out["truth"]
    return out


def best_sizes(diff: pd.DataFrame, *, metric: str = "recall") -> pd.Series:
    """Per strategy, the sample size whose seed-averaged value is closest to the truth.

    Uses :func:`mean_difference` and takes, per strategy, the size with the smallest
    |percentage difference| averaged over models: one size per strategy (a protocol setting,
    not a per-model choice).

    Examples
    --------
    >>> d = pd.DataFrame({"model": "a", "metric": "recall", "strategy": "reg", "size": [0.5, 1.0],
    ...                   "seed": 0, "value": [0.194, 0.202], "truth": 0.2})
    >>> best_sizes(d).to_dict()
    {'reg': 1.0}
    """
    means = mean_difference(diff)
    sub = means[means["metric"] == metric]
    if sub.empty:
        raise ValueError(f"diff has no rows for metric={metric!r}")
    mean_abs = sub.assign(abs_pct=sub["pct_diff"].abs()).groupby(["strategy", "size"])["abs_pct"].mean()
    return mean_abs.groupby(level="strategy").idxmin().map(lambda key: key[1]).rename("size")


def wilcoxon_vs_truth(diff: pd.DataFrame, sizes: Mapping[str, float], *, metric: str = "recall") -> pd.DataFrame:
    """Paired Wilcoxon signed-rank test, over seeds, of each strategy against D_gt.

    For every model and strategy (at ``sizes[strategy]``), the values on the intervened test
    sets of the repetitions are paired with the ground truth of the same repetitions.
    With ``n`` repetitions the smallest attainable two-sided p-value is ``2 / 2**n``.

    Returns
    -------
    DataFrame
        ``model, strategy, size, n, mean_pct_diff, statistic, p_value`` (p = 1 when every
        difference is 0).

    Examples
    --------
    >>> d = pd.DataFrame({"model": "a", "strategy": "reg", "size": 1.0, "metric": "recall",
    ...                   "seed": range(6), "value": [1.0, 2, 3, 4, 5, 6], "truth": [2.1, 3.2, 4.3, 5.4, 6.5, 7.6]})
    >>> d["pct_diff"] = 100 * (d["value"] - d["truth"]) / d["truth"]
    >>> float(round(wilcoxon_vs_truth(d, {"reg": 1.0})["p_value"].iloc[0], 4))
    0.0312
    """
    rows = []
    sub = diff[diff["metric"] == metric]
    for (model, strategy), g in sub.groupby(["model", "strategy"], sort=False):
        if strategy not in sizes:
            continue
        g = g[np.isclose(g["size"], sizes[strategy])].sort_values("seed")
        x, y = g["value"].to_numpy(float), g["truth"].to_numpy(float)
        if len(g) == 0:
            continue
        if np.all(x == y):
            stat, p = 0.0, 1.0
        else:
            stat, p = _stats.paired_wilcoxon(x, y)
        rows.append({"model": model, "strategy": strategy, "size": sizes[strategy], "n": len(g),
                     "mean_pct_diff": float(g["pct_diff"].mean()), "statistic": stat, "p_value": p})
    return pd.DataFrame(rows)


def kendall_vs_truth(metrics: pd.DataFrame, *, metric: str = "recall") -> pd.DataFrame:
    """Kendall's tau-b between the model ranking on each test set and on D_gt, per seed.

    Returns
    -------
    DataFrame
        ``seed, strategy, size, tau`` (NaN when a ranking is constant).

    Examples
    --------
    >>> m = pd.DataFrame({"seed": 0, "metric": "recall", "model": ["a", "b", "c"] * 2,
    ...                   "strategy": ["gt"] * 3 + ["reg"] * 3, "size": 1.0,
    ...                   "value": [0.1, 0.2, 0.3, 0.5, 0.6, 0.4]})
    >>> float(round(kendall_vs_truth(m)["tau"].iloc[0], 4))  # a < b but c moved from top to bottom
    -0.3333
    """
    metrics = _check_metrics_frame(metrics)
    sub = metrics[metrics["metric"] == metric]
    if sub.empty:
        raise ValueError(f"metrics has no rows for metric={metric!r}")
    truth = sub[sub["strategy"] == "gt"].set_index(["seed", "model"])["value"]
    rows = []
    for (seed, strategy, size), g in sub[sub["strategy"] != "gt"].groupby(["seed", "strategy", "size"], sort=False):
        est = g.set_index("model")["value"]
        ref = truth.loc[seed].reindex(est.index)
        if est.nunique() < 2 or ref.nunique() < 2:
            tau = float("nan")
        else:
            tau = _stats.kendall_tau(ref, est)[0]
        rows.append({"seed": seed, "strategy": strategy, "size": size, "tau": tau})
    return pd.DataFrame(rows)
