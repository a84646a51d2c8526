r"""Figure 4 graded: τ against the values our run allows, and the paper's contrasts (private).

Everything here is re-exported by :mod:`recbias_tutorial.replications.carraro2022`. With five
recommenders τ moves in steps of 0.2 (one swap of a pair), and when D_gt or a test set cannot
order some of them (a tie over the repetitions) τ depends on which way that tie falls; these
functions grade the paper's values with
:func:`recbias_tutorial.replications.report.tau_verdict` (margin: half a swap) and its contrasts
(WTD above FULL and SKEW, WTD_H above REG) on the per-repetition difference of τ
(:func:`recbias_tutorial.replications.report.contrast_verdict`, margin: half the paper's
difference, or half a swap for a claimed 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..._grids import snap_to_grid
from ..._margins import Margin, distinction_margin, half_unit
from ..._params import Interval, declare
from ..._tau_verdict import tau_verdict
from ..._verdicts import contrast_verdict
from ._protocol import _ORDER, SIZES, TEST_SET_NAMES, _check_metrics
from ._tables import PAPER_FIGURE4_TAU

#: The contrasts the paper draws on Figure 4 (§5): each test set's τ against the other's at
#: the same ρp (FULL: at ρp = 1, the only size it has).
FIGURE4_CONTRASTS: tuple[tuple[str, str], ...] = (("WTD", "FULL"), ("WTD", "SKEW"),
                                                  ("WTD_H", "REG"))


#: Test-set name (the paper's) -> the protocol's strategy key.
_KEYS_OF = {name: key for key, name in TEST_SET_NAMES.items()}


def _paper_tau() -> pd.Series:
    return PAPER_FIGURE4_TAU.drop_duplicates(["strategy", "rho"]).set_index(
        ["strategy", "rho"])["tau"]


def _rho(size: Any, with_paper: bool) -> float:
    """A run's ρp on the paper's grid (0.1, ..., 1.0) within 1e-9 (``0.1 * 6`` is 0.6): an
    exact look-up would find no paper value. Off the grid: refused when grading against the
    paper, kept as it is without it."""
    if not with_paper:
        return float(size)
    try:
        return snap_to_grid(size, SIZES, "metrics.size (ρp)")
    except ValueError as err:
        raise ValueError(f"{err}: the paper states τ on this grid only; pass with_paper=False "
                         "to grade other sizes without the paper's values") from None


def tau_margin(paper: float | None, n_models: int) -> Margin:
    """Figure 4's margin for τ: half of one swap of a pair (τ moves in steps of ``2 / pairs``),
    never less than the paper's rounding (τ printed to one decimal)."""
    step = 4 / (n_models * (n_models - 1))
    if paper is None:
        return Margin(step / 2, "half of one swap of a pair")
    other = paper - step if paper - step >= -1 - 1e-12 else paper + step
    value, why = distinction_margin(float(paper), {"τ one swap away": other},
                                    rounding=half_unit(1))
    return Margin(value, why + f": {n_models} recommenders, τ moves in steps of {step:.2g}")


def contrast_margin(diff: float, n_models: int) -> Margin:
    """A Figure 4 contrast's margin: half the paper's difference of τ (half a swap for a
    claimed 0), never less than the rounding of a difference of two one-decimal values."""
    step = 4 / (n_models * (n_models - 1))
    against = {"no difference": 0.0} if abs(diff) > 1e-12 else {"one swap apart": step}
    return distinction_margin(float(diff), against, rounding=half_unit(1, terms=2))


def _cells(metrics: Any, metric: str, alpha: float, with_paper: bool) -> dict:
    """{(strategy, rho): (truth, test, TauVerdict without contrasts)} of every test set."""
    sub = _check_metrics(metrics, metric)
    table = sub.pivot_table(index=["strategy", "size", "seed"], columns="model", values="value")
    truth = table.loc[("gt", 1.0)]
    paper = _paper_tau() if with_paper else pd.Series(dtype=float)
    cells = {}
    for key, size in table.index.droplevel("seed").unique():
        if key == "gt":
            continue
        name, rho = TEST_SET_NAMES[key], _rho(size, with_paper)
        p = paper.get((name, rho))
        p = None if p is None else float(p)
        test = table.loc[(key, size)]
        margin = tau_margin(p, truth.shape[1])
        cells[(name, rho)] = (truth, test, tau_verdict(p, truth, test, margin=margin.value,
                                                       alpha=alpha), margin)
    return cells


def _contrasts(cells: dict, alpha: float, with_paper: bool) -> list[dict]:
    paper = _paper_tau() if with_paper else pd.Series(dtype=float)
    rows = []
    for a, b in FIGURE4_CONTRASTS:
        for (name, rho), (truth, _, cell, _) in sorted(cells.items()):
            other_rho = 1.0 if b == "FULL" else rho
            if name != a or (b, other_rho) not in cells:
                continue
            pa, pb = paper.get((a, rho)), paper.get((b, other_rho))
            diff = None if pa is None or pb is None else float(pa - pb)
            margin = contrast_margin(0.0 if diff is None else diff, truth.shape[1])
            v = contrast_verdict(0.0 if diff is None else diff, cell.taus,
                                 cells[(b, other_rho)][2].taus, margin=margin.value)
            rows.append({"contrast": f"{a} − {b}", "test_set": a, "other": b, "rho": rho,
                         "paper": np.nan if diff is None else diff, "mean": v.mean,
                         "low": v.low, "high": v.high, "wins": v.wins, "ties": v.ties,
                         "losses": v.losses, "margin": margin.value,
                         "margin_reason": margin.reason,
                         "verdict": "" if diff is None else v.verdict,
                         "why": "" if diff is None else v.why})
    return rows


@declare(alpha=Interval(float, 0.0, 1.0, open="both"))
def figure4_sign_tests(metrics: pd.DataFrame, *, metric: str = "recall", alpha: float = 0.05,
                       with_paper: bool = True) -> pd.DataFrame:
    """The paper's Figure 4 contrasts, each graded on the difference of τ within repetitions.

    In every repetition, τ of WTD (WTD_H) against D_gt is compared with τ of FULL at ρp = 1
    and of SKEW (of REG) at the same ρp: a win, a tie (a difference of 0) or a loss. The
    paper's difference is its two stated τ values' (e.g. WTD 1.0 − FULL 0.6 = 0.4 at ρp =
    0.6), graded by :func:`recbias_tutorial.replications.report.contrast_verdict` against
    :func:`contrast_margin`: the 95% interval of our mean difference inside the paper's ±
    the margin.

    Parameters
    ----------
    metrics : pandas.DataFrame
        ``Repetition.metrics`` (one configuration: one kind of recommenders, one exponent).
    metric : str, default "recall"
        The metric τ is computed on.
    alpha : float, default 0.05
        Level of the Wilcoxon tests that separate the recommenders (the contrasts' interval is
        a 95% t interval).
    with_paper : bool, default True
        Attach the paper's differences (its Yahoo! R3 figure); False for another dataset
        (``paper`` NaN, no verdict).

    Returns
    -------
    pandas.DataFrame
        ``contrast, test_set, other, rho, paper, mean, low, high, wins, ties, losses,
        margin, margin_reason, verdict, why`` (``mean``, ``low``, ``high``: our mean
        difference of τ over repetitions and its 95% interval).

    Raises
    ------
    ValueError
        On a metrics frame :func:`figure4_verdicts` refuses, or ``alpha`` not in (0, 1).

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> from recbias_tutorial.models import AvgRating, PosPop, RandomScores
    >>> from functools import partial
    >>> from recbias_tutorial.replications.carraro2022 import run_protocol
    >>> f = {"AvgRating": AvgRating, "PosPop": PosPop, "R1": partial(RandomScores, seed=1)}
    >>> m = run_protocol(simulate(80, 50, seed=0), f, seeds=[0, 1, 2], sizes=(0.6, 1.0)).metrics
    >>> figure4_sign_tests(m)[["contrast", "rho", "paper"]].head(2).to_numpy().tolist()
    [['WTD − FULL', 0.6, 0.4], ['WTD − FULL', 1.0, nan]]
    """
    if not isinstance(with_paper, bool):
        raise ValueError(f"with_paper must be True or False, got {with_paper!r}")
    cells = _cells(metrics, metric, alpha, with_paper)
    return pd.DataFrame(_contrasts(cells, alpha, with_paper),
                        columns=["contrast", "test_set", "other", "rho", "paper", "mean", "low",
                                 "high", "wins", "ties", "losses", "margin", "margin_reason",
                                 "verdict", "why"])


@declare(alpha=Interval(float, 0.0, 1.0, open="both"))
def figure4_verdicts(metrics: pd.DataFrame, *, metric: str = "recall", alpha: float = 0.05,
                     with_paper: bool = True) -> pd.DataFrame:
    """Figure 4 with the verdicts of τ over a few models: every test set and ρp.

    For each test set and ρp: τ on the repetition means (the figure's point); how many of
    the 10 pairs of recommenders D_gt and the test set separate (paired Wilcoxon over
    repetitions, ``alpha``), τ over D_gt's separated pairs only, and the τ values attainable
    over the orders consistent with both (their range ``low``..``high``); the share of
    repetitions whose own τ equals the paper's; and the verdict of
    :func:`recbias_tutorial.replications.report.tau_verdict` against :func:`tau_margin` (half a
    swap), which for WTD and WTD_H also needs the contrasts of :func:`figure4_sign_tests` at
    that ρp to be reproduced.

    Parameters
    ----------
    metrics, metric, alpha, with_paper
        As in :func:`figure4_sign_tests`.

    Returns
    -------
    pandas.DataFrame
        ``strategy, rho, paper, tau, low, high, attainable, separated, test_separated,
        pairs, tau_separated, share_equal, n, margin, margin_reason, contrasts, verdict,
        why`` (``attainable``: the τ values, comma-separated; ``contrasts``: the verdicts of
        the contrasts the cell rests on; ``paper`` NaN and ``verdict`` empty where the paper
        states no τ).

    Raises
    ------
    ValueError
        If ``metrics`` is not a ``Repetition.metrics`` frame with D_gt rows for ``metric``
        and 3 to 8 models, ``alpha`` not in (0, 1) or ``with_paper`` not a bool.

    Examples
    --------
    >>> m = pd.DataFrame([(s, m, strategy, 1.0, "recall", v) for s in range(6)
    ...                   for strategy in ("gt", "full") for m, v in zip("abc", (0.1, 0.2, 0.3))],
    ...                  columns=["seed", "model", "strategy", "size", "metric", "value"])
    >>> figure4_verdicts(m)[["strategy", "paper", "low", "high", "verdict"]].to_numpy().tolist()
    [['FULL', 0.6, 1.0, 1.0, 'differs']]
    """
    if not isinstance(with_paper, bool):
        raise ValueError(f"with_paper must be True or False, got {with_paper!r}")
    cells = _cells(metrics, metric, alpha, with_paper)
    contrasts = pd.DataFrame(_contrasts(cells, alpha, with_paper))
    rows = []
    for (name, rho), (truth, test, cell, margin) in cells.items():
        mine = (contrasts[(contrasts["test_set"] == name) & (contrasts["rho"] == rho)
                          & (contrasts["verdict"] != "")] if len(contrasts) else contrasts)
        graded = cell
        if cell.verdict and len(mine):
            graded = tau_verdict(cell.paper, truth, test, margin=margin.value, alpha=alpha,
                                 contrasts=tuple(mine["verdict"]))
        rows.append({"strategy": name, "rho": rho, "paper": cell.paper, "tau": cell.tau,
                     "low": cell.low, "high": cell.high,
                     "attainable": ", ".join(f"{v:.1f}" for v in cell.attainable),
                     "separated": cell.separated, "test_separated": cell.test_separated,
                     "pairs": cell.pairs, "tau_separated": cell.tau_separated,
                     "share_equal": cell.share_equal, "n": cell.n, "margin": margin.value,
                     "margin_reason": margin.reason,
                     "contrasts": "; ".join(f"{r.contrast}: {r.verdict}" for r in mine.itertuples())
                     if len(mine) else "", "verdict": graded.verdict, "why": graded.why})
    out = pd.DataFrame(rows)
    out["strategy"] = pd.Categorical(out["strategy"], _ORDER, ordered=True)
    return out.sort_values(["strategy", "rho"]).reset_index(drop=True).astype({"strategy": str})



def smoothing_comparison(table: pd.DataFrame, *, metric: str = "recall",
                         alpha: float = 0.05) -> pd.DataFrame:
    """The two rules for absent ids side by side: the test sets and Figure 4's τ under each.

    Parameters
    ----------
    table : pandas.DataFrame
        The stored ``<dataset>_smoothing`` table (``make replicate``): ``smoothing,
        item_power, seed, model, strategy, size, metric, value``, the test sets' own numbers
        under model ``"(test set)"`` (``kl_to_gt``, ``relevant``, ``n_rows``, ``n_users``).
    metric : str, default "recall"
        The metric τ is computed on.
    alpha : float, default 0.05
        Level of the Wilcoxon tests of :func:`figure4_verdicts`.

    Returns
    -------
    pandas.DataFrame
        One row per (``item_power``, ``smoothing``, ``strategy``, ``rho``): the test sets'
        mean ``kl_to_gt`` (bits) and share of ``relevant`` rows over the repetitions, and
        :func:`figure4_verdicts`' ``tau``, ``low`` and ``high``.

    Raises
    ------
    ValueError
        If ``table`` lacks a column, or a configuration's metrics are refused by
        :func:`figure4_verdicts`.

    Examples
    --------
    >>> m = pd.DataFrame([(s, m, strategy, 1.0, metric, v) for s in range(6)
    ...                   for strategy in ("gt", "full") for m, v in zip("abc", (0.1, 0.2, 0.3))
    ...                   for metric in ("recall",)], columns=["seed", "model", "strategy", "size",
    ...                                                         "metric", "value"])
    >>> sets = pd.DataFrame({"seed": range(6), "model": "(test set)", "strategy": "full",
    ...                      "size": 1.0, "metric": "kl_to_gt", "value": 0.25})
    >>> t = pd.concat([m, sets]).assign(smoothing="add-one", item_power=2.0)
    >>> smoothing_comparison(t)[["smoothing", "strategy", "kl_to_gt", "tau"]].to_numpy().tolist()
    [['add-one', 'FULL', 0.25, 1.0]]
    """
    from ..._validation import check_frame

    keys = ["smoothing", "item_power", "seed", "model", "strategy", "size", "metric", "value"]
    check_frame(table, "table", keys)
    out = []
    for (power, rule), part in table.groupby(["item_power", "smoothing"], sort=False):
        sets = part[part["model"] == "(test set)"]
        stats = sets.pivot_table(index=["strategy", "size"], columns="metric", values="value",
                                 aggfunc="mean")
        graded = figure4_verdicts(part[part["model"] != "(test set)"].drop(
            columns=["smoothing", "item_power"]), metric=metric, alpha=alpha, with_paper=False)
        for row in graded.itertuples():
            key = (_KEYS_OF[row.strategy], row.rho)
            out.append({"item_power": power, "smoothing": rule, "strategy": row.strategy,
                        "rho": row.rho,
                        **{c: (float(stats.loc[key, c]) if key in stats.index and c in stats
                               else np.nan) for c in ("kl_to_gt", "relevant")},
                        "tau": row.tau, "low": row.low, "high": row.high})
    return pd.DataFrame(out)
