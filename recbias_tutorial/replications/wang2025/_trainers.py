r"""The paper's trainers: MF, IPS and DR as in the AutoDebias baselines, in NumPy (private).

Re-exported by :mod:`recbias_tutorial.replications.wang2025`; import it from there.
Wang et al. re-evaluate MF, IPS, DR, AutoDebias and DNS "under backbone MF" on the split of
Chen et al.'s AutoDebias code (github.com/DongHande/AutoDebias): 5% of the random data trains
the propensities, 5% validates, 90% tests. This module follows that code's
``baselines/MF_bias.py``, ``IPS.py`` and ``DR.py`` with its Yahoo! R3 settings:

* labels: every logged rating kept, ``+1`` when ``rating >= threshold`` else ``-1``
  (``utils/load_dataset.py``, explicit type);
* model: :math:`\hat y_{ui} = p_u^\top q_i + b_u + c_i`, 10 factors, every table drawn from
  :math:`N(0, 2/n)` with ``n`` its number of rows (PyTorch's ``kaiming_normal_`` with
  ``mode="fan_out"`` on an embedding);
* loss: summed squared error; IPS weights each logged pair by :math:`1/P(O=1 \mid y)`, the
  Naive-Bayes propensity of its label estimated from the 5% uniform split; DR adds an
  imputation MF of the prediction error and the all-pairs term of ``DR.py``; weight decay 0;
* optimiser: plain SGD (lr 1e-4 for MF, 1e-5 for IPS and DR) on blocks of 6,000 shuffled users
  x 500 shuffled items, one step per block;
* early stopping: AUC of the validation split after every epoch, patience 60, at most 500
  epochs, the best epoch's parameters kept.

Deviations: NumPy instead of PyTorch (so other random draws for the same seed) and float64;
the validation AUC breaks ties by average rank (continuous scores have none). AutoDebias and
DNS are not implemented (AutoDebias's meta-learning needs second-order gradients through a
copy of the model; neither is needed for the chapter's question).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.stats import rankdata

from ..._params import Interval, Options, Seed, declare
from ..._portable_math import matmul
from ..._training import TrainingDiverged  # shared by every trainer; re-exported here
from ..._validation import as_generator, check_feedback, check_int, int_seed
from ...propensity import naive_bayes_propensity

#: The Yahoo! R3 settings of the AutoDebias baselines (``para`` of MF_bias.py, IPS.py, DR.py).
AUTODEBIAS_YAHOO: dict[str, dict[str, Any]] = {
    "MF": {"lr": 1e-4}, "IPS": {"lr": 1e-5}, "DR": {"lr": 1e-5, "imputation_lr": 1e-5}}
_TRAINING = dict(factors=10, epochs=500, patience=60, block=(6000, 500))


@dataclass(frozen=True)
class AutoDebiasFit:
    """A fitted AutoDebias-baseline trainer.

    Attributes
    ----------
    scores : numpy.ndarray
        ``(n_users, n_items)`` predicted labels of the best epoch (higher = better).
    best_epoch : int
        The epoch (0-based) whose parameters were kept.
    epochs : int
        Epochs run before early stopping (or the cap).
    validation_auc : float
        Validation AUC of the kept parameters.
    propensity : dict or None
        ``{-1.0: P(O=1 | y=-1), 1.0: P(O=1 | y=+1)}`` for IPS and DR, None for MF.
    """

    scores: np.ndarray
    best_epoch: int
    epochs: int
    validation_auc: float
    propensity: dict | None


@declare(seed=Seed(), uniform_share=Interval(float, 0.0, 1.0, open="both"),
         validation_share=Interval(float, 0.0, 1.0, open="both"))
def autodebias_split(random: pd.DataFrame, *, seed: int, uniform_share: float = 0.05,
                     validation_share: float = 0.05) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Split randomly exposed data as AutoDebias's ``seed_randomly_split`` does.

    One permutation of the rows from ``numpy.random.seed(seed)``: the first
    ``int(uniform_share * n)`` rows are the uniform training split (propensities), the next
    ``int(validation_share * n)`` the validation split (early stopping), the rest the test set
    (Yahoo! R3: 2,700 / 2,700 / 48,600 of 54,000, the test size of Wang et al.'s Table 2).
    Yahoo! R3's random ratings as :func:`recbias_tutorial.load_yahoo_r3` reads them are
    AutoDebias's ``datasets/yahooR3/random.txt`` row for row (ids shifted to start at 0), so
    ``seed=s`` gives the split of AutoDebias's ``--seed s``.

    Parameters
    ----------
    random : pandas.DataFrame
        Randomly exposed feedback (``user``, ``item``, ``rating``).
    seed : int
        The split seed (an int, as in AutoDebias: the legacy ``RandomState`` permutation).
    uniform_share, validation_share : float, default 0.05
        Shares of the uniform and validation splits, each in (0, 1), together below 1.

    Returns
    -------
    (uniform, validation, test) : tuple of pandas.DataFrame
        The three parts, in the permuted order, with fresh indexes.

    Raises
    ------
    ValueError
        If ``seed`` is not a non-negative int, a share is out of range, ``random`` is not a
        feedback frame, or it is too small for every part to get a row.

    Examples
    --------
    >>> mar = pd.DataFrame({"user": np.arange(100), "item": 0, "rating": 5.0})
    >>> [len(part) for part in autodebias_split(mar, seed=0)]
    [5, 5, 90]
    """
    seed = int_seed(seed)  # AutoDebias seeds numpy's legacy permutation
    if uniform_share + validation_share >= 1.0:
        raise ValueError("uniform_share + validation_share must be below 1 (the test set)")
    random = check_feedback(random, "random")
    n = len(random)
    cut = [int(uniform_share * n), int(uniform_share * n) + int(validation_share * n)]
    if cut[0] == 0 or cut[1] == cut[0] or cut[1] == n:
        raise ValueError(f"random has {n} rows: too few for uniform_share={uniform_share} and "
                         f"validation_share={validation_share} to give each part a row (parts "
                         f"of {cut[0]}, {cut[1] - cut[0]} and {n - cut[1]} rows)")
    order = np.random.RandomState(seed).permutation(n)  # == np.random.seed(seed); permutation(n)
    parts = np.split(order, cut)
    return tuple(random.iloc[p].reset_index(drop=True) for p in parts)


@declare(threshold=Interval(float))
def signed_labels(feedback: pd.DataFrame, *, threshold: float) -> pd.DataFrame:
    """The same pairs with ``rating`` replaced by +1 (``>= threshold``) or -1, as AutoDebias.

    Raises
    ------
    ValueError
        If ``feedback`` is not a feedback frame or ``threshold`` not a finite number.

    Examples
    --------
    >>> signed_labels(pd.DataFrame({"user": [0, 1], "item": [0, 0], "rating": [5.0, 2.0]}),
    ...               threshold=4.0)["rating"].tolist()
    [1.0, -1.0]
    """
    return _signed(check_feedback(feedback, "feedback"), threshold)


def _signed(feedback: pd.DataFrame, threshold: float) -> pd.DataFrame:
    out = feedback.copy()
    out["rating"] = np.where(out["rating"].to_numpy() >= threshold, 1.0, -1.0)
    return out


@declare(method=Options(tuple(AUTODEBIAS_YAHOO)), n_users=Interval(int, 1),
         n_items=Interval(int, 1), threshold=Interval(float), seed=Seed(),
         lr=Interval(float, 0.0, open="low", optional=True),
         imputation_lr=Interval(float, 0.0, open="low", optional=True),
         factors=Interval(int, 1), epochs=Interval(int, 1), patience=Interval(int, 1))
def fit_autodebias(method: str, train: pd.DataFrame, *, uniform: pd.DataFrame,
                   validation: pd.DataFrame, n_users: int, n_items: int, threshold: float,
                   seed: int | np.random.Generator, lr: float | None = None,
                   imputation_lr: float | None = None, factors: int = _TRAINING["factors"],
                   epochs: int = _TRAINING["epochs"], patience: int = _TRAINING["patience"],
                   block: tuple[int, int] = _TRAINING["block"]) -> AutoDebiasFit:
    r"""Fit one AutoDebias baseline (``"MF"``, ``"IPS"`` or ``"DR"``) on ±1 labels.

    Parameters
    ----------
    method : {"MF", "IPS", "DR"}
        ``MF_bias.py`` (naive), ``IPS.py`` (Naive-Bayes inverse propensities) or ``DR.py``
        (doubly robust with an imputation MF of the error).
    train : pandas.DataFrame
        The logged (MNAR) ratings; all kept, labelled ±1 at ``threshold``.
    uniform : pandas.DataFrame
        The uniform training split of the random data: :math:`P(y)` of the propensities.
    validation : pandas.DataFrame
        The validation split: its AUC stops training.
    n_users, n_items : int
        Size of the id spaces.
    threshold : float
        A rating is positive (+1) when ``>= threshold``.
    seed : int or numpy.random.Generator
        Initialisation and shuffling.
    lr, imputation_lr : float, optional
        SGD step sizes; default :data:`AUTODEBIAS_YAHOO`'s for ``method``.
    factors, epochs, patience : int, default 10, 500, 60
        Embedding size, epoch cap and early-stopping patience.
    block : (int, int), default (6000, 500)
        Users x items per SGD step.

    Returns
    -------
    AutoDebiasFit
        Scores of the best epoch and how training went.

    Raises
    ------
    TrainingDiverged
        (a ValueError) If the weights or predictions overflow or become NaN: ``lr`` (or
        ``imputation_lr``) is too large for these data, and no fit is returned.
    ValueError
        On an unknown ``method``, a frame that is not feedback in the id spaces, a
        non-positive size or step, a bad ``seed``, or a label absent from ``uniform`` or
        ``validation``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> log = pd.DataFrame({"user": np.repeat(np.arange(20), 5), "item": np.tile(np.arange(5), 20),
    ...                     "rating": rng.choice([1.0, 5.0], 100)})
    >>> fit = fit_autodebias("IPS", log, uniform=log, validation=log, n_users=20, n_items=5,
    ...                      threshold=4.0, seed=0, lr=0.01, epochs=5, patience=2, block=(8, 5))
    >>> fit.scores.shape, sorted(fit.propensity)
    ((20, 5), [-1.0, 1.0])
    """
    frames = {name: _signed(check_feedback(f, name, n_users, n_items), threshold)
              for name, f in (("train", train), ("uniform", uniform), ("validation", validation))}
    settings = {**AUTODEBIAS_YAHOO[method], **({} if lr is None else {"lr": lr}),
                **({} if imputation_lr is None else {"imputation_lr": imputation_lr})}
    if not (isinstance(block, tuple | list) and len(block) == 2):
        raise ValueError(f"block must be a pair (users, items) per step, got {block!r}")
    block = (check_int(block[0], "block[0]"), check_int(block[1], "block[1]"))
    if len(np.unique(frames["validation"]["rating"])) < 2:
        raise ValueError("validation must hold both labels (+1 and -1) for its AUC")
    rng = as_generator(seed)

    tr = frames["train"]
    u, i, y = (tr["user"].to_numpy(np.int64), tr["item"].to_numpy(np.int64),
               tr["rating"].to_numpy(float))
    propensity = None
    weight = np.ones_like(y)
    if method != "MF":
        nb = naive_bayes_propensity(tr, frames["uniform"], n_users=n_users, n_items=n_items)
        if nb.isna().any() or (nb <= 0).any():
            raise ValueError("uniform must hold both labels (+1 and -1): the Naive-Bayes "
                             "propensity of a label absent from it cannot be estimated")
        propensity = {float(k): float(v) for k, v in nb.items()}
        weight = 1.0 / nb.reindex(y).to_numpy()
    val = frames["validation"]
    vu, vi, vy = (val["user"].to_numpy(np.int64), val["item"].to_numpy(np.int64),
                  val["rating"].to_numpy(float))

    base = _MF.init(rng, n_users, n_items, factors)
    imputation = _MF.init(rng, n_users, n_items, factors) if method == "DR" else None
    best = dict(auc=-np.inf, remembered=-np.inf, epoch=0, state=base.copy(), left=patience)
    epoch = 0
    for epoch in range(epochs):
        with np.errstate(over="raise", invalid="raise"), _diverged(method, settings, epoch):
            for bu, bi, rows in _blocks(rng, u, i, n_users, n_items, block):
                if method == "DR":
                    _dr_step(base, imputation, bu, bi, u[rows], i[rows], y[rows], weight[rows],
                             settings["lr"], settings["imputation_lr"])
                else:
                    _, grad = weighted_squared_loss(base.predict(u[rows], i[rows]), y[rows],
                                                    weight[rows])
                    base.step(settings["lr"], base.sparse_grads(u[rows], i[rows], grad))
            prediction = base.predict(vu, vi)
            _check_finite(base, imputation, prediction)
        auc = _auc(prediction, vy)
        if _early_stop(best, auc, epoch, base, patience):
            break
    return AutoDebiasFit(scores=best["state"].dense(), best_epoch=best["epoch"], epochs=epoch + 1,
                         validation_auc=float(best["remembered"]), propensity=propensity)


@contextmanager
def _diverged(method: str, settings: dict, epoch: int):
    """Turn an overflow or a NaN of one epoch into :class:`TrainingDiverged`, naming the steps."""
    try:
        yield
    except (FloatingPointError, _NonFinite) as err:
        steps = ", ".join(f"{k}={v:g}" for k, v in settings.items()
                          if k == "lr" or method == "DR")
        raise TrainingDiverged(
            f"{method} training diverged in epoch {epoch} ({err}): {steps} is too large a step "
            "for these data; pass a smaller lr" + (" or imputation_lr" if method == "DR" else ""),
            epoch=epoch) from None


class _NonFinite(ArithmeticError):
    """Non-finite weights or predictions (found by :func:`_check_finite`)."""


def _check_finite(base: "_MF", imputation: "_MF | None", prediction: np.ndarray) -> None:
    """One summing pass per table: a NaN or an inf anywhere makes its sum non-finite."""
    models = [("weights", base)] + ([("imputation weights", imputation)] if imputation else [])
    for what, model in models:
        if not all(np.isfinite(a.sum()) for a in model.arrays):
            raise _NonFinite(f"non-finite {what}")
    if not np.isfinite(prediction.sum()):
        raise _NonFinite("non-finite validation predictions")


def weighted_squared_loss(prediction: np.ndarray, label: np.ndarray,
                          weight: np.ndarray) -> tuple[float, np.ndarray]:
    r"""The IPS loss :math:`\sum w (\hat y - y)^2` and its gradient in :math:`\hat y`.

    With :math:`w = 1/P_{ui}` over the logged pairs its expectation over the logging is the
    full-data loss :math:`\sum_{u,i} (\hat y_{ui} - y_{ui})^2` (the trainers' loss kernel;
    :math:`w = 1` is MF's naive loss).

    Examples
    --------
    >>> weighted_squared_loss(np.array([1.0, 0.0]), np.array([1.0, -1.0]), np.array([1.0, 4.0]))
    (4.0, array([0., 8.]))
    """
    residual = prediction - label
    return float(np.sum(weight * residual ** 2)), 2.0 * weight * residual


class _MF:
    """Biased MF parameters (p_u, q_i, b_u, c_i) with plain SGD."""

    def __init__(self, user, item, user_bias, item_bias):
        self.arrays = [user, item, user_bias, item_bias]

    @classmethod
    def init(cls, rng: np.random.Generator, n_users: int, n_items: int, factors: int) -> "_MF":
        # kaiming_normal_(mode="fan_out", a=0) on an (n, d) embedding: std sqrt(2 / n)
        return cls(rng.normal(0.0, np.sqrt(2.0 / n_users), (n_users, factors)),
                   rng.normal(0.0, np.sqrt(2.0 / n_items), (n_items, factors)),
                   rng.normal(0.0, np.sqrt(2.0 / n_users), n_users),
                   rng.normal(0.0, np.sqrt(2.0 / n_items), n_items))

    def copy(self) -> "_MF":
        return _MF(*(a.copy() for a in self.arrays))

    def predict(self, u: np.ndarray, i: np.ndarray) -> np.ndarray:
        p, q, b, c = self.arrays
        return (np.einsum("ij,ij->i", np.take(p, u, axis=0), np.take(q, i, axis=0))
                + np.take(b, u) + np.take(c, i))

    def dense(self) -> np.ndarray:
        p, q, b, c = self.arrays
        return matmul(p, q.T) + b[:, None] + c[None, :]

    def sparse_grads(self, u: np.ndarray, i: np.ndarray, grad: np.ndarray) -> list[np.ndarray]:
        """Gradients of sum(grad * y_hat_ui) over the given pairs (duplicates summed)."""
        p, q, b, c = self.arrays
        g = sp.csr_matrix((grad, (u, i)), shape=(len(b), len(c)))
        return [g @ q, g.T @ p, np.asarray(g.sum(axis=1)).ravel(), np.asarray(g.sum(axis=0)).ravel()]

    def step(self, lr: float, grads: list[np.ndarray]) -> None:
        for array, g in zip(self.arrays, grads):
            array -= lr * g


def _blocks(rng: np.random.Generator, u: np.ndarray, i: np.ndarray, n_users: int, n_items: int,
            block: tuple[int, int]):
    """One epoch of (block users, block items, rows of the log inside) in DataLoader order:
    shuffled user batches outside, shuffled item batches inside, every block (even empty)."""
    users, items = rng.permutation(n_users), rng.permutation(n_items)
    user_batches, item_batches = -(-n_users // block[0]), -(-n_items // block[1])
    user_of, item_of = np.empty(n_users, np.int64), np.empty(n_items, np.int64)
    user_of[users] = np.arange(n_users) // block[0]
    item_of[items] = np.arange(n_items) // block[1]
    key = user_of[u] * item_batches + item_of[i]
    order = np.argsort(key, kind="stable")
    edges = np.searchsorted(key[order], np.arange(user_batches * item_batches + 1))
    for a in range(user_batches):
        for b in range(item_batches):
            k = a * item_batches + b
            yield (users[a * block[0]:(a + 1) * block[0]], items[b * block[1]:(b + 1) * block[1]],
                   order[edges[k]:edges[k + 1]])


def _dr_step(base: _MF, imputation: _MF, bu: np.ndarray, bi: np.ndarray, u: np.ndarray,
             i: np.ndarray, y: np.ndarray, w: np.ndarray, lr: float, imputation_lr: float) -> None:
    """One block of DR.py: the imputation model's step, then the prediction model's."""
    # step 1: e_hat regresses the prediction error e = y - y_hat, weighted by 1/P
    error = y - base.predict(u, i)
    _, grad = weighted_squared_loss(imputation.predict(u, i), error, w)
    imputation.step(imputation_lr, imputation.sparse_grads(u, i, grad))
    # step 2: sum over all block pairs of (y_hat - (g + y_hat.detach()))^2 has gradient -2 g
    # in y_hat; observed pairs add w * [(y_hat - y)^2 - (y_hat - g - y_hat.detach())^2]
    g_obs = imputation.predict(u, i)
    grads = _all_pairs_grads(base, imputation, bu, bi)
    obs = base.sparse_grads(u, i, w * (2.0 * (base.predict(u, i) - y) + 2.0 * g_obs))
    base.step(lr, [a + b for a, b in zip(grads, obs)])


def _all_pairs_grads(base: _MF, imputation: _MF, bu: np.ndarray, bi: np.ndarray) -> list[np.ndarray]:
    """Gradients of sum_{u in bu, i in bi} -2 g_ui y_hat_ui without the dense block:
    g = P Q^T + c 1^T + 1 d^T is low rank, so G V = P (Q^T V) + c (1^T V) + 1 (d^T V).
    The products are the package's portable ones (no BLAS: the same bits on every CPU)."""
    p, q, b, c = base.arrays
    pi, qi, bimp, cimp = imputation.arrays
    pb, qb, Pb, Qb = p[bu], q[bi], pi[bu], qi[bi]
    cb, db = bimp[bu], cimp[bi]
    g_q = (matmul(Pb, matmul(Qb.T, qb)) + np.outer(cb, qb.sum(0))       # G @ q_b
           + matmul(db[None, :], qb))
    g_p = (matmul(Qb, matmul(Pb.T, pb)) + np.outer(db, pb.sum(0))       # G^T @ p_b
           + matmul(cb[None, :], pb))
    row = matmul(Pb, Qb.sum(0)) + cb * len(bi) + db.sum()               # G @ 1
    col = matmul(Qb, Pb.sum(0)) + db * len(bu) + cb.sum()               # G^T @ 1
    out = [np.zeros_like(p), np.zeros_like(q), np.zeros_like(b), np.zeros_like(c)]
    out[0][bu], out[1][bi], out[2][bu], out[3][bi] = -2 * g_q, -2 * g_p, -2 * row, -2 * col
    return out


def _auc(prediction: np.ndarray, label: np.ndarray) -> float:
    """AUC of +1 against -1 labels (utils/metrics.auc; ties at their average rank)."""
    positive = label > 0
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("validation must hold both labels (+1 and -1) for its AUC")
    ranks = rankdata(prediction)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _early_stop(best: dict, auc: float, epoch: int, model: _MF, patience: int) -> bool:
    """utils/early_stop.EarlyStopping with one variable: AUC >= best resets the patience; a
    strictly higher AUC keeps the parameters; stop after ``patience`` epochs without."""
    if auc >= best["auc"]:
        best["auc"], best["left"] = auc, patience
        if auc != best["remembered"]:
            best.update(remembered=auc, epoch=epoch, state=model.copy())
    else:
        best["left"] -= 1
    return best["left"] == 0
