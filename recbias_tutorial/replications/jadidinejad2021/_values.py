r"""The authors' pieces and the run of both protocols over seeded splits (private).

Re-exported by :mod:`recbias_tutorial.replications.jadidinejad2021`; import them from there.
:func:`authors_zoo` and :func:`authors_split` are the authors' ``utils.get_models`` and
``StratifiedEvaluation._split``, with validation (their ``_estimate_propensities`` is the
core's :func:`recbias_tutorial.propensity.powerlaw_propensity`); :func:`protocol_values` computes every value both protocols and the steps between
them need, one unit (the separate truth, each seed) at a time, each kept in the result cache.
The engine is :mod:`._protocol`; the paper's tables read the values
(:mod:`._tables`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from ..._powerlaw import POWERLAW_FITS
from ..._result_cache import cache_enabled, cached_table
from ..._validation import (check_choice, check_feedback, check_int, check_k,
                            check_names, check_seeds, check_sequence)
from . import _protocol as _proto
from ._protocol import AUTHORS_FAMILIES, AUTHORS_SIZES, NCF_BACKENDS, NEURAL_FAMILIES

#: The protocol choices of the public API (``jadidinejad2021.CHOICES``, documented there): a
#: copy of the engine's, the one every public function checks a protocol against.
CHOICES = dict(_proto.CHOICES)


def authors_zoo(*, sizes: Sequence[int] = AUTHORS_SIZES,
                families: Sequence[str] = AUTHORS_FAMILIES, ncf_backend: str = "numpy") -> dict:
    """Fresh Cornac models of the authors' zoo (``utils.get_models(variant="large")``).

    Same families, names and hyper-parameters as their code (MF without biases, learning
    rate 0.001 and early stopping; SVD at learning rate 0.001; PMF linear and non-linear;
    MMMF, BPR, WBPR; Cornac's defaults otherwise; seed 123), by default without the
    families that Cornac trains with TensorFlow (:data:`LEFT_OUT_FAMILIES`), which can be
    asked for (:data:`NEURAL_FAMILIES`: ``MLP``; ``WMF``, ``GMF``, ``NeuMF`` at every size).
    ``WMF`` needs TensorFlow (the ``neural`` extra), with Cornac's TensorFlow backend as the
    authors ran it. The NCF families (:data:`NCF_FAMILIES`: MLP, GMF, NeuMF) are built with
    ``backend=ncf_backend``: ``"numpy"`` (default) is the package's trainer, which starts
    from TensorFlow's initial weights, draws Cornac's batches and applies Keras's Adam
    without TensorFlow (one epoch equal to TensorFlow's weights to 1e-5); ``"tensorflow"``
    is Cornac's own backend (Cornac 3's PyTorch backend refuses their ``NeuMF{k}``).
    One deviation: their ``BaselineOnly(verbose=False)`` has no seed (it draws from numpy's
    global generator); ours gets ``seed=123`` so that runs are reproducible.

    Parameters
    ----------
    sizes : sequence of int
        Latent sizes (their 10, 20, ..., 100).
    families : sequence of str
        A subset of :data:`AUTHORS_FAMILIES` and :data:`NEURAL_FAMILIES`.
    ncf_backend : {"numpy", "tensorflow"}, default "numpy"
        The ``backend`` of the MLP, GMF and NeuMF models (:data:`NCF_BACKENDS`).

    Returns
    -------
    dict
        Model name (theirs, e.g. ``"PMFNL40"``) -> unfitted ``cornac.models.Recommender``.

    Raises
    ------
    ValueError
        If ``sizes`` or ``families`` is empty or names one twice, a size is not a positive
        integer, a family is unknown or ``ncf_backend`` is not one of :data:`NCF_BACKENDS`.
    ImportError
        If ``WMF``, or an NCF family with ``ncf_backend="tensorflow"``, is asked for and
        TensorFlow is not installed.

    See Also
    --------
    recbias_tutorial.models.model_zoo : the course's zoo.

    Examples
    --------
    >>> len(authors_zoo())  # of their 104: MLP, WMF, GMF and NeuMF are asked for by name
    73
    >>> zoo = authors_zoo(sizes=(10, 20), families=["GMF", "NeuMF"])  # no TensorFlow needed
    >>> list(zoo), zoo["GMF10"].backend
    (['GMF10', 'GMF20', 'NeuMF10', 'NeuMF20'], 'numpy')
    """
    sizes = tuple(check_int(k, "sizes") for k in check_names(sizes, "sizes"))
    families = tuple(check_choice(f, "families", AUTHORS_FAMILIES + NEURAL_FAMILIES)
                     for f in check_names(families, "families"))
    ncf_backend = check_choice(ncf_backend, "ncf_backend", NCF_BACKENDS)
    return _proto.zoo_of(sizes, families, ncf_backend)


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
                    powerlaw_fit: str = "powerlaw2", ncf_backend: str = "numpy",
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
        Families of the authors' zoo to fit (a subset of :data:`AUTHORS_FAMILIES` and
        :data:`NEURAL_FAMILIES`; WMF needs TensorFlow).
    powerlaw_fit : {"powerlaw2", "powerlaw1"}, default "powerlaw2"
        The fit behind the ``propensity == "powerlaw"`` rows (:func:`powerlaw_propensity`'s
        ``fit``): the installed powerlaw 2.x's, or powerlaw 1.x's, which the authors ran (on
        Coat, their alpha 4.01, x_min 28 and five-item head stratum).
    ncf_backend : {"numpy", "tensorflow"}, default "numpy"
        Who trains the NCF families (MLP, GMF, NeuMF): the package's trainer, without
        TensorFlow, or Cornac's TensorFlow backend (:func:`authors_zoo`).
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
        On a ``data`` without ``mar``, bad seeds, sizes, cut-offs, numbers of strata, zoo
        names, ``powerlaw_fit`` or ``ncf_backend``.

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
    seeds = check_seeds(seeds)
    sizes = tuple(check_int(k, "sizes") for k in check_names(sizes, "sizes"))
    ks = tuple(None if k is None else check_k(k, data.n_items, "ks")
               for k in check_names(ks, "ks"))
    n_strata = check_int(n_strata, "n_strata")
    sweep = tuple(check_int(n, "sweep") for n in check_sequence(sweep, "sweep", "strata counts"))
    if len(set(sweep)) != len(sweep):
        raise ValueError(f"sweep has a number of strata twice, got {list(sweep)}")
    zoos = tuple(check_choice(z, "zoos", CHOICES["zoo"]) for z in check_names(zoos, "zoos"))
    families = tuple(check_choice(f, "families", AUTHORS_FAMILIES + NEURAL_FAMILIES)
                     for f in check_names(families, "families"))
    ncf_backend = check_choice(ncf_backend, "ncf_backend", NCF_BACKENDS)
    _proto.require_tensorflow(families, ncf_backend)
    powerlaw_fit = check_choice(powerlaw_fit, "powerlaw_fit", POWERLAW_FITS)
    n_jobs = check_int(n_jobs, "n_jobs", low=-1)
    if n_jobs == 0:
        raise ValueError("n_jobs must be a positive number of processes, or -1 for every core")
    arguments = dict(seeds=seeds, sizes=sizes, ks=ks, n_strata=n_strata, sweep=sweep,
                     zoos=zoos, course_zoo=dict(course_zoo or {}), families=families,
                     powerlaw_fit=powerlaw_fit, ncf_backend=ncf_backend)
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
    on = cache_enabled(cache)  # resolved here: worker processes see the same switch
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
