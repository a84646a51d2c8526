"""Seeded Monte Carlo checks of chapter 6's central takeaways, under the lesson's conditions.

``book/ch06_which_evaluation.md`` states no theorem; it states takeaways about the evaluation
methods on worlds with full ground truth. Each is checked here on a small simulated world of
the lesson's kind (popularity and rating bias, a uniform random sample per user), with fixed
score matrices, over seeded redraws of the test log and the random sample, with tolerances
from the Monte Carlo standard error (4 s.e.).
"""

from __future__ import annotations

import numpy as np
import pytest

import recbias_tutorial as rb
from recbias_tutorial.comparison import compare_methods, rank_agreement

N_REDRAWS = 20  # the lesson's
BASE = dict(mean_ratings_per_user=20.0, popularity_bias=1.0, rating_bias=0.5, n_mar_items=10)


def _models(world, seed=1):
    stars = world.full["rating"].to_numpy().reshape(world.n_users, world.n_items)
    rng = np.random.default_rng(seed)
    return {"popularity": np.tile(world.propensity.sum(axis=0), (world.n_users, 1)),
            "personalised": stars + rng.normal(0.0, 1.0, stars.shape),
            "noisy": stars + rng.normal(0.0, 3.0, stars.shape),
            "random": rng.random(stars.shape)}


@pytest.fixture(scope="module")
def results():
    world = rb.simulate(600, 400, seed=0, **BASE)  # the lesson's simulated world
    out = compare_methods(world, models=_models(world), seed=1, n_redraws=N_REDRAWS, cache=False)
    return out[out["metric"] == "recall"].set_index(["method", "model"])


def _z(row):
    """Bias of the mean over the redraws, in units of its standard error."""
    return row["bias"] / (row["sd"] / np.sqrt(row["n_redraws"]))


def test_aoa_error_is_bias_not_noise(results):
    """ch6_t_aoa: AOA is biased (beyond 4 s.e.) for the popularity model, and its bias is more
    than 3 times its spread, so more test data selected the same way would not remove it."""
    row = results.loc[("AOA (log)", "popularity")]
    assert _z(row) > 4, row.to_dict()
    assert abs(row["bias"]) > 3 * row["sd"]


def test_ure_cuts_aoa_error_by_two_thirds_and_errs_mostly_by_variance(results):
    """ch6_t_ure: URE on the random sample cuts AOA's RMSE (mean over the models) by more than
    two thirds; in the simulated world its mean |bias| is below its mean spread (ch6_f_ure_breaks).
    It is not unbiased model by model: with ten random items per user, a per-user ratio."""
    ure, aoa = results.loc["URE (random)"], results.loc["AOA (log)"]
    assert ure["rmse"].mean() < aoa["rmse"].mean() / 3
    assert ure["bias"].abs().mean() < ure["sd"].mean()
    assert abs(_z(aoa.loc["popularity"])) > 4 * max(1.0, abs(_z(ure.loc["popularity"])))


def test_value_and_ranking_are_different_tasks(results):
    """ch6_t_rank: Recall@K̄ misstates the value (bias beyond 4 s.e. for every model) and still
    ranks the models about as well as URE does (mean τ within 0.1)."""
    for model, row in results.loc["Recall@K̄ (random)"].iterrows():
        assert abs(_z(row)) > 4, (model, row.to_dict())
    tau = rank_agreement(results.reset_index().assign(metric="recall")).set_index("method")["tau"]
    assert tau["Recall@K̄ (random)"] > tau["URE (random)"] - 0.1


def test_when_it_fails_a_wrong_gamma_biases_snips(results):
    """When it fails: SNIPS with popularity propensities at γ = 0, too flat for this world,
    leaves the popularity model's bias beyond 4 s.e., above that at γ = 1."""
    flat, steep = results.loc[("SNIPS (pop, γ=0)", "popularity")], results.loc[("SNIPS (pop, γ=1)", "popularity")]
    assert _z(flat) > 4, flat.to_dict()
    se = np.hypot(flat["sd"], steep["sd"]) / np.sqrt(N_REDRAWS)
    assert abs(flat["bias"]) - abs(steep["bias"]) > 4 * se
