"""The replication report's verdict rules, one per kind of headline number (private).

Re-exported by :mod:`recbias_tutorial._findings` and
:mod:`recbias_tutorial.replications.report`. Each rule can fail on the number it grades:

* :func:`verdict`: our mean's t interval (kept for what still uses it);
* :func:`single_run_verdict`: a paper value from one run against our run-to-run spread, the
  95% prediction interval of one more run;
* :func:`mean_verdict`: a paper mean over seeds against the interval of the difference
  between two means;
* :func:`contrast_verdict`: a difference or an ordering the paper draws, by a sign test over
  repetitions (or seeds);
* :func:`tau_verdict`: Kendall's τ over a few models, counting only the pairs our ground
  truth separates.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ._params import Interval, declare
from ._validation import as_real_array, check_real

#: The verdict scale of the replication report, from agreement to disagreement: the paper's
#: number reproduced, on the same side of a reference only, "undetermined" (our own ground
#: truth or spread cannot separate what the number depends on), and "differs".
VERDICTS: tuple[str, ...] = ("reproduced within our interval", "same direction, other level",
                             "undetermined", "differs")
REPRODUCED, SAME_DIRECTION, UNDETERMINED, DIFFERS = VERDICTS


class Verdict(NamedTuple):
    """One headline number graded: the paper's value against ours over seeds or repetitions."""

    verdict: str
    paper: float
    mean: float
    low: float
    high: float
    n: int


class ContrastVerdict(NamedTuple):
    """A difference (or ordering) the paper draws, graded by a sign test within repetitions."""

    verdict: str
    paper: float
    mean: float
    wins: int
    ties: int
    losses: int
    p: float


class TauVerdict(NamedTuple):
    """Kendall's τ over a few models, graded on the pairs our ground truth separates.

    ``tau`` is τ between the test set's and the truth's means; ``low``/``high`` the range of
    τ over the orders of the models consistent with the truth; ``separated`` of ``pairs``
    pairs are ordered by the truth (paired Wilcoxon, ``alpha``), and ``tau_separated`` is τ
    over those pairs only; ``taus`` holds each repetition's τ and ``share_equal`` the share
    of them equal to the paper's.
    """

    verdict: str
    paper: float
    tau: float
    low: float
    high: float
    n: int
    separated: int
    pairs: int
    tau_separated: float
    share_equal: float
    taus: tuple


def _sample(ours: Any, name: str = "ours") -> np.ndarray:
    """One sample of finite numbers (one per seed or repetition)."""
    if ours is None:
        raise ValueError(f"{name} must hold one or more finite values (one per seed or "
                         "repetition), got None")
    values = as_real_array(ours, name)
    if values.ndim > 2 or (values.ndim == 2 and min(values.shape) > 1):
        raise ValueError(f"{name} must be one sample (one value per seed or repetition), got a "
                         f"table of shape {values.shape}: grade each column on its own")
    values = values.ravel()
    if values.size == 0 or not np.isfinite(values).all():
        raise ValueError(f"{name} must hold one or more finite values (one per seed or "
                         "repetition)")
    return values


def _grade(paper: float, mean: float, low: float, high: float, reference: float | None) -> str:
    if low - 1e-12 <= paper <= high + 1e-12:
        return REPRODUCED
    if reference is not None and np.sign(paper - reference) == np.sign(mean - reference) != 0:
        return SAME_DIRECTION
    return DIFFERS


@declare(paper=Interval(float), level=Interval(float, 0.0, 1.0, open="both"),
         reference=Interval(float, optional=True))
def verdict(paper: float, ours: Any, *, reference: float | None = None, level: float = 0.95,
            interval: tuple[float, float] | None = None) -> Verdict:
    """Grade one headline number against the t interval of our mean.

    * ``"reproduced within our interval"``: the paper's value lies in our ``level``
      confidence interval of the mean over seeds or repetitions (Student's t; with one value,
      only equality);
    * ``"same direction, other level"``: not reproduced, but the paper's value and our
      mean lie on the same side of ``reference`` (an effect's zero, or the value the
      paper compares against);
    * ``"differs"``: neither.

    ``interval`` replaces the t interval by one computed elsewhere (e.g. a bootstrap band
    around a single point value ``ours``); it must contain our mean. The report grades its
    rows with the rules made for each kind of number (:func:`single_run_verdict`,
    :func:`mean_verdict`, :func:`contrast_verdict`, :func:`tau_verdict`).

    Raises
    ------
    ValueError
        If ``paper`` or ``reference`` is not a finite number (a bool is not one), ``ours`` is
        not one sample of finite numbers (text, booleans, a mapping, or a table of several
        columns pooled into one sample are refused), ``level`` is not in (0, 1), or
        ``interval`` is not two finite numbers ``low <= high`` around our mean.
    """
    from scipy import stats

    values = _sample(ours)
    mean = float(values.mean())
    if interval is not None:
        if isinstance(interval, (str, bytes)) or np.ndim(interval) != 1 or len(interval) != 2:
            raise ValueError(f"interval must be two finite numbers (low, high), got {interval!r}")
        low, high = (check_real(v, "interval") for v in interval)
        if low > high:
            raise ValueError(f"interval must be two finite numbers, low <= high, got {interval!r}")
        if not low - 1e-12 <= mean <= high + 1e-12:
            raise ValueError(f"interval {interval!r} does not contain our mean {mean:.6g}: an "
                             "interval around another value cannot grade ours")
    elif values.size > 1 and values.std(ddof=1) > 0:
        low, high = stats.t.interval(level, values.size - 1, loc=mean, scale=stats.sem(values))
    else:
        low = high = mean
    return Verdict(_grade(paper, mean, low, high, reference), float(paper), mean, float(low),
                   float(high), int(values.size))


@declare(paper=Interval(float), level=Interval(float, 0.0, 1.0, open="both"),
         reference=Interval(float, optional=True))
def single_run_verdict(paper: float, ours: Any, *, reference: float | None = None,
                       level: float = 0.95) -> Verdict:
    """Grade a paper value from ONE run against our run-to-run spread.

    The paper's run is one more draw from the runs we made, so its value is compared with
    the ``level`` prediction interval of one new run, :math:`\\bar x \\pm t_{n-1}\\, s
    \\sqrt{1 + 1/n}`, not with the (narrower) interval of our mean: "reproduced within our
    interval" when it lies inside, "same direction, other level" when outside but on the
    same side of ``reference`` as our mean, "differs" otherwise. ``low``/``high`` of the
    result are the prediction interval.

    Raises
    ------
    ValueError
        If ``paper`` or ``reference`` is not a finite number, ``ours`` is not one sample of
        at least two finite numbers (one run has no spread), or ``level`` is not in (0, 1).

    Examples
    --------
    >>> runs = [0.70, 0.72, 0.71, 0.73, 0.69]
    >>> single_run_verdict(0.74, runs).verdict  # outside our mean's interval, not a run's
    'reproduced within our interval'
    >>> single_run_verdict(0.80, runs).verdict
    'differs'
    """
    from scipy import stats

    values = _sample(ours)
    if values.size < 2:
        raise ValueError(f"ours must hold at least two runs to give a run-to-run spread, got "
                         f"{values.size}")
    mean, sd = float(values.mean()), float(values.std(ddof=1))
    half = float(stats.t.ppf(0.5 + level / 2, values.size - 1)) * sd * np.sqrt(1 + 1 / values.size)
    return Verdict(_grade(paper, mean, mean - half, mean + half, reference), float(paper), mean,
                   mean - half, mean + half, int(values.size))


@declare(paper=Interval(float), paper_n=Interval(int, 2),
         paper_sd=Interval(float, 0.0, optional=True),
         level=Interval(float, 0.0, 1.0, open="both"), reference=Interval(float, optional=True))
def mean_verdict(paper: float, ours: Any, *, paper_n: int, paper_sd: float | None = None,
                 reference: float | None = None, level: float = 0.95) -> Verdict:
    """Grade a paper MEAN over ``paper_n`` seeds against ours: the interval of the difference.

    Both means carry their seeds' noise, so the paper's is compared with ours through the
    ``level`` interval of the difference ``ours - paper``, with standard error
    :math:`\\sqrt{s^2/n + s_p^2/n_p}` (``paper_sd`` :math:`s_p`, Welch's degrees of freedom;
    when the paper gives no spread, our own :math:`s` for both and :math:`n - 1`): "reproduced within our interval" when it holds
    0, "same direction, other level" when not but the paper's value and our mean lie on the
    same side of ``reference``, "differs" otherwise. ``low``/``high`` of the result are the
    values of the paper's mean that the rule accepts (our mean minus and plus the interval's
    half-width).

    Raises
    ------
    ValueError
        If ``paper``, ``reference`` or ``paper_sd`` is not a finite number (``paper_sd >=
        0``), ``paper_n`` not an int >= 2, ``ours`` not one sample of at least two finite
        numbers, or ``level`` not in (0, 1).

    Examples
    --------
    >>> seeds = [0.25, 0.30, 0.20, 0.28, 0.22]
    >>> v = mean_verdict(0.31, seeds, paper_n=5)
    >>> v.verdict, round(v.high - v.mean, 3)  # wider than our mean's t interval (0.051)
    ('reproduced within our interval', 0.072)
    >>> verdict(0.31, seeds).verdict  # that interval leaves the paper's own noise out
    'differs'
    """
    from scipy import stats

    values = _sample(ours)
    n = values.size
    if n < 2:
        raise ValueError(f"ours must hold at least two seeds to give a spread, got {n}")
    mean, var = float(values.mean()), float(values.var(ddof=1))
    var_p = var if paper_sd is None else float(paper_sd) ** 2
    a, b = var / n, var_p / paper_n
    if a + b == 0:
        low = high = mean
    else:
        # our s alone estimates both spreads: t with n - 1 degrees of freedom, exactly
        df = n - 1 if paper_sd is None else (a + b) ** 2 / (a ** 2 / (n - 1) + b ** 2 / (paper_n - 1))
        half = float(stats.t.ppf(0.5 + level / 2, df)) * np.sqrt(a + b)
        low, high = mean - half, mean + half
    return Verdict(_grade(paper, mean, low, high, reference), float(paper), mean, float(low),
                   float(high), int(n))


@declare(paper=Interval(float), alpha=Interval(float, 0.0, 1.0, open="both"))
def contrast_verdict(paper: float, ours: Any, other: Any, *, alpha: float = 0.05) -> ContrastVerdict:
    """Grade a difference the paper draws between two numbers, within repetitions.

    ``ours`` and ``other`` hold the two numbers per repetition (or seed), paired; a
    repetition is a win when ``ours > other``, a loss when ``ours < other``, a tie when equal
    (to 1e-12). A two-sided sign test (binomial on wins and losses, ties left out) decides:
    for a paper difference ``paper > 0`` (``< 0``), "reproduced within our interval" when the
    wins (losses) are significantly more at ``alpha``, "differs" when the other side is,
    "undetermined" when neither (our repetitions cannot separate the two); for ``paper ==
    0``, "reproduced" when no side is significant and "differs" otherwise. An ordering the
    paper shows (a above b) is the contrast ``paper = a - b``; ``wins / n`` is the share of
    repetitions that show it.

    Raises
    ------
    ValueError
        If ``paper`` is not a finite number, ``ours`` or ``other`` not one sample of finite
        numbers, the two of different lengths, or ``alpha`` not in (0, 1).

    Examples
    --------
    >>> contrast_verdict(0.4, [1, 1, 1, 1, 1, 1], [0.6] * 6).verdict  # 6 wins: p = 0.031
    'reproduced within our interval'
    >>> contrast_verdict(0.4, [1, 0.8, 0.8, 1, 0.6, 0.8], [0.8] * 6)[:1]  # 2 wins, 1 loss
    ('undetermined',)
    """
    from scipy import stats

    a, b = _sample(ours, "ours"), _sample(other, "other")
    if a.size != b.size:
        raise ValueError(f"ours and other must be paired (one value each per repetition), got "
                         f"{a.size} and {b.size} values")
    d = a - b
    wins, losses = int((d > 1e-12).sum()), int((d < -1e-12).sum())
    ties = int(d.size - wins - losses)
    p = 1.0 if wins + losses == 0 else float(
        stats.binomtest(wins, wins + losses, 0.5, alternative="two-sided").pvalue)
    if p >= alpha:
        label = REPRODUCED if paper == 0 else UNDETERMINED
    elif paper == 0:
        label = DIFFERS
    else:
        label = REPRODUCED if (wins > losses) == (paper > 0) else DIFFERS
    mean = float(np.round(d.mean(), 12))  # no -1e-17 where the differences cancel
    return ContrastVerdict(label, float(paper), mean, wins, ties, losses, p)


def _tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b along the last axis (models) of broadcastable arrays; NaN if constant."""
    i, j = np.triu_indices(x.shape[-1], k=1)
    sx, sy = np.sign(x[..., i] - x[..., j]), np.sign(y[..., i] - y[..., j])
    den = np.sqrt((sx != 0).sum(-1) * (sy != 0).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (sx * sy).sum(-1) / den, np.nan)


def _two_tables(truth: Any, test: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    for name, frame in (("truth", truth), ("test", test)):
        if not isinstance(frame, pd.DataFrame) or frame.empty:
            raise ValueError(f"{name} must be a non-empty DataFrame (one row per repetition, "
                             f"one column per model), got {type(frame).__name__}")
        values = as_real_array(frame.to_numpy(), name)
        if not np.isfinite(values).all():
            raise ValueError(f"{name} must hold finite numbers")
        if not frame.index.is_unique or not frame.columns.is_unique:
            raise ValueError(f"{name} must have one row per repetition and one column per "
                             "model (a label twice)")
    if set(truth.columns) != set(test.columns) or set(truth.index) != set(test.index):
        raise ValueError("truth and test must have the same models (columns) and repetitions "
                         f"(rows): got {list(truth.columns)} x {len(truth)} and "
                         f"{list(test.columns)} x {len(test)}")
    if not 3 <= truth.shape[1] <= 8:
        raise ValueError(f"truth must hold 3 to 8 models (every order of them is enumerated), "
                         f"got {truth.shape[1]}")
    if len(truth) < 2:
        raise ValueError(f"truth must hold at least two repetitions, got {len(truth)}")
    return truth.astype(float), test.loc[truth.index, truth.columns].astype(float)


@declare(paper=Interval(float, -1.0, 1.0, optional=True),
         alpha=Interval(float, 0.0, 1.0, open="both"))
def tau_verdict(paper: float | None, truth: pd.DataFrame, test: pd.DataFrame, *,
                alpha: float = 0.05, contrasts: tuple = ()) -> TauVerdict:
    """Grade Kendall's τ over a few models, counting only the pairs our ground truth separates.

    A pair of models is separated when a paired Wilcoxon test over the repetitions of
    ``truth`` rejects equality at ``alpha``. Every order of the models that agrees with all
    separated pairs is one D_gt could have: τ between the test set's means and each such
    order gives the range ``low``..``high``. "differs" when the paper's τ lies outside it;
    "undetermined" when it lies inside but the range holds other values too (D_gt cannot
    tell them apart); "reproduced within our interval" when it is the only value, and every
    contrast verdict in ``contrasts`` (from :func:`contrast_verdict`: the paper's comparisons
    that rest on this τ) is reproduced too; otherwise the weakest of them.

    Parameters
    ----------
    paper : float or None
        The paper's τ, in [-1, 1]; None where the paper states none (the result then has
        every number but the verdict, ``""``, and ``share_equal``, NaN).
    truth, test : pandas.DataFrame
        One row per repetition, one column per model (3 to 8 models): the metric on the
        ground truth and on the test set, the same rows and columns.
    alpha : float, default 0.05
        Level of the Wilcoxon tests.
    contrasts : tuple of str or ContrastVerdict, default ()
        Verdicts of the contrasts the paper draws on this τ.

    Returns
    -------
    TauVerdict

    Raises
    ------
    ValueError
        If ``paper`` is not in [-1, 1], ``alpha`` not in (0, 1), ``truth`` or ``test`` not a
        DataFrame of finite numbers with the same 3 to 8 models and at least two repetitions,
        or ``contrasts`` not a tuple of verdicts.

    Examples
    --------
    >>> truth = pd.DataFrame({"a": [1.0, 1.1, 0.9, 1.0, 1.2, 0.95], "b": [2.0, 2.1, 2.2, 1.9, 2.0, 2.05],
    ...                       "c": [2.02, 2.12, 2.18, 1.95, 1.98, 2.0]})  # b and c: a tie
    >>> test = truth + [0, 0.5, 0]  # b above c on the test set
    >>> v = tau_verdict(1.0, truth, test)
    >>> v.verdict, v.separated, round(v.low, 3), v.high
    ('undetermined', 2, 0.333, 1.0)
    """
    from scipy import stats

    truth, test = _two_tables(truth, test)
    if not isinstance(contrasts, tuple) or not all(
            (c.verdict if isinstance(c, ContrastVerdict) else c) in VERDICTS for c in contrasts):
        raise ValueError(f"contrasts must be a tuple of verdicts (contrast_verdict), got "
                         f"{contrasts!r}")
    models = list(truth.columns)
    order = {}  # separated pair (i, j) -> +1 when model i is above j on the truth
    for i, j in itertools.combinations(range(len(models)), 2):
        d = truth.iloc[:, i].to_numpy() - truth.iloc[:, j].to_numpy()
        if np.all(np.abs(d) <= 1e-15):
            continue
        if stats.wilcoxon(d).pvalue < alpha:
            order[(i, j)] = 1 if d.mean() > 0 else -1
    means = test.mean().to_numpy()
    ranks = np.empty((0, len(models)))
    for perm in itertools.permutations(range(len(models))):
        rank = np.empty(len(models))
        rank[list(perm)] = np.arange(len(models), 0, -1)  # perm[0] on top
        if all(np.sign(rank[i] - rank[j]) == s for (i, j), s in order.items()):
            ranks = np.vstack([ranks, rank])
    taus = _tau_b(means, ranks)  # NaN only when the test set's means are all equal
    low, high = float(np.nanmin(taus, initial=np.inf)), float(np.nanmax(taus, initial=-np.inf))
    if not np.isfinite(low):
        low = high = float("nan")
    on_means = float(_tau_b(means, truth.mean().to_numpy()))
    sep = [s * np.sign(means[i] - means[j]) for (i, j), s in order.items()]
    tau_sep = float(np.mean(sep)) if sep else float("nan")
    per_rep = tuple(float(t) for t in _tau_b(test.to_numpy(), truth.to_numpy()))
    pairs = len(models) * (len(models) - 1) // 2
    if paper is None:
        return TauVerdict("", float("nan"), on_means, float(low), float(high), len(truth),
                          len(order), pairs, tau_sep, float("nan"), per_rep)
    share = float(np.mean([abs(t - paper) < 1e-9 for t in per_rep]))
    if np.isnan(low):
        label = UNDETERMINED  # the test set does not order the models at all
    elif not low - 1e-9 <= paper <= high + 1e-9:
        label = DIFFERS
    elif high - low > 1e-9:
        label = UNDETERMINED
    else:
        label = REPRODUCED
    labels = [label] + [c.verdict if isinstance(c, ContrastVerdict) else c for c in contrasts]
    label = VERDICTS[max(VERDICTS.index(x) for x in labels)]
    return TauVerdict(label, float(paper), on_means, float(low), float(high), len(truth),
                      len(order), pairs, tau_sep, share, per_rep)
