"""Test sets prepared once, the kernel shared by both protocols (private).

:class:`PreparedSet` holds a test set's relevant rows and their users as codes, and
:class:`Strata` one stratification of it ((stratum, user) cells and the strata's shares); with
:class:`_CornacWeighted` (Cornac 1.x's nDCG with weighted relevance, the authors' IPS) they
serve the authors' :class:`SplitSet` (:mod:`._protocol`) and the course's
:func:`holdout_evaluator` (:mod:`._extensions`). :func:`truth_values` is the
open-loop nDCG of the authors' separate truth.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._ranking import cell_ndcg_means, mean_ndcg, positions, relevant


def _sums(cell: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Per-cell sums of each row of ``weights`` (one bincount; same order, same sums)."""
    n = weights.shape[0]
    flat = (np.arange(n)[:, None] * size + cell[None, :]).ravel()
    return np.bincount(flat, weights=weights.ravel(), minlength=n * size).reshape(n, size)


class PreparedSet:
    """A test set prepared once, for both protocols (the authors' :class:`SplitSet` and the
    course's ``holdout_evaluator``): its relevant rows, their users as codes
    ``0..n_codes-1`` and each user's number of relevant rows."""

    def __init__(self, test: pd.DataFrame, threshold: float):
        self.rel = relevant(test, threshold).reset_index(drop=True)
        self.users, self.codes = np.unique(self.rel["user"].to_numpy(np.int64), return_inverse=True)
        self.n_codes = len(self.users)
        self.counts = np.bincount(self.codes, minlength=self.n_codes)

    def strata(self, stratum: np.ndarray, n: int, shares: dict[str, np.ndarray]) -> Strata:
        """The stratification of the relevant rows into ``n`` strata (``stratum`` per row)."""
        return Strata(stratum * self.n_codes + self.codes, n, self.n_codes, shares)


class Strata:
    """One stratification of a :class:`PreparedSet`: (stratum, user) cells and the shares
    ``shares[weighting]`` of each stratum."""

    def __init__(self, cell: np.ndarray, n: int, n_codes: int, shares: dict[str, np.ndarray]):
        self.cell, self.n, self.shares = cell, n, shares
        self.n_rel = np.bincount(cell, minlength=n * n_codes).reshape(n, n_codes)

    def values(self, gain: np.ndarray, kks: np.ndarray) -> np.ndarray:
        """Mean per-user nDCG of each stratum (NaN when empty) at every cut-off: ``gain``
        has one row per cut-off of ``kks``; shape (len(kks), n)."""
        d = _sums(self.cell, gain, self.n_rel.size).reshape(len(kks), *self.n_rel.shape)
        return cell_ndcg_means(d, self.n_rel[None], kks[:, None, None])


class _CornacWeighted:
    """Cornac 1.x ``NDCG`` with weighted relevance w: gain 2^w - 1, ideal = sorted weights.

    The ideal ranking depends on the weights only, so it is sorted once per split."""

    def __init__(self, codes: np.ndarray, n_codes: int, w: np.ndarray):
        self.codes, self.n_codes = codes, n_codes
        self.num = np.exp2(w) - 1.0
        order = np.lexsort((-w, codes))  # by user, weights descending
        c_sorted = codes[order]
        rank = np.arange(len(order)) - np.searchsorted(c_sorted, c_sorted, side="left")
        self.c_sorted, self.rank, self.num_sorted = c_sorted, rank, self.num[order]

    def values(self, z: np.ndarray, kks: np.ndarray) -> np.ndarray:
        """Per-user values at every cut-off: shape (len(kks), n_codes)."""
        gain = np.where(z[None, :] < kks[:, None], (self.num / np.log2(z + 2.0))[None, :], 0.0)
        ideal = np.where(self.rank[None, :] < kks[:, None],
                         (self.num_sorted / np.log2(self.rank + 2.0))[None, :], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (_sums(self.codes, gain, self.n_codes)
                    / _sums(self.c_sorted, ideal, self.n_codes))


def truth_values(scores: np.ndarray, mar: pd.DataFrame, *, threshold: float, ks) -> list[tuple]:
    """Open-loop nDCG of one model on every MAR rating, ranking every item: rows (k, value)."""
    rel = relevant(mar, threshold).reset_index(drop=True)
    users, codes = np.unique(rel["user"].to_numpy(np.int64), return_inverse=True)
    z = positions(scores, rel, None, None)
    n_items = scores.shape[1]
    return [(-1 if k is None else k, mean_ndcg(codes, len(users), z, n_items if k is None else k))
            for k in ks]
