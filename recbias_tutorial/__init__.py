"""recbias_tutorial: offline evaluation of recommenders on Missing-Not-At-Random feedback.

The public API is flat: ``import recbias_tutorial as rb`` and call ``rb.snips(...)``.
Names load on first use, so importing the package is fast and Cornac (``fit_scores``,
``model_zoo``) or Altair (``plots``) are imported only when needed.

=================  ==========================================================================
Data               :class:`FeedbackData`, :func:`load`, :func:`load_coat`,
                   :func:`load_yahoo_r3`, :func:`load_movielens_100k`, :func:`load_kuairec`,
                   :func:`load_or_standin`, :func:`simulate`, :func:`semi_synthetic`,
                   :func:`random_split`, :func:`drop_seen`
Scores             :class:`Scorer` (scores read in blocks of users: any catalogue size)
Metrics            :func:`rank_positions`, :func:`ranking_metrics`
Estimators         :func:`aoa`, :func:`ips`, :func:`snips`, :func:`stratified`,
                   :func:`ure_recall`, :func:`recall_at_kbar`, :func:`bootstrap_ci`
Propensities       :func:`popularity_propensity`, :func:`naive_bayes_propensity`
Sampling           :func:`intervene`
Statistics         :func:`kendall_tau`, :func:`steiger_test`, :func:`kl_divergence`
Models (Cornac)    :func:`fit_scores`, :func:`model_zoo` (``models.fit_scorer``: lazily)
Course             :func:`leaderboard_table` (one world and six models, lessons 1-5)
Modules            ``data``, ``scorer``, ``metrics``, ``estimators``, ``propensity``, ``sampling``,
                   ``stats``, ``models``, ``debiased_mf``, ``distributed`` (Dask),
                   ``plots``, ``comparison`` (every method against the truth),
                   ``leaderboard`` (the course's one world and leaderboard), ``course``,
                   ``replications`` (one module per reproduced paper)
=================  ==========================================================================

Examples
--------
>>> import recbias_tutorial as rb
>>> world = rb.simulate(50, 40, seed=0, mean_ratings_per_user=5)
>>> world.full.shape
(2000, 3)
>>> round(rb.aoa(world.propensity, world.full, k=10), 3)  # exposure as scores: Recall@10
0.671
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it (relative to this package)
_NAMES = {
    "FeedbackData": "data", "load": "data", "load_coat": "data", "load_yahoo_r3": "data",
    "load_movielens_100k": "data", "load_kuairec": "data", "load_or_standin": "data",
    "simulate": "data", "semi_synthetic": "data", "random_split": "data", "drop_seen": "data",
    "Scorer": "scorer", "rank_positions": "metrics", "ranking_metrics": "metrics",
    "bootstrap_ci": "estimators",
    "popularity_propensity": "propensity", "naive_bayes_propensity": "propensity",
    "intervene": "sampling",
    "kendall_tau": "stats", "steiger_test": "stats", "kl_divergence": "stats",
    "fit_scores": "models", "model_zoo": "models",
    "leaderboard_table": "leaderboard",
}
_MODULES = ("data", "scorer", "metrics", "estimators", "propensity", "sampling", "stats", "models",
            "debiased_mf", "distributed", "plots", "comparison", "leaderboard", "course",
            "replications")



def _estimators() -> dict[str, Any]:
    """The registered estimators that have a public function, by name (the one list of
    estimators is :func:`recbias_tutorial.estimators.registered`)."""
    registry = importlib.import_module("._estimator_registry", __name__)
    importlib.import_module(".estimators", __name__)  # registers the package's own
    return {e.name: e for e in registry.registered() if e.function is not None}


def _home(name: str) -> str | None:
    """The module (relative to the package) that documents the flat name ``name``, or None."""
    if name in _NAMES:
        return _NAMES[name]
    estimator = _estimators().get(name) if not name.startswith("_") else None
    if estimator is None:
        return None
    home = estimator.function if isinstance(estimator.function, str) else None
    return home or estimator.public_function().__module__.removeprefix(f"{__name__}.")


def _public_names() -> list[str]:
    return [*_NAMES, *(n for n in _estimators() if n not in _NAMES), "replications", "__version__"]


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    elif name in _MODULES:
        value = importlib.import_module(f".{name}", __name__)
    elif name == "__all__":  # computed: estimators registered later are public too
        return _public_names()
    elif not name.startswith("_") and name in _estimators():
        value = _estimators()[name].public_function()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_public_names(), *_MODULES})
