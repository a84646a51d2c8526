"""Seeded splits of feedback, the unseen-pair rule for ground truth, and user subsets."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .._params import Seed, declare
from .._validation import as_generator, check_feedback, check_fractions, check_int
from ._feedback import FeedbackData

__all__ = ["drop_seen", "random_split", "restrict_to_mar_users"]


@declare(seed=Seed())
def random_split(frame: pd.DataFrame, fractions, *, seed) -> tuple[pd.DataFrame, ...]:
    """Split rows uniformly at random into parts of the given fractions (e.g. 60/40).

    Part sizes are ``floor(fraction * n)`` with the remainder going to the last part, so
    every row lands in exactly one part. Each part keeps the original row order and index.

    Parameters
    ----------
    frame : DataFrame
        Rows to split (any columns).
    fractions : sequence of float
        At least two positive fractions summing to 1.
    seed : int or numpy.random.Generator
        Randomness of the permutation (an int seed and ``np.random.default_rng(seed)`` give
        the same split).

    Returns
    -------
    tuple of pandas.DataFrame
        One part per fraction, in the order of ``fractions``.

    Raises
    ------
    ValueError
        If ``frame`` is not a non-empty DataFrame, ``seed`` is missing or not a
        non-negative int or Generator, or ``fractions`` are not at least two positive
        numbers summing to 1.

    See Also
    --------
    recbias_tutorial.data.drop_seen : remove training pairs from a test part.
    recbias_tutorial.replications.carraro2022.split_feedback : the splits of a protocol.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"user": range(10), "item": 0, "rating": 5.0})
    >>> [len(part) for part in random_split(df, (0.15, 0.15, 0.7), seed=0)]
    [1, 1, 8]
    """
    if not isinstance(frame, pd.DataFrame) or len(frame) == 0:
        raise ValueError("frame must be a non-empty pandas DataFrame")
    fr = check_fractions(fractions, "fractions")
    n = len(frame)
    sizes = np.floor(fr[:-1] * n).astype(int)
    cuts = np.cumsum(sizes)
    order = as_generator(seed).permutation(n)
    return tuple(frame.iloc[np.sort(part)] for part in np.split(order, cuts))


def drop_seen(test: pd.DataFrame, train: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``test`` whose (user, item) pair is not in ``train``.

    Ground truth from randomly exposed data must not contain pairs that are also in the
    training log: a model has seen them, so ranking them favours whatever memorised them
    (Coat has 366 such pairs). ``attrs["n_dropped"]`` of the result holds how many rows were
    removed, for chapters to report.

    Parameters
    ----------
    test : pandas.DataFrame
        Feedback to clean (columns ``user``, ``item``, ...).
    train : pandas.DataFrame
        The training log (columns ``user``, ``item``).

    Returns
    -------
    pandas.DataFrame
        The kept rows of ``test``, in their order, with a fresh ``RangeIndex``.

    Raises
    ------
    ValueError
        If a frame is not a DataFrame with integer ``user`` and ``item`` columns.

    See Also
    --------
    recbias_tutorial.data.random_split : seeded splits of a feedback frame.
    recbias_tutorial.data.restrict_to_mar_users : restrict a dataset to its MAR users.

    Examples
    --------
    >>> train = pd.DataFrame({"user": [0, 1], "item": [0, 1], "rating": 5.0})
    >>> test = pd.DataFrame({"user": [0, 0, 1], "item": [0, 2, 0], "rating": 4.0})
    >>> kept = drop_seen(test, train)
    >>> kept["item"].tolist(), kept.attrs["n_dropped"]
    ([2, 0], 1)
    """
    check_feedback(test, "test", require_rating=False, allow_empty=True, unique=False)
    check_feedback(train, "train", require_rating=False, allow_empty=True, unique=False)
    seen = pd.MultiIndex.from_frame(train[["user", "item"]].astype(np.int64))
    pairs = pd.MultiIndex.from_frame(test[["user", "item"]].astype(np.int64))
    keep = ~pairs.isin(seen)
    out = test[keep].reset_index(drop=True)
    out.attrs["n_dropped"] = int((~keep).sum())
    return out


def restrict_to_mar_users(data: FeedbackData, *, n_users: int | None = None,
                          seed: int | None = None) -> FeedbackData:
    """Keep only the users who have MAR feedback (optionally a random subset of them).

    Users are re-indexed ``0..n-1`` in increasing order of their original id; items keep
    their ids. The MNAR log is restricted to the kept users, so the protocol runs on "the
    MNAR log of the users with MAR data". ``info["user_ids"]`` holds the original ids.

    Parameters
    ----------
    data : FeedbackData
        A dataset with a MAR part (Coat, Yahoo! R3).
    n_users : int, optional
        Keep a uniformly random subset of this many of those users (seeded by ``seed``).
    seed : int, optional
        Seed of the subset; required with ``n_users``.

    Returns
    -------
    FeedbackData
        A copy with the kept users only (``mnar``, ``mar``, ``full`` and ``propensity``
        restricted), named ``"<name> (users with MAR data)"``.

    Raises
    ------
    ValueError
        If ``data`` is not a :class:`~recbias_tutorial.data.FeedbackData` or has no MAR
        feedback; if ``n_users`` is not an integer between 1 and the number of users with
        MAR data; if ``n_users`` is given and ``seed`` is missing or not a non-negative int
        or Generator.

    See Also
    --------
    recbias_tutorial.data.drop_seen : remove the logged pairs from the MAR ground truth.
    recbias_tutorial.data.load_yahoo_r3 : a dataset with MAR data for 5,400 of its users.

    Examples
    --------
    >>> import pandas as pd
    >>> f = lambda u, i: pd.DataFrame({"user": u, "item": i, "rating": 4.0})
    >>> data = FeedbackData("toy", 4, 2, mnar=f([0, 1, 3, 3], [0, 1, 0, 1]), mar=f([1, 3], [0, 0]))
    >>> small = restrict_to_mar_users(data)
    >>> small.n_users, small.mnar["user"].tolist(), small.info["user_ids"].tolist()
    (2, [0, 1, 1], [1, 3])
    """
    if not isinstance(data, FeedbackData):
        raise ValueError(f"data must be a FeedbackData, got {type(data).__name__}")
    if data.mar is None or len(data.mar) == 0:
        raise ValueError(f"data ({data.name}) has no MAR feedback to restrict to")
    users = np.unique(data.mar["user"].to_numpy(np.int64))
    if n_users is not None:
        n_users = check_int(n_users, "n_users", 1, users.size)
        rng = as_generator(seed)
        users = np.sort(rng.choice(users, size=int(n_users), replace=False))
    new_id = np.full(data.n_users, -1, dtype=np.int64)
    new_id[users] = np.arange(users.size)

    def keep(frame: pd.DataFrame | None) -> pd.DataFrame | None:
        if frame is None:
            return None
        out = frame[new_id[frame["user"].to_numpy(np.int64)] >= 0].copy()
        out["user"] = new_id[out["user"].to_numpy(np.int64)]
        return out.reset_index(drop=True)

    suffix = "users with MAR data" if n_users is None else f"{users.size} random users with MAR data"
    return dataclasses.replace(
        data, name=f"{data.name} ({suffix})", n_users=int(users.size), mnar=keep(data.mnar),
        mar=keep(data.mar), full=keep(data.full),
        propensity=None if data.propensity is None else data.propensity[users],
        info={**data.info, "user_ids": users},
    )
