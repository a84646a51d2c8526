r"""Unbiased offline evaluation with popularity propensities (Yang et al., RecSys 2018).

The paper estimates each model's metric on the MAR (randomly exposed) truth from logged held-out
feedback, once by Average-Over-All and once by SNIPS with popularity propensities
:math:`p_i \propto n_i^{(\gamma+1)/2}` over a grid of :math:`\gamma`, and judges the estimators
by their error against the truth. This module runs that comparison for any set of scored models:

* :func:`snips_protocols` — the test sets, propensities and estimators of one comparison;
* :func:`estimate_models` — every model under every protocol, with user-bootstrap intervals;
* :func:`agreement_table` — per estimator, MAE against the truth and Kendall's tau of the model
  ranking against the truth's;
* :func:`same_users` — restrict the logged test set and the truth to the users present in both;
* :func:`user_table` / :func:`per_model_mae` — per-user values of every protocol, and per model
  the mean absolute error of the per-user estimates against the per-user truth, the form of the
  paper's table (:data:`PAPER_MAE_RECALL`);
* :func:`split_user_table` / :func:`mae_over_splits` — the whole protocol on a dataset (split,
  fit, evaluate) for one split seed or several, kept in the on-disk cache;
* :func:`course_models` — the course's seven recommenders (not the paper's), shared by
  chapter 2 and the stored full-scale run (``make replicate``);
* **the authors' protocol** of Section 5 as ylongqi/unbiased-offline-recommender-evaluation ran
  it — :data:`AUTHORS` (sampled negatives, last 300 kept, K = 1, MAR truth over each user's own
  MAR-rated songs, each side over its own users, MAE = gap between the aggregates),
  :data:`COURSE` (the course's full-catalogue reading, a named alternative) and :data:`LADDER`
  (one change at a time from one to the other), as :class:`Reading` values;
  :func:`authors_split`, :func:`sampled_candidates`, :func:`user_terms`,
  :func:`reading_rows`, :func:`evaluate_readings` (each step, with the authors' file and
  function it follows), :func:`authors_models` / :func:`pmf_training` (U-CML, A-CML, BPR and
  PMF with the authors' settings), :func:`authors_split_table` (one split, every reading,
  every negative draw), :func:`mae_summary` and :func:`snips_reduction`;
* **the slides' reading** — :data:`SLIDES` (the public code's sampled MNAR estimate at
  Recall@10 against the MAR positives ranked among every item without a training pair at
  Recall@10, MAE = the gap between the aggregates), :data:`SLIDES_LADDER` (from
  :data:`AUTHORS` one choice at a time), :data:`SLIDES_FAMILY` (the truths that fit the slides
  about as well), :data:`SLIDES_NEGATIVES` (200 or 300 negatives for every model) and
  :data:`READINGS` (every named reading, as stored); **found by searching**
  :func:`reading_grid` against the slides with BPR and PMF (:data:`SEARCH_MODELS`) and checked
  on U-CML and A-CML (:data:`CHECK_MODELS`): :func:`grid_table`, :func:`grid_search`,
  :func:`grid_family`, :func:`grid_rows`; :func:`direction_test` (over- or
  under-estimation, run by run).

The exponent :math:`\gamma` is, in the paper, the popularity exponent of the serving policy,
:math:`P^{\text{select}}_i \propto (n^*_i)^\gamma` (Steck 2011), "estimated from known online
content serving policy"; the two-step assumption :math:`P_i = P^{\text{select}}_i
P^{\text{interact}|\text{select}}_i` with preferences unaffected by presentation then gives
:math:`p_i \propto (n^*_i)^{(\gamma+1)/2}`. Without the serving policy, :data:`GAMMAS` is a
sensitivity grid.
"""

from __future__ import annotations

import pandas as pd

from . import _paper as _paper
from . import _protocol as _proto
from . import _authors as _authors
from . import _grid as _grid_module
from . import _readings as _readings
from . import _runs as _runs_module
from ._authors import Reading, authors_split, reading_rows, sampled_candidates, user_terms
from ._extensions import agreement_table, course_models, estimate_models, summarise
from ._grid import direction_test, grid_family, grid_rows, grid_search, grid_table
from ._readings import grid_name, reading_grid
from ._protocol import same_users, snips_protocols, split_user_table, user_table
from ._sides import evaluate_readings
from ._runs import (authors_models, authors_split_table, mae_summary, pmf_training,
                    snips_reduction)
from ._tables import mae_over_splits, per_model_mae

__all__ = ["AUTHORS", "CHECK_MODELS", "COURSE", "DEFAULT_NEGATIVES", "GAMMAS", "GRID_CHOICES", "GRID_KEY", "LADDER",
           "PAPER_MAE_RECALL", "READINGS", "Reading", "SEARCH_MODELS", "SLIDES", "SLIDES_FAMILY",
           "N_NEGATIVES", "SLIDES_LADDER", "SLIDES_NEGATIVES", "SLIDE_MODELS", "TEST_NEGATIVES", "TRUTHS",
           "agreement_table", "authors_models", "authors_split", "authors_split_table",
           "course_models", "direction_test", "estimate_models", "evaluate_readings",
           "grid_family", "grid_name", "grid_rows", "grid_search", "grid_table", "mae_over_splits",
           "mae_summary", "per_model_mae", "pmf_training", "reading_grid", "reading_rows",
           "same_users", "sampled_candidates", "snips_protocols", "snips_reduction",
           "split_user_table", "summarise", "user_table", "user_terms"]

#: The sensitivity grid of the popularity exponent gamma used by the paper.
GAMMAS: tuple[float, ...] = _proto.GAMMAS

#: The paper's Yahoo! R3 table: "Measuring bias in recommender evaluation (Yahoo! music rating
#: dataset) — Mean Absolute Error (MAE), Recall", per model (rows) and estimator (columns: AOA,
#: then SNIPS at gamma = 1.5, 2.0, 2.5, 3.0). Source: Yang et al., RecSys 2018, talk slides
#: (``002_e808ef58dd263019.txt`` in the course's shared papers, first rendering of the slide; the second rendering of the
#: same slide is garbled by the slide animation and is not used). U-CML / A-CML are
#: collaborative metric learning with uniform weights (OpenRec's CML) and with WARP-style
#: approximated-rank weights (OpenRec's WCML); BPR and PMF as usual.
PAPER_MAE_RECALL: pd.DataFrame = _paper.PAPER_MAE_RECALL

Protocol = _proto.Protocol  # (test set, propensity or None, estimator name)

#: The authors' Section 5 protocol, the replication: sampled negatives (200 / 300, the last 300
#: entries kept), Recall@1, the MAR truth ranked among each user's own MAR songs, each side
#: over its own users, MAE = ``|aggregate estimate - aggregate truth|``.
AUTHORS: Reading = _readings.AUTHORS

#: The course's earlier reading of the slides, a named alternative: full-catalogue candidates on
#: both sides, Recall@10, common users, mean of per-user gaps.
COURSE: Reading = _readings.COURSE

#: From :data:`AUTHORS` to :data:`COURSE` one change at a time: MNAR candidates, MAR candidates,
#: K, user set, per-user MAE.
LADDER: tuple[Reading, ...] = _readings.LADDER

#: The reading the slides' numbers imply: the public code's sampled MNAR estimate (the
#: authors' negatives, the last 300 kept) at Recall@10 against the MAR positives ranked among
#: every item without a training pair at Recall@10, each side over its own users, MAE = the
#: gap between the aggregates. Found by searching :func:`reading_grid` against the slides
#: with BPR and PMF; U-CML and A-CML only check it.
SLIDES: Reading = _readings.SLIDES

#: From :data:`AUTHORS` to :data:`SLIDES` one choice at a time: the MAR side's candidates,
#: then K = 10 on the MNAR side, then on the MAR side (that last but one step is a grid
#: reading, stored for the slides' four models in the grid file).
SLIDES_LADDER: tuple[Reading, ...] = _readings.SLIDES_LADDER

#: :data:`SLIDES` and the MAR truths that fit the slides about as well: every item, every
#: item without a training or held-out pair, OpenRec's ``_evaluate_full`` exclusions, the
#: test script's 200 negatives that ``eq`` cuts off.
SLIDES_FAMILY: tuple[Reading, ...] = _readings.SLIDES_FAMILY

#: :data:`SLIDES` with 200, then 300, negatives for every model (the negative-count
#: sensitivity; the authors: 200 for BPR and PMF, 300 for U-CML and A-CML).
SLIDES_NEGATIVES: tuple[Reading, ...] = _readings.SLIDES_NEGATIVES

#: Every named reading the stored full-scale run holds for every model.
READINGS: tuple[Reading, ...] = _readings.READINGS

#: The MAR-side candidate sets a :class:`Reading` may name (``truth``).
TRUTHS: tuple[str, ...] = _readings.TRUTHS

#: Negatives the test scripts sample for the MAR side (200 for every model), which ``eq``
#: cuts off; ``truth="sampled"`` keeps them.
TEST_NEGATIVES: int = _readings.TEST_NEGATIVES

#: Negatives sampled per user on the MNAR side by the validation scripts for PMF and BPR.
DEFAULT_NEGATIVES: int = _runs_module.DEFAULT_NEGATIVES
#: Negatives per user where a model samples more (the CML notebook and ``wcml_yahoo_val.py``).
N_NEGATIVES: dict[str, int] = dict(_runs_module.N_NEGATIVES)

#: The slides' model names -> the stored run's (:func:`authors_models`).
SLIDE_MODELS: dict[str, str] = _grid_module.SLIDE_MODELS

#: The slides' models the grid was searched with (BPR, PMF).
SEARCH_MODELS: tuple[str, ...] = _grid_module.SEARCH_MODELS

#: The slides' models that only check what the search found (U-CML, A-CML).
CHECK_MODELS: tuple[str, ...] = _grid_module.CHECK_MODELS

#: The grid's choices (:func:`reading_grid`): MNAR and MAR candidates, each side's cut-off,
#: users and MAE.
GRID_CHOICES: dict = _readings.GRID_CHOICES

#: The fields that key a grid reading (a :class:`Reading`'s, without its name) in
#: :func:`grid_table` and :func:`grid_search`.
GRID_KEY: list[str] = _grid_module.GRID_KEY
