"""Seeded Monte Carlo checks of chapter 3's proposition on weighted draws, as the lesson states it.

prop-ch3-one-draw: with the weight w = P_MAR(f) / P_he(f) of a feature f of each held-out row
(here the item, P_MAR uniform, P_he the held-out set's own shares), one row drawn with
probability proportional to w has f distributed as P_MAR, and so has each row of a sample drawn
with replacement. What an intervened test set draws, a sample WITHOUT replacement, is not: at a
large size it tilts back towards the held-out set's own shares (the failure the lesson states).

The weights are the package's, with D_tr = D_he: SKEW's 1/|D_tr_i| is exactly P_MAR(i)/P_he(i)
for a uniform P_MAR over items, and WTD_H with item_power=0 is w_u = P_MAR(u)/P_he(u) for a
uniform P_MAR over users. The draws are the package's sampler (or, with replacement, numpy's
choice with the package's weights). Each tolerance is 4 standard errors.
"""

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial.sampling import intervene, intervention_weights

TOL = 4.0  # standard errors
ITEM_COUNTS = np.array([40, 20, 10, 5, 3, 2])  # a popular item and a long tail
N_USERS = int(ITEM_COUNTS.max())
#: (strategy, item_power, feature f whose P_MAR is uniform)
CASES = [("skew", 1.0, "item"), ("wtd_h", 0.0, "user")]


@pytest.fixture(scope="module")
def heldout():
    """Item i rated by its first ITEM_COUNTS[i] users (distinct pairs): item shares far from
    uniform (a popular item and a long tail), and user shares too (user 0 rated every item)."""
    rows = [(u, i) for i, b in enumerate(ITEM_COUNTS) for u in range(b)]
    return pd.DataFrame(rows, columns=["user", "item"]).assign(rating=4.0)


def _shares(samples, col, n):
    return np.array([np.bincount(s[col], minlength=n) / len(s) for s in samples])


def _n(col):
    return len(ITEM_COUNTS) if col == "item" else N_USERS


@pytest.mark.parametrize(("strategy", "power", "col"), CASES)
def test_single_draw_of_the_sampler_follows_the_random_mechanism(heldout, strategy, power, col):
    """One draw of the package's sampler (a test set of one row): its feature is uniform."""
    n, k = len(heldout), _n(col)
    rng = np.random.default_rng(3)
    draws = [intervene(heldout, strategy=strategy, size=1 / n, train=heldout, item_power=power,
                       smoothing=0, seed=rng) for _ in range(3000)]
    assert all(len(d) == 1 for d in draws)
    share = _shares(draws, col, k).mean(0)
    se = np.sqrt((1 / k) * (1 - 1 / k) / len(draws))
    assert np.all(np.abs(share - 1 / k) < TOL * se), (share, se)


@pytest.mark.parametrize(("strategy", "power", "col"), CASES)
def test_with_replacement_sample_follows_the_random_mechanism(heldout, strategy, power, col):
    """A with-replacement sample of 60% of D_he drawn with the package's weights: each value's
    share is uniform, on average over 300 samples."""
    w = intervention_weights(heldout, strategy=strategy, train=heldout, item_power=power,
                             smoothing=0)
    w = np.asarray(w, float)
    rng = np.random.default_rng(4)
    m = round(0.6 * len(heldout))
    samples = [heldout.iloc[rng.choice(len(heldout), m, replace=True, p=w / w.sum())]
               for _ in range(300)]
    shares = _shares(samples, col, _n(col))
    mean, se = shares.mean(0), shares.std(0, ddof=1) / np.sqrt(len(shares))
    assert np.all(np.abs(mean - 1 / _n(col)) < TOL * se), (mean, se)


@pytest.mark.parametrize(("strategy", "power", "col"), CASES)
def test_without_replacement_tilts_back_towards_the_log(heldout, strategy, power, col):
    """The intervened test set of size 0.6 (without replacement, the package's sampler): the
    most logged value's share is above uniform by more than 4 standard errors, between uniform
    and its share in D_he."""
    rng = np.random.default_rng(5)
    samples = [intervene(heldout, strategy=strategy, size=0.6, train=heldout, item_power=power,
                         smoothing=0, seed=rng) for _ in range(300)]
    top = _shares(samples, col, _n(col))[:, 0]  # item 0 / user 0: the most logged
    mean, se = top.mean(), top.std(ddof=1) / np.sqrt(len(top))
    logged = float((heldout[col] == 0).mean())
    assert mean - 1 / _n(col) > TOL * max(se, 1e-4), (mean, se)
    assert 1 / _n(col) < mean < logged
