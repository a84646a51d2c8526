"""carraro2022: the RankSys-like recommenders against brute-force transcriptions of RankSys,
and Figure 4's bootstrap band and the popular-item shares against direct computations.

Each brute force follows RankSys's Java line by line on a small matrix (loops, dicts, the
eigen-decomposition of PZTFactorizer.getGt), so a vectorisation slip fails here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial.models import fit_scores
from recbias_tutorial.replications import carraro2022
from recbias_tutorial.replications.carraro2022._ranksys import (ImplicitALS, RankSysItemKNN,
                                                                RankSysUserKNN, rr1_sweep)

N_USERS, N_ITEMS = 14, 11


@pytest.fixture(scope="module")
def ratings() -> np.ndarray:
    """A small rating matrix (0 = missing); every user and item has a rating; tied sims."""
    rng = np.random.default_rng(7)
    r = np.where(rng.random((N_USERS, N_ITEMS)) < 0.35, rng.integers(1, 6, (N_USERS, N_ITEMS)), 0)
    r[np.arange(N_USERS), np.arange(N_USERS) % N_ITEMS] = 3  # every user, every item rated
    r[N_USERS - 1] = r[N_USERS - 2]  # two identical users: tied similarities
    return r.astype(float)


def _frame(r: np.ndarray) -> pd.DataFrame:
    u, i = np.nonzero(r)
    return pd.DataFrame({"user": u, "item": i, "rating": r[u, i]})


def _cosine_neighbours(r: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
    """VectorSimilarity.similarElems + TopKNeighborhood, one row at a time (IntDoubleTopN
    keeps the k largest (similarity, index) pairs: of tied neighbours, the higher index)."""
    out = []
    for a in range(len(r)):
        sims = []
        for b in range(len(r)):
            product = sum(r[a, j] * r[b, j] for j in range(r.shape[1]))
            if b == a or product == 0.0:
                continue
            sims.append((b, product / np.sqrt((r[a] ** 2).sum() * (r[b] ** 2).sum())))
        sims.sort(key=lambda t: (-t[1], -t[0]))
        out.append(sims[:k])
    return out


@pytest.mark.parametrize("k", [1, 3, 20])
def test_user_knn_matches_ranksys_loops(ratings, k):
    expected = np.zeros_like(ratings)
    for u, neighbours in enumerate(_cosine_neighbours(ratings, k)):
        for v, sim in neighbours:  # UserNeighborhoodRecommender.getScoresMap, q = 1
            for i in np.nonzero(ratings[v])[0]:
                expected[u, i] += sim * ratings[v, i]
    got = fit_scores(RankSysUserKNN(k=k), _frame(ratings), n_users=N_USERS, n_items=N_ITEMS, seed=0)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("k", [1, 3, 20])
def test_item_knn_matches_ranksys_loops(ratings, k):
    neighbours = _cosine_neighbours(ratings.T, k)
    expected = np.zeros_like(ratings)
    for u in range(N_USERS):  # ItemNeighborhoodRecommender.getScoresMap, q = 1
        for j in np.nonzero(ratings[u])[0]:
            for i, sim in neighbours[j]:
                expected[u, i] += sim * ratings[u, j]
    got = fit_scores(RankSysItemKNN(k=k), _frame(ratings), n_users=N_USERS, n_items=N_ITEMS, seed=0)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


#: Users 1 and 2 are equally similar to user 0 (their rating vectors are parallel: the cosine
#: is 1/sqrt(10) for both, exactly in floating point) but rate differently (user 2 gives twice
#: user 1's ratings); user 3 shares no item with user 0.
TIED = np.array([[1.0, 1, 0, 0],
                 [1.0, 0, 2, 0],
                 [2.0, 0, 4, 0],
                 [0.0, 0, 0, 5]])


def test_a_tie_at_the_kth_neighbour_keeps_the_higher_index_as_ranksys_does():
    """IntDoubleTopN compares (similarity, index): of users 1 and 2, tied for user 0's one
    neighbour, it keeps user 2, whose ratings are twice user 1's, so the scores tell which
    one was kept; the same for items 1 and 2 of the transposed matrix (ItemKNN)."""
    sim = 1 / np.sqrt(2 * 5)  # cos(user 0, user 1) = cos(user 0, user 2)
    assert np.isclose(sim, TIED[0] @ TIED[2] / np.sqrt((TIED[0] ** 2).sum() * (TIED[2] ** 2).sum()))
    users = fit_scores(RankSysUserKNN(k=1), _frame(TIED), n_users=4, n_items=4, seed=0)
    np.testing.assert_allclose(users[0], sim * TIED[2], rtol=1e-12)  # not sim * TIED[1]
    assert not np.allclose(users[0], sim * TIED[1])
    items = fit_scores(RankSysItemKNN(k=1), _frame(TIED.T), n_users=4, n_items=4, seed=0)
    expected = np.zeros((4, 4))  # ItemKNN on TIED.T: item j's one neighbour, kept per RankSys
    for j, neighbours in enumerate(_cosine_neighbours(TIED, 1)):
        for i, s_ in neighbours:
            expected[:, i] += s_ * TIED.T[:, j]
    np.testing.assert_allclose(items, expected, rtol=1e-12, atol=1e-12)
    assert _cosine_neighbours(TIED, 1)[0] == [(2, pytest.approx(sim))]


def test_item_knn_differs_from_scoring_by_the_items_own_neighbours(ratings):
    """RankSys sums over the neighbourhoods of the user's items (not Cornac's ItemKNN rule)."""
    neighbours = _cosine_neighbours(ratings.T, 1)
    own = np.zeros_like(ratings)
    for u in range(N_USERS):
        for i in range(N_ITEMS):
            own[u, i] = sum(s * ratings[u, j] for j, s in neighbours[i] if ratings[u, j])
    got = fit_scores(RankSysItemKNN(k=1), _frame(ratings), n_users=N_USERS, n_items=N_ITEMS, seed=0)
    assert not np.allclose(got, own)


def _rr1_java(w: np.ndarray, other: np.ndarray, r: np.ndarray, lam: float, alpha: float) -> np.ndarray:
    """PZTFactorizer.set_min (getGt by eigen-decomposition, prepareRR1, doRR1 with L = 1)."""
    k = w.shape[1]
    a1 = other.T @ other + lam * np.eye(k)
    d, v = np.linalg.eigh(a1)
    gt = v * np.sqrt(d)
    w = w.copy()
    for u in range(len(w)):
        items = np.nonzero(r[u])[0]
        if len(items) == 0:
            w[u] = 0.0
            continue
        x = [gt[:, j] for j in range(k)] + [other[i] for i in items]
        conf = [1 + alpha * r[u, i] for i in items]
        y = [0.0] * k + [cc * r[u, i] / (cc - 1) for cc, i in zip(conf, items)]
        c = [1.0] * k + [cc - 1 for cc in conf]
        e = [y[n] - sum(w[u, j] * x[n][j] for j in range(k)) for n in range(len(x))]
        for j in range(k):
            for n in range(len(x)):
                e[n] += w[u, j] * x[n][j]
            a = sum(c[n] * x[n][j] ** 2 for n in range(len(x)))
            dd = sum(c[n] * x[n][j] * e[n] for n in range(len(x)))
            w[u, j] = dd / (lam + a)
            for n in range(len(x)):
                e[n] -= w[u, j] * x[n][j]
    return w


def test_rr1_sweep_matches_ranksys_loops(ratings):
    rng = np.random.default_rng(1)
    p, q = rng.random((N_USERS, 4)), rng.random((N_ITEMS, 4))
    frame = _frame(ratings)
    u, i, v = (frame[c].to_numpy() for c in ("user", "item", "rating"))
    np.testing.assert_allclose(rr1_sweep(p, q, u, i, v, 0.06, 1.0),
                               _rr1_java(p, q, ratings, 0.06, 1.0), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rr1_sweep(q, p, i, u, v, 0.6, 2.0),
                               _rr1_java(q, p, ratings.T, 0.6, 2.0), rtol=1e-10, atol=1e-12)


def test_implicit_als_matches_ranksys_loops_and_its_loss_falls(ratings):
    k, lam, n_iter = 3, 0.1, 4
    rng = np.random.default_rng(5)  # the model's initial factors: users first, then items,
    p = np.sqrt(1 / k) * rng.random((N_USERS, k))  # rows in Cornac's order (of appearance)
    q = np.empty((N_ITEMS, k))
    q[pd.unique(_frame(ratings)["item"])] = np.sqrt(1 / k) * rng.random((N_ITEMS, k))

    def loss(p, q):  # the implicit-feedback loss (confidence 1 + r on observed pairs)
        c = np.where(ratings > 0, 1 + ratings, 1.0)
        return float((c * (ratings - p @ q.T) ** 2).sum())

    losses = [loss(p, q)]
    for _ in range(n_iter):
        q = _rr1_java(q, p, ratings.T, lam, 1.0)
        p = _rr1_java(p, q, ratings, lam, 1.0)
        losses.append(loss(p, q))
    got = fit_scores(ImplicitALS(k=k, lambda_reg=lam, n_iter=n_iter, seed=5), _frame(ratings),
                     n_users=N_USERS, n_items=N_ITEMS, seed=0)
    np.testing.assert_allclose(got, p @ q.T, rtol=1e-9, atol=1e-12)
    assert losses[-1] < losses[0]


def test_paper_grid_of_the_ranksys_kind():
    grid = carraro2022.paper_grid(recommenders="ranksys")
    assert {m: len(s) for m, s in grid.items()} == {"AvgRating": 1, "PosPop": 1, "UB_KNN": 10,
                                                    "IB_KNN": 10, "MF": 60}
    assert isinstance(grid["MF"]["k=200, λ=0.6"](), ImplicitALS)
    with pytest.raises(ValueError, match="recommenders"):
        carraro2022.paper_grid(recommenders="librec")


# --------------------------------------------------------------------------------------
# Figure 4's bootstrap band and the popular-item shares
# --------------------------------------------------------------------------------------
def _fake_metrics(n_seeds=6, models=("a", "b", "c", "d", "e"), seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_seeds):
        for strategy, size in [("gt", 1.0), ("full", 1.0), ("reg", 0.5), ("wtd", 0.5)]:
            for m_i, m in enumerate(models):
                rows.append({"seed": s, "model": m, "strategy": strategy, "size": size,
                             "metric": "recall", "value": 0.1 * m_i + rng.normal(0, 0.08)})
    return pd.DataFrame(rows)


def test_tau_bands_point_is_tau_on_means_and_the_band_covers_it():
    metrics = _fake_metrics()
    bands = carraro2022.tau_bands(metrics, seed=0, n_boot=500)
    means = carraro2022.tau_on_means(metrics)
    pd.testing.assert_frame_equal(bands[["strategy", "rho", "tau"]], means)
    assert (bands["low"] <= bands["tau"]).all() and (bands["tau"] <= bands["high"]).all()
    assert (bands["high"] <= bands["p_max"]).all()


def test_tau_bands_one_draw_matches_scipy_on_the_resampled_means():
    import scipy.stats

    metrics = _fake_metrics(n_seeds=4, seed=3)
    rng = np.random.default_rng(11)  # the draws tau_bands makes with seed=11, n_boot=1
    weights = rng.multinomial(4, np.full(4, 0.25), size=1)[0]
    mean = (metrics.assign(w=metrics["seed"].map(dict(enumerate(weights))))
            .assign(v=lambda f: f["value"] * f["w"]).groupby(["strategy", "model"])["v"].sum())
    expected = scipy.stats.kendalltau(mean["gt"], mean["reg"]).statistic
    bands = carraro2022.tau_bands(metrics, seed=11, n_boot=1).set_index("strategy")
    assert bands.loc["REG", "low"] == pytest.approx(expected, abs=1e-12)


def test_popular_share_of_full_is_the_held_out_share():
    from recbias_tutorial import simulate

    data = simulate(80, 50, seed=1)
    share = carraro2022.popular_share(data, seeds=[2], top=5, strategies=("full", "reg"),
                                      sizes=(0.5,))
    split = carraro2022.split_feedback(data, seed=2)
    counts = split.train["item"].value_counts().reindex(range(50), fill_value=0)
    top = counts.sort_index().sort_values(ascending=False, kind="stable").index[:5]
    full = share.set_index("test_set").loc["FULL", "share"]
    assert full == pytest.approx(split.heldout["item"].isin(top).mean(), abs=1e-12)
    gt = share.set_index("test_set").loc["D_gt", "share"]
    assert gt == pytest.approx(split.gt["item"].isin(top).mean(), abs=1e-12)
    with pytest.raises(ValueError, match="top"):
        carraro2022.popular_share(data, seeds=[2], top=0)
