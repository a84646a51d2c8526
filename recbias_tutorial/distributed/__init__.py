"""The estimators on a Dask cluster: blocks of users evaluated on workers, sums reduced at the end.

Every estimator of the course is a sum over users (or over strata of users) divided by a
count, so it can be computed block of users by block of users: a block holds *every* row of
its users in every frame (test log, exclusions, random data), each worker evaluates its
blocks with the package's own kernels, and the client adds up a few numbers per block.
:func:`evaluate` does it for several models in one pass (each block's rows, exclusions and
propensities are loaded once and scored by every model) and for every estimator of the
registry: ``aoa``, ``ips``, ``snips`` (and any estimator registered with per-user terms),
``stratified``, ``ure_recall``, ``recall_at_kbar`` and ``intervene`` (the Average-Over-All
on an intervened test set), with user-level bootstrap intervals. The numbers are the
in-process ones (up to the order of floating-point sums): the tests check every estimator
against its in-process function on a local cluster to 1e-12.

Inputs may be pandas frames (cut into blocks of ``users_per_task`` users), Parquet files
or a dask.dataframe partitioned by user: then the workers read their blocks themselves and
the client holds only the reduced sums. :func:`write_feedback` writes a frame as such
Parquet files. Dask is an optional dependency (``pip install 'recbias_tutorial[dask]'``)::

    from dask.distributed import Client
    import recbias_tutorial as rb
    from recbias_tutorial import distributed

    client = Client("tcp://scheduler:8786")           # or Client() for a local cluster
    table = distributed.evaluate(
        {"mf": (U_mf, V_mf), "bpr": (U_bpr, V_bpr)}, "log/test", client=client,
        exclude="log/train", propensity=p, estimators=["aoa", "snips", "stratified"], k=10)

:func:`estimate` is the one-model, one-estimator form; :func:`synthetic_log` makes a
popularity-biased log of any size (the appendix page "Evaluating at scale" and
``benchmarks/bench_distributed.py`` use it).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .._estimator_registry import per_user_names
from .._params import Interval, Options, declare, declared
from .._ranking import GAINS
from ..estimators import user_values
from . import _evaluate
from ._sources import write_feedback
from ._synthetic import synthetic_log

__all__ = ["estimate", "evaluate", "synthetic_log", "write_feedback"]

#: The rules of the arguments forwarded to every task's ``user_values``: checked once,
#: before any task is submitted.
_FORWARDED_RULES = {name: rule for name, rule in declared(user_values).items()
                    if name in ("metric", "k", "threshold", "clip")}


@declare(users_per_task=Interval(int, 1), metric=Options(GAINS),
         k=Interval(int, None, optional=True), threshold=Interval(float),
         clip=Interval(float, 0.0, open="low", optional=True),
         n_resamples=Interval(int, 1, optional=True),
         confidence=Interval(float, 0.0, 1.0, open="both"))
def evaluate(models: Any, test: Any, *, client: Any, estimators: Any = "aoa",
             propensity: Any = None, n_relevant: Any = None, exclude: Any = None,
             random: Any = None, train: Any = None, mar: Any = None, metric: str = "recall",
             k: int | None = 10, threshold: float = 4.0, clip: float | None = None,
             n_resamples: int | None = None, confidence: float = 0.95, seed: Any = None,
             users_per_task: int = 10_000) -> pd.DataFrame:
    r"""Several models, several estimators, one pass over a log partitioned by user.

    Each block of users is loaded once (its test rows, exclusions, random rows and
    propensities) and scored by every model; every estimator is computed from the block's
    scores, and the client adds up the blocks' sums. The values equal the in-process
    functions' on the same inputs (:func:`~recbias_tutorial.estimators.aoa`, ``ips``,
    ``snips``, ``stratified``, ``ure_recall``, ``recall_at_kbar``, and ``aoa`` on
    :func:`~recbias_tutorial.sampling.intervene`'s sample), up to the order of the sums.

    Rules: a frame is a pandas DataFrame (cut into blocks of ``users_per_task`` user ids),
    a dask.dataframe, a Parquet file or folder, or a list of Parquet files, with integer
    ``user`` and ``item`` ids (and ``rating`` for ``test`` and ``random``). The test log's
    partitions must each hold a contiguous range of users, disjoint from the others' (as
    :func:`write_feedback` writes them): a user split across partitions is an error. The
    other frames may be partitioned in any way (each block reads the rows of its users from
    every partition whose range meets its own). Every model scores the same users and every
    item (the catalogue that :func:`write_feedback` recorded, when it did).

    Parameters
    ----------
    models : mapping name -> scores
        Each a dense ``(n_users, n_items)`` array (each block gets its users' rows), a
        :class:`~recbias_tutorial.Scorer` (sent once to every worker; it must pickle with
        cloudpickle) or factor matrices: a pair ``(user_factors, item_factors)`` or a mapping
        with keys ``user_factors``, ``item_factors`` and optionally ``user_bias``,
        ``item_bias``, scored as ``rb.Scorer.from_factors`` does (the item
        side is sent once to every worker, each block gets its users' factors).
    test : frame
        Held-out feedback (``user``, ``item``, ``rating``); no duplicate pairs. Also the
        held-out set that ``intervene`` samples: its rows' order (the partitions' order, each
        partition's rows in order) is the order in which its seed draws.
    client : dask.distributed.Client or None
        The cluster (``Client()`` starts a local one; ``Client("tcp://host:8786")`` joins
        one). None evaluates the same blocks in this process.
    estimators : str, (str, dict) or list of them, default "aoa"
        Registered estimators by name, each with options that override the shared ones:
        ``aoa``, ``ips``, ``snips`` (options ``metric``, ``k``, ``clip``); ``stratified``
        (``metric`` incl. ``"ndcg"``, ``k``, ``n_strata``, ``binning``, ``bins_from``,
        ``weights_from``); ``ure_recall`` (``k``); ``recall_at_kbar`` (``k_bar``, required);
        ``intervene`` (``strategy``, ``size``, ``seed`` required; ``item_power``,
        ``smoothing``, ``metric``, ``k``). Option ``label`` names the row (default: the name
        with its options), so one estimator may appear with several options.
    propensity : array or str, optional
        For ``ips``, ``snips`` and ``stratified``: per-item (1-D, length n_items; sent once
        to every worker), per-pair (2-D; each block gets its users' rows) or the name of a
        column of ``test`` that holds each row's propensity.
    n_relevant : array of length n_users, optional
        True number of relevant items of each user, for ``ips``.
    exclude : frame, optional
        Pairs removed from the candidates (the training pairs).
    random : frame, optional
        Randomly exposed feedback, for ``ure_recall`` and ``recall_at_kbar``.
    train, mar : frame, optional
        The intervention's MNAR training data (``skew``, ``wtd``, ``wtd_h``; may be the same
        object as ``exclude``, then read once) and MAR weight split (``wtd``).
    metric, k, threshold, clip
        As in :func:`~recbias_tutorial.estimators.user_values`, shared by the estimators.
    n_resamples : int, optional
        Bootstrap resamples of users for intervals (every estimator but ``stratified``).
    confidence : float, default 0.95
        Coverage of the percentile intervals, in (0, 1).
    seed : int or numpy.random.Generator, optional
        Randomness of the bootstrap (required with ``n_resamples``). The resamples have the
        distribution of :func:`~recbias_tutorial.stats.user_bootstrap`'s (multinomial counts
        of users), drawn block by block (see ``_bootstrap``): the same seed and blocks give the
        same interval on any cluster and in process, but not ``bootstrap_ci``'s draws.
        Estimators over the same users share resamples.
    users_per_task : int, default 10,000
        Users per block for pandas inputs (partitioned inputs: one block per test partition).

    Returns
    -------
    pandas.DataFrame
        One row per model and estimator: ``model``, ``estimator`` (its label), ``value``,
        ``users`` (the users averaged over) and, with ``n_resamples``, ``low`` and ``high``
        (NaN for ``stratified``). With ``stratified``, ``attrs["strata"]`` holds each model's
        strata in the layout of :func:`~recbias_tutorial.estimators.stratified` (columns
        ``model``, ``estimator``, ``stratum``, ``p_low``, ``p_high``, ``interactions``,
        ``users``, ``items``, ``share``, ``value``).

    Raises
    ------
    ValueError
        If ``client`` is neither None nor a Dask client; ``models`` is not a non-empty
        mapping of valid scores of one shape, or a model does not score every user and item
        of the data; an estimator is unknown, not evaluated here, listed twice or given an
        option it does not take or refuses (the rules of its in-process function); a frame
        is of another type or is not valid feedback (checked block by block on the workers:
        ids inside the models' shape, finite ratings, no duplicate test pairs); the test
        partitions' user ranges overlap; ``propensity``, ``n_relevant``, ``random``,
        ``train`` or ``mar`` is missing or invalid for an estimator that needs it; no user
        has a term to average; ``n_resamples``, ``confidence``, ``seed`` or
        ``users_per_task`` is invalid.

    See Also
    --------
    recbias_tutorial.distributed.estimate : one model, one estimator.
    recbias_tutorial.distributed.write_feedback : a frame as Parquet files partitioned by user.
    recbias_tutorial.estimators.user_values : the per-user terms each block computes.

    Examples
    --------
    >>> import numpy as np
    >>> import recbias_tutorial as rb
    >>> world = rb.simulate(200, 50, seed=0)
    >>> train, test = rb.random_split(world.mnar, (0.7, 0.3), seed=1)
    >>> p = rb.popularity_propensity(train, world.n_items, gamma=2.0)
    >>> table = evaluate({"exposure": world.propensity, "noise": np.random.default_rng(0).random(
    ...     (200, 50))}, test, client=None, exclude=train, propensity=p,
    ...     estimators=["aoa", "snips"], k=5, users_per_task=64)
    >>> table[["model", "estimator"]].values.tolist()
    [['exposure', 'aoa'], ['exposure', 'snips'], ['noise', 'aoa'], ['noise', 'snips']]
    >>> bool(np.isclose(table["value"][1], rb.snips(world.propensity, test, p, k=5, exclude=train)))
    True
    """
    return _evaluate.evaluate(models, test, client=client, estimators=estimators,
                              propensity=propensity, n_relevant=n_relevant, exclude=exclude,
                              random=random, train=train, mar=mar, metric=metric, k=k,
                              threshold=threshold, clip=clip, n_resamples=n_resamples,
                              confidence=confidence, seed=seed, users_per_task=users_per_task)


@declare(estimator=Options(per_user_names), users_per_task=Interval(int, 1), **_FORWARDED_RULES)
def estimate(scores: Any, test: pd.DataFrame, propensity: Any = None, *, client: Any,
             estimator: str = "aoa", n_relevant: Any = None, metric: str = "recall",
             k: int = 10, threshold: float = 4.0, exclude: pd.DataFrame | None = None,
             clip: float | None = None, users_per_task: int = 10_000) -> float:
    """An estimator with per-user terms evaluated on a Dask cluster, block of users by block.

    The one-model, one-estimator form of :func:`evaluate`.

    Parameters
    ----------
    scores : array of shape (n_users, n_items) or Scorer
        Scores (a :class:`~recbias_tutorial.Scorer` is sent once to every worker, so it must
        be picklable by cloudpickle: factor matrices and plain functions are).
    test : pandas.DataFrame
        Held-out feedback (``user``, ``item``, ``rating``).
    propensity : array, optional
        Per-item (1-D) or per-pair (2-D) propensities, for ``ips`` and ``snips``.
    client : dask.distributed.Client
        The cluster.
    estimator, n_relevant, metric, k, threshold, exclude, clip
        As in :func:`recbias_tutorial.estimators.user_values`.
    users_per_task : int, default 10,000
        Users per Dask task.

    Returns
    -------
    float
        The estimate; equal to :func:`recbias_tutorial.estimators.aoa` (or ``ips``,
        ``snips``) on the same inputs, up to floating-point summation order.

    Raises
    ------
    ValueError
        On the inputs :func:`~recbias_tutorial.estimators.user_values` refuses (its
        declared rules of ``metric``, ``k``, ``threshold`` and ``clip`` are checked before
        any task is submitted), or a bad ``users_per_task``; also if ``client`` is None or
        no user has a term to average.

    See Also
    --------
    recbias_tutorial.distributed.evaluate : several models and estimators in one pass.
    recbias_tutorial.estimators.user_values : the per-user terms each task computes.

    Examples
    --------
    >>> from dask.distributed import Client, LocalCluster
    >>> import recbias_tutorial as rb
    >>> world = rb.simulate(200, 50, seed=0)
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \\
    ...         Client(cluster) as client:
    ...     value = estimate(world.propensity, world.full, client=client, k=5, users_per_task=64)
    >>> round(value, 10) == round(rb.aoa(world.propensity, world.full, k=5), 10)
    True
    """
    if client is None or not (callable(getattr(client, "submit", None))
                              and callable(getattr(client, "gather", None))):
        raise ValueError("client must be a dask.distributed.Client (e.g. Client() locally, or "
                         f"Client('tcp://scheduler:8786')), got {type(client).__name__}")
    table = evaluate({"scores": scores}, test, client=client,
                     estimators=[(estimator, {"label": estimator})], propensity=propensity,
                     n_relevant=n_relevant, exclude=exclude, metric=metric, k=k,
                     threshold=threshold, clip=clip, users_per_task=users_per_task)
    return float(table["value"].iloc[0])
