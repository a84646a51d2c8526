"""Monte Carlo checks of what chapter 4 (Simpson's paradox, stratified evaluation) states.

Each test is seeded and uses the conditions the lesson states; tolerances come from the
standard error of the Monte Carlo mean (|mean - truth| < 4 se). Where the lesson says a
statement fails outside its conditions, a test checks that it does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial import stats

# ------------------------------------------------------------------------------------------
# Theorem "Strata do not change a mean over interactions" (thm-interaction-mean)
# ------------------------------------------------------------------------------------------


def _one_per_user(rng, n_users=80, n_items=40):
    """Scores, a test set with one relevant interaction per user, per-item propensities."""
    scores = rng.normal(size=(n_users, n_items))
    test = pd.DataFrame({"user": np.arange(n_users), "item": rng.integers(0, n_items, n_users),
                         "rating": 5.0})
    return scores, test, rng.uniform(0.01, 1.0, n_items)


@pytest.mark.parametrize("binning", ["quantile", "width"])
@pytest.mark.parametrize("n_strata", [2, 3, 5])
def test_strata_keep_a_mean_over_interactions(binning, n_strata):
    """With one relevant interaction per user, the holdout is a plain mean over interactions:
    the stratified estimate equals it for any cut into strata, on every draw."""
    rng = np.random.default_rng(40 + n_strata)
    for _ in range(20):
        scores, test, p = _one_per_user(rng)
        for metric in ("recall", "dcg"):
            strat = rb.stratified(scores, test, p, n_strata=n_strata, metric=metric, k=10,
                                  binning=binning)
            combined = float(strat.set_index("stratum").loc["combined", "value"])
            assert combined == pytest.approx(rb.aoa(scores, test, metric=metric, k=10), abs=1e-12)


def test_strata_change_a_mean_over_users():
    """Outside the theorem's condition (users with several interactions, per-user averaging)
    the stratified estimate moves away from the holdout."""
    rng = np.random.default_rng(7)
    n_users, n_items = 60, 40
    gaps = []
    for _ in range(20):
        scores = rng.normal(size=(n_users, n_items))
        pairs = rng.random((n_users, n_items)) < 0.15
        u, i = np.nonzero(pairs)
        test = pd.DataFrame({"user": u, "item": i, "rating": 5.0})
        p = rng.uniform(0.01, 1.0, n_items)
        strat = rb.stratified(scores, test, p, n_strata=2, metric="recall", k=10)
        gaps.append(float(strat.set_index("stratum").loc["combined", "value"])
                    - rb.aoa(scores, test, metric="recall", k=10))
    assert max(abs(g) for g in gaps) > 1e-3


# ------------------------------------------------------------------------------------------
# Marginalising over the confounder gives E(Y | do(T = t)) when X is the only confounder
# ------------------------------------------------------------------------------------------

# A kidney-like world: X (stone size) drives both the treatment and the outcome.
P_X = np.array([0.51, 0.49])                 # P(X = small), P(X = large)
P_T1_GIVEN_X = np.array([0.25, 0.77])         # P(T = A | X): A mostly for large stones
SUCCESS = np.array([[0.93, 0.73],             # P(Y = 1 | T = A, X)
                    [0.87, 0.69]])            # P(Y = 1 | T = B, X)
DO_TRUTH = SUCCESS @ P_X                      # E(Y | do(T = t)) = sum_x P(Y | t, x) P(x)


def _draw(rng, n):
    x = (rng.random(n) < P_X[1]).astype(int)
    t = np.where(rng.random(n) < P_T1_GIVEN_X[x], 0, 1)  # 0 = A, 1 = B
    y = rng.random(n) < SUCCESS[t, x]
    return x, t, y


def _estimates(x, t, y):
    """Marginalised (known P(X)) and pooled success rate of each treatment."""
    marg, pooled = np.empty(2), np.empty(2)
    for tt in (0, 1):
        rates = np.array([y[(t == tt) & (x == xx)].mean() for xx in (0, 1)])
        marg[tt] = rates @ P_X
        pooled[tt] = y[t == tt].mean()
    return marg, pooled


def test_marginalised_rate_is_unbiased_for_the_intervention():
    rng = np.random.default_rng(2024)
    draws = np.array([np.concatenate(_estimates(*_draw(rng, 4000))) for _ in range(1500)])
    marg = draws[:, :2]
    se = marg.std(axis=0, ddof=1) / np.sqrt(len(marg))
    assert np.all(np.abs(marg.mean(axis=0) - DO_TRUTH) < 4 * se)


def test_pooled_rate_is_biased_for_the_intervention():
    """Pooling each treatment with its own mix of X (the confounded comparison) is biased, and
    in this world it reverses the order of the treatments."""
    rng = np.random.default_rng(2025)
    draws = np.array([np.concatenate(_estimates(*_draw(rng, 4000))) for _ in range(1500)])
    pooled = draws[:, 2:]
    se = pooled.std(axis=0, ddof=1) / np.sqrt(len(pooled))
    assert np.all(np.abs(pooled.mean(axis=0) - DO_TRUTH) > 4 * se)
    assert DO_TRUTH[0] > DO_TRUTH[1] and pooled.mean(axis=0)[0] < pooled.mean(axis=0)[1]


# ------------------------------------------------------------------------------------------
# The stratified estimate keeps the logged shares (takeaway ch4_t_shares): biased for the
# open-loop truth where IPS, with the true propensities, is not
# ------------------------------------------------------------------------------------------


def test_stratified_keeps_exposure_bias_ips_removes_it():
    rng = np.random.default_rng(11)
    n_users, n_items, k = 200, 40, 10
    p = np.where(np.arange(n_items) < k, 0.6, 0.05)         # the popular items are logged more
    scores = np.tile(-np.arange(n_items, dtype=float), (n_users, 1))  # ranks popular items first
    truth = k / n_items  # every item is relevant: recall@10 of every user on the full world
    strat, ips = [], []
    for _ in range(150):
        u, i = np.nonzero(rng.random((n_users, n_items)) < p)
        test = pd.DataFrame({"user": u, "item": i, "rating": 5.0})
        s = rb.stratified(scores, test, p, n_strata=2, metric="recall", k=k)
        strat.append(float(s.set_index("stratum").loc["combined", "value"]))
        ips.append(rb.ips(scores, test, p, n_relevant=np.full(n_users, n_items),
                          metric="recall", k=k))
    strat, ips = np.array(strat), np.array(ips)
    se_ips = ips.std(ddof=1) / np.sqrt(len(ips))
    se_strat = strat.std(ddof=1) / np.sqrt(len(strat))
    assert abs(ips.mean() - truth) < 4 * se_ips
    assert strat.mean() - truth > 4 * se_strat


# ------------------------------------------------------------------------------------------
# The reversal search, stats.reversal_pairs
# ------------------------------------------------------------------------------------------


def test_reversal_search_finds_a_constructed_reversal():
    """b better than a by delta_s in every stratum, pooled with each model's own stratum mix
    so that a is ahead pooled: the search must report (a, b) with margin = min delta_s."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        a_strata = np.sort(rng.uniform(0.1, 0.5, 3))
        delta = rng.uniform(0.01, 0.05, 3)
        b_strata = a_strata + delta
        mix_a, mix_b = np.array([0.05, 0.15, 0.8]), np.array([0.8, 0.15, 0.05])
        table = pd.DataFrame({"pooled": [a_strata @ mix_a, b_strata @ mix_b],
                              "s1": [a_strata[0], b_strata[0]], "s2": [a_strata[1], b_strata[1]],
                              "s3": [a_strata[2], b_strata[2]]}, index=["a", "b"])
        assert table.loc["a", "pooled"] > table.loc["b", "pooled"]
        found = stats.reversal_pairs(table, overall="pooled", strata=["s1", "s2", "s3"])
        assert len(found) == 1
        row = found.iloc[0]
        assert (row.a, row.b, row.n_reversed) == ("a", "b", 3)
        assert row.margin == pytest.approx(delta.min(), abs=1e-12)


def test_reversal_search_finds_the_kidney_reversal():
    rates = pd.DataFrame({"overall": [273 / 350, 289 / 350], "small": [81 / 87, 234 / 270],
                          "large": [192 / 263, 55 / 80]}, index=["A", "B"])
    found = stats.reversal_pairs(rates, overall="overall", strata=["small", "large"])
    assert found[found["margin"] > 0][["a", "b"]].to_dict("records") == [{"a": "B", "b": "A"}]


def test_reversal_search_finds_none_without_a_reversal():
    """A model ahead in every stratum and pooled, and a pair reversed in only one of two
    strata: no reversal in every stratum."""
    table = pd.DataFrame({"pooled": [0.5, 0.4, 0.45], "s1": [0.6, 0.5, 0.55],
                          "s2": [0.3, 0.2, 0.35]}, index=["best", "worst", "mixed"])
    found = stats.reversal_pairs(table, overall="pooled", strata=["s1", "s2"])
    assert len(found) == 3 and (found["margin"] <= 0).all()
    mixed = found[(found.a == "mixed") & (found.b == "worst")]
    assert mixed.empty or mixed.iloc[0].n_reversed == 0
    best_mixed = found[(found.a == "best") & (found.b == "mixed")].iloc[0]
    assert best_mixed.n_reversed == 1 and best_mixed.margin < 0


def test_no_reversal_for_means_over_interactions():
    """Exercise ch4-ex3: with plain means over interactions (pooled = share-weighted strata),
    no pair can reverse in every stratum; a seeded search over random tables finds none."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        n_models, n_inter, n_strata = 4, 30, 3
        gains = rng.random((n_models, n_inter)) ** rng.uniform(0.2, 5, (n_models, 1))
        stratum = rng.integers(0, n_strata, n_inter)
        stratum[:n_strata] = np.arange(n_strata)  # every stratum holds an interaction
        cols = {"pooled": gains.mean(axis=1)}
        cols.update({f"s{s}": gains[:, stratum == s].mean(axis=1) for s in range(n_strata)})
        table = pd.DataFrame(cols, index=[f"m{j}" for j in range(n_models)])
        found = stats.reversal_pairs(table, overall="pooled",
                                     strata=[f"s{s}" for s in range(n_strata)])
        assert not (found["margin"] > 0).any()
