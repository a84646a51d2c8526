"""Monte Carlo checks of what chapter 1 (missing data) states.

Chapter 1 states no theorem; it states three results these tests check, seeded, under the
conditions the lesson gives, with tolerances from the Monte Carlo standard error
(|mean - truth| < 4 se):

* eq-ch1-weighted: with independent observation, a user's AOA term concentrates around the
  propensity-weighted average of the gains, not around the plain average (the truth's term),
  unless the propensity is constant (MCAR);
* the Bayes reading of eq-ch1-marlin: the logged share of a rating value over its true share
  is proportional to the value's logging probability mu_v;
* eq-ch1-kl: ``stats.kl_divergence`` is KL(P_MNAR || P_MAR) in nats, the log first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import recbias_tutorial as rb
from recbias_tutorial import stats

N_ITEMS, K = 4000, 1000  # one user with N_ITEMS relevant items; the top K are "recalled"


def _user_aoa(rng, propensity, n_reps=300):
    """AOA Recall@K of one user whose every item is relevant, over logs drawn with P_i."""
    scores = -np.arange(N_ITEMS, dtype=float)[None, :]  # item i at position i
    out = np.empty(n_reps)
    for r in range(n_reps):
        items = np.flatnonzero(rng.random(N_ITEMS) < propensity)
        test = pd.DataFrame({"user": 0, "item": items, "rating": 5.0})
        out[r] = rb.aoa(scores, test, metric="recall", k=K)
    return out


def test_aoa_concentrates_on_the_propensity_weighted_average():
    rng = np.random.default_rng(101)
    p = np.where(np.arange(N_ITEMS) < K, 0.5, 0.1)  # the recalled items are logged more often
    gain = (np.arange(N_ITEMS) < K).astype(float)
    weighted = float((p * gain).sum() / p.sum())      # eq-ch1-weighted
    plain = float(gain.mean())                        # the user's term in eq-ch1-truth
    aoa = _user_aoa(rng, p)
    se = aoa.std(ddof=1) / np.sqrt(len(aoa))
    assert abs(aoa.mean() - weighted) < 4 * se
    assert aoa.mean() - plain > 4 * se               # not the truth: AOA overstates the recall


def test_aoa_is_unbiased_under_mcar():
    rng = np.random.default_rng(102)
    p = np.full(N_ITEMS, 0.2)
    aoa = _user_aoa(rng, p)
    se = aoa.std(ddof=1) / np.sqrt(len(aoa))
    assert abs(aoa.mean() - K / N_ITEMS) < 4 * se


def test_logged_over_true_share_is_proportional_to_mu():
    """P(v | O = 1) / P(v) is proportional to mu_v: the 5-star over 1-star ratio of the two
    distributions estimates mu_5 / mu_1 (the lesson's "logging odds")."""
    rng = np.random.default_rng(103)
    support = [1, 2, 3, 4, 5]
    p_true = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
    mu = np.array([0.05, 0.02, 0.02, 0.06, 0.2])
    odds = []
    for _ in range(200):
        full = rng.choice(support, size=20000, p=p_true).astype(float)
        logged = full[rng.random(full.size) < mu[full.astype(int) - 1]]
        ratio = (stats.rating_distribution(logged, support=support)
                 / stats.rating_distribution(full, support=support))
        odds.append(ratio[5.0] / ratio[1.0])
    odds = np.array(odds)
    se = odds.std(ddof=1) / np.sqrt(len(odds))
    assert abs(odds.mean() - mu[4] / mu[0]) < 4 * se


def test_kl_divergence_is_in_nats_with_the_log_first():
    rng = np.random.default_rng(104)
    support = [1, 2, 3, 4, 5]
    p_mnar = np.array([0.05, 0.1, 0.2, 0.3, 0.35])
    p_mar = np.array([0.25, 0.25, 0.2, 0.15, 0.15])
    truth = float(np.sum(p_mnar * np.log(p_mnar / p_mar)))     # nats, P_MNAR first
    reverse = float(np.sum(p_mar * np.log(p_mar / p_mnar)))
    kl = np.array([stats.kl_divergence(rng.choice(support, 20000, p=p_mnar),
                                       rng.choice(support, 20000, p=p_mar), support=support)
                   for _ in range(200)])
    se = kl.std(ddof=1) / np.sqrt(len(kl))
    # the plug-in estimate is biased upwards by about (|support| - 1) / (2 n) per sample
    assert abs(kl.mean() - truth) < 4 * se + 4 * (len(support) - 1) / 20000
    assert abs(kl.mean() - reverse) > 4 * se + 0.01
