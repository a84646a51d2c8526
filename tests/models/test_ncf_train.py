"""The NumPy trainer of Cornac's GMF / MLP / NeuMF (models._ncf_train) against what it copies.

Everywhere (CI included, no TensorFlow): TensorFlow's stateless random numbers against values
TensorFlow printed; the batches against Cornac's own ``uir_iter``; the gradient of one batch
against finite differences of the Keras graph's loss written out in float64; the deferred
Adam update against the step-by-step one; the fitting functions and their refusals.
With TensorFlow installed: the initial weights bit for bit, and one epoch of weights to 1e-5.
"""

from __future__ import annotations

import cornac
import numpy as np
import pandas as pd
import pytest

from recbias_tutorial.models import batch_scorer, fit_scores, to_cornac_dataset
from recbias_tutorial.models import _ncf_kernel as kernel
from recbias_tutorial.models import _ncf_train as trainer
from recbias_tutorial.models._tf_random import stateless_normal, stateless_uniform

KINDS = {"GMF": dict(num_factors=6), "MLP": dict(layers=(16, 8, 4)),
         "NeuMF": dict(num_factors=5, layers=(12, 6, 3))}


def _model(kind: str, backend: str = "numpy", **options):
    return getattr(cornac.models, kind)(**{"verbose": False, "seed": 123, "backend": backend,
                                           **KINDS[kind], **options})


def _flat(weights: dict) -> dict:
    """Every array of a weights dict, lists of kernels flattened into one vector."""
    return {k: (np.concatenate([a.ravel() for a in v] or [np.zeros(0, np.float32)])
                if isinstance(v, list) else np.asarray(v))
            for k, v in weights.items() if k != "act_fn"}


@pytest.fixture(scope="module")
def dataset():
    """60 users, 45 items, about 600 ratings; users 50-59 have one rating each (their rows
    are untouched for hundreds of steps at batch size 1)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"user": rng.integers(0, 50, 700),
                          "item": rng.integers(0, 45, 700)}).drop_duplicates()
    frame = pd.concat([frame, pd.DataFrame({"user": np.arange(50, 60), "item": np.arange(10)})])
    frame["rating"] = rng.integers(1, 6, len(frame)).astype(float)
    return to_cornac_dataset(frame.reset_index(drop=True), n_users=60, n_items=45, seed=5)


# --------------------------------------------------------------------------------------
# TensorFlow's random numbers and Cornac's batches (no TensorFlow needed)
# --------------------------------------------------------------------------------------
def test_stateless_random_numbers_are_tensorflows():
    """Values TensorFlow 2.21 printed: ``tf.random.stateless_normal([7], seed=[123, 0],
    stddev=0.01)`` and ``stateless_uniform([5], seed=[2**31 - 3, 0], minval=-.5, maxval=.5)``."""
    normal = ["0x1.00a8bep-7", "-0x1.31d71ap-7", "0x1.ea908ep-6", "0x1.d1477cp-8",
              "0x1.2a5eb6p-6", "0x1.66d836p-7", "0x1.fd12f8p-8"]
    uniform = ["-0x1.10b36p-2", "0x1.25242p-4", "-0x1.df58p-7", "-0x1.843fp-4", "0x1.68b1ep-4"]
    assert [float(x) for x in stateless_normal(7, 123, 0.01)] == [float.fromhex(x) for x in normal]
    got = stateless_uniform(5, 2**31 - 3, -0.5, 0.5)
    assert [float(x) for x in got] == [float.fromhex(x) for x in uniform]
    # Keras maps a seed to floormod(seed, 2**31 - 2): 4e9 and 4e9 - (2**31 - 2) agree
    np.testing.assert_array_equal(stateless_normal(5, 4_000_000_000, 1.0),
                                  stateless_normal(5, 4_000_000_000 - (2**31 - 2), 1.0))


def test_batches_are_cornacs(dataset):
    """Three epochs of ``uir_iter(shuffle=True, binary=True, num_zeros=4)``, pair for pair,
    and the dataset's generator left where Cornac leaves it."""
    dataset.reset()
    want = [list(dataset.uir_iter(8, shuffle=True, binary=True, num_zeros=4)) for _ in range(3)]
    state = dataset.rng.get_state()
    dataset.reset()
    batches = trainer.EpochBatches(dataset, 4)
    for epoch in want:
        pos_u, pos_i, neg = batches.next_epoch()
        for b, (users, items, ratings) in enumerate(epoch):
            lo, hi = 8 * b, min(8 * b + 8, len(pos_u))
            np.testing.assert_array_equal(users, np.r_[pos_u[lo:hi], np.repeat(pos_u[lo:hi], 4)])
            np.testing.assert_array_equal(items, np.r_[pos_i[lo:hi], neg[4 * lo:4 * hi]])
    after = dataset.rng.get_state()
    assert np.array_equal(after[1], state[1]) and after[2] == state[2]
    csr = dataset.csr_matrix
    assert not any(csr[u, j] for u, j in zip(np.repeat(pos_u, 4), neg))  # negatives unrated


def test_a_user_who_rated_everything_is_refused():
    frame = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 0], "rating": 5.0})
    ds = to_cornac_dataset(frame, n_users=2, n_items=2, seed=0)
    with pytest.raises(ValueError, match="rated every item"):
        trainer.EpochBatches(ds, 1)
    trainer.EpochBatches(ds, 0)  # without negatives there is nothing to draw


# --------------------------------------------------------------------------------------
# the gradient of one batch, against the Keras graph's loss written out (float64)
# --------------------------------------------------------------------------------------
#: The activations in float64 (the scorer's, ``_ncf.ACTIVATIONS``, are float32 like Keras's)
_ACT64 = {"relu": lambda x: np.maximum(x, 0.0), "tanh": np.tanh,
          "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
          "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0.0)))}


def _loss(w: dict, users, items, labels, reg: float) -> float:
    """Mean sigmoid cross-entropy on the logits of Cornac's graph + reg * sum(w^2)."""
    parts = []
    if "gmf_user" in w:
        parts.append(w["gmf_user"][users] * w["gmf_item"][items])
    if "mlp_user" in w:
        x = np.hstack([w["mlp_user"][users], w["mlp_item"][items]])
        for kernel_, bias in zip(w["mlp_kernels"], w["mlp_biases"]):
            x = _ACT64[w["act_fn"]](x @ kernel_ + bias)
        parts.append(x)
    z = np.hstack(parts) @ w["out_kernel"] + w["out_bias"]
    loss = np.mean(np.logaddexp(0.0, z) - labels * z)
    penalised = [w[k] for k in ("gmf_user", "gmf_item", "mlp_user", "mlp_item") if k in w]
    penalised += list(w.get("mlp_kernels", []))
    return float(loss + reg * sum(np.sum(a**2) for a in penalised))


@pytest.mark.parametrize("kind,act_fn,reg", [("GMF", "relu", 0.0), ("MLP", "tanh", 0.0),
                                             ("NeuMF", "sigmoid", 0.0), ("NeuMF", "elu", 0.01)])
def test_one_batch_gradient_equals_finite_differences(kind, act_fn, reg, dataset):
    """One step over the whole data in one batch: Adam's first moment is 0.1 x the gradient."""
    options = dict(num_epochs=1, batch_size=10_000, num_neg=2, reg=reg)
    if kind != "GMF":
        options["act_fn"] = act_fn
    model = _model(kind, **options)
    cornac.models.Recommender.fit(model, dataset)
    start = trainer.initial_weights(model, dataset.num_users, dataset.num_items)
    start = {k: ([a * 30 for a in v] if isinstance(v, list) else v * np.float32(30))
             if k not in ("act_fn", "out_bias") else v for k, v in start.items()}  # no saturation
    dataset.reset()
    pos_u, pos_i, neg = trainer.EpochBatches(dataset, 2).next_epoch()
    users = np.r_[pos_u, np.repeat(pos_u, 2)]
    items = np.r_[pos_i, neg]
    labels = np.r_[np.ones(len(pos_u)), np.zeros(len(neg))]
    dataset.reset()
    _, first, _ = trainer.train_ncf(model, dataset, weights=start, moments=True)
    grads = {k: v / np.float64(trainer._C1) for k, v in _flat(first).items()}
    w64 = {k: ([a.astype(float) for a in v] if isinstance(v, list) else np.asarray(v, float))
           if k != "act_fn" else v for k, v in start.items()}
    rng = np.random.default_rng(0)
    checked = 0
    for key in [k for k in w64 if k != "act_fn"]:
        arrays = w64[key] if isinstance(w64[key], list) else [w64[key]]
        offset = 0
        for a in arrays:
            a_view = a.reshape(-1) if a.ndim else None
            picks = rng.choice(max(a.size, 1), size=min(4, a.size), replace=False)
            for p in picks:
                def at(delta):
                    if a_view is None:
                        w64[key] = a + delta
                        value = _loss(w64, users, items, labels, reg)
                        w64[key] = a
                        return value
                    old = a_view[p]
                    a_view[p] = old + delta
                    value = _loss(w64, users, items, labels, reg)
                    a_view[p] = old
                    return value
                fd = (at(1e-5) - at(-1e-5)) / 2e-5
                got = grads[key].reshape(-1)[offset + p]
                assert got == pytest.approx(fd, rel=2e-3, abs=2e-6), (key, p)
                checked += 1
            offset += a.size
    assert checked >= 12


# --------------------------------------------------------------------------------------
# the deferred update of untouched rows against Keras's step-by-step update
# --------------------------------------------------------------------------------------
def test_the_closed_form_equals_the_zero_gradient_steps():
    """Rows untouched for d steps (1..900, beyond ``J_MAX``), moments from tiny (epsilon
    dominates) to large: the closed form against the steps taken one by one in float64,
    to within one float32 rounding of the result."""
    alpha32, alpha64, pw = trainer._tables(0.001, 3000)
    b1, b2 = 1 - float(trainer._C1), 1 - float(trainer._C2)
    eps = float(np.float32(trainer.EPSILON))
    rng = np.random.default_rng(0)
    for _ in range(100):
        t0, d = int(rng.integers(0, 2000)), int(rng.integers(1, 900))
        E = rng.normal(0, 0.1, (1, 8)).astype(np.float32)
        M = rng.normal(0, 1e-4, (1, 8)).astype(np.float32)
        V = (rng.normal(0, 1e-8, (1, 8)) ** 2 * rng.choice([1e-6, 1.0, 1e6], (1, 8))).astype(
            np.float32)
        w, m, v = (a[0].astype(float) for a in (E, M, V))
        for j in range(1, d + 1):  # Keras's update with a zero gradient, in float64
            m, v = m * b1, v * b2
            w = w - alpha64[t0 + j] * m / (np.sqrt(v) + eps)
        kernel.catch_up_all(E, M, V, np.array([t0]), t0 + d, alpha64, pw, b1, b2, eps)
        np.testing.assert_allclose(E[0], w, rtol=6e-8, atol=1e-12)
        np.testing.assert_allclose(M[0], m, rtol=1e-6, atol=1e-38)
        np.testing.assert_allclose(V[0], v, rtol=1e-6, atol=1e-38)


@pytest.mark.parametrize("kind", list(KINDS))
def test_deferred_rows_equal_the_step_by_step_update(kind, dataset):
    """Batch size 1: one step per rating, so the rows of single-rating users stay untouched
    for more than ``J_MAX`` steps at a time; two epochs, every row compared at the end, to
    the float32 rounding of about 1,200 steps (the step-by-step path rounds each step)."""
    model = _model(kind, num_epochs=2, batch_size=1)
    cornac.models.Recommender.fit(model, dataset)
    runs = []
    for lazy in (False, True):
        dataset.reset()
        runs.append(trainer.train_ncf(model, dataset, lazy=lazy, moments=True))
    assert len(dataset.uir_tuple[0]) > kernel.J_MAX
    for dense, lazy in zip(runs[0], runs[1]):
        for key, a in _flat(dense).items():
            b = _flat(lazy)[key]
            np.testing.assert_allclose(b, a, rtol=0, atol=2e-6, err_msg=key)
    moved = _flat(runs[1][0])["out_kernel"] - _flat(trainer.initial_weights(
        model, dataset.num_users, dataset.num_items))["out_kernel"]
    assert np.abs(moved).max() > 1e-3  # it trained


def test_lazy_updates_need_reg_zero(dataset):
    model = _model("GMF", reg=0.1, num_epochs=1)
    cornac.models.Recommender.fit(model, dataset)
    with pytest.raises(ValueError, match="reg == 0"):
        trainer.train_ncf(model, dataset, lazy=True)


# --------------------------------------------------------------------------------------
# through the package's fitting functions
# --------------------------------------------------------------------------------------
def test_fit_scores_trains_and_scores_numpy_models():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"user": rng.integers(0, 40, 300),
                          "item": rng.integers(0, 30, 300)}).drop_duplicates()
    frame["rating"] = 4.0
    models = {kind: _model(kind, num_epochs=2) for kind in KINDS}
    for kind, model in models.items():
        a = fit_scores(model, frame, n_users=41, n_items=31, seed=0, cache=False)
        b = fit_scores(_model(kind, num_epochs=2), frame, n_users=41, n_items=31, seed=0,
                       cache=False)
        assert a.shape == (41, 31) and np.array_equal(a, b)  # deterministic
        assert a[:40].std() > 0 and (a[40] == 0).all()  # user 40 is unknown: a constant row
        assert callable(batch_scorer(model))
    unfitted = _model("GMF")
    with pytest.raises(AttributeError):
        batch_scorer(unfitted)


def test_the_fit_cache_tells_the_backends_apart():
    from recbias_tutorial.models._cache import model_token

    assert model_token(_model("GMF")) != model_token(_model("GMF", backend="tensorflow"))


@pytest.mark.parametrize("options,match", [
    (dict(seed=None), "seed"), (dict(learner="sgd"), "learner"),
    (dict(early_stopping={"min_delta": 0.0, "patience": 1}), "early_stopping"),
    (dict(num_epochs=1.5), "num_epochs"), (dict(lr=0.0), "lr"), (dict(reg=-1.0), "reg"),
    (dict(batch_size=0), "batch_size"), (dict(layers=(1,)), "layers")])
def test_what_the_trainer_does_not_reproduce_is_refused(options, match):
    frame = pd.DataFrame({"user": [0, 1], "item": [1, 0], "rating": [4.0, 5.0]})
    kind = "MLP" if "layers" in options else "GMF"
    with pytest.raises(ValueError, match=match):
        fit_scores(_model(kind, **options), frame, n_users=2, n_items=3, seed=0, cache=False)


def test_a_pretrained_neumf_is_refused():
    frame = pd.DataFrame({"user": [0, 1], "item": [1, 0], "rating": [4.0, 5.0]})
    model = _model("NeuMF")
    model.pretrained = True
    with pytest.raises(ValueError, match="pretrained"):
        fit_scores(model, frame, n_users=2, n_items=3, seed=0, cache=False)


def test_fitting_seeds_numpys_global_generator_as_cornac_does(dataset):
    np.random.seed(0)
    trainer.fit_ncf(_model("GMF", num_epochs=1, seed=77), dataset)
    after = np.random.random()
    np.random.seed(77)
    assert after == np.random.random()


# --------------------------------------------------------------------------------------
# against TensorFlow (the neural extra; skipped without it)
# --------------------------------------------------------------------------------------
def _tf_weights(model) -> dict:
    from recbias_tutorial.models._ncf import ncf_weights

    return ncf_weights(model)


@pytest.mark.parametrize("kind", list(KINDS))
def test_initial_weights_are_tensorflows_bit_for_bit(kind, dataset):
    pytest.importorskip("tensorflow")
    model = _model(kind, backend="tensorflow")
    cornac.models.Recommender.fit(model, dataset)
    model.model = model._build_model_tf()  # what _fit_tf builds before its first step
    want = _flat(_tf_weights(model))
    got = _flat(trainer.initial_weights(model, dataset.num_users, dataset.num_items))
    assert set(got) == set(want)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


@pytest.mark.parametrize("kind,options", [
    ("GMF", {}), ("MLP", {}), ("MLP", dict(act_fn="tanh")), ("MLP", dict(layers=(8,))),
    ("NeuMF", {}), ("NeuMF", dict(act_fn="leaky_relu")), ("GMF", dict(reg=0.01)),
    ("NeuMF", dict(reg=0.001, act_fn="selu"))])
def test_one_epoch_equals_tensorflows_weights(kind, options, dataset):
    """Cornac's own TensorFlow fit and the NumPy trainer, one epoch from the same seed (the
    same initial weights) over the same batches: every weight within 1e-5."""
    pytest.importorskip("tensorflow")
    options = dict(num_epochs=1, batch_size=32, **options)
    tf_model = _model(kind, backend="tensorflow", **options)
    dataset.reset()
    tf_model.fit(dataset)
    dataset.reset()
    np_model = trainer.fit_ncf(_model(kind, **options), dataset)
    want, got = _flat(_tf_weights(tf_model)), _flat(np_model.numpy_weights)
    start = _flat(trainer.initial_weights(np_model, dataset.num_users, dataset.num_items))
    assert set(got) == set(want)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=0, atol=1e-5, err_msg=key)
    assert max(np.abs(want[k] - start[k]).max(initial=0) for k in want) > 1e-3  # it trained
