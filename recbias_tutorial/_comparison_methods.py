r"""Private kernels of :mod:`recbias_tutorial.comparison`: one world, many redraws, every method.

Nothing here validates its inputs: :func:`recbias_tutorial.comparison.compare_methods` does,
once. The models are fixed (fitted on the world's log, whose pairs are excluded from the
candidates), so every model's position :math:`Z_{ui}` of every candidate pair is computed
once per world (:class:`Setup`); a redraw only changes *which* pairs are observed (a fresh
test log and a fresh random sample), so each method reads positions from a table, for all
models at once. The registered estimators (:mod:`recbias_tutorial._builtin_estimators`)
call these kernels; their values equal those of the public estimators on the same sets
(the tests check it): ``aoa``, ``ips``, ``snips``, ``stratified``, ``intervene`` + ``aoa``,
``ure_recall`` and ``recall_at_kbar``.

Metrics, for a user's relevant rows with weights :math:`w` (1 for plain averages):
Recall@k is :math:`\sum w\,1[Z<k] / \sum w`; nDCG@k is :math:`\sum w\,\mathrm{dcg}(Z) /
\sum w \cdot n_u / \mathrm{IDCG}(\min(k, n_u))` with :math:`n_u` the user's number of rows
(with :math:`w = 1`, the usual per-user nDCG@k of
:func:`~recbias_tutorial.metrics.ranking_metrics`).
IPS divides :math:`\sum w\,g` by the true :math:`|S_u|` (recall) or by
:math:`\mathrm{IDCG}(\min(k, |S_u|))` (nDCG), with :math:`w = 1/P`: unbiased with the true
propensities.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._ranking import dcg_gain, ideal_dcg, positions
from .propensity import popularity_propensity

METRICS = ("recall", "ndcg")


@dataclass
class Setup:
    """Everything about a world and a zoo that does not change between redraws."""

    n_users: int
    n_items: int
    k: int
    threshold: float
    train: pd.DataFrame
    ratings: np.ndarray  # (n_users, n_items) from full
    candidate: np.ndarray  # bool: not in the training log
    propensity: np.ndarray  # true P, (n_users, n_items)
    z: np.ndarray  # (n_models, n_users, n_items) positions over the candidates
    mar_users: np.ndarray
    n_random: int
    n_true: np.ndarray = field(init=False)  # true relevant candidates per user

    def __post_init__(self) -> None:
        self.n_true = ((self.ratings >= self.threshold) & self.candidate).sum(axis=1)


def rank_table(scores, train: pd.DataFrame, shape: tuple[int, int]) -> np.ndarray:
    """Positions of every pair over the candidates (all items minus ``train``), one sort/user."""
    n_users, n_items = shape
    pairs = pd.DataFrame({"user": np.repeat(np.arange(n_users, dtype=np.int64), n_items),
                          "item": np.tile(np.arange(n_items, dtype=np.int64), n_users)})
    z = positions(scores, pairs, train, None, full_sort=True)
    return z.reshape(shape).astype(np.int16 if n_items < 2**15 else np.int32)


def weighted_metrics(s: Setup, users: np.ndarray, items: np.ndarray, w: np.ndarray | None = None,
                     *, ips: bool = False) -> np.ndarray:
    """Recall@k and nDCG@k of every model from relevant rows: array (n_models, 2)."""
    n_models, n_users = s.z.shape[0], s.n_users
    if len(users) == 0:
        return np.full((n_models, 2), np.nan)
    w = np.ones(len(users)) if w is None else w
    z = s.z[:, users, items]  # (n_models, n_rows)
    hit = z < s.k
    dcg = dcg_gain(z, s.k)
    idx = (np.arange(n_models)[:, None] * n_users + users[None, :]).ravel()
    size = n_models * n_users
    hits = np.bincount(idx, (hit * w).ravel(), size).reshape(n_models, n_users)
    dcgs = np.bincount(idx, (dcg * w).ravel(), size).reshape(n_models, n_users)
    if ips:
        keep = s.n_true >= 1
        n = s.n_true[keep]
        return np.stack([(hits[:, keep] / n).mean(1),
                         (dcgs[:, keep] / ideal_dcg(s.k, n)).mean(1)], axis=1)
    wsum = np.bincount(users, w, n_users)
    n_rows = np.bincount(users, minlength=n_users)
    keep = n_rows > 0
    n = n_rows[keep]
    return np.stack([(hits[:, keep] / wsum[keep]).mean(1),
                     (dcgs[:, keep] / wsum[keep] * n / ideal_dcg(s.k, n)).mean(1)], axis=1)


def stratified_metrics(s: Setup, users, items, stratum, shares) -> np.ndarray:
    """Stratified estimate: share-weighted sum of the per-stratum plain averages."""
    out = np.zeros((s.z.shape[0], 2))
    for st, share in enumerate(shares):  # a handful of strata
        sel = stratum == st
        if sel.any():
            out += share * weighted_metrics(s, users[sel], items[sel])
    return out


def kbar_recall(s: Setup, users: np.ndarray, items: np.ndarray, relevant: np.ndarray,
                k_bar: int) -> np.ndarray:
    """Traditional Recall@K̄: each user's random items ranked among themselves (by Z)."""
    n_models = s.z.shape[0]
    z = s.z[:, users, items].astype(np.int64)
    key = (np.arange(n_models)[:, None] * s.n_users + users[None, :]) * s.n_items + z
    flat = key.ravel()
    order = np.argsort(flat, kind="stable")
    group = flat[order] // s.n_items
    starts = np.r_[0, np.flatnonzero(group[1:] != group[:-1]) + 1]
    pos = np.empty(len(flat), dtype=np.int64)
    pos[order] = np.arange(len(flat)) - np.repeat(starts, np.diff(np.r_[starts, len(flat)]))
    pos = pos.reshape(n_models, -1)[:, relevant]
    ru = users[relevant]
    idx = (np.arange(n_models)[:, None] * s.n_users + ru[None, :]).ravel()
    hits = np.bincount(idx, (pos < k_bar).ravel(), n_models * s.n_users)
    n = np.bincount(ru, minlength=s.n_users)
    keep = n > 0
    return (hits.reshape(n_models, s.n_users)[:, keep] / n[keep]).mean(1)


def draw_test_log(s: Setup, rng: np.random.Generator) -> pd.DataFrame:
    """A second logging period: every candidate pair observed with its true propensity."""
    hit = np.flatnonzero((rng.random(s.propensity.shape) < s.propensity) & s.candidate)
    u, i = hit // s.n_items, hit % s.n_items
    return pd.DataFrame({"user": u, "item": i, "rating": s.ratings[u, i]})


def draw_random_sample(s: Setup, rng: np.random.Generator) -> pd.DataFrame:
    """``n_random`` uniformly drawn candidate items for each user of the world's MAR part."""
    keys = rng.random((len(s.mar_users), s.n_items))
    keys[~s.candidate[s.mar_users]] = np.inf
    items = np.sort(np.argpartition(keys, s.n_random - 1, axis=1)[:, :s.n_random], axis=1)
    u = np.repeat(s.mar_users, s.n_random)
    i = items.ravel()
    return pd.DataFrame({"user": u, "item": i, "rating": s.ratings[u, i]})


@dataclass
class Options:
    """The method grid of :func:`recbias_tutorial.comparison.compare_methods`."""

    gammas: tuple[float, ...]
    sizes: tuple[float, ...]
    n_strata: int
    clip_quantile: float
    item_power: float
    k_bar: int
    clip_gamma: float
    authors_p: np.ndarray = None  # per-item propensity of the authors' strata
    pop_p: dict = None  # gamma -> per-item popularity propensity
    quantile_p: np.ndarray = None


def prepare_options(s: Setup, o: Options, authors_propensity) -> Options:
    counts_train = s.train
    o.pop_p = {g: popularity_propensity(counts_train, s.n_items, gamma=g)
               for g in sorted(set(o.gammas) | {o.clip_gamma})}
    o.quantile_p = o.pop_p[o.clip_gamma]
    o.authors_p = authors_propensity
    return o


def snips(s: Setup, u, i, p, clip_q=None):
    """SNIPS of every model: weights 1/P, optionally floored at their ``clip_q`` quantile."""
    if clip_q is not None:
        p = np.maximum(p, np.quantile(p, clip_q))
    return weighted_metrics(s, u, i, 1.0 / p)


def draw_sets(s: Setup, rng: np.random.Generator):
    """One redraw: the test log, the random sample and the stream of the interventions."""
    log_rng, rand_rng, int_rng = (np.random.default_rng(x) for x in rng.integers(2**63, size=3))
    return draw_test_log(s, log_rng), draw_random_sample(s, rand_rng), int_rng
