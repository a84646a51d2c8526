"""Fit Cornac recommenders on our ids and turn them into dense score matrices.

The rest of the package works with *score matrices*: dense ``np.ndarray`` of shape
``(n_users, n_items)`` whose rows are indexed by our contiguous user ids and whose columns
by our contiguous item ids (higher = better). Cornac, on the other hand, re-indexes users
and items in order of first appearance in the training data (``Dataset.uid_map`` /
``iid_map``) and only knows the users and items it has seen. :func:`fit_scores` is the
bridge: it fits any :class:`cornac.models.Recommender` and maps its scores back to our ids,
with a documented rule for everything Cornac cannot score.

This module also provides the non-personalised baselines the papers use but Cornac lacks
(:class:`AvgRating`, :class:`PosPop`, :class:`RandomScores`), all real Cornac
recommenders, and :func:`score_models` to score many models with a progress bar. The model
zoo lives in :mod:`recbias_tutorial.zoo` and is re-exported here as :func:`model_zoo`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import cornac
import numpy as np
import pandas as pd
from cornac.exception import ScoreException
from cornac.models import Recommender
from tqdm.auto import tqdm

__all__ = [
    "AvgRating",
    "PosPop",
    "RandomScores",
    "fit_scores",
    "iter_scores",
    "model_zoo",
    "score_models",
    "to_cornac_dataset",
]

#: Value of every entry of the row of a user who has no training data (all items tie).
UNKNOWN_USER_SCORE = 0.0

_REQUIRED_COLUMNS = ("user", "item", "rating")
_BATCH_USERS = 1024


# --------------------------------------------------------------------------------------
# input validation and conversion
# --------------------------------------------------------------------------------------
def _check_size(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return int(value)


def _validate_feedback(
    frame: Any, *, n_users: int, n_items: int, name: str = "train"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check a feedback frame and return its ``(user, item, rating)`` columns as arrays."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in _REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} is missing column(s) {missing}; expected {list(_REQUIRED_COLUMNS)}")
    if len(frame) == 0:
        raise ValueError(f"{name} is empty: a model needs at least one rating to be fitted")
    arrays = []
    for col, n in (("user", n_users), ("item", n_items)):
        values = frame[col].to_numpy()
        if not np.issubdtype(values.dtype, np.integer):
            raise ValueError(f"{name}[{col!r}] must hold integer ids, got dtype {values.dtype}")
        lo, hi = int(values.min()), int(values.max())
        if lo < 0 or hi >= n:
            raise ValueError(
                f"{name}[{col!r}] has ids in [{lo}, {hi}], outside 0..n_{col}s-1 = 0..{n - 1}"
            )
        arrays.append(values.astype(np.int64, copy=False))
    rating = frame["rating"].to_numpy()
    if not np.issubdtype(rating.dtype, np.number) or np.issubdtype(rating.dtype, np.complexfloating):
        raise ValueError(f"{name}['rating'] must be numeric, got dtype {rating.dtype}")
    rating = rating.astype(np.float64, copy=False)
    if not np.all(np.isfinite(rating)):
        raise ValueError(f"{name}['rating'] contains NaN or infinite values")
    keys = arrays[0] * np.int64(n_items) + arrays[1]
    n_dup = len(keys) - len(np.unique(keys))
    if n_dup:
        raise ValueError(
            f"{name} has {n_dup} duplicated (user, item) pairs; Cornac would silently keep "
            "the first one, aggregate them first"
        )
    return arrays[0], arrays[1], rating


def to_cornac_dataset(
    train: pd.DataFrame, *, n_users: int, n_items: int, seed: int | None = None
) -> cornac.data.Dataset:
    """Build a :class:`cornac.data.Dataset` whose raw ids are our integer ids.

    Parameters
    ----------
    train : pandas.DataFrame
        Feedback with columns ``user``, ``item`` (ids in ``0..n-1``) and ``rating``.
    n_users, n_items : int
        Sizes of the id spaces, used to validate ``train``.
    seed : int, optional
        Seed of the dataset's own sampling generator (used by models that draw
        mini-batches or negatives from the dataset).

    Returns
    -------
    cornac.data.Dataset
        Built with :meth:`cornac.data.Dataset.from_uir`; ``uid_map`` / ``iid_map`` map our
        ids (Python ``int``) to Cornac's internal indices.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"user": [2, 0], "item": [1, 1], "rating": [5.0, 3.0]})
    >>> ds = to_cornac_dataset(train, n_users=3, n_items=2)
    >>> dict(ds.uid_map), dict(ds.iid_map)
    ({2: 0, 0: 1}, {1: 0})
    """
    n_users = _check_size(n_users, "n_users")
    n_items = _check_size(n_items, "n_items")
    users, items, ratings = _validate_feedback(train, n_users=n_users, n_items=n_items)
    triples = list(zip(users.tolist(), items.tolist(), ratings.tolist()))
    return cornac.data.Dataset.from_uir(triples, seed=seed)


# --------------------------------------------------------------------------------------
# scoring
# --------------------------------------------------------------------------------------
def _raw_ids(mapping: Mapping[Any, int], size: int) -> np.ndarray:
    """Array ``a`` with ``a[internal_index] = our id`` for the first ``size`` indices."""
    raw = np.fromiter(mapping.keys(), dtype=np.int64, count=len(mapping))
    idx = np.fromiter(mapping.values(), dtype=np.int64, count=len(mapping))
    out = np.full(len(mapping), -1, dtype=np.int64)
    out[idx] = raw
    return out[:size]


def _model_rows(model: Recommender, users: np.ndarray, n_known_items: int) -> np.ndarray:
    """Scores of Cornac users ``users`` (internal indices) for all known items.

    Returns a float64 array of shape ``(len(users), n_known_items)``; a user for whom the
    model raises :class:`cornac.exception.ScoreException` gets a row of NaN (handled by the
    caller like any other non-finite score).
    """
    batch = getattr(model, "score_batch", None)
    if callable(batch):
        rows = np.asarray(batch(users), dtype=np.float64)
        return rows[:, :n_known_items]
    rows = np.empty((len(users), n_known_items), dtype=np.float64)
    for r, u in enumerate(users.tolist()):
        try:
            s = np.asarray(model.score(u), dtype=np.float64).ravel()
        except ScoreException:
            rows[r] = np.nan
            continue
        if s.size < n_known_items:
            raise ValueError(
                f"model {getattr(model, 'name', model)!r} returned {s.size} scores for "
                f"user index {u}, expected at least {n_known_items}"
            )
        rows[r] = s[:n_known_items]
    return rows


def _fill_below(rows: np.ndarray) -> np.ndarray:
    """Per row, a value strictly below every finite entry (0 for all-non-finite rows)."""
    finite = np.isfinite(rows)
    lo = np.min(np.where(finite, rows, np.inf), axis=1)
    any_finite = np.isfinite(lo)
    lo = np.where(any_finite, lo, UNKNOWN_USER_SCORE + 1.0)
    gap = np.maximum(1.0, np.abs(lo) * 1e-6)
    return lo - gap


def _scores_from_fitted(
    model: Recommender,
    dataset: cornac.data.Dataset,
    *,
    n_users: int,
    n_items: int,
    dtype: Any = np.float64,
) -> np.ndarray:
    our_users = _raw_ids(dataset.uid_map, dataset.num_users)
    our_items = _raw_ids(dataset.iid_map, dataset.num_items)
    known_items = np.zeros(n_items, dtype=bool)
    known_items[our_items] = True
    out = np.full((n_users, n_items), UNKNOWN_USER_SCORE, dtype=dtype)
    for start in range(0, dataset.num_users, _BATCH_USERS):
        internal = np.arange(start, min(start + _BATCH_USERS, dataset.num_users))
        known = _model_rows(model, internal, dataset.num_items)
        full = np.empty((len(internal), n_items), dtype=np.float64)
        full[:, our_items] = known
        full[:, ~known_items] = np.nan
        bad = ~np.isfinite(full)
        if bad.any():
            fill = _fill_below(full)
            full = np.where(bad, fill[:, None], full)
        out[our_users[internal]] = full
    return out


def fit_scores(
    model: Recommender,
    train: pd.DataFrame,
    *,
    n_users: int,
    n_items: int,
    seed: int | None = None,
    dtype: Any = np.float64,
) -> np.ndarray:
    """Fit a Cornac model on ``train`` and return its dense score matrix in our ids.

    The frame is turned into a :class:`cornac.data.Dataset` with
    :meth:`~cornac.data.Dataset.from_uir` (our ids are the raw ids), the model is fitted
    on it, ``model.score(user_idx)`` is called once per training user (or
    ``model.score_batch(user_indices)`` when the model provides it, as the baselines of this
    module do), and the scores are written back to our ids through the dataset's
    ``uid_map`` / ``iid_map``.

    Rules for what the model cannot score:

    * **items absent from train** get, in every row, a score strictly below every item the
      model scored for that user (row minimum minus ``max(1, 1e-6·|min|)``);
    * **NaN / ±inf scores** returned by the model are replaced by that same value, so the
      result is always finite (a model that raises
      :class:`~cornac.exception.ScoreException` for a user gives a row of ties);
    * **users absent from train** get a constant row (``UNKNOWN_USER_SCORE`` = 0.0): all
      items tie, so any stable ranking falls back to item-id order.

    Parameters
    ----------
    model : cornac.models.Recommender
        An unfitted (or re-fittable) Cornac model; it is fitted in place.
    train : pandas.DataFrame
        Columns ``user``, ``item`` (int ids in ``0..n-1``) and ``rating``; no duplicated
        ``(user, item)`` pairs.
    n_users, n_items : int
        Shape of the returned matrix.
    seed : int, optional
        Seed of the Cornac dataset's sampling generator. Models are seeded at construction
        (see :func:`model_zoo`).
    dtype : numpy dtype, default float64
        Dtype of the result (``np.float32`` halves memory but may create extra ties).

    Returns
    -------
    numpy.ndarray
        Finite scores of shape ``(n_users, n_items)``; higher = better.

    Raises
    ------
    ValueError
        If ``train`` is empty, lacks a column, has ids outside ``0..n-1``, non-finite
        ratings or duplicated pairs, or ``n_users`` / ``n_items`` are not positive ints.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 1], "rating": [5.0, 3.0, 4.0]})
    >>> fit_scores(cornac.models.MostPop(), train, n_users=3, n_items=3)
    array([[ 1.,  2.,  0.],
           [ 1.,  2.,  0.],
           [ 0.,  0.,  0.]])
    """
    n_users = _check_size(n_users, "n_users")
    n_items = _check_size(n_items, "n_items")
    if not isinstance(model, Recommender):
        raise ValueError(f"model must be a cornac.models.Recommender, got {type(model).__name__}")
    dataset = to_cornac_dataset(train, n_users=n_users, n_items=n_items, seed=seed)
    model.fit(dataset)
    return _scores_from_fitted(model, dataset, n_users=n_users, n_items=n_items, dtype=dtype)


def iter_scores(
    models: Mapping[str, Recommender],
    train: pd.DataFrame,
    *,
    n_users: int,
    n_items: int,
    seed: int | None = None,
    progress: bool = True,
    dtype: Any = np.float64,
) -> Iterator[tuple[str, np.ndarray]]:
    """Lazily fit and score models one at a time, yielding ``(name, scores)``.

    Same as :func:`score_models` but holds only one score matrix at a time, which matters
    for a large zoo on a large dataset (Yahoo! R3: 15,400 × 1,000 float64 = 123 MB each).

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"user": [0, 1], "item": [0, 0], "rating": [5.0, 1.0]})
    >>> [(name, s.shape) for name, s in iter_scores({"AvgRating": AvgRating()}, train,
    ...                                              n_users=2, n_items=2, progress=False)]
    [('AvgRating', (2, 2))]
    """
    n_users = _check_size(n_users, "n_users")
    n_items = _check_size(n_items, "n_items")
    if not isinstance(models, Mapping):
        raise ValueError(f"models must be a mapping name -> Recommender, got {type(models).__name__}")
    for name, model in models.items():
        if not isinstance(model, Recommender):
            raise ValueError(f"models[{name!r}] is not a cornac.models.Recommender")
    dataset = to_cornac_dataset(train, n_users=n_users, n_items=n_items, seed=seed)
    with tqdm(total=len(models), desc="fitting models", disable=not progress) as bar:
        for name, model in models.items():
            bar.set_postfix_str(str(name), refresh=False)
            dataset.reset()
            model.fit(dataset)
            scores = _scores_from_fitted(model, dataset, n_users=n_users, n_items=n_items, dtype=dtype)
            bar.update()
            yield name, scores


def score_models(
    models: Mapping[str, Recommender],
    train: pd.DataFrame,
    *,
    n_users: int,
    n_items: int,
    seed: int | None = None,
    progress: bool = True,
    dtype: Any = np.float64,
) -> dict[str, np.ndarray]:
    """Fit every model on ``train`` and return ``{name: score matrix}``.

    The Cornac dataset is built once and shared. Models are fitted in the mapping's order;
    with seeded models (as in :func:`model_zoo`) the result is deterministic. See
    :func:`fit_scores` for the rules on unknown users/items and non-finite scores, and
    :func:`iter_scores` for a memory-friendly generator.

    Parameters
    ----------
    models : Mapping[str, cornac.models.Recommender]
        Models keyed by display name; fitted in place.
    train : pandas.DataFrame
        Training feedback (``user``, ``item``, ``rating``).
    n_users, n_items : int
        Shape of each score matrix.
    seed : int, optional
        Seed of the shared Cornac dataset's sampling generator.
    progress : bool, default True
        Show a ``tqdm.auto`` progress bar.
    dtype : numpy dtype, default float64
        Dtype of the score matrices.

    Returns
    -------
    dict[str, numpy.ndarray]
        Same keys and order as ``models``.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"user": [0, 1, 1], "item": [0, 0, 1], "rating": [5.0, 4.0, 2.0]})
    >>> out = score_models({"PosPop": PosPop(), "AvgRating": AvgRating()}, train,
    ...                    n_users=2, n_items=2, progress=False)
    >>> out["PosPop"][0], out["AvgRating"][0]
    (array([2., 0.]), array([4.5, 2. ]))
    """
    return dict(
        iter_scores(
            models, train, n_users=n_users, n_items=n_items, seed=seed, progress=progress, dtype=dtype
        )
    )


# --------------------------------------------------------------------------------------
# baselines Cornac lacks
# --------------------------------------------------------------------------------------
class _ItemStatistic(Recommender):
    """A non-personalised recommender scoring each known item by one number."""

    def __init__(self, name: str, trainable: bool = True, verbose: bool = False) -> None:
        super().__init__(name=name, trainable=trainable, verbose=verbose)
        self.item_scores: np.ndarray | None = None

    def _statistic(self, items: np.ndarray, ratings: np.ndarray, n_items: int) -> np.ndarray:
        raise NotImplementedError

    def fit(self, train_set: cornac.data.Dataset, val_set: cornac.data.Dataset | None = None):
        """Fit the model: compute the per-item statistic on ``train_set``."""
        Recommender.fit(self, train_set, val_set)
        _, items, ratings = train_set.uir_tuple
        self.item_scores = self._statistic(
            np.asarray(items, dtype=np.int64), np.asarray(ratings, dtype=np.float64), self.num_items
        ).astype(np.float64)
        return self

    def score(self, user_idx: int, item_idx: int | None = None):
        """Score of ``item_idx`` (or of all known items), the same for every user."""
        if self.item_scores is None:
            raise ScoreException(f"{self.name} is not fitted")
        if item_idx is None:
            return self.item_scores.copy()
        if not self.knows_item(item_idx):
            raise ScoreException(f"Can't make score prediction for item {item_idx}")
        return float(self.item_scores[item_idx])

    def score_batch(self, user_indices: np.ndarray) -> np.ndarray:
        """Scores of all known items for several users at once (rows are identical)."""
        if self.item_scores is None:
            raise ScoreException(f"{self.name} is not fitted")
        return np.broadcast_to(self.item_scores, (len(user_indices), self.num_items))


class AvgRating(_ItemStatistic):
    """Average rating of each item in the training data (non-personalised).

    The ``AvgRating`` baseline of the MNAR evaluation papers: an item's score is the plain
    mean of its training ratings, with no shrinkage, so a single 5-star rating puts an item
    on top. Items without training ratings are unknown to the model (see
    :func:`fit_scores`).

    Parameters
    ----------
    name : str, default "AvgRating"
        Model name shown by Cornac.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"user": [0, 1, 1], "item": [0, 0, 1], "rating": [5.0, 2.0, 4.0]})
    >>> fit_scores(AvgRating(), train, n_users=2, n_items=2)[0]
    array([3.5, 4. ])
    """

    def __init__(self, name: str = "AvgRating") -> None:
        super().__init__(name=name)

    def _statistic(self, items: np.ndarray, ratings: np.ndarray, n_items: int) -> np.ndarray:
        counts = np.bincount(items, minlength=n_items)
        sums = np.bincount(items, weights=ratings, minlength=n_items)
        return sums / np.maximum(counts, 1)


class PosPop(_ItemStatistic):
    """Positive popularity: number of relevant training ratings of each item.

    An item's score is ``#{ratings of the item >= threshold}``; ties (e.g. items with no
    relevant rating) keep the same score.

    Parameters
    ----------
    threshold : float, default 4.0
        A rating is relevant when ``rating >= threshold``.
    name : str, default "PosPop"
        Model name shown by Cornac.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"user": [0, 1, 1], "item": [0, 0, 1], "rating": [5.0, 4.0, 3.0]})
    >>> fit_scores(PosPop(threshold=4.0), train, n_users=2, n_items=2)[0]
    array([2., 0.])
    """

    def __init__(self, threshold: float = 4.0, name: str = "PosPop") -> None:
        super().__init__(name=name)
        threshold = float(threshold)
        if not np.isfinite(threshold):
            raise ValueError(f"threshold must be finite, got {threshold}")
        self.threshold = threshold

    def _statistic(self, items: np.ndarray, ratings: np.ndarray, n_items: int) -> np.ndarray:
        return np.bincount(items[ratings >= self.threshold], minlength=n_items)


class RandomScores(Recommender):
    """Seeded random recommender: i.i.d. ``Uniform[0, 1)`` scores per (user, item).

    The scores of user ``u`` are drawn from ``numpy.random.default_rng([entropy, u])``,
    where ``entropy`` comes from ``seed`` and ``u`` is Cornac's user index, so they do not
    depend on the order in which users are scored: the same training frame and seed give the
    same scores, a different seed gives different ones. With ``seed=None`` fresh entropy is
    drawn at each :meth:`fit`.

    Parameters
    ----------
    seed : int, optional
        Seed of the scores.
    name : str, default "Random"
        Model name shown by Cornac.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"user": [0, 1], "item": [0, 1], "rating": [5.0, 1.0]})
    >>> a = fit_scores(RandomScores(seed=1), train, n_users=2, n_items=2)
    >>> bool((a == fit_scores(RandomScores(seed=1), train, n_users=2, n_items=2)).all())
    True
    """

    def __init__(self, seed: int | None = None, name: str = "Random") -> None:
        super().__init__(name=name, trainable=True, verbose=False)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        self.seed = None if seed is None else int(seed)
        self._entropy: int | None = None

    def fit(self, train_set: cornac.data.Dataset, val_set: cornac.data.Dataset | None = None):
        """Fit the model: remember the catalogue size and fix the entropy."""
        Recommender.fit(self, train_set, val_set)
        self._entropy = int(np.random.SeedSequence(self.seed).entropy)
        return self

    def _row(self, user_idx: int) -> np.ndarray:
        if self._entropy is None:
            raise ScoreException(f"{self.name} is not fitted")
        return np.random.default_rng([self._entropy, int(user_idx)]).random(self.num_items)

    def score(self, user_idx: int, item_idx: int | None = None):
        """Random scores of ``user_idx`` for ``item_idx`` or for all known items."""
        if user_idx is None or user_idx < 0:
            raise ScoreException(f"Can't make score prediction for user {user_idx}")
        row = self._row(user_idx)
        if item_idx is None:
            return row
        if not self.knows_item(item_idx):
            raise ScoreException(f"Can't make score prediction for item {item_idx}")
        return float(row[item_idx])

    def score_batch(self, user_indices: np.ndarray) -> np.ndarray:
        """Random scores of several users (identical to calling :meth:`score` per user)."""
        return np.stack([self._row(u) for u in np.asarray(user_indices).tolist()]) if len(
            user_indices
        ) else np.empty((0, self.num_items))


def model_zoo(*args: Any, **kwargs: Any) -> dict[str, Recommender]:
    """Seeded Cornac models keyed by readable name; see :func:`recbias_tutorial.zoo.model_zoo`.

    Examples
    --------
    >>> len(model_zoo()) >= 40
    True
    """
    from .zoo import model_zoo as _model_zoo

    return _model_zoo(*args, **kwargs)
