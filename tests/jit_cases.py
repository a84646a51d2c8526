"""Every compiled loop of the package on small inputs, for ``tests/test_jit.py``.

``python tests/jit_cases.py OUT.npz`` computes each case and saves its arrays; the test runs it
twice, once as usual (Numba) and once with ``RECBIAS_NUMBA=0`` (the kernels' own bodies run as
Python, as in the core install), and compares the two bit for bit. Public entry points are
called where there is one (a Cornac model fitted through ``fit_scores``), so what is compared
is what a user gets; the inputs are small because the Python path runs one cell at a time.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd


def _ratings(seed: int, n_users: int, n_items: int, n_rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"user": rng.integers(0, n_users, n_rows * 2),
                          "item": rng.integers(0, n_items, n_rows * 2)})
    frame = frame.drop_duplicates().head(n_rows).reset_index(drop=True)
    frame["rating"] = rng.integers(1, 6, len(frame)).astype(float)
    return frame


def ranking() -> dict[str, np.ndarray]:
    """``_ranking_kernels.exact_positions_into`` (ties included), float32 and float64 scores."""
    from recbias_tutorial._ranking_kernels import exact_positions_into

    rng = np.random.default_rng(0)
    out = {}
    for dtype in (np.float32, np.float64):
        m = rng.integers(0, 6, (7, 40)).astype(dtype)  # many ties
        local = rng.integers(0, 7, 30).astype(np.int64)
        items = rng.integers(0, 40, 30).astype(np.int64)
        s = m[local, items]
        z = np.empty(30, np.int64)
        exact_positions_into(m, local, s, items, z)
        out[f"ranking_{np.dtype(dtype).name}"] = z
    return out


def pmf() -> dict[str, np.ndarray]:
    """Cornac's PMF through ``fit_scores`` (``_pmf_kernel.pmf_epochs``), both variants."""
    import cornac

    from recbias_tutorial.models import fit_scores

    frame = _ratings(1, 20, 15, 120)
    return {f"pmf_{variant}": fit_scores(
        cornac.models.PMF(k=3, variant=variant, seed=7, max_iter=5), frame, n_users=20,
        n_items=15, seed=0, cache=False) for variant in ("linear", "non_linear")}


def tf_random() -> dict[str, np.ndarray]:
    """TensorFlow's stateless Philox streams (``_tf_random``)."""
    from recbias_tutorial.models._tf_random import stateless_normal, stateless_uniform

    return {"tf_normal": stateless_normal(37, 123, 0.01),
            "tf_uniform": stateless_uniform(29, 2**31 - 3, -0.5, 0.5)}


def ncf() -> dict[str, np.ndarray]:
    """GMF, MLP and NeuMF trained by the package's NumPy trainer (``_ncf_kernel``), one epoch
    each, two of them with an L2 penalty (the kernel's dense branch)."""
    import cornac

    from recbias_tutorial.models import fit_scores

    frame = _ratings(2, 12, 10, 50)
    kinds = {"GMF": dict(num_factors=3), "MLP": dict(layers=(6, 4), act_fn="tanh"),
             "NeuMF": dict(num_factors=2, layers=(4, 2), reg=0.01)}
    return {f"ncf_{kind}": fit_scores(
        getattr(cornac.models, kind)(backend="numpy", seed=3, num_epochs=2, batch_size=16,
                                     num_neg=2, verbose=False, **options),
        frame, n_users=12, n_items=10, seed=0, cache=False) for kind, options in kinds.items()}


def ranksys() -> dict[str, np.ndarray]:
    """RankSys's implicit ALS (``carraro2022._ranksys._rr1_rows``)."""
    from recbias_tutorial.models import fit_scores
    from recbias_tutorial.replications.carraro2022._ranksys import ImplicitALS

    frame = _ratings(3, 15, 12, 60)
    return {"ranksys_als": fit_scores(ImplicitALS(k=2, n_iter=3), frame, n_users=15, n_items=12,
                                      seed=0, cache=False)}


def portable_matmul() -> dict[str, np.ndarray]:
    """``_portable_math.matmul`` (Numba's loop, or NumPy's element-wise path without it), on
    shapes with more entries than one block of rows, in float32 and float64."""
    from recbias_tutorial._portable_math import matmul

    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((700, 37)), rng.standard_normal((37, 90))
    return {"matmul_float64": matmul(a, b), "matmul_float32": matmul(a.astype(np.float32), b),
            "matmul_vector": matmul(a, b[:, 0])}


CASES = (ranking, pmf, tf_random, ncf, ranksys, portable_matmul)


def compute() -> dict[str, np.ndarray]:
    out = {}
    for case in CASES:
        out.update(case())
    return out


if __name__ == "__main__":
    from recbias_tutorial._jit import HAVE_NUMBA

    arrays = compute()
    np.savez(sys.argv[1], **arrays, compiled=np.array(HAVE_NUMBA))
