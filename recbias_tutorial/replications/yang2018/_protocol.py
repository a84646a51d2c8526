r"""Yang et al.'s protocol: test sets, propensities and per-user values of a split (private).

Re-exported by :mod:`recbias_tutorial.replications.yang2018`; import it from there.
:func:`snips_protocols` (the MAR truth, AOA and SNIPS with popularity propensities),
:func:`user_table` (per-user values of every model under every protocol), :func:`same_users`
(both test sets over the same users) and :func:`split_user_table` (split, fit and evaluate one
split of a dataset, kept in the on-disk cache).
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..._ranking import GAINS
from ..._validation import (check_choice, check_column_name, check_feedback, check_frame,
                            check_int, check_mapping, check_names, check_real, named_items)
from ...data import FeedbackData, drop_seen, random_split
from ...estimators import user_values
from ...propensity import popularity_propensity

# The sensitivity grid of gamma (documented, and re-exported, as yang2018.GAMMAS).
GAMMAS: tuple[float, ...] = (1.5, 2.0, 2.5, 3.0)

Protocol = tuple[pd.DataFrame, Any, str]  # (test set, propensity or None, estimator name)


def _check_gammas(gammas: Any, name: str = "gammas", *, reserved: tuple = (),
                  allow_aoa: bool = False, allow_empty: bool = False) -> dict[Any, float]:
    """A mapping label -> popularity exponent gamma, each a finite number above -1 (-1 itself,
    AOA, with ``allow_aoa``); a label in ``reserved`` (the truth's, ``"AOA"``) is refused:
    two protocols under one label would be one column."""
    if allow_empty and isinstance(gammas, Mapping) and not gammas:
        return {}
    check_mapping(gammas, name, "gamma")
    out = {}
    for label, gamma in gammas.items():
        check_column_name(label, f"{name} label")
        if label in reserved:
            raise ValueError(f"{name}: the label {label!r} is taken ({', '.join(map(repr, reserved))} "
                             "are the protocol's own); give the SNIPS variant another label")
        out[label] = check_real(gamma, f"{name}[{label!r}]", low=-1.0, low_open=not allow_aoa)
    return out


def _gamma_labels(gammas: Any, name: str = "gammas") -> dict[str, float]:
    """``{"SNIPS γ=…": gamma}`` of a sequence of gammas (above -1), refusing two gammas that
    get one label (their rows would be merged)."""
    if isinstance(gammas, numbers.Real) and not isinstance(gammas, bool):
        gammas = [gammas]
    if isinstance(gammas, (str, bytes, Mapping)) or not isinstance(gammas, Iterable):
        raise ValueError(f"{name} must be a sequence of numbers above -1, got {gammas!r:.60}")
    values = [check_real(g, name, low=-1.0, low_open=True) for g in gammas]
    labels = {f"SNIPS γ={g:.1f}": g for g in values}
    if len(labels) != len(values):
        raise ValueError(f"{name} has two values with one label (SNIPS γ=… at one decimal), got "
                         f"{values}: their rows would be merged")
    return labels


def snips_protocols(heldout: pd.DataFrame, truth: pd.DataFrame, *, train: pd.DataFrame,
                    n_items: int, gammas: Mapping[str, float],
                    truth_label: str = "MAR truth") -> dict[str, Protocol]:
    """The protocols of one comparison: the MAR truth, AOA, and SNIPS at each gamma.

    Parameters
    ----------
    heldout : pandas.DataFrame
        Logged (MNAR) held-out feedback the estimators see.
    truth : pandas.DataFrame
        Randomly exposed (MAR) feedback whose Average-Over-All value is the truth.
    train : pandas.DataFrame
        The training log; its item counts give the popularity propensities.
    n_items : int
        Catalogue size.
    gammas : mapping label -> float
        SNIPS variants, e.g. ``{"SNIPS γ=2.0": 2.0}``; a gamma of -1 gives every item one
        propensity, so that variant equals AOA (the baseline of a slider over gamma).
    truth_label : str, default "MAR truth"
        Label of the truth protocol.

    Returns
    -------
    dict
        ``label -> (test set, propensity or None, estimator name)``, the truth first, then
        ``"AOA"``, then the SNIPS variants in the order of ``gammas``.

    Raises
    ------
    ValueError
        If ``heldout`` or ``truth`` is not a feedback frame, ``gammas`` is empty, a gamma is
        not a number of at least -1 or a label is the truth's or ``"AOA"``, or on bad ``train`` / ``n_items`` (see
        :func:`recbias_tutorial.propensity.popularity_propensity`).

    See Also
    --------
    estimate_models : evaluate scored models under these protocols.
    recbias_tutorial.propensity.popularity_propensity : the propensities.

    Examples
    --------
    >>> log = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 0], "rating": [5.0, 4.0, 5.0]})
    >>> list(snips_protocols(log, log, train=log, n_items=3, gammas={"SNIPS γ=2": 2.0}))
    ['MAR truth', 'AOA', 'SNIPS γ=2']
    """
    check_feedback(heldout, "heldout")
    check_feedback(truth, "truth")
    check_column_name(truth_label, "truth_label")
    if truth_label == "AOA":
        raise ValueError("truth_label must differ from 'AOA', the label of the logged estimate")
    gammas = _check_gammas(gammas, reserved=(truth_label, "AOA"), allow_aoa=True)
    out: dict[str, Protocol] = {truth_label: (truth, None, "aoa"), "AOA": (heldout, None, "aoa")}
    for label, gamma in gammas.items():
        out[label] = (heldout, popularity_propensity(train, n_items, gamma=gamma), "snips")
    return out


def user_table(scores: Mapping[str, np.ndarray] | Iterable[tuple[str, np.ndarray]],
               protocols: Mapping[str, Protocol], *, exclude: pd.DataFrame | None,
               metrics: Iterable[str] = ("recall", "auc"), k: int = 10) -> pd.DataFrame:
    """Per-user values of every model under every protocol (one ranking pass per cell).

    Parameters
    ----------
    scores : mapping name -> score matrix, or iterable of ``(name, scores)``
        The models (an iterator keeps one score matrix in memory at a time).
    protocols : mapping label -> (test set, propensity or None, estimator)
        E.g. from :func:`snips_protocols`.
    exclude : pandas.DataFrame or None
        Pairs removed from the candidates (the training log).
    metrics : iterable of str, default ("recall", "auc")
        Gains of :func:`recbias_tutorial.estimators.user_values` (``recall``, ``dcg``, ``auc``).
    k : int, default 10
        Cut-off.

    Returns
    -------
    pandas.DataFrame
        Long format: ``model``, ``metric``, ``estimator``, ``user``, ``value``.

    Raises
    ------
    ValueError
        If ``protocols`` is empty, or on any invalid input of
        :func:`recbias_tutorial.estimators.user_values`.

    See Also
    --------
    summarise : estimates and bootstrap intervals from this table.
    per_model_mae : the paper's per-model MAE from this table.

    Examples
    --------
    >>> log = pd.DataFrame({"user": [0, 1], "item": [0, 1], "rating": 5.0})
    >>> protocols = snips_protocols(log, log, train=log, n_items=2, gammas={"S": 2.0})
    >>> user_table({"m": np.eye(2)}, protocols, exclude=None, metrics=["recall"], k=1)["value"].tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    check_mapping(protocols, "protocols", "(test set, propensity, estimator)")
    metrics = tuple(check_choice(m, "metrics", GAINS) for m in check_names(metrics, "metrics"))
    parts = []
    for name, matrix in named_items(scores, "scores"):
        for metric in metrics:
            for label, (test, propensity, estimator) in protocols.items():
                v = user_values(matrix, test, propensity, estimator=estimator, metric=metric,
                                k=k, exclude=exclude)
                parts.append(pd.DataFrame({"model": name, "metric": metric, "estimator": label,
                                           "user": v.index.to_numpy(), "value": v.to_numpy()}))
        del matrix  # with an iterator, the caller's matrix is released as the loop goes on
    return pd.concat(parts, ignore_index=True)


def same_users(heldout: pd.DataFrame, truth: pd.DataFrame, *,
               threshold: float = 4.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Restrict both test sets to the users with a relevant item in each.

    AOA, SNIPS and the truth average over the users with at least one relevant test item;
    restricting both frames to the users that qualify in both makes the estimates and the
    truth means over the same users.

    Parameters
    ----------
    heldout, truth : pandas.DataFrame
        Feedback with ``user``, ``item`` and ``rating``.
    threshold : float, default 4.0
        A test item is relevant when ``rating >= threshold``.

    Returns
    -------
    (heldout, truth) : tuple of pandas.DataFrame
        The rows of the common users, with fresh indexes.

    Raises
    ------
    ValueError
        If a frame lacks a column, or no user has a relevant item in both.

    See Also
    --------
    per_model_mae : per-user errors over these users.

    Examples
    --------
    >>> a = pd.DataFrame({"user": [0, 1, 2], "item": 0, "rating": [5.0, 5.0, 1.0]})
    >>> b = pd.DataFrame({"user": [1, 2, 3], "item": 1, "rating": [4.0, 5.0, 5.0]})
    >>> [f["user"].tolist() for f in same_users(a, b)]
    [[1], [1]]
    """
    check_frame(heldout, "heldout", ["user", "item", "rating"])
    check_frame(truth, "truth", ["user", "item", "rating"])
    threshold = check_real(threshold, "threshold")
    users = np.intersect1d(heldout.loc[heldout["rating"] >= threshold, "user"],
                           truth.loc[truth["rating"] >= threshold, "user"])
    if len(users) == 0:
        raise ValueError("heldout and truth have no user with a relevant item in both")
    return (heldout[heldout["user"].isin(users)].reset_index(drop=True),
            truth[truth["user"].isin(users)].reset_index(drop=True))


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
    from ..._result_cache import cached_table

    if not isinstance(data, FeedbackData) or data.mar is None:
        raise ValueError("data must be a FeedbackData with randomly exposed (mar) feedback "
                         "as the truth")
    check_mapping(models, "models", "unfitted model")
    seed = check_int(seed, "seed", low=0)
    gammas = {f"SNIPS γ={g:.1f}": g for g in GAMMAS} if gammas is None else gammas
    gammas = _check_gammas(gammas, reserved=("MAR truth", "AOA"), allow_aoa=True)
    metrics = tuple(check_choice(m, "metrics", GAINS) for m in check_names(metrics, "metrics"))
    k = check_int(k, "k")
    train_share = check_real(train_share, "train_share", low=0.0, high=1.0, low_open=True,
                             high_open=True)
    arguments = dict(seed=seed, gammas=gammas, metrics=metrics, k=k, train_share=train_share)

    def compute() -> pd.DataFrame:
        from ...models import iter_scores  # Cornac is imported only when models are fitted

        train, held = random_split(data.mnar, (train_share, 1.0 - train_share), seed=seed)
        held, truth = same_users(held, drop_seen(data.mar, train), threshold=data.threshold)
        protocols = snips_protocols(held, truth, train=train, n_items=data.n_items,
                                       gammas=gammas)
        scores = iter_scores(copy.deepcopy(dict(models)), train, n_users=data.n_users,
                             n_items=data.n_items, seed=seed, progress=False)
        return user_table(scores, protocols, exclude=train, metrics=metrics, k=k)

    # models=: keyed by their pre-fit state (a model its parameters do not describe: no caching)
    return cached_table("yang2018.split_user_table", data, arguments, compute, cache=cache,
                        models=models)
