"""What the CPU-independent arithmetic costs (``recbias_tutorial._portable_math``).

Side by side in one run, CPU seconds (``time.process_time``, best of five, so that other jobs
on a shared machine cost less): the BLAS-free product against NumPy's ``@`` (OpenBLAS,
single-threaded for a fair ratio) on the shapes the package multiplies — a block of users'
factors times the items' (Yahoo! R3: 1,000 items; 10 to 100 factors; float64 for MF/BPR/PMF,
float32 for NCF) — and ``exp`` / float32 sigmoid against NumPy's. Prints a JSON line per case.

Run: ``.venv/bin/python benchmarks/bench_portable.py``.
"""

from __future__ import annotations

import json
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads OpenBLAS

import numpy as np  # noqa: E402

from recbias_tutorial import _portable_math as pm  # noqa: E402


def best(fn, repeat: int = 5) -> float:
    fn()  # compile / warm
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        for users, factors, items in ((2000, 10, 1000), (2000, 100, 1000), (500, 50, 20000)):
            a = rng.standard_normal((users, factors)).astype(dtype)
            b = rng.standard_normal((factors, items)).astype(dtype)
            ours, blas = best(lambda: pm.matmul(a, b)), best(lambda: a @ b)
            print(json.dumps({"case": "matmul", "dtype": np.dtype(dtype).name,
                              "shape": [users, factors, items], "portable_s": round(ours, 4),
                              "blas_s": round(blas, 4), "ratio": round(ours / blas, 1)}))
    x = rng.uniform(-20, 20, 2_000_000)
    ours, numpy = best(lambda: pm.exp(x)), best(lambda: np.exp(x))
    print(json.dumps({"case": "exp float64", "n": x.size, "portable_s": round(ours, 4),
                      "numpy_s": round(numpy, 4), "ratio": round(ours / numpy, 1)}))
    z = x.astype(np.float32)
    ours = best(lambda: pm.sigmoid32(z))
    numpy = best(lambda: np.float32(1) / (np.float32(1) + np.exp(-z)))
    print(json.dumps({"case": "sigmoid float32", "n": z.size, "portable_s": round(ours, 4),
                      "numpy_s": round(numpy, 4), "ratio": round(ours / numpy, 1)}))


if __name__ == "__main__":
    main()
