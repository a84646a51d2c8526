r"""A simulated recommender world with full ground truth.

:func:`simulate` draws a complete user-item rating matrix from a latent-factor model, an
MNAR log in which users rate popular items and items they like more often, and a MAR
sample (random exposure, like the Yahoo! R3 test set). Because the observation
probabilities are known exactly, IPS-type estimators can be checked against the truth.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from scipy.special import ndtri

from .._params import Interval, Seed, declare
from .._validation import as_generator, check_feedback, check_fits_in_memory, check_int
from ._feedback import FeedbackData, feedback_frame

__all__ = ["simulate", "sample_observed", "sample_random_exposure"]

#: Target shares of 1..5 stars if the affinity were exactly normal (18% relevant; about 17%
#: is realised). For comparison, 4-5 stars: Coat ~19%, Yahoo! R3 random set ~9%.
STAR_SHARES = (0.32, 0.24, 0.26, 0.11, 0.07)
_CUTS = ndtri(np.cumsum(STAR_SHARES)[:-1])  # affinity thresholds (standard normal)
_POP_SIGMA = 1.0  # spread of log-popularity (top 10% of items get ~58% of MNAR ratings)
_RHO = 0.5  # correlation between log-popularity and quality
_W_FACTOR, _W_QUALITY, _W_USER, _W_NOISE = 0.45, 0.25, 0.10, 0.20  # variance shares


def _scale(log_w: np.ndarray, counts: np.ndarray, target: float) -> np.ndarray:
    """Probabilities ``min(1, c * w)`` per weight class with ``sum(counts * p) == target``.

    Water-filling over the (few) distinct weights: the largest weights are capped at 1
    and the constant ``c`` is solved exactly for the rest.
    """
    if target >= counts.sum():
        return np.ones_like(log_w)
    present = np.flatnonzero(counts > 0)
    order = present[np.argsort(-log_w[present], kind="stable")]
    lw, ns = log_w[order], counts[order]
    capped = np.concatenate([[0.0], np.cumsum(ns)[:-1]])  # pairs in heavier classes
    # log of the weight mass of this class and all lighter ones (log space: no underflow)
    log_rest = np.logaddexp.accumulate((np.log(ns) + lw)[::-1])[::-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_c = np.log(target - capped) - log_rest
    k = np.flatnonzero(log_c + lw <= 0.0)[0]  # first class left uncapped
    p = np.exp(np.minimum(0.0, log_c[k] + log_w))
    return np.maximum(p, np.finfo(float).tiny)  # stay > 0 under extreme knobs


def _choose(rng: np.random.Generator, n_rows: int, n: int, k: int) -> np.ndarray:
    """``n_rows`` independent uniform ``k``-subsets of ``range(n)``, each sorted."""
    if k > 32:  # random keys: O(n) per row
        return np.sort(np.argpartition(rng.random((n_rows, n)), k - 1, axis=1)[:, :k], axis=1)
    out = np.empty((n_rows, k), dtype=np.int64)  # Floyd's algorithm, vectorised over rows
    for col, j in enumerate(range(n - k, n)):
        t = rng.integers(0, j + 1, size=n_rows)
        out[:, col] = np.where((out[:, :col] == t[:, None]).any(axis=1), j, t)
    return np.sort(out, axis=1)


_BYTES_PER_PAIR = 70  # peak memory of simulate per (user, item) pair, measured: ~66 bytes


@declare(n_users=Interval(int, 1), n_items=Interval(int, 1), seed=Seed(),
         n_factors=Interval(int, 1), mean_ratings_per_user=Interval(float, 0.0, open="low"),
         popularity_bias=Interval(float), rating_bias=Interval(float), threshold=Interval(float))
def simulate(n_users: int, n_items: int, *, seed, n_factors: int = 8,
             mean_ratings_per_user: float = 24.0, popularity_bias: float = 1.0,
             rating_bias: float = 0.5, n_mar_users: int | None = None,
             n_mar_items: int = 10, binary: bool = False, threshold: float = 4.0,
             name: str = "simulated") -> FeedbackData:
    r"""Simulate a world with full ratings, an MNAR log and a MAR sample.

    **Ratings.** With :math:`x_u, y_i \sim N(0, I_K)`, user bias :math:`b_u \sim N(0,1)`,
    standardised item log-popularity :math:`z_i \sim N(0,1)`, quality
    :math:`q_i = \rho z_i + \sqrt{1-\rho^2}\,\eta_i` (:math:`\rho = 0.5`) and noise
    :math:`\varepsilon_{ui} \sim N(0,1)`, the unit-variance affinity is

    .. math:: a_{ui} = \sqrt{.45}\,x_u^\top y_i/\sqrt{K} + \sqrt{.25}\,q_i
              + \sqrt{.10}\,b_u + \sqrt{.20}\,\varepsilon_{ui}

    and the stars :math:`s_{ui} \in \{1..5\}` cut :math:`a_{ui}` at the standard normal
    quantiles of ``STAR_SHARES`` (about 17% of all pairs have 4-5 stars). The rating
    is :math:`r_{ui} = s_{ui}`, or :math:`\mathbb 1[s_{ui} \ge 4]` when ``binary`` (the
    observation model below still uses the stars, so both modes share one world).

    **MNAR log.** Item popularity is log-normal, :math:`\pi_i = e^{z_i}`, and

    .. math:: P_{ui} = P(O_{ui}=1) = \min\{1,\; c\,\pi_i^{\beta_p} e^{\beta_r (s_{ui}-3)}\}

    with :math:`\beta_p` = ``popularity_bias``, :math:`\beta_r` = ``rating_bias`` and
    :math:`c` solved exactly so that :math:`\sum_{ui} P_{ui}` = ``n_users *
    mean_ratings_per_user``. :math:`\beta_p = \beta_r = 0` is MCAR. ``mnar`` holds one
    independent draw :math:`O_{ui} \sim \mathrm{Bernoulli}(P_{ui})`, so IPS with
    ``propensity`` is exactly unbiased; some users may have no rating.

    **MAR sample.** ``n_mar_users`` users drawn uniformly (default: all) each get
    ``n_mar_items`` items drawn uniformly without replacement, rated as in ``full``. This
    mechanism is independent of the MNAR one, so the two sets may overlap.

    Parameters
    ----------
    n_users, n_items : int
        Size of the world.
    seed : int or numpy.random.Generator
        Randomness. The world (``full``), the MNAR draw and the MAR draw use separate
        streams, so changing only the bias knobs keeps the same ``full`` ratings.
    n_factors : int
        Latent dimension :math:`K`.
    mean_ratings_per_user : float
        Expected MNAR ratings per user, in ``(0, n_items]``.
    popularity_bias, rating_bias : float
        Exponents :math:`\beta_p, \beta_r` above. The default ``rating_bias=0.5`` makes about
        half of the MNAR ratings relevant against 17% of all pairs: between Coat (27% vs 19%)
        and Yahoo! R3 (40% vs 9%).
    n_mar_users : int, optional
        Users in the MAR sample (default all); ``mar`` is ``None`` when it or
        ``n_mar_items`` is 0.
    n_mar_items : int
        Random items per MAR user (``<= n_items``).
    binary : bool
        0/1 relevance instead of stars; then ``threshold`` must be 1.0.
    threshold : float
        Relevance threshold stored in the result.
    name : str
        Name of the result.

    Returns
    -------
    FeedbackData
        ``full`` has all ``n_users * n_items`` pairs sorted by user then item;
        ``propensity`` is :math:`P` of shape ``(n_users, n_items)``; ``info`` holds the
        parameters and the item popularity :math:`\pi_i`.

    Raises
    ------
    ValueError
        If ``n_users``, ``n_items`` or ``n_factors`` is not a positive integer; if
        ``n_mar_items`` is not an integer in ``0..n_items`` or ``n_mar_users`` not one in
        ``0..n_users``; if ``mean_ratings_per_user`` is not a number in
        ``(0, n_items]``; if ``popularity_bias``, ``rating_bias`` or ``threshold`` is not
        a finite number; if ``binary`` is true and ``threshold`` is not 1.0; if ``seed``
        is missing or not a non-negative int or Generator.

    See Also
    --------
    recbias_tutorial.data.sample_observed : a fresh MNAR log from the same world.
    recbias_tutorial.data.sample_random_exposure : a randomly exposed set from ``full``.
    recbias_tutorial.data.load_or_standin : uses this to stand in for missing data.

    Examples
    --------
    >>> data = simulate(50, 40, seed=0, mean_ratings_per_user=5)
    >>> len(data.full), data.propensity.shape
    (2000, (50, 40))
    >>> round(float(data.propensity.sum(axis=1).mean()), 6)
    5.0
    """
    # bounds that depend on another argument (n_items, n_users)
    n_mar_items = check_int(n_mar_items, "n_mar_items", 0, n_items)
    n_mar_users = n_users if n_mar_users is None else check_int(
        n_mar_users, "n_mar_users", 0, n_users)
    if mean_ratings_per_user > n_items:
        raise ValueError(f"mean_ratings_per_user must be in (0, n_items={n_items}], "
                         f"got {mean_ratings_per_user!r}")
    if binary and threshold != 1.0:
        raise ValueError(f"threshold must be 1.0 when binary=True, got {threshold!r}")
    check_fits_in_memory(_BYTES_PER_PAIR * float(n_users) * n_items, "n_users x n_items",
                         f"a simulated world of {n_users:,} x {n_items:,} pairs (every pair's "
                         "rating and propensity)")

    rng = as_generator(seed)
    world, obs, mar_rng = (np.random.default_rng(s) for s in rng.integers(2**63, size=3))

    # --- the world: stars for every pair -------------------------------------------
    x = world.standard_normal((n_users, n_factors))
    y = world.standard_normal((n_items, n_factors))
    bias_u = world.standard_normal(n_users)
    z = world.standard_normal(n_items)
    quality = _RHO * z + np.sqrt(1 - _RHO**2) * world.standard_normal(n_items)
    affinity = world.standard_normal((n_users, n_items), dtype=np.float32)
    affinity *= np.sqrt(_W_NOISE)
    affinity += (np.sqrt(_W_FACTOR / n_factors) * x).astype(np.float32) @ y.T.astype(np.float32)
    affinity += (np.sqrt(_W_QUALITY) * quality).astype(np.float32)
    affinity += (np.sqrt(_W_USER) * bias_u).astype(np.float32)[:, None]
    stars = np.ones((n_users, n_items), dtype=np.int8)
    for cut in _CUTS.astype(np.float32):  # 4 cuts: stars = 1 + #{cuts below affinity}
        stars += affinity > cut
    del affinity
    ratings = (stars >= 4).astype(np.float64) if binary else stars.astype(np.float64)

    # --- observation probabilities, solved per (item, star) class ----------------------
    log_pop = _POP_SIGMA * z
    log_w = popularity_bias * log_pop[:, None] + rating_bias * (np.arange(1, 6) - 3.0)
    cls = np.arange(n_items) * 5 + (stars - 1)  # class id of each pair
    counts = np.bincount(cls.ravel(), minlength=5 * n_items).astype(np.float64)
    table = _scale(log_w.ravel(), counts, n_users * float(mean_ratings_per_user))
    propensity = np.take(table, cls)

    # --- MNAR: one Bernoulli draw; MAR: uniform items for uniform users ----------------
    hit = np.flatnonzero(obs.random(n_users * n_items) < propensity.ravel())
    mnar = feedback_frame(hit // n_items, hit % n_items, ratings.ravel()[hit])
    item_ids = np.empty((n_users, n_items), dtype=np.int64)
    item_ids[:] = np.arange(n_items)
    full = feedback_frame(np.repeat(np.arange(n_users, dtype=np.int64), n_items), item_ids.ravel(),
                  ratings.ravel())
    mar = None
    if n_mar_users > 0 and n_mar_items > 0:
        users = np.sort(mar_rng.choice(n_users, size=n_mar_users, replace=False))
        items = _choose(mar_rng, n_mar_users, n_items, n_mar_items)
        users = np.repeat(users, n_mar_items)
        mar = feedback_frame(users, items.ravel(), ratings[users, items.ravel()])

    info = {"simulated": True, "seed": seed if isinstance(seed, numbers.Integral) else None,
            "n_factors": n_factors, "mean_ratings_per_user": float(mean_ratings_per_user),
            "popularity_bias": float(popularity_bias), "rating_bias": float(rating_bias),
            "n_mar_users": n_mar_users, "n_mar_items": n_mar_items, "binary": bool(binary),
            "star_shares": STAR_SHARES, "item_popularity": np.exp(log_pop)}
    return FeedbackData(name=name, n_users=n_users, n_items=n_items, mnar=mnar, mar=mar,
                        full=full, threshold=float(threshold), propensity=propensity, info=info)


@declare(seed=Seed())
def sample_observed(data: FeedbackData, *, seed) -> pd.DataFrame:
    r"""Draw a fresh MNAR log :math:`O_{ui} \sim \mathrm{Bernoulli}(P_{ui})` from a world.

    Uses ``data.full`` and ``data.propensity`` (as returned by :func:`simulate`), for
    Monte Carlo checks of IPS-type estimators.

    Parameters
    ----------
    data : FeedbackData
        A world with ``full`` and ``propensity``.
    seed : int or numpy.random.Generator
        Randomness.

    Returns
    -------
    pandas.DataFrame
        The observed rows of ``data.full`` (same columns, fresh index).

    Raises
    ------
    ValueError
        If ``data`` lacks ``full`` or ``propensity``, or ``seed`` is missing or not a
        non-negative int or Generator.

    See Also
    --------
    recbias_tutorial.data.simulate : the world and its first log.
    recbias_tutorial.estimators.ips : the estimator such draws check.

    Examples
    --------
    >>> world = simulate(30, 20, seed=1, mean_ratings_per_user=4)
    >>> log = sample_observed(world, seed=2)
    >>> list(log.columns), log.equals(sample_observed(world, seed=2))
    (['user', 'item', 'rating'], True)
    """
    if not isinstance(data, FeedbackData):
        raise ValueError(f"data must be a FeedbackData, got {type(data).__name__}")
    if data.full is None or data.propensity is None:
        raise ValueError("data must have both full and propensity (use simulate())")
    full = data.full
    p = np.asarray(data.propensity)[full["user"].to_numpy(), full["item"].to_numpy()]
    keep = as_generator(seed).random(len(full)) < p
    return full.loc[keep].reset_index(drop=True)


@declare(n_items_per_user=Interval(int, 1), seed=Seed())
def sample_random_exposure(full: pd.DataFrame, n_items_per_user: int, *, seed,
                           users=None) -> pd.DataFrame:
    """Pick ``n_items_per_user`` random rows per user: a randomly exposed set D_rand.

    For each user (or each of ``users``), draws that many of the user's rows in ``full``
    uniformly at random without replacement, as in the unbiased recall evaluation (URE)
    of Wang et al. (WWW 2025).

    Parameters
    ----------
    full : pandas.DataFrame
        Fully observed feedback with a ``user`` column.
    n_items_per_user : int
        Items per user (>= 1); every selected user must have at least that many rows.
    seed : int or numpy.random.Generator
        Randomness.
    users : array-like of int, optional
        Users to sample for (default: every user in ``full``).

    Returns
    -------
    pandas.DataFrame
        The chosen rows, sorted by user then item.

    Raises
    ------
    ValueError
        If ``n_items_per_user`` is not a positive integer; if ``full`` has no ``user``
        column; if some of ``users`` have no row in ``full``, or a selected user has fewer
        than ``n_items_per_user`` rows; if ``seed`` is missing or not a non-negative int or
        Generator.

    See Also
    --------
    recbias_tutorial.estimators.ure_recall : URE on such a set.
    recbias_tutorial.estimators.recall_at_kbar : the traditional Recall@K̄ on it.
    recbias_tutorial.data.simulate : a world with a fully observed ``full``.

    Examples
    --------
    >>> world = simulate(5, 30, seed=0, mean_ratings_per_user=3)
    >>> d_rand = sample_random_exposure(world.full, 4, seed=0)
    >>> d_rand.groupby("user").size().tolist()
    [4, 4, 4, 4, 4]
    """
    n = n_items_per_user
    if not isinstance(full, pd.DataFrame) or "user" not in full.columns:
        raise ValueError(f"full must be a pandas DataFrame with a 'user' column, got "
                         f"{type(full).__name__}")
    if "item" in full.columns:
        check_feedback(full, "full", require_rating=False)
    else:
        _check_ids(full["user"], "full.user")
    frame = full
    if users is not None:
        wanted = np.unique(_check_ids(users, "users"))
        frame = full.loc[full["user"].isin(wanted)]
        missing = np.setdiff1d(wanted, frame["user"].to_numpy())
        if missing.size:
            raise ValueError(f"users not in full (0 items < n_items_per_user={n}): "
                             f"{missing[:5].tolist()}")
    user = frame["user"].to_numpy()
    keys = as_generator(seed).random(len(frame))  # multiples of 2**-53: exact as 53-bit ints
    if len(user) and user.max() < 2**11:  # (user, key) packed in one uint64: a 3x faster sort
        packed = (user.astype(np.uint64) << np.uint64(53)) | (keys * 2.0**53).astype(np.uint64)
        order = np.argsort(packed, kind="stable")  # the order of lexsort((keys, user))
    else:
        order = np.lexsort((keys, user))
    su = user[order]
    starts = np.r_[0, np.flatnonzero(su[1:] != su[:-1]) + 1] if len(su) else np.array([], int)
    sizes = np.diff(np.r_[starts, len(su)])
    if np.any(sizes < n):
        bad = su[starts[sizes < n]][:5].tolist()
        raise ValueError(f"n_items_per_user={n} exceeds the items of users {bad}")
    rank = np.arange(len(su)) - np.repeat(starts, sizes)
    out = frame.iloc[order[rank < n]]
    sort_cols = ["user", "item"] if "item" in out.columns else ["user"]
    return out.sort_values(sort_cols, kind="stable").reset_index(drop=True)


def _check_ids(ids, name: str) -> np.ndarray:
    """A non-empty 1-D array of non-negative integer ids (floats would match by value)."""
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype == bool \
            or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be a non-empty 1-D array of integer ids, got "
                         f"dtype {arr.dtype}, shape {arr.shape}")
    if arr.min() < 0:
        raise ValueError(f"{name} holds negative ids")
    return arr.astype(np.int64)
