"""Homework timings: each problem set's reference run (graded by otter, offline), grading
30 copies of one set's submissions on one core and on every core, and what one never-ending
submission costs. Prints seconds; tests never time.

    RECBIAS_DATA=... python benchmarks/bench_homework.py [--copies 30] [--set hw01_missing_data]
        [--time-limit 60] [--only-class]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("otterhw", ROOT / "homework" / "otterhw.py")
otterhw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(otterhw)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=30)
    parser.add_argument("--set", default="hw01_missing_data")
    parser.add_argument("--time-limit", type=float, default=60)
    parser.add_argument("--only-class", action="store_true", help="skip the per-set runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t = time.perf_counter()
        built = otterhw.build(tmp / "hw")
        print(f"build ({len(built)} sets): {time.perf_counter() - t:.1f} s")
        for name, paths in ({} if args.only_class else built).items():
            sub = tmp / "one" / name
            sub.mkdir(parents=True)
            shutil.copyfile(paths["solution"], sub / f"reference_{name}.ipynb")
            t = time.perf_counter()
            otterhw.grade(sub, tmp / "g1" / name, tmp / "hw")
            print(f"{name}: reference run and grading {time.perf_counter() - t:.1f} s")
        sub = tmp / "many"
        sub.mkdir()
        for i in range(args.copies):
            shutil.copyfile(built[args.set]["solution"], sub / f"student{i:02d}_{args.set}.ipynb")
        jobs = otterhw.default_jobs()
        for n_jobs in sorted({1, jobs}):
            t = time.perf_counter()
            otterhw.grade(sub, tmp / f"g{n_jobs}", tmp / "hw", n_jobs=n_jobs)
            dt = time.perf_counter() - t
            print(f"grading {args.copies} submissions of {args.set}, {n_jobs} at a time: "
                  f"{dt:.1f} s ({dt / args.copies:.1f} s per submission)")
        endless = json.loads(built[args.set]["solution"].read_text())
        code = [c for c in endless["cells"] if c["cell_type"] == "code"]
        code[len(code) // 2]["source"] = "while True:\n    pass\n"
        one = tmp / "endless"
        one.mkdir()
        (one / f"endless_{args.set}.ipynb").write_text(json.dumps(endless))
        t = time.perf_counter()
        otterhw.grade(one, tmp / "ge", tmp / "hw", time_limit=args.time_limit, n_jobs=1)
        print(f"one never-ending submission with a {args.time_limit:g} s time limit: "
              f"{time.perf_counter() - t:.1f} s (graded on what finished)")


if __name__ == "__main__":
    main()
