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

Implemented:

* ``jadidinejad2021``: Table 6 on Coat and Yahoo! R3, the authors' whole Cornac-native zoo,
  five seeds;
* ``carraro2022``: Tables 3-5 and Figure 4 on Coat and Yahoo! R3 with every user who has MAR
  ratings, the paper's hyper-parameter grid (tuned on the first repetition's D_val) and its
  10 repetitions (one repetition per worker).

Run: ``make replicate`` or ``RECBIAS_DATA=../shared/data .venv/bin/python scripts/replicate.py
[--papers carraro2022] [--datasets yahoo_r3]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
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
from joblib import Parallel, delayed
from tqdm.std import tqdm

import recbias_tutorial as rb
from recbias_tutorial.data import _registry
from recbias_tutorial.replications import carraro2022
from recbias_tutorial.replications import jadidinejad2021 as jad

ROOT = Path(__file__).resolve().parents[1]
#: The full-scale protocol of Jadidinejad et al. (their Table 6): the cut-offs, seeds and zoo.
JADIDINEJAD = dict(seeds=(0, 1, 2, 3, 4), ks=(None, 5, 10, 20, 30, 100), n_strata=2,
                   sizes=jad.AUTHORS_SIZES, families=jad.AUTHORS_FAMILIES, zoos=("authors",))
#: Carraro & Bridge's protocol (§4): 10 repetitions ("averaged over 10 runs with different
#: random splits"), every rho_p, the chapter's item exponent of WTD_H.
CARRARO = dict(seeds=tuple(range(10)), item_power=2.0)
#: Where the authors' neural families (jad.NEURAL_FAMILIES) run when TensorFlow is installed.
#: Not on Yahoo! R3: its log is 45 times Coat's, and on Coat the 31 neural models already
#: take most of the run (see each dataset's unit_seconds), so Yahoo! R3 would take days here.
NEURAL_DATASETS = ("coat",)


def has_tensorflow() -> bool:
    return importlib.util.find_spec("tensorflow") is not None


def describe(model) -> dict:
    """A Cornac model's class and constructor parameters (as stored in provenance.json)."""
    params = {p: getattr(model, p) for p in inspect.signature(type(model).__init__).parameters
              if p not in ("self", "args", "kwargs", "verbose") and hasattr(model, p)}
    return {"class": f"{type(model).__module__}.{type(model).__name__}",
            "params": {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v))
                       for k, v in params.items()}}


def jadidinejad_families(name: str, neural_datasets=NEURAL_DATASETS) -> tuple[str, ...]:
    """The authors' families that run on one dataset: the neural ones with TensorFlow only."""
    neural = has_tensorflow() and name in neural_datasets
    return tuple(jad.AUTHORS_FAMILIES) + (tuple(jad.NEURAL_FAMILIES) if neural else ())


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


#: The commit whose code this run imported (HEAD may move while a long run goes on).
START_COMMIT = _git("rev-parse", "HEAD")


def environment(n_jobs: int) -> dict:
    import cornac
    import joblib
    import scipy

    return {"package": rb.__version__, "git_commit": START_COMMIT,
            "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
            "python": platform.python_version(),
            "libraries": {"numpy": np.__version__, "pandas": pd.__version__,
                          "scipy": scipy.__version__, "cornac": cornac.__version__,
                          "joblib": joblib.__version__},
            "cores": os.cpu_count(), "n_jobs": n_jobs, "machine": platform.machine()}


def _peak_memory() -> dict:
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)  # reaped workers count in RUSAGE_CHILDREN
    return {"peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "peak_rss_workers_mb": round(
                resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)}


def _dataset_record(name: str, rows: pd.DataFrame, wall: float, **extra) -> dict:
    """The provenance of one dataset's file: checksums, size, wall time, memory."""
    return {"file": f"{name}.csv", "rows": len(rows), "models": int(rows["model"].nunique()),
            "git_commit": START_COMMIT,
            "data_sha256": {f: h for f, h in _registry.SHA256[name].items() if h},
            "wall_seconds": round(wall, 1), **extra, **_peak_memory()}


def _provenance(out: Path, paper: str, n_jobs: int, **fields) -> dict:
    """A paper's provenance: this run's environment, keeping other datasets' records."""
    out.mkdir(parents=True, exist_ok=True)
    old = out / "provenance.json"
    old = json.loads(old.read_text()) if old.exists() else {}
    datasets = old.get("datasets", {})
    for record in datasets.values():  # a dataset not re-run keeps the commit it was run at
        record.setdefault("git_commit", old.get("git_commit"))
    return {"paper": paper, **environment(n_jobs), **fields, "datasets": datasets}


def _write(out: Path, provenance: dict) -> None:
    (out / "provenance.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")


def run_jadidinejad(datasets: list[str], n_jobs: int, out: Path) -> None:
    provenance = _provenance(out, "jadidinejad2021", n_jobs,
                             protocol={k: (list(v) if isinstance(v, tuple) else v)
                                       for k, v in JADIDINEJAD.items()},
                             neural_families=list(jad.NEURAL_FAMILIES),
                             neural_datasets=list(NEURAL_DATASETS),
                             models={m: describe(model) for m, model in jad.authors_zoo(
                                 families=jad.AUTHORS_FAMILIES + (jad.NEURAL_FAMILIES if
                                                                  has_tensorflow() else ())
                             ).items()})
    provenance.pop("families_left_out", None)
    for name in datasets:
        data = rb.load(name)
        families = jadidinejad_families(name)
        start = time.perf_counter()
        values = jad.protocol_values(data, progress=True, n_jobs=n_jobs,
                                     **{**JADIDINEJAD, "families": families})
        wall = time.perf_counter() - start
        rows = jad.protocol_rows(values, protocol="authors", n_strata=JADIDINEJAD["n_strata"])
        rows.to_csv(out / f"{name}.csv", index=False, float_format="%.17g")
        not_run = [f for f in jad.LEFT_OUT_FAMILIES if f not in families]
        provenance["datasets"][name] = _dataset_record(
            name, rows, wall, read_from_cache=bool(values.attrs.get("cached")),
            families=list(families), families_not_run=not_run,
            why_not_run=(None if not not_run else "TensorFlow is not installed (the neural "
                         "extra)" if not has_tensorflow() else "run time (NEURAL_DATASETS)"),
            unit_seconds={k: round(v, 1) for k, v in values.attrs["seconds"].items()})
        print(f"{name}: {rows['model'].nunique()} models, {len(rows)} rows, {wall:.0f} s")
        _write(out, provenance)


# --------------------------------------------------------------------------------------
# Carraro & Bridge (2022): all users with MAR data, the paper's grid, its 10 repetitions
# --------------------------------------------------------------------------------------
def carraro_data(data):
    """The paper's data (§4.1: the users with MAR ratings, all of them), with the chapter's
    rule that MAR pairs also in the log are dropped (chapter 3 explains the leak)."""
    data = rb.data.restrict_to_mar_users(data)
    return dataclasses.replace(data, mar=rb.drop_seen(data.mar, data.mnar))


def carraro_tune(data, grid: dict, *, seed: int) -> pd.DataFrame:
    """:func:`carraro2022.tune` of one model's settings, kept in the result cache."""
    from recbias_tutorial._result_cache import cached_result
    from recbias_tutorial.models._cache import model_tokens

    tokens = model_tokens({s: f() for model in grid.values() for s, f in model.items()})
    frames, _ = cached_result("carraro2022.tune", data, None if tokens is None else
                              {"seed": seed, "models": tokens},
                              lambda: {"table": carraro2022.tune(data, grid, seed=seed)},
                              cache=None)
    return frames["table"]


def carraro_chosen(data, n_jobs: int) -> tuple[dict, pd.DataFrame]:
    """The paper's grid tuned on the first repetition's D_val: chosen factories, the grid."""
    grid = carraro2022.paper_grid()
    tables = Parallel(n_jobs=n_jobs)(  # one model's settings per worker
        delayed(carraro_tune)(data, {model: settings}, seed=CARRARO["seeds"][0])
        for model, settings in grid.items())
    tuning = pd.concat(tables, ignore_index=True)
    chosen = {r.model: grid[r.model][r.setting] for r in tuning[tuning["best"]].itertuples()}
    return chosen, tuning


def run_carraro(datasets: list[str], n_jobs: int, out: Path) -> None:
    provenance = _provenance(out, "carraro2022", n_jobs,
                             protocol={**CARRARO, "seeds": list(CARRARO["seeds"]),
                                       "grid": carraro2022.PAPER_GRID,
                                       "users": "every user with MAR ratings (§4.1)",
                                       "mar_pairs_in_log": "dropped (the course's rule)"},
                             models=old_models(out))
    for name in datasets:
        start = time.perf_counter()
        data = carraro_data(rb.load(name))
        chosen, tuning = carraro_chosen(data, n_jobs)
        seeds = list(CARRARO["seeds"])
        args = {k: v for k, v in CARRARO.items() if k != "seeds"}
        run = Parallel(n_jobs=n_jobs, return_as="generator")(  # one repetition per worker
            delayed(carraro2022.run_protocol)(data, chosen, seeds=[s], **args) for s in seeds)
        parts = list(tqdm(run, total=len(seeds), unit="repetition", desc=f"{name}: repetitions"))
        wall = time.perf_counter() - start
        rows = pd.concat([p.metrics for p in parts], ignore_index=True)
        rows.to_csv(out / f"{name}.csv", index=False, float_format="%.17g")
        provenance["models"][name] = {
            "chosen": {m: {"setting": tuning.query("model == @m and best")["setting"].iloc[0],
                           **describe(f())} for m, f in chosen.items()},
            "tuning_recall_at_10": {m: dict(zip(g["setting"], g["recall"]))
                                    for m, g in tuning.groupby("model", sort=False)}}
        provenance["datasets"][name] = _dataset_record(
            name, rows, wall, users=data.n_users, items=data.n_items,
            read_from_cache=all(bool(p.metrics.attrs.get("cached")) for p in parts))
        print(f"{name}: {data.n_users} users, {rows['model'].nunique()} models, "
              f"{len(rows)} rows, {wall:.0f} s")
        _write(out, provenance)


def old_models(out: Path) -> dict:
    path = out / "provenance.json"
    return json.loads(path.read_text()).get("models", {}) if path.exists() else {}


PAPERS = {"jadidinejad2021": run_jadidinejad, "carraro2022": run_carraro}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["coat", "yahoo_r3"])
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--papers", nargs="+", default=list(PAPERS), choices=list(PAPERS))
    parser.add_argument("--out", type=Path, default=ROOT / "book" / "results")
    args = parser.parse_args()
    for paper in args.papers:
        PAPERS[paper](args.datasets, args.n_jobs, args.out / paper)


if __name__ == "__main__":
    main()
