"""Interventions on MNAR held-out data: FULL, REG, SKEW, WTD and WTD_H.

An *intervention* draws a subset of the biased (MNAR) held-out feedback so that the subset
looks more like Missing-At-Random feedback, and evaluates on that subset instead.

- ``full``  -- the held-out set itself (no intervention).
- ``reg``   -- a uniform random sample.
- ``skew``  -- P(u, i) proportional to ``1 / |D^tr_i|`` (inverse item popularity in the training
  data; Liang et al., 2016, as used by Carraro & Bridge).
- ``wtd``   -- P(u, i) proportional to w_u * w_i ** item_power with
  w_u = P_mar(u|O) / P_mnar(u|O) and w_i = P_mar(i|O) / P_mnar(i|O)
  (Carraro & Bridge, "Debiased offline evaluation of recommender systems: a weighted-sampling
  approach", SAC 2020). P_mnar is the user's (item's) share of the interactions in ``train``,
  P_mar its share in the small MAR sample ``mar``. The paper's experiments use
  ``item_power=2`` (w_u * w_i**2, the default here); the authors' public notebook uses
  w_u * w_i, i.e. ``item_power=1``.
- ``wtd_h`` -- like ``wtd`` with a *hypothesised* uniform P_mar: 1 / #users and 1 / #items.

Ids absent from ``train`` or ``mar`` (smoothing rule)
-----------------------------------------------------
A user or item of the held-out set may have no interaction in ``train`` (P_mnar = 0, an
infinite weight) or in ``mar`` (P_mar = 0, a zero weight). Every count is therefore smoothed
additively with ``smoothing`` pseudo-interactions (default 1, Laplace) over the *id space*::

    P(u) = (count(u) + smoothing) / (n_rows + smoothing * n_ids)

where the id space is the set of user (item) ids occurring in ``heldout`` or ``train`` and,
for ``wtd``, in ``mar``; ``n_ids`` is its size. The same rule applies to both P_mnar and P_mar,
so every weight is finite and positive, deterministic, and an id absent from both frames gets
the neutral weight (n_train + s * n_ids) / (n_mar + s * n_ids). For ``skew`` the weight is
1 / (count(i) + smoothing). ``n_ids`` only rescales all weights of a strategy by one constant,
so the sampling probabilities do not depend on how the id space is chosen. ``smoothing=0``
gives the unsmoothed definitions exactly and raises ``ValueError`` if a held-out id is absent
from ``train`` (or from ``mar`` for ``wtd``).

``smoothing="notebook"`` (:data:`NOTEBOOK_SMOOTHING`) is instead the rule of Carraro &
Bridge's public notebook (cdiego89phd/wtd-debiasing-RS-eval, ``calculate_p_u_o`` and
``calculate_p_i_o``): the shares are unsmoothed, ``count(u) / n_rows``, and a zero share
becomes :data:`NOTEBOOK_ZERO_SHARE` (1e-4), whatever the number of rows. Under it, a user
absent from the MAR weight split weighs 1e-4 / P_mnar(u), which is not 0 and, when that split
has about 10,000 rows, about the weight of a user seen once there. For ``skew`` the notebook
gives an item absent from ``train`` a weight drawn uniformly from [0, 1) (the other items
weigh 1 / count(i) <= 1); here it gets that draw's mean, 0.5, so the weights stay
deterministic.

Sampling scheme
---------------
``round(size * len(heldout))`` distinct rows (Python's ``round``) are drawn without replacement
by *successive sampling*: each draw picks a remaining row with probability proportional to its
weight. It is implemented, vectorised, with the Efraimidis--Spirakis exponential keys
(key_k = E_k / w_k, E_k ~ Exp(1), keep the m smallest), which has exactly that distribution.
For m = 1 the inclusion probability of row k is w_k / sum(w); for m > 1 it is *not* exactly
proportional to w_k (it is flatter), see ``tests/test_sampling.py`` for the exact formula.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._params import Either, Interval, Options, Seed, declare
from ._validation import as_generator, check_feedback

__all__ = ["NOTEBOOK_SMOOTHING", "NOTEBOOK_ZERO_SHARE", "STRATEGIES", "intervene",
           "intervention_weights"]

#: The interventions understood by :func:`intervene` and :func:`intervention_weights`.
STRATEGIES: tuple[str, ...] = ("full", "reg", "skew", "wtd", "wtd_h")
#: ``smoothing=NOTEBOOK_SMOOTHING``: the authors' notebook's rule for absent ids (unsmoothed
#: shares, a zero share becomes :data:`NOTEBOOK_ZERO_SHARE`), beside the additive pseudo-count.
NOTEBOOK_SMOOTHING = "notebook"
#: The share the authors' notebook gives an id with no row (``p_u_o[user] = 0.0001``).
NOTEBOOK_ZERO_SHARE = 1e-4
#: The weight ``skew`` gives an item absent from ``train`` under the notebook's rule: the mean
#: of the notebook's ``random.random()`` draw.
_NOTEBOOK_ABSENT_SKEW = 0.5
_NEEDS_TRAIN = frozenset({"skew", "wtd", "wtd_h"})


def _ids(df: object, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(user, item)`` id arrays (int64) of a feedback frame."""
    # held-out rows are sampled without replacement: a repeated pair would be drawn twice
    check_feedback(df, name, require_rating=False, unique=name == "heldout")
    return df["user"].to_numpy(np.int64), df["item"].to_numpy(np.int64)


#: Declared rules of the arguments both public functions share.
_STRATEGY_RULES = dict(strategy=Options(STRATEGIES), item_power=Interval(float, 0.0),
                       smoothing=Either(Interval(float, 0.0), Options((NOTEBOOK_SMOOTHING,))))


def _smoothing(smoothing: float | str) -> float | str:
    """The validated ``smoothing``: the notebook's rule by name, or the pseudo-count as a float."""
    return smoothing if smoothing == NOTEBOOK_SMOOTHING else float(smoothing)


def _validate(heldout, strategy, train, mar, item_power, smoothing) -> dict:
    """Check the arguments; return the id arrays of the frames the strategy uses."""
    ids = {"heldout": _ids(heldout, "heldout")}
    if strategy in _NEEDS_TRAIN:
        if train is None:
            raise ValueError(f"train is required for strategy={strategy!r} (the MNAR training data)")
        ids["train"] = _ids(train, "train")
    if strategy == "wtd":
        if mar is None:
            raise ValueError("mar is required for strategy='wtd' (the MAR weight split)")
        ids["mar"] = _ids(mar, "mar")
    return ids


def _row_shares(held: np.ndarray, ref: np.ndarray, n_ids: int, length: int,
                alpha: float | str, ref_name: str, col: str) -> np.ndarray:
    """Smoothed share of each held-out row's id among the rows of ``ref``."""
    counts = np.bincount(ref, minlength=length)[held].astype(float)
    if alpha == NOTEBOOK_SMOOTHING:
        return np.where(counts == 0, NOTEBOOK_ZERO_SHARE, counts / ref.size)
    if alpha == 0 and (counts == 0).any():
        absent = np.unique(held[counts == 0])[:5].tolist()
        raise ValueError(f"smoothing=0 but some heldout {col} ids are absent from {ref_name} "
                         f"(e.g. {absent}); use smoothing > 0")
    return (counts + alpha) / (ref.size + alpha * n_ids)


def _log_ratio(col: str, held: np.ndarray, tr: np.ndarray, mar: np.ndarray | None,
               alpha: float | str) -> np.ndarray:
    """log(P_mar / P_mnar) of each held-out row's user or item id (``col`` names it)."""
    parts = [held, tr] if mar is None else [held, tr, mar]
    space = np.unique(np.concatenate(parts))
    n_ids, length = space.size, int(space[-1]) + 1
    log_mnar = np.log(_row_shares(held, tr, n_ids, length, alpha, "train", col))
    if mar is None:
        return -np.log(n_ids) - log_mnar
    return np.log(_row_shares(held, mar, n_ids, length, alpha, "mar", col)) - log_mnar


def _log_weights(ids: dict, strategy: str, item_power: float,
                 smoothing: float | str) -> np.ndarray:
    (h_users, h_items) = ids["heldout"]
    if strategy in ("full", "reg"):
        return np.zeros(h_users.size)
    t_users, t_items = ids["train"]
    if strategy == "skew":
        counts = np.bincount(t_items, minlength=int(h_items.max()) + 1)[h_items].astype(float)
        if smoothing == NOTEBOOK_SMOOTHING:
            return np.where(counts == 0, np.log(_NOTEBOOK_ABSENT_SKEW),
                            -np.log(np.maximum(counts, 1.0)))
        if smoothing == 0 and (counts == 0).any():
            absent = np.unique(h_items[counts == 0])[:5].tolist()
            raise ValueError(f"smoothing=0 but some heldout item ids are absent from train "
                             f"(e.g. {absent}); use smoothing > 0")
        return -np.log(counts + smoothing)
    m_users, m_items = ids["mar"] if strategy == "wtd" else (None, None)
    log_wu = _log_ratio("user", h_users, t_users, m_users, smoothing)
    log_wi = _log_ratio("item", h_items, t_items, m_items, smoothing)
    return log_wu + item_power * log_wi


@declare(**_STRATEGY_RULES)
def intervention_weights(heldout: pd.DataFrame, *, strategy: str, train: pd.DataFrame | None = None,
                         mar: pd.DataFrame | None = None, item_power: float = 2.0,
                         smoothing: float | str = 1.0) -> np.ndarray:
    """Unnormalised sampling weight of every held-out row under a strategy.

    Parameters
    ----------
    heldout : DataFrame
        MNAR held-out feedback with integer columns ``user`` and ``item``.
    strategy : {"full", "reg", "skew", "wtd", "wtd_h"}
        Intervention (see the module docstring); ``full`` and ``reg`` give all ones.
    train : DataFrame, optional
        MNAR training feedback; required by ``skew``, ``wtd`` and ``wtd_h``.
    mar : DataFrame, optional
        MAR feedback (the weight split); required by ``wtd``, ignored otherwise.
    item_power : float, default 2.0
        Exponent of the item weight in ``wtd``/``wtd_h`` (2 in the paper, 1 in its notebook).
    smoothing : float or "notebook", default 1.0
        Additive pseudo-count of the absent-id rule described in the module docstring, or
        ``"notebook"`` (:data:`NOTEBOOK_SMOOTHING`): the authors' notebook's rule, a zero
        share becomes 1e-4.

    Returns
    -------
    numpy.ndarray
        Positive finite float weights, one per row of ``heldout``, in its order.

    Raises
    ------
    ValueError
        Unknown ``strategy``; ``heldout``, ``train`` or ``mar`` not a non-empty DataFrame
        with integer, non-negative ``user`` and ``item`` ids; a missing ``train`` (skew,
        wtd, wtd_h) or ``mar`` (wtd); ``item_power`` not a finite number >= 0, or
        ``smoothing`` neither one nor ``"notebook"``; with ``smoothing=0``, held-out ids
        absent from ``train``/``mar``.

    See Also
    --------
    recbias_tutorial.sampling.intervene : draws the intervened test set with these weights.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"user": [0, 0, 1], "item": [0, 0, 1], "rating": 4.0})
    >>> heldout = pd.DataFrame({"user": [0, 1], "item": [0, 1], "rating": 5.0})
    >>> intervention_weights(heldout, strategy="skew", train=train, smoothing=0)
    array([0.5, 1. ])
    >>> mar = pd.DataFrame({"user": [1], "item": [1], "rating": 5.0})  # user 0, item 0 absent
    >>> intervention_weights(heldout, strategy="wtd", train=train, mar=mar, item_power=1,
    ...                      smoothing="notebook").round(10).tolist()  # (1e-4 / (2/3))^2, 3^2
    [2.25e-08, 9.0]
    """
    ids = _validate(heldout, strategy, train, mar, item_power, smoothing)
    return np.exp(_log_weights(ids, strategy, float(item_power), _smoothing(smoothing)))


@declare(**_STRATEGY_RULES, size=Interval(float, 0.0, 1.0, open="low"), seed=Seed())
def intervene(heldout: pd.DataFrame, *, strategy: str, size: float, train: pd.DataFrame | None = None,
              mar: pd.DataFrame | None = None, item_power: float = 2.0,
              seed: int | np.random.Generator, smoothing: float | str = 1.0) -> pd.DataFrame:
    """Sample the held-out set with one of the FULL, REG, SKEW, WTD, WTD_H interventions.

    Parameters
    ----------
    heldout : DataFrame
        MNAR held-out feedback (``user``, ``item``, ``rating``).
    strategy : {"full", "reg", "skew", "wtd", "wtd_h"}
        Intervention; see the module docstring for the weights of each.
    size : float in (0, 1]
        Fraction of held-out rows to keep: ``round(size * len(heldout))`` distinct rows.
        Validated but ignored by ``full``, which always returns every row.
    train, mar, item_power, smoothing
        As in :func:`intervention_weights`.
    seed : int or numpy.random.Generator
        Source of randomness (required, also for ``full``, so that calls are uniform).

    Returns
    -------
    DataFrame
        The sampled rows, in their held-out order, with their original index labels
        (a copy; for ``full`` the whole frame).

    Raises
    ------
    ValueError
        Unknown ``strategy``; ``size`` outside (0, 1] or giving 0 rows; a missing ``train``
        (skew, wtd, wtd_h) or ``mar`` (wtd); missing columns, empty frames, negative
        ``item_power``, ``smoothing`` neither a number >= 0 nor ``"notebook"``; with
        ``smoothing=0``, held-out ids absent from
        ``train``/``mar``; ``seed`` missing or not a non-negative int or Generator.

    See Also
    --------
    recbias_tutorial.sampling.intervention_weights : the weights of each strategy.
    recbias_tutorial.replications.carraro2022.run_repetition : the protocol using them.
    recbias_tutorial.stats.kl_divergence : how far a test set's ratings are from MAR ones.

    Examples
    --------
    >>> import pandas as pd
    >>> heldout = pd.DataFrame({"user": [0, 0, 1, 1], "item": [0, 1, 0, 1], "rating": 4.0})
    >>> train = pd.DataFrame({"user": [0, 1, 1], "item": [0, 0, 1], "rating": 3.0})
    >>> sample = intervene(heldout, strategy="skew", size=0.5, train=train, seed=0)
    >>> len(sample), sample.index.is_unique
    (2, True)
    """
    ids = _validate(heldout, strategy, train, mar, item_power, smoothing)
    rng = as_generator(seed)
    if strategy == "full":
        return heldout.copy()
    n = len(heldout)
    m = round(size * n)
    if m == 0:
        raise ValueError(f"size={size!r} keeps round({size!r} * {n}) = 0 rows of heldout; increase size")
    log_w = _log_weights(ids, strategy, float(item_power), _smoothing(smoothing))
    # Efraimidis-Spirakis: the m smallest keys E/w (in logs) = successive sampling ∝ w.
    log_keys = np.log(rng.standard_exponential(n)) - log_w
    positions = np.sort(np.argpartition(log_keys, m - 1)[:m])
    return heldout.iloc[positions]  # a new frame (take copies)
