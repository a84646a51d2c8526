"""The compiled loops without Numba: the same code run as Python gives the same numbers.

The core install has no Numba (the browser edition's Python has none): ``recbias_tutorial._jit``
then hands every kernel's own body to Python. ``tests/jit_cases.py`` runs each kernel on small
inputs, here once compiled and once with ``RECBIAS_NUMBA=0``, and every array must be equal bit
for bit (float32 and float64 arithmetic alike: one order of operations, no fast-math).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
pytest.importorskip("numba")


def _run(out: Path, numba: bool) -> dict[str, np.ndarray]:
    env = {**os.environ, "RECBIAS_NUMBA": "1" if numba else "0", "RECBIAS_FIT_CACHE": "0"}
    done = subprocess.run([sys.executable, str(HERE / "jit_cases.py"), str(out)], env=env,
                          capture_output=True, text=True, cwd=HERE.parent)
    assert done.returncode == 0, done.stderr[-4000:]
    with np.load(out) as arrays:
        return {name: arrays[name] for name in arrays.files}


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> tuple[dict, dict]:
    tmp = tmp_path_factory.mktemp("jit")
    return _run(tmp / "compiled.npz", True), _run(tmp / "python.npz", False)


def test_the_switch_turns_numba_off(both):
    compiled, python = both
    assert bool(compiled.pop("compiled")) and not bool(python.pop("compiled"))


#: Cases whose kernel calls exp / log / sin / cos: NumPy's (the Python path) and LLVM's (Numba)
#: may differ in the last bit, so here the two agree to float32 rounding, not bit for bit.
#: Issue 52 builds those functions from + - * / and sqrt inside the kernels; then these
#: become bit-equal too, the strict xfail below fails, and this set must be emptied.
TRANSCENDENTAL = {"pmf_non_linear", "tf_normal"}
NAMES = ["ranking_float32", "ranking_float64", "pmf_linear", "pmf_non_linear", "tf_normal",
         "tf_uniform", "ncf_GMF", "ncf_MLP", "ncf_NeuMF", "ranksys_als", "matmul_float64",
         "matmul_float32", "matmul_vector"]


def test_every_case_is_compared(both):
    compiled, python = both
    assert sorted(set(compiled) - {"compiled"}) == sorted(NAMES)
    assert sorted(set(python) - {"compiled"}) == sorted(NAMES)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(
        strict=True, reason="PMF's expf and the TF normals' logf/sinf/cosf: the C library's "
                            "when compiled, NumPy's in Python (README: the same bits on every CPU)"))
    if n in TRANSCENDENTAL else n for n in NAMES])
def test_every_kernel_gives_the_same_bits_as_python(both, name):
    a, b = both[0][name], both[1][name]
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), (
        f"{int(np.sum(a != b))} of {a.size} values differ, by up to "
        f"{np.max(np.abs(a.astype(float) - b.astype(float))):.3g}")


@pytest.mark.parametrize("name", sorted(TRANSCENDENTAL))
def test_kernels_with_exp_or_log_agree_to_float32_rounding(both, name):
    a, b = both[0][name], both[1][name]
    # one float32 ulp of a sigmoid or a normal draw, carried through a few epochs
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * float(np.max(np.abs(a))))


def test_without_numba_the_package_never_imports_it():
    code = ("import sys, recbias_tutorial as rb\n"
            "w = rb.simulate(30, 20, seed=0, mean_ratings_per_user=4)\n"
            "rb.aoa(w.propensity, w.full, k=None, metric='auc')\n"
            "from recbias_tutorial._ranking import exact_positions\n"
            "import numpy as np\n"
            "m = np.arange(12.0).reshape(3, 4)\n"
            "z = exact_positions(m, np.array([0, 2]), np.array([1.0, 8.0]), np.array([1, 0]),"
            " compiled=True)\n"
            "assert z.tolist() == [2, 3], z\n"
            "assert 'numba' not in sys.modules\n")
    env = {**os.environ, "RECBIAS_NUMBA": "0"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
