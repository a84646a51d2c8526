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

Models are fitted and scored by :func:`recbias_tutorial.models.iter_scores`, which scores
Cornac's own ``UserKNN`` and ``ItemKNN`` (and the other families of
:func:`recbias_tutorial.models.batch_scorer`) many users at a time, so the protocol runs on
plain Cornac models. The splits live in :mod:`recbias_tutorial.protocol_splits` and the
summary tables (:func:`difference_from_truth`, :func:`mean_difference`, :func:`best_sizes`,
:func:`wilcoxon_vs_truth`, :func:`kendall_vs_truth`) in :mod:`recbias_tutorial.protocol_tables`;
both are re-exported here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from cornac.models import Recommender

from . import models as _models
from . import stats as _stats
from .datasets import FeedbackData
from .metrics import rank_positions
from .protocol_splits import ProtocolSplit, _check_seed, restrict_to_mar_users, split_feedback
from .protocol_tables import (
    best_sizes,
    difference_from_truth,
    kendall_vs_truth,
    mean_difference,
    wilcoxon_vs_truth,
)
from .sampling import STRATEGIES, intervene

__all__ = [
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
        E.g. ``{"UserKNN": {"k=20": lambda: UserKNN(k=20, verbose=False), ...}, ...}``.
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
