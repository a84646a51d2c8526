"""Compiled loops of :mod:`._ranking` (Numba), for what NumPy can only do with temporaries."""

from __future__ import annotations

from ._jit import numba  # Numba, or the same code run as Python without it


@numba.njit(cache=True, nogil=True, boundscheck=False)
def exact_positions_into(m, local, s, items, out):  # pragma: no cover (compiled)
    """``out[r]`` = #entries of row ``m[local[r]]`` scored above ``s[r]``, plus #tied ones
    in a column before ``items[r]``: one pass over the row, no temporary (nogil: the
    threads of ``map_chunks`` run it at once)."""
    for r in range(s.shape[0]):
        row = m[local[r]]
        sv = s[r]
        item = items[r]
        count = 0
        for j in range(row.shape[0]):
            v = row[j]
            if v > sv or (v == sv and j < item):
                count += 1
        out[r] = count
