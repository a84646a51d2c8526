r"""Table 1's evaluation conventions, one change at a time, and orderings over seeds (private).

Re-exported by :mod:`recbias_tutorial.replications.wang2025`; import it from there.
Wang et al. state URE and Recall@K̄ but leave three choices unstated that move the numbers:
whether the songs a user already rated in the log stay among the ranked candidates (the
paper says "all candidate items"), which users the mean runs over (those with a liked random
song, as URE's definition needs, or every test user), and the cut-off K̄ of the traditional
scheme. :func:`convention_ladder` measures each model under each choice on the same test set;
:func:`ordering_over_seeds` says whether an ordering of two models holds over seeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import permutations

import numpy as np
import pandas as pd
import scipy.stats

from ..._params import Interval, declare
from ..._validation import (MAX_IMPLICIT_ID, as_real_array, check_cutoffs, check_feedback,
                            named_items)
from ...estimators import kbar_curves
from ...metrics import recall_curves
from ...stats import paired_wilcoxon
from ._protocol import _check_cutoffs_of

#: The candidate sets of URE: every item (the paper's "all candidate items") or every item
#: but the user's logged songs (the course's rule for ground truth from random data).
CANDIDATES = {"all items": False, "logged songs excluded": True}
#: Whom a mean runs over: users with a relevant random item, or every user of the test set.
USERS = ("with a liked random song", "all test users")


@declare(k=Interval(int, 1), threshold=Interval(float))
def convention_ladder(scores: Mapping[str, np.ndarray] | Iterable[tuple[str, np.ndarray]],
                      test: pd.DataFrame, *, train: pd.DataFrame, k: int = 5,
                      k_bars: Sequence[int] = (1, 3, 5), threshold: float) -> pd.DataFrame:
    """Per model: URE Recall@K and Recall@K̄ under every convention the paper leaves open.

    URE Recall@K is computed with both candidate sets of :data:`CANDIDATES`, Recall@K̄ (the
    user's random items only, so no candidate choice) for every ``k_bars``; each is averaged
    over both user sets of :data:`USERS`. A user without a liked random song contributes 0
    to the "all test users" mean (nothing of hers can be recalled), so that mean is the other
    one times the share of test users with a liked song.

    Parameters
    ----------
    scores : mapping name -> score matrix, or iterable of ``(name, scores)``
        The models (an iterator keeps one score matrix in memory at a time).
    test : pandas.DataFrame
        Randomly exposed test ratings.
    train : pandas.DataFrame
        The training log: the pairs excluded by "logged songs excluded".
    k : int, default 5
        Cut-off of URE Recall@K.
    k_bars : sequence of int, default (1, 3, 5)
        Cut-offs of the traditional scheme.
    threshold : float
        A test rating is relevant when ``>= threshold``.

    Returns
    -------
    pandas.DataFrame
        Long table: ``model``, ``metric`` (``"URE Recall@K"`` or ``"Recall@K̄"``), ``cutoff``,
        ``candidates`` (a key of :data:`CANDIDATES`, or ``"random items"``), ``users`` (one of
        :data:`USERS`), ``n_users`` and ``value``.

    Raises
    ------
    ValueError
        On a bad frame, cut-off or ``threshold``, or a test set without a relevant rating.

    See Also
    --------
    scheme_users : one convention, per user.
    ordering_over_seeds : whether an ordering of two models holds over seeds.

    Examples
    --------
    >>> test = pd.DataFrame({"user": [0, 0, 1], "item": [1, 2, 0], "rating": [5.0, 1.0, 1.0]})
    >>> train = pd.DataFrame({"user": [0], "item": [0], "rating": [5.0]})
    >>> out = convention_ladder({"m": np.array([[0.9, 0.5, 0.1], [0.1, 0.2, 0.3]])}, test,
    ...                         train=train, k=1, k_bars=[1], threshold=4.0)
    >>> out.set_index(["metric", "candidates", "users"])["value"].to_dict()
    ... # doctest: +NORMALIZE_WHITESPACE
    {('URE Recall@K', 'all items', 'with a liked random song'): 0.0,
     ('URE Recall@K', 'all items', 'all test users'): 0.0,
     ('URE Recall@K', 'logged songs excluded', 'with a liked random song'): 1.0,
     ('URE Recall@K', 'logged songs excluded', 'all test users'): 0.5,
     ('Recall@K̄', 'random items', 'with a liked random song'): 1.0,
     ('Recall@K̄', 'random items', 'all test users'): 0.5}
    """
    k_bars = check_cutoffs(k_bars, MAX_IMPLICIT_ID, "k_bars").tolist()
    test = check_feedback(test, "test")
    train = check_feedback(train, "train")
    n_test_users = test["user"].nunique()
    rows = []
    for name, matrix in named_items(scores, "scores"):
        matrix = _check_cutoffs_of(matrix, {"k": k, "k_bars": k_bars})
        per_user = {("URE Recall@K", k, label): recall_curves(
            matrix, test, [k], threshold=threshold, exclude=train if drop else None,
            per_user=True)[k] for label, drop in CANDIDATES.items()}
        kbar = kbar_curves(matrix, test, list(k_bars), threshold=threshold, per_user=True)
        per_user.update({("Recall@K̄", int(kb), "random items"): kbar[kb] for kb in kbar.columns})
        for (metric, cutoff, candidates), values in per_user.items():
            for users, mean, n in ((USERS[0], values.mean(), len(values)),
                                   (USERS[1], values.sum() / n_test_users, n_test_users)):
                rows.append({"model": name, "metric": metric, "cutoff": cutoff,
                             "candidates": candidates, "users": users, "n_users": n,
                             "value": float(mean)})
        del matrix
    return pd.DataFrame(rows)


def ordering_over_seeds(values: pd.DataFrame) -> pd.DataFrame:
    """For every ordered pair of models: does the first beat the second over seeds?

    Each seed is one paired observation (the same split and test set for every model). The
    table gives the mean difference, how many seeds order the pair that way, a paired t-test
    (:func:`scipy.stats.ttest_rel`) and a Wilcoxon signed-rank test
    (:func:`recbias_tutorial.stats.paired_wilcoxon`), both two-sided.

    Parameters
    ----------
    values : pandas.DataFrame
        One row per seed, one column per model (e.g. URE Recall@5 of each seed).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(higher, lower)`` for every pair whose mean difference is > 0 (the
        observed ordering): ``difference`` (mean over seeds), ``seeds`` (how many seeds
        agree), ``of`` (how many seeds), ``t p-value`` and ``Wilcoxon p-value``.

    Raises
    ------
    ValueError
        If ``values`` has fewer than two seeds or two models, or a missing value.

    Examples
    --------
    >>> values = pd.DataFrame({"A": [0.3, 0.4, 0.5, 0.45, 0.35, 0.5],
    ...                        "B": [0.1, 0.2, 0.2, 0.25, 0.15, 0.3]})
    >>> out = ordering_over_seeds(values)
    >>> row = out.loc[("A", "B")]
    >>> out.index.tolist(), int(row["seeds"]), round(float(row["Wilcoxon p-value"]), 4)
    ([('A', 'B')], 6, 0.0312)
    """
    if not isinstance(values, pd.DataFrame) or values.shape[0] < 2 or values.shape[1] < 2:
        raise ValueError("values must be a DataFrame with one row per seed (at least two) and "
                         "one column per model (at least two)")
    if values.columns.duplicated().any():
        raise ValueError(f"values has the model(s) "
                         f"{sorted(map(str, values.columns[values.columns.duplicated()]))} twice")
    if values.isna().any().any():
        raise ValueError("values has missing entries: every model needs every seed")
    if not np.isfinite(as_real_array(values.to_numpy(), "values")).all():
        raise ValueError("values has infinite entries")
    rows = {}
    for a, b in permutations(values.columns, 2):
        diff = values[a].to_numpy(float) - values[b].to_numpy(float)
        if diff.mean() <= 0:
            continue
        rows[(a, b)] = {
            "difference": diff.mean(), "seeds": int((diff > 0).sum()), "of": len(diff),
            "t p-value": float(scipy.stats.ttest_rel(values[a], values[b]).pvalue),
            "Wilcoxon p-value": paired_wilcoxon(values[a].to_numpy(float),
                                                values[b].to_numpy(float))[1]}
    columns = ["difference", "seeds", "of", "t p-value", "Wilcoxon p-value"]
    index = pd.MultiIndex.from_tuples(list(rows), names=["higher", "lower"])
    return pd.DataFrame([rows[key] for key in rows], index=index, columns=columns)
