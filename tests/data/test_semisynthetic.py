"""semi_synthetic: shapes, valid propensities, calibration to the MAR ratings, the log's margins."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import recbias_tutorial as rb
from recbias_tutorial.data import FeedbackData, semi_synthetic


@pytest.fixture(scope="module")
def real():
    """A 'real' dataset stand-in: a simulated world's log and MAR part only (no truth)."""
    w = rb.simulate(300, 120, seed=11, mean_ratings_per_user=15, n_mar_items=10)
    return FeedbackData("toy", w.n_users, w.n_items, mnar=w.mnar, mar=w.mar)


@pytest.fixture(scope="module")
def world(real):
    return semi_synthetic(real, seed=0)


def test_public_and_lazy():
    assert rb.semi_synthetic is semi_synthetic
    assert "semi_synthetic" in rb.__all__ and "semi_synthetic" in rb.data.__all__


def test_shapes_and_frames(real, world):
    n, m = real.n_users, real.n_items
    assert (world.n_users, world.n_items, world.threshold) == (n, m, real.threshold)
    assert len(world.full) == n * m and world.propensity.shape == (n, m)
    for frame in (world.full, world.mnar, world.mar):
        assert list(frame.columns) == ["user", "item", "rating"]
        assert [str(t) for t in frame.dtypes] == ["int64", "int64", "float64"]
        assert not frame.duplicated(["user", "item"]).any()
    full = world.full.set_index(["user", "item"])["rating"]
    for frame in (world.mnar, world.mar):  # both are observations of full
        got = full.loc[pd.MultiIndex.from_frame(frame[["user", "item"]])].to_numpy()
        np.testing.assert_array_equal(got, frame["rating"].to_numpy())
    assert set(world.mar["user"]) == set(real.mar["user"])
    assert (world.mar.groupby("user").size() == 10).all()
    assert world.info["semi_synthetic"] and world.name == "semi-synthetic toy"


def test_propensities_valid_and_from_item_and_value(world):
    p = world.propensity
    assert np.isfinite(p).all() and (p > 0).all() and (p <= 1).all()
    stars = world.full["rating"].to_numpy().reshape(p.shape)
    table = np.minimum(1.0, np.outer(world.info["item_factor"], world.info["value_factor"]))
    level = np.searchsorted(world.info["rating_values"], stars)
    np.testing.assert_allclose(p, table[np.arange(p.shape[1])[None, :], level])


def test_calibrated_to_the_mar_rating_distribution(real, world):
    mar = real.mar["rating"].value_counts(normalize=True).sort_index()
    full = world.full["rating"].value_counts(normalize=True).sort_index()
    assert list(full.index) == list(mar.index)
    np.testing.assert_allclose(full.to_numpy(), mar.to_numpy(), atol=1.0 / len(world.full) + 1e-9)
    # and the re-drawn MAR sample is a random sample of it (chi-square, fixed seed)
    observed = world.mar["rating"].value_counts().reindex(mar.index, fill_value=0).to_numpy()
    assert stats.chisquare(observed, full.to_numpy() * observed.sum()).pvalue > 1e-3


def test_log_margins_match_the_real_log(real, world):
    """Before capping at 1, expected item and rating-value counts = the real log's (+ smoothing)."""
    info, p = world.info, world.propensity
    stars = world.full["rating"].to_numpy().reshape(p.shape)
    level = np.searchsorted(info["rating_values"], stars)
    raw = np.outer(info["item_factor"], info["value_factor"])[np.arange(p.shape[1])[None, :], level]
    item_target = np.bincount(real.mnar["item"], minlength=real.n_items) + info["smoothing"]
    np.testing.assert_allclose(raw.sum(axis=0), item_target, rtol=1e-6)
    value_target = real.mnar["rating"].value_counts().sort_index().to_numpy() + info["smoothing"]
    value_target = value_target * item_target.sum() / value_target.sum()
    by_value = pd.Series(raw.ravel()).groupby(stars.ravel()).sum().to_numpy()
    np.testing.assert_allclose(by_value, value_target, rtol=1e-6)
    # one draw: the log's size is within 4 standard errors of its expectation
    assert abs(len(world.mnar) - p.sum()) < 4 * np.sqrt((p * (1 - p)).sum())


def test_deterministic_by_seed(real, world):
    again = semi_synthetic(real, seed=0)
    assert again.full.equals(world.full) and again.mnar.equals(world.mnar)
    assert again.mar.equals(world.mar) and np.array_equal(again.propensity, world.propensity)
    other = semi_synthetic(real, seed=1)
    assert not other.full.equals(world.full)


def test_real_coat_if_present():
    try:
        coat = rb.load_coat()
    except (rb.data.DatasetNotFoundError, OSError):
        pytest.skip("Coat not on disk")
    world = semi_synthetic(coat, seed=0)
    mar = coat.mar["rating"].value_counts(normalize=True).sort_index().to_numpy()
    full = world.full["rating"].value_counts(normalize=True).sort_index().to_numpy()
    np.testing.assert_allclose(full, mar, atol=1e-4)
    assert 0 < world.info["sigma"] < 2


@pytest.mark.parametrize("kwargs, name", [
    (dict(n_factors=0), "n_factors"), (dict(n_iter=0), "n_iter"), (dict(reg=0.0), "reg"),
    (dict(smoothing=-1.0), "smoothing"), (dict(seed=None), "seed"), (dict(seed=-1), "seed"),
])
def test_bad_arguments(real, kwargs, name):
    with pytest.raises(ValueError, match=name):
        semi_synthetic(real, **{"seed": 0, **kwargs})


def test_bad_data(real):
    with pytest.raises(ValueError, match="data"):
        semi_synthetic(real.mnar, seed=0)
    with pytest.raises(ValueError, match="data.mar"):
        semi_synthetic(dataclasses.replace(real, mar=None), seed=0)
    bad = real.mnar.assign(item=real.mnar["item"] + real.n_items)
    with pytest.raises(ValueError, match="mnar"):
        semi_synthetic(dataclasses.replace(real, mnar=bad), seed=0)
