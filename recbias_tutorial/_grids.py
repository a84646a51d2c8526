"""Look a value up on a paper's grid with a tolerance, never by exact float equality.

``0.1 * 6`` is ``0.6000000000000001``: an exact look-up of it in a paper's ρp grid finds
nothing, and the paper's number (and its verdict) silently vanish. :func:`snap_to_grid`
returns the grid's own value within ``tol``, or raises a ``ValueError`` naming the argument.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["GRID_TOLERANCE", "snap_to_grid"]

#: Absolute distance within which a value is the grid point (float rounding, not a choice).
GRID_TOLERANCE = 1e-9


def snap_to_grid(value: Any, grid: Iterable[float], name: str, *,
                 tol: float = GRID_TOLERANCE) -> float:
    """The point of ``grid`` within ``tol`` of ``value``; a ``ValueError`` naming ``name`` if
    ``value`` is not a finite real or lies off the grid."""
    points = np.asarray(sorted(float(g) for g in grid), dtype=np.float64)
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number on the grid, got {value!r}") from None
    if isinstance(value, bool) or not np.isfinite(v):
        raise ValueError(f"{name} must be a finite real number on the grid, got {value!r}")
    near = np.abs(points - v) <= tol
    if not near.any():
        shown = ", ".join(f"{p:g}" for p in points)
        raise ValueError(f"{name}={v!r} is off the grid ({shown}; within {tol:g})")
    return float(points[np.argmax(near)])
