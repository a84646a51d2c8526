"""Yang et al.'s whole protocol on a dataset, one split at a time (private).

Re-exported by :mod:`recbias_tutorial.replications.yang2018`; import it from there.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_int, check_mapping, check_names, check_real
from ..data import FeedbackData, drop_seen, random_split
from . import yang2018 as _y


def split_user_table(models: Mapping[str, Any], data: FeedbackData, *, seed: int,
                     gammas: Mapping[str, float] | None = None,
                     metrics: Iterable[str] = ("recall",), k: int = 10,
                     train_share: float = 0.8, cache: bool | None = None) -> pd.DataFrame:
    """The per-user table of one split of the Yahoo!-table protocol, fits included.

    Split the MNAR log into ``train_share`` training and the rest held out
    (:func:`recbias_tutorial.data.random_split`, ``seed``), drop the training pairs from the
    MAR truth (:func:`recbias_tutorial.data.drop_seen`), keep the users with a relevant item
    on both sides (:func:`same_users`), fit deep copies of ``models`` on the training part
    (model seed = ``seed``, one score matrix in memory at a time) and return
    :func:`user_table` under the truth, AOA and SNIPS at each gamma
    (:func:`snips_protocols`).

    The table is kept in the on-disk cache of fitted models (see
    :func:`recbias_tutorial.models.clear_fit_cache`), keyed by the data, every argument,
    each model's class and parameters and the package's code, so that a second call (a
    chapter re-run after a kernel restart) reads it back instead of refitting.

    Parameters
    ----------
    models : mapping name -> unfitted Cornac-style model
        Deep-copied before fitting (Cornac fits in place).
    data : FeedbackData
        A dataset with ``mnar`` and ``mar`` parts (e.g. Yahoo! R3).
    seed : int
        Split (and model) seed.
    gammas : mapping label -> float, optional
        SNIPS variants; default ``SNIPS γ=…`` at each of :data:`GAMMAS`.
    metrics : iterable of str, default ("recall",)
        Gains (``recall``, ``dcg``, ``auc``).
    k : int, default 10
        Cut-off.
    train_share : float, default 0.8
        Share of the MNAR log used for training.
    cache : bool, optional
        Use the on-disk cache (None follows ``RECBIAS_FIT_CACHE``, default on). Models whose
        state does not follow from their parameters are never cached.

    Returns
    -------
    pandas.DataFrame
        As :func:`user_table`: ``model``, ``metric``, ``estimator``, ``user``, ``value``;
        ``attrs["cached"]`` says whether it was read back.

    Raises
    ------
    ValueError
        If ``data`` is not a FeedbackData with a MAR part, ``models`` or ``gammas`` is empty
        or malformed, ``seed`` is not a non-negative int, ``train_share`` is not in (0, 1),
        or on any error of the steps above.

    See Also
    --------
    mae_over_splits : the per-model MAE of several splits.
    per_model_mae : the per-model MAE of this table.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> from recbias_tutorial.models import PosPop
    >>> world = rb.simulate(60, 40, seed=0)
    >>> table = split_user_table({"PosPop": PosPop(threshold=4.0)}, world, seed=0)
    >>> sorted(table["estimator"].unique())[:2]
    ['AOA', 'MAR truth']
    """
    from .._result_cache import cached_table
    from ..models._cache import model_tokens

    if not isinstance(data, FeedbackData) or data.mar is None:
        raise ValueError("data must be a FeedbackData with randomly exposed (mar) feedback "
                         "as the truth")
    check_mapping(models, "models", "unfitted model")
    seed = check_int(seed, "seed", low=0)
    gammas = {f"SNIPS γ={g:.1f}": g for g in _y.GAMMAS} if gammas is None else gammas
    check_mapping(gammas, "gammas", "gamma")
    gammas = {label: check_real(g, "gammas", low=-1.0, low_open=True)
              for label, g in gammas.items()}
    metrics = tuple(check_names(metrics, "metrics"))
    k = check_int(k, "k")
    train_share = check_real(train_share, "train_share", low=0.0, high=1.0, low_open=True,
                             high_open=True)
    tokens = model_tokens(models)  # None: a model its parameters do not describe, no caching
    arguments = None if tokens is None else dict(seed=seed, gammas=gammas, metrics=metrics, k=k,
                                                 train_share=train_share, models=tokens)

    def compute() -> pd.DataFrame:
        from ..models import iter_scores  # Cornac is imported only when models are fitted

        train, held = random_split(data.mnar, (train_share, 1.0 - train_share), seed=seed)
        held, truth = _y.same_users(held, drop_seen(data.mar, train), threshold=data.threshold)
        protocols = _y.snips_protocols(held, truth, train=train, n_items=data.n_items,
                                       gammas=gammas)
        scores = iter_scores(copy.deepcopy(dict(models)), train, n_users=data.n_users,
                             n_items=data.n_items, seed=seed, progress=False)
        return _y.user_table(scores, protocols, exclude=train, metrics=metrics, k=k)

    return cached_table("yang2018.split_user_table", data, arguments, compute, cache=cache)


def mae_over_splits(models: Mapping[str, Any], data: FeedbackData, *, seeds: Sequence[int],
                    gammas: Sequence[float] = _y.GAMMAS,
                    metrics: Iterable[str] = ("recall",), k: int = 10,
                    train_share: float = 0.8, cache: bool | None = None) -> pd.DataFrame:
    """The whole Yahoo!-table protocol, once per split seed: per-model MAE for every seed.

    For each seed, :func:`split_user_table` (split, truth without training pairs, common
    users, fits with model seed = split seed) and :func:`per_model_mae` for AOA and SNIPS at
    each gamma. Each split's table is cached on its own, so an interrupted run resumes.

    Parameters
    ----------
    models, data, metrics, k, train_share, cache
        As in :func:`split_user_table` (``models`` are deep-copied for every seed).
    seeds : sequence of int
        Split (and model) seeds.
    gammas : sequence of float, default GAMMAS
        SNIPS exponents (labelled ``SNIPS γ=…``).

    Returns
    -------
    pandas.DataFrame
        Columns ``seed``, ``metric``, ``model``, ``AOA``, ``SNIPS γ=…`` and ``users``.

    Raises
    ------
    ValueError
        If ``seeds`` is empty, ``data`` has no MAR part, ``train_share`` is not in (0, 1), or
        on any error of the steps above.

    See Also
    --------
    per_model_mae : one seed, from a :func:`user_table`.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> from recbias_tutorial.models import PosPop
    >>> world = rb.simulate(60, 40, seed=0)
    >>> out = mae_over_splits({"PosPop": PosPop(threshold=4.0)}, world, seeds=[0, 1])
    >>> out["seed"].tolist(), list(out.columns[:4])
    ([0, 1], ['seed', 'metric', 'model', 'AOA'])
    """
    seeds = [check_int(s, "seeds", low=0) for s in seeds]
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    if getattr(data, "mar", None) is None:
        raise ValueError("data must have randomly exposed (mar) feedback as the truth")
    labels = {f"SNIPS γ={g:.1f}": g for g in np.atleast_1d(gammas).tolist()}
    frames = []
    for seed in seeds:
        table = _y.per_model_mae(split_user_table(models, data, seed=seed, gammas=labels,
                                                  metrics=metrics, k=k,
                                                  train_share=train_share, cache=cache))
        frames.append(table.reset_index().assign(seed=seed))
    out = pd.concat(frames, ignore_index=True)
    return out[["seed"] + [c for c in out.columns if c != "seed"]]
