"""Cornac models as dense score matrices: the only part of the package that imports Cornac.

* :func:`fit_scores`, :func:`iter_scores`, :func:`score_models` fit Cornac recommenders on the
  package's ids and return score matrices (:func:`to_cornac_dataset` is the bridge);
  :func:`fit_scorer` returns a :class:`~recbias_tutorial.Scorer` instead (bounded memory);
* :func:`batch_scorer` scores many users at once for the known Cornac families;
* Cornac's ``GMF``, ``MLP`` and ``NeuMF`` built with ``backend="numpy"`` are trained by the
  package, without TensorFlow, as Cornac's TensorFlow backend trains them (its initial
  weights, Cornac's batches, Keras's Adam; ``_ncf_train``), then scored with NumPy;
* :class:`AvgRating`, :class:`PosPop`, :class:`RandomScores`: baselines Cornac lacks;
* :class:`CML`: collaborative metric learning as Yang et al. trained it (Cornac has none);
* :func:`model_zoo`: many seeded models of the Cornac families for comparing protocols;
* :func:`clear_fit_cache`: empties the on-disk cache of fitted score matrices that
  :func:`fit_scores`, :func:`iter_scores` and :func:`score_models` read before fitting.

Examples
--------
>>> import pandas as pd
>>> from recbias_tutorial.models import PosPop, fit_scores
>>> train = pd.DataFrame({"user": [0, 1, 1], "item": [0, 0, 1], "rating": [5.0, 4.0, 2.0]})
>>> fit_scores(PosPop(), train, n_users=2, n_items=2, seed=0)[0].tolist()
[2.0, 0.0]
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the private module that defines it. Names load on first use, so that the
#: cache's helpers (``models._cache``) import without Cornac, and a missing Cornac is one
#: clear error naming the extra (``pip install 'recbias_tutorial[models]'``).
_NAMES = {
    "AvgRating": "_baselines", "PosPop": "_baselines", "RandomScores": "_baselines",
    "CML": "_cml",
    "FitCacheWarning": "_cache", "clear_fit_cache": "_cache",
    "UNKNOWN_USER_SCORE": "_fit", "fit_scorer": "_fit", "fit_scores": "_fit",
    "iter_scores": "_fit", "score_models": "_fit", "to_cornac_dataset": "_fit",
    "BatchScorer": "_scorers", "batch_scorer": "_scorers",
    "DEFAULT_FAMILIES": "_zoo", "FAMILIES": "_zoo", "model_zoo": "_zoo",
}
_WITHOUT_CORNAC = {"_cache"}  # modules that import Cornac only inside the functions needing it

__all__ = [
    "DEFAULT_FAMILIES",
    "FAMILIES",
    "UNKNOWN_USER_SCORE",
    "AvgRating",
    "BatchScorer",
    "CML",
    "FitCacheWarning",
    "PosPop",
    "RandomScores",
    "batch_scorer",
    "clear_fit_cache",
    "fit_scorer",
    "fit_scores",
    "iter_scores",
    "model_zoo",
    "score_models",
    "to_cornac_dataset",
]


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _NAMES[name]
    if module not in _WITHOUT_CORNAC:
        from .._optional import require

        require("cornac", f"recbias_tutorial.models.{name}")  # first import: quiet, or the extra
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES})
