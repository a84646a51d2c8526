"""The theorems of Wang et al. (WWW 2025) on randomly exposed data, as seeded Monte Carlo tests,
plus exact small cases and input validation of `ure_recall` and `recall_at_kbar`.

Theorem 1 (traditional scheme): for a random ranking, the expected Recall@K̄ computed by ranking
only the N̄ randomly exposed items of each user is K̄/N̄, and the expected full-catalogue
Recall@K is K/N; the two agree when K̄/N̄ = K/N, i.e. K = K̄·N/N̄ (far from the small K used to
compare models when N̄ << N).

Theorem 2 (URE): for any fixed model, the URE estimate of Recall@K (threshold = score of the
(K+1)-th item of the full ranking; share of the user's relevant random items above it) is
unbiased for the full-catalogue Recall@K of each user given that the user has a relevant random
item; given which users have one, their average is unbiased for those users' mean Recall@K, not
for all users' (the test against all users' Recall@K bounds what the users without one can move).

Also: `metrics.recall_curves` and `estimators.kbar_curves` (many cut-offs from one sort) agree
with the one-cut-off estimators.
"""

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial import estimators as est
from recbias_tutorial.metrics import recall_curves
from recbias_tutorial.data import sample_random_exposure, simulate

N_USERS, N_ITEMS = 300, 400


@pytest.fixture(scope="module")
def world():
    return simulate(N_USERS, N_ITEMS, seed=3, mean_ratings_per_user=20.0)


def _within(x: np.ndarray, truth: float, n_se: float = 4.0) -> None:
    se = x.std(ddof=1) / np.sqrt(len(x))
    assert abs(x.mean() - truth) < n_se * se, (x.mean(), truth, se)


# --- Theorem 1 ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def theorem1(world):
    """Recall@K̄ on D_rand (N̄ = 20) and full Recall@K (K = K̄·N/N̄) of random rankings."""
    n_bar, k_bars = 20, (1, 2, 5)
    ks = [kb * N_ITEMS // n_bar for kb in k_bars]
    rng = np.random.default_rng(11)
    kbar, full = [], []
    for r in range(40):
        scores = rng.random((N_USERS, N_ITEMS))  # a random ranking for every user
        d_rand = sample_random_exposure(world.full, n_bar, seed=100 + r)
        kbar.append([est.recall_at_kbar(scores, d_rand, k_bar=kb) for kb in k_bars])
        full.append(recall_curves(scores, world.full, ks).loc["test"].to_numpy())
    return n_bar, k_bars, ks, np.array(kbar), np.array(full)


@pytest.mark.parametrize("j", range(3))
def test_theorem1_traditional_recall_of_a_random_ranking_is_kbar_over_nbar(theorem1, j):
    n_bar, k_bars, ks, kbar, full = theorem1
    _within(kbar[:, j], k_bars[j] / n_bar)
    _within(full[:, j], ks[j] / N_ITEMS)
    _within(kbar[:, j] - full[:, j], 0.0)  # equal in expectation when K̄/N̄ = K/N


def test_traditional_recall_is_no_estimate_of_recall_at_the_same_small_k(world):
    """For a model that knows the ratings, Recall@5̄ (N̄ = 20) is far above full Recall@5."""
    stars = world.full["rating"].to_numpy().reshape(N_USERS, N_ITEMS)
    scores = stars + np.random.default_rng(0).random(stars.shape)  # ratings, ties broken at random
    values = [est.recall_at_kbar(scores, sample_random_exposure(world.full, 20, seed=r), k_bar=5)
              for r in range(10)]
    truth_small_k = est.aoa(scores, world.full, k=5)
    assert np.mean(values) > truth_small_k + 0.5


# --- Theorem 2 ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fixed_model(world):
    """An imperfect personalised model: true stars plus noise (no ties)."""
    stars = world.full["rating"].to_numpy().reshape(N_USERS, N_ITEMS)
    return stars + 2.0 * np.random.default_rng(7).standard_normal(stars.shape)


@pytest.fixture(scope="module")
def theorem2(world, fixed_model):
    n_bar, ks = 200, (5, 10, 50)  # half the catalogue: no user lacks a relevant random item
    draws = np.array([[est.ure_recall(fixed_model, d, k=k) for k in ks]
                      for d in (sample_random_exposure(world.full, n_bar, seed=500 + r)
                                for r in range(60))])
    return n_bar, ks, draws


def _dropout_bound(world, n_bar: int) -> float:
    """Bound on |E[URE] - Recall@K| from users left out because D_rand has no relevant item.

    Given which users are kept, URE's mean is the average Recall@K of the kept users; leaving
    out m of |U| users moves an average of values in [0, 1] by at most m/|U|, so the bias is at
    most E[m]/|U| = sum_u P(n_u = 0)/|U| (hypergeometric P(n_u = 0)).
    """
    from scipy.special import gammaln

    n_rel = world.full.loc[world.full["rating"] >= 4].groupby("user").size()
    n_rel = n_rel.reindex(range(N_USERS), fill_value=0).to_numpy()
    log_p0 = (gammaln(N_ITEMS - n_rel + 1) - gammaln(np.maximum(N_ITEMS - n_rel - n_bar, 0) + 1)
              - gammaln(N_ITEMS + 1) + gammaln(N_ITEMS - n_bar + 1))
    p0 = np.where(N_ITEMS - n_rel >= n_bar, np.exp(log_p0), 0.0)
    return float(p0.sum() / N_USERS)


@pytest.mark.parametrize("j", range(3))
def test_theorem2_ure_is_unbiased_for_full_recall(world, fixed_model, theorem2, j):
    n_bar, ks, draws = theorem2
    truth = est.aoa(fixed_model, world.full, metric="recall", k=ks[j])
    se = draws[:, j].std(ddof=1) / np.sqrt(len(draws))
    bound = _dropout_bound(world, n_bar)
    assert bound < se  # users without a relevant random item are too rare to matter here
    assert abs(draws[:, j].mean() - truth) < 4 * se + bound, (draws[:, j].mean(), truth, se)


def test_theorem2_holds_per_user_with_training_pairs_excluded():
    """Per user (given at least one relevant random item) and with exclude: the mean of the
    per-user URE over draws is that user's Recall@K over the non-excluded items."""
    w = simulate(40, 150, seed=5, mean_ratings_per_user=15.0, binary=True, threshold=1.0)
    train = w.mnar
    key = lambda f: f["user"].to_numpy() * w.n_items + f["item"].to_numpy()  # noqa: E731
    test = w.full[~np.isin(key(w.full), key(train))].reset_index(drop=True)
    scores = w.full["rating"].to_numpy().reshape(40, 150) + 1.5 * np.random.default_rng(
        2).standard_normal((40, 150))
    k = 10
    truth = recall_curves(scores, test, [k], threshold=1.0, exclude=train, per_user=True)[k]
    draws = [recall_curves(scores, sample_random_exposure(test, 15, seed=r), [k],
                           threshold=1.0, exclude=train, per_user=True)[k].droplevel("set")
             for r in range(300)]
    per_user = pd.concat(draws, axis=1)  # users x draws (NaN: no relevant random item)
    mean, n = per_user.mean(axis=1), per_user.notna().sum(axis=1)
    se = per_user.std(axis=1, ddof=1) / np.sqrt(n)
    truth = truth.droplevel("set").reindex(mean.index)
    z = ((mean - truth) / se.where(se > 0)).dropna()
    assert len(z) >= 30 and (z.abs() < 4.5).all()  # 4.5 SE: Bonferroni-safe over 40 users
    exact = (se == 0) & n.gt(0)  # users whose estimate never varies must be exact
    np.testing.assert_allclose(mean[exact], truth[exact])


# --- exact small cases ------------------------------------------------------------------------
SCORES = np.array([[0.9, 0.8, 0.7, 0.6, 0.5, 0.4],
                   [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]])
RANDOM = pd.DataFrame({"user": [0, 0, 0, 1, 1, 1],
                       "item": [1, 3, 5, 0, 2, 5],
                       "rating": [5.0, 4.0, 2.0, 5.0, 1.0, 4.0]})


def test_ure_exact_small_case():
    # user 0: tau = score at position 2 = 0.7 -> item 1 above, item 3 not: 1/2
    # user 1: ranking 5,4,3,... tau = 0.4 -> item 5 above, item 0 not: 1/2
    assert est.ure_recall(SCORES, RANDOM, k=2) == pytest.approx(0.5)
    # k = 4: user 0 tau = 0.5 -> items 1 and 3 above: 1; user 1 tau = 0.2 -> item 5 only: 1/2
    assert est.ure_recall(SCORES, RANDOM, k=4) == pytest.approx(0.75)
    # excluding items 0 and 2 of user 0 moves item 3 into the top 2
    excl = pd.DataFrame({"user": [0, 0], "item": [0, 2]})
    assert est.ure_recall(SCORES, RANDOM, k=2, exclude=excl) == pytest.approx(0.75)
    # k = n_items: tau = -inf, everything counts
    assert est.ure_recall(SCORES, RANDOM, k=6) == 1.0


def test_recall_at_kbar_exact_small_case():
    # user 0 ranks its random items 1, 3, 5; user 1 ranks 5, 2, 0
    assert est.recall_at_kbar(SCORES, RANDOM, k_bar=1) == pytest.approx((0.5 + 0.5) / 2)
    assert est.recall_at_kbar(SCORES, RANDOM, k_bar=2) == pytest.approx((1.0 + 0.5) / 2)
    assert est.recall_at_kbar(SCORES, RANDOM, k_bar=3) == 1.0
    assert est.recall_at_kbar(SCORES, RANDOM, k_bar=50) == 1.0  # K̄ > N̄ is allowed


def test_users_without_relevant_random_items_are_skipped():
    rand = RANDOM.assign(rating=np.where(RANDOM["user"] == 1, 1.0, RANDOM["rating"]))
    assert est.ure_recall(SCORES, rand, k=2) == pytest.approx(0.5)
    assert est.recall_at_kbar(SCORES, rand, k_bar=1) == pytest.approx(0.5)


def test_ure_is_full_catalogue_aoa_on_the_random_items_and_kbar_is_aoa_within_them():
    """Both schemes are Average-Over-All recall on D_rand; they differ only in the candidates."""
    rng = np.random.default_rng(0)
    scores = rng.random((30, 50))
    full = pd.DataFrame({"user": np.repeat(np.arange(30), 50), "item": np.tile(np.arange(50), 30),
                         "rating": rng.integers(1, 6, 1500).astype(float)})
    d_rand = sample_random_exposure(full, 8, seed=0)
    for k in (1, 3, 10):
        assert est.ure_recall(scores, d_rand, k=k) == pytest.approx(est.aoa(scores, d_rand, k=k))
    outside = full[~np.isin(full["user"] * 50 + full["item"], d_rand["user"] * 50 + d_rand["item"])]
    for kb in (1, 3):
        assert est.recall_at_kbar(scores, d_rand, k_bar=kb) == pytest.approx(
            est.aoa(scores, d_rand, k=kb, exclude=outside))


def test_ure_with_tied_scores_matches_recall_at_k():
    """Ties follow the rank rule (smaller id first), so URE stays unbiased for Recall@K."""
    constant = np.zeros((1, 5))  # every item ties: the ranking is items 0, 1, 2, 3, 4
    rand = pd.DataFrame({"user": [0, 0], "item": [1, 4], "rating": [5.0, 5.0]})
    assert est.aoa(constant, rand, k=2) == 0.5  # item 1 is in the top 2
    assert est.ure_recall(constant, rand, k=2) == 0.5


# --- validation ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, match", [
    (dict(k=0), "k must be in 1..6"),
    (dict(k=7), "k must be in 1..6"),
    (dict(k=2.0), "k must be an integer"),
    (dict(k=True), "k must be an integer"),
    (dict(k=2, threshold=6.0), "no relevant items"),
    (dict(k=2, exclude=pd.DataFrame({"user": [0], "item": [9]})), "exclude.item has ids outside"),
])
def test_ure_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        est.ure_recall(SCORES, RANDOM, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(k_bar=0), "k_bar must be"),
    (dict(k_bar=1.0), "k_bar must be"),
    (dict(k_bar=1, threshold=6.0), "no relevant items"),
])
def test_recall_at_kbar_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        est.recall_at_kbar(SCORES, RANDOM, **kwargs)


@pytest.mark.parametrize("fn, kw", [(est.ure_recall, {"k": 1}), (est.recall_at_kbar, {"k_bar": 1})])
def test_bad_frames_and_scores_are_refused(fn, kw):
    with pytest.raises(ValueError, match="missing column"):
        fn(SCORES, RANDOM.drop(columns="rating"), **kw)
    with pytest.raises(ValueError, match="duplicate"):
        fn(SCORES, pd.concat([RANDOM, RANDOM]), **kw)
    with pytest.raises(ValueError, match="ids outside"):
        fn(SCORES, RANDOM.assign(user=RANDOM["user"] + 5), **kw)
    with pytest.raises(ValueError, match="scores must be finite"):
        fn(np.where(SCORES > 0.85, np.nan, SCORES), RANDOM, **kw)
    with pytest.raises(ValueError, match="2-D"):
        fn(SCORES[0], RANDOM, **kw)


# --- many cut-offs at once: metrics.recall_curves and estimators.kbar_curves ----------------
@pytest.fixture(scope="module")
def small_eval():
    w = simulate(120, 90, seed=4, mean_ratings_per_user=10.0)
    rng = np.random.default_rng(0)
    train = w.mnar
    logged = train["user"].to_numpy() * w.n_items + train["item"].to_numpy()
    test = w.full[~np.isin(w.full["user"].to_numpy() * w.n_items + w.full["item"].to_numpy(),
                           logged)]
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
    curves = est.kbar_curves(scores[name], d_rand, [1, 2, 5, 12, 30])
    for kb in (1, 2, 5, 12, 30):
        assert curves.loc["random", kb] == pytest.approx(
            est.recall_at_kbar(scores[name], d_rand, k_bar=kb))


def test_per_user_values_average_to_the_curve(small_eval):
    w, train, test, d_rand, scores = small_eval
    per_user = recall_curves(scores["smooth"], test, [5, 10], exclude=train, per_user=True)
    assert list(per_user.index.names) == ["set", "user"]
    means = recall_curves(scores["smooth"], test, [5, 10], exclude=train)
    np.testing.assert_allclose(per_user.mean().to_numpy(), means.loc["test"].to_numpy())
    kb = est.kbar_curves(scores["smooth"], d_rand, [3], per_user=True)
    assert kb[3].between(0, 1).all()


def test_curves_keep_an_excluded_test_item_as_candidate(small_eval):
    """Test pairs that are also training pairs are ranked with their own score, as in aoa."""
    w, train, test, d_rand, scores = small_eval
    overlap = pd.concat([test, train.iloc[:50]]).drop_duplicates(["user", "item"])
    for k in (5, 20):
        assert recall_curves(scores["smooth"], overlap, [k], exclude=train).loc["test", k] == \
            pytest.approx(est.aoa(scores["smooth"], overlap, k=k, exclude=train))


def test_curve_validation(small_eval):
    w, train, test, d_rand, scores = small_eval
    s = scores["smooth"]
    with pytest.raises(ValueError, match="ks must lie in"):
        recall_curves(s, test, [0, 5])
    with pytest.raises(ValueError, match="ks must be a non-empty list of integers"):
        recall_curves(s, test, [1.5])
    with pytest.raises(ValueError, match="no relevant items"):
        recall_curves(s, test.assign(rating=1.0), [5])
    with pytest.raises(ValueError, match="mapping"):
        recall_curves(s, [test], [5])
    with pytest.raises(ValueError, match="k_bars"):
        est.kbar_curves(s, d_rand, [0])
    with pytest.raises(ValueError, match="scores must be finite"):
        est.kbar_curves(np.full_like(s, np.nan), d_rand, [1])
