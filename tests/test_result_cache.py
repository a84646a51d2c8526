"""The on-disk result cache of long protocols (jadidinejad2021.protocol_values, compare_methods)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from recbias_tutorial.models import FitCacheWarning
from recbias_tutorial.replications import jadidinejad2021

ARGS = dict(seeds=[0], sizes=(10,), ks=(None, 5), families=("MostPop", "MF"))
WHOLE = "jadidinejad2021.protocol_values-*.joblib"  # the whole table (each unit has its own)


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
    assert first.attrs["cached"] is False and len(list(store.glob(WHOLE))) == 1
    second = jadidinejad2021.protocol_values(world, cache=True, **ARGS)
    assert second.attrs["cached"] is True
    pd.testing.assert_frame_equal(first, second)
    assert second.attrs["seconds"] == first.attrs["seconds"]  # the computing run's times


@pytest.mark.parametrize("change", [dict(seeds=[1]), dict(ks=(None,)), dict(sweep=(3,)),
                                    dict(families=("MostPop",))])
def test_other_arguments_compute_afresh(store, world, change):
    jadidinejad2021.protocol_values(world, cache=True, **ARGS)
    other = jadidinejad2021.protocol_values(world, cache=True, **{**ARGS, **change})
    assert other.attrs["cached"] is False and len(list(store.glob(WHOLE))) == 2


def test_other_data_computes_afresh(store, world):
    import recbias_tutorial as rb

    jadidinejad2021.protocol_values(world, cache=True, **ARGS)
    changed = rb.simulate(60, 40, seed=1, mean_ratings_per_user=12)
    assert jadidinejad2021.protocol_values(changed, cache=True, **ARGS).attrs["cached"] is False


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other table",
                                    "table bytes", "not an entry"])
def test_damaged_entry_is_recomputed_never_used(store, world, damage):
    import pickle

    import joblib

    good = jadidinejad2021.protocol_values(world, cache=True, **ARGS)
    (path,) = store.glob(WHOLE)
    raw = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a pickle" * 10)
    elif damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "not an entry":  # a readable pickle that is not an entry's dict
        joblib.dump(["a", "list"], path)
    elif damage == "table bytes":  # a readable entry whose stored table does not unpickle
        entry = joblib.load(path)
        entry["payload"]["table"] = entry["payload"]["table"][:100]
        joblib.dump(entry, path)
    else:  # a whole, readable entry whose table is not the one its hash describes
        entry = joblib.load(path)
        table = pickle.loads(entry["payload"]["table"])  # tables are stored as pickle bytes
        entry["payload"]["table"] = pickle.dumps(table.assign(value=table["value"] + 1))
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


# --------------------------------------------------------------------------------------
# the chapters' other long steps: fit_mf, run_protocol, kl_by_seed, split_user_table,
# model_curves (each read back on a re-run, recomputed on any change, never stale)
# --------------------------------------------------------------------------------------
def _fail(*args, **kwargs):
    raise AssertionError("recomputed although the cache holds the result")


def test_fit_mf_reads_back_its_factors(store, world, monkeypatch):
    import numpy as np

    from recbias_tutorial import debiased_mf

    kw = dict(n_users=world.n_users, n_items=world.n_items, epochs=3, factors=4)
    first = debiased_mf.fit_mf(world.mnar, seed=1, cache=True, **kw)
    plain = debiased_mf.train_mf(world.mnar, seed=1, **kw).scores()
    np.testing.assert_array_equal(first, plain)
    monkeypatch.setattr(debiased_mf, "train_mf", _fail)
    np.testing.assert_array_equal(debiased_mf.fit_mf(world.mnar, seed=1, cache=True, **kw), first)
    # any change of seed, argument, propensity or data is a new fit
    p = np.full(world.n_items, 0.5)
    for change in (dict(seed=2), dict(seed=1, epochs=4), dict(seed=1, method="ips", propensity=p),
                   dict(seed=1, method="ips", propensity=p * 0.9)):
        with pytest.raises(AssertionError, match="recomputed"):
            debiased_mf.fit_mf(world.mnar, cache=True, **{**kw, **change})
    with pytest.raises(AssertionError, match="recomputed"):
        debiased_mf.fit_mf(world.mnar.iloc[1:], seed=1, cache=True, **kw)


def test_fit_mf_with_a_generator_or_cache_off_stores_nothing(store, world):
    import numpy as np

    from recbias_tutorial.debiased_mf import fit_mf

    kw = dict(n_users=world.n_users, n_items=world.n_items, epochs=2, factors=2)
    fit_mf(world.mnar, seed=np.random.default_rng(0), cache=True, **kw)
    fit_mf(world.mnar, seed=0, cache=False, **kw)
    assert not store.exists()
    with pytest.raises(ValueError, match="train"):  # checked before the key reads it
        fit_mf(world.mnar.drop(columns="rating"), seed=0, cache=True, **kw)


def test_run_protocol_and_kl_by_seed_read_back(store, world, monkeypatch):
    from recbias_tutorial.models import PosPop
    from recbias_tutorial.replications.carraro2022 import _repetitions as proto
    from recbias_tutorial.replications import carraro2022

    kw = dict(seeds=[0, 1], sizes=(0.5, 1.0))
    first = carraro2022.run_protocol(world, {"PosPop": PosPop}, cache=True, **kw)
    assert first.metrics.attrs["cached"] is False and first.metrics.attrs["seconds"] > 0
    kl = carraro2022.kl_by_seed(world, seeds=[0, 1], cache=True)
    monkeypatch.setattr(proto, "run_repetition", _fail)
    second = carraro2022.run_protocol(world, {"PosPop": PosPop}, cache=True, **kw)
    assert second.metrics.attrs["cached"] is True
    assert second.metrics.attrs["seconds"] == first.metrics.attrs["seconds"]
    for field in ("metrics", "test_sets", "ratings"):
        pd.testing.assert_frame_equal(getattr(first, field), getattr(second, field))
    pd.testing.assert_frame_equal(kl, carraro2022.kl_by_seed(world, seeds=[0, 1], cache=True))
    assert carraro2022.kl_by_seed(world, seeds=[0, 1], cache=True).attrs["cached"] is True
    # another model parameter, or a model whose state its parameters do not describe
    with pytest.raises(AssertionError, match="recomputed"):
        carraro2022.run_protocol(world, {"PosPop": lambda: PosPop(threshold=3.0)},
                                    cache=True, **kw)

    def tampered():
        model = PosPop()
        model.extra = 1
        return model

    with pytest.raises(AssertionError, match="recomputed"):
        carraro2022.run_protocol(world, {"PosPop": tampered}, cache=True, **kw)
    monkeypatch.undo()
    n_entries = len(list(store.glob("carraro2022.run_protocol-*")))
    carraro2022.run_protocol(world, {"PosPop": tampered}, cache=True, **kw)
    assert len(list(store.glob("carraro2022.run_protocol-*"))) == n_entries  # never stored


def test_split_user_table_is_the_step_by_step_protocol(store, world, monkeypatch):
    import copy

    import recbias_tutorial as rb
    import cornac

    from recbias_tutorial.models import PosPop, iter_scores
    from recbias_tutorial.replications.yang2018 import _protocol as proto
    from recbias_tutorial.replications import yang2018

    models = {"MostPop": cornac.models.MostPop(), "PosPop": PosPop(threshold=4.0)}
    gammas = {"SNIPS γ=2.0": 2.0, "other": 0.5}
    train, held = rb.random_split(world.mnar, (0.8, 0.2), seed=3)
    held, truth = yang2018.same_users(held, rb.drop_seen(world.mar, train))
    protocols = yang2018.snips_protocols(held, truth, train=train, n_items=world.n_items,
                                         gammas=gammas)
    by_hand = yang2018.user_table(
        iter_scores(copy.deepcopy(models), train, n_users=world.n_users, n_items=world.n_items,
                    seed=3, progress=False),
        protocols, exclude=train, metrics=["recall", "auc"], k=5)
    table = yang2018.split_user_table(models, world, seed=3, gammas=gammas,
                                      metrics=["recall", "auc"], k=5, cache=True)
    pd.testing.assert_frame_equal(table, by_hand)
    monkeypatch.setattr(proto, "user_table", _fail)
    again = yang2018.split_user_table(models, world, seed=3, gammas=gammas,
                                      metrics=["recall", "auc"], k=5, cache=True)
    assert again.attrs["cached"] is True
    pd.testing.assert_frame_equal(again, by_hand)
    with pytest.raises(AssertionError, match="recomputed"):
        yang2018.split_user_table(models, world, seed=3, gammas=gammas, metrics=["recall"],
                                  k=6, cache=True)


def test_model_curves_keyed_by_the_scores_content(store, world, monkeypatch):
    import numpy as np

    from recbias_tutorial.estimators import kbar_curves
    from recbias_tutorial.metrics import recall_curves
    from recbias_tutorial.replications.wang2025 import _protocol as proto
    from recbias_tutorial.replications import wang2025

    rng = np.random.default_rng(0)
    scores = {"a": rng.random((world.n_users, world.n_items)),
              "b": rng.random((world.n_users, world.n_items))}
    kw = dict(random_sets={"mar": world.mar}, k_bars=[1, 2], threshold=4.0, exclude=world.mnar)
    sets = {"full": world.full, "mar": world.mar}
    first = {name: (r, kb) for name, _, r, kb in
             wang2025.model_curves(scores, sets, [1, 5], cache=True, **kw)}
    for name, s in scores.items():
        pd.testing.assert_frame_equal(first[name][0], recall_curves(
            s, sets, [1, 5], threshold=4.0, exclude=world.mnar, per_user=True))
        pd.testing.assert_frame_equal(first[name][1], kbar_curves(
            s, {"mar": world.mar}, [1, 2], threshold=4.0, per_user=True))
    monkeypatch.setattr(proto, "recall_curves", _fail)
    for name, s, r, kb in wang2025.model_curves(scores, sets, [1, 5], cache=True, **kw):
        assert s is scores[name]
        pd.testing.assert_frame_equal(r, first[name][0])
    changed = {"a": scores["a"].copy()}
    changed["a"][0, 0] += 1.0
    with pytest.raises(AssertionError, match="recomputed"):
        list(wang2025.model_curves(changed, sets, [1, 5], cache=True, **kw))
    with pytest.raises(AssertionError, match="recomputed"):
        list(wang2025.model_curves(scores, {**sets, "mar": world.mar.iloc[1:]}, [1, 5],
                                   cache=True, **kw))


@pytest.mark.parametrize("n_users, n_items", [(5, 4), (3000, 2000)])
def test_duplicate_pairs_found_on_dense_and_sparse_id_spaces(n_users, n_items):
    import numpy as np

    from recbias_tutorial._validation import has_duplicate_pairs

    rng = np.random.default_rng(1)
    keys = rng.choice(n_users * n_items, size=min(15, n_users * n_items), replace=False)
    users, items = keys // n_items, keys % n_items
    assert not has_duplicate_pairs(users, items)
    for j in range(len(keys)):
        assert has_duplicate_pairs(np.r_[users, users[j]], np.r_[items, items[j]])


def test_protocol_values_units_resume_and_run_in_parallel(store, world, monkeypatch):
    from recbias_tutorial.replications.jadidinejad2021 import _protocol as proto

    kw = dict(sizes=(10,), ks=(None, 5), families=("MostPop", "MF"))
    one = jadidinejad2021.protocol_values(world, seeds=[0], cache=True, **kw)
    assert set(one.attrs["seconds"]) == {"truth", "seed 0"}
    computed = []
    original = proto.unit_values
    monkeypatch.setattr(proto, "unit_values",
                        lambda data, unit, **a: computed.append(unit) or original(data, unit, **a))
    two = jadidinejad2021.protocol_values(world, seeds=[0, 1], cache=True, **kw)
    assert computed == [1]  # the truth and seed 0 were read back: only the new seed ran
    monkeypatch.undo()
    plain = jadidinejad2021.protocol_values(world, seeds=[0, 1], cache=False, **kw)
    pd.testing.assert_frame_equal(two, plain, check_exact=True)
    parallel = jadidinejad2021.protocol_values(world, seeds=[0, 1], cache=False, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(parallel, plain, check_exact=True)
    assert set(parallel.attrs["seconds"]) == {"truth", "seed 0", "seed 1"}
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="n_jobs"):
            jadidinejad2021.protocol_values(world, seeds=[0], n_jobs=bad, **kw)


@pytest.mark.parametrize("cache, default_on, expected", [
    (None, True, None),  # on by default: the fits keep the size cap (no 123 MB Yahoo! matrix)
    (True, False, True),  # the caller's explicit cache=True stores any size
    (None, False, False), (False, True, False),
])
def test_protocol_values_passes_the_fit_cache_switch_with_its_size_cap(
        store, world, monkeypatch, cache, default_on, expected):
    from recbias_tutorial.models import _cache
    from recbias_tutorial.replications.jadidinejad2021 import _protocol as proto

    monkeypatch.setattr(_cache, "ENABLED_BY_DEFAULT", default_on)
    seen = []
    original = proto.unit_values
    monkeypatch.setattr(proto, "unit_values", lambda data, unit, **a: seen.append(
        a["fit_cache"]) or original(data, unit, **a))
    jadidinejad2021.protocol_values(world, seeds=[0], cache=cache, sizes=(10,), ks=(None,),
                                    families=("MostPop",))
    assert seen and set(seen) == {expected}


def test_result_store_is_trimmed_least_recently_used_first(store, world, monkeypatch):
    import os
    import time

    from recbias_tutorial._result_cache import cached_table

    def table(n):
        return lambda: pd.DataFrame({"x": range(n)})

    for i in range(4):
        cached_table("test.trim", world, {"i": i}, table(20_000), cache=True)
        time.sleep(0.01)
    files = sorted(store.glob("test.trim-*.joblib"), key=os.path.getmtime)
    assert len(files) == 4
    size = files[0].stat().st_size
    cached_table("test.trim", world, {"i": 0}, table(20_000), cache=True)  # a use: now newest
    monkeypatch.setenv("RECBIAS_RESULT_CACHE_LIMIT_MB", str(2.5 * size / 2**20))
    cached_table("test.trim", world, {"i": 4}, table(20_000), cache=True)  # a store: trims
    left = set(store.glob("test.trim-*.joblib"))
    assert files[0] in left and len(left) == 2  # i=0 (just used) and i=4 (just stored)
    assert cached_table("test.trim", world, {"i": 0}, table(20_000), cache=True).attrs["cached"]


def test_carraro_tune_reads_back(store, world, monkeypatch):
    from recbias_tutorial.models import PosPop
    from recbias_tutorial.replications.carraro2022 import _protocol as proto
    from recbias_tutorial.replications import carraro2022

    grid = {"PosPop": {"t=4": PosPop, "t=3": lambda: PosPop(threshold=3.0)}}
    first = carraro2022.tune(world, grid, seed=0, cache=True)
    monkeypatch.setattr(proto, "_ranked", _fail)
    pd.testing.assert_frame_equal(first, carraro2022.tune(world, grid, seed=0, cache=True))
    with pytest.raises(AssertionError, match="recomputed"):  # another seed is another key
        carraro2022.tune(world, grid, seed=1, cache=True)
    with pytest.raises(AssertionError, match="recomputed"):  # cache=False never reads
        carraro2022.tune(world, grid, seed=0, cache=False)
