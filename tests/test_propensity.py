"""recbias_tutorial.propensity: the power-law propensities, a core function (issue 58)."""

import hashlib

import numpy as np
import pytest

from recbias_tutorial import propensity
from recbias_tutorial.replications import jadidinejad2021

pytest.importorskip("powerlaw")

#: (alpha, xmin, sha256 of p's float64 bytes) as the code gave them before the move, when the
#: function lived in replications/jadidinejad2021/_values.py (run at commit e31e331).
BEFORE = {
    ("mild", "powerlaw2"): (2.1273364801498165, 9.0,
                            "fec3330bb000f8f1e7a5026a3ea6b30f25b30355f86b8bbdca8367f4c6efc1e6"),
    ("mild", "powerlaw1"): (2.124977945139701, 9.0,
                            "66f432cf7ecd00d9dee09425e31a776378c366d7b95413e492643c9404f93029"),
    ("steep", "powerlaw2"): (2.999999999999999, 617.0,
                             "491874c0ba0801bc2270d557598cef298501e9d7151e840897382d9a6ad7793a"),
    ("steep", "powerlaw1"): (4.384946578606057, 205.0,
                             "f7bc9c9e4bf2fa26b320ed7a99e3cbea31d41c862776974b3717ec9c17ec0f0e"),
}
COUNTS = {
    "mild": np.round(1000 / np.arange(1, 201) ** 0.9).astype(int),
    # unseen items first (they keep propensity 0), then a tail steeper than x^-3
    "steep": np.concatenate([[0, 0], np.round(1000 / np.arange(1, 201) ** 0.3).astype(int)]),
}


def test_the_paper_keeps_its_name_for_the_core_function():
    assert jadidinejad2021.powerlaw_propensity is propensity.powerlaw_propensity
    assert "powerlaw_propensity" in propensity.__all__
    assert "powerlaw_propensity" in jadidinejad2021.__all__
    assert propensity.powerlaw_propensity.__module__ == "recbias_tutorial.propensity"


@pytest.mark.parametrize("case", sorted(BEFORE), ids=lambda c: "-".join(c))
def test_outputs_are_those_of_the_code_before_the_move(case):
    name, fit = case
    p, alpha, xmin = propensity.powerlaw_propensity(COUNTS[name], fit=fit)
    assert (alpha, xmin, hashlib.sha256(np.ascontiguousarray(p).tobytes()).hexdigest()) == BEFORE[case]
    assert p.dtype == np.float64 and p.shape == COUNTS[name].shape


def test_the_comparison_uses_the_core_function():
    """chapter 6's comparison reads the core, not a paper."""
    import recbias_tutorial.comparison as comparison

    assert comparison.powerlaw_propensity is propensity.powerlaw_propensity
    source = open(comparison.__file__, encoding="utf-8").read()
    assert "from .replications" not in source and "import replications" not in source


@pytest.mark.parametrize("counts, fit, word", [
    ([3, 3, 3], "powerlaw2", "counts"),            # one distinct value: nothing to fit
    ([3, -1, 2], "powerlaw2", "counts"),           # negative
    ([1.5, 2.0, 3.0], "powerlaw2", "counts"),      # not whole
    ([[1, 2], [3, 4]], "powerlaw2", "counts"),     # not 1-D
    ([0, 0, 5], "powerlaw2", "counts"),            # one positive value
    ([1.0, np.nan, 3.0], "powerlaw2", "counts"),   # not finite
    ("x", "powerlaw2", "counts"),
    ([3, 1, 2, 5], "powerlaw3", "fit"),
])
def test_bad_inputs_name_the_argument(counts, fit, word):
    with pytest.raises(ValueError, match=word):
        propensity.powerlaw_propensity(counts, fit=fit)
