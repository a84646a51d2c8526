r"""Private kernels of :mod:`recbias_tutorial.comparison`: one world, many redraws, every method.

Nothing here validates its inputs: :func:`recbias_tutorial.comparison.compare_methods` does,
once. The models are fixed (fitted on the world's log, whose pairs are excluded from the
candidates), so every model's position :math:`Z_{ui}` of every candidate pair is computed
once per world (:class:`Setup`); a redraw only changes *which* pairs are observed (a fresh
test log and a fresh random sample), so each method reads positions from a table, for all
models at once. The values equal those of the public estimators on the same sets (the
tests check it): ``aoa``, ``ips``, ``snips``, ``stratified``, ``intervene`` + ``aoa``,
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

from ._ranking import positions
from .estimators import assign_strata
from .propensity import naive_bayes_propensity, popularity_propensity
from .sampling import intervene

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


def _ideal(k: int, n: np.ndarray) -> np.ndarray:
    ideal = np.cumsum(1.0 / np.log2(np.arange(k) + 2.0))
    return ideal[np.clip(np.minimum(n, k), 1, None) - 1]


def weighted_metrics(s: Setup, users: np.ndarray, items: np.ndarray, w: np.ndarray | None = None,
                     *, ips: bool = False) -> np.ndarray:
    """Recall@k and nDCG@k of every model from relevant rows: array (n_models, 2)."""
    n_models, n_users = s.z.shape[0], s.n_users
    if len(users) == 0:
        return np.full((n_models, 2), np.nan)
    w = np.ones(len(users)) if w is None else w
    z = s.z[:, users, items]  # (n_models, n_rows)
    hit = z < s.k
    dcg = np.where(hit, 1.0 / np.log2(z + 2.0), 0.0)
    idx = (np.arange(n_models)[:, None] * n_users + users[None, :]).ravel()
    size = n_models * n_users
    hits = np.bincount(idx, (hit * w).ravel(), size).reshape(n_models, n_users)
    dcgs = np.bincount(idx, (dcg * w).ravel(), size).reshape(n_models, n_users)
    if ips:
        keep = s.n_true >= 1
        n = s.n_true[keep]
        return np.stack([(hits[:, keep] / n).mean(1),
                         (dcgs[:, keep] / _ideal(s.k, n)).mean(1)], axis=1)
    wsum = np.bincount(users, w, n_users)
    n_rows = np.bincount(users, minlength=n_users)
    keep = n_rows > 0
    n = n_rows[keep]
    return np.stack([(hits[:, keep] / wsum[keep]).mean(1),
                     (dcgs[:, keep] / wsum[keep] * n / _ideal(s.k, n)).mean(1)], axis=1)


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


def method_names(o: Options) -> list[tuple[str, str]]:
    """(family, method) of every method, in the order :func:`run_redraw` returns them."""
    out = [("log", "AOA (log)"), ("reweighting", "IPS (true P)"),
           ("reweighting", "SNIPS (true P)")]
    out += [("reweighting", f"SNIPS (pop, γ={g:g})") for g in o.gammas]
    out += [("reweighting", f"SNIPS (pop, γ={o.clip_gamma:g}, clipped)"),
            ("reweighting", "SNIPS (NB)"), ("reweighting", "SNIPS (NB, clipped)"),
            ("stratified", "stratified (authors' bins)"),
            ("stratified", "stratified (quantile bins)")]
    out += [("intervened", f"{st.upper()} ρ={r:g}") for r in o.sizes
            for st in ("reg", "skew", "wtd", "wtd_h")]
    out += [("random sample", "URE (random)"), ("random sample", "Recall@K̄ (random)")]
    return out


def _snips(s: Setup, u, i, p, clip_q=None):
    if clip_q is not None:
        p = np.maximum(p, np.quantile(p, clip_q))
    return weighted_metrics(s, u, i, 1.0 / p)


def draw_sets(s: Setup, rng: np.random.Generator):
    """One redraw: the test log, the random sample and the stream of the interventions."""
    log_rng, rand_rng, int_rng = (np.random.default_rng(x) for x in rng.integers(2**63, size=3))
    return draw_test_log(s, log_rng), draw_random_sample(s, rand_rng), int_rng


def run_redraw(s: Setup, o: Options, test: pd.DataFrame, random: pd.DataFrame,
               int_rng: np.random.Generator) -> np.ndarray:
    """Every method's estimates on one redraw: array (n_methods, n_models, 2)."""
    rel = test["rating"].to_numpy() >= s.threshold
    u, i = test["user"].to_numpy()[rel], test["item"].to_numpy()[rel]
    p_true = s.propensity[u, i]
    out = [weighted_metrics(s, u, i), weighted_metrics(s, u, i, 1.0 / p_true, ips=True),
           weighted_metrics(s, u, i, 1.0 / p_true)]
    out += [_snips(s, u, i, o.pop_p[g][i]) for g in o.gammas]
    out.append(_snips(s, u, i, o.pop_p[o.clip_gamma][i], o.clip_quantile))
    nb = naive_bayes_propensity(s.train, random, n_users=s.n_users, n_items=s.n_items)
    p_nb = test["rating"].iloc[np.flatnonzero(rel)].map(nb).to_numpy(float)
    ok = np.isfinite(p_nb).all() and (p_nb > 0).all()
    nan = np.full((s.z.shape[0], 2), np.nan)
    out += [_snips(s, u, i, p_nb) if ok else nan,
            _snips(s, u, i, p_nb, o.clip_quantile) if ok else nan]
    # strata: the authors' (pandas.cut bins and shares over all test ratings) and quantiles
    p_all = o.authors_p[test["item"].to_numpy()]
    stratum, _ = assign_strata(o.authors_p[i], o.n_strata, binning="cut", reference=p_all)
    all_s, _ = assign_strata(p_all, o.n_strata, binning="cut", reference=p_all)
    out.append(stratified_metrics(s, u, i, stratum, np.bincount(all_s, minlength=o.n_strata)
                                  / len(all_s)))
    stratum, _ = assign_strata(o.quantile_p[i], o.n_strata, binning="quantile")
    out.append(stratified_metrics(s, u, i, stratum,
                                  np.bincount(stratum, minlength=o.n_strata) / len(stratum)))
    for size in o.sizes:
        for strategy in ("reg", "skew", "wtd", "wtd_h"):
            part = intervene(test, strategy=strategy, size=size, train=s.train, mar=random,
                             item_power=o.item_power, seed=int_rng)
            keep = part["rating"].to_numpy() >= s.threshold
            out.append(weighted_metrics(s, part["user"].to_numpy()[keep],
                                        part["item"].to_numpy()[keep]))
    rrel = random["rating"].to_numpy() >= s.threshold
    ru, ri = random["user"].to_numpy(), random["item"].to_numpy()
    ure = weighted_metrics(s, ru[rrel], ri[rrel])
    ure[:, 1] = np.nan  # URE estimates recall only
    kbar = np.column_stack([kbar_recall(s, ru, ri, rrel, o.k_bar), np.full(s.z.shape[0], np.nan)])
    out += [ure, kbar]
    return np.stack(out)
