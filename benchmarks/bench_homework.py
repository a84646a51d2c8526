"""Homework timings: each problem set's reference run (graded by otter, offline) and grading
30 copies of one set's submissions. Prints seconds; tests never time.

    RECBIAS_DATA=... python benchmarks/bench_homework.py [--copies 30] [--set hw01_missing_data]
"""

from __future__ import annotations

import argparse
import importlib.util
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t = time.perf_counter()
        built = otterhw.build(tmp / "hw")
        print(f"build ({len(built)} sets): {time.perf_counter() - t:.1f} s")
        for name, paths in built.items():
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
        t = time.perf_counter()
        otterhw.grade(sub, tmp / "g2", tmp / "hw")
        dt = time.perf_counter() - t
        print(f"grading {args.copies} submissions of {args.set}: {dt:.1f} s "
              f"({dt / args.copies:.1f} s each, one at a time)")


if __name__ == "__main__":
    main()
