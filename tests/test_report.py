"""The replication report: recomputed from the stored results, current, and failing on a flip."""

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial import course
from recbias_tutorial._stored_results import results_root
from recbias_tutorial.data._files import sha256sum
from recbias_tutorial.replications import report as rep

BOOK = Path(__file__).resolve().parents[1] / "book"


@pytest.fixture(scope="module")
def now():
    return rep.replication_report()


def test_report_csv_is_what_the_stored_results_give(now):
    recorded = rep.recorded_report()
    assert list(recorded.columns) == list(now.columns)
    assert rep.verdict_changes(now, recorded).empty
    for column in ("paper_value", "ours", "low", "high"):
        np.testing.assert_allclose(now[column], recorded[column], rtol=0, atol=1e-12, err_msg=column)
    text = ["paper", "dataset", "quantity", "interval", "verdict", "chapter", "section"]
    pd.testing.assert_frame_equal(now[text], recorded[text])


def test_every_paper_has_rows_and_every_verdict_is_on_the_scale(now):
    assert set(now["paper"]) == set(rep.NOTES)
    assert now["verdict"].isin(rep.VERDICTS).all()
    assert (now["low"] <= now["high"]).all() and (now["n"] >= 5).all()
    assert not now.duplicated(["paper", "dataset", "quantity"]).any()


def test_each_row_links_a_section_its_chapter_has(now):
    for paper, notes in rep.NOTES.items():
        headings = set(re.findall(r"^#+ (.+)$", (BOOK / f"{notes['chapter']}.md").read_text(),
                                  flags=re.M))
        missing = set(notes["sections"].values()) - headings
        assert not missing, f"{notes['chapter']} has no section {missing}"
    assert set(now["section"]) <= {s for n in rep.NOTES.values() for s in n["sections"].values()}


def test_verdicts_are_recomputed_from_the_numbers(now):
    for row in now.itertuples():
        assert (row.paper_value >= row.low - 1e-12 and row.paper_value <= row.high + 1e-12) \
            == (row.verdict == rep.VERDICTS[0]), row.quantity


def _altered_copy(tmp_path, model, value):
    """wang2025's stored results with one trainer's URE Recall@5 set to ``value`` in every seed,
    the provenance's sha256 rewritten (as a new `make replicate` run would)."""
    folder = tmp_path / "wang2025"
    shutil.copytree(results_root() / "wang2025", folder)
    provenance = json.loads((folder / "provenance.json").read_text())
    record = provenance["datasets"]["yahoo_r3"]
    path = folder / record["file"]
    table = pd.read_csv(path, keep_default_na=False, dtype=str)
    rows = (table["model"] == model) & (table["metric"] == "URE Recall@K") \
        & (table["trainers"] == "AutoDebias baselines")
    table.loc[rows, "value"] = repr(value)
    table.to_csv(path, index=False, lineterminator="\n")
    record["sha256"] = sha256sum(path)
    (folder / "provenance.json").write_text(json.dumps(provenance, indent=1))
    return tmp_path


def test_an_altered_stored_value_flips_the_verdict_and_fails_the_page(tmp_path, now):
    before = now.set_index("quantity").loc["Table 1, DR: URE Recall@5", "verdict"]
    assert before == rep.VERDICTS[0]
    altered = rep.replication_report(papers=("wang2025",), root=_altered_copy(tmp_path, "DR", 0.05))
    after = altered.set_index("quantity").loc["Table 1, DR: URE Recall@5", "verdict"]
    assert after == rep.VERDICTS[1] or after == rep.VERDICTS[2]
    changed = rep.verdict_changes(altered, now[now["paper"] == "wang2025"])
    assert list(changed["quantity"]) == ["Table 1, DR: URE Recall@5"]
    # the page's own check cell, run on the altered report, stops the build naming the row
    import jupytext

    page = jupytext.read(BOOK / "replication_report.md")
    (check,) = [c.source for c in page.cells if c.cell_type == "code"
                and "rep.verdict_changes(REPORT, rep.recorded_report())" in c.source]
    recorded = now[now["paper"] == "wang2025"]
    namespace = {"REPORT": altered, "rep": rep, "course": course,
                 "rep_recorded": recorded}
    check = check.replace("rep.recorded_report()", "rep_recorded")
    with pytest.raises(course.FindingFailed,
                       match=r"ch7_f_current.*n_changed = 1.*DR: URE Recall@5: reproduced"):
        exec(compile(check, "ch07 check cell", "exec"), namespace)
    # and on the stored results as they are, the same cell passes
    exec(compile(check, "ch07 check cell", "exec"), {**namespace, "REPORT": now[now["paper"] == "wang2025"]})


def test_bad_arguments_are_refused(now):
    with pytest.raises(ValueError, match="papers must be a tuple of"):
        rep.replication_report(papers=("nobody2020",))
    with pytest.raises(ValueError, match="papers must be a tuple of"):
        rep.replication_report(papers="wang2025")
    with pytest.raises(ValueError, match="recorded must be a replication report"):
        rep.verdict_changes(now, pd.DataFrame({"paper": []}))
