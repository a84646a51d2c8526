"""How much Table 6's Kendall tau depends on the zoo it ranks (private).

Re-exported by :mod:`recbias_tutorial.replications.jadidinejad2021`; import it from there.
Each model's values depend on that model alone, so any sub-zoo's tau is computed from the
values of the whole zoo (e.g. the stored full-scale run) by keeping that sub-zoo's rows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..._validation import check_frame, check_int, check_sequence
from . import _protocol as _proto
from ._values import _check_choices

_SIZE = re.compile(r"(\d+)$")


def _size(model: str) -> int:
    """The latent size in a model's name (``"PMFNL40"`` -> 40); 0 for a model without one."""
    if model in _proto.UNSIZED:
        return 0
    found = _SIZE.search(model)
    return int(found.group(1)) if found else 0


def model_family(name: str) -> str:
    """The family of a model of the authors' 104-model zoo, read from its name.

    Parameters
    ----------
    name : str
        A model name as :func:`authors_zoo` and the stored values spell it: a family and
        a latent size (``"WMF40"``, ``"PMFNL40"``), or ``"GA"``, ``"MPOP"``,
        ``"BaselineOnly"``, ``"MLP"`` (no size).

    Returns
    -------
    str
        One of ``AUTHORS_FAMILIES`` or ``NEURAL_FAMILIES``.

    Raises
    ------
    ValueError
        If ``name`` is not a string naming a model of the authors' zoo.

    Examples
    --------
    >>> model_family("PMFNL40"), model_family("GA"), model_family("WMF100")
    ('PMF-nonlinear', 'GlobalAvg', 'WMF')
    """
    known = (*_proto.AUTHORS_FAMILIES, *_proto.NEURAL_FAMILIES)
    family = _proto.family_of(name) if isinstance(name, str) else None
    sized = isinstance(name, str) and _size(name) > 0
    if family not in known or sized == (family in _proto.UNSIZED.values()):
        raise ValueError(f"name must name a model of the authors' zoo (a family of {list(known)} "
                         f"with a latent size, or one of {list(_proto.UNSIZED)}), got {name!r}")
    return family


def zoo_sensitivity(values: pd.DataFrame, *, protocol: str | Mapping[str, Any] = "authors",
                    n_strata: int = 2,
                    methods: Sequence[str] = ("holdout", "stratified")) -> pd.DataFrame:
    """Kendall's tau of each method with the open-loop ranking as the zoo changes.

    From the values of one zoo (:func:`protocol_values` or its stored rows,
    :func:`protocol_rows`), tau per seed for: the whole zoo; the zoo with each family left
    out in turn; and zoos of *one model per family*, one zoo per latent size (the models of
    that size, plus the families without a size: GlobalAvg, MostPop, BaselineOnly, MLP).
    Each model's values do not depend on the other models, so every sub-zoo's tau is that of
    a run with that sub-zoo.

    Parameters
    ----------
    values : DataFrame
        From :func:`protocol_values` or :func:`protocol_rows`, with the authors' zoo.
    protocol : "authors", "course" or mapping
        A protocol: one value per key of :data:`CHOICES` (its ``cutoff`` is the nDCG cut-off).
    n_strata : int
        Number of strata.
    methods : sequence of str
        The methods kept (of ``holdout``, ``ips``, ``snips``, ``stratified``, ``Q1``...).

    Returns
    -------
    pandas.DataFrame
        Columns ``zoo`` (``"all models"``, ``"without <family>"``, ``"one per family, size
        <k>"``), ``kind`` (``"all"``, ``"family left out"``, ``"one per family"``),
        ``family`` (the family left out, else ``""``), ``size`` (the size of a
        one-per-family zoo, else 0), ``n_models``, ``seed``, ``method``, ``tau``.

    Raises
    ------
    ValueError
        If ``values`` is not a frame of :func:`protocol_values` or holds a model that is not
        of the authors' zoo (:func:`model_family` refuses its name), ``protocol`` is not a
        protocol, a method is unknown, or the zoo has fewer than two families.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.protocol_taus : tau of one zoo.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> from recbias_tutorial.replications.jadidinejad2021 import protocol_values
    >>> world = rb.simulate(60, 40, seed=0, mean_ratings_per_user=12)
    >>> values = protocol_values(world, seeds=[0], sizes=(10, 20))
    >>> table = zoo_sensitivity(values)
    >>> sorted(table["kind"].unique())
    ['all', 'family left out', 'one per family']
    >>> int(table.query("zoo == 'without SVD'")["n_models"].iloc[0])  # 17 models less SVD's 2
    15
    """
    values = check_frame(values, "values", _proto.VALUE_COLUMNS)
    choices = _check_choices(protocol)
    n_strata = check_int(n_strata, "n_strata")
    known = ["holdout", "ips", "snips", "stratified"] + [f"Q{s + 1}" for s in range(n_strata)]
    methods = list(check_sequence(methods, "methods", "method names"))
    bad = [m for m in methods if m not in known]
    if bad or not methods:
        raise ValueError(f"methods must be a non-empty subset of {known}, got {methods!r}")
    models = pd.unique(values.loc[values["zoo"] == choices["zoo"], "model"])
    family = {}
    for m in models:
        try:
            family[m] = model_family(m)
        except ValueError:
            raise ValueError(f"values holds the model {m!r} (zoo {choices['zoo']!r}), which is "
                             "not a model of the authors' zoo: the families are read from the "
                             "authors' model names") from None
    families = list(dict.fromkeys(family.values()))
    if len(families) < 2:
        raise ValueError(f"values must hold models of at least two families, got {families}")
    sizes = sorted({_size(str(m)) for m in models} - {0})
    zoos = [("all models", "all", "", 0, set(models))]
    zoos += [(f"without {f}", "family left out", f, 0,
              {m for m in models if family[m] != f}) for f in families]
    zoos += [(f"one per family, size {k}", "one per family", "", k,
              {m for m in models if _size(str(m)) in (0, k)}) for k in sizes]
    rows = []
    for label, kind, left_out, size, keep in zoos:
        part = values[values["model"].isin(keep)]
        taus = _proto.taus(part, choices, n_strata)
        taus = taus[taus["method"].isin(methods)]
        rows.append(taus.assign(zoo=label, kind=kind, family=left_out, size=size))
    out = pd.concat(rows, ignore_index=True)
    return out[["zoo", "kind", "family", "size", "n_models", "seed", "method", "tau"]]
