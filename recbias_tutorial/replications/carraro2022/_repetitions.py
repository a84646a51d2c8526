r"""Carraro & Bridge's repetitions: fit once, evaluate every test set (private).

Everything here is re-exported by :mod:`recbias_tutorial.replications.carraro2022`; import
it from there (its docstring describes the protocol). The splits, tuning and test-set
draws are in ``_protocol``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._params import Interval, Seed, declare
from ...data import FeedbackData
from ..._validation import check_seeds, seed_int
from ...metrics import subset_metrics
from ._protocol import (_SMOOTHING, METRICS, SIZES, ModelFactory, _check_factories,
                        _check_protocol_data, _check_sizes, _check_strategies, _ranked,
                        draw_test_sets, split_feedback)
from ...sampling import STRATEGIES
from ...stats import kl_divergence, rating_distribution


@dataclasses.dataclass(frozen=True, eq=False)
class Repetition:
    """Tidy results of one or more repetitions.

    Attributes
    ----------
    metrics : pandas.DataFrame
        ``seed, model, strategy, size, metric, value``; ``strategy == "gt"`` (size 1.0) is
        the MAR ground truth D_gt, the others the intervened test sets.
    test_sets : pandas.DataFrame
        ``seed, strategy, size, n_rows, n_users, relevant, kl_to_gt``: size of each test set,
        its share of relevant rows and KL(test set || D_gt) of the rating values.
    ratings : pandas.DataFrame
        ``seed, strategy, size, rating, share``: rating-value distribution of each test set.

    Raises
    ------
    AttributeError
        On assignment to a field: the result is frozen (``dataclasses.FrozenInstanceError``).
        Nothing is validated on construction.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.run_repetition : one repetition.
    recbias_tutorial.replications.carraro2022.run_protocol : several, concatenated.
    recbias_tutorial.replications.carraro2022.difference_from_truth : reads ``metrics``.

    Examples
    --------
    >>> m = pd.DataFrame({"seed": 0, "model": "a", "strategy": ["gt", "reg"], "size": 1.0,
    ...                   "metric": "recall", "value": [0.2, 0.3]})
    >>> rep = Repetition(metrics=m, test_sets=pd.DataFrame(), ratings=pd.DataFrame())
    >>> from recbias_tutorial.replications.carraro2022 import difference_from_truth
    >>> difference_from_truth(rep.metrics)["pct_diff"].round(6).tolist()
    [50.0]
    """

    metrics: pd.DataFrame
    test_sets: pd.DataFrame
    ratings: pd.DataFrame


@declare(seed=Seed(), item_power=Interval(float, 0.0), k=Interval(int, 1),
         threshold=Interval(float, optional=True), smoothing=_SMOOTHING)
def run_repetition(data: FeedbackData, factories: Mapping[str, ModelFactory], *, seed: int,
                   strategies: Sequence[str] = STRATEGIES, sizes: Sequence[float] = SIZES,
                   item_power: float = 2.0, k: int = 10, threshold: float | None = None,
                   support: Sequence[float] | None = None,
                   smoothing: float | str = 1.0) -> Repetition:
    """One repetition of the protocol: split, fit once, evaluate on every test set.

    Every model is fitted once on D_tr and ranks the pairs of D_he and D_gt once (full
    catalogue, D_tr excluded); each intervened test set (``full`` at size 1 only, the other
    strategies at every size) is then evaluated from those positions with
    :func:`~recbias_tutorial.metrics.subset_metrics`. Each test set is drawn with its own
    generator, seeded by ``(seed, strategy index, size index)``.

    Parameters
    ----------
    data : FeedbackData
        MNAR log and MAR feedback.
    factories : mapping name -> callable
        Zero-argument callables returning a fresh (seeded) Cornac recommender.
    seed : int
        Seed of the split and of the samples.
    strategies : sequence of str, default all of :data:`recbias_tutorial.sampling.STRATEGIES`
        Interventions to evaluate (``full`` is drawn at size 1 only).
    sizes : sequence of float, default :data:`SIZES`
        Sample sizes rho_p as fractions of D_he.
    item_power : float, default 2.0
        Exponent of the WTD/WTD_H item weight (2 in the paper's experiments, §4.3; 1 is the
        plain :math:`w_u w_i` of its §3.3.2).
    k : int, default 10
        Cut-off of the metrics.
    threshold : float, optional
        Relevance threshold; default ``data.threshold``.
    support : sequence of float, optional
        Rating values for the distributions and KL; default the values in the data.
    smoothing : float or "notebook", default 1.0
        The rule for ids absent from D_tr or D_w (:func:`draw_test_sets`): the course's
        additive pseudo-count, or ``"notebook"``, the authors' (a zero share becomes 1e-4).

    Returns
    -------
    Repetition
        Metrics of every model on D_gt and on every test set, the test sets' sizes and their
        rating distributions.

    Raises
    ------
    ValueError
        If ``factories`` is not a non-empty mapping of callables, or a factory does not
        return a Cornac recommender; if ``seed`` is missing or not a non-negative int or
        Generator; if ``sizes`` are not fractions in (0, 1]; if ``strategies`` is empty or
        not a subset of ``STRATEGIES``; on an invalid ``data`` (see
        :func:`split_feedback`); if ``item_power`` is negative or ``smoothing`` neither a
        number >= 0 nor ``"notebook"``; if ``k`` is not an integer
        in ``1..n_items`` or ``threshold`` (when given) not a finite number; if ``support``
        misses a rating value of a test set.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.run_protocol : several seeds.
    recbias_tutorial.sampling.intervene : draws each intervened test set.
    recbias_tutorial.metrics.subset_metrics : evaluates the test sets from shared positions.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> from recbias_tutorial.models import AvgRating, PosPop
    >>> rep = run_repetition(simulate(80, 50, seed=0), {"AvgRating": AvgRating, "PosPop": PosPop},
    ...                      seed=0, sizes=(0.5, 1.0))
    >>> sorted(rep.metrics["strategy"].unique())
    ['full', 'gt', 'reg', 'skew', 'wtd', 'wtd_h']
    """
    _check_protocol_data(data)
    factories = _check_factories(factories)
    seed = seed_int(seed)
    sizes = _check_sizes(sizes)
    strategies = _check_strategies(strategies)
    threshold = data.threshold if threshold is None else float(threshold)
    split = split_feedback(data, seed=seed)
    if support is None:
        support = np.unique(np.concatenate([data.mnar["rating"].to_numpy(float), data.mar["rating"].to_numpy(float)]))

    samples = draw_test_sets(split, strategies=strategies, sizes=sizes, item_power=item_power,
                             smoothing=smoothing)

    ranked = _ranked(factories, split, {"heldout": split.heldout, "gt": split.gt},
                     n_users=data.n_users, n_items=data.n_items, k=k)
    frames = []
    for model, z in ranked.items():
        he = subset_metrics(z["heldout"], split.heldout, samples, k=k, threshold=threshold)
        gt = subset_metrics(z["gt"], split.gt, {("gt", 1.0): np.arange(len(split.gt))}, k=k, threshold=threshold)
        both = pd.concat([gt, he])[list(METRICS)]
        both.index = pd.MultiIndex.from_tuples(both.index, names=["strategy", "size"])
        long = both.reset_index().melt(["strategy", "size"], var_name="metric", value_name="value")
        frames.append(long.assign(seed=seed, model=model))
    metrics = pd.concat(frames, ignore_index=True)[["seed", "model", "strategy", "size", "metric", "value"]]

    sets, shares = [], []
    gt_ratings = split.gt["rating"].to_numpy(float)
    for (strategy, size), rows in {("gt", 1.0): None, **samples}.items():
        frame = split.gt if rows is None else split.heldout.iloc[rows]
        r = frame["rating"].to_numpy(float)
        sets.append({"seed": seed, "strategy": strategy, "size": size, "n_rows": len(frame),
                     "n_users": frame["user"].nunique(), "relevant": float(np.mean(r >= threshold)),
                     "kl_to_gt": kl_divergence(r, gt_ratings, support=support)})
        dist = rating_distribution(r, support=support)
        shares.append(pd.DataFrame({"seed": seed, "strategy": strategy, "size": size,
                                    "rating": dist.index.to_numpy(), "share": dist.to_numpy()}))
    return Repetition(metrics, pd.DataFrame(sets), pd.concat(shares, ignore_index=True))


def run_protocol(data: FeedbackData, factories: Mapping[str, ModelFactory], *, seeds: Sequence[int],
                 cache: bool | None = None, **kwargs: Any) -> Repetition:
    """:func:`run_repetition` for every seed, results concatenated.

    The result is kept in the on-disk cache of fitted models (see
    :func:`recbias_tutorial.models.clear_fit_cache`), keyed by the data, every argument, each
    model's class and parameters and the package's code: a second call reads it back.
    ``metrics.attrs["seconds"]`` is the wall time of the run that computed it and
    ``metrics.attrs["cached"]`` whether this call read it back.

    Parameters
    ----------
    data : FeedbackData
        MNAR log and MAR feedback.
    factories : mapping name -> callable
        Zero-argument callables returning a fresh (seeded) Cornac recommender.
    seeds : sequence of int
        Distinct seeds, one repetition each.
    cache : bool, optional
        Use the on-disk cache (None follows ``RECBIAS_FIT_CACHE``, default on). Models whose
        state does not follow from their parameters are never cached.
    **kwargs
        Passed to :func:`run_repetition` (``strategies``, ``sizes``, ``item_power``, ``k``,
        ``threshold``, ``support``, ``smoothing``).

    Returns
    -------
    Repetition
        The frames of all repetitions, concatenated (column ``seed`` tells them apart).

    Raises
    ------
    ValueError
        If ``seeds`` is empty or has duplicates; on any invalid argument of
        :func:`run_repetition`.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.run_repetition : one seed.
    recbias_tutorial.replications.carraro2022.difference_from_truth : the next step.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> from recbias_tutorial.models import PosPop
    >>> out = run_protocol(simulate(80, 50, seed=0), {"PosPop": PosPop}, seeds=[0, 1], sizes=(1.0,))
    >>> sorted(out.metrics["seed"].unique().tolist())
    [0, 1]
    """
    _check_protocol_data(data)
    seeds = check_seeds(seeds)
    factories = _check_factories(factories)

    def compute() -> dict:
        start = time.perf_counter()
        reps = [run_repetition(data, factories, seed=s, **kwargs) for s in seeds]
        out = {f.name: pd.concat([getattr(r, f.name) for r in reps], ignore_index=True)
               for f in dataclasses.fields(Repetition)}
        out["metrics"].attrs["seconds"] = time.perf_counter() - start
        return out

    from ..._result_cache import cached_result

    keyed = isinstance(data, FeedbackData)  # bad data: run_repetition says so
    models = {name: factory() for name, factory in factories.items()} if keyed else None
    frames, cached = cached_result("carraro2022.run_protocol", data,
                                   dict(kwargs, seeds=seeds) if keyed else None, compute,
                                   cache=cache, models=models)
    frames["metrics"].attrs["cached"] = cached
    return Repetition(**frames)
