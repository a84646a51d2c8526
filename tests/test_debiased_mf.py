"""Debiased MF trainers and the many-cut-off evaluation helpers of recbias_tutorial.debiased_mf."""

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial import estimators as est
from recbias_tutorial.debiased_mf import (
    calibrate_propensity,
    fit_mf,
    kbar_curves,
    recall_curves,
    train_mf,
    user_bootstrap,
)
from recbias_tutorial.propensity import popularity_propensity
from recbias_tutorial.simulate import sample_random_exposure, simulate


def _pairs(frame, n_items):
    return frame["user"].to_numpy() * n_items + frame["item"].to_numpy()


@pytest.fixture(scope="module")
def world():
    """A small simulated world: the MNAR log is the training data, the rest of `full` the truth."""
    w = simulate(500, 600, seed=0, mean_ratings_per_user=30.0)
    train = w.mnar
    test = w.full[~np.isin(_pairs(w.full, w.n_items), _pairs(train, w.n_items))]
    pop = calibrate_propensity(popularity_propensity(train, w.n_items, gamma=0.0),
                               n_observed=len(train), n_users=w.n_users)
    return w, train, test.reset_index(drop=True), pop


@pytest.fixture(scope="module")
def most_pop(world):
    """Per-user full-catalogue Recall@10 of MostPop (item counts in the log)."""
    w, train, test, _ = world
    counts = np.bincount(train["item"], minlength=w.n_items).astype(float)
    scores = np.broadcast_to(counts, (w.n_users, w.n_items))
    return recall_curves(scores, test, [10], exclude=train, per_user=True)[10]


SETTINGS = {
    "naive": {},
    "ips": {"clip": 0.05, "reg": 100.0},
    "dr": {"clip": 0.05},
}


@pytest.mark.parametrize("method", list(SETTINGS))
def test_trainer_beats_most_popular(world, most_pop, method):
    """Each trainer learns: its Recall@10 on all held-out pairs beats MostPop by > 3 paired SE."""
    w, train, test, pop = world
    kw = dict(SETTINGS[method])
    if method != "naive":
        kw["propensity"] = pop
    scores = fit_mf(train, n_users=w.n_users, n_items=w.n_items, seed=0, method=method,
                    epochs=20, **kw)
    mine = recall_curves(scores, test, [10], exclude=train, per_user=True)[10]
    diff = (mine - most_pop).to_numpy()  # same users: paired comparison
    se = diff.std(ddof=1) / np.sqrt(len(diff))
    assert diff.mean() > 3 * se, (mine.mean(), most_pop.mean(), se)


def test_same_seed_same_scores_other_seed_other_scores(world):
    w, train, _, pop = world
    kw = dict(n_users=w.n_users, n_items=w.n_items, method="dr", propensity=pop, epochs=2)
    a = fit_mf(train, seed=3, **kw)
    assert np.array_equal(a, fit_mf(train, seed=3, **kw))
    assert not np.array_equal(a, fit_mf(train, seed=4, **kw))


def test_ips_with_unit_propensities_is_naive(world):
    """With P = 1 every weight is 1: IPS and the naive objective coincide exactly."""
    w, train, _, _ = world
    kw = dict(n_users=w.n_users, n_items=w.n_items, seed=1, epochs=3)
    naive = fit_mf(train, method="naive", **kw)
    ips = fit_mf(train, method="ips", propensity=np.ones(w.n_items), **kw)
    np.testing.assert_allclose(ips, naive, rtol=0, atol=1e-5)


def test_training_reduces_the_loss_and_dr_keeps_its_imputation(world):
    w, train, _, pop = world
    res = train_mf(train, n_users=w.n_users, n_items=w.n_items, seed=0, epochs=8)
    assert res.loss[-1] < res.loss[0]
    assert res.imputation is None and res.scores().shape == (w.n_users, w.n_items)
    dr = train_mf(train, n_users=w.n_users, n_items=w.n_items, seed=0, epochs=2,
                  method="dr", propensity=w.propensity, factors=4, imputation_factors=2)
    assert dr.imputation.shape == (w.n_users, w.n_items) and dr.method == "dr"
    assert np.isfinite(dr.scores()).all()


def test_binary_feedback_with_two_dimensional_propensity():
    w = simulate(60, 50, seed=2, mean_ratings_per_user=8.0, binary=True, threshold=1.0)
    s = fit_mf(w.mnar, n_users=60, n_items=50, seed=0, method="ips", propensity=w.propensity,
               threshold=1.0, factors=4, epochs=3)
    assert s.shape == (60, 50) and s.dtype == np.float64 and np.isfinite(s).all()


# --- calibrate_propensity -----------------------------------------------------------------
def test_calibrated_propensities_match_the_log_size_and_keep_ratios():
    rng = np.random.default_rng(0)
    w = rng.pareto(1.5, size=300) + 0.01
    p = calibrate_propensity(w, n_observed=5_000, n_users=200)
    assert np.isclose(200 * p.sum(), 5_000)
    assert p.max() <= 1.0 and (p > 0).all()
    free = p < 1.0
    ratio = p[free] / w[free]
    np.testing.assert_allclose(ratio, ratio[0])  # uncapped items keep their relative sizes
    assert (w[~free] >= w[free].max()).all()  # only the heaviest items are capped


@pytest.mark.parametrize("kwargs, match", [
    (dict(propensity=np.array([1.0, -1.0]), n_observed=1, n_users=1), "finite and > 0"),
    (dict(propensity=np.ones((2, 2)), n_observed=1, n_users=1), "1-D"),
    (dict(propensity=np.ones(2), n_observed=5, n_users=2), "exceeds"),
    (dict(propensity=np.ones(2), n_observed=0, n_users=2), "n_observed"),
    (dict(propensity=np.ones(2), n_observed=1, n_users=1.5), "n_users"),
])
def test_calibrate_propensity_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        calibrate_propensity(**kwargs)


# --- validation of the trainers ------------------------------------------------------------
TINY = pd.DataFrame({"user": [0, 0, 1, 2], "item": [0, 1, 0, 2], "rating": [5.0, 4.0, 5.0, 1.0]})


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="svd"), "method must be one of"),
    (dict(method="ips"), "propensity is required"),
    (dict(method="dr"), "propensity is required"),
    (dict(propensity=np.ones(4)), "only used by"),
    (dict(method="ips", propensity=np.ones(3)), "length n_items=4"),
    (dict(method="ips", propensity=np.ones((2, 4))), r"shape \(3, 4\)"),
    (dict(method="ips", propensity=np.ones((1, 3, 4))), "1-D .* or 2-D"),
    (dict(method="ips", propensity=np.full(4, 2.0)), r"absolute probabilities in \(0, 1\]"),
    (dict(method="ips", propensity=np.full(4, np.nan)), "finite"),
    (dict(factors=0), "factors must be >= 1"),
    (dict(epochs=True), "epochs must be an integer"),
    (dict(n_negatives=2.5), "n_negatives must be an integer"),
    (dict(batch_size=0), "batch_size"),
    (dict(lr=0.0), "lr must be in"),
    (dict(reg=-1.0), "reg must be in"),
    (dict(clip=0.0), "clip must be in"),
    (dict(clip=1.5), "clip must be in"),
    (dict(threshold=np.nan), "threshold must be a finite number"),
    (dict(threshold=6.0), "no relevant rows"),
    (dict(seed=None), "seed must be given"),
    (dict(n_users=0), "n_users must be >= 1"),
    (dict(n_users=2), "train.user has ids outside"),
])
def test_trainer_validation(kwargs, match):
    args = dict(n_users=3, n_items=4, seed=0, epochs=1)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        fit_mf(TINY, **args)


def test_trainer_refuses_bad_frames():
    with pytest.raises(ValueError, match="missing column"):
        fit_mf(TINY.drop(columns="rating"), n_users=3, n_items=4, seed=0)
    with pytest.raises(ValueError, match="duplicate"):
        fit_mf(pd.concat([TINY, TINY]), n_users=3, n_items=4, seed=0)
    with pytest.raises(ValueError, match="DataFrame"):
        fit_mf(TINY.to_numpy(), n_users=3, n_items=4, seed=0)


# --- recall_curves / kbar_curves / user_bootstrap ------------------------------------------
@pytest.fixture(scope="module")
def small_eval():
    w = simulate(120, 90, seed=4, mean_ratings_per_user=10.0)
    rng = np.random.default_rng(0)
    train = w.mnar
    test = w.full[~np.isin(_pairs(w.full, w.n_items), _pairs(train, w.n_items))]
    test = test.reset_index(drop=True)
    tied = np.round(rng.random((w.n_users, w.n_items)), 1)  # many ties
    smooth = rng.random((w.n_users, w.n_items))
    d_rand = sample_random_exposure(test, 12, seed=1)
    return w, train, test, d_rand, {"tied": tied, "smooth": smooth}


@pytest.mark.parametrize("name", ["tied", "smooth"])
def test_recall_curves_equal_aoa_for_every_k(small_eval, name):
    w, train, test, d_rand, scores = small_eval
    ks = [1, 3, 10, 40, 90]
    curves = recall_curves(scores[name], {"full": test, "rand": d_rand}, ks, exclude=train)
    for k in ks:
        assert curves.loc["full", k] == pytest.approx(est.aoa(scores[name], test, k=k, exclude=train))
        assert curves.loc["rand", k] == pytest.approx(est.aoa(scores[name], d_rand, k=k,
                                                              exclude=train))


def test_recall_curves_on_random_data_are_ure_without_ties(small_eval):
    w, train, _, d_rand, scores = small_eval
    ks = [1, 5, 20]
    curves = recall_curves(scores["smooth"], d_rand, ks, exclude=train)
    for k in ks:
        assert curves.loc["test", k] == pytest.approx(
            est.ure_recall(scores["smooth"], d_rand, k=k, exclude=train))


@pytest.mark.parametrize("name", ["tied", "smooth"])
def test_kbar_curves_equal_recall_at_kbar(small_eval, name):
    *_, d_rand, scores = small_eval
    curves = kbar_curves(scores[name], d_rand, [1, 2, 5, 12, 30])
    for kb in (1, 2, 5, 12, 30):
        assert curves.loc["random", kb] == pytest.approx(
            est.recall_at_kbar(scores[name], d_rand, k_bar=kb))


def test_per_user_values_average_to_the_curve(small_eval):
    w, train, test, d_rand, scores = small_eval
    per_user = recall_curves(scores["smooth"], test, [5, 10], exclude=train, per_user=True)
    assert list(per_user.index.names) == ["set", "user"]
    means = recall_curves(scores["smooth"], test, [5, 10], exclude=train)
    np.testing.assert_allclose(per_user.mean().to_numpy(), means.loc["test"].to_numpy())
    kb = kbar_curves(scores["smooth"], d_rand, [3], per_user=True)
    assert kb[3].between(0, 1).all()


def test_curve_validation(small_eval):
    w, train, test, d_rand, scores = small_eval
    s = scores["smooth"]
    with pytest.raises(ValueError, match="ks must lie in"):
        recall_curves(s, test, [0, 5])
    with pytest.raises(ValueError, match="ks must be a non-empty list of integers"):
        recall_curves(s, test, [1.5])
    with pytest.raises(ValueError, match="also in exclude"):
        recall_curves(s, w.full, [5], exclude=train)
    with pytest.raises(ValueError, match="no relevant items"):
        recall_curves(s, test.assign(rating=1.0), [5])
    with pytest.raises(ValueError, match="mapping"):
        recall_curves(s, [test], [5])
    with pytest.raises(ValueError, match="k_bars"):
        kbar_curves(s, d_rand, [0])
    with pytest.raises(ValueError, match="scores must be finite"):
        kbar_curves(np.full_like(s, np.nan), d_rand, [1])


def test_user_bootstrap_covers_the_mean_and_is_paired():
    rng = np.random.default_rng(1)
    x = rng.random(400)
    frame = pd.DataFrame({"a": x, "b": x + 1.0})
    out = user_bootstrap(frame, seed=0, n_resamples=500)
    assert list(out.columns) == ["estimate", "low", "high"]
    assert (out["low"] < out["estimate"]).all() and (out["estimate"] < out["high"]).all()
    # the same users in every resample: the interval of b is the interval of a shifted by 1
    np.testing.assert_allclose(out.loc["b", ["low", "high"]].to_numpy(),
                               out.loc["a", ["low", "high"]].to_numpy() + 1.0)
    half = (out.loc["a", "high"] - out.loc["a", "low"]) / 2
    assert half == pytest.approx(1.96 * x.std() / np.sqrt(len(x)), rel=0.2)
    with pytest.raises(ValueError, match="at least two users"):
        user_bootstrap([0.5], seed=0)
    with pytest.raises(ValueError, match="confidence"):
        user_bootstrap(x, seed=0, confidence=1.0)
    with pytest.raises(ValueError, match="seed must be given"):
        user_bootstrap(x, seed=None)


def test_user_bootstrap_ignores_missing_values_per_column():
    frame = pd.DataFrame({"a": [1.0, 0.0, np.nan, 1.0], "b": [0.0, 0.0, 0.0, 1.0]})
    out = user_bootstrap(frame, seed=0, n_resamples=200)
    assert out.loc["a", "estimate"] == pytest.approx(2 / 3)
    assert out.loc["b", "estimate"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="without any value"):
        user_bootstrap(pd.DataFrame({"a": [np.nan, np.nan]}), seed=0)
