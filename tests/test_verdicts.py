"""The report's verdict rules, one per kind of number, each on constructed cases where it must
give each verdict it can give (so that each can fail on the number it grades)."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recbias_tutorial._verdicts import (VERDICTS, contrast_verdict, mean_verdict,
                                        single_run_verdict, tau_verdict, verdict)

REPRODUCED, SAME, UNDETERMINED, DIFFERS = VERDICTS
RUNS = [0.70, 0.72, 0.71, 0.73, 0.69, 0.70, 0.72, 0.71, 0.70, 0.72]


def test_the_scale_runs_from_agreement_to_disagreement():
    assert VERDICTS == ("reproduced within our interval", "same direction, other level",
                        "undetermined", "differs")


# --- a paper value from one run: the prediction interval of one more run
def test_single_run_rule_gives_each_verdict():
    assert single_run_verdict(0.735, RUNS).verdict == REPRODUCED  # a run could give it
    assert verdict(0.735, RUNS).verdict == DIFFERS  # ... though not our mean
    assert single_run_verdict(0.80, RUNS, reference=0.5).verdict == SAME
    assert single_run_verdict(0.40, RUNS, reference=0.5).verdict == DIFFERS
    assert single_run_verdict(0.80, RUNS).verdict == DIFFERS


def test_single_run_interval_is_the_prediction_interval():
    v = single_run_verdict(0.7, RUNS)
    n, s = len(RUNS), np.std(RUNS, ddof=1)
    half = stats.t.ppf(0.975, n - 1) * s * np.sqrt(1 + 1 / n)
    assert (v.low, v.high) == pytest.approx((np.mean(RUNS) - half, np.mean(RUNS) + half))
    # about 95% of fresh runs fall inside it (simulated)
    rng = np.random.default_rng(0)
    hits = [single_run_verdict(rng.normal(), rng.normal(size=10)).verdict == REPRODUCED
            for _ in range(2000)]
    assert 0.93 < np.mean(hits) < 0.97


# --- a paper mean over seeds: the interval of the difference
def test_mean_rule_gives_each_verdict():
    seeds = [0.25, 0.30, 0.20, 0.28, 0.22]
    assert mean_verdict(0.31, seeds, paper_n=5).verdict == REPRODUCED
    assert mean_verdict(0.40, seeds, paper_n=5, reference=0.0).verdict == SAME
    assert mean_verdict(-0.1, seeds, paper_n=5, reference=0.0).verdict == DIFFERS
    assert mean_verdict(0.40, seeds, paper_n=5).verdict == DIFFERS
    # a paper's stated spread is used; a tiny one narrows the interval to ours alone
    assert mean_verdict(0.305, seeds, paper_n=5, paper_sd=1e-6).verdict == DIFFERS
    assert mean_verdict(0.33, seeds, paper_n=5).verdict == DIFFERS


def test_mean_rule_is_welch_and_holds_its_level():
    a = [0.25, 0.30, 0.20, 0.28, 0.22]
    v = mean_verdict(0.3, a, paper_n=5, paper_sd=0.03)
    se = np.sqrt(np.var(a, ddof=1) / 5 + 0.03 ** 2 / 5)
    df = se ** 4 / ((np.var(a, ddof=1) / 5) ** 2 / 4 + (0.03 ** 2 / 5) ** 2 / 4)
    assert v.high - v.mean == pytest.approx(stats.t.ppf(0.975, df) * se)
    rng = np.random.default_rng(1)  # the paper's mean of 5 seeds and ours, same distribution
    hits = [mean_verdict(rng.normal(size=5).mean(), rng.normal(size=5), paper_n=5).verdict
            == REPRODUCED for _ in range(2000)]
    assert 0.93 < np.mean(hits) < 0.98


# --- a contrast or an ordering: a sign test within repetitions
def test_contrast_rule_gives_each_verdict():
    high, low = [1.0] * 8, [0.6] * 8
    assert contrast_verdict(0.4, high, low).verdict == REPRODUCED  # 8 wins
    assert contrast_verdict(0.4, low, high).verdict == DIFFERS  # 8 losses
    mixed = [0.8, 1.0, 0.8, 0.6, 0.8, 0.8, 1.0, 0.6]  # 2 wins, 4 ties, 2 losses against 0.8
    v = contrast_verdict(0.4, mixed, [0.8] * 8)
    assert v.verdict == UNDETERMINED and (v.wins, v.ties, v.losses) == (2, 4, 2)
    assert v.p == 1.0
    assert contrast_verdict(0.0, mixed, [0.8] * 8).verdict == REPRODUCED  # "the same"
    assert contrast_verdict(0.0, high, low).verdict == DIFFERS
    assert contrast_verdict(-0.2, low, high).verdict == REPRODUCED  # an ordering b above a


def test_contrast_rule_is_the_two_sided_sign_test():
    wins = [1.0] * 7 + [0.0] * 2 + [0.5]  # 7 wins, 2 losses, 1 tie against 0.5
    v = contrast_verdict(0.1, wins, [0.5] * 10)
    assert v.p == pytest.approx(stats.binomtest(7, 9).pvalue) and v.verdict == UNDETERMINED
    assert contrast_verdict(0.1, wins, [0.5] * 10, alpha=0.2).verdict == REPRODUCED


# --- Kendall's tau over a few models: only the pairs D_gt separates
def _tables(truth_means, test_means, n=10, noise=None, seed=0):
    """Per-repetition metrics of models whose truth means are given; ``noise`` per model."""
    rng = np.random.default_rng(seed)
    k = len(truth_means)
    noise = np.full(k, 1e-3) if noise is None else np.asarray(noise)
    truth = pd.DataFrame(np.asarray(truth_means) + rng.normal(0, 1, (n, k)) * noise,
                         columns=list("abcde"[:k]))
    test = pd.DataFrame(np.asarray(test_means) + rng.normal(0, 1e-4, (n, k)),
                        columns=truth.columns)
    return truth, test


def test_tau_rule_reproduces_a_value_the_truth_determines():
    truth, test = _tables([0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.2, 0.3, 0.5, 0.4])
    v = tau_verdict(0.8, truth, test)
    assert v.verdict == REPRODUCED and v.separated == v.pairs == 10
    assert v.low == v.high == pytest.approx(0.8) == v.tau and v.share_equal == 1.0
    assert tau_verdict(1.0, truth, test).verdict == DIFFERS  # determined, another value


def test_tau_rule_is_undetermined_on_a_tie_of_the_truth_and_differs_outside_its_range():
    """Figure 4's case: the top three models tied on D_gt; the test set orders them one way."""
    truth, test = _tables([0.1, 0.2, 0.3, 0.3, 0.3], [0.1, 0.2, 0.3, 0.32, 0.31],
                          noise=[1e-3, 1e-3, 0.02, 0.02, 0.02])
    v = tau_verdict(0.6, truth, test)
    assert v.separated == 7 and v.verdict == UNDETERMINED
    # every order of c, d, e on top of a < b: tau = 1 - 2 * (discordant pairs) / 10
    taus = {1 - 2 * sum(p.index(x) > p.index(y) for x, y in [(2, 4), (2, 3), (4, 3)]) / 10
            for p in map(list, itertools.permutations([2, 3, 4]))}
    assert (v.low, v.high) == pytest.approx((min(taus), max(taus))) == (0.4, 1.0)
    assert tau_verdict(0.2, truth, test).verdict == DIFFERS  # no consistent order gives it


def test_tau_rule_takes_the_weakest_of_the_value_and_its_contrasts():
    truth, test = _tables([0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.2, 0.3, 0.4, 0.5])
    held = contrast_verdict(0.4, [1.0] * 10, [0.6] * 10)
    open_ = contrast_verdict(0.4, [1.0, 0.6] * 5, [0.8] * 10)
    assert tau_verdict(1.0, truth, test, contrasts=(held,)).verdict == REPRODUCED
    assert tau_verdict(1.0, truth, test, contrasts=(held, open_)).verdict == UNDETERMINED
    assert tau_verdict(1.0, truth, test, contrasts=(DIFFERS,)).verdict == DIFFERS


def test_tau_rule_counts_per_repetition_taus_and_separated_pairs():
    truth, test = _tables([0.1, 0.2, 0.3, 0.3, 0.3], [0.1, 0.2, 0.3, 0.32, 0.31],
                          noise=[1e-3, 1e-3, 0.02, 0.02, 0.02])
    v = tau_verdict(0.6, truth, test)
    expected = [stats.kendalltau(test.iloc[r], truth.iloc[r]).statistic for r in range(10)]
    np.testing.assert_allclose(v.taus, expected)
    assert v.share_equal == pytest.approx(np.mean(np.isclose(expected, 0.6)))
    assert v.tau_separated == 1.0  # the test set keeps every pair D_gt separates


@pytest.mark.parametrize("call, match", [
    (lambda t: tau_verdict(1.5, t, t), "paper"),
    (lambda t: tau_verdict(0.5, t.values, t), "truth must be a non-empty DataFrame"),
    (lambda t: tau_verdict(0.5, t, t.iloc[:, :4]), "same models"),
    (lambda t: tau_verdict(0.5, t.iloc[:, :2], t.iloc[:, :2]), "3 to 8 models"),
    (lambda t: tau_verdict(0.5, t.iloc[:1], t.iloc[:1]), "two repetitions"),
    (lambda t: tau_verdict(0.5, t, t.assign(a=np.nan)), "test must hold finite numbers"),
    (lambda t: tau_verdict(0.5, t, t, contrasts=["differs"]), "contrasts"),
    (lambda t: tau_verdict(0.5, t, t, contrasts=("maybe",)), "contrasts"),
    (lambda t: tau_verdict(0.5, t, t, alpha=0), "alpha"),
    (lambda t: contrast_verdict(0.1, [1, 2], [1]), "paired"),
    (lambda t: contrast_verdict(0.1, "12", [1, 2]), "ours"),
    (lambda t: contrast_verdict(0.1, [1, 2], None), "other"),
    (lambda t: single_run_verdict(0.1, [1.0]), "at least two runs"),
    (lambda t: single_run_verdict(np.nan, [1.0, 2.0]), "paper"),
    (lambda t: mean_verdict(0.1, [1.0, 2.0], paper_n=1), "paper_n"),
    (lambda t: mean_verdict(0.1, [1.0, 2.0], paper_n=5, paper_sd=-1), "paper_sd"),
    (lambda t: mean_verdict(0.1, [1.0], paper_n=5), "at least two seeds"),
])
def test_rules_refuse_bad_input_naming_the_argument(call, match):
    truth, _ = _tables([0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.2, 0.3, 0.4, 0.5])
    with pytest.raises(ValueError, match=match):
        call(truth)
