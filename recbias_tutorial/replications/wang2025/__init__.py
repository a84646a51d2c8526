r"""Recall@K̄ on randomly exposed data against URE (Wang et al., WWW 2025).

Wang et al. show that the traditional scheme — rank only each user's :math:`\bar N` randomly
exposed items and report Recall@:math:`\bar K` — does not track full-catalogue Recall@K, while
their unbiased recall estimator (URE) ranks the same random items against the whole catalogue
and estimates Recall@K without bias. Their Table 1 reports both schemes per model on Yahoo! R3's
random test set. This module holds:

* :data:`PAPER_TABLE1` and :data:`PAPER_DATASETS` — the paper's Table 1 and Table 2, exactly;
* :func:`autodebias_split` — the paper's Yahoo! R3 test set: 48,600 of the 54,000 random
  ratings (Table 2), the 90% test part of AutoDebias's 5% uniform / 5% validation / 90% test
  split, drawn as its code draws it; :func:`paper_random_split` holds out the same 10% by a
  seeded uniform draw of our own (one 10% part, as the chapter's first version did);
* :func:`scheme_users` / :func:`scheme_table` — per model, the traditional Recall@K̄ and URE
  Recall@K on the same random data, per user and with intervals;
* :func:`model_curves` — per model, the per-user curves of both schemes for many cut-offs,
  cached by the score matrix's content;
* :func:`paired_bootstrap` — differences between models over the same users, with a paired
  bootstrap interval;
* :func:`autodebias_split`, :func:`signed_labels`, :func:`fit_autodebias` — the paper's
  trainers: MF, IPS and DR as in the AutoDebias baselines (Chen et al.'s code, whose split and
  settings the paper re-evaluates; :data:`AUTODEBIAS_YAHOO`), in NumPy; a run whose weights
  overflow raises :class:`TrainingDiverged` (a ``ValueError``) instead of returning a fit;
  AutoDebias and DNS themselves are not implemented;
* :func:`course_trainers` — the course's MF, IPS-MF and DR-MF trainers (not the paper's) and
  their propensities, shared by chapter 5 and the stored full-scale run (``make replicate``);
  ``regularisation="equal"`` gives IPS-MF MF's penalty (:data:`REGULARISATION`);
* :func:`convention_ladder` — both schemes under each convention the paper leaves unstated
  (:data:`CANDIDATES`, :data:`USERS`, K̄), and :func:`ordering_over_seeds` — paired tests of
  each ordering of two models over seeds;
* :func:`ips_stability` / :func:`ips_stability_table` — how close AutoDebias's IPS runs to
  divergence: learning rates around 1e-5 (:data:`IPS_STABILITY_LRS`) and block partitions
  (:data:`IPS_STABILITY_BLOCKS`) against divergence, over seeds.
"""

from __future__ import annotations

import pandas as pd

from ._ladder import CANDIDATES, USERS, convention_ladder, ordering_over_seeds
from ._models import REGULARISATION, course_trainers
from ._stability import (IPS_STABILITY_BLOCKS, IPS_STABILITY_LRS, ips_stability,
                         ips_stability_table)
from ._protocol import (model_curves, paired_bootstrap, paper_random_split, scheme_table,
                        scheme_users, summarise_schemes)
from ._trainers import (AUTODEBIAS_YAHOO, AutoDebiasFit, TrainingDiverged, autodebias_split,
                        fit_autodebias, signed_labels)

__all__ = ["AUTODEBIAS_YAHOO", "AutoDebiasFit", "CANDIDATES", "IPS_STABILITY_BLOCKS",
           "IPS_STABILITY_LRS", "PAPER_DATASETS", "PAPER_TABLE1",
           "REGULARISATION", "TrainingDiverged", "USERS", "autodebias_split", "convention_ladder", "course_trainers",
           "fit_autodebias", "ips_stability", "ips_stability_table", "model_curves", "ordering_over_seeds", "paired_bootstrap",
           "paper_random_split", "scheme_table", "scheme_users", "signed_labels",
           "summarise_schemes"]

#: Table 1 of Wang et al. (WWW 2025), "The evaluation results by URE", exactly as printed.
#: KuaiRec: traditional Recall@5̄ on D_rand, true Recall@5 on D_full, URE Recall@5 on D_rand;
#: Yahoo!R3: traditional Recall@5̄ and URE Recall@5 (no D_full). Debiasing methods on an MF
#: backbone: IPS (Schnabel et al. 2016), DR (Wang et al. 2019), AutoDebias (Chen et al. 2021),
#: DNS (Shi et al. 2023). Source: Table 1 (``003_e9f7d6a85b2c7a6f.txt`` and
#: ``000_6dc436004a32a756.txt`` in the course's shared papers, two renderings of the paper).
PAPER_TABLE1: pd.DataFrame = pd.DataFrame(
    [[0.4859, 0.0257, 0.0267, 0.7085, 0.0131],
     [0.4889, 0.0266, 0.0273, 0.6572, 0.0095],
     [0.4849, 0.0262, 0.0267, 0.7195, 0.0075],
     [0.5181, 0.0317, 0.0323, 0.8085, 0.0550],
     [0.5288, 0.0237, 0.0245, 0.8330, 0.0490]],
    index=pd.Index(["MF", "IPS", "DR", "AutoDebias", "DNS"], name="model"),
    columns=pd.MultiIndex.from_tuples([
        ("KuaiRec", "traditional Recall@5̄"), ("KuaiRec", "true Recall@5 (D_full)"),
        ("KuaiRec", "URE Recall@5"), ("Yahoo!R3", "traditional Recall@5̄"),
        ("Yahoo!R3", "URE Recall@5")], names=["dataset", "column"]))

#: Table 2 of Wang et al. (WWW 2025), "The statistics of datasets", exactly as printed.
PAPER_DATASETS: pd.DataFrame = pd.DataFrame(
    {"users": [15_400, 1_411], "items": [1_000, 3_327], "biased train": [311_704, 1_934_404],
     "test": [48_600, 2_742_166], "test set": ["D_rand", "D_full"]},
    index=pd.Index(["Yahoo!R3", "KuaiRec"], name="dataset"))
