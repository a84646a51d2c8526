r"""The paper's kind of recommenders: RankSys's top-N scorers, in numpy (private module).

Carraro & Bridge (2022, §4.4) ran ``UB_KNN``, ``IB_KNN`` and ``MF`` ("the Matrix
Factorization algorithm proposed by Pilászy et al., 2010") from RankSys
(github.com/RankSys/RankSys); their public notebooks (cdiego89phd/wtd-debiasing-RS-eval) hold
the data preparation only, so the recommenders' settings beyond the paper's grid are RankSys's
own (its ``RecommenderExample``). These classes compute the same scores as RankSys:

* similarity ``Similarities.vectorCosine``: the cosine of the raw rating vectors,
  :math:`\mathrm{sim}(a, b) = \langle r_a, r_b \rangle / \sqrt{\|r_a\|^2 \|r_b\|^2}`, only for
  pairs with a non-zero product, never with itself;
* neighbourhood ``TopKNeighborhood``: the ``k`` most similar, kept in RankSys's
  ``IntDoubleTopN``, which orders by (similarity, index): of neighbours tied at the ``k``-th
  place, the higher index is kept;
* ``UserNeighborhoodRecommender`` (q = 1): :math:`s_{ui} = \sum_{v \in N_k(u)}
  \mathrm{sim}(u, v)^q\, r_{vi}`;
* ``ItemNeighborhoodRecommender`` (q = 1): :math:`s_{ui} = \sum_{j \in I_u} \sum_{i \in
  N_k(j)} \mathrm{sim}(j, i)^q\, r_{uj}` (the neighbourhoods of the user's items, not of the
  scored item as in Cornac's ``ItemKNN``);
* ``PZTFactorizer``: the implicit-feedback loss of Hu, Koren & Volinsky with the rating as
  target, :math:`\sum_{u,i} c_{ui}(r_{ui} - p_u^\top q_i)^2` with :math:`c_{ui} = 1 + \alpha
  r_{ui}` on observed pairs and :math:`c = 1, r = 0` elsewhere, minimised by Pilászy et
  al.'s ALS with one coordinate-descent sweep per half-step (RankSys's ``doRR1``, L = 1).

A RankSys ranking holds only the items a scorer gives a score to; here every other item scores
0, below them (the neighbourhood scores are positive), so only a user with fewer than ``k``
scored items can differ, in the tail of the top ``k``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import cornac
from ..._jit import numba  # Numba, or the same code run as Python without it
import numpy as np
import scipy.sparse as sp
from cornac.exception import ScoreException
from cornac.models import Recommender

from ..._params import Interval, Options, Seed, declare
from ..._portable_math import matmul
from ..._validation import as_generator, seed_int

#: A fingerprint of this file: part of every model's state, so that the fit cache (keyed by
#: a model's class and state) never returns scores computed by an older version of it.
_SOURCE = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()

#: RankSys's ``RecommenderExample`` settings the paper does not state: the similarity
#: exponent q, the confidence 1 + alpha * r and the ALS iterations.
RANKSYS_DEFAULTS: dict[str, Any] = {"q": 1, "alpha": 1.0, "n_iter": 20}


def vector_cosine_neighbours(ratings: sp.csr_matrix, k: int, *, chunk: int = 1024) -> sp.csr_matrix:
    """Row-wise top-``k`` neighbourhoods of RankSys's vector cosine, as a sparse matrix.

    Row ``a`` holds :math:`\\mathrm{sim}(a, b)` for the ``k`` rows ``b != a`` most similar to
    ``a`` among those with a non-zero inner product. Ties at the ``k``-th place keep the
    higher index, as RankSys's ``IntDoubleTopN`` does (it compares the similarity, then the
    index, and keeps the ``k`` largest pairs).

    Examples
    --------
    >>> r = sp.csr_matrix(np.array([[5.0, 1, 0], [4, 0, 0], [0, 2, 3]]))
    >>> vector_cosine_neighbours(r, 1).toarray().round(3)
    array([[0.   , 0.981, 0.   ],
           [0.981, 0.   , 0.   ],
           [0.109, 0.   , 0.   ]])
    """
    ratings = sp.csr_matrix(ratings, dtype=np.float64)
    n = ratings.shape[0]
    norm = np.sqrt(np.asarray(ratings.multiply(ratings).sum(axis=1)).ravel())
    rows, cols, vals = [], [], []
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        product = (ratings[start:stop] @ ratings.T).toarray()
        product[np.arange(stop - start), np.arange(start, stop)] = 0.0  # never itself
        with np.errstate(divide="ignore", invalid="ignore"):
            sim = product / np.outer(norm[start:stop], norm)
        sim[product == 0.0] = 0.0
        take = min(k, n)
        # IntDoubleTopN keeps the k largest (similarity, index) pairs: on ties, the higher
        # index. A stable sort of the reversed columns puts it first; map back to the index.
        order = n - 1 - np.argsort(-sim[:, ::-1], axis=1, kind="stable")[:, :take]
        top = np.take_along_axis(sim, order, axis=1)
        keep = top > 0.0  # RankSys keeps only pairs with a non-zero product
        r_idx = np.repeat(np.arange(start, stop), take).reshape(-1, take)
        rows.append(r_idx[keep]), cols.append(order[keep]), vals.append(top[keep])
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, n))


class _RankSysModel(Recommender):
    """A Cornac recommender whose ``score_batch`` gives RankSys's scores."""

    def __init__(self, name: str, **params: Any) -> None:
        super().__init__(name=name, trainable=True, verbose=False)
        for key, value in params.items():
            setattr(self, key, value)
        self._source = _SOURCE
        self._fitted = False

    def _matrix(self, train_set: cornac.data.Dataset) -> sp.csr_matrix:
        users, items, ratings = train_set.uir_tuple
        return sp.csr_matrix((np.asarray(ratings, float), (np.asarray(users), np.asarray(items))),
                             shape=(train_set.num_users, train_set.num_items))

    def _fitted_on(self, train_set: cornac.data.Dataset) -> None:
        self._shape = (int(train_set.num_users), int(train_set.num_items))
        self._fitted = True

    def score(self, user_idx: int, item_idx: int | None = None):
        """Scores of all known items (or of ``item_idx``) for one user."""
        self._check_fitted()
        self._ids([user_idx], "user_idx", 0)
        if item_idx is not None:
            self._ids([item_idx], "item_idx", 1)
        row = self.score_batch([user_idx])[0]
        return row.copy() if item_idx is None else float(row[item_idx])

    def _check_fitted(self) -> None:
        if not self._fitted:
            raise ScoreException(f"{self.name} is not fitted")

    def _ids(self, ids: Any, name: str, axis: int) -> np.ndarray:
        """Integer ids of the users (axis 0) or items (axis 1) the model was fitted on."""
        arr = np.asarray(ids)
        if arr.ndim != 1 or (arr.size and (arr.dtype == bool
                                           or not np.issubdtype(arr.dtype, np.integer))):
            raise ValueError(f"{name} must be integer ids (1-D), got {ids!r:.60}")
        n = self._shape[axis]
        if arr.size and (arr.min() < 0 or arr.max() >= n):
            what = ("users", "items")[axis]
            raise ValueError(f"{name} holds ids outside 0..{n - 1} (the {n} {what} {self.name} "
                             f"was fitted on), e.g. {int(arr[(arr < 0) | (arr >= n)][0])}")
        return arr


class RankSysUserKNN(_RankSysModel):
    """RankSys's ``UserNeighborhoodRecommender`` with ``vectorCosine`` and ``topK(k)``.

    Parameters
    ----------
    k : int, default 100
        Neighbourhood size.
    q : int, default 1
        Exponent of the similarity.
    name : str, default "UB_KNN"

    Raises
    ------
    ValueError
        If ``k`` or ``q`` is not a positive int (RankSys's exponent is an int: 0.5 would be
        cut to 0); when scoring, on user ids outside those the model was fitted on.

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial.models import fit_scores
    >>> train = pd.DataFrame({"user": [0, 0, 1, 2], "item": [0, 1, 1, 2], "rating": [5.0, 3, 4, 2]})
    >>> fit_scores(RankSysUserKNN(k=1), train, n_users=3, n_items=3, seed=0)[1].round(3).tolist()
    [2.572, 1.543, 0.0]
    """

    @declare(k=Interval(int, 1), q=Interval(int, 1))
    def __init__(self, k: int = 100, q: int = RANKSYS_DEFAULTS["q"], name: str = "UB_KNN") -> None:
        super().__init__(name, k=int(k), q=int(q))

    def fit(self, train_set: cornac.data.Dataset, val_set: cornac.data.Dataset | None = None):
        """The top-k user neighbourhoods of the training ratings."""
        Recommender.fit(self, train_set, val_set)
        self._ratings = self._matrix(train_set)
        self._weights = vector_cosine_neighbours(self._ratings, self.k).power(self.q).tocsr()
        self._fitted_on(train_set)
        return self

    def score_batch(self, user_indices) -> np.ndarray:
        """:math:`s_{ui} = \\sum_{v \\in N_k(u)} sim(u, v)^q r_{vi}` for several users."""
        self._check_fitted()
        return (self._weights[self._ids(user_indices, "user_indices", 0)] @ self._ratings).toarray()


class RankSysItemKNN(_RankSysModel):
    """RankSys's ``ItemNeighborhoodRecommender`` with ``vectorCosine`` and ``topK(k)``.

    Parameters
    ----------
    k : int, default 10
        Neighbourhood size (of each of the user's rated items).
    q : int, default 1
        Exponent of the similarity.
    name : str, default "IB_KNN"

    Raises
    ------
    ValueError
        If ``k`` or ``q`` is not a positive int (RankSys's exponent is an int: 0.5 would be
        cut to 0); when scoring, on user ids outside those the model was fitted on.

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial.models import fit_scores
    >>> train = pd.DataFrame({"user": [0, 0, 1, 2], "item": [0, 1, 1, 2], "rating": [5.0, 3, 4, 2]})
    >>> fit_scores(RankSysItemKNN(k=1), train, n_users=3, n_items=3, seed=0)[1].round(3).tolist()
    [2.4, 0.0, 0.0]
    """

    @declare(k=Interval(int, 1), q=Interval(int, 1))
    def __init__(self, k: int = 10, q: int = RANKSYS_DEFAULTS["q"], name: str = "IB_KNN") -> None:
        super().__init__(name, k=int(k), q=int(q))

    def fit(self, train_set: cornac.data.Dataset, val_set: cornac.data.Dataset | None = None):
        """The top-k item neighbourhoods of the training ratings."""
        Recommender.fit(self, train_set, val_set)
        self._ratings = self._matrix(train_set)
        self._weights = vector_cosine_neighbours(self._ratings.T.tocsr(), self.k).power(self.q).tocsr()
        self._fitted_on(train_set)
        return self

    def score_batch(self, user_indices) -> np.ndarray:
        """:math:`s_{ui} = \\sum_{j \\in I_u,\\, i \\in N_k(j)} sim(j, i)^q r_{uj}`."""
        self._check_fitted()
        return (self._ratings[self._ids(user_indices, "user_indices", 0)] @ self._weights).toarray()


def rr1_sweep(w: np.ndarray, other: np.ndarray, owner: np.ndarray, index: np.ndarray,
              value: np.ndarray, lam: float, alpha: float) -> np.ndarray:
    """One half-step of Pilászy et al.'s ALS as RankSys's ``PZTFactorizer`` runs it.

    For every row ``u`` of ``w`` (users, or items on the other half-step) with observations
    (``owner == u``, on rows ``index`` of ``other`` with ratings ``value``): one sweep of
    coordinate descent (``doRR1`` with L = 1, warm-started at ``w[u]``) on the ridge problem
    with the pseudo-rows of :math:`G G^\\top = Q^\\top Q + \\lambda I` (target 0, weight 1)
    and the observed rows (target :math:`C r / (C - 1)`, weight :math:`C - 1`,
    :math:`C = 1 + \\alpha r`), and :math:`\\lambda` again in each coordinate's denominator.
    The pseudo-rows' contribution is computed from :math:`Q^\\top Q + \\lambda I` directly
    (the same sums, without the eigen-decomposition). Rows without observations are 0.
    """
    n, k = w.shape
    w = np.array(w, dtype=np.float64)
    order = np.argsort(owner, kind="stable")  # the observations grouped by their row
    indptr = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=n))]).astype(np.int64)
    gram = matmul(other.T, other) + lam * np.eye(k)  # portable: no BLAS
    _rr1_rows(w, np.ascontiguousarray(other, dtype=np.float64), gram, indptr,
              np.asarray(index, np.int64)[order], np.asarray(value, np.float64)[order],
              float(lam), float(alpha))
    return w


@numba.njit(cache=True, boundscheck=False)
def _rr1_rows(w, other, gram, indptr, index, value, lam, alpha):  # pragma: no cover (compiled)
    """``rr1_sweep`` in place, one row at a time (``g = gram @ w[u]`` kept up to date)."""
    k = w.shape[1]
    for u in range(w.shape[0]):
        start, stop = indptr[u], indptr[u + 1]
        if start == stop:
            w[u, :] = 0.0
            continue
        m = stop - start
        c = np.empty(m)
        e = np.empty(m)
        for p in range(m):
            conf = 1.0 + alpha * value[start + p]
            c[p] = conf - 1.0
            pred = 0.0
            for j in range(k):
                pred += w[u, j] * other[index[start + p], j]
            e[p] = conf * value[start + p] / c[p] - pred
        g = np.zeros(k)
        for j in range(k):
            for jj in range(k):
                g[jj] += gram[jj, j] * w[u, j]
        for j in range(k):
            old = w[u, j]
            a = gram[j, j]
            d = old * gram[j, j] - g[j]  # the pseudo-rows' part, w_j added back
            for p in range(m):
                x = other[index[start + p], j]
                e[p] += old * x
                a += c[p] * x * x
                d += c[p] * x * e[p]
            new = d / (lam + a)
            w[u, j] = new
            for p in range(m):
                e[p] -= new * other[index[start + p], j]
            for jj in range(k):
                g[jj] += gram[jj, j] * (new - old)


class ImplicitALS(_RankSysModel):
    """RankSys's ``PZTFactorizer`` + ``MFRecommender``: Pilászy et al.'s implicit ALS.

    Parameters
    ----------
    k : int, default 50
        Number of latent factors.
    lambda_reg : float, default 0.1
        Regularisation.
    alpha : float, default 1.0
        Confidence :math:`1 + \\alpha r` of an observed rating.
    n_iter : int, default 20
        ALS iterations (each: items, then users).
    seed : int, default 0
        Seed of the initial factors (RankSys: ``sqrt(1/k) * Math.random()``).
    fresh_starts : bool, default False
        Draw the initial factors from ``(seed, the fit's seed)`` instead of ``seed`` alone:
        the fit's seed is the Cornac dataset's, which Carraro & Bridge's protocol sets to the
        repetition's, so each repetition starts from other values, as RankSys's
        ``ALSFactorizer`` draws new ones (``Math.random()``) on every run. ``False`` starts
        every fit from the same values.
    name : str, default "MF"

    Raises
    ------
    ValueError
        If ``k`` or ``n_iter`` is not a positive int, ``lambda_reg`` not a finite number
        ``>= 0``, ``alpha`` not one ``> 0`` (the observed rows' weight is ``alpha * r``),
        or ``seed`` not a non-negative int or a Generator; when scoring, on ids outside those
        the model was fitted on.

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial.models import fit_scores
    >>> train = pd.DataFrame({"user": [0, 0, 1, 2], "item": [0, 1, 1, 2], "rating": [5.0, 3, 4, 2]})
    >>> fit_scores(ImplicitALS(k=2, n_iter=5), train, n_users=3, n_items=3, seed=0).shape
    (3, 3)
    >>> a, b = (fit_scores(ImplicitALS(k=2, n_iter=5, fresh_starts=True), train, n_users=3,
    ...                    n_items=3, seed=s) for s in (0, 1))  # two repetitions' seeds
    >>> bool((a != b).any())
    True
    """

    @declare(k=Interval(int, 1), lambda_reg=Interval(float, 0.0),
             alpha=Interval(float, 0.0, open="low"), n_iter=Interval(int, 1), seed=Seed(),
             fresh_starts=Options((False, True)))
    def __init__(self, k: int = 50, lambda_reg: float = 0.1, alpha: float = RANKSYS_DEFAULTS["alpha"],
                 n_iter: int = RANKSYS_DEFAULTS["n_iter"], seed: int = 0,
                 fresh_starts: bool = False, name: str = "MF") -> None:
        super().__init__(name, k=int(k), lambda_reg=float(lambda_reg), alpha=float(alpha),
                         n_iter=int(n_iter), seed=seed, fresh_starts=bool(fresh_starts))

    def fit(self, train_set: cornac.data.Dataset, val_set: cornac.data.Dataset | None = None):
        """Alternate the item and user half-steps ``n_iter`` times, as RankSys does."""
        Recommender.fit(self, train_set, val_set)
        users, items, ratings = (np.asarray(a) for a in train_set.uir_tuple)
        users, items, ratings = users.astype(np.int64), items.astype(np.int64), ratings.astype(float)
        rng = (np.random.default_rng([seed_int(self.seed), seed_int(train_set.seed)])
               if self.fresh_starts else as_generator(self.seed))
        scale = np.sqrt(1.0 / self.k)
        p = scale * rng.random((train_set.num_users, self.k))
        q = scale * rng.random((train_set.num_items, self.k))
        p[np.bincount(users, minlength=len(p)) == 0] = 0.0
        for _ in range(self.n_iter):
            q = rr1_sweep(q, p, items, users, ratings, self.lambda_reg, self.alpha)
            p = rr1_sweep(p, q, users, items, ratings, self.lambda_reg, self.alpha)
        self.u_factors, self.i_factors = p, q
        self._fitted_on(train_set)
        return self

    def score_batch(self, user_indices) -> np.ndarray:
        """:math:`p_u^\\top q_i` for several users."""
        self._check_fitted()
        return matmul(self.u_factors[self._ids(user_indices, "user_indices", 0)],
                      self.i_factors.T)


def ranksys_grid(grid: dict[str, dict[str, tuple]]) -> dict[str, dict[str, Any]]:
    """The paper's grid over the three RankSys-like recommenders (see ``paper_grid``); MF
    draws fresh starting values in each repetition (``fresh_starts=True``), as RankSys does."""
    from functools import partial

    out: dict[str, dict[str, Any]] = {}
    for name, cls in (("UB_KNN", RankSysUserKNN), ("IB_KNN", RankSysItemKNN)):
        out[name] = {f"k={k}": partial(cls, k=k) for k in grid["neighbours"][name]}
    out["MF"] = {f"k={k}, λ={reg:g}": partial(ImplicitALS, k=k, lambda_reg=reg, seed=0,
                                              fresh_starts=True)
                 for k in grid["MF"]["factors"] for reg in grid["MF"]["regularisation"]}
    return out
