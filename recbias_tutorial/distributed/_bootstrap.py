r"""A user-level bootstrap whose resamples are drawn block by block.

:func:`~recbias_tutorial.stats.user_bootstrap` draws each resample as :math:`N` users with
replacement: multinomial counts :math:`(c_u)` with :math:`\sum_u c_u = N`, all probabilities
:math:`1/N`. The same counts are drawn in two steps: the number of draws that fall in each
block, :math:`(N_b) \sim \mathrm{Multinomial}(N, (n_b/N)_b)`, on the client, then, inside
block :math:`b`, :math:`N_b` users drawn uniformly from its :math:`n_b` users. So a worker
needs only its users' values, its :math:`N_b` and its seed; the resample's mean
:math:`\sum_b \sum_{u \in b} c_u v_u / N` is a sum of one number per block and resample. The
distribution of the resamples is the nonparametric bootstrap's; the draws are not
``user_bootstrap``'s (they depend on the seed and on the blocks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

_CHUNK = 1 << 20  # user draws per step inside a block


def plan(counts: dict[str, np.ndarray], n_resamples: int, seed: Any) -> dict:
    """Per group of estimators over the same users (same count per block): the draws per
    block of every resample, and one seed per block. ``counts``: label -> users per block."""
    from .._validation import as_generator

    rng = as_generator(seed)
    groups: dict[tuple, str] = {}
    label_group, totals, seeds = {}, {}, {}
    for label, per_block in counts.items():
        key = tuple(int(c) for c in per_block)
        if key not in groups:
            gid = groups[key] = f"g{len(groups)}"
            n = int(sum(key))
            if n < 2:
                raise ValueError(f"estimator {label!r} averages over {n} user(s): at least two "
                                 "are needed to bootstrap")
            totals[gid] = rng.multinomial(n, np.asarray(key, float) / n, size=n_resamples)
            seeds[gid] = rng.integers(0, 2**63 - 1, size=len(key))
        label_group[label] = groups[key]
    return {"groups": label_group, "totals": totals, "seeds": seeds}


def for_block(boot: dict, counts: dict[str, np.ndarray], b: int) -> dict:
    """The part of the plan block ``b`` needs."""
    return {"groups": boot["groups"],
            "totals": {g: t[:, b] for g, t in boot["totals"].items()},
            "seeds": {g: int(s[b]) for g, s in boot["seeds"].items()},
            "expected": {label: int(c[b]) for label, c in counts.items()}}


def block_sums(models: dict[str, dict], boot: dict, index: int) -> dict:
    """Per (model, label) the block's sum :math:`\\sum_{u \\in b} c_u v_u` of every resample."""
    out = {}
    for gid in set(boot["groups"].values()):
        labels = [lab for lab, g in boot["groups"].items() if g == gid]
        cols = [(m, lab) for m in models for lab in labels]
        values = np.column_stack([models[m][lab][2] for m, lab in cols])  # users x columns
        draws = boot["totals"][gid]  # per resample, the draws that fall in this block
        sums = np.zeros((len(draws), len(cols)))
        n_b = values.shape[0]
        if n_b:
            rng = np.random.default_rng(boot["seeds"][gid])
            r = 0
            while r < len(draws):  # resamples r..s-1 at a time, about _CHUNK draws
                s = r + max(1, int(np.searchsorted(np.cumsum(draws[r:]), _CHUNK)))
                s = min(s, len(draws))
                idx = rng.integers(0, n_b, size=int(draws[r:s].sum()))
                which = np.repeat(np.arange(s - r), draws[r:s])
                counts = np.bincount(which * n_b + idx, minlength=(s - r) * n_b)
                sums[r:s] = counts.reshape(s - r, n_b) @ values
                r = s
        for j, col in enumerate(cols):
            out[col] = sums[:, j]
    return out


def interval(sums: np.ndarray, n: int, confidence: float) -> tuple[float, float]:
    """Percentile interval of the resample means (``sums`` summed over blocks), as
    :func:`~recbias_tutorial.stats.user_bootstrap` takes it."""
    alpha = (1.0 - confidence) / 2.0
    low, high = np.nanquantile(sums / n, [alpha, 1.0 - alpha])
    return float(low), float(high)
