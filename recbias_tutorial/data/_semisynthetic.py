r"""Semi-synthetic worlds: full ground truth built from a real dataset.

The standard protocol of the debiasing literature (Schnabel et al., ICML 2016): complete the
real rating matrix with a model fitted on the real data, calibrate the completed ratings so
that their distribution matches the randomly exposed (MAR) part, then re-draw an MNAR log
from it with propensities estimated from the real log. :func:`semi_synthetic` returns such a
world as a :class:`~recbias_tutorial.data.FeedbackData` with ``full``, ``mnar``, ``mar``
and the true ``propensity``, the same convention as :func:`~recbias_tutorial.data.simulate`.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._params import Interval, Seed, declare
from .._validation import as_generator, check_feedback, check_fits_in_memory
from ._feedback import FeedbackData, feedback_frame
from ._worlds import _choose

__all__ = ["semi_synthetic"]

_IPF_ITERATIONS = 200  # item x rating-value margins converge long before (1000 x 5 table)


def _als(users: np.ndarray, items: np.ndarray, r: np.ndarray, shape: tuple[int, int],
         n_factors: int, reg: float, n_iter: int, rng: np.random.Generator) -> np.ndarray:
    """Biased matrix factorisation by alternating least squares; dense predictions."""
    n_users, n_items = shape
    mu = r.mean()
    ind = sp.csr_matrix((np.ones(len(r)), (users, items)), shape=shape)
    n_u, n_i = np.asarray(ind.sum(1)).ravel(), np.asarray(ind.sum(0)).ravel()
    b_i = np.bincount(items, r - mu, n_items) / (n_i + reg)
    b_u = np.bincount(users, r - mu - b_i[items], n_users) / (n_u + reg)
    res = r - mu - b_u[users] - b_i[items]
    x = 0.1 * rng.standard_normal((n_users, n_factors))
    y = 0.1 * rng.standard_normal((n_items, n_factors))
    eye = reg * np.eye(n_factors)

    def solve(m: sp.csr_matrix, other: np.ndarray) -> np.ndarray:
        outer = (other[:, :, None] * other[:, None, :]).reshape(len(other), -1)
        gram = (m.astype(bool).astype(float) @ outer).reshape(-1, n_factors, n_factors) + eye
        return np.linalg.solve(gram, (m @ other)[:, :, None])[:, :, 0]

    by_user = sp.csr_matrix((res, (users, items)), shape=shape)
    by_item = by_user.T.tocsr()
    for _ in range(n_iter):
        x = solve(by_user, y)
        y = solve(by_item, x)
    return mu + b_u[:, None] + b_i[None, :] + x @ y.T


def _ipf(class_counts: np.ndarray, item_target: np.ndarray,
         value_target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Item and rating-value factors a_i, b_r with sum_r C_ir a_i b_r = n_i, sum_i ... = m_r."""
    a = np.ones(class_counts.shape[0])
    b = np.ones(class_counts.shape[1])
    for _ in range(_IPF_ITERATIONS):
        a = item_target / np.maximum(class_counts @ b, 1e-300)
        b = value_target / np.maximum(a @ class_counts, 1e-300)
    return a, b


_BYTES_PER_PAIR = 95  # peak memory of semi_synthetic per (user, item) pair, measured: ~89 bytes


@declare(seed=Seed(), n_factors=Interval(int, 1), reg=Interval(float, 0.0, open="low"),
         n_iter=Interval(int, 1), smoothing=Interval(float, 0.0, open="low"))
def semi_synthetic(data: FeedbackData, *, seed, n_factors: int = 8, reg: float = 5.0,
                   n_iter: int = 15, smoothing: float = 0.5,
                   name: str | None = None) -> FeedbackData:
    r"""A world with full ground truth completed from a real dataset (Schnabel et al., 2016).

    **Completion.** A biased matrix factorisation
    :math:`\hat r_{ui} = \mu + b_u + b_i + x_u^\top y_i` (``n_factors`` factors, L2 penalty
    ``reg``, alternating least squares) is fitted on every real rating, logged (``mnar``)
    and randomly exposed (``mar``; a pair in both counts once, with its MAR rating).
    Each pair gets the affinity :math:`a_{ui} = \hat r_{ui} + \sigma\varepsilon_{ui}`,
    :math:`\varepsilon_{ui} \sim N(0, 1)`, where :math:`\sigma` is the model's root mean
    squared error on the MAR ratings (so the completed matrix is not exactly low-rank).

    **Calibration.** The affinities are cut at their quantiles so that the share of each
    rating value in ``full`` equals its share in the real MAR data: the completed ratings
    have the distribution of randomly exposed ratings, not of logged ones.

    **MNAR log.** The observation probability of a pair depends on its item and its
    (completed) rating value, :math:`P_{ui} = \min\{1, a_i\, b_{r_{ui}}\}`: the factors are
    fitted by iterative proportional fitting so that the expected number of log entries of
    each item equals the real log's count of that item (plus ``smoothing``, so that no
    item has propensity 0) and the expected number of each rating value equals the real
    log's. This is the popularity component and the rating-value (MNAR on the value)
    component of the real selection. ``mnar`` is one Bernoulli draw with these
    probabilities; ``mar`` gives each user who has MAR data in ``data`` as many uniformly
    drawn items as the real MAR data give the most users (10 in Yahoo! R3, 16 in Coat).

    What it cannot show: the real selection also depends on the user and on interactions
    between users and items that neither component captures, and the completed ratings are
    only as rich as the completion model. A method that exploits exactly this structure
    (e.g. propensities per rating value) is favoured.

    Parameters
    ----------
    data : FeedbackData
        A real dataset with a ``mar`` part and ratings on a finite scale (Coat, Yahoo! R3);
        the user set may first be reduced with
        :func:`~recbias_tutorial.data.restrict_to_mar_users`.
    seed : int or numpy.random.Generator
        Randomness of the model's initialisation, the noise and the two draws.
    n_factors : int, default 8
        Factors of the completion model.
    reg : float, default 5.0
        L2 penalty of the completion model (> 0).
    n_iter : int, default 15
        Alternating least-squares sweeps.
    smoothing : float, default 0.5
        Pseudo-count added to every item's real log count (> 0).
    name : str, optional
        Name of the result (default ``"semi-synthetic <data.name>"``).

    Returns
    -------
    FeedbackData
        ``full`` has every pair (sorted by user, then item); ``propensity`` is
        :math:`P`, shape ``(n_users, n_items)``; ``info`` holds the parameters,
        ``sigma``, ``rating_values``, ``mar_shares`` (the calibration target),
        ``item_factor`` (:math:`a_i`) and ``value_factor`` (:math:`b_r`).

    Raises
    ------
    ValueError
        If ``data`` is not a FeedbackData with valid ``mnar`` and ``mar`` frames; if
        ``n_factors`` or ``n_iter`` is not a positive integer or ``reg`` or ``smoothing``
        not a finite number > 0; if ``seed`` is missing or not a non-negative int or
        Generator.

    See Also
    --------
    recbias_tutorial.data.simulate : a fully simulated world with the same fields.
    recbias_tutorial.data.sample_observed : a fresh MNAR log from the world.
    recbias_tutorial.comparison.compare_methods : every evaluation method on such a world.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> real = rb.simulate(60, 40, seed=0, mean_ratings_per_user=8, n_mar_items=5)
    >>> world = semi_synthetic(real, seed=1)
    >>> len(world.full), world.propensity.shape, len(world.mar)
    (2400, (60, 40), 300)
    >>> bool(((world.propensity > 0) & (world.propensity <= 1)).all())
    True
    """
    if not isinstance(data, FeedbackData):
        raise ValueError(f"data must be a FeedbackData, got {type(data).__name__}")
    if data.mar is None or len(data.mar) == 0:
        raise ValueError("data must have randomly exposed feedback (data.mar) to calibrate on")
    shape = (data.n_users, data.n_items)
    check_feedback(data.mnar, "data.mnar", *shape)
    check_feedback(data.mar, "data.mar", *shape)
    check_fits_in_memory(_BYTES_PER_PAIR * float(shape[0]) * shape[1], "data (n_users x n_items)",
                         f"a semi-synthetic world of {shape[0]:,} x {shape[1]:,} pairs (every "
                         "pair's rating and propensity)")
    rng = as_generator(seed)
    fit_rng, noise_rng, obs_rng, mar_rng = (np.random.default_rng(s)
                                            for s in rng.integers(2**63, size=4))

    # --- completion: biased MF on every real rating (MAR wins on a shared pair) ---------
    both = pd.concat([data.mar, data.mnar]).drop_duplicates(["user", "item"], keep="first")
    u, i = both["user"].to_numpy(np.int64), both["item"].to_numpy(np.int64)
    pred = _als(u, i, both["rating"].to_numpy(float), shape, n_factors, reg, n_iter, fit_rng)
    mar_u, mar_i = data.mar["user"].to_numpy(np.int64), data.mar["item"].to_numpy(np.int64)
    mar_r = data.mar["rating"].to_numpy(float)
    sigma = float(np.sqrt(np.mean((pred[mar_u, mar_i] - mar_r) ** 2)))
    affinity = pred + sigma * noise_rng.standard_normal(shape)

    # --- calibration: quantile cuts that reproduce the MAR rating distribution ----------
    values, counts = np.unique(mar_r, return_counts=True)
    shares = counts / counts.sum()
    cuts = np.quantile(affinity, np.cumsum(shares)[:-1])
    level = np.searchsorted(cuts, affinity, side="right")  # 0..len(values)-1
    ratings = values[level]

    # --- propensities: item x rating-value factors matched to the real log's margins ----
    n_values = len(values)
    cls = np.arange(data.n_items)[None, :] * n_values + level
    class_counts = np.bincount(cls.ravel(), minlength=data.n_items * n_values)
    class_counts = class_counts.reshape(data.n_items, n_values).astype(float)
    log_items = data.mnar["item"].to_numpy(np.int64)
    item_target = np.bincount(log_items, minlength=data.n_items) + smoothing
    log_level = np.searchsorted(values, data.mnar["rating"].to_numpy(float))
    log_level = np.clip(log_level, 0, n_values - 1)  # a logged value absent from MAR: nearest
    value_target = np.bincount(log_level, minlength=n_values) + smoothing
    value_target *= item_target.sum() / value_target.sum()
    a, b = _ipf(class_counts, item_target, value_target)
    propensity = np.minimum(1.0, a[:, None] * b[None, :])[np.arange(data.n_items)[None, :], level]

    # --- one MNAR draw, one MAR draw --------------------------------------------------
    n_users, n_items = shape
    hit = np.flatnonzero(obs_rng.random(n_users * n_items) < propensity.ravel())
    mnar = feedback_frame(hit // n_items, hit % n_items, ratings.ravel()[hit])
    full = feedback_frame(np.repeat(np.arange(n_users), n_items),
                          np.tile(np.arange(n_items), n_users), ratings.ravel())
    per_user = data.mar.groupby("user").size()
    n_mar_items = int(per_user.mode().iloc[0])
    mar_users = per_user.index.to_numpy(np.int64)
    picks = _choose(mar_rng, len(mar_users), n_items, n_mar_items)
    mar_users = np.repeat(mar_users, n_mar_items)
    mar = feedback_frame(mar_users, picks.ravel(), ratings[mar_users, picks.ravel()])

    info = {"semi_synthetic": True, "source": data.name,
            "seed": seed if isinstance(seed, numbers.Integral) else None,
            "n_factors": n_factors, "reg": reg, "n_iter": n_iter, "smoothing": smoothing,
            "sigma": sigma, "rating_values": values, "mar_shares": shares,
            "item_factor": a, "value_factor": b, "n_mar_items": n_mar_items}
    return FeedbackData(name=name or f"semi-synthetic {data.name}", n_users=n_users,
                        n_items=n_items, mnar=mnar, mar=mar, full=full,
                        threshold=data.threshold, propensity=propensity, info=info)
