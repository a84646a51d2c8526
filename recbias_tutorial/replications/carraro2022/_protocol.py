r"""Carraro & Bridge's protocol: splits, tuning, intervened test sets (private).

Everything here is re-exported by :mod:`recbias_tutorial.replications.carraro2022`; import
it from there (its docstring describes the protocol). The repetitions (fit once, evaluate
every test set) are in ``_repetitions``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ... import models as _models
from ..._params import Interval, Seed, declare
from ..._validation import (as_generator, check_column_name, check_finite_column,
                            check_fractions, check_frame, check_mapping, check_seeds,
                            check_sequence, check_unique_rows, seed_int)
from ...data import FeedbackData, random_split
from ...metrics import rank_positions, subset_metrics
from ...sampling import STRATEGIES, intervene, intervention_weights

if TYPE_CHECKING:  # Cornac is imported where models are fitted (the core has none)
    from cornac.models import Recommender

#: The declared rule of ``smoothing`` (as :func:`recbias_tutorial.sampling.intervene` has it).
_SMOOTHING = intervention_weights.__rules__["smoothing"]

#: Metrics computed on every test set (all "@k").
METRICS: tuple[str, ...] = ("recall", "precision", "ndcg", "map")
#: The sample sizes rho_p of the paper, 0.1, 0.2, ..., 1.0 (fractions of the held-out set).
SIZES: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(1, 11))


# --------------------------------------------------------------------------------------
# splits
# --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False)
class ProtocolSplit:
    """The five parts of one repetition (each with a fresh ``RangeIndex``).

    Attributes
    ----------
    train : pandas.DataFrame
        :math:`D_{tr}`, MNAR training data (60% of the MNAR log by default).
    heldout : pandas.DataFrame
        :math:`D_{he}`, MNAR held-out data the intervened test sets are drawn from.
    weights : pandas.DataFrame
        :math:`D_w`, MAR data used only for the WTD weights.
    val : pandas.DataFrame
        :math:`D_{val}`, MAR data for hyper-parameter selection.
    gt : pandas.DataFrame
        :math:`D_{gt}`, MAR ground truth.
    seed : int
        Seed of the split.

    Raises
    ------
    AttributeError
        On assignment to a field: the split is frozen (``dataclasses.FrozenInstanceError``).
        Nothing is validated on construction; :func:`split_feedback` builds valid splits.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.split_feedback : draws the split.
    recbias_tutorial.replications.carraro2022.run_repetition : uses it.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> split = split_feedback(simulate(30, 40, seed=0), seed=3)
    >>> isinstance(split, ProtocolSplit), split.seed, len(split.gt) > len(split.val)
    (True, 3, True)
    """

    train: pd.DataFrame
    heldout: pd.DataFrame
    weights: pd.DataFrame
    val: pd.DataFrame
    gt: pd.DataFrame
    seed: int


def _check_protocol_data(data: Any) -> FeedbackData:
    """A FeedbackData with MAR feedback (the protocol's D_w, D_val and D_gt)."""
    if not isinstance(data, FeedbackData):
        raise ValueError(f"data must be a FeedbackData, got {type(data).__name__}")
    if data.mar is None or len(data.mar) == 0:
        raise ValueError(f"data ({data.name}) has no MAR feedback: the protocol needs D_w, D_val, D_gt")
    return data


@declare(seed=Seed())
def split_feedback(data: FeedbackData, *, seed: int, mnar_fractions: Sequence[float] = (0.6, 0.4),
                   mar_fractions: Sequence[float] = (0.15, 0.15, 0.7)) -> ProtocolSplit:
    """Split MNAR into D_tr / D_he and MAR into D_w / D_val / D_gt, uniformly at random.

    Uses :func:`recbias_tutorial.data.random_split` twice with one generator seeded by
    ``seed`` (MNAR first, then MAR).

    Parameters
    ----------
    data : FeedbackData
        MNAR log (``mnar``) and MAR feedback (``mar``).
    seed : int or numpy.random.Generator
        Seed of the split.
    mnar_fractions : sequence of 2 floats, default (0.6, 0.4)
        Shares of ``mnar`` in D_tr and D_he.
    mar_fractions : sequence of 3 floats, default (0.15, 0.15, 0.7)
        Shares of ``mar`` in D_w, D_val and D_gt.

    Returns
    -------
    ProtocolSplit
        The five parts, each with a fresh ``RangeIndex``.

    Raises
    ------
    ValueError
        If ``data`` is not a :class:`~recbias_tutorial.data.FeedbackData` or has no MAR
        feedback; if ``mnar_fractions`` does not have 2 parts or ``mar_fractions`` 3, or
        they are not positive numbers summing to 1; if ``seed`` is missing or not a
        non-negative int or Generator; if ``data.mnar`` is empty.

    See Also
    --------
    recbias_tutorial.data.random_split : the split of one frame.
    recbias_tutorial.replications.carraro2022.run_repetition : the repetition it starts.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> split = split_feedback(simulate(50, 40, seed=0), seed=1)
    >>> round(len(split.train) / (len(split.train) + len(split.heldout)), 1)
    0.6
    """
    _check_protocol_data(data)
    check_fractions(mnar_fractions, "mnar_fractions (train, heldout)", 2)
    check_fractions(mar_fractions, "mar_fractions (weights, val, gt)", 3)
    rng = as_generator(seed)
    train, heldout = random_split(data.mnar, mnar_fractions, seed=rng)
    weights, val, gt = random_split(data.mar, mar_fractions, seed=rng)
    parts = [p.reset_index(drop=True) for p in (train, heldout, weights, val, gt)]
    return ProtocolSplit(*parts, seed=seed)


# --------------------------------------------------------------------------------------
# one repetition of the protocol
# --------------------------------------------------------------------------------------
ModelFactory = Callable[[], "Recommender"]


def _check_factories(factories: Any, name: str = "factories") -> Mapping[str, ModelFactory]:
    check_mapping(factories, name, "zero-argument model factory")
    for key, factory in factories.items():
        if not callable(factory):
            raise ValueError(f"{name}[{key!r}] must be callable (returning a fresh cornac Recommender)")
    return factories


def _ranked(factories: Mapping[str, ModelFactory], split: ProtocolSplit, frames: Mapping[str, pd.DataFrame],
            *, n_users: int, n_items: int, k: int) -> dict[str, dict[str, np.ndarray]]:
    """Fit each model once on D_tr and rank every frame's pairs: {model: {frame: Z}}."""
    fresh = {name: factory() for name, factory in factories.items()}
    out: dict[str, dict[str, np.ndarray]] = {}
    for name, scores in _models.iter_scores(fresh, split.train, n_users=n_users, n_items=n_items,
                                            seed=seed_int(split.seed), progress=False):
        out[name] = {label: rank_positions(scores, frame, exclude=split.train, k=k)
                     for label, frame in frames.items()}
    return out


@declare(seed=Seed(), k=Interval(int, 1), threshold=Interval(float, optional=True))
def tune(data: FeedbackData, candidates: Mapping[str, Mapping[str, ModelFactory]], *, seed: int,
         k: int = 10, threshold: float | None = None, cache: bool | None = None) -> pd.DataFrame:
    """Recall@k on D_val of every hyper-parameter setting, models fitted on D_tr.

    The table is kept in the on-disk result cache, keyed like :func:`run_protocol`'s (the
    data, the arguments, each setting's model class and parameters, the package's code).

    Parameters
    ----------
    data : FeedbackData
        MNAR log and MAR feedback, split by :func:`split_feedback`.
    candidates : mapping model -> mapping setting label -> model factory
        E.g. ``{"UserKNN": {"k=20": lambda: UserKNN(k=20, verbose=False), ...}, ...}``.
    seed : int
        Seed of :func:`split_feedback` (the paper tunes on one repetition's D_val).
    k : int, default 10
        Cut-off of Recall@k.
    threshold : float, optional
        Relevance threshold; default ``data.threshold``.
    cache : bool, optional
        Use the on-disk cache (None follows ``RECBIAS_FIT_CACHE``, default on). Settings whose
        model state does not follow from its parameters are never cached.

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``setting``, ``recall`` and ``best`` (the setting with the highest
        recall of each model; the first one listed on ties).

    Raises
    ------
    ValueError
        If ``candidates`` is not a non-empty mapping, or one of its values is not a
        non-empty mapping of callables; if a factory does not return a Cornac recommender;
        on an invalid ``data`` or ``seed`` (see :func:`split_feedback`); if ``k`` is not an
        integer in ``1..n_items`` or ``threshold`` (when given) not a finite number.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.run_repetition : evaluate the chosen models.
    recbias_tutorial.replications.carraro2022.split_feedback : the split whose D_val is used.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> from recbias_tutorial.models import PosPop
    >>> settings = {"t=4": PosPop, "t=5": lambda: PosPop(5.0)}
    >>> table = tune(simulate(60, 40, seed=0), {"PosPop": settings}, seed=0)
    >>> table.columns.tolist()
    ['model', 'setting', 'recall', 'best']
    """
    if not isinstance(candidates, Mapping) or not candidates:
        raise ValueError("candidates must be a non-empty mapping model -> {setting: factory}")
    threshold = data.threshold if threshold is None else float(threshold)
    candidates = {model: _check_factories(settings, f"candidates[{model!r}]")
                  for model, settings in candidates.items()}

    def compute() -> dict:
        split = split_feedback(data, seed=seed)
        rows = []
        for model, settings in candidates.items():
            ranked = _ranked(settings, split, {"val": split.val}, n_users=data.n_users,
                             n_items=data.n_items, k=k)
            for setting, z in ranked.items():
                m = subset_metrics(z["val"], split.val, {0: np.arange(len(split.val))}, k=k,
                                   threshold=threshold)
                rows.append({"model": model, "setting": setting,
                             "recall": float(m["recall"].iloc[0])})
        table = pd.DataFrame(rows)
        best = table.groupby("model", sort=False)["recall"].idxmax()
        table["best"] = table.index.isin(best.to_numpy())
        return {"table": table}

    from ..._result_cache import cached_result

    keyed = isinstance(data, FeedbackData)  # bad data: split_feedback says so
    models = ({f"{model}\0{setting}": factory() for model, settings in candidates.items()
               for setting, factory in settings.items()} if keyed else None)
    arguments = {"seed": seed, "k": k, "threshold": threshold} if keyed else None
    frames, _ = cached_result("carraro2022.tune", data, arguments, compute, cache=cache,
                              models=models)
    return frames["table"]


def _check_sizes(sizes: Any) -> tuple[float, ...]:
    out = check_sequence(sizes, "sizes", "fractions in (0, 1]")
    if not out or any(isinstance(s, bool) or not isinstance(s, Real) or not 0 < s <= 1 for s in out):
        raise ValueError(f"sizes must be fractions in (0, 1], got {sizes!r}")
    return tuple(float(s) for s in out)


@declare(item_power=Interval(float, 0.0), smoothing=_SMOOTHING)
def draw_test_sets(split: ProtocolSplit, *, strategies: Sequence[str] = STRATEGIES,
                   sizes: Sequence[float] = SIZES, item_power: float = 2.0,
                   smoothing: float | str = 1.0) -> dict[tuple[str, float], np.ndarray]:
    """The intervened test sets of one repetition, as row positions in ``split.heldout``.

    ``full`` is drawn at size 1 only, every other strategy at every size. Each test set has
    its own generator, seeded by ``(split.seed, strategy index in STRATEGIES, size index)``,
    so a test set does not depend on which other ones are drawn; :func:`run_repetition` and
    :func:`table2_kl` see the same samples.

    Parameters
    ----------
    split : ProtocolSplit
        From :func:`split_feedback` (its ``seed`` must be an int).
    strategies : sequence of str, default all of :data:`recbias_tutorial.sampling.STRATEGIES`
        Interventions to draw.
    sizes : sequence of float, default :data:`SIZES`
        Sample sizes rho_p as fractions of D_he.
    item_power : float, default 2.0
        Exponent of the WTD/WTD_H item weight.
    smoothing : float or "notebook", default 1.0
        The rule for ids absent from D_tr or D_w (see :mod:`recbias_tutorial.sampling`):
        the course's additive pseudo-count, or ``"notebook"``, the authors' notebook's (a
        zero share becomes 1e-4).

    Returns
    -------
    dict
        ``{(strategy, size): sorted row positions in split.heldout}``.

    Raises
    ------
    ValueError
        If ``split`` is not a :class:`ProtocolSplit`; if ``strategies`` is empty or not a
        subset of ``STRATEGIES``; if ``sizes`` are not fractions in (0, 1]; on an invalid
        ``item_power`` or ``smoothing`` (see :func:`recbias_tutorial.sampling.intervene`).

    See Also
    --------
    recbias_tutorial.sampling.intervene : draws one test set.
    recbias_tutorial.replications.carraro2022.run_repetition : evaluates them.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> split = split_feedback(simulate(60, 40, seed=0), seed=0)
    >>> sets = draw_test_sets(split, strategies=("full", "reg"), sizes=(0.5,))
    >>> sorted(sets), len(sets[("reg", 0.5)]) == round(0.5 * len(split.heldout))
    ([('full', 1.0), ('reg', 0.5)], True)
    """
    if not isinstance(split, ProtocolSplit):
        raise ValueError(f"split must be a ProtocolSplit (from split_feedback), got {type(split).__name__}")
    strategies = _check_strategies(strategies)
    sizes = _check_sizes(sizes)
    seed = seed_int(split.seed)
    samples: dict[tuple[str, float], np.ndarray] = {}
    for s_idx, strategy in enumerate(STRATEGIES):
        if strategy not in strategies:
            continue
        for z_idx, size in enumerate((1.0,) if strategy == "full" else sizes):
            rng = np.random.default_rng([seed, s_idx, z_idx])
            sample = intervene(split.heldout, strategy=strategy, size=size, train=split.train,
                               mar=split.weights, item_power=item_power, seed=rng,
                               smoothing=smoothing)
            samples[(strategy, size)] = np.sort(sample.index.to_numpy())  # heldout has a RangeIndex
    return samples


def _check_strategies(strategies: Any) -> tuple[str, ...]:
    strategies = check_sequence(strategies, "strategies", f"strategies of {list(STRATEGIES)}")
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or not strategies:
        raise ValueError(f"strategies must be a non-empty subset of {list(STRATEGIES)}, got {list(strategies)}")
    return strategies


#: The paper's names of the five test sets, keyed by :data:`recbias_tutorial.sampling.STRATEGIES`.
TEST_SET_NAMES: dict[str, str] = {"full": "FULL", "reg": "REG", "skew": "SKEW", "wtd": "WTD", "wtd_h": "WTD_H"}
_KEYS = {v: k for k, v in TEST_SET_NAMES.items()}
_ORDER = list(TEST_SET_NAMES.values())


def _check_metrics_frame(metrics: Any) -> pd.DataFrame:
    """``Repetition.metrics``: its columns, D_gt rows, known strategies, finite values and
    one row per (seed, model, strategy, size, metric) (a table of two runs would be averaged
    or have its first row kept without a word)."""
    keys = ["seed", "model", "strategy", "size", "metric"]
    check_frame(metrics, "metrics", keys + ["value"])
    unknown = sorted(set(map(str, metrics["strategy"])) - {"gt", *STRATEGIES})
    if unknown:
        raise ValueError(f"metrics.strategy has {unknown}, not one of {['gt', *STRATEGIES]}")
    if not (metrics["strategy"] == "gt").any():
        raise ValueError("metrics has no ground-truth rows (strategy == 'gt')")
    check_finite_column(metrics, "metrics", "value")
    check_unique_rows(metrics, "metrics", keys)
    return metrics


def _check_metrics(metrics: Any, metric: str) -> pd.DataFrame:
    _check_metrics_frame(metrics)
    check_column_name(metric, "metric")
    sub = metrics[metrics["metric"] == metric]
    if sub.empty:
        raise ValueError(f"metrics has no rows for metric={metric!r}")
    if not (sub["strategy"] == "gt").any():
        raise ValueError(f"metrics has no ground-truth rows (strategy == 'gt') for metric={metric!r}")
    return sub
