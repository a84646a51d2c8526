r"""Propensity-stratified evaluation over a model zoo (Jadidinejad, Macdonald & Ounis, SIGIR 2021).

The paper judges an offline evaluation protocol by how well the ranking of *many* models it
produces agrees with the ranking under an open-loop (MAR) ground truth, and shows that
propensity-stratified evaluation can reverse the order of two models inside every stratum
(Simpson's paradox).

* :func:`holdout_evaluator` builds, once per test set, a function ``scores -> tidy frame``
  that computes, for one model, the ground-truth nDCG@k on a MAR test set and the estimates
  of it from a logged (MNAR) held-out split: ``holdout`` (plain per-user nDCG@k), ``IPS`` and
  ``SNIPS`` (the DCG gain weighted by 1/P), ``stratified`` (propensity strata, combined as
  :math:`\sum_s \mathrm{share}_s M_s`) and each stratum ``Q1..Qn`` alone. Every rank
  position is computed once per model and test set and reused for all cut-offs, strata and
  estimators; the values equal those of :func:`recbias_tutorial.estimators.stratified`,
  :func:`~recbias_tutorial.estimators.snips` and :func:`~recbias_tutorial.estimators.ips`
  (the tests check it).
* :func:`rank_relevant`: the relevant test rows with their rank positions and propensities.
* :func:`kendall_taus` runs the authors' protocol *as their code runs it*
  (terrierteam/stratified_recsys_eval, Cornac 1.x) or the course's, in one call:
  Kendall's tau of holdout, IPS, SNIPS, stratified and each stratum with the open-loop
  ranking over a model zoo. :func:`protocol_values` computes everything both protocols and
  every step between them need over several seeded splits; :func:`protocol_taus`,
  :func:`protocol_frame` and :func:`ladder` (one choice of :data:`CHOICES` switched at a
  time) read it. :func:`powerlaw_propensity`, :func:`authors_split` and
  :func:`authors_zoo` are the authors' pieces; ``PAPER_*`` hold the paper's numbers.
* :func:`evaluate_zoo` fits, scores and evaluates the models of a zoo one at a time;
  :func:`agreement` (Kendall's tau and Pearson's r of every estimator against the truth) and
  :func:`steiger` (Steiger's test between two estimators) compare the protocols.

The strata themselves are core concepts (:func:`recbias_tutorial.estimators.assign_strata`,
:func:`~recbias_tutorial.estimators.strata_table`), as are
:func:`recbias_tutorial.stats.ranking_agreement` and :func:`recbias_tutorial.stats.reversal_pairs`.

Tidy frames have the columns ``estimator``, ``n_strata``, ``binning``, ``k`` and ``value``
(plus ``model`` over a zoo). Estimators that do not stratify have ``n_strata = 0`` and
``binning = ""``; ``stratified`` and ``Q1..Qn`` carry the number of strata and the binning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice, check_feedback, check_frame, check_int, check_k
from .._result_cache import cached_table
from . import _jadidinejad2021_protocol as _proto
from ._jadidinejad2021_extensions import (agreement, evaluate_zoo, holdout_evaluator,
                                          rank_relevant, steiger)

__all__ = ["AUTHORS_FAMILIES", "AUTHORS_SIZES", "CHOICES", "LADDER_STEPS", "LEFT_OUT_FAMILIES",
           "NEURAL_FAMILIES", "PAPER_FIG4", "PAPER_FIG4_SIGNIFICANT", "PAPER_N_MODELS", "PAPER_STEIGER_P",
           "PAPER_TABLE1B", "PAPER_TABLE1B_SHARES", "PAPER_TABLE6",
           "agreement", "authors_split", "authors_zoo", "evaluate_zoo", "holdout_evaluator",
           "kendall_taus", "ladder", "powerlaw_propensity", "protocol_frame", "protocol_rows",
           "protocol_taus",
           "protocol_values", "rank_relevant", "steiger"]

# --------------------------------------------------------------------------------------
# the authors' protocol, as their code runs it (terrierteam/stratified_recsys_eval)
# --------------------------------------------------------------------------------------

#: The protocol choices where the authors' code and the course differ:
#: ``{choice: (authors' value, course's value)}``. See :func:`ladder`.
CHOICES = dict(_proto.CHOICES)
#: Latent sizes of the authors' zoo, ``range(10, 110, 10)`` (``train/*.py``).
AUTHORS_SIZES = _proto.AUTHORS_SIZES
#: Families of the authors' 104-model zoo that Cornac 3 trains here (73 models).
AUTHORS_FAMILIES = _proto.AUTHORS_FAMILIES
#: Number of models in the paper's zoo (Section 6.2; ``utils.get_models(variant="large")``).
PAPER_N_MODELS = 104
#: Families of their zoo that need TensorFlow or PyTorch in Cornac (31 of the 104 models).
LEFT_OUT_FAMILIES = _proto.LEFT_OUT_FAMILIES
#: The left-out families, trainable with TensorFlow installed (``pip install -e '.[neural]'``,
#: CPU build): pass them in ``families``.
NEURAL_FAMILIES = _proto.NEURAL_FAMILIES
#: Kendall's tau with the open-loop ranking over 104 models, nDCG (paper, Table 6; identical
#: to the outputs stored in the authors' notebooks ``experiments_coat.ipynb`` and
#: ``experiments_yahoo.ipynb``). ``k = -1`` is the whole ranking (their ``NDCG@-1``).
PAPER_TABLE6 = pd.DataFrame(
    [("coat", k, m, v) for k, vals in {
        5: (-0.040, 0.051, 0.116, 0.362, -0.288), 10: (0.121, 0.165, 0.219, 0.418, -0.240),
        20: (0.126, 0.118, 0.172, 0.450, -0.195), 30: (0.165, 0.159, 0.213, 0.467, -0.207),
        100: (0.327, 0.360, 0.393, 0.547, -0.186), -1: (0.202, 0.225, 0.283, 0.509, -0.208)}.items()
     for m, v in zip(("holdout", "ips", "stratified", "Q1", "Q2"), vals)]
    + [("yahoo_r3", k, m, v) for k, vals in {
        5: (0.599, 0.641, 0.700, 0.407, 0.414), 10: (0.693, 0.704, 0.697, 0.559, 0.501),
        20: (0.729, 0.721, 0.716, 0.636, 0.523), 30: (0.652, 0.653, 0.713, 0.673, 0.450),
        100: (0.701, 0.724, 0.774, 0.773, 0.348), -1: (0.622, 0.644, 0.710, 0.722, 0.336)}.items()
       for m, v in zip(("holdout", "ips", "stratified", "Q1", "Q2"), vals)],
    columns=["dataset", "k", "method", "tau"])
#: One-sided p of the authors' Steiger test, stratified vs holdout (same sources as Table 6).
PAPER_STEIGER_P = pd.DataFrame(
    [("coat", k, p) for k, p in {5: 0.01, 10: 0.02, 20: 0.09, 30: 0.07, 100: 0.04, -1: 0.03}.items()]
    + [("yahoo_r3", k, p) for k, p in {5: 0.01, 10: 0.45, 20: 0.33, 30: 0.03, 100: 0.00,
                                       -1: 0.00}.items()], columns=["dataset", "k", "p"])
#: Mean +- sd of tau over 2..10 strata, whole-ranking nDCG (paper, Section 7.2, Figure 4).
PAPER_FIG4 = {"coat": (0.266, 0.021), "yahoo_r3": (0.706, 0.026)}
#: Numbers of strata (of 2..10) significantly better than holdout (paper, Section 7.2).
PAPER_FIG4_SIGNIFICANT = {"coat": 5, "yahoo_r3": 7}
#: The nDCG of models A and B in Q1 (99% of the test) and Q2 (1%), with E, the paper's Table 1b.
PAPER_TABLE1B = pd.DataFrame({"Q1": [0.339, 0.350], "Q2": [0.695, 0.418], "E": [0.343, 0.351]},
                             index=["A", "B"])
#: Share of the test data in each stratum of Table 1b.
PAPER_TABLE1B_SHARES = {"Q1": 0.99, "Q2": 0.01}


def authors_zoo(*, sizes: Sequence[int] = AUTHORS_SIZES,
                families: Sequence[str] = AUTHORS_FAMILIES) -> dict:
    """Fresh Cornac models of the authors' zoo (``utils.get_models(variant="large")``).

    Same families, names and hyper-parameters as their code (MF without biases, learning
    rate 0.001 and early stopping; SVD at learning rate 0.001; PMF linear and non-linear;
    MMMF, BPR, WBPR; Cornac's defaults otherwise; seed 123), by default without the
    families that need TensorFlow (:data:`LEFT_OUT_FAMILIES`). With TensorFlow installed
    (the ``neural`` extra), :data:`NEURAL_FAMILIES` (``MLP``; ``WMF``, ``GMF``, ``NeuMF`` at
    every size) can be asked for, with Cornac's TensorFlow backend, as the authors ran them
    (Cornac 3's PyTorch backend refuses their ``NeuMF{k}``).
    One deviation: their ``BaselineOnly(verbose=False)`` has no seed (it draws from numpy's
    global generator); ours gets ``seed=123`` so that runs are reproducible.

    Parameters
    ----------
    sizes : sequence of int
        Latent sizes (their 10, 20, ..., 100).
    families : sequence of str
        A subset of :data:`AUTHORS_FAMILIES` and :data:`NEURAL_FAMILIES`.

    Returns
    -------
    dict
        Model name (theirs, e.g. ``"PMFNL40"``) -> unfitted ``cornac.models.Recommender``.

    Raises
    ------
    ValueError
        If a size is not a positive integer or a family is unknown.
    ImportError
        If a neural family is asked for and TensorFlow is not installed.

    See Also
    --------
    recbias_tutorial.models.model_zoo : the course's zoo.

    Examples
    --------
    >>> len(authors_zoo())  # of their 104: MLP, WMF, GMF and NeuMF need TF / PyTorch
    73
    """
    sizes = tuple(check_int(k, "sizes") for k in sizes)
    families = tuple(check_choice(f, "families", AUTHORS_FAMILIES + NEURAL_FAMILIES)
                     for f in families)
    return _proto.zoo_of(sizes, families)


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


def _check_data(data: Any) -> Any:
    for attr in ("mnar", "mar", "n_users", "n_items", "threshold"):
        if not hasattr(data, attr):
            raise ValueError(f"data must be a FeedbackData (with .{attr}), got {type(data).__name__}")
    if data.mar is None:
        raise ValueError("data must have a randomly exposed test set (data.mar) for the truth")
    for part in ("mnar", "mar"):  # without relevant ratings every model scores 0 everywhere
        ratings = getattr(data, part)["rating"].to_numpy(dtype=float)
        if not (ratings >= data.threshold).any():
            raise ValueError(f"data.{part} has no relevant rating (rating >= threshold="
                             f"{data.threshold}): there is nothing to rank models by")
    return data


def _check_choices(protocol: Any) -> dict:
    if isinstance(protocol, str):
        protocol = check_choice(protocol, "protocol", ("authors", "course"))
        return dict(_proto.AUTHORS if protocol == "authors" else _proto.COURSE)
    if not isinstance(protocol, Mapping) or set(protocol) != set(CHOICES):
        raise ValueError(f"protocol must be 'authors', 'course' or a mapping with the keys "
                         f"{sorted(CHOICES)}, got {protocol!r}")
    for name, value in protocol.items():
        if value not in CHOICES[name] and not (name == "cutoff" and isinstance(value, int)):
            raise ValueError(f"protocol[{name!r}] must be one of {CHOICES[name]}, got {value!r}")
    return dict(protocol)


def powerlaw_propensity(counts: Any) -> tuple[np.ndarray, float, float]:
    r"""The authors' propensities: a ``powerlaw.Fit`` of the item counts, then :math:`n^\alpha`.

    ``StratifiedEvaluation._estimate_propensities`` counts every item over *all* closed-loop
    ratings (test ratings included), fits a discrete power law by maximum likelihood with the
    ``powerlaw`` package (which also chooses :math:`x_{\min}`), and replaces a count
    :math:`n > x_{\min}` by :math:`n^\alpha`; counts at or below :math:`x_{\min}` stay as they
    are. (The paper's Eq. 7 says :math:`n^{(\gamma+1)/2}`; the code does this.)

    Parameters
    ----------
    counts : array-like of int
        Ratings per item (zeros are left out of the fit and keep propensity 0).

    Returns
    -------
    (propensity, alpha, xmin) : (numpy.ndarray, float, float)

    Raises
    ------
    ValueError
        If ``counts`` is not a 1-D array of non-negative whole numbers with at least two
        positive values.

    See Also
    --------
    recbias_tutorial.propensity.popularity_propensity : the course's propensities.

    Examples
    --------
    >>> counts = np.round(1000 / np.arange(1, 201) ** 0.9).astype(int)
    >>> p, alpha, xmin = powerlaw_propensity(counts)
    >>> bool(alpha > 1), bool(np.all(p[counts <= xmin] == counts[counts <= xmin]))
    (True, True)
    """
    c = np.asarray(counts, dtype=float)
    if c.ndim != 1 or not np.isfinite(c).all() or (c < 0).any() or (c != np.round(c)).any():
        raise ValueError("counts must be a 1-D array of non-negative whole numbers")
    if (c > 0).sum() < 2:
        raise ValueError("counts must have at least two positive values to fit a power law")
    return _proto.fit_powerlaw(c)


def authors_split(mnar: pd.DataFrame, *, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The authors' 80/20 split of the closed-loop log (``StratifiedEvaluation._split``).

    ``numpy.random.RandomState(seed).permutation`` of the rows; the last ``int(0.2 n)`` are
    the test set. Test rows whose user or item is absent from training are dropped
    (``exclude_unknowns=True``), but still count when the strata edges are set.

    Parameters
    ----------
    mnar : DataFrame
        The closed-loop log (``user``, ``item``, ``rating``), in file order.
    seed : int
        Seed of the permutation (their code used ``seed=None``, a new split per run).

    Returns
    -------
    (train, test_all, test) : tuple of DataFrame
        Training rows in shuffled order, all test rows, and the evaluated test rows.

    Raises
    ------
    ValueError
        If ``mnar`` is not valid feedback or ``seed`` is not a non-negative int.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.kendall_taus : uses it.

    Examples
    --------
    >>> log = pd.DataFrame({"user": [0, 0, 1, 1, 2], "item": [0, 1, 0, 1, 1], "rating": 5.0})
    >>> train, test_all, test = authors_split(log, seed=0)
    >>> len(train), len(test_all)
    (4, 1)
    """
    check_feedback(mnar, "mnar")
    seed = check_int(seed, "seed", low=0)
    return _proto.ratio_split(mnar, seed)


def protocol_values(data: Any, *, seeds: Sequence[int], sizes: Sequence[int] = AUTHORS_SIZES,
                    ks: Sequence[int | None] = (None,), n_strata: int = 2,
                    sweep: Iterable[int] = (), zoos: Sequence[str] = ("authors",),
                    course_zoo: Mapping[str, Any] | None = None,
                    families: Sequence[str] = AUTHORS_FAMILIES,
                    progress: bool = False, cache: bool | None = None,
                    n_jobs: int = 1) -> pd.DataFrame:
    """Every value the two protocols and the steps between them need, over seeded splits.

    For each seed: the authors' split (:func:`authors_split`), both kinds of propensities,
    the strata of both rules, and for every model of each zoo (fitted on the training
    split): holdout nDCG, IPS and SNIPS of both protocols, the stratified value under both
    weightings and each stratum alone, for both candidate sets, at each cut-off; plus the
    open-loop truth of the same model (MAR pairs seen in training dropped, training pairs
    excluded). Once per dataset: the authors' separate truth, their zoo fitted on the whole
    log and evaluated on every MAR rating, ranking every item.

    Parameters
    ----------
    data : FeedbackData
        With ``mnar`` (the closed-loop log) and ``mar`` (randomly exposed test ratings).
    seeds : sequence of int
        One split per seed.
    sizes : sequence of int
        Latent sizes of the authors' zoo (their 10, 20, ..., 100 by default).
    ks : sequence of int or None
        Cut-offs of nDCG; None is the whole ranking (stored as ``k = -1``).
    n_strata : int
        Number of strata of the main ``stratified`` and ``Q*`` rows.
    sweep : iterable of int
        Further numbers of strata (``stratified`` rows of both strata rules).
    zoos : sequence of {"authors", "course"}
        Zoos to fit: the authors' (:data:`AUTHORS_FAMILIES`) and/or ``models.model_zoo``.
    course_zoo : mapping, optional
        Keyword arguments of ``models.model_zoo`` (``seed`` is the split's seed).
    families : sequence of str
        Families of the authors' zoo to fit (a subset of :data:`AUTHORS_FAMILIES`, plus
        :data:`NEURAL_FAMILIES` with TensorFlow installed).
    progress : bool
        Text progress bars.
    cache : bool, optional
        Read the result back from the on-disk cache when the same data, arguments and
        package code were computed before, and store it otherwise (the fitted-score cache's
        folder and switch: None follows ``RECBIAS_FIT_CACHE``, default on). The separate truth
        and each seed are also stored on their own, so an interrupted run resumes where it
        stopped and a run with more seeds computes only the new ones.
    n_jobs : int, default 1
        Processes running the units (the separate truth, each seed) at once, as
        ``joblib.Parallel``: -1 uses every core. The values do not depend on it.

    Returns
    -------
    pandas.DataFrame
        Columns ``seed`` (-1 for the separate truth), ``zoo``, ``truth``, ``model``,
        ``candidates``, ``propensity``, ``strata``, ``weights``, ``n_strata``, ``k``,
        ``estimator``, ``value``. ``attrs["seconds"]`` holds the wall time of the truth and
        of each seed in the run that computed it; ``attrs["cached"]`` whether this call read
        it from the cache.

    Raises
    ------
    ValueError
        On a ``data`` without ``mar``, bad seeds, sizes, cut-offs, numbers of strata or zoo
        names.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.protocol_taus : tau of one protocol.
    recbias_tutorial.replications.jadidinejad2021.ladder : one choice switched at a time.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> world = rb.simulate(60, 40, seed=0, mean_ratings_per_user=12)
    >>> values = protocol_values(world, seeds=[0], sizes=(10,), ks=(None, 5))
    >>> sorted(values["zoo"].unique()), int(values["model"].nunique())
    (['authors'], 10)
    """
    data = _check_data(data)
    seeds = [check_int(s, "seeds", low=0) for s in seeds]
    if not seeds:
        raise ValueError("seeds must not be empty")
    sizes = tuple(check_int(k, "sizes") for k in sizes)
    ks = tuple(None if k is None else check_k(k, data.n_items, "ks") for k in ks)
    if not ks:
        raise ValueError("ks must not be empty")
    n_strata = check_int(n_strata, "n_strata")
    sweep = tuple(check_int(n, "sweep") for n in sweep)
    zoos = tuple(check_choice(z, "zoos", CHOICES["zoo"]) for z in zoos)
    if not zoos:
        raise ValueError("zoos must not be empty")
    families = tuple(check_choice(f, "families", AUTHORS_FAMILIES + NEURAL_FAMILIES)
                     for f in families)
    if not families:
        raise ValueError("families must not be empty")
    _proto.require_tensorflow(families)
    n_jobs = check_int(n_jobs, "n_jobs", low=-1)
    if n_jobs == 0:
        raise ValueError("n_jobs must be a positive number of processes, or -1 for every core")
    arguments = dict(seeds=seeds, sizes=sizes, ks=ks, n_strata=n_strata, sweep=sweep,
                     zoos=zoos, course_zoo=dict(course_zoo or {}), families=families)
    return cached_table("jadidinejad2021.protocol_values", data, arguments,
                        lambda: _run_units(data, arguments, progress=progress, cache=cache,
                                           n_jobs=n_jobs),
                        cache=cache)


def _unit(data: Any, unit: int, arguments: dict, progress: bool, cache: bool,
          fit_cache: bool | None) -> pd.DataFrame:
    """One unit (-1: the separate truth; else a seed), read back or computed and stored."""
    return cached_table("jadidinejad2021.unit_values", data, dict(arguments, unit=unit),
                        lambda: _proto.unit_values(data, unit, progress=progress,
                                                   fit_cache=fit_cache, **arguments),
                        cache=cache)


def _run_units(data: Any, arguments: dict, *, progress: bool, cache: bool | None,
               n_jobs: int) -> pd.DataFrame:
    from ..models._cache import fit_cache_enabled

    on = fit_cache_enabled(cache)  # resolved here: worker processes see the same switch
    # the fits: off, or on with the size cap (None: a Yahoo! R3 matrix is not stored) unless
    # the caller asked for cache=True explicitly (True stores any size)
    fit_cache = False if not on else (True if cache is True else None)
    cache = on
    seeds = arguments["seeds"]
    shared = {name: value for name, value in arguments.items() if name != "seeds"}
    units = ([-1] if "authors" in arguments["zoos"] else []) + list(seeds)
    if n_jobs == 1 or len(units) == 1:
        parts = [_unit(data, u, shared, progress, cache, fit_cache) for u in units]
    else:  # one bar for all units (workers' own bars would interleave)
        from joblib import Parallel, delayed
        from tqdm.std import tqdm

        run = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_unit)(data, u, shared, False, cache, fit_cache) for u in units)
        parts = list(tqdm(run, total=len(units), unit="unit", disable=not progress,
                          desc=f"{getattr(data, 'name', 'data')}: truth and seeds"))
    return _proto.combine_units(units, parts)


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


#: The rungs of :func:`ladder`, in order: each switches one more choice to the course's.
LADDER_STEPS = ("cutoff", "propensity", "strata", "weights", "candidates", "truth", "zoo")


def ladder(values: pd.DataFrame, *, n_strata: int = 2,
           steps: Sequence[str] = LADDER_STEPS) -> pd.DataFrame:
    """From the authors' protocol to the course's, one choice at a time: tau after each step.

    Rung 0 is the authors' protocol; rung ``i`` switches the first ``i`` of ``steps`` to the
    course's value (:data:`CHOICES`). Steps whose values are missing from ``values`` (e.g.
    ``zoo`` when the course zoo was not fitted) end the ladder.

    Parameters
    ----------
    values : DataFrame
        From :func:`protocol_values` with ``ks`` holding None and 10.
    n_strata : int
        Number of strata.
    steps : sequence of str
        Order of the switches (keys of :data:`CHOICES`).

    Returns
    -------
    pandas.DataFrame
        Columns ``rung``, ``switched`` (the choice switched at this rung, "" for rung 0),
        ``seed``, ``holdout``, ``stratified`` (the two taus) and ``gain``
        (stratified - holdout).

    Raises
    ------
    ValueError
        If ``steps`` holds an unknown or repeated choice, or ``values`` is not a frame of
        :func:`protocol_values`.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.protocol_taus : one rung.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> world = rb.simulate(60, 40, seed=0, mean_ratings_per_user=12)
    >>> values = protocol_values(world, seeds=[0], sizes=(10,), ks=(None, 10))
    >>> ladder(values)["switched"].tolist()
    ['', 'cutoff', 'propensity', 'strata', 'weights', 'candidates', 'truth']
    """
    values = check_frame(values, "values", _proto.VALUE_COLUMNS)
    steps = [check_choice(s, "steps", tuple(CHOICES)) for s in steps]
    if len(set(steps)) != len(steps):
        raise ValueError(f"steps must not repeat a choice, got {steps}")
    choices = dict(_proto.AUTHORS)
    frames = []
    for rung, step in enumerate([""] + steps):
        if step:
            choices[step] = _proto.COURSE[step]
        try:
            t = _proto.taus(values, choices, n_strata)
        except KeyError:
            break
        if t.empty:
            break
        wide = t.pivot(index="seed", columns="method", values="tau")
        frames.append(pd.DataFrame({"rung": rung, "switched": step, "seed": wide.index,
                                    "holdout": wide["holdout"].to_numpy(),
                                    "stratified": wide["stratified"].to_numpy()}))
    out = pd.concat(frames, ignore_index=True)
    out["gain"] = out["stratified"] - out["holdout"]
    return out


def kendall_taus(data: Any, *, seed: int, protocol: str = "authors", cutoff: int | None = None,
                 n_strata: int = 2, sizes: Sequence[int] = AUTHORS_SIZES,
                 course_zoo: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Kendall's tau of each evaluation method with the open-loop ranking over a model zoo.

    ``protocol="authors"`` runs the protocol of Jadidinejad et al. (2021) as their code
    (terrierteam/stratified_recsys_eval, Cornac 1.x) runs it; where it differs from the
    paper, the code is followed:

    * propensities: item counts over *all* closed-loop ratings, a ``powerlaw.Fit`` (discrete
      MLE with :math:`x_{\\min}`), :math:`n^\\alpha` above :math:`x_{\\min}`, :math:`n` below
      (:func:`powerlaw_propensity`; the paper's Eq. 7 says :math:`n^{(\\gamma+1)/2}`);
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
