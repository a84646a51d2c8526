r"""Wang et al.'s two schemes, Recall@K̄ and URE Recall@K, on randomly exposed data (private).

Re-exported by :mod:`recbias_tutorial.replications.wang2025`; import it from there.
:func:`paper_random_split` (the paper's test set), :func:`scheme_users` /
:func:`scheme_table` / :func:`summarise_schemes` (both schemes per user and per model, with
intervals), :func:`model_curves` (per-user curves of both schemes, cached by the scores) and
:func:`paired_bootstrap` (differences between models over the same users).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._params import Interval, Seed, declare
from ..._validation import (as_generator, as_real_array, check_choice, check_feedback, check_k,
                            check_mapping, named_items)
from ...estimators import kbar_curves
from ...metrics import recall_curves
from ...scorer import check_scores
from ...stats import user_bootstrap


def _check_cutoffs_of(matrix: Any, cutoffs: dict[str, Any]) -> Any:
    """The checked scores of one model, each cut-off (name -> int or ints) in 1..its
    catalogue size (named as the caller's argument, not as the kernels' ``ks``)."""
    matrix = check_scores(matrix)
    for name, value in cutoffs.items():
        for k in np.atleast_1d(value).tolist() if not np.isscalar(value) else [value]:
            check_k(k, matrix.shape[1], name)
    return matrix


@declare(seed=Seed(), test_share=Interval(float, 0.0, 1.0, open="both"))
def paper_random_split(random: pd.DataFrame, *, seed: int | np.random.Generator,
                       test_share: float = 0.9) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Hold a share of the randomly exposed data out for validation, as the paper's counts imply.

    Table 2 gives Yahoo! R3's test set as 48,600 ratings, 90% of the 54,000 random ratings;
    the remaining 10% is the uniform data that methods such as AutoDebias use for training and
    validation. The paper does not say how the 10% were drawn; we draw them uniformly over
    ratings, seeded.

    Parameters
    ----------
    random : pandas.DataFrame
        Randomly exposed feedback.
    seed : int or numpy.random.Generator
        Randomness of the split.
    test_share : float, default 0.9
        Share of the rows kept as the test set, in (0, 1).

    Returns
    -------
    (validation, test) : tuple of pandas.DataFrame
        ``round((1 - test_share) * n)`` validation rows and the rest as test rows, each in
        the original row order.

    Raises
    ------
    ValueError
        If ``test_share`` is not in (0, 1), ``random`` is not a feedback frame or too small
        for a row on each side, or ``seed`` is bad.

    See Also
    --------
    recbias_tutorial.data.random_split : seeded splits by fractions.

    Examples
    --------
    >>> mar = pd.DataFrame({"user": np.repeat(np.arange(10), 10), "item": np.tile(np.arange(10), 10),
    ...                     "rating": 5.0})
    >>> [len(part) for part in paper_random_split(mar, seed=0)]
    [10, 90]
    """
    check_feedback(random, "random")
    rng = as_generator(seed)
    n_validation = int(round((1.0 - test_share) * len(random)))  # 5,400 of Yahoo's 54,000
    if n_validation == 0 or n_validation == len(random):
        raise ValueError(f"random has {len(random)} rows: too few for test_share={test_share} "
                         f"to leave a row on each side (validation {n_validation}, test "
                         f"{len(random) - n_validation})")
    order = rng.permutation(len(random))
    pick = np.zeros(len(random), dtype=bool)
    pick[order[:n_validation]] = True
    return (random[pick].reset_index(drop=True), random[~pick].reset_index(drop=True))


@declare(k=Interval(int, 1), k_bar=Interval(int, 1), threshold=Interval(float))
def scheme_users(scores: Mapping[str, np.ndarray] | Iterable[tuple[str, np.ndarray]],
                 random: pd.DataFrame, *, k: int, k_bar: int, threshold: float,
                 exclude: pd.DataFrame | None) -> pd.DataFrame:
    """Per user and model: the traditional Recall@K̄ and URE Recall@K on the same random data.

    Parameters
    ----------
    scores : mapping name -> score matrix, or iterable of ``(name, scores)``
        The models (an iterator keeps one score matrix in memory at a time).
    random : pandas.DataFrame
        Randomly exposed feedback.
    k, k_bar : int
        Cut-offs of URE Recall@K (whole catalogue) and of Recall@K̄ (the user's random items).
    threshold : float
        A random item is relevant when ``rating >= threshold``.
    exclude : pandas.DataFrame or None
        Pairs removed from URE's candidates (the training log).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``user`` (the users with a relevant random item, the same for every model),
        columns ``(model, "kbar" | "ure")``.

    Raises
    ------
    ValueError
        On a bad ``k`` / ``k_bar`` (an int in 1..the catalogue size), ``threshold`` or
        ``random`` (a feedback frame with relevant items).

    See Also
    --------
    scheme_table : means and intervals of these values.
    paired_bootstrap : differences between models.

    Examples
    --------
    >>> rand = pd.DataFrame({"user": [0, 0], "item": [1, 2], "rating": [5.0, 1.0]})
    >>> scheme_users({"m": np.array([[0.1, 0.9, 0.5]])}, rand, k=1, k_bar=1, threshold=4.0,
    ...              exclude=None).to_dict("list")
    {('m', 'kbar'): [1.0], ('m', 'ure'): [1.0]}
    """
    check_feedback(random, "random")
    frames = {}
    for name, matrix in named_items(scores, "scores"):
        matrix = _check_cutoffs_of(matrix, {"k": k, "k_bar": k_bar})
        frames[name] = pd.DataFrame({
            "kbar": kbar_curves(matrix, random, [k_bar], threshold=threshold,
                                per_user=True)[k_bar].droplevel("set"),
            "ure": recall_curves(matrix, random, [k], threshold=threshold, exclude=exclude,
                                 per_user=True)[k].droplevel("set")})
        del matrix
    return pd.concat(frames, axis=1, names=["model", "scheme"])


@declare(threshold=Interval(float))
def model_curves(scores: Mapping[str, np.ndarray] | Iterable[tuple[str, np.ndarray]],
                 sets: Mapping[str, pd.DataFrame], ks: Sequence[int], *,
                 random_sets: Mapping[Any, pd.DataFrame], k_bars: Sequence[int],
                 threshold: float, exclude: pd.DataFrame | None,
                 cache: bool | None = None) -> Iterator[tuple[str, Any, pd.DataFrame, pd.DataFrame]]:
    """Per model, the per-user recall curves of both schemes; cached by the scores' content.

    For each model, :func:`recbias_tutorial.metrics.recall_curves` on ``sets`` (full-catalogue
    ranking: the true Recall@K on a fully observed test set, URE on randomly exposed ones) and
    :func:`recbias_tutorial.estimators.kbar_curves` on ``random_sets`` (the traditional
    Recall@K̄), both per user. Each model's pair of tables is kept in the on-disk cache of
    fitted models (see :func:`recbias_tutorial.models.clear_fit_cache`), keyed by the score
    matrix itself (its sha256), the test sets, the cut-offs and the package's code, so a
    chapter re-run reads the tables back instead of re-ranking every model.

    Parameters
    ----------
    scores : mapping name -> score matrix, or iterable of ``(name, scores)``
        The models (an iterator keeps one score matrix in memory at a time).
    sets : mapping label -> DataFrame
        Test sets ranked against the whole catalogue.
    ks : sequence of int
        Cut-offs K of ``sets``.
    random_sets : mapping label -> DataFrame
        Randomly exposed sets of the traditional scheme.
    k_bars : sequence of int
        Cut-offs K̄ of ``random_sets``.
    threshold : float
        An item is relevant when ``rating >= threshold``.
    exclude : pandas.DataFrame or None
        Pairs removed from the full-catalogue candidates (the training log).
    cache : bool, optional
        Use the on-disk cache (None follows ``RECBIAS_FIT_CACHE``, default on).

    Yields
    ------
    (name, scores, recall, kbar) : tuple
        The model's name and score matrix (as given, for further measures), ``recall =
        recall_curves(..., per_user=True)`` (index ``(set, user)``, a column per K) and
        ``kbar = kbar_curves(..., per_user=True)`` (index ``(set, user)``, a column per K̄).

    Raises
    ------
    ValueError
        When called, if ``sets`` or ``random_sets`` is not a non-empty mapping of feedback
        frames or ``threshold`` is not a finite number; as
        the models are read, on any invalid input of
        :func:`recbias_tutorial.metrics.recall_curves` or
        :func:`recbias_tutorial.estimators.kbar_curves`.

    See Also
    --------
    scheme_users : one K and one K̄, several models side by side.

    Examples
    --------
    >>> rand = pd.DataFrame({"user": [0, 0], "item": [1, 2], "rating": [5.0, 1.0]})
    >>> [(name, float(r.loc[("rand", 0), 1]), float(kb.loc[("rand", 0), 1]))
    ...  for name, _, r, kb in model_curves(
    ...      {"m": np.array([[0.1, 0.9, 0.5]])}, {"rand": rand}, [1], random_sets={"rand": rand},
    ...      k_bars=[1], threshold=4.0, exclude=None, cache=False)]
    [('m', 1.0, 1.0)]
    """
    for name, frames in (("sets", sets), ("random_sets", random_sets)):
        check_mapping(frames, name, "DataFrame")
        for label, frame in frames.items():
            check_feedback(frame, f"{name}[{label!r}]")
    return _model_curves(scores, sets, ks, random_sets=random_sets, k_bars=k_bars,
                         threshold=threshold, exclude=exclude, cache=cache)


def _model_curves(scores, sets, ks, *, random_sets, k_bars, threshold, exclude, cache):
    from ..._result_cache import cached_result, data_key

    def frames(value: Any) -> bool:
        return isinstance(value, Mapping) and all(isinstance(f, pd.DataFrame) for f in value.values())

    # the key: the sets, the random sets and the excluded pairs (once), then each model's
    # scores; anything but frames has none (recall_curves / kbar_curves say what is wrong)
    keyed_sets = (frames(sets) and frames(random_sets)
                  and (exclude is None or isinstance(exclude, pd.DataFrame)))
    sets_key = (data_key([sets, random_sets, None if exclude is None else {"exclude": exclude}])
                if keyed_sets else None)
    arguments = (None if sets_key is None else
                 dict(ks=list(np.atleast_1d(ks).tolist()), k_bars=list(np.atleast_1d(k_bars).tolist()),
                      threshold=threshold))
    for name, matrix in named_items(scores, "scores"):
        def compute(matrix=matrix) -> dict:
            return {"recall": recall_curves(matrix, sets, ks, threshold=threshold, exclude=exclude,
                                            per_user=True),
                    "kbar": kbar_curves(matrix, random_sets, k_bars, threshold=threshold,
                                        per_user=True)}

        keyed = arguments is not None and isinstance(matrix, np.ndarray) and matrix.dtype.kind == "f"
        tables, _ = cached_result("wang2025.model_curves", [sets_key or "", {"scores": matrix}],
                                  arguments if keyed else None, compute, cache=cache)
        yield name, matrix, tables["recall"], tables["kbar"]
        del matrix


def paired_bootstrap(per_user: pd.DataFrame, *, baseline: str, seed: int | np.random.Generator,
                     confidence: float = 0.95) -> pd.DataFrame:
    """Each model minus the baseline, per scheme, with a paired percentile-bootstrap interval.

    The users are resampled once for all columns, so every difference is paired: the same
    users, the same random items, only the model changes. An interval that excludes 0 is the
    evidence that the two models differ under that scheme.

    Parameters
    ----------
    per_user : pandas.DataFrame
        Output of :func:`scheme_users`.
    baseline : str
        The model subtracted from every other one.
    seed : int or numpy.random.Generator
        Randomness of the resamples.
    confidence : float, default 0.95
        Coverage of the intervals.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(model, scheme)`` for every model other than ``baseline``: ``difference``,
        ``low``, ``high`` and ``verdict`` (``"higher"``, ``"lower"`` or ``"no difference
        shown"``).

    Raises
    ------
    ValueError
        If ``baseline`` is not a model of ``per_user``, or on a bad ``seed`` / ``confidence``.

    See Also
    --------
    scheme_users : the input.
    recbias_tutorial.stats.user_bootstrap : the bootstrap.

    Examples
    --------
    >>> per_user = pd.DataFrame({("a", "ure"): [1.0, 1.0, 0.0, 1.0], ("b", "ure"): [0.0, 0.0, 0.0, 0.0]})
    >>> paired_bootstrap(per_user, baseline="b", seed=0)["verdict"].tolist()
    ['higher']
    """
    models = _models_of(per_user)
    check_choice(baseline, "baseline", tuple(models))  # one of the models
    if len(models) < 2:
        raise ValueError(f"per_user must hold a model besides the baseline {baseline!r} to "
                         f"compare with it, got only {list(models)}")
    base = per_user[baseline]
    diffs = pd.concat({m: per_user[m] - base for m in models if m != baseline}, axis=1)
    ci = user_bootstrap(diffs, seed=seed, confidence=confidence)
    ci.index = pd.MultiIndex.from_tuples(diffs.columns, names=["model", "scheme"])
    out = ci.rename(columns={"estimate": "difference"})[["difference", "low", "high"]]
    out["verdict"] = np.where(out["low"] > 0, "higher",
                              np.where(out["high"] < 0, "lower", "no difference shown"))
    return out


def scheme_table(scores: Mapping[str, np.ndarray] | Iterable[tuple[str, np.ndarray]],
                 random: pd.DataFrame, *, k: int, k_bar: int, threshold: float,
                 exclude: pd.DataFrame | None, seed: int | np.random.Generator) -> pd.DataFrame:
    """Per model: traditional Recall@K̄ and URE Recall@K on the same random data, with intervals.

    Both are means over the users with a relevant random item; the intervals are percentile
    bootstraps over those users, the two schemes resampled together
    (:func:`recbias_tutorial.stats.user_bootstrap`).

    Parameters
    ----------
    scores : mapping name -> score matrix, or iterable of ``(name, scores)``
        The models (an iterator keeps one score matrix in memory at a time).
    random : pandas.DataFrame
        Randomly exposed feedback (e.g. Yahoo! R3's MAR test set).
    k : int
        Cut-off of URE Recall@K (over the whole catalogue).
    k_bar : int
        Cut-off of the traditional Recall@K̄ (among the user's random items).
    threshold : float
        A random item is relevant when ``rating >= threshold``.
    exclude : pandas.DataFrame or None
        Pairs removed from URE's candidates (the training log).
    seed : int or numpy.random.Generator
        Seed of each model's bootstrap.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``model``: ``Recall@K̄``, ``Recall@K̄ low``, ``Recall@K̄ high``,
        ``URE Recall@K``, ``URE low``, ``URE high`` and ``users``.

    Raises
    ------
    ValueError
        On a bad ``k`` / ``k_bar`` or ``random`` without relevant items (see
        :func:`recbias_tutorial.estimators.kbar_curves` and
        :func:`recbias_tutorial.metrics.recall_curves`).

    See Also
    --------
    recbias_tutorial.estimators.ure_recall : URE for one model.
    recbias_tutorial.estimators.recall_at_kbar : the traditional scheme for one model.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.8, 0.7, 0.6], [0.1, 0.2, 0.3, 0.4]])
    >>> rand = pd.DataFrame({"user": [0, 0, 1, 1], "item": [1, 3, 0, 2],
    ...                      "rating": [5.0, 1.0, 5.0, 1.0]})
    >>> scheme_table({"m": scores}, rand, k=1, k_bar=1, threshold=4.0, exclude=None,
    ...              seed=0)[["Recall@K̄", "URE Recall@K"]].to_dict("index")
    {'m': {'Recall@K̄': 0.5, 'URE Recall@K': 0.0}}
    """
    per_user = scheme_users(scores, random, k=k, k_bar=k_bar, threshold=threshold,
                            exclude=exclude)
    return summarise_schemes(per_user, seed=seed)


def summarise_schemes(per_user: pd.DataFrame, *, seed: int | np.random.Generator) -> pd.DataFrame:
    """Means and percentile-bootstrap intervals of :func:`scheme_users` output, per model.

    Parameters
    ----------
    per_user : pandas.DataFrame
        Output of :func:`scheme_users`.
    seed : int or numpy.random.Generator
        Seed of each model's bootstrap (both schemes resampled together).

    Returns
    -------
    pandas.DataFrame
        As :func:`scheme_table`.

    Raises
    ------
    ValueError
        If ``per_user`` has fewer than two users, or on a bad ``seed``.

    See Also
    --------
    scheme_table : the same from scores.

    Examples
    --------
    >>> per_user = pd.DataFrame({("m", "kbar"): [1.0, 0.0], ("m", "ure"): [0.0, 0.0]})
    >>> summarise_schemes(per_user, seed=0)[["Recall@K̄", "URE Recall@K"]].to_dict("index")
    {'m': {'Recall@K̄': 0.5, 'URE Recall@K': 0.0}}
    """
    rows = {}
    for name in _models_of(per_user):
        ci = user_bootstrap(per_user[name], seed=seed)
        rows[name] = {"Recall@K̄": ci.loc["kbar", "estimate"], "Recall@K̄ low": ci.loc["kbar", "low"],
                      "Recall@K̄ high": ci.loc["kbar", "high"],
                      "URE Recall@K": ci.loc["ure", "estimate"], "URE low": ci.loc["ure", "low"],
                      "URE high": ci.loc["ure", "high"], "users": len(per_user)}
    return pd.DataFrame(rows).T.rename_axis("model")


def _models_of(per_user: pd.DataFrame) -> list:
    """The models of a :func:`scheme_users` table, refusing columns it cannot have come from."""
    if not isinstance(per_user, pd.DataFrame) or per_user.columns.nlevels != 2:
        raise ValueError("per_user must be a DataFrame with (model, scheme) columns, as "
                         "scheme_users returns")
    if per_user.columns.duplicated().any():
        twice = sorted({str(c) for c in per_user.columns[per_user.columns.duplicated()]})
        raise ValueError(f"per_user has the columns {twice} twice: tables of different runs "
                         "were mixed; give each model its own name")
    if per_user.empty:
        raise ValueError("per_user has no user")
    if not np.isfinite(as_real_array(per_user.to_numpy(), "per_user")).all():
        raise ValueError("per_user has NaN or infinite values: a user without a value must be "
                         "left out, not counted")
    return list(dict.fromkeys(per_user.columns.get_level_values(0)))
