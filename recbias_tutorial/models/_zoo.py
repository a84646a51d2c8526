"""A seeded model zoo: many Cornac models that train in seconds on a CPU.

:func:`model_zoo` builds fresh, seeded, unfitted models of the Cornac families (and the
baselines of :mod:`recbias_tutorial.models`); fit and score them with
:func:`recbias_tutorial.models.iter_scores`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import cornac
import numpy as np
from cornac.models import Recommender

from .._params import Seed, declare
from .._validation import check_names, seed_int
from ._baselines import AvgRating, PosPop, RandomScores

__all__ = ["DEFAULT_FAMILIES", "FAMILIES", "model_zoo"]


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


@declare(seed=Seed())
def model_zoo(
    *,
    seed: int,
    sizes: Iterable[int] = tuple(range(10, 101, 10)),
    families: Iterable[str] | None = None,
    knn_sizes: Iterable[int] = (20, 100),
    ease_lambdas: Iterable[float] = (10, 100, 500, 1000),
) -> dict[str, Recommender]:
    """Fresh, seeded, unfitted Cornac models keyed by a readable name.

    Families (``FAMILIES``): non-personalised ``MostPop``, ``PosPop``, ``AvgRating``,
    ``GlobalAvg`` (all items tie), ``Random`` (:class:`RandomScores`) and ``BaselineOnly``
    (user + item biases) once each under the family name; latent-factor ``MF`` (no biases),
    ``SVD`` (biased MF), ``NMF``, ``PMF``, ``BPR``, ``WBPR``, ``MMMF`` and ``HPF`` once per
    latent size (``"BPR-40"``); ``EASE`` once per L2 penalty (``"EASE-100"``); ``ItemKNN``
    and ``UserKNN`` once per neighbourhood size (``"ItemKNN-20"``).

    The defaults give 82 models of the 13 ``DEFAULT_FAMILIES``. Fitting and scoring them
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
    seed : int or numpy.random.Generator
        Passed as ``seed=`` to every model that takes one (a Generator: one int drawn from
        it); Cornac then trains single-threaded, so the models are deterministic.
    sizes : iterable of int, default (10, 20, ..., 100)
        Latent dimensions of the latent-factor families.
    families : iterable of str, optional
        Families to build, from ``FAMILIES`` (default ``DEFAULT_FAMILIES``); the
        zoo keeps the order of ``FAMILIES``.
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

    See Also
    --------
    recbias_tutorial.models.iter_scores : fit and score the zoo one model at a time.
    recbias_tutorial.replications.jadidinejad2021.evaluate_zoo : evaluate a whole zoo.

    Examples
    --------
    >>> list(model_zoo(seed=0, families=["MostPop", "BPR", "EASE"], sizes=(10, 20),
    ...                ease_lambdas=[50]))
    ['MostPop', 'BPR-10', 'BPR-20', 'EASE-50']
    """
    seed = seed_int(seed)
    sizes = _check_grid(sizes, "sizes", integer=True)
    knn_sizes = _check_grid(knn_sizes, "knn_sizes", integer=True)
    ease_lambdas = _check_grid(ease_lambdas, "ease_lambdas", integer=False)
    if families is None:
        chosen = set(DEFAULT_FAMILIES)
    else:
        chosen = {families} if isinstance(families, str) else set(check_names(families, "families"))
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
