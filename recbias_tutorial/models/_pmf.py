"""Cornac's PMF training loop, compiled with Numba: the same numbers, five times faster.

Cornac 3.0.1 trains :class:`cornac.models.PMF` with the Cython loop of its ``pmf.pyx``
(``pmf_linear`` / ``pmf_non_linear``: one RMSProp step per rating, per epoch). That loop is
compiled with bounds checks and no vectorisation, and PMF's 20 models are most of the
authors' zoo's fitting time in chapter 4. :func:`fit_pmf` runs a copy of the loop in the same
order of floating-point operations (no reassociation, no fast-math), so ``U`` and ``V`` are
bit-identical to Cornac's (``tests/models/test_pmf.py`` checks both variants, several sizes,
seeds and data sets with ``np.array_equal``). Everything around the loop is Cornac's own:
``Recommender.fit``, the rating scaling of the non-linear variant and ``_init_factors``.

:func:`fits_fast` says when the copy applies: a plain ``PMF`` of the Cornac version it was
copied from, trainable, not verbose (Cornac then prints a loss per epoch, which the copy does
not compute). Anything else goes to Cornac's ``fit``.
"""

from __future__ import annotations

from typing import Any

import cornac
import numpy as np

#: The Cornac version whose ``pmf.pyx`` the kernel copies.
COPIED_FROM = "3.0.1"


def fits_fast(model: Any) -> bool:
    """Whether :func:`fit_pmf` reproduces ``model.fit`` (see the module docstring)."""
    return (type(model) is cornac.models.PMF and cornac.__version__ == COPIED_FROM
            and bool(model.trainable) and not model.verbose
            and model.variant in ("linear", "non_linear")
            # warm starts (given or left by an earlier fit) update Cornac's arrays in place
            and model.U is None and model.V is None)


def fit_pmf(model: Any, train_set: Any) -> Any:
    """``model.fit(train_set)`` for a PMF that :func:`fits_fast`, with the compiled loop."""
    from cornac.models.pmf import pmf as cornac_pmf  # Cornac's own initialisation
    from cornac.utils.common import scale

    from ._pmf_kernel import pmf_epochs  # lazy: Numba compiles it on first use (cached on disk)

    cornac.models.Recommender.fit(model, train_set)
    uid, iid, rat = train_set.uir_tuple
    rat = np.array(rat, dtype="float32")
    if model.variant == "non_linear" and [model.min_rating, model.max_rating] != [0, 1]:
        rat = scale(rat, 0.0, 1.0, model.min_rating, model.max_rating)
    rat = np.ascontiguousarray(rat, dtype=np.float32)
    U, V = cornac_pmf._init_factors(model.num_users, model.num_items, model.k, {}, model.seed)
    U, V = np.asarray(U, dtype=np.float64), np.asarray(V, dtype=np.float64)  # new arrays
    # pmf.pyx declares these C floats: their values, and 1 - gamma, are single precision
    f32 = np.float32
    pmf_epochs(np.ascontiguousarray(uid, dtype=np.int32),
               np.ascontiguousarray(iid, dtype=np.int32), rat, U, V, int(model.max_iter),
               float(f32(model.lambda_reg)), float(f32(model.learning_rate)),
               float(f32(model.gamma)), float(f32(1) - f32(model.gamma)),
               model.variant == "non_linear")
    model.U, model.V = U, V
    return model
