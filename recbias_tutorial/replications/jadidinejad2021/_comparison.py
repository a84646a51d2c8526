r"""The course's own comparisons of the protocols (private; labelled as ours, not the paper's).

Re-exported by :mod:`recbias_tutorial.replications.jadidinejad2021`; import them from there.
:func:`agreement` (Kendall's tau and Pearson's r of every estimator against the truth) and
:func:`steiger` (Steiger's test between two estimators, on Pearson's r) read a zoo evaluated
by :func:`evaluate_zoo`; :func:`ladder` goes from the authors' protocol to the course's, one
choice of :data:`CHOICES` at a time, on the values of :func:`protocol_values`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import (check_choice, check_column_name, check_frame, check_int,
                            check_sequence)
from ...estimators import BINNINGS
from ...stats import ranking_agreement, steiger_test
from . import _protocol as _proto
from ._values import CHOICES

# protocol_values: for the example of ladder (a doctest runs in this module's names)
from ._values import protocol_values  # noqa: F401

__all__ = ["LADDER_STEPS", "agreement", "ladder", "steiger"]


# --------------------------------------------------------------------------------------
# comparing protocols
# --------------------------------------------------------------------------------------
_KEYS = ["estimator", "n_strata", "binning", "k"]


def _check_tidy(frame: Any) -> pd.DataFrame:
    return check_frame(frame, "frame", ["model", *_KEYS, "value"])


def _check_estimators(frame: pd.DataFrame, **names: Any) -> None:
    """Each named argument is one estimator label of ``frame``."""
    known = set(frame["estimator"])
    for name, value in names.items():
        check_column_name(value, name)
        if value not in known:
            raise ValueError(f"{name}={value!r} is not an estimator of frame "
                             f"({', '.join(map(str, sorted(known, key=str)))})")


def _wide(frame: pd.DataFrame) -> pd.DataFrame:
    """Models as rows, one column per (estimator, n_strata, binning, k)."""
    if frame.duplicated(["model"] + _KEYS).any():
        raise ValueError("frame has duplicated (model, estimator, n_strata, binning, k) rows")
    return frame.set_index(["model"] + _KEYS)["value"].unstack(_KEYS)


def agreement(frame: pd.DataFrame, *, truth: str = "truth") -> pd.DataFrame:
    """Kendall's tau-b and Pearson's r of every estimator against the truth, over the models.

    Parameters
    ----------
    frame : tidy DataFrame from :func:`evaluate_zoo`
        Columns ``model``, ``estimator``, ``n_strata``, ``binning``, ``k``, ``value``.
    truth : str
        Name of the ground-truth estimator (compared at the same ``k``).

    Returns
    -------
    pandas.DataFrame
        Columns ``estimator``, ``n_strata``, ``binning``, ``k``, ``tau``, ``tau_p``
        (two-sided p-value of tau), ``pearson`` and ``n_models``. Models with a NaN value
        (an empty stratum) are left out of that row.

    Raises
    ------
    ValueError
        If ``frame`` is not a DataFrame with those columns, has duplicated (model,
        estimator, n_strata, binning, k) rows, or has no estimator ``truth``.
    KeyError
        If ``truth`` has no value at the ``k`` of another estimator.

    See Also
    --------
    recbias_tutorial.stats.ranking_agreement : the same for a models x methods table.
    recbias_tutorial.replications.jadidinejad2021.steiger : is one estimator closer?

    Examples
    --------
    >>> frame = pd.DataFrame({"model": list("abcd") * 2, "estimator": ["truth"] * 4 + ["x"] * 4,
    ...                       "n_strata": 0, "binning": "", "k": 10,
    ...                       "value": [0.1, 0.2, 0.3, 0.4, 1.0, 3.0, 2.0, 4.0]})
    >>> agreement(frame)[["estimator", "tau", "n_models"]].round(3).to_dict("records")
    [{'estimator': 'x', 'tau': 0.667, 'n_models': 4}]
    """
    frame = _check_tidy(frame)
    _check_estimators(frame, truth=truth)
    wide = _wide(frame)
    rows = []
    for key in wide.columns:
        if key[0] == truth:
            continue
        pair = pd.DataFrame({"truth": wide[(truth, 0, "", key[3])], "estimate": wide[key]})
        res = ranking_agreement(pair, truth="truth").iloc[0]
        rows.append({**dict(zip(_KEYS, key)), "tau": res["tau"], "tau_p": res["tau_p"],
                     "pearson": res["pearson"], "n_models": int(res["n_models"])})
    return pd.DataFrame(rows)


def steiger(frame: pd.DataFrame, *, y: str = "stratified", z: str = "holdout",
            truth: str = "truth", n_strata: int = 2, binning: str = "quantile") -> pd.DataFrame:
    r"""Steiger's test of :math:`r(\text{truth}, y)` against :math:`r(\text{truth}, z)` per ``k``.

    The correlations are Pearson correlations of the metric values over the models (as in
    Jadidinejad et al., 2021): ``r_xy`` = corr(truth, y), ``r_xz`` = corr(truth, z) and
    ``r_yz`` = corr(y, z), with ``n`` = number of models; the statistic and two-sided
    p-value are those of :func:`recbias_tutorial.stats.steiger_test`. ``n_strata`` and
    ``binning`` select the rows of a stratifying estimator (``y`` or ``z``).

    Parameters
    ----------
    frame : tidy DataFrame from :func:`evaluate_zoo`
        Columns ``model``, ``estimator``, ``n_strata``, ``binning``, ``k``, ``value``.
    y, z : str, default "stratified", "holdout"
        The two estimators compared.
    truth : str, default "truth"
        The ground-truth estimator.
    n_strata : int, default 2
        Number of strata of a stratifying ``y`` or ``z``.
    binning : str, default "quantile"
        Binning of a stratifying ``y`` or ``z``.

    Returns
    -------
    pandas.DataFrame
        One row per ``k``: ``k``, ``r_xy``, ``r_xz``, ``r_yz``, ``n`` (models with all three
        values), ``statistic`` and ``p_value``.

    Raises
    ------
    ValueError
        If ``frame`` is not a DataFrame with those columns or has duplicated (model,
        estimator, n_strata, binning, k) rows; if ``truth``, ``y`` or ``z`` has no rows at
        some ``k``; if fewer than 4 models have all three values, or the correlations do
        not form a positive semi-definite matrix
        (:func:`recbias_tutorial.stats.steiger_test`).

    See Also
    --------
    recbias_tutorial.stats.steiger_test : the test.
    recbias_tutorial.replications.jadidinejad2021.agreement : the correlations for all.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> t = rng.random(30)
    >>> rows = [("truth", 0, "", t), ("stratified", 2, "quantile", t + 0.1 * rng.random(30)),
    ...         ("holdout", 0, "", t + 0.5 * rng.random(30))]
    >>> frame = pd.concat([pd.DataFrame({"model": range(30), "estimator": e, "n_strata": n,
    ...                                  "binning": b, "k": 10, "value": v})
    ...                    for e, n, b, v in rows])
    >>> res = steiger(frame)
    >>> bool(res.loc[0, "r_xy"] > res.loc[0, "r_xz"]), bool(res.loc[0, "p_value"] < 0.05)
    (True, True)
    """
    frame = _check_tidy(frame)
    _check_estimators(frame, truth=truth, y=y, z=z)
    n_strata = check_int(n_strata, "n_strata")
    binning = check_choice(binning, "binning", BINNINGS)
    wide = _wide(frame)

    def column(est: str, k: int) -> pd.Series:
        for key in ((est, 0, "", k), (est, n_strata, binning, k)):
            if key in wide.columns:
                return wide[key]
        raise ValueError(f"frame has no rows for estimator {est!r} at k={k} "
                         f"(n_strata={n_strata}, binning={binning!r})")

    rows = []
    for k in sorted(frame["k"].unique()):
        x, a, b = column(truth, k), column(y, k), column(z, k)
        ok = x.notna() & a.notna() & b.notna()
        r = np.corrcoef(np.vstack([x[ok], a[ok], b[ok]]))
        n = int(ok.sum())
        t, p = steiger_test(r[0, 1], r[0, 2], r[1, 2], n)
        rows.append({"k": int(k), "r_xy": r[0, 1], "r_xz": r[0, 2], "r_yz": r[1, 2], "n": n,
                     "statistic": t, "p_value": p})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# from the authors' protocol to the course's
# --------------------------------------------------------------------------------------
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
    n_strata = check_int(n_strata, "n_strata")
    steps = [check_choice(s, "steps", tuple(CHOICES))
             for s in check_sequence(steps, "steps", "keys of CHOICES")]
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
    if not frames:
        raise ValueError(f"values has no rows for the authors' protocol with n_strata={n_strata} "
                         "(rung 0 of the ladder)")
    out = pd.concat(frames, ignore_index=True)
    out["gain"] = out["stratified"] - out["holdout"]
    return out
