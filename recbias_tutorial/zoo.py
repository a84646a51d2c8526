"""Recommender families: baselines Cornac lacks, vectorised scoring, and a seeded model zoo.

* :class:`AvgRating`, :class:`PosPop` and :class:`RandomScores` are genuine
  :class:`cornac.models.Recommender` subclasses: they work in Cornac's own evaluation
  (:func:`cornac.eval_methods.ranking_eval`, :class:`cornac.Experiment`) and in
  :func:`recbias_tutorial.models.fit_scores`.
* :func:`batch_scorer` gives, for a fitted model, a function scoring many users at once. It
  reproduces the family's ``score(user_idx)`` (up to floating-point summation order) and is
  what makes scoring a whole zoo on Yahoo! R3 take seconds instead of minutes.
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

__all__ = [
    "DEFAULT_FAMILIES",
    "FAMILIES",
    "AvgRating",
    "PosPop",
    "RandomScores",
    "batch_scorer",
    "model_zoo",
]

BatchScorer = Callable[[np.ndarray], np.ndarray]


def _f64(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


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
# vectorised scoring of Cornac families
# --------------------------------------------------------------------------------------
def _mf_scorer(m: Any) -> BatchScorer:  # MF, SVD, NMF: mu + b_i + b_u + p_u.q_i
    U, V, bu = _f64(m.u_factors), _f64(m.i_factors).T, _f64(m.u_biases)
    base = float(m.global_mean) + _f64(m.i_biases)
    return lambda users: U[users] @ V + base + bu[users, None]


def _bpr_scorer(m: Any) -> BatchScorer:  # BPR, WBPR, MMMF: b_i + p_u.q_i
    U, V, bi = _f64(m.u_factors), _f64(m.i_factors).T, _f64(m.i_biases)
    return lambda users: U[users] @ V + bi


def _dot_scorer(user_attr: str, item_attr: str) -> Callable[[Any], BatchScorer]:
    def prepare(m: Any) -> BatchScorer:  # PMF (U, V), HPF (Theta, Beta)
        U, V = _f64(getattr(m, user_attr)), _f64(getattr(m, item_attr)).T
        return lambda users: U[users] @ V

    return prepare


def _ease_scorer(m: Any) -> BatchScorer:
    X, B = m.U.tocsr(), _f64(m.B)
    return lambda users: _f64(X[users] @ B)


def _baseline_scorer(m: Any) -> BatchScorer:  # BaselineOnly: mu + b_i + b_u
    base, bu = float(m.global_mean) + _f64(m.i_biases), _f64(m.u_biases)
    return lambda users: base + bu[users, None]


def _mostpop_scorer(m: Any) -> BatchScorer:
    pop = _f64(m.item_pop)
    return lambda users: np.broadcast_to(pop, (len(users), pop.size))


def _globalavg_scorer(m: Any) -> BatchScorer:
    return lambda users: np.full((len(users), m.num_items), float(m.global_mean))


_ITEMKNN_DENSE_MAX = 5000  # dense item-item similarity up to 5,000 items (200 MB)


def _itemknn_scorer(m: Any) -> BatchScorer | None:
    """Cornac's ``ItemKNN.score`` for many users, reproduced exactly.

    Cornac (``knn.similarity.compute_score``) scores item *i* for user *u* as
    ``mean_u + Σ w·r / (Σ|w| + 1e-8)`` over *k* neighbours *j* of *i* among the items *u*
    rated, with ``w = sim(i, j) != 0`` and ``r`` = *u*'s centred rating of *j*. A ``TopK``
    heap fed in descending *j* order picks them: it keeps every candidate above the *k*-th
    largest similarity ``s``; a candidate tied at ``s`` is admitted iff fewer than *k*
    candidates with ``w >= s`` precede it, and of the admitted ties the ``k - #{w > s}`` with
    the largest ``r`` stay. Ties are frequent (Cornac's cosine runs over co-rated entries
    only, so many similarities are exactly 1). Users with at most *k* ratings need no
    selection and are scored by two sparse-dense products.
    """
    sim_csr = m.sim_mat
    if m.num_items > _ITEMKNN_DENSE_MAX or not sim_csr.has_sorted_indices:
        return None  # fall back to Cornac's per-user score
    k = int(m.k)
    sim_t = _f64(sim_csr.toarray()).T  # sim_t[j, i] = sim(i, j)
    abs_sim_t = np.abs(sim_t)
    ui = m.ui_mat.tocsr()
    mean = _f64(m.mean_arr)

    nonneg = bool(sim_t.min() >= 0)  # cosine on positive ratings: zero = not a candidate

    def one_user(u: int) -> np.ndarray:
        lo, hi = ui.indptr[u], ui.indptr[u + 1]
        visit = np.argsort(-ui.indices[lo:hi], kind="stable")  # Cornac visits by descending id
        rated, r = ui.indices[lo:hi][visit], _f64(ui.data[lo:hi])[visit]
        w = sim_t[rated]  # (n_rated, n_items)
        if not (nonneg and r.all()):
            w = np.where((r != 0)[:, None], w, 0.0)
        cand = w != 0
        key = w if nonneg else np.where(cand, w, -np.inf)
        s = np.partition(key, r.size - k, axis=0)[r.size - k]  # k-th largest per item
        above, tied = key > s, key == s
        n_above = above.sum(axis=0)
        many = cand.sum(axis=0) > k
        keep = np.where(many, above | tied, cand)
        straddle = np.flatnonzero(many & (n_above + tied.sum(axis=0) > k))
        if straddle.size:  # Cornac's tie rule, on the items where it matters
            tie, ge = tied[:, straddle], keep[:, straddle]
            admitted = tie & (np.cumsum(ge, axis=0, dtype=np.int32) - ge < k)
            by_r = np.argsort(-r, kind="stable")
            adm = admitted[by_r]
            kept = adm & (np.cumsum(adm, axis=0, dtype=np.int32) <= k - n_above[straddle])
            ties_kept = np.empty_like(kept)
            ties_kept[by_r] = kept
            keep[:, straddle] = above[:, straddle] | ties_kept
        w = w * keep
        return mean[u] + (r @ w) / (np.abs(w).sum(axis=0) + 1e-8)

    def score(users: np.ndarray) -> np.ndarray:
        out = np.empty((len(users), m.num_items))
        sub = ui[users]
        n_rated = np.diff(sub.indptr)
        few = np.flatnonzero(n_rated <= k)
        if few.size:  # every rated item with a non-zero similarity is a neighbour
            X = sub[few]
            P = X.copy()
            P.data = (X.data != 0).astype(np.float64)
            out[few] = mean[users[few], None] + (X @ sim_t) / (P @ abs_sim_t + 1e-8)
        for row in np.flatnonzero(n_rated > k).tolist():
            out[row] = one_user(int(users[row]))
        return out

    return score


def _preparers() -> dict[Any, Callable[[Any], BatchScorer | None]]:
    M = cornac.models
    return {
        M.MF.score: _mf_scorer,  # also SVD
        M.NMF.score: _mf_scorer,
        M.BPR.score: _bpr_scorer,  # also WBPR, MMMF
        M.PMF.score: _dot_scorer("U", "V"),
        M.HPF.score: _dot_scorer("Theta", "Beta"),
        M.EASE.score: _ease_scorer,
        M.BaselineOnly.score: _baseline_scorer,
        M.MostPop.score: _mostpop_scorer,
        M.GlobalAvg.score: _globalavg_scorer,
        M.ItemKNN.score: _itemknn_scorer,
    }


_PREPARERS = _preparers()


def batch_scorer(model: Recommender) -> BatchScorer | None:
    """A function scoring many users at once for a fitted model, or None.

    The function maps an int array of Cornac user indices to a ``(len(users), n)`` array of
    scores of the model's known items (Cornac's item order), equal to stacking
    ``model.score(u)`` up to floating-point summation order. It is the model's own
    ``score_batch`` method when it has one (the baselines here do), else a vectorised copy of
    the ``score`` of a known Cornac family (MF, SVD, NMF, PMF, BPR, WBPR, MMMF, HPF, EASE,
    BaselineOnly, MostPop, GlobalAvg, ItemKNN), matched on the ``score`` function itself so
    that a subclass overriding ``score`` gets None (use the per-user loop).

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial.models import to_cornac_dataset
    >>> ds = to_cornac_dataset(pd.DataFrame({"user": [0, 1], "item": [1, 0], "rating": [4.0, 2.0]}),
    ...                        n_users=2, n_items=2)
    >>> model = cornac.models.BaselineOnly(seed=0).fit(ds)
    >>> import numpy as np
    >>> bool(np.allclose(batch_scorer(model)(np.array([1])), model.score(1)))
    True
    """
    own = getattr(model, "score_batch", None)
    if callable(own):
        return own
    prepare = _PREPARERS.get(getattr(type(model), "score", None))
    return None if prepare is None else prepare(model)


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
    # UserKNN's dense user-user similarity: on Yahoo! R3 20 s and 7 GB to fit, and Cornac's
    # per-user scoring takes ~4 min (no vectorised scorer here)
    "UserKNN": lambda k, s: _M.UserKNN(name=f"UserKNN-{k}", k=k, verbose=False, seed=s),
}

#: Every family :func:`model_zoo` can build, in zoo order.
FAMILIES: tuple[str, ...] = (*_SINGLE, *_LATENT, "EASE", *_KNN)
#: Families built by default: all but the two that take minutes on Yahoo! R3 (HPF, UserKNN).
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
    non-personalised models. Two families are left out by default because they take minutes
    there: ``HPF`` (about 2 s + 1.4 s per iteration per 10 factors: HPF-10 10 s, HPF-50 38 s)
    and ``UserKNN`` (a dense 15,400² similarity: 20 s and 7 GB to fit, then about 4 minutes
    in Cornac's per-user scoring, which has no vectorised replacement here).

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
