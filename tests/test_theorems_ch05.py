"""Seeded Monte Carlo checks of chapter 5's theorems, exactly as the lesson states them.

thm-ure-1 (Theorem 1 of Wang et al., per user): for a uniformly random ranking, a user with a
relevant item, samples holding a relevant item and an integer K̄ = N̄K/N, the mean Recall@K̄ of
the traditional scheme equals the mean full-catalogue Recall@K (both K/N).

thm-ure-2 (Theorem 2, restated): for a fixed model and uniform random items drawn per user,
(1) E[m_u/n_u | n_u >= 1] = Recall_u@K for one user, and (2) given the users U* kept (n_u >= 1)
the URE mean is the true recall of the users kept. The all-users Recall@K is NOT what URE
estimates when N̄ is small: the last test checks that failure, which the lesson measures.

Each tolerance is 4 Monte Carlo standard errors.
"""

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial.data import sample_random_exposure
from recbias_tutorial.estimators import kbar_curves
from recbias_tutorial.metrics import recall_curves

N_USERS, N_ITEMS, N_BAR, K, DRAWS = 240, 100, 5, 5, 300
TOL = 4.0  # standard errors


@pytest.fixture(scope="module")
def world():
    """A hand-built fully exposed world in which a user's recall falls with their number of
    relevant items (a top 5 cannot hold many of them), and a fixed, informative model."""
    rng = np.random.default_rng(55)
    n_rel = rng.integers(1, 41, size=N_USERS)  # |S_u| from 1 to 40 of the 100 items
    relevant = np.zeros((N_USERS, N_ITEMS), bool)
    for u, s in enumerate(n_rel):
        relevant[u, rng.choice(N_ITEMS, s, replace=False)] = True
    full = pd.DataFrame({"user": np.repeat(np.arange(N_USERS), N_ITEMS),
                         "item": np.tile(np.arange(N_ITEMS), N_USERS),
                         "rating": np.where(relevant.ravel(), 5.0, 1.0)})
    scores = relevant + rng.normal(0.0, 0.8, size=relevant.shape)  # fixed: drawn once
    truth_user = recall_curves(scores, full, [K], per_user=True).xs("test")[K]
    rand = {str(r): sample_random_exposure(full, N_BAR, seed=1000 + r) for r in range(DRAWS)}
    ure_user = recall_curves(scores, rand, [K], per_user=True)[K]  # rows (draw, user kept)
    return dict(full=full, scores=scores, truth_user=truth_user, ure_user=ure_user)


def test_ure_one_user_unbiased_given_a_relevant_random_item(world):
    """Part 1: for single users with 3, 15 and 35 relevant items, the mean of m_u/n_u over the
    draws in which the user has a relevant random item is the user's true Recall@5."""
    by_user = world["ure_user"].groupby(level="user")
    n_rel = world["full"].query("rating >= 4").groupby("user").size()
    for s in (3, 15, 35):
        u = int(n_rel.index[(n_rel == s).to_numpy()][0]) if (n_rel == s).any() else int(
            (n_rel - s).abs().idxmin())
        values = by_user.get_group(u)
        mean, se = values.mean(), values.std(ddof=1) / np.sqrt(len(values))
        assert len(values) >= 30
        assert abs(mean - world["truth_user"][u]) < TOL * max(se, 1e-3), (u, mean, se)


def test_ure_unbiased_for_the_users_kept(world):
    """Part 2: per draw, URE minus the true recall of that draw's kept users has mean 0."""
    ure_user, truth_user = world["ure_user"], world["truth_user"]
    diffs = np.array([v.mean() - truth_user.loc[v.index.get_level_values("user")].mean()
                      for _, v in ure_user.groupby(level="set")])
    se = diffs.std(ddof=1) / np.sqrt(len(diffs))
    assert abs(diffs.mean()) < TOL * se, (diffs.mean(), se)


def test_ure_all_users_average_biased_when_random_items_are_few(world):
    """The failure the lesson states: with N̄ = 5, many users have no relevant random item, the
    users kept are tilted towards many relevant items (low recall), and URE's mean falls below
    the recall of all users by more than 4 standard errors."""
    ure_user, truth_user = world["ure_user"], world["truth_user"]
    per_draw = ure_user.groupby(level="set").mean()
    kept = ure_user.groupby(level="set").size().mean() / N_USERS
    bias = per_draw.mean() - truth_user.mean()
    se = per_draw.std(ddof=1) / np.sqrt(len(per_draw))
    assert kept < 0.9
    assert bias < -TOL * se, (bias, se, kept)


def test_theorem1_random_rankings_per_user():
    """thm-ure-1: fresh uniform random rankings, K̄ = 1..4 on N̄ = 20 of N = 100 items, K = 5K̄:
    the mean Recall@K̄ (users with a relevant sampled item) and the mean Recall@K are K̄/N̄."""
    rng = np.random.default_rng(1)
    n_users, n_items, n_bar = 60, 100, 20
    rel = rng.random((n_users, n_items)) < 0.2
    rel[np.arange(n_users), rng.integers(0, n_items, n_users)] = True  # each user has one
    full = pd.DataFrame({"user": np.repeat(np.arange(n_users), n_items),
                         "item": np.tile(np.arange(n_items), n_users),
                         "rating": np.where(rel.ravel(), 5.0, 1.0)})
    k_bars = [1, 2, 3, 4]
    ks = [k * n_items // n_bar for k in k_bars]
    kb, fu = [], []
    for r in range(150):
        scores = rng.random((n_users, n_items))  # a uniformly random ranking per draw
        sample = sample_random_exposure(full, n_bar, seed=r)
        kb.append(kbar_curves(scores, sample, k_bars).iloc[0].to_numpy())
        fu.append(recall_curves(scores, full, ks).iloc[0].to_numpy())
    exact = np.array(k_bars) / n_bar
    for values in (np.array(kb), np.array(fu)):
        mean, se = values.mean(0), values.std(0, ddof=1) / np.sqrt(len(values))
        assert np.all(np.abs(mean - exact) < TOL * se), (mean, exact, se)
