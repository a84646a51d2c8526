"""The authors' models, runs over splits and negative draws, and their summary (private).

Re-exported by :mod:`recbias_tutorial.replications.yang2018`: :func:`authors_models` and
:func:`pmf_training` (the slides' four models with the authors' settings where the library
has them), :func:`authors_split_table`
(one split: split, fits, every reading of :data:`LADDER` for every negative draw) and
:func:`mae_summary` (mean and spread over splits x draws, the form of the slides' table).
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._params import Interval, Options, Seed, declare
from ..._validation import (as_generator, check_feedback, check_finite_column, check_frame,
                            check_int, check_mapping, check_seeds, check_unique_rows, seed_int)
from ...data import FeedbackData
from ._authors import LADDER, Reading, _check_readings, _pair_mask, authors_split
from ._grid import _grid_rows
from ._protocol import GAMMAS, _gamma_labels
from ._sides import evaluate_readings


@declare(n_items=Interval(int, 1), seed=Seed())
def pmf_training(train: pd.DataFrame, *, n_items: int, seed: int | np.random.Generator
                 ) -> pd.DataFrame:
    """``PointwiseSampler(pos_ratio=0.5)`` as one fixed draw: positives (1) + negatives (0).

    OpenRec's PMF sees batches of half positives and half (uniform training user, uniform
    item it has no training pair with) labelled 0, drawn afresh for every batch; Cornac's PMF
    fits a fixed rating table, so the negatives here are one draw of the same size.

    Raises
    ------
    ValueError
        If ``train`` is not a non-empty frame of distinct pairs with items in ``0..n_items-1``,
        a user of it has a training pair with every item (no negative can be drawn for it),
        or ``seed`` is not a non-negative int or a Generator.

    Examples
    --------
    >>> tr = pd.DataFrame({"user": [0, 1], "item": [0, 1], "rating": 5.0})
    >>> out = pmf_training(tr, n_items=30, seed=0)
    >>> out["rating"].value_counts().sort_index().tolist()  # duplicate draws are dropped
    [2, 2]
    """
    check_feedback(train, "train", n_items=n_items, require_rating=False)
    saturated = np.flatnonzero(np.bincount(train["user"].to_numpy(np.int64)) >= n_items)
    if len(saturated):
        raise ValueError(f"train: user {int(saturated[0])} has a training pair with every one of "
                         f"the n_items={n_items} items, so no negative can be drawn for it")
    rng = as_generator(seed)
    users = np.unique(train["user"].to_numpy())
    n_users = int(users.max()) + 1
    seen = _pair_mask(train, n_users, n_items)
    u = rng.choice(users, size=len(train))
    i = rng.integers(0, n_items, size=len(train))
    while (bad := seen[u, i]).any():
        i[bad] = rng.integers(0, n_items, size=int(bad.sum()))
    neg = pd.DataFrame({"user": u, "item": i, "rating": 0.0}).drop_duplicates(["user", "item"])
    pos = train[["user", "item"]].assign(rating=1.0)
    return pd.concat([pos, neg], ignore_index=True)


@declare(n_train=Interval(int, 1), n_iter=Interval(int, 1), batch_size=Interval(int, 1),
         seed=Seed())
def authors_models(*, n_train: int, n_iter: int = 10001, batch_size: int = 8000,
                   seed: int = 1) -> dict[str, Any]:
    """The slides' four models with the authors' settings where the library has them.

    ``U-CML`` / ``A-CML``: :class:`recbias_tutorial.models.CML` (numpy copy of OpenRec's CML /
    WCML: every setting). ``BPR``: Cornac BPR with ``k=50``, ``lambda_reg=0.001`` and as many
    epochs as ``n_iter`` batches of ``batch_size`` samples cover (Cornac trains by plain SGD, one
    sample at a time: no Adam, no batches). ``PMF``: Cornac PMF, ``variant="non_linear"``
    (sigmoid of the dot product fitted by squared error, OpenRec's ``PointwiseMSE`` with
    ``sigmoid=True``), ``k=50``, ``lambda_reg=0.001``, on :func:`pmf_training`'s table, epochs
    likewise (RMSProp, no item bias, no Adam).

    Raises
    ------
    ValueError
        If ``n_train``, ``n_iter`` or ``batch_size`` is not a positive int, or ``seed`` not a
        non-negative int or a Generator (a Generator gives one int seed, drawn from it).

    Examples
    --------
    >>> sorted(authors_models(n_train=100_000, n_iter=11))
    ['A-CML', 'BPR (authors)', 'PMF (authors)', 'U-CML']
    """
    import cornac

    from ...models import CML

    seed = seed_int(seed)
    epochs = int(np.ceil(n_iter * batch_size / max(n_train, 1)))
    return {
        "U-CML": CML(weighted=False, n_iter=n_iter, batch_size=batch_size, seed=seed),
        "A-CML": CML(weighted=True, n_iter=n_iter, batch_size=batch_size, seed=seed),
        "BPR (authors)": cornac.models.BPR(k=50, lambda_reg=0.001, max_iter=epochs, seed=seed,
                                           verbose=False, name="BPR (authors)"),
        "PMF (authors)": cornac.models.PMF(k=50, lambda_reg=0.001, max_iter=max(epochs // 2, 1),
                                           variant="non_linear", seed=seed, verbose=False,
                                           name="PMF (authors)"),
    }


#: Negatives sampled per user on the MNAR side: 200 in pmf/bpr_yahoo_val.py, 300 in the CML
#: notebook and wcml_yahoo_val.py; the course's models get the PMF/BPR scripts' 200.
N_NEGATIVES = {"U-CML": 300, "A-CML": 300}
DEFAULT_NEGATIVES = 200


def authors_split_table(models: Mapping[str, Any], data: FeedbackData, *, seed: int,
                        draws: Sequence[int] = range(5),
                        readings: Sequence[Reading] = LADDER,
                        gammas: Sequence[float] = GAMMAS, val_share: float = 0.2,
                        n_negatives: Mapping[str, int] | None = None,
                        grid: Sequence[Reading] = (),
                        grid_models: Collection[str] = ()) -> pd.DataFrame:
    """One split of Section 5 as the authors ran it, and every reading of ``readings``.

    :func:`~recbias_tutorial.replications.yang2018.authors_split` (seed ``seed``), each model
    fitted on the training positives (``PMF (authors)`` on
    :func:`~recbias_tutorial.replications.yang2018.pmf_training`'s table; model seed as
    built), then :func:`~recbias_tutorial.replications.yang2018.evaluate_readings` with
    ``n_negatives[model]`` sampled negatives (default 300 for U-CML and A-CML, as in the
    authors' CML scripts, else 200).

    Parameters
    ----------
    models : mapping name -> unfitted Cornac-style model
    data : FeedbackData
        With ``mnar`` and ``mar``.
    seed : int
        Split seed.
    draws : sequence of int, default range(5)
        Negative draws of the sampled readings.
    readings : sequence of Reading, default LADDER
    gammas : sequence of float, default GAMMAS
        SNIPS exponents (labelled ``SNIPS γ=…``); AOA is always included.
    val_share : float, default 0.2
    n_negatives : mapping name -> int, optional
    grid : sequence of Reading, default ()
        Further readings (e.g. :func:`reading_grid`) for the models of ``grid_models`` only,
        computed on arrays (:func:`grid_table` condenses their rows).
    grid_models : collection of str, default ()
        Names of ``models``.

    Returns
    -------
    pandas.DataFrame
        Columns ``seed``, ``model``, ``reading``, ``draw``, ``metric``, ``estimator``,
        ``quantity``, ``users``, ``value``.

    Raises
    ------
    ValueError
        If ``models`` is empty, ``seed`` is not a non-negative int, ``draws`` not distinct
        non-negative ints, ``readings`` not a non-empty sequence of Reading, ``gammas`` not
        numbers above -1 (two with one label), ``n_negatives`` not a mapping to
        non-negative ints, ``grid`` not a sequence of Reading (empty allowed),
        ``grid_models`` not a collection of names of ``models``, or on any error of the
        steps above.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> from recbias_tutorial.models import PosPop
    >>> t = authors_split_table({"PosPop": PosPop()}, rb.simulate(60, 40, seed=0), seed=0,
    ...                         draws=[0, 1], gammas=[2.0])
    >>> sorted(t["draw"].unique().tolist()), t["reading"].nunique()
    ([-1, 0, 1], 6)
    """
    from ...models import fit_scores

    check_mapping(models, "models", "unfitted model")
    seed = check_int(seed, "seed", low=0)
    draws = check_seeds(draws, "draws")
    readings = _check_readings(readings)
    if n_negatives is not None:
        check_mapping(n_negatives, "n_negatives", "number of sampled negatives")
        n_negatives = {name: check_int(n, f"n_negatives[{name!r}]", low=0)
                       for name, n in n_negatives.items()}
    n_negatives = {**N_NEGATIVES, **dict(n_negatives or {})}
    labels = _gamma_labels(gammas)
    if (isinstance(grid_models, (str, bytes)) or not isinstance(grid_models, Collection)
            or not set(grid_models) <= set(models)):
        raise ValueError(f"grid_models must be a collection of names of models, got "
                         f"{grid_models!r:.60}")
    grid = () if isinstance(grid, (tuple, list)) and not grid else _check_readings(grid, "grid")
    train, val, truth = authors_split(data, seed=seed, val_share=val_share)
    candidates: dict = {}  # the sampled candidate sets of this split, drawn once for all models
    frames = []
    for name, model in models.items():
        frame = (pmf_training(train, n_items=data.n_items, seed=seed)
                 if name == "PMF (authors)" else train)
        scores = fit_scores(copy.deepcopy(model), frame, n_users=data.n_users,
                            n_items=data.n_items, seed=seed)
        common = dict(n_items=data.n_items, threshold=data.threshold, gammas=labels,
                      n_negatives=n_negatives.get(name, DEFAULT_NEGATIVES), draws=draws,
                      seed=seed, candidates=candidates)
        out = evaluate_readings(scores, train, val, truth, readings=readings, **common)
        if grid and name in grid_models:
            out = pd.concat([out, _grid_rows(scores, train, val, truth, readings=grid,
                                             **common)], ignore_index=True)
        del scores
        frames.append(out.assign(seed=seed, model=name))
    out = pd.concat(frames, ignore_index=True)
    first = ["seed", "model", "reading", "draw"]
    return out[first + [c for c in out.columns if c not in first]]


@declare(quantity=Options(("mae", "estimate", "truth")))
def mae_summary(table: pd.DataFrame, *, reading: str, metric: str = "recall",
                quantity: str = "mae") -> pd.DataFrame:
    """Mean ± standard deviation over splits x draws of one reading: model x estimator.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`authors_split_table` rows (several seeds concatenated).
    reading : str
        Reading name.
    metric : str, default "recall"
    quantity : str, default "mae"
        ``mae``, ``estimate`` or ``truth``.

    Returns
    -------
    pandas.DataFrame
        Index ``model``; columns ``(estimator, "mean" | "sd" | "runs")``.

    Raises
    ------
    ValueError
        If ``table`` is not a frame of :func:`authors_split_table` rows (a missing column, a
        value that is not a finite number, a run's row twice), ``quantity`` is unknown, or no
        row matches.

    Examples
    --------
    >>> t = pd.DataFrame({"seed": [0, 1], "model": "m", "reading": "r", "draw": 0,
    ...                   "metric": "recall", "estimator": "AOA", "quantity": "mae",
    ...                   "users": 5, "value": [0.1, 0.3]})
    >>> mae_summary(t, reading="r").round(3).to_dict("index")
    {'m': {('AOA', 'mean'): 0.2, ('AOA', 'sd'): 0.141, ('AOA', 'runs'): 2.0}}
    """
    keys = ["seed", "model", "reading", "draw", "metric", "estimator", "quantity"]
    check_frame(table, "table", keys + ["value"])
    check_finite_column(table, "table", "value")
    check_unique_rows(table, "table", keys)
    part = table[(table["reading"] == reading) & (table["metric"] == metric)
                 & (table["quantity"] == quantity)]
    if part.empty:
        raise ValueError(f"table has no {quantity} rows for reading {reading!r}, metric {metric!r}")
    models = list(dict.fromkeys(part["model"]))
    estimators = list(dict.fromkeys(part["estimator"]))
    g = part.groupby(["model", "estimator"], sort=False)["value"]
    out = pd.concat({"mean": g.mean(), "sd": g.std(ddof=1), "runs": g.size().astype(float)},
                    axis=1).unstack("estimator")
    out = out.swaplevel(axis=1).reindex(columns=pd.MultiIndex.from_product(
        [estimators, ["mean", "sd", "runs"]]))
    return out.loc[models]


def snips_reduction(summary: pd.DataFrame) -> pd.DataFrame:
    """Per model: the relative MAE change of each SNIPS column against AOA (negative = cut).

    Raises
    ------
    ValueError
        If ``summary`` is not a :func:`mae_summary` table with an AOA column, or an AOA MAE is
        0 or not a finite number.

    Examples
    --------
    >>> cols = pd.MultiIndex.from_product([["AOA", "SNIPS γ=2.0"], ["mean"]])
    >>> s = pd.DataFrame([[0.4, 0.26]], index=pd.Index(["m"], name="model"), columns=cols)
    >>> snips_reduction(s).round(2).to_dict("index")
    {'m': {'SNIPS γ=2.0': -0.35}}
    """
    if not isinstance(summary, pd.DataFrame) or summary.columns.nlevels != 2 \
            or ("AOA", "mean") not in summary.columns:
        raise ValueError("summary must be a mae_summary table (columns (estimator, 'mean' | "
                         "'sd' | 'runs'), with AOA)")
    means = summary.xs("mean", axis=1, level=1)
    aoa = check_finite_column(means, "summary", "AOA")
    if (aoa == 0).any():
        raise ValueError(f"summary: the AOA MAE of {means.index[aoa == 0][0]!r} is 0, so a "
                         "relative change is undefined")
    snips = [c for c in means.columns if c != "AOA"]
    return means[snips].div(means["AOA"], axis=0) - 1.0

