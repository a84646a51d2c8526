"""The slides' reading of Yang et al.'s Section 5 (yang2018.SLIDES), its family and its grid.

Each new MAR-side candidate set is checked against a plain-python port of the OpenRec code it
follows (``_full_rank`` of ``ImplicitEvalManager``, ``_sample_negatives`` + ``_evaluate_partial``
of the test scripts), the grid's array evaluation against :func:`reading_rows` to 1e-12, and
the search's three properties on tables whose verdicts are known by construction.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial.replications import yang2018
from recbias_tutorial.replications.yang2018 import _sides
from recbias_tutorial.replications.yang2018._grid import _grid_rows

FIELDS = [f.name for f in dataclasses.fields(yang2018.Reading) if f.name != "name"]


def _choices(r):
    """A reading's choices, the MAR side's cut-off spelled out (None means: the MNAR side's)."""
    return {**{f: getattr(r, f) for f in FIELDS}, "k_truth": r.k if r.k_truth is None else r.k_truth}


def _changes(a, b, *, spelled=True):
    """The choices that differ (``spelled=False``: the fields, ``k`` of LADDER's "+ K = 10"
    moving both sides' cut-off at once)."""
    get = _choices if spelled else (lambda r: {f: getattr(r, f) for f in FIELDS})
    return [f for f in FIELDS if get(a)[f] != get(b)[f]]


# ------------------------------------------------------------------------------------------
# the named readings
# ------------------------------------------------------------------------------------------
def test_the_slides_reading_is_what_the_sources_support():
    s = yang2018.SLIDES
    assert (s.estimate, s.truth, s.k, s.k_truth, s.users, s.mae, s.n_negatives) == (
        "sampled", "full", 10, None, "own", "aggregate", None)


@pytest.mark.parametrize("ladder", [yang2018.LADDER, yang2018.SLIDES_LADDER])
def test_every_ladder_step_changes_one_choice(ladder):
    assert ladder[0] == yang2018.AUTHORS
    for a, b in zip(ladder, ladder[1:]):
        assert len(_changes(a, b, spelled=ladder is yang2018.SLIDES_LADDER)) == 1, (a.name, b.name)
    assert yang2018.SLIDES_LADDER[-1] == yang2018.SLIDES


def test_the_family_and_the_negative_counts_change_one_choice_of_the_slides_reading():
    assert yang2018.SLIDES_FAMILY[0] == yang2018.SLIDES
    truths = [r.truth for r in yang2018.SLIDES_FAMILY]
    assert sorted(truths) == sorted(set(yang2018.GRID_CHOICES["truth"]) - {"mar"})
    for r in yang2018.SLIDES_FAMILY[1:]:
        assert _changes(yang2018.SLIDES, r) == ["truth"]
    assert [r.n_negatives for r in yang2018.SLIDES_NEGATIVES] == [200, 300]
    for r in yang2018.SLIDES_NEGATIVES:
        assert _changes(yang2018.SLIDES, r) == ["n_negatives"]
    names = [r.name for r in yang2018.READINGS]
    assert len(set(names)) == len(names)
    assert set(yang2018.LADDER + yang2018.SLIDES_FAMILY
               + yang2018.SLIDES_NEGATIVES) <= set(yang2018.READINGS)


def test_the_slides_ladder_changes_each_sides_cutoff_alone_and_is_stored():
    """Every step of SLIDES_LADDER changes one choice, the cut-off of one side at a time, and
    each is stored: as a named reading for every model, or as a grid reading (the slides'
    four models) where the stored run's named readings do not hold it."""
    ladder = yang2018.SLIDES_LADDER
    assert [_changes(a, b) for a, b in zip(ladder, ladder[1:])] == [["truth"], ["k"], ["k_truth"]]
    grid = {tuple(_choices(r).values()) for r in yang2018.reading_grid()}
    for step in ladder:
        assert step in yang2018.READINGS or tuple(_choices(step).values()) in grid, step.name


@pytest.mark.parametrize("kwargs, argument", [
    ({"truth": "everything"}, "truth"), ({"k_truth": 0}, "k_truth"),
    ({"k_truth": 2.5}, "k_truth"), ({"n_negatives": -1}, "n_negatives"),
    ({"n_negatives": 300, "estimate": "full"}, "n_negatives")])
def test_reading_refuses_bad_new_fields(kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        yang2018.Reading("x", **kwargs)


def test_the_grid_holds_every_combination_once_and_the_named_readings():
    grid = yang2018.reading_grid()
    choices = yang2018.GRID_CHOICES
    assert len(grid) == (len(choices["estimate"]) * len(choices["truth"]) * len(choices["k"])
                         * len(choices["k_truth"]) * len(choices["users_mae"])) == 576
    assert len({r.name for r in grid}) == len(grid)
    unnamed = {dataclasses.replace(r, name="-") for r in grid}
    for named in (yang2018.AUTHORS, yang2018.COURSE, *yang2018.SLIDES_FAMILY):
        assert dataclasses.replace(named, name="-") in unnamed, named.name
    assert yang2018.grid_name(yang2018.SLIDES) in {r.name for r in grid}


@pytest.mark.parametrize("ks", [[], "1", [0], [1, 1], [1.5], None])
def test_reading_grid_refuses_bad_cutoffs(ks):
    with pytest.raises(ValueError, match="ks"):
        yang2018.reading_grid(ks)


# ------------------------------------------------------------------------------------------
# the MAR-side candidate sets against OpenRec's code
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def world():
    data = rb.simulate(70, 40, seed=11)
    train, val, truth = yang2018.authors_split(data, seed=2)
    scores = np.random.default_rng(4).integers(0, 6, (data.n_users, data.n_items)).astype(float)
    return data, train, val, truth, scores


def _truth(world, reading, k=None, **kw):
    data, train, val, truth, scores = world
    out = yang2018.evaluate_readings(scores, train, val, truth, n_items=data.n_items,
                                     threshold=data.threshold, readings=[reading], gammas={},
                                     n_negatives=6, draws=kw.get("draws", [0]), seed=0)
    got = out[(out["estimator"] == "AOA") & (out["quantity"] == "truth")]
    return got.groupby("metric")["value"].mean().to_dict()


def _full_rank(world, excluded, k):
    """OpenRec's ``_full_rank`` + ``eq``'s per-user means, in plain python: each MAR positive
    against the items not excluded (``excluded(u)``), AUC over ``n_items - |excluded|``."""
    data, train, val, truth, scores = world
    counts = np.bincount(train["item"], minlength=data.n_items)
    rec, auc = [], []
    for u, part in truth[truth["rating"] >= data.threshold].groupby("user"):
        pos = [i for i in part["item"] if counts[i] > 0]
        if not pos:
            continue
        excl = excluded(u)
        others = [j for j in range(data.n_items) if j not in excl]
        ranks = [sum(scores[u, j] > scores[u, i] for j in others) for i in pos]
        rec.append(np.mean([r < k for r in ranks]))
        auc.append(np.mean([1 - r / len(others) for r in ranks]))
    return {"recall": float(np.mean(rec)), "auc": float(np.mean(auc))}


def _items(frame, u):
    return set(frame.loc[frame["user"] == u, "item"])


@pytest.mark.parametrize("truth_kind", ["openrec", "catalogue", "no-heldout", "full"])
def test_full_truths_are_openrecs_full_rank(world, truth_kind):
    data, train, val, truth, scores = world
    mar_pos = truth[truth["rating"] >= data.threshold]
    excluded = {  # "openrec" excludes the other positives too (they are MAR-rated)
        "openrec": lambda u: _items(train, u) | _items(truth, u),
        "catalogue": lambda u: set(),
        "no-heldout": lambda u: (_items(train, u) | _items(val, u)) - _items(mar_pos, u),
        "full": lambda u: _items(train, u)}[truth_kind]
    got = _truth(world, yang2018.Reading("x", truth=truth_kind, k=3))
    assert got == pytest.approx(_full_rank(world, excluded, k=3), abs=1e-12)


def test_the_test_scripts_sampled_truth_is_evaluate_partial(world, monkeypatch):
    """``_sample_negatives`` among the items outside train, test_pos and test_neg, then the
    positives appended, ``eq``'s formulas on the whole list (the 200 are not cut off)."""
    data, train, val, truth, scores = world
    monkeypatch.setattr(_sides, "TEST_NEGATIVES", 5)
    mar_pos = truth[truth["rating"] >= data.threshold]
    seen = np.zeros((data.n_users, data.n_items), bool)
    seen[train["user"], train["item"]] = True
    cand, pos, outside = _sides._truth_candidates(
        "sampled", seen, train, val, truth, mar_pos, n_items=data.n_items, seed=[0, 0, 1])
    assert not outside and pos is mar_pos
    for u in range(data.n_users):
        p = _items(mar_pos, u)
        negatives = set(np.flatnonzero(cand[u])) - p
        if not p:
            assert not cand[u].any()
            continue
        assert p <= set(np.flatnonzero(cand[u]))
        assert not negatives & (_items(train, u) | _items(truth, u))
        allowed = data.n_items - len(_items(train, u) | _items(truth, u))
        assert len(negatives) == min(5, allowed)
    # and the truth is eq's formula on those lists (negatives first, positives last)
    from test_yang2018_authors import authors_calc

    counts = np.bincount(train["item"], minlength=data.n_items)
    Ni = {i: int(c) for i, c in enumerate(counts) if c > 0}
    user_items, results, n_pos = {}, {}, {}
    for u, part in mar_pos.groupby("user"):
        p = part["item"].tolist()
        items = [i for i in np.flatnonzero(cand[u]) if i not in p] + p
        user_items[u], results[u], n_pos[u] = items, [scores[u, i] for i in items], len(p)
    ref = authors_calc(user_items, results, n_pos, Ni, -1.0, 2)
    got = _truth(world, yang2018.Reading("x", truth="sampled", k=2))
    assert got == pytest.approx(ref, abs=1e-12)


def test_k_truth_and_n_negatives_change_one_side_only(world):
    data, train, val, truth, scores = world
    kw = dict(n_items=data.n_items, threshold=data.threshold, gammas={"g": 2.0}, draws=[0, 1],
              seed=0)
    mixed = yang2018.Reading("mixed", truth="full", k=3, k_truth=1, n_negatives=9)
    est = yang2018.Reading("est", truth="full", k=3)
    tru = yang2018.Reading("tru", truth="full", k=1)
    out = yang2018.evaluate_readings(scores, train, val, truth, readings=[mixed], n_negatives=6,
                                     **kw).set_index(["draw", "metric", "estimator", "quantity"])
    ref = yang2018.evaluate_readings(scores, train, val, truth, readings=[est, tru],
                                     n_negatives=9, **kw)
    ref = {name: part.set_index(["draw", "metric", "estimator", "quantity"])["value"]
           for name, part in ref.groupby("reading")}
    q = out.index.get_level_values("quantity")
    np.testing.assert_allclose(out["value"][q == "estimate"], ref["est"][q == "estimate"])
    np.testing.assert_allclose(out["value"][q == "truth"], ref["tru"][q == "truth"])


def test_the_grid_on_arrays_is_reading_rows_and_the_candidate_cache_changes_nothing(world):
    data, train, val, truth, scores = world
    grid = yang2018.reading_grid(ks=[1, 3])
    kw = dict(n_items=data.n_items, threshold=data.threshold, readings=grid,
              gammas={"g": 2.0}, n_negatives=6, draws=[0, 1], seed=0)
    cache: dict = {}
    slow = yang2018.evaluate_readings(scores, train, val, truth, **kw)
    fast = _grid_rows(scores, train, val, truth, candidates=cache, **kw)
    assert {k[0] for k in cache} == {"sampled", "mar:sampled"}
    again = yang2018.evaluate_readings(scores, train, val, truth, candidates=cache, **kw)
    pd.testing.assert_frame_equal(slow, again)
    key = ["reading", "draw", "metric", "estimator", "quantity"]
    both = slow.merge(fast, on=key, suffixes=("", "_fast"), validate="one_to_one")
    assert len(both) == len(slow) == len(fast)
    np.testing.assert_allclose(both["value_fast"], both["value"], rtol=0, atol=1e-12)
    assert (both["users"] == both["users_fast"]).all()


# ------------------------------------------------------------------------------------------
# the grid's table, the search, the family and the direction test
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rows():
    from recbias_tutorial.models import AvgRating, PosPop

    grid = yang2018.reading_grid(ks=[1, 2])
    world = rb.simulate(60, 40, seed=0)
    parts = [yang2018.authors_split_table({"PMF (authors)": PosPop(), "AvgRating": AvgRating()},
                                          world, seed=s, draws=[0, 1], gammas=[2.0],
                                          readings=yang2018.READINGS, grid=grid,
                                          grid_models=["PMF (authors)"]) for s in (0, 1)]
    return pd.concat(parts, ignore_index=True), grid


def test_grid_table_means_over_draws_and_auc_once(rows):
    table, grid = rows
    g = yang2018.grid_table(table, grid=grid)
    assert set(g["model"]) == {"PMF (authors)"}  # grid_models only
    assert g.groupby("metric").size().to_dict() == {"recall": 2 * 144, "auc": 2 * 36}
    assert (g.loc[g["metric"] == "auc", ["k", "k_truth"]] == 0).all().all()
    one = g[(g["seed"] == 1) & (g["metric"] == "recall") & (g["estimate"] == "sampled")
            & (g["truth"] == "full") & (g["k"] == 2) & (g["k_truth"] == 2) & (g["users"] == "own")]
    name = yang2018.grid_name(yang2018.Reading("x", truth="full", k=2))
    raw = table[(table["reading"] == name) & (table["seed"] == 1) & (table["metric"] == "recall")
                & (table["model"] == "PMF (authors)")]
    assert one["MAE: AOA"].item() == pytest.approx(
        raw[(raw["estimator"] == "AOA") & (raw["quantity"] == "mae")]["value"].mean(), abs=1e-15)
    assert one["draws"].item() == 2


def test_grid_table_refuses_rows_without_the_grid(rows):
    table, grid = rows
    with pytest.raises(ValueError, match="rows"):
        yang2018.grid_table(table[~table["reading"].str.startswith("grid")], grid=grid)
    with pytest.raises(ValueError, match="rows"):
        yang2018.grid_table(table.drop(columns="draw"), grid=grid)


def _synthetic_grid():
    """One reading, four models, values chosen so that each property fails once."""
    paper = yang2018.PAPER_MAE_RECALL
    base = {"seed": 0, "metric": "recall", "estimate": "sampled", "truth": "full", "k": 10,
            "k_truth": 10, "users": "own", "mae": "aggregate", "draws": 5}
    rows = []
    for slide, ours in yang2018.SLIDE_MODELS.items():
        p = paper.loc[slide]
        mae = {f"MAE: {c}": p[c] for c in paper.columns}
        est, tru = 0.45, 0.45 - p["AOA"]
        if slide == "BPR":  # SNIPS cuts far more than the slides'
            mae = {**mae, **{f"MAE: {c}": 0.5 * p["AOA"] for c in paper.columns if c != "AOA"}}
        if slide == "U-CML":  # under-estimation
            est, tru = tru, est
        if slide == "A-CML":  # another level
            mae = {k: v + 0.06 for k, v in mae.items()}
        rows.append({**base, "model": ours, "AOA estimate": est, "AOA truth": tru, **mae})
    return pd.DataFrame(rows)


def test_grid_search_grades_each_property():
    s = yang2018.grid_search(_synthetic_grid()).set_index("model")
    assert s.loc["PMF", ["level", "direction", "cut", "passes"]].tolist() == [True] * 4
    assert s.loc["BPR", ["level", "direction", "cut", "passes"]].tolist() == [True, True, False,
                                                                               False]
    assert s.loc["U-CML", ["direction", "passes"]].tolist() == [False, False]
    assert not s.loc["A-CML", "level"] and s.loc["A-CML", "cut"]
    assert s["role"].to_dict() == {"U-CML": "check", "A-CML": "check", "BPR": "search",
                                   "PMF": "search"}
    family = yang2018.grid_family(yang2018.grid_search(_synthetic_grid()))
    assert len(family) == 1 and family["slides' reading"].item()
    assert family[["PMF", "BPR", "U-CML", "A-CML"]].iloc[0].tolist() == [True, False, False, False]
    assert family["search models passed"].item() == 1 and family["check models passed"].item() == 0


@pytest.mark.parametrize("call, argument", [
    (lambda g: yang2018.grid_search(g, level=0.0), "level"),
    (lambda g: yang2018.grid_search(g, cut=-0.1), "cut"),
    (lambda g: yang2018.grid_search(g, level=np.nan), "level"),
    (lambda g: yang2018.grid_search(g.drop(columns="AOA truth")), "grid"),
    (lambda g: yang2018.grid_search(g.assign(model="other")), "grid"),
    (lambda g: yang2018.grid_search([1, 2]), "grid"),
    (lambda g: yang2018.grid_family(g), "search"),
])
def test_the_search_refuses_bad_input(call, argument):
    with pytest.raises(ValueError, match=argument):
        call(_synthetic_grid())


def test_direction_test_labels_every_run(rows):
    table, _ = rows
    d = yang2018.direction_test(table, readings=[yang2018.AUTHORS.name, yang2018.SLIDES.name])
    assert set(d.index.get_level_values("reading")) == {yang2018.AUTHORS.name, yang2018.SLIDES.name}
    assert (d["runs"] == 4).all()  # two splits x two draws
    part = table[(table["metric"] == "recall") & (table["estimator"] == "AOA")]
    gaps = part.pivot_table(index=["reading", "model", "seed", "draw"], columns="quantity",
                            values="value").eval("estimate - truth")
    for (reading, model), row in d.iterrows():
        gap = gaps.loc[(reading, model)]
        label = ("over-estimation" if (gap > 0).all() else "under-estimation" if (gap < 0).all()
                 else "equal" if (gap == 0).all() else "mixed")  # a tie is neither side
        assert row["direction"] == label and row["runs over"] == (gap > 0).sum()
    with pytest.raises(ValueError, match="readings"):
        yang2018.direction_test(table, readings=["no such reading"])
    with pytest.raises(ValueError, match="readings"):
        yang2018.direction_test(table, readings="authors' protocol")
    with pytest.raises(ValueError, match="table"):
        yang2018.direction_test(table.drop(columns="quantity"))


def test_authors_split_table_refuses_grid_models_it_does_not_fit():
    from recbias_tutorial.models import PosPop

    with pytest.raises(ValueError, match="grid_models"):
        yang2018.authors_split_table({"PosPop": PosPop()}, rb.simulate(60, 40, seed=0), seed=0,
                                     grid=yang2018.reading_grid(ks=[1]), grid_models=["BPR"])


# --- issue 57: ties, duplicated runs, NaN, negative MAE, names with their negative count
def _runs(estimates, truths):
    rows = []
    for seed, (e, t) in enumerate(zip(estimates, truths)):
        rows += [(seed, "m", "r", 0, "recall", "AOA", "estimate", e),
                 (seed, "m", "r", 0, "recall", "AOA", "truth", t)]
    return pd.DataFrame(rows, columns=["seed", "model", "reading", "draw", "metric", "estimator",
                                       "quantity", "value"])


@pytest.mark.parametrize("estimates, truths, direction", [
    ([0.1, 0.2], [0.1, 0.2], "equal"), ([0.1, 0.3], [0.1, 0.2], "mixed"),
    ([0.0, 0.1], [0.1, 0.2], "under-estimation"), ([0.3, 0.4], [0.1, 0.2], "over-estimation")])
def test_direction_test_treats_an_exact_tie_as_neither_side(estimates, truths, direction):
    d = yang2018.direction_test(_runs(estimates, truths), readings=["r"])
    assert d["direction"].tolist() == [direction]


@pytest.mark.parametrize("change, words", [
    (lambda t: pd.concat([t, t.head(2)], ignore_index=True), "sharing their key"),
    (lambda t: t.assign(value=[np.nan, 0.1, 0.2, 0.2]), "table.value has missing"),
    (lambda t: t.assign(value=["x", 0.1, 0.2, 0.2]), "table.value must hold"),
    (lambda t: t.iloc[1:], "estimate without its truth"),
])
def test_direction_test_refuses_runs_it_would_miscount(change, words):
    with pytest.raises(ValueError, match=words):
        yang2018.direction_test(change(_runs([0.1, 0.2], [0.1, 0.2])), readings=["r"])


@pytest.mark.parametrize("change, words", [
    (lambda g: g.assign(**{"MAE: AOA": -0.1}), r"grid\.MAE: AOA must be >= 0"),
    (lambda g: g.assign(**{"MAE: AOA": np.nan}), r"grid\.MAE: AOA has missing"),
    (lambda g: pd.concat([g, g.head(1)], ignore_index=True), "sharing their key"),
])
def test_grid_search_refuses_bad_mae_and_duplicated_runs(change, words):
    with pytest.raises(ValueError, match=words):
        yang2018.grid_search(change(_synthetic_grid()))


def test_a_grid_name_keeps_its_negative_count():
    import dataclasses

    from recbias_tutorial.replications.yang2018._readings import grid_name

    a, b = (dataclasses.replace(yang2018.SLIDES, n_negatives=n) for n in (50, 100))
    assert grid_name(a) != grid_name(b) and "50 negatives" in grid_name(a)
    assert "negatives" not in grid_name(yang2018.SLIDES)  # the authors' counts: as stored
