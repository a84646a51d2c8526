r"""The course's own statistics on Carraro & Bridge's protocol (private; labelled as ours).

Everything here is re-exported by :mod:`recbias_tutorial.replications.carraro2022`:
:func:`difference_from_truth`, :func:`mean_difference`, :func:`best_sizes` (one rho_p per
strategy), :func:`wilcoxon_vs_truth` (each strategy against D_gt) and
:func:`kendall_vs_truth` (one tau per repetition).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..._validation import check_column_name, check_frame, check_mapping, check_real
from ...sampling import STRATEGIES
from ...stats import kendall_tau, paired_wilcoxon
from ._protocol import _check_metrics_frame


# --------------------------------------------------------------------------------------
# the course's statistics (ours, not the paper's)
# --------------------------------------------------------------------------------------


def difference_from_truth(metrics: pd.DataFrame) -> pd.DataFrame:
    """Each intervened value next to its ground truth, with the percentage difference.

    ``pct_diff = 100 * (value - truth) / truth``, paired by seed, model and metric.

    Parameters
    ----------
    metrics : DataFrame
        ``Repetition.metrics``: columns ``seed``, ``model``, ``strategy``, ``size``,
        ``metric``, ``value``, with ground-truth rows (``strategy == "gt"``).

    Returns
    -------
    pandas.DataFrame
        The intervened rows of ``metrics`` with two more columns, ``truth`` and
        ``pct_diff`` (inf or NaN where the truth is 0).

    Raises
    ------
    ValueError
        If ``metrics`` is not a DataFrame with those columns, or has no ground-truth rows.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.mean_difference : averages over seeds.
    recbias_tutorial.replications.carraro2022.wilcoxon_vs_truth : a test over seeds.

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

    Parameters
    ----------
    diff : DataFrame
        From :func:`difference_from_truth`: columns ``model``, ``metric``, ``strategy``,
        ``size``, ``seed``, ``value``, ``truth``.

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``metric``, ``strategy``, ``size``, ``value``, ``truth``,
        ``n_seeds`` and ``pct_diff``.

    Raises
    ------
    ValueError
        If ``diff`` is not a DataFrame with those columns.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.difference_from_truth : its input.
    recbias_tutorial.replications.carraro2022.best_sizes : the best size per strategy.

    Examples
    --------
    >>> d = pd.DataFrame({"model": "a", "metric": "recall", "strategy": "reg", "size": 1.0,
    ...                   "seed": [0, 1], "value": [0.3, 0.5], "truth": [0.2, 0.2]})
    >>> mean_difference(d)["pct_diff"].tolist()
    [100.0]
    """
    check_frame(diff, "diff", ["model", "metric", "strategy", "size", "seed", "value", "truth"])
    g = diff.groupby(["model", "metric", "strategy", "size"], sort=False)
    out = g.agg(value=("value", "mean"), truth=("truth", "mean"), n_seeds=("seed", "nunique")).reset_index()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["pct_diff"] = 100.0 * (out["value"] - out["truth"]) / out["truth"]
    return out


def best_sizes(diff: pd.DataFrame, *, metric: str = "recall") -> pd.Series:
    """Per strategy, the sample size whose seed-averaged value is closest to the truth.

    Uses :func:`mean_difference` and takes, per strategy, the size with the smallest
    absolute percentage difference averaged over models: one size per strategy (a protocol setting,
    not a per-model choice).

    Parameters
    ----------
    diff : DataFrame
        From :func:`difference_from_truth`.
    metric : str, default "recall"
        The metric whose differences are compared.

    Returns
    -------
    pandas.Series
        The best size of each strategy, indexed by ``strategy``, named ``"size"``.

    Raises
    ------
    ValueError
        If ``diff`` lacks a column of :func:`mean_difference`, or has no row for ``metric``.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.mean_difference : the averaged differences.
    recbias_tutorial.replications.carraro2022.wilcoxon_vs_truth : takes these sizes.

    Examples
    --------
    >>> d = pd.DataFrame({"model": "a", "metric": "recall", "strategy": "reg", "size": [0.5, 1.0],
    ...                   "seed": 0, "value": [0.194, 0.202], "truth": 0.2})
    >>> best_sizes(d).to_dict()
    {'reg': 1.0}
    """
    check_column_name(metric, "metric")
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

    Parameters
    ----------
    diff : DataFrame
        From :func:`difference_from_truth` (columns ``model``, ``strategy``, ``size``,
        ``metric``, ``seed``, ``value``, ``truth``, ``pct_diff``).
    sizes : mapping strategy -> float
        The sample size tested for each strategy (e.g. from :func:`best_sizes`); strategies
        not in it are skipped.
    metric : str, default "recall"
        The metric tested.

    Returns
    -------
    DataFrame
        ``model, strategy, size, n, mean_pct_diff, statistic, p_value`` (p = 1 when every
        difference is 0).

    Raises
    ------
    ValueError
        If ``diff`` is not a DataFrame with the columns of :func:`difference_from_truth`.

    See Also
    --------
    recbias_tutorial.stats.paired_wilcoxon : the test.
    recbias_tutorial.replications.carraro2022.best_sizes : one size per strategy.

    Examples
    --------
    >>> d = pd.DataFrame({"model": "a", "strategy": "reg", "size": 1.0, "metric": "recall",
    ...                   "seed": range(6), "value": [1.0, 2, 3, 4, 5, 6],
    ...                   "truth": [2.1, 3.2, 4.3, 5.4, 6.5, 7.6]})
    >>> d["pct_diff"] = 100 * (d["value"] - d["truth"]) / d["truth"]
    >>> float(round(wilcoxon_vs_truth(d, {"reg": 1.0})["p_value"].iloc[0], 4))
    0.0312
    """
    check_frame(diff, "diff", ["model", "strategy", "size", "metric", "seed", "value", "truth",
                               "pct_diff"])
    check_column_name(metric, "metric")
    if isinstance(sizes, pd.Series):
        sizes = sizes.to_dict()
    check_mapping(sizes, "sizes", "sample size")
    for strategy, size in sizes.items():
        if strategy not in STRATEGIES:
            raise ValueError(f"sizes has the strategy {strategy!r}, not one of {list(STRATEGIES)}")
        check_real(size, f"sizes[{strategy!r}]", low=0.0, high=1.0, low_open=True)
    rows = []
    sub = diff[diff["metric"] == metric]
    if sub.empty:
        raise ValueError(f"diff has no rows for metric={metric!r}")
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
            stat, p = paired_wilcoxon(x, y)
        rows.append({"model": model, "strategy": strategy, "size": sizes[strategy], "n": len(g),
                     "mean_pct_diff": float(g["pct_diff"].mean()), "statistic": stat, "p_value": p})
    return pd.DataFrame(rows)


def kendall_vs_truth(metrics: pd.DataFrame, *, metric: str = "recall") -> pd.DataFrame:
    """Kendall's tau-b between the model ranking on each test set and on D_gt, per seed.

    Parameters
    ----------
    metrics : DataFrame
        ``Repetition.metrics`` (columns ``seed``, ``model``, ``strategy``, ``size``,
        ``metric``, ``value``).
    metric : str, default "recall"
        The metric whose rankings are compared.

    Returns
    -------
    pandas.DataFrame
        ``seed, strategy, size, tau`` (NaN when a ranking is constant).

    Raises
    ------
    ValueError
        If ``metrics`` is not a DataFrame with those columns, has no ground-truth rows, or
        has no row for ``metric``.

    See Also
    --------
    recbias_tutorial.stats.kendall_tau : the statistic.
    recbias_tutorial.replications.jadidinejad2021.agreement : the same over a model zoo.

    Examples
    --------
    >>> m = pd.DataFrame({"seed": 0, "metric": "recall", "model": ["a", "b", "c"] * 2,
    ...                   "strategy": ["gt"] * 3 + ["reg"] * 3, "size": 1.0,
    ...                   "value": [0.1, 0.2, 0.3, 0.5, 0.6, 0.4]})
    >>> float(round(kendall_vs_truth(m)["tau"].iloc[0], 4))  # a < b but c moved from top to bottom
    -0.3333
    """
    metrics = _check_metrics_frame(metrics)
    check_column_name(metric, "metric")
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
            tau = kendall_tau(ref, est)[0]
        rows.append({"seed": seed, "strategy": strategy, "size": size, "tau": tau})
    return pd.DataFrame(rows)
