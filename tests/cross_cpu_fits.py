"""Small fits of every trainer whose values ``make replicate`` stores, as bytes digests.

Run by ``tests/test_portable.py`` in subprocesses under other CPUs' settings (NumPy's
dispatch, OpenBLAS's kernels, numba's target, glibc's variants); not collected by pytest.
``python tests/cross_cpu_fits.py <world.npz>`` prints one JSON object: a name per fit ->
the sha256 of its weights and of its scores, so that two runs agree exactly when every
bit agrees.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings

import numpy as np
import pandas as pd


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
    return h.hexdigest()[:16]


def ncf_and_cornac(train, n_users, n_items, out):
    """Cornac's families of Jadidinejad et al.'s zoo (the NCF ones by the NumPy trainer)."""
    import cornac

    from recbias_tutorial.models import fit_scores
    from recbias_tutorial.replications import jadidinejad2021 as jad

    zoo = jad.authors_zoo(sizes=(8,), families=[*jad.AUTHORS_FAMILIES, "MLP", "GMF", "NeuMF"])
    for act in ("tanh", "elu", "selu", "sigmoid"):  # the activations with a portable function
        zoo[f"MLP-{act}"] = cornac.models.MLP(name=f"MLP-{act}", layers=(16, 8, 4), act_fn=act,
                                              backend="numpy", seed=123)
    zoo["NeuMF-reg"] = cornac.models.NeuMF(name="NeuMF-reg", num_factors=4, layers=(8, 4),
                                           reg=0.01, backend="numpy", seed=5)  # every row moves
    for name, model in zoo.items():
        if hasattr(model, "num_epochs"):
            model.num_epochs = min(model.num_epochs, 3)
        scores = fit_scores(model, train, n_users=n_users, n_items=n_items, seed=0, cache=False)
        weights = getattr(model, "numpy_weights", None)
        if weights is not None:
            arrays = [v for k, v in sorted(weights.items()) if k != "act_fn"]
            flat = [a for v in arrays for a in (v if isinstance(v, list) else [v])]
            out[f"{name} weights"] = digest(*flat)
        for attr in ("U", "V", "u_factors", "i_factors"):
            if isinstance(getattr(model, attr, None), np.ndarray):
                out[f"{name} {attr}"] = digest(getattr(model, attr))
        out[f"{name} scores"] = digest(scores)


def initial_weights(out):
    """TensorFlow's stateless normals for every input the Box-Muller step can see (its
    uniforms take 2**23 values): logf, sinf and cosf of the C library."""
    from recbias_tutorial.models._tf_random import _box_muller

    m = np.arange(2**23, dtype=np.uint32)
    u = (m | np.uint32(127 << 23)).view(np.float32) - np.float32(1)
    pairs = np.empty(2 * u.size, np.float32)
    pairs[0::2], pairs[1::2] = u, u[::-1]
    z = np.empty_like(pairs)
    _box_muller(pairs, z)
    out["Box-Muller, every uniform"] = digest(z)


def yang(train, n_users, n_items, out):
    from recbias_tutorial.models import fit_scores
    from recbias_tutorial.replications import yang2018

    models = yang2018.authors_models(n_train=len(train), n_iter=60, batch_size=400, seed=1)
    models.update(yang2018.course_models())
    for name, model in models.items():
        scores = fit_scores(model, train, n_users=n_users, n_items=n_items, seed=0, cache=False)
        out[f"yang2018 {name} scores"] = digest(scores)


def carraro(train, n_users, n_items, out):
    from recbias_tutorial.models import fit_scores
    from recbias_tutorial.replications import carraro2022

    for kind in ("ranksys", "cornac"):
        for model, settings in carraro2022.paper_grid(recommenders=kind).items():
            setting = sorted(settings)[0]
            scores = fit_scores(settings[setting](), train, n_users=n_users, n_items=n_items,
                                seed=0, cache=False)
            out[f"carraro2022 {kind} {model} {setting} scores"] = digest(scores)


def wang(train, mar, n_users, n_items, out):
    from recbias_tutorial.debiased_mf import train_mf
    from recbias_tutorial.replications import wang2025

    uniform, validation = mar.iloc[: len(mar) // 2], mar.iloc[len(mar) // 2:]
    for method in ("MF", "IPS", "DR"):
        fit = wang2025.fit_autodebias(method, train, uniform=uniform, validation=validation,
                                      n_users=n_users, n_items=n_items, threshold=4.0, seed=0,
                                      epochs=20, patience=20, block=(64, 40))
        out[f"wang2025 AutoDebias {method} scores"] = digest(fit.scores)
    for name, options in wang2025.course_trainers(train, n_users=n_users, n_items=n_items).items():
        fit = train_mf(train, n_users=n_users, n_items=n_items, seed=0, threshold=4.0, epochs=10,
                     **options)
        out[f"wang2025 course {name} weights"] = digest(
            fit.user_factors, fit.item_factors, fit.user_bias, fit.item_bias)
        out[f"wang2025 course {name} scores"] = digest(fit.scores())


def main(path: str) -> None:
    warnings.filterwarnings("ignore")
    z = np.load(path)
    frame = {k: pd.DataFrame({"user": z[f"{k}_user"], "item": z[f"{k}_item"],
                              "rating": z[f"{k}_rating"]}) for k in ("mnar", "mar")}
    n_users, n_items = int(z["n_users"]), int(z["n_items"])
    out: dict = {}
    initial_weights(out)
    ncf_and_cornac(frame["mnar"], n_users, n_items, out)
    yang(frame["mnar"], n_users, n_items, out)
    carraro(frame["mnar"], n_users, n_items, out)
    wang(frame["mnar"], frame["mar"], n_users, n_items, out)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
