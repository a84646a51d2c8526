"""The stored full-scale results (book/results/, written by `make replicate`) are current.

Every results folder needs a provenance.json whose data checksums are the registry's, and a
fixed random subsample of the stored numbers (three models x one seed per dataset, with the
separate truth of the same models) is recomputed from scratch and must agree to 1e-12: a
change of code or data that moves a stored number fails CI until `make replicate` reruns.
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


@pytest.mark.parametrize("name", ["coat", "yahoo_r3"])
def test_a_random_subsample_recomputes_to_1e12(name):
    from replicate import JADIDINEJAD

    from recbias_tutorial.replications import jadidinejad2021 as jad

    tables, provenance = course.stored_results(RESULTS / "jadidinejad2021")
    assert name in tables, f"no stored {name} results: run `make replicate`"
    stored = tables[name]
    assert provenance["protocol"]["seeds"] == list(JADIDINEJAD["seeds"])
    rng = np.random.default_rng(20261126)  # fixed: the same subsample on every build
    seed = int(rng.choice(JADIDINEJAD["seeds"]))
    models = rng.choice(sorted(stored["model"].unique()), size=3, replace=False)
    where = {}  # model name -> (family, size) of the authors' zoo
    for family in jad.AUTHORS_FAMILIES:
        for size in jad.AUTHORS_SIZES:
            for model in jad.authors_zoo(sizes=(size,), families=(family,)):
                where.setdefault(model, (family, size))
    data = _data(name)
    for model in models:
        family, size = where[model]
        fresh = jad.protocol_rows(jad.protocol_values(
            data, seeds=[seed], sizes=(size,), families=(family,), cache=False,
            **{k: v for k, v in JADIDINEJAD.items() if k not in ("seeds", "sizes", "families")}))
        fresh = fresh[fresh["model"] == model].reset_index(drop=True)
        old = stored[(stored["model"] == model) & stored["seed"].isin([seed, -1])]
        old = old.reset_index(drop=True)
        key = [c for c in fresh.columns if c != "value"]
        assert len(fresh) == len(old) > 0, f"{name} {model} seed {seed}: rows differ"
        merged = fresh.merge(old, on=key, suffixes=("", "_stored"), validate="one_to_one")
        assert len(merged) == len(fresh), f"{name} {model} seed {seed}: rows differ"
        np.testing.assert_allclose(merged["value"], merged["value_stored"], rtol=0, atol=1e-12,
                                   err_msg=f"{name} {model} seed {seed}: stored values are stale")
        pd.testing.assert_series_equal(merged["value"].isna(), merged["value_stored"].isna(),
                                       check_names=False)
