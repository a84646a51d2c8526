r"""Every offline evaluation method against the truth, on worlds with full ground truth.

A *world* (:func:`~recbias_tutorial.data.simulate` or
:func:`~recbias_tutorial.data.semi_synthetic`) knows every rating and the true probability
:math:`P_{ui}` that a pair enters the log. The models of a zoo are fitted on the world's log
(``world.mnar``); their true Recall@k and nDCG@k are computed on every relevant pair that is
not in that log (the log's pairs are excluded from the candidates). Then, ``n_redraws``
times, the world is observed again:

* a **test log**: every candidate pair enters it independently with its true propensity
  :math:`P_{ui}` (a second period of the same logging policy);
* a **random sample**: every user of ``world.mar`` gets as many uniformly drawn candidate
  items as ``world.mar`` gives most users, with their ratings.

and every method estimates every model's metric from them:

* ``AOA (log)``: the plain average on the test log (= the FULL intervention);
* ``IPS (true P)``: :func:`~recbias_tutorial.estimators.ips` with the true :math:`P` and
  :math:`|S_u|` (an oracle);
* ``SNIPS (...)``: :func:`~recbias_tutorial.estimators.snips` with the true :math:`P`,
  popularity propensities (``gammas``), Naive-Bayes propensities from the log and the
  random sample; "clipped": floored at their ``clip_quantile`` quantile over the relevant
  test rows;
* ``stratified (...)``: :func:`~recbias_tutorial.estimators.stratified` with the authors'
  bins (``binning="cut"``, edges and shares from all test ratings, the authors' power-law
  propensity of the training counts) and with quantile bins of the relevant rows
  (popularity propensity);
* ``REG/SKEW/WTD/WTD_H ρ``: the plain average on
  :func:`~recbias_tutorial.sampling.intervene`'s subset of the test log (size ρ; WTD uses
  the random sample);
* ``URE (random)``: :func:`~recbias_tutorial.estimators.ure_recall` (recall only);
* ``Recall@K̄ (random)``: :func:`~recbias_tutorial.estimators.recall_at_kbar` with
  :math:`\bar K = \max(1, \mathrm{round}(k \bar N / N))` (recall only; a different
  quantity on a different scale, Wang et al. 2025);
* any estimator added with :func:`recbias_tutorial.estimators.register`, after these.

:func:`compare_methods` returns bias, standard deviation and RMSE of each estimate over the
redraws; :func:`rank_agreement` the Kendall :math:`\tau` of each method's ranking of the
models against the true ranking, per redraw; :func:`method_summary` both, one row per method.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from . import _builtin_estimators  # noqa: F401  (registers the package's estimators)
from . import _comparison_methods as _m
from ._estimator_registry import cache_key as _registry_key
from ._estimator_registry import method_names as _method_names
from ._estimator_registry import run_redraw as _run_redraw
from ._params import Interval, Seed, declare
from ._validation import as_generator, check_frame, check_int, check_mapping, check_real
from .data import FeedbackData
from .propensity import powerlaw_propensity  # Jadidinejad et al.'s choice
from .scorer import check_scores

__all__ = ["SUMMARY_COLUMNS", "compare_methods", "method_summary", "rank_agreement"]

#: Columns of :func:`compare_methods` (plus ``family``, ``n_redraws`` and ``redraws``).
SUMMARY_COLUMNS = ("method", "model", "metric", "true", "estimate", "bias", "sd", "rmse")
_VALUE_COLUMNS = ("model", "true", "estimate", "bias", "sd", "rmse", "n_redraws", "redraws")


def _check_world(world) -> FeedbackData:
    if not isinstance(world, FeedbackData):
        raise ValueError(f"world must be a FeedbackData, got {type(world).__name__}")
    shape = (world.n_users, world.n_items)
    if world.n_users < 2 or world.mnar["user"].nunique() < 2:
        raise ValueError(f"world must have at least two users with logged feedback (every "
                         f"estimator is a mean over users), got n_users={world.n_users} and "
                         f"{world.mnar['user'].nunique()} in world.mnar")
    if world.full is None or len(world.full) != shape[0] * shape[1]:
        raise ValueError("world must have a complete full rating matrix (world.full with every "
                         "pair), as from rb.simulate or rb.semi_synthetic")
    if world.propensity is None or np.shape(world.propensity) != shape:
        raise ValueError(f"world must have true propensities of shape {shape} "
                         "(world.propensity)")
    p = np.asarray(world.propensity, dtype=float)
    if not np.isfinite(p).all() or (p <= 0).any() or (p > 1).any():
        raise ValueError("world.propensity must hold probabilities in (0, 1]")
    if world.mar is None or len(world.mar) == 0:
        raise ValueError("world must have a randomly exposed part (world.mar)")
    return world


def _check_models(models, shape) -> dict:
    check_mapping(models, "models", "scores (array or rb.Scorer)")
    if len(models) < 2:
        raise ValueError("models must hold at least two models (a ranking needs two)")
    out = {}
    for name, scores in models.items():
        if not isinstance(name, str):
            raise ValueError(f"models must be keyed by model names (str), got {name!r}")
        try:
            scores = check_scores(scores)
        except ValueError as err:
            raise ValueError(f"models[{name!r}]: {err}") from None
        if tuple(scores.shape) != shape:
            raise ValueError(f"models[{name!r}] must have shape {shape}, got {scores.shape}")
        out[name] = scores
    return out


def _setup(world: FeedbackData, models: dict, k: int) -> _m.Setup:
    shape = (world.n_users, world.n_items)
    full = world.full
    ratings = np.empty(shape)
    ratings[full["user"].to_numpy(np.int64), full["item"].to_numpy(np.int64)] = full["rating"]
    train = world.mnar[["user", "item", "rating"]]
    candidate = np.ones(shape, dtype=bool)
    candidate[train["user"].to_numpy(np.int64), train["item"].to_numpy(np.int64)] = False
    per_user = world.mar.groupby("user").size()
    n_random = int(per_user.mode().iloc[0])
    mar_users = per_user.index.to_numpy(np.int64)
    if candidate[mar_users].sum(axis=1).min() < n_random:
        raise ValueError(f"world: some users of world.mar have fewer than {n_random} items "
                         "outside the log to draw a random sample from")
    z = np.stack([_m.rank_table(s, train, shape) for s in models.values()])
    return _m.Setup(n_users=shape[0], n_items=shape[1], k=k, threshold=float(world.threshold),
                    train=train, ratings=ratings, candidate=candidate,
                    propensity=np.asarray(world.propensity, dtype=float), z=z,
                    mar_users=mar_users, n_random=n_random)


def _authors_propensity(train: pd.DataFrame, n_items: int) -> np.ndarray:
    counts = np.bincount(train["item"].to_numpy(np.int64), minlength=n_items).astype(float)
    try:
        p, _, _ = powerlaw_propensity(counts)
    except ValueError as err:
        raise ValueError(f"world is too small for the authors' power-law propensities: the "
                         f"training log's item counts cannot be fitted ({err})") from None
    return np.maximum(p, 1.0)  # unseen items: as rare as an item seen once


@declare(seed=Seed(), n_redraws=Interval(int, 2), k=Interval(int, None, optional=True),
         n_strata=Interval(int, 1), clip_quantile=Interval(float, 0.0, 1.0, open="both"),
         item_power=Interval(float, 0.0))
def compare_methods(world: FeedbackData, *, models: Mapping, seed, n_redraws: int = 20,
                    k: int = 10, gammas=(0.0, 1.0, 2.0), sizes=(0.2, 0.5), n_strata: int = 2,
                    clip_quantile: float = 0.05, item_power: float = 2.0,
                    cache: bool | None = None) -> pd.DataFrame:
    r"""Bias, spread and RMSE of every evaluation method on a world with full ground truth.

    See the module docstring for the protocol and the methods. The models are ranked once
    per world (their candidates do not change between redraws); each redraw draws a fresh
    test log and random sample and evaluates every method for all models at once.

    Parameters
    ----------
    world : FeedbackData
        A world with a complete ``full``, the true ``propensity`` of ``mnar`` (its log, on
        which the models were fitted) and a ``mar`` part (its random users and size), e.g.
        from :func:`~recbias_tutorial.data.simulate` or
        :func:`~recbias_tutorial.data.semi_synthetic`.
    models : mapping name -> scores
        At least two models: dense ``(n_users, n_items)`` arrays or
        :class:`~recbias_tutorial.Scorer` objects.
    seed : int or numpy.random.Generator
        Randomness of the redraws (each redraw has its own stream).
    n_redraws : int, default 20
        Redraws of the test log and the random sample (>= 2).
    k : int or None, default 10
        Cut-off of Recall@k and nDCG@k. ``None``: the whole ranking (no cut-off), for nDCG
        only (recall over the whole ranking is 1 for every model), so the table then has
        ``ndcg`` rows only and no random-sample methods.
    gammas : sequence of float, default (0, 1, 2)
        Exponents of the popularity propensities :math:`n_i^{(\gamma+1)/2}` (each > -1);
        the clipped variant uses the middle one.
    sizes : sequence of float, default (0.2, 0.5)
        Sizes ρ of the intervened test sets, in (0, 1].
    n_strata : int, default 2
        Strata of both stratified estimators.
    clip_quantile : float, default 0.05
        Clipped SNIPS floors the propensities at this quantile, in (0, 1).
    item_power : float, default 2.0
        Exponent of the item weight of WTD and WTD_H.
    cache : bool, optional
        With an integer ``seed`` and array models, read the table back from the on-disk
        result cache when the same world, score matrices, arguments and package code were
        compared before, and store it otherwise (the fitted-score cache's folder and switch:
        None follows ``RECBIAS_FIT_CACHE``, default on; ``attrs["cached"]`` says which).

    Returns
    -------
    pandas.DataFrame
        One row per method, model and metric (``recall``, ``ndcg``; the random-sample
        methods have recall only), with columns ``family``, ``method``, ``model``,
        ``metric``, ``true`` (the model's metric on every relevant pair outside the log),
        ``estimate`` (mean over the redraws), ``bias``, ``sd``, ``rmse``, ``n_redraws``
        and ``redraws`` (the tuple of per-redraw estimates, which :func:`rank_agreement`
        reads; it survives filtering and concatenation). ``attrs`` holds ``k``,
        ``k_bar`` (the :math:`\bar K` of Recall@K̄), ``n_random`` (:math:`\bar N`) and
        ``n_random_users``.

    Raises
    ------
    ValueError
        If ``world`` is not a FeedbackData with a complete ``full``, ``propensity`` in
        (0, 1] of its shape and a non-empty ``mar`` whose users have enough unlogged
        items; if ``models`` is not a mapping of at least two names to finite score arrays
        (or Scorers) of the world's shape; if ``n_redraws``, ``k`` or ``n_strata`` is not an
        integer in range, a ``gammas`` value is not > -1, a ``sizes`` value not in (0, 1],
        ``clip_quantile`` not in (0, 1) or ``item_power`` negative; if ``seed`` is missing
        or not a non-negative int or Generator.

    See Also
    --------
    recbias_tutorial.comparison.rank_agreement : Kendall's tau against the true ranking.
    recbias_tutorial.data.semi_synthetic : worlds completed from real data.
    recbias_tutorial.data.simulate : simulated worlds with knobs.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> world = rb.simulate(60, 50, seed=0, mean_ratings_per_user=8, n_mar_items=10)
    >>> pop = np.bincount(world.mnar["item"], minlength=50).astype(float)
    >>> models = {"pop": np.tile(pop, (60, 1)), "oracle": world.propensity}
    >>> table = compare_methods(world, models=models, seed=1, n_redraws=3)
    >>> list(table.columns[:9])
    ['family', 'method', 'model', 'metric', 'true', 'estimate', 'bias', 'sd', 'rmse']
    >>> bool((table["rmse"] ** 2 >= table["bias"] ** 2 - 1e-12).all())
    True
    """
    world = _check_world(world)
    shape = (world.n_users, world.n_items)
    models = _check_models(models, shape)
    rng = as_generator(seed)
    whole = k is None
    k = world.n_items if whole else check_int(k, "k", 1, world.n_items)  # bound: the world's
    gammas = tuple(check_real(g, "gammas", low=-1.0, low_open=True) for g in np.atleast_1d(gammas))
    sizes = tuple(check_real(r, "sizes", low=0.0, low_open=True, high=1.0)
                  for r in np.atleast_1d(sizes))
    if not gammas or not sizes:
        raise ValueError("gammas and sizes must not be empty")
    from ._result_cache import arrays_key, cached_table

    args = dict(n_redraws=n_redraws, whole=whole, k=k, gammas=gammas, sizes=sizes,
                n_strata=n_strata, clip_quantile=clip_quantile, item_power=item_power)
    methods = _registry_key()  # the registered estimators; None if one is defined elsewhere
    keyed = (isinstance(seed, (int, np.integer))  # a Generator's state or a Scorer: no stable key
             and all(isinstance(v, np.ndarray) for v in models.values()) and methods is not None)
    key = dict(args, seed=int(seed), models=arrays_key(models), methods=methods) if keyed else None
    return cached_table("comparison.compare_methods", world, key,
                        lambda: _compare(world, models, rng, **args), cache=cache)


def _compare(world: FeedbackData, models: dict, rng: np.random.Generator, *, n_redraws: int,
             whole: bool, k: int, gammas: tuple, sizes: tuple, n_strata: int,
             clip_quantile: float, item_power: float) -> pd.DataFrame:
    """:func:`compare_methods` on validated arguments."""
    s = _setup(world, models, k)
    n_bar = s.n_random
    k_bar = max(1, round(k * n_bar / float(s.candidate.sum(axis=1).mean())))
    opts = _m.Options(gammas=gammas, sizes=sizes, n_strata=n_strata,
                      clip_quantile=clip_quantile, item_power=item_power, k_bar=k_bar,
                      clip_gamma=gammas[len(gammas) // 2])
    opts = _m.prepare_options(s, opts, _authors_propensity(s.train, s.n_items))
    rel = (s.ratings >= s.threshold) & s.candidate
    uu, ii = np.nonzero(rel)
    truth = _m.weighted_metrics(s, uu, ii)  # (n_models, 2)
    seeds = rng.integers(2**63, size=n_redraws)
    est = np.stack([_run_redraw(s, opts, *_m.draw_sets(s, np.random.default_rng(x)))
                    for x in seeds], axis=-1)
    table = _summary(est, truth, list(models), _method_names(opts))
    if whole:
        table = table[table["metric"] == "ndcg"].reset_index(drop=True)
        k = None
    table.attrs.update(k=k, k_bar=k_bar, n_random=n_bar, n_random_users=len(s.mar_users))
    return table


def _summary(est: np.ndarray, truth: np.ndarray, names: list[str],
             methods: list[tuple[str, str]]) -> pd.DataFrame:
    """Tidy rows from estimates (n_methods, n_models, 2, n_redraws) and truth (n_models, 2)."""
    n_methods, n_models, n_metrics, n_redraws = est.shape
    mean = est.mean(-1)
    true = np.broadcast_to(truth, mean.shape)
    frame = pd.DataFrame({
        "family": np.repeat([f for f, _ in methods], n_models * n_metrics),
        "method": np.repeat([m for _, m in methods], n_models * n_metrics),
        "model": np.tile(np.repeat(names, n_metrics), n_methods),
        "metric": np.tile(_m.METRICS, n_methods * n_models),
        "true": true.ravel(),
        "estimate": mean.ravel(),
        "bias": (mean - true).ravel(),
        "sd": est.std(-1, ddof=1).ravel(),
        "rmse": np.sqrt(((est - true[..., None]) ** 2).mean(-1)).ravel(),
        "n_redraws": n_redraws,
        "redraws": [tuple(float(v) for v in row) for row in est.reshape(-1, n_redraws)],
    })
    return frame[frame["estimate"].notna() | ~np.isnan(est).all(-1).ravel()].reset_index(drop=True)


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between each row of x (G, n) and y (n,); NaN when a side is constant."""
    sx = np.sign(x[:, :, None] - x[:, None, :])
    sy = np.sign(y[:, None] - y[None, :])
    num = (sx * sy).sum((1, 2))
    den = np.sqrt((sx != 0).sum((1, 2)) * float((sy != 0).sum()))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def rank_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """Kendall's tau of each method's ranking of the models against the true ranking.

    For every redraw, the models are ranked by the method's estimate and compared with their
    ranking by the true metric (tau-b, ties counted as in :func:`scipy.stats.kendalltau`).

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`compare_methods`, possibly filtered or concatenated with extra key
        columns (e.g. ``world``): rows are grouped by every column except the per-model
        values, i.e. by ``method``, ``metric`` and any added column.

    Returns
    -------
    pandas.DataFrame
        One row per group with the group's keys, ``tau`` (mean over the redraws),
        ``tau_sd`` (their standard deviation), ``n_models`` and ``n_redraws``. A redraw in
        which the estimates (or the truths) are all equal gives NaN and is left out of the
        mean.

    Raises
    ------
    ValueError
        If ``table`` lacks a column of :func:`compare_methods` or its groups mix numbers of
        redraws.

    See Also
    --------
    recbias_tutorial.comparison.compare_methods : the table.
    recbias_tutorial.stats.kendall_tau : tau (and its p-value) of two rankings.

    Examples
    --------
    >>> rows = pd.DataFrame({"method": "m", "metric": "recall", "model": ["a", "b", "c"],
    ...                      "true": [0.1, 0.2, 0.3], "estimate": 0.0, "bias": 0.0, "sd": 0.0,
    ...                      "rmse": 0.0, "n_redraws": 2,
    ...                      "redraws": [(0.1, 0.3), (0.2, 0.2), (0.3, 0.1)]})
    >>> rank_agreement(rows)[["method", "tau", "tau_sd"]].round(3).to_dict("records")
    [{'method': 'm', 'tau': 0.0, 'tau_sd': 1.414}]
    """
    keys = _check_table(table)
    rows = []
    for key, group in table.groupby(keys, sort=False, dropna=False):
        draws = group["redraws"].tolist()
        if len({len(d) for d in draws}) != 1:
            raise ValueError("table: a group mixes numbers of redraws")
        taus = _kendall_tau_b(np.asarray(draws, dtype=float).T, group["true"].to_numpy(float))
        rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,))),
                     "tau": float(np.nanmean(taus)) if np.isfinite(taus).any() else np.nan,
                     "tau_sd": float(np.nanstd(taus, ddof=1)) if np.isfinite(taus).sum() > 1
                     else np.nan,
                     "n_models": len(group), "n_redraws": len(draws[0])})
    return pd.DataFrame(rows)


def method_summary(table: pd.DataFrame) -> pd.DataFrame:
    """One row per method and metric: mean absolute bias, sd and RMSE over the models, and tau.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`compare_methods`, possibly filtered or concatenated with extra key
        columns (e.g. ``world``), which are kept as group keys (as in :func:`rank_agreement`).

    Returns
    -------
    pandas.DataFrame
        The group keys, then ``abs_bias`` (mean over the models of the absolute bias),
        ``sd`` and ``rmse`` (means over the models), and ``tau``, ``tau_sd``, ``n_models``,
        ``n_redraws`` from :func:`rank_agreement`; groups in order of appearance.

    Raises
    ------
    ValueError
        As :func:`rank_agreement`.

    See Also
    --------
    recbias_tutorial.comparison.rank_agreement : the tau columns.
    recbias_tutorial.comparison.compare_methods : the table.

    Examples
    --------
    >>> rows = pd.DataFrame({"method": "m", "metric": "recall", "model": ["a", "b"],
    ...                      "true": [0.1, 0.2], "estimate": [0.2, 0.1], "bias": [0.1, -0.1],
    ...                      "sd": [0.0, 0.0], "rmse": [0.1, 0.1], "n_redraws": 2,
    ...                      "redraws": [(0.2, 0.2), (0.1, 0.1)]})
    >>> method_summary(rows)[["method", "abs_bias", "rmse", "tau"]].to_dict("records")
    [{'method': 'm', 'abs_bias': 0.1, 'rmse': 0.1, 'tau': -1.0}]
    """
    agreement = rank_agreement(table)
    keys = _check_table(table)
    errors = (table.assign(abs_bias=table["bias"].abs())
              .groupby(keys, sort=False, dropna=False)[["abs_bias", "sd", "rmse"]].mean()
              .reset_index())
    return errors.merge(agreement, on=keys, how="left")


def _check_table(table: Any) -> list[str]:
    """The group keys of a :func:`compare_methods` table, refusing tables it cannot have made."""
    check_frame(table, "table", SUMMARY_COLUMNS + ("redraws",))
    if len(table) == 0:
        raise ValueError("table is empty")
    bad = [d for d in table["redraws"] if not (isinstance(d, (tuple, list, np.ndarray))
                                               and len(d) and all(isinstance(v, numbers.Real)
                                                                  for v in d))]
    if bad:
        hint = (" (a CSV round trip turns them into strings: store the table with "
                "to_pickle or to_parquet, or parse the column with ast.literal_eval)"
                if isinstance(bad[0], str) else "")
        raise ValueError(f"table.redraws must hold one tuple of numbers per row, got "
                         f"{bad[0]!r:.40}{hint}")
    for col in ("true", "estimate", "bias", "sd", "rmse"):
        if not pd.api.types.is_numeric_dtype(table[col]):
            raise ValueError(f"table.{col} must be numeric, got dtype {table[col].dtype}")
    keys = [c for c in table.columns if c not in _VALUE_COLUMNS]
    twice = table.duplicated(keys + ["model"])
    if twice.any():
        first = table.loc[twice, keys + ["model"]].iloc[0].to_dict()
        raise ValueError(f"table has {first} more than once: results of different worlds or "
                         "runs were mixed; add a column that tells them apart (e.g. world)")
    return keys
