"""Tests of recbias_tutorial.stats (wrappers over scipy)."""

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from recbias_tutorial.stats import (
    kendall_tau,
    kl_divergence,
    paired_wilcoxon,
    rating_distribution,
    steiger_test,
)


# ----------------------------------------------------------------------------- Steiger / Williams
def test_steiger_matches_published_value():
    # Silver, Hittner & May (2006), "A FORTRAN 77 program for comparing dependent correlations"
    # (depcor), Applied Psychological Measurement 30, 152-153: r12 = .3, r13 = .4, r23 = .5,
    # n = 100 gives Williams' t = -1.0767, p = .2843. The same values are asserted by the test
    # suite of the R package cocor (Diedenhofen & Musch, 2015), cocor.dep.groups.overlap(.3, .4,
    # .5, 100, test="williams1959").
    t, p = steiger_test(0.3, 0.4, 0.5, 100)
    assert round(t, 4) == -1.0767
    assert round(p, 4) == 0.2843
    assert isinstance(t, float) and isinstance(p, float)


def test_steiger_symmetry_and_power():
    t1, p1 = steiger_test(0.3, 0.4, 0.5, 100)
    t2, p2 = steiger_test(0.4, 0.3, 0.5, 100)  # swapping y and z flips the sign only
    assert t2 == pytest.approx(-t1) and p2 == pytest.approx(p1)
    assert steiger_test(0.5, 0.5, 0.3, 50) == (0.0, 1.0)
    assert steiger_test(0.7, 0.3, 0.3, 200)[1] < 1e-6
    # y == z (r_yz = 1) forces r_xy == r_xz: degenerate but valid, no difference
    assert steiger_test(0.4, 0.4, 1.0, 30) == (0.0, 1.0)


def test_steiger_null_rejection_rate_monte_carlo():
    """Under rho_xy = rho_xz the two-sided test rejects 5% of the time at alpha = .05."""
    rng = np.random.default_rng(2024)
    n_rep, n = 20_000, 50
    corr = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.3], [0.5, 0.3, 1.0]])
    x = rng.standard_normal((n_rep, n, 3)) @ np.linalg.cholesky(corr).T
    x -= x.mean(axis=1, keepdims=True)
    x /= np.sqrt((x**2).sum(axis=1, keepdims=True))
    r = np.einsum("rni,rnj->rij", x, x)  # sample correlation matrices
    t, p = steiger_test(r[:, 0, 1], r[:, 0, 2], r[:, 1, 2], n)
    assert t.shape == p.shape == (n_rep,)
    rate = np.mean(p < 0.05)
    se = np.sqrt(0.05 * 0.95 / n_rep)
    assert abs(rate - 0.05) <= 4 * se, rate
    # the vectorised path agrees with the scalar path
    assert steiger_test(r[0, 0, 1], r[0, 0, 2], r[0, 1, 2], n) == pytest.approx((t[0], p[0]))


def test_steiger_validation():
    with pytest.raises(ValueError, match="r_xy must lie in"):
        steiger_test(1.2, 0.3, 0.2, 50)
    with pytest.raises(ValueError, match="r_yz must lie in"):
        steiger_test(0.2, 0.3, float("nan"), 50)
    with pytest.raises(ValueError, match="r_xz must lie in"):
        steiger_test(0.2, -1.01, 0.3, 50)
    with pytest.raises(ValueError, match="n must be > 3"):
        steiger_test(0.2, 0.3, 0.4, 3)
    with pytest.raises(ValueError, match="positive semi-definite"):
        steiger_test(0.9, -0.9, 0.9, 50)


# ----------------------------------------------------------------------------- Kendall / Wilcoxon
def test_kendall_tau_agrees_with_scipy():
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.normal(size=12)
        y = x + rng.normal(size=12)
        y[:3] = y[3]  # ties: tau-b
        res = scipy.stats.kendalltau(x, y)
        assert kendall_tau(x, y) == pytest.approx((res.statistic, res.pvalue))


def test_kendall_tau_aligns_by_key():
    truth = {"pop": 0.1, "mf": 0.3, "bpr": 0.2, "knn": 0.25}
    est = {"knn": 0.05, "bpr": 0.2, "pop": 0.4, "mf": 0.1}
    keys = list(truth)
    expected = kendall_tau([truth[k] for k in keys], [est[k] for k in keys])
    assert kendall_tau(truth, est) == pytest.approx(expected)
    assert kendall_tau(pd.Series(truth), pd.Series(est).iloc[::-1]) == pytest.approx(expected)
    assert kendall_tau(truth, {k: 2 * v for k, v in truth.items()})[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same keys.*only in x: \\['knn'\\]"):
        kendall_tau(truth, {k: v for k, v in est.items() if k != "knn"})
    with pytest.raises(ValueError, match="both be dict/Series"):
        kendall_tau(truth, [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="same length"):
        kendall_tau([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least 2"):
        kendall_tau([1.0], [2.0])


def test_paired_wilcoxon_wraps_scipy():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=40), rng.normal(0.3, 1, size=40)
    res = scipy.stats.wilcoxon(x, y, alternative="two-sided")
    assert paired_wilcoxon(x, y) == pytest.approx((res.statistic, res.pvalue))
    res = scipy.stats.wilcoxon(x, y, alternative="less")
    assert paired_wilcoxon(x, y, alternative="less") == pytest.approx((res.statistic, res.pvalue))
    dx = dict(zip("abcdefgh", x[:8]))
    dy = dict(reversed(list(zip("abcdefgh", y[:8]))))
    assert paired_wilcoxon(dx, dy) == pytest.approx(paired_wilcoxon(x[:8], y[:8]))


# ----------------------------------------------------------------------------- KL divergence
def test_rating_distribution():
    shares = rating_distribution(pd.Series([5.0, 4.0, 5.0, 1.0]), support=[1, 2, 3, 4, 5])
    assert shares.index.tolist() == [1, 2, 3, 4, 5]
    assert shares.tolist() == [0.25, 0.0, 0.0, 0.25, 0.5]
    assert rating_distribution([3, 1, 3]).to_dict() == {1.0: 1 / 3, 3.0: 2 / 3}
    with pytest.raises(ValueError, match="outside support"):
        rating_distribution([1, 6], support=[1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="ratings is empty"):
        rating_distribution([])


def test_kl_zero_for_identical_positive_otherwise():
    rng = np.random.default_rng(5)
    a = rng.integers(1, 6, 500).astype(float)
    assert kl_divergence(a, a) == 0.0
    assert kl_divergence(a, rng.permutation(a)) == 0.0
    assert kl_divergence(a, a, smoothing=0) == 0.0
    b = rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], 500, p=[0.05, 0.05, 0.2, 0.3, 0.4])
    assert kl_divergence(a, b) > 0 and kl_divergence(b, a) > 0
    assert kl_divergence(a, b) != pytest.approx(kl_divergence(b, a))  # not symmetric


def test_kl_smoothing_is_additive_and_finite():
    p, q = [5, 5, 4], [1, 2, 3, 4]  # P has mass on 5, Q has none
    support = [1, 2, 3, 4, 5]
    assert kl_divergence(p, q, support=support, smoothing=0) == np.inf
    cp = np.array([0, 0, 0, 1, 2]) + 0.5
    cq = np.array([1, 1, 1, 1, 0]) + 0.5
    expected = scipy.stats.entropy(cp / cp.sum(), cq / cq.sum())
    assert kl_divergence(p, q, support=support, smoothing=0.5) == pytest.approx(expected)
    assert np.isfinite(kl_divergence(p, q))
    assert kl_divergence(p, q, base=2) == pytest.approx(kl_divergence(p, q) / np.log(2))
    with pytest.raises(ValueError, match="smoothing"):
        kl_divergence(p, q, smoothing=-1)
    with pytest.raises(ValueError, match="q_ratings has values outside support"):
        kl_divergence(p, q + [0], support=support)
