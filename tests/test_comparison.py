"""compare_methods / rank_agreement: the truth, each method against the public estimators,
IPS unbiasedness by seeded Monte Carlo, determinism and validation."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial import _comparison_methods as _m
from recbias_tutorial import _estimator_registry as _reg
from recbias_tutorial import comparison
from recbias_tutorial.comparison import SUMMARY_COLUMNS, compare_methods, rank_agreement
from recbias_tutorial.replications.jadidinejad2021 import powerlaw_propensity

K = 5


@pytest.fixture(scope="module")
def world():
    return rb.simulate(150, 80, seed=4, mean_ratings_per_user=10, n_mar_items=12)


@pytest.fixture(scope="module")
def models(world):
    rng = np.random.default_rng(0)
    pop = np.bincount(world.mnar["item"], minlength=world.n_items).astype(float)
    stars = world.full["rating"].to_numpy().reshape(world.n_users, world.n_items)
    return {"pop": np.tile(pop, (world.n_users, 1)),
            "noisy oracle": stars + 2 * rng.random(stars.shape),
            "random": rng.random(stars.shape),
            "scorer": rb.Scorer(lambda u: stars[u] + rng.random((len(u), world.n_items)) * 0
                                + np.linspace(0, 0.5, world.n_items), n_users=world.n_users,
                                n_items=world.n_items)}


@pytest.fixture(scope="module")
def table(world, models):
    return compare_methods(world, models=models, seed=1, n_redraws=4, k=K)


def _heldout(world):
    logged = pd.MultiIndex.from_frame(world.mnar[["user", "item"]])
    keep = ~pd.MultiIndex.from_frame(world.full[["user", "item"]]).isin(logged)
    return world.full[keep].reset_index(drop=True)


def test_tidy_columns_and_rows(table, models):
    assert tuple(table.columns[1:9]) == SUMMARY_COLUMNS
    assert list(table.columns) == ["family", *SUMMARY_COLUMNS, "n_redraws", "redraws"]
    assert set(table["metric"]) == {"recall", "ndcg"}
    assert not table.duplicated(["method", "model", "metric"]).any()
    per_method = table.groupby(["method", "metric"]).size()
    assert (per_method == len(models)).all()
    recall_only = {m for m in table["method"] if m.endswith("(random)")}
    assert recall_only and set(table.query("metric == 'ndcg'")["method"]).isdisjoint(recall_only)
    assert table.attrs["n_random"] == 12 and table.attrs["k_bar"] == 1  # round(5 * 12 / 70)
    draws = np.array(table["redraws"].tolist())
    assert draws.shape == (len(table), 4) and table["n_redraws"].eq(4).all()
    np.testing.assert_allclose(table["estimate"], draws.mean(1))
    np.testing.assert_allclose(table["bias"], table["estimate"] - table["true"])
    np.testing.assert_allclose(table["sd"], draws.std(1, ddof=1))
    np.testing.assert_allclose(table["rmse"] ** 2, table["bias"] ** 2 + draws.var(1), atol=1e-12)


def test_true_metric_is_the_metric_on_every_unlogged_pair(world, models, table):
    held = _heldout(world)
    for name, scores in models.items():
        truth = table.query("model == @name and method == 'AOA (log)'").set_index("metric")["true"]
        assert truth["recall"] == pytest.approx(rb.aoa(scores, held, k=K, exclude=world.mnar))
        ndcg = rb.ranking_metrics(scores, held, k=K, exclude=world.mnar, auc=False)["ndcg"].mean()
        assert truth["ndcg"] == pytest.approx(ndcg)


def test_whole_ranking_is_ndcg_without_cutoff(world, models):
    whole = compare_methods(world, models=models, seed=1, n_redraws=2, k=None)
    assert set(whole["metric"]) == {"ndcg"} and whole.attrs["k"] is None
    assert not whole["method"].str.endswith("(random)").any()
    held = _heldout(world)
    for name, scores in models.items():
        truth = whole.query("model == @name and method == 'AOA (log)'")["true"].item()
        expect = rb.ranking_metrics(scores, held, k=80, exclude=world.mnar, auc=False)["ndcg"]
        assert truth == pytest.approx(expect.mean())


def test_deterministic_by_seed(world, models, table):
    again = compare_methods(world, models=models, seed=1, n_redraws=4, k=K)
    pd.testing.assert_frame_equal(table, again)
    other = compare_methods(world, models=models, seed=2, n_redraws=4, k=K)
    assert not np.allclose(table["estimate"], other["estimate"])


def test_every_method_equals_the_public_estimator_on_the_same_sets(world, models):
    """One redraw by hand: the kernels give what the package's estimators give."""
    s = comparison._setup(world, comparison._check_models(models, (150, 80)), K)
    opts = _m.prepare_options(s, _m.Options(gammas=(0.0, 1.0), sizes=(0.5,), n_strata=2,
                                            clip_quantile=0.2, item_power=2.0, k_bar=2,
                                            clip_gamma=1.0),
                              comparison._authors_propensity(s.train, s.n_items))
    test, random, int_rng = _m.draw_sets(s, np.random.default_rng(9))
    state = int_rng.bit_generator.state
    est = _reg.run_redraw(s, opts, test, random, int_rng)
    names = [m for _, m in _reg.method_names(opts)]
    got = {(m, model): est[j, n] for j, m in enumerate(names) for n, model in enumerate(models)}
    train, n_true = world.mnar, s.n_true
    kw = dict(k=K, exclude=train)
    rel = test[test["rating"] >= 4]
    p_true = world.propensity
    pop1 = rb.popularity_propensity(train, 80, gamma=1.0)
    clip = np.quantile(pop1[rel["item"]], 0.2)
    p_auth, _, _ = powerlaw_propensity(np.bincount(train["item"], minlength=80))
    p_auth = np.maximum(p_auth, 1.0)
    gen = np.random.default_rng(0)
    gen.bit_generator.state = state
    parts = {f"{st.upper()} ρ=0.5": rb.intervene(test, strategy=st, size=0.5, train=train,
                                                  mar=random, seed=gen)
             for st in ("reg", "skew", "wtd", "wtd_h")}
    for model, scores in models.items():
        expect = {
            "AOA (log)": rb.aoa(scores, test, **kw),
            "IPS (true P)": rb.ips(scores, test, p_true, n_relevant=n_true, **kw),
            "SNIPS (true P)": rb.snips(scores, test, p_true, **kw),
            "SNIPS (pop, γ=0)": rb.snips(scores, test,
                                         rb.popularity_propensity(train, 80, gamma=0.0), **kw),
            "SNIPS (pop, γ=1, clipped)": rb.snips(scores, test, pop1, clip=clip, **kw),
            "stratified (authors' bins)": rb.stratified(
                scores, test, p_auth, binning="cut", bins_from="all", weights_from="all",
                **kw)["value"].iloc[-1],
            "stratified (quantile bins)": rb.stratified(scores, test, pop1, **kw)["value"].iloc[-1],
            "URE (random)": rb.ure_recall(scores, random, **kw),
            "Recall@K̄ (random)": rb.recall_at_kbar(scores, random, k_bar=2),
            **{name: rb.aoa(scores, part, **kw) for name, part in parts.items()},
        }
        for method, value in expect.items():
            assert got[(method, model)][0] == pytest.approx(value), (method, model)
        assert got[("AOA (log)", model)][1] == pytest.approx(
            rb.ranking_metrics(scores, test, auc=False, **kw)["ndcg"].mean())
        strat = rb.stratified(scores, test, pop1, metric="ndcg", **kw)["value"].iloc[-1]
        assert got[("stratified (quantile bins)", model)][1] == pytest.approx(strat)
        nb = rb.naive_bayes_propensity(train, random, n_users=150, n_items=80)
        p_nb = rb.propensity.pair_propensity(test, nb, (150, 80))
        assert got[("SNIPS (NB)", model)][0] == pytest.approx(rb.snips(scores, test, p_nb, **kw))


def test_ips_with_true_propensities_is_unbiased(world, models):
    """Seeded Monte Carlo: |mean - truth| within 4 standard errors, for every model and metric."""
    n = 300
    tab = compare_methods(world, models=models, seed=5, n_redraws=n, k=K, sizes=(0.5,))
    ips = tab[tab["method"] == "IPS (true P)"]
    assert (ips["bias"].abs() <= 4 * ips["sd"] / np.sqrt(n)).all(), ips[["bias", "sd"]]
    aoa = tab[tab["method"] == "AOA (log)"]
    assert (aoa["bias"].abs() > 4 * aoa["sd"] / np.sqrt(n)).sum() >= len(aoa) // 2  # naive: not


def test_random_sample_and_test_log_avoid_the_log(world, models):
    s = comparison._setup(world, comparison._check_models(models, (150, 80)), K)
    test, random, _ = _m.draw_sets(s, np.random.default_rng(3))
    for frame in (test, random):
        assert s.candidate[frame["user"], frame["item"]].all()
        assert not frame.duplicated(["user", "item"]).any()
    assert (random.groupby("user").size() == 12).all()
    assert set(random["user"]) == set(world.mar["user"])


def test_rank_agreement(table):
    agree = rank_agreement(table)
    assert {"family", "method", "metric", "tau", "tau_sd", "n_models", "n_redraws"} <= set(agree)
    assert len(agree) == len(table.groupby(["method", "metric"]))
    assert agree["tau"].between(-1, 1).all()
    perfect = table.copy()
    perfect["redraws"] = [(t, t + 1e-3) for t in perfect["true"]]
    assert (rank_agreement(perfect)["tau"] == 1).all()
    two = pd.concat([table.assign(world="a"), table.assign(world="b")])
    assert len(rank_agreement(two)) == 2 * len(agree)


def test_kendall_tau_b_matches_scipy_with_ties():
    from scipy import stats

    rng = np.random.default_rng(0)
    truth = rng.integers(0, 4, 9).astype(float)  # ties on both sides
    draws = rng.integers(0, 4, (5, 9)).astype(float)
    got = comparison._kendall_tau_b(draws, truth)
    want = [stats.kendalltau(d, truth).statistic for d in draws]
    np.testing.assert_allclose(got, want)
    assert np.isnan(comparison._kendall_tau_b(np.ones((1, 9)), truth)).all()


def test_bad_inputs_name_the_argument(world, models):
    ok = dict(models=models, seed=0, n_redraws=2)
    with pytest.raises(ValueError, match="world"):
        compare_methods(world.full, **ok)
    with pytest.raises(ValueError, match="world"):
        compare_methods(dataclasses.replace(world, propensity=None), **ok)
    with pytest.raises(ValueError, match="world"):
        compare_methods(dataclasses.replace(world, mar=None), **ok)
    with pytest.raises(ValueError, match="world"):
        compare_methods(dataclasses.replace(world, full=world.full.iloc[:10]), **ok)
    with pytest.raises(ValueError, match="models"):
        compare_methods(world, models={"a": models["pop"]}, seed=0)
    with pytest.raises(ValueError, match="models\\['bad'\\]"):
        compare_methods(world, models={"a": models["pop"], "bad": np.ones((3, 3))}, seed=0)
    with pytest.raises(ValueError, match="models\\['nan'\\]"):
        compare_methods(world, models={"a": models["pop"], "nan": np.full((150, 80), np.nan)},
                        seed=0)
    for arg, value in [("n_redraws", 1), ("k", 0), ("k", 81), ("n_strata", 0),
                       ("gammas", (-2.0,)), ("sizes", (1.5,)), ("clip_quantile", 1.0),
                       ("item_power", -1.0)]:
        with pytest.raises(ValueError, match=arg):
            compare_methods(world, **{**ok, arg: value})
    with pytest.raises(ValueError, match="seed"):
        compare_methods(world, models=models, seed=None)
    with pytest.raises(ValueError, match="table"):
        rank_agreement(pd.DataFrame({"method": ["m"]}))
