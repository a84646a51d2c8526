"""Simulated stand-ins for missing datasets, so that chapters still run without the data."""

from __future__ import annotations

import dataclasses
import warnings

from .._params import Options, Seed, declare
from ._feedback import FeedbackData
from ._files import DatasetNotFoundError, data_required
from ._loaders import LOADERS
from ._registry import DATASETS, RECORDS
from ._worlds import simulate

__all__ = ["STANDINS", "StandinWarning", "load_or_standin"]


class StandinWarning(UserWarning):
    """A chapter runs on a simulated stand-in because a dataset is missing."""


#: ``simulate`` arguments of each stand-in (shapes and densities of the real data; each is
#: the ``standin`` field of the dataset's record in ``_registry.RECORDS``). KuaiRec's
#: stand-in is a 1-5 star world (threshold 4.0, not watch ratios) whose ``full`` covers
#: every pair; its ~500 MNAR rows per user are a rough guess.
STANDINS: dict[str, dict] = {name: record.standin for name, record in RECORDS.items()}


@declare(name=Options(DATASETS), seed=Seed())
def load_or_standin(name: str, *, seed) -> FeedbackData:
    """Load dataset ``name``, or a simulated stand-in of the same shape when it is missing.

    This is the one loader chapters use. When the files are missing and neither
    ``CI=true`` nor ``RECBIAS_REQUIRE_DATA=1`` is set, it returns
    ``simulate(..., name=f"{name} (simulated stand-in)")`` with ``info["standin"]`` True
    (see ``STANDINS``) and emits a :class:`StandinWarning`. In a chapter,
    :func:`recbias_tutorial.course.standin_notice` shows it as a warning box instead. A
    corrupt file is always an error.

    Parameters
    ----------
    name : str
        One of ``DATASETS``: ``"coat"``, ``"yahoo_r3"``, ``"movielens_100k"``,
        ``"kuairec"``.
    seed : int or numpy.random.Generator
        Seed of the stand-in (used only when the data is missing).

    Returns
    -------
    FeedbackData
        The real dataset, or a stand-in with ``is_standin`` True.

    Raises
    ------
    ValueError
        If ``name`` is not one of ``DATASETS`` or ``seed`` is not a valid seed.
    DatasetNotFoundError
        When the data is missing and required (``CI=true`` or ``RECBIAS_REQUIRE_DATA=1``).
    DatasetChecksumError
        When a file does not match the registry.

    See Also
    --------
    recbias_tutorial.data.load : the loader without a fallback.
    recbias_tutorial.data.simulate : the simulated world used as the stand-in.

    Examples
    --------
    >>> data = load_or_standin("coat", seed=0)  # doctest: +SKIP
    >>> data.is_standin  # doctest: +SKIP
    False
    """
    try:
        return LOADERS[name]()
    except DatasetNotFoundError as exc:
        if data_required():
            raise
        error = exc
    data = simulate(seed=seed, name=f"{name} (simulated stand-in)", **STANDINS[name])
    message = (f"The {name} data was not found, so this page uses a simulated stand-in of "
               f"the same shape ({data.n_users:,} users x {data.n_items:,} items). Numbers "
               f"below are NOT those of the real dataset. {str(error).splitlines()[0]} "
               f"See recbias_tutorial.load_{name}() for where to put the files.")
    data = dataclasses.replace(data, info={**data.info, "standin": True, "standin_for": name,
                                           "reason": str(error), "notice": message})
    warnings.warn(message, StandinWarning, stacklevel=2)
    return data
