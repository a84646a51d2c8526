"""Cornac's NCF family (GMF, MLP, NeuMF) trained without TensorFlow, as its TensorFlow backend trains.

Cornac 3.0.1 trains :class:`cornac.models.GMF`, :class:`~cornac.models.MLP` and
:class:`~cornac.models.NeuMF` with Keras (``NCFBase._fit_tf``): on Yahoo! R3 one GMF50 takes
about 15 minutes and one NeuMF50 about 30 on one core, mostly TensorFlow's per-step overhead
and Cornac's Python loop drawing the negatives. A model whose ``backend`` is ``"numpy"`` is
fitted here instead, by the package's fitting functions (:func:`~recbias_tutorial.models.fit_scores`,
``iter_scores``, ``score_models``, ``fit_scorer``), and scored by
:func:`~recbias_tutorial.models.batch_scorer` (Cornac's own ``fit`` and ``score`` know only
``"tensorflow"`` and ``"pytorch"``). What it follows, read from Cornac and Keras:

* **Initial weights**: TensorFlow's own, bit for bit (:mod:`._tf_random`): Keras 3 seeds every
  initialiser of the model with the model's ``seed`` (``RandomNormal(0.01)`` embeddings,
  ``LecunUniform`` kernels of the dense and output layers, zero biases), so all of them read
  one stateless stream. Fitting also calls ``np.random.seed(seed)``, as ``_fit_tf`` does.
* **Batches**: ``train_set.uir_iter(batch_size, shuffle=True, binary=True,
  num_zeros=num_neg)`` drawn from the dataset's own generator in the same order (one shuffle
  per epoch, then ``num_neg`` uniform items per positive, drawn again while the pair is a
  positive one), so the batches are Cornac's and the dataset's generator ends where Cornac
  leaves it. A batch is ``batch_size`` positives then their negatives.
* **Loss**: ``binary_crossentropy`` of Keras 3 on the model's sigmoid output reads the cached
  logits (``_keras_logits``), so it is ``sigmoid_cross_entropy_with_logits``, averaged over
  the batch, plus ``reg * sum(w^2)`` over the embeddings and the MLP kernels (Cornac's L2).
* **Adam** (Keras 3's ``update_step``, float32, ``beta_1 = 0.9``, ``beta_2 = 0.999``,
  ``epsilon = 1e-7``), dense on the embedding tables as Keras applies it (a row absent from a
  batch still moves); the kernel defers those rows with an exact closed form
  (:mod:`._ncf_kernel`).

``tests/models/test_ncf_train.py`` checks the initial weights and the batches against
TensorFlow and Cornac, one epoch of weights against TensorFlow's to 1e-5 (with TensorFlow
installed), and the deferred update against the step-by-step one (everywhere).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._portable_math import power_int
from . import _ncf_kernel as kernel
from ._ncf import is_numpy_ncf
from ._tf_random import stateless_normal, stateless_uniform

#: Keras 3 Adam's defaults (``keras.optimizers.Adam``), which Cornac's ``get_optimizer`` keeps.
BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-7
#: The float32 factors of Keras's update ``m += (g - m) * (1 - beta_1)`` and ``v += ...``:
#: Python computes ``1 - beta`` in double, TensorFlow casts it to float32.
_C1, _C2 = np.float32(1 - BETA_1), np.float32(1 - BETA_2)


def _structure(model: Any) -> tuple[int, int, tuple[int, ...], str]:
    """``(kg, h, dense sizes, act_fn)``: the GMF width, the MLP embedding width, the sizes of
    the MLP's dense layers (``layers[1:]``) and its activation (Cornac's fallback: ReLU)."""
    import cornac

    kind = type(model)
    kg = int(model.num_factors) if kind in (cornac.models.GMF, cornac.models.NeuMF) else 0
    if kind is cornac.models.GMF:
        return kg, 0, (), "relu"
    layers = tuple(int(x) for x in model.layers)
    act = model.act_fn if model.act_fn in kernel.ACT_CODES else "relu"
    return kg, layers[0] // 2, layers[1:], act


def check_model(model: Any) -> None:
    """Refuse what the trainer does not reproduce, naming the attribute (ValueError)."""
    name = getattr(model, "name", type(model).__name__)
    if not is_numpy_ncf(model):
        raise ValueError(f"model {name!r} must be a Cornac GMF, MLP or NeuMF with "
                         f"backend='numpy', got {type(model).__name__} with backend "
                         f"{getattr(model, 'backend', None)!r}")
    seed = model.seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise ValueError(f"model {name!r}: seed must be an int in [0, 2**32) for the NumPy "
                         f"trainer (it fixes TensorFlow's initial weights), got {seed!r}")
    if str(model.learner).lower() != "adam":
        raise ValueError(f"model {name!r}: learner must be 'adam' for the NumPy trainer, got "
                         f"{model.learner!r} (use backend='tensorflow')")
    if model.early_stopping is not None:
        raise ValueError(f"model {name!r}: early_stopping must be None for the NumPy trainer "
                         "(it needs a validation set; use backend='tensorflow')")
    if getattr(model, "pretrained", False):
        raise ValueError(f"model {name!r}: a pretrained NeuMF is not supported by the NumPy "
                         "trainer (use backend='tensorflow')")
    checks = {"num_epochs": (model.num_epochs, 0), "batch_size": (model.batch_size, 1),
              "num_neg": (model.num_neg, 0)}
    if hasattr(model, "num_factors"):
        checks["num_factors"] = (model.num_factors, 1)
    for attr, (value, low) in checks.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"model {name!r}: {attr} must be an int >= {low}, got {value!r}")
    for attr in ("lr", "reg"):
        value = getattr(model, attr)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                or not np.isfinite(value) or value < 0 or (attr == "lr" and value == 0):
            raise ValueError(f"model {name!r}: {attr} must be a finite number "
                             f"{'> 0' if attr == 'lr' else '>= 0'}, got {value!r}")
    if hasattr(model, "layers"):
        layers = model.layers
        if (isinstance(layers, (str, bytes)) or not hasattr(layers, "__len__") or not len(layers)
                or any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1
                       for x in layers) or int(layers[0]) < 2):
            raise ValueError(f"model {name!r}: layers must be positive ints, the first >= 2 "
                             f"(twice the MLP embedding size), got {layers!r}")


def initial_weights(model: Any, num_users: int, num_items: int) -> dict:
    """The weights Cornac's ``_build_model_tf`` creates for ``model`` (TensorFlow's values).

    Keys as :func:`recbias_tutorial.models._ncf.ncf_weights` (float32 arrays).
    """
    kg, h, dense, act = _structure(model)
    seed = int(model.seed)
    out: dict = {"act_fn": act}
    longest = max(num_users, num_items)
    if kg:
        stream = stateless_normal(longest * kg, seed, 0.01)
        out["gmf_user"] = stream[:num_users * kg].reshape(num_users, kg).copy()
        out["gmf_item"] = stream[:num_items * kg].reshape(num_items, kg).copy()
    if h:
        stream = stateless_normal(longest * h, seed, 0.01)
        out["mlp_user"] = stream[:num_users * h].reshape(num_users, h).copy()
        out["mlp_item"] = stream[:num_items * h].reshape(num_items, h).copy()
        sizes = (2 * h, *dense)
        out["mlp_kernels"] = [_lecun(sizes[j], sizes[j + 1], seed) for j in range(len(dense))]
        out["mlp_biases"] = [np.zeros(n, np.float32) for n in dense]
    d_out = kg + ((dense[-1] if dense else 2 * h) if h else 0)
    out["out_kernel"] = _lecun(d_out, 1, seed).ravel()
    out["out_bias"] = np.float32(0.0)
    return out


def _lecun(fan_in: int, fan_out: int, seed: int) -> np.ndarray:
    """``LecunUniform(seed)`` of a ``(fan_in, fan_out)`` kernel: U(-l, l), l = sqrt(3 / fan_in)."""
    limit = math.sqrt(3.0 / max(1.0, fan_in))
    return stateless_uniform(fan_in * fan_out, seed, -limit, limit).reshape(fan_in, fan_out)


class EpochBatches:
    """The positive pairs and negatives of each epoch, drawn as Cornac's ``uir_iter`` draws them.

    ``next_epoch()`` consumes ``train_set.rng`` exactly as one epoch of ``_fit_tf`` does:
    ``rng.shuffle`` of the row indices, then for every positive in that order ``num_neg``
    calls of ``rng.randint(0, num_items)``, each repeated while the pair is rated (its
    ``dok_matrix`` value > 0). The draws are taken in blocks (the legacy generator's
    ``randint`` gives the same numbers one at a time or as an array), never more than
    Cornac takes.
    """

    def __init__(self, train_set: Any, num_neg: int):
        users, items, ratings = (np.asarray(a) for a in train_set.uir_tuple)
        self.rng, self.num_neg = train_set.rng, int(num_neg)
        self.users = users.astype(np.int64)
        self.items = items.astype(np.int64)
        self.num_items = int(train_set.num_items)
        # dok_matrix[u, i] = r, the last rating written for a pair; "rated" means r > 0
        key = self.users * self.num_items + self.items
        last = len(key) - 1 - np.unique(key[::-1], return_index=True)[1]
        rated = last[np.asarray(ratings, dtype=float)[last] > 0]
        order = np.lexsort((self.items[rated], self.users[rated]))
        self.indices = self.items[rated][order]
        self.indptr = np.zeros(int(train_set.num_users) + 1, np.int64)
        np.add.at(self.indptr, self.users[rated] + 1, 1)
        self.indptr = np.cumsum(self.indptr)
        if self.num_neg and np.diff(self.indptr).max(initial=0) >= self.num_items:
            raise ValueError("train_set: a user rated every item, so no negative item can be "
                             "drawn for them (Cornac's sampler would loop forever)")

    def next_epoch(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        order = np.arange(len(self.users))
        self.rng.shuffle(order)
        pos_u, pos_i = self.users[order], self.items[order]
        repeated = np.repeat(pos_u, self.num_neg)
        neg = np.empty(len(repeated), np.int64)
        filled = 0
        while filled < len(repeated):
            draws = np.asarray(self.rng.randint(0, self.num_items, size=len(repeated) - filled),
                               dtype=np.int64)
            filled = kernel.draw_negatives(repeated, draws, neg, filled, self.indptr,
                                           self.indices)
        return pos_u, pos_i, neg


def adam_steps(n_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Keras 3's float32 step size ``alpha_t = lr sqrt(1 - beta_2^t) / (1 - beta_1^t)`` is
    computed per model (``lr`` varies); this returns ``(beta_1^t, beta_2^t)`` for
    ``t = 0..n_steps`` in float32, as ``ops.power`` of the float32 betas gives them.

    The powers are taken by repeated squaring in float64 and rounded once to float32
    (:func:`~recbias_tutorial._portable_math.power_int`), not by ``np.power``, whose float32
    loop is CPU-dependent (SVML on AVX-512, the C library elsewhere).
    """
    t = np.arange(n_steps + 1)
    return (power_int(float(np.float32(BETA_1)), t).astype(np.float32),
            power_int(float(np.float32(BETA_2)), t).astype(np.float32))


def _one_minus_sqrt_power(c: float, j: np.ndarray) -> np.ndarray:
    """``1 - (1 - c)^(j / 2)`` for a small ``c`` (``0 < c <= 0.01``), without cancellation:
    ``-expm1(j log1p(-c) / 2)``, both series summed in float64 with ``+ - * /`` only (so the
    same bits on every CPU): ``log1p(-c)`` to 7 terms (the 8th is below ``c^8 / 8``),
    ``expm1(x)`` for ``|x| <= 0.21`` (``j <= 400``, ``c = 0.001``) to 14 terms."""
    log_b = 0.0
    for n in range(7, 0, -1):  # log1p(-c) = -sum c^n / n
        log_b = c * (1.0 / n + log_b)
    x = 0.5 * log_b * np.asarray(j, dtype=float)  # -(j / 2) log(1 - c) >= 0
    series = np.zeros_like(x)
    for n in range(14, 0, -1):  # expm1(-x) = sum (-x)^n / n!, Horner form
        series = (-x) / n * (1.0 + series)
    return -series


def _tables(lr: float, n_steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``alpha32[t]``, its float64 copy and ``pw[j, n] = b1^j delta_j^n`` (j <= J_MAX)."""
    p1, p2 = adam_steps(n_steps)
    one = np.float32(1.0)
    with np.errstate(divide="ignore", invalid="ignore"):  # t = 0 is never used
        alpha32 = (np.float32(lr) * np.sqrt(one - p2)) / (one - p1)
    alpha32[0] = 0.0
    b1 = 1.0 - float(_C1)
    j = np.arange(kernel.J_MAX + 1)
    delta = _one_minus_sqrt_power(float(_C2), j)  # 1 - b2^(j/2), accurately
    n = np.arange(kernel.N_SERIES + 1)
    pw = power_int(b1, j)[:, None] * np.stack([power_int(d, n) for d in delta])
    pw[0] = 0.0
    return alpha32.astype(np.float32), alpha32.astype(np.float64), np.ascontiguousarray(pw)


def _pack(weights: dict, kg: int, h: int, dense: tuple[int, ...], reg: float):
    """The dense parameters as one float32 vector, its layout and its L2 factors."""
    parts, regs, layout_w, layout_b = [], [], [], []
    offset = 0
    if h:
        for w, b in zip(weights["mlp_kernels"], weights["mlp_biases"]):
            layout_w.append(offset)
            parts.append(np.asarray(w, np.float32).ravel())
            regs.append(np.full(w.size, reg, np.float32))
            offset += w.size
            layout_b.append(offset)
            parts.append(np.asarray(b, np.float32).ravel())
            regs.append(np.zeros(b.size, np.float32))
            offset += b.size
    off_out = offset
    parts += [np.asarray(weights["out_kernel"], np.float32).ravel(),
              np.array([weights["out_bias"]], np.float32)]
    regs += [np.zeros(parts[-2].size + 1, np.float32)]
    sizes = (2 * h, *dense) if h else (0,)
    n_layers = len(dense) if h else 0
    layout = np.array([n_layers, *sizes[:n_layers + 1], *layout_w, *layout_b, off_out],
                      dtype=np.int64)
    return np.concatenate(parts), np.concatenate(regs), layout


def _unpack(EU: np.ndarray, EI: np.ndarray, theta: np.ndarray, layout: np.ndarray,
            kg: int, h: int, act: str) -> dict:
    """Tables and dense parameters (or their Adam moments) as a weights dict."""
    out: dict = {"act_fn": act}
    if kg:
        out["gmf_user"], out["gmf_item"] = EU[:, :kg].copy(), EI[:, :kg].copy()
    if h:
        out["mlp_user"], out["mlp_item"] = EU[:, kg:].copy(), EI[:, kg:].copy()
    n_layers = int(layout[0])
    sizes = layout[1:n_layers + 2]
    off_w, off_b = layout[n_layers + 2:2 * n_layers + 2], layout[2 * n_layers + 2:3 * n_layers + 2]
    off_out = int(layout[3 * n_layers + 2])
    if h:
        out["mlp_kernels"] = [theta[off_w[j]:off_w[j] + sizes[j] * sizes[j + 1]]
                              .reshape(sizes[j], sizes[j + 1]).copy() for j in range(n_layers)]
        out["mlp_biases"] = [theta[off_b[j]:off_b[j] + sizes[j + 1]].copy()
                             for j in range(n_layers)]
    out["out_kernel"] = theta[off_out:-1].copy()
    out["out_bias"] = np.float32(theta[-1])
    return out


def train_ncf(model: Any, train_set: Any, *, weights: dict | None = None,
              lazy: bool | None = None, moments: bool = False) -> dict | tuple[dict, dict, dict]:
    """Train ``model``'s network on ``train_set`` as ``NCFBase._fit_tf`` does; its weights.

    ``weights``: start from these (default: TensorFlow's initial weights for ``model.seed``).
    ``lazy``: defer the rows a batch does not read (exact; default when ``reg == 0``); False
    updates every row at every step, as Keras does (the reference the tests compare with).
    ``moments``: also return Adam's first and second moments (dicts with the same keys).
    The dataset's generator is consumed as Cornac's ``uir_iter`` consumes it.
    """
    kg, h, dense, act = _structure(model)
    reg = float(model.reg)
    lazy = (reg == 0.0) if lazy is None else bool(lazy)
    if lazy and reg != 0.0:
        raise ValueError("lazy updates need reg == 0 (an L2 penalty moves every row)")
    n_users, n_items = int(train_set.num_users), int(train_set.num_items)
    w = initial_weights(model, n_users, n_items) if weights is None else {
        k: (list(v) if isinstance(v, list) else v) for k, v in weights.items()}
    cols_u = [w[k] for k in ("gmf_user", "mlp_user") if k in w]
    cols_i = [w[k] for k in ("gmf_item", "mlp_item") if k in w]
    EU = np.ascontiguousarray(np.hstack(cols_u), dtype=np.float32)
    EI = np.ascontiguousarray(np.hstack(cols_i), dtype=np.float32)
    theta, reg_theta, layout = _pack(w, kg, h, dense, reg)
    MU, VU, MI, VI = (np.zeros_like(a) for a in (EU, EU, EI, EI))
    m_theta, v_theta = np.zeros_like(theta), np.zeros_like(theta)
    last_u, last_i = np.zeros(n_users, np.int64), np.zeros(n_items, np.int64)
    epochs = int(model.num_epochs)
    batch_size, num_neg = int(model.batch_size), int(model.num_neg)
    n_pos = len(train_set.uir_tuple[0])
    n_steps = epochs * (-(-n_pos // batch_size))
    alpha32, alpha64, pw = _tables(float(model.lr), n_steps)
    consts = np.array([_C1, _C2, np.float32(EPSILON), np.float32(reg),
                       1.0 - float(_C1), 1.0 - float(_C2)], dtype=np.float64)
    act_code = kernel.ACT_CODES.index(act)
    batches = EpochBatches(train_set, num_neg)
    step = 0
    for _ in range(epochs):
        pos_u, pos_i, neg = batches.next_epoch()
        step = kernel.train_epoch(pos_u, pos_i, neg, batch_size, num_neg, step,
                                  EU, MU, VU, last_u, EI, MI, VI, last_i,
                                  theta, m_theta, v_theta, reg_theta, layout, kg, h, act_code,
                                  alpha32, alpha64, pw, consts, lazy)
    eps64 = float(np.float32(EPSILON))
    b1, b2 = 1.0 - float(_C1), 1.0 - float(_C2)
    kernel.catch_up_all(EU, MU, VU, last_u, step, alpha64, pw, b1, b2, eps64)
    kernel.catch_up_all(EI, MI, VI, last_i, step, alpha64, pw, b1, b2, eps64)
    out = _unpack(EU, EI, theta, layout, kg, h, act)
    if not moments:
        return out
    return (out, _unpack(MU, MI, m_theta, layout, kg, h, act),
            _unpack(VU, VI, v_theta, layout, kg, h, act))


def fit_ncf(model: Any, train_set: Any) -> Any:
    """``model.fit(train_set)`` for a Cornac GMF / MLP / NeuMF with ``backend="numpy"``.

    Cornac's ``Recommender.fit`` (the model's users and items), ``np.random.seed(seed)`` as
    ``_fit_tf`` does, then :func:`train_ncf`; the weights are kept in
    ``model.numpy_weights`` (the keys of :func:`recbias_tutorial.models._ncf.ncf_weights`),
    which :func:`~recbias_tutorial.models.batch_scorer` applies. A model with
    ``trainable=False`` is left untrained, as Cornac leaves it.
    """
    import cornac

    check_model(model)
    cornac.models.Recommender.fit(model, train_set)
    if model.trainable:
        np.random.seed(int(model.seed))  # _fit_tf's side effect on NumPy's global generator
        model.numpy_weights = train_ncf(model, train_set)
    return model
