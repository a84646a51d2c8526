r"""The course's own statistics on Yang et al.'s protocol (private; labelled as ours).

Re-exported by :mod:`recbias_tutorial.replications.yang2018`: :func:`estimate_models` and
:func:`summarise` (each model's estimate under every protocol, with a percentile bootstrap over
users), :func:`agreement_table` (per estimator, MAE over the models and Kendall's tau of
their ranking against the truth's) and :func:`course_models` (the course's seven recommenders,
shared by chapter 2 and ``make replicate``). The intervals, this summary and the models are the
course's; the paper's per-model MAE is :func:`per_model_mae`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ..._validation import (check_column_name, check_finite_column, check_frame, check_mapping,
                            check_real, check_unique_rows)
from ...stats import kendall_tau, user_bootstrap

# snips_protocols: for the example of estimate_models (a doctest runs in this module's names)
from ._protocol import Protocol, snips_protocols, user_table  # noqa: F401


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
    check_finite_column(per_user, "per_user", "value")
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
    check_column_name(truth, "truth")
    if not (results["estimator"] == truth).any():
        raise ValueError(f"results has no rows for the truth estimator {truth!r}")
    check_unique_rows(results, "results", ["model", "metric", "estimator"])
    n_models = results.groupby("metric", sort=False)["model"].nunique()
    if (n_models < 2).any():
        raise ValueError(f"results must hold at least 2 models per metric to rank them, got "
                         f"{int(n_models.min())} for metric {n_models.idxmin()!r}")
    names = {} if metric_names is None else dict(check_mapping(metric_names, "metric_names",
                                                                 "display name"))
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


def course_models(*, threshold: float = 4.0) -> dict:
    """The course's seven recommenders for Yang et al.'s protocol, unfitted and seeded.

    MostPop, PosPop (number of relevant training ratings) and AvgRating (mean training rating)
    as non-personalised baselines, and Cornac's BPR, PMF, MF and NMF with small fixed
    hyper-parameters and ``seed=1``, chosen for speed, not for accuracy. These are the
    course's models, not the paper's (its Yahoo! table has U-CML, A-CML, BPR and PMF; only
    BPR and PMF share a name, not their settings). Chapter 2 and ``make replicate`` both
    take them from here, so the stored full-scale run and the page fit the same models.

    Parameters
    ----------
    threshold : float, default 4.0
        PosPop's relevance threshold (a rating is relevant when ``rating >= threshold``).

    Returns
    -------
    dict
        Name -> fresh Cornac-style model, in the order MostPop, PosPop, AvgRating, BPR, PMF,
        MF, NMF. Each call builds new objects (Cornac fits in place).

    Raises
    ------
    ValueError
        If ``threshold`` is not a finite number.
    ImportError
        If Cornac is not installed.

    See Also
    --------
    split_user_table : fits deep copies of these models on one split.
    mae_over_splits : the per-model MAE over several splits.

    Examples
    --------
    >>> models = course_models()
    >>> list(models), models["PosPop"].threshold
    (['MostPop', 'PosPop', 'AvgRating', 'BPR', 'PMF', 'MF', 'NMF'], 4.0)
    """
    threshold = check_real(threshold, "threshold")
    from ...models import AvgRating, PosPop  # first: it imports Cornac without the tqdm notice

    import cornac

    return {
        "MostPop": cornac.models.MostPop(),
        "PosPop": PosPop(threshold=threshold),
        "AvgRating": AvgRating(),
        "BPR": cornac.models.BPR(k=10, max_iter=50, learning_rate=0.01, lambda_reg=0.01, seed=1),
        "PMF": cornac.models.PMF(k=10, max_iter=50, learning_rate=0.001, lambda_reg=0.001,
                                 variant="linear", seed=1),
        "MF": cornac.models.MF(k=10, max_iter=20, learning_rate=0.01, lambda_reg=0.02, seed=1),
        "NMF": cornac.models.NMF(k=10, max_iter=50, seed=1),
    }
