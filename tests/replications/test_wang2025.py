"""wang2025: the scheme table equals recall_at_kbar and ure_recall called directly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial.replications import wang2025


def test_scheme_table_equals_the_estimators(small_world):
    rng = np.random.default_rng(2)
    scores = rng.random((small_world.n_users, small_world.n_items))  # no ties
    table = wang2025.scheme_table({"m": scores}, small_world.mar, k=5, k_bar=2, threshold=4.0,
                                  exclude=small_world.mnar, seed=0)
    row = table.loc["m"]
    assert row["Recall@K̄"] == pytest.approx(rb.recall_at_kbar(scores, small_world.mar, k_bar=2))
    assert row["URE Recall@K"] == pytest.approx(
        rb.ure_recall(scores, small_world.mar, k=5, exclude=small_world.mnar))
    assert row["URE low"] <= row["URE Recall@K"] <= row["URE high"]
    with pytest.raises(ValueError, match="k_bar"):
        wang2025.scheme_table({"m": scores}, small_world.mar, k=5, k_bar=0, threshold=4.0,
                              exclude=None, seed=0)


def test_paper_split_keeps_90_percent_of_yahoo_sized_random_data():
    # Yahoo! R3: 5,400 users x 10 random songs = 54,000 ratings -> 48,600 test (Table 2)
    mar = pd.DataFrame({"user": np.repeat(np.arange(5400), 10), "item": np.tile(np.arange(10), 5400),
                        "rating": 5.0})
    validation, test = wang2025.paper_random_split(mar, seed=0)
    assert len(test) == wang2025.PAPER_DATASETS.loc["Yahoo!R3", "test"] == 48_600
    assert len(validation) == 5_400
    pairs = lambda f: set(zip(f["user"], f["item"]))  # noqa: E731
    assert pairs(validation).isdisjoint(pairs(test)) and len(pairs(validation) | pairs(test)) == 54_000
    again = wang2025.paper_random_split(mar, seed=0)[1]
    assert again.equals(test)
    with pytest.raises(ValueError, match="test_share"):
        wang2025.paper_random_split(mar, seed=0, test_share=1.0)


def test_paired_bootstrap_is_the_bootstrap_of_the_per_user_differences(small_world):
    rng = np.random.default_rng(3)
    good = small_world.full["rating"].to_numpy().reshape(small_world.n_users, small_world.n_items)
    scores = {"noise": rng.random(good.shape), "good": good + rng.random(good.shape) * 1e-3}
    per_user = wang2025.scheme_users(scores, small_world.mar, k=5, k_bar=2, threshold=4.0,
                                     exclude=small_world.mnar)
    out = wang2025.paired_bootstrap(per_user, baseline="noise", seed=0)
    diff = (per_user["good"] - per_user["noise"]).mean()
    assert out.loc[("good", "ure"), "difference"] == pytest.approx(diff["ure"])
    assert out.loc[("good", "kbar"), "verdict"] == "higher"   # the oracle beats noise
    flipped = wang2025.paired_bootstrap(per_user, baseline="good", seed=0)
    assert flipped.loc[("noise", "kbar"), "verdict"] == "lower"
    with pytest.raises(ValueError, match="baseline"):
        wang2025.paired_bootstrap(per_user, baseline="MF", seed=0)


def test_paper_table1_is_exact():
    t = wang2025.PAPER_TABLE1
    assert t.loc["MF", ("Yahoo!R3", "traditional Recall@5̄")] == 0.7085
    assert t.loc["DR", ("Yahoo!R3", "URE Recall@5")] == 0.0075
    assert t.loc["DNS", ("KuaiRec", "true Recall@5 (D_full)")] == 0.0237
    # the KuaiRec counts of Table 2 add up to the small matrix's rows
    d = wang2025.PAPER_DATASETS.loc["KuaiRec"]
    assert d["biased train"] + d["test"] == 4_676_570


# --------------------------------------------------------------------------------------
# the paper's trainers (AutoDebias baselines)
# --------------------------------------------------------------------------------------
from recbias_tutorial.replications.wang2025 import _trainers as trainers  # noqa: E402


def _planted_world(seed: int = 0, n_users: int = 300, n_items: int = 200, rank: int = 3):
    """±1 labels from a planted rank-3 structure, logged MNAR (a liked pair is logged four
    times as often as a disliked one), and a 10% uniform sample of every pair."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(n_users, rank)) @ rng.normal(size=(rank, n_items))
    label = np.where(truth > 0.5, 1.0, -1.0)  # about 40% positive
    users, items = np.divmod(np.arange(n_users * n_items), n_items)
    rating = np.where(label.ravel() > 0, 5.0, 1.0)
    logged = rng.random(users.size) < np.where(rating > 4, 0.2, 0.05)
    uniform = ~logged & (rng.random(users.size) < 0.1)
    frame = lambda pick: pd.DataFrame({"user": users[pick], "item": items[pick],  # noqa: E731
                                       "rating": rating[pick]})
    mar = frame(uniform)
    half = rng.random(len(mar)) < 0.5
    return frame(logged), mar[half], mar[~half], truth, label


def _auc(scores: np.ndarray, label: np.ndarray) -> float:
    from scipy.stats import rankdata

    pos = label.ravel() > 0
    ranks = rankdata(scores.ravel())
    return (ranks[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum())


@pytest.mark.parametrize("method, lr", [("MF", 0.01), ("IPS", 0.002), ("DR", 0.002)])
def test_each_paper_trainer_recovers_a_planted_structure(method, lr):
    train, uniform, validation, truth, label = _planted_world()
    fit = wang2025.fit_autodebias(method, train, uniform=uniform, validation=validation,
                                  n_users=300, n_items=200, threshold=4.0, seed=0, lr=lr,
                                  imputation_lr=lr, epochs=150, patience=20, block=(100, 100))
    # ranks every pair (logged or not) of the planted labels far above chance
    assert _auc(fit.scores, label) > 0.8
    assert fit.validation_auc > 0.8 and 0 <= fit.best_epoch < fit.epochs <= 150
    untrained = wang2025.fit_autodebias(method, train, uniform=uniform, validation=validation,
                                        n_users=300, n_items=200, threshold=4.0, seed=0,
                                        lr=1e-12, epochs=1, patience=1, block=(100, 100))
    assert abs(_auc(untrained.scores, label) - 0.5) < 0.05  # the initial draw knows nothing


def test_ips_loss_is_unbiased_for_the_full_data_loss_under_true_propensities():
    rng = np.random.default_rng(7)
    _, _, _, truth, label = _planted_world(seed=1, n_users=60, n_items=40)
    prediction = np.tanh(truth + rng.normal(size=truth.shape))  # some fixed model
    p_true = np.where(label > 0, 0.2, 0.05)  # P(O=1 | y), as the world logs
    full, _ = trainers.weighted_squared_loss(prediction.ravel(), label.ravel(),
                                             np.ones(label.size))
    ips, naive = [], []
    for _ in range(4000):
        o = rng.random(label.shape) < p_true
        ips.append(trainers.weighted_squared_loss(prediction[o], label[o], 1.0 / p_true[o])[0])
        naive.append(trainers.weighted_squared_loss(prediction[o], label[o], np.ones(o.sum()))[0])
    ips, naive = np.array(ips), np.array(naive)
    se = ips.std(ddof=1) / np.sqrt(len(ips))
    assert abs(ips.mean() - full) < 4 * se                      # unbiased
    # the naive loss is not (scaled to the same number of pairs it is still off by > 4 SE)
    scaled = naive / p_true.mean()
    assert abs(scaled.mean() - full) > 4 * scaled.std(ddof=1) / np.sqrt(len(scaled))


def test_ips_weights_are_autodebias_naive_bayes_propensities():
    train, uniform, validation, _, _ = _planted_world()
    fit = wang2025.fit_autodebias("IPS", train, uniform=uniform, validation=validation,
                                  n_users=300, n_items=200, threshold=4.0, seed=0, epochs=1,
                                  patience=1, block=(100, 100))
    y, yu = (train["rating"] >= 4).to_numpy(), (uniform["rating"] >= 4).to_numpy()
    p_obs = len(train) / (300 * 200)
    # IPS.py: P(y | O=1) * P(O=1) / P(y), P(y) from the uniform split
    assert fit.propensity[1.0] == pytest.approx(y.mean() * p_obs / yu.mean(), rel=1e-12)
    assert fit.propensity[-1.0] == pytest.approx((~y).mean() * p_obs / (~yu).mean(), rel=1e-12)
    assert wang2025.fit_autodebias("MF", train, uniform=uniform, validation=validation,
                                   n_users=300, n_items=200, threshold=4.0, seed=0, epochs=1,
                                   patience=1, block=(100, 100)).propensity is None


def test_gradients_equal_the_dense_formulas():
    rng = np.random.default_rng(0)
    base = trainers._MF.init(rng, 7, 5, 3)
    imputation = trainers._MF.init(rng, 7, 5, 3)
    u, i = rng.integers(0, 7, 12), rng.integers(0, 5, 12)
    coef = rng.normal(size=12)
    dense = np.zeros((7, 5))
    np.add.at(dense, (u, i), coef)  # d/d y_hat of sum(coef * y_hat_ui)
    p, q, _, _ = base.arrays
    for got, want in zip(base.sparse_grads(u, i, coef),
                         [dense @ q, dense.T @ p, dense.sum(1), dense.sum(0)]):
        np.testing.assert_allclose(got, want, atol=1e-12)
    bu, bi = np.array([0, 3, 6]), np.array([1, 4])
    g = imputation.dense()
    block = np.zeros((7, 5))
    block[np.ix_(bu, bi)] = -2 * g[np.ix_(bu, bi)]  # d/d y_hat of the all-pairs term of DR.py
    for got, want in zip(trainers._all_pairs_grads(base, imputation, bu, bi),
                         [block @ q, block.T @ p, block.sum(1), block.sum(0)]):
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_blocks_cover_every_logged_pair_once_per_epoch():
    rng = np.random.default_rng(0)
    u, i = rng.integers(0, 23, 200), rng.integers(0, 11, 200)
    seen, blocks = [], 0
    for bu, bi, rows in trainers._blocks(rng, u, i, 23, 11, (10, 4)):
        blocks += 1
        assert np.isin(u[rows], bu).all() and np.isin(i[rows], bi).all()
        seen.extend(rows.tolist())
    assert blocks == 3 * 3 and sorted(seen) == list(range(200))


def test_early_stopping_follows_autodebias():
    best = dict(auc=-np.inf, remembered=-np.inf, epoch=0, state=None, left=2)
    model = trainers._MF.init(np.random.default_rng(0), 2, 2, 1)
    stops = [trainers._early_stop(best, auc, e, model, 2)
             for e, auc in enumerate([0.6, 0.7, 0.7, 0.65, 0.69])]
    # equal AUC resets the patience but keeps the first epoch that reached it
    assert stops == [False, False, False, False, True] and best["epoch"] == 1


def test_autodebias_split_is_the_authors_permutation():
    mar = pd.DataFrame({"user": np.repeat(np.arange(5400), 10), "item": np.tile(np.arange(10), 5400),
                        "rating": np.tile(np.arange(1.0, 6.0), 10800)})
    uniform, validation, test = wang2025.autodebias_split(mar, seed=3)
    assert (len(uniform), len(validation), len(test)) == (2700, 2700, 48_600)
    np.random.seed(3)  # load_dataset.seed_randomly_split
    order = np.random.permutation(len(mar))
    pd.testing.assert_frame_equal(test, mar.iloc[order[5400:]].reset_index(drop=True))
    pd.testing.assert_frame_equal(uniform, mar.iloc[order[:2700]].reset_index(drop=True))
    with pytest.raises(ValueError, match="seed"):
        wang2025.autodebias_split(mar, seed=np.random.default_rng(0))
    with pytest.raises(ValueError, match="validation_share"):
        wang2025.autodebias_split(mar, seed=0, validation_share=0.0)


def test_fit_autodebias_refuses_bad_input():
    train, uniform, validation, _, _ = _planted_world()
    kw = dict(uniform=uniform, validation=validation, n_users=300, n_items=200, threshold=4.0,
              seed=0, epochs=1)
    with pytest.raises(ValueError, match="method"):
        wang2025.fit_autodebias("AutoDebias", train, **kw)
    with pytest.raises(ValueError, match="block"):
        wang2025.fit_autodebias("MF", train, **kw, block=(10,))
    with pytest.raises(ValueError, match="lr"):
        wang2025.fit_autodebias("MF", train, **kw, lr=0.0)
    liked = uniform[uniform["rating"] >= 4]
    with pytest.raises(ValueError, match="uniform"):
        wang2025.fit_autodebias("IPS", train, **{**kw, "uniform": liked})
    with pytest.raises(ValueError, match="train.user has ids outside"):
        wang2025.fit_autodebias("MF", train, **{**kw, "n_users": 10})


# --------------------------------------------------------------------------------------
# the convention ladder and orderings over seeds
# --------------------------------------------------------------------------------------
def test_convention_ladder_equals_the_estimators(small_world):
    rng = np.random.default_rng(5)
    scores = rng.random((small_world.n_users, small_world.n_items))
    test, train = small_world.mar, small_world.mnar
    out = wang2025.convention_ladder({"m": scores}, test, train=train, k=5, k_bars=[2, 5],
                                     threshold=4.0)
    value = out.set_index(["metric", "cutoff", "candidates", "users"])["value"]
    liked, everyone = wang2025.USERS
    assert value[("URE Recall@K", 5, "all items", liked)] == pytest.approx(
        rb.ure_recall(scores, test, k=5))
    assert value[("URE Recall@K", 5, "logged songs excluded", liked)] == pytest.approx(
        rb.ure_recall(scores, test, k=5, exclude=train))
    assert value[("Recall@K̄", 2, "random items", liked)] == pytest.approx(
        rb.recall_at_kbar(scores, test, k_bar=2))
    share = test.loc[test["rating"] >= 4, "user"].nunique() / test["user"].nunique()
    for key in [("URE Recall@K", 5, "all items"), ("Recall@K̄", 5, "random items")]:
        assert value[(*key, everyone)] == pytest.approx(value[(*key, liked)] * share)
    with pytest.raises(ValueError, match="threshold"):
        wang2025.convention_ladder({"m": scores}, test, train=train, threshold="4")


def test_ordering_over_seeds_is_scipys_paired_tests():
    from scipy import stats

    rng = np.random.default_rng(1)
    values = pd.DataFrame({"A": rng.normal(1.0, 0.1, 10), "B": rng.normal(0.0, 0.1, 10),
                           "C": rng.normal(0.0, 0.1, 10)})
    out = wang2025.ordering_over_seeds(values)
    assert ("A", "B") in out.index and ("B", "A") not in out.index
    row = out.loc[("A", "B")]
    assert row["seeds"] == 10 and row["of"] == 10
    assert row["t p-value"] == pytest.approx(stats.ttest_rel(values["A"], values["B"]).pvalue)
    assert row["Wilcoxon p-value"] == pytest.approx(stats.wilcoxon(values["A"], values["B"]).pvalue)
    assert len(out) == 3  # one direction of each of the three pairs
    with pytest.raises(ValueError, match="one row per seed"):
        wang2025.ordering_over_seeds(values.iloc[:1])
    with pytest.raises(ValueError, match="missing"):
        wang2025.ordering_over_seeds(values.assign(C=np.nan))


def test_course_trainers_equal_regularisation_is_mf_penalty():
    train = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 0], "rating": [5.0, 4.0, 5.0]})
    course = wang2025.course_trainers(train, n_users=2, n_items=3)
    equal = wang2025.course_trainers(train, n_users=2, n_items=3, regularisation="equal")
    assert course["IPS-MF"]["reg"] == 100 and "reg" not in equal["IPS-MF"] and "reg" not in equal["MF"]
    np.testing.assert_array_equal(course["IPS-MF"]["propensity"], equal["IPS-MF"]["propensity"])
    with pytest.raises(ValueError, match="regularisation"):
        wang2025.course_trainers(train, n_users=2, n_items=3, regularisation="same")
