r"""Figure 4 with its uncertainty, and what the test sets hold of the popular items (private).

Everything here is re-exported by :mod:`recbias_tutorial.replications.carraro2022`:
:func:`tau_bands` (Kendall's tau on repetition-averaged results, with a bootstrap band over
the repetitions) and :func:`popular_share` (each test set's share of rows on the most-logged
items, beside D_gt's).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..._params import Interval, Seed, declare
from ..._result_cache import cached_table
from ..._validation import as_generator, check_seeds
from ..._tau_verdict import _tau_b
from ...data import FeedbackData
from ...sampling import STRATEGIES
from ._protocol import (SIZES, TEST_SET_NAMES, _ORDER, _check_metrics, _check_sizes,
                        _check_strategies,
                        draw_test_sets, split_feedback)


@declare(n_boot=Interval(int, 1), seed=Seed(), confidence=Interval(float, 0.0, 1.0, open="both"))
def tau_bands(metrics: pd.DataFrame, *, metric: str = "recall", n_boot: int = 2000, seed: int,
              confidence: float = 0.95) -> pd.DataFrame:
    """Figure 4's tau with a percentile bootstrap band over the repetitions.

    ``tau`` is :func:`tau_on_means`' value (Kendall's tau-b between the recommenders' metric
    averaged over the repetitions on a test set and on D_gt). Each bootstrap draw resamples
    the repetitions with replacement, once for all test sets (a repetition's D_gt goes with
    its test sets), and recomputes that tau; ``low``/``high`` are the percentiles of the
    draws, ``p_above`` is the share of draws with a tau above the point value and
    ``p_max`` the largest tau any draw gives.

    Parameters
    ----------
    metrics : pandas.DataFrame
        ``Repetition.metrics`` (``seed, model, strategy, size, metric, value``) with D_gt
        rows, every model in every repetition.
    metric : str, default "recall"
        Metric to rank by.
    n_boot : int, default 2000
        Bootstrap draws.
    seed : int or numpy.random.Generator
        Seed of the draws.
    confidence : float, default 0.95
        Coverage of the band.

    Returns
    -------
    pandas.DataFrame
        ``strategy, rho, tau, low, high, p_max`` (paper's names; FULL at rho 1 first).

    Raises
    ------
    ValueError
        If ``metrics`` lacks a column, rows of ``metric`` or D_gt rows, or a model misses a
        repetition; on an invalid ``n_boot``, ``seed`` or ``confidence``.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.tau_on_means : the point values.
    recbias_tutorial.replications.carraro2022.kendall_vs_truth : tau of single repetitions.

    Examples
    --------
    >>> m = pd.DataFrame({"seed": np.repeat([0, 1], 6), "metric": "recall", "size": 0.5,
    ...                   "model": ["a", "b", "c"] * 4,
    ...                   "strategy": (["gt"] * 3 + ["reg"] * 3) * 2,
    ...                   "value": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.25, 0.1, 0.4]})
    >>> band = tau_bands(m, seed=0, n_boot=200)  # repetition taus: 1 and 1/3
    >>> band[["strategy", "rho", "tau", "low", "high"]].round(2).values.tolist()
    [['REG', 0.5, 0.33, 0.33, 1.0]]
    """
    sub = _check_metrics(metrics, metric)
    wide = sub.pivot_table(index=["strategy", "size"], columns=["seed", "model"], values="value",
                           aggfunc="first")
    seeds = wide.columns.get_level_values("seed").unique()
    models = wide.columns.get_level_values("model").unique()
    full_columns = pd.MultiIndex.from_product([seeds, models], names=["seed", "model"])
    wide = wide.reindex(columns=full_columns)
    if wide.isna().any().any():
        raise ValueError("metrics must hold every model on every test set of every repetition")
    values = wide.to_numpy().reshape(len(wide), len(seeds), len(models))  # (set, seed, model)
    sets = list(wide.index)
    gt = values[[s for s, _ in sets].index("gt")]
    rng = as_generator(seed)
    weights = rng.multinomial(len(seeds), np.full(len(seeds), 1 / len(seeds)), size=n_boot) / len(seeds)
    boot_sets = np.einsum("bs,tsm->btm", weights, values)
    boot_gt = weights @ gt
    boot = _tau_b(boot_sets, boot_gt[:, None, :])  # (draw, set)
    point = _tau_b(values.mean(axis=1), gt.mean(axis=0)[None, :])
    alpha = (1 - confidence) / 2
    rows = []
    for t, (strategy, size) in enumerate(sets):
        if strategy == "gt":
            continue
        draws = boot[:, t][~np.isnan(boot[:, t])]
        low, high = (np.quantile(draws, [alpha, 1 - alpha]) if draws.size else (np.nan, np.nan))
        rows.append({"strategy": TEST_SET_NAMES[strategy], "rho": float(size), "tau": float(point[t]),
                     "low": float(low), "high": float(high),
                     "p_max": float(draws.max()) if draws.size else np.nan})
    out = pd.DataFrame(rows)
    out["order"] = out["strategy"].map(_ORDER.index)
    return out.sort_values(["order", "rho"]).drop(columns="order").reset_index(drop=True)


@declare(top=Interval(int, 1), item_power=Interval(float, 0.0))
def popular_share(data: FeedbackData, *, seeds: Sequence[int], top: int = 100,
                  strategies: Sequence[str] = STRATEGIES, sizes: Sequence[float] = SIZES,
                  item_power: float = 2.0, cache: bool | None = None) -> pd.DataFrame:
    """Share of each test set's rows on the ``top`` items most logged in D_tr, beside D_gt's.

    For each seed: the split of :func:`split_feedback`, the ``top`` items with the most
    rows in D_tr (ties: the lower id), and the share of the rows of every test set of
    :func:`draw_test_sets` (the samples the protocol evaluates) and of D_gt on them. A test
    set that undoes the log's popularity bias holds about D_gt's share; FULL holds the log's.

    Parameters
    ----------
    data : FeedbackData
        MNAR log and MAR feedback.
    seeds : sequence of int
        Distinct seeds, one split each.
    top : int, default 100
        Number of most-logged items (100 of Yahoo! R3's 1,000 songs: the top decile).
    strategies, sizes, item_power
        As :func:`draw_test_sets`.
    cache : bool, optional
        Keep the table in the on-disk result cache, as :func:`kl_by_seed` does (None follows
        ``RECBIAS_FIT_CACHE``, default on).

    Returns
    -------
    pandas.DataFrame
        ``seed, test_set, rho, share`` (``test_set`` "D_gt" at rho 1 for the ground truth).

    Raises
    ------
    ValueError
        If ``seeds`` is empty or has duplicates; if ``top`` is not a positive int; on an
        invalid ``data``, ``strategies``, ``sizes`` or ``item_power``.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.kl_by_seed : the rating values of the same samples.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> share = popular_share(simulate(60, 40, seed=0), seeds=[0], top=4, strategies=("full",))
    >>> share["test_set"].tolist()
    ['D_gt', 'FULL']
    """
    seeds = check_seeds(seeds)
    strategies, sizes = _check_strategies(strategies), _check_sizes(sizes)
    arguments = (dict(seeds=seeds, top=top, strategies=list(strategies), sizes=list(sizes),
                      item_power=item_power) if isinstance(data, FeedbackData) else None)
    return cached_table("carraro2022.popular_share", data, arguments,
                        lambda: _popular_share(data, seeds, top, strategies, sizes, item_power),
                        cache=cache)


def _popular_share(data, seeds, top, strategies, sizes, item_power) -> pd.DataFrame:
    rows = []
    for s in seeds:
        split = split_feedback(data, seed=s)
        counts = np.bincount(split.train["item"].to_numpy(np.int64), minlength=data.n_items)
        popular = np.zeros(data.n_items, dtype=bool)
        popular[np.argsort(-counts, kind="stable")[:top]] = True
        rows.append({"seed": s, "test_set": "D_gt", "rho": 1.0,
                     "share": float(popular[split.gt["item"].to_numpy(np.int64)].mean())})
        held = popular[split.heldout["item"].to_numpy(np.int64)]
        for (strategy, size), idx in draw_test_sets(split, strategies=strategies, sizes=sizes,
                                                    item_power=item_power).items():
            rows.append({"seed": s, "test_set": TEST_SET_NAMES[strategy], "rho": size,
                         "share": float(held[idx].mean())})
    return pd.DataFrame(rows)
