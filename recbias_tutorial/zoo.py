"""Recommender families: baselines Cornac lacks, vectorised scoring, and a seeded model zoo.

* :class:`AvgRating`, :class:`PosPop` and :class:`RandomScores` are genuine
  :class:`cornac.models.Recommender` subclasses: they work in Cornac's own evaluation
  (:func:`cornac.eval_methods.ranking_eval`, :class:`cornac.Experiment`) and in
  :func:`recbias_tutorial.models.fit_scores`.
* :func:`batch_scorer` (defined in :mod:`recbias_tutorial._scorers`, re-exported here) gives,
  for a fitted model, a function scoring many users at once. It reproduces the family's
  ``score(user_idx)`` (up to floating-point summation order) and is what makes scoring a
  whole zoo on Yahoo! R3 take seconds instead of minutes.
* :func:`model_zoo` builds many seeded models of the Cornac families that train in seconds
  on a CPU; fit and score them with :func:`recbias_tutorial.models.score_models`.

Everything here is re-exported by :mod:`recbias_tutorial.models`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import cornac
import numpy as np
from cornac.exception import ScoreException
from cornac.models import Recommender

from ._scorers import _f64, batch_scorer

__all__ = [
    "DEFAULT_FAMILIES",
    "FAMILIES",
    "AvgRating",
    "PosPop",
    "RandomScores",
    "batch_scorer",
    "model_zoo",
]


def _int64(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=np.int64)


# --------------------------------------------------------------------------------------
# baselines
# --------------------------------------------------------------------------------------
class _ItemStatistic(Recommender):
    """Non-personalised recommender scoring every known item by one number."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name, trainable=True, verbose=False)
        self.item_scores: np.ndarray | None = None

    def _statistic(self, items: np.ndarray, ratings: np.ndarray, n_items: int) -> np.ndarray:
        raise NotImplementedError

    def fit(self, train_set: cornac.data.Dataset, val_set: cornac.data.Dataset | None = None):
        """Compute the per-item statistic on ``train_set`` (Cornac indices)."""
        Recommender.fit(self, train_set, val_set)
        _, items, ratings = train_set.uir_tuple
        stat = self._statistic(_int64(items), _f64(ratings), self.num_items)
        self.item_scores = _f64(stat)
        return self

    def _fitted_scores(self) -> np.ndarray:
        if self.item_scores is None:
            raise ScoreException(f"{self.name} is not fitted")
        return self.item_scores

    def score(self, user_idx: int, item_idx: int | None = None):
        """Score of ``item_idx`` (or of all known items); the same for every user."""
        scores = self._fitted_scores()
        if item_idx is None:
            return scores.copy()
        if not self.knows_item(item_idx):
            raise ScoreException(f"Can't make score prediction for item {item_idx}")
        return float(scores[item_idx])

    def score_batch(self, user_indices: Sequence[int]) -> np.ndarray:
        """All known items' scores for several users, shape ``(len(user_indices), n)``."""
        scores = self._fitted_scores()
        return np.broadcast_to(scores, (len(user_indices), scores.size))


class AvgRating(_ItemStatistic):
    """Mean training rating of each item (non-personalised).

    The ``AvgRating`` baseline of the MNAR-evaluation papers: the plain mean, no shrinkage,
    so a single 5-star rating puts an item on top. Items without training ratings are unknown
    to the model and rank last in :func:`~recbias_tutorial.models.fit_scores`.

    Parameters
    ----------
    name : str, default "AvgRating"
        Model name shown by Cornac.

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial.models import fit_scores
    >>> train = pd.DataFrame({"user": [0, 1, 1], "item": [0, 0, 1], "rating": [5.0, 2.0, 4.0]})
    >>> fit_scores(AvgRating(), train, n_users=2, n_items=3)[0]  # item 2 unseen: below all
    array([3.5, 4. , 2.5])
    """

    def __init__(self, name: str = "AvgRating") -> None:
        super().__init__(name=name)

    def _statistic(self, items: np.ndarray, ratings: np.ndarray, n_items: int) -> np.ndarray:
        counts = np.bincount(items, minlength=n_items)
        sums = np.bincount(items, weights=ratings, minlength=n_items)
        return sums / np.maximum(counts, 1)


class PosPop(_ItemStatistic):
    """Positive popularity: number of relevant training ratings (``rating >= threshold``).

    Parameters
    ----------
    threshold : float, default 4.0
        A rating is relevant when ``rating >= threshold``.
    name : str, default "PosPop"
        Model name shown by Cornac.

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial.models import fit_scores
    >>> train = pd.DataFrame({"user": [0, 1, 1], "item": [0, 0, 1], "rating": [5.0, 4.0, 3.0]})
    >>> fit_scores(PosPop(threshold=4.0), train, n_users=2, n_items=2)[0]
    array([2., 0.])
    """

    def __init__(self, threshold: float = 4.0, name: str = "PosPop") -> None:
        super().__init__(name=name)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)):
            raise ValueError(f"threshold must be a number, got {threshold!r}")
        if not np.isfinite(threshold):
            raise ValueError(f"threshold must be finite, got {threshold}")
        self.threshold = float(threshold)

    def _statistic(self, items: np.ndarray, ratings: np.ndarray, n_items: int) -> np.ndarray:
        return np.bincount(items[ratings >= self.threshold], minlength=n_items)


class RandomScores(Recommender):
    """Seeded random recommender: i.i.d. ``Uniform[0, 1)`` scores per (user, item).

    User ``u``'s scores (``u`` = Cornac's user index) are drawn from
    ``numpy.random.default_rng([entropy, u])`` with ``entropy`` derived from ``seed``, so they
    do not depend on the order in which users are scored: the same training data and seed
    give the same scores, another seed other scores. With ``seed=None`` fresh entropy is
    drawn at each :meth:`fit`.

    Parameters
    ----------
    seed : int, optional
        Non-negative seed.
    name : str, default "Random"
        Model name shown by Cornac.

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial.models import fit_scores
    >>> train = pd.DataFrame({"user": [0, 1], "item": [0, 1], "rating": [5.0, 1.0]})
    >>> a = fit_scores(RandomScores(seed=1), train, n_users=2, n_items=2)
    >>> b = fit_scores(RandomScores(seed=1), train, n_users=2, n_items=2)
    >>> c = fit_scores(RandomScores(seed=2), train, n_users=2, n_items=2)
    >>> bool((a == b).all()), bool((a == c).any())
    (True, False)
    """

    def __init__(self, seed: int | None = None, name: str = "Random") -> None:
        super().__init__(name=name, trainable=True, verbose=False)
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0
        ):
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        self.seed = None if seed is None else int(seed)
        self._entropy: int | None = None

    def fit(self, train_set: cornac.data.Dataset, val_set: cornac.data.Dataset | None = None):
        """Remember the catalogue and fix the entropy of the scores."""
        Recommender.fit(self, train_set, val_set)
        self._entropy = int(np.random.SeedSequence(self.seed).entropy)
        return self

    def _row(self, user_idx: int) -> np.ndarray:
        if self._entropy is None:
            raise ScoreException(f"{self.name} is not fitted")
        if user_idx is None or user_idx < 0:
            raise ScoreException(f"Can't make score prediction for user {user_idx}")
        return np.random.default_rng([self._entropy, int(user_idx)]).random(self.num_items)

    def score(self, user_idx: int, item_idx: int | None = None):
        """Random scores of ``user_idx`` for ``item_idx`` or for all known items."""
        row = self._row(user_idx)
        if item_idx is None:
            return row
        if not self.knows_item(item_idx):
            raise ScoreException(f"Can't make score prediction for item {item_idx}")
        return float(row[item_idx])

    def score_batch(self, user_indices: Sequence[int]) -> np.ndarray:
        """Same as :meth:`score` for each user, stacked."""
        rows = [self._row(u) for u in np.asarray(user_indices).tolist()]
        return np.stack(rows) if rows else np.empty((0, self.num_items))


# --------------------------------------------------------------------------------------
# the zoo
# --------------------------------------------------------------------------------------
# Training budgets (see model_zoo's docstring for the measured times): the default zoo
# (fit + dense scores) takes under two minutes of one CPU core on Yahoo! R3. Seeded Cornac
# models train single-threaded (Cornac switches off its Hogwild parallelism when given a
# seed), hence deterministically. The few epochs are compensated by larger learning rates
# where Cornac's defaults assume hundreds of epochs (BPR family: 0.001 -> 0.1, which on
# Yahoo! R3's MAR test set gives AUC 0.69 after 5 epochs against 0.61, i.e. MostPop's, after
# 100 epochs at 0.001; PMF: 0.001 -> 0.01).
_M = cornac.models
_LATENT: dict[str, Callable[[int, int], Recommender]] = {
    # plain MF without biases (Cornac's MF with use_bias=False), SGD on ratings
    "MF": lambda k, s: _M.MF(name=f"MF-{k}", k=k, max_iter=20, use_bias=False, seed=s),
    # Koren's biased MF (Cornac's default MF is the same model)
    "SVD": lambda k, s: _M.SVD(name=f"SVD-{k}", k=k, max_iter=20, seed=s),
    # NMF keeps Cornac's use_bias=False: with biases, Cornac 3.0.1's own NMF.score fails
    # under NumPy 2 (a float64 global mean promotes the float32 buffer it passes to
    # fast_dot); batch_scorer would still score it
    "NMF": lambda k, s: _M.NMF(name=f"NMF-{k}", k=k, max_iter=10, seed=s),
    # non-linear PMF: ~0.15 s per epoch per 10 factors on Yahoo! R3, hence 2 epochs
    "PMF": lambda k, s: _M.PMF(name=f"PMF-{k}", k=k, max_iter=2, learning_rate=0.01, seed=s),
    # pairwise models treat every observed rating (whatever its value) as positive feedback
    "BPR": lambda k, s: _M.BPR(name=f"BPR-{k}", k=k, max_iter=5, learning_rate=0.1, seed=s),
    "WBPR": lambda k, s: _M.WBPR(name=f"WBPR-{k}", k=k, max_iter=5, learning_rate=0.1, seed=s),
    "MMMF": lambda k, s: _M.MMMF(name=f"MMMF-{k}", k=k, max_iter=5, learning_rate=0.1, seed=s),
    # Poisson factorisation: ~2 s setup + 1.4 s per iteration per 10 factors on Yahoo! R3
    "HPF": lambda k, s: _M.HPF(name=f"HPF-{k}", k=k, max_iter=5, seed=s),
}
_SINGLE: dict[str, Callable[[int], Recommender]] = {
    "MostPop": lambda s: _M.MostPop(name="MostPop"),
    "PosPop": lambda s: PosPop(name="PosPop"),
    "AvgRating": lambda s: AvgRating(name="AvgRating"),
    "GlobalAvg": lambda s: _M.GlobalAvg(name="GlobalAvg"),  # constant: every item ties
    "BaselineOnly": lambda s: _M.BaselineOnly(name="BaselineOnly", max_iter=20, seed=s),
    "Random": lambda s: RandomScores(seed=s, name="Random"),
}
_KNN: dict[str, Callable[[int, int], Recommender]] = {
    "ItemKNN": lambda k, s: _M.ItemKNN(name=f"ItemKNN-{k}", k=k, verbose=False, seed=s),
    # UserKNN's dense user-user similarity: on Yahoo! R3 20 s and 7 GB to fit (its scoring is
    # vectorised by batch_scorer)
    "UserKNN": lambda k, s: _M.UserKNN(name=f"UserKNN-{k}", k=k, verbose=False, seed=s),
}

#: Every family :func:`model_zoo` can build, in zoo order.
FAMILIES: tuple[str, ...] = (*_SINGLE, *_LATENT, "EASE", *_KNN)
#: Families built by default: all but the two that are slow or memory-hungry on Yahoo! R3
#: (HPF, UserKNN).
DEFAULT_FAMILIES: tuple[str, ...] = tuple(f for f in FAMILIES if f not in ("HPF", "UserKNN"))


def _check_grid(values: Iterable[Any], name: str, *, integer: bool) -> tuple:
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be an iterable of numbers, got {values!r}")
    try:
        grid = tuple(values)
    except TypeError:
        raise ValueError(f"{name} must be an iterable of numbers, got {values!r}") from None
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    for v in grid:
        if isinstance(v, bool) or not isinstance(v, kinds) or not v > 0 or not np.isfinite(v):
            kind = "ints" if integer else "numbers"
            raise ValueError(f"{name} must hold positive {kind}, got {v!r}")
    if len(set(grid)) != len(grid):
        raise ValueError(f"{name} has duplicated values: {grid}")
    return grid


def model_zoo(
    *,
    seed: int = 0,
    sizes: Iterable[int] = tuple(range(10, 101, 10)),
    families: Iterable[str] | None = None,
    knn_sizes: Iterable[int] = (20, 100),
    ease_lambdas: Iterable[float] = (10, 100, 500, 1000),
) -> dict[str, Recommender]:
    """Fresh, seeded, unfitted Cornac models keyed by a readable name.

    Families (:data:`FAMILIES`): non-personalised ``MostPop``, ``PosPop``, ``AvgRating``,
    ``GlobalAvg`` (all items tie), ``Random`` (:class:`RandomScores`) and ``BaselineOnly``
    (user + item biases) once each under the family name; latent-factor ``MF`` (no biases),
    ``SVD`` (biased MF), ``NMF``, ``PMF``, ``BPR``, ``WBPR``, ``MMMF`` and ``HPF`` once per
    latent size (``"BPR-40"``); ``EASE`` once per L2 penalty (``"EASE-100"``); ``ItemKNN``
    and ``UserKNN`` once per neighbourhood size (``"ItemKNN-20"``).

    The defaults give 82 models of the 13 :data:`DEFAULT_FAMILIES`. Fitting and scoring them
    all with :func:`~recbias_tutorial.models.iter_scores` on Yahoo! R3 (15,400 users x 1,000
    items, 311,704 ratings) took 104 s of CPU on one core: about 11-15 s for each
    latent-factor family over its ten sizes (MF 11, SVD 11, NMF 15, PMF 15, BPR 11, WBPR 13,
    MMMF 12), 11 s for ItemKNN-20 and -100, 4 s for the four EASE and 2 s for the six
    non-personalised models. Two families are left out by default: ``HPF``, which takes
    minutes there (about 2 s + 1.4 s per iteration per 10 factors: HPF-10 10 s, HPF-50 38 s),
    and ``UserKNN``, whose dense 15,400² similarity takes 20 s and 7 GB to fit (its scoring,
    by :func:`batch_scorer`, is vectorised).

    Epoch counts are small and learning rates raised to match (MF / SVD 20 epochs, NMF 10,
    BPR / WBPR / MMMF 5 at learning rate 0.1, PMF 2 at 0.01, HPF 5, BaselineOnly 20): the zoo
    is meant to provide many *different* rankings for comparing evaluation protocols, not
    tuned models. Pairwise models (BPR, WBPR, MMMF) and EASE / ItemKNN treat every observed
    rating as an interaction, whatever its value.

    Parameters
    ----------
    seed : int, default 0
        Passed as ``seed=`` to every model that takes one; Cornac then trains single-threaded,
        so the models are deterministic.
    sizes : iterable of int, default (10, 20, ..., 100)
        Latent dimensions of the latent-factor families.
    families : iterable of str, optional
        Families to build, from :data:`FAMILIES` (default :data:`DEFAULT_FAMILIES`); the
        zoo keeps the order of :data:`FAMILIES`.
    knn_sizes : iterable of int, default (20, 100)
        Neighbourhood sizes of ``ItemKNN`` / ``UserKNN``.
    ease_lambdas : iterable of float, default (10, 100, 500, 1000)
        L2 penalties of ``EASE``.

    Returns
    -------
    dict[str, cornac.models.Recommender]
        Each model's ``name`` equals its key.

    Raises
    ------
    ValueError
        On an unknown family, a negative seed or a bad grid.

    Examples
    --------
    >>> list(model_zoo(families=["MostPop", "BPR", "EASE"], sizes=(10, 20), ease_lambdas=[50]))
    ['MostPop', 'BPR-10', 'BPR-20', 'EASE-50']
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    seed = int(seed)
    sizes = _check_grid(sizes, "sizes", integer=True)
    knn_sizes = _check_grid(knn_sizes, "knn_sizes", integer=True)
    ease_lambdas = _check_grid(ease_lambdas, "ease_lambdas", integer=False)
    if families is None:
        chosen = set(DEFAULT_FAMILIES)
    else:
        chosen = {families} if isinstance(families, str) else set(families)
        unknown = sorted(map(str, chosen - set(FAMILIES)))
        if unknown:
            raise ValueError(f"families has unknown name(s) {unknown}; known: {list(FAMILIES)}")
    zoo: dict[str, Recommender] = {}
    for family in (f for f in FAMILIES if f in chosen):
        if family in _SINGLE:
            models = [_SINGLE[family](seed)]
        elif family in _LATENT:
            models = [_LATENT[family](int(k), seed) for k in sizes]
        elif family in _KNN:
            models = [_KNN[family](int(k), seed) for k in knn_sizes]
        else:
            models = [
                _M.EASE(name=f"EASE-{lam:g}", lamb=float(lam), verbose=False, seed=seed)
                for lam in ease_lambdas
            ]
        for model in models:
            zoo[model.name] = model
    return zoo
