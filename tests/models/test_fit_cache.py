"""The on-disk fit cache: hits, keys, corrupt entries, switches, processes (issue 23)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import cornac
import numpy as np
import pytest

import recbias_tutorial as rb
from recbias_tutorial.models import (AvgRating, FitCacheWarning, PosPop, RandomScores,
                                     clear_fit_cache, fit_scores, iter_scores, score_models)
from recbias_tutorial.models import _cache
from recbias_tutorial.models import _fit as fit_module

N_USERS, N_ITEMS = 40, 30


@pytest.fixture(scope="module")
def world():
    return rb.simulate(N_USERS, N_ITEMS, seed=7)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """The cache on, in a temporary folder; the fits of the test counted in ``fits``."""
    folder = tmp_path / "fitted"
    monkeypatch.setenv("RECBIAS_FIT_CACHE", "1")
    monkeypatch.setenv("RECBIAS_FIT_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def fits(monkeypatch):
    calls: list[str] = []
    real = fit_module._fit

    def counting(model, dataset):
        calls.append(model.name)
        real(model, dataset)

    monkeypatch.setattr(fit_module, "_fit", counting)
    return calls


def _entries(folder):
    return sorted(folder.rglob("output.pkl"))


def _fit(model, train, seed=0, **kw):
    return fit_scores(model, train, n_users=N_USERS, n_items=N_ITEMS, seed=seed, **kw)


def test_second_call_reads_the_cache_bit_identically(world, cache_dir, fits):
    fresh = _fit(cornac.models.MF(k=3, max_iter=20, seed=1), world.mnar, cache=False)
    first = _fit(cornac.models.MF(k=3, max_iter=20, seed=1), world.mnar)
    second = _fit(cornac.models.MF(k=3, max_iter=20, seed=1), world.mnar)
    assert len(fits) == 2  # the uncached fit and the first cached one
    assert len(_entries(cache_dir)) == 1
    assert np.array_equal(first, fresh) and np.array_equal(second, fresh)
    assert second.dtype == fresh.dtype and second.flags.writeable


@pytest.mark.parametrize("change", ["seed", "params", "data", "dtype", "model", "code"])
def test_each_part_of_the_key_makes_a_new_entry(world, cache_dir, fits, change, monkeypatch):
    _fit(cornac.models.MF(k=3, max_iter=5, seed=1), world.mnar)
    model, train, kw = cornac.models.MF(k=3, max_iter=5, seed=1), world.mnar, {}
    if change == "seed":
        kw["seed"] = 1
    elif change == "params":
        model = cornac.models.MF(k=4, max_iter=5, seed=1)
    elif change == "data":
        train = world.mnar.copy()
        train.loc[train.index[0], "rating"] += 1.0
    elif change == "dtype":
        kw["dtype"] = np.float32
    elif change == "model":
        model = cornac.models.MF(k=3, max_iter=5, seed=2)
    else:
        env = _cache._environment()
        monkeypatch.setattr(_cache, "_environment", lambda: (*env[:-1], "edited source"))
    expected = _fit(model.clone(), train, cache=False, **kw)
    got = _fit(model, train, **kw)
    assert len(_entries(cache_dir)) == 2 and len(fits) == 3
    assert np.array_equal(got, expected)


def test_row_order_is_part_of_the_data_key(world):
    train = world.mnar
    assert _cache.data_digest(train, N_USERS, N_ITEMS) != _cache.data_digest(
        train.iloc[::-1], N_USERS, N_ITEMS)
    assert _cache.data_digest(train, N_USERS, N_ITEMS) != _cache.data_digest(
        train, N_USERS, N_ITEMS + 1)


def _corrupt(path, how):
    data = path.read_bytes()
    if how == "garbage":
        path.write_bytes(b"not a pickle" * 50)
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # one flipped bit inside the score matrix: joblib reads it, the checksum does not match
        pos = len(data) - 100
        path.write_bytes(data[:pos] + bytes([data[pos] ^ 1]) + data[pos + 1:])


@pytest.mark.parametrize("how", ["garbage", "truncated", "bitflip", "empty"])
def test_corrupt_entries_are_refitted_with_a_warning(world, cache_dir, fits, how):
    expected = _fit(cornac.models.BPR(k=3, max_iter=5, seed=0), world.mnar)
    (entry,) = _entries(cache_dir)
    if how == "empty":
        entry.write_bytes(b"")
    else:
        _corrupt(entry, how)
    with pytest.warns(FitCacheWarning, match="checksum" if how == "bitflip" else "unreadable"):
        got = _fit(cornac.models.BPR(k=3, max_iter=5, seed=0), world.mnar)
    assert len(fits) == 2 and np.array_equal(got, expected)
    with warnings.catch_warnings():  # the entry was replaced: a clean hit now
        warnings.simplefilter("error")
        again = _fit(cornac.models.BPR(k=3, max_iter=5, seed=0), world.mnar)
    assert len(fits) == 2 and np.array_equal(again, expected)


def test_an_entry_without_its_output_is_a_miss(world, cache_dir, fits):
    """What a killed writer can leave: joblib renames whole files into place, never parts."""
    expected = _fit(PosPop(), world.mnar)
    (entry,) = _entries(cache_dir)
    entry.rename(entry.with_name("output.pkl.thread-1-pid-999"))  # a temporary file
    got = _fit(PosPop(), world.mnar)
    assert len(fits) == 2 and np.array_equal(got, expected)


def test_disabled_cache_writes_nothing(world, cache_dir, fits, monkeypatch):
    _fit(AvgRating(), world.mnar, cache=False)
    monkeypatch.setenv("RECBIAS_FIT_CACHE", "0")
    _fit(AvgRating(), world.mnar)
    _fit(AvgRating(), world.mnar)
    assert len(fits) == 3 and not cache_dir.exists()
    _fit(AvgRating(), world.mnar, cache=True)  # the keyword wins over the environment
    assert len(_entries(cache_dir)) == 1


@pytest.mark.filterwarnings("ignore:Model is already fitted")
def test_models_that_cannot_be_keyed_are_fitted_not_stored(world, cache_dir, fits):
    fitted = cornac.models.MF(k=3, max_iter=5, seed=0)
    _fit(fitted, world.mnar, cache=False)
    unseeded = cornac.models.MF(k=3, max_iter=5, seed=None)
    assert _cache.model_token(fitted) is None and _cache.model_token(unseeded) is None
    _fit(fitted, world.mnar)
    _fit(unseeded, world.mnar)
    assert len(fits) == 3 and not _entries(cache_dir)


def test_oversize_matrices_are_not_stored(world, cache_dir, fits, monkeypatch):
    monkeypatch.setenv("RECBIAS_FIT_CACHE_MAX_MB", str(N_USERS * N_ITEMS * 8 / 2**20 / 2))
    _fit(PosPop(), world.mnar)
    _fit(PosPop(), world.mnar)
    assert len(fits) == 2 and not _entries(cache_dir)


def test_iter_scores_mixes_hits_and_fits_in_order(world, cache_dir, fits):
    def zoo():
        return {"pop": PosPop(), "rand": RandomScores(seed=3), "mf": cornac.models.MF(k=2, seed=0)}

    fresh = score_models(zoo(), world.mnar, n_users=N_USERS, n_items=N_ITEMS, seed=4,
                         progress=False, cache=False)
    _fit(zoo()["rand"], world.mnar, seed=4)  # one of the three is stored already
    models = zoo()
    got = list(iter_scores(models, world.mnar, n_users=N_USERS, n_items=N_ITEMS, seed=4,
                           progress=False))
    assert [name for name, _ in got] == list(fresh)
    assert all(np.array_equal(scores, fresh[name]) for name, scores in got)
    assert fits[3:] == ["Random", "PosPop", "MF"] and not models["rand"].is_fitted
    assert len(_entries(cache_dir)) == 3


def test_bad_cache_argument_and_clearing(world, cache_dir):
    with pytest.raises(ValueError, match="cache"):
        _fit(PosPop(), world.mnar, cache="yes")
    with pytest.raises(ValueError, match="cache"):
        iter_scores({"p": PosPop()}, world.mnar, n_users=N_USERS, n_items=N_ITEMS, seed=0,
                    cache=1)
    _fit(PosPop(), world.mnar)
    assert _entries(cache_dir)
    assert clear_fit_cache() == cache_dir and not cache_dir.exists()


def test_two_processes_writing_the_same_key(world, cache_dir, tmp_path):
    path = tmp_path / "train.pkl"
    world.mnar.to_pickle(path)
    code = textwrap.dedent(f"""
        import sys, warnings
        import numpy as np, pandas as pd, cornac
        warnings.simplefilter("error", UserWarning)
        from recbias_tutorial.models import fit_scores
        s = fit_scores(cornac.models.BPR(k=4, max_iter=50, seed=0), pd.read_pickle({str(path)!r}),
                       n_users={N_USERS}, n_items={N_ITEMS}, seed=0)
        np.save(sys.argv[1], s)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / f"out{i}.npy")])
             for i in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    expected = _fit(cornac.models.BPR(k=4, max_iter=50, seed=0), world.mnar, cache=False)
    for i in range(2):
        assert np.array_equal(np.load(tmp_path / f"out{i}.npy"), expected)
    assert len(_entries(cache_dir)) == 1
    assert np.array_equal(_fit(cornac.models.BPR(k=4, max_iter=50, seed=0), world.mnar), expected)


def test_an_explicit_cache_true_stores_oversize_matrices(world, cache_dir, fits, monkeypatch):
    """The size limit guards the default; a caller who passes cache=True gets the entry."""
    monkeypatch.setenv("RECBIAS_FIT_CACHE_MAX_MB", str(N_USERS * N_ITEMS * 8 / 2**20 / 2))
    first = list(iter_scores({"pop": PosPop()}, world.mnar, n_users=N_USERS, n_items=N_ITEMS,
                             seed=0, progress=False, cache=True))
    again = list(iter_scores({"pop": PosPop()}, world.mnar, n_users=N_USERS, n_items=N_ITEMS,
                             seed=0, progress=False, cache=True))
    assert len(fits) == 1 and len(_entries(cache_dir)) == 1
    np.testing.assert_array_equal(first[0][1], again[0][1])
    list(iter_scores({"pop": PosPop()}, world.mnar, n_users=N_USERS, n_items=N_ITEMS, seed=1,
                     progress=False))  # the default (None) keeps the limit: fitted, not stored
    assert len(fits) == 2 and len(_entries(cache_dir)) == 1
