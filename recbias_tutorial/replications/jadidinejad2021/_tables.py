r"""Kendall's tau of each method with the open-loop truth: the paper's Table 6, Figure 4 (private).

Re-exported by :mod:`recbias_tutorial.replications.jadidinejad2021`; import them from there.
They read the values of :func:`protocol_values`: :func:`protocol_taus` gives, per seed, the
tau of every method of one protocol and both Steiger tests against the holdout (the paper's
Table 6, :data:`PAPER_STEIGER_P`, and Figure 4 over numbers of strata); :func:`kendall_taus`
runs one seed of one protocol in one call; :func:`protocol_frame` is the metric values behind
the taus and :func:`protocol_rows` the rows one protocol reads (the stored full-scale results).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..._validation import check_frame, check_int, check_k
from . import _protocol as _proto
from ._protocol import AUTHORS_SIZES
from ._values import _check_choices, _check_data, protocol_values


def protocol_rows(values: pd.DataFrame, *, protocol: str | Mapping[str, Any] = "authors",
                  n_strata: int = 2) -> pd.DataFrame:
    """The rows of :func:`protocol_values` that one protocol reads, at every cut-off.

    Enough to recompute that protocol's :func:`protocol_frame` and :func:`protocol_taus` at
    any cut-off (the full-scale results of ``make replicate`` are stored this way).

    Parameters
    ----------
    values : DataFrame
        From :func:`protocol_values`.
    protocol : "authors", "course" or mapping
        A protocol: one value per key of :data:`CHOICES` (its cut-off is ignored).
    n_strata : int
        Number of strata.

    Returns
    -------
    pandas.DataFrame
        The rows (same columns), with a fresh index.

    Raises
    ------
    ValueError
        If ``values`` is not a frame of :func:`protocol_values` or ``protocol`` is not a
        protocol.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.protocol_taus : reads them.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> world = rb.simulate(60, 40, seed=0, mean_ratings_per_user=12)
    >>> values = protocol_values(world, seeds=[0], sizes=(10,))
    >>> rows = protocol_rows(values)
    >>> protocol_taus(rows).equals(protocol_taus(values)), len(rows) < len(values)
    (True, True)
    """
    values = check_frame(values, "values", _proto.VALUE_COLUMNS)
    choices = _check_choices(protocol)
    mask = _proto.protocol_mask(values, choices, check_int(n_strata, "n_strata"))
    return values[mask].reset_index(drop=True)


def protocol_frame(values: pd.DataFrame, *, protocol: str | Mapping[str, Any] = "authors",
                   n_strata: int = 2) -> pd.DataFrame:
    """The metric values of one protocol: one row per (seed, model), one column per method.

    Parameters
    ----------
    values : DataFrame
        From :func:`protocol_values`.
    protocol : "authors", "course" or mapping
        A protocol: one value per key of :data:`CHOICES`.
    n_strata : int
        Number of strata.

    Returns
    -------
    pandas.DataFrame
        Index (``seed``, ``model``); columns ``truth`` (open-loop nDCG), ``holdout``,
        ``ips``, ``snips``, ``stratified``, ``Q1``... (those present in ``values``).

    Raises
    ------
    ValueError
        If ``values`` is not a frame of :func:`protocol_values`, ``protocol`` is not a
        protocol, or the protocol has no values.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.protocol_taus : their Kendall taus.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> world = rb.simulate(60, 40, seed=0, mean_ratings_per_user=12)
    >>> values = protocol_values(world, seeds=[0], sizes=(10,))
    >>> list(protocol_frame(values).columns)
    ['truth', 'holdout', 'ips', 'snips', 'stratified', 'Q1', 'Q2']
    """
    values = check_frame(values, "values", _proto.VALUE_COLUMNS)
    choices = _check_choices(protocol)
    truth, wide = _proto.select(values, choices, check_int(n_strata, "n_strata"))
    if wide.empty:
        raise ValueError(f"values has no rows for protocol {choices} with n_strata={n_strata}")
    frames = []
    for seed, part in wide.groupby(level="seed"):
        t = truth[truth["seed"].isin([seed, -1])].set_index("model")["value"].rename("truth")
        part = part.droplevel("seed").join(t, how="inner")
        frames.append(part[["truth"] + [c for c in part.columns if c != "truth"]]
                      .assign(seed=seed).set_index("seed", append=True).swaplevel())
    return pd.concat(frames)


def protocol_taus(values: pd.DataFrame, *, protocol: str | Mapping[str, Any] = "authors",
                  n_strata: int = 2, steiger: bool = False) -> pd.DataFrame:
    """Kendall's tau-b of each method with the open-loop ranking, per seed, for one protocol.

    Parameters
    ----------
    values : DataFrame
        From :func:`protocol_values` (it must hold the protocol's zoo, cut-off and strata).
    protocol : "authors", "course" or mapping
        A protocol: one value per key of :data:`CHOICES`.
    n_strata : int
        Number of strata.
    steiger : bool
        Add both Steiger tests of each method against the holdout: the authors'
        (``corrstats.dependent_corr`` on the Kendall taus, one-sided: ``authors_t``,
        ``authors_p``) and the course's (Pearson r of the values, two-sided:
        ``pearson_xy``, ``pearson_xz``, ``course_t``, ``course_p``).

    Returns
    -------
    pandas.DataFrame
        Columns ``seed``, ``method`` (``holdout``, ``ips``, ``snips``, ``stratified``,
        ``Q1``...), ``tau``, ``n_models`` (+ the Steiger columns).

    Raises
    ------
    ValueError
        If ``values`` lacks the columns of :func:`protocol_values` or ``protocol`` is not a
        protocol; if the protocol has no values.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.kendall_taus : one call, one seed.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> world = rb.simulate(60, 40, seed=0, mean_ratings_per_user=12)
    >>> values = protocol_values(world, seeds=[0], sizes=(10,))
    >>> protocol_taus(values)["method"].tolist()
    ['holdout', 'ips', 'snips', 'stratified', 'Q1', 'Q2']
    """
    values = check_frame(values, "values", _proto.VALUE_COLUMNS)
    choices = _check_choices(protocol)
    n_strata = check_int(n_strata, "n_strata")
    out = _proto.taus(values, choices, n_strata, with_steiger=bool(steiger))
    if out.empty:
        raise ValueError(f"values has no rows for protocol {choices} with n_strata={n_strata}")
    return out


def kendall_taus(data: Any, *, seed: int, protocol: str = "authors", cutoff: int | None = None,
                 n_strata: int = 2, sizes: Sequence[int] = AUTHORS_SIZES,
                 course_zoo: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Kendall's tau of each evaluation method with the open-loop ranking over a model zoo.

    ``protocol="authors"`` runs the protocol of Jadidinejad et al. (2021) as their code
    (terrierteam/stratified_recsys_eval, Cornac 1.x) runs it; where it differs from the
    paper, the code is followed:

    * propensities: item counts over *all* closed-loop ratings, a ``powerlaw.Fit`` (discrete,
      with :math:`x_{\\min}`; the installed powerlaw 2.x's, which on Coat differs from the 1.x
      their run used: :func:`powerlaw_propensity`'s ``fit``), :math:`n^\\alpha` above
      :math:`x_{\\min}`, :math:`n` below (the paper's Eq. 7 says :math:`n^{(\\gamma+1)/2}`);
    * strata: ``pandas.cut(bins=n_strata)``, equal width over the propensities of *all* test
      ratings; weights: each stratum's share of all (known) test ratings;
    * candidates: every item known in training, training items included (Cornac 1.x
      ``ranking_eval``); nDCG over the whole ranking when ``cutoff`` is None;
    * truth: separate models fitted on 100% of the log, evaluated on every MAR rating;
    * IPS / SNIPS: as their ``ranking_eval`` computes them, including the lookup
      ``props[str(idx)]`` by Cornac's internal index (the propensity of another item);
    * zoo: their families and hyper-parameters (seed 123) minus the TensorFlow / PyTorch
      ones (:data:`LEFT_OUT_FAMILIES`).

    ``protocol="course"`` is the course's protocol: propensities of the training split
    (:func:`recbias_tutorial.propensity.popularity_propensity`), quantile strata of the
    relevant rows and their shares, training pairs excluded from the candidates, the truth
    from the evaluated models themselves, ``models.model_zoo``. Both use the authors' split.

    Parameters
    ----------
    data : FeedbackData
        With ``mnar`` and ``mar`` (e.g. Coat or Yahoo! R3).
    seed : int
        Seed of the split (and of the course zoo).
    protocol : {"authors", "course"}
        Which protocol.
    cutoff : int or None
        Cut-off of nDCG; None is the whole ranking.
    n_strata : int
        Number of strata.
    sizes : sequence of int
        Latent sizes of the authors' zoo.
    course_zoo : mapping, optional
        Keyword arguments of ``models.model_zoo`` for the course protocol.

    Returns
    -------
    pandas.DataFrame
        One row per method, ``holdout``, ``ips``, ``snips``, ``stratified``, ``Q1`` ...
        ``Qn``; columns ``method``, ``tau`` (Kendall tau-b against the open-loop ranking over
        the zoo) and ``n_models``.

    Raises
    ------
    ValueError
        If ``data`` has no ``mar``; if ``seed``, ``cutoff``, ``n_strata`` or ``sizes`` are
        not valid; if ``protocol`` is unknown.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.protocol_values : many seeds and choices.
    recbias_tutorial.replications.jadidinejad2021.ladder : from one protocol to the other.
    recbias_tutorial.estimators.stratified : the estimator for one model.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> world = rb.simulate(60, 40, seed=0, mean_ratings_per_user=12)
    >>> kendall_taus(world, seed=0, sizes=(10,))[["method", "n_models"]].to_dict("list")
    {'method': ['holdout', 'ips', 'snips', 'stratified', 'Q1', 'Q2'], 'n_models': [10, 10, 10, 10, 10, 10]}
    """
    choices = _check_choices(protocol)
    if cutoff is not None:
        cutoff = check_k(cutoff, _check_data(data).n_items, "cutoff")
    choices["cutoff"] = cutoff
    values = protocol_values(data, seeds=[seed], sizes=sizes, ks=(cutoff,), n_strata=n_strata,
                             zoos=(choices["zoo"],), course_zoo=course_zoo)
    return protocol_taus(values, protocol=choices, n_strata=n_strata)[["method", "tau", "n_models"]]
