r"""The replication report's verdict rules: one decision against a declared margin (private).

Re-exported by :mod:`recbias_tutorial._findings` and
:mod:`recbias_tutorial.replications.report`. Every rule builds an interval of what our runs
say about the paper's number, then decides as an equivalence test (TOST) does, against the
margin ``m`` that the row declares (the smallest difference that matters for the number):

* **reproduced**: our interval lies inside ``paper ± m``;
* **differs**: it lies entirely outside ``paper ± m`` (qualified **same direction, other
  level** when the paper's number and our mean lie on the same side of a reference);
* **undetermined**: neither; the result's ``why`` says why (an interval wider than ``2m``
  cannot lie inside, however close its centre; an interval straddling an edge).

An interval too wide to decide is never "reproduced", and widening it never turns
"undetermined" into a decision nor "reproduced" into "differs". The intervals, per kind of
number:

* :func:`verdict`: our mean's t interval (or an interval computed elsewhere);
* :func:`single_run_verdict`: a paper value from one run: the prediction interval of one
  more run of ours, over the units that are independent (e.g. splits, not split × draw runs);
* :func:`mean_verdict`: a paper mean over seeds: the interval of the difference of two means;
* :func:`contrast_verdict`: a difference or an ordering the paper draws: the t interval of
  the per-repetition difference, ties counted as zeros;
* :func:`tau_verdict` (in :mod:`recbias_tutorial._tau_verdict`): Kendall's τ over a few
  models: the τ values attainable over the orders consistent with the truth and the test set.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._params import Interval, declare
from ._validation import as_real_array, check_real

#: The verdict scale of the replication report, from agreement to disagreement: the paper's
#: number reproduced within the margin, "same direction, other level" (it differs, on the same
#: side of a reference as ours), "undetermined" (our evidence cannot decide) and "differs".
VERDICTS: tuple[str, ...] = ("reproduced within our interval", "same direction, other level",
                             "undetermined", "differs")
REPRODUCED, SAME_DIRECTION, UNDETERMINED, DIFFERS = VERDICTS

#: Floating-point slack of the interval comparisons (a τ of 0.6 computed as 1 - 0.4).
_EPS = 1e-9


class Verdict(NamedTuple):
    """One headline number graded: the paper's value against our interval and its margin.

    ``low``/``high`` are the interval compared with ``paper ± margin``; ``n`` the
    independent units it rests on (seeds, splits, repetitions); ``why`` what decided.
    """

    verdict: str
    paper: float
    mean: float
    low: float
    high: float
    n: int
    margin: float
    why: str


class ContrastVerdict(NamedTuple):
    """A difference (or ordering) the paper draws, graded on the per-repetition difference.

    ``mean``, ``low``, ``high``: our mean difference and its t interval (ties count as
    zeros); ``wins``/``ties``/``losses``: the repetitions where ``ours`` is above, equal to,
    below ``other`` (a description: the interval decides).
    """

    verdict: str
    paper: float
    mean: float
    low: float
    high: float
    n: int
    wins: int
    ties: int
    losses: int
    margin: float
    why: str


def _sample(ours: Any, name: str = "ours", *, at_least: int = 2, what: str = "runs",
            sort: bool = True) -> np.ndarray:
    """One sample of finite numbers (one per seed or repetition); sorted unless paired, so
    that its sums do not depend on the order of the repetitions."""
    if ours is None:
        raise ValueError(f"{name} must hold finite values (one per seed or repetition), got None")
    values = as_real_array(ours, name)
    if values.ndim > 2 or (values.ndim == 2 and min(values.shape) > 1):
        raise ValueError(f"{name} must be one sample (one value per seed or repetition), got a "
                         f"table of shape {values.shape}: grade each column on its own")
    values = values.ravel()
    if values.size == 0 or not np.isfinite(values).all():
        raise ValueError(f"{name} must hold finite values (one per seed or repetition)")
    if values.size < at_least:
        raise ValueError(f"{name} must hold at least {at_least} {what} to give a spread, got "
                         f"{values.size}")
    return np.sort(values) if sort else values


def _units(groups: Any, n: int) -> int:
    """How many independent units (e.g. splits) label the ``n`` runs."""
    if isinstance(groups, (str, bytes)) or np.ndim(groups) != 1 or len(groups) != n:
        raise ValueError(f"groups must give one label per run ({n}), got {groups!r:.60}")
    labels = list(groups)
    if any(g is None or (isinstance(g, float) and not np.isfinite(g)) for g in labels):
        raise ValueError("groups must not hold None or NaN labels")
    units = len(set(labels))
    if units < 2:
        raise ValueError(f"groups must hold at least two units (e.g. splits), got {units}")
    return units


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) >= 0.01 or x == 0 else f"{x:.2g}"


def decide(paper: float, low: float, high: float, margin: float, *, mean: float | None = None,
           reference: float | None = None) -> tuple[str, str]:
    """The one decision: ``[low, high]`` against ``paper ± margin``; (verdict, why).

    Monotone in the interval: a wider ``[low, high]`` never gives a stronger decision.
    """
    lo, hi = paper - margin, paper + margin
    shown = f"our interval [{_fmt(low)}, {_fmt(high)}]"
    band = f"the paper's {_fmt(paper)} ± {_fmt(margin)}"
    if lo - _EPS <= low and high <= hi + _EPS:
        return REPRODUCED, f"{shown} lies inside {band}"
    if high < lo - _EPS or low > hi + _EPS:
        why = f"{shown} lies entirely {'below' if high < lo - _EPS else 'above'} {band}"
        if reference is not None and mean is not None \
                and np.sign(paper - reference) == np.sign(mean - reference) != 0:
            return SAME_DIRECTION, why + f", on the same side of {_fmt(reference)} as ours"
        return DIFFERS, why
    if high - low > 2 * margin + _EPS:
        return UNDETERMINED, (f"{shown} is {_fmt(high - low)} wide, wider than 2m = "
                              f"{_fmt(2 * margin)}: it cannot lie inside {band}")
    return UNDETERMINED, f"{shown} straddles an edge of {band}"


def _t(level: float, df: float) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, df))


def _too_few(why: str, label: str, n: int, what: str) -> str:
    """The reason, with the number of units when it is what makes the interval wide."""
    if label == UNDETERMINED and "wider than" in why:
        return why + f" (with {n} {what})"
    return why


@declare(paper=Interval(float), margin=Interval(float, 0.0, open="low"),
         level=Interval(float, 0.0, 1.0, open="both"), reference=Interval(float, optional=True))
def verdict(paper: float, ours: Any, *, margin: float, reference: float | None = None,
            level: float = 0.95, interval: tuple[float, float] | None = None) -> Verdict:
    """Grade one headline number against the t interval of our mean, within ``margin``.

    The ``level`` t interval of our mean over seeds or repetitions is compared with
    ``paper ± margin``: inside, "reproduced within our interval"; entirely
    outside, "differs" ("same direction, other level" when the paper's value and our mean lie
    on the same side of ``reference``); otherwise "undetermined". ``interval`` replaces the t
    interval by one computed elsewhere (e.g. a bootstrap band around one value); it must
    contain our mean.

    Raises
    ------
    ValueError
        If ``paper`` or ``reference`` is not a finite number (a bool is not one), ``margin``
        not a finite number > 0, ``ours`` not one sample of finite numbers (at least two
        without ``interval``: one value has no spread), ``level`` not in (0, 1), or
        ``interval`` not two finite numbers ``low <= high`` around our mean.

    Examples
    --------
    >>> seeds = [0.60, 0.62, 0.64, 0.61, 0.63]
    >>> verdict(0.62, seeds, margin=0.05).verdict
    'reproduced within our interval'
    >>> verdict(0.62, seeds, margin=0.01).verdict  # the interval is wider than 2m
    'undetermined'
    """
    from scipy import stats

    values = _sample(ours, at_least=1 if interval is not None else 2, what="seeds")
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
    elif values.std(ddof=1) > 0:
        low, high = stats.t.interval(level, values.size - 1, loc=mean, scale=stats.sem(values))
    else:
        low = high = mean
    label, why = decide(paper, low, high, margin, mean=mean, reference=reference)
    return Verdict(label, float(paper), mean, float(low), float(high), int(values.size),
                   float(margin), _too_few(why, label, values.size, "seeds"))


@declare(paper=Interval(float), margin=Interval(float, 0.0, open="low"),
         level=Interval(float, 0.0, 1.0, open="both"), reference=Interval(float, optional=True))
def single_run_verdict(paper: float, ours: Any, *, margin: float, reference: float | None = None,
                       level: float = 0.95, groups: Any = None) -> Verdict:
    """Grade a paper value from ONE run against where one more run of ours would fall.

    The interval is the ``level`` prediction interval of one new run,
    :math:`\\bar x \\pm t_{g-1}\\, s \\sqrt{1 + 1/g}`, with :math:`s` the spread of our runs
    and :math:`g` the independent units they come from: the runs themselves, or the distinct
    labels of ``groups`` (e.g. 5 splits × 5 negative draws are 25 runs but 5 units: the
    draws of one split share its split). With ``groups`` the interval is conservative: the
    mean is known no better than over ``g`` units, and :math:`s` is trusted with ``g - 1``
    degrees of freedom. It is then compared with ``paper ± margin``.

    Raises
    ------
    ValueError
        If ``paper`` or ``reference`` is not a finite number, ``margin`` not > 0, ``ours``
        not one sample of at least two finite numbers (one run has no spread), ``groups`` not
        one label per run naming at least two units, or ``level`` not in (0, 1).

    Examples
    --------
    >>> runs = [0.70, 0.72, 0.71, 0.73, 0.69]
    >>> single_run_verdict(0.71, runs, margin=0.05).verdict
    'reproduced within our interval'
    >>> single_run_verdict(0.80, runs, margin=0.01).verdict
    'differs'
    >>> single_run_verdict(0.74, runs, margin=0.005).verdict  # too wide for 2m = 0.01
    'undetermined'
    """
    values = _sample(ours)
    n = values.size if groups is None else _units(groups, values.size)
    mean, sd = float(values.mean()), float(values.std(ddof=1))
    half = _t(level, n - 1) * sd * np.sqrt(1 + 1 / n)
    label, why = decide(paper, mean - half, mean + half, margin, mean=mean, reference=reference)
    what = "runs" if groups is None else f"units of {values.size} runs"
    return Verdict(label, float(paper), mean, mean - half, mean + half, int(n), float(margin),
                   _too_few(why, label, n, what))


@declare(paper=Interval(float), paper_n=Interval(int, 2), margin=Interval(float, 0.0, open="low"),
         paper_sd=Interval(float, 0.0, optional=True),
         level=Interval(float, 0.0, 1.0, open="both"), reference=Interval(float, optional=True))
def mean_verdict(paper: float, ours: Any, *, paper_n: int, margin: float,
                 paper_sd: float | None = None, reference: float | None = None,
                 level: float = 0.95) -> Verdict:
    """Grade a paper MEAN over ``paper_n`` seeds: the interval of the difference of two means.

    Both means carry their seeds' noise: the ``level`` interval of ``ours - paper`` has
    standard error :math:`\\sqrt{s^2/n + s_p^2/n_p}` (``paper_sd`` :math:`s_p`, Welch's
    degrees of freedom; when the paper gives no spread, our own :math:`s` for both and
    :math:`n - 1`). The paper's mean is reproduced when that interval lies inside ``± margin``
    (an equivalence test), differs when it lies entirely outside; ``low``/``high`` of the
    result are our mean minus and plus the interval's half-width, compared with
    ``paper ± margin``.

    Raises
    ------
    ValueError
        If ``paper``, ``reference`` or ``paper_sd`` is not a finite number (``paper_sd >=
        0``), ``margin`` not > 0, ``paper_n`` not an int >= 2, ``ours`` not one sample of at
        least two finite numbers, or ``level`` not in (0, 1).

    Examples
    --------
    >>> seeds = [0.25, 0.30, 0.20, 0.28, 0.22]
    >>> v = mean_verdict(0.25, seeds, paper_n=5, margin=0.1)
    >>> v.verdict, round(v.high - v.mean, 3)
    ('reproduced within our interval', 0.072)
    >>> mean_verdict(0.25, seeds, paper_n=5, margin=0.05).verdict  # 0.144 wide > 2m
    'undetermined'
    """
    values = _sample(ours, what="seeds")
    n = values.size
    mean, var = float(values.mean()), float(values.var(ddof=1))
    var_p = var if paper_sd is None else float(paper_sd) ** 2
    a, b = var / n, var_p / paper_n
    if a + b == 0:
        low = high = mean
    else:
        # our s alone estimates both spreads: t with n - 1 degrees of freedom, exactly
        df = n - 1 if paper_sd is None else (a + b) ** 2 / (a ** 2 / (n - 1) + b ** 2 / (paper_n - 1))
        half = _t(level, df) * np.sqrt(a + b)
        low, high = mean - half, mean + half
    label, why = decide(paper, low, high, margin, mean=mean, reference=reference)
    return Verdict(label, float(paper), mean, float(low), float(high), int(n), float(margin),
                   _too_few(why, label, n, "seeds"))


@declare(paper=Interval(float), margin=Interval(float, 0.0, open="low"),
         level=Interval(float, 0.0, 1.0, open="both"), reference=Interval(float, optional=True))
def contrast_verdict(paper: float, ours: Any, other: Any, *, margin: float,
                     reference: float | None = None, level: float = 0.95) -> ContrastVerdict:
    """Grade a difference the paper draws between two numbers, within repetitions.

    ``ours`` and ``other`` hold the two numbers per repetition (or seed), paired. The
    per-repetition difference ``ours - other`` (a tie is a difference of 0, within 1e-12)
    gives our mean difference and its ``level`` t interval (a point when every repetition
    gives the same difference), compared with ``paper ± margin``: a gain
    absent in every repetition differs from a claimed gain, and a claimed 0 is reproduced
    only when our difference is shown to lie within ``± margin``. An ordering the paper
    shows (a above b) is the contrast ``paper = a - b``; ``reference=0.0`` qualifies a
    "differs" whose sign is the paper's as "same direction, other level".

    Raises
    ------
    ValueError
        If ``paper`` or ``reference`` is not a finite number, ``margin`` not > 0, ``ours``
        or ``other`` not one sample of at least two finite numbers, the two of different
        lengths, or ``level`` not in (0, 1).

    Examples
    --------
    >>> contrast_verdict(0.4, [1.0] * 6, [0.6] * 6, margin=0.2).verdict  # +0.4 every time
    'reproduced within our interval'
    >>> contrast_verdict(0.4, [0.8] * 10, [0.8] * 10, margin=0.2).verdict  # ten ties
    'differs'
    >>> contrast_verdict(0.0, [10.0] * 8 + [-10.0] * 2, [0.0] * 10, margin=1.0)[:1]
    ('undetermined',)
    """
    a = _sample(ours, "ours", at_least=1, sort=False)
    b = _sample(other, "other", at_least=1, sort=False)
    if a.size != b.size:
        raise ValueError(f"ours and other must be paired (one value each per repetition), got "
                         f"{a.size} and {b.size} values")
    _sample(a, "ours", what="repetitions")  # one repetition has no spread
    d = a - b
    d = np.sort(np.where(np.abs(d) <= 1e-12, 0.0, d))  # a tie is a zero difference
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    mean = float(np.round(d.mean(), 12))  # no -1e-17 where the differences cancel
    sd = float(d.std(ddof=1))
    half = _t(level, d.size - 1) * sd / np.sqrt(d.size) if sd > 0 else 0.0
    low, high = mean - half, mean + half
    label, why = decide(paper, low, high, margin, mean=mean, reference=reference)
    return ContrastVerdict(label, float(paper), mean, float(low), float(high), int(d.size), wins,
                           int(d.size - wins - losses), losses, float(margin),
                           _too_few(why, label, d.size, "repetitions"))
