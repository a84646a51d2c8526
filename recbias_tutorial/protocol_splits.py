"""Data preparation and splits of the intervened-test-set protocol (Carraro & Bridge).

One repetition of the protocol in :mod:`recbias_tutorial.protocols` splits the MNAR feedback
60/40 into :math:`D_{tr}` / :math:`D_{he}` and the MAR feedback 15/15/70 into :math:`D_w`
(weights of WTD) / :math:`D_{val}` (hyper-parameter selection) / :math:`D_{gt}` (ground
truth), uniformly at random with a seed (:func:`split_feedback`).
:func:`restrict_to_mar_users` keeps the users who can appear in :math:`D_{gt}`.

Everything here is re-exported by :mod:`recbias_tutorial.protocols`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd

from .datasets import FeedbackData
from .sampling import random_split

__all__ = ["ProtocolSplit", "restrict_to_mar_users", "split_feedback"]


def _check_seed(seed: Any, name: str = "seed") -> int:
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise ValueError(f"{name} must be a non-negative int, got {seed!r}")
    return int(seed)


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
        if isinstance(n_users, bool) or not isinstance(n_users, Integral) or not 0 < n_users <= users.size:
            raise ValueError(f"n_users must be an int in [1, {users.size}], got {n_users!r}")
        rng = np.random.default_rng(_check_seed(seed))
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


@dataclasses.dataclass(frozen=True, eq=False)
class ProtocolSplit:
    """The five parts of one repetition (each with a fresh ``RangeIndex``).

    Attributes
    ----------
    train : DataFrame
        :math:`D_{tr}`, MNAR training data (60% of the MNAR log by default).
    heldout : DataFrame
        :math:`D_{he}`, MNAR held-out data the intervened test sets are drawn from.
    weights : DataFrame
        :math:`D_w`, MAR data used only for the WTD weights.
    val : DataFrame
        :math:`D_{val}`, MAR data for hyper-parameter selection.
    gt : DataFrame
        :math:`D_{gt}`, MAR ground truth.
    seed : int
        Seed of the split.
    """

    train: pd.DataFrame
    heldout: pd.DataFrame
    weights: pd.DataFrame
    val: pd.DataFrame
    gt: pd.DataFrame
    seed: int


def split_feedback(data: FeedbackData, *, seed: int, mnar_fractions: Sequence[float] = (0.6, 0.4),
                   mar_fractions: Sequence[float] = (0.15, 0.15, 0.7)) -> ProtocolSplit:
    """Split MNAR into D_tr / D_he and MAR into D_w / D_val / D_gt, uniformly at random.

    Uses :func:`recbias_tutorial.sampling.random_split` twice with one generator seeded by
    ``seed`` (MNAR first, then MAR).

    Examples
    --------
    >>> from recbias_tutorial.simulate import simulate
    >>> split = split_feedback(simulate(50, 40, seed=0), seed=1)
    >>> round(len(split.train) / (len(split.train) + len(split.heldout)), 1)
    0.6
    """
    if not isinstance(data, FeedbackData):
        raise ValueError(f"data must be a FeedbackData, got {type(data).__name__}")
    if data.mar is None or len(data.mar) == 0:
        raise ValueError(f"data ({data.name}) has no MAR feedback: the protocol needs D_w, D_val, D_gt")
    if len(mnar_fractions) != 2:
        raise ValueError(f"mnar_fractions must have 2 parts (train, heldout), got {mnar_fractions!r}")
    if len(mar_fractions) != 3:
        raise ValueError(f"mar_fractions must have 3 parts (weights, val, gt), got {mar_fractions!r}")
    seed = _check_seed(seed)
    rng = np.random.default_rng(seed)
    train, heldout = random_split(data.mnar, mnar_fractions, seed=rng)
    weights, val, gt = random_split(data.mar, mar_fractions, seed=rng)
    parts = [p.reset_index(drop=True) for p in (train, heldout, weights, val, gt)]
    return ProtocolSplit(*parts, seed=seed)
