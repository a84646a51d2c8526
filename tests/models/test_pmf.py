"""The compiled PMF loop (models/_pmf.py) gives Cornac's factors bit for bit, and is used
only where it does (plain PMF of the copied Cornac version, fresh, trainable, not verbose)."""

from __future__ import annotations

import copy

import cornac
import numpy as np
import pandas as pd
import pytest

from recbias_tutorial.models import fit_scores, to_cornac_dataset
from recbias_tutorial.models._pmf import fit_pmf, fits_fast

M = cornac.models


def _ratings(seed: int, n_users: int, n_items: int, n_rows: int, scale=(1, 5)) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"user": rng.integers(0, n_users, n_rows * 2),
                          "item": rng.integers(0, n_items, n_rows * 2)})
    frame = frame.drop_duplicates().head(n_rows).reset_index(drop=True)
    frame["rating"] = rng.integers(scale[0], scale[1] + 1, len(frame)).astype(float)
    return frame


def _both(model, frame, n_users, n_items):
    """(Cornac's own fit, ours) of copies of ``model`` on the same Cornac dataset."""
    dataset = to_cornac_dataset(frame, n_users=n_users, n_items=n_items, seed=0)
    theirs, ours = copy.deepcopy(model), copy.deepcopy(model)
    assert fits_fast(ours)
    dataset.reset()
    theirs.fit(dataset)
    dataset.reset()
    fit_pmf(ours, dataset)
    return theirs, ours


@pytest.mark.parametrize("variant", ["linear", "non_linear"])
@pytest.mark.parametrize("k, seed, data_seed", [(1, 0, 0), (7, 123, 1), (30, 5, 2), (64, None, 3)])
def test_factors_are_cornacs_bit_for_bit(variant, k, seed, data_seed):
    frame = _ratings(data_seed, 60, 45, 700)
    model = M.PMF(k=k, variant=variant, seed=seed if seed is not None else 11, max_iter=40)
    theirs, ours = _both(model, frame, 60, 45)
    np.testing.assert_array_equal(ours.U, theirs.U)
    np.testing.assert_array_equal(ours.V, theirs.V)
    for attr in ("num_users", "num_items", "min_rating", "max_rating", "global_mean", "is_fitted"):
        assert getattr(ours, attr) == getattr(theirs, attr)
    user = 3
    np.testing.assert_array_equal(ours.score(user), theirs.score(user))


@pytest.mark.parametrize("params", [
    dict(learning_rate=0.01, gamma=0.3, lambda_reg=0.05),  # 1 - gamma not exact in floats
    dict(learning_rate=0.05, gamma=0.99, lambda_reg=0.0),
    dict(learning_rate=0.3, gamma=0.5, lambda_reg=0.001),  # saturates the sigmoid
])
@pytest.mark.parametrize("variant", ["linear", "non_linear"])
def test_other_hyper_parameters_and_rating_scales(params, variant):
    frame = _ratings(4, 50, 40, 600, scale=(0, 10))
    model = M.PMF(k=12, variant=variant, seed=3, max_iter=25, **params)
    theirs, ours = _both(model, frame, 50, 40)
    np.testing.assert_array_equal(ours.U, theirs.U)
    np.testing.assert_array_equal(ours.V, theirs.V)


def test_binary_ratings_skip_the_scaling_like_cornac():
    frame = _ratings(5, 30, 30, 300, scale=(0, 1))
    theirs, ours = _both(M.PMF(k=5, seed=1, max_iter=30), frame, 30, 30)
    np.testing.assert_array_equal(ours.U, theirs.U)


def test_fit_scores_uses_it_and_matches_cornac_on_the_score_matrix():
    frame = _ratings(6, 40, 35, 500)
    ours = fit_scores(M.PMF(k=8, seed=2, max_iter=30), frame, n_users=40, n_items=35, seed=0,
                      cache=False)
    theirs = fit_scores(M.PMF(k=8, seed=2, max_iter=30, verbose=True), frame, n_users=40,
                        n_items=35, seed=0, cache=False)  # verbose: Cornac's own loop
    np.testing.assert_array_equal(ours, theirs)


def test_only_where_it_reproduces_cornac():
    assert fits_fast(M.PMF(k=3))
    assert not fits_fast(M.PMF(k=3, verbose=True))  # Cornac prints a loss per epoch
    assert not fits_fast(M.PMF(k=3, trainable=False))
    assert not fits_fast(M.PMF(k=3, init_params={"U": np.zeros((2, 3))}))  # warm start

    class MyPMF(M.PMF):
        pass

    assert not fits_fast(MyPMF(k=3))  # a subclass may change fit
    assert not fits_fast(M.MF(k=3))
    fitted = M.PMF(k=2, seed=0, max_iter=2)
    fitted.fit(to_cornac_dataset(_ratings(0, 10, 10, 40), n_users=10, n_items=10, seed=0))
    assert not fits_fast(fitted)  # a refit starts from the fitted factors (Cornac's rule)


@pytest.mark.parametrize("variant", ["linear", "non_linear"])
def test_the_authors_pmf_on_coat_is_cornacs(variant):
    """Chapter 4's case: Jadidinejad et al.'s PMF (Cornac defaults, seed 123) on Coat's log."""
    import os

    import recbias_tutorial as rb

    if not os.environ.get("RECBIAS_DATA") and not os.environ.get("RECBIAS_REQUIRE_DATA"):
        pytest.skip("RECBIAS_DATA is not set")
    data = rb.load("coat")
    theirs, ours = _both(M.PMF(k=40, variant=variant, seed=123, verbose=False), data.mnar,
                         data.n_users, data.n_items)
    np.testing.assert_array_equal(ours.U, theirs.U)
    np.testing.assert_array_equal(ours.V, theirs.V)
