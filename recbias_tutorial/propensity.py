r"""Propensities: how likely a (user, item) pair is to be observed in the logged data.

* :func:`popularity_propensity` — Yang et al. (RecSys 2018): :math:`p_i \propto n_i^{(\gamma+1)/2}`
  with :math:`n_i` the item's count in the training data.
* :func:`fit_popularity_exponent` — an exponent fitted to the item-count distribution: the
  counts are modelled as draws from a discrete power law (zeta distribution),
  :math:`P(n) = n^{-\gamma}/\zeta(\gamma, n_{\min})` for :math:`n \ge n_{\min}`, fitted by maximum
  likelihood (Clauset, Shalizi & Newman, 2009). This is the reading of Jadidinejad et al.
  (SIGIR 2021), not Yang et al.'s: in Yang et al. :math:`\gamma` is the exponent of the serving
  policy, :math:`P^{\text{select}}_i \propto (n^*_i)^\gamma` (Steck 2011), "estimated from known
  online content serving policy", and otherwise a sensitivity parameter.
* :func:`powerlaw_propensity` — Jadidinejad et al.'s own propensities: a ``powerlaw.Fit`` of
  the item counts (the installed powerlaw 2.x's, or 1.x's as the authors ran it), then
  :math:`n^\alpha` above :math:`x_{\min}` (needs the ``powerlaw`` package).
* :func:`selection_exponent` — where randomly exposed data exist, the slope of the log
  propensity of relevant pairs against the log training count, and the :math:`\gamma` it
  implies (:math:`\gamma = 2\,\text{slope} - 1`); the course's extension, not the paper's.
* :func:`naive_bayes_propensity` — Schnabel et al. (ICML 2016): with a small MAR sample,
  :math:`P(O=1\mid r) = P(r\mid O=1)\,P(O=1) / P(r)`, where :math:`P(r\mid O=1)` is the MNAR
  rating distribution, :math:`P(r)` the MAR one and :math:`P(O=1)` the observed density.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize, special

from ._params import Interval, declare
from ._powerlaw import POWERLAW_FITS, fit_powerlaw
from ._validation import as_real_array, check_choice, check_feedback

__all__ = ["fit_popularity_exponent", "item_counts", "naive_bayes_propensity", "pair_propensity",
           "popularity_propensity", "powerlaw_propensity", "selection_exponent"]


@declare(n_items=Interval(int, 1))
def item_counts(train: pd.DataFrame, n_items: int) -> np.ndarray:
    """Number of training interactions per item (length ``n_items``).

    Parameters
    ----------
    train : DataFrame
        Training feedback with integer columns ``user`` and ``item`` (``rating`` is not
        needed; repeated pairs are counted each time).
    n_items : int
        Catalogue size.

    Returns
    -------
    numpy.ndarray
        int64 counts, one per item id ``0..n_items - 1``.

    Raises
    ------
    ValueError
        If ``n_items`` is not a positive integer, or ``train`` is not a non-empty DataFrame
        with integer ``user`` and ``item`` ids (items in ``0..n_items - 1``).

    See Also
    --------
    recbias_tutorial.propensity.popularity_propensity : propensities from these counts.
    recbias_tutorial.propensity.fit_popularity_exponent : the exponent fitted to them.

    Examples
    --------
    >>> item_counts(pd.DataFrame({"user": [0, 1, 1], "item": [2, 2, 0]}), 4).tolist()
    [1, 0, 2, 0]
    """
    check_feedback(train, "train", n_items=n_items, require_rating=False, unique=False)
    return np.bincount(train["item"].to_numpy(np.int64), minlength=n_items)


@declare(n_items=Interval(int, 1), gamma=Interval(float, -1.0))
def popularity_propensity(train: pd.DataFrame, n_items: int, *, gamma: float) -> np.ndarray:
    r"""Per-item propensities :math:`p_i \propto n_i^{(\gamma+1)/2}`, scaled so the largest is 1.

    Items with no training interaction are given the count of an item seen once
    (:math:`n_i := 1`): they are at least as rare as any observed item, and an IPS weight must be
    finite. The scale is arbitrary (SNIPS and stratification do not depend on it); for IPS the
    true absolute propensities are needed.

    Parameters
    ----------
    train : DataFrame
        Training feedback with integer columns ``user`` and ``item``.
    n_items : int
        Catalogue size.
    gamma : float
        Power-law exponent :math:`\gamma \ge -1` (e.g. from
        :func:`recbias_tutorial.propensity.fit_popularity_exponent`). At :math:`\gamma = -1`
        every item gets propensity 1 (exposure unrelated to popularity): SNIPS is then AOA.

    Returns
    -------
    numpy.ndarray
        Relative propensities in (0, 1], one per item, with maximum 1.

    Raises
    ------
    ValueError
        If ``gamma`` is not a finite number >= -1, ``n_items`` is not a positive integer, or
        ``train`` is not a non-empty DataFrame with integer ``user`` and ``item`` ids (items
        in ``0..n_items - 1``).

    See Also
    --------
    recbias_tutorial.propensity.fit_popularity_exponent : maximum-likelihood ``gamma``.
    recbias_tutorial.debiased_mf.calibrate_propensity : absolute propensities for IPS.
    recbias_tutorial.estimators.snips : an estimator that accepts relative propensities.

    Examples
    --------
    >>> train = pd.DataFrame({"user": [0, 1, 2, 2], "item": [0, 0, 0, 1]})
    >>> popularity_propensity(train, 3, gamma=1.0).round(3).tolist()
    [1.0, 0.333, 0.333]
    """
    n = np.maximum(item_counts(train, n_items), 1).astype(float)
    p = n ** ((gamma + 1.0) / 2.0)
    return p / p.max()


#: Search interval of :func:`fit_popularity_exponent` (zeta(gamma) diverges at gamma = 1).
_GAMMA_SEARCH = (1.0001, 10.0)


@declare(n_items=Interval(int, 1), n_min=Interval(int, 1))
def fit_popularity_exponent(train: pd.DataFrame, n_items: int, *, n_min: int = 1) -> float:
    r"""Maximum-likelihood exponent of a discrete power law fitted to the training item counts.

    Only items with at least ``n_min`` interactions enter the likelihood.

    Parameters
    ----------
    train : DataFrame
        Training feedback with integer columns ``user`` and ``item``.
    n_items : int
        Catalogue size.
    n_min : int, default 1
        Smallest count :math:`n_{\min}` of the power law.

    Returns
    -------
    float
        The exponent :math:`\gamma`, searched in [1.0001, 10]. This is the exponent of the
        item-count distribution, the reading of Jadidinejad et al. (SIGIR 2021); it is not the
        serving-policy exponent of Yang et al. (RecSys 2018), see
        :func:`recbias_tutorial.propensity.selection_exponent`.

    Raises
    ------
    ValueError
        If ``n_min`` or ``n_items`` is not a positive integer; if ``train`` is not a
        non-empty DataFrame with integer ``user`` and ``item`` ids (items in
        ``0..n_items - 1``); if fewer than two items have ``n_min`` or more interactions, or
        they all have the same count; if the maximum of the likelihood lies at or beyond a
        bound of the search interval (the fit would otherwise silently return the bound).

    See Also
    --------
    recbias_tutorial.propensity.popularity_propensity : the propensities using ``gamma``.
    recbias_tutorial.propensity.item_counts : the counts that are fitted.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> counts = rng.zipf(2.5, size=20_000)
    >>> train = pd.DataFrame({"user": 0, "item": np.repeat(np.arange(20_000), counts)})
    >>> round(fit_popularity_exponent(train, 20_000), 1)
    2.5
    """
    x = item_counts(train, n_items)
    x = x[x >= n_min].astype(float)
    if len(x) < 2 or np.all(x == x[0]):
        raise ValueError("train must give at least two distinct item counts >= n_min to fit gamma")
    s = np.log(x).sum()

    def nll(a: float) -> float:
        return a * s + len(x) * np.log(special.zeta(a, n_min))

    low, high = _GAMMA_SEARCH
    res = optimize.minimize_scalar(nll, bounds=(low, high), method="bounded")
    # The bounded search returns a point next to a bound when the likelihood still rises
    # beyond it; that is not an estimate, so say so instead of returning the bound.
    if res.x > high - 1e-3 or nll(high) <= nll(float(res.x)):
        raise ValueError(
            f"train: the maximum-likelihood gamma lies at or beyond the search bound {high:g} "
            f"(the item counts >= n_min={n_min} fall off faster than any power law with "
            f"gamma <= {high:g}); a zeta fit does not describe these counts")
    if res.x < low + 1e-3:
        raise ValueError(f"train: the maximum-likelihood gamma lies at the search bound {low:g}")
    return float(res.x)


def powerlaw_propensity(counts: Any, *, fit: str = "powerlaw2") -> tuple[np.ndarray, float, float]:
    r"""Jadidinejad et al.'s propensities: a ``powerlaw.Fit`` of the item counts, then :math:`n^\alpha`.

    Their ``StratifiedEvaluation._estimate_propensities`` counts every item over *all* closed-loop
    ratings (test ratings included), fits a discrete power law by maximum likelihood with the
    ``powerlaw`` package (which also chooses :math:`x_{\min}`), and replaces a count
    :math:`n > x_{\min}` by :math:`n^\alpha`; counts at or below :math:`x_{\min}` stay as they
    are. (The paper's Eq. 7 says :math:`n^{(\gamma+1)/2}`; the code does this.)

    The fit depends on the ``powerlaw`` version, hence ``fit``: powerlaw 2.x (installed)
    confines :math:`\alpha` to :math:`[0, 3]` and skips the :math:`x_{\min}` whose fit reaches
    that bound; powerlaw 1.x, which the authors ran, did not. The two agree when the best
    :math:`\alpha` is at most 3 (Yahoo! R3: 2.35, :math:`x_{\min}` 290), not otherwise (Coat:
    2.99 and 17 with ``"powerlaw2"``; their log's 4.01 and 28 with ``"powerlaw1"``).

    Parameters
    ----------
    counts : array-like of int
        Ratings per item (zeros are left out of the fit and keep propensity 0).
    fit : {"powerlaw2", "powerlaw1"}, default "powerlaw2"
        ``"powerlaw2"``: ``powerlaw.Fit(counts, discrete=True)`` of the installed powerlaw 2.x.
        ``"powerlaw1"``: the same call as powerlaw 1.4 / 1.5 computed it, the authors' fit (no
        bound on :math:`\alpha`; at every candidate :math:`x_{\min}`, Clauset et al.'s discrete
        approximation :math:`\alpha = 1 + n / \sum_i \ln(x_i / (x_{\min} - 1/2))` over the
        :math:`n` counts :math:`x_i \ge x_{\min}`; the :math:`x_{\min}` of the smallest
        Kolmogorov-Smirnov distance, computed by powerlaw's own code).

    Returns
    -------
    (propensity, alpha, xmin) : (numpy.ndarray, float, float)

    Raises
    ------
    ValueError
        If ``counts`` is not a 1-D array of non-negative whole numbers with at least two
        positive values, or ``fit`` is not one of the two fits.

    See Also
    --------
    recbias_tutorial.propensity.popularity_propensity : the course's propensities.
    recbias_tutorial.propensity.fit_popularity_exponent : a zeta fit of the same counts.

    Examples
    --------
    >>> counts = np.round(1000 / np.arange(1, 201) ** 0.9).astype(int)
    >>> p, alpha, xmin = powerlaw_propensity(counts)
    >>> bool(alpha > 1), bool(np.all(p[counts <= xmin] == counts[counts <= xmin]))
    (True, True)

    Counts whose tail falls faster than :math:`x^{-3}`: powerlaw 2.x's fit stops at its
    bound, the authors' (powerlaw 1.x) does not.

    >>> steep = np.round(1000 / np.arange(1, 201) ** 0.3).astype(int)
    >>> [round(powerlaw_propensity(steep, fit=f)[1], 2) for f in ("powerlaw2", "powerlaw1")]
    [3.0, 4.38]
    """
    c = as_real_array(counts, "counts")
    if c.ndim != 1 or not np.isfinite(c).all() or (c < 0).any() or (c != np.round(c)).any():
        raise ValueError("counts must be a 1-D array of non-negative whole numbers")
    if (c > 0).sum() < 2:
        raise ValueError("counts must have at least two positive values to fit a power law")
    fit = check_choice(fit, "fit", POWERLAW_FITS)
    return fit_powerlaw(c, fit)


@declare(n_items=Interval(int, 1), threshold=Interval(float))
def selection_exponent(logged: pd.DataFrame, random: pd.DataFrame, *, train: pd.DataFrame,
                       n_items: int, threshold: float = 4.0) -> pd.Series:
    r"""The popularity exponent of the propensities, measured with randomly exposed data.

    Yang et al. (RecSys 2018) model the propensity of a relevant pair as
    :math:`p_i \propto (n^*_i)^{(\gamma+1)/2}`, with :math:`n^*_i` the item's training count. With
    randomly exposed feedback the propensity can be measured item by item: the random data
    estimate the share :math:`q_i` of users for whom item :math:`i` is relevant, the logged data
    count its relevant pairs :math:`m_i`, and :math:`\hat p_i \propto m_i / q_i`. The slope
    :math:`b` of the least-squares line of :math:`\ln \hat p_i` on :math:`\ln n^*_i` (over the
    items with :math:`m_i, q_i, n^*_i > 0`) is the exponent of the propensity, and
    :math:`\gamma = 2b - 1` the serving-policy exponent it implies. This is the course's
    extension: the paper treats :math:`\gamma` as known from the serving policy or as a
    sensitivity grid. Noise in :math:`q_i` and :math:`m_i` (few random ratings per item) and the
    rating dependence of real propensities make it a rough location, not an estimate with
    guarantees.

    Parameters
    ----------
    logged : pandas.DataFrame
        Logged (MNAR) feedback whose relevant pairs are counted (e.g. the held-out log).
    random : pandas.DataFrame
        Randomly exposed feedback (MAR or fully observed) with a ``rating`` column.
    train : pandas.DataFrame
        Training log whose item counts are :math:`n^*_i`.
    n_items : int
        Catalogue size.
    threshold : float, default 4.0
        A pair is relevant when ``rating >= threshold``.

    Returns
    -------
    pandas.Series
        ``slope`` (:math:`b`), ``gamma`` (:math:`2b-1`) and ``items`` (number of items in the
        fit).

    Raises
    ------
    ValueError
        If ``n_items`` is not a positive integer or ``threshold`` not a finite number; if a
        frame is not valid feedback for ``n_items`` items, or fewer than three items have
        relevant logged pairs, relevant random ratings and training counts, or their
        training counts are all equal.

    See Also
    --------
    recbias_tutorial.propensity.popularity_propensity : the propensities using ``gamma``.
    recbias_tutorial.propensity.fit_popularity_exponent : the count-distribution reading.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> n_star = np.repeat(np.arange(1, 201), 1)          # training counts 1..200
    >>> train = pd.DataFrame({"user": 0, "item": np.repeat(np.arange(200), n_star)})
    >>> full = pd.DataFrame({"user": np.repeat(np.arange(50), 200),
    ...                      "item": np.tile(np.arange(200), 50), "rating": 5.0})
    >>> logged = full[rng.random(len(full)) < 0.5 * (n_star[full["item"]] / 200) ** 0.9]
    >>> round(float(selection_exponent(logged, full, train=train, n_items=200)["slope"]), 1)
    0.9
    """
    check_feedback(logged, "logged", n_items=n_items, unique=False)
    check_feedback(random, "random", n_items=n_items, unique=False)
    n_star = item_counts(train, n_items).astype(float)
    rel_logged = logged["rating"].to_numpy(float) >= threshold
    m = np.bincount(logged["item"].to_numpy(np.int64)[rel_logged], minlength=n_items)
    items = random["item"].to_numpy(np.int64)
    shown = np.bincount(items, minlength=n_items)
    liked = np.bincount(items[random["rating"].to_numpy(float) >= threshold], minlength=n_items)
    q = np.divide(liked, shown, out=np.zeros(n_items), where=shown > 0)
    keep = (m > 0) & (q > 0) & (n_star > 0)
    if keep.sum() < 3 or np.ptp(np.log(n_star[keep])) == 0:
        raise ValueError("logged/random: need at least three items with relevant logged pairs, "
                         "relevant random ratings and distinct training counts")
    x, y = np.log(n_star[keep]), np.log(m[keep] / q[keep])
    slope = float(np.polyfit(x, y, 1)[0])
    return pd.Series({"slope": slope, "gamma": 2.0 * slope - 1.0, "items": int(keep.sum())})


@declare(n_users=Interval(int, 1), n_items=Interval(int, 1))
def naive_bayes_propensity(mnar: pd.DataFrame, mar: pd.DataFrame, *, n_users: int,
                           n_items: int) -> pd.Series:
    r"""P(O=1 | rating) from an MNAR log and a MAR sample (Schnabel et al., 2016).

    Returns a Series indexed by rating value. Rating values absent from ``mnar`` get 0 and
    values absent from ``mar`` cannot be estimated (NaN); both are reported, not hidden.

    Parameters
    ----------
    mnar : DataFrame
        Logged feedback (``user``, ``item``, ``rating``): estimates :math:`P(r \mid O=1)`
        and, with the matrix size, :math:`P(O=1)`.
    mar : DataFrame
        Missing-at-random sample, same columns: estimates :math:`P(r)`.
    n_users, n_items : int
        Size of the user-item matrix.

    Returns
    -------
    pandas.Series
        :math:`P(O=1 \mid r)` indexed by ``rating`` (sorted), capped at 1.

    Raises
    ------
    ValueError
        If ``n_users`` or ``n_items`` is not a positive integer; if ``mnar`` or ``mar`` is
        not a non-empty DataFrame with columns ``user``, ``item``, ``rating`` (integer ids
        in ``0..n_users - 1`` / ``0..n_items - 1``, finite ratings, no duplicate pairs).

    See Also
    --------
    recbias_tutorial.propensity.pair_propensity : these values spread over a score matrix.
    recbias_tutorial.propensity.popularity_propensity : propensities without MAR data.

    Examples
    --------
    >>> mnar = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 1], "rating": [5.0, 5.0, 1.0]})
    >>> mar = pd.DataFrame({"user": [0, 1], "item": [2, 0], "rating": [5.0, 1.0]})
    >>> naive_bayes_propensity(mnar, mar, n_users=2, n_items=3).round(3).to_dict()
    {1.0: 0.333, 5.0: 0.667}
    """
    check_feedback(mnar, "mnar", n_users, n_items)
    check_feedback(mar, "mar", n_users, n_items)
    p_r_obs = mnar["rating"].value_counts(normalize=True)
    p_r = mar["rating"].value_counts(normalize=True)
    p_obs = len(mnar) / (n_users * n_items)
    values = sorted(set(p_r_obs.index) | set(p_r.index))
    out = pd.Series({v: p_r_obs.get(v, 0.0) * p_obs / p_r.get(v, np.nan) for v in values})
    out.index.name = "rating"
    return out.clip(upper=1.0)


def pair_propensity(frame: pd.DataFrame, per_rating: pd.Series, shape: tuple[int, int]) -> np.ndarray:
    """A users x items array holding P(O=1 | r_ui) for the pairs of ``frame`` (NaN elsewhere).

    Parameters
    ----------
    frame : DataFrame
        Feedback (``user``, ``item``, ``rating``) whose pairs get a propensity.
    per_rating : pandas.Series
        Propensity per rating value, e.g. from
        :func:`recbias_tutorial.propensity.naive_bayes_propensity`; ratings missing from
        its index give NaN.
    shape : tuple of int
        ``(n_users, n_items)``.

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``shape``, NaN outside the pairs of ``frame``: a 2-D
        ``propensity`` for the estimators.

    Raises
    ------
    ValueError
        If ``frame`` is not a non-empty DataFrame with columns ``user``, ``item``,
        ``rating`` (integer ids inside ``shape``, finite ratings, no duplicate pairs).

    See Also
    --------
    recbias_tutorial.propensity.naive_bayes_propensity : the per-rating propensities.
    recbias_tutorial.estimators.snips : uses a 2-D propensity like this one.

    Examples
    --------
    >>> t = pd.DataFrame({"user": [0], "item": [1], "rating": [5.0]})
    >>> float(pair_propensity(t, pd.Series({5.0: 0.2}), (1, 2))[0, 1])
    0.2
    """
    check_feedback(frame, "frame", *shape)
    out = np.full(shape, np.nan)
    vals = frame["rating"].map(per_rating).to_numpy(dtype=float)
    out[frame["user"].to_numpy(np.int64), frame["item"].to_numpy(np.int64)] = vals
    return out
