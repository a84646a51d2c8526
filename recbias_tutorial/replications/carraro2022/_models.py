"""The recommenders of Carraro & Bridge (2022, §4.4) as Cornac stand-ins (private module).

Everything here is re-exported by :mod:`recbias_tutorial.replications.carraro2022`. The paper
uses RankSys's ``UB_KNN``, ``IB_KNN`` and ``MF`` (Pilászy et al.'s algorithm) and its own
``AvgRating`` and ``PosPop``; the package uses Cornac's ``UserKNN``, ``ItemKNN`` and ``MF``
(SGD) and its own two baselines: the same names and grids, different implementations.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..._validation import check_choice

#: The paper's grid (§4.4): "the number of neighbors from {10,20,..,100}" for UB_KNN and
#: IB_KNN; "the number of latent factors from {20,40,..,200} and the regularization term from
#: {0.001,0.006,0.01,0.06,0.1, 0.6}" for MF.
PAPER_GRID: dict[str, dict[str, tuple]] = {
    "neighbours": {"UB_KNN": tuple(range(10, 101, 10)), "IB_KNN": tuple(range(10, 101, 10))},
    "MF": {"factors": tuple(range(20, 201, 20)),
           "regularisation": (0.001, 0.006, 0.01, 0.06, 0.1, 0.6)},
}


def paper_models() -> dict[str, Any]:
    """Factories of the five recommenders of §4.4, as Cornac/package stand-ins.

    ``AvgRating`` and ``PosPop`` are the package's; ``UB_KNN``, ``IB_KNN`` and ``MF`` are
    Cornac's ``UserKNN(k=50)``, ``ItemKNN(k=50)`` and ``MF(k=20, max_iter=50)`` (the paper
    used RankSys with hyper-parameters tuned on D_val: see :func:`tune` and
    :func:`paper_grid`).

    Returns
    -------
    dict
        Name (the paper's) -> zero-argument factory.

    Raises
    ------
    ImportError
        If Cornac is not installed.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.figure4_tau : their default user.

    Examples
    --------
    >>> list(paper_models())
    ['AvgRating', 'PosPop', 'UB_KNN', 'IB_KNN', 'MF']
    """
    import cornac

    from ...models import AvgRating, PosPop

    return {"AvgRating": AvgRating, "PosPop": PosPop,
            "UB_KNN": partial(cornac.models.UserKNN, k=50, verbose=False),
            "IB_KNN": partial(cornac.models.ItemKNN, k=50, verbose=False),
            "MF": partial(cornac.models.MF, k=20, max_iter=50, seed=0)}


#: The two kinds of recommenders the replication runs: ``"cornac"`` (Cornac's rating
#: predictors, the course's stand-ins) and ``"ranksys"`` (top-N scorers as RankSys computes
#: them, the paper's kind).
RECOMMENDER_KINDS: tuple[str, ...] = ("cornac", "ranksys")


def _check_kind(recommenders: Any) -> str:
    return check_choice(recommenders, "recommenders", RECOMMENDER_KINDS)


def paper_grid(*, recommenders: str = "cornac") -> dict[str, dict[str, Any]]:
    """The paper's hyper-parameter grid (§4.4, :data:`PAPER_GRID`) as :func:`tune` candidates.

    10 neighbour counts for each nearest-neighbour model and 10 x 6 factor and regularisation
    settings for MF (Cornac's ``lambda_reg``; 50 SGD epochs, the course's choice: the paper
    does not state its number of iterations), plus the two baselines, which have none. The
    nearest-neighbour models get ``seed=0``: Cornac then fits them on one thread,
    deterministically (their similarities draw nothing at random), so their results can be
    cached.

    Parameters
    ----------
    recommenders : {"cornac", "ranksys"}, default "cornac"
        ``"cornac"``: Cornac's ``UserKNN``, ``ItemKNN`` and ``MF`` (rating predictors, the
        course's stand-ins); ``"ranksys"``: the paper's kind, RankSys's top-N scorers
        (:class:`RankSysUserKNN`, :class:`RankSysItemKNN`, :class:`ImplicitALS`) on the same
        grid. The two baselines are the same in both.

    Returns
    -------
    dict
        Model name (the paper's) -> {setting label -> zero-argument factory}.

    Raises
    ------
    ImportError
        If Cornac is not installed.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.tune : scores every setting on D_val.

    Examples
    --------
    >>> {model: len(settings) for model, settings in paper_grid().items()}
    {'AvgRating': 1, 'PosPop': 1, 'UB_KNN': 10, 'IB_KNN': 10, 'MF': 60}
    """
    import cornac

    from ...models import AvgRating, PosPop

    if _check_kind(recommenders) == "ranksys":
        from ._ranksys import ranksys_grid

        return {"AvgRating": {"—": AvgRating}, "PosPop": {"—": partial(PosPop, threshold=4.0)},
                **ranksys_grid(PAPER_GRID)}
    knn = {"UB_KNN": cornac.models.UserKNN, "IB_KNN": cornac.models.ItemKNN}
    grid: dict[str, dict[str, Any]] = {"AvgRating": {"—": AvgRating},
                                       "PosPop": {"—": partial(PosPop, threshold=4.0)}}
    for name, cls in knn.items():
        grid[name] = {f"k={k}": partial(cls, k=k, verbose=False, seed=0)
                      for k in PAPER_GRID["neighbours"][name]}
    grid["MF"] = {f"k={k}, λ={reg:g}": partial(cornac.models.MF, k=k, lambda_reg=reg, max_iter=50,
                                               seed=0)
                  for k in PAPER_GRID["MF"]["factors"]
                  for reg in PAPER_GRID["MF"]["regularisation"]}
    return grid
