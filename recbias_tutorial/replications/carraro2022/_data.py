r"""Carraro & Bridge's Table 2 and checks of the data behind WTD (private helper module).

Everything here is re-exported by :mod:`recbias_tutorial.replications.carraro2022`:
:func:`kl_by_seed` / :func:`table2_kl` (KL(D_gt || test set) of the rating values, in bits),
:func:`posterior_check` (Eq. 1-6 on the data) and :func:`weight_noise` (the noise of WTD's
estimated MAR posteriors).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats

from ..._result_cache import cached_table
from ..._params import Interval, declare
from ..._validation import check_seeds
from ...data import FeedbackData
from ...sampling import STRATEGIES
from ...stats import kl_divergence
from ._protocol import (SIZES, TEST_SET_NAMES, _ORDER,
                        draw_test_sets, split_feedback)


#: Table 2 as the text of §5 quotes it: KL(D_gt || FULL/REG) "approximately 0.4" on WBR3
#: (Yahoo! R3) and "approximately 0.07" on COAT. The per-strategy values are in the table
#: image only.
PAPER_TABLE2_KL = pd.DataFrame({
    "dataset": ["WBR3", "COAT"],
    "test_sets": ["FULL and REG", "FULL and REG"],
    "kl_approx": [0.4, 0.07],
    "source": ["§5, text on Table 2", "§5, text on Table 2"],
})


@declare(item_power=Interval(float, 0.0), base=Interval(float, 1.0, open="low"))
def kl_by_seed(data: FeedbackData, *, seeds: Sequence[int], strategies: Sequence[str] = STRATEGIES,
                sizes: Sequence[float] | None = None, item_power: float = 2.0,
                base: float = 2.0, cache: bool | None = None) -> pd.DataFrame:
    r"""KL(D_gt || test set) of the rating values, per repetition (the paper's Table 2 direction).

    For each seed: the split of :func:`split_feedback`, the test sets of
    :func:`draw_test_sets` (the same samples :func:`run_repetition` evaluates), and
    :math:`\mathrm{KL}(P_{D_{gt}} \,\|\, P_T) = \sum_r P_{D_{gt}}(r) \log_{base} P_{gt}(r)/P_T(r)`
    of the raw rating shares (no smoothing; ``inf`` if a test set misses a rating value
    that D_gt has). No model is fitted, so many seeds are cheap.

    Parameters
    ----------
    data : FeedbackData
        MNAR log and MAR feedback.
    seeds : sequence of int
        Distinct seeds, one split each.
    strategies : sequence of str, default all
        Test sets to draw.
    sizes : sequence of float, optional
        rho_p values; default :data:`SIZES`.
    item_power : float, default 2.0
        Exponent of the WTD/WTD_H item weight.
    base : float, default 2.0
        Logarithm base: 2 gives bits.
    cache : bool, optional
        Keep the result in the on-disk cache of fitted models and read it back on the next
        call with the same data and arguments (None follows ``RECBIAS_FIT_CACHE``, default
        on; see :func:`recbias_tutorial.models.clear_fit_cache`).

    Returns
    -------
    pandas.DataFrame
        ``seed, test_set, rho, n_rows, kl_bits`` (``kl_bits`` is in units of ``base``;
        ``test_set`` uses the paper's names FULL, REG, SKEW, WTD, WTD_H).

    Raises
    ------
    ValueError
        If ``seeds`` is empty, has duplicates or a negative value; if ``base`` is not a
        number > 1; on an invalid ``data``, ``strategies``, ``sizes`` or ``item_power`` (see
        :func:`draw_test_sets`).

    See Also
    --------
    recbias_tutorial.replications.carraro2022.table2_kl : the mean over seeds.
    recbias_tutorial.stats.kl_divergence : the divergence.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> kl = kl_by_seed(simulate(60, 40, seed=0), seeds=[0, 1], strategies=("full",))
    >>> kl.columns.tolist(), len(kl)
    (['seed', 'test_set', 'rho', 'n_rows', 'kl_bits'], 2)
    """

    seeds = check_seeds(seeds)
    sizes = SIZES if sizes is None else sizes
    arguments = (dict(seeds=seeds, strategies=strategies, sizes=sizes, item_power=item_power,
                      base=base) if isinstance(data, FeedbackData) else None)
    return cached_table("carraro2022.kl_by_seed", data, arguments,
                        lambda: _kl_by_seed(data, seeds, strategies, sizes, item_power, base),
                        cache=cache)


def _kl_by_seed(data, seeds, strategies, sizes, item_power, base) -> pd.DataFrame:
    rows = []
    for seed in seeds:
        split = split_feedback(data, seed=seed)
        gt = split.gt["rating"].to_numpy(float)
        support = np.unique(np.concatenate([gt, split.heldout["rating"].to_numpy(float)]))
        held = split.heldout["rating"].to_numpy(float)
        for (strategy, size), idx in draw_test_sets(split, strategies=strategies, sizes=sizes,
                                                    item_power=item_power).items():
            with np.errstate(divide="ignore"):
                kl = kl_divergence(gt, held[idx], support=support, smoothing=0.0, base=base)
            rows.append({"seed": seed, "test_set": TEST_SET_NAMES[strategy], "rho": size,
                         "n_rows": len(idx), "kl_bits": kl})
    return pd.DataFrame(rows)


def table2_kl(data: FeedbackData, *, seeds: Sequence[int] = range(10), **kwargs: Any) -> pd.DataFrame:
    """The paper's Table 2: KL(D_gt || test set) in bits, mean over repetitions.

    §5 of the paper: "This KL divergence is much greater for WBR3 (approximately 0.4) than it
    is for COAT (approximately 0.07)" (FULL and REG); ``PAPER_TABLE2_KL`` holds these.

    Parameters
    ----------
    data : FeedbackData
        MNAR log and MAR feedback.
    seeds : sequence of int, default range(10)
        One repetition (split and test sets) per seed; the paper uses 10.
    **kwargs
        Passed to :func:`kl_by_seed` (``strategies``, ``sizes``, ``item_power``, ``base``).

    Returns
    -------
    pandas.DataFrame
        ``test_set, rho, kl_bits``: FULL (rho 1), then REG, SKEW, WTD, WTD_H at every rho.

    Raises
    ------
    ValueError
        As :func:`kl_by_seed`.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.kl_by_seed : the per-seed values.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> t = table2_kl(simulate(60, 40, seed=0), seeds=[0, 1], sizes=(0.5,))
    >>> t["test_set"].tolist()
    ['FULL', 'REG', 'SKEW', 'WTD', 'WTD_H']
    """
    per_seed = kl_by_seed(data, seeds=seeds, **kwargs)
    out = per_seed.groupby(["test_set", "rho"], as_index=False, sort=False)["kl_bits"].mean()
    out["order"] = out["test_set"].map(_ORDER.index)
    return out.sort_values(["order", "rho"]).drop(columns="order").reset_index(drop=True)


# --------------------------------------------------------------------------------------
# Table 3: per recommender, its best rho per strategy and the % difference from D_gt
# --------------------------------------------------------------------------------------


def _cv(counts: np.ndarray) -> float:
    mean = counts.mean()
    return float(counts.std() / mean) if mean > 0 else float("nan")


def posterior_check(data: FeedbackData) -> pd.DataFrame:
    r"""Are the user and item posteriors of each part uniform (§3.1–3.2, Eq. 1–2 and 4–5)?

    For the MAR and the MNAR part, the posterior :math:`P(u \mid O) = |D_u| / |D|` of every
    user (every item) of the dataset, its coefficient of variation, the largest and smallest
    posterior relative to uniform (:math:`\max_u P(u \mid O) \cdot |U|`), and the p-value of
    a chi-square goodness-of-fit test of uniformity (:func:`scipy.stats.chisquare`).

    Parameters
    ----------
    data : FeedbackData
        A dataset with MNAR and MAR parts.

    Returns
    -------
    pandas.DataFrame
        ``part, level, n_ids, n_rows, cv, max_vs_uniform, min_vs_uniform, chi2_p``.

    Raises
    ------
    ValueError
        If ``data`` is not a :class:`~recbias_tutorial.data.FeedbackData` with both parts.

    See Also
    --------
    recbias_tutorial.replications.carraro2022.weight_noise : the estimated MAR posteriors.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> posterior_check(simulate(50, 40, seed=0))[["part", "level"]].values.tolist()
    [['MAR', 'user'], ['MAR', 'item'], ['MNAR', 'user'], ['MNAR', 'item']]
    """
    if not isinstance(data, FeedbackData) or data.mar is None or data.mnar is None:
        raise ValueError("data must be a FeedbackData with MNAR and MAR parts")
    rows = []
    for part, frame in [("MAR", data.mar), ("MNAR", data.mnar)]:
        for level, n in [("user", data.n_users), ("item", data.n_items)]:
            counts = np.bincount(frame[level].to_numpy(np.int64), minlength=n).astype(float)
            share = counts / counts.sum() * n
            rows.append({"part": part, "level": level, "n_ids": n, "n_rows": int(counts.sum()),
                         "cv": _cv(counts), "max_vs_uniform": float(share.max()),
                         "min_vs_uniform": float(share.min()),
                         "chi2_p": float(scipy.stats.chisquare(counts).pvalue)})
    return pd.DataFrame(rows)


def weight_noise(data: FeedbackData, *, seeds: Sequence[int]) -> pd.DataFrame:
    """How noisy are WTD's MAR posteriors, estimated from the small D_w?

    WTD estimates :math:`P_{mar}(u \\mid O)` and :math:`P_{mar}(i \\mid O)` from D_w (15% of
    the MAR part). For each seed this reports the coefficient of variation across users
    (items) of the counts in the whole MAR part (the best available estimate of the true
    posterior; 0 when every user rated the same number of random items), in D_w (what WTD
    uses) and in D_w plus the one pseudo-count per id that
    :func:`~recbias_tutorial.sampling.intervention_weights` adds (``smoothing=1``), and the
    correlation between the whole-MAR and D_w counts over ids.

    Parameters
    ----------
    data : FeedbackData
        A dataset with MNAR and MAR parts.
    seeds : sequence of int
        Seeds of :func:`split_feedback`.

    Returns
    -------
    pandas.DataFrame
        ``seed, level, cv_mar, cv_dw, cv_dw_smoothed, corr``.

    Raises
    ------
    ValueError
        If ``seeds`` is empty or has duplicates; on an invalid ``data``.

    See Also
    --------
    recbias_tutorial.sampling.intervention_weights : the weights built from these counts.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> weight_noise(simulate(50, 40, seed=0), seeds=[0]).columns.tolist()
    ['seed', 'level', 'cv_mar', 'cv_dw', 'cv_dw_smoothed', 'corr']
    """

    rows = []
    for seed in check_seeds(seeds):
        split = split_feedback(data, seed=seed)
        for level, n in [("user", data.n_users), ("item", data.n_items)]:
            ids = np.unique(data.mar[level].to_numpy(np.int64))
            full = np.bincount(data.mar[level].to_numpy(np.int64), minlength=n)[ids].astype(float)
            dw = np.bincount(split.weights[level].to_numpy(np.int64), minlength=n)[ids].astype(float)
            corr = float(np.corrcoef(full, dw)[0, 1]) if full.std() > 0 and dw.std() > 0 else float("nan")
            rows.append({"seed": seed, "level": level, "cv_mar": _cv(full), "cv_dw": _cv(dw),
                         "cv_dw_smoothed": _cv(dw + 1.0), "corr": corr})
    return pd.DataFrame(rows)
