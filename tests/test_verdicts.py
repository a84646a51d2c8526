"""The report's verdict rules on constructed evidence: each must say each of its answers where
the evidence demands it, and stay undecided where the evidence cannot decide (the cases of
issue 53 among them). Properties over random evidence: tests/test_verdict_properties.py."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recbias_tutorial._margins import distinction_margin, half_unit, ratio_rounding
from recbias_tutorial._tau_verdict import paired_test_minimum, tau_verdict
from recbias_tutorial._verdicts import (VERDICTS, contrast_verdict, decide, mean_verdict,
                                        single_run_verdict, verdict)

REPRODUCED, SAME, UNDETERMINED, DIFFERS = VERDICTS
RUNS = [0.70, 0.72, 0.71, 0.73, 0.69, 0.70, 0.72, 0.71, 0.70, 0.72]


def test_the_scale_runs_from_agreement_to_disagreement():
    assert VERDICTS == ("reproduced within our interval", "same direction, other level",
                        "undetermined", "differs")


# --- the one decision: an interval against paper ± m
def test_the_decision_gives_each_answer_and_says_why():
    assert decide(0.5, 0.45, 0.55, 0.1)[0] == REPRODUCED
    assert decide(0.5, 0.7, 0.8, 0.1) == (DIFFERS, "our interval [0.7, 0.8] lies entirely above "
                                                   "the paper's 0.5 ± 0.1")
    assert decide(0.5, 0.7, 0.8, 0.1, mean=0.75, reference=0.0)[0] == SAME
    label, why = decide(0.5, 0.2, 0.9, 0.1)
    assert label == UNDETERMINED and "wider than 2m = 0.2" in why
    label, why = decide(0.5, 0.55, 0.65, 0.1)
    assert label == UNDETERMINED and "straddles an edge" in why


# --- a paper value from one run: the prediction interval of one more run
def test_single_run_rule_gives_each_verdict():
    assert single_run_verdict(0.71, RUNS, margin=0.05).verdict == REPRODUCED
    assert single_run_verdict(0.80, RUNS, margin=0.02, reference=0.5).verdict == SAME
    assert single_run_verdict(0.40, RUNS, margin=0.02, reference=0.5).verdict == DIFFERS
    assert single_run_verdict(0.80, RUNS, margin=0.02).verdict == DIFFERS
    v = single_run_verdict(0.71, RUNS, margin=0.01)  # the interval is 0.05 wide
    assert v.verdict == UNDETERMINED and "wider than 2m" in v.why and "10 runs" in v.why


def test_an_interval_too_wide_is_never_reproduced():
    """Issue 53: a recall of 5 'reproduced' by the prediction interval -8.3 ... 9.3 of two runs."""
    v = single_run_verdict(5.0, [0.1, 0.9], margin=half_unit(3))
    assert (round(v.low, 1), round(v.high, 1)) == (-8.3, 9.3) and v.verdict == UNDETERMINED
    assert mean_verdict(4.0, [0, 1], paper_n=5, margin=0.5).verdict == UNDETERMINED
    assert verdict(4.0, [0.0, 1.0], margin=0.5).verdict == UNDETERMINED


def test_a_value_within_the_papers_rounding_is_reproduced():
    """Issue 53: three equal runs at 0.5 against a paper's 0.5 + 1e-9 differed."""
    for rule in (lambda p, r, m: single_run_verdict(p, r, margin=m),
                 lambda p, r, m: mean_verdict(p, r, paper_n=5, margin=m),
                 lambda p, r, m: verdict(p, r, margin=m)):
        assert rule(0.5 + 1e-9, [0.5] * 3, half_unit(3)).verdict == REPRODUCED
        assert rule(0.5004, [0.5] * 3, half_unit(3)).verdict == REPRODUCED
        assert rule(0.5006, [0.5] * 3, half_unit(3)).verdict == DIFFERS


def test_single_run_interval_is_the_prediction_interval():
    v = single_run_verdict(0.7, RUNS, margin=0.1)
    n, s = len(RUNS), np.std(RUNS, ddof=1)
    half = stats.t.ppf(0.975, n - 1) * s * np.sqrt(1 + 1 / n)
    assert (v.low, v.high) == pytest.approx((np.mean(RUNS) - half, np.mean(RUNS) + half))
    # about 95% of fresh runs fall inside it (simulated): with a margin of zero width, the
    # interval holds the paper's run exactly when the paper's value lies in it
    rng = np.random.default_rng(0)
    hits = []
    for _ in range(2000):
        w = single_run_verdict(0.0, rng.normal(size=10), margin=1e-9)
        hits.append(w.low <= rng.normal() <= w.high)
    assert 0.93 < np.mean(hits) < 0.97


def test_single_run_counts_the_independent_units():
    """5 splits x 5 draws: t with 4 degrees of freedom and the mean over 5 units, not 25."""
    rng = np.random.default_rng(3)
    runs = np.repeat(rng.normal(size=5), 5) + rng.normal(0, 0.1, 25)
    splits = np.repeat(np.arange(5), 5)
    pooled = single_run_verdict(0.0, runs, margin=0.1)
    grouped = single_run_verdict(0.0, runs, margin=0.1, groups=splits)
    s = np.std(runs, ddof=1)
    assert grouped.n == 5 and pooled.n == 25
    assert grouped.high - grouped.mean == pytest.approx(stats.t.ppf(0.975, 4) * s * np.sqrt(1.2))
    assert grouped.high - grouped.low > pooled.high - pooled.low
    with pytest.raises(ValueError, match="groups must give one label per run"):
        single_run_verdict(0.0, runs, margin=0.1, groups=splits[:-1])
    with pytest.raises(ValueError, match="at least two units"):
        single_run_verdict(0.0, runs, margin=0.1, groups=np.zeros(25))


# --- a paper mean over seeds: the interval of the difference
def test_mean_rule_gives_each_verdict():
    seeds = [0.25, 0.30, 0.20, 0.28, 0.22]
    assert mean_verdict(0.25, seeds, paper_n=5, margin=0.1).verdict == REPRODUCED
    assert mean_verdict(0.60, seeds, paper_n=5, margin=0.1, reference=0.0).verdict == SAME
    assert mean_verdict(-0.3, seeds, paper_n=5, margin=0.1, reference=0.0).verdict == DIFFERS
    assert mean_verdict(0.60, seeds, paper_n=5, margin=0.1).verdict == DIFFERS
    assert mean_verdict(0.25, seeds, paper_n=5, margin=0.05).verdict == UNDETERMINED  # too wide
    assert mean_verdict(0.33, seeds, paper_n=5, margin=0.1).verdict == UNDETERMINED  # an edge
    # a paper's stated spread is used; a tiny one narrows the interval to ours alone
    assert mean_verdict(0.25, seeds, paper_n=5, paper_sd=1e-6, margin=0.065).verdict == REPRODUCED


def test_mean_rule_is_welch_and_holds_its_level():
    a = [0.25, 0.30, 0.20, 0.28, 0.22]
    v = mean_verdict(0.3, a, paper_n=5, paper_sd=0.03, margin=0.1)
    se = np.sqrt(np.var(a, ddof=1) / 5 + 0.03 ** 2 / 5)
    df = se ** 4 / ((np.var(a, ddof=1) / 5) ** 2 / 4 + (0.03 ** 2 / 5) ** 2 / 4)
    assert v.high - v.mean == pytest.approx(stats.t.ppf(0.975, df) * se)
    rng = np.random.default_rng(1)  # the paper's mean of 5 seeds and ours, same distribution
    hits = []
    for _ in range(2000):
        w = mean_verdict(0.0, rng.normal(size=5), paper_n=5, margin=1e-9)
        hits.append(w.low <= rng.normal(size=5).mean() <= w.high)
    assert 0.93 < np.mean(hits) < 0.98


# --- a contrast or an ordering: the per-repetition difference, ties as zeros
def test_contrast_rule_gives_each_verdict():
    high, low = [1.0] * 8, [0.6] * 8
    assert contrast_verdict(0.4, high, low, margin=0.2).verdict == REPRODUCED  # +0.4 each time
    assert contrast_verdict(0.4, low, high, margin=0.2).verdict == DIFFERS
    assert contrast_verdict(0.4, low, high, margin=0.2, reference=0.0).verdict == DIFFERS
    assert contrast_verdict(0.8, high, low, margin=0.2, reference=0.0).verdict == SAME
    mixed = [0.8, 1.0, 0.8, 0.6, 0.8, 0.8, 1.0, 0.6]  # 2 wins, 4 ties, 2 losses against 0.8
    v = contrast_verdict(0.4, mixed, [0.8] * 8, margin=0.2)
    assert (v.wins, v.ties, v.losses) == (2, 4, 2) and v.mean == 0.0
    assert v.verdict == DIFFERS  # the interval of the difference stays below 0.2
    assert contrast_verdict(0.0, mixed, [0.8] * 8, margin=0.2).verdict == REPRODUCED
    assert contrast_verdict(0.0, mixed, [0.8] * 8, margin=0.1).verdict == UNDETERMINED
    assert contrast_verdict(-0.4, low, high, margin=0.2).verdict == REPRODUCED  # b above a


def test_the_contrasts_of_issue_53():
    # a claimed 0 against 5 of 5 repetitions won by +10: not "no difference"
    assert contrast_verdict(0.0, [10.0] * 5, [0.0] * 5, margin=1.0).verdict == DIFFERS
    # 8 wins and 2 losses by +-10 of 10: the interval holds 0 and 10, it cannot decide
    v = contrast_verdict(0.0, [10.0] * 8 + [-10.0] * 2, [0.0] * 10, margin=1.0)
    assert v.verdict == UNDETERMINED and v.low < 0 < v.high
    # a claimed gain of +0.4 absent in every one of 10 tied repetitions: differs
    assert contrast_verdict(0.4, [0.6] * 10, [0.6] * 10, margin=0.2).verdict == DIFFERS
    # and with 5 repetitions or fewer too
    assert contrast_verdict(0.4, [0.6] * 3, [0.6] * 3, margin=0.2).verdict == DIFFERS


def test_contrast_interval_is_the_t_interval_of_the_difference():
    a, b = np.array([1.0, 0.0, 0.5, 0.7, 0.2]), np.array([0.5, 0.4, 0.5, 0.1, 0.1])
    v = contrast_verdict(0.1, a, b, margin=0.05)
    lo, hi = stats.t.interval(0.95, 4, loc=(a - b).mean(), scale=stats.sem(a - b))
    assert (v.low, v.high) == pytest.approx((lo, hi)) and v.n == 5


# --- Kendall's tau over a few models: the values the truth and the test set allow
def _tables(truth_means, test_means, n=10, noise=None, test_noise=1e-4, seed=0):
    """Per-repetition metrics of models whose truth means are given; ``noise`` per model."""
    rng = np.random.default_rng(seed)
    k = len(truth_means)
    noise = np.full(k, 1e-3) if noise is None else np.asarray(noise)
    truth = pd.DataFrame(np.asarray(truth_means) + rng.normal(0, 1, (n, k)) * noise,
                         columns=list("abcde"[:k]))
    test = pd.DataFrame(np.asarray(test_means) + rng.normal(0, 1, (n, k)) * test_noise,
                        columns=truth.columns)
    return truth, test


def test_tau_rule_reproduces_a_value_the_truth_and_test_set_determine():
    truth, test = _tables([0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.2, 0.3, 0.5, 0.4])
    v = tau_verdict(0.8, truth, test, margin=0.1)
    assert v.verdict == REPRODUCED and v.separated == v.pairs == v.test_separated == 10
    assert v.attainable == (pytest.approx(0.8),) and v.tau == pytest.approx(0.8)
    assert v.share_equal == 1.0 and v.paired
    assert tau_verdict(1.0, truth, test, margin=0.1).verdict == DIFFERS
    assert tau_verdict(1.0, truth, test, margin=0.2).verdict == REPRODUCED  # one swap allowed


def test_tau_rule_is_undetermined_on_a_tie_of_the_truth():
    """Figure 4's case: the top three models tied on D_gt; the test set orders them one way."""
    truth, test = _tables([0.1, 0.2, 0.3, 0.3, 0.3], [0.1, 0.2, 0.3, 0.32, 0.31],
                          noise=[1e-3, 1e-3, 0.02, 0.02, 0.02])
    v = tau_verdict(0.6, truth, test, margin=0.1)
    assert v.separated == 7 and v.test_separated == 10 and v.verdict == UNDETERMINED
    # every order of c, d, e on top of a < b: tau = 1 - 2 * (discordant pairs) / 10
    taus = {round(1 - 2 * sum(p.index(x) > p.index(y) for x, y in [(2, 4), (2, 3), (4, 3)]) / 10, 9)
            for p in map(list, itertools.permutations([2, 3, 4]))}
    assert set(np.round(v.attainable, 9)) == taus == {0.4, 0.6, 0.8, 1.0}
    assert "the truth leaves 3 of the 10 pairs unordered" in v.why
    assert tau_verdict(0.2, truth, test, margin=0.1).verdict == DIFFERS


def test_a_tau_inside_the_range_but_not_attainable_differs():
    """Issue 53: a paper tau no consistent order gives, though inside [low, high]."""
    truth, test = _tables([0.1, 0.2, 0.3, 0.3, 0.3], [0.1, 0.2, 0.3, 0.32, 0.31],
                          noise=[1e-3, 1e-3, 0.02, 0.02, 0.02])
    # two models tied on the truth: a tie moves tau by one swap (0.2), never by 0.1
    truth = truth.assign(c=truth["c"] - 0.05)  # only d and e tied now
    v = tau_verdict(0.9, truth, test, margin=0.05)
    assert v.low < 0.9 < v.high and 0.9 not in v.attainable and v.verdict == DIFFERS


def test_a_test_set_that_orders_at_random_does_not_reproduce_tau_one():
    """Issue 53: test sets that order the models at random in each repetition, whose means
    happen to be in order, 'reproduced' tau = 1."""
    rng = np.random.default_rng(5)
    truth = pd.DataFrame(np.array([0.1, 0.2, 0.3, 0.4, 0.5]) + rng.normal(0, 1e-3, (10, 5)),
                         columns=list("abcde"))
    test = pd.DataFrame(rng.normal(0, 1, (10, 5)), columns=list("abcde"))
    test = test - test.mean() + [0.1, 0.2, 0.3, 0.4, 0.5]  # means in the truth's order
    v = tau_verdict(1.0, truth, test, margin=0.1)
    assert v.tau == 1.0 and v.test_separated < 10 and v.verdict == UNDETERMINED
    assert "the test set's noise" in v.why


def test_few_repetitions_decide_on_the_means_and_say_so():
    """Issue 53: with 5 repetitions or fewer every cell was undetermined, even an exact
    reverse of the paper's order."""
    assert paired_test_minimum(0.05) == 6 and paired_test_minimum(0.01) == 8
    truth, test = _tables([0.1, 0.2, 0.3, 0.4, 0.5], [0.5, 0.4, 0.3, 0.2, 0.1], n=4)
    v = tau_verdict(1.0, truth, test, margin=0.1)
    assert not v.paired and v.verdict == DIFFERS and v.attainable == (-1.0,)
    assert v.why.startswith("only 4 repetitions, too few for the paired test at α = 0.05")
    assert tau_verdict(-1.0, truth, test, margin=0.1).verdict == REPRODUCED


def test_tau_rule_takes_the_weakest_of_the_value_and_its_contrasts():
    truth, test = _tables([0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.2, 0.3, 0.4, 0.5])
    held = contrast_verdict(0.4, [1.0] * 10, [0.6] * 10, margin=0.2)
    open_ = contrast_verdict(0.4, [1.2, 0.6] * 5, [0.8] * 10, margin=0.2)
    assert tau_verdict(1.0, truth, test, margin=0.1, contrasts=(held,)).verdict == REPRODUCED
    v = tau_verdict(1.0, truth, test, margin=0.1, contrasts=(held, open_))
    assert v.verdict == UNDETERMINED and "a contrast it rests on is undetermined" in v.why
    assert tau_verdict(1.0, truth, test, margin=0.1, contrasts=(DIFFERS,)).verdict == DIFFERS


def test_tau_rule_counts_per_repetition_taus_and_separated_pairs():
    truth, test = _tables([0.1, 0.2, 0.3, 0.3, 0.3], [0.1, 0.2, 0.3, 0.32, 0.31],
                          noise=[1e-3, 1e-3, 0.02, 0.02, 0.02])
    v = tau_verdict(0.6, truth, test, margin=0.1)
    expected = [stats.kendalltau(test.iloc[r], truth.iloc[r]).statistic for r in range(10)]
    np.testing.assert_allclose(v.taus, expected)
    assert v.share_equal == pytest.approx(np.mean(np.isclose(expected, 0.6)))
    assert v.tau_separated == 1.0  # the test set keeps every pair D_gt separates


# --- margins
def test_margins_are_half_the_gap_never_below_the_rounding():
    m = distinction_margin(0.7085, {"IPS": 0.6572, "DR": 0.7195}, rounding=half_unit(4))
    assert m.value == pytest.approx(0.0055) and m.reason == "half the gap to DR (0.7195)"
    m = distinction_margin(0.004, {"no gain": 0.0}, rounding=half_unit(3, terms=2))
    assert m.value == 0.002
    m = distinction_margin(0.001, {"no gain": 0.0}, rounding=half_unit(3, terms=2))
    assert m.value == 0.001 and m.reason.startswith("the paper's rounding, 0.001")
    # a ratio of two values printed to 3 decimals moves by up to this much
    r = ratio_rounding(0.268, 0.380, decimals=3)
    assert max(abs((0.268 + a) / (0.380 + b) - 0.268 / 0.380)
               for a in (-5e-4, 5e-4) for b in (-5e-4, 5e-4)) <= r * 1.01
    with pytest.raises(ValueError, match="not told apart from itself"):
        distinction_margin(0.5, {"itself": 0.5}, rounding=0.01)
    with pytest.raises(ValueError, match="against must be a non-empty mapping"):
        distinction_margin(0.5, {}, rounding=0.01)
    with pytest.raises(ValueError, match=r"against\['x'\] must be a finite number"):
        distinction_margin(0.5, {"x": float("nan")}, rounding=0.01)


@pytest.mark.parametrize("call, match", [
    (lambda t: tau_verdict(1.5, t, t, margin=0.1), "paper"),
    (lambda t: tau_verdict(0.5, t, t, margin=0.0), "margin"),
    (lambda t: tau_verdict(0.5, t.values, t, margin=0.1), "truth must be a non-empty DataFrame"),
    (lambda t: tau_verdict(0.5, t, t.iloc[:, :4], margin=0.1), "same models"),
    (lambda t: tau_verdict(0.5, t.iloc[:, :2], t.iloc[:, :2], margin=0.1), "3 to 7 models"),
    (lambda t: tau_verdict(0.5, t.iloc[:1], t.iloc[:1], margin=0.1), "two repetitions"),
    (lambda t: tau_verdict(0.5, t, t.assign(a=np.nan), margin=0.1), "test must hold finite"),
    (lambda t: tau_verdict(0.5, t, t, margin=0.1, contrasts=["differs"]), "contrasts"),
    (lambda t: tau_verdict(0.5, t, t, margin=0.1, contrasts=("maybe",)), "contrasts"),
    (lambda t: tau_verdict(0.5, t, t, margin=0.1, alpha=0), "alpha"),
    (lambda t: contrast_verdict(0.1, [1, 2], [1, 2, 3], margin=0.1), "paired"),
    (lambda t: contrast_verdict(0.1, "12", [1, 2], margin=0.1), "ours"),
    (lambda t: contrast_verdict(0.1, [1, 2], None, margin=0.1), "other"),
    (lambda t: contrast_verdict(0.1, [1], [2], margin=0.1), "at least 2 repetitions"),
    (lambda t: single_run_verdict(0.1, [1.0], margin=0.1), "at least 2 runs"),
    (lambda t: single_run_verdict(np.nan, [1.0, 2.0], margin=0.1), "paper"),
    (lambda t: single_run_verdict(0.1, [1.0, 2.0], margin=-0.1), "margin"),
    (lambda t: mean_verdict(0.1, [1.0, 2.0], paper_n=1, margin=0.1), "paper_n"),
    (lambda t: mean_verdict(0.1, [1.0, 2.0], paper_n=5, paper_sd=-1, margin=0.1), "paper_sd"),
    (lambda t: mean_verdict(0.1, [1.0], paper_n=5, margin=0.1), "at least 2 seeds"),
    (lambda t: verdict(0.1, [1.0], margin=0.1), "at least 2 seeds"),
])
def test_rules_refuse_bad_input_naming_the_argument(call, match):
    truth, _ = _tables([0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.2, 0.3, 0.4, 0.5])
    with pytest.raises(ValueError, match=match):
        call(truth)


def test_the_signed_rank_p_value_is_scipys():
    import warnings

    from recbias_tutorial._tau_verdict import signed_rank_p

    rng = np.random.default_rng(0)
    for trial in range(60):  # scipy resamples ties (slow): few of them, short
        n = int(rng.integers(1, 9 if trial % 2 else 20))
        d = rng.integers(-3, 4, n).astype(float) if trial % 2 else rng.normal(size=n)
        if not d.any():
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy on zeros and ties
            expected = stats.wilcoxon(d).pvalue
        assert signed_rank_p(d) == pytest.approx(expected, abs=1e-12), d
