"""The on-disk cache of whole replication results (jadidinejad2021.protocol_values)."""

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
