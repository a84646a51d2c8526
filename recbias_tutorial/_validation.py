"""Input checks shared by the public functions (each raises ValueError naming the argument)."""

from __future__ import annotations

import numpy as np
import pandas as pd

FEEDBACK_COLUMNS = ("user", "item", "rating")


def check_scores(scores) -> np.ndarray:
    """A finite 2-D float array (users x items)."""
    arr = np.asarray(scores)
    if arr.ndim != 2:
        raise ValueError(f"scores must be a 2-D array (users x items), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"scores must not be empty, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"scores must be real numbers, got dtype {arr.dtype}")
    if not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).sum())
        raise ValueError(f"scores must be finite, found {bad} NaN or infinite values")
    return arr


def check_feedback(frame, name: str, n_users: int, n_items: int, *,
                   require_rating: bool = True, allow_empty: bool = False,
                   unique: bool = True) -> pd.DataFrame:
    """A user/item(/rating) frame with ids inside the score matrix and no duplicate pairs."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame with columns user, item, rating")
    need = FEEDBACK_COLUMNS if require_rating else FEEDBACK_COLUMNS[:2]
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} is missing column(s) {missing}")
    if len(frame) == 0 and not allow_empty:
        raise ValueError(f"{name} is empty")
    users = frame["user"].to_numpy()
    items = frame["item"].to_numpy()
    for col, ids, n in (("user", users, n_users), ("item", items, n_items)):
        if len(ids) and not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"{name}.{col} must hold integer ids, got dtype {ids.dtype}")
        if len(ids) and (ids.min() < 0 or ids.max() >= n):
            raise ValueError(f"{name}.{col} has ids outside 0..{n - 1} (the score matrix size)")
    if require_rating:
        ratings = frame["rating"].to_numpy(dtype=float)
        if not np.isfinite(ratings).all():
            raise ValueError(f"{name}.rating has NaN or infinite values")
    if unique and len(frame):
        keys = users.astype(np.int64) * n_items + items
        if len(np.unique(keys)) != len(keys):
            raise ValueError(f"{name} has duplicate (user, item) pairs")
    return frame


def check_k(k, n_items: int, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {k!r}")
    if k < 1 or k > n_items:
        raise ValueError(f"{name} must be in 1..{n_items} (the catalogue size), got {k}")
    return int(k)


def check_propensity(propensity, users: np.ndarray, items: np.ndarray, shape: tuple[int, int],
                     *, upper_one: bool, clip: float | None = None) -> np.ndarray:
    """Look up P_ui for the given rows from a per-item (1-D) or users x items (2-D) array."""
    p = np.asarray(propensity, dtype=float)
    if p.ndim == 1:
        if p.shape[0] != shape[1]:
            raise ValueError(f"propensity (1-D, per item) must have length {shape[1]}, got {p.shape[0]}")
        vals = p[items]
    elif p.ndim == 2:
        if p.shape != shape:
            raise ValueError(f"propensity (2-D) must have shape {shape}, got {p.shape}")
        vals = p[users, items]
    else:
        raise ValueError(f"propensity must be 1-D (items) or 2-D (users x items), got {p.ndim}-D")
    if clip is not None:
        if not (0 < clip <= 1) and upper_one:
            raise ValueError(f"clip must be in (0, 1], got {clip}")
        if not clip > 0:
            raise ValueError(f"clip must be positive, got {clip}")
        vals = np.maximum(vals, clip)
    if np.isnan(vals).any():
        raise ValueError("propensity has NaN values for test interactions")
    if (vals <= 0).any():
        raise ValueError("propensity must be > 0 for every test interaction (use clip= to bound it)")
    if not np.isfinite(vals).all():
        raise ValueError("propensity must be finite")
    if upper_one and (vals > 1).any():
        raise ValueError("propensity must be absolute probabilities in (0, 1] for ips")
    return vals


def as_generator(seed) -> np.random.Generator:
    """An explicit Generator from an int seed or a Generator (``None`` is refused: seed it)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        raise ValueError("seed must be given (an int or a numpy Generator) for reproducibility")
    return np.random.default_rng(seed)
