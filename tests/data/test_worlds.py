"""Tests for recbias_tutorial.simulate: shapes, determinism and the statistical claims."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recbias_tutorial.data import FeedbackData
from recbias_tutorial.data import sample_observed, sample_random_exposure, simulate

ALPHA = 1e-3  # significance level of every goodness-of-fit check (fixed seeds)


@pytest.fixture(scope="module")
def world():
    return simulate(3000, 400, seed=0)


def _same(a: FeedbackData, b: FeedbackData) -> bool:
    return (a.full.equals(b.full) and a.mnar.equals(b.mnar) and a.mar.equals(b.mar)
            and np.array_equal(a.propensity, b.propensity))


def test_deterministic_for_a_seed_and_different_across_seeds():
    a, b = simulate(200, 50, seed=7), simulate(200, 50, seed=7)
    assert _same(a, b)
    c = simulate(200, 50, seed=8)
    assert not a.full.equals(c.full) and not a.mnar.equals(c.mnar)
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    assert _same(simulate(100, 30, seed=g1), simulate(100, 30, seed=g2))


def test_shapes_dtypes_and_ids(world):
    n, m = world.n_users, world.n_items
    assert isinstance(world, FeedbackData) and world.threshold == 4.0
    for frame in (world.full, world.mnar, world.mar):
        assert list(frame.columns) == ["user", "item", "rating"]
        assert [str(t) for t in frame.dtypes] == ["int64", "int64", "float64"]
        assert frame["user"].between(0, n - 1).all() and frame["item"].between(0, m - 1).all()
    full = world.full
    assert len(full) == n * m
    np.testing.assert_array_equal(full["user"], np.repeat(np.arange(n), m))
    np.testing.assert_array_equal(full["item"], np.tile(np.arange(m), n))
    assert set(np.unique(full["rating"])) == {1.0, 2.0, 3.0, 4.0, 5.0}
    assert world.propensity.shape == (n, m)
    # observed ratings are the true ones, each pair at most once
    for frame in (world.mnar, world.mar):
        assert not frame.duplicated(["user", "item"]).any()
        truth = full["rating"].to_numpy().reshape(n, m)[frame["user"], frame["item"]]
        np.testing.assert_array_equal(frame["rating"], truth)


def test_share_relevant_in_full_is_realistic(world):
    share = (world.full["rating"] >= 4).mean()
    assert 0.12 <= share <= 0.25


def test_world_is_shared_across_bias_knobs_and_binary():
    base = simulate(150, 60, seed=5)
    mcar = simulate(150, 60, seed=5, popularity_bias=0, rating_bias=0, mean_ratings_per_user=9)
    assert base.full.equals(mcar.full)
    binary = simulate(150, 60, seed=5, binary=True, threshold=1.0)
    assert binary.threshold == 1.0
    np.testing.assert_array_equal(binary.full["rating"], (base.full["rating"] >= 4) * 1.0)
    np.testing.assert_array_equal(binary.propensity, base.propensity)  # same mechanism


def test_mar_sample_layout():
    data = simulate(300, 40, seed=2, n_mar_users=120, n_mar_items=7)
    per_user = data.mar.groupby("user").size()
    assert len(per_user) == 120 and (per_user == 7).all()
    assert simulate(30, 10, seed=2, n_mar_items=0, mean_ratings_per_user=3).mar is None
    assert simulate(30, 10, seed=2, n_mar_users=0, mean_ratings_per_user=3).mar is None


def test_propensity_range_and_scale(world):
    p = world.propensity
    assert np.all(p > 0) and np.all(p <= 1) and np.any(p == 1)  # default knobs cap a few
    np.testing.assert_allclose(p.sum(axis=1).mean(), 24.0, rtol=1e-9)
    tight = simulate(50, 40, seed=1, mean_ratings_per_user=35)  # heavy capping
    np.testing.assert_allclose(tight.propensity.sum(axis=1).mean(), 35.0, rtol=1e-9)
    assert tight.propensity.max() == 1.0
    everything = simulate(20, 10, seed=1, mean_ratings_per_user=10)
    assert np.all(everything.propensity == 1.0) and everything.mnar.equals(everything.full)


def test_mnar_long_tail_with_default_knobs(world):
    counts = np.sort(np.bincount(world.mnar["item"], minlength=world.n_items))[::-1]
    assert counts[: world.n_items // 10].sum() / counts.sum() > 0.35


def test_mcar_when_biases_are_zero():
    data = simulate(3000, 200, seed=4, popularity_bias=0, rating_bias=0)
    np.testing.assert_allclose(data.propensity, 24.0 / 200)
    # item counts are independent Binomial(n_users, p): sum of squared z-scores ~ chi2(n_items)
    p, counts = 24.0 / 200, np.bincount(data.mnar["item"], minlength=200)
    z = (counts - 3000 * p) / np.sqrt(3000 * p * (1 - p))
    assert stats.chi2.sf((z**2).sum(), df=200) > ALPHA
    assert stats.chisquare(counts).pvalue > ALPHA  # (conditional version, conservative)
    # MCAR log: mean rating within 4 standard errors of the full mean
    r = data.mnar["rating"]
    assert abs(r.mean() - data.full["rating"].mean()) < 4 * r.std() / np.sqrt(len(r))


def test_positive_skew_in_mnar(world):
    mnar, mar = world.mnar["rating"], world.mar["rating"]
    assert mnar.mean() > mar.mean()
    assert (mnar >= 4).mean() > (mar >= 4).mean()


@pytest.mark.parametrize("n_mar_items", [15, 40])  # both sampling paths (<= 32 and > 32)
def test_mar_items_are_uniform(n_mar_items):
    data = simulate(4000, 150, seed=11, n_mar_items=n_mar_items)
    assert (data.mar.groupby("user").size() == n_mar_items).all()
    counts = np.bincount(data.mar["item"], minlength=150)
    assert stats.chisquare(counts).pvalue > ALPHA


def test_mar_subsets_are_uniform():
    # all 10 two-item subsets of 5 items are equally likely
    data = simulate(20000, 5, seed=12, n_mar_items=2, mean_ratings_per_user=1)
    pairs = data.mar["item"].to_numpy().reshape(-1, 2)
    counts = np.bincount(pairs[:, 0] * 5 + pairs[:, 1], minlength=25)
    assert np.count_nonzero(counts) == 10
    assert stats.chisquare(counts[counts > 0]).pvalue > ALPHA


def test_sample_observed_matches_propensity():
    data = simulate(12, 15, seed=3, mean_ratings_per_user=5)
    p = data.propensity.ravel()
    n_draws = 1500
    rng = np.random.default_rng(99)
    hits = np.zeros(p.size)
    ips = np.empty(n_draws)
    truth = data.full["rating"].sum()
    for k in range(n_draws):
        log = sample_observed(data, seed=rng)
        hits[log["user"].to_numpy() * data.n_items + log["item"].to_numpy()] += 1
        ips[k] = (log["rating"] / data.propensity[log["user"], log["item"]]).sum()
    freq = hits / n_draws
    inner = p < 1
    np.testing.assert_array_equal(freq[~inner], 1.0)
    z = (freq[inner] - p[inner]) / np.sqrt(p[inner] * (1 - p[inner]) / n_draws)
    assert stats.chi2.sf((z**2).sum(), df=inner.sum()) > ALPHA
    # IPS total of the ratings is unbiased: within 4 standard errors of the truth
    assert abs(ips.mean() - truth) < 4 * ips.std(ddof=1) / np.sqrt(n_draws)


def test_sample_observed_needs_ground_truth():
    data = simulate(10, 12, seed=0, mean_ratings_per_user=3)
    bare = FeedbackData("x", 10, 12, mnar=data.mnar)
    with pytest.raises(ValueError, match="propensity"):
        sample_observed(bare, seed=0)


def test_sample_random_exposure():
    n_users, n_items, k = 2000, 20, 5
    full = pd.DataFrame({"user": np.repeat(np.arange(n_users), n_items),
                         "item": np.tile(np.arange(n_items), n_users),
                         "rating": np.ones(n_users * n_items)})
    d_rand = sample_random_exposure(full, k, seed=0)
    assert (d_rand.groupby("user").size() == k).all() and d_rand["user"].nunique() == n_users
    assert not d_rand.duplicated(["user", "item"]).any()
    assert len(d_rand.merge(full, on=["user", "item"])) == len(d_rand)  # subset of full
    assert d_rand.equals(sample_random_exposure(full, k, seed=0))
    assert not d_rand.equals(sample_random_exposure(full, k, seed=1))
    assert stats.chisquare(np.bincount(d_rand["item"], minlength=n_items)).pvalue > ALPHA
    some = sample_random_exposure(full, 3, seed=0, users=[5, 1, 7])
    assert sorted(some["user"].unique()) == [1, 5, 7] and len(some) == 9


def test_sample_random_exposure_errors():
    full = pd.DataFrame({"user": [0, 0, 0, 1], "item": [0, 1, 2, 0], "rating": [1.0] * 4})
    with pytest.raises(ValueError, match="n_items_per_user"):
        sample_random_exposure(full, 2, seed=0)
    with pytest.raises(ValueError, match="n_items_per_user"):
        sample_random_exposure(full, 0, seed=0)
    with pytest.raises(ValueError, match="users"):
        sample_random_exposure(full, 2, seed=0, users=[0, 3])
    assert len(sample_random_exposure(full, 2, seed=0, users=[0])) == 2


@pytest.mark.parametrize("kwargs, name", [
    (dict(n_users=0), "n_users"),
    (dict(n_users=2.5), "n_users"),
    (dict(n_items=-1), "n_items"),
    (dict(n_factors=0), "n_factors"),
    (dict(mean_ratings_per_user=0), "mean_ratings_per_user"),
    (dict(mean_ratings_per_user=11), "mean_ratings_per_user"),
    (dict(n_mar_items=11), "n_mar_items"),
    (dict(n_mar_users=21), "n_mar_users"),
    (dict(popularity_bias=np.nan), "popularity_bias"),
    (dict(binary=True), "threshold"),
])
def test_bad_inputs_name_the_argument(kwargs, name):
    args = dict(n_users=20, n_items=10, seed=0, mean_ratings_per_user=3) | kwargs
    with pytest.raises(ValueError, match=name):
        simulate(**args)


@pytest.mark.parametrize("n", [1, 5, 50])
def test_random_exposure_fast_sort_equals_lexsort(n):
    """Small user ids take the packed-key sort, large ones lexsort: the same rows."""
    world = simulate(300, 200, seed=n)
    fast = sample_random_exposure(world.full, n, seed=n)
    shifted = world.full.assign(user=world.full["user"] + 2**12)  # beyond the packed range
    slow = sample_random_exposure(shifted, n, seed=n).assign(user=lambda d: d["user"] - 2**12)
    pd.testing.assert_frame_equal(fast, slow)
