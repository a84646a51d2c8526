"""The on-disk result cache of long protocols (jadidinejad2021.protocol_values, compare_methods)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from recbias_tutorial.models import FitCacheWarning
from recbias_tutorial.replications import jadidinejad2021

ARGS = dict(seeds=[0], sizes=(10,), ks=(None, 5), families=("MostPop", "MF"))


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("RECBIAS_FIT_CACHE_DIR", str(tmp_path))
    return tmp_path / "results"


@pytest.fixture(scope="module")
def world():
    import recbias_tutorial as rb

    return rb.simulate(60, 40, seed=0, mean_ratings_per_user=12)


def test_second_call_reads_the_same_table(store, world):
    first = jadidinejad2021.protocol_values(world, cache=True, **ARGS)
    assert first.attrs["cached"] is False and len(list(store.glob("*.joblib"))) == 1
    second = jadidinejad2021.protocol_values(world, cache=True, **ARGS)
    assert second.attrs["cached"] is True
    pd.testing.assert_frame_equal(first, second)
    assert second.attrs["seconds"] == first.attrs["seconds"]  # the computing run's times


@pytest.mark.parametrize("change", [dict(seeds=[1]), dict(ks=(None,)), dict(sweep=(3,)),
                                    dict(families=("MostPop",))])
def test_other_arguments_compute_afresh(store, world, change):
    jadidinejad2021.protocol_values(world, cache=True, **ARGS)
    other = jadidinejad2021.protocol_values(world, cache=True, **{**ARGS, **change})
    assert other.attrs["cached"] is False and len(list(store.glob("*.joblib"))) == 2


def test_other_data_computes_afresh(store, world):
    import recbias_tutorial as rb

    jadidinejad2021.protocol_values(world, cache=True, **ARGS)
    changed = rb.simulate(60, 40, seed=1, mean_ratings_per_user=12)
    assert jadidinejad2021.protocol_values(changed, cache=True, **ARGS).attrs["cached"] is False


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other table"])
def test_damaged_entry_is_recomputed_never_used(store, world, damage):
    import joblib

    good = jadidinejad2021.protocol_values(world, cache=True, **ARGS)
    (path,) = store.glob("*.joblib")
    raw = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a pickle" * 10)
    elif damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # a whole, readable entry whose table is not the one its hash describes
        entry = joblib.load(path)
        entry["table"] = entry["table"].assign(value=entry["table"]["value"] + 1)
        joblib.dump(entry, path)
    with pytest.warns(FitCacheWarning, match="recomputed"):
        again = jadidinejad2021.protocol_values(world, cache=True, **ARGS)
    assert again.attrs["cached"] is False
    pd.testing.assert_frame_equal(again, good)
    assert jadidinejad2021.protocol_values(world, cache=True, **ARGS).attrs["cached"] is True


def test_off_writes_nothing(store, world, monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = jadidinejad2021.protocol_values(world, cache=False, **ARGS)
    assert table.attrs["cached"] is False and not store.exists()
    monkeypatch.setenv("RECBIAS_FIT_CACHE", "0")
    jadidinejad2021.protocol_values(world, cache=None, **ARGS)
    assert not store.exists()


def test_bad_cache_argument(world):
    with pytest.raises(ValueError, match="cache"):
        jadidinejad2021.protocol_values(world, cache="yes", **ARGS)


# --- comparison.compare_methods: the same cache, keyed by the world and the score matrices
def _compare_inputs():
    import numpy as np

    import recbias_tutorial as rb

    world = rb.simulate(80, 60, seed=0, mean_ratings_per_user=8, n_mar_items=10)
    pop = np.bincount(world.mnar["item"], minlength=60).astype(float)
    return world, {"pop": np.tile(pop, (80, 1)), "oracle": world.propensity.copy()}


def test_compare_methods_reads_back_the_same_table(store):
    from recbias_tutorial.comparison import compare_methods

    world, models = _compare_inputs()
    first = compare_methods(world, models=models, seed=1, n_redraws=3, cache=True)
    second = compare_methods(world, models=models, seed=1, n_redraws=3, cache=True)
    assert (first.attrs["cached"], second.attrs["cached"]) == (False, True)
    pd.testing.assert_frame_equal(first, second)
    fresh = compare_methods(world, models=models, seed=1, n_redraws=3, cache=False)
    pd.testing.assert_frame_equal(first, fresh)


@pytest.mark.parametrize("change", ["scores", "seed", "redraws", "world"])
def test_compare_methods_recomputes_on_any_change(store, change):
    import recbias_tutorial as rb
    from recbias_tutorial.comparison import compare_methods

    world, models = _compare_inputs()
    compare_methods(world, models=models, seed=1, n_redraws=3, cache=True)
    kw = dict(models=models, seed=1, n_redraws=3)
    if change == "scores":
        kw["models"] = {**models, "pop": models["pop"] + 1e-9 * (models["pop"] > 0)}
    elif change == "seed":
        kw["seed"] = 2
    elif change == "redraws":
        kw["n_redraws"] = 4
    else:
        world = rb.simulate(80, 60, seed=1, mean_ratings_per_user=8, n_mar_items=10)
        kw["models"]["oracle"] = world.propensity.copy()
    assert compare_methods(world, cache=True, **kw).attrs["cached"] is False


def test_compare_methods_with_a_generator_is_not_cached(store):
    import numpy as np

    from recbias_tutorial.comparison import compare_methods

    world, models = _compare_inputs()
    for _ in range(2):
        table = compare_methods(world, models=models, seed=np.random.default_rng(1),
                                n_redraws=3, cache=True)
        assert table.attrs["cached"] is False
    assert not store.exists()
    with pytest.raises(ValueError, match="cache"):
        compare_methods(world, models=models, seed=np.random.default_rng(1), cache="yes")
