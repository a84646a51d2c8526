r"""The intervened-test-set protocol of Carraro & Bridge, vectorised.

Carraro & Bridge (SAC 2020; J. Intell. Inf. Syst. 2022) evaluate recommenders on *intervened*
test sets drawn from MNAR held-out data (see :mod:`recbias_tutorial.sampling`) and compare
each with the same metric on MAR ground truth. One **repetition** of their protocol is

1. split the MNAR feedback 60/40 into :math:`D_{tr}` / :math:`D_{he}` and the MAR feedback
   15/15/70 into :math:`D_w` (weights of WTD) / :math:`D_{val}` (hyper-parameter selection) /
   :math:`D_{gt}` (ground truth), uniformly at random with a seed (:func:`split_feedback`);
2. fit every model once on :math:`D_{tr}`;
3. draw the intervened test sets from :math:`D_{he}` (FULL, and REG, SKEW, WTD, WTD_H at
   every sample size :math:`\rho_p`) and compute Recall, Precision, nDCG and MAP@k of every
   model on each of them and on :math:`D_{gt}` (full-catalogue ranking, training pairs
   excluded).

Step 3 never re-scores a model. The position :math:`Z_{ui}` of a test pair in its user's
ranking depends only on the scores and on the excluded training pairs, not on the other
pairs of the test set, so the positions of all held-out and ground-truth pairs are computed
once per model (:func:`recbias_tutorial.metrics.rank_positions`) and every test set is
evaluated from the positions of its rows by :func:`recbias_tutorial.metrics.subset_metrics`,
which reproduces
:func:`recbias_tutorial.metrics.ranking_metrics` exactly.

Models are fitted and scored by :func:`recbias_tutorial.models.iter_scores`, which scores
Cornac's own ``UserKNN`` and ``ItemKNN`` (and the other families of
:func:`recbias_tutorial.models.batch_scorer`) many users at a time, so the protocol runs on
plain Cornac models.

The paper's own tables and figures (journal version, Carraro & Bridge 2022, §5) are
:func:`table2_kl` (KL(D_gt || test set) of the rating values, in bits, mean over
repetitions), :func:`table3` (per recommender, each strategy's closest rho_p and % difference),
:func:`table4_wilcoxon` (pairwise two-tailed Wilcoxon tests between the five test sets per
recommender), :func:`table5_wilcoxon` (pairwise recommenders on D_gt), :func:`closest_test_sets` (§5's
reading of Tables 3 and 4) and
:func:`figure4_tau` / :func:`tau_on_means` (Kendall's tau on repetition-averaged results);
:func:`paper_models` and :func:`paper_grid` are the five recommenders of §4.4 and their
hyper-parameter grid (:data:`PAPER_GRID`), as Cornac stand-ins or
(``paper_grid(recommenders="ranksys")``) as the paper's kind, RankSys's top-N scorers
(:class:`RankSysUserKNN`, :class:`RankSysItemKNN`, :class:`ImplicitALS`);
:func:`tau_bands` adds a bootstrap band over the repetitions to Figure 4's tau,
:func:`figure4_verdicts` grades it against the τ values the orders consistent with D_gt
and the test set allow, within :func:`tau_margin` (and :func:`figure4_sign_tests` the
paper's contrasts, within repetitions, within :func:`contrast_margin`),
:func:`smoothing_comparison` sets the course's add-one rule for absent ids beside the authors'
notebook's (a zero share becomes 1e-4) and
:func:`popular_share` measures how much of each test set lies on the most-logged items;
``PAPER_*`` constants hold the values the paper's text states. :func:`posterior_check` and
:func:`weight_noise` examine the data (Eq. 1-6; the noise of WTD's estimated MAR posteriors).
The course's own statistics are separate: :func:`difference_from_truth`,
:func:`mean_difference`, :func:`best_sizes` (one rho_p per strategy), :func:`wilcoxon_vs_truth`
(each strategy against D_gt) and :func:`kendall_vs_truth` (one tau per repetition).
"""

from __future__ import annotations

from ._extensions import (best_sizes, difference_from_truth, kendall_vs_truth,
                          mean_difference, wilcoxon_vs_truth)
from ._data import (PAPER_TABLE2_KL, kl_by_seed, posterior_check, table2_kl,
                    weight_noise)
from ._bands import popular_share, tau_bands
from ._grading import (FIGURE4_CONTRASTS, contrast_margin, figure4_sign_tests,
                       figure4_verdicts, smoothing_comparison, tau_margin)
from ._models import PAPER_GRID, RECOMMENDER_KINDS, paper_grid, paper_models
from ._protocol import (METRICS, SIZES, TEST_SET_NAMES, ProtocolSplit,
                        draw_test_sets, split_feedback, tune)
from ._repetitions import Repetition, run_protocol, run_repetition
from ._tables import (PAPER_CLOSEST, PAPER_FIGURE4_TAU, PAPER_TABLE5,
                      closest_test_sets, figure4_tau, table3,
                      table4_wilcoxon, table5_wilcoxon, tau_on_means)

__all__ = [
    "FIGURE4_CONTRASTS",
    "METRICS",
    "PAPER_CLOSEST",
    "PAPER_FIGURE4_TAU",
    "PAPER_GRID",
    "PAPER_TABLE2_KL",
    "PAPER_TABLE5",
    "RECOMMENDER_KINDS",
    "TEST_SET_NAMES",
    "ImplicitALS",
    "RankSysItemKNN",
    "RankSysUserKNN",
    "closest_test_sets",
    "contrast_margin",
    "draw_test_sets",
    "figure4_sign_tests",
    "figure4_tau",
    "figure4_verdicts",
    "kl_by_seed",
    "paper_grid",
    "paper_models",
    "popular_share",
    "posterior_check",
    "table2_kl",
    "table3",
    "table4_wilcoxon",
    "table5_wilcoxon",
    "tau_bands",
    "tau_margin",
    "tau_on_means",
    "weight_noise",
    "ProtocolSplit",
    "Repetition",
    "SIZES",
    "best_sizes",
    "difference_from_truth",
    "kendall_vs_truth",
    "mean_difference",
    "run_protocol",
    "run_repetition",
    "smoothing_comparison",
    "split_feedback",
    "tune",
    "wilcoxon_vs_truth",
]


_RANKSYS = ("ImplicitALS", "RankSysItemKNN", "RankSysUserKNN")  # Cornac models: loaded on use


def __getattr__(name: str):
    if name not in _RANKSYS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ..._optional import require

    require("cornac", f"carraro2022.{name}")  # quietly, or a message naming the extra
    from . import _ranksys

    return getattr(_ranksys, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_RANKSYS})
