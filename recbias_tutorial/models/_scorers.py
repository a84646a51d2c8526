"""Vectorised scoring of Cornac families: many users at once, same scores as ``score``.

Cornac's recommenders score one user per call (``model.score(user_idx)``). Scoring every user
of Yahoo! R3 that way takes seconds for a matrix factorisation and minutes for the
neighbourhood models, which also allocate a neighbour buffer per item. :func:`batch_scorer`
returns, for a fitted model of a known family, a function scoring a block of users with a few
matrix products. Each scorer here is a copy of its family's ``score``; the KNN scorers
reproduce Cornac's choice of neighbours exactly, including its order-dependent tie rule
(``tests/models/`` checks every family against Cornac's own ``score``).

:func:`recbias_tutorial.fit_scores` uses :func:`batch_scorer` automatically; its public home
is :mod:`recbias_tutorial.models`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cornac
import numpy as np
from cornac.models import Recommender

from .._portable_math import matmul

__all__ = ["BatchScorer", "batch_scorer"]

#: A function mapping an int array of Cornac user indices to their ``(len(users), n)`` scores.
BatchScorer = Callable[[np.ndarray], np.ndarray]
_EPS_DENOM = 1e-8  # Cornac's knn.similarity.compute_score: num / (denom + 1e-8)


def f64(a: Any) -> np.ndarray:
    """A float64 view or copy of a model attribute."""
    return np.asarray(a, dtype=np.float64)


# --------------------------------------------------------------------------------------
# latent-factor and non-personalised families
# --------------------------------------------------------------------------------------
# The products are the package's portable ones (no BLAS: the same bits on every CPU), so the
# stored metrics of these models recompute exactly anywhere.
def _item_side(a: Any) -> np.ndarray:
    """Item factors ``(n_items, k)`` as the contiguous ``(k, n_items)`` right operand."""
    return np.ascontiguousarray(f64(a).T)


def _mf_scorer(m: Any) -> BatchScorer:  # MF, SVD, NMF: mu + b_i + b_u + p_u.q_i
    U, V, bu = f64(m.u_factors), _item_side(m.i_factors), f64(m.u_biases)
    base = float(m.global_mean) + f64(m.i_biases)
    return lambda users: matmul(U[users], V) + base + bu[users, None]


def _bpr_scorer(m: Any) -> BatchScorer:  # BPR, WBPR, MMMF: b_i + p_u.q_i
    U, V, bi = f64(m.u_factors), _item_side(m.i_factors), f64(m.i_biases)
    return lambda users: matmul(U[users], V) + bi


def _dot_scorer(user_attr: str, item_attr: str) -> Callable[[Any], BatchScorer]:
    def prepare(m: Any) -> BatchScorer:  # PMF (U, V), HPF (Theta, Beta)
        U, V = f64(getattr(m, user_attr)), _item_side(getattr(m, item_attr))
        return lambda users: matmul(U[users], V)

    return prepare


def _ease_scorer(m: Any) -> BatchScorer:
    X, B = m.U.tocsr(), f64(m.B)
    return lambda users: f64(X[users] @ B)


def _baseline_scorer(m: Any) -> BatchScorer:  # BaselineOnly: mu + b_i + b_u
    base, bu = float(m.global_mean) + f64(m.i_biases), f64(m.u_biases)
    return lambda users: base + bu[users, None]


def _mostpop_scorer(m: Any) -> BatchScorer:
    pop = f64(m.item_pop)
    return lambda users: np.broadcast_to(pop, (len(users), pop.size))


def _globalavg_scorer(m: Any) -> BatchScorer:
    return lambda users: np.full((len(users), m.num_items), float(m.global_mean))


# --------------------------------------------------------------------------------------
# neighbourhood models (ItemKNN, UserKNN)
# --------------------------------------------------------------------------------------
# Both reproduce Cornac's TopK tie rule: _top_k_mask for UserKNN (requests in rows), the
# same rule written for items in columns inside _itemknn_scorer.
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
            ranks = np.cumsum(by_rating, axis=1, dtype=np.int32)
            kept = by_rating & (ranks <= room[excess[mixed], None])
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
    return matmul(w, ratings), (w if nonnegative else np.abs(w)).sum(axis=1)


_ITEMKNN_DENSE_MAX = 5000  # dense item-item similarity up to 5,000 items (200 MB)


def _itemknn_scorer(m: Any) -> BatchScorer | None:
    """Cornac's ``ItemKNN.score`` for many users, reproduced exactly.

    Cornac (``knn.similarity.compute_score``) scores item *i* for user *u* as
    ``mean_u + Σ w·r / (Σ|w| + 1e-8)`` over *k* neighbours *j* of *i* among the items *u*
    rated, with ``w = sim(i, j) != 0`` and ``r`` = *u*'s centred rating of *j*. A ``TopK``
    heap fed in descending *j* order picks them: it keeps every candidate above the *k*-th
    largest similarity ``s``; a candidate tied at ``s`` is admitted iff fewer than *k*
    candidates with ``w >= s`` precede it, and of the admitted ties the ``k - #{w > s}`` with
    the largest ``r`` stay. Ties are frequent (Cornac's cosine runs over co-rated entries
    only, so many similarities are exactly 1). Users with at most *k* ratings need no
    selection and are scored by two sparse-dense products.
    """
    sim_csr = m.sim_mat
    if m.num_items > _ITEMKNN_DENSE_MAX or not sim_csr.has_sorted_indices:
        return None  # fall back to Cornac's per-user score
    k = int(m.k)
    sim_t = f64(sim_csr.toarray()).T  # sim_t[j, i] = sim(i, j)
    abs_sim_t = np.abs(sim_t)
    ui = m.ui_mat.tocsr()
    mean = f64(m.mean_arr)

    nonneg = bool(sim_t.min() >= 0)  # cosine on positive ratings: zero = not a candidate

    def one_user(u: int) -> np.ndarray:
        lo, hi = ui.indptr[u], ui.indptr[u + 1]
        visit = np.argsort(-ui.indices[lo:hi], kind="stable")  # Cornac visits by descending id
        rated, r = ui.indices[lo:hi][visit], f64(ui.data[lo:hi])[visit]
        w = sim_t[rated]  # (n_rated, n_items)
        if not (nonneg and r.all()):
            w = np.where((r != 0)[:, None], w, 0.0)
        cand = w != 0
        key = w if nonneg else np.where(cand, w, -np.inf)
        s = np.partition(key, r.size - k, axis=0)[r.size - k]  # k-th largest per item
        above, tied = key > s, key == s
        n_above = above.sum(axis=0)
        many = cand.sum(axis=0) > k
        keep = np.where(many, above | tied, cand)
        straddle = np.flatnonzero(many & (n_above + tied.sum(axis=0) > k))
        if straddle.size:  # Cornac's tie rule, on the items where it matters
            tie, ge = tied[:, straddle], keep[:, straddle]
            admitted = tie & (np.cumsum(ge, axis=0, dtype=np.int32) - ge < k)
            by_r = np.argsort(-r, kind="stable")
            adm = admitted[by_r]
            kept = adm & (np.cumsum(adm, axis=0, dtype=np.int32) <= k - n_above[straddle])
            ties_kept = np.empty_like(kept)
            ties_kept[by_r] = kept
            keep[:, straddle] = above[:, straddle] | ties_kept
        w = w * keep
        return mean[u] + matmul(r[None, :], w)[0] / (np.abs(w).sum(axis=0) + _EPS_DENOM)

    def score(users: np.ndarray) -> np.ndarray:
        out = np.empty((len(users), m.num_items))
        sub = ui[users]
        n_rated = np.diff(sub.indptr)
        few = np.flatnonzero(n_rated <= k)
        if few.size:  # every rated item with a non-zero similarity is a neighbour
            X = sub[few]
            P = X.copy()
            P.data = (X.data != 0).astype(np.float64)
            out[few] = mean[users[few], None] + (X @ sim_t) / (P @ abs_sim_t + _EPS_DENOM)
        for row in np.flatnonzero(n_rated > k).tolist():
            out[row] = one_user(int(users[row]))
        return out

    return score


def _userknn_scorer(m: Any) -> BatchScorer:
    """Cornac's ``UserKNN.score`` for many users, reproduced exactly.

    For user *u* and item *i*, the candidate neighbours are the users who rated *i* in
    training with a non-zero similarity to *u*; Cornac keeps *k* of them with its ``TopK``
    heap and scores ``mean_u + Σ w·r / (Σ|w| + 1e-8)``, ``r`` being the neighbours' centred
    ratings of *i*. The scorer computes the same set of neighbours, including Cornac's
    order-dependent choice among those tied with the *k*-th similarity
    (:func:`_top_k_mask`), with matrix products for the (user, item) pairs with at most *k*
    candidates and one vectorised top-*k* per item for the others. A block of users holds a
    dense ``(len(users), n_users)`` slice of the similarity matrix.
    """
    k = int(m.k)
    iu = m.iu_mat  # row i: raters of item i (centred ratings) in Cornac's insertion order
    pattern = iu.copy()
    pattern.data = np.ones_like(pattern.data)
    nonnegative = bool(m.sim_mat.data.min(initial=0.0) >= 0)

    def score(users: np.ndarray) -> np.ndarray:
        users = np.asarray(users, dtype=np.int64)
        sims = m.sim_mat[users].toarray()  # (batch, n_users)
        sims_t = np.ascontiguousarray(sims.T)  # (n_users, batch): fast gathers of raters
        # first every candidate (rater with a non-zero similarity) is a neighbour ...
        num = np.asarray(iu @ sims.T).T
        den = np.asarray(pattern @ np.abs(sims).T).T
        n_cand = np.asarray(pattern @ (sims != 0).T.astype(np.float64)).T
        # ... then redo the (user, item) pairs with more than k candidates, item by item
        crowded = n_cand > k
        for i in np.flatnonzero(crowded.any(axis=0)):
            rows = np.flatnonzero(crowded[:, i])
            lo, hi = iu.indptr[i], iu.indptr[i + 1]
            weights = sims_t.take(iu.indices[lo:hi], axis=0).take(rows, axis=1).T.copy()
            num[rows, i], den[rows, i] = _knn_average(weights, iu.data[lo:hi], k, nonnegative)
        return m.mean_arr[users][:, None] + num / (den + _EPS_DENOM)

    return score


# --------------------------------------------------------------------------------------
# dispatch
# --------------------------------------------------------------------------------------
def _preparers() -> dict[Any, Callable[[Any], BatchScorer | None]]:
    M = cornac.models
    return {
        M.MF.score: _mf_scorer,  # also SVD
        M.NMF.score: _mf_scorer,
        M.BPR.score: _bpr_scorer,  # also WBPR, MMMF
        M.PMF.score: _dot_scorer("U", "V"),
        M.HPF.score: _dot_scorer("Theta", "Beta"),
        M.EASE.score: _ease_scorer,
        M.BaselineOnly.score: _baseline_scorer,
        M.MostPop.score: _mostpop_scorer,
        M.GlobalAvg.score: _globalavg_scorer,
        M.ItemKNN.score: _itemknn_scorer,
        M.UserKNN.score: _userknn_scorer,
    }


_PREPARERS = _preparers()


def _is_tf_ncf(model: Any) -> bool:
    """A Cornac MLP, GMF or NeuMF fitted with the TensorFlow backend, scored by Cornac's own
    ``NCFBase.score`` (they share it, so the dispatch above cannot tell them apart)."""
    from cornac.models.ncf.recom_ncf_base import NCFBase

    M = cornac.models
    return (type(model) in (M.MLP, M.GMF, M.NeuMF) and type(model).score is NCFBase.score
            and getattr(model, "backend", None) == "tensorflow" and hasattr(model, "model"))


def _is_numpy_ncf(model: Any) -> bool:
    """A Cornac MLP, GMF or NeuMF with ``backend="numpy"`` (fitted by the package's trainer)."""
    from ._ncf import is_numpy_ncf

    return is_numpy_ncf(model)


def batch_scorer(model: Recommender) -> BatchScorer | None:
    """A function scoring many users at once for a fitted model, or None.

    The function maps an int array of Cornac user indices to a ``(len(users), n)`` array of
    scores of the model's known items (Cornac's item order), equal to stacking
    ``model.score(u)`` up to floating-point summation order. It is the model's own
    ``score_batch`` method when it has one (the baselines here do), else a vectorised copy of
    the ``score`` of a known Cornac family (MF, SVD, NMF, PMF, BPR, WBPR, MMMF, HPF, EASE,
    BaselineOnly, MostPop, GlobalAvg, ItemKNN, UserKNN), matched on the ``score`` function
    itself so that a subclass overriding ``score`` gets None (use the per-user loop). Cornac's
    MLP, GMF and NeuMF fitted with TensorFlow get their network applied with NumPy (float32,
    equal to Cornac's scores to 1e-6; TensorFlow is not imported here), and so do those built
    with ``backend="numpy"`` and fitted by the package's trainer
    (:func:`~recbias_tutorial.models.fit_scores` and the other fitting functions).

    Parameters
    ----------
    model : cornac.models.Recommender
        A fitted model.

    Returns
    -------
    callable or None
        ``score(users) -> array of shape (len(users), n)``, or None when the model has no
        ``score_batch`` and its ``score`` is not one of the known families'.

    Raises
    ------
    AttributeError
        If ``model`` belongs to a known family but is not fitted (its fitted parameters
        are read here, e.g. ``numpy_weights`` of a ``backend="numpy"`` NCF model); some
        families detect this only when scoring.
    TypeError
        Likewise for an unfitted ``MF``, ``SVD`` or ``NMF`` (their parameters are None).

    See Also
    --------
    recbias_tutorial.models.fit_scores : uses it, with a per-user fallback.
    recbias_tutorial.models.to_cornac_dataset : the dataset the model is fitted on.

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial.models import to_cornac_dataset
    >>> ds = to_cornac_dataset(pd.DataFrame({"user": [0, 1], "item": [1, 0], "rating": [4.0, 2.0]}),
    ...                        n_users=2, n_items=2, seed=0)
    >>> model = cornac.models.BaselineOnly(seed=0).fit(ds)
    >>> import numpy as np
    >>> bool(np.allclose(batch_scorer(model)(np.array([1])), model.score(1)))
    True
    >>> knn = cornac.models.UserKNN(k=1, verbose=False).fit(ds)
    >>> bool(np.allclose(batch_scorer(knn)(np.array([0, 1])), [knn.score(0), knn.score(1)]))
    True
    """
    own = getattr(model, "score_batch", None)
    if callable(own):
        return own
    if _is_tf_ncf(model):
        from ._ncf import ncf_scorer

        return ncf_scorer(model)
    if _is_numpy_ncf(model):
        from ._ncf import ncf_forward

        weights = model.numpy_weights  # AttributeError when the model is not fitted
        return lambda users: ncf_forward(weights, users)
    prepare = _PREPARERS.get(getattr(type(model), "score", None))
    return None if prepare is None else prepare(model)
