r"""The form of the paper's Yahoo! R3 table: per-model MAE, one split or several (private).

Re-exported by :mod:`recbias_tutorial.replications.yang2018`; import it from there.
:func:`per_model_mae` reads one :func:`user_table` the way the paper's table
(:data:`PAPER_MAE_RECALL`) reports it, and :func:`mae_over_splits` runs the whole protocol
(:func:`split_user_table`) once per split seed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from ..._validation import (check_column_name, check_finite_column, check_frame, check_seeds,
                            check_unique_rows)
from ...data import FeedbackData
from ._protocol import GAMMAS, _gamma_labels, split_user_table


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
        If ``per_user`` lacks a column, holds a value that is not a finite number or a user's
        row twice, has no rows for ``truth``, or a model has no user with every estimate.

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
    check_column_name(truth, "truth")
    check_unique_rows(per_user, "per_user", ["model", "metric", "estimator", "user"])
    check_finite_column(per_user, "per_user", "value")
    if not (per_user["estimator"] == truth).any():
        raise ValueError(f"per_user has no rows for the truth estimator {truth!r}")
    order = [e for e in dict.fromkeys(per_user["estimator"]) if e != truth]
    rows = []
    for (metric, model), part in per_user.groupby(["metric", "model"], sort=False):
        wide = part.pivot(index="user", columns="estimator", values="value").dropna()
        if wide.empty:
            raise ValueError(f"per_user: model {model!r} ({metric}) has no user with a value of "
                             "every estimator, the truth included: its MAE would be NaN")
        row = {"metric": metric, "model": model, "users": len(wide)}
        row.update({e: float((wide[e] - wide[truth]).abs().mean()) for e in order})
        rows.append(row)
    return pd.DataFrame(rows).set_index(["metric", "model"])[order + ["users"]]


def mae_over_splits(models: Mapping[str, Any], data: FeedbackData, *, seeds: Sequence[int],
                    gammas: Sequence[float] = GAMMAS,
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
        Columns ``seed``, ``metric``, ``model``, ``AOA``, ``SNIPS γ=…`` and ``users``;
        ``attrs["cached"]`` says whether every split was read back from the cache.

    Raises
    ------
    ValueError
        If ``seeds`` is empty or repeats a seed, ``gammas`` holds a number not above -1 (or
        two with one label), ``data`` has no MAR part, ``train_share`` is not in (0, 1), or
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
    seeds = check_seeds(seeds)
    if getattr(data, "mar", None) is None:
        raise ValueError("data must have randomly exposed (mar) feedback as the truth")
    labels = _gamma_labels(gammas)
    frames, cached = [], []
    for seed in seeds:
        users = split_user_table(models, data, seed=seed, gammas=labels, metrics=metrics, k=k,
                                 train_share=train_share, cache=cache)
        cached.append(bool(users.attrs.get("cached")))
        frames.append(per_model_mae(users).reset_index().assign(seed=seed))
    out = pd.concat(frames, ignore_index=True)
    out = out[["seed"] + [c for c in out.columns if c != "seed"]]
    out.attrs["cached"] = all(cached)  # every split read back from the on-disk cache
    return out
