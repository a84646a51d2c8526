"""The package's portable arithmetic (``recbias_tutorial._portable_math``), and every trainer
whose values are stored giving the same bits under other CPUs' settings.

A stored value is recomputed by ``tests/test_stored_results.py`` to 1e-12 on whatever machine
runs the tests, so the trainers must not depend on the CPU. On one machine the test stands
in for others: each setting below is what NumPy, OpenBLAS, numba and glibc would do on
another kind of x86-64 CPU (an AVX2 one without AVX-512; an old one with SSE3 only and no
FMA), set through their own switches, and ``tests/cross_cpu_fits.py`` trains small
configurations of every stored trainer in a subprocess under each; every weight and score
matrix must be bit-equal to the host's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from recbias_tutorial import _portable_math as pm

HERE = Path(__file__).parent
_AVX512 = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
_ALL = f"SSSE3 SSE41 POPCNT SSE42 AVX F16C FMA3 AVX2 {_AVX512}"
#: Another CPU, as each library sees it: NumPy's dispatched loops (``NPY_DISABLE_CPU_FEATURES``),
#: OpenBLAS's kernels (``OPENBLAS_CORETYPE``), numba's code generation (``NUMBA_CPU_NAME``) and
#: glibc's choice between its FMA and plain ``exp`` / ``log`` / ``pow`` (``glibc.cpu.hwcaps``).
CPU_SETTINGS = {
    "AVX2, no AVX-512": {"NPY_DISABLE_CPU_FEATURES": _AVX512, "OPENBLAS_CORETYPE": "Haswell",
                         "NUMBA_CPU_NAME": "haswell"},
    "SSE3 only, no FMA": {"NPY_DISABLE_CPU_FEATURES": _ALL, "OPENBLAS_CORETYPE": "Prescott",
                          "NUMBA_CPU_NAME": "generic",
                          "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX,-AVX512F,"
                                            "-AVX512DQ,-AVX512VL,-AVX512BW,-AVX512CD"},
}


# --------------------------------------------------------------------------------------
# the functions against NumPy's (accuracy) and against their own definitions
# --------------------------------------------------------------------------------------
def _ulps(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    finite = np.isfinite(ref)
    return np.abs(ours[finite] - ref[finite]) / np.spacing(np.abs(ref[finite]).astype(ref.dtype))


@pytest.mark.parametrize("low, high", [(-745.0, 709.7), (-1.0, 1.0), (-1e-9, 1e-9)])
def test_exp64_is_within_one_ulp_of_numpy(low, high):
    x = np.random.default_rng(0).uniform(low, high, 200_000)
    assert _ulps(pm.exp(x), np.exp(x)).max() <= 1.0


def test_log64_is_within_one_ulp_of_numpy():
    rng = np.random.default_rng(1)
    x = np.concatenate([np.exp(rng.uniform(-700, 700, 100_000)), rng.uniform(0.5, 2.0, 100_000),
                        [5e-324, 2.2250738585072014e-308, 1.0, 2.0]])
    assert _ulps(pm.log(x), np.log(x)).max() <= 1.0


def test_special_values_follow_ieee():
    e = pm.exp(np.array([np.nan, np.inf, -np.inf, 0.0, 710.0, -746.0]))
    assert np.isnan(e[0]) and e[1] == np.inf and e[2] == 0.0 and e[3] == 1.0
    assert e[4] == np.inf and e[5] == 0.0
    v = pm.log(np.array([np.nan, np.inf, 0.0, -1.0, 1.0]))
    assert np.isnan(v[0]) and v[1] == np.inf and v[2] == -np.inf and np.isnan(v[3]) and v[4] == 0.0


@pytest.mark.parametrize("fn, ref", [(pm.expf, np.exp), (pm.tanhf, np.tanh), (pm.expm1f, np.expm1)])
def test_float32_functions_are_within_one_float32_ulp(fn, ref):
    x = np.concatenate([np.random.default_rng(2).uniform(-20, 20, 20_000),
                        [0.0, 1e-30, -1e-30, 1e-6, -88.0, 88.0, 2e-4, -2e-4]]).astype(np.float32)
    ours = np.array([fn(v) for v in x], dtype=np.float32)
    exact = ref(x.astype(np.float64)).astype(np.float32)
    assert _ulps(ours, exact).max() <= 1.0


def test_sigmoid32_saturates_without_warnings():
    with np.errstate(all="raise"):
        s = pm.sigmoid32(np.array([-1e4, -50.0, 0.0, 100.0, 1e4], np.float32))
    assert s.dtype == np.float32 and s[0] == 0.0 and 0.0 < s[1] < 1e-21
    assert s[2] == 0.5 and s[3] == s[4] == 1.0


def test_matmul_sums_in_order_like_a_loop():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((7, 13)), rng.standard_normal((13, 5))
    loop = np.zeros((7, 5))
    for i in range(7):
        for j in range(5):
            for k in range(13):
                loop[i, j] += a[i, k] * b[k, j]
    np.testing.assert_array_equal(pm.matmul(a, b), loop)
    np.testing.assert_allclose(pm.matmul(a, b), a @ b, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(pm.matmul(a, b[:, 0]), loop[:, 0])  # a vector is a column
    f = pm.matmul(a.astype(np.float32), b)
    assert f.dtype == np.float32 and f.shape == (7, 5)
    assert pm.matmul(np.zeros((0, 3)), np.zeros((3, 2))).shape == (0, 2)


def test_power_int_is_repeated_squaring():
    n = np.arange(0, 3000)
    ours = pm.power_int(0.999, n)
    assert ours[0] == 1.0 and ours[1] == 0.999 and ours[2] == 0.999 * 0.999
    np.testing.assert_allclose(ours, 0.999 ** n.astype(float), rtol=1e-13)
    assert pm.powi(0.5, 3) == 0.125


@pytest.mark.parametrize("call, words", [
    (lambda: pm.matmul(np.ones((2, 3)), np.ones((2, 3))), "do not align"),
    (lambda: pm.matmul(np.ones(3), np.ones((3, 2))), "do not align"),
    (lambda: pm.power_int(0.9, [1, -1]), "n must be >= 0"),
])
def test_bad_inputs_are_refused(call, words):
    with pytest.raises(ValueError, match=words):
        call()


# --------------------------------------------------------------------------------------
# every stored trainer, bit for bit, under other CPUs' settings
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def world(tmp_path_factory):
    import recbias_tutorial as rb

    w = rb.simulate(160, 70, seed=7, mean_ratings_per_user=20, n_mar_users=120, n_mar_items=10)
    path = tmp_path_factory.mktemp("cpu") / "world.npz"
    np.savez(path, n_users=w.n_users, n_items=w.n_items,
             **{f"{k}_{c}": getattr(w, k)[c].to_numpy() for k in ("mnar", "mar")
                for c in ("user", "item", "rating")})
    return path


def _fits(world: Path, setting: dict) -> dict:
    env = {**os.environ, "RECBIAS_FIT_CACHE": "0", "RECBIAS_THREADS": "1", **setting}
    done = subprocess.run([sys.executable, str(HERE / "cross_cpu_fits.py"), str(world)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def host_fits(world):
    return _fits(world, {})


@pytest.mark.parametrize("cpu", sorted(CPU_SETTINGS))
def test_every_stored_trainer_gives_the_same_bits_on_another_cpu(world, host_fits, cpu):
    other = _fits(world, CPU_SETTINGS[cpu])
    assert set(other) == set(host_fits)
    assert len(host_fits) > 60  # every trainer was fitted (weights and scores)
    differ = sorted(k for k in host_fits if other[k] != host_fits[k])
    assert not differ, f"{cpu}: {len(differ)} of {len(host_fits)} fits differ: {differ}"


def test_the_settings_do_change_what_a_plain_numpy_program_computes(world):
    """The settings are not inert: BLAS and NumPy's exp give other bits under them."""
    code = ("import numpy as np, hashlib; r = np.random.default_rng(0); a = r.standard_normal((300, 120));"
            "b = r.standard_normal((120, 200)); x = r.uniform(-5, 5, 100000);"
            "print(hashlib.sha256((a @ b).tobytes()).hexdigest(), hashlib.sha256(np.power(np.float32(0.999),"
            " np.arange(30000, dtype=np.float32)).tobytes()).hexdigest())")
    out = {}
    for name, setting in [("host", {}), *CPU_SETTINGS.items()]:
        done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **setting},
                              capture_output=True, text=True, check=True)
        out[name] = done.stdout.split()
    if not any("AVX512F" in line for line in _cpu_flags()):
        pytest.skip("this CPU has no AVX-512: the host is already the AVX2 setting")
    assert out["host"][0] != out["SSE3 only, no FMA"][0]  # OpenBLAS's kernels
    assert out["host"][1] != out["AVX2, no AVX-512"][1]  # NumPy's float32 power


def _cpu_flags() -> list[str]:
    try:
        return [f.upper() for f in Path("/proc/cpuinfo").read_text().split() if f.startswith("avx512")]
    except OSError:
        return []


def test_a_compiled_kernel_cached_on_one_cpu_is_never_loaded_on_another():
    """numba keys each cached kernel by its signature, the code and the code generator's
    target (triple, CPU name and its features), so another CPU compiles its own."""
    from numba.core.registry import cpu_target

    from recbias_tutorial.models import _ncf_kernel

    kernel = _ncf_kernel.catch_up_all
    kernel(np.zeros((1, 1), np.float32), np.zeros((1, 1), np.float32),
           np.zeros((1, 1), np.float32), np.zeros(1, np.int64), 0, np.zeros(2),
           np.zeros((2, 2)), 0.9, 0.999, 1e-7)
    codegen = cpu_target.target_context.codegen()
    triple, cpu_name, features = codegen.magic_tuple()
    assert cpu_name and "+sse2" in features  # the CPU and every feature it has or lacks
    key = kernel._cache._index_key(kernel.signatures[0], codegen)
    assert key[1] == (triple, cpu_name, features)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matmul_without_numba_gives_the_loops_bits(dtype, monkeypatch):
    """NumPy's element-wise path (the core install's) equals the loop, across row blocks."""
    monkeypatch.setattr(pm, "_BLOCK", 64)  # many blocks of 4 rows, and a last short one
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((23, 9)).astype(dtype), rng.standard_normal((9, 16)).astype(dtype)
    loop, vectorised = np.empty((23, 16), dtype), np.empty((23, 16), dtype)
    pm._matmul(a, b, loop)
    pm._matmul_numpy(a, b, vectorised)
    np.testing.assert_array_equal(vectorised, loop)
