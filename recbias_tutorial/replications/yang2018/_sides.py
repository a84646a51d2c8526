"""Every named reading of one model's scores: both sides' candidate sets, drawn once (private).

Re-exported by :mod:`recbias_tutorial.replications.yang2018`: :func:`evaluate_readings` runs the
steps of ``_authors`` (:func:`sampled_candidates`, :func:`user_terms`, :func:`reading_rows`)
for every :class:`Reading`, each candidate set computed once and shared by the readings that
use it (and, through ``candidates=``, the sampled sets by the models of one split). ``_grid``
runs the same sides on arrays for the grid's hundreds of readings. The MAR sides follow the
public code (``_authors``' docstring): ``"mar"`` (``eq``), ``"full"``, ``"catalogue"``,
``"no-heldout"``, ``"openrec"`` (``_evaluate_full``) and ``"sampled"`` (the test script's
:data:`TEST_NEGATIVES` negatives).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence

import numpy as np
import pandas as pd

from ..._params import Interval, Seed, declare
from ..._validation import check_feedback, check_seeds, int_seed
from ._authors import (_check_readings, _dense_scores, _pair_mask, reading_rows,
                       sampled_candidates, user_terms)
from ._protocol import _check_gammas
from ._readings import TEST_NEGATIVES, Reading


@declare(n_items=Interval(int, 1), threshold=Interval(float), n_negatives=Interval(int, 0),
         seed=Seed())
def evaluate_readings(scores: np.ndarray, train: pd.DataFrame, val: pd.DataFrame,
                      truth: pd.DataFrame, *, n_items: int, threshold: float,
                      readings: Sequence[Reading], gammas: Mapping[str, float],
                      n_negatives: int, draws: Iterable[int], seed: int,
                      candidates: MutableMapping | None = None) -> pd.DataFrame:
    """One model's scores under every reading; sampled readings once per negative draw.

    Draw ``d`` of split ``seed`` samples the MNAR side's negatives with
    ``numpy.random.default_rng([seed, d])`` (the authors drew once, ``seed=10``; a reading's
    ``n_negatives`` keeps more or fewer of the same draw) and the test script's negatives of
    ``truth="sampled"`` with ``default_rng([seed, d, 1])``. Readings with neither side sampled
    do not depend on the draw: they get ``draw = -1``. ``candidates``, a dict kept across the
    models of one split, holds the sampled candidate sets (they depend on the split and the
    draw, not on the scores), so that they are drawn once per split.

    Returns
    -------
    pandas.DataFrame
        Columns ``reading``, ``draw`` and those of :func:`reading_rows`.

    Raises
    ------
    ValueError
        If ``scores`` is not a finite 2-D array of ``n_items`` columns; ``train``, ``val``
        or ``truth`` is not a non-empty frame of distinct pairs inside the scores' id spaces;
        ``readings`` is not a non-empty sequence of :class:`Reading` with distinct names;
        ``draws`` not distinct non-negative ints; ``gammas`` not a mapping of numbers above
        -1 (``"AOA"`` is the label of -1, always included); ``seed`` not a non-negative int
        (the draws' generators are seeded by ``[seed, draw]``); ``candidates`` not a dict
        (or None); or on an error of :func:`user_terms` / :func:`reading_rows`.
    """
    seed = int_seed(seed)
    scores = _dense_scores(scores)
    if scores.shape[1] != n_items:
        raise ValueError(f"scores must have n_items={n_items} columns, got shape {scores.shape}")
    n_users = scores.shape[0]
    check_feedback(train, "train", n_users, n_items, require_rating=False)
    check_feedback(val, "val", n_users, n_items, require_rating=False)
    check_feedback(truth, "truth", n_users, n_items)
    readings = _check_readings(readings)
    draws = check_seeds(draws, "draws")
    gammas = _check_gammas(gammas, reserved=("AOA",), allow_empty=True)
    if candidates is not None and not isinstance(candidates, MutableMapping):
        raise ValueError(f"candidates must be a dict (the split's sampled candidate sets, "
                         f"kept across its models) or None, got {type(candidates).__name__}")
    if truth[truth["rating"] >= threshold].empty:
        raise ValueError(f"truth has no relevant rating (rating >= threshold={threshold})")
    side = _side_terms(scores, train, val, truth, n_items=n_items, threshold=threshold,
                       readings=readings, gammas=gammas, n_negatives=n_negatives, seed=seed,
                       candidates=candidates)
    rows = []
    for reading in readings:
        for draw in _reading_draws(reading, draws):
            est, tru = _reading_sides(side, reading, draw)
            rows.append(reading_rows(est, tru, reading).assign(reading=reading.name, draw=draw))
    out = pd.concat(rows, ignore_index=True)
    return out[["reading", "draw", "metric", "estimator", "quantity", "users", "value"]]


def _reading_draws(reading: Reading, draws: Iterable[int]) -> list[int]:
    """The negative draws a reading is evaluated on: every draw if a side is sampled, else -1."""
    sampled = reading.estimate == "sampled" or reading.truth == "sampled"
    return list(draws) if sampled else [-1]


def _reading_sides(side: Callable, reading: Reading, draw: int
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(estimate, truth) per-user terms of one reading and draw (truth: its AOA columns)."""
    est = (side("sampled", draw, reading.n_negatives) if reading.estimate == "sampled"
           else side("full-mnar"))[reading.k]
    tru = side(f"mar:{reading.truth}", draw if reading.truth == "sampled" else -1)[
        reading.k if reading.k_truth is None else reading.k_truth]
    return est, tru.loc[:, tru.columns.get_level_values("estimator") == "AOA"]


def _side_terms(scores: np.ndarray, train: pd.DataFrame, val: pd.DataFrame,
                truth: pd.DataFrame, *, n_items: int, threshold: float,
                readings: Sequence[Reading], gammas: Mapping[str, float], n_negatives: int,
                seed: int, candidates: MutableMapping | None = None) -> Callable:
    """``side(kind, draw=-1, n=None)``: :func:`user_terms` of one candidate set, computed once.

    ``kind`` is ``"sampled"`` (``n`` negatives, default ``n_negatives``), ``"full-mnar"`` or
    ``"mar:<truth>"`` (a :class:`Reading`'s ``truth``); the cut-offs are every ``k`` and
    ``k_truth`` of ``readings``; ``gammas`` gains ``AOA`` (-1).
    """
    n_users = scores.shape[0]
    counts = np.bincount(train["item"].to_numpy(np.int64), minlength=n_items)
    seen = _pair_mask(train, n_users, n_items)
    gammas = {"AOA": -1.0, **gammas}
    mar_pos = truth[truth["rating"] >= threshold]
    ks = sorted({r.k for r in readings} | {r.k_truth for r in readings if r.k_truth is not None})
    masks = {} if candidates is None else candidates
    terms: dict[tuple, pd.DataFrame] = {}

    def side(kind: str, draw: int = -1, n: int | None = None) -> pd.DataFrame:
        n = n_negatives if n is None else n
        key = (kind, draw, n if kind == "sampled" else None)
        if key not in terms:
            outside = False
            if kind == "sampled":
                if key not in masks:
                    masks[key] = sampled_candidates(train, val, n_users=n_users, n_items=n_items,
                                                    n_negatives=n,
                                                    seed=np.random.default_rng([seed, draw]))
                cand, pos = masks[key], val
            elif kind == "full-mnar":
                cand, pos = ~seen, val
            elif kind == "mar:sampled":
                if key not in masks:
                    masks[key] = _truth_candidates("sampled", seen, train, val, truth, mar_pos,
                                                   n_items=n_items,
                                                   seed=[seed, draw, 1])[0]
                cand, pos = masks[key], mar_pos
            else:  # the MAR side
                cand, pos, outside = _truth_candidates(kind[len("mar:"):], seen, train, val,
                                                       truth, mar_pos, n_items=n_items,
                                                       seed=[seed, draw, 1])
            terms[key] = user_terms(scores, cand, pos, counts, k=ks, gammas=gammas,
                                    outside=outside)
        return terms[key]

    return side


def _truth_candidates(kind: str, seen: np.ndarray, train: pd.DataFrame, val: pd.DataFrame,
                      truth: pd.DataFrame, mar_pos: pd.DataFrame, *, n_items: int,
                      seed: list[int]) -> tuple[np.ndarray, pd.DataFrame, bool]:
    """(candidates, positives, positives may lie outside) of one MAR-side candidate set."""
    n_users = seen.shape[0]
    if kind == "mar":
        return _pair_mask(truth, n_users, n_items), mar_pos, False
    if kind == "full":
        return ~seen, mar_pos, False
    if kind == "catalogue":
        return np.ones_like(seen), mar_pos, False
    if kind == "no-heldout":
        return ~(seen | _pair_mask(val, n_users, n_items)) | _pair_mask(mar_pos, n_users,
                                                                         n_items), mar_pos, False
    if kind == "openrec":  # _exclude_positives([train, test_pos, test_neg]) + _full_rank
        return ~(seen | _pair_mask(truth, n_users, n_items)), mar_pos, True
    # "sampled": _sample_negatives among the items outside train, test_pos and test_neg, all
    # TEST_NEGATIVES kept (no calc_metrics cut on the test side), plus the MAR positives
    excluded = pd.concat([train[["user", "item"]], truth[["user", "item"]]], ignore_index=True)
    cand = sampled_candidates(excluded, mar_pos, n_users=n_users, n_items=n_items,
                              n_negatives=TEST_NEGATIVES, seed=np.random.default_rng(seed),
                              keep_last=TEST_NEGATIVES + n_items)
    return cand, mar_pos, False
