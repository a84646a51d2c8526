r"""The tables and figures of Carraro & Bridge (2022), as functions (private helper module).

Everything here is re-exported by :mod:`recbias_tutorial.replications.carraro2022`; import
it from there. Section, table and figure numbers refer to the journal paper
(Carraro & Bridge, *A sampling approach to debiasing the offline evaluation of recommender
systems*, J. Intell. Inf. Syst. 58, 2022). The ``PAPER_*`` constants hold what the paper's
text states (its tables are images in the copy we read: only the values the text quotes are
recorded, each with where it is stated).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._params import Interval, declare
from ..._validation import check_frame, check_seeds
from ...data import FeedbackData
from ...sampling import STRATEGIES
from ...stats import kendall_tau, paired_wilcoxon
from ._models import paper_models
from ._protocol import _KEYS, _ORDER, TEST_SET_NAMES, _check_metrics
from ._repetitions import run_protocol


#: Figure 4 (WBR3 only) as the text of §5 describes it: tau of each test set's ranking of the
#: five recommenders against the D_gt ranking. Only values stated in the text are listed.
PAPER_FIGURE4_TAU = pd.DataFrame(
    [("FULL", 1.0, 0.6, "FULL, REG and SKEW have constant τ values (0.6, 0.6 and 0.8)")]
    + [("REG", r, 0.6, "constant τ = 0.6") for r in np.round(np.arange(1, 11) / 10, 1)]
    + [("SKEW", r, 0.8, "constant τ = 0.8") for r in np.round(np.arange(1, 11) / 10, 1)]
    + [("WTD_H", 0.8, 1.0, "perfect correlation (τ = 1) when ρp = 0.8 (WTD_H)"),
       ("WTD", 0.7, 1.0, "ρp = 0.7 (WTD & WTD_H)"), ("WTD_H", 0.7, 1.0, "ρp = 0.7 (WTD & WTD_H)"),
       ("WTD", 0.6, 1.0, "ρp = 0.6 (WTD)"),
       ("WTD", 0.9, 0.8, "ρp = 0.9, where SKEW, WTD and WTD_H achieve the same correlation value"),
       ("WTD_H", 0.9, 0.8, "ρp = 0.9, where SKEW, WTD and WTD_H achieve the same correlation value")],
    columns=["strategy", "rho", "tau", "statement"])

#: Which test set the paper finds closest to D_gt per recommender (§5, Tables 3 and 4).
PAPER_CLOSEST = pd.DataFrame([
    ("WBR3", "AvgRating", "SKEW = WTD = WTD_H",
     "for the AvgRating recommender, all three are equally good"),
    ("WBR3", "PosPop", "SKEW", "SKEW is superior to WTD and WTD_H for the PosPop and IB_KNN recommenders"),
    ("WBR3", "UB_KNN", "SKEW = WTD_H", "For the UB_KNN recommender, WTD_H and SKEW are equally good"),
    ("WBR3", "IB_KNN", "SKEW", "SKEW is superior to WTD and WTD_H for the PosPop and IB_KNN recommenders"),
    ("WBR3", "MF", "WTD, WTD_H", "WTD and WTD_H outperform SKEW only for the MF recommender"),
    ("COAT", "AvgRating", "REG = SKEW = WTD = WTD_H",
     "not statistically significantly different to ... the ones of REG and SKEW for AvgRating"),
    ("COAT", "PosPop", "SKEW = WTD = WTD_H", "not statistically significantly different to the one of SKEW for PosPop"),
    ("COAT", "UB_KNN", "WTD = WTD_H", "more closely approximate the ground truth for the personalised recommenders"),
    ("COAT", "IB_KNN", "WTD = WTD_H", "more closely approximate the ground truth for the personalised recommenders"),
    ("COAT", "MF", "WTD = WTD_H", "more closely approximate the ground truth for the personalised recommenders"),
], columns=["dataset", "model", "closest", "statement"])

_MODELS = ("AvgRating", "PosPop", "UB_KNN", "IB_KNN", "MF")
#: Table 5 as §5 summarises it: is the pair of recommenders significantly different on D_gt?
PAPER_TABLE5 = pd.DataFrame(
    [("WBR3", a, b, {a, b} != {"UB_KNN", "IB_KNN"}) for a, b in itertools.combinations(_MODELS, 2)]
    + [("COAT", a, b, {a, b} == {"MF", "IB_KNN"}) for a, b in itertools.combinations(_MODELS, 2)],
    columns=["dataset", "model_a", "model_b", "significant"])


# --------------------------------------------------------------------------------------
# Table 2 (and Figure 3): rating-value distributions of the test sets
# --------------------------------------------------------------------------------------


def _means(sub: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per model, strategy and size, with the mean truth of the same seeds."""
    return sub.groupby(["model", "strategy", "size"], as_index=False, sort=False)["value"].mean()


def table3(metrics: pd.DataFrame, *, metric: str = "recall") -> pd.DataFrame:
    """The paper's Table 3: per recommender, each test set's closest rho and % difference.

    The metric is averaged over the repetitions; for each recommender and each of REG, SKEW,
    WTD and WTD_H the size rho_p whose mean is closest to the mean on D_gt is kept ("we show
    the best performance among the ones obtained in the 10 different test sets ... and ... in
    brackets the test set size", §5); FULL has rho 1.

    Parameters
    ----------
    metrics : pandas.DataFrame
        ``Repetition.metrics`` (columns ``seed, model, strategy, size, metric, value``).
    metric : str, default "recall"
        The metric of the table (the paper's Table 3 shows Recall@10).

    Returns
    -------
    pandas.DataFrame
        ``model, test_set, rho, value, truth, pct_diff`` with ``pct_diff = 100 (value -
        truth) / truth`` (means over seeds), five rows per model.

    Raises
    ------
    ValueError
        If ``metrics`` lacks a column, has no row for ``metric`` or no ground-truth rows.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.table4_wilcoxon : tests at these sizes.
    recbias_tutorial.replications.carraro2022.best_sizes : one size per strategy instead.

    Examples
    --------
    >>> m = pd.DataFrame({"seed": 0, "model": "a", "metric": "recall",
    ...                   "strategy": ["gt", "full", "reg", "reg"], "size": [1.0, 1.0, 0.5, 1.0],
    ...                   "value": [0.2, 0.3, 0.21, 0.3]})
    >>> table3(m)[["test_set", "rho", "pct_diff"]].round(6).values.tolist()
    [['FULL', 1.0, 50.0], ['REG', 0.5, 5.0]]
    """
    sub = _check_metrics(metrics, metric)
    means = _means(sub)
    truth = means[means["strategy"] == "gt"].set_index("model")["value"].rename("truth")
    est = means[means["strategy"] != "gt"].join(truth, on="model")
    with np.errstate(divide="ignore", invalid="ignore"):
        est["pct_diff"] = 100.0 * (est["value"] - est["truth"]) / est["truth"]
    est["abs"] = est["pct_diff"].abs().fillna(np.inf)
    best = est.loc[est.groupby(["model", "strategy"], sort=False)["abs"].idxmin()]
    best = best.assign(test_set=best["strategy"].map(TEST_SET_NAMES),
                       order=best["strategy"].map(list(STRATEGIES).index))
    out = best.sort_values(["model", "order"], kind="stable").rename(columns={"size": "rho"})
    return out[["model", "test_set", "rho", "value", "truth", "pct_diff"]].reset_index(drop=True)


# --------------------------------------------------------------------------------------
# Tables 4 and 5: pairwise two-tailed Wilcoxon signed-rank tests over the repetitions
# --------------------------------------------------------------------------------------
def _wilcoxon(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if np.all(x == y):
        return 0.0, 1.0
    return paired_wilcoxon(x, y)


def table4_wilcoxon(metrics: pd.DataFrame, *, metric: str = "recall",
                    sizes: pd.DataFrame | None = None) -> pd.DataFrame:
    """The paper's Table 4: per recommender, pairwise Wilcoxon tests between the 5 test sets.

    For each recommender, each test set is taken at its Table 3 size (its rho closest to
    D_gt for that recommender); for each pair of test sets the metric values of the
    repetitions are paired by seed and compared with a two-tailed Wilcoxon signed-rank test
    (§5: "a pairwise comparison test between the performance of each recommender on the five
    different test sets ... a two-tailed Wilcoxon signed rank test with p < 0.05").

    Parameters
    ----------
    metrics : pandas.DataFrame
        ``Repetition.metrics``.
    metric : str, default "recall"
        The metric tested.
    sizes : pandas.DataFrame, optional
        Columns ``model, test_set, rho``: the size of each test set per model; default the
        sizes of :func:`table3`.

    Returns
    -------
    pandas.DataFrame
        ``model, test_set_a, test_set_b, rho_a, rho_b, n, statistic, p_value``, one row for
        each ordered pair of distinct test sets (so ``p_value`` is symmetric in a and b).

    Raises
    ------
    ValueError
        If ``metrics`` lacks a column, has no row for ``metric`` or no ground-truth rows; if
        ``sizes`` lacks a column.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.table5_wilcoxon : recommenders on D_gt.
    recbias_tutorial.stats.paired_wilcoxon : the test.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> m = pd.DataFrame([(s, "a", st, 1.0, "recall", v + rng.normal(0, .01)) for s in range(6)
    ...                   for st, v in [("gt", .2), ("full", .3), ("reg", .3), ("skew", .2),
    ...                                 ("wtd", .2), ("wtd_h", .25)]],
    ...                  columns=["seed", "model", "strategy", "size", "metric", "value"])
    >>> t = table4_wilcoxon(m)
    >>> len(t), float(round(t.query("test_set_a == 'FULL' and test_set_b == 'SKEW'")["p_value"].iloc[0], 4))
    (20, 0.0312)
    """
    sub = _check_metrics(metrics, metric)
    if sizes is None:
        sizes = table3(metrics, metric=metric)
    check_frame(sizes, "sizes", ["model", "test_set", "rho"])
    rows = []
    for model, chosen in sizes.groupby("model", sort=False):
        m = sub[sub["model"] == model]
        series = {}
        for row in chosen.itertuples():
            key = _KEYS[row.test_set]
            g = m[(m["strategy"] == key) & np.isclose(m["size"], row.rho)]
            series[row.test_set] = (row.rho, g.set_index("seed")["value"].sort_index())
        names = [n for n in _ORDER if n in series]
        for a, b in itertools.permutations(names, 2):
            (ra, xa), (rb, xb) = series[a], series[b]
            common = xa.index.intersection(xb.index)
            stat, p = _wilcoxon(xa[common].to_numpy(float), xb[common].to_numpy(float))
            rows.append({"model": model, "test_set_a": a, "test_set_b": b, "rho_a": ra, "rho_b": rb,
                         "n": len(common), "statistic": stat, "p_value": p})
    return pd.DataFrame(rows)


def table5_wilcoxon(metrics: pd.DataFrame, *, metric: str = "recall") -> pd.DataFrame:
    """The paper's Table 5: pairwise Wilcoxon tests between recommenders on D_gt.

    The metric of two recommenders on D_gt is paired by repetition and compared with a
    two-tailed Wilcoxon signed-rank test (§5). With n repetitions no p-value is below
    ``2 / 2**n``.

    Parameters
    ----------
    metrics : pandas.DataFrame
        ``Repetition.metrics``.
    metric : str, default "recall"
        The metric tested.

    Returns
    -------
    pandas.DataFrame
        ``model_a, model_b, mean_a, mean_b, n, statistic, p_value``, one row per ordered
        pair of distinct models.

    Raises
    ------
    ValueError
        If ``metrics`` lacks a column, has no row for ``metric`` or no ground-truth rows.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.table4_wilcoxon : test sets per model.

    Examples
    --------
    >>> m = pd.DataFrame([(s, mod, "gt", 1.0, "recall", v + s / 100) for s in range(6)
    ...                   for mod, v in [("a", .1), ("b", .2)]],
    ...                  columns=["seed", "model", "strategy", "size", "metric", "value"])
    >>> float(round(table5_wilcoxon(m)["p_value"].iloc[0], 4))
    0.0312
    """
    sub = _check_metrics(metrics, metric)
    gt = sub[sub["strategy"] == "gt"].pivot_table(index="seed", columns="model", values="value")
    rows = []
    for a, b in itertools.permutations(list(dict.fromkeys(sub["model"])), 2):
        pair = gt[[a, b]].dropna()
        stat, p = _wilcoxon(pair[a].to_numpy(float), pair[b].to_numpy(float))
        rows.append({"model_a": a, "model_b": b, "mean_a": float(pair[a].mean()), "mean_b": float(pair[b].mean()),
                     "n": len(pair), "statistic": stat, "p_value": p})
    return pd.DataFrame(rows)


@declare(alpha=Interval(float, 0.0, 1.0, open="both"))
def closest_test_sets(t3: pd.DataFrame, t4: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Read Tables 3 and 4 as the paper's §5 does: the closest test set and its ties.

    For each recommender, the test set with the smallest absolute % difference in ``t3`` is the
    closest; the test sets whose Wilcoxon p-value against it in ``t4`` is at least ``alpha``
    are "equally good" (not significantly different), listed by increasing absolute % difference.

    Parameters
    ----------
    t3 : pandas.DataFrame
        From :func:`table3`.
    t4 : pandas.DataFrame
        From :func:`table4_wilcoxon` on the same results.
    alpha : float, default 0.05
        Significance level (the paper's p < 0.05).

    Returns
    -------
    pandas.DataFrame
        ``model, closest, ties, reading``: ``reading`` joins them as ``"WTD_H = SKEW"``.

    Raises
    ------
    ValueError
        If a frame lacks a column; if ``alpha`` is not in (0, 1).

    See Also
    --------
    table4_wilcoxon : the pairwise tests it reads.

    Examples
    --------
    >>> t3 = pd.DataFrame({"model": "a", "test_set": ["FULL", "SKEW", "WTD"], "rho": [1.0, .2, .3],
    ...                    "value": 0.0, "truth": 0.0, "pct_diff": [50.0, -3.0, 2.0]})
    >>> t4 = pd.DataFrame({"model": "a", "test_set_a": ["WTD", "WTD"], "test_set_b": ["FULL", "SKEW"],
    ...                    "p_value": [0.002, 0.4]})
    >>> closest_test_sets(t3, t4)["reading"].tolist()
    ['WTD = SKEW']
    """
    check_frame(t3, "t3", ["model", "test_set", "pct_diff"])
    check_frame(t4, "t4", ["model", "test_set_a", "test_set_b", "p_value"])
    rows = []
    for model, g in t3.groupby("model", sort=False):
        err = g.set_index("test_set")["pct_diff"].abs().sort_values(kind="stable")
        best = err.index[0]
        p = t4[(t4["model"] == model) & (t4["test_set_a"] == best)].set_index("test_set_b")["p_value"]
        ties = [s for s in err.index[1:] if s in p.index and p[s] >= alpha]
        rows.append({"model": model, "closest": best, "ties": ties, "reading": " = ".join([best, *ties])})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Figure 4: Kendall's tau on repetition-averaged results
# --------------------------------------------------------------------------------------
def tau_on_means(metrics: pd.DataFrame, *, metric: str = "recall") -> pd.DataFrame:
    """Figure 4's statistic: Kendall's tau between rankings of the repetition-averaged metric.

    The metric of every recommender is averaged over the repetitions on each test set and on
    D_gt; for each test set, tau-b compares the ranking of the recommenders by their means
    with their ranking by the means on D_gt (one tau per strategy and rho, as in Figure 4).
    With 5 recommenders tau moves in steps of 0.2.

    Parameters
    ----------
    metrics : pandas.DataFrame
        ``Repetition.metrics``.
    metric : str, default "recall"
        The metric whose rankings are compared.

    Returns
    -------
    pandas.DataFrame
        ``strategy, rho, tau`` (paper names; FULL at rho 1; NaN for a constant ranking).

    Raises
    ------
    ValueError
        If ``metrics`` lacks a column, has no row for ``metric`` or no ground-truth rows.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.kendall_vs_truth : one tau per repetition (ours).
    recbias_tutorial.replications.carraro2022.figure4_tau : runs the protocol first.

    Examples
    --------
    >>> m = pd.DataFrame({"seed": 0, "metric": "recall", "model": ["a", "b", "c"] * 2,
    ...                   "strategy": ["gt"] * 3 + ["reg"] * 3, "size": 0.5,
    ...                   "value": [0.1, 0.2, 0.3, 0.5, 0.6, 0.4]})
    >>> tau_on_means(m).round(4).values.tolist()
    [['REG', 0.5, -0.3333]]
    """
    sub = _check_metrics(metrics, metric)
    means = _means(sub)
    truth = means[means["strategy"] == "gt"].set_index("model")["value"]
    rows = []
    for (strategy, size), g in means[means["strategy"] != "gt"].groupby(["strategy", "size"], sort=False):
        est = g.set_index("model")["value"]
        ref = truth.reindex(est.index)
        ok = est.notna() & ref.notna()
        est, ref = est[ok], ref[ok]
        tau = float("nan") if est.nunique() < 2 or ref.nunique() < 2 else kendall_tau(ref, est)[0]
        rows.append({"strategy": TEST_SET_NAMES[strategy], "rho": float(size), "tau": tau})
    out = pd.DataFrame(rows)
    out["order"] = out["strategy"].map(_ORDER.index)
    return out.sort_values(["order", "rho"]).drop(columns="order").reset_index(drop=True)


def figure4_tau(data: FeedbackData, *, seeds: Sequence[int] = range(10),
                factories: Mapping[str, Any] | None = None, metric: str = "recall",
                **kwargs: Any) -> pd.DataFrame:
    """The paper's Figure 4: tau per strategy and rho, on repetition-averaged results.

    Runs :func:`run_protocol` and returns :func:`tau_on_means` of its metrics.

    Parameters
    ----------
    data : FeedbackData
        MNAR log and MAR feedback.
    seeds : sequence of int, default range(10)
        One repetition per seed (the paper: 10).
    factories : mapping name -> callable, optional
        The recommenders; default :func:`paper_models`.
    metric : str, default "recall"
        The metric whose rankings are compared.
    **kwargs
        Passed to :func:`run_protocol` (``sizes``, ``item_power``, ``k``, ...).

    Returns
    -------
    pandas.DataFrame
        ``strategy, rho, tau``.

    Raises
    ------
    ValueError
        As :func:`run_protocol` and :func:`tau_on_means`.

    See Also
    --------
    tau_on_means : the same statistic from metrics already computed.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> from recbias_tutorial.models import AvgRating, PosPop
    >>> t = figure4_tau(simulate(80, 50, seed=0), seeds=[0, 1], sizes=(0.5,),
    ...                 factories={"AvgRating": AvgRating, "PosPop": PosPop})
    >>> t.columns.tolist(), t["strategy"].tolist()
    (['strategy', 'rho', 'tau'], ['FULL', 'REG', 'SKEW', 'WTD', 'WTD_H'])
    """

    factories = paper_models() if factories is None else factories
    result = run_protocol(data, factories, seeds=check_seeds(seeds), **kwargs)
    return tau_on_means(result.metrics, metric=metric)


# --------------------------------------------------------------------------------------
# the data: posteriors (Eq. 1-6) and the noise of the WTD weights
# --------------------------------------------------------------------------------------
