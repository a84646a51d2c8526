"""Numba when it is installed, else a stand-in that runs the same Python code, uncompiled.

Every compiled loop of the package imports ``numba`` from here (``from .._jit import
numba``), never Numba itself, so the package imports and computes without Numba (the core
install, the browser edition): ``numba.njit`` then returns the function unchanged, and its
body runs as plain Python on the same arrays, giving the same numbers
(``tests/test_jit.py`` checks every kernel both ways), only slower. A caller that has a
vectorised NumPy path of its own asks :data:`HAVE_NUMBA` first. ``RECBIAS_NUMBA=0`` (read
at import) makes the package behave as if Numba were absent.

Examples
--------
>>> from recbias_tutorial._jit import numba
>>> @numba.njit(boundscheck=False)
... def add(a, b):
...     return a + b
>>> add(1, 2)
3
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import SimpleNamespace

from ._optional import available

#: True when the loops are compiled (Numba installed and not switched off).
HAVE_NUMBA = available("numba") and os.environ.get("RECBIAS_NUMBA", "").strip() != "0"


def _python_njit(*args, **options) -> Callable:
    """``njit`` without Numba: ``@njit`` and ``@njit(**options)`` return the function itself."""
    if len(args) == 1 and callable(args[0]) and not options:
        return args[0]
    return lambda function: function


if HAVE_NUMBA:
    import numba
else:
    #: the parts of Numba the kernels use, as plain Python
    numba = SimpleNamespace(njit=_python_njit, jit=_python_njit, prange=range)

njit = numba.njit
