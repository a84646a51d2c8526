"""After a fit, before any score is returned: refuse a trained model that diverged.

The families the package trains or scores itself (Cornac's GMF / MLP / NeuMF through the
NumPy trainer, PMF through the compiled loop, the package's CML, Cornac's MF and BPR) are
checked for non-finite weights and for a collapsed score spread on a block of users
(:mod:`recbias_tutorial._training`). Other families (baselines, whose constant scores can be
right, e.g. the average rating of binary data) are left as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._training import check_finite_weights, check_score_spread

#: Families checked, by class name (Cornac's and the package's).
CHECKED = ("GMF", "MLP", "NeuMF", "PMF", "CML", "MF", "BPR")
_SAMPLE_USERS = 256  # users whose scores are checked for a spread (one block)


def learning_rate(model: Any) -> float | None:
    """The model's step size (Cornac names it ``lr`` or ``learning_rate``), or None."""
    for attr in ("lr", "learning_rate"):
        value = getattr(model, attr, None)
        if isinstance(value, (int, float, np.floating)) and not isinstance(value, bool):
            return float(value)
    return None


def _weights(model: Any) -> list[np.ndarray]:
    """Every float array the model holds (NCF's ``numpy_weights`` dict included)."""
    out = []
    for value in vars(model).values():
        if isinstance(value, dict):
            value = [v for vs in value.values() for v in (vs if isinstance(vs, list) else [vs])]
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.floating):
                out.append(v)
    return out


def check_trained(model: Any, n_users: int, score) -> None:
    """Raise :class:`~recbias_tutorial._training.TrainingDiverged` if ``model`` (fitted, of a
    :data:`CHECKED` family) has non-finite weights, or if the scores ``score(users)`` of its
    first users (Cornac indices) are non-finite, all equal or all exactly 0 or 1."""
    if type(model).__name__ not in CHECKED or not getattr(model, "trainable", True):
        return
    name = getattr(model, "name", type(model).__name__)
    lr = learning_rate(model)
    check_finite_weights(name, _weights(model), lr)
    users = np.arange(min(int(n_users), _SAMPLE_USERS))
    if len(users):
        check_score_spread(name, np.asarray(score(users), dtype=np.float64), lr)
