r"""One world and one leaderboard through the course (lessons 1-5, then chapter 6).

Every lesson evaluates the same six recommenders in the same simulated world, and the
leaderboard gains the lesson's columns: AOA (lesson 1), IPS and SNIPS (2), SKEW and WTD (3),
the stratified estimate (4) and URE (5), each beside the same truth.

* The world is ``rb.simulate(**COURSE_WORLD)``: chapter 3's and chapter 6's simulated world.
* The models are :data:`COURSE_MODELS` of :func:`~recbias_tutorial.models.model_zoo`, fitted
  on the world's log (``world.mnar``) by :func:`~recbias_tutorial.models.score_models`.
* The truth and the estimates are :func:`~recbias_tutorial.comparison.compare_methods`'s, with
  its default method grid (:data:`COURSE_COMPARISON` fixes the seed and the redraws): the true
  Recall@10 on every relevant pair outside the log, and each method's estimate averaged over
  the redraws of the test log and the random sample. IPS uses the true propensities (an
  oracle), SNIPS popularity propensities with :math:`\gamma = 1` (the middle of the default
  exponents), SKEW and WTD :math:`\rho = 0.5` (the larger default size), the stratified
  estimate the authors' two equal-width strata.
* Where Cornac is not installed (the browser edition), :func:`course_scores` reads the same
  frame from the copy the package ships (:data:`STORED_SCORES`, written by
  ``python -m recbias_tutorial.leaderboard``); ``tests/test_leaderboard.py`` checks that copy
  equals a fresh computation, number for number.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ._optional import available
from ._params import Interval, declare
from ._result_cache import cache_enabled, cached_table
from ._schema import Column, TableSchema
from .comparison import compare_methods
from .data import FeedbackData, simulate
from .stats import kendall_tau

__all__ = ["COURSE_COMPARISON", "COURSE_MODELS", "COURSE_WORLD", "LESSON_METHODS",
           "STORED_SCORES", "TAU_ROW", "course_scores", "course_world", "leaderboard_table"]

#: The arguments of :func:`~recbias_tutorial.data.simulate` that make the course's world.
COURSE_WORLD = dict(n_users=600, n_items=400, seed=0, mean_ratings_per_user=20.0,
                    popularity_bias=1.0, rating_bias=0.5, n_mar_items=10)

#: The course's recommenders: names of :func:`~recbias_tutorial.models.model_zoo` (built by
#: ``_ZOO``), from a personalised matrix factorisation to a random scorer.
COURSE_MODELS = ("SVD-10", "EASE-100", "AvgRating", "MostPop", "Random", "ItemKNN-20")
_ZOO = dict(seed=0, families=["MostPop", "AvgRating", "Random", "SVD", "EASE", "ItemKNN"],
            sizes=(10,), knn_sizes=(20,), ease_lambdas=(100,))

#: The arguments of :func:`~recbias_tutorial.comparison.compare_methods` (else its defaults).
COURSE_COMPARISON = dict(seed=1, n_redraws=10, k=10)

#: Lesson number -> the methods (rows of ``compare_methods``) whose columns the lesson adds.
LESSON_METHODS = {
    1: ("AOA (log)",),
    2: ("IPS (true P)", "SNIPS (pop, γ=1)"),
    3: ("SKEW ρ=0.5", "WTD ρ=0.5"),
    4: ("stratified (authors' bins)",),
    5: ("URE (random)",),
}

#: :func:`course_scores`'s frame as computed with Cornac, read where Cornac is absent.
STORED_SCORES = Path(__file__).with_name("_leaderboard_scores.csv")
_COLUMNS = ("lesson", "method", "model", "true", "estimate", "sd")
_STORED_SCHEMA = TableSchema({"lesson": Column("int", low=1), "method": Column("str"),
                              "model": Column("str"), "true": Column("float"),
                              "estimate": Column("float"), "sd": Column("float", low=0.0)},
                             key=("method", "model"))

#: The label of the leaderboard's last row: each column's Kendall τ with the truth.
TAU_ROW = "Kendall τ with truth"


def course_world() -> FeedbackData:
    """The course's simulated world, ``rb.simulate(**COURSE_WORLD)``.

    Returns
    -------
    FeedbackData
        Full ratings, the logged part ``mnar`` with its true ``propensity``, and a random
        part ``mar`` of ten items per user.

    See Also
    --------
    leaderboard_table : the course's models evaluated in this world.

    Examples
    --------
    >>> world = course_world()
    >>> world.n_users, world.n_items, len(world.full)
    (600, 400, 240000)
    """
    return simulate(**COURSE_WORLD)


def course_scores(*, cache: bool | None = None) -> pd.DataFrame:
    """Every course model's true Recall@10 and each lesson method's estimate, one long frame.

    The models of :data:`COURSE_MODELS` are fitted on the course world's log and compared by
    :func:`~recbias_tutorial.comparison.compare_methods` (see the module docstring).

    Parameters
    ----------
    cache : bool, optional
        Read the frame back from the on-disk result cache when the package's code has not
        changed since it was computed, and store it otherwise (the fitted-score cache's
        folder and switch: None follows ``RECBIAS_FIT_CACHE``; ``attrs["cached"]`` says
        which). The fits and the comparison use their own caches too.

    Returns
    -------
    pandas.DataFrame
        One row per lesson method and model (lessons in order, models in the order of
        :data:`COURSE_MODELS`), with columns ``lesson``, ``method``, ``model``, ``true`` (the
        model's true Recall@10), ``estimate`` (the mean over the redraws) and ``sd`` (the
        estimates' standard deviation over the redraws).

    Raises
    ------
    ValueError
        If ``cache`` is not True, False or None.

    See Also
    --------
    leaderboard_table : the same numbers as one table per lesson.

    Examples
    --------
    >>> scores = course_scores()
    >>> scores.groupby("lesson")["method"].nunique().tolist()
    [1, 2, 2, 1, 1]
    """
    cache_enabled(cache)  # refuses a bad value before any work
    if not available("cornac"):  # the browser edition: the copy checked against Cornac's fits
        return _read_stored_scores()
    world = course_world()
    arguments = dict(world=COURSE_WORLD, models=COURSE_MODELS, zoo=_ZOO,
                     comparison=COURSE_COMPARISON, methods=LESSON_METHODS)
    return cached_table("leaderboard.course_scores", world, arguments,
                        lambda: _course_scores(world, cache), cache=cache)


def _course_scores(world: FeedbackData, cache: bool | None) -> pd.DataFrame:
    from .models import model_zoo, score_models  # Cornac: loaded on use

    zoo = model_zoo(**_ZOO)
    scores = score_models({name: zoo[name] for name in COURSE_MODELS}, world.mnar,
                          n_users=world.n_users, n_items=world.n_items, seed=0,
                          progress=False, cache=cache)
    table = compare_methods(world, models=scores, cache=cache, **COURSE_COMPARISON)
    table = table[table["metric"] == "recall"]
    lesson = {method: n for n, methods in LESSON_METHODS.items() for method in methods}
    missing = sorted(set(lesson) - set(table["method"]))
    if missing:  # a method renamed in the registry: say so rather than show a gap
        raise RuntimeError(f"compare_methods has no method {missing}; update LESSON_METHODS")
    rows = table[table["method"].isin(list(lesson))].assign(lesson=table["method"].map(lesson))
    rows = rows.astype({"lesson": "int64"}).sort_values("lesson", kind="stable")
    return rows[list(_COLUMNS)].reset_index(drop=True)


def _read_stored_scores(path: str | Path = STORED_SCORES) -> pd.DataFrame:
    """The stored copy of :func:`course_scores` (``attrs["stored"]`` is True), checked.

    Raises
    ------
    RuntimeError
        If the file is missing, its columns are not :func:`course_scores`'s, a number column
        holds text, NaN or an infinity, or a (method, model) pair repeats.
    """
    path = Path(path)
    if not path.is_file():
        raise RuntimeError(f"the leaderboard's stored scores are missing: {path}")
    try:
        frame = _STORED_SCHEMA.check(pd.read_csv(path, dtype={"method": str, "model": str}),
                                     path.name)
    except ValueError as err:
        raise RuntimeError(f"{path}: not course_scores' columns (finite numbers, one row per "
                           f"method and model): {err}") from None
    frame = frame[list(_COLUMNS)]
    frame.attrs.update(cached=False, stored=True)
    return frame


def _write_stored_scores(path: str | Path = STORED_SCORES) -> Path:
    """Compute :func:`course_scores` (Cornac needed) and store it at ``path``, exactly
    (17 significant digits: the floats read back bit for bit)."""
    if not available("cornac"):
        raise RuntimeError("writing the stored scores needs Cornac: pip install 'recbias_tutorial[models]'")
    frame = course_scores(cache=False)
    frame.to_csv(path, index=False, float_format="%.17g")
    return Path(path)


@declare(lesson=Interval(int, 1, max(LESSON_METHODS)))
def leaderboard_table(*, lesson: int, cache: bool | None = None) -> pd.DataFrame:
    """The course leaderboard after a lesson: the truth and every method taught so far.

    Parameters
    ----------
    lesson : int
        The lesson reached, 1 to 5: the table holds the columns of :data:`LESSON_METHODS`
        of lessons 1 to ``lesson``.
    cache : bool, optional
        As in :func:`course_scores` (a warm call reads the numbers back from disk).

    Returns
    -------
    pandas.DataFrame
        One row per model of :data:`COURSE_MODELS`, best true Recall@10 first, then the
        row :data:`TAU_ROW`: the Kendall τ (tau-b,
        :func:`~recbias_tutorial.stats.kendall_tau`) of each column's ranking of the models
        against the truth's. Columns: ``truth`` (each model's true Recall@10), then each
        method's estimate, in lesson order. ``attrs["cached"]`` says whether the numbers
        were read back from the result cache.

    Raises
    ------
    ValueError
        If ``lesson`` is not an integer from 1 to 5 (a bool or a float such as 2.5
        included), or ``cache`` is not True, False or None.

    See Also
    --------
    course_scores : the same numbers as one long frame, with their spread.
    recbias_tutorial.comparison.compare_methods : how the truth and the estimates are made.

    Examples
    --------
    >>> table = leaderboard_table(lesson=2)
    >>> list(table.columns)
    ['truth', 'AOA (log)', 'IPS (true P)', 'SNIPS (pop, γ=1)']
    >>> table.index[-1] == TAU_ROW, round(float(table.loc[TAU_ROW, "truth"]), 6)
    (True, 1.0)
    """
    scores = course_scores(cache=cache)
    cached = bool(scores.attrs.get("cached", False))
    scores = scores[scores["lesson"] <= lesson]
    wide = scores.pivot(index="model", columns="method", values="estimate")
    wide.insert(0, "truth", scores.groupby("model")["true"].first())
    methods = [m for n in range(1, lesson + 1) for m in LESSON_METHODS[n]]
    wide = wide[["truth", *methods]].sort_values("truth", ascending=False, kind="stable")
    wide.columns.name = None
    tau = {col: kendall_tau(wide["truth"], wide[col])[0] for col in wide.columns}
    table = pd.concat([wide, pd.DataFrame(tau, index=[TAU_ROW])])
    table.index.name = "model"
    table.attrs["cached"] = cached
    return table


if __name__ == "__main__":  # python -m recbias_tutorial.leaderboard: refresh the stored copy
    print(_write_stored_scores())
