"""The public API: one flat namespace, lazy heavy imports, one seed policy for every random function."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb


def test_every_public_name_resolves_and_has_one_home():
    for name in rb.__all__:
        if name == "__version__":
            continue
        obj = getattr(rb, name)
        assert obj is not None
        if callable(obj) and not isinstance(obj, type(rb)):
            home = obj.__module__
            assert home.startswith("recbias_tutorial"), (name, home)


def test_modules_and_functions_never_share_a_name():
    import pkgutil

    modules = {m.name.split(".")[-1] for m in pkgutil.walk_packages(rb.__path__, "recbias_tutorial.")}
    clashes = sorted(set(rb.__all__) & {m for m in modules if not m.startswith("_")} - {"replications"})
    assert clashes == []
    assert callable(rb.simulate) and callable(rb.data.simulate)


def test_import_is_light():
    code = ("import sys, recbias_tutorial as rb; rb.snips; "
            "print(sorted(m for m in ('cornac', 'altair', 'myst_nb') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_replications_are_reachable_from_the_top():
    assert rb.replications.jadidinejad2021.holdout_evaluator
    assert rb.replications.carraro2022.run_protocol
    with pytest.raises(AttributeError):
        rb.replications.nonexistent  # noqa: B018
    with pytest.raises(AttributeError):
        rb.nonexistent  # noqa: B018


def test_plots_import_has_no_side_effect():
    code = ("import altair as alt; before = alt.renderers.active; import recbias_tutorial.plots; "
            "print(before == alt.renderers.active, 'recbias_offline' in alt.renderers.names())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True False"


_FRAME = pd.DataFrame({"user": [0, 0, 1, 1], "item": [0, 1, 0, 1], "rating": [5.0, 1.0, 4.0, 2.0]})
RANDOM_CALLS = {
    "simulate": lambda seed: rb.simulate(20, 10, seed=seed, mean_ratings_per_user=3),
    "random_split": lambda seed: rb.random_split(_FRAME, (0.5, 0.5), seed=seed),
    "intervene": lambda seed: rb.intervene(_FRAME, strategy="reg", size=0.5, seed=seed),
    "sample_observed": lambda seed: rb.data.sample_observed(
        rb.simulate(20, 10, seed=0, mean_ratings_per_user=3), seed=seed),
    "sample_random_exposure": lambda seed: rb.data.sample_random_exposure(_FRAME, 1, seed=seed),
    "bootstrap_ci": lambda seed: rb.bootstrap_ci(np.eye(2), _FRAME, seed=seed, k=1),
    "model_zoo": lambda seed: rb.model_zoo(seed=seed, families=["BPR"], sizes=(2,)),
    "load_or_standin": lambda seed: rb.load_or_standin("coat", seed=seed),
    "semi_synthetic": lambda seed: rb.semi_synthetic(
        rb.simulate(20, 10, seed=0, mean_ratings_per_user=3), seed=seed),
    "compare_methods": lambda seed: rb.comparison.compare_methods(
        rb.simulate(20, 10, seed=0, mean_ratings_per_user=3, n_mar_items=4),
        models={"a": np.eye(20, 10), "b": np.ones((20, 10))}, seed=seed, n_redraws=2, k=2),
}


@pytest.mark.parametrize("name", RANDOM_CALLS)
@pytest.mark.parametrize("bad", [None, -1, 1.5, "0", True])
def test_seed_policy_refuses_bad_seeds(name, bad):
    with pytest.raises(ValueError, match="seed"):
        RANDOM_CALLS[name](bad)


@pytest.mark.parametrize("name", [n for n in RANDOM_CALLS if n != "load_or_standin"])
def test_seed_policy_accepts_int_and_generator(name):
    RANDOM_CALLS[name](0)
    RANDOM_CALLS[name](np.random.default_rng(0))


def test_a_generator_seed_equals_its_int_seed_where_documented():
    a = rb.random_split(_FRAME, (0.5, 0.5), seed=3)
    b = rb.random_split(_FRAME, (0.5, 0.5), seed=np.random.default_rng(3))
    assert all(x.equals(y) for x, y in zip(a, b))


def test_old_replication_names_still_import_with_a_warning():
    """Homework written against ``carraro_bridge`` keeps working for one release."""
    code = ("import warnings, recbias_tutorial as rb\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    from recbias_tutorial.replications import carraro_bridge\n"
            "print(carraro_bridge.run_protocol is rb.replications.carraro2022.run_protocol,\n"
            "      [x.category.__name__ for x in w], 'carraro2022' in str(w[0].message))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True ['FutureWarning'] True"
    assert "carraro_bridge" not in rb.replications.__all__
