"""yang2018: the comparison table equals the estimators called one by one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial.replications import yang2018


@pytest.fixture(scope="module")
def case(small_world):
    train, held = rb.random_split(small_world.mnar, (0.8, 0.2), seed=0)
    rng = np.random.default_rng(1)
    scores = {"a": rng.random((small_world.n_users, small_world.n_items)),
              "b": rng.random((small_world.n_users, small_world.n_items))}
    protocols = yang2018.snips_protocols(held, small_world.mar, train=train,
                                         n_items=small_world.n_items,
                                         gammas={f"g{g}": g for g in yang2018.GAMMAS})
    return small_world, train, held, scores, protocols


def test_estimates_equal_direct_calls(case):
    world, train, held, scores, protocols = case
    out = yang2018.estimate_models(scores, protocols, exclude=train, seed=0, k=5)
    assert len(out) == 2 * 2 * (2 + len(yang2018.GAMMAS))
    row = out.query("model == 'a' and metric == 'recall' and estimator == 'g2.0'").iloc[0]
    p = rb.popularity_propensity(train, world.n_items, gamma=2.0)
    assert row["value"] == pytest.approx(rb.snips(scores["a"], held, p, k=5, exclude=train))
    truth = out.query("model == 'b' and metric == 'auc' and estimator == 'MAR truth'")["value"]
    assert truth.item() == pytest.approx(rb.aoa(scores["b"], world.mar, metric="auc", exclude=train))


def test_agreement_table_mae_and_tau(case):
    world, train, held, scores, protocols = case
    out = yang2018.estimate_models(scores, protocols, exclude=train, seed=0, k=5,
                                   metrics=["recall"])
    table = yang2018.agreement_table(out)
    wide = out.pivot(index="model", columns="estimator", values="value")
    mae = (wide["AOA"] - wide["MAR truth"]).abs().mean()
    assert table.loc["AOA", ("recall", "MAE")] == pytest.approx(mae)
    assert list(table.index) == ["AOA"] + [f"g{g}" for g in yang2018.GAMMAS]
    with pytest.raises(ValueError, match="truth"):
        yang2018.agreement_table(out, truth="nope")


def test_per_model_mae_is_the_mean_per_user_error(case):
    world, train, held, scores, protocols = case
    per_user = yang2018.user_table(scores, protocols, exclude=train, metrics=["recall"], k=5)
    mae = yang2018.per_model_mae(per_user)
    truth = rb.estimators.user_values(scores["a"], world.mar, k=5, exclude=train)
    aoa = rb.estimators.user_values(scores["a"], held, k=5, exclude=train)
    common = truth.index.intersection(aoa.index)
    assert mae.loc[("recall", "a"), "AOA"] == pytest.approx((aoa[common] - truth[common]).abs().mean())
    assert mae.loc[("recall", "a"), "users"] == len(common)
    with pytest.raises(ValueError, match="truth"):
        yang2018.per_model_mae(per_user, truth="nope")


def test_same_users_makes_both_sides_average_over_the_same_users(case):
    world, train, held, scores, protocols = case
    h, t = yang2018.same_users(held, world.mar)
    rel_users = lambda f: set(f.loc[f["rating"] >= 4.0, "user"])  # noqa: E731
    assert rel_users(h) == rel_users(t)
    assert rel_users(h) <= rel_users(held) & rel_users(world.mar)
    out = yang2018.estimate_models(scores, yang2018.snips_protocols(h, t, train=train,
                                   n_items=world.n_items, gammas={"g2": 2.0}), exclude=train,
                                   seed=0, k=5, metrics=["recall"])
    assert out["users"].nunique() == 1
    with pytest.raises(ValueError, match="no user"):
        yang2018.same_users(held.assign(rating=1.0), world.mar)


def test_paper_table_is_the_slide():
    t = yang2018.PAPER_MAE_RECALL
    assert t.loc["U-CML", "AOA"] == 0.401 and t.loc["PMF", "SNIPS γ=3.0"] == 0.248
    assert list(t.columns[1:]) == [f"SNIPS γ={g:.1f}" for g in yang2018.GAMMAS]


def test_paper_numbers_live_in_the_bottom_module():
    """_paper holds the published numbers; the front and the grid search read the same table."""
    from recbias_tutorial.replications.yang2018 import _grid, _paper

    assert yang2018.PAPER_MAE_RECALL is _paper.PAPER_MAE_RECALL is _grid.PAPER_MAE_RECALL
    assert [n for n in yang2018.__all__ if n.startswith("PAPER_")] == [
        n for n in dir(_paper) if n.startswith("PAPER_")]
    import hashlib

    t = yang2018.PAPER_MAE_RECALL  # the very table the front held before the move (e31e331)
    digest = hashlib.sha256(pd.util.hash_pandas_object(t, index=True).to_numpy().tobytes()
                            + repr((list(t.columns), t.index.name)).encode()).hexdigest()
    assert digest == "3a7935dedeef72300a73e1c80e08a049399330b2c652eefc6b7771ddc21c91e7"


def test_mae_over_splits_repeats_the_protocol_per_seed(small_world):
    from recbias_tutorial.models import PosPop, iter_scores
    models = {"PosPop": PosPop(threshold=4.0)}
    out = yang2018.mae_over_splits(models, small_world, seeds=[3], gammas=[2.0])
    train, held = rb.random_split(small_world.mnar, (0.8, 0.2), seed=3)
    held, truth = yang2018.same_users(held, rb.drop_seen(small_world.mar, train))
    protocols = yang2018.snips_protocols(held, truth, train=train, n_items=small_world.n_items,
                                         gammas={"SNIPS γ=2.0": 2.0})
    scores = iter_scores(models, train, n_users=small_world.n_users, n_items=small_world.n_items,
                         seed=3, progress=False)
    direct = yang2018.per_model_mae(yang2018.user_table(scores, protocols, exclude=train,
                                                        metrics=["recall"]))
    assert out.loc[0, "AOA"] == pytest.approx(direct.loc[("recall", "PosPop"), "AOA"])
    assert out.loc[0, "SNIPS γ=2.0"] == pytest.approx(direct.loc[("recall", "PosPop"), "SNIPS γ=2.0"])
    with pytest.raises(ValueError, match="seeds"):
        yang2018.mae_over_splits(models, small_world, seeds=[])


def test_summarise_batches_cells_exactly_as_one_call_each():
    """An int seed: one bootstrap per cell size gives each cell's own interval, bit for bit."""
    from recbias_tutorial.stats import user_bootstrap

    rng = np.random.default_rng(0)
    per_user = pd.DataFrame([
        {"model": m, "metric": "recall", "estimator": e, "user": u, "value": rng.random()}
        for m in "ab" for e in ("AOA", "S1", "S2") for u in range(60 if e != "S2" else 45)])
    out = yang2018.summarise(per_user, seed=3, n_resamples=200)
    for row, (_, part) in zip(out.itertuples(), per_user.groupby(
            ["model", "metric", "estimator"], sort=False)):
        ci = user_bootstrap(part["value"].to_numpy(), seed=3, n_resamples=200).iloc[0]
        assert (row.value, row.low, row.high) == (ci["estimate"], ci["low"], ci["high"])
        assert row.users == len(part)
