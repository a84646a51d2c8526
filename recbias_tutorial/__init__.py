"""recbias_tutorial: offline evaluation of recommenders on Missing-Not-At-Random feedback.

Modules: :mod:`~recbias_tutorial.datasets`, :mod:`~recbias_tutorial.simulate`,
:mod:`~recbias_tutorial.metrics`, :mod:`~recbias_tutorial.propensity`,
:mod:`~recbias_tutorial.estimators`, :mod:`~recbias_tutorial.sampling`,
:mod:`~recbias_tutorial.models` (with :mod:`~recbias_tutorial.zoo` and
:mod:`~recbias_tutorial.debiased_mf`), :mod:`~recbias_tutorial.stats`,
:mod:`~recbias_tutorial.plots`; chapter protocols: :mod:`~recbias_tutorial.protocols`,
:mod:`~recbias_tutorial.holdout_eval`, :mod:`~recbias_tutorial.zoo_eval`.

Examples
--------
>>> from recbias_tutorial import simulate
>>> world = simulate(50, 40, seed=0, mean_ratings_per_user=5)
>>> world.full.shape
(2000, 3)
"""

from .datasets import FeedbackData
from .simulate import simulate

__version__ = "0.1.0"
__all__ = ["FeedbackData", "simulate", "__version__"]
