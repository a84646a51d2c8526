"""``make replicate``: replications at the authors' full scale, stored with provenance.

For each paper this writes ``book/results/<paper>/`` (small CSV files) and one
``provenance.json`` (package version, git commit, data checksums, seeds, the exact model list
and parameters, library versions, cores, wall time per dataset). The chapters read these files
and show them beside the paper's numbers; ``tests/test_stored_results.py`` recomputes a random
subsample of them on every build, so stale files fail CI.

Every fitted unit (the separate truth, each seed) goes through the package's result cache, so
an interrupted run resumes where it stopped (run the same command again). Units run in
``--n-jobs`` processes (default: every core); on a Dask cluster, wrap the call in
``joblib.parallel_config(backend="dask")`` after creating a ``distributed.Client`` (the package's
Dask path, :mod:`recbias_tutorial.distributed`, already needs ``dask.distributed``).

Implemented: ``jadidinejad2021`` (Table 6 on Coat and Yahoo! R3, the authors' whole
Cornac-native zoo, five seeds). Run: ``make replicate`` or
``RECBIAS_DATA=../shared/data .venv/bin/python scripts/replicate.py [--datasets yahoo_r3]``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import resource
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

import recbias_tutorial as rb
from recbias_tutorial.data import _registry
from recbias_tutorial.replications import jadidinejad2021 as jad

ROOT = Path(__file__).resolve().parents[1]
#: The full-scale protocol of Jadidinejad et al. (their Table 6): the cut-offs, seeds and zoo.
JADIDINEJAD = dict(seeds=(0, 1, 2, 3, 4), ks=(None, 5, 10, 20, 30, 100), n_strata=2,
                   sizes=jad.AUTHORS_SIZES, families=jad.AUTHORS_FAMILIES, zoos=("authors",))


def model_parameters() -> dict:
    """Each model of the authors' zoo: its Cornac class and constructor parameters."""
    out = {}
    for name, model in jad.authors_zoo().items():
        params = {p: getattr(model, p) for p in inspect.signature(type(model).__init__).parameters
                  if p not in ("self", "args", "kwargs") and hasattr(model, p)}
        out[name] = {"class": f"{type(model).__module__}.{type(model).__name__}",
                     "params": {k: (v if isinstance(v, (int, float, str, bool, type(None)))
                                    else repr(v)) for k, v in params.items()}}
    return out


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def environment(n_jobs: int) -> dict:
    import cornac
    import joblib
    import scipy

    return {"package": rb.__version__, "git_commit": _git("rev-parse", "HEAD"),
            "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
            "python": platform.python_version(),
            "libraries": {"numpy": np.__version__, "pandas": pd.__version__,
                          "scipy": scipy.__version__, "cornac": cornac.__version__,
                          "joblib": joblib.__version__},
            "cores": os.cpu_count(), "n_jobs": n_jobs, "machine": platform.machine()}


def run_jadidinejad(datasets: list[str], n_jobs: int, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    provenance_file = out / "provenance.json"
    old = json.loads(provenance_file.read_text()) if provenance_file.exists() else {}
    provenance = {"paper": "jadidinejad2021", **environment(n_jobs),
                  "protocol": {k: (list(v) if isinstance(v, tuple) else v)
                               for k, v in JADIDINEJAD.items()},
                  "families_left_out": list(jad.LEFT_OUT_FAMILIES),
                  "models": model_parameters(),
                  "datasets": old.get("datasets", {})}
    for name in datasets:
        data = rb.load(name)
        start = time.perf_counter()
        values = jad.protocol_values(data, progress=True, n_jobs=n_jobs, **JADIDINEJAD)
        wall = time.perf_counter() - start
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)  # reaped workers count in RUSAGE_CHILDREN
        rows = jad.protocol_rows(values, protocol="authors", n_strata=JADIDINEJAD["n_strata"])
        rows.to_csv(out / f"{name}.csv", index=False, float_format="%.17g")
        provenance["datasets"][name] = {
            "file": f"{name}.csv", "rows": len(rows),
            "models": int(rows["model"].nunique()),
            "data_sha256": {f: h for f, h in _registry.SHA256[name].items() if h},
            "wall_seconds": round(wall, 1),
            "read_from_cache": bool(values.attrs.get("cached")),
            "unit_seconds": {k: round(v, 1) for k, v in values.attrs["seconds"].items()},
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "peak_rss_workers_mb": round(
                resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)}
        print(f"{name}: {rows['model'].nunique()} models, {len(rows)} rows, {wall:.0f} s")
    provenance_file.write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["coat", "yahoo_r3"])
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--out", type=Path, default=ROOT / "book" / "results")
    args = parser.parse_args()
    run_jadidinejad(args.datasets, args.n_jobs, args.out / "jadidinejad2021")


if __name__ == "__main__":
    main()
