"""The stored full-scale results (recbias_tutorial/results/, package data written by
`make replicate`) are current and refused when altered.

Every results folder needs a provenance.json whose data checksums are the registry's, and a
fixed random subsample of the stored numbers (three models x one seed per dataset, with the
separate truth of the same models; for wang2025 every trainer of one seed) is recomputed
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
from recbias_tutorial._stored_results import results_root

ROOT = Path(__file__).resolve().parents[1]
RESULTS = results_root()
sys.path.insert(0, str(ROOT / "scripts"))


def _folders() -> list[Path]:
    return sorted(p for p in RESULTS.iterdir() if p.is_dir()) if RESULTS.exists() else []


def test_every_results_file_has_provenance():
    folders = _folders()
    assert folders, f"{RESULTS} holds no paper: run `make replicate`"
    for folder in folders:
        assert (folder / "provenance.json").is_file(), f"{folder.name}: no provenance.json"
        provenance = json.loads((folder / "provenance.json").read_text())
        listed = {record["file"] for record in [*provenance["datasets"].values(),
                                                *provenance.get("tables", {}).values()]}
        # rows of one trainer kept beside the stored ones (jadidinejad2021.trainer_comparison)
        listed |= {record["tensorflow_ncf"]["file"] for record in provenance["datasets"].values()
                   if "tensorflow_ncf" in record}
        on_disk = {p.name for p in folder.iterdir() if p.name.endswith((".csv", ".csv.gz"))}
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


def test_a_further_table_must_name_a_dataset_of_the_registry(tmp_path):
    """yang2018's grid is a second file of Yahoo! R3: its record names the dataset, whose
    checksums it must carry like any other record; a name outside the registry is refused."""
    folder, provenance, path = _copy(tmp_path)
    (name, record), = provenance["datasets"].items()
    provenance["datasets"][f"{name}_more"] = {**record, "dataset": name}
    (folder / "provenance.json").write_text(json.dumps(provenance))
    tables, _ = course.stored_results(folder)
    assert {name, f"{name}_more"} <= set(tables)
    pd.testing.assert_frame_equal(tables[f"{name}_more"], tables[name])
    provenance["datasets"][f"{name}_more"]["dataset"] = "nowhere"
    (folder / "provenance.json").write_text(json.dumps(provenance))
    with pytest.raises(ValueError, match="registry does not know"):
        course.stored_results(folder)
    provenance["datasets"][f"{name}_more"] = {**record, "dataset": "coat"}  # other data's sums
    (folder / "provenance.json").write_text(json.dumps(provenance))
    with pytest.raises(ValueError, match="other data"):
        course.stored_results(folder)


def test_results_are_read_by_paper_name_from_the_package():
    from recbias_tutorial import _stored_results

    papers = _stored_results.stored_papers()
    assert papers == sorted(p.name for p in _folders())
    tables, provenance = course.stored_results(papers[0])
    assert provenance["paper"] == papers[0] and tables
    with pytest.raises(ValueError, match="no stored results for 'nope'"):
        course.stored_results("nope")
    for bad in (None, 3, ""):
        with pytest.raises(ValueError, match="results must be"):
            course.stored_results(bad)


def _copy(tmp_path, paper="wang2025"):
    import shutil

    shutil.copytree(RESULTS / paper, tmp_path / paper)
    provenance = json.loads((tmp_path / paper / "provenance.json").read_text())
    name, record = next(iter(provenance["datasets"].items()))
    return tmp_path / paper, provenance, tmp_path / paper / record["file"]


def test_a_value_edited_by_hand_is_refused(tmp_path):
    folder, _, path = _copy(tmp_path)
    course.stored_results(folder)  # the untouched copy reads
    lines = path.read_text().splitlines()
    head, row = lines[0].split(","), lines[1].split(",")
    row[head.index("value")] = "0.5"  # one stored number changed
    path.write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n")
    with pytest.raises(ValueError, match=rf"{path.name} is not the file `make replicate` wrote"):
        course.stored_results(folder)


def test_a_compressed_file_is_checked_against_the_csv_the_run_wrote(tmp_path):
    """carraro2022's files were gzipped after their run: the .gz's sha256 is recorded, and
    so is the sha256 of the CSV it holds, which reading checks too."""
    folder, provenance, path = _copy(tmp_path, "carraro2022")
    assert path.name.endswith(".csv.gz")
    tables, _ = course.stored_results(folder)
    assert len(tables[path.name.split(".")[0]]) > 0
    next(iter(provenance["datasets"].values()))["csv_sha256"] = "0" * 64
    (folder / "provenance.json").write_text(json.dumps(provenance))
    with pytest.raises(ValueError, match="csv_sha256 differs"):
        course.stored_results(folder)


def _with_further_table(tmp_path):
    """A copy of wang2025's results with a further table recorded under ``tables``."""
    import hashlib

    folder, provenance, _ = _copy(tmp_path)
    path = folder / "yahoo_r3_extra.csv"
    path.write_text("seed,model,metric,value\n0,IPS,diverged,1\n")
    provenance["tables"] = {"yahoo_r3_extra": {
        "file": path.name, "dataset": "yahoo_r3",
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "data_sha256": provenance["datasets"]["yahoo_r3"]["data_sha256"]}}
    (folder / "provenance.json").write_text(json.dumps(provenance))
    return folder, provenance, path


def test_a_further_table_is_read_and_checked_like_a_datasets(tmp_path):
    folder, provenance, path = _with_further_table(tmp_path)
    tables, _ = course.stored_results(folder)
    assert set(tables) == {"yahoo_r3", "yahoo_r3_extra"}
    assert tables["yahoo_r3_extra"]["metric"].tolist() == ["diverged"]
    path.write_text("seed,model,metric,value\n0,IPS,diverged,0\n")  # edited by hand
    with pytest.raises(ValueError, match="yahoo_r3_extra.csv is not the file"):
        course.stored_results(folder)
    for change, match in ((dict(dataset="netflix"), "registry does not know"),
                          (dict(data_sha256={}), "yahoo_r3_extra results were computed on other"),
                          (dict(file="../x.csv"), "names no results file")):
        copy = json.loads(json.dumps(provenance))
        copy["tables"]["yahoo_r3_extra"].update(change)
        (folder / "provenance.json").write_text(json.dumps(copy))
        with pytest.raises(ValueError, match=match):
            course.stored_results(folder)
    (folder / "provenance.json").write_text(json.dumps({**provenance, "tables": ["x"]}))
    with pytest.raises(ValueError, match="'tables' must map"):
        course.stored_results(folder)
    twice = {**provenance, "tables": {"yahoo_r3": provenance["tables"]["yahoo_r3_extra"]}}
    (folder / "provenance.json").write_text(json.dumps(twice))
    with pytest.raises(ValueError, match="both as a dataset and"):
        course.stored_results(folder)


def test_provenance_without_a_file_checksum_is_refused(tmp_path):
    folder, provenance, path = _copy(tmp_path)
    for record in provenance["datasets"].values():
        del record["sha256"]
    (folder / "provenance.json").write_text(json.dumps(provenance))
    with pytest.raises(ValueError, match="records no sha256"):
        course.stored_results(folder)


def _set(record, **changes):
    record.update(changes)


#: provenance.json files of other shapes, and records that cannot be checked: (label, how the
#: copy's provenance is changed, words the refusal must hold)
BAD_PROVENANCE = [
    ("a list", lambda p: [p], "provenance.json is not a provenance record"),
    ("datasets a list", lambda p: {**p, "datasets": list(p["datasets"])},
     "provenance.json is not a provenance record"),
    ("no datasets", lambda p: {k: v for k, v in p.items() if k != "datasets"},
     "provenance.json is not a provenance record"),
    ("a record that is text", lambda p: {**p, "datasets": {"yahoo_r3": "yahoo_r3.csv"}},
     "provenance.json is not a provenance record"),
    ("an unknown dataset without checksums", lambda p: {**p, "datasets": {
        "netflix": {**p["datasets"]["yahoo_r3"], "data_sha256": {}}}}, "registry does not know"),
    ("a file outside the folder", lambda p: _set(p["datasets"]["yahoo_r3"],
                                                 file="../wang2025/yahoo_r3.csv") or p,
     "provenance.json names no results file"),
    ("a file that is not text", lambda p: _set(p["datasets"]["yahoo_r3"], file=3) or p,
     "provenance.json names no results file"),
    ("a sha256 that is not text", lambda p: _set(p["datasets"]["yahoo_r3"], sha256=0) or p,
     "records no sha256"),
    ("a csv_sha256 on a plain CSV", lambda p: _set(p["datasets"]["yahoo_r3"],
                                                   csv_sha256="0" * 64) or p,
     "csv_sha256 differs"),
]


@pytest.mark.parametrize("label, change, words", BAD_PROVENANCE, ids=[c[0] for c in BAD_PROVENANCE])
def test_a_provenance_that_cannot_be_checked_is_refused(tmp_path, label, change, words):
    folder, provenance, _ = _copy(tmp_path)
    (folder / "provenance.json").write_text(json.dumps(change(provenance)))
    with pytest.raises(ValueError, match=words):
        course.stored_results(folder)


def test_the_advice_fits_where_the_reader_is(tmp_path, monkeypatch):
    from recbias_tutorial import _stored_results

    folder, _, path = _copy(tmp_path)
    path.unlink()
    with pytest.raises(ValueError, match="make replicate"):  # a checkout of the repository
        course.stored_results(folder)
    monkeypatch.setattr(_stored_results, "_checkout_root", lambda: None)  # an installed package
    with pytest.raises(ValueError, match="reinstall it") as err:
        course.stored_results(folder)
    assert "make replicate" not in str(err.value)
    (folder / "provenance.json").write_text("{not json")
    with pytest.raises(ValueError, match="unreadable.*reinstall it"):
        course.stored_results(folder)


def _data(name: str):
    import recbias_tutorial as rb

    if not os.environ.get("RECBIAS_DATA") and not os.environ.get("RECBIAS_REQUIRE_DATA"):
        pytest.skip("RECBIAS_DATA is not set: the real data are needed to recompute")
    return rb.load(name)


def _assert_same_rows(fresh: pd.DataFrame, old: pd.DataFrame, what: str,
                      values: tuple[str, ...] = ("value",)) -> None:
    fresh, old = fresh.reset_index(drop=True), old.reset_index(drop=True)
    key = [c for c in fresh.columns if c not in values]
    assert len(fresh) == len(old) > 0, f"{what}: rows differ"
    merged = fresh.merge(old, on=key, suffixes=("", "_stored"), validate="one_to_one")
    assert len(merged) == len(fresh), f"{what}: rows differ"
    for value in values:
        np.testing.assert_allclose(merged[value], merged[f"{value}_stored"], rtol=0, atol=1e-12,
                                   err_msg=f"{what}: stored {value} values are stale")
        pd.testing.assert_series_equal(merged[value].isna(), merged[f"{value}_stored"].isna(),
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
    record = provenance["datasets"][name]
    families = record.get("families", jad.AUTHORS_FAMILIES)  # older runs: native
    assert set(jad.AUTHORS_FAMILIES) <= set(families) <= set(jad.AUTHORS_FAMILIES + jad.NEURAL_FAMILIES)
    # who trained each NCF family (older runs: Cornac's TensorFlow backend)
    backends = {f: record.get("ncf_backends", {}).get(f, "tensorflow") for f in jad.NCF_FAMILIES}
    where = {}  # model name -> (family, size) of the authors' zoo
    for family in families:
        needs_tf = family in jad.NEURAL_FAMILIES and backends.get(family) != "numpy"
        if needs_tf and not has_tensorflow():
            continue  # the neural extra is not installed (CI): what needs no TensorFlow only
        for size in jad.AUTHORS_SIZES:
            for model in jad.authors_zoo(sizes=(size,), families=(family,),
                                         ncf_backend=backends.get(family, "numpy")):
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
            ncf_backend=backends.get(family, "numpy"),
            **{k: v for k, v in JADIDINEJAD.items() if k not in ("seeds", "sizes", "families")}))
        old = stored[(stored["model"] == model) & stored["seed"].isin([seed, -1])]
        _assert_same_rows(fresh[fresh["model"] == model], old, f"{name} {model} seed {seed}")


@pytest.mark.parametrize("name", ["coat", "yahoo_r3"])
def test_carraro2022_subsample_recomputes_to_1e12(name):
    """One stored configuration (kind of recommenders x WTD item exponent), three models x one
    repetition, and two settings of its tuning grid, from scratch."""
    from replicate import CARRARO, CARRARO_CONFIG, carraro_data

    from recbias_tutorial.replications import carraro2022

    tables, provenance = course.stored_results(RESULTS / "carraro2022")
    assert name in tables, f"no stored {name} results: run `make replicate`"
    assert provenance["protocol"]["seeds"] == list(CARRARO["seeds"])
    stored = tables[name]
    configs = stored[CARRARO_CONFIG].drop_duplicates()
    expected = {(k, p) for k in CARRARO["recommenders"] for p in CARRARO["item_powers"]}
    assert set(map(tuple, configs.to_numpy())) <= expected, "unknown configurations stored"
    assert len(provenance["datasets"][name]["configurations"]) == len(configs)
    assert {("cornac", 2.0), ("cornac", 1.0)} <= set(map(tuple, configs.to_numpy()))
    rng = np.random.default_rng(20261126)  # fixed: the same subsample on every build
    kind, power = configs.iloc[int(rng.integers(len(configs)))]
    seed = int(rng.choice(CARRARO["seeds"]))
    models = provenance["models"][name][kind]
    grid = carraro2022.paper_grid(recommenders=kind)
    picked = rng.choice(sorted(models["chosen"]), size=3, replace=False)
    data = carraro_data(_data(name))
    factories = {m: grid[m][models["chosen"][m]["setting"]] for m in picked}
    fresh = carraro2022.run_protocol(data, factories, seeds=[seed], cache=False,
                                     item_power=float(power)).metrics
    mine = (stored["recommenders"] == kind) & (stored["item_power"] == power)
    old = stored[mine & stored["model"].isin(picked) & (stored["seed"] == seed)]
    _assert_same_rows(fresh, old.drop(columns=CARRARO_CONFIG),
                      f"carraro2022 {name} {kind} w^{power:g} {sorted(picked)} seed {seed}")
    # the tuning: two settings of one model, on the first repetition's D_val
    model = str(rng.choice(["UB_KNN", "IB_KNN", "MF"]))
    settings = rng.choice(sorted(grid[model]), size=2, replace=False)
    table = carraro2022.tune(data, {model: {s: grid[model][s] for s in settings}},
                             seed=CARRARO["seeds"][0], cache=False)
    for row in table.itertuples():
        assert row.recall == pytest.approx(models["tuning_recall_at_10"][model][row.setting],
                                           rel=0, abs=1e-12), f"{name} {kind} {model} {row.setting}"


def test_yang2018_subsample_recomputes_to_1e12(monkeypatch):
    """Three models x one split of every named reading (the authors' protocol, both ladders,
    the slides' reading, its family and negative counts) and, for the slides' models among
    them, of the grid searched against the slides, every draw, from scratch. A-CML (the
    slowest fit, about two minutes) is left out of the draw: its loss shares U-CML's code path
    and is checked in tests/replications/test_yang2018_authors.py."""
    from replicate import YANG, yang_models, yang_tables, yang_unit

    from recbias_tutorial.replications import yang2018

    tables, provenance = course.stored_results(RESULTS / "yang2018")
    assert set(tables) == {"yahoo_r3", "yahoo_r3_grid"}, "yang2018 is stored for Yahoo! R3 only"
    assert provenance["datasets"]["yahoo_r3_grid"]["dataset"] == "yahoo_r3"
    assert provenance["protocol"]["seeds"] == list(YANG["seeds"])
    assert provenance["protocol"]["draws"] == list(YANG["draws"])
    assert provenance["protocol"]["n_iter"] == YANG["n_iter"]
    assert provenance["protocol"]["grid"]["readings"] == len(yang2018.reading_grid())
    stored, grid, data = tables["yahoo_r3"], tables["yahoo_r3_grid"], _data("yahoo_r3")
    models = yang_models(data, seed=0)
    assert set(stored["model"]) == set(models), "models differ from replicate.yang_models"
    assert set(stored["reading"]) == {r.name for r in yang2018.READINGS}
    assert set(grid["model"]) == set(yang2018.SLIDE_MODELS.values())
    rng = np.random.default_rng(20261126)  # fixed: the same subsample on every build
    seed = int(rng.choice(YANG["seeds"]))
    picked = sorted(rng.choice(sorted(set(models) - {"A-CML"}), size=3, replace=False))
    monkeypatch.setenv("RECBIAS_FIT_CACHE", "0")  # no fitted scores read back either
    fresh, _, _ = yang_unit(data, seed=seed, models=picked)
    fresh = yang_tables(fresh) if set(picked) & set(yang2018.SLIDE_MODELS.values()) else {
        "yahoo_r3": fresh}
    old = stored[stored["model"].isin(picked) & (stored["seed"] == seed)]
    _assert_same_rows(fresh["yahoo_r3"], old, f"yang2018 {picked} split {seed}")
    if "yahoo_r3_grid" in fresh:
        old = grid[grid["model"].isin(picked) & (grid["seed"] == seed)]
        values = tuple(c for c in old.columns if c.startswith(("AOA ", "MAE: ")))
        _assert_same_rows(fresh["yahoo_r3_grid"], old, f"yang2018 grid {picked} split {seed}",
                          values=values)


def test_yang2018_stored_grid_holds_every_reading_once_and_agrees_with_the_named_file():
    """The grid file: every reading of yang2018.reading_grid once per split, slide model and
    metric (AUC once per cut-off-free reading), the draws each mean is over, and its rows of
    the named readings equal to the named file's means over the draws (the two files of one
    run, written from one table)."""
    from replicate import YANG

    from recbias_tutorial.replications import yang2018
    from recbias_tutorial.replications.yang2018._grid import GRID_KEY

    tables, provenance = course.stored_results(RESULTS / "yang2018")
    named, grid = tables["yahoo_r3"], tables["yahoo_r3_grid"]
    assert not grid.duplicated(["seed", "model", "metric", *GRID_KEY]).any()
    per = grid.groupby(["seed", "model", "metric"]).size().unstack("metric")
    n = len(yang2018.reading_grid())
    assert (per["recall"] == n).all()
    assert (per["auc"] == n // (len(yang2018.GRID_CHOICES["k"]) ** 2)).all()
    assert len(per) == len(provenance["protocol"]["seeds"]) * len(yang2018.SLIDE_MODELS)
    sampled = (grid["estimate"] == "sampled") | (grid["truth"] == "sampled")
    assert (grid.loc[sampled, "draws"] == len(YANG["draws"])).all()
    assert (grid.loc[~sampled, "draws"] == 1).all()
    for reading in (yang2018.AUTHORS, yang2018.SLIDES):
        g = yang2018.grid_rows(grid, reading).set_index(["seed", "model"])["MAE: AOA"]
        m = named[(named["reading"] == reading.name) & (named["metric"] == "recall")
                  & (named["estimator"] == "AOA") & (named["quantity"] == "mae")
                  & named["model"].isin(list(yang2018.SLIDE_MODELS.values()))]
        m = m.groupby(["seed", "model"])["value"].mean()
        np.testing.assert_allclose(g.sort_index(), m.sort_index(), rtol=0, atol=1e-12,
                                   err_msg=reading.name)


def test_wang2025_subsample_recomputes_to_1e12(monkeypatch):
    """Every trainer of one seed (its split, the paper's and the course's fits, the whole
    convention ladder, how the paper's trainers stopped), from scratch."""
    from replicate import WANG, WANG_TRAINERS, wang_seed

    tables, provenance = course.stored_results(RESULTS / "wang2025")
    assert set(provenance["datasets"]) == {"yahoo_r3"}, "wang2025 is stored for Yahoo! R3 only"
    assert provenance["protocol"]["seeds"] == list(WANG["seeds"])
    assert provenance["protocol"]["epochs"] == WANG["epochs"]
    stored = tables["yahoo_r3"]
    assert set(stored["model"]) == set(WANG_TRAINERS)
    assert set(provenance["models"]) == set(WANG_TRAINERS)
    rng = np.random.default_rng(20261126)  # fixed: the same subsample on every build
    seed = int(rng.choice(WANG["seeds"]))
    monkeypatch.setenv("RECBIAS_FIT_CACHE", "0")
    fresh, _ = wang_seed(_data("yahoo_r3"), seed=seed, cache=False)  # fits too: no cache
    _assert_same_rows(fresh, stored[stored["seed"] == seed], f"wang2025 seed {seed}")


def test_carraro2022_smoothing_table_recomputes_to_1e12():
    """Coat's RankSys-like run under the authors' notebook's smoothing (the table beside the
    protocol's): one repetition, its test sets' numbers and three models' metrics."""
    from replicate import CARRARO, CARRARO_SMOOTHINGS, carraro_data, carraro_smoothing_unit

    from recbias_tutorial.replications import carraro2022

    tables, provenance = course.stored_results(RESULTS / "carraro2022")
    for name in provenance["datasets"]:
        assert f"{name}_smoothing" in tables, f"no smoothing table for {name}: run `make replicate`"
        stored = tables[f"{name}_smoothing"]
        assert set(stored["smoothing"]) == set(CARRARO_SMOOTHINGS)
        assert set(stored["item_power"]) == set(CARRARO["item_powers"])
    stored = tables["coat_smoothing"]
    rng = np.random.default_rng(20261126)  # fixed: the same subsample on every build
    seed, power = int(rng.choice(CARRARO["seeds"])), float(rng.choice(CARRARO["item_powers"]))
    models = provenance["models"]["coat"]["ranksys"]
    grid = carraro2022.paper_grid(recommenders="ranksys")
    picked = list(rng.choice(sorted(models["chosen"]), size=3, replace=False))
    chosen = {m: grid[m][models["chosen"][m]["setting"]] for m in picked}
    fresh, _, _ = carraro_smoothing_unit(carraro_data(_data("coat")), seed=seed, chosen=chosen,
                                         item_power=power, smoothing="notebook")
    old = stored[(stored["smoothing"] == "notebook") & (stored["item_power"] == power)
                 & (stored["seed"] == seed) & stored["model"].isin(picked + ["(test set)"])]
    _assert_same_rows(fresh, old.drop(columns=["smoothing", "item_power"]),
                      f"carraro2022 coat smoothing=notebook w^{power:g} {picked} seed {seed}")


def test_wang2025_ips_stability_subsample_recomputes_to_1e12():
    """One seed of the IPS stability grid, in its cell with the 5% larger step (it diverges,
    so it is refitted to the epoch before): status, epochs and Table 1's numbers."""
    from replicate import WANG

    from recbias_tutorial.replications import wang2025

    tables, provenance = course.stored_results(RESULTS / "wang2025")
    assert "yahoo_r3_ips_stability" in tables, "no IPS stability table: run `make replicate`"
    stored = tables["yahoo_r3_ips_stability"]
    assert set(stored["lr"]) == set(wang2025.IPS_STABILITY_LRS)
    assert set(stored["seed"]) == set(WANG["seeds"])
    rng = np.random.default_rng(20261126)  # fixed: the same subsample on every build
    seed = int(rng.choice(WANG["seeds"]))
    fresh = wang2025.ips_stability(_data("yahoo_r3"), seeds=[seed], lrs=[1.05e-5],
                                   blocks=[(6000, 500)])
    old = stored[(stored["seed"] == seed) & np.isclose(stored["lr"], 1.05e-5)
                 & (stored["block_users"] == 6000)].drop(columns="model").reset_index(drop=True)
    assert fresh["status"].tolist() == old["status"].tolist()
    numbers = [c for c in fresh.columns if c != "status"]
    np.testing.assert_allclose(fresh[numbers].to_numpy(float), old[numbers].to_numpy(float),
                               rtol=0, atol=1e-12, err_msg=f"IPS stability seed {seed}")
