"""Scores read in blocks of users, so that evaluation never needs the whole score matrix.

Every ranking function and estimator accepts, wherever it accepts a dense ``(n_users,
n_items)`` array, a :class:`Scorer`: a function that returns the score rows of a block of
users. The package evaluates users chunk by chunk (about a million scores at a time), so a
catalogue of any size is evaluated in bounded memory, with the same values as on the dense
matrix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._validation import check_fits_in_memory, check_int

__all__ = ["Scorer"]


class Scorer:
    """Scores of ``n_users`` x ``n_items`` produced a block of users at a time.

    Parameters
    ----------
    fn : callable
        ``fn(users)`` takes a 1-D int64 array of user ids (contiguous, increasing) and returns
        their scores as an array of shape ``(len(users), n_items)``, higher = better.
    n_users, n_items : int
        Size of the score matrix ``fn`` describes.

    Attributes
    ----------
    shape : tuple of int
        ``(n_users, n_items)``.

    Raises
    ------
    ValueError
        If ``fn`` is not callable or a size is not a positive integer; when a block is read,
        if ``fn`` returns an array of the wrong shape or with NaN or infinite values.

    See Also
    --------
    Scorer.from_factors : a factor model ``U V^T`` (plus biases).
    recbias_tutorial.models.fit_scorer : a fitted Cornac model.
    recbias_tutorial.metrics.rank_positions : accepts a Scorer wherever it accepts scores.

    Examples
    --------
    >>> import pandas as pd
    >>> import recbias_tutorial as rb
    >>> scorer = rb.Scorer(lambda users: np.tile([0.9, 0.1, 0.5], (len(users), 1)),
    ...                    n_users=2, n_items=3)
    >>> test = pd.DataFrame({"user": [0, 1], "item": [2, 1], "rating": [5.0, 5.0]})
    >>> rb.aoa(scorer, test, k=2), rb.aoa(scorer.dense(), test, k=2)
    (0.5, 0.5)
    """

    def __init__(self, fn: Callable[[np.ndarray], Any], *, n_users: int, n_items: int) -> None:
        if not callable(fn):
            raise ValueError(f"fn must be callable users -> scores, got {type(fn).__name__}")
        self.fn = fn
        self.shape = (check_int(n_users, "n_users"), check_int(n_items, "n_items"))

    def __repr__(self) -> str:
        return f"Scorer(n_users={self.shape[0]:,}, n_items={self.shape[1]:,})"

    def __call__(self, users: np.ndarray) -> np.ndarray:
        """The validated float64 scores of ``users`` (a fresh array the caller may modify)."""
        users = np.asarray(users, dtype=np.int64)
        raw = _as_array(self.fn(users), "scorer fn's scores")
        # complex scores have no order and booleans only ties: casting either to float would
        # rank silently by the real part or by 0/1
        if raw.dtype == bool or not (np.issubdtype(raw.dtype, np.integer)
                                     or np.issubdtype(raw.dtype, np.floating)):
            raise ValueError(f"scorer fn returned scores of dtype {raw.dtype}; scores must be "
                             "real numbers (integer or float)")
        block = np.array(raw, dtype=np.float64)  # always a copy: callers mask it
        if block.shape != (len(users), self.shape[1]):
            raise ValueError(f"scorer returned shape {block.shape} for {len(users)} users, "
                             f"expected ({len(users)}, {self.shape[1]})")
        if not np.isfinite(block).all():
            raise ValueError("scorer returned NaN or infinite scores")
        return block

    def block(self, lo: int, hi: int) -> np.ndarray:
        """Scores of users ``lo..hi-1``."""
        return self(np.arange(lo, hi, dtype=np.int64))

    def dense(self) -> np.ndarray:
        """The whole score matrix (only for small cases and tests).

        Raises
        ------
        ValueError
            If the float64 matrix would need more memory than the machine has available
            (refused before anything is computed; score in blocks instead).
        """
        n_users, n_items = self.shape
        check_fits_in_memory(8.0 * n_users * n_items, "n_users x n_items",
                             f"the dense score matrix of {n_users:,} x {n_items:,} float64 "
                             "(score it in blocks: Scorer.block, or pass the Scorer itself)")
        return self.block(0, n_users)

    @classmethod
    def from_factors(cls, user_factors: Any, item_factors: Any, *, user_bias: Any = None,
                     item_bias: Any = None) -> Scorer:
        """Scores ``U[u] . V[i] (+ b_u + b_i)`` of a factor model, computed per block.

        Parameters
        ----------
        user_factors : array of shape (n_users, k)
        item_factors : array of shape (n_items, k)
        user_bias : array of shape (n_users,), optional
        item_bias : array of shape (n_items,), optional

        Returns
        -------
        Scorer

        Raises
        ------
        ValueError
            If the factors are not finite 2-D arrays with the same number of columns, or a
            bias has the wrong length or non-finite values.

        Examples
        --------
        >>> U, V = np.eye(2), np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 0.5]])
        >>> Scorer.from_factors(U, V, item_bias=[0.0, 0.0, 1.0]).dense().tolist()
        [[1.0, 0.0, 1.5], [0.0, 2.0, 1.5]]
        """
        U = _finite(user_factors, "user_factors", 2)
        V = _finite(item_factors, "item_factors", 2)
        if U.shape[1] != V.shape[1]:
            raise ValueError(f"user_factors and item_factors must have the same number of "
                             f"columns, got {U.shape[1]} and {V.shape[1]}")
        bu = None if user_bias is None else _finite(user_bias, "user_bias", 1, len(U))
        bi = None if item_bias is None else _finite(item_bias, "item_bias", 1, len(V))
        Vt = np.ascontiguousarray(V.T)

        def fn(users: np.ndarray) -> np.ndarray:
            out = U[users] @ Vt
            if bu is not None:
                out += bu[users, None]
            if bi is not None:
                out += bi[None, :]
            return out

        return cls(fn, n_users=len(U), n_items=len(V))


def _as_array(value: Any, name: str) -> np.ndarray:
    """``np.asarray``, with numpy's complaint about ragged nested lists put in the user's terms."""
    try:
        return np.asarray(value)
    except ValueError:  # rows of different lengths (numpy refuses ragged nested sequences)
        raise ValueError(f"{name} must be a 2-D array (users x items), got a ragged nested "
                         "sequence: its rows have different lengths") from None


def _finite(a: Any, name: str, ndim: int, length: int | None = None) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != ndim or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty {ndim}-D array, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {arr.shape[0]}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has NaN or infinite values")
    return arr


def check_scores(scores: Any) -> Any:
    """A finite 2-D real array (users x items), or a :class:`Scorer` (its blocks are checked
    as they are read); the boundary check of every function that takes scores."""
    if isinstance(scores, Scorer):
        return scores
    arr = _as_array(scores, "scores")
    if arr.ndim != 2:
        raise ValueError(f"scores must be a 2-D array (users x items), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"scores must not be empty, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"scores must be real numbers, got dtype {arr.dtype}")
    # one summing pass (no temporary mask) clears finite data; only a NaN, an inf or an
    # overflowing sum needs the element-wise look
    if np.issubdtype(arr.dtype, np.floating) and not np.isfinite(arr.sum()) \
            and not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).sum())
        raise ValueError(f"scores must be finite, found {bad} NaN or infinite values")
    return arr
