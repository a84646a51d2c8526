"""Fit Cornac recommenders on our ids and turn them into dense score matrices.

The rest of the package works with *score matrices*: dense ``np.ndarray`` of shape
``(n_users, n_items)``, rows indexed by our contiguous user ids, columns by our contiguous
item ids, higher = better. Cornac re-indexes users and items in order of first appearance
in the training data (``Dataset.uid_map`` / ``iid_map``) and only knows the users and items
it has seen. :func:`fit_scores` is the bridge: it fits any
:class:`cornac.models.Recommender` and maps its scores back to our ids, with a documented
rule for everything the model cannot score. :func:`score_models` / :func:`iter_scores` do
the same for many models sharing one Cornac dataset.

Scoring uses the vectorised per-family scorers of :func:`batch_scorer` when the family is
known, else Cornac's own per-user ``score``. Cornac's GMF, MLP and NeuMF built with
``backend="numpy"`` are trained by the package (:mod:`._ncf_train`: TensorFlow's initial
weights, Cornac's batches and Keras's Adam, without TensorFlow) and scored with NumPy.

Fitted score matrices are cached on disk (:mod:`._cache`: keyed by the training data's
checksum, the model's class and pre-fit state, the seed, the dtype and the code), so a second
run of a chapter reads them instead of refitting; ``cache=False`` or ``RECBIAS_FIT_CACHE=0``
turns that off.

Progress bars are tqdm's plain text bars (``tqdm.std``), also inside notebooks: the widget
bars of ``tqdm.auto`` need ipywidgets, which the course does not install (widget output
would need a CDN). Chapters pass ``progress=False``.
"""

from __future__ import annotations

import contextlib
import io
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import cornac
import numpy as np
import pandas as pd
from cornac.exception import ScoreException
from cornac.models import Recommender
from tqdm.std import tqdm  # text bar (see the module docstring)

from .._params import Interval, Seed, declare
from .._validation import check_feedback, check_fits_in_memory, seed_int
from ..scorer import Scorer
from ._cache import cached_scores, data_digest, fit_cache_enabled
from ._ncf import is_numpy_ncf
from ._pmf import fit_pmf, fits_fast
from ._scorers import batch_scorer
from ._trained import check_trained

__all__ = ["UNKNOWN_USER_SCORE", "fit_scorer", "fit_scores", "iter_scores", "score_models",
           "to_cornac_dataset"]

#: Every entry of the row of a user absent from the training data (all items tie).
UNKNOWN_USER_SCORE = 0.0

_BATCH_USERS = 1024  # users scored per block: bounds the float64 temporaries to ~8 MB / 1k items

#: Declared rules of the arguments every fitting function shares.
_FIT_RULES = dict(n_users=Interval(int, 1), n_items=Interval(int, 1), seed=Seed())


# --------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------
def _check_dtype(dtype: Any) -> np.dtype:
    """A floating-point dtype: integer, bool or string scores would truncate or destroy them."""
    try:
        out = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"dtype must be a numpy floating dtype, got {dtype!r}") from None
    if out.kind != "f":
        raise ValueError(f"dtype must be a floating dtype (float32 or float64), got {out}")
    return out


def _check_models(models: Any) -> None:
    if not isinstance(models, Mapping):
        raise ValueError(
            f"models must be a mapping name -> Recommender, got {type(models).__name__}"
        )
    for name, model in models.items():
        if not isinstance(model, Recommender):
            raise ValueError(f"models[{name!r}] is not a cornac.models.Recommender: {model!r}")


@declare(**_FIT_RULES)
def to_cornac_dataset(
    train: pd.DataFrame, *, n_users: int, n_items: int, seed: int
) -> cornac.data.Dataset:
    """Build a :class:`cornac.data.Dataset` whose raw ids are our integer ids.

    Parameters
    ----------
    train : pandas.DataFrame
        Columns ``user``, ``item`` (int ids in ``0..n-1``) and ``rating``; no duplicated
        ``(user, item)`` pairs (Cornac would silently keep the first).
    n_users, n_items : int
        Sizes of the id spaces, used to validate ``train``.
    seed : int or numpy.random.Generator
        Seed of the dataset's own sampling generator (used by models that draw mini-batches
        or negatives through the dataset).

    Returns
    -------
    cornac.data.Dataset
        Equal to ``cornac.data.Dataset.from_uir``'s (built without its loop over the rows);
        its ``uid_map`` / ``iid_map`` map our ids (Python ``int``) to Cornac's indices,
        assigned in order of first appearance.

    Raises
    ------
    ValueError
        If ``train`` is not a DataFrame, lacks a column, is empty, has ids outside
        ``0..n-1``, non-finite ratings or duplicated pairs; if ``n_users`` or ``n_items``
        is not a positive integer; if ``seed`` is missing or not a non-negative int or
        Generator.

    See Also
    --------
    recbias_tutorial.models.fit_scores : fits a model on such a dataset and scores it.
    recbias_tutorial.models.score_models : many models sharing one dataset.

    Examples
    --------
    >>> train = pd.DataFrame({"user": [2, 0], "item": [1, 1], "rating": [5.0, 3.0]})
    >>> ds = to_cornac_dataset(train, n_users=3, n_items=2, seed=0)
    >>> dict(ds.uid_map), dict(ds.iid_map)
    ({2: 0, 0: 1}, {1: 0})
    """
    check_feedback(train, "train", n_users, n_items)
    # what Dataset.from_uir builds, without its Python loop over the rows (0.8 s on Yahoo!
    # R3): indices in order of first appearance (pd.factorize's order), maps of Python ints;
    # there are no duplicated pairs to drop (checked above). Tested equal to from_uir.
    users, user_ids = pd.factorize(train["user"].to_numpy(dtype=np.int64))
    items, item_ids = pd.factorize(train["item"].to_numpy(dtype=np.int64))
    uid_map = OrderedDict(zip(user_ids.tolist(), range(len(user_ids))))
    iid_map = OrderedDict(zip(item_ids.tolist(), range(len(item_ids))))
    uir = (users.astype("int"), items.astype("int"), np.array(train["rating"], dtype="float"))
    return cornac.data.Dataset(num_users=len(uid_map), num_items=len(iid_map), uid_map=uid_map,
                               iid_map=iid_map, uir_tuple=uir, timestamps=None,
                               seed=seed_int(seed))


# --------------------------------------------------------------------------------------
# scoring
# --------------------------------------------------------------------------------------
def _raw_ids(mapping: Mapping[Any, int], size: int) -> np.ndarray:
    """``a[cornac_index] = our id`` for Cornac indices ``0..size-1``."""
    out = np.empty(len(mapping), dtype=np.int64)
    out[np.fromiter(mapping.values(), np.int64, len(mapping))] = np.fromiter(
        mapping.keys(), np.int64, len(mapping)
    )
    return out[:size]


def _per_user_scorer(model: Recommender, n_known: int):
    """Stack ``model.score(u)``; a user for whom it raises ScoreException gets NaN."""

    def score(users: np.ndarray) -> np.ndarray:
        rows = np.empty((len(users), n_known))
        for r, u in enumerate(users.tolist()):
            try:
                s = np.asarray(model.score(u), dtype=np.float64).ravel()
            except ScoreException:
                rows[r] = np.nan
                continue
            if s.size < n_known:
                raise ValueError(
                    f"model {model.name!r} returned {s.size} scores for user index {u}, "
                    f"expected {n_known} (one per known item)"
                )
            rows[r] = s[:n_known]
        return rows

    return score


def _fill_below(block: np.ndarray) -> np.ndarray:
    """Per row, a value strictly below every finite entry (``UNKNOWN_USER_SCORE`` if none)."""
    lo = np.min(np.where(np.isfinite(block), block, np.inf), axis=1)
    none = ~np.isfinite(lo)
    lo[none] = UNKNOWN_USER_SCORE
    below = lo - np.maximum(1.0, np.abs(lo) * 1e-6)
    below[none] = UNKNOWN_USER_SCORE
    return below


def _fit(model: Recommender, dataset: cornac.data.Dataset) -> None:
    """Fit ``model``; silence Cornac's unconditional prints (e.g. HPF) unless verbose."""
    dataset.reset()
    if fits_fast(model):  # Cornac's PMF loop, compiled: the same factors, faster
        fit_pmf(model, dataset)
    elif is_numpy_ncf(model):  # GMF / MLP / NeuMF with backend="numpy": trained here
        from ._ncf_train import fit_ncf  # lazy: Numba compiles it on first use (cached)

        fit_ncf(model, dataset)
    elif getattr(model, "verbose", False):
        model.fit(dataset)
    else:
        with contextlib.redirect_stdout(io.StringIO()):
            model.fit(dataset)
    # a diverged fit (NaN weights, tied or saturated scores) raises instead of scoring
    check_trained(model, dataset.num_users,
                  batch_scorer(model) or _per_user_scorer(model, dataset.num_items))


def _dense_scores(
    model: Recommender, dataset: cornac.data.Dataset, n_users: int, n_items: int, dtype: Any
) -> np.ndarray:
    """Score every training user with a fitted model; map back to our ids."""
    n_known = dataset.num_items
    our_users = _raw_ids(dataset.uid_map, dataset.num_users)
    col = np.full(n_items, -1, dtype=np.int64)  # col[our item] = Cornac index, -1 if unseen
    col[_raw_ids(dataset.iid_map, n_known)] = np.arange(n_known)
    unseen = col < 0
    gather = np.where(unseen, 0, col)
    score = batch_scorer(model) or _per_user_scorer(model, n_known)
    out = np.empty((n_users, n_items), dtype=dtype)
    absent = np.ones(n_users, dtype=bool)
    absent[our_users] = False
    out[absent] = UNKNOWN_USER_SCORE
    for start in range(0, dataset.num_users, _BATCH_USERS):
        users = np.arange(start, min(start + _BATCH_USERS, dataset.num_users))
        rows = np.asarray(score(users), dtype=np.float64)
        if rows.ndim != 2 or rows.shape[0] != len(users) or rows.shape[1] < n_known:
            raise ValueError(
                f"model {model.name!r} returned scores of shape {rows.shape} for "
                f"{len(users)} users, expected ({len(users)}, {n_known})"
            )
        block = np.take(rows, gather, axis=1)  # our item order
        block[:, unseen] = np.nan
        bad = ~np.isfinite(block)
        if bad.any():
            block[bad] = np.broadcast_to(_fill_below(block)[:, None], block.shape)[bad]
        out[our_users[users]] = block
    return out


def _block_scorer(model: Recommender, dataset: cornac.data.Dataset, n_users: int,
                  n_items: int):
    """``fn(our users) -> scores in our item order`` for a fitted model (the rules of fit_scores)."""
    n_known = dataset.num_items
    cornac_user = np.full(n_users, -1, dtype=np.int64)
    cornac_user[_raw_ids(dataset.uid_map, dataset.num_users)] = np.arange(dataset.num_users)
    col = np.full(n_items, -1, dtype=np.int64)  # col[our item] = Cornac index, -1 if unseen
    col[_raw_ids(dataset.iid_map, n_known)] = np.arange(n_known)
    unseen = col < 0
    gather = np.where(unseen, 0, col)
    batch = batch_scorer(model)
    score = batch or _per_user_scorer(model, n_known)
    lock = threading.Lock()  # Cornac's own per-user score is not known to be thread-safe

    def fn(users: np.ndarray) -> np.ndarray:
        cu = cornac_user[users]
        known = cu >= 0
        out = np.full((len(users), n_items), UNKNOWN_USER_SCORE)
        if known.any():
            if batch is None:
                with lock:
                    rows = np.asarray(score(cu[known]), dtype=np.float64)
            else:
                rows = np.asarray(score(cu[known]), dtype=np.float64)
            if rows.ndim != 2 or rows.shape != (int(known.sum()), n_known):
                raise ValueError(f"model {model.name!r} returned scores of shape {rows.shape}, "
                                 f"expected ({int(known.sum())}, {n_known})")
            block = np.take(rows, gather, axis=1)
            block[:, unseen] = np.nan
            bad = ~np.isfinite(block)
            if bad.any():
                block[bad] = np.broadcast_to(_fill_below(block)[:, None], block.shape)[bad]
            out[known] = block
        return out

    return fn


@declare(**_FIT_RULES)
def fit_scorer(model: Recommender, train: pd.DataFrame, *, n_users: int, n_items: int,
               seed: int | np.random.Generator) -> Scorer:
    """Fit a Cornac model on ``train`` and return a :class:`~recbias_tutorial.Scorer` of it.

    Like :func:`fit_scores`, with the same rules for users and items the model has not seen,
    but nothing is scored until the evaluation reads a block of users: the score matrix is
    never held whole, so any catalogue size is evaluated in bounded memory. Never cached
    (the fit cache holds whole matrices; use :func:`fit_scores` for those). Families with a
    vectorised scorer (:func:`batch_scorer`) score a block with a few matrix products.

    Parameters
    ----------
    model : cornac.models.Recommender
        A fresh model (fitted in place).
    train : pandas.DataFrame
        Columns ``user``, ``item``, ``rating``.
    n_users, n_items : int
        Shape of the scores.
    seed : int or numpy.random.Generator
        Seed of the Cornac dataset's sampling generator.

    Returns
    -------
    Scorer
        Its blocks equal the rows of :func:`fit_scores` (up to floating-point summation order).

    Raises
    ------
    ValueError
        As :func:`fit_scores`.

    See Also
    --------
    fit_scores : the dense score matrix.
    recbias_tutorial.Scorer : scores read in blocks of users.

    Examples
    --------
    >>> from recbias_tutorial.models import PosPop
    >>> train = pd.DataFrame({"user": [0, 1, 1], "item": [0, 0, 1], "rating": [5.0, 4.0, 2.0]})
    >>> scorer = fit_scorer(PosPop(), train, n_users=3, n_items=3, seed=0)
    >>> scorer, scorer.block(0, 1).tolist()
    (Scorer(n_users=3, n_items=3), [[2.0, 0.0, -1.0]])
    """
    if not isinstance(model, Recommender):
        raise ValueError(f"model must be a cornac.models.Recommender, got {model!r}")
    dataset = to_cornac_dataset(train, n_users=n_users, n_items=n_items, seed=seed)
    _fit(model, dataset)
    return Scorer(_block_scorer(model, dataset, n_users, n_items), n_users=n_users,
                  n_items=n_items)


@declare(**_FIT_RULES)
def fit_scores(
    model: Recommender,
    train: pd.DataFrame,
    *,
    n_users: int,
    n_items: int,
    seed: int,
    dtype: Any = np.float64,
    cache: bool | None = None,
) -> np.ndarray:
    """Fit a Cornac model on ``train`` and return its dense score matrix in our ids.

    ``train`` becomes a :class:`cornac.data.Dataset` (:func:`to_cornac_dataset`; our ids are
    the raw ids), the model is fitted on it, every training user is scored on every known
    item (by :func:`~recbias_tutorial.models.batch_scorer` when the family has a vectorised
    scorer, else ``model.score(user_idx)`` user by user), and rows and columns are mapped
    back to our ids through the dataset's ``uid_map`` / ``iid_map``.

    What the model cannot score:

    * **items absent from train** get, in each row, a score strictly below every item the
      model scored for that user (the row minimum minus ``max(1, 1e-6·|min|)``), so they
      rank last, tied among themselves;
    * **NaN / ±inf scores** from the model get that same value, so the result is always
      finite (a user for whom the model raises
      :class:`~cornac.exception.ScoreException` gets a constant row);
    * **users absent from train** get a constant row equal to ``UNKNOWN_USER_SCORE``
      (0.0): all items tie, so a stable ranking falls back to item-id order.

    Parameters
    ----------
    model : cornac.models.Recommender
        A fresh model, fitted in place. (Re-fitting a fitted Cornac model may warm-start
        from its previous parameters.)
    train : pandas.DataFrame
        Columns ``user``, ``item`` (int ids in ``0..n-1``) and ``rating``.
    n_users, n_items : int
        Shape of the result.
    seed : int or numpy.random.Generator
        Seed of the Cornac dataset's sampling generator; models are seeded at construction
        (see :func:`model_zoo`).
    dtype : numpy dtype, default float64
        dtype of the result (``np.float32`` halves memory but may create ties).
    cache : bool or None, default None
        Read and store the result in the on-disk fit cache (None: unless the environment
        variable ``RECBIAS_FIT_CACHE`` is ``0``). An entry is keyed by the sha256 of
        ``train`` (in row order) and the sizes, the model's class and complete pre-fit state,
        the dataset seed, ``dtype`` and the package / Cornac / NumPy versions and model
        code; a cached result is bit-identical to a fresh fit. On a hit ``model`` is **not**
        fitted (pass ``cache=False`` to use the fitted model itself). Not cached: models
        whose state does not follow from their constructor parameters (e.g. already
        fitted), ``seed=None`` models, matrices above ``$RECBIAS_FIT_CACHE_MAX_MB`` (64)
        unless ``cache=True`` is passed explicitly.
        Unreadable or mismatching entries are refitted with a
        :class:`~recbias_tutorial.models.FitCacheWarning`. See
        :func:`~recbias_tutorial.models.clear_fit_cache`.

    Returns
    -------
    numpy.ndarray
        Finite scores of shape ``(n_users, n_items)``, higher = better.

    Raises
    ------
    ValueError
        If ``model`` is not a Cornac recommender, ``n_users`` / ``n_items`` are not positive
        ints, or ``train`` is invalid (see :func:`to_cornac_dataset`); if ``seed`` is
        missing or not a non-negative int or Generator; if ``cache`` is not a bool or None;
        if the model returns scores of the wrong shape.
    TrainingDiverged
        (a ``ValueError``) if a trained family (GMF, MLP, NeuMF, PMF, CML, MF, BPR) ends with
        non-finite weights, or its scores are all equal or all exactly 0 or 1: the message
        names the model and its learning rate.

    See Also
    --------
    recbias_tutorial.models.score_models : many models on one dataset.
    recbias_tutorial.models.model_zoo : seeded models to fit.
    recbias_tutorial.metrics.ranking_metrics : evaluate the score matrix.

    Examples
    --------
    >>> train = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 1], "rating": [5.0, 3.0, 4.0]})
    >>> fit_scores(cornac.models.MostPop(), train, n_users=3, n_items=3, seed=0)
    array([[1., 2., 0.],
           [1., 2., 0.],
           [0., 0., 0.]])
    """
    dtype = _check_dtype(dtype)
    if not isinstance(model, Recommender):
        raise ValueError(f"model must be a cornac.models.Recommender, got {type(model).__name__}")
    dataset = to_cornac_dataset(train, n_users=n_users, n_items=n_items, seed=seed)
    _check_dense_fits(n_users, n_items, dtype)
    use_cache = fit_cache_enabled(cache)
    digest = data_digest(train, n_users, n_items) if use_cache else ""
    return _fit_dense(model, dataset, int(n_users), int(n_items), dtype, digest, use_cache,
                      any_size=cache is True)


def _fit_dense(model: Recommender, dataset: cornac.data.Dataset, n_users: int, n_items: int,
               dtype: np.dtype, digest: str, use_cache: bool, *,
               any_size: bool = False) -> np.ndarray:
    """Fit ``model`` and score it densely, through the fit cache when ``use_cache`` (stored
    whatever its size when ``any_size``: the caller passed ``cache=True``)."""

    def compute() -> np.ndarray:
        _fit(model, dataset)
        return _dense_scores(model, dataset, n_users, n_items, dtype)

    if not use_cache:
        return compute()
    return cached_scores(model, compute, digest=digest, seed=int(dataset.seed),
                         shape=(n_users, n_items), dtype=dtype, cache=True, any_size=any_size)


@declare(**_FIT_RULES)
def iter_scores(
    models: Mapping[str, Recommender],
    train: pd.DataFrame,
    *,
    n_users: int,
    n_items: int,
    seed: int,
    progress: bool = True,
    dtype: Any = np.float64,
    cache: bool | None = None,
) -> Iterator[tuple[str, np.ndarray]]:
    """Fit and score models one at a time, yielding ``(name, scores)`` in mapping order.

    Like :func:`score_models`, but only one score matrix is alive at a time if the caller
    drops it (Yahoo! R3: 15,400 x 1,000 float64 = 123 MB per model). Inputs are validated
    (and the Cornac dataset built) at the call, models are fitted as the iterator advances.

    Parameters
    ----------
    models : Mapping[str, cornac.models.Recommender]
        Fresh models keyed by display name.
    train : pandas.DataFrame
        Columns ``user``, ``item``, ``rating``.
    n_users, n_items : int
        Shape of each score matrix.
    seed : int or numpy.random.Generator
        Seed of the shared Cornac dataset's sampling generator.
    progress : bool, default True
        Show a text progress bar (``tqdm.std``) on stderr.
    dtype : numpy dtype, default float64
        dtype of the score matrices.
    cache : bool or None, default None
        Use the on-disk fit cache, model by model, as :func:`fit_scores` does (a hit is not
        fitted). Matrices above ``$RECBIAS_FIT_CACHE_MAX_MB`` (64 MB; e.g. Yahoo! R3's
        123 MB) are stored only with an explicit ``cache=True``.

    Returns
    -------
    Iterator[tuple[str, numpy.ndarray]]
        ``(name, scores)`` in the order of ``models``; see :func:`fit_scores` for the scores.

    Raises
    ------
    ValueError
        At the call, if ``models`` is not a mapping of Cornac recommenders, or on bad
        ``train`` / ``n_users`` / ``n_items`` / ``seed`` (see :func:`to_cornac_dataset`);
        while iterating, if a model returns scores of the wrong shape.

    See Also
    --------
    recbias_tutorial.models.score_models : all matrices at once, as a dict.
    recbias_tutorial.models.model_zoo : a zoo of seeded models to iterate over.
    recbias_tutorial.replications.jadidinejad2021.evaluate_zoo : evaluates each matrix.

    Examples
    --------
    >>> from recbias_tutorial.models import AvgRating
    >>> train = pd.DataFrame({"user": [0, 1], "item": [0, 0], "rating": [5.0, 1.0]})
    >>> [(name, s.shape) for name, s in iter_scores({"AvgRating": AvgRating()}, train,
    ...                                              n_users=2, n_items=2, progress=False, seed=0)]
    [('AvgRating', (2, 2))]
    """
    dtype = _check_dtype(dtype)
    _check_models(models)
    dataset = to_cornac_dataset(train, n_users=n_users, n_items=n_items, seed=seed)
    _check_dense_fits(n_users, n_items, dtype)
    use_cache = fit_cache_enabled(cache)
    digest = data_digest(train, n_users, n_items) if use_cache else ""

    def generate() -> Iterator[tuple[str, np.ndarray]]:
        with tqdm(total=len(models), desc="fit + score", unit="model", disable=not progress) as bar:
            for name, model in models.items():
                bar.set_postfix_str(str(name), refresh=False)
                scores = _fit_dense(model, dataset, int(n_users), int(n_items), dtype, digest,
                                    use_cache, any_size=cache is True)
                bar.update()
                yield name, scores

    return generate()


@declare(**_FIT_RULES)
def score_models(
    models: Mapping[str, Recommender],
    train: pd.DataFrame,
    *,
    n_users: int,
    n_items: int,
    seed: int,
    progress: bool = True,
    dtype: Any = np.float64,
    cache: bool | None = None,
) -> dict[str, np.ndarray]:
    """Fit every model on ``train`` and return ``{name: score matrix}``.

    One Cornac dataset is built and shared; models are fitted in place, in mapping order,
    with a text progress bar (``tqdm.std``, on stderr). Seeded models (as in
    :func:`model_zoo`) make the result deterministic. See :func:`fit_scores` for unknown
    users / items and non-finite scores. All matrices are kept: the default
    :func:`model_zoo` on Yahoo! R3 would need 82 x 123 MB = 10 GB, so use
    :func:`iter_scores` there, which holds one matrix at a time.

    Parameters
    ----------
    models : Mapping[str, cornac.models.Recommender]
        Fresh models keyed by display name.
    train : pandas.DataFrame
        Columns ``user``, ``item``, ``rating``.
    n_users, n_items : int
        Shape of each score matrix.
    seed : int or numpy.random.Generator
        Seed of the shared Cornac dataset's sampling generator.
    progress : bool, default True
        Show a text progress bar (``tqdm.std``) on stderr.
    dtype : numpy dtype, default float64
        dtype of the score matrices.
    cache : bool or None, default None
        Use the on-disk fit cache (see :func:`fit_scores`).

    Returns
    -------
    dict[str, numpy.ndarray]
        Same keys and order as ``models``.

    Raises
    ------
    ValueError
        If ``models`` is not a mapping of Cornac recommenders, or on bad ``train`` /
        ``n_users`` / ``n_items`` (see :func:`fit_scores`).

    See Also
    --------
    recbias_tutorial.models.iter_scores : one matrix alive at a time.
    recbias_tutorial.models.fit_scores : a single model.

    Examples
    --------
    >>> from recbias_tutorial.models import AvgRating, PosPop
    >>> train = pd.DataFrame({"user": [0, 1, 1], "item": [0, 0, 1], "rating": [5.0, 4.0, 2.0]})
    >>> out = score_models({"PosPop": PosPop(), "AvgRating": AvgRating()}, train,
    ...                    n_users=2, n_items=2, progress=False, seed=0)
    >>> out["PosPop"][0], out["AvgRating"][0]
    (array([2., 0.]), array([4.5, 2. ]))
    """
    _check_models(models)
    _check_dense_fits(n_users, n_items, dtype, len(models))
    return dict(
        iter_scores(
            models, train, n_users=n_users, n_items=n_items, seed=seed, progress=progress,
            dtype=dtype, cache=cache,
        )
    )


def _check_dense_fits(n_users: int, n_items: int, dtype: Any, n_models: int = 1) -> None:
    """Refuse up front (before any fit) score matrices larger than the memory available
    (``n_users`` and ``n_items`` are declared by every caller)."""
    n_users, n_items = int(n_users), int(n_items)
    check_fits_in_memory(
        float(n_models) * n_users * n_items * np.dtype(dtype).itemsize, "n_users x n_items",
        f"{n_models} dense score matri{'x' if n_models == 1 else 'ces'} of {n_users:,} x "
        f"{n_items:,} {np.dtype(dtype).name}"
        + ("" if n_models == 1 else " (use iter_scores or fit_scorer to hold one at a time)"))
