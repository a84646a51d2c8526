"""A diverged or collapsed fit raises TrainingDiverged (naming the model and its step), never
returns a score matrix (issue 57: NaN weights used to come back as all-zero scores)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("cornac")
import cornac  # noqa: E402

from recbias_tutorial._training import (TrainingDiverged, check_finite_weights,  # noqa: E402
                                        check_score_spread)
from recbias_tutorial.models import CML, AvgRating, fit_scorer, fit_scores, score_models  # noqa: E402
from recbias_tutorial.replications import wang2025  # noqa: E402

_RNG = np.random.default_rng(0)
TRAIN = (pd.DataFrame({"user": _RNG.integers(0, 30, 300), "item": _RNG.integers(0, 20, 300)})
         .drop_duplicates().assign(rating=1.0).reset_index(drop=True))
SIZES = dict(n_users=30, n_items=20, seed=0, cache=False)

DIVERGING = [
    ("GMF NaN", lambda: cornac.models.GMF(backend="numpy", lr=1e30, num_epochs=3, seed=1), "1e+30"),
    ("NeuMF NaN", lambda: cornac.models.NeuMF(backend="numpy", lr=1e30, num_epochs=3, seed=1), "1e+30"),
    ("MLP NaN", lambda: cornac.models.MLP(backend="numpy", lr=1e30, num_epochs=3, seed=1), "1e+30"),
    ("GMF saturated", lambda: cornac.models.GMF(backend="numpy", lr=1e3, num_epochs=3, seed=1), "1000"),
    ("MF NaN", lambda: cornac.models.MF(learning_rate=1e3, max_iter=50, seed=1), "1000"),
    ("BPR NaN", lambda: cornac.models.BPR(learning_rate=1e3, max_iter=50, seed=1), "1000"),
]


@pytest.mark.parametrize("label, make, lr", DIVERGING, ids=[d[0] for d in DIVERGING])
def test_diverged_fit_raises_naming_model_and_step(label, make, lr):
    model = make()
    with pytest.raises(TrainingDiverged) as info:
        fit_scores(model, TRAIN, **SIZES)
    message = str(info.value)
    assert model.name in message and lr in message and "smaller learning rate" in message


def test_every_fitting_path_checks():
    with pytest.raises(TrainingDiverged):
        fit_scorer(cornac.models.MF(learning_rate=1e3, max_iter=50, seed=1), TRAIN,
                   n_users=30, n_items=20, seed=0)
    with pytest.raises(TrainingDiverged):
        score_models({"bpr": cornac.models.BPR(learning_rate=1e3, max_iter=50, seed=1)}, TRAIN, **SIZES)


@pytest.mark.parametrize("make", [
    lambda: cornac.models.GMF(backend="numpy", lr=0.001, num_epochs=3, seed=1),
    lambda: cornac.models.MF(seed=1), lambda: cornac.models.BPR(seed=1),
    lambda: cornac.models.PMF(seed=1), lambda: CML(seed=1, n_iter=3)])
def test_sound_fits_still_pass(make):
    scores = fit_scores(make(), TRAIN, **SIZES)
    assert np.isfinite(scores).all() and np.unique(scores).size > 2


def test_constant_baselines_are_not_flagged():
    # binary data: every item's average rating is 1.0, a constant that is right
    scores = fit_scores(AvgRating(), TRAIN, **SIZES)
    assert np.isfinite(scores).all()


def test_one_class_is_shared_with_wang():
    assert wang2025.TrainingDiverged is TrainingDiverged and issubclass(TrainingDiverged, ValueError)


@pytest.mark.parametrize("scores, why", [
    (np.full((3, 4), 0.5), "every score equals"), (np.eye(3, 4), "exactly 0 or 1"),
    (np.array([[0.1, np.nan]]), "non-finite"), (np.array([[np.inf, 0.2]]), "non-finite")])
def test_score_spread_rules(scores, why):
    with pytest.raises(TrainingDiverged, match=why):
        check_score_spread("M", scores, 0.1)


def test_weight_rules():
    check_finite_weights("M", [np.ones(3), np.arange(3)], 0.1)
    with pytest.raises(TrainingDiverged, match="non-finite weights"):
        check_finite_weights("M", [np.ones(3), np.array([1.0, np.nan])], 0.1)
    check_score_spread("M", np.array([[0.0, 1.0, 0.5]]), None)


def test_check_trained_by_name():
    from types import SimpleNamespace

    from recbias_tutorial.models._trained import check_trained

    class MF(SimpleNamespace):  # a CHECKED family by its class name
        pass

    good = MF(name="MF", lr=0.01, u=np.ones((3, 2)), v=np.ones((4, 2)))
    check_trained(good, 3, lambda users: np.arange(len(users) * 4.0))  # spread, finite: passes
    with pytest.raises(TrainingDiverged, match="MF"):
        check_trained(MF(name="MF", lr=0.01, u=np.full((3, 2), np.nan)), 3,
                      lambda users: np.ones(len(users)))
    with pytest.raises(TrainingDiverged):  # every score equal: a ranking of ties
        check_trained(good, 3, lambda users: np.ones(len(users) * 4))
    check_trained(SimpleNamespace(name="MostPop"), 3, lambda users: np.ones(3))  # not checked
