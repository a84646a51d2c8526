"""Ranks and per-user metrics: definition checks and a cross-check against Cornac's metrics."""

import numpy as np
import pandas as pd
import pytest
from cornac.metrics import AUC, MAP, NDCG, Precision, Recall

from recbias_tutorial import _ranking
from recbias_tutorial._ranking import n_candidates
from recbias_tutorial.metrics import rank_positions, ranking_metrics


def brute_positions(scores, test, exclude=None):
    """Z straight from the definition: stable descending sort over the candidates."""
    excl = set() if exclude is None else set(zip(exclude["user"], exclude["item"]))
    out = []
    for u, i in zip(test["user"], test["item"]):
        cand = [j for j in range(scores.shape[1]) if j == i or (u, j) not in excl]
        order = sorted(cand, key=lambda j: (-scores[u, j], j))
        out.append(order.index(i))
    return np.array(out)


def random_case(rng, n_users=25, n_items=40, ties=False, n_test=150, n_excl=200):
    scores = rng.integers(0, 5, (n_users, n_items)).astype(float) if ties else rng.random((n_users, n_items))
    pairs = rng.choice(n_users * n_items, n_test + n_excl, replace=False)
    test = pd.DataFrame({"user": pairs[:n_test] // n_items, "item": pairs[:n_test] % n_items,
                         "rating": rng.integers(1, 6, n_test).astype(float)})
    excl = pd.DataFrame({"user": pairs[n_test:] // n_items, "item": pairs[n_test:] % n_items})
    return scores, test, excl


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_rank_positions_match_definition(seed, ties):
    rng = np.random.default_rng(seed)
    scores, test, excl = random_case(rng, ties=ties)
    # a test pair that is also excluded must still be ranked (it stays a candidate)
    excl = pd.concat([excl, test.iloc[:5][["user", "item"]]], ignore_index=True)
    expected = brute_positions(scores, test, excl)
    np.testing.assert_array_equal(rank_positions(scores, test, exclude=excl), expected)
    for k in (1, 3, 10, 40):
        np.testing.assert_array_equal(rank_positions(scores, test, exclude=excl, k=k),
                                      np.minimum(expected, k))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(3))
def test_compiled_exact_positions_equal_numpys_comparisons(seed, dtype):
    """The compiled kernel gives the integers of NumPy's formula: ties broken by column,
    -inf (excluded) entries, a strided view of the matrix, test scores in another dtype."""
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 4, (30, 57)).astype(dtype)
    m[rng.random(m.shape) < 0.2] = -np.inf
    m[:, 5] = np.inf if seed == 2 else m[:, 5]
    local = rng.integers(0, 30, 400)
    items = rng.integers(0, 57, 400)
    for mat in (m, m[:, ::2], m[::-1]):
        it = items % mat.shape[1]
        for s in (mat[local, it], mat[local, it].astype(np.float64) + 0.5,
                  rng.integers(-1, 5, 400).astype(dtype)):
            rows = mat[local]
            cols = np.arange(mat.shape[1])
            expected = (rows > s[:, None]).sum(1) + ((rows == s[:, None]) & (cols < it[:, None])).sum(1)
            for compiled in (True, False, None):
                np.testing.assert_array_equal(
                    _ranking.exact_positions(mat, local, s, it, compiled=compiled), expected)
    for compiled in (True, False):
        assert _ranking.exact_positions(m, local[:0], m[0, :0], items[:0],
                                        compiled=compiled).shape == (0,)


def test_rank_positions_equal_with_and_without_the_compiled_kernel(monkeypatch):
    rng = np.random.default_rng(11)
    scores, test, excl = random_case(rng, ties=True)
    monkeypatch.setattr(_ranking, "COMPILED_MIN_CELLS", 10**12)  # NumPy's comparisons
    numpy_way = rank_positions(scores, test, exclude=excl)
    monkeypatch.setattr(_ranking, "COMPILED_MIN_CELLS", 0)  # the compiled kernel
    np.testing.assert_array_equal(rank_positions(scores, test, exclude=excl), numpy_way)
    np.testing.assert_array_equal(numpy_way, brute_positions(scores, test, excl))


def test_chunking_does_not_change_ranks(monkeypatch):
    rng = np.random.default_rng(7)
    scores, test, excl = random_case(rng, ties=True)
    full = rank_positions(scores, test, exclude=excl)
    monkeypatch.setattr(_ranking, "CHUNK_CELLS", 3 * scores.shape[1])  # 3 users per chunk
    np.testing.assert_array_equal(rank_positions(scores, test, exclude=excl), full)
    np.testing.assert_array_equal(rank_positions(scores, test, exclude=excl, k=5), np.minimum(full, 5))


def test_n_candidates_counts_exclusions():
    rng = np.random.default_rng(3)
    scores, test, excl = random_case(rng)
    n = n_candidates(scores.shape, test, excl)
    excl_set = set(zip(excl["user"], excl["item"]))
    expected = [scores.shape[1] - sum((u, j) in excl_set for j in range(scores.shape[1]) if j != i)
                for u, i in zip(test["user"], test["item"])]
    np.testing.assert_array_equal(n, expected)


@pytest.mark.parametrize("seed", range(5))
def test_ranking_metrics_equal_cornac(seed):
    rng = np.random.default_rng(seed)
    scores, test, excl = random_case(rng, n_users=30, n_items=60, n_test=400, n_excl=300)
    k = 10
    ours = ranking_metrics(scores, test, k=k, threshold=4.0, exclude=excl)
    full_k = ranking_metrics(scores, test, k=scores.shape[1], threshold=4.0, exclude=excl)
    excl_set = set(zip(excl["user"], excl["item"]))
    rel = test[test["rating"] >= 4]
    test_set = set(zip(test["user"], test["item"]))
    checked = 0
    for u, grp in rel.groupby("user"):
        gt_pos = grp["item"].to_numpy()
        # candidates: all items minus excluded ones; test items are never excluded here
        cand = np.array([j for j in range(scores.shape[1])
                         if (u, j) not in excl_set or (u, j) in test_set])
        if len(set(gt_pos) & {j for (uu, j) in excl_set if uu == u}):
            continue  # Cornac keeps every test positive; our contract keeps only the ranked one
        pd_scores = scores[u, cand]
        pd_rank = cand[np.argsort(-pd_scores, kind="stable")]
        row = ours.loc[u]
        assert row["recall"] == pytest.approx(Recall(k=k).compute(gt_pos=gt_pos, pd_rank=pd_rank), abs=1e-12)
        assert row["precision"] == pytest.approx(Precision(k=k).compute(gt_pos=gt_pos, pd_rank=pd_rank), abs=1e-12)
        assert row["ndcg"] == pytest.approx(NDCG(k=k).compute(gt_pos=gt_pos, pd_rank=pd_rank), abs=1e-12)
        gt_neg = np.setdiff1d(cand, gt_pos)
        assert row["auc"] == pytest.approx(
            AUC().compute(item_indices=cand, pd_scores=pd_scores, gt_pos=gt_pos, gt_neg=gt_neg), abs=1e-12)
        assert full_k.loc[u, "map"] == pytest.approx(
            MAP().compute(item_indices=cand, pd_scores=pd_scores, gt_pos=gt_pos), abs=1e-12)
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("bad, match", [
    (lambda s, t: (np.where(s > 0.5, np.nan, s), t), "finite"),
    (lambda s, t: (s[:, :5], t), "outside"),
    (lambda s, t: (s, pd.concat([t, t.iloc[:1]])), "duplicate"),
    (lambda s, t: (s, t.iloc[:0]), "empty"),
    (lambda s, t: (s, t.drop(columns="rating")), "rating"),
    (lambda s, t: (s.ravel(), t), "2-D"),
])
def test_bad_input_is_named(bad, match):
    rng = np.random.default_rng(0)
    scores, test, _ = random_case(rng)
    s, t = bad(scores, test)
    with pytest.raises(ValueError, match=match):
        ranking_metrics(s, t, k=5)


@pytest.mark.parametrize("k", [0, 41, 2.5])
def test_bad_k(k):
    rng = np.random.default_rng(0)
    scores, test, _ = random_case(rng)
    with pytest.raises(ValueError, match="k must"):
        ranking_metrics(scores, test, k=k)


@pytest.mark.parametrize("k", [None, 3])
def test_ranks_when_few_users_have_test_rows(k):
    """Only the users with test rows are ranked (a chunk's other rows are skipped): same Z."""
    rng = np.random.default_rng(11)
    scores = np.round(rng.random((60, 25)) * 8)  # ties
    test = pd.DataFrame({"user": [3, 3, 17, 58], "item": [0, 24, 5, 5]})
    excl = pd.DataFrame({"user": [3, 17, 40], "item": [1, 5, 2]})
    z = rank_positions(scores, test, exclude=excl, k=k)
    for row, (u, i) in enumerate(zip(test["user"], test["item"])):
        m = scores[u].copy()
        m[excl.loc[excl["user"] == u, "item"].to_numpy()] = -np.inf
        m[i] = scores[u, i]  # the ranked item keeps its own score
        expected = int((m > m[i]).sum() + ((m == m[i]) & (np.arange(25) < i)).sum())
        assert z[row] == (expected if k is None else min(expected, k))


@pytest.mark.parametrize("seed", range(3))
def test_top_k_positions_with_heavy_exclusion_and_every_cut_off(seed):
    """The sampled lower bound of the k-th candidate must hold when most items are excluded
    (sampled columns all excluded: bound -inf) and for every k below the catalogue size."""
    rng = np.random.default_rng(seed)
    n_users, n_items = 12, 30
    scores = np.round(rng.random((n_users, n_items)) * (3 if seed == 0 else 1000))
    pairs = rng.permutation(n_users * n_items)
    test = pd.DataFrame({"user": pairs[:60] // n_items, "item": pairs[:60] % n_items,
                         "rating": 5.0})
    heavy = np.flatnonzero(rng.random(n_users * n_items) < np.repeat(rng.random(n_users), n_items))
    excl = pd.DataFrame({"user": heavy // n_items, "item": heavy % n_items})  # may hold test pairs
    expected = brute_positions(scores, test, excl)
    for k in range(1, n_items):
        np.testing.assert_array_equal(rank_positions(scores, test, exclude=excl, k=k),
                                      np.minimum(expected, k))
