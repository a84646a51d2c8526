"""Properties of every verdict rule, tested with hypothesis on random evidence.

For each rule (our mean's interval, a single run's prediction interval, a mean over seeds, a
contrast within repetitions, Kendall's τ over a few models):

* **all three outcomes are reachable**: for any evidence some paper value and margin make it
  say "reproduced", some "differs" and some "undetermined";
* **widening never decides more**: scaling our runs' spread up (or raising the level; for τ,
  lowering α, which separates fewer pairs) never turns "undetermined" into a decision, nor
  "reproduced" into "differs" (or back): the verdict stays or becomes "undetermined";
* **order invariance**: the repetitions in another order give the same verdict and interval;
* **bad evidence is refused**: a NaN, an empty sample, one run, mismatched pairs or tables
  raise ``ValueError``.

"differs" and "same direction, other level" count as one answer here: the second only
qualifies the first. The examples are derandomised (the same every run).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from recbias_tutorial._tau_verdict import paired_test_minimum, tau_verdict
from recbias_tutorial._verdicts import (VERDICTS, contrast_verdict, mean_verdict,
                                        single_run_verdict, verdict)

REPRODUCED, SAME, UNDETERMINED, DIFFERS = VERDICTS
N = int(os.environ.get("PROP_N", 100))
SETTINGS = settings(derandomize=True, deadline=None, max_examples=N, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _answer(label: str) -> str:
    return DIFFERS if label == SAME else label


#: Each interval rule as ``rule(paper, sample, margin, **options)``; a contrast's sample is
#: the pair (ours, other) stacked as two columns.
RULES = {
    "verdict": lambda p, x, m, **kw: verdict(p, x, margin=m, **kw),
    "single_run_verdict": lambda p, x, m, **kw: single_run_verdict(p, x, margin=m, **kw),
    "mean_verdict": lambda p, x, m, **kw: mean_verdict(p, x, paper_n=5, margin=m, **kw),
    "contrast_verdict": lambda p, x, m, **kw: contrast_verdict(p, x[:, 0], x[:, 1], margin=m,
                                                               **kw),
}

values = st.floats(-10, 10, allow_nan=False, allow_subnormal=False)


@st.composite
def samples(draw, rule: str):
    n = draw(st.integers(2, 12))
    shape = (n, 2) if rule == "contrast_verdict" else (n,)
    return np.array(draw(st.lists(values, min_size=int(np.prod(shape)),
                                  max_size=int(np.prod(shape))))).reshape(shape)


def _widen(x: np.ndarray, c: float, rule: str) -> np.ndarray:
    """The sample with its spread scaled by c around its mean (the pairs' difference, for a
    contrast: the second column kept)."""
    if rule == "contrast_verdict":
        d = x[:, 0] - x[:, 1]
        return np.column_stack([x[:, 1] + d.mean() + c * (d - d.mean()), x[:, 1]])
    return x.mean() + c * (x - x.mean())


@pytest.mark.parametrize("rule", list(RULES))
@SETTINGS
@given(data=st.data())
def test_every_outcome_is_reachable(rule, data):
    x = data.draw(samples(rule))
    v = RULES[rule](0.0, x, 1.0)
    width, centre = v.high - v.low, v.mean
    assume(width > 1e-6)
    assert RULES[rule](centre, x, width).verdict == REPRODUCED
    assert _answer(RULES[rule](centre + 10 * width + 1, x, width / 4).verdict) == DIFFERS
    assert RULES[rule](centre, x, width / 4).verdict == UNDETERMINED


@pytest.mark.parametrize("rule", list(RULES))
@SETTINGS
@given(data=st.data())
def test_widening_never_decides_more(rule, data):
    x = data.draw(samples(rule))
    paper = data.draw(values)
    margin = data.draw(st.floats(1e-3, 5))
    c = data.draw(st.floats(1, 10))
    before = _answer(RULES[rule](paper, x, margin).verdict)
    wider = _answer(RULES[rule](paper, _widen(x, c, rule), margin).verdict)
    assert wider in (before, UNDETERMINED), (before, wider)
    level = _answer(RULES[rule](paper, x, margin, level=0.99).verdict)
    assert level in (before, UNDETERMINED), (before, level)


@pytest.mark.parametrize("rule", list(RULES))
@SETTINGS
@given(data=st.data())
def test_the_order_of_repetitions_does_not_matter(rule, data):
    x = data.draw(samples(rule))
    paper, margin = data.draw(values), data.draw(st.floats(1e-3, 5))
    order = data.draw(st.permutations(range(len(x))))
    a, b = RULES[rule](paper, x, margin), RULES[rule](paper, x[list(order)], margin)
    assert (a.verdict, a.low, a.high) == (b.verdict, b.low, b.high)


@pytest.mark.parametrize("rule", list(RULES))
@SETTINGS
@given(data=st.data())
def test_bad_evidence_is_refused(rule, data):
    x = data.draw(samples(rule))
    bad = x.copy()
    bad.flat[data.draw(st.integers(0, bad.size - 1))] = data.draw(
        st.sampled_from([np.nan, np.inf, -np.inf]))
    for evidence in (bad, x[:0], x[:1]):
        with pytest.raises(ValueError):
            RULES[rule](0.0, evidence, 0.1)
    if rule == "contrast_verdict":
        with pytest.raises(ValueError, match="paired"):
            contrast_verdict(0.0, x[:, 0], x[:-1, 1], margin=0.1)
    if rule == "single_run_verdict":
        with pytest.raises(ValueError, match="groups"):
            single_run_verdict(0.0, x, margin=0.1, groups=list(range(len(x) + 1)))


# --- Kendall's tau: the attainable values over the orders consistent with the evidence
@st.composite
def tau_tables(draw, *, min_n: int = 2):
    """(truth, test): integer-valued repetitions of 3 to 5 models (ties are frequent)."""
    n = draw(st.integers(min_n, 12))
    k = draw(st.integers(3, 5))
    shift = np.array(draw(st.lists(st.integers(0, 6), min_size=k, max_size=k)), float)
    cells = st.lists(st.integers(-2, 2), min_size=n * k, max_size=n * k)
    truth = shift + np.array(draw(cells), float).reshape(n, k)
    test = shift[::-1] * draw(st.sampled_from([1.0, -1.0])) + np.array(
        draw(cells), float).reshape(n, k)
    columns = [f"m{i}" for i in range(k)]
    return pd.DataFrame(truth, columns=columns), pd.DataFrame(test, columns=columns)


taus = st.sampled_from([-1.0, -0.6, -0.2, 0.0, 1 / 3, 0.6, 0.8, 1.0])


@SETTINGS
@given(tables=tau_tables(), data=st.data())
def test_tau_every_outcome_is_reachable(tables, data):
    truth, test = tables
    v = tau_verdict(None, truth, test, margin=0.1)
    assume(len(v.attainable) > 0)  # the separated pairs do not form a cycle
    assert tau_verdict(v.attainable[0], truth, test, margin=2.5).verdict == REPRODUCED
    gaps = [1.0 - v.high, v.low + 1.0]  # room above or below every attainable value
    if max(gaps) > 0.02:
        paper = 1.0 if gaps[0] >= gaps[1] else -1.0
        assert tau_verdict(paper, truth, test, margin=max(gaps) / 2).verdict == DIFFERS
    if len(v.attainable) > 1:
        step = min(np.diff(v.attainable))
        assert tau_verdict(v.attainable[0], truth, test, margin=step / 2).verdict == UNDETERMINED


@SETTINGS
@given(tables=tau_tables(min_n=paired_test_minimum(0.01)), paper=taus,
       margin=st.floats(0.01, 0.5), alphas=st.tuples(st.floats(0.01, 0.2), st.floats(0.01, 0.2)))
def test_tau_widening_never_decides_more(tables, paper, margin, alphas):
    """A lower α separates fewer pairs: more orders, a superset of attainable values."""
    truth, test = tables
    low, high = sorted(alphas)
    strict, loose = (tau_verdict(paper, truth, test, margin=margin, alpha=a) for a in (high, low))
    assume(len(strict.attainable) > 0)  # a cycle of separated pairs allows no order at all
    assert set(strict.attainable) <= set(loose.attainable)
    assert _answer(loose.verdict) in (_answer(strict.verdict), UNDETERMINED)


@SETTINGS
@given(tables=tau_tables(), paper=taus, data=st.data())
def test_tau_the_order_of_repetitions_does_not_matter(tables, paper, data):
    truth, test = tables
    order = list(data.draw(st.permutations(range(len(truth)))))
    a = tau_verdict(paper, truth, test, margin=0.1)
    b = tau_verdict(paper, truth.iloc[order], test.iloc[order], margin=0.1)
    shuffled = tau_verdict(paper, truth, test.iloc[order], margin=0.1)  # the rows are labelled
    for other in (b, shuffled):
        assert (a.verdict, a.attainable, a.why) == (other.verdict, other.attainable, other.why)
        np.testing.assert_equal([a.tau, a.share_equal, a.low, a.high],
                                [other.tau, other.share_equal, other.low, other.high])


@SETTINGS
@given(tables=tau_tables(), data=st.data())
def test_tau_bad_evidence_is_refused(tables, data):
    truth, test = tables
    bad = test.copy()
    bad.iloc[data.draw(st.integers(0, len(bad) - 1)), data.draw(
        st.integers(0, bad.shape[1] - 1))] = data.draw(st.sampled_from([np.nan, np.inf]))
    for t, x in ((truth, bad), (bad, truth), (truth.iloc[:0], test.iloc[:0]),
                 (truth.iloc[:1], test.iloc[:1]), (truth, test.iloc[:-1]),
                 (truth, test.iloc[:, :-1]), (truth.iloc[:, :2], test.iloc[:, :2])):
        with pytest.raises(ValueError):
            tau_verdict(0.0, t, x, margin=0.1)
