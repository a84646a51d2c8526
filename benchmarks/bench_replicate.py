"""Wall time and peak memory of ``make replicate``, per paper and dataset.

Runs ``scripts/replicate.py``'s replications (``--papers``) into a temporary folder, with
all cores or one (``--n-jobs``), and with the user's result cache (warm, if ``make replicate``
ran before) or an empty one (``--cold``: a temporary ``RECBIAS_FIT_CACHE_DIR``, so every
model is refitted). Each configuration runs in its own process, so peak memory (the process
and its worker processes, ``ru_maxrss``) is its own.

Run: ``RECBIAS_DATA=../shared/data .venv/bin/python benchmarks/bench_replicate.py
[--papers jadidinejad2021 carraro2022] [--datasets coat yahoo_r3] [--n-jobs -1 1] [--cold]``. A cold Yahoo! R3 run takes tens of
minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(paper: str, dataset: str, n_jobs: int, cold: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        if cold:
            env["RECBIAS_FIT_CACHE_DIR"] = str(Path(tmp) / "cache")
        subprocess.run([sys.executable, str(ROOT / "scripts" / "replicate.py"), "--papers", paper,
                        "--datasets", dataset, "--n-jobs", str(n_jobs), "--out", tmp],
                       check=True, env=env, stderr=subprocess.DEVNULL)
        path = Path(tmp) / paper / "provenance.json"
        record = json.loads(path.read_text()) if path.exists() else {"datasets": {}}
    return record["datasets"].get(dataset)  # None: the paper does not report this dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", nargs="+", default=["jadidinejad2021", "carraro2022", "yang2018", "wang2025"])
    parser.add_argument("--datasets", nargs="+", default=["coat", "yahoo_r3"])
    parser.add_argument("--n-jobs", nargs="+", type=int, default=[-1, 1])
    parser.add_argument("--cold", action="store_true", help="an empty cache (refit everything)")
    args = parser.parse_args()
    print(f"{'paper':16s} {'dataset':10s} {'n_jobs':>6s} {'cache':>5s} {'wall s':>8s} "
          f"{'peak MB':>8s} {'workers MB':>10s}")
    for paper in args.papers:
        for dataset in args.datasets:
            for n_jobs in args.n_jobs:
                r = run(paper, dataset, n_jobs, args.cold)
                if r is None:
                    continue
                print(f"{paper:16s} {dataset:10s} {n_jobs:6d} {'cold' if args.cold else 'warm':>5s} "
                      f"{r['wall_seconds']:8.1f} {r['peak_rss_mb']:8.0f} "
                      f"{r['peak_rss_workers_mb']:10.0f}", flush=True)


if __name__ == "__main__":
    main()
