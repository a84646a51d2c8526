"""The authors' Section 5 protocol (yang2018.AUTHORS, LADDER) and the CML trainer.

Each step is checked against a brute-force port of the authors' loops (``calc_metrics`` of
experiment_cml_yahoo_val.ipynb, ``eq`` of *_yahoo_test.py) on small random inputs, the
sampler by Monte Carlo with a tolerance from its standard error, and the CML / WCML loss
against its formula and its gradient against finite differences.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial.models import CML
from recbias_tutorial.models._cml import _sample_negatives, cml_loss
from recbias_tutorial.replications import yang2018


# ------------------------------------------------------------------------------------------
# brute force: the authors' loops, on lists
# ------------------------------------------------------------------------------------------
def authors_calc(user_items: dict, results: dict, n_pos: dict, Ni: dict, gamma: float,
                 K: int) -> dict:
    """``calc_metrics`` after the truncation: per user the candidate list and scores, the
    last ``n_pos[u]`` entries being the positives; a plain-python copy of its loops."""
    nonzero = sum(any(i in Ni for i in user_items[u][-n_pos[u]:]) for u in user_items)
    s_auc = s_rec = 0.0
    for u in user_items:
        scores = np.array(results[u])
        num_auc = num_rec = den = 0.0
        for j, item in enumerate(user_items[u][-n_pos[u]:]):
            if item not in Ni:
                continue
            z = float(np.sum(scores > results[u][len(results[u]) - n_pos[u] + j]))
            p = np.power(Ni[item], (gamma + 1) / 2.0)
            num_auc += (1 - z / len(user_items[u])) / p
            num_rec += (z < K) / p
            den += 1 / p
        if den > 0:
            s_auc += num_auc / den
            s_rec += num_rec / den
    return {"auc": s_auc / nonzero, "recall": s_rec / nonzero}


@pytest.mark.parametrize("case", range(6))
def test_user_terms_match_the_authors_loops(case):
    rng = np.random.default_rng(case)
    n_users, n_items = 7, 12
    scores = rng.integers(0, 4, (n_users, n_items)).astype(float)  # many ties
    candidates = rng.random((n_users, n_items)) < 0.6
    counts = rng.integers(0, 4, n_items)  # some items never trained on: skipped
    rows = []
    for u in range(n_users):
        items = np.flatnonzero(candidates[u])
        if len(items) and rng.random() < 0.85:
            rows += [(u, int(i)) for i in rng.choice(items, size=rng.integers(1, len(items) + 1),
                                                     replace=False)]
    pos = pd.DataFrame(rows, columns=["user", "item"])
    gammas = {"AOA": -1.0, "g": 1.5, "h": 3.0}
    k = int(rng.integers(1, 4))
    terms = yang2018.user_terms(scores, candidates, pos, counts, k=k, gammas=gammas)
    Ni = {i: int(c) for i, c in enumerate(counts) if c > 0}
    user_items, results, n_pos = {}, {}, {}
    for u, part in pos.groupby("user"):
        p = part["item"].tolist()
        negs = [i for i in np.flatnonzero(candidates[u]) if i not in p]
        user_items[u] = negs + p
        results[u] = [scores[u, i] for i in user_items[u]]
        n_pos[u] = len(p)
    for label, gamma in gammas.items():
        ref = authors_calc(user_items, results, n_pos, Ni, gamma, k)
        for metric in ("recall", "auc"):
            assert terms[(metric, label)].mean() == pytest.approx(ref[metric], abs=1e-12)


def test_user_terms_refuses_a_positive_outside_the_candidates():
    with pytest.raises(ValueError, match="candidates"):
        yang2018.user_terms(np.zeros((1, 2)), np.array([[True, False]]),
                            pd.DataFrame({"user": [0], "item": [1]}), np.ones(2), k=1,
                            gammas={"AOA": -1.0})


def test_sampled_candidates_sizes_and_exclusions():
    rng = np.random.default_rng(0)
    n_users, n_items = 30, 40
    pairs = pd.DataFrame({"user": rng.integers(0, n_users, 400), "item": rng.integers(0, n_items, 400),
                          "rating": 5.0}).drop_duplicates(["user", "item"])
    train, val = pairs.iloc[:250], pairs.iloc[250:]
    cand = yang2018.sampled_candidates(train, val, n_users=n_users, n_items=n_items,
                                       n_negatives=12, seed=1, keep_last=15)
    seen = np.zeros((n_users, n_items), bool)
    seen[train["user"], train["item"]] = True
    pos = np.zeros_like(seen)
    pos[val["user"], val["item"]] = True
    assert not (cand & seen).any()
    assert (cand[pos]).all()
    n_pos = pos.sum(1)
    allowed = n_items - (seen | pos).sum(1)
    # the list is 12 negatives + P positives and the last 15 are kept
    expected = np.where(n_pos > 0, n_pos + np.minimum(np.clip(np.minimum(12, 15 - n_pos), 0, None),
                                                      allowed), 0)
    np.testing.assert_array_equal(cand.sum(1), expected)


def test_sampled_negatives_are_uniform_monte_carlo():
    """Each allowed item is kept with probability kept/allowed (a uniform draw)."""
    n_items, n_runs = 20, 4000
    train = pd.DataFrame({"user": [0, 0, 0], "item": [0, 1, 2], "rating": 5.0})
    val = pd.DataFrame({"user": [0, 0], "item": [3, 4], "rating": 5.0})
    hits = np.zeros(n_items)
    for r in range(n_runs):
        hits += yang2018.sampled_candidates(train, val, n_users=1, n_items=n_items,
                                            n_negatives=6, seed=r, keep_last=7)[0]
    p = 5 / 15  # 7 kept - 2 positives = 5 negatives among the 15 allowed items
    se = np.sqrt(p * (1 - p) / n_runs)
    np.testing.assert_array_equal(hits[:5], [0, 0, 0, n_runs, n_runs])
    assert np.all(np.abs(hits[5:] / n_runs - p) < 4 * se)


def test_reading_rows_aggregate_and_per_user():
    cols = pd.MultiIndex.from_tuples([("recall", "AOA"), ("recall", "S")],
                                     names=["metric", "estimator"])
    est = pd.DataFrame([[1.0, 0.5], [0.0, 0.0], [1.0, 1.0]], index=[0, 1, 2], columns=cols)
    tru = pd.DataFrame([[0.0, 9.0], [1.0, 9.0]], index=[1, 5], columns=cols)
    own = yang2018.reading_rows(est, tru, yang2018.AUTHORS).set_index(["estimator", "quantity"])
    assert own.loc[("S", "mae"), "value"] == pytest.approx(abs(0.5 - 0.5))
    assert own.loc[("AOA", "estimate"), "users"] == 3 and own.loc[("AOA", "truth"), "users"] == 2
    common = yang2018.reading_rows(est, tru, yang2018.COURSE).set_index(["estimator", "quantity"])
    assert common.loc[("AOA", "mae"), "value"] == pytest.approx(0.0)  # user 1 only: |0 - 0|
    assert common.loc[("AOA", "mae"), "users"] == 1


def test_reading_validation():
    with pytest.raises(ValueError, match="estimate"):
        yang2018.Reading("x", estimate="all")
    with pytest.raises(ValueError, match="per_user"):
        yang2018.Reading("x", mae="per_user")
    assert [r.name for r in yang2018.LADDER][0] == yang2018.AUTHORS.name
    # consecutive rungs differ in exactly one field
    fields = ("estimate", "truth", "k", "users", "mae")
    for a, b in zip(yang2018.LADDER, yang2018.LADDER[1:]):
        assert sum(getattr(a, f) != getattr(b, f) for f in fields) == 1


def test_evaluate_readings_authors_truth_is_eq_on_own_mar_songs():
    world = rb.simulate(40, 25, seed=3)
    train, val, truth = yang2018.authors_split(world, seed=0)
    scores = np.random.default_rng(0).random((world.n_users, world.n_items))
    out = yang2018.evaluate_readings(scores, train, val, truth, n_items=world.n_items,
                                     threshold=world.threshold, readings=[yang2018.AUTHORS],
                                     gammas={}, n_negatives=5, draws=[0], seed=0)
    got = out.set_index(["metric", "estimator", "quantity"])["value"]
    counts = np.bincount(train["item"], minlength=world.n_items)
    Ni = {i: int(c) for i, c in enumerate(counts) if c > 0}
    user_items, results, n_pos = {}, {}, {}
    for u, part in truth.groupby("user"):
        p = part.loc[part["rating"] >= world.threshold, "item"].tolist()
        if not p:
            continue
        items = part.loc[part["rating"] < world.threshold, "item"].tolist() + p
        user_items[u], results[u], n_pos[u] = items, [scores[u, i] for i in items], len(p)
    ref = authors_calc(user_items, results, n_pos, Ni, -1.0, 1)
    assert got[("recall", "AOA", "truth")] == pytest.approx(ref["recall"], abs=1e-12)
    assert got[("auc", "AOA", "truth")] == pytest.approx(ref["auc"], abs=1e-12)


def test_pmf_training_negatives_are_unseen():
    rng = np.random.default_rng(0)
    train = pd.DataFrame({"user": rng.integers(0, 20, 150), "item": rng.integers(0, 30, 150),
                          "rating": 5.0}).drop_duplicates(["user", "item"])
    out = yang2018.pmf_training(train, n_items=30, seed=0)
    neg = out[out["rating"] == 0.0]
    assert not neg.merge(train, on=["user", "item"]).shape[0]
    assert (out["rating"] == 1.0).sum() == len(train)


# ------------------------------------------------------------------------------------------
# CML / WCML
# ------------------------------------------------------------------------------------------
def _params(seed=0, n_users=5, n_items=9, d=3):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 0.5, (n_users, d)), rng.normal(0, 0.5, (n_items, d)), rng.normal(0, 0.3, n_items)


@pytest.mark.parametrize("weighted", [False, True])
def test_cml_loss_is_the_formula(weighted):
    U, V, b = _params()
    rng = np.random.default_rng(1)
    users, pos = rng.integers(0, 5, 6), rng.integers(0, 9, 6)
    neg = rng.integers(0, 9, (6, 3)) if weighted else rng.integers(0, 9, 6)
    loss, _ = cml_loss(U, V, b, users, pos, neg, weighted=weighted, l2_reg=0.01, margin=0.7)
    s = lambda u, i: -np.sum((U[u] - V[i]) ** 2) + b[i]  # noqa: E731
    ref = 0.0
    for r in range(6):
        negs = neg[r] if weighted else [neg[r]]
        h = [max(0.0, 0.7 - s(users[r], pos[r]) + s(users[r], j)) for j in negs]
        if weighted:
            ref += np.log(np.floor(9 * np.count_nonzero(h) / 3) + 1) * max(h)
        else:
            ref += h[0]
        ref += 0.005 * (U[users[r]] @ U[users[r]] + V[pos[r]] @ V[pos[r]] + b[pos[r]] ** 2
                        + sum(V[j] @ V[j] + b[j] ** 2 for j in negs))
    assert loss == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_cml_gradient_matches_finite_differences(weighted):
    U, V, b = _params(2)
    rng = np.random.default_rng(3)
    users, pos = rng.integers(0, 5, 8), rng.integers(0, 9, 8)
    neg = rng.integers(0, 9, (8, 4)) if weighted else rng.integers(0, 9, 8)
    _, grads = cml_loss(U, V, b, users, pos, neg, weighted=weighted, l2_reg=0.02)
    eps = 1e-6
    for p, g in zip((U, V, b), grads):
        for idx in np.ndindex(p.shape):
            old = p[idx]
            p[idx] = old + eps
            up, _ = cml_loss(U, V, b, users, pos, neg, weighted=weighted, l2_reg=0.02)
            p[idx] = old - eps
            down, _ = cml_loss(U, V, b, users, pos, neg, weighted=weighted, l2_reg=0.02)
            p[idx] = old
            assert g[idx] == pytest.approx((up - down) / (2 * eps), abs=1e-5)


def test_sampled_training_negatives_are_distinct_and_unseen():
    rng = np.random.default_rng(0)
    seen = rng.random((50, 12)) < 0.4
    seen[:, :5] = False  # at least five items to draw from
    users = rng.integers(0, 50, 500)
    out = _sample_negatives(rng, users, seen, 5)
    assert not seen[users[:, None], out].any()
    assert all(len(set(row)) == 5 for row in out.tolist())
    seen[0, :] = True
    with pytest.raises(ValueError, match="n_negatives"):
        _sample_negatives(rng, np.array([0]), seen, 5)


@pytest.mark.parametrize("weighted", [False, True])
def test_cml_learns_a_block_structure(weighted):
    """Two user groups each liking their own half of the items: held-out likes rank first."""
    rng = np.random.default_rng(0)
    rows = [(u, i) for u in range(40) for i in range(20)
            if (i < 10) == (u < 20) and rng.random() < 0.6]
    train = pd.DataFrame(rows, columns=["user", "item"]).assign(rating=1.0)
    model = CML(weighted=weighted, k=8, batch_size=64, n_iter=400, learning_rate=0.05, seed=0)
    s = rb.fit_scores(model, train, n_users=40, n_items=20, seed=0)
    own = np.where(np.arange(40)[:, None] < 20, np.arange(20) < 10, np.arange(20) >= 10)
    assert s[own].mean() > s[~own].mean()
    assert (s[:20, :10].mean(1) > s[:20, 10:].mean(1)).all()


def test_cml_refuses_bad_input():
    with pytest.raises(ValueError, match="n_negatives"):
        CML(n_negatives=3, seed=0)
    with pytest.raises(ValueError, match="seed"):
        CML(seed=None)
    with pytest.raises(ValueError, match="k"):
        CML(k=0, seed=0)


def test_evaluate_readings_authors_estimate_is_calc_metrics_on_the_sampled_lists():
    world = rb.simulate(60, 40, seed=4)
    train, val, truth = yang2018.authors_split(world, seed=1)
    scores = np.random.default_rng(1).integers(0, 5, (world.n_users, world.n_items)).astype(float)
    out = yang2018.evaluate_readings(scores, train, val, truth, n_items=world.n_items,
                                     threshold=world.threshold, readings=[yang2018.AUTHORS],
                                     gammas={"g": 2.0}, n_negatives=8, draws=[3], seed=1)
    got = out.set_index(["metric", "estimator", "quantity"])["value"]
    cand = yang2018.sampled_candidates(train, val, n_users=world.n_users, n_items=world.n_items,
                                       n_negatives=8, seed=np.random.default_rng([1, 3]))
    counts = np.bincount(train["item"], minlength=world.n_items)
    Ni = {i: int(c) for i, c in enumerate(counts) if c > 0}
    user_items, results, n_pos = {}, {}, {}
    for u, part in val.groupby("user"):
        p = part["item"].tolist()
        negs = [i for i in np.flatnonzero(cand[u]) if i not in p]
        user_items[u] = negs + p
        results[u], n_pos[u] = [scores[u, i] for i in user_items[u]], len(p)
    for label, gamma in (("AOA", -1.0), ("g", 2.0)):
        ref = authors_calc(user_items, results, n_pos, Ni, gamma, 1)
        for metric in ("recall", "auc"):
            assert got[(metric, label, "estimate")] == pytest.approx(ref[metric], abs=1e-12)
