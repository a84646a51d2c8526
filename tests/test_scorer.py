"""Scorer: every ranking function and estimator gives the dense matrix's values, chunk by chunk."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial import _ranking, estimators, metrics
from recbias_tutorial.replications import jadidinejad2021


@pytest.fixture(scope="module")
def case(make_world):
    world = make_world(150, 80, seed=11, mean_ratings_per_user=12.0, popularity_bias=1.0,
                       rating_bias=1.0)
    train, test = rb.random_split(world.mnar, (0.7, 0.3), seed=1)
    scores = np.round(np.random.default_rng(3).random((world.n_users, world.n_items)) * 30)
    scorer = rb.Scorer(lambda users: scores[users], n_users=world.n_users, n_items=world.n_items)
    p = rb.popularity_propensity(train, world.n_items, gamma=2.0)
    return world, train, test, scores, scorer, p


CALLS = {
    "rank_positions exact": lambda s, w, tr, te, p: rb.rank_positions(s, te, exclude=tr),
    "rank_positions top-5": lambda s, w, tr, te, p: rb.rank_positions(s, te, exclude=tr, k=5),
    "ranking_metrics": lambda s, w, tr, te, p: rb.ranking_metrics(s, te, k=10, exclude=tr),
    "aoa recall": lambda s, w, tr, te, p: rb.aoa(s, te, k=10, exclude=tr),
    "aoa dcg": lambda s, w, tr, te, p: rb.aoa(s, te, metric="dcg", k=10, exclude=tr),
    "aoa auc": lambda s, w, tr, te, p: rb.aoa(s, te, metric="auc", exclude=tr),
    "snips": lambda s, w, tr, te, p: rb.snips(s, te, p, k=10, exclude=tr),
    "ips": lambda s, w, tr, te, p: rb.ips(s, w.full, w.propensity, k=10,
                                          n_relevant=(w.full["rating"].to_numpy().reshape(
                                              w.n_users, w.n_items) >= 4).sum(axis=1)),
    "stratified": lambda s, w, tr, te, p: rb.stratified(s, te, p, metric="ndcg", exclude=tr),
    "ure_recall": lambda s, w, tr, te, p: rb.ure_recall(s, w.mar, k=10, exclude=tr),
    "recall_at_kbar": lambda s, w, tr, te, p: rb.recall_at_kbar(s, w.mar, k_bar=3),
    "kbar_curves": lambda s, w, tr, te, p: estimators.kbar_curves(s, w.mar, [1, 3, 5]),
    "recall_curves": lambda s, w, tr, te, p: metrics.recall_curves(s, te, [1, 10, 40], exclude=tr),
    "bootstrap_ci": lambda s, w, tr, te, p: rb.bootstrap_ci(s, te, seed=0, k=10, exclude=tr),
    "holdout_evaluator": lambda s, w, tr, te, p: jadidinejad2021.holdout_evaluator(
        holdout=te, truth=w.mar, exclude=tr, propensity=p, n_items=w.n_items, ks=(5, 10))(s),
}


def _equal(a, b):
    if isinstance(a, (pd.DataFrame, pd.Series)):
        pd.testing.assert_frame_equal(pd.DataFrame(a), pd.DataFrame(b))
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("name", CALLS)
def test_scorer_gives_the_dense_values(case, name, monkeypatch):
    world, train, test, scores, scorer, p = case
    dense = CALLS[name](scores, world, train, test, p)
    monkeypatch.setattr(_ranking, "CHUNK_CELLS", 7 * world.n_items)  # 7 users per chunk
    _equal(CALLS[name](scorer, world, train, test, p), dense)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_threads_do_not_change_values(case, threads, monkeypatch):
    world, train, test, scores, scorer, p = case
    reference = rb.rank_positions(scores, test, exclude=train)
    monkeypatch.setenv("RECBIAS_THREADS", threads)
    monkeypatch.setattr(_ranking, "CHUNK_CELLS", 5 * world.n_items)
    np.testing.assert_array_equal(rb.rank_positions(scorer, test, exclude=train), reference)
    np.testing.assert_array_equal(rb.rank_positions(scores, test, exclude=train, k=4),
                                  np.minimum(reference, 4))


def test_from_factors_is_the_product():
    rng = np.random.default_rng(0)
    U, V, bu, bi = rng.random((6, 3)), rng.random((5, 3)), rng.random(6), rng.random(5)
    scorer = rb.Scorer.from_factors(U, V, user_bias=bu, item_bias=bi)
    np.testing.assert_allclose(scorer.dense(), U @ V.T + bu[:, None] + bi[None, :])
    assert scorer.shape == (6, 5)


def test_fit_scorer_equals_fit_scores(case):
    world, train, test, scores, scorer, p = case
    for model in (rb.models.PosPop(), rb.models.AvgRating()):
        dense = rb.fit_scores(model, train, n_users=world.n_users, n_items=world.n_items, seed=0)
        lazy = rb.models.fit_scorer(type(model)(), train, n_users=world.n_users,
                                    n_items=world.n_items, seed=0)
        np.testing.assert_allclose(lazy.dense(), dense)
        assert rb.aoa(lazy, test, k=10, exclude=train) == rb.aoa(dense, test, k=10, exclude=train)


@pytest.mark.parametrize("fn, match", [
    (lambda users: np.zeros((len(users), 3)), "shape"),
    (lambda users: np.full((len(users), 4), np.nan), "NaN"),
])
def test_a_bad_scorer_is_a_clear_error(fn, match):
    scorer = rb.Scorer(fn, n_users=2, n_items=4)
    test = pd.DataFrame({"user": [0], "item": [1], "rating": [5.0]})
    with pytest.raises(ValueError, match=match):
        rb.aoa(scorer, test, k=2)


@pytest.mark.parametrize("kwargs, match", [
    (dict(fn=None, n_users=2, n_items=2), "fn"),
    (dict(fn=lambda u: u, n_users=0, n_items=2), "n_users"),
    (dict(fn=lambda u: u, n_users=2, n_items=2.5), "n_items"),
])
def test_scorer_arguments_are_checked(kwargs, match):
    fn = kwargs.pop("fn")
    with pytest.raises(ValueError, match=match):
        rb.Scorer(fn, **kwargs)


def test_from_factors_checks_shapes():
    with pytest.raises(ValueError, match="columns"):
        rb.Scorer.from_factors(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="item_bias"):
        rb.Scorer.from_factors(np.ones((2, 3)), np.ones((4, 3)), item_bias=np.ones(3))


def test_a_dense_matrix_too_large_is_refused_up_front(monkeypatch):
    """issue 57: a 32 GiB dense() used to fail with a MemoryError from inside NumPy."""
    from recbias_tutorial import _validation

    calls = []
    n = 2**16
    huge = rb.Scorer(lambda u: calls.append(len(u)) or np.zeros((len(u), n)), n_users=n, n_items=n)
    monkeypatch.setattr(_validation, "_available_memory", lambda: 16 * 2**30)
    with pytest.raises(ValueError, match=r"n_users x n_items too large.*34\.4 GB"):
        huge.dense()
    assert calls == []  # refused before a single block was scored
    small = rb.Scorer(lambda u: np.ones((len(u), 3)), n_users=2, n_items=3)
    assert small.dense().shape == (2, 3)
