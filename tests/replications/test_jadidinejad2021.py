"""holdout_eval and zoo_eval: the fast per-model evaluator agrees with the reference
estimators; pair search, agreement and Steiger bookkeeping over a zoo; validation."""

import sys

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial import estimators as est
from recbias_tutorial import stats
from recbias_tutorial.metrics import ranking_metrics
from recbias_tutorial.models import AvgRating, PosPop, RandomScores
from recbias_tutorial.propensity import popularity_propensity
from recbias_tutorial.data import random_split
from recbias_tutorial.data import simulate
from recbias_tutorial.estimators import assign_strata, strata_table
from recbias_tutorial.replications.jadidinejad2021 import (agreement, evaluate_zoo,
                                                           holdout_evaluator, rank_relevant, steiger)
from recbias_tutorial.stats import reversal_pairs


@pytest.fixture(scope="module")
def case(make_world):
    world = make_world(120, 60, seed=3, mean_ratings_per_user=15.0, n_mar_users=120, n_mar_items=10)
    train, held = random_split(world.mnar, (0.7, 0.3), seed=1)
    p = popularity_propensity(train, world.n_items, gamma=1.5)
    rng = np.random.default_rng(4)
    scores = np.round(rng.random((world.n_users, world.n_items)) * 20)  # many ties
    return world, train, held, p, scores


def _value(frame, estimator, k, n_strata=0, binning=""):
    row = frame[(frame.estimator == estimator) & (frame.k == k) & (frame.n_strata == n_strata)
                & (frame.binning == binning)]
    assert len(row) == 1
    return float(row["value"].iloc[0])


def test_evaluator_matches_reference_estimators(case):
    world, train, held, p, scores = case
    ks = (1, 5, 10)
    evaluate = holdout_evaluator(holdout=held, truth=world.mar, exclude=train, propensity=p,
                                 n_items=world.n_items, ks=ks, n_strata=3, sweep=(1, 2, 4),
                                 binnings=("quantile", "width"))
    out = evaluate(scores)
    n_obs = np.bincount(held.loc[held.rating >= 4, "user"], minlength=world.n_users)
    for k in ks:
        truth = ranking_metrics(scores, world.mar, k=k, exclude=train)["ndcg"].mean()
        assert _value(out, "truth", k) == pytest.approx(truth)
        hold = ranking_metrics(scores, held, k=k, exclude=train)["ndcg"].mean()
        assert _value(out, "holdout", k) == pytest.approx(hold)
        assert _value(out, "SNIPS", k) == pytest.approx(
            est.snips(scores, held, p, metric="dcg", k=k, exclude=train))
        assert _value(out, "IPS", k) == pytest.approx(
            est.ips(scores, held, p, n_relevant=n_obs, metric="dcg", k=k, exclude=train))
        ref = est.stratified(scores, held, p, n_strata=3, metric="ndcg", k=k, exclude=train)
        for s in range(3):
            assert _value(out, f"Q{s + 1}", k, 3, "quantile") == pytest.approx(ref["value"].iloc[s])
        assert _value(out, "stratified", k, 3, "quantile") == pytest.approx(ref["value"].iloc[-1])
        for n in (1, 2, 4):
            for b in ("quantile", "width"):
                ref = est.stratified(scores, held, p, n_strata=n, metric="ndcg", k=k,
                                     exclude=train, binning=b)
                assert _value(out, "stratified", k, n, b) == pytest.approx(
                    ref["value"].iloc[-1], nan_ok=True)
        # one stratum is the plain holdout
        assert _value(out, "stratified", k, 1, "quantile") == pytest.approx(hold)


def test_rank_relevant_and_strata_match_stratified(case):
    world, train, held, p, scores = case
    ranked = rank_relevant(scores, held, k=7, exclude=train, propensity=p)
    assert (ranked["z"] <= 7).all() and len(ranked) == (held.rating >= 4).sum()
    for b in ("quantile", "width"):
        table = strata_table(held, p, n_items=world.n_items, n_strata=4, binning=b)
        ref = est.stratified(scores, held, p, n_strata=4, binning=b)
        cols = ["stratum", "interactions", "users", "items", "share", "p_low", "p_high"]
        pd.testing.assert_frame_equal(table[cols], ref[cols])
        assert table["item_share"].iloc[-1] == 1.0
        stratum, _ = assign_strata(ranked["p"].to_numpy(), 4, binning=b)
        assert np.bincount(stratum, minlength=4).tolist() == table["interactions"].iloc[:4].tolist()


def test_width_binning_piles_heavy_tails_into_the_first_stratum():
    p = np.random.default_rng(0).pareto(1.2, 5000) + 1e-3
    width, _ = assign_strata(p, 5, binning="width")
    quant, _ = assign_strata(p, 5, binning="quantile")
    assert np.mean(width == 0) > 0.95
    assert np.allclose(np.bincount(quant, minlength=5) / len(p), 0.2)


def test_evaluate_zoo_one_row_per_model_and_key(case):
    world, train, held, p, _ = case
    ev = holdout_evaluator(holdout=held, truth=world.mar, exclude=train, propensity=p,
                           n_items=world.n_items, ks=(5, 10))
    models = {"PosPop": PosPop(), "AvgRating": AvgRating(), "Random": RandomScores(seed=2)}
    out = evaluate_zoo(models, train, n_users=world.n_users, n_items=world.n_items, evaluate=ev, seed=0)
    assert list(out.columns) == ["model", "estimator", "n_strata", "binning", "k", "value"]
    assert out.groupby("model").size().tolist() == [2 * 7] * 3  # truth, 3 estimators, strat, Q1, Q2
    assert set(out.attrs["seconds"]) == set(models)
    agree = agreement(out)
    assert set(agree["estimator"]) == {"holdout", "IPS", "SNIPS", "stratified", "Q1", "Q2"}
    assert (agree["n_models"] == 3).all()


def _tidy(values: dict[str, np.ndarray], k=10):
    frames = []
    for name, v in values.items():
        n, b = (2, "quantile") if name in ("stratified", "Q1", "Q2") else (0, "")
        frames.append(pd.DataFrame({"model": [f"m{i}" for i in range(len(v))], "estimator": name,
                                    "n_strata": n, "binning": b, "k": k, "value": v}))
    return pd.concat(frames, ignore_index=True)


def test_agreement_and_steiger():
    rng = np.random.default_rng(1)
    t = rng.random(25)
    frame = _tidy({"truth": t, "stratified": t + 0.05 * rng.random(25),
                   "holdout": t + 0.6 * rng.random(25), "SNIPS": -t})
    agree = agreement(frame).set_index("estimator")
    assert agree.loc["SNIPS", "tau"] == pytest.approx(-1.0)
    assert agree.loc["SNIPS", "pearson"] == pytest.approx(-1.0)
    assert agree.loc["stratified", "tau"] > agree.loc["holdout", "tau"]
    res = steiger(frame).iloc[0]
    r = np.corrcoef([t, frame.query("estimator == 'stratified'")["value"],
                     frame.query("estimator == 'holdout'")["value"]])
    t_ref, p_ref = stats.steiger_test(r[0, 1], r[0, 2], r[1, 2], 25)
    assert res["statistic"] == pytest.approx(t_ref) and res["p_value"] == pytest.approx(p_ref)
    assert res["n"] == 25 and res["statistic"] > 0


def test_reversal_pairs_finds_simpson_and_closest_case():
    table = pd.DataFrame({"all": [0.5, 0.4, 0.3], "Q1": [0.1, 0.2, 0.05], "Q2": [0.8, 0.9, 0.1]},
                         index=["a", "b", "c"])
    out = reversal_pairs(table, overall="all", strata=["Q1", "Q2"])
    assert len(out) == 3  # ordered pairs with a strictly ahead overall
    first = out.iloc[0]
    assert (first["a"], first["b"], first["n_reversed"]) == ("a", "b", 2)
    assert first["margin"] == pytest.approx(0.1)
    assert first["d_all"] == pytest.approx(0.1)
    none = reversal_pairs(table.drop(index="b"), overall="all", strata=["Q1", "Q2"])
    assert none["margin"].iloc[0] < 0 and none["n_reversed"].iloc[0] == 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_strata=0), "n_strata"), (dict(binnings=("equal",), sweep=(2,)), "binnings"),
    (dict(ks=()), "ks"), (dict(ks=(0,)), "ks"), (dict(sweep=(0,)), "sweep"),
    (dict(propensity=np.ones(3)), "propensity"), (dict(n_items=0), "n_items"),
])
def test_evaluator_validation(case, kwargs, match):
    world, train, held, p, _ = case
    base = dict(holdout=held, propensity=p, n_items=world.n_items)
    with pytest.raises(ValueError, match=match):
        holdout_evaluator(**{**base, **kwargs})


def test_other_validation(case):
    world, train, held, p, scores = case
    ev = holdout_evaluator(holdout=held, propensity=p, n_items=world.n_items)
    with pytest.raises(ValueError, match="n_items"):
        ev(scores[:, :5])
    with pytest.raises(ValueError, match="binning"):
        assign_strata(p, 2, binning="equal")
    with pytest.raises(ValueError, match="p must"):
        assign_strata(np.array([0.0, 1.0]), 2)
    with pytest.raises(ValueError, match="strata"):
        reversal_pairs(pd.DataFrame({"x": [1.0]}), overall="x", strata=[])
    with pytest.raises(ValueError, match="missing"):
        reversal_pairs(pd.DataFrame({"x": [1.0]}), overall="x", strata=["Q1"])
    with pytest.raises(ValueError, match="truth"):
        agreement(_tidy({"holdout": np.arange(3.0)}))
    with pytest.raises(ValueError, match="evaluate"):
        evaluate_zoo({}, train, n_users=world.n_users, n_items=world.n_items, evaluate=None, seed=0)


# --------------------------------------------------------------------------------------
# the authors' protocol (kendall_taus & co.) on a small simulated world
# --------------------------------------------------------------------------------------
import dataclasses  # noqa: E402

import cornac  # noqa: E402

from recbias_tutorial.models import fit_scores, model_zoo  # noqa: E402
from recbias_tutorial.replications import jadidinejad2021 as jad  # noqa: E402

METHODS = ["holdout", "ips", "snips", "stratified", "Q1", "Q2"]


@pytest.fixture(scope="module")
def small_world():
    return simulate(90, 50, seed=11, mean_ratings_per_user=14, n_mar_users=90, n_mar_items=10)


@pytest.fixture(scope="module")
def small_values(small_world):
    return jad.protocol_values(small_world, seeds=[0, 1], sizes=(10,), ks=(None, 10),
                               sweep=range(1, 4), zoos=("authors", "course"),
                               course_zoo=dict(sizes=(10,), families=["MostPop", "MF", "BPR"]))


@pytest.mark.parametrize("protocol", ["authors", "course"])
def test_kendall_taus_shapes_and_ranges(small_world, protocol):
    out = jad.kendall_taus(small_world, seed=0, protocol=protocol, sizes=(10,),
                           course_zoo=dict(sizes=(10, 20), families=["MostPop", "MF", "SVD"]))
    assert list(out.columns) == ["method", "tau", "n_models"]
    assert out["method"].tolist() == METHODS
    assert out["tau"].between(-1, 1).all()
    n = 10 if protocol == "authors" else len(model_zoo(seed=0, sizes=(10, 20),
                                                       families=["MostPop", "MF", "SVD"]))
    assert (out["n_models"] == n).all()


def test_kendall_taus_equals_protocol_taus_of_the_same_values(small_world, small_values):
    one = jad.kendall_taus(small_world, seed=1, sizes=(10,), n_strata=2)
    many = jad.protocol_taus(small_values).query("seed == 1")
    assert one["tau"].to_numpy() == pytest.approx(many["tau"].to_numpy())


def test_authors_values_against_reference_computations(small_world, small_values):
    """Holdout, strata and weights of the authors' protocol, recomputed by hand."""
    w = small_world
    train, test_all, test = jad.authors_split(w.mnar, seed=0)
    frame = jad.protocol_frame(small_values).loc[0]
    scores = fit_scores(cornac.models.MostPop(), train, n_users=w.n_users, n_items=w.n_items, seed=0)
    # holdout: whole-ranking nDCG, training items kept among the candidates
    ref = ranking_metrics(scores, test, k=w.n_items, auc=False)["ndcg"].mean()
    assert frame.loc["MPOP", "holdout"] == pytest.approx(ref)
    # propensities and strata: pandas.cut over all test ratings, shares of the known ones
    counts = np.bincount(w.mnar["item"], minlength=w.n_items)
    p, alpha, xmin = jad.powerlaw_propensity(counts)
    _, bins = pd.cut(p[test_all["item"]], bins=2, retbins=True)
    s_all = pd.cut(p[test["item"]], bins=bins, labels=False, include_lowest=True)
    shares = np.bincount(s_all, minlength=2) / len(test)
    rel = test[test["rating"] >= w.threshold]
    s_rel = np.asarray(pd.cut(p[rel["item"]], bins=bins, labels=False, include_lowest=True))
    q = [ranking_metrics(scores, rel[s_rel == s], k=w.n_items, auc=False)["ndcg"].mean()
         if (s_rel == s).any() else np.nan for s in range(2)]
    assert frame.loc["MPOP", ["Q1", "Q2"]].to_numpy(float) == pytest.approx(q, nan_ok=True)
    assert frame.loc["MPOP", "stratified"] == pytest.approx(np.nansum(shares * np.array(q)))
    # the separate truth: MostPop fitted on the whole log, every MAR rating, every item
    full = fit_scores(cornac.models.MostPop(), w.mnar, n_users=w.n_users, n_items=w.n_items, seed=0)
    truth = ranking_metrics(full, w.mar, k=w.n_items, auc=False)["ndcg"].mean()
    assert frame.loc["MPOP", "truth"] == pytest.approx(truth)


def test_course_values_against_reference_computations(small_world, small_values):
    w = small_world
    train, _, test = jad.authors_split(w.mnar, seed=0)
    course = {c: v[1] for c, v in jad.CHOICES.items()}
    frame = jad.protocol_frame(small_values, protocol=course).loc[0]
    scores = fit_scores(cornac.models.MostPop(), train, n_users=w.n_users, n_items=w.n_items, seed=0)
    ref = ranking_metrics(scores, test, k=10, exclude=train, auc=False)["ndcg"].mean()
    assert frame.loc["MostPop", "holdout"] == pytest.approx(ref)
    from recbias_tutorial.propensity import fit_popularity_exponent
    p = popularity_propensity(train, w.n_items, gamma=fit_popularity_exponent(train, w.n_items))
    strat = est.stratified(scores, test, p, n_strata=2, metric="ndcg", k=10, exclude=train)
    assert frame.loc["MostPop", "stratified"] == pytest.approx(strat["value"].iloc[-1])
    assert frame.loc["MostPop", ["Q1", "Q2"]].to_numpy(float) == pytest.approx(
        strat["value"].iloc[:2].to_numpy(float))


def test_powerlaw_propensity_follows_the_authors_rule():
    counts = np.round(2000 / np.arange(1, 301) ** 0.8).astype(int)
    p, alpha, xmin = jad.powerlaw_propensity(counts)
    above = counts > xmin
    assert above.any() and (~above).any()
    assert p[above] == pytest.approx(counts[above].astype(float) ** alpha)
    assert np.array_equal(p[~above], counts[~above])
    with pytest.raises(ValueError, match="counts"):
        jad.powerlaw_propensity([1.5, 2.0])


def test_powerlaw1_fit_is_clausets_approximation_at_the_smallest_ks():
    """fit="powerlaw1": at the chosen x_min, alpha is 1 + n / sum(log(x / (x_min - 1/2))) over
    the tail, and no other candidate x_min gives a smaller KS distance (powerlaw's own)."""
    powerlaw = pytest.importorskip("powerlaw")
    counts = np.random.default_rng(5).zipf(2.5, size=400)
    p, alpha, xmin = jad.powerlaw_propensity(counts, fit="powerlaw1")
    tail = counts[counts >= xmin].astype(float)
    assert alpha == pytest.approx(1 + len(tail) / np.log(tail / (xmin - 0.5)).sum(), rel=1e-12)
    above = counts > xmin
    assert p[above] == pytest.approx(counts[above].astype(float) ** alpha)
    assert np.array_equal(p[~above], counts[~above])

    def ks(x_min):
        t = counts[counts >= x_min].astype(float)
        a = 1 + len(t) / np.log(t / (x_min - 0.5)).sum()
        law = powerlaw.Power_Law(xmin=x_min, discrete=True, parameters=[a],
                                 parameter_ranges={"alpha": [None, None]}, verbose=0)
        law.compute_distance_metrics(np.sort(counts).astype(float))
        return law.D

    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            others = [ks(x) for x in np.unique(counts)[:-1] if x != xmin]
            best = ks(xmin)
    assert best <= min(others)
    with pytest.raises(ValueError, match="fit"):
        jad.powerlaw_propensity(counts, fit="powerlaw3")


def _real(name):
    import os

    import recbias_tutorial as rb

    if not os.environ.get("RECBIAS_DATA") and not os.environ.get("RECBIAS_REQUIRE_DATA"):
        pytest.skip("RECBIAS_DATA is not set: the real data are needed")
    return rb.load(name)


def test_authors_log_adds_up():
    log = jad.AUTHORS_LOG
    assert (log["q1_ratings"] + log["q2_ratings"] == log["test_ratings"]).all()
    assert (log["q2_items"] == 5).all() and list(log.index) == ["coat", "yahoo_r3"]


@pytest.mark.parametrize("name, fit, alpha, xmin, head", [
    # the authors' log (experiments_coat.ipynb): "Powerlaw exponential estimates: 4.014793,
    # min=28", and five items in Q2; powerlaw 2.x's bound on alpha gives 2.99 and 17
    ("coat", "powerlaw1", 4.014793, 28, 5),
    ("coat", "powerlaw2", 2.988407, 17, 8),
    ("yahoo_r3", "powerlaw1", 2.347323, 290, 5),
    ("yahoo_r3", "powerlaw2", 2.347323, 290, 5),
])
def test_powerlaw_fits_on_the_real_data(name, fit, alpha, xmin, head):
    data = _real(name)
    counts = np.bincount(data.mnar["item"], minlength=data.n_items)
    p, a, x = jad.powerlaw_propensity(counts, fit=fit)
    assert (round(a, 6), x) == (alpha, xmin)
    _, test_all, test = jad.authors_split(data.mnar, seed=0)
    table = strata_table(test, p, n_items=data.n_items, n_strata=2, binning="cut",
                         bins_from="all", weights_from="all").set_index("stratum")
    assert int(table.loc["Q2", "items"]) == head


def test_protocol_values_powerlaw_fit_moves_only_the_powerlaw_rows():
    world = simulate(80, 60, seed=0, mean_ratings_per_user=20, n_mar_users=80, n_mar_items=10)
    counts = np.bincount(world.mnar["item"], minlength=world.n_items)
    fits = {f: jad.powerlaw_propensity(counts, fit=f)[1:] for f in ("powerlaw2", "powerlaw1")}
    args = dict(seeds=[0], sizes=(10,), ks=(None,), families=("MostPop", "MF"), cache=False)
    two = jad.protocol_values(world, **args)
    one = jad.protocol_values(world, powerlaw_fit="powerlaw1", **args)
    key = [c for c in two.columns if c != "value"]
    merged = two.merge(one, on=key, suffixes=("_2", "_1"), validate="one_to_one")
    assert len(merged) == len(two) == len(one)
    moved = ~np.isclose(merged["value_2"], merged["value_1"], equal_nan=True)
    assert set(merged.loc[moved, "propensity"]) <= {"powerlaw"}
    assert fits["powerlaw2"] != fits["powerlaw1"] and moved.any()
    with pytest.raises(ValueError, match="powerlaw_fit"):
        jad.protocol_values(world, powerlaw_fit="bounded", **args)


def test_authors_split_is_their_ratio_split(small_world):
    log = small_world.mnar
    train, test_all, test = jad.authors_split(log, seed=3)
    perm = np.random.RandomState(3).permutation(len(log))
    n_test = int(0.2 * len(log))
    assert len(test_all) == n_test and len(train) == len(log) - n_test
    assert train["item"].tolist() == log["item"].to_numpy()[perm[:len(log) - n_test]].tolist()
    assert test["user"].isin(train["user"]).all() and test["item"].isin(train["item"]).all()


def test_ladder_starts_at_the_authors_protocol(small_values):
    lad = jad.ladder(small_values)
    assert lad["switched"].drop_duplicates().tolist() == ["", *jad.LADDER_STEPS]
    first = jad.protocol_taus(small_values).pivot(index="seed", columns="method", values="tau")
    rung0 = lad[lad.rung == 0].set_index("seed")
    assert rung0["holdout"].to_numpy() == pytest.approx(first["holdout"].to_numpy())
    assert lad["gain"].to_numpy() == pytest.approx((lad["stratified"] - lad["holdout"]).to_numpy())
    # one stratum is the holdout, in every protocol
    one = jad.protocol_taus(small_values, n_strata=1).pivot(index="seed", columns="method",
                                                            values="tau")
    assert one["stratified"].to_numpy() == pytest.approx(one["holdout"].to_numpy())


def test_steiger_both_ways(small_values):
    out = jad.protocol_taus(small_values, steiger=True).query("method == 'stratified'")
    assert out["authors_p"].between(0, 0.5).all()  # one-sided, on |t|
    assert out["course_p"].between(0, 1).all()


@pytest.mark.parametrize("family,backend", [("WMF", "numpy"), ("WMF", "tensorflow"),
                                            *[(f, "tensorflow") for f in jad.NCF_FAMILIES]])
def test_neural_families_without_tensorflow_say_which_extra(family, backend, small_world,
                                                            monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # import tensorflow -> ImportError
    with pytest.raises(ImportError, match=r"\.\[neural\]"):
        jad.authors_zoo(sizes=(10,), families=[family], ncf_backend=backend)
    with pytest.raises(ImportError, match="TensorFlow"):
        jad.protocol_values(small_world, seeds=[0], sizes=(10,), families=["MF", family],
                            ncf_backend=backend)


def test_ncf_families_need_no_tensorflow(small_world, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    zoo = jad.authors_zoo(sizes=(10, 20), families=jad.NCF_FAMILIES)
    assert list(zoo) == ["MLP", "GMF10", "GMF20", "NeuMF10", "NeuMF20"]
    assert {m.backend for m in zoo.values()} == {"numpy"}
    values = jad.protocol_values(small_world, seeds=[0], sizes=(10,), families=["GMF"],
                                 cache=False)
    assert set(values["model"]) == {"GMF10"} and values["value"].notna().any()
    with pytest.raises(ValueError, match="ncf_backend"):
        jad.authors_zoo(families=["GMF"], ncf_backend="torch")
    with pytest.raises(ValueError, match="ncf_backend"):
        jad.protocol_values(small_world, seeds=[0], families=["GMF"], ncf_backend=None)


@pytest.mark.parametrize("backend", jad.NCF_BACKENDS)
def test_neural_families_are_the_authors_models(backend):
    pytest.importorskip("tensorflow")
    zoo = jad.authors_zoo(sizes=(10, 20), families=jad.NEURAL_FAMILIES, ncf_backend=backend)
    assert list(zoo) == ["MLP", "WMF10", "WMF20", "GMF10", "GMF20", "NeuMF10", "NeuMF20"]
    assert {m.backend for n, m in zoo.items() if n != "WMF10" and n != "WMF20"} == {backend}
    assert (zoo["GMF20"].num_factors, zoo["NeuMF20"].num_factors, zoo["WMF20"].k) == (20, 20, 20)
    assert {m.seed for m in zoo.values()} == {123}


def test_protocol_inputs_are_validated(small_world, small_values):
    with pytest.raises(ValueError, match="protocol"):
        jad.kendall_taus(small_world, seed=0, protocol="paper")
    with pytest.raises(ValueError, match="protocol"):
        jad.protocol_taus(small_values, protocol={"cutoff": None})
    with pytest.raises(ValueError, match="families"):
        jad.protocol_values(small_world, seeds=[0], families=["IBPR"])  # not in their zoo
    with pytest.raises(ValueError, match="seeds"):
        jad.protocol_values(small_world, seeds=[-1])
    with pytest.raises(ValueError, match="mar"):
        jad.kendall_taus(dataclasses.replace(small_world, mar=None), seed=0)
    with pytest.raises(ValueError, match="steps"):
        jad.ladder(small_values, steps=["cutoff", "cutoff"])


def test_combined_units_equal_one_frame_of_all_their_rows():
    """combine_units puts the units' frames end to end: the frame (values and dtypes) one
    run's rows would build, with each unit's wall time."""
    from recbias_tutorial.replications.jadidinejad2021 import _protocol as proto

    world = simulate(80, 60, seed=0, mean_ratings_per_user=12)
    kw = dict(sizes=(10,), ks=(None, 5), n_strata=2, sweep=(1, 3), zoos=("authors", "course"),
              course_zoo=dict(sizes=(10,)), families=("MostPop", "MF", "BPR"))
    units = [-1, 0, 1]
    parts = [proto.unit_values(world, u, fit_cache=False, **kw) for u in units]
    rows = [row for part in parts for row in part.itertuples(index=False, name=None)]
    combined = proto.combine_units(units, parts)
    pd.testing.assert_frame_equal(combined, pd.DataFrame(rows, columns=proto.VALUE_COLUMNS),
                                  check_exact=True)
    assert list(combined.attrs["seconds"]) == ["truth", "seed 0", "seed 1"]


def test_zoo_sensitivity_is_protocol_taus_of_each_sub_zoo(small_values):
    table = jad.zoo_sensitivity(small_values, methods=("holdout", "stratified", "Q1"))
    authors = small_values[small_values["zoo"] == "authors"]
    models = set(authors["model"])
    assert set(table["zoo"]) == {"all models", "one per family, size 10"} | {
        f"without {f}" for f in ("GlobalAvg", "MostPop", "BaselineOnly", "MF", "SVD",
                                 "PMF-linear", "PMF-nonlinear", "MMMF", "BPR", "WBPR")}
    for label, keep in {"all models": models,
                        "without PMF-nonlinear": models - {"PMFNL10"},
                        "without BaselineOnly": models - {"BaselineOnly"}}.items():
        want = jad.protocol_taus(authors[authors["model"].isin(keep)])
        want = want[want["method"].isin(["holdout", "stratified", "Q1"])]
        got = table[table["zoo"] == label]
        assert (got["n_models"] == len(keep)).all()
        np.testing.assert_allclose(got["tau"].to_numpy(), want["tau"].to_numpy(), rtol=0, atol=0)
    # dropping a family changes some tau (the check can fail)
    assert not np.allclose(table.query("zoo == 'all models'")["tau"].to_numpy(),
                           table.query("zoo == 'without MF'")["tau"].to_numpy())


def test_zoo_sensitivity_validation(small_values):
    with pytest.raises(ValueError, match="methods"):
        jad.zoo_sensitivity(small_values, methods=("truth",))
    with pytest.raises(ValueError, match="methods"):
        jad.zoo_sensitivity(small_values, methods=())
    with pytest.raises(ValueError, match="protocol"):
        jad.zoo_sensitivity(small_values, protocol="paper")
    one = small_values[small_values["model"].str.startswith("MF") | (small_values["zoo"] != "authors")]
    with pytest.raises(ValueError, match="two families"):
        jad.zoo_sensitivity(one)


def test_model_family_names_every_family_of_the_authors_zoo():
    zoo = jad.authors_zoo(sizes=(10, 100))
    families = {jad.model_family(m) for m in zoo}
    assert families == set(jad.AUTHORS_FAMILIES)
    assert jad.model_family("PMFL10") == "PMF-linear" and jad.model_family("MMMF100") == "MMMF"
    for name, family in {"MLP": "MLP", "GMF30": "GMF", "NeuMF100": "NeuMF", "WMF70": "WMF",
                         "MPOP": "MostPop"}.items():
        assert jad.model_family(name) == family
    for bad in ("MF", "GA10", "MLP50", "KNN10", "", 3, None):
        with pytest.raises(ValueError, match="name must name a model"):
            jad.model_family(bad)


# --------------------------------------------------------------------------------------
# the two trainers of the NCF families, from the stored run
# --------------------------------------------------------------------------------------
def test_trainer_comparison_reads_both_trainers_rows():
    models = jad.trainer_comparison("coat")
    assert set(models["family"]) == set(jad.NCF_FAMILIES)
    assert models["model"].nunique() == 21  # MLP, GMF10..100, NeuMF10..100
    assert models[["tensorflow", "numpy"]].notna().all().all()
    truth = models[models["estimator"] == "truth"]
    assert (truth["seed"] == -1).all() and truth["seed_sd"].isna().all()
    per_seed = models[models["seed"] >= 0]
    assert per_seed["seed_sd"].notna().all() and set(per_seed["seed"]) == set(range(5))
    # the same seeds give the same initial weights and batches: GMF's values agree
    assert (models.query("family == 'GMF'")["difference"].abs() < 1e-9).mean() > 0.99
    taus = jad.trainer_comparison("coat", what="taus")
    assert set(taus["k"]) == {-1, 5, 10, 20, 30, 100} and (taus["n_models"] == 104).all()
    assert len(taus) == 6 * 6 * 5  # cut-offs x methods x seeds
    assert np.allclose(taus["difference"], taus["numpy"] - taus["tensorflow"])


def test_trainer_comparison_refuses_what_does_not_hold(tmp_path):
    import json
    import shutil

    from recbias_tutorial._stored_results import results_root

    with pytest.raises(ValueError, match="dataset"):
        jad.trainer_comparison("kuairec")
    with pytest.raises(ValueError, match="what"):
        jad.trainer_comparison("coat", what="seeds")
    folder = tmp_path / "jadidinejad2021"
    shutil.copytree(results_root() / "jadidinejad2021", folder)
    provenance = json.loads((folder / "provenance.json").read_text())
    kept = provenance["datasets"]["coat"]["tensorflow_ncf"]["file"]
    (folder / kept).write_bytes((folder / kept).read_bytes()[:-10])  # damaged
    with pytest.raises(ValueError, match="sha256"):
        jad.trainer_comparison("coat", results=folder)
    del provenance["datasets"]["coat"]["tensorflow_ncf"]
    (folder / "provenance.json").write_text(json.dumps(provenance))
    with pytest.raises(ValueError, match="no TensorFlow rows"):
        jad.trainer_comparison("coat", results=folder)


def test_ncf_seed_spread_refits_the_truth_under_other_seeds():
    import recbias_tutorial as rb
    data = rb.simulate(60, 40, seed=0, mean_ratings_per_user=8)
    kw = dict(families=["GMF", "MLP"], sizes=[10], ks=[None, 5], cache=False)
    spread = jad.ncf_seed_spread(data, seeds=[3, 4], **kw)
    assert list(spread.columns) == ["train_seed", "model", "family", "k", "value"]
    assert len(spread) == 2 * 2 * 2 and set(spread["family"]) == {"GMF", "MLP"}
    first = spread[spread["train_seed"] == 3].set_index(["model", "k"])["value"]
    second = spread[spread["train_seed"] == 4].set_index(["model", "k"])["value"]
    assert not np.allclose(first, second)  # another seed, another fit
    assert spread["value"].between(0, 1).all()
    again = jad.ncf_seed_spread(data, seeds=[3], **kw).set_index(["model", "k"])["value"]
    pd.testing.assert_series_equal(again, first)  # a seed fixes the fit


def test_neural_costs_show_each_trainer():
    costs = jad.neural_costs("yahoo_r3")
    assert list(costs.columns) == ["family", "trainer", "models", "measured",
                                   "seconds_per_model", "hours", "stored"]
    assert set(costs["trainer"]) <= set(jad.NCF_BACKENDS)
    tf = costs[costs["trainer"] == "tensorflow"].set_index("family")
    assert tf.loc["WMF", "stored"] and tf.loc["WMF", "models"] == 10
    assert (costs["hours"] > 0).all() and costs[["family", "trainer"]].value_counts().max() == 1
    assert set(jad.neural_costs("coat").query("trainer == 'numpy'")["family"]) == set(
        jad.NCF_FAMILIES)
    with pytest.raises(ValueError, match="dataset"):
        jad.neural_costs("nope")
