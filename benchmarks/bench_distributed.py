"""Ten models on a log of 10 million interactions: in process vs a local Dask cluster.

A popularity-biased log (``distributed.synthetic_log``: 50 ratings per user over 1,000 items,
40 kept as the training log, which every model's ranking excludes, 10 as the test log) at two
sizes, 5 and 10 million interactions (100,000 and 200,000 users), is written as Parquet
files of 10,000 users each (``distributed.write_feedback``). Ten factor models (16 factors
and an item bias each) are evaluated with AOA, SNIPS and stratified Recall@10 in one pass:

* **in process**: the log read into pandas, ``distributed.evaluate(client=None)`` (the same
  blocks, on every core in one process);
* **cluster**: a ``LocalCluster`` of one single-threaded worker per core; the workers read
  their files themselves, the client holds the models and the reduced sums (the SNIPS
  propensities come from the training log's item counts, one task per file, reduced on the
  cluster).

Each run is a fresh process (its peak resident memory, ``ru_maxrss``, is its own; the
workers' peaks, from a reset after their start-up, are read from each worker at the end:
``VmHWM``). Printed per size and path: wall time,
throughput (user-model pairs per second), peak memory of the client and of each worker,
and whether both paths give the same values (to 1e-12). The workers' peaks must stay the
same when the log doubles: they are bounded by the block (10,000 users), not by the log.
BLAS runs one thread per task in both paths (``OPENBLAS_NUM_THREADS=1``).

Run: ``.venv/bin/python benchmarks/bench_distributed.py`` (about 15 minutes on 2 cores);
``--sizes 100000`` for one size, ``--models 2`` for a quick look.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

N_ITEMS, PER_USER, USERS_PER_FILE, FACTORS = 1_000, 50, 10_000, 16

CASE = r"""
import glob, json, os, resource, time
import numpy as np, pandas as pd
from recbias_tutorial import distributed

def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def reset_peak():  # Linux: the process's peak resident memory starts again from now
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

def peak_mb():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024

def item_counts(path):
    return np.bincount(pd.read_parquet(path, columns=["item"])["item"].to_numpy(),
                       minlength={n_items})

def main(mode, root, n_users, n_models):
    rng = np.random.default_rng(7)
    models = {{f"model {{j}}": {{"user_factors": rng.normal(size=(n_users, {factors})),
                              "item_factors": rng.normal(size=({n_items}, {factors})),
                              "item_bias": np.linspace(2.0, 0.0, {n_items}) * j / n_models}}
              for j in range(n_models)}}
    estimators = ["aoa", "snips", ("stratified", {{"n_strata": 3}})]
    t0 = time.perf_counter()
    if mode == "in process":
        train = pd.read_parquet(os.path.join(root, "train"))
        test = pd.read_parquet(os.path.join(root, "test"))
        counts = np.bincount(train["item"].to_numpy(), minlength={n_items})
        p = np.maximum(counts, 1) ** 1.5
        table = distributed.evaluate(models, test, client=None, exclude=train,
                                     propensity=p / p.max(), estimators=estimators,
                                     users_per_task={per_file})
        workers = {{}}
    else:
        from dask.distributed import Client, LocalCluster
        with LocalCluster(n_workers=os.cpu_count(), threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            client.run(lambda: __import__("recbias_tutorial.distributed._block"))  # imports
            client.run(reset_peak)  # each worker's peak from here on
            base = client.run(peak_mb)  # what a worker holds after start-up and imports
            t0 = time.perf_counter()  # the cluster's start-up is not the evaluation's
            files = sorted(glob.glob(os.path.join(root, "train", "*.parquet")))
            counts = sum(client.gather(client.map(item_counts, files)))  # reduced on the cluster
            p = np.maximum(counts, 1) ** 1.5
            table = distributed.evaluate(models, os.path.join(root, "test"), client=client,
                                         exclude=os.path.join(root, "train"),
                                         propensity=p / p.max(), estimators=estimators)
            seconds = time.perf_counter() - t0
            workers = {{w: (m, base[w]) for w, m in client.run(peak_mb).items()}}
    seconds = time.perf_counter() - t0 if mode == "in process" else seconds
    users = int(table.loc[table["estimator"] == "aoa", "users"].iloc[0])
    print(json.dumps({{"seconds": seconds, "client_mb": rss_mb(), "workers_mb": list(workers.values()),
                      "pairs": users * n_models, "values": table["value"].tolist()}}))

if __name__ == "__main__":
    import sys
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
"""


def run(mode: str, root: Path, n_users: int, n_models: int) -> dict:
    code = CASE.format(factors=FACTORS, n_items=N_ITEMS, per_file=USERS_PER_FILE)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    try:
        out = subprocess.run([sys.executable, f.name, mode, str(root), str(n_users),
                              str(n_models)], capture_output=True, text=True, env=env)
    finally:
        os.unlink(f.name)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 200_000],
                        help="users per log (50 interactions each)")
    parser.add_argument("--models", type=int, default=10)
    args = parser.parse_args()
    from recbias_tutorial import distributed

    print(f"{args.models} factor models x AOA, SNIPS, stratified Recall@10 over {N_ITEMS:,} "
          f"items; blocks of {USERS_PER_FILE:,} users; {os.cpu_count()} cores")
    print("workers MB: each worker's peak (in brackets: after start-up, before the evaluation)")
    print(f"{'log':>12} {'path':>11} {'wall s':>7} {'pairs/s':>9} {'client MB':>10} "
          f"{'workers MB':>22} same values")
    for n_users in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            train, test = distributed.synthetic_log(n_users, N_ITEMS, per_user=PER_USER,
                                                    seed=0)
            for name, frame in (("train", train), ("test", test)):
                distributed.write_feedback(frame, root / name, users_per_file=USERS_PER_FILE,
                                           n_users=n_users, n_items=N_ITEMS)
            del train, test
            results = {mode: run(mode, root, n_users, args.models)
                       for mode in ("in process", "cluster")}
        ref = results["in process"]["values"]
        for mode, r in results.items():
            same = all(abs(a - b) <= 1e-12 * max(1.0, abs(b)) for a, b in zip(r["values"], ref))
            workers = ", ".join(f"{m:.0f} ({b:.0f})" for m, b in r["workers_mb"]) or "-"
            print(f"{n_users * PER_USER / 1e6:>9.0f} M {mode:>11} {r['seconds']:>7.1f} "
                  f"{r['pairs'] / r['seconds']:>9,.0f} {r['client_mb']:>10.0f} {workers:>22} "
                  f"{same}")


if __name__ == "__main__":
    main()
