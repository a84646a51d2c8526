"""Stated findings (course.finding) and the report's verdict scale."""

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial import course
from recbias_tutorial._findings import CHECKED, VERDICTS, check_finding, verdict

REPRODUCED, SAME, UNDETERMINED, DIFFERS = VERDICTS


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
    assert verdict(0.62, seeds, margin=0.05).verdict == REPRODUCED
    assert verdict(0.80, seeds, margin=0.05, reference=0.5).verdict == SAME
    assert verdict(0.40, seeds, margin=0.05, reference=0.5).verdict == DIFFERS
    assert verdict(0.80, seeds, margin=0.05).verdict == DIFFERS  # no reference: no direction
    v = verdict(0.62, seeds, margin=0.05)
    assert v.low < v.mean < v.high and v.n == 5 and v.mean == pytest.approx(0.62)
    assert v.margin == 0.05 and "lies inside the paper's 0.62 ± 0.05" in v.why
    # the interval is Student's t interval of the mean
    from scipy import stats
    lo, hi = stats.t.interval(0.95, 4, loc=np.mean(seeds), scale=stats.sem(seeds))
    assert (v.low, v.high) == pytest.approx((lo, hi))
    # values that do not vary: a point, inside or outside the margin
    assert verdict(0.5, [0.5, 0.5], margin=0.01).verdict == REPRODUCED
    assert verdict(0.5, [0.4, 0.4], margin=0.01).verdict == DIFFERS


@pytest.mark.parametrize("paper, ours, kwargs, match", [
    (float("nan"), [1.0, 2.0], {}, "paper must be a finite number"),
    ("0.5", [1.0, 2.0], {}, "paper must be a finite number"),
    (0.5, [], {}, "ours must hold finite values"),
    (0.5, [1.0, np.nan], {}, "ours must hold finite values"),
    (0.5, [1.0], {}, "ours must hold at least 2 seeds"),
    (0.5, [1.0, 2.0], {"level": 1.0}, "level must be in"),
    (0.5, [1.0, 2.0], {"reference": "0"}, "reference must be a finite number"),
    (0.5, [1.0, 2.0], {"margin": 0.0}, "margin must be in"),
])
def test_verdict_refuses_bad_input(paper, ours, kwargs, match):
    with pytest.raises(ValueError, match=match):
        verdict(paper, ours, **{"margin": 0.1, **kwargs})


def test_takeaways_are_stated_first_and_confirmed_later():
    from recbias_tutorial import course
    from recbias_tutorial._findings import FindingFailed, unconfirmed_takeaways

    course.takeaways({"t_tk_a": "AOA favours popular items.", "t_tk_b": "SNIPS helps."})
    assert unconfirmed_takeaways()[-2:] == ["t_tk_a", "t_tk_b"]
    assert course.confirm("t_tk_a", holds="gap > 0", gap=0.2) == "AOA favours popular items."
    with pytest.raises(FindingFailed, match="t_tk_b"):
        course.all_takeaways_confirmed()
    with pytest.raises(FindingFailed, match="'t_tk_b' no longer holds"):
        course.confirm("t_tk_b", holds="cut > 0.5", cut=0.1)
    with pytest.raises(FindingFailed, match="t_tk_b"):  # a failed check confirms nothing
        course.all_takeaways_confirmed()
    course.confirm("t_tk_b", holds="cut > 0.5", cut=0.7)
    course.all_takeaways_confirmed()
    course.takeaways({"t_tk_b": "SNIPS helps."})  # the cell run again: to be confirmed again
    assert unconfirmed_takeaways() == ["t_tk_b"]
    course.confirm("t_tk_b", holds="cut > 0.5", cut=0.7)


@pytest.mark.parametrize("texts, match", [
    ({}, "texts must be a non-empty mapping"),
    (["t_tk_x"], "texts must be a non-empty mapping"),
    ({"not a name": "words"}, "texts: a takeaway's name must be a Python identifier"),
    ({"t_tk_x": ""}, "texts: takeaway 't_tk_x' needs non-empty words"),
    ({"t_tk_x": 3}, "texts: takeaway 't_tk_x' needs non-empty words"),
    ({"t_tk_x": "cuts {cut:.0%} of the error"}, "texts: takeaway 't_tk_x' has format fields"),
    ({"t_tk_x": "a {"}, "text: 'a {' is not a format string"),
])
def test_takeaways_refuse_bad_texts(texts, match):
    from recbias_tutorial import course

    with pytest.raises(ValueError, match=match):
        course.takeaways(texts)


def test_a_takeaway_keeps_its_words_and_only_stated_ones_are_confirmed():
    from recbias_tutorial import course

    course.takeaways({"t_tk_c": "One claim."})
    with pytest.raises(ValueError, match="texts: takeaway 't_tk_c' was stated with other words"):
        course.takeaways({"t_tk_c": "Another claim."})
    with pytest.raises(ValueError, match="name: 't_tk_nope' is not a stated takeaway"):
        course.confirm("t_tk_nope", holds="x > 0", x=1)
    with pytest.raises(ValueError, match="holds"):
        course.confirm("t_tk_c", holds="y > 0", x=1)
    course.confirm("t_tk_c", holds="x > 0", x=1)


# --- bad findings, as a careless author writes them: each a ValueError naming the argument
# (or, for a condition or text that fails on its numbers, the finding and the number)
def _state(name, text="{x}", holds="x > 0", **numbers):
    return course.finding(name, text, holds=holds, **({"x": 1} if not numbers else numbers))


BAD_FINDINGS = [
    ("NaN in a list", lambda: _state("t_b_nan_list", holds="max(x) < 5", x=[1.0, float("nan")]),
     "x"),
    ("inf in a tuple", lambda: _state("t_b_inf_tuple", holds="len(x) > 0", x=(1.0, np.inf)), "x"),
    ("NaN in an array", lambda: _state("t_b_nan_array", holds="len(x) > 0",
                                       x=np.array([1.0, np.nan])), "x"),
    ("NaN in a nested list", lambda: _state("t_b_nan_nested", holds="len(x) > 0",
                                            x=[[1.0], [np.nan]]), "x"),
    ("NaN in a Series", lambda: _state("t_b_nan_series", holds="len(x) > 0",
                                       x=pd.Series([1.0, np.nan])), "x"),
    ("keyword as name", lambda: _state("class"), "name"),
    ("keyword as a number's name", lambda: _state("t_b_kw_number", holds="x > 0", x=1,
                                                  **{"lambda": 2}), "lambda"),
    ("a number named like a function", lambda: _state("t_b_abs", text="{abs}", holds="abs > 0",
                                                      abs=1), "abs"),
    ("division by zero", lambda: _state("t_b_div", holds="x / y > 0", x=1, y=0), "t_b_div"),
    ("string compared with a number", lambda: _state("t_b_str", x="a"), "t_b_str"),
    ("None compared with a number", lambda: _state("t_b_none", x=None), "t_b_none"),
    ("index out of range", lambda: _state("t_b_index", holds="x[5] > 0", x=[1]), "t_b_index"),
    ("format code of another type", lambda: _state("t_b_fmt", text="{x:d}", x=1.5), "text"),
    ("format code on text", lambda: _state("t_b_fmt_str", text="{x:.2f}", holds="x == 'a'",
                                           x="a"), "text"),
    ("format index out of range", lambda: _state("t_b_fmt_index", text="{x[3]}",
                                                 holds="len(x) > 0", x=[1]), "text"),
    ("positional field", lambda: _state("t_b_positional", text="{0}"), "text"),
    ("condition not text", lambda: _state("t_b_holds", holds=True), "holds"),
    ("text not text", lambda: course.finding("t_b_text", 5, holds="x > 0", x=1), "text"),
    ("empty name", lambda: _state(""), "name"),
]


@pytest.mark.parametrize("label, call, argument", BAD_FINDINGS, ids=[c[0] for c in BAD_FINDINGS])
def test_a_bad_finding_is_a_value_error_naming_it(label, call, argument):
    with pytest.raises(ValueError) as info:
        call()
    assert argument in str(info.value), f"{label}: {info.value}"
    assert not isinstance(info.value, course.FindingFailed)


def test_a_failing_condition_names_the_finding_and_its_numbers():
    with pytest.raises(ValueError, match=r"x / y > 0. of finding .t_b_named.*x = 1, y = 0.*ZeroDivisionError"):
        _state("t_b_named", holds="x / y > 0", x=1, y=0)


def test_a_name_states_one_finding(monkeypatch):
    from recbias_tutorial import _findings

    monkeypatch.setattr(_findings, "_cell_id", lambda: None)
    assert _state("t_r_once", text="{x} models", x=3) == "3 models"
    # a cell run again restates its finding, with the numbers of this run
    assert _state("t_r_once", text="{x} models", x=4) == "4 models"
    assert CHECKED["t_r_once"][0] == "4 models"
    with pytest.raises(ValueError, match="name: a finding 't_r_once' was already stated"):
        _state("t_r_once", text="{x} other models", x=3)  # another finding, the same name
    with pytest.raises(ValueError, match="t_r_once"):
        _state("t_r_once", text="{x} models", holds="x > 1", x=3)
    assert CHECKED["t_r_once"][0] == "4 models"  # the first stays


def test_a_cell_edited_in_jupyterlab_may_restate_its_finding(monkeypatch):
    """JupyterLab sends each cell's id with its execution: the cell that stated a finding may
    be edited and run again; another cell may not reuse the name."""
    from recbias_tutorial import _findings

    monkeypatch.setattr(_findings, "_cell_id", lambda: "cell-a")
    _state("t_r_cell", text="{x} models", x=3)
    assert _state("t_r_cell", text="{x} of the models", x=3) == "3 of the models"
    monkeypatch.setattr(_findings, "_cell_id", lambda: "cell-b")
    assert _state("t_r_cell", text="{x} of the models", x=3) == "3 of the models"  # identical
    with pytest.raises(ValueError, match="t_r_cell"):
        _state("t_r_cell", text="{x} models again", x=3)


def test_a_failed_finding_does_not_take_its_name(monkeypatch):
    from recbias_tutorial import _findings

    monkeypatch.setattr(_findings, "_cell_id", lambda: None)
    with pytest.raises(course.FindingFailed):
        _state("t_r_failed", holds="x > 5", x=1)
    assert _state("t_r_failed", holds="x > 0", x=1) == "1"  # rewritten, then it holds


# --- issue 57: a takeaway and a finding never share a name; a refused name is not recorded
def test_a_takeaway_cannot_take_a_findings_name():
    from recbias_tutorial import course
    from recbias_tutorial._findings import TAKEAWAYS

    words = course.finding("t57_f_shared", "cuts {n} errors", holds="n > 0", n=3)
    with pytest.raises(ValueError, match="shares its name with a finding"):
        course.takeaways({"t57_f_shared": "Something else."})
    assert "t57_f_shared" not in TAKEAWAYS and CHECKED["t57_f_shared"][0] == words


def test_a_finding_cannot_take_a_takeaways_name():
    from recbias_tutorial import course

    course.takeaways({"t57_t_own": "A takeaway."})
    with pytest.raises(ValueError, match="is a stated takeaway"):
        course.finding("t57_t_own", "other words {n}", holds="n > 0", n=1)
    assert course.confirm("t57_t_own", holds="n > 0", n=1) == "A takeaway."


@pytest.mark.parametrize("bad", ["class", "not an id", 3])
def test_a_refused_takeaway_name_leaves_nothing_recorded(bad):
    from recbias_tutorial import course
    from recbias_tutorial._findings import unconfirmed_takeaways

    before = unconfirmed_takeaways()
    with pytest.raises(ValueError, match="name"):
        course.takeaways({"t57_t_fine": "Fine.", bad: "Refused."})
    assert unconfirmed_takeaways() == before  # neither the refused name nor its sibling
