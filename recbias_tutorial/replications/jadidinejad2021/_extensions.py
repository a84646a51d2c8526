r"""The course's own evaluation of a model zoo, beyond the authors' protocol (private; ours).

Re-exported by :mod:`recbias_tutorial.replications.jadidinejad2021`; import them from there.
:func:`holdout_evaluator` evaluates one model under every estimator at once (its test sets are
:class:`PreparedSet`, shared with the authors' protocol), :func:`rank_relevant` gives the
ranked relevant rows, and :func:`evaluate_zoo` runs an evaluator over a zoo. The comparisons of
the estimators' rankings with the truth's are in :mod:`._comparison`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._ranking import dcg_gain, mean_ndcg, positions, ranking_input
from ..._validation import (as_real_array, check_choice, check_feedback, check_int, check_k,
                            check_propensity)
from ...estimators import BINNINGS, assign_strata
from ...metrics import rank_positions
from ..._params import Interval, declare
from ...scorer import check_scores
from ._testsets import PreparedSet

__all__ = ["evaluate_zoo", "holdout_evaluator", "rank_relevant"]

_COLUMNS = ["estimator", "n_strata", "binning", "k", "value"]


def _check_ks(ks: Any, n_items: int) -> tuple[int, ...]:
    if isinstance(ks, (int, np.integer)) and not isinstance(ks, bool):
        ks = (ks,)
    try:
        values = tuple(ks)
    except TypeError:
        raise ValueError(f"ks must be an int or a sequence of ints, got {ks!r}") from None
    if not values:
        raise ValueError("ks must not be empty")
    return tuple(sorted({check_k(k, n_items, "ks") for k in values}))


# --------------------------------------------------------------------------------------
# one model
# --------------------------------------------------------------------------------------
@declare(k=Interval(int, None), threshold=Interval(float))
def rank_relevant(scores: Any, test: pd.DataFrame, *, k: int, threshold: float = 4.0,
                  exclude: pd.DataFrame | None = None, propensity: Any = None) -> pd.DataFrame:
    """The relevant test rows with their rank position (capped at ``k``) and propensity.

    Parameters
    ----------
    scores : array (n_users, n_items)
    test : DataFrame with ``user``, ``item``, ``rating``
    k : int
        Largest cut-off needed; positions ``>= k`` are returned as ``k``.
    threshold : float
        A test row is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (the training pairs).
    propensity : array, optional
        Per-item (1-D) or per-pair (2-D) propensities; column ``p`` is NaN without it.

    Returns
    -------
    pandas.DataFrame
        Columns ``user``, ``item``, ``z`` (0-based position, capped at ``k``), ``p``; one row
        per relevant test row, in the order of ``test``.

    Raises
    ------
    ValueError
        If ``scores`` is not a non-empty 2-D array of finite real numbers; if ``test`` is
        not valid feedback (columns ``user``, ``item``, ``rating``, integer ids inside the
        score matrix, finite ratings, no duplicate pairs) or has no relevant item; if ``k``
        is not an integer in ``1..n_items``; if ``exclude`` is not a DataFrame of integer
        ``user`` and ``item`` ids inside the score matrix; if ``propensity`` has the wrong
        shape or is NaN, not finite or <= 0 for a relevant row.

    See Also
    --------
    recbias_tutorial.metrics.rank_positions : positions of every test row.
    recbias_tutorial.estimators.assign_strata : strata of the ``p`` column.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5]])
    >>> test = pd.DataFrame({"user": [0, 0], "item": [1, 2], "rating": [5.0, 4.0]})
    >>> rank_relevant(scores, test, k=2)[["item", "z"]].to_dict("list")
    {'item': [1, 2], 'z': [2, 1]}
    """
    scores, k, rel = ranking_input(scores, test, k=k, threshold=threshold)
    users = rel["user"].to_numpy(np.int64)
    items = rel["item"].to_numpy(np.int64)
    z = positions(scores, rel, exclude, k)
    if propensity is None:
        p = np.full(len(rel), np.nan)
    else:
        p = check_propensity(propensity, users, items, scores.shape, upper_one=False)
    return pd.DataFrame({"user": users, "item": items, "z": z, "p": p})


def _prepared(test, threshold, propensity, n_items, strata_specs) -> PreparedSet:
    """The course's prepared test set: the authors' :class:`PreparedSet` plus the per-row
    propensities and, per (n, binning), strata of the relevant rows weighted by them."""
    held = PreparedSet(test, threshold)
    if len(held.rel) == 0:
        raise ValueError(f"test has no relevant items (rating >= threshold={threshold})")
    held.p, held.by_spec = None, {}
    if propensity is not None:
        rel = held.rel
        held.p = check_propensity(propensity, rel["user"].to_numpy(np.int64),
                                  rel["item"].to_numpy(np.int64), (1, n_items), upper_one=False)
        for n, b in strata_specs:
            stratum = assign_strata(held.p, n, binning=b)[0]
            held.by_spec[n, b] = held.strata(
                stratum, n, {"relevant": np.bincount(stratum, minlength=n) / len(stratum)})
    return held


@declare(n_items=Interval(int, 1), n_strata=Interval(int, 1), threshold=Interval(float))
def holdout_evaluator(*, holdout: pd.DataFrame, propensity: Any, n_items: int,
                      truth: pd.DataFrame | None = None, exclude: pd.DataFrame | None = None,
                      ks: int | Sequence[int] = 10, n_strata: int = 2,
                      sweep: Iterable[int] = (), binnings: Iterable[str] = ("quantile",),
                      threshold: float = 4.0) -> Callable[[np.ndarray], pd.DataFrame]:
    r"""A function ``scores -> tidy frame`` of the estimators of nDCG@k for one model.

    The test sets and the strata are prepared once; each call ranks the relevant rows of
    ``holdout`` (and ``truth``) once, up to the largest cut-off, and derives every value
    from those positions.

    Estimators (column ``estimator``), for every ``k`` in ``ks``:

    * ``truth`` — mean per-user nDCG@k on ``truth`` (e.g. the MAR test), if given;
    * ``holdout`` — mean per-user nDCG@k on ``holdout`` (the standard protocol);
    * ``IPS`` — :func:`.estimators.ips` with the DCG gain, ``propensity`` and, in place of
      the unknown :math:`|S_u|`, the user's number of relevant held-out items;
    * ``SNIPS`` — :func:`.estimators.snips` with the DCG gain;
    * ``stratified`` — :func:`.estimators.stratified` with ``metric="ndcg"`` (combined row),
      for ``n_strata`` quantile strata and for every number of strata in ``sweep`` and every
      binning in ``binnings``;
    * ``Q1`` … ``Qn`` — the ``n_strata`` quantile strata on their own.

    Parameters
    ----------
    holdout : DataFrame
        Logged held-out feedback (``user``, ``item``, ``rating``).
    propensity : 1-D array
        Per-item propensities (e.g. :func:`.propensity.popularity_propensity` of the training
        split), used by IPS, SNIPS and the strata.
    n_items : int
        Catalogue size (checked against ``propensity`` and the score matrices).
    truth : DataFrame, optional
        Randomly exposed test feedback whose nDCG@k is the ground truth.
    exclude : DataFrame, optional
        Pairs removed from the candidates (the training pairs), for every test set.
    ks : int or sequence of int
        Cut-offs.
    n_strata : int
        Number of (quantile) strata of the main ``stratified`` and ``Q*`` rows.
    sweep : iterable of int
        Further numbers of strata for ``stratified`` rows (e.g. ``range(1, 11)``).
    binnings : iterable of ``"quantile"`` / ``"width"``
        Binnings used for the ``sweep``.
    threshold : float
        Relevance threshold.

    Returns
    -------
    callable
        ``evaluate(scores) -> DataFrame`` with columns ``estimator``, ``n_strata``,
        ``binning``, ``k``, ``value``.

    Raises
    ------
    ValueError
        If ``n_items`` or ``n_strata`` is not a positive integer; if ``ks`` is empty or not
        integers in ``1..n_items``; if ``sweep`` holds a value that is not a positive
        integer, or is given with empty ``binnings``; if ``binnings`` holds an unknown
        binning; if ``propensity`` is not 1-D of length ``n_items``, or is NaN, not finite
        or <= 0 for a relevant held-out item; if ``holdout`` or ``truth`` is not valid
        feedback (columns ``user``, ``item``, ``rating``, integer ids, items in
        ``0..n_items - 1``, finite ratings, no duplicate pairs) or has no relevant item.
        ``evaluate`` raises it if ``scores`` is not a finite 2-D array with ``n_items``
        columns (holding every test user) or ``exclude`` is invalid.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.evaluate_zoo : calls it for every model.
    recbias_tutorial.estimators.stratified : the stratified estimate of one model.
    recbias_tutorial.estimators.snips : the SNIPS estimate of one model.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5, 0.3]])
    >>> test = pd.DataFrame({"user": [0, 0], "item": [0, 1], "rating": [5.0, 5.0]})
    >>> evaluate = holdout_evaluator(holdout=test, propensity=np.array([0.9, 0.1, 0.5, 0.3]),
    ...                              n_items=4, ks=1)
    >>> evaluate(scores).set_index("estimator")["value"].round(3).to_dict()
    {'holdout': 1.0, 'IPS': 0.556, 'SNIPS': 0.1, 'stratified': 0.5, 'Q1': 0.0, 'Q2': 1.0}
    """
    ks = _check_ks(ks, n_items)
    binnings = tuple(check_choice(b, "binnings", BINNINGS) for b in binnings)
    sweep = tuple(check_int(n, "sweep") for n in sweep)
    if sweep and not binnings:
        raise ValueError("binnings must not be empty when sweep is given")
    p = as_real_array(propensity, "propensity")
    if p.ndim != 1 or p.shape[0] != n_items:
        raise ValueError(f"propensity must be 1-D of length n_items={n_items}, got shape {p.shape}")
    check_feedback(holdout, "holdout", n_items=n_items)
    specs = [(n_strata, "quantile")] + [(n, b) for b in binnings for n in sweep
                                        if (n, b) != (n_strata, "quantile")]
    held = _prepared(holdout, threshold, p, n_items, specs)
    true = None
    if truth is not None:
        check_feedback(truth, "truth", n_items=n_items)
        true = _prepared(truth, threshold, None, n_items, [])
    k_max = ks[-1]

    def evaluate(scores: np.ndarray) -> pd.DataFrame:
        scores = check_scores(scores)
        if scores.shape[1] != n_items:
            raise ValueError(f"scores must have n_items={n_items} columns, got {scores.shape[1]}")
        rows: list[tuple] = []
        if true is not None:
            z_true = rank_positions(scores, true.rel, exclude=exclude, k=k_max)
            rows += [("truth", 0, "", k, mean_ndcg(true.codes, true.n_codes, z_true, k)) for k in ks]
        z = rank_positions(scores, held.rel, exclude=exclude, k=k_max)
        c, w = held.codes, 1.0 / held.p
        for k in ks:
            gain = dcg_gain(z, k)
            rows.append(("holdout", 0, "", k, mean_ndcg(c, held.n_codes, z, k)))
            ips = np.bincount(c, weights=gain * w, minlength=held.n_codes) / held.counts
            rows.append(("IPS", 0, "", k, float(ips.mean())))
            num = np.bincount(c, weights=gain * w, minlength=held.n_codes)
            den = np.bincount(c, weights=w, minlength=held.n_codes)
            rows.append(("SNIPS", 0, "", k, float((num / den).mean())))
            for (n, b), strata in held.by_spec.items():
                values = strata.values(gain[None, :], np.array([k]))[0]
                shares = strata.shares["relevant"]
                rows.append(("stratified", n, b, k, float(np.nansum(shares * values))))
                if (n, b) == (n_strata, "quantile"):
                    rows += [(f"Q{s + 1}", n, b, k, float(v)) for s, v in enumerate(values)]
        return pd.DataFrame(rows, columns=_COLUMNS)

    return evaluate


# --------------------------------------------------------------------------------------
# a whole zoo
# --------------------------------------------------------------------------------------
def evaluate_zoo(models: Mapping[str, Any], train: pd.DataFrame, *, n_users: int, n_items: int,
                 evaluate: Callable[[np.ndarray], pd.DataFrame], seed: int | np.random.Generator,
                 progress: bool = False) -> pd.DataFrame:
    """Fit, score and evaluate models one at a time; concatenate the tidy results.

    Uses :func:`recbias_tutorial.models.iter_scores`, so only one score matrix is alive at a
    time. ``evaluate`` is typically a :func:`holdout_evaluator`.

    Parameters
    ----------
    models : mapping name -> cornac.models.Recommender
        Fresh models, e.g. from :func:`recbias_tutorial.models.model_zoo`.
    train : DataFrame
        Training feedback (``user``, ``item``, ``rating``).
    n_users, n_items : int
        Shape of the score matrices.
    evaluate : callable
        ``scores -> DataFrame``, called once per model.
    seed : int or numpy.random.Generator
        Seed of the shared Cornac dataset (required).
    progress : bool, default False
        Show a text progress bar.

    Returns
    -------
    pandas.DataFrame
        A ``model`` column first, then the columns of ``evaluate``'s frames.
        ``frame.attrs["seconds"]`` holds the wall time of each model (fit + score +
        evaluate).

    Raises
    ------
    ValueError
        If ``evaluate`` is not callable or does not return a DataFrame; if ``models`` is not
        a mapping of Cornac recommenders; on bad ``train`` / ``n_users`` / ``n_items`` /
        ``seed`` (see :func:`recbias_tutorial.models.to_cornac_dataset`).

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.holdout_evaluator : the usual ``evaluate``.
    recbias_tutorial.replications.jadidinejad2021.agreement : compares the estimators.
    recbias_tutorial.models.model_zoo : a zoo to evaluate.

    Examples
    --------
    >>> from recbias_tutorial.models import AvgRating, PosPop
    >>> train = pd.DataFrame({"user": [0, 1, 2, 2], "item": [0, 0, 1, 2],
    ...                       "rating": [5.0, 1.0, 5.0, 4.0]})
    >>> test = pd.DataFrame({"user": [0, 1], "item": [1, 2], "rating": 5.0})
    >>> ev = holdout_evaluator(holdout=test, propensity=np.ones(3), n_items=3, ks=1)
    >>> out = evaluate_zoo({"PosPop": PosPop(), "AvgRating": AvgRating()}, train,
    ...                    n_users=3, n_items=3, evaluate=ev, seed=0)
    >>> out.query("estimator == 'holdout'")[["model", "value"]].to_dict("list")
    {'model': ['PosPop', 'AvgRating'], 'value': [0.0, 0.5]}
    """
    from ...models import iter_scores  # lazy: models imports Cornac

    if not callable(evaluate):
        raise ValueError("evaluate must be a callable scores -> DataFrame")
    frames, seconds = [], {}
    start = time.perf_counter()
    for name, scores in iter_scores(models, train, n_users=n_users, n_items=n_items, seed=seed,
                                    progress=progress):
        frame = evaluate(scores)
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"evaluate must return a DataFrame, got {type(frame).__name__}")
        frames.append(frame.assign(model=name))
        del scores
        now = time.perf_counter()
        seconds[name] = now - start
        start = now
    out = pd.concat(frames, ignore_index=True)
    out = out[["model"] + [c for c in out.columns if c != "model"]]
    out.attrs["seconds"] = seconds
    return out
