"""The one list of estimators: a registered estimator reaches every part of the package."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb
from recbias_tutorial import estimators
from recbias_tutorial.comparison import compare_methods


class PlainAverage(estimators.Estimator):
    """AOA again, written only as per-user terms (no comparison kernel of its own)."""

    name, family, label = "plain_average", "log", "plain average (log)"

    def terms(self, gain, users, p, n_relevant, n_users):
        return pd.Series(gain).groupby(users).mean().rename_axis("user")


class WeightedAverage(estimators.Estimator):
    """SNIPS again, as per-user terms: needs (relative) propensities."""

    name, family, label = "weighted_average", "reweighting", "weighted average (true P)"
    propensity = "relative"

    def terms(self, gain, users, p, n_relevant, n_users):
        w = pd.DataFrame({"num": gain / p, "den": 1.0 / p}).groupby(users).sum()
        return (w["num"] / w["den"]).rename_axis("user")


def _best_item(scores, test, *, k=10):
    """A public function for a registered estimator."""
    return 1.0


class BestItem(PlainAverage):
    name, label, function = "best_item_flat", "best item", _best_item


@pytest.fixture
def registered():
    added = [estimators.register(PlainAverage()), estimators.register(WeightedAverage())]
    yield added
    for e in added:
        estimators.unregister(e.name)


@pytest.fixture(scope="module")
def world():
    return rb.simulate(120, 60, seed=5, mean_ratings_per_user=10, n_mar_items=10)


def _models(world):
    pop = np.bincount(world.mnar["item"], minlength=world.n_items).astype(float)
    rng = np.random.default_rng(0)
    return {"pop": np.tile(pop, (world.n_users, 1)), "oracle": world.propensity,
            "random": rng.random((world.n_users, world.n_items))}


def test_a_registered_estimator_appears_in_the_comparison_with_no_other_edit(registered, world):
    table = compare_methods(world, models=_models(world), seed=1, n_redraws=3, k=5)
    methods = list(dict.fromkeys(table["method"]))
    assert methods[-2:] == ["plain average (log)", "weighted average (true P)"]
    assert set(table.loc[table["method"] == "plain average (log)", "family"]) == {"log"}

    def estimates(method):
        return table[table["method"] == method].set_index(["model", "metric"])["redraws"]

    # the generic kernel (one pass per model, from the terms) equals the vectorised ones
    for new, builtin in (("plain average (log)", "AOA (log)"),
                         ("weighted average (true P)", "SNIPS (true P)")):
        a, b = estimates(new), estimates(builtin)
        assert len(a) == 6
        np.testing.assert_allclose(np.array(a.tolist()), np.array(b.loc[a.index].tolist()),
                                   rtol=1e-12, atol=1e-12)


def test_the_comparison_is_not_cached_with_an_estimator_from_outside_the_package(world):
    models = _models(world)
    before = compare_methods(world, models=models, seed=2, n_redraws=2, k=5)
    estimators.register(PlainAverage())
    try:
        during = compare_methods(world, models=models, seed=2, n_redraws=2, k=5)
    finally:
        estimators.unregister("plain_average")
    after = compare_methods(world, models=models, seed=2, n_redraws=2, k=5)
    assert "plain average (log)" in set(during["method"])
    assert "plain average (log)" not in set(before["method"]) | set(after["method"])
    pd.testing.assert_frame_equal(before, after)


def test_per_user_values_and_bootstrap_read_the_list(registered, world):
    scores = np.asarray(world.propensity)
    test = world.full
    assert estimators.ESTIMATORS[-2:] == ("plain_average", "weighted_average")
    pd.testing.assert_series_equal(estimators.user_values(scores, test, estimator="plain_average"),
                                   estimators.user_values(scores, test, estimator="aoa"))
    p = np.bincount(world.mnar["item"], minlength=world.n_items) + 1.0
    pd.testing.assert_series_equal(
        estimators.user_values(scores, test, p, estimator="weighted_average"),
        estimators.user_values(scores, test, p, estimator="snips"))
    with pytest.raises(ValueError, match="propensity is required for weighted_average"):
        estimators.user_values(scores, test, estimator="weighted_average")
    est, lo, hi = estimators.bootstrap_ci(scores, test, estimator="plain_average", seed=0,
                                          n_resamples=50)
    assert est == pytest.approx(rb.aoa(scores, test))
    assert lo <= est <= hi


def test_the_flat_api_reads_the_list():
    assert rb.aoa is estimators.aoa and rb.ure_recall is estimators.ure_recall
    assert {"aoa", "ips", "snips", "stratified", "ure_recall", "recall_at_kbar",
            "intervene"} <= set(rb.__all__)
    estimators.register(BestItem())
    try:
        assert "best_item_flat" in rb.__all__
        assert rb.best_item_flat is _best_item
        assert rb._home("best_item_flat") == __name__.removeprefix("recbias_tutorial.")
    finally:
        estimators.unregister("best_item_flat")
        vars(rb).pop("best_item_flat", None)
    with pytest.raises(AttributeError):
        rb.best_item_flat  # noqa: B018
    assert rb._home("aoa") == "estimators" and rb._home("intervene") == "sampling"


def test_register_refuses_bad_estimators():
    with pytest.raises(ValueError, match="estimator must be an Estimator instance"):
        estimators.register(PlainAverage)
    with pytest.raises(ValueError, match="already registered"):
        estimators.register(estimators.registered()[0])

    class Nothing(estimators.Estimator):
        name = "nothing"

    with pytest.raises(ValueError, match="must define terms or compare"):
        estimators.register(Nothing())

    class BadName(PlainAverage):
        name = "not a name"

    with pytest.raises(ValueError, match="must be a Python identifier"):
        estimators.register(BadName())
    with pytest.raises(ValueError, match="estimator must be one of"):
        estimators.user_values(np.eye(2), pd.DataFrame({"user": [0], "item": [0], "rating": [5.0]}),
                               estimator="stratified")  # no per-user terms
    assert [e.name for e in estimators.registered()] == [
        "aoa", "ips", "snips", "stratified", "intervene", "ure_recall", "recall_at_kbar"]
