"""Seconds per NCF model on Yahoo! R3: Cornac's TensorFlow backend against the NumPy trainer.

For GMF50 and NeuMF50 of the authors' zoo (``jadidinejad2021.authors_zoo``), each trainer in
turn fits one model on the whole closed-loop log (311,704 ratings, 20 epochs of 1,218 batches
of 256 positives + 1,024 negatives), scores every user and evaluates the open-loop truth, as
one model of the separate truth's unit of ``make replicate`` does (what provenance's
``family_seconds`` records). Both trainers start from the same initial weights, see the same
batches and are scored by the same NumPy forward pass, so the ratio is the trainers'.

Where the time goes is printed for both:

* NumPy: drawing the batches (``EpochBatches``, Cornac's draws from the dataset's generator),
  the compiled epochs (forward, backward, Adam; the rows a batch reads are first brought up to
  date in closed form), the final catch-up of every row, then scoring and evaluation; and the
  same fit with Keras's dense update applied step by step to every row (``lazy=False``), the
  cost the closed form defers.
* TensorFlow: one epoch of Cornac's ``uir_iter`` alone (its Python loop over the negatives,
  a ``dok_matrix`` lookup per draw) times the number of epochs, and the rest of the fit
  (TensorFlow's steps: a dense Adam update of every embedding row at every step).

Run on one core (``OMP_NUM_THREADS=1 TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1``):
``RECBIAS_DATA=... .venv/bin/python benchmarks/bench_ncf.py [--families GMF NeuMF]
[--skip-tensorflow]`` (about 50 minutes with TensorFlow, most of it TensorFlow's). Wall and
CPU seconds are printed; on a shared machine the CPU seconds are the fairer measure.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from contextlib import contextmanager

import recbias_tutorial as rb
from recbias_tutorial.models import _ncf_kernel, _ncf_train
from recbias_tutorial.models import to_cornac_dataset
from recbias_tutorial.replications import jadidinejad2021 as jad
from recbias_tutorial.replications.jadidinejad2021 import _protocol as proto

KS = (None, 5, 10, 20, 30, 100)  # make replicate's cut-offs


class Clock:
    """Wall and CPU seconds of what runs inside ``with clock.part(name)``."""

    def __init__(self):
        self.parts: dict[str, list[float]] = {}

    @contextmanager
    def part(self, name: str):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            w, c = self.parts.setdefault(name, [0.0, 0.0])
            self.parts[name] = [w + time.perf_counter() - wall, c + time.process_time() - cpu]


def timed(clock: Clock, name: str, function):
    def wrapper(*args, **kwargs):
        with clock.part(name):
            return function(*args, **kwargs)

    return wrapper


def one_model(data, family: str, backend: str) -> tuple[Clock, str]:
    """The separate truth's unit for one model of size 50 (MLP has none), with its parts."""
    clock = Clock()
    originals = (_ncf_train.EpochBatches.next_epoch, _ncf_kernel.train_epoch,
                 _ncf_kernel.catch_up_all)
    _ncf_train.EpochBatches.next_epoch = timed(clock, "numpy: draw the batches", originals[0])
    _ncf_kernel.train_epoch = timed(clock, "numpy: compiled epochs", originals[1])
    _ncf_kernel.catch_up_all = timed(clock, "numpy: final catch-up of every row", originals[2])
    from recbias_tutorial.models import _fit as fitting

    original_fit = fitting._fit
    fitting._fit = timed(clock, "fit", original_fit)
    try:
        with clock.part("total"):
            values = proto.unit_values(data, -1, sizes=(50,), ks=KS, n_strata=2, sweep=(),
                                       zoos=("authors",), course_zoo={}, families=(family,),
                                       ncf_backend=backend, fit_cache=False)
    finally:
        _ncf_train.EpochBatches.next_epoch, _ncf_kernel.train_epoch, \
            _ncf_kernel.catch_up_all = originals
        fitting._fit = original_fit
    return clock, str(values["model"].iloc[0])


def cornac_sampling_epoch(data) -> tuple[float, float]:
    """One epoch of Cornac's own ``uir_iter(256, shuffle=True, binary=True, num_zeros=4)``."""
    ds = to_cornac_dataset(data.mnar, n_users=data.n_users, n_items=data.n_items, seed=0)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in ds.uir_iter(256, shuffle=True, binary=True, num_zeros=4):
        pass
    return time.perf_counter() - wall, time.process_time() - cpu


def dense_fit(data, family: str) -> tuple[float, float]:
    """The NumPy fit with Keras's update of every row at every step (no deferral)."""
    model = jad.authors_zoo(sizes=(50,), families=(family,))[
        "MLP" if family == "MLP" else f"{family}50"]
    ds = to_cornac_dataset(data.mnar, n_users=data.n_users, n_items=data.n_items, seed=0)
    import cornac

    cornac.models.Recommender.fit(model, ds)
    wall, cpu = time.perf_counter(), time.process_time()
    _ncf_train.train_ncf(model, ds, lazy=False)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=["GMF", "NeuMF"],
                        choices=list(jad.NCF_FAMILIES))
    parser.add_argument("--skip-tensorflow", action="store_true")
    parser.add_argument("--skip-dense", action="store_true",
                        help="do not time the NumPy fit without the deferred update")
    args = parser.parse_args()
    has_tf = importlib.util.find_spec("tensorflow") is not None and not args.skip_tensorflow
    if has_tf:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    data = rb.load("yahoo_r3")
    # compile the NumPy trainer's loops once (Numba caches them on disk) before timing
    small = rb.simulate(60, 40, seed=0, mean_ratings_per_user=8)
    for family in args.families:
        proto.unit_values(small, -1, sizes=(10,), ks=(None,), n_strata=2, sweep=(),
                          zoos=("authors",), course_zoo={}, families=(family,), fit_cache=False)
    results = {}
    for family in args.families:
        for backend in (["numpy", "tensorflow"] if has_tf else ["numpy"]):
            clock, model = one_model(data, family, backend)
            results[family, backend] = clock
            wall, cpu = clock.parts["total"]
            print(f"{model} {backend}: {wall:.1f} s wall, {cpu:.1f} s CPU (fit, dense scores, "
                  "truth evaluation)", flush=True)
            for name, (w, c) in clock.parts.items():
                if name != "total":
                    print(f"    {name}: {w:.1f} s wall, {c:.1f} s CPU", flush=True)
            fit_w, fit_c = clock.parts["fit"]
            print(f"    scores + evaluation: {wall - fit_w:.1f} s wall, {cpu - fit_c:.1f} s CPU",
                  flush=True)
        if not args.skip_dense:
            w, c = dense_fit(data, family)
            print(f"    numpy fit without the deferred update (every row, every step): "
                  f"{w:.1f} s wall, {c:.1f} s CPU", flush=True)
    if has_tf:
        w, c = cornac_sampling_epoch(data)
        print(f"Cornac's uir_iter, one epoch of batches: {w:.1f} s wall, {c:.1f} s CPU "
              f"(x 20 epochs: {20 * w:.0f} s wall, {20 * c:.0f} s CPU of every TensorFlow fit)")
        print("\nratio TensorFlow / NumPy, seconds per model (fit, scores, evaluation):")
        for family in args.families:
            tf_w, tf_c = results[family, "tensorflow"].parts["total"]
            np_w, np_c = results[family, "numpy"].parts["total"]
            tf_fw, tf_fc = results[family, "tensorflow"].parts["fit"]
            np_fw, np_fc = results[family, "numpy"].parts["fit"]
            print(f"  {family}50: {tf_w / np_w:.1f}x wall ({tf_w:.0f} s / {np_w:.0f} s), "
                  f"{tf_c / np_c:.1f}x CPU ({tf_c:.0f} s / {np_c:.0f} s); fits alone "
                  f"{tf_fc / np_fc:.1f}x CPU ({tf_fc:.0f} s / {np_fc:.0f} s)")


if __name__ == "__main__":
    main()
