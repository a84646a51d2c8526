"""Summary tables of the intervened-test-set protocol: the paper's tables and figures.

They take the tidy ``Repetition.metrics`` frame of :func:`recbias_tutorial.protocols.run_protocol`
(``seed, model, strategy, size, metric, value``; ``strategy == "gt"`` is the MAR ground truth)
and compare every intervened test set with the ground truth of the same repetition:
:func:`difference_from_truth` (percentage differences), :func:`mean_difference` (averaged over
seeds), :func:`best_sizes` (the sample size closest to the truth per strategy),
:func:`wilcoxon_vs_truth` (paired signed-rank tests) and :func:`kendall_vs_truth` (agreement
of the model rankings).

Everything here is re-exported by :mod:`recbias_tutorial.protocols`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from . import stats as _stats

__all__ = ["best_sizes", "difference_from_truth", "kendall_vs_truth", "mean_difference",
           "wilcoxon_vs_truth"]


def _check_metrics_frame(metrics: Any) -> pd.DataFrame:
    needed = {"seed", "model", "strategy", "size", "metric", "value"}
    if not isinstance(metrics, pd.DataFrame) or not needed <= set(metrics.columns):
        raise ValueError(f"metrics must be a DataFrame with columns {sorted(needed)} (Repetition.metrics)")
    if not (metrics["strategy"] == "gt").any():
        raise ValueError("metrics has no ground-truth rows (strategy == 'gt')")
    return metrics


def difference_from_truth(metrics: pd.DataFrame) -> pd.DataFrame:
    """Each intervened value next to its ground truth, with the percentage difference.

    ``pct_diff = 100 * (value - truth) / truth``, paired by seed, model and metric.

    Examples
    --------
    >>> m = pd.DataFrame({"seed": 0, "model": "a", "metric": "recall", "strategy": ["gt", "reg"],
    ...                   "size": 1.0, "value": [0.2, 0.3]})
    >>> difference_from_truth(m)["pct_diff"].round(6).tolist()
    [50.0]
    """
    metrics = _check_metrics_frame(metrics)
    truth = metrics[metrics["strategy"] == "gt"][["seed", "model", "metric", "value"]].rename(columns={"value": "truth"})
    out = metrics[metrics["strategy"] != "gt"].merge(truth, on=["seed", "model", "metric"], how="left")
    with np.errstate(divide="ignore", invalid="ignore"):
        out["pct_diff"] = 100.0 * (out["value"] - out["truth"]) / out["truth"]
    return out


def mean_difference(diff: pd.DataFrame) -> pd.DataFrame:
    """Average over seeds, then the percentage difference of the averages.

    For each model, metric, strategy and size: the mean value on the intervened test sets,
    the mean ground truth and ``pct_diff = 100 * (mean value - mean truth) / mean truth``
    (robust to a repetition whose ground truth is 0), with ``n_seeds``.

    Examples
    --------
    >>> d = pd.DataFrame({"model": "a", "metric": "recall", "strategy": "reg", "size": 1.0,
    ...                   "seed": [0, 1], "value": [0.3, 0.5], "truth": [0.2, 0.2]})
    >>> mean_difference(d)["pct_diff"].tolist()
    [100.0]
    """
    needed = {"model", "metric", "strategy", "size", "seed", "value", "truth"}
    if not isinstance(diff, pd.DataFrame) or not needed <= set(diff.columns):
        raise ValueError(f"diff must be a DataFrame with columns {sorted(needed)} (difference_from_truth)")
    g = diff.groupby(["model", "metric", "strategy", "size"], sort=False)
    out = g.agg(value=("value", "mean"), truth=("truth", "mean"), n_seeds=("seed", "nunique")).reset_index()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["pct_diff"] = 100.0 * (out["value"] - out["truth"]) / out["truth"]
    return out


def best_sizes(diff: pd.DataFrame, *, metric: str = "recall") -> pd.Series:
    """Per strategy, the sample size whose seed-averaged value is closest to the truth.

    Uses :func:`mean_difference` and takes, per strategy, the size with the smallest
    |percentage difference| averaged over models: one size per strategy (a protocol setting,
    not a per-model choice).

    Examples
    --------
    >>> d = pd.DataFrame({"model": "a", "metric": "recall", "strategy": "reg", "size": [0.5, 1.0],
    ...                   "seed": 0, "value": [0.194, 0.202], "truth": 0.2})
    >>> best_sizes(d).to_dict()
    {'reg': 1.0}
    """
    means = mean_difference(diff)
    sub = means[means["metric"] == metric]
    if sub.empty:
        raise ValueError(f"diff has no rows for metric={metric!r}")
    mean_abs = sub.assign(abs_pct=sub["pct_diff"].abs()).groupby(["strategy", "size"])["abs_pct"].mean()
    return mean_abs.groupby(level="strategy").idxmin().map(lambda key: key[1]).rename("size")


def wilcoxon_vs_truth(diff: pd.DataFrame, sizes: Mapping[str, float], *, metric: str = "recall") -> pd.DataFrame:
    """Paired Wilcoxon signed-rank test, over seeds, of each strategy against D_gt.

    For every model and strategy (at ``sizes[strategy]``), the values on the intervened test
    sets of the repetitions are paired with the ground truth of the same repetitions.
    With ``n`` repetitions the smallest attainable two-sided p-value is ``2 / 2**n``.

    Returns
    -------
    DataFrame
        ``model, strategy, size, n, mean_pct_diff, statistic, p_value`` (p = 1 when every
        difference is 0).

    Examples
    --------
    >>> d = pd.DataFrame({"model": "a", "strategy": "reg", "size": 1.0, "metric": "recall",
    ...                   "seed": range(6), "value": [1.0, 2, 3, 4, 5, 6], "truth": [2.1, 3.2, 4.3, 5.4, 6.5, 7.6]})
    >>> d["pct_diff"] = 100 * (d["value"] - d["truth"]) / d["truth"]
    >>> float(round(wilcoxon_vs_truth(d, {"reg": 1.0})["p_value"].iloc[0], 4))
    0.0312
    """
    rows = []
    sub = diff[diff["metric"] == metric]
    for (model, strategy), g in sub.groupby(["model", "strategy"], sort=False):
        if strategy not in sizes:
            continue
        g = g[np.isclose(g["size"], sizes[strategy])].sort_values("seed")
        x, y = g["value"].to_numpy(float), g["truth"].to_numpy(float)
        if len(g) == 0:
            continue
        if np.all(x == y):
            stat, p = 0.0, 1.0
        else:
            stat, p = _stats.paired_wilcoxon(x, y)
        rows.append({"model": model, "strategy": strategy, "size": sizes[strategy], "n": len(g),
                     "mean_pct_diff": float(g["pct_diff"].mean()), "statistic": stat, "p_value": p})
    return pd.DataFrame(rows)


def kendall_vs_truth(metrics: pd.DataFrame, *, metric: str = "recall") -> pd.DataFrame:
    """Kendall's tau-b between the model ranking on each test set and on D_gt, per seed.

    Returns
    -------
    DataFrame
        ``seed, strategy, size, tau`` (NaN when a ranking is constant).

    Examples
    --------
    >>> m = pd.DataFrame({"seed": 0, "metric": "recall", "model": ["a", "b", "c"] * 2,
    ...                   "strategy": ["gt"] * 3 + ["reg"] * 3, "size": 1.0,
    ...                   "value": [0.1, 0.2, 0.3, 0.5, 0.6, 0.4]})
    >>> float(round(kendall_vs_truth(m)["tau"].iloc[0], 4))  # a < b but c moved from top to bottom
    -0.3333
    """
    metrics = _check_metrics_frame(metrics)
    sub = metrics[metrics["metric"] == metric]
    if sub.empty:
        raise ValueError(f"metrics has no rows for metric={metric!r}")
    truth = sub[sub["strategy"] == "gt"].set_index(["seed", "model"])["value"]
    rows = []
    for (seed, strategy, size), g in sub[sub["strategy"] != "gt"].groupby(["seed", "strategy", "size"], sort=False):
        est = g.set_index("model")["value"]
        ref = truth.loc[seed].reindex(est.index)
        if est.nunique() < 2 or ref.nunique() < 2:
            tau = float("nan")
        else:
            tau = _stats.kendall_tau(ref, est)[0]
        rows.append({"seed": seed, "strategy": strategy, "size": size, "tau": tau})
    return pd.DataFrame(rows)
