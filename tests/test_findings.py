"""Stated findings (course.finding) and the report's verdict scale."""

import numpy as np
import pytest

from recbias_tutorial import course
from recbias_tutorial._findings import CHECKED, VERDICTS, check_finding, verdict


def test_a_finding_that_holds_returns_its_words_and_is_recorded():
    words = course.finding("t_f_worse", "raises the MAE for {n:d} of {m:d} models ({share:.0%})",
                           holds="n > m / 2", n=np.int64(3), m=4, share=0.75)
    assert words == "raises the MAE for 3 of 4 models (75%)"
    assert CHECKED["t_f_worse"][0] == words


def test_a_finding_that_no_longer_holds_fails_naming_it_and_its_numbers():
    with pytest.raises(course.FindingFailed) as err:
        course.finding("t_f_beats", "beats the holdout by {gap:.3f}", holds="gap > 0",
                       gap=-0.0123)
    message = str(err.value)
    assert "t_f_beats" in message and "gap > 0" in message and "-0.0123" in message


@pytest.mark.parametrize("n, holds", list(enumerate(["gap > 0 and names == 'a, b'",
                                                      "abs(gap) < max(0.1, 0.2)",
                                                      "sorted(set([1, 2])) == [1, 2] and gap > 0"])))
def test_conditions_may_use_strings_and_a_few_builtins(n, holds):
    assert check_finding(f"t_f_ok{n}", "{gap}", holds=holds, gap=0.05, names="a, b") == "0.05"


@pytest.mark.parametrize("kwargs, match", [
    ({"name": "not an identifier"}, "name must be a Python identifier"),
    ({"text": ""}, "text must be a non-empty string"),
    ({"text": "{other}"}, "names other, which the finding was not given"),
    ({"holds": "gap >"}, "not a Python expression"),
    ({"holds": ""}, "holds must be a non-empty"),
    ({"holds": "__import__('os')"}, "not one of the finding's numbers"),
    ({"holds": "gap.real > 0"}, "uses Attribute"),
    ({"holds": "lambda: 1"}, "uses Lambda"),
    ({"holds": "gap + 1"}, "not True or False"),
    ({"gap": float("nan")}, "gap is nan"),
])
def test_bad_findings_are_refused_clearly(kwargs, match):
    args = {"name": "t_f_bad", "text": "{gap}", "holds": "gap > 0", "gap": 0.1} | kwargs
    with pytest.raises(ValueError, match=match):
        course.finding(args.pop("name"), args.pop("text"), holds=args.pop("holds"), **args)


def test_verdict_scale():
    seeds = [0.60, 0.62, 0.64, 0.61, 0.63]
    assert verdict(0.62, seeds).verdict == VERDICTS[0]
    assert verdict(0.80, seeds, reference=0.5).verdict == VERDICTS[1]
    assert verdict(0.40, seeds, reference=0.5).verdict == VERDICTS[2]
    assert verdict(0.80, seeds).verdict == VERDICTS[2]  # no reference: no direction to share
    v = verdict(0.62, seeds)
    assert v.low < v.mean < v.high and v.n == 5 and v.mean == pytest.approx(0.62)
    # the interval is Student's t interval of the mean
    from scipy import stats
    lo, hi = stats.t.interval(0.95, 4, loc=np.mean(seeds), scale=stats.sem(seeds))
    assert (v.low, v.high) == pytest.approx((lo, hi))
    # one value, or values that do not vary: only equality reproduces
    assert verdict(0.5, [0.5]).verdict == VERDICTS[0]
    assert verdict(0.5, [0.4, 0.4]).verdict == VERDICTS[2]


@pytest.mark.parametrize("paper, ours, kwargs, match", [
    (float("nan"), [1.0], {}, "paper must be a finite number"),
    ("0.5", [1.0], {}, "paper must be a finite number"),
    (0.5, [], {}, "ours must hold one or more finite values"),
    (0.5, [1.0, np.nan], {}, "ours must hold one or more finite values"),
    (0.5, [1.0], {"level": 1.0}, "level must be in"),
    (0.5, [1.0], {"reference": "0"}, "reference must be a finite number"),
])
def test_verdict_refuses_bad_input(paper, ours, kwargs, match):
    with pytest.raises(ValueError, match=match):
        verdict(paper, ours, **kwargs)
