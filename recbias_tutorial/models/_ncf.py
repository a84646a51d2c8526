"""Cornac's neural collaborative filtering models (MLP, GMF, NeuMF) scored with NumPy.

Cornac's TensorFlow backend scores one user per call, a Keras forward pass over every item
(``NCFBase._score_tf``): 30 to 95 s per model for Yahoo! R3's 15,400 users, repeated for every
fitted model. The network is small (two embeddings, a few dense layers, a sigmoid), so once
its weights are read it is applied here to a block of users at once with NumPy, in float32 as
TensorFlow computes it (a saturated sigmoid then ties at 1.0 as it does there), with the
package's portable products and ``exp`` (:mod:`recbias_tutorial._portable_math`: no BLAS,
so the same bits on every CPU);
``tests/models/test_ncf.py`` checks it against Cornac's own ``score`` to 1e-6.

The first dense layer of the MLP acts on ``[user embedding, item embedding]``; it is split
into a user part and an item part (``x W = u W_u + i W_i``), so the item part is computed once
per model rather than once per (user, item) pair. Nothing here imports TensorFlow: the weights
are read from the fitted Keras model (:func:`ncf_weights`), or are those the package's own
trainer left on a ``backend="numpy"`` model (``model.numpy_weights``, :mod:`._ncf_train`), and
the forward pass (:func:`ncf_forward`) is plain NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._portable_math import expm1_32, matmul, sigmoid32, tanh32

#: Cornac's activations of the MLP layers (``ncf.backend_tf.act_functions``) in NumPy, with
#: the package's portable ``exp`` / ``tanh`` / ``expm1`` (the same bits on every CPU);
#: leaky ReLU with TensorFlow's default slope 0.2, SELU with its two constants.
_SELU_ALPHA, _SELU_SCALE = np.float32(1.6732632423543772), np.float32(1.0507009873554805)
ACTIVATIONS = {
    "sigmoid": sigmoid32,
    "tanh": tanh32,
    "elu": lambda x: np.where(x > 0, x, expm1_32(np.minimum(x, 0))),
    "selu": lambda x: _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * expm1_32(np.minimum(x, 0))),
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "leaky_relu": lambda x: np.where(x > 0, x, np.float32(0.2) * x),
}
#: The families scored here (Cornac's class names), with the parts each network has.
KINDS = {"GMF": ("gmf",), "MLP": ("mlp",), "NeuMF": ("gmf", "mlp")}
#: The values of a Cornac NCF model's ``backend`` the package fits: ``"numpy"`` by its own
#: trainer (:mod:`._ncf_train`, no TensorFlow), ``"tensorflow"`` by Cornac's ``fit`` (the
#: ``neural`` extra).
NCF_BACKENDS = ("numpy", "tensorflow")


def ncf_classes() -> tuple:
    """Cornac's GMF, MLP and NeuMF classes."""
    import cornac

    M = cornac.models
    return (M.GMF, M.MLP, M.NeuMF)


def is_numpy_ncf(model: Any) -> bool:
    """A Cornac GMF, MLP or NeuMF (the class itself) whose ``backend`` is ``"numpy"``."""
    return type(model) in ncf_classes() and getattr(model, "backend", None) == "numpy"


def ncf_weights(model: Any) -> dict:
    """The weights of a fitted Cornac MLP / GMF / NeuMF (TensorFlow backend) as float32 arrays.

    Keys: ``gmf_user``, ``gmf_item`` (GMF part), ``mlp_user``, ``mlp_item``, ``mlp_kernels``,
    ``mlp_biases`` (MLP part), ``out_kernel``, ``out_bias`` (the logits layer), ``act_fn``.
    """
    keras = model.model
    out: dict = {"act_fn": getattr(model, "act_fn", "relu")}
    names = {layer.name for layer in keras.layers}
    if "gmf_layer" in names:
        gmf = keras.get_layer("gmf_layer")
        out["gmf_user"] = np.asarray(gmf.user_embedding.get_weights()[0], np.float32)
        out["gmf_item"] = np.asarray(gmf.item_embedding.get_weights()[0], np.float32)
    if "mlp_layer" in names:
        mlp = keras.get_layer("mlp_layer")
        out["mlp_user"] = np.asarray(mlp.user_embedding.get_weights()[0], np.float32)
        out["mlp_item"] = np.asarray(mlp.item_embedding.get_weights()[0], np.float32)
        pairs = [layer.get_weights() for layer in mlp.dense_layers]
        out["mlp_kernels"] = [np.asarray(w, np.float32) for w, _ in pairs]
        out["mlp_biases"] = [np.asarray(b, np.float32) for _, b in pairs]
    kernel, bias = keras.get_layer("logits").get_weights()
    out["out_kernel"] = np.asarray(kernel, np.float32).ravel()
    out["out_bias"] = np.float32(np.asarray(bias).ravel()[0])
    return out


def ncf_forward(weights: dict, users: np.ndarray) -> np.ndarray:
    """Sigmoid scores of ``users`` (Cornac indices) for every item: ``(len(users), n_items)``.

    The network of Cornac's GMF (``u * i``), MLP (dense layers on ``[u, i]``) or NeuMF
    (both, concatenated) followed by one logit and a sigmoid, in float32. Which parts apply
    is read from the keys of ``weights`` (see :func:`ncf_weights`).
    """
    with np.errstate(over="ignore"):  # exp(-z) of a very negative logit: inf, score 0
        return _forward(weights, np.asarray(users, dtype=np.int64))


def _forward(weights: dict, users: np.ndarray) -> np.ndarray:
    kernel = weights["out_kernel"]
    logits = None
    used = 0  # the output kernel's rows: the GMF part first, then the MLP part (NeuMF's order)
    if "gmf_user" in weights:
        pu, qi = weights["gmf_user"][users], weights["gmf_item"]
        k = pu.shape[1]
        logits = matmul(pu * kernel[:k], qi.T)  # sum_f u_f i_f w_f
        used = k
    if "mlp_user" in weights:
        act = ACTIVATIONS[weights["act_fn"]] if weights["act_fn"] in ACTIVATIONS \
            else ACTIVATIONS["relu"]  # Cornac's act_functions.get(act_fn, tf.nn.relu)
        kernels, biases = weights["mlp_kernels"], weights["mlp_biases"]
        half = weights["mlp_user"].shape[1]
        if kernels:
            first = kernels[0]
            user_part = matmul(weights["mlp_user"][users], first[:half]) + biases[0]
            item_part = matmul(weights["mlp_item"], first[half:])
            h = act(user_part[:, None, :] + item_part[None, :, :])
            for w, b in zip(kernels[1:], biases[1:]):
                h = act(_matmul3(h, w) + b)
        else:  # no dense layer: the concatenated embeddings go to the logit directly
            n = len(weights["mlp_item"])
            h = np.concatenate([np.broadcast_to(weights["mlp_user"][users][:, None, :],
                                                (len(users), n, half)),
                                np.broadcast_to(weights["mlp_item"][None], (len(users), n, half))],
                               axis=-1)
        part = _matmul3(h, kernel[used:])
        logits = part if logits is None else logits + part
    return sigmoid32(logits + weights["out_bias"])


def _matmul3(h: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``h @ w`` for ``h`` of shape ``(users, items, d)`` (portable: no BLAS)."""
    out = matmul(h.reshape(-1, h.shape[-1]), w)
    return out.reshape(*h.shape[:-1], *w.shape[1:])


def ncf_scorer(model: Any):
    """``score(users) -> (len(users), n_items)`` for a fitted Cornac NCF model (TensorFlow)."""
    weights = ncf_weights(model)
    return lambda users: ncf_forward(weights, users)
