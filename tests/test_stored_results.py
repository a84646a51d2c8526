"""The stored full-scale results (book/results/, written by `make replicate`) are current.

Every results folder needs a provenance.json whose data checksums are the registry's, and a
fixed random subsample of the stored numbers (three models x one seed per dataset, with the
separate truth of the same models; for wang2025 the three trainers of one seed) is recomputed
from scratch and must agree to 1e-12: a change of code or data that moves a stored number
fails CI until `make replicate` reruns.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial import course

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "book" / "results"
sys.path.insert(0, str(ROOT / "scripts"))


def _folders() -> list[Path]:
    return sorted(p for p in RESULTS.iterdir() if p.is_dir()) if RESULTS.exists() else []


def test_every_results_file_has_provenance():
    folders = _folders()
    assert folders, "book/results/ holds no paper: run `make replicate`"
    for folder in folders:
        assert (folder / "provenance.json").is_file(), f"{folder.name}: no provenance.json"
        provenance = json.loads((folder / "provenance.json").read_text())
        listed = {record["file"] for record in provenance["datasets"].values()}
        on_disk = {p.name for p in folder.iterdir() if p.suffix == ".csv"}
        assert on_disk == listed, f"{folder.name}: files without provenance {on_disk - listed}"
        for key in ("package", "git_commit", "libraries", "cores", "models", "protocol"):
            assert provenance.get(key), f"{folder.name}: provenance lacks {key}"
        course.stored_results(folder)  # checksums against the registry


def test_provenance_with_other_data_is_refused(tmp_path):
    import shutil

    source = RESULTS / "jadidinejad2021"
    shutil.copytree(source, tmp_path / "r")
    provenance = json.loads((tmp_path / "r" / "provenance.json").read_text())
    name = next(iter(provenance["datasets"]))
    provenance["datasets"][name]["data_sha256"] = {"train.ascii": "0" * 64}
    (tmp_path / "r" / "provenance.json").write_text(json.dumps(provenance))
    with pytest.raises(ValueError, match="other data"):
        course.stored_results(tmp_path / "r")
    (tmp_path / "r" / "provenance.json").unlink()
    with pytest.raises(ValueError, match="no provenance"):
        course.stored_results(tmp_path / "r")


def _data(name: str):
    import recbias_tutorial as rb

    if not os.environ.get("RECBIAS_DATA") and not os.environ.get("RECBIAS_REQUIRE_DATA"):
        pytest.skip("RECBIAS_DATA is not set: the real data are needed to recompute")
    return rb.load(name)


def _assert_same_rows(fresh: pd.DataFrame, old: pd.DataFrame, what: str) -> None:
    fresh, old = fresh.reset_index(drop=True), old.reset_index(drop=True)
    key = [c for c in fresh.columns if c != "value"]
    assert len(fresh) == len(old) > 0, f"{what}: rows differ"
    merged = fresh.merge(old, on=key, suffixes=("", "_stored"), validate="one_to_one")
    assert len(merged) == len(fresh), f"{what}: rows differ"
    np.testing.assert_allclose(merged["value"], merged["value_stored"], rtol=0, atol=1e-12,
                               err_msg=f"{what}: stored values are stale")
    pd.testing.assert_series_equal(merged["value"].isna(), merged["value_stored"].isna(),
                                   check_names=False)


@pytest.mark.parametrize("name", ["coat", "yahoo_r3"])
def test_jadidinejad2021_subsample_recomputes_to_1e12(name):
    from replicate import JADIDINEJAD, has_tensorflow

    from recbias_tutorial.replications import jadidinejad2021 as jad

    tables, provenance = course.stored_results(RESULTS / "jadidinejad2021")
    assert name in tables, f"no stored {name} results: run `make replicate`"
    stored = tables[name]
    assert provenance["protocol"]["seeds"] == list(JADIDINEJAD["seeds"])
    rng = np.random.default_rng(20261126)  # fixed: the same subsample on every build
    seed = int(rng.choice(JADIDINEJAD["seeds"]))
    families = provenance["datasets"][name].get("families", jad.AUTHORS_FAMILIES)  # older runs: native
    assert set(jad.AUTHORS_FAMILIES) <= set(families) <= set(jad.AUTHORS_FAMILIES + jad.NEURAL_FAMILIES)
    where = {}  # model name -> (family, size) of the authors' zoo
    for family in families:
        if family in jad.NEURAL_FAMILIES and not has_tensorflow():
            continue  # the neural extra is not installed (CI): Cornac-native models only
        for size in jad.AUTHORS_SIZES:
            for model in jad.authors_zoo(sizes=(size,), families=(family,)):
                where.setdefault(model, (family, size))
    neural = {"MLP"} & set(families) | {f"{f}{k}" for f in ("WMF", "GMF", "NeuMF") if f in families
                                        for k in jad.AUTHORS_SIZES}
    assert set(stored["model"]) == set(jad.authors_zoo()) | neural, "models differ from families"
    models = rng.choice(sorted(set(stored["model"]) & set(where)), size=3, replace=False)
    data = _data(name)
    for model in models:
        family, size = where[model]
        fresh = jad.protocol_rows(jad.protocol_values(
            data, seeds=[seed], sizes=(size,), families=(family,), cache=False,
            **{k: v for k, v in JADIDINEJAD.items() if k not in ("seeds", "sizes", "families")}))
        old = stored[(stored["model"] == model) & stored["seed"].isin([seed, -1])]
        _assert_same_rows(fresh[fresh["model"] == model], old, f"{name} {model} seed {seed}")


@pytest.mark.parametrize("name", ["coat", "yahoo_r3"])
def test_carraro2022_subsample_recomputes_to_1e12(name):
    """Three models x one repetition, and two settings of the tuning grid, from scratch."""
    from replicate import CARRARO, carraro_data

    from recbias_tutorial.replications import carraro2022

    tables, provenance = course.stored_results(RESULTS / "carraro2022")
    assert name in tables, f"no stored {name} results: run `make replicate`"
    assert provenance["protocol"]["seeds"] == list(CARRARO["seeds"])
    stored, models = tables[name], provenance["models"][name]
    grid = carraro2022.paper_grid()
    rng = np.random.default_rng(20261126)  # fixed: the same subsample on every build
    seed = int(rng.choice(CARRARO["seeds"]))
    picked = rng.choice(sorted(models["chosen"]), size=3, replace=False)
    data = carraro_data(_data(name))
    factories = {m: grid[m][models["chosen"][m]["setting"]] for m in picked}
    args = {k: v for k, v in CARRARO.items() if k != "seeds"}
    fresh = carraro2022.run_protocol(data, factories, seeds=[seed], cache=False, **args).metrics
    old = stored[stored["model"].isin(picked) & (stored["seed"] == seed)]
    _assert_same_rows(fresh, old, f"carraro2022 {name} {sorted(picked)} seed {seed}")
    # the tuning: two settings of one model, on the first repetition's D_val
    model = str(rng.choice(["UB_KNN", "IB_KNN", "MF"]))
    settings = rng.choice(sorted(grid[model]), size=2, replace=False)
    table = carraro2022.tune(data, {model: {s: grid[model][s] for s in settings}},
                             seed=CARRARO["seeds"][0])
    for row in table.itertuples():
        assert row.recall == pytest.approx(models["tuning_recall_at_10"][model][row.setting],
                                           rel=0, abs=1e-12), f"{name} {model} {row.setting}"


def test_yang2018_subsample_recomputes_to_1e12(monkeypatch):
    """Three models x one split of the authors' protocol and its ladder, every draw, from
    scratch. A-CML (the slowest fit, about two minutes) is left out of the draw: its loss
    shares U-CML's code path and is checked in tests/replications/test_yang2018_authors.py."""
    from replicate import YANG, yang_models, yang_unit

    from recbias_tutorial.replications import yang2018

    tables, provenance = course.stored_results(RESULTS / "yang2018")
    assert set(tables) == {"yahoo_r3"}, "yang2018 is stored for Yahoo! R3 only"
    assert provenance["protocol"]["seeds"] == list(YANG["seeds"])
    assert provenance["protocol"]["draws"] == list(YANG["draws"])
    assert provenance["protocol"]["n_iter"] == YANG["n_iter"]
    stored, data = tables["yahoo_r3"], _data("yahoo_r3")
    models = yang_models(data, seed=0)
    assert set(stored["model"]) == set(models), "models differ from replicate.yang_models"
    assert set(stored["reading"]) == {r.name for r in yang2018.LADDER}
    rng = np.random.default_rng(20261126)  # fixed: the same subsample on every build
    seed = int(rng.choice(YANG["seeds"]))
    picked = sorted(rng.choice(sorted(set(models) - {"A-CML"}), size=3, replace=False))
    monkeypatch.setenv("RECBIAS_FIT_CACHE", "0")  # no fitted scores read back either
    fresh, _, _ = yang_unit(data, seed=seed, models=picked)
    old = stored[stored["model"].isin(picked) & (stored["seed"] == seed)]
    _assert_same_rows(fresh, old, f"yang2018 {picked} split {seed}")


def test_wang2025_subsample_recomputes_to_1e12(monkeypatch):
    """The three trainers of one seed (its split, fits, both schemes, paired), from scratch."""
    from replicate import WANG, wang_seed

    tables, provenance = course.stored_results(RESULTS / "wang2025")
    assert set(tables) == {"yahoo_r3"}, "wang2025 is stored for Yahoo! R3 only"
    assert provenance["protocol"]["seeds"] == list(WANG["seeds"])
    assert provenance["protocol"]["epochs"] == WANG["epochs"]
    stored = tables["yahoo_r3"]
    assert set(stored["model"]) == {"MF", "IPS-MF", "DR-MF"}
    rng = np.random.default_rng(20261126)  # fixed: the same subsample on every build
    seed = int(rng.choice(WANG["seeds"]))
    monkeypatch.setenv("RECBIAS_FIT_CACHE", "0")
    fresh, _ = wang_seed(_data("yahoo_r3"), seed=seed, cache=False)  # fits too: no cache
    _assert_same_rows(fresh, stored[stored["seed"] == seed], f"wang2025 seed {seed}")
