"""Floating-point kernels that give the same bits on every x86-64 CPU (private).

A trained model's weights, and the metrics read off its scores, are stored by
``make replicate`` and recomputed by the tests to 1e-12, so every step of a training loop
and of scoring must round the same way on every machine. Three things in a plain NumPy
program do not:

* **BLAS** (``@``, ``np.dot``, ``np.linalg``): OpenBLAS picks its kernels for the CPU it
  runs on (SkylakeX, Haswell, Zen, ...), and their sums run in different orders;
* **NumPy's dispatched transcendental loops** (``np.exp``, ``np.log``, ``np.power``,
  ``np.expm1``, ``np.tanh``...): on a CPU with AVX-512 NumPy uses its own SIMD code (or
  SVML), elsewhere the C library's, and the last bit differs;
* **the C library's** ``exp``, ``log``, ``pow`` (which compiled kernels call): glibc picks
  an FMA or a plain variant at load time.

Everything here is built from additions, multiplications, divisions, square roots and
``ldexp`` / ``frexp``, which IEEE 754 rounds exactly the same way on every CPU, in a fixed
order, compiled without fast-math (so no reassociation and no fused multiply-add): the
result does not depend on the CPU, the SIMD width or the libraries loaded.
``tests/test_portable.py`` trains and scores under other CPUs' settings
(``NPY_DISABLE_CPU_FEATURES``, ``OPENBLAS_CORETYPE``, ``NUMBA_CPU_NAME=generic``, glibc's
hardware capabilities masked) in subprocesses and asserts bit-equal results.

The elementary functions follow fdlibm (Sun's freely distributable libm, the algorithms of
most C libraries): ``exp`` and ``log`` within 1 ulp. The float32 ones are computed in
float64 and rounded once more.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import HAVE_NUMBA, numba  # Numba, or the same code run as Python without it

_JIT = dict(cache=True, fastmath=False, error_model="numpy", nogil=True)

# fdlibm's constants (e_exp.c, e_log.c)
_LN2_HI = 6.93147180369123816490e-01  # ln 2's upper 32 bits: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_EXP_MAX = 709.782712893383973096  # above: overflow
_EXP_MIN = -745.13321910194110842  # below: underflow to 0
_P1, _P2, _P3 = 1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05
_P4, _P5 = -1.65339022054652515390e-06, 4.13813679705723846039e-08
_LG1, _LG2, _LG3 = 6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01
_LG4, _LG5 = 2.222219843214978396e-01, 1.818357216161805012e-01
_LG6, _LG7 = 1.531383769920937332e-01, 1.479819860511658591e-01
_SQRT_HALF = 0.70710678118654752440


@numba.njit(**_JIT)
def exp64(x):  # pragma: no cover (compiled)
    """``exp(x)`` of a float64 (fdlibm's ``__ieee754_exp``: ``x = k ln2 + r``, a rational
    approximation of ``exp(r)`` on ``|r| <= ln2 / 2``, then ``2^k``)."""
    if x != x:
        return x
    if x > _EXP_MAX:
        return math.inf
    if x < _EXP_MIN:
        return 0.0
    if abs(x) < 3.725290298461914e-09:  # 2^-28: exp(x) rounds to 1 + x
        return 1.0 + x
    k = math.floor(x * _INV_LN2 + 0.5)
    hi = x - k * _LN2_HI
    lo = k * _LN2_LO
    r = hi - lo
    t = r * r
    c = r - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
    y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
    return math.ldexp(y, int(k))


@numba.njit(**_JIT)
def log64(x):  # pragma: no cover (compiled)
    """``log(x)`` of a float64 (fdlibm's ``__ieee754_log``: ``x = 2^k (1 + f)`` with
    ``sqrt(2)/2 <= 1 + f < sqrt(2)``, then a series in ``s = f / (2 + f)``)."""
    if x != x:
        return x
    if x < 0.0:
        return math.nan
    if x == 0.0:
        return -math.inf
    if x == math.inf:
        return x
    m, e = math.frexp(x)  # exact, subnormals included
    if m < _SQRT_HALF:
        m *= 2.0
        e -= 1
    f = m - 1.0
    k = float(e)
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    r = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7))) + w * (_LG2 + w * (_LG4 + w * _LG6))
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


@numba.njit(**_JIT)
def powi(x, n):  # pragma: no cover (compiled)
    """``x ** n`` for a float64 ``x`` and an integer ``n >= 0``, by repeated squaring (the
    C library's ``pow``, which ``x ** n`` calls in compiled code, has CPU variants)."""
    result = 1.0
    base = x
    while n > 0:
        if n & 1:
            result *= base
        base *= base
        n >>= 1
    return result


@numba.njit(**_JIT)
def _powi_array(x, n, out):  # pragma: no cover (compiled)
    for p in range(n.size):
        out[p] = powi(x, n[p])


def power_int(x: float, n) -> np.ndarray:
    """``x ** n`` for a float ``x`` and an array of integers ``n >= 0``, as float64, the
    same bits on every CPU (:func:`powi`; ``np.power`` has CPU variants)."""
    n = np.ascontiguousarray(n, dtype=np.int64)
    if n.size and n.min() < 0:
        raise ValueError("power_int: the exponents n must be >= 0")
    out = np.empty(n.shape, dtype=np.float64)
    _powi_array(float(x), n.reshape(-1), out.reshape(-1))
    return out


@numba.njit(**_JIT)
def expf(x):  # pragma: no cover (compiled)
    """``exp`` of a float32, as a float32 (:func:`exp64` rounded)."""
    return np.float32(exp64(np.float64(x)))


@numba.njit(**_JIT)
def expm1f(x):  # pragma: no cover (compiled)
    """``exp(x) - 1`` of a float32, as a float32 (in float64: the cancellation costs at most
    3e-9 relative where it is not ``x`` itself, far below float32's 6e-8)."""
    xd = np.float64(x)
    if abs(xd) < 2.9802322387695312e-08:  # 2^-25: expm1(x) rounds to x in float32
        return np.float32(x)
    return np.float32(exp64(xd) - 1.0)


@numba.njit(**_JIT)
def tanhf(x):  # pragma: no cover (compiled)
    """``tanh`` of a float32, as a float32 (``1 - 2 / (exp(2|x|) + 1)`` in float64)."""
    xd = np.float64(x)
    ax = abs(xd)
    if ax != ax:
        return np.float32(x)
    if ax < 2.44140625e-04:  # 2^-12: tanh(x) rounds to x in float32
        return np.float32(x)
    r = 1.0 if ax > 9.1 else 1.0 - 2.0 / (exp64(2.0 * ax) + 1.0)
    return np.float32(-r if xd < 0.0 else r)


@numba.njit(**_JIT)
def _exp_array(x, out):  # pragma: no cover (compiled)
    for n in range(x.size):
        out[n] = exp64(x[n])


@numba.njit(**_JIT)
def _log_array(x, out):  # pragma: no cover (compiled)
    for n in range(x.size):
        out[n] = log64(x[n])


@numba.njit(**_JIT)
def _sigmoid32_array(z, out):  # pragma: no cover (compiled)
    one = np.float32(1.0)
    for n in range(z.size):
        out[n] = one / (one + expf(-z[n]))


@numba.njit(**_JIT)
def _tanh32_array(x, out):  # pragma: no cover (compiled)
    for n in range(x.size):
        out[n] = tanhf(x[n])


@numba.njit(**_JIT)
def _expm1_32_array(x, out):  # pragma: no cover (compiled)
    for n in range(x.size):
        out[n] = expm1f(x[n])


def _elementwise(kernel, x: np.ndarray, dtype) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=dtype)
    out = np.empty_like(x)
    kernel(x.reshape(-1), out.reshape(-1))
    return out


def exp(x) -> np.ndarray:
    """``np.exp`` of a float64 array, the same bits on every CPU (:func:`exp64`)."""
    return _elementwise(_exp_array, x, np.float64)


def log(x) -> np.ndarray:
    """``np.log`` of a float64 array, the same bits on every CPU (:func:`log64`)."""
    return _elementwise(_log_array, x, np.float64)


def sigmoid32(z) -> np.ndarray:
    """``1 / (1 + exp(-z))`` in float32 (TensorFlow's order), the same bits on every CPU."""
    return _elementwise(_sigmoid32_array, z, np.float32)


def tanh32(x) -> np.ndarray:
    """``np.tanh`` of a float32 array, the same bits on every CPU (:func:`tanhf`)."""
    return _elementwise(_tanh32_array, x, np.float32)


def expm1_32(x) -> np.ndarray:
    """``np.expm1`` of a float32 array, the same bits on every CPU (:func:`expm1f`)."""
    return _elementwise(_expm1_32_array, x, np.float32)


@numba.njit(**_JIT)
def _matmul(a, b, out):  # pragma: no cover (compiled)
    """``out = a @ b``; every ``out[i, j]`` summed over ``k`` in order, from 0, in the
    output's dtype (the loop over ``j`` is vectorised without reordering any sum)."""
    n_k, n_j = b.shape
    for i in range(a.shape[0]):
        row = out[i]
        for j in range(n_j):
            row[j] = 0.0
        for k in range(n_k):
            aik = a[i, k]
            bk = b[k]
            for j in range(n_j):
                row[j] += aik * bk[j]


#: entries of ``out`` per block of rows in :func:`_matmul_numpy` (the block stays in cache)
_BLOCK = 1 << 15


def _matmul_numpy(a, b, out) -> None:
    """:func:`_matmul` without Numba: the same products and sums in the same order (the loop
    over ``j``, and over a block of rows, done by NumPy's element-wise multiply and add, which
    round each operation as the loop does), at NumPy's speed rather than Python's."""
    n_k, n_j = b.shape
    rows = max(1, _BLOCK // max(1, n_j))
    product = np.empty((min(rows, a.shape[0]), n_j), dtype=out.dtype)
    for start in range(0, a.shape[0], rows):
        block = out[start:start + rows]
        part = product[:len(block)]
        block[...] = 0.0
        for k in range(n_k):
            np.multiply(a[start:start + rows, k, None], b[k], out=part)
            block += part


def matmul(a, b) -> np.ndarray:
    """``a @ b`` of two 2-D float arrays, the same bits on every CPU (no BLAS).

    The result has ``a``'s dtype (float32 or float64; ``b`` is cast to it); each entry is
    the sum over ``k`` of ``a[i, k] * b[k, j]`` taken in order. A 1-D ``b`` is a column.
    On the shapes the package multiplies (a block of users' factors times the items', 10 to
    100 factors) it takes 2.6 to 4.5 times single-threaded OpenBLAS's CPU time
    (``benchmarks/bench_portable.py``), small beside training and ranking.
    """
    a = np.asarray(a)
    dtype = np.float32 if a.dtype == np.float32 else np.float64
    a = np.ascontiguousarray(a, dtype=dtype)
    b = np.asarray(b)
    vector = b.ndim == 1
    b = np.ascontiguousarray(b[:, None] if vector else b, dtype=dtype)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not align")
    out = np.empty((a.shape[0], b.shape[1]), dtype=dtype)
    if out.size:
        (_matmul if HAVE_NUMBA else _matmul_numpy)(a, b, out)
    return out[:, 0] if vector else out
