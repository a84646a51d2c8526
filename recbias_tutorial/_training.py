"""What every trainer of the package raises when a fit cannot be trusted.

A step size too large for the data either overflows (NaN or infinite weights) or drives the
model into a corner where every score is the same, or every sigmoid output is exactly 0 or 1:
a "ranking" of ties. Neither is a fit; both raise :class:`TrainingDiverged` (a ``ValueError``)
naming the model and its learning rate, instead of a score matrix that looks like a result.
The Wang et al. trainers and the Cornac families fitted by ``models.fit_scores`` share it.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["TrainingDiverged", "check_finite_weights", "check_score_spread"]


class TrainingDiverged(ValueError):
    """A trainer's weights or predictions became NaN or infinite, or its scores collapsed to
    one value (or to exactly 0 and 1): its step size is too large for the data; no fit is
    returned. ``epoch`` is the (0-based) epoch that diverged, when the trainer knows it (the
    epochs before it ran without overflow)."""

    def __init__(self, message: str, *, epoch: int | None = None) -> None:
        super().__init__(message)
        self.epoch = epoch


def _what_to_do(model: str, lr: float | None) -> str:
    step = "" if lr is None else f" with learning rate {lr:g}"
    return (f"{model} training{step} diverged; no fit is returned: pass a smaller learning "
            "rate (or fewer epochs / more regularisation)")


def check_finite_weights(model: str, arrays: Iterable[np.ndarray], lr: float | None) -> None:
    """Raise :class:`TrainingDiverged` if any of ``arrays`` holds a NaN or an infinity."""
    for a in arrays:
        a = np.asarray(a)
        # one summing pass: a NaN or an inf anywhere makes the sum non-finite (or overflows)
        if a.size and np.issubdtype(a.dtype, np.floating):
            with np.errstate(over="ignore", invalid="ignore"):
                total = a.sum(dtype=np.float64)
            if not np.isfinite(total) and not np.isfinite(a).all():
                raise TrainingDiverged(f"{_what_to_do(model, lr)} (non-finite weights)")


def check_score_spread(model: str, scores: np.ndarray, lr: float | None) -> None:
    """Raise :class:`TrainingDiverged` if ``scores`` (a block of raw model scores) are not all
    finite, all equal, or all exactly 0 or 1 (saturated sigmoids): a ranking of ties."""
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return
    if not np.isfinite(s).all():
        raise TrainingDiverged(f"{_what_to_do(model, lr)} (non-finite scores)")
    if s.size > 1 and s.min() == s.max():
        raise TrainingDiverged(f"{_what_to_do(model, lr)} (every score equals {s.min():g}: "
                               "a ranking of ties)")
    if s.size > 1 and bool(np.all((s == 0.0) | (s == 1.0))):
        raise TrainingDiverged(f"{_what_to_do(model, lr)} (every score is exactly 0 or 1: "
                               "saturated, a ranking of ties)")
