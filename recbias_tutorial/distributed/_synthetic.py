"""A synthetic log of any size, built a chunk of users at a time (for the scale benchmark and
the appendix page: far larger than the chapters' data, and cheap to make)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._params import Interval, Seed, declare
from .._validation import as_generator

_CHUNK_CELLS = 1 << 20


@declare(n_users=Interval(int, 1), n_items=Interval(int, 2), per_user=Interval(int, 2),
         test_share=Interval(float, 0.0, 1.0, open="both"), popularity=Interval(float, 0.0),
         seed=Seed())
def synthetic_log(n_users: int, n_items: int, *, per_user: int = 50, test_share: float = 0.2,
                  popularity: float = 1.0, seed) -> tuple[pd.DataFrame, pd.DataFrame]:
    r"""A popularity-biased log of ``n_users * per_user`` ratings, split into train and test.

    Item :math:`i` (0 = most popular) is chosen with weight :math:`(i+1)^{-\text{popularity}}`;
    each user rates ``per_user`` distinct items drawn without replacement with these weights
    (successive sampling), a chunk of users at a time, so memory follows the log, not
    ``n_users * n_items``. A rating is 5 with probability :math:`q_i` (the item's quality,
    uniform in [0.1, 0.6]) and 1 otherwise. The last ``round(test_share * per_user)`` items
    of each user (in the order drawn) are the test rows.

    Parameters
    ----------
    n_users, n_items : int
        Sizes (``n_items >= per_user``).
    per_user : int, default 50
        Ratings per user, at least 2.
    test_share : float, default 0.2
        Share of each user's ratings in the test log, in (0, 1); at least one rating of each
        user goes to each side.
    popularity : float, default 1.0
        Exponent of the items' popularity weights (0: uniform), >= 0.
    seed : int or numpy.random.Generator
        Randomness of the log (required).

    Returns
    -------
    (train, test) : tuple of pandas.DataFrame
        Columns ``user``, ``item`` (int64) and ``rating`` (float), sorted by user.

    Raises
    ------
    ValueError
        If a size is not a positive integer (``n_items`` >= 2, ``per_user`` >= 2 and at most
        ``n_items``), ``test_share`` is not in (0, 1), ``popularity`` is negative or not
        finite, or ``seed`` is missing or invalid.

    Examples
    --------
    >>> train, test = synthetic_log(100, 30, per_user=10, seed=0)
    >>> len(train), len(test), test.groupby("user").size().unique().tolist()
    (800, 200, [2])
    """
    if per_user > n_items:
        raise ValueError(f"per_user must be <= n_items ({n_items}), got {per_user}")
    rng = as_generator(seed)
    n_test = min(per_user - 1, max(1, round(test_share * per_user)))
    log_w = -popularity * np.log(np.arange(1, n_items + 1))
    quality = rng.uniform(0.1, 0.6, n_items)
    step = max(1, _CHUNK_CELLS // n_items)
    trains, tests = [], []
    for lo in range(0, n_users, step):
        hi = min(n_users, lo + step)
        keys = np.log(rng.standard_exponential((hi - lo, n_items))) - log_w  # E / w, in logs
        chosen = np.argpartition(keys, per_user - 1, axis=1)[:, :per_user]
        order = np.argsort(np.take_along_axis(keys, chosen, axis=1), axis=1)
        items = np.take_along_axis(chosen, order, axis=1)  # in the order drawn
        ratings = np.where(rng.random(items.shape) < quality[items], 5.0, 1.0)
        users = np.repeat(np.arange(lo, hi, dtype=np.int64), per_user).reshape(items.shape)
        cut = per_user - n_test
        for out, cols in ((trains, slice(0, cut)), (tests, slice(cut, None))):
            out.append(pd.DataFrame({"user": users[:, cols].ravel(),
                                     "item": items[:, cols].ravel().astype(np.int64),
                                     "rating": ratings[:, cols].ravel()}))
    return (pd.concat(trains, ignore_index=True), pd.concat(tests, ignore_index=True))
