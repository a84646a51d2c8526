"""Feedback data: the container, the real datasets, simulated worlds, splits and stand-ins.

Everything here is also at the top level (``rb.load_coat``, ``rb.simulate``, ...). The
private modules below have one job each and import only downwards:
``_feedback`` (:class:`FeedbackData`) ← ``_registry``/``_files`` (checksums, downloads)
← ``_loaders`` (Coat, Yahoo! R3, MovieLens 100K, KuaiRec) ← ``_worlds`` (simulated worlds)
← ``_semisynthetic`` (worlds completed from real data)
← ``_splits`` (seeded splits, the unseen-pair rule) ← ``_standins`` (fallback for chapters).

Examples
--------
>>> from recbias_tutorial.data import DATASETS
>>> DATASETS
('coat', 'yahoo_r3', 'movielens_100k', 'kuairec')
"""

from ._feedback import FeedbackData
from ._files import DatasetChecksumError, DatasetNotFoundError
from ._loaders import load, load_coat, load_kuairec, load_movielens_100k, load_yahoo_r3
from ._registry import DATASETS
from ._semisynthetic import semi_synthetic
from ._splits import drop_seen, random_split, restrict_to_mar_users
from ._standins import STANDINS, StandinWarning, load_or_standin
from ._worlds import sample_observed, sample_random_exposure, simulate

__all__ = [
    "DATASETS",
    "STANDINS",
    "DatasetChecksumError",
    "DatasetNotFoundError",
    "FeedbackData",
    "StandinWarning",
    "drop_seen",
    "load",
    "load_coat",
    "load_kuairec",
    "load_movielens_100k",
    "load_or_standin",
    "load_yahoo_r3",
    "random_split",
    "restrict_to_mar_users",
    "sample_observed",
    "sample_random_exposure",
    "semi_synthetic",
    "simulate",
]
