"""``make replicate``: replications at the authors' full scale, stored with provenance.

For each paper this writes ``recbias_tutorial/results/<paper>/`` (small CSV files, package data,
so any notebook that imports the package finds them) and one ``provenance.json`` (each file's
sha256, package version, git commit, data checksums, seeds, the exact model list
and parameters, library versions, cores, wall time per dataset). The chapters read these files
and show them beside the paper's numbers; ``tests/test_stored_results.py`` recomputes a random
subsample of them on every build, so stale files fail CI.

Every fitted unit (the separate truth, each seed) goes through the package's result cache, so
an interrupted run resumes where it stopped (run the same command again). Units run in
``--n-jobs`` processes (default: every core); on a Dask cluster, wrap the call in
``joblib.parallel_config(backend="dask")`` after creating a ``distributed.Client`` (the package's
Dask path, :mod:`recbias_tutorial.distributed`, already needs ``dask.distributed``).

Implemented:

* ``jadidinejad2021``: Table 6 on Coat and Yahoo! R3, the authors' whole zoo, five seeds:
  the Cornac-native families, and their neural families where ``--neural-datasets`` says
  (MLP, GMF and NeuMF with the package's NumPy trainer, or Cornac's TensorFlow backend with
  ``--ncf-backend tensorflow``; WMF with TensorFlow installed): on a dataset whose stored
  values hold the native zoo, each missing family (``--neural-families``, in that order), or
  each NCF family stored from the other trainer, is added to them and stored as it
  finishes (replaced TensorFlow rows are kept aside for the comparison of the trainers);
  ``--time-families`` times one model of a family left out;
* ``carraro2022``: Tables 3-5 and Figure 4 on Coat and Yahoo! R3 with every user who has MAR
  ratings, the paper's hyper-parameter grid (tuned on the first repetition's D_val) and its
  10 repetitions (one repetition per worker), in four configurations stored side by side
  (columns ``recommenders`` and ``item_power``): Cornac's recommenders or RankSys-like ones
  (the paper's kind) x the WTD item weight w_u w_i^2 (the paper's §4.3) or w_u w_i (the
  authors' notebook); ``--recommenders`` / ``--item-powers`` re-run some of them, keeping the
  others' stored rows;
* ``yang2018``: Section 5 as the authors' code ran it (yang2018.AUTHORS), every rung of
  yang2018.LADDER down to the course's reading and the slides' reading with its ladder, family
  and negative counts (yang2018.READINGS), for the slides' four models and the course's
  seven, Recall and AUC, 5 splits x 5 negative draws (one split per worker); for the slides'
  four models also the grid of readings searched against the slides (``yahoo_r3_grid``);
* ``wang2025``: Table 1's Yahoo!R3 column (traditional Recall@5-bar and URE Recall@5) for the
  paper's trainers (MF, IPS and DR as in the AutoDebias baselines) and the course's MF,
  IPS-MF (with its own and with MF's penalty) and DR-MF, under each evaluation convention the
  paper leaves open, over 10 seeds (the course's scale: the paper states no seeds), each seed
  AutoDebias's 5/5/90 split of the random data and the training seed (one seed per worker).

Yang et al. and Wang et al. report Yahoo! R3 only, so their runs skip the other datasets
with a note.

Run: ``make replicate`` or ``RECBIAS_DATA=../shared/data .venv/bin/python scripts/replicate.py
[--papers carraro2022 yang2018] [--datasets yahoo_r3]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.util
import inspect
import json
import os
import platform
import resource
import subprocess
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from tqdm.std import tqdm

import recbias_tutorial as rb
from recbias_tutorial._stored_results import results_root
from recbias_tutorial.data import _registry
from recbias_tutorial.data._files import sha256sum
from recbias_tutorial.replications import carraro2022, wang2025, yang2018
from recbias_tutorial.replications import jadidinejad2021 as jad

ROOT = Path(__file__).resolve().parents[1]
#: The full-scale protocol of Jadidinejad et al. (their Table 6): the cut-offs, seeds and zoo.
JADIDINEJAD = dict(seeds=(0, 1, 2, 3, 4), ks=(None, 5, 10, 20, 30, 100), n_strata=2,
                   sizes=jad.AUTHORS_SIZES, families=jad.AUTHORS_FAMILIES, zoos=("authors",))
#: Carraro & Bridge's protocol (§4): 10 repetitions ("averaged over 10 runs with different
#: random splits"), every rho_p; both WTD item exponents (2: w_u w_i^2 of the paper's §4.3;
#: 1: w_u w_i of its §3.3.2 and of the authors' notebook) and both kinds of recommenders
#: (Cornac's rating predictors and RankSys-like top-N scorers, the paper's kind).
CARRARO = dict(seeds=tuple(range(10)), item_powers=(2.0, 1.0),
               recommenders=carraro2022.RECOMMENDER_KINDS)
#: Where the authors' neural families (jad.NEURAL_FAMILIES) run: the NCF ones (MLP, GMF,
#: NeuMF) with the package's NumPy trainer, WMF when TensorFlow is installed. On a dataset
#: whose stored values hold the native zoo they are added one family at a time
#: (``--neural-datasets``; provenance's family_seconds holds the measured costs).
NEURAL_DATASETS = ("coat", "yahoo_r3")
#: The neural families a run fits where it fits them, in order (``--neural-families``).
NEURAL_FAMILIES = tuple(jad.NEURAL_FAMILIES)
#: Who trains the NCF families (``--ncf-backend``): the package's trainer (``"numpy"``, no
#: TensorFlow; one epoch equal to TensorFlow's weights to 1e-5) or Cornac's TensorFlow backend.
#: Stored NCF rows of the other backend are replaced (the TensorFlow ones kept aside, in
#: ``<dataset>_ncf_tensorflow.csv.gz``, for the comparison of the two trainers).
NCF_BACKEND = "numpy"
#: Neural families refitted even where their stored rows are this run's (``--refit``: after a
#: change to their trainer, e.g. issue 52's CPU-independent arithmetic).
REFIT: tuple[str, ...] = ()


def has_tensorflow() -> bool:
    return importlib.util.find_spec("tensorflow") is not None


def describe(model) -> dict:
    """A Cornac model's class and constructor parameters (as stored in provenance.json)."""
    params = {p: getattr(model, p) for p in inspect.signature(type(model).__init__).parameters
              if p not in ("self", "args", "kwargs", "verbose") and hasattr(model, p)}
    return {"class": f"{type(model).__module__}.{type(model).__name__}",
            "params": {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v))
                       for k, v in params.items()}}


def _needs_tensorflow(family: str) -> bool:
    return family not in jad.NCF_FAMILIES or NCF_BACKEND == "tensorflow"


def jadidinejad_families(name: str) -> tuple[str, ...]:
    """The authors' families that run on one dataset: the neural ones where NEURAL_DATASETS
    says, those that need TensorFlow (WMF; the NCF ones with ``--ncf-backend tensorflow``)
    only when it is installed."""
    neural = [f for f in NEURAL_FAMILIES if name in NEURAL_DATASETS
              and (has_tensorflow() or not _needs_tensorflow(f))]
    return tuple(jad.AUTHORS_FAMILIES) + tuple(neural)


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


#: The commit whose code this run imported (HEAD may move while a long run goes on), and
#: whether tracked files differed from it. Read once, at start: a `git` child forked later
#: would report the grown parent's memory as a worker's peak (RUSAGE_CHILDREN).
START_COMMIT = _git("rev-parse", "HEAD")
START_DIRTY = bool(_git("status", "--porcelain", "--untracked-files=no"))


def environment(n_jobs: int) -> dict:
    import cornac
    import joblib
    import scipy

    return {"package": rb.__version__, "git_commit": START_COMMIT,
            "git_dirty": START_DIRTY,
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


def _table_path(out: Path, name: str) -> Path:
    """Where a run writes one dataset's rows: ``<name>.csv.gz`` (the wheel ships it)."""
    return out / f"{name}.csv.gz"


def _stored_path(out: Path, record: dict | None) -> Path | None:
    """The file a provenance record names (``.csv.gz``, or an older run's ``.csv``)."""
    return out / record["file"] if record and record.get("file") else None


def _write_table(out: Path, name: str, table: pd.DataFrame) -> None:
    """Write a dataset's rows gzipped without a timestamp (equal rows, equal sha256), and
    remove an older run's uncompressed file so that each dataset has one file."""
    table.to_csv(_table_path(out, name), index=False, float_format="%.17g",
                 compression={"method": "gzip", "mtime": 0})
    (out / f"{name}.csv").unlink(missing_ok=True)


def _store(out: Path, name: str, rows: pd.DataFrame, wall: float, **extra) -> dict:
    """Write one dataset's file and return its provenance (:func:`_dataset_record`)."""
    _write_table(out, name, rows)
    return _dataset_record(out, name, rows, wall, **extra)


def _dataset_record(out: Path, name: str, rows: pd.DataFrame, wall: float, *,
                    dataset: str | None = None, **extra) -> dict:
    """The provenance of one dataset's written file: its sha256 (reading refuses a file that
    differs), data checksums, size, wall time, memory. ``dataset``: the registry's dataset
    when the file is a further table of it (e.g. ``yahoo_r3_grid`` of ``yahoo_r3``)."""
    path = _table_path(out, name)
    source = {} if dataset in (None, name) else {"dataset": dataset}
    return {"file": path.name, "sha256": sha256sum(path), "rows": len(rows),
            "models": int(rows["model"].nunique()), "git_commit": START_COMMIT, **source,
            "data_sha256": {f: h for f, h in _registry.SHA256.get(dataset or name, {}).items()
                            if h},
            "wall_seconds": round(wall, 1), **extra, **_peak_memory()}


def _provenance(out: Path, paper: str, n_jobs: int, **fields) -> dict:
    """A paper's provenance: this run's environment, keeping other datasets' records and the
    further tables (``tables``: see :func:`_store_table`)."""
    out.mkdir(parents=True, exist_ok=True)
    old = out / "provenance.json"
    old = json.loads(old.read_text()) if old.exists() else {}
    datasets = old.get("datasets", {})
    for record in datasets.values():  # a dataset not re-run keeps the commit it was run at
        record.setdefault("git_commit", old.get("git_commit"))
    return {"paper": paper, **environment(n_jobs), **fields, "datasets": datasets,
            **({"tables": old["tables"]} if old.get("tables") else {})}


def _store_table(out: Path, dataset: str, label: str, rows: pd.DataFrame, wall: float,
                 **extra) -> None:
    """Write a further table of one dataset, ``<dataset>_<label>.csv.gz``, and record it under
    the provenance's ``tables`` (read and checked by course.stored_results like a dataset's
    file), the rest of the provenance kept as it is."""
    import fcntl

    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        provenance = json.loads((out / "provenance.json").read_text())
        name = f"{dataset}_{label}"
        record = _store(out, name, rows, wall, **extra)
        record.update(dataset=dataset, data_sha256={f: h for f, h in
                                                    _registry.SHA256[dataset].items() if h})
        provenance.setdefault("tables", {})[name] = record
        _write(out, provenance)


def _write(out: Path, provenance: dict) -> None:
    (out / "provenance.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")


def _run_seeds(unit, data, name: str, seeds, what: str, n_jobs: int, out: Path,
               provenance: dict, *, start: float | None = None, tables=None, **record) -> None:
    """One dataset: ``unit(data, seed=s)`` for every seed (one per worker), stored with its
    provenance (``record``: further fields; ``start``: when the dataset's run began;
    ``tables``: rows -> {file name: table}, when the rows make several files)."""
    start = time.perf_counter() if start is None else start
    run = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(unit)(data, seed=s) for s in seeds)
    parts = list(tqdm(run, total=len(seeds), unit=what, desc=f"{name}: {what}s"))
    wall = time.perf_counter() - start
    rows = pd.concat([p[0] for p in parts], ignore_index=True)
    for key, table in (tables(rows) if tables else {name: rows}).items():
        provenance["datasets"][key] = _store(
            out, key, table, wall, dataset=name, read_from_cache=all(p[1] for p in parts),
            unit_seconds={str(s): round(p[2], 1) for s, p in zip(seeds, parts)}, **record)
        print(f"{key}: {table['model'].nunique()} models, {len(seeds)} {what}s, "
              f"{len(table)} rows, {wall:.0f} s")
    _write(out, provenance)


def run_jadidinejad(datasets: list[str], n_jobs: int, out: Path) -> None:
    path = out / "provenance.json"
    described = json.loads(path.read_text()).get("models", {}) if path.exists() else {}
    zoo = jad.authors_zoo(families=jad.AUTHORS_FAMILIES + tuple(
        f for f in jad.NEURAL_FAMILIES if has_tensorflow() or not _needs_tensorflow(f)),
        ncf_backend=NCF_BACKEND)
    provenance = _provenance(out, "jadidinejad2021", n_jobs,
                             protocol={k: (list(v) if isinstance(v, tuple) else v)
                                       for k, v in JADIDINEJAD.items()},
                             neural_families=list(jad.NEURAL_FAMILIES),
                             neural_datasets=list(NEURAL_DATASETS), ncf_backend=NCF_BACKEND,
                             # a family this run cannot build (WMF without TensorFlow) keeps
                             # the description of the run that stored it
                             models={**described, **{m: describe(model)
                                                     for m, model in zoo.items()}})
    for name in datasets:
        data = rb.load(name)
        families = jadidinejad_families(name)
        if _stored_native(out, provenance, name) is not None and _families_to_run(
                provenance["datasets"][name], families):
            _add_families(data, name, families, n_jobs, out, provenance)
            continue
        if _stored_native(out, provenance, name) is not None:
            print(f"{name}: the stored values hold every family of this run")
            continue
        start = time.perf_counter()
        values = jad.protocol_values(data, progress=True, n_jobs=n_jobs, ncf_backend=NCF_BACKEND,
                                     **{**JADIDINEJAD, "families": families})
        wall = time.perf_counter() - start
        rows = jad.protocol_rows(values, protocol="authors", n_strata=JADIDINEJAD["n_strata"])
        not_run = [f for f in jad.LEFT_OUT_FAMILIES if f not in families]
        provenance["datasets"][name] = _store(
            out, name, rows, wall, read_from_cache=bool(values.attrs.get("cached")), n_jobs=n_jobs,
            families=list(families), families_not_run=not_run,
            why_not_run=_why_not_run(not_run),
            ncf_backends={f: NCF_BACKEND for f in families if f in jad.NCF_FAMILIES},
            unit_seconds={k: round(v, 1) for k, v in values.attrs["seconds"].items()})
        print(f"{name}: {rows['model'].nunique()} models, {len(rows)} rows, {wall:.0f} s")
        _write(out, provenance)


def stored_ncf_backend(record: dict, family: str) -> str | None:
    """Who trained the stored rows of an NCF family (None: not stored). Runs before the NumPy
    trainer recorded none: Cornac's TensorFlow backend."""
    if family not in record.get("families", ()):
        return None
    return record.get("ncf_backends", {}).get(family, "tensorflow")


def _families_to_run(record: dict, families) -> list[str]:
    """The families of ``families`` the stored rows lack, hold from the other NCF trainer, or
    that ``--refit`` names."""
    return [f for f in families if f not in record.get("families", jad.AUTHORS_FAMILIES)
            or (f in jad.NCF_FAMILIES and stored_ncf_backend(record, f) != NCF_BACKEND)
            or f in REFIT]


def _why_not_run(not_run) -> str | None:
    return (None if not not_run else "TensorFlow is not installed (the neural extra)"
            if not has_tensorflow() else "run time (--neural-datasets, --neural-families)")


def _stored_native(out: Path, provenance: dict, name: str) -> pd.DataFrame | None:
    """The stored rows of ``name`` when they were computed with this protocol on this data
    (every Cornac-native family present), else None: a run then adds the missing families
    to them instead of refitting the 73 native models (each model's values depend on that
    model alone; tests/test_stored_results.py recomputes a subsample of the stored ones)."""
    record = provenance["datasets"].get(name)
    path = _stored_path(out, record)
    if path is None or not path.exists() or sha256sum(path) != record.get("sha256"):
        return None
    if record.get("data_sha256") != {f: h for f, h in _registry.SHA256[name].items() if h}:
        return None
    rows = pd.read_csv(path, keep_default_na=False, na_values={"value": [""]})  # as read back
    native = set(jad.authors_zoo(sizes=JADIDINEJAD["sizes"]))
    return rows if native <= set(rows["model"]) else None


def _add_families(data, name: str, families, n_jobs: int, out: Path, provenance: dict) -> None:
    """Fit the families of ``families`` missing from the stored rows (or stored from the other
    NCF trainer), one family at a time (each resumable through the result cache), and store
    the rows after each family, so an interrupted run keeps every family it finished.
    Records each family's measured cost and trainer; NCF rows of Cornac's TensorFlow backend
    that are replaced are kept in ``<name>_ncf_tensorflow.csv.gz`` (:func:`_keep_tensorflow_rows`)."""
    record = provenance["datasets"][name]
    had = list(record.get("families", jad.AUTHORS_FAMILIES))
    record.setdefault("native_rows_from", {"git_commit": record.get("git_commit"),
                                           "unit_seconds": record.get("unit_seconds"),
                                           "wall_seconds": record.get("wall_seconds"),
                                           "n_jobs": record.get("n_jobs")})
    for family in _families_to_run(record, families):
        rows = _stored_native(out, provenance, name)
        replaced = stored_ncf_backend(record, family)
        if replaced == "tensorflow":
            record = _keep_tensorflow_rows(out, name, record, family, rows)
        backend = NCF_BACKEND if family in jad.NCF_FAMILIES else "tensorflow"
        start = time.perf_counter()
        values = jad.protocol_values(data, progress=True, n_jobs=n_jobs, ncf_backend=NCF_BACKEND,
                                     **{**JADIDINEJAD, "families": (family,)})
        wall = time.perf_counter() - start
        new = jad.protocol_rows(values, protocol="authors", n_strata=JADIDINEJAD["n_strata"])
        n_models = int(new["model"].nunique())
        table = pd.concat([rows[~rows["model"].isin(set(new["model"]))], new], ignore_index=True)
        table = table.sort_values("seed", kind="stable").reset_index(drop=True)
        if family not in had:
            had.append(family)
        not_run = [f for f in jad.LEFT_OUT_FAMILIES if f not in had]
        seconds = {k: round(v, 1) for k, v in values.attrs["seconds"].items()}
        costs = dict(record.get("family_seconds", {}))
        before = costs.get(family)  # measured with the other trainer (older runs: TensorFlow)
        if before and before.get("backend", "tensorflow") != backend:
            other = f"{before.get('backend', 'tensorflow')}_family_seconds"
            record[other] = {**record.get(other, {}),
                             family: {"backend": before.get("backend", "tensorflow"), **before}}
        costs[family] = {"models": n_models, "unit_seconds": seconds,
                         "seconds_per_model_fit_and_evaluation": round(
                             sum(seconds.values()) / (n_models * len(seconds)), 1),
                         "read_from_cache": bool(values.attrs.get("cached")),
                         "backend": backend, "git_commit": START_COMMIT, "n_jobs": n_jobs}
        backends = dict(record.get("ncf_backends", {}))
        if family in jad.NCF_FAMILIES:
            backends[family] = NCF_BACKEND
        record = _store(out, name, table, record.get("wall_seconds", 0.0) + wall,
                        **{k: v for k, v in record.items() if k not in (
                            "file", "sha256", "rows", "models", "git_commit", "data_sha256",
                            "wall_seconds", "peak_rss_mb", "peak_rss_workers_mb",
                            "peak_rss_workers_note", "read_from_cache")},
                        read_from_cache=False)
        record.update(families=list(had), families_not_run=not_run,
                      why_not_run=_why_not_run(not_run), family_seconds=costs,
                      ncf_backends=backends)
        provenance["datasets"][name] = record
        print(f"{name}: + {family} ({n_models} models, {backend}, {wall:.0f} s): "
              f"{table['model'].nunique()} models, {len(table)} rows")
        _write(out, provenance)


def _keep_tensorflow_rows(out: Path, name: str, record: dict, family: str,
                          rows: pd.DataFrame) -> dict:
    """Before the NumPy trainer replaces a family's TensorFlow rows: append them to
    ``<name>_ncf_tensorflow.csv.gz`` (recorded in ``record["tensorflow_ncf"]`` with its sha256
    and the commit that computed them). Returns the new record."""
    record = dict(record)
    kept = dict(record.get("tensorflow_ncf", {}))
    models = set(jad.authors_zoo(sizes=JADIDINEJAD["sizes"], families=(family,)))
    mine = rows[rows["model"].isin(models)]
    file = f"{name}_ncf_tensorflow.csv.gz"
    old = (pd.read_csv(out / file, keep_default_na=False, na_values={"value": [""]})
           if kept.get("file") and (out / file).exists() else mine.iloc[:0])
    table = pd.concat([old[~old["model"].isin(models)], mine], ignore_index=True)
    table = table.sort_values("seed", kind="stable").reset_index(drop=True)
    table.to_csv(out / file, index=False, float_format="%.17g",
                 compression={"method": "gzip", "mtime": 0})
    families = [f for f in kept.get("families", []) if f != family] + [family]
    commits = dict(kept.get("git_commits", {}))
    commits[family] = record.get("family_seconds", {}).get(family, {}).get("git_commit") or \
        record.get("native_rows_from", {}).get("git_commit") or record.get("git_commit")
    record["tensorflow_ncf"] = {
        "file": file, "sha256": sha256sum(out / file), "rows": len(table),
        "models": int(table["model"].nunique()), "families": families, "git_commits": commits,
        "backend": "tensorflow", "note": "the NCF rows Cornac's TensorFlow backend computed "
        "before the NumPy trainer replaced them (jadidinejad2021.trainer_comparison reads them)"}
    return record


def time_families(name: str, families, out: Path, size: int = 50) -> None:
    """Measure what the families a run left out would cost: ONE model of each (size ``size``;
    MLP has none) fitted on the whole log, scored and evaluated as the separate truth's unit
    does it, its seconds recorded in provenance (``family_seconds``). Nothing is stored."""
    from recbias_tutorial.replications.jadidinejad2021 import _protocol as proto

    path = out / "provenance.json"
    data = rb.load(name)
    for family in families:
        ran = json.loads(path.read_text())["datasets"][name].get("family_seconds", {})
        if ran.get(family, {}).get("models") or family in json.loads(path.read_text())[
                "datasets"][name].get("families", ()):
            continue  # the family ran: its full cost is recorded
        start = time.perf_counter()
        values = proto.unit_values(
            data, -1, sizes=(size,), ks=JADIDINEJAD["ks"], n_strata=JADIDINEJAD["n_strata"],
            sweep=(), zoos=("authors",), course_zoo={}, families=(family,), fit_cache=False,
            ncf_backend=NCF_BACKEND)
        seconds = time.perf_counter() - start
        model = str(values["model"].iloc[0])
        provenance = json.loads(path.read_text())  # re-read: another step may have written
        record = provenance["datasets"][name]
        costs = record.setdefault("family_seconds", {})
        costs[family] = {"models": 0, "timed_model": model,
                         "seconds_one_model_fit_and_evaluation": round(seconds, 1),
                         "timed_as": "one fit on the whole log, dense scores, the truth's "
                                     "evaluation (the separate truth's unit, one model)",
                         "backend": NCF_BACKEND if family in jad.NCF_FAMILIES else "tensorflow",
                         "git_commit": START_COMMIT, "git_dirty": START_DIRTY}
        _write(out, provenance)
        print(f"{name}: one {family} model ({model}) fitted, scored, evaluated in {seconds:.0f} s")


# --------------------------------------------------------------------------------------
# Carraro & Bridge (2022): all users with MAR data, the paper's grid, its 10 repetitions
# --------------------------------------------------------------------------------------
def carraro_data(data):
    """The paper's data (§4.1: the users with MAR ratings, all of them), with the chapter's
    rule that MAR pairs also in the log are dropped (chapter 3 explains the leak)."""
    data = rb.data.restrict_to_mar_users(data)
    return dataclasses.replace(data, mar=rb.drop_seen(data.mar, data.mnar))


def carraro_chosen(data, n_jobs: int, recommenders: str = "cornac") -> tuple[dict, pd.DataFrame]:
    """The paper's grid tuned on the first repetition's D_val: chosen factories, the grid."""
    grid = carraro2022.paper_grid(recommenders=recommenders)
    tables = Parallel(n_jobs=n_jobs)(  # one setting per worker, each cached
        delayed(carraro2022.tune)(data, {model: {setting: factory}}, seed=CARRARO["seeds"][0])
        for model, settings in grid.items() for setting, factory in settings.items())
    tuning = pd.concat(tables, ignore_index=True)
    # tune's own rule over each model's settings in the grid's order: the first best one
    tuning["best"] = tuning.index.isin(tuning.groupby("model", sort=False)["recall"].idxmax())
    chosen = {r.model: grid[r.model][r.setting] for r in tuning[tuning["best"]].itertuples()}
    return chosen, tuning


#: The columns that tell the stored configurations apart (before the protocol's own).
CARRARO_CONFIG = ["recommenders", "item_power"]


def run_carraro(datasets: list[str], n_jobs: int, out: Path, *,
                item_powers=CARRARO["item_powers"],
                recommenders=CARRARO["recommenders"]) -> None:
    """Every requested configuration (kind of recommenders x WTD item exponent) of each
    dataset; the stored rows of the other configurations are kept (see _store_carraro)."""
    for name in datasets:
        data = carraro_data(rb.load(name))
        for kind in recommenders:
            start = time.perf_counter()  # the first exponent's wall time includes the tuning
            chosen, tuning = carraro_chosen(data, n_jobs, kind)
            models = {
                "chosen": {m: {"setting": tuning.query("model == @m and best")["setting"].iloc[0],
                               **describe(f())} for m, f in chosen.items()},
                "tuning_recall_at_10": {m: dict(zip(g["setting"], g["recall"]))
                                        for m, g in tuning.groupby("model", sort=False)}}
            for power in item_powers:
                unit = partial(carraro_unit, chosen=chosen, item_power=float(power))
                run = Parallel(n_jobs=n_jobs, return_as="generator")(
                    delayed(unit)(data, seed=s) for s in CARRARO["seeds"])
                done = list(tqdm(run, total=len(CARRARO["seeds"]), unit="repetition",
                                 desc=f"{name} {kind} item_power={power:g}"))
                rows = pd.concat([p[0] for p in done], ignore_index=True)
                rows.insert(0, "item_power", float(power))
                rows.insert(0, "recommenders", kind)
                config = {"git_commit": START_COMMIT, "git_dirty": START_DIRTY,
                          "wall_seconds": round(time.perf_counter() - start, 1),
                          "read_from_cache": all(p[1] for p in done),
                          "unit_seconds": {str(s): round(p[2], 1)
                                           for s, p in zip(CARRARO["seeds"], done)}}
                print(f"{name} {kind} item_power={power:g}: {rows['model'].nunique()} models, "
                      f"{len(rows)} rows, {time.perf_counter() - start:.0f} s")
                _store_carraro(out, n_jobs, data, name, rows, kind, float(power), config, models)
                start = time.perf_counter()
            if kind == "ranksys":
                carraro_smoothing(data, name, chosen, item_powers, n_jobs, out)


#: The rules for ids absent from D_tr or D_w compared on the RankSys-like run (the
#: ``smoothing`` of carraro2022.run_protocol): the course's add-one and the authors'
#: notebook's (a zero share becomes 1e-4).
CARRARO_SMOOTHINGS = {"add-one": 1.0, "notebook": rb.sampling.NOTEBOOK_SMOOTHING}
#: The test sets' own numbers stored beside the metrics in the smoothing table.
TEST_SET_STATS = ("kl_to_gt", "relevant", "n_rows", "n_users")


def carraro_smoothing(data, name: str, chosen: dict, item_powers, n_jobs: int,
                      out: Path) -> None:
    """The RankSys-like run under each rule of CARRARO_SMOOTHINGS and WTD exponent, stored as
    ``<name>_smoothing.csv.gz``: every model's metrics and each test set's KL to D_gt, share
    of relevant rows, rows and users (model "(test set)")."""
    start, parts = time.perf_counter(), []
    for power in item_powers:
        for label, smoothing in CARRARO_SMOOTHINGS.items():
            unit = partial(carraro_smoothing_unit, chosen=chosen, item_power=float(power),
                           smoothing=smoothing)
            done = Parallel(n_jobs=n_jobs)(delayed(unit)(data, seed=s) for s in CARRARO["seeds"])
            rows = pd.concat([p[0] for p in done], ignore_index=True)
            rows.insert(0, "item_power", float(power))
            rows.insert(0, "smoothing", label)
            parts.append(rows)
    rows = pd.concat(parts, ignore_index=True)
    _store_table(out, name, "smoothing", rows, time.perf_counter() - start,
                 recommenders="ranksys", smoothings={k: str(v) for k, v in
                                                     CARRARO_SMOOTHINGS.items()},
                 item_powers=[float(p) for p in item_powers], seeds=list(CARRARO["seeds"]))
    print(f"{name} smoothing: {len(rows)} rows, {time.perf_counter() - start:.0f} s")


def carraro_smoothing_unit(data, *, seed: int, chosen: dict, item_power: float,
                           smoothing) -> tuple[pd.DataFrame, bool, float]:
    """One repetition under one smoothing rule (cached by run_protocol): metrics and the
    test sets' numbers as rows, read back?, seconds."""
    start = time.perf_counter()
    rep = carraro2022.run_protocol(data, chosen, seeds=[seed], item_power=item_power,
                                   smoothing=smoothing)
    sets = rep.test_sets.melt(["seed", "strategy", "size"], list(TEST_SET_STATS),
                              var_name="metric").assign(model="(test set)")
    rows = pd.concat([rep.metrics, sets[rep.metrics.columns]], ignore_index=True)
    return rows, bool(rep.metrics.attrs["cached"]), time.perf_counter() - start


def _store_carraro(out: Path, n_jobs: int, data, name: str, rows: pd.DataFrame, kind: str,
                   power: float, config: dict, models: dict) -> None:
    """Merge one configuration's rows into ``<name>.csv.gz`` and its record into the
    provenance, both read again under a lock: runs of other configurations may store at the
    same time (each configuration keeps the commit it was run at)."""
    import fcntl

    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        provenance = _provenance(out, "carraro2022", n_jobs,
                                 protocol={"seeds": list(CARRARO["seeds"]),
                                           "item_powers": list(CARRARO["item_powers"]),
                                           "recommenders": list(CARRARO["recommenders"]),
                                           "grid": carraro2022.PAPER_GRID,
                                           "users": "every user with MAR ratings (§4.1)",
                                           "mar_pairs_in_log": "dropped (the course's rule)"},
                                 models=old_models(out))
        configs = provenance["datasets"].get(name, {}).get("configurations", {})
        path = _stored_path(out, provenance["datasets"].get(name))
        old = pd.read_csv(path) if path and path.exists() and configs else rows.iloc[:0]
        old = old[~((old["recommenders"] == kind) & (old["item_power"] == power))]
        table = pd.concat([old, rows], ignore_index=True).sort_values(
            CARRARO_CONFIG, ascending=[True, False], kind="stable")
        _write_table(out, name, table)
        configs[f"{kind}, item_power={power:g}"] = config
        record = provenance["models"].setdefault(name, {})
        record.pop("chosen", None), record.pop("tuning_recall_at_10", None)  # older layout
        record[kind] = models
        provenance["datasets"][name] = _dataset_record(
            out, name, table, sum(c["wall_seconds"] for c in configs.values()),
            configurations=configs, users=data.n_users, items=data.n_items)
        _write(out, provenance)


def carraro_unit(data, *, seed: int, chosen: dict,
                 item_power: float) -> tuple[pd.DataFrame, bool, float]:
    """One repetition with the chosen models (cached by run_protocol): rows, read back?, s."""
    start = time.perf_counter()
    metrics = carraro2022.run_protocol(data, chosen, seeds=[seed], item_power=item_power).metrics
    return metrics, bool(metrics.attrs["cached"]), time.perf_counter() - start


def old_models(out: Path) -> dict:
    path = out / "provenance.json"
    return json.loads(path.read_text()).get("models", {}) if path.exists() else {}


# --------------------------------------------------------------------------------------
# Yang et al. (2018) and Wang et al. (2025): Yahoo! R3 only, at the course's full scale
# --------------------------------------------------------------------------------------
#: The datasets a paper's tables report; a run skips the others (with a printed note).
PAPER_DATASETS = {"yang2018": ("yahoo_r3",), "wang2025": ("yahoo_r3",)}
#: Yang et al.'s Section 5 as the authors' code ran it (yang2018.AUTHORS), every rung of
#: yang2018.LADDER down to the course's reading, the slides' reading with its ladder, family
#: and negative counts (yang2018.READINGS), and for the slides' four models the grid searched
#: against the slides (yang2018.reading_grid: 576 readings, kept per split as the means over
#: the draws in <dataset>_grid, yang2018.grid_table): 5 splits x 5 negative draws (the authors drew
#: once, seed=10, on one split); 20% of the MNAR positives held out. n_iter: the authors train
#: 10,001 Adam steps of 8,000, and so does the stored run (our numpy CML takes ~45 ms (U-CML)
#: and ~130 ms (A-CML) per step on an idle core: about 30 min per split; Cornac's BPR / PMF
#: train the epochs that 10,001 x 8,000 samples cover).
YANG = dict(seeds=tuple(range(5)), draws=tuple(range(5)), gammas=yang2018.GAMMAS,
            val_share=0.2, n_iter=10001, batch_size=8000)
#: Wang et al.'s Yahoo!R3 column: the paper states no seeds, so 10 is the course's choice.
#: Seed s draws AutoDebias's 5/5/90 split of the random data (seed_randomly_split(seed=s)) and
#: is every trainer's seed. The paper's trainers (AutoDebias's MF, IPS, DR baselines) run
#: their own 500-epoch cap with early stopping; the course's run fit_mf's default 20 epochs.
WANG = dict(seeds=tuple(range(10)), epochs=20, k=5, k_bars=(1, 3, 5), uniform_share=0.05,
            validation_share=0.05)
#: The trainers of a Wang unit, in order: the paper's (wang2025.fit_autodebias) and the
#: course's (fit_mf with wang2025.course_trainers; IPS-MF twice: its own and MF's penalty).
WANG_TRAINERS = {"MF": ("AutoDebias baselines", "MF"), "IPS": ("AutoDebias baselines", "IPS"),
                 "DR": ("AutoDebias baselines", "DR"),
                 "course MF": ("course", "MF"), "course IPS-MF": ("course", "IPS-MF"),
                 "course IPS-MF (MF's reg)": ("course", "IPS-MF equal"),
                 "course DR-MF": ("course", "DR-MF")}
#: The script's own code is part of a Wang unit's cache key (the package's code already is).
SCRIPT_SHA256 = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def paper_datasets(paper: str, datasets: list[str]) -> list[str]:
    """The requested datasets the paper's tables report; a note for each one skipped."""
    for name in datasets:
        if name not in PAPER_DATASETS[paper]:
            print(f"{paper}: {name} skipped (the paper reports {', '.join(PAPER_DATASETS[paper])})")
    return [name for name in datasets if name in PAPER_DATASETS[paper]]


def yang_models(data, *, seed: int) -> dict:
    """The slides' four models (authors' settings) and the course's seven, for split ``seed``."""
    train, _, _ = yang2018.authors_split(data, seed=seed, val_share=YANG["val_share"])
    return {**yang2018.authors_models(n_train=len(train), n_iter=YANG["n_iter"],
                                      batch_size=YANG["batch_size"]),
            **yang2018.course_models()}


def yang_unit(data, *, seed: int, models: list[str] | None = None
              ) -> tuple[pd.DataFrame, bool, float]:
    """One split: every reading of yang2018.READINGS for every model, and of the grid for
    the slides' four, every draw: rows, read back?, seconds."""
    start = time.perf_counter()
    zoo = yang_models(data, seed=seed)
    zoo = {m: zoo[m] for m in (models or zoo)}
    rows = yang2018.authors_split_table(
        zoo, data, seed=seed, draws=YANG["draws"], gammas=YANG["gammas"],
        val_share=YANG["val_share"], readings=yang2018.READINGS, grid=yang2018.reading_grid(),
        grid_models=[m for m in yang2018.SLIDE_MODELS.values() if m in zoo])
    return rows, False, time.perf_counter() - start


def yang_tables(rows: pd.DataFrame, name: str = "yahoo_r3") -> dict[str, pd.DataFrame]:
    """The stored files of a Yang run: the named readings' rows, and the grid per split."""
    named = rows["reading"].isin([r.name for r in yang2018.READINGS])
    return {name: rows[named].reset_index(drop=True), f"{name}_grid": yang2018.grid_table(rows)}


def run_yang(datasets: list[str], n_jobs: int, out: Path) -> None:
    datasets = paper_datasets("yang2018", datasets)
    if not datasets:
        return
    provenance = _provenance(out, "yang2018", n_jobs, protocol={
        **{k: (list(v) if isinstance(v, tuple) else v) for k, v in YANG.items()},
        "source": "ylongqi/unbiased-offline-recommender-evaluation, experiments_section_5/ "
                  "(OpenRec legacy): see yang2018's _authors module for each step",
        "readings": [dataclasses.asdict(r) for r in yang2018.READINGS],
        "grid": {"choices": {k: [list(v) if isinstance(v, tuple) else v for v in values]
                             for k, values in yang2018.GRID_CHOICES.items()},
                 "readings": len(yang2018.reading_grid()),
                 "models": list(yang2018.SLIDE_MODELS.values()),
                 "search_models": list(yang2018.SEARCH_MODELS),
                 "check_models": list(yang2018.CHECK_MODELS),
                 "stored": "per split: the means over the draws (yang2018.grid_table)"},
        "split": "seed s: random_split of the MNAR positives (rating >= 4), 80% train, 20% "
                 "held out; MAR ratings minus training pairs as the truth",
        "negatives": "draw d of split s: numpy default_rng([s, d]); 300 for U-CML/A-CML, "
                     "200 for the others; calc_metrics keeps the last 300 entries",
        "mae": "aggregate |mean estimate - mean truth| (authors' reading), or the mean of "
               "per-user gaps over common users (course's reading)",
        "scale": "n_iter 10,001, the authors' own; 5 splits x 5 draws (the authors: one "
                 "split, one draw)"},
        models={m: describe(model) for m, model in yang_models(rb.load("yahoo_r3"), seed=0).items()})
    for name in datasets:
        _run_seeds(yang_unit, rb.load(name), name, YANG["seeds"], "split", n_jobs, out, provenance,
                   tables=partial(yang_tables, name=name))


def wang_seed(data, *, seed: int, epochs: int = WANG["epochs"],
              cache: bool | None = None) -> tuple[pd.DataFrame, bool]:
    """One seed of Table 1's Yahoo!R3 column: AutoDebias's split of the random data, every
    trainer of :data:`WANG_TRAINERS` fitted with that seed, the convention ladder on the 90%
    test set (wang2025.convention_ladder) and how the paper's trainers stopped; cached."""
    from recbias_tutorial._result_cache import cached_result
    from recbias_tutorial.debiased_mf import fit_mf

    def compute() -> dict:
        uniform, validation, test = wang2025.autodebias_split(
            data.mar, seed=seed, uniform_share=WANG["uniform_share"],
            validation_share=WANG["validation_share"])
        course = wang2025.course_trainers(data.mnar, n_users=data.n_users, n_items=data.n_items)
        course["IPS-MF equal"] = wang2025.course_trainers(
            data.mnar, n_users=data.n_users, n_items=data.n_items,
            regularisation="equal")["IPS-MF"]
        stops = []

        def scores():
            for name, (family, trainer) in WANG_TRAINERS.items():
                if family == "course":
                    yield name, fit_mf(data.mnar, n_users=data.n_users, n_items=data.n_items,
                                       seed=seed, epochs=epochs, threshold=data.threshold,
                                       cache=cache, **course[trainer])
                    continue
                fit = wang2025.fit_autodebias(trainer, data.mnar, uniform=uniform,
                                              validation=validation, n_users=data.n_users,
                                              n_items=data.n_items, threshold=data.threshold,
                                              seed=seed)
                stops.extend({"model": name, "metric": metric, "value": float(value)}
                          for metric, value in (("best epoch", fit.best_epoch),
                                                ("epochs run", fit.epochs),
                                                ("validation AUC", fit.validation_auc)))
                yield name, fit.scores

        ladder = wang2025.convention_ladder(scores(), test, train=data.mnar, k=WANG["k"],
                                            k_bars=WANG["k_bars"], threshold=data.threshold)
        training = pd.DataFrame(stops).assign(cutoff=0, candidates="-", users="-",
                                              n_users=len(validation))
        table = pd.concat([ladder, training], ignore_index=True)
        table.insert(0, "seed", seed)
        table.insert(2, "trainers", table["model"].map(lambda m: WANG_TRAINERS[m][0]))
        return {"table": table}

    arguments = {**{k: (list(v) if isinstance(v, tuple) else v) for k, v in WANG.items()
                    if k != "seeds"}, "seed": seed, "epochs": epochs, "script": SCRIPT_SHA256}
    frames, cached = cached_result("replicate.wang_seed", data, arguments, compute, cache=cache)
    return frames["table"], cached


def _wang_unit(data, *, seed: int) -> tuple[pd.DataFrame, bool, float]:
    start = time.perf_counter()
    rows, cached = wang_seed(data, seed=seed)
    return rows, cached, time.perf_counter() - start


def wang_models() -> dict:
    """The trainers as stored in provenance.json: function and effective options."""
    from recbias_tutorial.debiased_mf import fit_mf

    def defaults(function) -> dict:
        return {p: v.default for p, v in inspect.signature(function).parameters.items()
                if v.default is not inspect.Parameter.empty and p != "cache"}

    one = pd.DataFrame({"user": [0], "item": [0], "rating": [5.0]})  # the options, not the data
    course = wang2025.course_trainers(one, n_users=1, n_items=1)
    course["IPS-MF equal"] = wang2025.course_trainers(one, n_users=1, n_items=1,
                                                      regularisation="equal")["IPS-MF"]
    pop = ("popularity, gamma = 0 (P_i ~ n_i^(1/2)) from the training counts, calibrated to "
           "the size of the log (wang2025.course_trainers)")
    out = {}
    for name, (family, trainer) in WANG_TRAINERS.items():
        if family == "course":
            kw = course[trainer]
            out[name] = {"function": "recbias_tutorial.debiased_mf.fit_mf", "params": {
                **defaults(fit_mf), "epochs": WANG["epochs"], "seed": "the unit's seed",
                "threshold": "the dataset's", **kw,
                **({"propensity": pop} if "propensity" in kw else {})}}
        else:
            params = {k: (list(v) if isinstance(v, tuple) else v)
                      for k, v in defaults(wang2025.fit_autodebias).items()}
            out[name] = {"function": "recbias_tutorial.replications.wang2025.fit_autodebias",
                         "params": {**params, **wang2025.AUTODEBIAS_YAHOO[trainer],
                                    "method": trainer, "seed": "the unit's seed",
                                    "threshold": "the dataset's",
                                    "propensity": "Naive Bayes P(O=1 | y) from the 5% uniform "
                                                  "split" if trainer != "MF" else None}}
    return out


#: The parts of the wang2025 run (``--wang-parts``): Table 1's column and the IPS stability grid.
WANG_PARTS = ("table1", "stability")


def run_wang(datasets: list[str], n_jobs: int, out: Path, *, parts=WANG_PARTS) -> None:
    datasets = paper_datasets("wang2025", datasets)
    if not datasets:
        return
    provenance = _provenance(out, "wang2025", n_jobs, protocol={
        **{k: (list(v) if isinstance(v, tuple) else v) for k, v in WANG.items()},
        "scale": "the course's: the paper states no seeds",
        "split": "seed s: wang2025.autodebias_split(seed=s) (AutoDebias's seed_randomly_split: "
                 "5% uniform for the propensities, 5% validation for early stopping, 90% test)",
        "training": "the whole MNAR log (labels +-1 at the threshold for the paper's trainers)",
        "evaluation": "wang2025.convention_ladder on the 90% test set: URE Recall@k with all "
                      "items / logged songs excluded as candidates, Recall@k_bar, each over "
                      "users with a liked random song and over all test users"},
        models=wang_models())
    for name in datasets:
        if "table1" in parts:
            _run_seeds(_wang_unit, rb.load(name), name, WANG["seeds"], "seed", n_jobs, out,
                       provenance)
        if "stability" in parts:
            wang_stability(rb.load(name), name, n_jobs, out)


def wang_stability_seed(data, *, seed: int) -> tuple[pd.DataFrame, bool, float]:
    """One seed of the IPS stability grid (wang2025.ips_stability), cached: rows, read back?,
    seconds."""
    from recbias_tutorial._result_cache import cached_result

    start = time.perf_counter()
    frames, cached = cached_result(
        "replicate.wang_stability_seed", data,
        {"seed": seed, "lrs": list(wang2025.IPS_STABILITY_LRS),
         "blocks": [list(b) for b in wang2025.IPS_STABILITY_BLOCKS], "script": SCRIPT_SHA256},
        lambda: {"table": wang2025.ips_stability(data, seeds=[seed])}, cache=None)
    return frames["table"], cached, time.perf_counter() - start


def wang_stability(data, name: str, n_jobs: int, out: Path) -> None:
    """The IPS stability grid over WANG's seeds, stored as ``<name>_ips_stability.csv.gz``
    (one row per seed, learning rate and block partition; model "IPS")."""
    start = time.perf_counter()
    run = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(wang_stability_seed)(data, seed=s) for s in WANG["seeds"])
    parts = list(tqdm(run, total=len(WANG["seeds"]), unit="seed", desc=f"{name}: IPS stability"))
    rows = pd.concat([p[0] for p in parts], ignore_index=True)
    rows.insert(1, "model", "IPS")
    _store_table(out, name, "ips_stability", rows, time.perf_counter() - start,
                 function="recbias_tutorial.replications.wang2025.ips_stability",
                 lrs=list(wang2025.IPS_STABILITY_LRS),
                 blocks=[list(b) for b in wang2025.IPS_STABILITY_BLOCKS],
                 seeds=list(WANG["seeds"]), read_from_cache=all(p[1] for p in parts),
                 unit_seconds={str(s): round(p[2], 1) for s, p in zip(WANG["seeds"], parts)})
    print(f"{name} IPS stability: {len(rows)} runs, {time.perf_counter() - start:.0f} s")


PAPERS = {"jadidinejad2021": run_jadidinejad, "carraro2022": run_carraro, "yang2018": run_yang,
          "wang2025": run_wang}


def main() -> None:
    global NEURAL_DATASETS, NEURAL_FAMILIES, NCF_BACKEND, REFIT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["coat", "yahoo_r3"])
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--papers", nargs="+", default=list(PAPERS), choices=list(PAPERS))
    parser.add_argument("--out", type=Path, default=results_root(),
                        help="default: the package's results folder (shipped with it)")
    parser.add_argument("--neural-datasets", nargs="*", default=list(NEURAL_DATASETS),
                        help="where the authors' neural families run (default: both; WMF "
                             "needs TensorFlow; provenance's family_seconds holds their costs)")
    parser.add_argument("--neural-families", nargs="+", default=list(NEURAL_FAMILIES),
                        choices=list(jad.NEURAL_FAMILIES),
                        help="which neural families run there, in this order (default: all)")
    parser.add_argument("--ncf-backend", default=NCF_BACKEND, choices=list(jad.NCF_BACKENDS),
                        help="who trains MLP, GMF and NeuMF: the package's NumPy trainer "
                             "(default) or Cornac's TensorFlow backend (the neural extra)")
    parser.add_argument("--refit", nargs="+", default=[], choices=list(jad.NEURAL_FAMILIES),
                        help="jadidinejad2021: refit these neural families where they are "
                             "stored already (after a change to their trainer)")
    parser.add_argument("--time-families", nargs="+", default=[],
                        choices=list(jad.NEURAL_FAMILIES),
                        help="jadidinejad2021: after the run, time ONE model of each of these "
                             "families per dataset (what a family left out would cost)")
    parser.add_argument("--item-powers", nargs="+", type=float,
                        default=list(CARRARO["item_powers"]),
                        help="carraro2022: the WTD item exponents to (re)run (default: 2 and 1)")
    parser.add_argument("--recommenders", nargs="+", default=list(CARRARO["recommenders"]),
                        choices=list(CARRARO["recommenders"]),
                        help="carraro2022: the kinds of recommenders to (re)run (default: both)")
    parser.add_argument("--wang-parts", nargs="+", default=list(WANG_PARTS), choices=WANG_PARTS,
                        help="wang2025: Table 1's column and/or the IPS stability grid "
                             "(default: both)")
    args = parser.parse_args()
    NEURAL_DATASETS = tuple(args.neural_datasets)
    NEURAL_FAMILIES = tuple(args.neural_families)
    NCF_BACKEND = args.ncf_backend
    REFIT = tuple(args.refit)
    for paper in args.papers:
        extra = ({"item_powers": args.item_powers, "recommenders": args.recommenders}
                 if paper == "carraro2022" else
                 {"parts": args.wang_parts} if paper == "wang2025" else {})
        PAPERS[paper](args.datasets, args.n_jobs, args.out / paper, **extra)
        if paper == "jadidinejad2021" and args.time_families:
            for name in args.datasets:
                time_families(name, args.time_families, args.out / paper)


if __name__ == "__main__":
    main()
