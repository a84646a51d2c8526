"""On-disk cache of whole results (small tables) of long protocols, beside the fitted scores.

A replication's result is a pure function of its data, its arguments and the package's code,
so a second run of a chapter (or of the book build) reads it back instead of recomputing
minutes of fits and evaluations. The store is one file per
result in ``<fit cache>/results`` (see :func:`recbias_tutorial.models.fit_cache_dir`); it follows the
same switch (``RECBIAS_FIT_CACHE=0`` or ``cache=False`` turn it off) and is emptied with it
(``make clean-cache``, :func:`recbias_tutorial.models.clear_fit_cache`).

**Key.** The sha256 of the data's frames (every frame of the :class:`FeedbackData`, in row
order, and its id-space sizes), the function's name, its validated arguments, the versions of
the package, pandas, NumPy and Cornac, and a fingerprint of the whole package's source: any
edit of the code computes afresh.

**Integrity.** Each entry (one ``joblib.dump`` file) is written whole or not at all (a
temporary file in the same folder, fsync, then ``os.replace``); it holds its key and a hash of
its table (values, index, columns, ``attrs``), checked on every hit. An unreadable or
mismatching entry is recomputed and replaced with a :class:`FitCacheWarning`, never used.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .models._cache import (FitCacheWarning, _array_sha, data_digest, fit_cache_dir,
                            fit_cache_enabled)


@functools.lru_cache(maxsize=1)
def _environment() -> str:
    """Versions and a fingerprint of every source file of the package."""
    import cornac

    from . import __version__

    h = hashlib.sha256("|".join([__version__, pd.__version__, np.__version__,
                                 cornac.__version__]).encode())
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _array_key(value: Any) -> str:
    a = np.asarray(value)
    return f"{a.dtype.str}{a.shape}:" + _array_sha(a)


def _data_key(data: Any) -> str:
    """The data's frames, arrays (e.g. a world's true propensity) and id-space sizes."""
    parts = [f"{data.n_users}x{data.n_items};{data.threshold!r}"]
    for name in ("mnar", "mar", "full"):
        frame = getattr(data, name, None)
        parts.append(name + ":" + ("-" if frame is None else
                                   data_digest(frame, data.n_users, data.n_items)))
    propensity = getattr(data, "propensity", None)
    parts.append("propensity:" + ("-" if propensity is None else _array_key(propensity)))
    return "|".join(parts)


def arrays_key(arrays: Any) -> str:
    """A key for a mapping of name -> array (e.g. score matrices), in its order."""
    return ";".join(f"{name}={_array_key(a)}" for name, a in arrays.items())


def _table_hash(table: pd.DataFrame) -> str:
    h = hashlib.sha256(pd.util.hash_pandas_object(table, index=True).to_numpy().tobytes())
    h.update(repr((list(table.columns), list(table.dtypes.astype(str)), table.attrs)).encode())
    return h.hexdigest()


def _load(path: Path, key: str) -> pd.DataFrame | None:
    """The stored table, or None if absent; raises ValueError if unreadable or mismatching."""
    import joblib

    if not path.exists():
        return None
    try:
        entry = joblib.load(path)
    except Exception as err:  # truncated, garbage, an unpicklable class: never trusted
        raise ValueError(f"unreadable ({type(err).__name__})") from None
    if not (isinstance(entry, dict) and entry.get("key") == key
            and isinstance(entry.get("table"), pd.DataFrame)
            and entry.get("hash") == _table_hash(entry["table"])):
        raise ValueError("key or hash mismatch")
    return entry["table"]


def _store(path: Path, key: str, table: pd.DataFrame) -> None:
    """Written whole or not at all: a temporary file in the same folder, then a rename."""
    import joblib

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            joblib.dump({"key": key, "hash": _table_hash(table), "table": table}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def cached_table(function: str, data: Any, arguments: dict | None,
                 compute: Callable[[], pd.DataFrame], *, cache: bool | None) -> pd.DataFrame:
    """``compute()``, or its stored result for the same data, arguments and code.

    ``arguments=None`` means the call has no stable key (e.g. a Generator's state): it is
    computed, never stored. ``attrs["cached"]`` of the returned table says whether it was
    read back (the stored table keeps the ``attrs`` of the run that computed it, e.g. its
    wall times).
    """
    if not fit_cache_enabled(cache) or arguments is None:
        table = compute()
        table.attrs["cached"] = False
        return table
    key = hashlib.sha256("|".join([function, _data_key(data), repr(sorted(arguments.items())),
                                   _environment()]).encode()).hexdigest()
    path = fit_cache_dir() / "results" / f"{function}-{key[:32]}.joblib"
    try:
        table = _load(path, key)
    except ValueError as why:
        warnings.warn(f"result-cache entry {path.name} was {why}: recomputed and replaced",
                      FitCacheWarning, stacklevel=3)
        table = None
    if table is not None:
        table.attrs["cached"] = True
        return table
    table = compute()
    table.attrs.pop("cached", None)
    try:
        _store(path, key, table)
    except OSError as err:  # an unwritable cache folder: the result is still good
        warnings.warn(f"result cache unusable ({err}); not stored", FitCacheWarning, stacklevel=3)
    table.attrs["cached"] = False
    return table
