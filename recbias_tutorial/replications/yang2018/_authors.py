r"""Yang et al.'s Section 5 protocol as their public code ran it, and one-step variants (private).

Re-exported by :mod:`recbias_tutorial.replications.yang2018`; import it from there. Each step
follows a file of ylongqi/unbiased-offline-recommender-evaluation, ``experiments_section_5/``
(OpenRec legacy API, ``openrec/legacy/implicit_model_trainer.py``):

1. **Data** (``*_yahoo_train.py``): the models train on implicit MNAR positives
   (``training_arr.npy``) and an MNAR validation set is held out (``validation_arr.npy``); the
   truth is the MAR ratings split into positives and negatives (``test_arr_pos/neg.npy``).
   Those arrays sit in a private S3 bucket, so the split is ours: :func:`authors_split`
   (positives = ``rating >= threshold``, ``val_share`` of them held out; MAR pairs also in the
   training positives dropped, as everywhere in the course).
2. **Estimate, MNAR side** (``*_yahoo_val.py`` + ``calc_metrics`` of
   ``experiment_cml_yahoo_val.ipynb``): ``_exclude_positives([train, val])`` then
   ``_sample_negatives(seed=10)`` draws ``n_negatives`` items (200 for PMF/BPR, 300 for CML)
   uniformly among those the user has in neither; ``_evaluate_partial`` scores
   ``negatives + positives``; ``calc_metrics`` keeps the **last 300** entries of that list
   (so ``max(0, n_negatives + P_u - 300)`` negatives are cut off the front);
   :math:`Z_{ui}` = number of kept candidates scored strictly above the positive; Recall counts
   :math:`Z_{ui} < K` and the notebook calls it with **K = 1**; AUC term
   :math:`1 - Z_{ui}/|C_u|`; weights :math:`1/p_i`, :math:`p_i = N_i^{(\gamma+1)/2}`,
   :math:`N_i` the item's training count, items with :math:`N_i = 0` skipped, normalised per
   user (SNIPS; :math:`\gamma=-1` is AOA); mean over the users with a positive of
   :math:`N_i > 0` (``nonzero_user_count``). Candidate set ``"sampled"``.
3. **Truth, MAR side** (``eq`` of ``*_yahoo_test.py``): the sampled negatives are cut off
   (``[NUM_NEGATIVES:]``), so each user's MAR positives are ranked among that user's own
   MAR-rated songs only (candidate set ``"mar"``), same formulas at :math:`\gamma = -1`.
4. **MAE**: the code has none. The slides' table gives one number per model and estimator,
   and the CML notebooks' printed numbers (validation Recall@1 0.0724 at :math:`\gamma=1.5`,
   test Recall 0.3306: gap 0.258, slides 0.270) match the gap between the two aggregates:
   ``mae="aggregate"`` is :math:`|\hat R - R|`; ``"per_user"`` (the course's earlier
   reading) is the mean over common users of :math:`|\hat R_u - R_u|`.

:data:`AUTHORS` is that protocol; :data:`COURSE` the course's full-catalogue reading (candidates
= every item without a training pair, K = 10, common users, per-user MAE); :data:`LADDER`
walks from one to the other one choice at a time. The readings the slides' numbers imply
(``SLIDES`` and its family, the grid searched to find them) are in ``_readings``; the further
truth sides they use follow OpenRec too: ``"catalogue"`` (every item), ``"no-heldout"``
(every item without a training or held-out MNAR pair of the user), ``"openrec"``
(``_evaluate_full`` with the test script's exclusions, ``_exclude_positives([train,
test_pos, test_neg])``: each MAR positive ranked among the items the user has neither
trained on nor MAR-rated, OpenRec's ``_full_rank``) and ``"sampled"`` (the test script's
:data:`TEST_NEGATIVES` sampled negatives that ``eq`` cuts off, kept: ``_evaluate_partial`` of
the MAR positives). :func:`evaluate_readings` (``_sides``) runs every reading of one model's
scores with these steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._params import Interval, Seed, declare
from ..._validation import (as_generator, as_real_array, check_cutoffs, check_feedback, check_k,
                            check_real)
from ...data import FeedbackData, drop_seen, random_split
from ._protocol import _check_gammas
from ._readings import AUTHORS, COURSE, LADDER, Reading  # noqa: F401 (re-export)

#: calc_metrics keeps the last 300 entries of each user's (negatives + positives) list.
KEEP_LAST = 300


def authors_split(data: FeedbackData, *, seed: int,
                  val_share: float = 0.2) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Training positives, held-out MNAR positives and the MAR truth of one split.

    Parameters
    ----------
    data : FeedbackData
        With ``mnar`` and ``mar`` parts.
    seed : int
        Split seed (:func:`recbias_tutorial.data.random_split` of the MNAR positives).
    val_share : float, default 0.2
        Share of the MNAR positives held out (the authors' share is not public).

    Returns
    -------
    (train, val, truth) : tuple of pandas.DataFrame
        ``truth`` is every MAR rating (positives and negatives) whose pair is not in ``train``
        (``attrs["n_dropped"]`` counts the others).

    Raises
    ------
    ValueError
        If ``data`` has no MAR part or ``val_share`` is not in (0, 1).

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> train, val, truth = authors_split(rb.simulate(50, 30, seed=0), seed=0)
    >>> bool((train["rating"] >= 4).all() and (val["rating"] >= 4).all())
    True
    """
    if not isinstance(data, FeedbackData) or data.mar is None:
        raise ValueError("data must be a FeedbackData with randomly exposed (mar) feedback")
    val_share = check_real(val_share, "val_share", low=0.0, high=1.0, low_open=True,
                           high_open=True)
    positives = data.mnar[data.mnar["rating"] >= data.threshold]
    train, val = random_split(positives, (1.0 - val_share, val_share), seed=seed)
    return train, val, drop_seen(data.mar, train)


def _pair_mask(frame: pd.DataFrame, n_users: int, n_items: int) -> np.ndarray:
    mask = np.zeros((n_users, n_items), bool)
    mask[frame["user"].to_numpy(), frame["item"].to_numpy()] = True
    return mask


def _dense_scores(scores: Any) -> np.ndarray:
    """A finite 2-D real score matrix (the authors' code ranks dense rows)."""
    from ...scorer import check_scores

    scores = check_scores(scores)
    if not isinstance(scores, np.ndarray):
        raise ValueError(f"scores must be a dense array (users x items) here, got "
                         f"{type(scores).__name__}")
    return scores


def _check_counts(counts: Any, n_items: int) -> np.ndarray:
    """Training counts: ``n_items`` non-negative whole numbers (returned as given)."""
    values = as_real_array(counts, "counts")
    if values.shape != (n_items,) or not np.isfinite(values).all() or (values < 0).any() \
            or (values != np.round(values)).any():
        raise ValueError(f"counts must be {n_items} non-negative whole numbers (one training "
                         f"count per item), got shape {values.shape}")
    return np.asarray(counts)


def _check_readings(readings: Any, name: str = "readings") -> list["Reading"]:
    """A non-empty sequence of :class:`Reading` with distinct names (each labels its rows)."""
    if isinstance(readings, (Reading, str, bytes)) or not isinstance(readings, Iterable):
        raise ValueError(f"{name} must be a sequence of Reading, got {readings!r:.60}")
    readings = list(readings)
    bad = [r for r in readings if not isinstance(r, Reading)]
    if bad or not readings:
        raise ValueError(f"{name} must be a non-empty sequence of Reading (e.g. LADDER), got "
                         f"{bad[0] if bad else readings!r:.60}")
    names = [r.name for r in readings]
    if len(set(names)) != len(names):
        raise ValueError(f"{name} has two readings named alike, got {names}: their rows would "
                         "be merged")
    return readings


def _check_terms(frame: Any, name: str) -> pd.DataFrame:
    """A :func:`user_terms` table: users x (metric, estimator), at least one user, finite."""
    if not isinstance(frame, pd.DataFrame) or frame.columns.nlevels != 2:
        raise ValueError(f"{name} must be a DataFrame of user_terms (columns (metric, "
                         f"estimator)), got {type(frame).__name__}")
    if frame.empty:
        raise ValueError(f"{name} has no user")
    if not np.isfinite(as_real_array(frame.to_numpy(), name)).all():
        raise ValueError(f"{name} has NaN or infinite terms: a user without a term must be "
                         "left out, not counted")
    return frame


@declare(n_users=Interval(int, 1), n_items=Interval(int, 1), n_negatives=Interval(int, 0),
         seed=Seed(), keep_last=Interval(int, 1))
def sampled_candidates(train: pd.DataFrame, val: pd.DataFrame, *, n_users: int, n_items: int,
                       n_negatives: int, seed: int | np.random.Generator,
                       keep_last: int = KEEP_LAST) -> np.ndarray:
    """The authors' MNAR-side candidates: kept sampled negatives plus the held-out positives.

    Per user with held-out positives (``P_u`` of them): ``n_negatives`` items drawn uniformly
    without replacement among those the user has in neither ``train`` nor ``val``
    (``_exclude_positives`` + ``_sample_negatives``), of which ``calc_metrics`` keeps the last
    ``keep_last - P_u`` (the list is negatives first, then positives). A uniform draw cut
    at the front is a uniform draw of the kept size, which is what is drawn here.

    Returns
    -------
    numpy.ndarray
        Boolean ``(n_users, n_items)``; rows of users without held-out positives are empty.

    Raises
    ------
    ValueError
        If ``train`` or ``val`` is not a user/item frame of ids inside the id spaces (``val``
        non-empty, no pair twice), a size is not a positive int (``n_negatives`` may be 0),
        or ``seed`` is not a non-negative int or a Generator.

    Examples
    --------
    >>> tr = pd.DataFrame({"user": [0, 0], "item": [0, 1], "rating": 5.0})
    >>> va = pd.DataFrame({"user": [0], "item": [2], "rating": 5.0})
    >>> c = sampled_candidates(tr, va, n_users=1, n_items=6, n_negatives=2, seed=0, keep_last=2)
    >>> c.sum(), bool(c[0, 2]), bool(c[0, :2].any())
    (np.int64(2), True, False)
    """
    check_feedback(train, "train", n_users, n_items, require_rating=False, allow_empty=True)
    check_feedback(val, "val", n_users, n_items, require_rating=False)
    rng = as_generator(seed)
    positives = _pair_mask(val, n_users, n_items)
    excluded = positives | _pair_mask(train, n_users, n_items)
    n_pos = positives.sum(axis=1)
    kept = np.where(n_pos > 0, np.clip(np.minimum(n_negatives, keep_last - n_pos), 0, None), 0)
    kept = np.minimum(kept, n_items - excluded.sum(axis=1))  # all there is to draw from
    keys = rng.random((n_users, n_items))
    keys[excluded] = 2.0  # never drawn
    # the kept_u smallest keys of a row: below or at the row's kept_u-th smallest key
    cut = np.take_along_axis(np.sort(keys, axis=1), np.maximum(kept - 1, 0)[:, None], axis=1)
    return positives | ((keys <= cut) & (kept[:, None] > 0) & ~excluded)


@declare(chunk=Interval(int, 1))
def user_terms(scores: np.ndarray, candidates: np.ndarray, positives: pd.DataFrame,
               counts: np.ndarray, *, k: int | Sequence[int], gammas: Mapping[str, float],
               chunk: int = 4096, outside: bool = False) -> pd.DataFrame:
    r"""Per-user self-normalised terms of ``calc_metrics`` / ``eq`` for each gamma.

    :math:`Z_{ui}` = number of candidates of ``u`` scored strictly above ``i``; recall term
    :math:`1[Z_{ui} < k]`; AUC term :math:`1 - Z_{ui}/|C_u|`; positives of items with
    ``counts == 0`` skipped; per user :math:`\sum_i c_{ui}/p_i \big/ \sum_i 1/p_i` with
    :math:`p_i = N_i^{(\gamma+1)/2}`.

    Parameters
    ----------
    scores : numpy.ndarray
        ``(n_users, n_items)``.
    candidates : numpy.ndarray
        Boolean ``(n_users, n_items)``; every positive must be a candidate.
    positives : pandas.DataFrame
        ``user``, ``item`` of the positives ranked.
    counts : numpy.ndarray
        Training count of each item.
    k : int or sequence of int
        Recall cut-off; with several, the columns gain a first level ``k`` (the positions
        are computed once).
    gammas : mapping label -> gamma
        ``-1`` is AOA.
    outside : bool, default False
        Allow positives that are not candidates, each ranked among the candidates (itself
        not counted), as OpenRec's ``_full_rank`` ranks a positive among the items not
        excluded (the other positives excluded too).

    Returns
    -------
    pandas.DataFrame
        Index ``user`` (users with a positive of nonzero count), columns
        ``(metric, label)`` for metric in ``recall``, ``auc`` (``(k, metric, label)`` when
        ``k`` is a sequence).

    Raises
    ------
    ValueError
        If ``scores`` is not a finite 2-D array, ``candidates`` not a boolean array of its
        shape, ``positives`` not a frame of distinct pairs inside it, ``counts`` not one
        non-negative whole count per item, ``k`` not a cut-off in ``1..n_items`` (or a
        non-empty list of distinct ones), ``gammas`` not a non-empty mapping of numbers
        ``>= -1``, ``outside`` not a bool; if a positive is not a candidate (unless
        ``outside``), or no positive has an item with a nonzero count (no user would have
        a term).

    Examples
    --------
    >>> s = np.array([[3.0, 2.0, 1.0]]); c = np.ones((1, 3), bool)
    >>> pos = pd.DataFrame({"user": [0, 0], "item": [1, 2]})
    >>> t = user_terms(s, c, pos, np.array([1, 1, 4]), k=2, gammas={"AOA": -1.0, "g1": 1.0})
    >>> t[("recall", "AOA")].tolist(), t[("recall", "g1")].round(3).tolist()
    ([0.5], [0.8])
    """
    scores = _dense_scores(scores)
    n_users, n_items = scores.shape
    candidates = np.asarray(candidates)
    if candidates.dtype != bool or candidates.shape != scores.shape:
        raise ValueError(f"candidates must be a boolean array of the scores' shape "
                         f"{scores.shape}, got dtype {candidates.dtype}, shape "
                         f"{candidates.shape}")
    check_feedback(positives, "positives", n_users, n_items, require_rating=False)
    counts = _check_counts(counts, n_items)
    if np.isscalar(k):
        check_k(k, n_items, "k")
    else:
        check_cutoffs(k, n_items, "k")
    gammas = _check_gammas(gammas, allow_aoa=True)
    if not isinstance(outside, (bool, np.bool_)):
        raise ValueError(f"outside must be a bool, got {outside!r}")
    u = positives["user"].to_numpy(np.int64)
    i = positives["item"].to_numpy(np.int64)
    warm = counts[i] > 0
    u, i = u[warm], i[warm]
    if len(u) == 0:
        raise ValueError("positives: none of them has an item with a nonzero training count "
                         "(counts), so no user has a term")
    if not outside and not candidates[u, i].all():
        raise ValueError("every positive must be one of its user's candidates")
    z = np.empty(len(u))
    for start in range(0, len(u), chunk):
        uu, ii = u[start:start + chunk], i[start:start + chunk]
        rows = scores[uu]
        z[start:start + chunk] = ((rows > rows[np.arange(len(uu)), ii][:, None])
                                  & candidates[uu]).sum(axis=1)
    size = candidates.sum(axis=1)[u]
    users, inverse = np.unique(u, return_inverse=True)
    ks = [k] if np.isscalar(k) else list(k)
    out = {}
    for cut in ks:
        gains = {"recall": (z < cut).astype(float), "auc": 1.0 - z / size}
        for metric, c in gains.items():
            for label, gamma in gammas.items():
                w = np.power(counts[i].astype(float), -(gamma + 1.0) / 2.0)
                out[(cut, metric, label)] = (np.bincount(inverse, weights=w * c)
                                             / np.bincount(inverse, weights=w))
    frame = pd.DataFrame(out, index=pd.Index(users, name="user"))
    frame.columns = pd.MultiIndex.from_tuples(frame.columns, names=["k", "metric", "estimator"])
    return frame.droplevel("k", axis=1) if np.isscalar(k) else frame


def reading_rows(estimate: pd.DataFrame, truth: pd.DataFrame, reading: Reading,
                 *, truth_label: str = "AOA") -> pd.DataFrame:
    """Aggregates and MAE of one reading from the per-user terms of both sides.

    Parameters
    ----------
    estimate : pandas.DataFrame
        :func:`user_terms` of the MNAR side (columns ``(metric, estimator)``).
    truth : pandas.DataFrame
        :func:`user_terms` of the MAR side; its ``truth_label`` columns are the truth.
    reading : Reading
        Its ``users`` and ``mae`` are applied here.

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``estimator``, ``quantity`` (``estimate``, ``truth`` or ``mae``),
        ``users`` and ``value``.

    Raises
    ------
    ValueError
        If ``reading`` is not a :class:`Reading`; ``estimate`` or ``truth`` is not a table
        of :func:`user_terms` with at least one user and finite terms; ``truth`` has no
        ``truth_label`` column for a metric of ``estimate``; or, with common users, the two
        have no user in common.

    Examples
    --------
    >>> cols = pd.MultiIndex.from_tuples([("recall", "AOA")], names=["metric", "estimator"])
    >>> est = pd.DataFrame([[1.0], [0.0]], index=[0, 1], columns=cols)
    >>> tru = pd.DataFrame([[0.0], [0.5]], index=[1, 2], columns=cols)
    >>> reading_rows(est, tru, AUTHORS).set_index("quantity")["value"].to_dict()
    {'estimate': 0.5, 'truth': 0.25, 'mae': 0.25}
    """
    if not isinstance(reading, Reading):
        raise ValueError(f"reading must be a Reading (e.g. AUTHORS or a step of LADDER), got "
                         f"{reading!r:.60}")
    _check_terms(estimate, "estimate")
    _check_terms(truth, "truth")
    missing = [m for m in dict.fromkeys(estimate.columns.get_level_values(0))
               if (m, truth_label) not in truth.columns]
    if missing:
        raise ValueError(f"truth has no {truth_label!r} column for metric(s) {missing} "
                         f"(truth_label names the truth's estimator)")
    if reading.users == "common":
        common = estimate.index.intersection(truth.index)
        if len(common) == 0:
            raise ValueError("estimate and truth have no user in common (the reading's users "
                             "are 'common'): the MAE would be NaN")
        estimate, truth = estimate.loc[common], truth.loc[common]
    rows = []
    for metric, label in estimate.columns:
        e, t = estimate[(metric, label)], truth[(metric, truth_label)]
        mae = (float((e - t).abs().mean()) if reading.mae == "per_user"
               else abs(float(e.mean()) - float(t.mean())))
        for quantity, value, n in (("estimate", float(e.mean()), len(e)),
                                   ("truth", float(t.mean()), len(t)), ("mae", mae, len(e))):
            rows.append({"metric": metric, "estimator": label, "quantity": quantity,
                         "users": n, "value": value})
    return pd.DataFrame(rows)
