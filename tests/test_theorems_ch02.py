"""Seeded Monte Carlo checks of what chapter 2 (IPS and SNIPS) states, under its conditions.

Each theorem or proposition of ``book/ch02_ips_snips.md`` is checked where it holds, with a
tolerance from the Monte Carlo standard error (4 s.e.), and, where the lesson says it fails
outside its conditions, that it does fail there (beyond 4 s.e.).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial.data import sample_observed
from recbias_tutorial.propensity import popularity_propensity, selection_exponent

N_LOGS = 200


@pytest.fixture(scope="module")
def small_world():
    """A small simulated world (as the lesson's, smaller) with its three fixed score matrices."""
    world = rb.simulate(200, 100, seed=5, mean_ratings_per_user=12)
    stars = world.full["rating"].to_numpy().reshape(world.n_users, world.n_items)
    rng = np.random.default_rng(3)
    models = {"popularity": np.tile(world.propensity.sum(axis=0), (world.n_users, 1)),
              "personalised": stars + rng.normal(0.0, 1.0, size=stars.shape),
              "random": rng.random(stars.shape)}
    n_relevant = (stars >= world.threshold).sum(axis=1)
    truth = {m: rb.aoa(s, world.full, k=10) for m, s in models.items()}
    logs = [sample_observed(world, seed=1000 + r) for r in range(N_LOGS)]
    return world, models, n_relevant, truth, logs


def _mean_se(values):
    values = np.asarray(values, dtype=float)
    return values.mean(), values.std(ddof=1) / np.sqrt(len(values))


def test_ips_is_unbiased_with_the_true_propensities(small_world):
    """prop-ips-unbiased: true P > 0 and true |S_u| -> E[IPS] = R, for every recommender."""
    world, models, n_relevant, truth, logs = small_world
    assert (world.propensity > 0).all()  # positivity, the theorem's condition
    for name, scores in models.items():
        mean, se = _mean_se([rb.ips(scores, log, world.propensity, n_relevant=n_relevant, k=10)
                             for log in logs])
        assert se > 0
        assert abs(mean - truth[name]) < 4 * se, (name, mean, truth[name], se)


def test_ips_fails_with_propensities_off_by_a_constant(small_world):
    """The proof needs absolute propensities: halving P doubles the estimate (bias >> 4 s.e.)."""
    world, models, n_relevant, truth, logs = small_world
    scores = models["personalised"]
    halved = [rb.ips(scores, log, world.propensity / 2, n_relevant=n_relevant, k=10) for log in logs[:50]]
    exact = [rb.ips(scores, log, world.propensity, n_relevant=n_relevant, k=10) for log in logs[:50]]
    np.testing.assert_allclose(halved, 2 * np.asarray(exact), rtol=1e-12)
    mean, se = _mean_se(halved)
    assert mean - truth["personalised"] > 4 * se


def test_snips_needs_the_propensities_only_up_to_scale(small_world):
    """def-ch2-snips: a constant factor in P cancels; with constant P SNIPS is AOA."""
    world, models, _, _, logs = small_world
    log = logs[0]
    for scores in models.values():
        base = rb.snips(scores, log, world.propensity, k=10)
        assert rb.snips(scores, log, world.propensity * 0.01, k=10) == pytest.approx(base, rel=1e-12)
        flat = np.full(world.n_items, 0.3)                      # constant propensities
        assert rb.snips(scores, log, flat, k=10) == pytest.approx(rb.aoa(scores, log, k=10), rel=1e-12)


def test_snips_is_biased_for_finite_samples(small_world):
    """SNIPS is a ratio: with the true P its mean misses the truth by more than 4 s.e."""
    world, models, _, truth, logs = small_world
    mean, se = _mean_se([rb.snips(models["popularity"], log, world.propensity, k=10) for log in logs])
    assert (mean - truth["popularity"]) / se > 4, (mean, truth["popularity"], se)


def test_snips_is_consistent_its_bias_shrinks_with_more_logged_items():
    """Same world, denser log: the bias of SNIPS (true P) falls by more than 4 s.e. and by half."""
    biases = {}
    for density in (8.0, 48.0):
        world = rb.simulate(200, 100, seed=5, mean_ratings_per_user=density)
        scores = np.tile(world.propensity.sum(axis=0), (world.n_users, 1))
        truth = rb.aoa(scores, world.full, k=10)
        mean, se = _mean_se([rb.snips(scores, sample_observed(world, seed=2000 + r), world.propensity, k=10)
                             for r in range(150)])
        biases[density] = (mean - truth, se)
    (sparse, se_sparse), (dense, se_dense) = biases[8.0], biases[48.0]
    assert sparse > 4 * se_sparse                           # biased when few items are logged
    assert abs(sparse) - abs(dense) > 4 * np.hypot(se_sparse, se_dense)
    assert abs(dense) < abs(sparse) / 2


def _user_terms(p, gain, n_draws, seed):
    """IPS and SNIPS terms of one user over independent logs O_i ~ Bernoulli(p_i)."""
    observed = np.random.default_rng(seed).random((n_draws, len(p))) < p
    numerator = (observed * gain / p).sum(axis=1)
    denominator = (observed / p).sum(axis=1)
    return numerator / len(p), numerator / denominator


@pytest.mark.parametrize("hits_on, snips_less_variable", [("rare", True), ("common", False)])
def test_variance_criterion_predicts_which_is_less_variable(hits_on, snips_less_variable):
    """thm-ch2-variance: Var(SNIPS_u) < Var(IPS_u) iff the w-weighted recall exceeds R_u / 2.

    One user, 400 relevant items, independent observations, Recall: hits on the rarely logged
    items (the criterion holds) or on the frequently logged ones (it does not).
    """
    p = np.r_[np.full(200, 0.6), np.full(200, 0.1)]                 # common, then rare items
    gain = np.zeros(400)
    gain[np.arange(200, 300) if hits_on == "rare" else np.arange(0, 100)] = 1.0
    w = (1 - p) / p
    criterion = (w * gain).sum() / w.sum() > gain.mean() / 2
    assert criterion == snips_less_variable
    ips_u, snips_u = _user_terms(p, gain, 20_000, seed=7)
    log_ratio = np.log(snips_u.var(ddof=1) / ips_u.var(ddof=1))
    se = 2 * np.sqrt(2 / (len(ips_u) - 1))  # s.e. of a log variance ratio (upper bound, paired draws)
    assert (log_ratio < -4 * se) if snips_less_variable else (log_ratio > 4 * se), log_ratio
    # the per-user terms are the package's estimators on a one-user log
    observed = np.random.default_rng(7).random(400) < p
    log = pd.DataFrame({"user": 0, "item": np.flatnonzero(observed), "rating": 5.0})
    scores = gain[None, :] + np.linspace(0, 0.5, 400)[None, :]     # the hits are the top 100
    ips_pkg = rb.ips(scores, log, p[None, :], n_relevant=np.array([400]), k=100)
    snips_pkg = rb.snips(scores, log, p[None, :], k=100)
    assert ips_pkg == pytest.approx(ips_u[0], rel=1e-12)
    assert snips_pkg == pytest.approx(snips_u[0], rel=1e-12)


def test_popularity_propensities_follow_from_the_two_steps():
    """thm-ch2-popularity: the package's p ~ (n*)^((gamma+1)/2) solves the two steps,
    P = a (n*)^gamma n with the true popularity n = n*/P (up to scale), for any gamma > -1."""
    rng = np.random.default_rng(11)
    n_star = rng.integers(1, 300, 80)                            # observed (training) counts
    train = pd.DataFrame({"user": 0, "item": np.repeat(np.arange(80), n_star)})
    for gamma in (0.0, 1.0, 2.5):
        p = popularity_propensity(train, 80, gamma=gamma)
        n_true = n_star / p                                      # n* = P n
        a = p / (n_star.astype(float) ** gamma * n_true)         # must be one constant
        assert np.allclose(a, a[0], rtol=1e-10), gamma
    # and a wrong exponent does not solve them
    p_wrong = (n_star / n_star.max()).astype(float) ** 1.0
    a_wrong = p_wrong / (n_star.astype(float) ** 0.0 * (n_star / p_wrong))
    assert not np.allclose(a_wrong, a_wrong[0], rtol=1e-3)


def test_selection_exponent_locates_gamma_when_propensities_are_item_only():
    """ch2-gamma-random: with item-only propensities of the theorem's form, uniform random data
    locate gamma: the mean over seeds is within 4 s.e. of it."""
    gamma, n_users, n_items = 1.0, 3000, 150
    estimates = []
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n_star = np.sort(rng.integers(20, 2000, n_items)).astype(float)  # training counts
        p_item = 0.4 * (n_star / n_star.max()) ** ((gamma + 1) / 2)      # the theorem's propensities
        train = pd.DataFrame({"user": 0, "item": np.repeat(np.arange(n_items), n_star.astype(int))})
        liked = rng.random((n_users, n_items)) < rng.uniform(0.05, 0.5, n_items)
        rating = np.where(liked, 5.0, 2.0)
        logged = rng.random((n_users, n_items)) < p_item
        u, i = np.nonzero(logged)
        held = pd.DataFrame({"user": u, "item": i, "rating": rating[u, i]})
        shown = rng.random((n_users, n_items)) < 0.05                     # uniformly exposed
        u, i = np.nonzero(shown)
        random = pd.DataFrame({"user": u, "item": i, "rating": rating[u, i]})
        estimates.append(float(selection_exponent(held, random, train=train, n_items=n_items)["gamma"]))
    mean, se = _mean_se(estimates)
    assert abs(mean - gamma) < 4 * se, (mean, se)


def test_a_misspecified_gamma_biases_snips(small_world):
    """When it fails: popularity propensities with a wrong gamma bias SNIPS beyond 4 s.e.,
    upwards at gamma = 0 and downwards at gamma = 3, for the popularity recommender."""
    world, models, _, truth, logs = small_world
    for gamma, sign in ((0.0, 1), (3.0, -1)):
        p = popularity_propensity(world.mnar, world.n_items, gamma=gamma)
        mean, se = _mean_se([rb.snips(models["popularity"], log, p, k=10) for log in logs[:100]])
        assert sign * (mean - truth["popularity"]) > 4 * se, (gamma, mean, truth["popularity"], se)


def test_snips_at_gamma_minus_one_is_aoa(small_world):
    """The slider's baseline: at gamma = -1 every item has propensity 1, so SNIPS is AOA on the
    same log, for every recommender and metric (exactly, not in expectation); at gamma = 2 it
    is not (the check can fail)."""
    world, models, _, _, logs = small_world
    log = logs[0]
    p = popularity_propensity(log, world.n_items, gamma=-1.0)
    assert np.array_equal(p, np.ones(world.n_items))
    for name, scores in models.items():
        for metric in ("recall", "dcg", "auc"):
            assert rb.snips(scores, log, p, metric=metric, k=10) == pytest.approx(
                rb.aoa(scores, log, metric=metric, k=10), rel=1e-12, abs=1e-15), (name, metric)
    p2 = popularity_propensity(log, world.n_items, gamma=2.0)
    assert abs(rb.snips(models["popularity"], log, p2, k=10)
               - rb.aoa(models["popularity"], log, k=10)) > 1e-3


def test_yang_protocol_at_gamma_minus_one_is_aoa():
    """The chapter's table: ``snips_protocols`` at gamma = -1 gives AOA's per-user values."""
    from recbias_tutorial.replications import yang2018

    world = rb.simulate(120, 80, seed=4)
    train, held = rb.random_split(world.mnar, (0.8, 0.2), seed=0)
    held, truth = yang2018.same_users(held, rb.drop_seen(world.mar, train))
    protocols = yang2018.snips_protocols(held, truth, train=train, n_items=world.n_items,
                                         gammas={"SNIPS γ=-1.0": -1.0, "SNIPS γ=2.0": 2.0})
    stars = world.full["rating"].to_numpy().reshape(world.n_users, world.n_items)
    table = yang2018.user_table({"stars": stars}, protocols, exclude=train,
                                metrics=["recall"], k=10)
    wide = table.pivot_table(index="user", columns="estimator", values="value")
    np.testing.assert_allclose(wide["SNIPS γ=-1.0"], wide["AOA"], rtol=1e-12, atol=1e-15)
    assert not np.allclose(wide["SNIPS γ=2.0"], wide["AOA"])
