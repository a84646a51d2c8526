"""Declared table schemas (recbias_tutorial._schema) and the stored tables typed by them
(issue 57: a stored column came back as text, '18' and '', and duplicated runs double-counted)."""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial import course
from recbias_tutorial._schema import Column, TableSchema
from recbias_tutorial._stored_results import results_root, typed_table
from recbias_tutorial._stored_schemas import STORED_SCHEMAS

S = TableSchema({"seed": Column("int", low=0), "lr": Column("float", low=0.0),
                 "epoch": Column("int", finite=False), "model": Column("str")},
                key=("seed", "lr"), others=Column("float", finite=False))
GOOD = pd.DataFrame({"seed": ["0", "1"], "lr": [0.1, 0.2], "epoch": ["18", ""],
                     "model": ["a", "b"], "value": ["0.5", ""]})


def test_numbers_come_back_as_numbers_and_missing_as_nan():
    out = S.check(GOOD, "t")
    assert out["seed"].dtype == np.int64 and out["epoch"].dtype == np.float64
    assert out["epoch"].iloc[0] == 18 and np.isnan(out["epoch"].iloc[1])
    assert out["value"].iloc[0] == 0.5 and np.isnan(out["value"].iloc[1])
    assert out["epoch"].min() == 18  # a number, not the string comparison '' < '18'


@pytest.mark.parametrize("label, frame, words", [
    ("not a frame", GOOD.to_dict(), "t must be a pandas DataFrame"),
    ("missing column", GOOD.drop(columns="lr"), "lacks the column"),
    ("text in an int", GOOD.assign(seed=["0", "x"]), "t.seed must hold int"),
    ("fraction in an int", GOOD.assign(seed=[0, 1.5]), "t.seed must hold integers"),
    ("NaN where finite", GOOD.assign(lr=[0.1, np.nan]), "t.lr has missing"),
    ("empty where finite", GOOD.assign(lr=["0.1", ""]), "t.lr has missing"),
    ("inf", GOOD.assign(value=[np.inf, 1.0]), "t.value holds an infinity"),
    ("out of range", GOOD.assign(seed=[0, -1]), "t.seed must be >= 0"),
    ("duplicated run", GOOD.assign(seed=[0, 0], lr=[0.1, 0.1]), "sharing their key"),
    ("undeclared column", TableSchema({"a": Column("int")}), None),
])
def test_what_breaks_a_schema_is_refused(label, frame, words):
    if words is None:  # a schema without ``others`` refuses a further column
        with pytest.raises(ValueError, match="undeclared column 'b'"):
            frame.check(pd.DataFrame({"a": [1], "b": [2]}), "t")
        return
    with pytest.raises(ValueError, match=words):
        S.check(frame, "t")


def test_a_column_rule_refuses_an_unknown_dtype():
    with pytest.raises(ValueError, match="dtype"):
        Column("date")


def test_every_stored_table_has_a_schema_and_reads_typed():
    for paper in ("carraro2022", "jadidinejad2021", "wang2025", "yang2018"):
        tables, _ = course.stored_results(paper)
        for label, frame in tables.items():
            schema = STORED_SCHEMAS[(paper, label)]
            for column, rule in schema.columns.items():
                kind = frame[column].dtype.kind
                assert kind in ({"i"} if rule.dtype == "int" and rule.finite else
                                {"f", "i"} if rule.dtype != "str" else {"O", "U", "T"}) \
                    or (rule.dtype == "str" and pd.api.types.is_string_dtype(frame[column])), \
                    (paper, label, column, frame[column].dtype)
    stability = course.stored_results("wang2025")[0]["yahoo_r3_ips_stability"]
    assert stability["diverged_epoch"].dtype == np.float64
    assert stability["diverged_epoch"].isna().any() and stability["diverged_epoch"].notna().any()


def test_a_stored_run_twice_is_refused():
    tables, _ = course.stored_results("wang2025")
    twice = pd.concat([tables["yahoo_r3"], tables["yahoo_r3"].head(1)], ignore_index=True)
    with pytest.raises(ValueError, match="yahoo_r3 has 2 rows sharing their key"):
        typed_table(twice, "wang2025", "yahoo_r3")
    lr_twice = pd.concat([tables["yahoo_r3_ips_stability"]] * 2, ignore_index=True)
    with pytest.raises(ValueError, match="sharing their key"):
        typed_table(lr_twice, "wang2025", "yahoo_r3_ips_stability")


def test_an_undeclared_table_reads_its_numbers_as_numbers():
    out = typed_table(pd.DataFrame({"epoch": ["18", ""], "name": ["a", "3"], "value": ["1", ""]}),
                      "no_paper", "t")
    assert out["epoch"].dtype == np.float64 and np.isnan(out["epoch"].iloc[1])
    assert out["name"].tolist() == ["a", "3"] and np.isnan(out["value"].iloc[1])


def test_provenance_with_only_a_further_table_is_refused(tmp_path):
    folder = tmp_path / "wang2025"
    shutil.copytree(results_root() / "wang2025", folder)
    provenance = json.loads((folder / "provenance.json").read_text())
    record = provenance["datasets"].pop("yahoo_r3")
    path = folder / record["file"]
    provenance["datasets"] = {}
    provenance["tables"] = {"yahoo_r3_main": {**record, "dataset": "yahoo_r3",
                                               "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}}
    (folder / "provenance.json").write_text(json.dumps(provenance))
    with pytest.raises(ValueError, match="lists no dataset"):
        course.stored_results(folder)


# ---- the boundary helpers, named: checked_frame, Column.apply, schema_of ----------------------
from recbias_tutorial._schema import checked_frame  # noqa: E402
from recbias_tutorial._stored_schemas import schema_of  # noqa: E402

CHART = pd.DataFrame({"rho": [0.1, 0.2], "value": [1.0, 2.0], "name": ["a", "b"]})


@pytest.mark.parametrize("frame, words", [
    ({"rho": [0.1]}, "must be a pandas DataFrame"),
    (CHART.iloc[:0], "is empty"),
    (CHART.drop(columns="value"), "missing column"),
    (CHART.assign(value=[1.0, np.nan]), "value"),
    (CHART.assign(value=[1.0, np.inf]), "infinity"),
    (CHART.assign(value=["1", "x"]), "numbers"),
    (pd.concat([CHART, CHART.iloc[:1]]), "rho"),
])
def test_checked_frame_refuses_bad_frames(frame, words):
    with pytest.raises(ValueError, match=words):
        checked_frame(frame, "frame", numbers=("rho", "value"), texts=("name",), key=("rho",))


def test_checked_frame_types_a_good_frame():
    out = checked_frame(CHART.assign(value=["1", "2"]), "frame", numbers=("rho", "value"),
                        texts=("name",), key=("rho",))
    assert out["value"].tolist() == [1.0, 2.0] and out["value"].dtype == np.float64


@pytest.mark.parametrize("dtype, values, expected", [
    ("float", ["1.5", ""], [1.5, np.nan]),
    ("auto", ["x", "y"], ["x", "y"]),
    ("auto", [1, 2], [1, 2]),
])
def test_column_apply_types_values(dtype, values, expected):
    out = Column(dtype, finite=False).apply(pd.Series(values), "t.c")
    assert out.tolist() == expected or np.allclose(out, expected, equal_nan=True)


@pytest.mark.parametrize("values, words", [
    (["1", "x"], "float numbers"), ([1.0, np.inf], "infinity")])
def test_column_apply_refuses_text_and_infinity(values, words):
    with pytest.raises(ValueError, match=words):
        Column("float").apply(pd.Series(values), "t.c")


def test_schema_of_knows_the_declared_tables_only():
    (paper, label), schema = next(iter(STORED_SCHEMAS.items()))
    assert schema_of(paper, label) is schema
    assert schema_of(paper, "no such table") is None and schema_of("nobody2099", label) is None
