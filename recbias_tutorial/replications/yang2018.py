r"""Unbiased offline evaluation with popularity propensities (Yang et al., RecSys 2018).

The paper estimates each model's metric on the MAR (randomly exposed) truth from logged held-out
feedback, once by Average-Over-All and once by SNIPS with popularity propensities
:math:`p_i \propto n_i^{(\gamma+1)/2}` over a grid of :math:`\gamma`, and judges the estimators
by their error against the truth. This module runs that comparison for any set of scored models:

* :func:`snips_protocols` — the test sets, propensities and estimators of one comparison;
* :func:`estimate_models` — every model under every protocol, with user-bootstrap intervals;
* :func:`agreement_table` — per estimator, MAE against the truth and Kendall's tau of the model
  ranking against the truth's;
* :func:`same_users` — restrict the logged test set and the truth to the users present in both;
* :func:`user_table` / :func:`per_model_mae` — per-user values of every protocol, and per model
  the mean absolute error of the per-user estimates against the per-user truth, the form of the
  paper's table (:data:`PAPER_MAE_RECALL`);
* :func:`split_user_table` / :func:`mae_over_splits` — the whole protocol on a dataset (split,
  fit, evaluate) for one split seed or several, kept in the on-disk cache.

The exponent :math:`\gamma` is, in the paper, the popularity exponent of the serving policy,
:math:`P^{\text{select}}_i \propto (n^*_i)^\gamma` (Steck 2011), "estimated from known online
content serving policy"; the two-step assumption :math:`P_i = P^{\text{select}}_i
P^{\text{interact}|\text{select}}_i` with preferences unaffected by presentation then gives
:math:`p_i \propto (n^*_i)^{(\gamma+1)/2}`. Without the serving policy, :data:`GAMMAS` is a
sensitivity grid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._validation import (check_frame, check_mapping, check_names, check_real,
                           named_items)
from ..estimators import user_values
from ..propensity import popularity_propensity
from ..stats import kendall_tau, user_bootstrap

__all__ = ["GAMMAS", "PAPER_MAE_RECALL", "agreement_table", "estimate_models", "mae_over_splits",
           "per_model_mae", "same_users", "snips_protocols", "split_user_table", "summarise",
           "user_table"]

#: The sensitivity grid of the popularity exponent gamma used by the paper.
GAMMAS: tuple[float, ...] = (1.5, 2.0, 2.5, 3.0)

#: The paper's Yahoo! R3 table: "Measuring bias in recommender evaluation (Yahoo! music rating
#: dataset) — Mean Absolute Error (MAE), Recall", per model (rows) and estimator (columns: AOA,
#: then SNIPS at gamma = 1.5, 2.0, 2.5, 3.0). Source: Yang et al., RecSys 2018, talk slides
#: (/work/shared/papers/002_*.txt, first rendering of the slide; the second rendering of the
#: same slide is garbled by the slide animation and is not used). U-CML / A-CML are
#: collaborative metric learning variants; BPR and PMF as usual.
PAPER_MAE_RECALL: pd.DataFrame = pd.DataFrame(
    [[0.401, 0.270, 0.260, 0.253, 0.248],
     [0.399, 0.274, 0.264, 0.258, 0.253],
     [0.380, 0.275, 0.268, 0.258, 0.258],
     [0.386, 0.267, 0.268, 0.258, 0.248]],
    index=pd.Index(["U-CML", "A-CML", "BPR", "PMF"], name="model"),
    columns=["AOA", "SNIPS γ=1.5", "SNIPS γ=2.0", "SNIPS γ=2.5", "SNIPS γ=3.0"])

Protocol = tuple[pd.DataFrame, Any, str]  # (test set, propensity or None, estimator name)


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
        SNIPS variants, e.g. ``{"SNIPS γ=2.0": 2.0}``.
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
        If ``gammas`` is empty or a gamma is not a number above -1, or on bad ``train`` /
        ``n_items`` (see :func:`recbias_tutorial.propensity.popularity_propensity`).

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
    check_mapping(gammas, "gammas", "gamma")
    out: dict[str, Protocol] = {truth_label: (truth, None, "aoa"), "AOA": (heldout, None, "aoa")}
    for label, gamma in gammas.items():
        out[label] = (heldout, popularity_propensity(train, n_items, gamma=gamma), "snips")
    return out


def estimate_models(scores: Mapping[str, np.ndarray] | Iterable[tuple[str, np.ndarray]],
                    protocols: Mapping[str, Protocol], *, exclude: pd.DataFrame | None,
                    seed: int | np.random.Generator, metrics: Iterable[str] = ("recall", "auc"),
                    k: int = 10) -> pd.DataFrame:
    """Every model under every protocol, with a percentile-bootstrap interval over users.

    Parameters
    ----------
    scores : mapping name -> score matrix, or iterable of ``(name, scores)``
        The models (an iterator such as :func:`recbias_tutorial.models.iter_scores` keeps one
        score matrix in memory at a time).
    protocols : mapping label -> (test set, propensity or None, estimator)
        E.g. from :func:`snips_protocols`.
    exclude : pandas.DataFrame or None
        Pairs removed from the candidates (the training log).
    seed : int or numpy.random.Generator
        Seed of each bootstrap (the same for every cell, so intervals are comparable).
    metrics : iterable of str, default ("recall", "auc")
        Gains of :func:`recbias_tutorial.estimators.aoa` (``recall``, ``dcg``, ``auc``).
    k : int, default 10
        Cut-off.

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``metric``, ``estimator``, ``value``, ``low``, ``high`` and
        ``users`` (the users averaged over).

    Raises
    ------
    ValueError
        If ``protocols`` is empty, or on an invalid input of
        :func:`recbias_tutorial.estimators.user_values`, or a cell has fewer than two users.

    See Also
    --------
    agreement_table : MAE and Kendall's tau of each estimator against the truth.
    recbias_tutorial.estimators.bootstrap_ci : one cell of the table.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> log = pd.DataFrame({"user": np.arange(20), "item": rng.integers(0, 5, 20), "rating": 5.0})
    >>> protocols = snips_protocols(log, log, train=log, n_items=5, gammas={"SNIPS": 2.0})
    >>> out = estimate_models({"random": rng.random((20, 5))}, protocols, exclude=None, seed=0,
    ...                       metrics=["recall"], k=2)
    >>> out[["estimator", "value"]].round(2).to_dict("list")
    {'estimator': ['MAR truth', 'AOA', 'SNIPS'], 'value': [0.5, 0.5, 0.5]}
    """
    per_user = user_table(scores, protocols, exclude=exclude, metrics=metrics, k=k)
    return summarise(per_user, seed=seed)


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
    metrics = tuple(check_names(metrics, "metrics"))
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


def summarise(per_user: pd.DataFrame, *, seed: int | np.random.Generator,
              n_resamples: int = 1000) -> pd.DataFrame:
    """Mean and percentile-bootstrap interval over users of each (model, metric, estimator).

    Parameters
    ----------
    per_user : pandas.DataFrame
        Output of :func:`user_table`.
    seed : int or numpy.random.Generator
        Seed of each bootstrap (the same for every cell, so intervals are comparable).
    n_resamples : int, default 1000
        Bootstrap resamples (as :func:`recbias_tutorial.estimators.bootstrap_ci`).

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``metric``, ``estimator``, ``value``, ``low``, ``high``, ``users``.

    Raises
    ------
    ValueError
        If ``per_user`` lacks a column, or a cell has fewer than two users.

    See Also
    --------
    user_table : the input.

    Examples
    --------
    >>> t = pd.DataFrame({"model": "m", "metric": "recall", "estimator": "AOA",
    ...                   "user": [0, 1, 2], "value": [0.0, 1.0, 1.0]})
    >>> summarise(t, seed=0)[["value", "users"]].round(3).to_dict("list")
    {'value': [0.667], 'users': [3]}
    """
    check_frame(per_user, "per_user", ["model", "metric", "estimator", "user", "value"])
    values = pd.to_numeric(per_user["value"], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise ValueError(f"per_user.value has {int((~np.isfinite(values)).sum())} NaN, infinite "
                         "or non-numeric values: a user without a value must be left out, "
                         "not counted")
    if per_user.duplicated(["model", "metric", "estimator", "user"]).any():
        raise ValueError("per_user has a (model, metric, estimator, user) row twice: tables of "
                         "different runs were mixed; keep one row per user and cell")
    cells = list(per_user.groupby(["model", "metric", "estimator"], sort=False))
    if any(len(part) < 2 for _, part in cells):
        raise ValueError("per_user: every cell needs at least two users to bootstrap")
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        # an int seed draws the same resamples for every cell of a size: one call per size,
        # its columns resampled together, gives each cell's interval exactly
        by_size: dict[int, list[int]] = {}
        for j, (_, part) in enumerate(cells):
            by_size.setdefault(len(part), []).append(j)
        cis = [None] * len(cells)
        for members in by_size.values():
            matrix = np.column_stack([cells[j][1]["value"].to_numpy() for j in members])
            ci = user_bootstrap(matrix, seed=seed, n_resamples=n_resamples)
            for col, j in enumerate(members):
                cis[j] = ci.iloc[[col]]
    else:  # a Generator moves on between cells
        cis = [user_bootstrap(part["value"].to_numpy(), seed=seed, n_resamples=n_resamples)
               for _, part in cells]
    rows = [{"model": model, "metric": metric, "estimator": est,
             "value": float(ci["estimate"].iloc[0]), "low": float(ci["low"].iloc[0]),
             "high": float(ci["high"].iloc[0]), "users": len(part)}
            for ((model, metric, est), part), ci in zip(cells, cis)]
    return pd.DataFrame(rows, columns=["model", "metric", "estimator", "value", "low", "high",
                                       "users"])


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


def per_model_mae(per_user: pd.DataFrame, *, truth: str = "MAR truth") -> pd.DataFrame:
    r"""Per model and metric: mean absolute error of the per-user estimates against the truth.

    For each model, metric and estimator, the mean over the users present in both of
    :math:`|\hat R_u - R_u|`, where :math:`\hat R_u` is the user's term of the estimator on the
    logged data and :math:`R_u` the user's AOA on the randomly exposed truth. The slides of
    Yang et al. give one MAE per model and estimator (:data:`PAPER_MAE_RECALL`) without
    defining it; an MAE *per model* has to average over something within the model, and
    users are the only unit the protocol has, so this is our reading, not the paper's words.

    Parameters
    ----------
    per_user : pandas.DataFrame
        Output of :func:`user_table`.
    truth : str, default "MAR truth"
        The estimator label holding the truth.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(metric, model)``, one column per estimator (truth excluded), plus
        ``users`` (number of users in common).

    Raises
    ------
    ValueError
        If ``per_user`` lacks a column or has no rows for ``truth``.

    See Also
    --------
    same_users : make the estimates and the truth cover the same users.

    Examples
    --------
    >>> t = pd.DataFrame({"model": "m", "metric": "recall",
    ...                   "estimator": ["MAR truth"] * 2 + ["AOA"] * 2,
    ...                   "user": [0, 1, 0, 1], "value": [1.0, 0.0, 0.5, 0.5]})
    >>> per_model_mae(t).to_dict("index")
    {('recall', 'm'): {'AOA': 0.5, 'users': 2}}
    """
    check_frame(per_user, "per_user", ["model", "metric", "estimator", "user", "value"])
    if not (per_user["estimator"] == truth).any():
        raise ValueError(f"per_user has no rows for the truth estimator {truth!r}")
    order = [e for e in dict.fromkeys(per_user["estimator"]) if e != truth]
    rows = []
    for (metric, model), part in per_user.groupby(["metric", "model"], sort=False):
        wide = part.pivot(index="user", columns="estimator", values="value").dropna()
        row = {"metric": metric, "model": model, "users": len(wide)}
        row.update({e: float((wide[e] - wide[truth]).abs().mean()) for e in order})
        rows.append(row)
    return pd.DataFrame(rows).set_index(["metric", "model"])[order + ["users"]]


def agreement_table(results: pd.DataFrame, *, truth: str = "MAR truth",
                    metric_names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Per estimator and metric: MAE against the truth and Kendall's tau of the model rankings.

    Parameters
    ----------
    results : pandas.DataFrame
        Output of :func:`estimate_models`.
    truth : str, default "MAR truth"
        The estimator label holding the truth.
    metric_names : mapping, optional
        Display names of the metrics, e.g. ``{"recall": "Recall@10"}``.

    Returns
    -------
    pandas.DataFrame
        Indexed by estimator (in the order of ``results``, truth excluded), with two-level
        columns ``(metric, "MAE" | "Kendall τ" | "p-value")``. The MAE here is the mean
        absolute error of the models' estimates over models (the course's summary); the
        paper's MAE is one per model, see :func:`per_model_mae`.

    Raises
    ------
    ValueError
        If ``results`` lacks a column or has no rows for ``truth``.

    See Also
    --------
    estimate_models : the input.
    recbias_tutorial.stats.kendall_tau : the rank statistic.

    Examples
    --------
    >>> res = pd.DataFrame({"model": list("abcabc"), "metric": "recall",
    ...                     "estimator": ["MAR truth"] * 3 + ["AOA"] * 3,
    ...                     "value": [0.1, 0.2, 0.3, 0.2, 0.3, 0.4]})
    >>> agreement_table(res).round(3).to_dict("index")
    {'AOA': {('recall', 'Kendall τ'): 1.0, ('recall', 'MAE'): 0.1, ('recall', 'p-value'): 0.333}}
    """
    check_frame(results, "results", ["model", "metric", "estimator", "value"])
    if not (results["estimator"] == truth).any():
        raise ValueError(f"results has no rows for the truth estimator {truth!r}")
    names = dict(metric_names or {})
    order = [e for e in dict.fromkeys(results["estimator"]) if e != truth]
    rows = []
    for metric, part in results.groupby("metric", sort=False):
        table = part.pivot(index="model", columns="estimator", values="value")
        for est in order:
            tau, p = kendall_tau(table[truth], table[est])
            rows.append({"metric": names.get(metric, metric), "estimator": est,
                         "MAE": float((table[est] - table[truth]).abs().mean()),
                         "Kendall τ": tau, "p-value": p})
    out = pd.DataFrame(rows).pivot(index="estimator", columns="metric")
    return out.reorder_levels([1, 0], axis=1).sort_index(axis=1).reindex(order)


from ._yang2018_protocol import mae_over_splits, split_user_table  # noqa: E402  (they use the above)
