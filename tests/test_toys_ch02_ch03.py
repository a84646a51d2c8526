"""Exact enumerations of the "By hand first" toys of chapters 2 and 3 (issue #56).

Chapter 2: one user, relevant items A, B, C with propensities 0.8, 0.5, 0.2, an irrelevant
item D, the ranking A, D, B, C and Recall@2 (only A is a hit). Every one of the 2^3 logs is
enumerated with its probability, so expectations are exact (no Monte Carlo).

Chapter 3: two users, two items, the four held-out pairs; WTD weights w_u * w_i^2 from a
training log in which user 0 and item 0 hold 2/3 of the rows and a random sample in which
every user and item holds 1/2. Two rows drawn without replacement are enumerated exactly.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial.estimators import user_values
from recbias_tutorial.sampling import intervene, intervention_weights

# --------------------------------------------------------------------------- chapter 2

P = np.array([0.8, 0.5, 0.2])      # propensities of A, B, C
HIT = np.array([1.0, 0.0, 0.0])    # Recall@2 gain of A, B, C under the ranking A, D, B, C
TRUTH = HIT.mean()                 # 1/3
SCORES = np.array([[4.0, 2.0, 1.0, 3.0]])  # items A, B, C, D = 0, 1, 2, 3
P_ITEMS = np.append(P, 0.5)        # D is irrelevant: its propensity never enters
K = 2


def outcomes():
    """Every log of the relevant items: (observed indicator, probability)."""
    for o in itertools.product([0, 1], repeat=3):
        o = np.array(o)
        yield o, float(np.prod(np.where(o == 1, P, 1 - P)))


def by_hand(o):
    """IPS, SNIPS, AOA of one log by the lesson's definitions (NaN: user dropped)."""
    num, den = (o * HIT / P).sum(), (o / P).sum()
    if not o.any():
        return 0.0, np.nan, np.nan
    return num / len(P), num / den, (o * HIT).sum() / o.sum()


def test_probabilities_sum_to_one():
    assert sum(p for _, p in outcomes()) == pytest.approx(1.0, abs=1e-15)


def package_terms(o):
    """User 0's IPS, SNIPS and AOA terms from the package, NaN where it drops the user.

    A second user with one always-logged hit (P = 1) keeps the test frame non-empty, so the
    log in which user 0 has no relevant item can be passed to the package too.
    """
    scores = np.vstack([SCORES, SCORES])
    p = np.vstack([P_ITEMS, [1.0, 1.0, 1.0, 1.0]])
    items = list(np.flatnonzero(o))
    test = pd.DataFrame({"user": [0] * len(items) + [1], "item": items + [0], "rating": 5.0})
    out = []
    for est, kw in [("ips", dict(n_relevant=[3, 1])), ("snips", {}), ("aoa", {})]:
        terms = user_values(scores, test, p if est != "aoa" else None, estimator=est, k=K, **kw)
        out.append(float(terms.get(0, np.nan)))
    return out


def test_package_matches_hand_on_every_log():
    for o, _ in outcomes():
        hand = by_hand(o)
        pkg = package_terms(o)
        np.testing.assert_allclose(pkg, hand, rtol=0, atol=1e-12, equal_nan=True)
        if o.any():  # the public functions of a one-user log, as the lesson calls them
            test = pd.DataFrame({"user": 0, "item": np.flatnonzero(o), "rating": 5.0})
            direct = [rb.ips(SCORES, test, P_ITEMS, n_relevant=[3], k=K),
                      rb.snips(SCORES, test, P_ITEMS, k=K), rb.aoa(SCORES, test, k=K)]
            np.testing.assert_allclose(direct, hand, rtol=0, atol=1e-12)


def test_empty_log_ips_zero_snips_aoa_dropped():
    ips, snips, aoa = package_terms(np.zeros(3, int))
    assert ips == 0.0 and np.isnan(snips) and np.isnan(aoa)
    empty = pd.DataFrame({"user": [0], "item": [3], "rating": [1.0]})  # only the irrelevant D
    with pytest.raises(ValueError, match="no relevant"):
        rb.snips(SCORES, empty, P_ITEMS, k=K)


def exact_expectations():
    """E[IPS] over all logs; E[SNIPS], E[AOA] given a logged relevant item (package values)."""
    e_ips = e_snips = e_aoa = p_seen = 0.0
    for o, prob in outcomes():
        ips, snips, aoa = package_terms(o)
        e_ips += prob * ips
        if o.any():
            e_snips, e_aoa, p_seen = e_snips + prob * snips, e_aoa + prob * aoa, p_seen + prob
    return e_ips, e_snips / p_seen, e_aoa / p_seen, p_seen


def test_ips_exact_expectation_is_truth():
    e_ips, _, _, p_seen = exact_expectations()
    assert abs(e_ips - TRUTH) < 1e-12
    assert p_seen == pytest.approx(1 - 0.2 * 0.5 * 0.8, abs=1e-15)
    # conditional on a logged relevant item, IPS is biased upwards by 1 / P(seen)
    assert abs(e_ips / p_seen - TRUTH) > 0.01


def test_snips_and_aoa_exact_bias():
    _, e_snips, e_aoa, _ = exact_expectations()
    assert e_snips - TRUTH > 0.1          # exact bias 0.179 (SNIPS 0.512 against 1/3)
    assert e_aoa > e_snips                # AOA (0.594) overstates more
    assert e_snips == pytest.approx(0.5121718860849296, abs=1e-12)


# --------------------------------------------------------------------------- chapter 3

IDS = ["user", "item"]
TRAIN = pd.DataFrame([(0, 0), (0, 1), (1, 0)], columns=IDS)   # user 0, item 0: 2/3 each
MAR = pd.DataFrame([(0, 1), (1, 0)], columns=IDS)             # every user and item: 1/2
HELDOUT = pd.DataFrame([(0, 0), (0, 1), (1, 0), (1, 1)], columns=IDS)


def hand_weights():
    share = lambda frame, col: frame[col].value_counts(normalize=True)  # noqa: E731
    w_u = share(MAR, "user") / share(TRAIN, "user")
    w_i = share(MAR, "item") / share(TRAIN, "item")
    return (HELDOUT["user"].map(w_u) * HELDOUT["item"].map(w_i) ** 2).to_numpy()


def inclusion_of_two(w):
    """Exact chance that a successive weighted sample of two rows holds each row."""
    pi = np.zeros(len(w))
    for first, second in itertools.permutations(range(len(w)), 2):
        pi[[first, second]] += w[first] / w.sum() * w[second] / (w.sum() - w[first])
    return pi


def test_hand_weights_are_the_lesson_numbers_and_the_package():
    w = hand_weights()
    np.testing.assert_allclose(w / w.sum(), np.array([1, 4, 2, 8]) / 15, rtol=0, atol=1e-15)
    package = intervention_weights(HELDOUT, strategy="wtd", train=TRAIN, mar=MAR, smoothing=0)
    np.testing.assert_allclose(package, w, rtol=0, atol=1e-12)


def test_without_replacement_is_flatter_than_one_draw():
    w = hand_weights()
    one = w / w.sum()
    share_of_two = inclusion_of_two(w) / 2
    assert share_of_two.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.abs(share_of_two - one).max() > 0.05      # 0.424 against 8/15 for (1, 1)
    assert share_of_two[3] < one[3] and share_of_two[0] > one[0]


def test_package_sampler_follows_the_exact_draws():
    """Monte Carlo of intervene: one row (size 1/4) follows the weights, two rows (size 1/2)
    follow the enumerated inclusion probabilities; tolerance 4 standard errors."""
    w = hand_weights()
    rng = np.random.default_rng(56)
    n = 3000
    heldout = HELDOUT.assign(rating=4.0)
    for size, expected in [(0.25, w / w.sum()), (0.5, inclusion_of_two(w))]:
        counts = np.zeros(len(w))
        for _ in range(n):
            rows = intervene(heldout, strategy="wtd", size=size, train=TRAIN, mar=MAR,
                             smoothing=0, seed=rng).index.to_numpy()
            counts[rows] += 1
        freq = counts / n
        se = np.sqrt(expected * (1 - expected) / n)
        assert (np.abs(freq - expected) < 4 * se).all(), (size, freq, expected)
