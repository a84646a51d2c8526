"""The 'By hand first' toys of chapters 4 and 5 as exact unit tests (issue #56).

No Monte Carlo: every random set of the chapter-5 toy is enumerated, each with its exact
probability, so the expectations are exact and the tolerance is floating-point (1e-12).
"""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial.estimators import assign_strata

# ---------------------------------------------------------------- chapter 4: stratified
TOY = pd.DataFrame({"user": [0, 0, 0, 0, 1, 1], "item": [0, 1, 2, 3, 4, 5], "rating": 5.0})
TOY_P = np.array([0.9, 0.8, 0.7, 0.1, 0.2, 0.15])
TOY_SCORES = {"A": np.array([[6, 5, 4, 3, 2, 1], [6, 5, 4, 3, 2, 1.]]),
              "B": np.array([[3, 2, 1, 6, 5, 4], [3, 2, 1, 6, 5, 4.]])}
K4 = 3


def _idcg(n, k):
    return sum(1 / np.log2(j + 2) for j in range(min(n, k)))


def _gains(scores, test, k):
    """DCG gain of each test row: 1[Z < k] / log2(Z + 2), Z the 0-based position (no ties)."""
    u, i = test["user"].to_numpy(), test["item"].to_numpy()
    z = (scores[u] > scores[u, i][:, None]).sum(axis=1)
    return np.where(z < k, 1 / np.log2(z + 2), 0.0)


def _ndcg(test, g, k):
    """Eq. ch4-holdout on the rows of test: per-user nDCG@k, then the mean over users."""
    frame = pd.DataFrame({"user": test["user"].to_numpy(), "g": g})
    return frame.groupby("user")["g"].agg(lambda x: x.sum() / _idcg(len(x), k)).mean()


def _strat_by_hand(scores, test, p_item, k):
    p = p_item[test["item"].to_numpy()]
    q2 = p >= np.median(p)  # two equal-size strata, the upper one closed on the left
    g = _gains(scores, test, k)
    m = {"Q1": _ndcg(test[~q2], g[~q2], k), "Q2": _ndcg(test[q2], g[q2], k)}
    share = {"Q1": (~q2).mean(), "Q2": q2.mean()}
    return q2, m, share["Q1"] * m["Q1"] + share["Q2"] * m["Q2"], _ndcg(test, g, k)


@pytest.mark.parametrize("model", ["A", "B"])
def test_ch04_stratified_by_hand_equals_package(model):
    s = TOY_SCORES[model]
    q2, m, combined, holdout = _strat_by_hand(s, TOY, TOY_P, K4)
    out = rb.stratified(s, TOY, TOY_P, n_strata=2, metric="ndcg", k=K4).set_index("stratum")
    assert (assign_strata(TOY_P[TOY["item"]], 2)[0] == q2).all()
    assert out.loc[["Q1", "Q2"], "interactions"].tolist() == [int((~q2).sum()), int(q2.sum())]
    assert abs(out.loc["Q1", "value"] - m["Q1"]) < 1e-12
    assert abs(out.loc["Q2", "value"] - m["Q2"]) < 1e-12
    assert abs(out.loc["combined", "value"] - combined) < 1e-12
    one = rb.stratified(s, TOY, TOY_P, n_strata=1, metric="ndcg", k=K4)["value"].iloc[-1]
    assert abs(one - holdout) < 1e-12  # one stratum gives back the holdout


def test_ch04_toy_flips_holdout_and_stratified():
    res = {m: _strat_by_hand(s, TOY, TOY_P, K4) for m, s in TOY_SCORES.items()}
    assert res["B"][3] > res["A"][3] + 0.05  # holdout: B ahead
    assert res["A"][2] > res["B"][2] + 0.05  # stratified: A ahead


@pytest.mark.parametrize("model", ["A", "B"])
def test_ch04_interaction_mean_same_with_strata(model):
    """thm-interaction-mean on the toy: sum_s share_s * mean_s(g) equals mean(g) exactly."""
    g = _gains(TOY_SCORES[model], TOY, K4)
    q2 = TOY_P[TOY["item"]] >= np.median(TOY_P[TOY["item"]])
    by_strata = (~q2).mean() * g[~q2].mean() + q2.mean() * g[q2].mean()
    assert abs(by_strata - g.mean()) < 1e-12
    assert abs(g[~q2].mean() - g[q2].mean()) > 0.1  # the strata differ: not a trivial case


def test_ch04_per_user_ndcg_is_not_an_interaction_mean():
    """Outside the theorem (per-user nDCG), strata do change the estimate on the toy."""
    _, _, combined, holdout = _strat_by_hand(TOY_SCORES["B"], TOY, TOY_P, K4)
    assert abs(combined - holdout) > 0.1


# ---------------------------------------------------------------- chapter 5: URE
SCORES5 = np.array([[0.9, 0.8, 0.7, 0.6, 0.5, 0.4]])
REL5 = np.array([5.0, 1, 2, 5, 4, 1]) >= 4
K5, KBAR5, NBAR5 = 3, 1, 2


def _ure_by_hand(scores, rel, pair, k):
    order = np.argsort(-scores[0], kind="stable")
    tau = scores[0, order[k]]
    return np.mean([scores[0, i] > tau for i in pair if rel[i]])


def _kbar_by_hand(scores, rel, pair, k_bar):
    top = sorted(pair, key=lambda i: -scores[0, i])[:k_bar]
    return np.mean([i in top for i in pair if rel[i]])


def _truth(scores, rel, k):
    order = np.argsort(-scores[0], kind="stable")
    return rel[order[:k]].sum() / rel.sum()


def _exact_expectations(scores, rel, k, k_bar, n_bar, ure=_ure_by_hand):
    """E[. | n_u >= 1] over every uniform n_bar-subset: the mean over the kept subsets."""
    kept = [list(c) for c in combinations(range(scores.shape[1]), n_bar) if rel[list(c)].any()]
    return (np.mean([ure(scores, rel, c, k) for c in kept]),
            np.mean([_kbar_by_hand(scores, rel, c, k_bar) for c in kept]), len(kept))


def test_ch05_toy_exact_expectation_of_ure_is_the_truth():
    e_ure, e_kbar, n_kept = _exact_expectations(SCORES5, REL5, K5, KBAR5, NBAR5)
    truth = _truth(SCORES5, REL5, K5)
    assert n_kept == 12 and abs(truth - 1 / 3) < 1e-12
    assert abs(e_ure - truth) < 1e-12
    assert abs(e_kbar - truth) > 0.1  # Recall@K̄ (K̄ = N̄K/N) is not the truth for this ranking


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_bar", [1, 2, 3])
def test_ch05_exact_expectation_every_k(seed, n_bar):
    """thm-ure-2 part 1 exactly, on random catalogues of 7 items, every K and N̄."""
    rng = np.random.default_rng(seed)
    scores = rng.permutation(7)[None, :].astype(float)
    rel = rng.random(7) < 0.4
    rel[rng.integers(7)] = True
    for k in range(1, 7):
        e_ure, _, _ = _exact_expectations(scores, rel, k, 1, n_bar)
        assert abs(e_ure - _truth(scores, rel, k)) < 1e-12


def test_ch05_off_by_one_threshold_is_biased():
    """The exactness test can fail: tau at position K + 1 instead of K is biased."""
    def wrong(scores, rel, pair, k):
        return _ure_by_hand(scores, rel, pair, k + 1)
    e_wrong, _, _ = _exact_expectations(SCORES5, REL5, K5, KBAR5, NBAR5, ure=wrong)
    assert abs(e_wrong - _truth(SCORES5, REL5, K5)) > 0.1


def test_ch05_package_equals_hand_on_every_set():
    n_checked = 0
    for pair in map(list, combinations(range(6), NBAR5)):
        rand = pd.DataFrame({"user": 0, "item": pair,
                             "rating": np.where(REL5[pair], 5.0, 1.0)})
        if not REL5[pair].any():  # no relevant random item: the package has no user to average
            with pytest.raises(ValueError):
                rb.ure_recall(SCORES5, rand, k=K5)
            with pytest.raises(ValueError):
                rb.recall_at_kbar(SCORES5, rand, k_bar=KBAR5)
            continue
        assert abs(rb.ure_recall(SCORES5, rand, k=K5) - _ure_by_hand(SCORES5, REL5, pair, K5)) < 1e-12
        assert abs(rb.recall_at_kbar(SCORES5, rand, k_bar=KBAR5)
                   - _kbar_by_hand(SCORES5, REL5, pair, KBAR5)) < 1e-12
        n_checked += 1
    assert n_checked == 12
