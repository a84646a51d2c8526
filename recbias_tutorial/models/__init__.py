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

import warnings

with warnings.catch_warnings():  # Cornac imports tqdm.auto, which warns when ipywidgets is
    warnings.filterwarnings("ignore", message="IProgress not found")  # absent: bars are off
    import cornac  # noqa: F401  (first import here, so the warning never reaches a page)

from ._baselines import AvgRating, PosPop, RandomScores
from ._cml import CML
from ._cache import FitCacheWarning, clear_fit_cache
from ._fit import (UNKNOWN_USER_SCORE, fit_scorer, fit_scores, iter_scores, score_models,
                   to_cornac_dataset)
from ._scorers import BatchScorer, batch_scorer
from ._zoo import DEFAULT_FAMILIES, FAMILIES, model_zoo

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
