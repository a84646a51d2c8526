r"""The grid of readings searched against the slides, and the checks of what it found (private).

Re-exported by :mod:`recbias_tutorial.replications.yang2018`; import it from there.

* :func:`grid_table` — per split, model and reading of :func:`reading_grid`, the means over
  the negative draws of the AOA estimate, the truth and every estimator's MAE (as stored by
  ``make replicate`` beside the named readings);
* :func:`grid_search` — per reading and slide model, the three properties of the slides'
  table: the AOA MAE at the slides' level, the AOA estimate **above** the truth (the slides:
  "the accuracy of recommending popular items is a significant overestimation"), and SNIPS
  cutting the MAE by the slides' share at every gamma; :func:`grid_family` — the readings
  that pass on a search model (BPR, PMF), and whether they pass on the held-out check models
  (U-CML, A-CML);
* :func:`direction_test` — per named reading and model, is the AOA estimate above the truth
  (over-estimation) or below it, run by run.

The search models are the ones the course's audit searched the grid with; the check models
were fitted after it and not used to choose: a reading found by searching is judged on them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, MutableMapping, Sequence

import numpy as np
import pandas as pd

from ..._schema import Column
from ..._stored_schemas import schema_of
from ..._validation import check_choice, check_frame, check_names, check_real
from ._authors import Reading, _check_readings
from ._paper import PAPER_MAE_RECALL
from ._sides import _reading_draws, _reading_sides, _side_terms
from ._readings import AUTHORS, SLIDES, grid_name, reading_grid

#: The slides' model names -> the stored run's (yang2018.authors_models).
SLIDE_MODELS = {"U-CML": "U-CML", "A-CML": "A-CML", "BPR": "BPR (authors)",
                "PMF": "PMF (authors)"}
#: The models the grid was searched with, and the models that only check what it found.
SEARCH_MODELS: tuple[str, ...] = ("BPR", "PMF")
CHECK_MODELS: tuple[str, ...] = ("U-CML", "A-CML")
#: The fields that key a grid reading (a Reading's, without its name).
GRID_KEY = ["estimate", "truth", "k", "k_truth", "users", "mae"]
#: The runs :func:`direction_test` reads (a stored ``yahoo_r3`` table, ``users`` optional).
_RUNS = dataclasses.replace(schema_of("yang2018", "yahoo_r3"), others=Column("auto"),
                            required=("seed", "model", "reading", "draw", "metric", "estimator",
                                      "quantity", "value"))
_RUNS = dataclasses.replace(_RUNS, columns={**_RUNS.columns, "value": Column("float")})


def _grid_rows(scores: np.ndarray, train: pd.DataFrame, val: pd.DataFrame, truth: pd.DataFrame,
               *, n_items: int, threshold: float, readings: Sequence[Reading],
               gammas: Mapping[str, float], n_negatives: int, draws: Iterable[int], seed: int,
               candidates: MutableMapping | None = None) -> pd.DataFrame:
    """:func:`evaluate_readings`' rows, computed on arrays (the grid has hundreds of readings).

    Same definitions as :func:`reading_rows` (tests check the two agree to 1e-12).
    """
    side = _side_terms(scores, train, val, truth, n_items=n_items, threshold=threshold,
                       readings=readings, gammas=gammas, n_negatives=n_negatives, seed=seed,
                       candidates=candidates)
    draws = list(draws)
    parts: dict[str, list] = {k: [] for k in ("reading", "draw", "metric", "estimator",
                                              "quantity", "users", "value")}
    columns = None
    for reading in readings:
        for draw in _reading_draws(reading, draws):
            est, tru = _reading_sides(side, reading, draw)
            if columns is None:
                columns = list(est.columns)
                metric_of = np.array([m for m, _ in columns])
                t_col = [list(tru.columns.get_level_values("metric")).index(m) for m in metric_of]
            e, t = est.to_numpy(), tru.to_numpy()[:, t_col]
            if reading.users == "common":
                _, ie, it = np.intersect1d(est.index.to_numpy(), tru.index.to_numpy(),
                                           assume_unique=True, return_indices=True)
                e, t = e[ie], t[it]
            e_mean, t_mean = e.mean(axis=0), t.mean(axis=0)
            mae = (np.abs(e - t).mean(axis=0) if reading.mae == "per_user"
                   else np.abs(e_mean - t_mean))
            n = len(columns)
            for quantity, value, users in (("estimate", e_mean, len(e)),
                                           ("truth", t_mean, len(t)), ("mae", mae, len(e))):
                parts["metric"].append(metric_of)
                parts["estimator"].append(np.array([c for _, c in columns]))
                parts["quantity"].append(np.repeat(quantity, n))
                parts["users"].append(np.repeat(users, n))
                parts["value"].append(value)
                parts["reading"].append(np.repeat(reading.name, n))
                parts["draw"].append(np.repeat(draw, n))
    return pd.DataFrame({k: np.concatenate(v) for k, v in parts.items()})


def grid_table(rows: pd.DataFrame, *, grid: Sequence[Reading] | None = None) -> pd.DataFrame:
    """The grid's rows, one per split, model, reading and metric: means over the draws.

    AUC has no cut-off, so its rows are kept once per MNAR / MAR candidates, users and MAE
    (``k = k_truth = 0``).

    Parameters
    ----------
    rows : pandas.DataFrame
        :func:`authors_split_table` rows (several splits concatenated) holding the grid's
        readings (``grid=``).
    grid : sequence of Reading, optional
        The grid (default :func:`reading_grid`); rows of other readings are ignored.

    Returns
    -------
    pandas.DataFrame
        Columns ``seed, model, metric``, the reading's fields (``estimate, truth, k,
        k_truth, users, mae``), ``draws`` (how many draws the means are over), ``AOA
        estimate``, ``AOA truth`` and ``MAE: <estimator>`` for AOA and every SNIPS gamma.

    Raises
    ------
    ValueError
        If ``rows`` lacks a column or holds no reading of the grid, or ``grid`` is not a
        non-empty sequence of :class:`Reading` with distinct names.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> from recbias_tutorial.models import PosPop
    >>> from recbias_tutorial.replications.yang2018 import authors_split_table
    >>> grid = reading_grid(ks=[1, 2])
    >>> rows = authors_split_table({"PosPop": PosPop()}, rb.simulate(60, 40, seed=0), seed=0,
    ...                            draws=[0, 1], gammas=[2.0], grid=grid, grid_models=["PosPop"])
    >>> t = grid_table(rows, grid=grid)
    >>> t["metric"].value_counts().to_dict(), int(t["draws"].max())
    ({'recall': 144, 'auc': 36}, 2)
    """
    rows = check_frame(rows, "rows", ["seed", "model", "reading", "draw", "metric", "estimator",
                                      "quantity", "value"])
    grid = reading_grid() if grid is None else _check_readings(grid, "grid")
    fields = pd.DataFrame([{"reading": r.name, **{f: getattr(r, f) for f in GRID_KEY}}
                           for r in grid])
    fields["k_truth"] = fields["k_truth"].fillna(fields["k"]).astype(int)
    part = rows[rows["reading"].isin(fields["reading"])
                & ((rows["quantity"] == "mae") | (rows["estimator"] == "AOA"))]
    if part.empty:
        raise ValueError("rows holds no reading of the grid (authors_split_table(grid=...))")
    label = np.where(part["quantity"] == "mae", "MAE: " + part["estimator"],
                     "AOA " + part["quantity"])
    wide = (part.assign(column=label)
            .pivot_table(index=["seed", "model", "reading", "metric"], columns="column",
                         values="value", aggfunc="mean", sort=False))
    draws = part.groupby(["seed", "model", "reading", "metric"], sort=False)["draw"].nunique()
    wide = wide.assign(draws=draws).reset_index().merge(fields, on="reading")
    auc = wide["metric"] == "auc"
    wide.loc[auc, ["k", "k_truth"]] = 0
    wide = wide.drop(columns="reading").drop_duplicates(
        ["seed", "model", "metric"] + GRID_KEY, keep="first")
    values = ["AOA estimate", "AOA truth"] + sorted(
        (c for c in wide.columns if c.startswith("MAE: ")), key=lambda c: (c != "MAE: AOA", c))
    return wide[["seed", "model", "metric"] + GRID_KEY + ["draws"] + values].reset_index(drop=True)


def grid_rows(table: pd.DataFrame, reading: Reading) -> pd.DataFrame:
    """The Recall rows of a grid table that hold one reading (the fields of :data:`GRID_KEY`).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`grid_table` or :func:`grid_search` (or any table with ``metric`` and the
        :data:`GRID_KEY` columns).
    reading : Reading
        A reading of :func:`reading_grid`'s kind: the authors' negative counts
        (``n_negatives`` None); its name is not looked at.

    Returns
    -------
    pandas.DataFrame
        The rows of ``table`` whose metric is ``recall`` and whose fields are the reading's
        (``k_truth`` spelled out: None means ``k``).

    Raises
    ------
    ValueError
        If ``table`` lacks a column, ``reading`` is not a :class:`Reading` or sets
        ``n_negatives`` (the grid keeps the authors' counts), or no row holds it.

    Examples
    --------
    >>> cols = {"metric": "recall", "estimate": "sampled", "truth": "full", "k": 10,
    ...         "k_truth": 10, "users": "own", "mae": "aggregate"}
    >>> t = pd.DataFrame([{**cols, "v": 1}, {**cols, "truth": "mar", "v": 2}])
    >>> grid_rows(t, SLIDES)["v"].tolist()
    [1]
    """
    table = check_frame(table, "table", ["metric", *GRID_KEY])
    if not isinstance(reading, Reading):
        raise ValueError(f"reading must be a Reading, got {reading!r:.60}")
    if reading.n_negatives is not None:
        raise ValueError(f"reading sets n_negatives={reading.n_negatives}: the grid keeps the "
                         "authors' negative counts")
    fields = {f: getattr(reading, f) for f in GRID_KEY}
    fields["k_truth"] = reading.k if reading.k_truth is None else reading.k_truth
    mask = np.logical_and.reduce([table[f] == v for f, v in fields.items()])
    out = table[mask & (table["metric"] == "recall")]
    if out.empty:
        raise ValueError(f"table holds no Recall row of the reading {reading.name!r} "
                         f"({grid_name(reading)})")
    return out


def grid_search(grid: pd.DataFrame, *, paper: pd.DataFrame | None = None, level: float = 0.05,
                cut: float = 0.10) -> pd.DataFrame:
    """Per reading and slide model: the three properties of the slides' table, and a verdict.

    Means over the splits of :func:`grid_table` (each split's value is a mean over its
    draws). A reading **passes** on a model when

    * **level**: its AOA MAE lies within ``level`` of the slides' (absolute);
    * **direction**: its AOA estimate is above its truth (the slides: over-estimation);
    * **cut**: at every gamma, SNIPS's relative change of the MAE against AOA lies within
      ``cut`` of the slides' own relative change (e.g. -0.31 against the slides' -0.31).

    Parameters
    ----------
    grid : pandas.DataFrame
        :func:`grid_table`.
    paper : pandas.DataFrame, optional
        The slides' table (default :data:`PAPER_MAE_RECALL`).
    level : float, default 0.05
    cut : float, default 0.10

    Returns
    -------
    pandas.DataFrame
        One row per reading (``metric`` and :data:`GRID_KEY`) and slide model: ``model``
        (the slides' name), ``role`` (``search`` or ``check``), ``splits``, ``AOA MAE``,
        ``paper AOA MAE``, ``AOA estimate``, ``AOA truth``, ``worst cut gap`` (the largest
        distance of a SNIPS change from the slides'), ``level``, ``direction``, ``cut`` and
        ``passes`` (booleans).

    Raises
    ------
    ValueError
        If ``grid`` lacks a column or holds no slide model, ``paper`` is not a table of the
        slides' models with an ``AOA`` column and one per SNIPS column of ``grid``, or on a
        bad ``level`` / ``cut``.

    Examples
    --------
    >>> cols = {"seed": 0, "metric": "recall", "estimate": "sampled", "truth": "full", "k": 10,
    ...         "k_truth": 10, "users": "own", "mae": "aggregate", "draws": 5}
    >>> g = pd.DataFrame([{**cols, "model": "PMF (authors)", "AOA estimate": 0.42,
    ...                    "AOA truth": 0.04, "MAE: AOA": 0.38, "MAE: SNIPS γ=2.0": 0.27}])
    >>> grid_search(g)[["model", "role", "level", "direction", "cut", "passes"]].to_dict("records")
    [{'model': 'PMF', 'role': 'search', 'level': True, 'direction': True, 'cut': True, 'passes': True}]
    """
    level = check_real(level, "level", low=0.0, low_open=True)
    cut = check_real(cut, "cut", low=0.0, low_open=True)
    grid = check_frame(grid, "grid", ["seed", "model", "metric", *GRID_KEY, "AOA estimate",
                                      "AOA truth", "MAE: AOA"])
    # typed and checked as stored: finite numbers, MAE >= 0, each run once (a run twice would
    # weigh twice in the means over runs)
    stored = schema_of("yang2018", "yahoo_r3_grid")
    grid = dataclasses.replace(stored, required=("seed", "model", "metric", *GRID_KEY,
                                                 "AOA estimate", "AOA truth", "MAE: AOA")
                               ).check(grid, "grid")
    paper = PAPER_MAE_RECALL if paper is None else paper
    ours = {v: k for k, v in SLIDE_MODELS.items()}
    part = grid[grid["model"].isin(list(ours))].assign(model=lambda d: d["model"].map(ours))
    if part.empty:
        raise ValueError(f"grid holds none of the slides' models ({', '.join(ours)})")
    snips = [c for c in part.columns if c.startswith("MAE: SNIPS")]
    if not isinstance(paper, pd.DataFrame):
        raise ValueError(f"paper must be a DataFrame (the slides' table), got "
                         f"{type(paper).__name__}")
    missing = sorted(set(part["model"]) - set(paper.index)) + sorted(
        {"AOA", *(c[len("MAE: "):] for c in snips)} - set(paper.columns))
    if missing:
        raise ValueError(f"paper lacks rows or columns the grid needs: {missing}")
    key = ["metric", *GRID_KEY, "model"]
    means = part.groupby(key, sort=False)[["AOA estimate", "AOA truth", "MAE: AOA", *snips]].mean()
    splits = part.groupby(key, sort=False)["seed"].nunique()
    slides = paper.loc[means.index.get_level_values("model")]
    ours_cut = means[snips].div(means["MAE: AOA"], axis=0) - 1.0
    paper_cut = slides[[c[len("MAE: "):] for c in snips]].div(slides["AOA"], axis=0) - 1.0
    gap = (ours_cut.to_numpy() - paper_cut.to_numpy())
    out = pd.DataFrame({
        "role": np.where(means.index.get_level_values("model").isin(SEARCH_MODELS), "search",
                         "check"),
        "splits": splits.to_numpy(), "AOA MAE": means["MAE: AOA"].to_numpy(),
        "paper AOA MAE": slides["AOA"].to_numpy(), "AOA estimate": means["AOA estimate"].to_numpy(),
        "AOA truth": means["AOA truth"].to_numpy(),
        "worst cut gap": np.abs(gap).max(axis=1) if snips else np.nan}, index=means.index)
    out["level"] = (out["AOA MAE"] - out["paper AOA MAE"]).abs() <= level
    out["direction"] = out["AOA estimate"] > out["AOA truth"]
    out["cut"] = out["worst cut gap"] <= cut
    out["passes"] = out["level"] & out["direction"] & out["cut"]
    return out.reset_index()


def grid_family(search: pd.DataFrame) -> pd.DataFrame:
    """The readings that pass on a search model, with their verdict on every slide model.

    Parameters
    ----------
    search : pandas.DataFrame
        :func:`grid_search`.

    Returns
    -------
    pandas.DataFrame
        One row per reading that passes on at least one search model: its ``metric`` and
        :data:`GRID_KEY` fields, then ``passes`` per slide model (columns in the slides'
        order), ``search models passed``, ``check models passed`` and ``slides' reading``
        (True for :data:`SLIDES`'s fields).

    Raises
    ------
    ValueError
        If ``search`` is not a :func:`grid_search` table.
    """
    search = check_frame(search, "search", ["metric", *GRID_KEY, "model", "role", "passes"])
    key = ["metric", *GRID_KEY]
    wide = search.pivot_table(index=key, columns="model", values="passes", aggfunc="first",
                              sort=False)
    wide = wide[[m for m in SLIDE_MODELS if m in wide.columns]].astype(bool)
    search_cols = [m for m in SEARCH_MODELS if m in wide.columns]
    check_cols = [m for m in CHECK_MODELS if m in wide.columns]
    wide["search models passed"] = wide[search_cols].sum(axis=1)
    wide["check models passed"] = wide[check_cols].sum(axis=1)
    family = wide[wide["search models passed"] > 0].reset_index()
    slides = {f: getattr(SLIDES, f) for f in GRID_KEY}
    slides["k_truth"] = SLIDES.k if SLIDES.k_truth is None else SLIDES.k_truth
    family["slides' reading"] = (family["metric"] == "recall") & np.logical_and.reduce(
        [family[f] == v for f, v in slides.items()])
    return family


def direction_test(table: pd.DataFrame, *, readings: Sequence[str] = (AUTHORS.name, SLIDES.name),
                   metric: str = "recall") -> pd.DataFrame:
    """Per reading and model: is the AOA estimate above the truth (over-estimation), run by run?

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`authors_split_table` rows (the stored run).
    readings : sequence of str, default (AUTHORS.name, SLIDES.name)
    metric : str, default "recall"

    Returns
    -------
    pandas.DataFrame
        Index ``(reading, model)``; columns ``estimate``, ``truth`` (means over runs),
        ``gap`` (mean of estimate - truth), ``gap sd``, ``runs``, ``runs over`` (runs whose
        estimate is above the truth) and ``direction``: ``over-estimation`` (every run
        above), ``under-estimation`` (every run below), ``equal`` (every estimate equals its
        truth) or ``mixed`` (anything else, e.g. some runs equal and some above).

    Raises
    ------
    ValueError
        If ``table`` lacks a column, holds a NaN or a run twice, or a run's estimate without
        its truth, ``readings`` is not a list of names, ``metric`` is not ``"recall"`` or
        ``"auc"``, or a reading has no rows.

    Examples
    --------
    >>> t = pd.DataFrame({"seed": [0, 0, 1, 1], "model": "m", "reading": "r", "draw": 0,
    ...                   "metric": "recall", "estimator": "AOA",
    ...                   "quantity": ["estimate", "truth"] * 2, "value": [0.4, 0.1, 0.5, 0.1]})
    >>> direction_test(t, readings=["r"])[["runs over", "direction"]].to_dict("records")
    [{'runs over': 2, 'direction': 'over-estimation'}]
    """
    table = check_frame(table, "table", ["seed", "model", "reading", "draw", "metric",
                                         "estimator", "quantity", "value"])
    # typed as stored; a NaN (which the pivot would drop) and a run stored twice (which the
    # pivot would average as if it were one) are refused, naming the table
    table = _RUNS.check(table, "table")
    readings = check_names(readings, "readings")
    metric = check_choice(metric, "metric", ("recall", "auc"))
    part = table[table["reading"].isin(readings) & (table["metric"] == metric)
                 & (table["estimator"] == "AOA") & table["quantity"].isin(["estimate", "truth"])]
    missing = sorted(set(readings) - set(part["reading"]))
    if missing:
        raise ValueError(f"readings: no {metric} rows for {missing}")
    runs = part.pivot_table(index=["reading", "model", "seed", "draw"], columns="quantity",
                            values="value", sort=False)
    half = [q for q in ("estimate", "truth") if q not in runs.columns]
    if half or runs[["estimate", "truth"]].isna().any().any():
        raise ValueError(f"table: a run of the readings has an AOA estimate without its truth "
                         f"or a truth without its estimate (metric={metric!r})")
    runs["gap"] = runs["estimate"] - runs["truth"]
    g = runs.groupby(level=["reading", "model"], sort=False)
    out = pd.DataFrame({"estimate": g["estimate"].mean(), "truth": g["truth"].mean(),
                        "gap": g["gap"].mean(), "gap sd": g["gap"].std(ddof=1),
                        "runs": g.size(), "runs over": g["gap"].apply(lambda s: int((s > 0).sum()))})
    under = g["gap"].apply(lambda s: int((s < 0).sum()))
    # an estimate equal to the truth is neither above nor below it
    out["direction"] = np.select(
        [out["runs over"] == out["runs"], under == out["runs"], (out["runs over"] == 0) & (under == 0)],
        ["over-estimation", "under-estimation", "equal"], "mixed")
    return out.reindex(readings, level="reading")
