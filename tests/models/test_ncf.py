"""Cornac's MLP / GMF / NeuMF scored with NumPy (models._ncf): the forward pass on hand-set
weights against a literal per-pair copy of the Keras graph (runs everywhere, CI included),
and against Cornac's own TensorFlow ``score`` to 1e-6 (skipped without TensorFlow)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial.models import batch_scorer, to_cornac_dataset
from recbias_tutorial.models._ncf import ACTIVATIONS, ncf_forward

N_USERS, N_ITEMS = 7, 5


def _weights(kind: str, act_fn: str = "relu", seed: int = 0) -> dict:
    """Random weights of a small network: GMF size 3, MLP layers (6, 4, 2)."""
    rng = np.random.default_rng(seed)
    f32 = lambda *shape: rng.normal(0, 1.5, size=shape).astype(np.float32)  # noqa: E731
    w: dict = {"act_fn": act_fn}
    n_out = 0
    if kind in ("GMF", "NeuMF"):
        w.update(gmf_user=f32(N_USERS, 3), gmf_item=f32(N_ITEMS, 3))
        n_out += 3
    if kind in ("MLP", "NeuMF"):
        w.update(mlp_user=f32(N_USERS, 3), mlp_item=f32(N_ITEMS, 3),
                 mlp_kernels=[f32(6, 4), f32(4, 2)], mlp_biases=[f32(4), f32(2)])
        n_out += 2
    w.update(out_kernel=f32(n_out), out_bias=np.float32(rng.normal()))
    return w


def _literal(w: dict, u: int, i: int) -> float:
    """One (user, item) pair through the Keras graph as Cornac builds it, in float64."""
    parts = []
    if "gmf_user" in w:
        parts.append(w["gmf_user"][u].astype(float) * w["gmf_item"][i])
    if "mlp_user" in w:
        x = np.concatenate([w["mlp_user"][u], w["mlp_item"][i]]).astype(float)
        for kernel, bias in zip(w["mlp_kernels"], w["mlp_biases"]):
            x = ACTIVATIONS[w["act_fn"]](x @ kernel + bias)
        parts.append(x)
    z = np.concatenate(parts) @ w["out_kernel"].astype(float) + float(w["out_bias"])
    return 1.0 / (1.0 + np.exp(-z))


@pytest.mark.parametrize("kind", ["GMF", "MLP", "NeuMF"])
@pytest.mark.parametrize("act_fn", ["relu", "tanh", "leaky_relu", "selu"])
def test_forward_pass_equals_the_graph_pair_by_pair(kind, act_fn):
    w = _weights(kind, act_fn)
    users = np.array([4, 0, 6, 4])
    got = ncf_forward(w, users)
    assert got.shape == (len(users), N_ITEMS) and got.dtype == np.float32
    want = np.array([[_literal(w, u, i) for i in range(N_ITEMS)] for u in users])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert 0.01 < want.std()  # the scores vary: the check can fail


def test_forward_pass_saturates_like_float32():
    w = _weights("GMF")
    w["out_bias"] = np.float32(-200.0)  # every logit far below zero: exp overflows to inf
    assert (ncf_forward(w, np.arange(N_USERS)) == 0).all()
    w["out_bias"] = np.float32(200.0)
    assert (ncf_forward(w, np.arange(N_USERS)) == 1).all()


@pytest.fixture(scope="module")
def dataset():
    rng = np.random.default_rng(1)
    n_users, n_items = 30, 25
    frame = pd.DataFrame({"user": rng.integers(0, n_users, 400),
                          "item": rng.integers(0, n_items, 400)}).drop_duplicates()
    frame["rating"] = rng.integers(1, 6, len(frame)).astype(float)
    return to_cornac_dataset(frame, n_users=n_users, n_items=n_items, seed=0)


@pytest.mark.parametrize("kind", ["GMF", "MLP", "NeuMF"])
def test_numpy_scores_equal_tensorflow_scores(kind, dataset):
    pytest.importorskip("tensorflow")
    import cornac

    options = dict(num_epochs=3, verbose=False, seed=123, backend="tensorflow")
    if kind != "MLP":
        options["num_factors"] = 6
    model = getattr(cornac.models, kind)(**options).fit(dataset)
    score = batch_scorer(model)
    assert score is not None
    users = np.arange(dataset.num_users)
    got = score(users)
    want = np.vstack([model.score(int(u)) for u in users])
    assert got.shape == want.shape == (dataset.num_users, dataset.num_items)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert want.std() > 0
