"""The course leaderboard: one world, six models, a column per lesson against the same truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import recbias_tutorial as rb
from recbias_tutorial import leaderboard as lb

pytest.importorskip("cornac")

LESSONS = sorted(lb.LESSON_METHODS)


@pytest.fixture(scope="module")
def tables():
    """Every lesson's table, computed without the result cache."""
    return {n: rb.leaderboard_table(lesson=n, cache=False) for n in LESSONS}


@pytest.fixture(scope="module")
def fitted():
    """The course world and its models, fitted here as the module says they are."""
    world = rb.simulate(**lb.COURSE_WORLD)
    zoo = rb.model_zoo(**lb._ZOO)
    scores = rb.models.score_models({name: zoo[name] for name in lb.COURSE_MODELS}, world.mnar,
                                    n_users=world.n_users, n_items=world.n_items, seed=0,
                                    progress=False, cache=False)
    return world, scores


def test_the_design_holds_five_lessons_and_five_to_seven_models():
    assert LESSONS == [1, 2, 3, 4, 5]
    assert 5 <= len(lb.COURSE_MODELS) <= 7 and len(set(lb.COURSE_MODELS)) == len(lb.COURSE_MODELS)
    methods = [m for n in LESSONS for m in lb.LESSON_METHODS[n]]
    assert len(set(methods)) == len(methods) == 7


def test_course_world_is_rb_simulate_of_its_arguments():
    a, b = lb.course_world(), rb.simulate(**lb.COURSE_WORLD)
    pd.testing.assert_frame_equal(a.full, b.full)
    pd.testing.assert_frame_equal(a.mnar, b.mnar)


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_lesson_adds_exactly_its_columns(tables, lesson):
    table = tables[lesson]
    expected = ["truth", *(m for n in range(1, lesson + 1) for m in lb.LESSON_METHODS[n])]
    assert list(table.columns) == expected
    assert list(table.index) == [*sorted(lb.COURSE_MODELS, key=lambda m: -table.loc[m, "truth"]),
                                 lb.TAU_ROW]
    assert table.shape == (len(lb.COURSE_MODELS) + 1, len(expected))
    if lesson > 1:
        before = tables[lesson - 1]
        added = [c for c in table.columns if c not in before.columns]
        assert added == list(lb.LESSON_METHODS[lesson])
        pd.testing.assert_frame_equal(table[list(before.columns)], before)  # earlier unchanged


def test_rows_are_ordered_by_truth(tables):
    truth = tables[5]["truth"].drop(lb.TAU_ROW)
    assert truth.is_monotonic_decreasing and truth.is_unique


def test_tau_row_is_a_direct_kendall_tau_of_each_column(tables):
    table = tables[5]
    models = table.drop(lb.TAU_ROW)
    for column in table.columns:
        direct = scipy.stats.kendalltau(models["truth"], models[column], variant="b").statistic
        tau = table.loc[lb.TAU_ROW, column]
        assert -1.0 <= tau <= 1.0
        assert tau == pytest.approx(direct, abs=1e-12), column
    assert table.loc[lb.TAU_ROW, "truth"] == pytest.approx(1.0, abs=1e-12)
    assert np.isfinite(table.to_numpy()).all()


def test_truth_is_the_true_recall_on_the_full_matrix(tables, fitted):
    world, scores = fitted
    in_log = pd.MultiIndex.from_frame(world.mnar[["user", "item"]])
    unseen = world.full[~pd.MultiIndex.from_frame(world.full[["user", "item"]]).isin(in_log)]
    table = tables[5]
    for name, s in scores.items():
        direct = rb.aoa(s, unseen, k=10, exclude=world.mnar, threshold=world.threshold)
        assert table.loc[name, "truth"] == pytest.approx(direct, abs=1e-12), name


def test_estimates_are_compare_methods_own(tables, fitted):
    world, scores = fitted
    table = rb.comparison.compare_methods(world, models=scores, cache=False, **lb.COURSE_COMPARISON)
    recall = table[table["metric"] == "recall"].set_index(["method", "model"])["estimate"]
    board = tables[5]
    for method in board.columns[1:]:
        for model in lb.COURSE_MODELS:
            assert board.loc[model, method] == recall[(method, model)], (method, model)


def test_long_frame_matches_the_table(tables):
    scores = lb.course_scores(cache=False)
    assert list(scores.columns) == ["lesson", "method", "model", "true", "estimate", "sd"]
    assert len(scores) == 7 * len(lb.COURSE_MODELS)
    assert (scores["sd"] > 0).all()
    for row in scores.itertuples():
        assert tables[5].loc[row.model, row.method] == row.estimate
        assert tables[5].loc[row.model, "truth"] == row.true


def test_same_seed_gives_the_same_frame(tables):
    pd.testing.assert_frame_equal(rb.leaderboard_table(lesson=5, cache=False), tables[5])


def test_a_warm_call_reads_back_the_cold_frame(tables, tmp_path, monkeypatch):
    monkeypatch.setenv("RECBIAS_FIT_CACHE_DIR", str(tmp_path))
    cold = rb.leaderboard_table(lesson=5, cache=True)
    warm = rb.leaderboard_table(lesson=5, cache=True)
    assert (cold.attrs["cached"], warm.attrs["cached"]) == (False, True)
    assert list((tmp_path / "results").glob("leaderboard.course_scores-*.joblib"))
    pd.testing.assert_frame_equal(cold, warm)
    pd.testing.assert_frame_equal(warm, tables[5])


@pytest.mark.parametrize("bad", [0, 6, -1, 2.5, 2.0, np.float64(3.0), True, False, "2", None])
def test_bad_lesson_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match="lesson"):
        rb.leaderboard_table(lesson=bad, cache=False)


def test_lesson_is_required_and_keyword_only():
    with pytest.raises(TypeError, match="lesson"):
        rb.leaderboard_table()
    with pytest.raises(TypeError):
        rb.leaderboard_table(2)


@pytest.mark.parametrize("call", [lambda: rb.leaderboard_table(lesson=1, cache="yes"),
                                  lambda: lb.course_scores(cache=1)])
def test_bad_cache_is_refused_naming_it(call):
    with pytest.raises(ValueError, match="cache"):
        call()


def test_the_stored_copy_is_a_fresh_computation():
    """Where Cornac is absent (the browser edition) the table is read from the package's copy:
    it must be what Cornac's fits give now (refresh it with ``python -m
    recbias_tutorial.leaderboard`` after a deliberate change)."""
    fresh = lb.course_scores(cache=False)
    stored = lb._read_stored_scores()
    assert stored.attrs["stored"] is True
    pd.testing.assert_frame_equal(stored[["lesson", "method", "model"]],
                                  fresh[["lesson", "method", "model"]])
    np.testing.assert_allclose(stored[["true", "estimate", "sd"]].to_numpy(),
                               fresh[["true", "estimate", "sd"]].to_numpy(), rtol=0, atol=1e-12)


def test_without_cornac_the_table_is_the_stored_one(monkeypatch, tables):
    monkeypatch.setattr(lb, "available", lambda module: module != "cornac")
    scores = lb.course_scores()
    assert scores.attrs["stored"] is True
    table = rb.leaderboard_table(lesson=5)
    pd.testing.assert_index_equal(table.index, tables[5].index)
    np.testing.assert_allclose(table.to_numpy(), tables[5].to_numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("edit, match", [
    (lambda f: f.drop(columns="sd"), "columns"),
    (lambda f: f.assign(true=f["true"].astype(str).where(f.index > 0, "n/a")), "finite"),
    (lambda f: f.assign(estimate=np.where(f.index == 3, np.nan, f["estimate"])), "finite"),
    (lambda f: pd.concat([f, f.iloc[[0]]]), "twice"),
])
def test_a_bad_stored_copy_is_an_error(tmp_path, edit, match):
    path = tmp_path / "scores.csv"
    edit(pd.read_csv(lb.STORED_SCORES)).to_csv(path, index=False)
    with pytest.raises(RuntimeError, match=match):
        lb._read_stored_scores(path)
    with pytest.raises(RuntimeError, match="missing"):
        lb._read_stored_scores(tmp_path / "absent.csv")
