r"""Matrix factorisation trained on logged (MNAR) feedback: naive, IPS and doubly robust.

All three trainers fit the same logistic matrix-factorisation model

.. math:: s_{ui} = p_u^\top q_i + b_u + b_i, \qquad \hat r_{ui} = \sigma(s_{ui}),

to *every* (user, item) pair of the full matrix :math:`D = U \times I`, with the logistic
losses :math:`\ell^+(s) = \log(1 + e^{-s})` (for "relevant") and :math:`\ell^-(s) =
\log(1 + e^{s})` (for "not relevant"). Write :math:`O_{ui} = 1` when the pair is in the log
(``train``), :math:`r_{ui} = \mathbb 1[\text{rating} \ge \text{threshold}]` its relevance
(known only when :math:`O_{ui} = 1`) and :math:`P_{ui} = P(O_{ui} = 1)` its propensity. The
objective is

.. math:: J = \sum_{(u,i) \in D} \big(w^+_{ui}\,\ell^+(s_{ui}) + w^-_{ui}\,\ell^-(s_{ui})\big)
          + \frac{\lambda}{2}\big(\lVert P\rVert_F^2 + \lVert Q\rVert_F^2\big)

and the methods differ only in the weights:

* ``"naive"`` (implicit feedback): :math:`w^+ = O\,r`, :math:`w^- = 1 - O\,r`; every pair
  that is not a logged positive counts as a negative.
* ``"ips"``: each logged positive is weighted by :math:`1/P`, the propensity weighting of
  Schnabel et al. (ICML 2016) applied to implicit feedback as in Saito et al. (WSDM 2020),
  without their negative term (see below): :math:`w^+ = O\,r/P`, :math:`w^- = 1 - O\,r`.
* ``"dr"`` (doubly robust joint learning, Wang et al., ICML 2019): with the imputed
  relevance :math:`\hat\rho_{ui} = \sigma(t_{ui})` of a second MF, the pseudo-label
  :math:`\tilde y = \hat\rho + O\,(r - \hat\rho)/P` gives :math:`w^+ = \tilde y`,
  :math:`w^- = 1 - \tilde y`. The imputation MF is trained jointly, one Adam step each per
  mini-batch, with the IPS-weighted log-loss :math:`\sum_{O} \ell(t_{ui}, r_{ui})/P_{ui}` on
  the logged pairs (Wang et al. impute the *error* with a squared loss; imputing the label
  is our simplification for a log-loss).

The unbiased forms (Saito's :math:`w^- = 1 - O\,r/P`, and DR's :math:`\tilde y` outside
[0, 1]) put negative weights on some logged pairs, which makes :math:`J` unbounded below:
a single pair can then lower the loss without limit. Here every weight is clipped at 0
(as in non-negative PU learning, Kiryo et al., NeurIPS 2017), which keeps :math:`J`
bounded and training stable at the price of a small bias. Propensities are clipped below
at ``clip`` as well.

The sum over :math:`D` is never formed: each epoch visits every logged pair the method uses
once (their weights minus the baseline :math:`(\hat\rho, 1-\hat\rho)`, exactly) and
``n_negatives`` uniformly drawn pairs per logged positive, each standing for
:math:`|D|/m` pairs, so that their baseline terms are an unbiased estimate of the sum over
:math:`D`. Parameters are updated with Adam on mini-batches; gradients are gathered with
sparse matrix products (no Python loop over users or items).

Propensities must be *absolute* probabilities: :func:`calibrate_propensity` turns relative
ones (such as :func:`recbias_tutorial.propensity.popularity_propensity`, whose maximum is 1)
into probabilities whose sum over the matrix is the size of the log.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ._params import Interval, Options, Seed, declare
from ._portable_math import log64, matmul, powi, sigmoid32
from ._validation import as_generator, check_feedback

__all__ = ["METHODS", "MFResult", "calibrate_propensity", "fit_mf", "train_mf"]

#: Training methods understood by :func:`train_mf` / :func:`fit_mf`.
METHODS = ("naive", "ips", "dr")


def _pair_propensity(propensity, users: np.ndarray, items: np.ndarray, n_users: int,
                     n_items: int, clip: float) -> np.ndarray:
    """P_ui of the given pairs from a 1-D (per item) or 2-D array, clipped below at ``clip``."""
    p = np.asarray(propensity, dtype=float)
    if p.ndim == 1:
        if p.shape[0] != n_items:
            raise ValueError(f"propensity (1-D, per item) must have length n_items={n_items}, "
                             f"got {p.shape[0]}")
        vals = p[items]
    elif p.ndim == 2:
        if p.shape != (n_users, n_items):
            raise ValueError(f"propensity (2-D) must have shape {(n_users, n_items)}, "
                             f"got {p.shape}")
        vals = p[users, items]
    else:
        raise ValueError(f"propensity must be 1-D (items) or 2-D (users x items), got {p.ndim}-D")
    if not np.isfinite(vals).all():
        raise ValueError("propensity must be finite for every logged pair used in training")
    if (vals <= 0).any() and clip <= 0:
        raise ValueError("propensity must be > 0 for every logged pair (or set clip)")
    if (vals > 1).any():
        raise ValueError("propensity must hold absolute probabilities in (0, 1]; "
                         "use calibrate_propensity() on relative propensities")
    return np.maximum(vals, clip)


@declare(n_observed=Interval(int, 1), n_users=Interval(int, 1))
def calibrate_propensity(propensity, *, n_observed: int, n_users: int) -> np.ndarray:
    r"""Scale per-item propensities into probabilities whose total is the size of the log.

    Relative propensities :math:`w_i` (e.g. :math:`\propto n_i^{(\gamma+1)/2}`) fix only the
    ratios between items. Assuming every user sees item :math:`i` with the same probability
    :math:`P_i = \min(1, c\,w_i)`, the constant :math:`c` is chosen so that the expected
    number of logged pairs :math:`|U| \sum_i P_i` equals ``n_observed`` (items capped at 1
    are handled exactly, by water-filling).

    Parameters
    ----------
    propensity : array of shape (n_items,)
        Positive relative propensities.
    n_observed : int
        Number of logged pairs (``len(train)``).
    n_users : int
        Number of users.

    Returns
    -------
    numpy.ndarray
        Absolute propensities in (0, 1], same shape.

    Raises
    ------
    ValueError
        If ``propensity`` is not a non-empty 1-D array of finite values > 0; if ``n_users``
        or ``n_observed`` is not a positive integer; if ``n_observed`` exceeds
        ``n_users * n_items``.

    See Also
    --------
    recbias_tutorial.propensity.popularity_propensity : relative propensities to calibrate.
    recbias_tutorial.debiased_mf.train_mf : needs absolute propensities for ``"ips"``/``"dr"``.
    recbias_tutorial.estimators.ips : needs absolute propensities too.

    Examples
    --------
    >>> p = calibrate_propensity(np.array([1.0, 0.5, 0.25, 0.25]), n_observed=10, n_users=10)
    >>> p.tolist(), float(10 * p.sum())
    ([0.5, 0.25, 0.125, 0.125], 10.0)
    >>> calibrate_propensity(np.array([4.0, 1.0]), n_observed=15, n_users=10).tolist()
    [1.0, 0.5]
    """
    w = np.asarray(propensity, dtype=float)
    if w.ndim != 1 or len(w) == 0:
        raise ValueError(f"propensity must be a non-empty 1-D array (per item), got shape {w.shape}")
    if not np.isfinite(w).all() or (w <= 0).any():
        raise ValueError("propensity must be finite and > 0 for every item")
    target = n_observed / n_users  # expected logged items per user = sum_i P_i
    if target > len(w):
        raise ValueError(f"n_observed={n_observed} exceeds n_users * n_items = {n_users * len(w)}")
    order = np.argsort(-w, kind="stable")
    ws = w[order]
    tail = np.cumsum(ws[::-1])[::-1]  # mass of items j..end
    for j in range(len(ws)):  # j items capped at 1; at most n_items passes, usually 1
        c = (target - j) / tail[j]
        if c * ws[j] <= 1.0:
            break
    return np.minimum(1.0, c * w)


# --------------------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------------------
@dataclass
class _Params:
    """Parameters of one logistic MF plus their Adam moments."""

    user: np.ndarray
    item: np.ndarray
    user_bias: np.ndarray
    item_bias: np.ndarray
    moments: list = field(default_factory=list)
    step: int = 0

    @classmethod
    def init(cls, rng: np.random.Generator, n_users: int, n_items: int, factors: int,
             base_rate: float) -> "_Params":
        scale = 0.1
        logit = float(log64(base_rate / (1.0 - base_rate)))
        f32 = np.float32  # single precision: twice as fast to gather, plenty for SGD
        out = cls(user=scale * rng.standard_normal((n_users, factors), dtype=f32),
                  item=scale * rng.standard_normal((n_items, factors), dtype=f32),
                  user_bias=np.full(n_users, logit, dtype=f32),
                  item_bias=np.zeros(n_items, dtype=f32))
        out.moments = [(np.zeros_like(a), np.zeros_like(a)) for a in out.arrays()]
        return out

    def arrays(self) -> tuple[np.ndarray, ...]:
        return self.user, self.item, self.user_bias, self.item_bias

    def logits(self, u: np.ndarray, i: np.ndarray) -> np.ndarray:
        return (np.einsum("ij,ij->i", self.user[u], self.item[i])
                + self.user_bias[u] + self.item_bias[i])

    def adam(self, coef: np.ndarray, u: np.ndarray, i: np.ndarray, reg: float, lr: float,
             shape: tuple[int, int]) -> None:
        """One Adam step on sum(coef * s_ui) + reg/2 (|P|^2 + |Q|^2), coef = dJ/ds_ui."""
        g = sp.csr_matrix((coef.astype(np.float32), (u, i)), shape=shape)  # duplicates summed
        grads = (g @ self.item + reg * self.user, g.T @ self.user + reg * self.item,
                 np.asarray(g.sum(axis=1)).ravel(), np.asarray(g.sum(axis=0)).ravel())
        self.step += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        # powi, not **: Python's ** calls the C library's pow, which has CPU variants
        corr = lr * np.sqrt(1 - powi(b2, self.step)) / (1 - powi(b1, self.step))
        for param, grad, (m, v) in zip(self.arrays(), grads, self.moments):
            m *= b1
            m += (1 - b1) * grad
            v *= b2
            v += (1 - b2) * grad * grad
            param -= corr * m / (np.sqrt(v) + eps)

    def scores(self) -> np.ndarray:
        """Dense logits in float64 (fewer accidental ties than float32)."""
        return _dense(self.user, self.item, self.user_bias, self.item_bias)


def _dense(user, item, user_bias, item_bias) -> np.ndarray:
    out = matmul(user.astype(np.float64), item.astype(np.float64).T)  # portable: no BLAS
    out += user_bias.astype(np.float64)[:, None]
    out += item_bias.astype(np.float64)[None, :]
    return out


@dataclass
class MFResult:
    """A fitted logistic MF (see :func:`train_mf`).

    Attributes
    ----------
    user_factors, item_factors : numpy.ndarray
        :math:`P` (n_users x factors) and :math:`Q` (n_items x factors).
    user_bias, item_bias : numpy.ndarray
        :math:`b_u`, :math:`b_i`.
    method : str
        ``"naive"``, ``"ips"`` or ``"dr"``.
    loss : numpy.ndarray
        Stochastic estimate of the objective :math:`J` (without the penalty) at each epoch,
        divided by the number of pairs :math:`|D|`.
    imputation : numpy.ndarray or None
        For ``"dr"``: the imputed relevance :math:`\\hat\\rho` as logits (n_users x n_items).

    Raises
    ------
    ValueError
        Nothing is validated on construction; :meth:`scores` raises numpy's
        :class:`ValueError` when ``user_factors`` and ``item_factors`` have different
        numbers of columns.

    See Also
    --------
    recbias_tutorial.debiased_mf.train_mf : returns this result.
    recbias_tutorial.debiased_mf.fit_mf : returns only its score matrix.

    Examples
    --------
    >>> res = MFResult(user_factors=np.ones((2, 1)), item_factors=np.array([[1.0], [2.0]]),
    ...                user_bias=np.zeros(2), item_bias=np.zeros(2), method="naive",
    ...                loss=np.array([0.7]))
    >>> res.scores().tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """

    user_factors: np.ndarray
    item_factors: np.ndarray
    user_bias: np.ndarray
    item_bias: np.ndarray
    method: str
    loss: np.ndarray
    imputation: np.ndarray | None = None

    def scores(self) -> np.ndarray:
        """Dense score matrix :math:`s_{ui}` of shape (n_users, n_items); higher = better."""
        return _dense(self.user_factors, self.item_factors, self.user_bias, self.item_bias)


#: Declared rules of the arguments :func:`train_mf` and :func:`fit_mf` share.
_MF_RULES = dict(
    n_users=Interval(int, 1), n_items=Interval(int, 1), seed=Seed(), method=Options(METHODS),
    clip=Interval(float, 0.0, 1.0, open="low"), threshold=Interval(float),
    factors=Interval(int, 1), epochs=Interval(int, 1), lr=Interval(float, 0.0, open="low"),
    reg=Interval(float, 0.0), n_negatives=Interval(int, 1), batch_size=Interval(int, 1),
    imputation_factors=Interval(int, 1, optional=True))


@declare(**_MF_RULES)
def train_mf(train: pd.DataFrame, *, n_users: int, n_items: int, seed, method: str = "naive",
             propensity=None, clip: float = 0.05, threshold: float = 4.0, factors: int = 32,
             epochs: int = 20, lr: float = 0.05, reg: float = 10.0, n_negatives: int = 4,
             batch_size: int = 4096, imputation_factors: int | None = None) -> MFResult:
    r"""Fit a logistic MF on logged feedback with the naive, IPS or doubly robust objective.

    See the module docstring for the model and the three objectives.

    Parameters
    ----------
    train : pandas.DataFrame
        The log: columns ``user``, ``item`` (int ids) and ``rating``; no duplicate pairs.
    n_users, n_items : int
        Size of the full matrix :math:`D`.
    seed : int or numpy.random.Generator
        Randomness of the initialisation, the sampled pairs and the batch order.
    method : ``"naive"``, ``"ips"`` or ``"dr"``
        Objective.
    propensity : array, optional
        Required for ``"ips"`` and ``"dr"`` (refused for ``"naive"``): absolute
        probabilities :math:`P(O_{ui}=1)` in (0, 1], per item (1-D, length ``n_items``) or
        per pair (2-D, ``(n_users, n_items)``; only the logged pairs are read, so NaN
        elsewhere is fine). See :func:`calibrate_propensity`.
    clip : float
        Lower bound applied to the propensities (weights :math:`1/P \le 1/\text{clip}`).
    threshold : float
        A logged rating is relevant when ``rating >= threshold`` (1.0 for 0/1 data).
    factors : int
        Latent dimension.
    epochs : int
        Passes over the logged pairs.
    lr : float
        Adam step size.
    reg : float
        L2 penalty :math:`\lambda` on the factors (biases are not penalised).
    n_negatives : int
        Uniformly drawn pairs of :math:`D` per logged positive, per epoch.
    batch_size : int
        Logged positives per mini-batch; the other logged pairs ``"dr"`` uses and the
        sampled pairs of an epoch are split evenly over the same number of mini-batches.
    imputation_factors : int, optional
        Latent dimension of the imputation model of ``"dr"`` (default: ``factors``).

    Returns
    -------
    MFResult
        The fitted factors and biases, the loss per epoch and (``"dr"``) the imputation.

    Raises
    ------
    ValueError
        If ``n_users``, ``n_items``, ``factors``, ``epochs``, ``n_negatives``,
        ``batch_size`` or ``imputation_factors`` is not a positive integer; if ``train`` is
        not a non-empty DataFrame with columns ``user``, ``item``, ``rating`` (integer ids
        inside the matrix, finite ratings, no duplicate pairs) or has no relevant row; if
        ``method`` is unknown; if ``lr`` is not > 0, ``reg`` not >= 0, ``clip`` not in
        (0, 1] or ``threshold`` not finite; if ``seed`` is missing or not a non-negative int
        or Generator; if ``propensity`` is given with ``"naive"`` or missing with ``"ips"``
        / ``"dr"``, has the wrong shape, or is not finite or > 1 for a logged pair used in
        training.

    See Also
    --------
    recbias_tutorial.debiased_mf.fit_mf : the same, returning the score matrix.
    recbias_tutorial.debiased_mf.calibrate_propensity : absolute propensities.
    recbias_tutorial.models.fit_scores : score matrices of Cornac models instead.

    Examples
    --------
    >>> train = pd.DataFrame({"user": [0, 0, 1, 2], "item": [0, 1, 0, 2],
    ...                       "rating": [5.0, 4.0, 5.0, 1.0]})
    >>> res = train_mf(train, n_users=3, n_items=4, seed=0, factors=2, epochs=50)
    >>> res.scores().shape, res.method
    ((3, 4), 'naive')
    >>> bool(res.scores()[1, 0] > res.scores()[1, 3])  # user 1 liked item 0
    True
    """
    check_feedback(train, "train", n_users, n_items)
    imputation_factors = factors if imputation_factors is None else imputation_factors
    rng = as_generator(seed)

    users = train["user"].to_numpy(np.int64)
    items = train["item"].to_numpy(np.int64)
    rel = (train["rating"].to_numpy(dtype=float) >= threshold).astype(float)
    if rel.sum() == 0:
        raise ValueError(f"train has no relevant rows (rating >= threshold={threshold})")
    if method == "naive":
        if propensity is not None:
            raise ValueError("propensity is only used by method='ips' or 'dr'; "
                             "pass propensity=None for method='naive'")
        keep = rel > 0
    else:
        if propensity is None:
            raise ValueError(f"propensity is required for method={method!r}")
        keep = rel > 0 if method == "ips" else np.ones(len(rel), dtype=bool)
    users, items, rel = users[keep], items[keep], rel[keep]
    inv_p = (np.ones(len(users)) if method == "naive" else
             1.0 / _pair_propensity(propensity, users, items, n_users, n_items, clip))
    n_obs = len(users)
    n_pairs = n_users * n_items
    n_sampled = n_negatives * int(rel.sum())  # the same for all methods: per logged positive
    weight = n_pairs / n_sampled  # each sampled pair stands for this many pairs of D
    shape = (n_users, n_items)

    base = float(np.clip((rel * inv_p).sum() / n_pairs, 1e-6, 0.5))
    model = _Params.init(rng, n_users, n_items, factors, base)
    imp = None
    if method == "dr":
        imp = _Params.init(rng, n_users, n_items, imputation_factors,
                           float(np.clip(rel.mean(), 1e-3, 1 - 1e-3)))

    n_batches = max(1, int(np.ceil(rel.sum() / batch_size)))  # same count for all methods
    reg_batch = reg / n_batches  # the penalty is counted once per epoch
    history = np.empty(epochs)
    for epoch in range(epochs):
        order = rng.permutation(n_obs)
        neg_u = rng.integers(0, n_users, size=n_sampled)
        neg_i = rng.integers(0, n_items, size=n_sampled)
        total = 0.0
        for b, part in enumerate(np.array_split(order, n_batches)):
            ou, oi, r, inv = users[part], items[part], rel[part], inv_p[part]
            lo, hi = b * n_sampled // n_batches, (b + 1) * n_sampled // n_batches
            nu, ni = neg_u[lo:hi], neg_i[lo:hi]
            if imp is not None:  # imputation step: IPS-weighted log-loss on logged pairs
                imp.adam(inv * (sigmoid32(imp.logits(ou, oi)) - r), ou, oi, reg_batch, lr, shape)
                rho_obs = sigmoid32(imp.logits(ou, oi))
                rho_neg = sigmoid32(imp.logits(nu, ni))
            else:
                rho_obs, rho_neg = 0.0, 0.0
            w_pos = np.maximum(rho_obs + (r - rho_obs) * inv, 0.0)  # weights of l+ and l-
            w_neg = np.maximum(1.0 - rho_obs - (r - rho_obs) * inv, 0.0)  # on logged pairs
            s_obs = model.logits(ou, oi)
            s_neg = model.logits(nu, ni)
            sig_obs = sigmoid32(s_obs)
            # logged pairs: their weights minus the (rho, 1 - rho) the sampled pairs stand for
            coef_obs = (w_pos - rho_obs) * (sig_obs - 1.0) + (w_neg - 1.0 + rho_obs) * sig_obs
            coef = np.concatenate([coef_obs, weight * (sigmoid32(s_neg) - rho_neg)])
            sp_obs = np.logaddexp(0.0, s_obs)  # l-(s); l+(s) = l-(s) - s
            total += float(((w_pos - rho_obs) * (sp_obs - s_obs)
                            + (w_neg - 1.0 + rho_obs) * sp_obs).sum()
                           + weight * (np.logaddexp(0.0, s_neg) - rho_neg * s_neg).sum())
            model.adam(coef, np.concatenate([ou, nu]), np.concatenate([oi, ni]), reg_batch, lr,
                       shape)
        history[epoch] = total / n_pairs
    return MFResult(user_factors=model.user, item_factors=model.item, user_bias=model.user_bias,
                    item_bias=model.item_bias, method=method, loss=history,
                    imputation=None if imp is None else imp.scores())


@declare(**_MF_RULES)
def fit_mf(train: pd.DataFrame, *, n_users: int, n_items: int, seed, method: str = "naive",
           propensity=None, clip: float = 0.05, threshold: float = 4.0, factors: int = 32,
           epochs: int = 20, lr: float = 0.05, reg: float = 10.0, n_negatives: int = 4,
           batch_size: int = 4096, imputation_factors: int | None = None,
           cache: bool | None = None) -> np.ndarray:
    """Fit a logistic MF (see :func:`train_mf`) and return its dense score matrix.

    With an int ``seed``, the fitted factors are kept in the on-disk cache of fitted models
    (see :func:`recbias_tutorial.models.clear_fit_cache`), keyed by the training data, the
    propensities, every argument, the seed and the package's code, so that a second call
    reads them back (a few MB even for Yahoo! R3) instead of refitting.

    Parameters
    ----------
    train, n_users, n_items, seed
        As in :func:`train_mf`: the log, the size of the matrix and the randomness.
    method, propensity, clip, threshold
        As in :func:`train_mf`: the objective and its weights.
    factors, epochs, lr, reg, n_negatives, batch_size, imputation_factors
        As in :func:`train_mf`: the model's size and its optimisation.
    cache : bool, optional
        Use the on-disk cache (None follows ``RECBIAS_FIT_CACHE``, default on). A Generator
        ``seed`` is never cached.

    Returns
    -------
    numpy.ndarray
        Scores of shape ``(n_users, n_items)``, higher = better.

    Raises
    ------
    ValueError
        On any invalid argument, as in :func:`train_mf`.

    See Also
    --------
    recbias_tutorial.debiased_mf.train_mf : the fitted model itself.
    recbias_tutorial.estimators.aoa : evaluate the scores on a test set.

    Examples
    --------
    >>> train = pd.DataFrame({"user": [0, 1], "item": [0, 1], "rating": [5.0, 5.0]})
    >>> p = np.array([0.5, 0.5, 0.1])
    >>> fit_mf(train, n_users=2, n_items=3, seed=1, method="ips", propensity=p,
    ...        factors=2, epochs=3).shape
    (2, 3)
    """
    options = dict(method=method, propensity=propensity, clip=clip, threshold=threshold,
                   factors=factors, epochs=epochs, lr=lr, reg=reg, n_negatives=n_negatives,
                   batch_size=batch_size, imputation_factors=imputation_factors)

    def fit() -> dict:
        res = train_mf(train, n_users=n_users, n_items=n_items, seed=seed, **options)
        return {"user": res.user_factors, "item": res.item_factors,
                "user_bias": res.user_bias, "item_bias": res.item_bias}

    from ._result_cache import cached_result

    keyed = isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)
    if keyed:  # the key reads the frame: check it first (train_mf checks the rest)
        check_feedback(train, "train", n_users, n_items)
    factors_, _ = cached_result("debiased_mf.fit_mf", train,
                                dict(options, seed=int(seed)) if keyed else None, fit,
                                cache=cache, shape=(n_users, n_items))
    return _dense(factors_["user"], factors_["item"], factors_["user_bias"],
                  factors_["item_bias"])
