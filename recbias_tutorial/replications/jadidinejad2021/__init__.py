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
  time) read it. :func:`powerlaw_propensity` (the core's
  :func:`recbias_tutorial.propensity.powerlaw_propensity`, under its old name here),
  :func:`authors_split` and :func:`authors_zoo` are the authors' pieces; ``PAPER_*`` hold the
  paper's numbers.
* :func:`evaluate_zoo` fits, scores and evaluates the models of a zoo one at a time;
  :func:`agreement` (Kendall's tau and Pearson's r of every estimator against the truth) and
  :func:`steiger` (Steiger's test between two estimators) compare the protocols;
  :func:`zoo_sensitivity` shows how much Table 6's tau depends on the zoo (each family left
  out, one model per family).
* The NCF families (MLP, GMF, NeuMF; :data:`NCF_FAMILIES`) are trained by the package's
  NumPy trainer by default (``ncf_backend``): :func:`trainer_comparison` sets the stored run's
  values beside those Cornac's TensorFlow backend gave, :func:`ncf_seed_spread` the training
  noise their difference is judged against, and :func:`neural_costs` what each trainer's
  fits cost.

The strata themselves are core concepts (:func:`recbias_tutorial.estimators.assign_strata`,
:func:`~recbias_tutorial.estimators.strata_table`), as are
:func:`recbias_tutorial.stats.ranking_agreement` and :func:`recbias_tutorial.stats.reversal_pairs`.

Tidy frames have the columns ``estimator``, ``n_strata``, ``binning``, ``k`` and ``value``
(plus ``model`` over a zoo). Estimators that do not stratify have ``n_strata = 0`` and
``binning = ""``; ``stratified`` and ``Q1..Qn`` carry the number of strata and the binning.
"""

from __future__ import annotations

import pandas as pd

from ...propensity import powerlaw_propensity  # the authors' propensities, a core function now
from . import _comparison as _comparison
from . import _protocol as _proto
from . import _values as _values
from ._comparison import agreement, ladder, steiger
from ._extensions import evaluate_zoo, holdout_evaluator, rank_relevant
from ._tables import kendall_taus, protocol_frame, protocol_rows, protocol_taus
from ._trainers import ncf_seed_spread, neural_costs, trainer_comparison
from ._values import authors_split, authors_zoo, protocol_values
from ._zoo import model_family, zoo_sensitivity

__all__ = ["AUTHORS_FAMILIES", "AUTHORS_LOG", "AUTHORS_SIZES", "CHOICES", "LADDER_STEPS", "LEFT_OUT_FAMILIES",
           "NCF_BACKENDS", "NCF_FAMILIES", "NEURAL_FAMILIES", "PAPER_FIG4", "PAPER_FIG4_SIGNIFICANT", "PAPER_N_MODELS", "PAPER_STEIGER_P",
           "PAPER_TABLE1B", "PAPER_TABLE1B_SHARES", "PAPER_TABLE6",
           "agreement", "authors_split", "authors_zoo", "evaluate_zoo", "holdout_evaluator",
           "kendall_taus", "ladder", "model_family", "ncf_seed_spread", "neural_costs", "powerlaw_propensity",
           "protocol_frame", "protocol_rows", "protocol_taus",
           "protocol_values", "rank_relevant", "steiger", "trainer_comparison",
           "zoo_sensitivity"]

# --------------------------------------------------------------------------------------
# the authors' protocol, as their code runs it (terrierteam/stratified_recsys_eval)
# --------------------------------------------------------------------------------------

#: The protocol choices where the authors' code and the course differ:
#: ``{choice: (authors' value, course's value)}``. See :func:`ladder`.
CHOICES = _values.CHOICES
#: Latent sizes of the authors' zoo, ``range(10, 110, 10)`` (``train/*.py``).
AUTHORS_SIZES = _proto.AUTHORS_SIZES
#: Families of the authors' 104-model zoo that Cornac 3 trains here (73 models).
AUTHORS_FAMILIES = _proto.AUTHORS_FAMILIES
#: Number of models in the paper's zoo (Section 6.2; ``utils.get_models(variant="large")``).
PAPER_N_MODELS = 104
#: Families of their zoo that need TensorFlow or PyTorch in Cornac (31 of the 104 models).
LEFT_OUT_FAMILIES = _proto.LEFT_OUT_FAMILIES
#: The left-out families, asked for in ``families``: WMF needs TensorFlow (``pip install -e
#: '.[neural]'``, CPU build); the NCF ones (:data:`NCF_FAMILIES`) do not.
NEURAL_FAMILIES = _proto.NEURAL_FAMILIES
#: Cornac's NCF family (MLP, GMF, NeuMF): trained by the package without TensorFlow by
#: default (``ncf_backend="numpy"``), or by Cornac's TensorFlow backend.
NCF_FAMILIES = _proto.NCF_FAMILIES
#: Who trains the NCF families (``ncf_backend``): ``"numpy"``, the package's trainer
#: (TensorFlow's initial weights, Cornac's batches, Keras's Adam), or ``"tensorflow"``.
NCF_BACKENDS = _proto.NCF_BACKENDS
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
#: What the authors' ``StratifiedEvaluation(verbose=True)`` printed for the run stored in their
#: notebooks (``experiments_coat.ipynb``, ``experiments_yahoo.ipynb``, "Propensity-based
#: Stratified Evaluation"): the power-law fit ("Powerlaw exponential estimates: alpha,
#: min=xmin"), the test ratings of their split and of each stratum, and the head stratum's
#: items. Their Coat fit is powerlaw 1.x's (``powerlaw_propensity(fit="powerlaw1")``).
AUTHORS_LOG = pd.DataFrame(
    {"alpha": [4.014793, 2.347323], "xmin": [28, 290], "test_ratings": [1392, 62341],
     "q1_ratings": [1307, 57560], "q2_ratings": [85, 4781], "q2_items": [5, 5]},
    index=pd.Index(["coat", "yahoo_r3"], name="dataset"))
#: The rungs of :func:`ladder`, in order: each switches one more choice to the course's.
LADDER_STEPS = _comparison.LADDER_STEPS
