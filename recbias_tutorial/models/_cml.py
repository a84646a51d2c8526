r"""Collaborative metric learning as Yang et al. trained it (OpenRec legacy ``CML`` / ``WCML``).

No maintained library ships CML (Hsieh et al., WWW 2017) with the weighting Yang et al. used:
Cornac 3.0.1 has no metric-learning model, and OpenRec, the authors' own framework, last
released in 2020 (0.3.0) and needs TensorFlow 1. :class:`CML` is a small numpy copy of OpenRec legacy's two
losses, as ``experiments_section_5/experiment_cml_yahoo_train.ipynb`` and
``wcml_yahoo_train.py`` of ylongqi/unbiased-offline-recommender-evaluation configure them:

* score :math:`s_{uj} = -\lVert u - v_j\rVert^2 + b_j` (``PairwiseEuDist`` / ``NSEuDist``);
* ``weighted=False`` (OpenRec ``CML`` + ``PairwiseSampler``): one sampled negative per
  positive, hinge :math:`[m - s_{ui} + s_{uj}]_+` with weight 1 — the slides' **U-CML**
  (uniformly weighted);
* ``weighted=True`` (OpenRec ``WCML`` + ``NPairwiseSampler(negativenum=5)``): five distinct
  negatives, loss :math:`\log(\lfloor n_{items}\, r / 5\rfloor + 1) \max_j [m - s_{ui} +
  s_{uj}]_+` with :math:`r` the number of violating negatives, a WARP-style approximated-rank
  weight — the slides' **A-CML**;
* L2 penalty ``l2_reg * sum(x**2) / 2`` on every looked-up row (``LatentFactor``), summed
  over the batch; Adam (TensorFlow defaults: learning rate 0.001, betas 0.9 / 0.999,
  epsilon 1e-8; TF1's Adam updates every row, as here); after each step the touched user and
  item vectors are rescaled to norm at most 1 (``censor_l2_norm_op``).

Positives are read in order from a shuffled copy of the training pairs, reshuffled when fewer
than a batch remain (OpenRec's samplers); negatives are uniform over the items the user has
no training pair with. OpenRec draws them with ``int(random() * (max_item - 1))``, which never
draws the last item id; we draw every item.
"""

from __future__ import annotations

from typing import Any

import cornac
import numpy as np
from cornac.exception import ScoreException
from cornac.models import Recommender

from .._portable_math import log, matmul, powi
from .._validation import check_int, check_real, check_seed

__all__ = ["CML", "cml_loss"]


def _scores(U: np.ndarray, V: np.ndarray, b: np.ndarray, users: np.ndarray,
            items: np.ndarray) -> np.ndarray:
    """:math:`-\\lVert u - v\\rVert^2 + b` for aligned ``users`` and ``items`` (any shape)."""
    d = U[users] - V[items]
    return -np.einsum("...k,...k->...", d, d) + b[items]


def cml_loss(U: np.ndarray, V: np.ndarray, b: np.ndarray, users: np.ndarray,
             positives: np.ndarray, negatives: np.ndarray, *, weighted: bool,
             l2_reg: float = 0.001, margin: float = 1.0,
             n_items: int | None = None) -> tuple[float, tuple[np.ndarray, ...]]:
    r"""OpenRec legacy's CML / WCML batch loss and its gradient with respect to U, V and b.

    Parameters
    ----------
    U, V : numpy.ndarray
        User and item vectors, shapes ``(n_users, d)`` and ``(n_items, d)``.
    b : numpy.ndarray
        Item biases, shape ``(n_items,)``.
    users, positives : numpy.ndarray
        The batch's users and their positive items, shape ``(B,)``.
    negatives : numpy.ndarray
        Sampled negatives, shape ``(B,)`` (``weighted=False``) or ``(B, n)``.
    weighted : bool
        WCML's approximated-rank weight and max over negatives (else CML's plain hinge).
    l2_reg : float, default 0.001
        Weight of ``sum(x**2) / 2`` over every looked-up row (users, positive and negative
        items, and their biases).
    margin : float, default 1.0
        Hinge margin.
    n_items : int, optional
        ``max_item`` of the rank weight (default ``len(V)``).

    Returns
    -------
    (loss, (dU, dV, db))
        The batch loss and its (sub)gradient, dense arrays of the parameters' shapes.

    Examples
    --------
    >>> U = np.array([[0.0, 0.0]]); V = np.array([[1.0, 0.0], [0.0, 0.5]]); b = np.zeros(2)
    >>> loss, _ = cml_loss(U, V, b, np.array([0]), np.array([0]), np.array([1]),
    ...                    weighted=False, l2_reg=0.0)
    >>> float(loss)  # hinge: 1 - (-1) + (-0.25)
    1.75
    """
    n_items = len(V) if n_items is None else n_items
    neg = negatives if weighted else negatives[:, None]
    s_pos = _scores(U, V, b, users, positives)                      # (B,)
    s_neg = _scores(U, V, b, users[:, None], neg)                   # (B, n)
    hinge = np.maximum(margin - s_pos[:, None] + s_neg, 0.0)
    if weighted:
        violated = np.count_nonzero(hinge, axis=1)
        weight = log(np.floor(n_items * violated / neg.shape[1]) + 1.0)  # portable log
        top = np.argmax(hinge, axis=1)  # TF's reduce_max routes the gradient to the first max
        loss = float(np.sum(weight * hinge[np.arange(len(users)), top]))
        coef = np.zeros_like(hinge)
        coef[np.arange(len(users)), top] = weight * (hinge[np.arange(len(users)), top] > 0)
    else:
        loss = float(hinge.sum())
        coef = (hinge > 0).astype(U.dtype)
    # d(-s_pos)/du = 2(u - v_i); d s_neg/du = -2(u - v_j); biases: -1 and +1
    u = U[users]
    d_pos = u - V[positives]                                        # (B, d)
    d_neg = u[:, None, :] - V[neg]                                  # (B, n, d)
    c_pos = coef.sum(axis=1)
    g_u = 2.0 * c_pos[:, None] * d_pos - 2.0 * np.einsum("bn,bnd->bd", coef, d_neg)
    g_pos = -2.0 * c_pos[:, None] * d_pos
    g_neg = 2.0 * coef[..., None] * d_neg
    gb_pos, gb_neg = -c_pos, coef
    if l2_reg:
        vp, vn = V[positives], V[neg]
        loss += l2_reg * 0.5 * float((u * u).sum() + (vp * vp).sum() + (vn * vn).sum()
                                     + (b[positives] ** 2).sum() + (b[neg] ** 2).sum())
        g_u = g_u + l2_reg * u
        g_pos = g_pos + l2_reg * vp
        g_neg = g_neg + l2_reg * vn
        gb_pos = gb_pos + l2_reg * b[positives]
        gb_neg = gb_neg + l2_reg * b[neg]
    dU = _scatter(users, g_u, len(U))
    dV = _scatter(np.concatenate([positives, neg.ravel()]),
                   np.concatenate([g_pos, g_neg.reshape(-1, U.shape[1])]), len(V))
    db = np.bincount(np.concatenate([positives, neg.ravel()]),
                      weights=np.concatenate([gb_pos, gb_neg.ravel()]), minlength=len(b))
    return loss, (dU, dV, db)


def _scatter(rows: np.ndarray, values: np.ndarray, n_rows: int) -> np.ndarray:
    """Row sums ``out[r] = sum of values[rows == r]`` (one bincount: much faster than add.at)."""
    d = values.shape[1]
    flat = (rows[:, None] * d + np.arange(d)).ravel()
    return np.bincount(flat, weights=values.ravel(), minlength=n_rows * d).reshape(n_rows, d)


def _sample_negatives(rng: np.random.Generator, users: np.ndarray, seen: np.ndarray,
                      n: int) -> np.ndarray:
    """``n`` distinct items per user, uniform over the items it has no training pair with."""
    n_items = seen.shape[1]
    if (n_items - seen[users].sum(axis=1) < n).any():
        raise ValueError(f"every user needs at least n_negatives={n} items without a training "
                         "pair to draw negatives from")
    out = rng.integers(0, n_items, size=(len(users), n))
    while True:
        bad = seen[users[:, None], out]
        if n > 1:  # a set of distinct negatives (NPairwiseSampler)
            s = np.sort(out, axis=1)
            dup = np.zeros_like(bad)
            order = np.argsort(out, axis=1, kind="stable")
            dup_sorted = np.concatenate([np.zeros((len(users), 1), bool), s[:, 1:] == s[:, :-1]],
                                        axis=1)
            np.put_along_axis(dup, order, dup_sorted, axis=1)
            bad |= dup
        if not bad.any():
            return out
        out[bad] = rng.integers(0, n_items, size=int(bad.sum()))


class CML(Recommender):
    """Collaborative metric learning, OpenRec legacy's ``CML`` (U-CML) or ``WCML`` (A-CML).

    See the module docstring for the loss, sampler and optimiser, copied from the authors'
    configuration of Yang et al. (RecSys 2018), Section 5. Implicit feedback: every training
    pair is a positive (pass only the positives).

    Parameters
    ----------
    weighted : bool, default False
        WCML (five negatives, approximated-rank weight: A-CML) instead of CML (U-CML).
    k : int, default 50
        Dimension (``dim_embed``).
    l2_reg : float, default 0.001
    batch_size : int, default 8000
    n_iter : int, default 10001
        Adam steps (``num_itr``).
    learning_rate : float, default 0.001
    n_negatives : int, optional
        Negatives per positive (default 1 for CML, 5 for WCML).
    margin : float, default 1.0
    seed : int
        Initialisation and sampling seed (required).
    name : str, optional

    Raises
    ------
    ValueError
        On a non-positive size, a negative ``l2_reg`` or a bad ``seed``.

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial import fit_scores
    >>> train = pd.DataFrame({"user": [0, 0, 1, 1], "item": [0, 1, 1, 2], "rating": 1.0})
    >>> s = fit_scores(CML(batch_size=4, n_iter=200, learning_rate=0.05, seed=0), train,
    ...                n_users=2, n_items=4, seed=0)
    >>> s.shape, bool(s[0, 0] > s[0, 2])
    ((2, 4), True)
    """

    def __init__(self, *, weighted: bool = False, k: int = 50, l2_reg: float = 0.001,
                 batch_size: int = 8000, n_iter: int = 10001, learning_rate: float = 0.001,
                 n_negatives: int | None = None, margin: float = 1.0, seed: int,
                 name: str | None = None) -> None:
        super().__init__(name=name or ("A-CML" if weighted else "U-CML"), trainable=True,
                         verbose=False)
        self.weighted = bool(weighted)
        self.k = check_int(k, "k")
        self.l2_reg = check_real(l2_reg, "l2_reg", low=0.0)
        self.batch_size = check_int(batch_size, "batch_size")
        self.n_iter = check_int(n_iter, "n_iter")
        self.learning_rate = check_real(learning_rate, "learning_rate", low=0.0, low_open=True)
        self.n_negatives = check_int(n_negatives if n_negatives is not None
                                     else (5 if weighted else 1), "n_negatives")
        if not weighted and self.n_negatives != 1:
            raise ValueError("n_negatives must be 1 for CML (weighted=False)")
        self.margin = check_real(margin, "margin", low=0.0)
        seed = check_seed(seed)
        if isinstance(seed, np.random.Generator):
            raise ValueError("seed must be a non-negative int for CML (a fit is keyed by it)")
        self.seed = seed
        self.U: np.ndarray | None = None
        self.V: np.ndarray | None = None
        self.b: np.ndarray | None = None

    def fit(self, train_set: cornac.data.Dataset, val_set: Any = None):
        """Train on every pair of ``train_set`` as a positive (Cornac indices)."""
        Recommender.fit(self, train_set, val_set)
        users, items, _ = (np.asarray(a) for a in train_set.uir_tuple)
        users, items = users.astype(np.int64), items.astype(np.int64)
        n_u, n_i, n = self.num_users, self.num_items, len(users)
        rng = np.random.default_rng(self.seed)
        # truncated normal, std 0.01 (LatentFactor's init), biases zero
        U = np.clip(rng.normal(0, 0.01, (n_u, self.k)), -0.02, 0.02)
        V = np.clip(rng.normal(0, 0.01, (n_i, self.k)), -0.02, 0.02)
        b = np.zeros(n_i)
        seen = np.zeros((n_u, n_i), bool)
        seen[users, items] = True
        params = [U, V, b]
        m = [np.zeros_like(p) for p in params]
        v = [np.zeros_like(p) for p in params]
        b1, b2, eps = 0.9, 0.999, 1e-8
        batch = min(self.batch_size, n)
        order, state = rng.permutation(n), 0
        for t in range(1, self.n_iter + 1):
            if state + batch >= n:  # OpenRec: reshuffle when a full batch no longer fits
                order, state = rng.permutation(n), 0
            idx = order[state:state + batch]
            state += batch
            bu, bp = users[idx], items[idx]
            neg = _sample_negatives(rng, bu, seen, self.n_negatives)
            neg = neg if self.weighted else neg[:, 0]
            _, grads = cml_loss(U, V, b, bu, bp, neg, weighted=self.weighted,
                                l2_reg=self.l2_reg, margin=self.margin, n_items=n_i)
            # TF1's Adam; powi: Python's ** calls the C library's pow, which has CPU variants
            lr_t = self.learning_rate * np.sqrt(1 - powi(b2, t)) / (1 - powi(b1, t))
            for p, g, mp, vp in zip(params, grads, m, v):
                mp *= b1
                mp += (1 - b1) * g
                vp *= b2
                g *= g
                g *= 1 - b2
                vp += g
                np.sqrt(vp, out=g)  # g is spent: reuse it for the step
                g += eps
                np.divide(mp, g, out=g)
                g *= lr_t
                p -= g
            for mat, rows in ((U, np.unique(bu)), (V, np.unique(np.concatenate([bp, neg.ravel()])))):
                norm = np.linalg.norm(mat[rows], axis=1, keepdims=True)
                mat[rows] /= np.maximum(norm, 1.0)
        self.U, self.V, self.b = U, V, b
        return self

    def score(self, user_idx: int, item_idx: int | None = None):
        """OpenRec's serving score ``2 u.v + b - |v|^2`` (the distance score plus ``|u|^2``)."""
        if self.U is None:
            raise ScoreException(f"{self.name} is not fitted")
        s = (2.0 * matmul(self.V, self.U[user_idx]) + self.b
             - np.einsum("ij,ij->i", self.V, self.V))
        return s if item_idx is None else float(s[item_idx])
