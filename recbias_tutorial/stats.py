"""Statistics used to compare evaluation protocols: thin, validated wrappers over scipy.

- :func:`rating_distribution`, :func:`kl_divergence` -- how far a test set's rating-value
  distribution is from a MAR one (Carraro & Bridge report KL(P || Q) of rating values).
- :func:`kendall_tau` -- agreement of two model rankings (tau-b), e.g. an estimator's ranking
  of models vs the ground-truth ranking; dicts/Series are aligned by model name.
- :func:`paired_wilcoxon` -- paired two-sided Wilcoxon signed-rank test.
- :func:`steiger_test` -- do two dependent correlations sharing a variable differ?
  (Williams' T2, the form recommended by Steiger, 1980.)
- :func:`ranking_agreement` -- tau and r of many evaluation methods against a truth column.
- :func:`reversal_pairs` -- model pairs whose order reverses inside strata (Simpson's paradox).
- :func:`user_bootstrap` -- percentile-bootstrap intervals of means over users.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from itertools import permutations

import numpy as np
import pandas as pd
import scipy.stats

from ._params import Interval, Seed, declare
from ._validation import as_generator, as_real_array, check_column_name, check_frame

__all__ = ["kendall_tau", "kl_divergence", "paired_wilcoxon", "rating_distribution",
           "ranking_agreement", "reversal_pairs", "steiger_test", "user_bootstrap"]


def _rating_values(ratings: Any, name: str) -> np.ndarray:
    """Ratings as a flat float array: real, finite, non-empty."""
    raw = np.asarray(ratings)
    if raw.dtype == bool or not (np.issubdtype(raw.dtype, np.integer)
                                 or np.issubdtype(raw.dtype, np.floating)):
        raise ValueError(f"{name} must hold real rating values, got dtype {raw.dtype}")
    values = raw.astype(float).ravel()
    if values.size == 0:
        raise ValueError(f"{name} is empty")
    if np.isnan(values).any():
        raise ValueError(f"{name} contains NaN")
    if not np.isfinite(values).all():
        raise ValueError(f"{name} contains infinite values")
    return values


def _rating_counts(ratings: Any, support: np.ndarray, name: str) -> np.ndarray:
    values = _rating_values(ratings, name)
    outside = np.setdiff1d(values, support)
    if outside.size:
        raise ValueError(f"{name} has values outside support: {outside[:5].tolist()}")
    return np.array([np.count_nonzero(values == s) for s in support], dtype=float)


def _support(support: Any, **arrays: Any) -> np.ndarray:
    if support is None:
        return np.unique(np.concatenate([_rating_values(a, name) for name, a in arrays.items()]))
    return np.unique(_rating_values(support, "support"))


def rating_distribution(ratings: Any, support: Any = None) -> pd.Series:
    """Share of each rating value.

    Parameters
    ----------
    ratings : array-like or Series
        Rating values.
    support : array-like, optional
        The rating values to report (e.g. ``[1, 2, 3, 4, 5]``); values with no rating get
        share 0. Default: the distinct values of ``ratings``.

    Returns
    -------
    pandas.Series
        Shares summing to 1, indexed by rating value (sorted), named ``"share"``.

    Raises
    ------
    ValueError
        If ``ratings`` is empty, contains NaN or has values outside ``support``, or
        ``support`` is empty.

    See Also
    --------
    recbias_tutorial.stats.kl_divergence : distance between two such distributions.
    recbias_tutorial.plots.rating_distributions : bar chart of several distributions.

    Examples
    --------
    >>> rating_distribution([5, 4, 5, 1], support=[1, 2, 3, 4, 5]).tolist()
    [0.25, 0.0, 0.0, 0.25, 0.5]
    """
    sup = _support(support, ratings=ratings)
    counts = _rating_counts(ratings, sup, "ratings")
    return pd.Series(counts / counts.sum(), index=pd.Index(sup, name="rating"), name="share")


@declare(smoothing=Interval(float, 0.0), base=Interval(float, 0.0, open="low", optional=True))
def kl_divergence(p_ratings: Any, q_ratings: Any, *, support: Any = None,
                  smoothing: float = 1.0, base: float | None = None) -> float:
    """KL(P || Q) between the rating-value distributions of two sets of ratings.

    Each distribution is estimated with additive smoothing over the support:
    ``P(r) = (count_P(r) + smoothing) / (n_P + smoothing * |support|)`` (same for Q), so an
    empty bin does not make the divergence infinite. ``smoothing=0`` gives the raw empirical
    shares (and ``inf`` when Q has an empty bin where P has mass).

    Parameters
    ----------
    p_ratings, q_ratings : array-like or Series
        Ratings drawn from P (e.g. a test set) and Q (e.g. the MAR ratings).
    support : array-like, optional
        Rating values; default the union of the values in both inputs.
    smoothing : float, default 1.0
        Pseudo-count added to every bin (Laplace); must be >= 0.
    base : float, optional
        Logarithm base (default natural log, i.e. nats), as in :func:`scipy.stats.entropy`.

    Returns
    -------
    float
        ``scipy.stats.entropy(P, Q)`` of the smoothed distributions: 0 when both inputs have the
        same count in every bin, > 0 whenever the smoothed distributions differ.

    Raises
    ------
    ValueError
        If ``smoothing`` is not a finite number >= 0; if ``base`` is given but is not a
        finite number > 0 and != 1; if ``support`` is given but empty; if ``p_ratings`` or
        ``q_ratings`` is empty, contains NaN or has values outside ``support``.

    See Also
    --------
    recbias_tutorial.stats.rating_distribution : the (unsmoothed) shares themselves.
    recbias_tutorial.replications.carraro2022.run_repetition : reports KL to the MAR set.

    Examples
    --------
    >>> round(kl_divergence([5, 5, 4, 1], [1, 2, 3, 4, 5], support=[1, 2, 3, 4, 5]), 4)
    0.0865
    >>> kl_divergence([1, 2, 2], [1, 2, 2])
    0.0
    """
    if base == 1.0:  # declared > 0; 1 is no logarithm base either
        raise ValueError("base must be a logarithm base > 0 and != 1, got 1")
    sup = _support(support, p_ratings=p_ratings, q_ratings=q_ratings)
    p = _rating_counts(p_ratings, sup, "p_ratings") + smoothing
    q = _rating_counts(q_ratings, sup, "q_ratings") + smoothing
    return float(scipy.stats.entropy(p / p.sum(), q / q.sum(), base=base))


def _paired(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two equal-length float arrays; mappings/Series are aligned by key (order of ``x``)."""
    x_keyed, y_keyed = isinstance(x, (Mapping, pd.Series)), isinstance(y, (Mapping, pd.Series))
    if x_keyed != y_keyed:
        raise ValueError("x and y must both be dict/Series (aligned by key) or both array-like")
    if x_keyed:
        xs = pd.Series(as_real_array(pd.Series(x).to_numpy(), "x"), index=pd.Series(x).index)
        ys = pd.Series(as_real_array(pd.Series(y).to_numpy(), "y"), index=pd.Series(y).index)
        for name, s in (("x", xs), ("y", ys)):
            if not s.index.is_unique:
                raise ValueError(f"{name} has duplicate keys")
        only_x, only_y = xs.index.difference(ys.index), ys.index.difference(xs.index)
        if len(only_x) or len(only_y):
            raise ValueError(f"x and y must have the same keys; only in x: {list(only_x)}, "
                             f"only in y: {list(only_y)}")
        xa, ya = xs.to_numpy(), ys.reindex(xs.index).to_numpy()
    else:
        xa, ya = as_real_array(x, "x"), as_real_array(y, "y")
        if xa.ndim != 1 or ya.ndim != 1:
            raise ValueError("x and y must be one-dimensional")
        if xa.shape != ya.shape:
            raise ValueError(f"x and y must have the same length, got {xa.size} and {ya.size}")
    for name, arr in (("x", xa), ("y", ya)):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} has NaN or infinite values; drop the models without a "
                             "value first")
    return xa, ya


def kendall_tau(x: Any, y: Any) -> tuple[float, float]:
    """Kendall's tau-b between two paired scores (:func:`scipy.stats.kendalltau`).

    Parameters
    ----------
    x, y : dict, Series or array-like
        Two dicts/Series of model -> metric (aligned by key; keys must match) or two arrays
        of equal length (aligned by position).

    Returns
    -------
    (tau, p_value) : tuple of float
        tau-b and the two-sided p-value of scipy; both NaN when ``x`` or ``y`` is constant
        (tau-b is undefined without at least two distinct values on each side).

    Raises
    ------
    ValueError
        If one input is keyed (dict/Series) and the other is not; if keyed inputs have
        duplicate or different keys; if array inputs are not 1-D or differ in length; if
        there are fewer than 2 pairs.

    See Also
    --------
    recbias_tutorial.stats.ranking_agreement : tau and r of many methods against a truth.
    recbias_tutorial.stats.steiger_test : compare two correlations with the truth.

    Examples
    --------
    >>> truth = {"pop": 0.10, "mf": 0.30, "bpr": 0.20}
    >>> estimate = {"bpr": 0.25, "mf": 0.40, "pop": 0.05}
    >>> kendall_tau(truth, estimate)[0]
    1.0
    """
    xa, ya = _paired(x, y)
    if xa.size < 2:
        raise ValueError(f"x and y need at least 2 pairs, got {xa.size}")
    res = scipy.stats.kendalltau(xa, ya, variant="b")
    return float(res.statistic), float(res.pvalue)


def paired_wilcoxon(x: Any, y: Any, **kw: Any) -> tuple[float, float]:
    """Two-sided Wilcoxon signed-rank test of paired values (:func:`scipy.stats.wilcoxon`).

    Parameters
    ----------
    x, y : dict, Series or array-like
        Paired values (e.g. per-user metrics of two models), aligned as in :func:`kendall_tau`.
    **kw
        Passed to :func:`scipy.stats.wilcoxon`; ``alternative`` defaults to ``"two-sided"``.

    Returns
    -------
    (statistic, p_value) : tuple of float
        The signed-rank statistic and the p-value of scipy.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` cannot be paired (as in :func:`kendall_tau`: one keyed and one
        not, duplicate or different keys, not 1-D, different lengths), or scipy refuses the
        input (e.g. an unknown keyword value).

    See Also
    --------
    recbias_tutorial.replications.carraro2022.wilcoxon_vs_truth : the test over seeds.
    recbias_tutorial.stats.user_bootstrap : intervals of per-user means instead of a test.

    Examples
    --------
    >>> stat, p = paired_wilcoxon([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.1, 3.2, 4.3, 5.4, 6.5, 7.6])
    >>> stat, round(p, 4)
    (0.0, 0.0312)
    """
    xa, ya = _paired(x, y)
    kw.setdefault("alternative", "two-sided")
    res = scipy.stats.wilcoxon(xa, ya, **kw)
    return float(res.statistic), float(res.pvalue)


def steiger_test(r_xy: Any, r_xz: Any, r_yz: Any, n: Any) -> tuple[Any, Any]:
    """Test whether two dependent correlations sharing variable x differ (r_xy vs r_xz).

    Williams' (1959) T2, the test Steiger (1980, eq. 7) recommends::

        t = (r_xy - r_xz) * sqrt((n - 1) (1 + r_yz)
              / (2 (n - 1) / (n - 3) |R| + rbar**2 (1 - r_yz)**3))

    with ``|R| = 1 - r_xy**2 - r_xz**2 - r_yz**2 + 2 r_xy r_xz r_yz`` (determinant of the
    correlation matrix) and ``rbar = (r_xy + r_xz) / 2``; under H0 (rho_xy = rho_xz) t follows
    Student's t with n - 3 degrees of freedom. In this course x is the ground truth and y, z
    two estimators (or x a protocol's scores and y, z two models).

    Parameters
    ----------
    r_xy, r_xz, r_yz : float or array-like
        Sample correlations in [-1, 1]; arrays broadcast (vectorised Monte Carlo).
    n : int or array-like
        Sample size (> 3) the correlations were computed on.

    Returns
    -------
    (statistic, p_value)
        t statistic and two-sided p-value (floats for scalar input, else arrays).

    Raises
    ------
    ValueError
        A correlation outside [-1, 1], ``n <= 3``, or a correlation matrix that is not
        positive semi-definite (``|R| < 0``).

    See Also
    --------
    recbias_tutorial.stats.ranking_agreement : the correlations of each method with the truth.
    recbias_tutorial.replications.jadidinejad2021.steiger : this test over a model zoo.

    Examples
    --------
    >>> t, p = steiger_test(0.3, 0.4, 0.5, 100)  # depcor / cocor example: t = -1.0767
    >>> round(t, 4), round(p, 4)
    (-1.0767, 0.2843)
    """
    rs = {}
    for name, r in (("r_xy", r_xy), ("r_xz", r_xz), ("r_yz", r_yz)):
        arr = as_real_array(r, name)
        if not np.all(np.abs(arr) <= 1):
            raise ValueError(f"{name} must lie in [-1, 1] (a correlation), got {r!r}")
        rs[name] = arr
    a, b, c = rs["r_xy"], rs["r_xz"], rs["r_yz"]
    n_arr = as_real_array(n, "n")
    if not np.all(np.isfinite(n_arr)) or np.any(n_arr != np.round(n_arr)):
        raise ValueError(f"n must be a finite whole number of observations, got {n!r}")
    if not np.all(n_arr > 3):
        raise ValueError(f"n must be > 3 (the t statistic has n - 3 degrees of freedom), got {n!r}")
    try:
        a, b, c, n_arr = np.broadcast_arrays(a, b, c, n_arr)
    except ValueError:
        raise ValueError("r_xy, r_xz, r_yz and n must broadcast to one shape, got shapes "
                         f"{a.shape}, {b.shape}, {c.shape} and {n_arr.shape}") from None
    det = 1 - a**2 - b**2 - c**2 + 2 * a * b * c
    if np.any(det < -1e-12):
        raise ValueError("r_xy, r_xz, r_yz do not form a positive semi-definite correlation "
                         f"matrix (|R| = {np.min(det):.3g} < 0)")
    det = np.maximum(det, 0.0)
    num = (a - b) * np.sqrt((n_arr - 1) * (1 + c))
    den = np.sqrt(2 * (n_arr - 1) / (n_arr - 3) * det + ((a + b) / 2) ** 2 * (1 - c) ** 3)
    with np.errstate(divide="ignore", invalid="ignore"):
        # den == 0 only in degenerate matrices; then num == 0 (e.g. y == z) gives t = 0.
        degenerate = np.where(num == 0, 0.0, np.sign(num) * np.inf)
        t = np.where(den > 0, num / np.where(den > 0, den, 1.0), degenerate)
    p = 2 * scipy.stats.t.sf(np.abs(t), n_arr - 3)
    if t.ndim == 0:
        return float(t), float(p)
    return t, p


def ranking_agreement(table: pd.DataFrame, *, truth: str) -> pd.DataFrame:
    """Kendall's tau-b and Pearson's r of every column of ``table`` against column ``truth``.

    ``table`` holds one row per model and one column per evaluation method; each method's
    ranking of the models is compared with the ranking by ``truth``. Models with a missing
    value in a column (e.g. an empty stratum) are left out of that column's row.

    Parameters
    ----------
    table : pandas.DataFrame
        Models as rows, evaluation methods as columns (one of them ``truth``).
    truth : str
        The column holding the reference (ground-truth) values.

    Returns
    -------
    pandas.DataFrame
        One row per other column, indexed by column name: ``tau``, ``tau_p`` (two-sided
        p-value of tau), ``pearson`` and ``n_models`` (NaN statistics with fewer than 2).

    Raises
    ------
    ValueError
        If ``table`` is not a DataFrame or has no column ``truth``.

    See Also
    --------
    kendall_tau : the statistic for two rankings.
    steiger_test : is one method's correlation with the truth higher than another's?

    Examples
    --------
    >>> table = pd.DataFrame({"truth": [0.1, 0.2, 0.3, 0.4], "x": [1.0, 3.0, 2.0, 4.0]},
    ...                      index=list("abcd"))
    >>> ranking_agreement(table, truth="truth").round(3).to_dict("index")
    {'x': {'tau': 0.667, 'tau_p': 0.333, 'pearson': 0.8, 'n_models': 4}}
    """
    check_frame(table, "table", [check_column_name(truth, "truth")])
    x_all = table[truth]
    rows = {}
    for col in table.columns:
        if col == truth:
            continue
        x, y = x_all, table[col]
        ok = x.notna() & y.notna()
        if ok.sum() >= 2:
            tau, p = kendall_tau(x[ok].to_numpy(float), y[ok].to_numpy(float))
            r = float(np.corrcoef(x[ok].to_numpy(float), y[ok].to_numpy(float))[0, 1])
        else:
            tau = p = r = float("nan")
        rows[col] = {"tau": tau, "tau_p": p, "pearson": r, "n_models": int(ok.sum())}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["tau", "tau_p", "pearson", "n_models"])


def reversal_pairs(table: pd.DataFrame, *, overall: str, strata: Sequence[str]) -> pd.DataFrame:
    """Ordered model pairs (a, b) with a ahead overall, and how b fares in every stratum.

    For every pair with ``table[overall][a] > table[overall][b]`` the result has
    ``d_<overall>`` = a − b (> 0) and ``d_<stratum>`` = a − b in each stratum,
    ``n_reversed`` = number of strata where b is strictly ahead, and ``margin`` =
    ``min`` over strata of (b − a): positive exactly when the order reverses in *every*
    stratum (Simpson's paradox). Rows are sorted by ``margin``, largest first, so the first
    row is either the most pronounced paradox or, when there is none, the closest case.

    Parameters
    ----------
    table : DataFrame indexed by model, one column per evaluation
        Metric values of each model (unique index).
    overall : str
        Column of the pooled evaluation.
    strata : sequence of str
        Columns of the per-stratum evaluations.

    Returns
    -------
    pandas.DataFrame
        One row per ordered pair, columns ``a``, ``b``, ``d_<overall>``, one ``d_<stratum>``
        per stratum, ``n_reversed`` and ``margin``; sorted by ``margin`` then
        ``d_<overall>``, both descending, with a fresh ``RangeIndex``.

    Raises
    ------
    ValueError
        If ``strata`` is empty; if ``table`` is not a DataFrame, lacks one of the columns or
        has a duplicated index.

    See Also
    --------
    recbias_tutorial.estimators.stratified : per-stratum values of one model.
    recbias_tutorial.stats.ranking_agreement : agreement of whole rankings instead of pairs.

    Examples
    --------
    >>> kidney = pd.DataFrame({"overall": [273 / 350, 289 / 350], "small": [81 / 87, 234 / 270],
    ...                        "large": [192 / 263, 55 / 80]}, index=["A", "B"])
    >>> reversal_pairs(kidney, overall="overall", strata=["small", "large"])[
    ...     ["a", "b", "n_reversed"]].to_dict("records")
    [{'a': 'B', 'b': 'A', 'n_reversed': 2}]
    """
    check_column_name(overall, "overall")
    if isinstance(strata, (str, bytes)) or not isinstance(strata, Iterable):
        raise ValueError(f"strata must be a list of column names, got {strata!r:.60}")
    strata = [check_column_name(s, "strata") for s in strata]
    if not strata:
        raise ValueError("strata must name at least one column")
    check_frame(table, "table", [overall, *strata])
    if not table.index.is_unique:
        raise ValueError("table must have one row per model (unique index)")
    values = table[[overall, *strata]].to_numpy(dtype=float)
    names = table.index.to_numpy()
    ia, ib = np.array(list(permutations(range(len(table)), 2)), dtype=np.int64).reshape(-1, 2).T
    keep = values[ia, 0] > values[ib, 0]
    ia, ib = ia[keep], ib[keep]
    diff = values[ia] - values[ib]
    out = pd.DataFrame({"a": names[ia], "b": names[ib]})
    for j, col in enumerate([overall, *strata]):
        out[f"d_{col}"] = diff[:, j]
    out["n_reversed"] = (diff[:, 1:] < 0).sum(axis=1)
    out["margin"] = (-diff[:, 1:]).min(axis=1)
    return out.sort_values(["margin", f"d_{overall}"], ascending=[False, False],
                           kind="stable").reset_index(drop=True)


@declare(seed=Seed(), confidence=Interval(float, 0.0, 1.0, open="both"),
         n_resamples=Interval(int, 1))
def user_bootstrap(values, *, seed, confidence: float = 0.95,
                   n_resamples: int = 2000) -> pd.DataFrame:
    """Mean and percentile-bootstrap interval of per-user values, resampling users.

    The resamples are those of ``scipy.stats.bootstrap`` (``n_resamples`` draws of as many
    users with replacement). Columns are resampled together (the same users in each
    resample), so intervals of several estimators computed on the same users are comparable.
    Missing values (a user without a value for a column) are ignored in that column's means.

    Parameters
    ----------
    values : array-like or DataFrame
        One row per user, one column per quantity (1-D: a single quantity).
    seed : int or numpy.random.Generator
        Randomness of the resamples.
    confidence : float
        Coverage of the interval, in (0, 1).
    n_resamples : int
        Number of bootstrap resamples.

    Returns
    -------
    pandas.DataFrame
        Index: the columns of ``values``; columns ``estimate``, ``low``, ``high``.

    Raises
    ------
    ValueError
        If ``values`` has fewer than two rows or a column without any value; if
        ``confidence`` is not in (0, 1), ``n_resamples`` is not a positive integer, or
        ``seed`` is missing or not a non-negative int or Generator.

    See Also
    --------
    recbias_tutorial.estimators.bootstrap_ci : the interval of one estimator's estimate.
    recbias_tutorial.estimators.user_values : per-user terms to resample.

    Examples
    --------
    >>> out = user_bootstrap(pd.DataFrame({"a": [0.0, 1.0] * 50}), seed=0)
    >>> float(out.loc["a", "estimate"]), bool(out.loc["a", "low"] < 0.5 < out.loc["a", "high"])
    (0.5, True)
    """
    if isinstance(values, pd.DataFrame):
        frame = values
    else:
        arr = np.asarray(values)
        if arr.ndim not in (1, 2):
            raise ValueError(f"values must be 1-D or 2-D (users x quantities), got {arr.ndim}-D")
        frame = pd.DataFrame(arr.reshape(len(arr), -1))
    try:
        x = frame.to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise ValueError("values must hold numbers (one row per user), got "
                         f"{', '.join(map(str, frame.dtypes.unique()))}") from None
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError("values must hold at least two users (rows)")
    if np.isinf(x).any():
        raise ValueError("values must be finite or NaN (missing); found an infinite value")
    rng = as_generator(seed)
    idx = rng.integers(0, x.shape[0], size=(n_resamples, x.shape[0]))
    present = ~np.isnan(x)
    if not present.any(axis=0).all():
        raise ValueError("values has a column without any value")
    filled = np.where(present, x, 0.0)
    means = np.empty((n_resamples, x.shape[1]))
    complete = present.all(axis=0)
    full_count = np.full(n_resamples, x.shape[0])
    for j in range(x.shape[1]):  # mean of the present values of each resample (NaN if none)
        count = full_count if complete[j] else present[idx, j].sum(axis=1)
        np.divide(filled[idx, j].sum(axis=1), count, out=means[:, j], where=count > 0)
        means[count == 0, j] = np.nan
    alpha = (1.0 - confidence) / 2.0
    low, high = np.nanquantile(means, [alpha, 1.0 - alpha], axis=0)
    estimate = filled.sum(axis=0) / present.sum(axis=0)
    return pd.DataFrame({"estimate": estimate, "low": low, "high": high}, index=frame.columns)
