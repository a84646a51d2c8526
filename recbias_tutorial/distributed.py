"""The estimators on a Dask cluster: blocks of users evaluated on workers, sums reduced at the end.

Every estimator of :mod:`recbias_tutorial.estimators` is a mean over users of a per-user term
(:func:`~recbias_tutorial.estimators.user_values`). :func:`estimate` splits the users into
blocks, evaluates each block on a worker with the very same function (the block's scores,
test rows, excluded pairs and propensities, with user ids shifted to start at 0), and adds
up the per-block sums and user counts. Scores may be a dense array or a
:class:`~recbias_tutorial.Scorer`; with a scorer (e.g. from factor matrices) a worker only ever
holds one chunk of one block's scores, so the catalogue and the user base can be as large as
the cluster.

Dask is an optional dependency (``pip install 'recbias_tutorial[dask]'``). On a cluster::

    from dask.distributed import Client
    import recbias_tutorial as rb
    from recbias_tutorial import distributed

    client = Client("tcp://scheduler:8786")           # or Client() for a local cluster
    scorer = rb.Scorer.from_factors(user_factors, item_factors)
    recall = distributed.estimate(scorer, test, client=client, k=10, exclude=train,
                                  users_per_task=20_000)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._estimator_registry import lookup as _lookup
from ._estimator_registry import per_user_names
from ._params import Interval, Options, declare, declared
from ._ranking import is_scorer
from ._validation import check_feedback, check_n_relevant, check_propensity_shape
from .estimators import user_values
from .scorer import Scorer, check_scores

__all__ = ["estimate"]


def _block_scores(scores: Any, lo: int, hi: int) -> Any:
    """Scores of users lo..hi-1 as a scorer (lazy) or an array slice."""
    if is_scorer(scores):
        fn, n_items = scores.fn, scores.shape[1]
        return Scorer(lambda users: fn(users + lo), n_users=hi - lo, n_items=n_items)
    return scores[lo:hi]


def _rows(frame: pd.DataFrame | None, lo: int, hi: int) -> pd.DataFrame | None:
    if frame is None:
        return None
    users = frame["user"].to_numpy(np.int64)
    part = frame[(users >= lo) & (users < hi)]
    return part.assign(user=part["user"].to_numpy(np.int64) - lo)


def _block_sum(scores: Any, test: pd.DataFrame, exclude: pd.DataFrame | None, propensity: Any,
               n_relevant: Any, kwargs: dict) -> tuple[float, int]:
    """Sum and count of the per-user terms of one block (the task run on a worker)."""
    relevant = test["rating"].to_numpy(dtype=float) >= kwargs["threshold"]
    if not relevant.any():  # no user of this block has a relevant test item
        if _lookup(kwargs["estimator"]).needs_n_relevant:  # users with relevant items count as 0
            return 0.0, int((np.asarray(n_relevant) >= 1).sum())
        return 0.0, 0
    values = user_values(scores, test, propensity, n_relevant=n_relevant, exclude=exclude,
                         **kwargs)
    return float(values.sum()), int(len(values))


#: The rules of the arguments :func:`estimate` forwards to every task's ``user_values``: checked
#: once, before any task is submitted.
_FORWARDED_RULES = {name: rule for name, rule in declared(user_values).items()
                    if name in ("metric", "k", "threshold", "clip")}


@declare(estimator=Options(per_user_names), users_per_task=Interval(int, 1), **_FORWARDED_RULES)
def estimate(scores: Any, test: pd.DataFrame, propensity: Any = None, *, client: Any,
             estimator: str = "aoa", n_relevant: Any = None, metric: str = "recall",
             k: int = 10, threshold: float = 4.0, exclude: pd.DataFrame | None = None,
             clip: float | None = None, users_per_task: int = 10_000) -> float:
    """An estimator evaluated on a Dask cluster, block of users by block of users.

    Parameters
    ----------
    scores : array of shape (n_users, n_items) or Scorer
        Scores (a :class:`~recbias_tutorial.Scorer` is shipped to the workers and evaluated
        there, so it must be picklable by cloudpickle: factor matrices and plain functions
        are).
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
    recbias_tutorial.estimators.user_values : the per-user terms each task computes.
    recbias_tutorial.Scorer : scores read in blocks of users.

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
    if not (callable(getattr(client, "submit", None)) and callable(getattr(client, "gather", None))):
        raise ValueError("client must be a dask.distributed.Client (e.g. Client() locally, or "
                         f"Client('tcp://scheduler:8786')), got {type(client).__name__}")
    est = _lookup(estimator)  # declared above: a registered name
    scores = check_scores(scores)
    n_users, n_items = scores.shape
    check_feedback(test, "test", n_users, n_items)
    if exclude is not None:
        check_feedback(exclude, "exclude", n_users, n_items, require_rating=False,
                       allow_empty=True, unique=False)
    # the checks of the in-memory estimators, on the whole arrays before they are cut into
    # blocks: a slice of a too-long array would otherwise fit every block
    p = None if est.propensity is None else check_propensity_shape(propensity, scores.shape)
    n_rel = check_n_relevant(n_relevant, n_users) if est.needs_n_relevant else None
    kwargs = dict(estimator=estimator, metric=metric, k=k, threshold=threshold, clip=clip)
    futures = []
    for lo in range(0, n_users, users_per_task):
        hi = min(n_users, lo + users_per_task)
        block_p = p[lo:hi] if p is not None and p.ndim == 2 else p
        block_n = n_rel[lo:hi] if n_rel is not None and n_rel.ndim == 1 else n_rel
        futures.append(client.submit(
            _block_sum, _block_scores(scores, lo, hi), _rows(test, lo, hi),
            _rows(exclude, lo, hi), block_p, block_n, kwargs, pure=False))
    parts = client.gather(futures)
    total = sum(s for s, _ in parts)
    count = sum(c for _, c in parts)
    if count == 0:
        raise ValueError(f"test has no relevant items (rating >= threshold={threshold})")
    return total / count
