"""compare_methods against calling the public estimators one model and one method at a time.

Both compute the same numbers on the same redraws (``tests/test_comparison.py`` checks the
equality): ``compare_methods`` ranks every model once per world and reads positions from a
table on each redraw; the baseline calls ``rb.aoa``, ``rb.ips``, ``rb.snips``,
``rb.stratified``, ``rb.intervene`` + ``rb.aoa``, ``rb.ure_recall`` and
``rb.recall_at_kbar`` (Recall@10 only) for every model on every redraw, as a chapter without
the module would. Prints both times per redraw and their ratio.

Run: ``.venv/bin/python benchmarks/bench_comparison.py``.
"""

from __future__ import annotations

import time

import numpy as np

import recbias_tutorial as rb
from recbias_tutorial import _comparison_methods as _m
from recbias_tutorial import comparison

N_USERS, N_ITEMS, N_MODELS, N_REDRAWS, K = 1000, 500, 8, 20, 10
N_LOOP = 3  # redraws of the one-by-one baseline (slow)


def main() -> None:
    world = rb.simulate(N_USERS, N_ITEMS, seed=0, mean_ratings_per_user=20, n_mar_items=10)
    rng = np.random.default_rng(1)
    models = {f"m{j}": rng.random((N_USERS, N_ITEMS)) + j * world.propensity
              for j in range(N_MODELS)}
    t = time.perf_counter()
    comparison.compare_methods(world, models=models, seed=2, n_redraws=N_REDRAWS, k=K)
    t_module = (time.perf_counter() - t) / N_REDRAWS

    s = comparison._setup(world, comparison._check_models(models, world.propensity.shape), K)
    train, p = world.mnar, world.propensity
    pop = rb.popularity_propensity(train, N_ITEMS, gamma=1.0)
    t = time.perf_counter()
    for r in range(N_LOOP):
        test, random, int_rng = _m.draw_sets(s, np.random.default_rng(r))
        parts = [rb.intervene(test, strategy=st, size=size, train=train, mar=random, seed=int_rng)
                 for size in (0.2, 0.5) for st in ("reg", "skew", "wtd", "wtd_h")]
        for scores in models.values():
            kw = dict(k=K, exclude=train)
            rb.aoa(scores, test, **kw)
            rb.ips(scores, test, p, n_relevant=s.n_true, **kw)
            for prop in (p, pop, pop, pop, pop, pop):  # true, 3 gammas, clipped, NB-like
                rb.snips(scores, test, prop, **kw)
            rb.stratified(scores, test, pop, binning="cut", bins_from="all", weights_from="all",
                          **kw)
            rb.stratified(scores, test, pop, **kw)
            for part in parts:
                rb.aoa(scores, part, **kw)
            rb.ure_recall(scores, random, **kw)
            rb.recall_at_kbar(scores, random, k_bar=1)
    t_loop = (time.perf_counter() - t) / N_LOOP
    print(f"{N_USERS} users x {N_ITEMS} items, {N_MODELS} models, recall and nDCG@{K}")
    print(f"compare_methods, per redraw (ranking once, amortised over {N_REDRAWS}): "
          f"{t_module:.2f} s")
    print(f"public estimators one by one, per redraw (recall only): {t_loop:.2f} s")
    print(f"ratio: {t_loop / t_module:.1f}x")


if __name__ == "__main__":
    main()
