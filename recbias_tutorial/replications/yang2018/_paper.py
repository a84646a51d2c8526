"""Yang et al.'s published numbers (private): the bottom floor every other file of the paper reads.

Re-exported by :mod:`recbias_tutorial.replications.yang2018` under the same names (the same
objects), where they are documented; import them from there. This module imports nothing of
the paper's.
"""

from __future__ import annotations

import pandas as pd

#: The slides' Yahoo! R3 table, MAE of Recall per model and estimator
#: (``yang2018.PAPER_MAE_RECALL``, documented in the front).
PAPER_MAE_RECALL: pd.DataFrame = pd.DataFrame(
    [[0.401, 0.270, 0.260, 0.253, 0.248],
     [0.399, 0.274, 0.264, 0.258, 0.253],
     [0.380, 0.275, 0.268, 0.258, 0.258],
     [0.386, 0.267, 0.268, 0.258, 0.248]],
    index=pd.Index(["U-CML", "A-CML", "BPR", "PMF"], name="model"),
    columns=["AOA", "SNIPS γ=1.5", "SNIPS γ=2.0", "SNIPS γ=2.5", "SNIPS γ=3.0"])
