"""The two trainers of the NCF families side by side, from the stored full-scale run (private).

Re-exported by :mod:`recbias_tutorial.replications.jadidinejad2021`; import them from there.
``make replicate`` trains MLP, GMF and NeuMF with the package's NumPy trainer; the rows
Cornac's TensorFlow backend had computed for them are kept beside the stored values
(``<dataset>_ncf_tensorflow.csv.gz``, provenance's ``tensorflow_ncf``).
:func:`trainer_comparison` sets the two side by side, model by model or as Table 6's tau;
:func:`neural_costs` reads what each trainer's fits cost (provenance's ``family_seconds``);
:func:`ncf_seed_spread` refits the NCF models' open-loop truth under other training seeds, the
spread the two trainers' difference is judged against.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ..._params import Options, declare
from ..._result_cache import cached_table
from ..._validation import check_choice, check_int, check_k, check_names, check_seeds
from . import _protocol as _proto

_KEYS = ["seed", "model", "estimator", "k"]


def _stored(results: str | os.PathLike, dataset: Any) -> tuple[pd.DataFrame, dict, Any]:
    """The stored rows, the dataset's provenance record and the results folder."""
    from ..._stored_results import _folder, read_stored_results

    tables, provenance = read_stored_results(results)
    dataset = check_choice(dataset, "dataset", tuple(tables))
    return tables[dataset], provenance["datasets"][dataset], _folder(results)[0]


def _tensorflow_rows(results: str | os.PathLike, dataset: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(stored rows, the TensorFlow rows kept for the same models), checked against provenance."""
    from ..._stored_results import typed_table
    from ...data._files import sha256sum

    rows, record, folder = _stored(results, dataset)
    kept = record.get("tensorflow_ncf")
    if not kept:
        raise ValueError(f"dataset {dataset!r}: the stored run keeps no TensorFlow rows of the "
                         "NCF families (provenance has no tensorflow_ncf record)")
    path = folder / kept["file"]
    if not path.is_file() or sha256sum(path) != kept.get("sha256"):
        raise ValueError(f"{path.name} is missing or not the file `make replicate` wrote (its "
                         "sha256 differs from provenance.json's tensorflow_ncf record)")
    tf = typed_table(pd.read_csv(path, keep_default_na=False, na_values={"value": [""]}),
                     "jadidinejad2021", path.name.split(".")[0], folder)
    return rows, tf


@declare(what=Options(("models", "taus", "rows")))
def trainer_comparison(dataset: str = "coat", *, what: str = "models",
                       results: str | os.PathLike = "jadidinejad2021") -> pd.DataFrame:
    """The NCF models of the stored run under both trainers: TensorFlow's rows and NumPy's.

    Cornac's TensorFlow backend and the package's NumPy trainer start from the same initial
    weights (the model's seed) and see the same batches (the dataset's seed), so they differ
    only by floating-point rounding, which 20 epochs may amplify. This reads the stored values
    (NumPy's) and the TensorFlow rows the run replaced.

    Parameters
    ----------
    dataset : str, default "coat"
        A stored dataset whose run kept TensorFlow rows (provenance's ``tensorflow_ncf``).
    what : {"models", "taus"}, default "models"
        ``"models"``: every stored value of those models (the open-loop truth, ``seed = -1``;
        holdout, IPS, SNIPS, stratified and each stratum per seed, at every cut-off).
        ``"taus"``: Table 6 (the authors' protocol, two strata) per seed and cut-off, over the
        whole zoo with those models' rows from each trainer.
        ``"rows"``: the stored values of the whole zoo with TensorFlow's rows in place of
        NumPy's for those models (what :func:`protocol_frame` reads).
    results : str or path, default "jadidinejad2021"
        The stored results (a paper's name or a folder, as
        :func:`recbias_tutorial.course.stored_results` takes).

    Returns
    -------
    pandas.DataFrame
        ``"models"``: columns ``seed``, ``model``, ``family``, ``estimator``, ``k``,
        ``tensorflow``, ``numpy``, ``difference`` (NumPy minus TensorFlow) and ``seed_sd``
        (the standard deviation of TensorFlow's values over the seeds, for the same model,
        estimator and cut-off; NaN for the truth, fitted once). ``"taus"``: columns ``k``,
        ``method``, ``seed``, ``tensorflow``, ``numpy``, ``difference``, ``n_models``; ``"rows"``: the stored
        values' columns.

    Raises
    ------
    ValueError
        If ``dataset`` is not stored, its run kept no TensorFlow rows, their file does not
        match its recorded sha256, or ``what`` is not one of the two tables.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.neural_costs : what each trainer costs.

    Examples
    --------
    >>> taus = trainer_comparison("coat", what="taus")
    >>> sorted(taus["method"].unique())
    ['Q1', 'Q2', 'holdout', 'ips', 'snips', 'stratified']
    >>> models = trainer_comparison("coat")
    >>> sorted(models["family"].unique())
    ['GMF', 'MLP', 'NeuMF']
    """
    rows, tf = _tensorflow_rows(results, dataset)
    if what == "models":
        columns = [c for c in rows.columns if c != "value"]
        both = tf.merge(rows, on=columns, suffixes=("_tf", "_np"), how="left", validate="1:1")
        out = both[_KEYS].copy()
        out.insert(2, "family", [_proto.family_of(str(m)) for m in out["model"]])
        out["tensorflow"], out["numpy"] = both["value_tf"], both["value_np"]
        out["difference"] = out["numpy"] - out["tensorflow"]
        per_seed = out["seed"] >= 0
        spread = out[per_seed].groupby(["model", "estimator", "k"])["tensorflow"].std()
        out["seed_sd"] = np.nan
        index = pd.MultiIndex.from_frame(out.loc[per_seed, ["model", "estimator", "k"]])
        out.loc[per_seed, "seed_sd"] = spread.reindex(index).to_numpy()
        return out.sort_values(["model", "estimator", "k", "seed"]).reset_index(drop=True)
    with_tf = pd.concat([rows[~rows["model"].isin(set(tf["model"]))], tf], ignore_index=True)
    if what == "rows":
        return with_tf
    parts = []
    for k in sorted(rows["k"].unique()):
        choices = {**_proto.AUTHORS, "cutoff": None if k == -1 else int(k)}
        a = _proto.taus(with_tf, choices, 2).rename(columns={"tau": "tensorflow"})
        b = _proto.taus(rows, choices, 2).rename(columns={"tau": "numpy"})
        both = a.merge(b, on=["seed", "method", "n_models"], validate="1:1")
        parts.append(both.assign(k=int(k)))
    out = pd.concat(parts, ignore_index=True)
    out["difference"] = out["numpy"] - out["tensorflow"]
    return out[["k", "method", "seed", "tensorflow", "numpy", "difference", "n_models"]]


def neural_costs(dataset: str = "yahoo_r3", *,
                 results: str | os.PathLike = "jadidinejad2021") -> pd.DataFrame:
    """What each neural family costs with each trainer, as the stored run measured it.

    One row per neural family and trainer with a measurement in provenance: for a family that
    ran, its fits over the separate truth and the seeds (fit, dense scores and evaluation of
    every model, per model); for one only timed, one model (``scripts/replicate.py
    --time-families``). Cornac's TensorFlow backend trains WMF, and the NCF families before
    the NumPy trainer replaced it (provenance's ``tensorflow_family_seconds``).

    Parameters
    ----------
    dataset : str, default "yahoo_r3"
        A stored dataset.
    results : str or path, default "jadidinejad2021"
        The stored results (a paper's name or a folder).

    Returns
    -------
    pandas.DataFrame
        Columns ``family``, ``trainer`` (``"numpy"`` or ``"tensorflow"``), ``models`` (in the
        authors' zoo), ``measured`` (``"ran (truth + 5 seeds)"`` or ``"one model timed
        (<model>)"``), ``seconds_per_model``, ``hours`` (every model of the family over the
        truth and the seeds on one core) and ``stored`` (whether the stored values hold this
        trainer's rows of the family).

    Raises
    ------
    ValueError
        If ``dataset`` is not stored.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.trainer_comparison : the values of both.

    Examples
    --------
    >>> costs = neural_costs("coat")
    >>> sorted(costs.query("trainer == 'numpy'")["family"])
    ['GMF', 'MLP', 'NeuMF']
    """
    rows, record, _ = _stored(results, dataset)
    n_units = int(rows.loc[rows["seed"] >= 0, "seed"].nunique()) + 1  # the seeds + the truth
    sizes = len(_proto.AUTHORS_SIZES)
    stored_by = {f: ("tensorflow" if f not in _proto.NCF_FAMILIES else
                     record.get("ncf_backends", {}).get(f, "tensorflow"))
                 for f in record.get("families", ())}
    entries = []
    for key in ("family_seconds", "tensorflow_family_seconds", "numpy_family_seconds"):
        for family, cost in record.get(key, {}).items():
            entries.append((family, cost.get("backend", "tensorflow"), cost))
    out = []
    for family, trainer, cost in entries:
        n_models = 1 if family in _proto.UNSIZED.values() else sizes
        if cost.get("models"):
            per_model = cost["seconds_per_model_fit_and_evaluation"]
            measured = f"ran (truth + {n_units - 1} seeds)"
        else:
            per_model = cost["seconds_one_model_fit_and_evaluation"]
            measured = f"one model timed ({cost.get('timed_model', '?')})"
        out.append({"family": family, "trainer": trainer, "models": n_models,
                    "measured": measured, "seconds_per_model": float(per_model),
                    "hours": float(per_model) * n_models * n_units / 3600,
                    "stored": stored_by.get(family) == trainer})
    order = {f: i for i, f in enumerate(_proto.NEURAL_FAMILIES)}
    table = pd.DataFrame(out, columns=["family", "trainer", "models", "measured",
                                       "seconds_per_model", "hours", "stored"])
    table = table.drop_duplicates(["family", "trainer"])
    return table.sort_values(["family", "trainer"], key=lambda c: c.map(order) if
                             c.name == "family" else c).reset_index(drop=True)


def ncf_seed_spread(data: Any, *, seeds: Any = (124, 125, 126, 127),
                    families: Any = _proto.NCF_FAMILIES, sizes: Any = _proto.AUTHORS_SIZES,
                    ks: Any = (None, 5, 10, 20, 30, 100), cache: bool | None = None
                    ) -> pd.DataFrame:
    """The open-loop truth of the NCF models refitted under other training seeds (NumPy trainer).

    The stored run fits each model of the separate truth once (model seed 123, batches drawn
    with the dataset's seed 0), so it has no spread of its own. Here every model is fitted
    again on the whole log once per seed ``s``, with the model's seed ``s`` (its initial
    weights) and the batches' seed ``s``, and its open-loop nDCG computed as the stored run
    computes the truth. The standard deviation over the seeds is the training noise a
    difference between the two trainers is compared with.

    Parameters
    ----------
    data : FeedbackData
        With a randomly exposed test set (``data.mar``), e.g. ``recbias_tutorial.load("coat")``.
    seeds : sequence of int, default (124, 125, 126, 127)
        Distinct non-negative training seeds.
    families : sequence of str, default NCF_FAMILIES
        Some of ``"MLP"``, ``"GMF"``, ``"NeuMF"``.
    sizes : sequence of int, default AUTHORS_SIZES
        Latent sizes of GMF and NeuMF (MLP has none).
    ks : sequence of int or None, default (None, 5, 10, 20, 30, 100)
        nDCG cut-offs (``None``: the whole ranking, written ``k = -1``).
    cache : bool or None, default None
        Read back / store the result in the on-disk result cache (None: the package default).

    Returns
    -------
    pandas.DataFrame
        Columns ``train_seed``, ``model``, ``family``, ``k``, ``value``.

    Raises
    ------
    ValueError
        If ``data`` has no ``mar`` test set, ``seeds``, ``families``, ``sizes`` or ``ks`` is
        empty or repeats an entry, a family is not an NCF family, a size is not a positive int
        or a cut-off is not in ``[1, n_items]``.

    See Also
    --------
    trainer_comparison : the two trainers' stored values.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> data = rb.simulate(60, 40, seed=0, mean_ratings_per_user=8)
    >>> spread = ncf_seed_spread(data, seeds=[1, 2], families=["GMF"], sizes=[10], ks=[None],
    ...                          cache=False)
    >>> spread[["train_seed", "model", "k"]].values.tolist()
    [[1, 'GMF10', -1], [2, 'GMF10', -1]]
    """
    from ._values import _check_data

    data = _check_data(data)
    seeds = check_seeds(seeds)
    families = tuple(check_choice(f, "families", _proto.NCF_FAMILIES)
                     for f in check_names(families, "families"))
    sizes = tuple(check_int(k, "sizes") for k in check_names(sizes, "sizes"))
    ks = tuple(None if k is None else check_k(k, data.n_items, "ks")
               for k in check_names(ks, "ks"))
    arguments = dict(seeds=seeds, families=families, sizes=sizes, ks=ks)
    return cached_table("jadidinejad2021.ncf_seed_spread", data, arguments,
                        lambda: _seed_spread(data, **arguments), cache=cache)


def _seed_spread(data: Any, *, seeds, families, sizes, ks) -> pd.DataFrame:
    from ...models import iter_scores  # lazy: Cornac
    from ._testsets import truth_values

    rows = []
    for seed in seeds:
        zoo = _proto.zoo_of(sizes, families, "numpy")
        for model in zoo.values():
            model.seed, model.rng = seed, np.random.RandomState(seed)
        for name, scores in iter_scores(zoo, data.mnar, n_users=data.n_users,
                                        n_items=data.n_items, seed=seed, cache=False,
                                        progress=False):
            rows += [(seed, name, _proto.family_of(name), k, v)
                     for k, v in truth_values(scores, data.mar, threshold=data.threshold, ks=ks)]
    return pd.DataFrame(rows, columns=["train_seed", "model", "family", "k", "value"])
