"""TensorFlow's stateless random numbers (Philox4x32-10), bit for bit, without TensorFlow.

Cornac's NCF layers (``ncf/backend_tf.py``) draw their initial weights with Keras
initialisers seeded by the model's ``seed``: ``RandomNormal(stddev=0.01, seed=seed)`` for
every embedding and ``LecunUniform(seed=seed)`` for every dense kernel. Keras 3 turns an
integer seed into ``tf.random.stateless_normal`` / ``stateless_uniform`` with the seed pair
``[seed mod (2**31 - 2), 0]`` (``keras.src.backend.tensorflow.random``), so every
initialiser of a model reads the *same* stream: the item embedding is the first rows of the
user embedding's stream, and so on. This module computes those streams as TensorFlow's CPU
kernels do (``StatelessRandomGetKeyCounter``, then ``PhiloxRandom`` with
``NormalDistribution`` / ``UniformDistribution`` of ``random_distributions.h``), so the NumPy
NCF trainer starts from TensorFlow's own initial weights; ``tests/models/test_ncf_train.py``
checks them against TensorFlow with ``np.array_equal`` (when TensorFlow is installed).
"""

from __future__ import annotations

from .._jit import numba  # Numba, or the same code run as Python without it
import numpy as np

_KEY_SCRAMBLE = (0x3EC8F720, 0x02461E29)  # GenerateKey's fixed key (stateless_random_ops.cc)


@numba.njit(cache=True)
def _philox(c0, c1, c2, c3, k0, k1):  # pragma: no cover (compiled)
    """Ten rounds of Philox4x32 on the counter ``c`` with the key ``k`` (uint64 holding uint32)."""
    mask = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (((p1 >> np.uint64(32)) ^ c1 ^ k0) & mask, p1 & mask,
                          ((p0 >> np.uint64(32)) ^ c3 ^ k1) & mask, p0 & mask)
        k0 = (k0 + np.uint64(0x9E3779B9)) & mask
        k1 = (k1 + np.uint64(0xBB67AE85)) & mask
    return c0, c1, c2, c3


@numba.njit(cache=True)
def _stream(n_groups, seed0, seed1):  # pragma: no cover (compiled)
    """The first ``n_groups`` outputs (4 uint32 each) of TensorFlow's stateless Philox for the
    seed pair ``(seed0, seed1)``."""
    mask = np.uint64(0xFFFFFFFF)
    s0, s1 = np.uint64(seed0), np.uint64(seed1)
    # GenerateKey: the seeds become a counter, scrambled by one Philox call under a fixed key
    m0, m1, m2, m3 = _philox(s0 & mask, s0 >> np.uint64(32), s1 & mask, s1 >> np.uint64(32),
                             np.uint64(_KEY_SCRAMBLE[0]), np.uint64(_KEY_SCRAMBLE[1]))
    k0, k1 = m0, m1
    c0, c1, c2, c3 = np.uint64(0), np.uint64(0), m2, m3
    out = np.empty((n_groups, 4), dtype=np.uint32)
    for g in range(n_groups):
        r0, r1, r2, r3 = _philox(c0, c1, c2, c3, k0, k1)
        out[g, 0], out[g, 1], out[g, 2], out[g, 3] = r0, r1, r2, r3
        c0 = (c0 + np.uint64(1)) & mask  # PhiloxRandom::SkipOne, a 128-bit increment
        if c0 == 0:
            c1 = (c1 + np.uint64(1)) & mask
            if c1 == 0:
                c2 = (c2 + np.uint64(1)) & mask
                if c2 == 0:
                    c3 = (c3 + np.uint64(1)) & mask
    return out


def _unit_floats(bits: np.ndarray) -> np.ndarray:
    """``Uint32ToFloat``: 23 random mantissa bits under exponent 0, minus 1: [0, 1) in float32."""
    return ((bits & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1)


@numba.njit(cache=True)
def _box_muller(u, out):  # pragma: no cover (compiled)
    """``BoxMullerFloat`` on consecutive pairs of ``u`` (float32, as TensorFlow's CPU kernel:
    logf, sqrtf and sincosf of the C library; ``2 * M_PI`` times the uniform in double).

    The C library's functions are kept (TensorFlow's own): a uniform takes one of 2**23
    values, and on every one of them glibc's FMA and plain variants of logf, sinf and cosf
    agree, so the initial weights have the same bits on every CPU
    (``tests/test_portable.py`` recomputes all 2**23 under another CPU's settings)."""
    for p in range(0, u.shape[0], 2):
        u1 = u[p]
        if u1 < np.float32(1.0e-7):
            u1 = np.float32(1.0e-7)
        v1 = np.float32(2.0 * np.pi * np.float64(u[p + 1]))
        u2 = np.sqrt(np.float32(-2.0) * np.log(u1))
        out[p] = np.sin(v1) * u2
        out[p + 1] = np.cos(v1) * u2


def tf_seed(seed: int) -> int:
    """The first element of the seed pair Keras 3 (TensorFlow backend) passes for an integer
    ``seed``: ``floormod(seed, 2**31 - 2)`` (``_cast_seed``)."""
    return int(seed) % (2**31 - 2)


def stateless_normal(n: int, seed: int, stddev: float) -> np.ndarray:
    """``tf.random.stateless_normal([n], seed=[tf_seed(seed), 0], stddev=stddev)``, float32."""
    groups = -(-int(n) // 4)
    u = _unit_floats(_stream(groups, tf_seed(seed), 0).ravel())
    z = np.empty(4 * groups, dtype=np.float32)
    _box_muller(u, z)
    return z[:n] * np.float32(stddev) + np.float32(0.0)  # rnd * stddev + mean, in float32


def stateless_uniform(n: int, seed: int, low: float, high: float) -> np.ndarray:
    """``tf.random.stateless_uniform([n], seed=[tf_seed(seed), 0], minval=low, maxval=high)``
    with ``low`` and ``high`` cast to float32 first (as Keras does), float32."""
    groups = -(-int(n) // 4)
    u = _unit_floats(_stream(groups, tf_seed(seed), 0).ravel())[:n]
    lo, hi = np.float32(low), np.float32(high)
    return u * (hi - lo) + lo
