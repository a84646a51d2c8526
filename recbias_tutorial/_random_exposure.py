r"""Estimators on randomly exposed data (Wang et al., WWW 2025); public home: ``estimators``.

Both schemes are Average-Over-All recall on the user's relevant randomly exposed items
(``random``); they differ only in the candidates the items are ranked against:

* :func:`ure_recall` (URE) ranks them against the whole catalogue (minus ``exclude``), like
  full-data Recall@K, which it estimates without bias;
* :func:`recall_at_kbar` and :func:`kbar_curves` (the traditional Recall@K̄) rank each user's
  random items only against each other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._ranking import (as_sets, curves_frame, positions, ranking_input, recall_per_user,
                       within_user_positions)
from ._params import Interval, declare
from ._validation import check_cutoffs, check_feedback
from .scorer import check_scores


@declare(k=Interval(int, None), threshold=Interval(float))  # URE estimates Recall@k: k required
def ure_recall(scores, random: pd.DataFrame, *, k: int, threshold: float = 4.0,
               exclude: pd.DataFrame | None = None) -> float:
    r"""Unbiased Recall@K from randomly exposed feedback (URE; Wang et al., WWW 2025).

    For each user with :math:`n_u \ge 1` relevant items in ``random``, the threshold
    :math:`\tau_u` is the score of the item at position ``k`` (0-based: the (k+1)-th item) of
    the user's ranking over the whole catalogue minus ``exclude``; the estimate is the share of
    the user's relevant random items ranked above :math:`\tau_u`, averaged over those users.
    "Above" uses the tie rule of the ranks :math:`Z` (a tied item with a smaller id comes
    first), i.e. the item's full-catalogue position is below ``k``; without ties this is
    "scored higher than :math:`\tau_u`". So URE is Average-Over-All Recall@K on the random
    items *ranked against the whole catalogue*, where the traditional scheme
    (:func:`recall_at_kbar`) ranks them only against each other.

    If each user's random items are a uniform sample of the user's items, the per-user term is
    unbiased for the user's full-data Recall@K, so the estimate is unbiased for
    ``aoa(scores, full, metric="recall", k=k, exclude=exclude)`` restricted to the users who
    get a relevant random item (averaging only over them, as the definition does, is what
    makes small random samples slightly biased for the all-user mean).

    Parameters
    ----------
    scores : array (n_users, n_items)
        Finite scores, higher is better.
    random : DataFrame with ``user``, ``item``, ``rating``
        Randomly exposed feedback :math:`D_{rand}` (e.g. from
        :func:`recbias_tutorial.data.sample_random_exposure`); no duplicate pairs.
    k : int
        Cut-off K, in ``1..n_items``.
    threshold : float, default 4.0
        An item is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (the training pairs); an excluded random item is
        still ranked, with its own score.

    Returns
    -------
    float
        The URE estimate of Recall@K.

    Raises
    ------
    ValueError
        If ``scores`` is not a non-empty 2-D array of finite real numbers; if ``random`` is
        not valid feedback (columns ``user``, ``item``, ``rating``, integer ids inside the
        score matrix, finite ratings, no duplicate pairs) or has no relevant item; if ``k``
        is not an integer in ``1..n_items``; if ``exclude`` is not a DataFrame of integer
        ``user`` and ``item`` ids inside the score matrix.

    See Also
    --------
    recbias_tutorial.estimators.recall_at_kbar : the traditional scheme it replaces.
    recbias_tutorial.metrics.recall_curves : the same estimate for many K at once.
    recbias_tutorial.estimators.aoa : full-data Recall@K, which URE estimates.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.8, 0.7, 0.6, 0.5]])
    >>> rand = pd.DataFrame({"user": [0, 0], "item": [1, 4], "rating": [5.0, 5.0]})
    >>> ure_recall(scores, rand, k=2)  # tau = 0.7: item 1 counts, item 4 does not
    0.5
    """
    scores, k, rel = ranking_input(scores, random, k=k, threshold=threshold, name="random")
    z = positions(scores, rel, exclude, k)  # capped at k
    return float(recall_per_user(rel["user"].to_numpy(np.int64), z, np.array([k]))[k].mean())


def _kbar_per_user(scores: np.ndarray, random: pd.DataFrame, k_bars: np.ndarray,
                   threshold: float, name: str) -> pd.DataFrame:
    """Per-user Recall@K̄ of a validated score matrix, for every K̄ in ``k_bars``."""
    check_feedback(random, name, *scores.shape)
    users = random["user"].to_numpy(np.int64)
    items = random["item"].to_numpy(np.int64)
    is_rel = random["rating"].to_numpy(dtype=float) >= threshold
    if not is_rel.any():
        raise ValueError(f"{name} has no relevant items (rating >= threshold={threshold})")
    pos = within_user_positions(scores, users, items)
    out = recall_per_user(users[is_rel], pos[is_rel], k_bars)
    out.columns.name = "k_bar"
    return out


@declare(k_bar=Interval(int, 1), threshold=Interval(float))
def recall_at_kbar(scores, random: pd.DataFrame, *, k_bar: int, threshold: float = 4.0) -> float:
    r"""Traditional Recall@K̄ on randomly exposed data: rank only each user's random items.

    Each user's randomly exposed items are sorted by score (ties: smaller id first); the
    estimate is the share of the user's relevant random items in the top ``k_bar``, averaged
    over users with at least one relevant random item. Wang et al. (WWW 2025) show it does not
    track full-catalogue Recall@K (use :func:`ure_recall`).

    Parameters
    ----------
    scores : array (n_users, n_items)
        Finite scores, higher is better.
    random : DataFrame with ``user``, ``item``, ``rating``
        Randomly exposed feedback (e.g. N̄ items per user); no duplicate pairs.
    k_bar : int
        Cut-off K̄ >= 1 within each user's random items.
    threshold : float, default 4.0
        An item is relevant when ``rating >= threshold``.

    Returns
    -------
    float
        Recall@K̄ averaged over users with a relevant random item.

    Raises
    ------
    ValueError
        If ``scores`` is not a non-empty 2-D array of finite real numbers; if ``k_bar`` is
        not a positive integer; if ``random`` is not valid feedback (columns ``user``,
        ``item``, ``rating``, integer ids inside the score matrix, finite ratings, no
        duplicate pairs) or has no relevant item.

    See Also
    --------
    recbias_tutorial.estimators.kbar_curves : the same for many K̄ at once.
    recbias_tutorial.estimators.ure_recall : the unbiased full-catalogue estimate.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.8, 0.7, 0.6, 0.5]])
    >>> rand = pd.DataFrame({"user": [0, 0, 0], "item": [1, 3, 4], "rating": [1.0, 5.0, 5.0]})
    >>> recall_at_kbar(scores, rand, k_bar=2)
    0.5
    """
    scores = check_scores(scores)
    per_user = _kbar_per_user(scores, random, np.array([k_bar]), threshold, "random")
    return float(per_user[k_bar].mean())


def kbar_curves(scores, random, k_bars, *, threshold: float = 4.0,
                per_user: bool = False) -> pd.DataFrame:
    r"""Traditional Recall@K̄ on randomly exposed data, for many K̄ at once.

    Each user's randomly exposed items are sorted by score (ties: smaller id first) and
    Recall@K̄ is the share of the user's relevant random items in the top K̄, averaged over
    users with a relevant random item: each value equals :func:`recall_at_kbar` with the same
    ``k_bar``.

    Parameters
    ----------
    scores : array (n_users, n_items)
    random : DataFrame, or mapping name -> DataFrame
        Randomly exposed feedback (e.g. N̄ items per user).
    k_bars : sequence of int
        Cut-offs K̄ >= 1.
    threshold : float
        A pair is relevant when ``rating >= threshold``.
    per_user : bool
        Return per-user values instead of means.

    Returns
    -------
    pandas.DataFrame
        Same layout as :func:`recbias_tutorial.metrics.recall_curves` (columns ``k_bar``; a
        single frame is named ``"random"``).

    Raises
    ------
    ValueError
        If ``scores`` is not a non-empty 2-D array of finite real numbers; if ``random`` is
        neither a DataFrame nor a non-empty mapping of DataFrames, or one of its frames is
        not valid feedback (columns ``user``, ``item``, ``rating``, integer ids inside the
        score matrix, finite ratings, no duplicate pairs) or has no relevant item; if
        ``k_bars`` is not a non-empty list of positive integers.

    See Also
    --------
    recbias_tutorial.estimators.recall_at_kbar : one K̄.
    recbias_tutorial.metrics.recall_curves : full-catalogue Recall@K (URE) for many K.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.8, 0.7, 0.6, 0.5]])
    >>> rand = pd.DataFrame({"user": [0, 0, 0], "item": [1, 3, 4], "rating": [1.0, 5.0, 5.0]})
    >>> kbar_curves(scores, rand, [1, 2, 3]).loc["random"].tolist()
    [0.0, 0.5, 1.0]
    """
    scores = check_scores(scores)
    sets = as_sets(random, "random")
    k_bars = check_cutoffs(k_bars, np.iinfo(np.int64).max, "k_bars")
    frames = {name: _kbar_per_user(scores, frame, k_bars, threshold,
                                   f"random[{name!r}]" if len(sets) > 1 else "random")
              for name, frame in sets.items()}
    return curves_frame(frames, per_user)
