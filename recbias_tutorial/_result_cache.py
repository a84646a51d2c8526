"""On-disk cache of whole results (small tables) of long protocols, beside the fitted scores.

A replication's result is a pure function of its data, its arguments and the package's code,
so a second run of a chapter (or of the book build) reads it back instead of recomputing
minutes of fits and evaluations. The store is one file per
result in ``<fit cache>/results`` (see :func:`recbias_tutorial.models.fit_cache_dir`); it follows the
same switch (``RECBIAS_FIT_CACHE=0`` or ``cache=False`` turn it off) and is emptied with it
(``make clean-cache``, :func:`recbias_tutorial.models.clear_fit_cache`), and is trimmed to
``$RECBIAS_RESULT_CACHE_LIMIT_MB`` (default 1,000 MB), least recently used first.

**Key.** The sha256 of the data's frames (every frame of the :class:`FeedbackData`, in row
order, and its id-space sizes), the function's name, its validated arguments, the versions of
the package, pandas, NumPy and Cornac, and a fingerprint of the whole package's source: any
edit of the code computes afresh. This module owns the keys: callers pass the data (a
:class:`FeedbackData`, frames, arrays: :func:`data_key`) and their unfitted models
(``models=``, keyed by their class and pre-fit state) to :func:`cached_result` or
:func:`cached_table`, never key parts of their own; :func:`cache_enabled` is the switch.

**Integrity.** Each entry (one ``joblib.dump`` file) is written whole or not at all (a
temporary file in the same folder, fsync, then ``os.replace``); it holds its key, a hash of
its table (values, index, columns, ``attrs``), checked on every hit, and the table as pickle
bytes (read back by Python's C unpickler: joblib's own reads text columns 20 times slower).
An unreadable or mismatching entry is recomputed and replaced with a
:class:`FitCacheWarning`, never used.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import os
import pickle
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._optional import available
from .models._cache import (FitCacheWarning, _array_sha, data_digest, fit_cache_dir,
                            fit_cache_enabled, model_tokens)


@functools.lru_cache(maxsize=1)
def _environment() -> str:
    """Versions and a fingerprint of every source file of the package."""
    from . import __version__

    try:  # Cornac's version without importing it (a chapter without models never loads it)
        cornac = importlib.metadata.version("cornac")
    except importlib.metadata.PackageNotFoundError:
        cornac = "no cornac"
    h = hashlib.sha256("|".join([__version__, pd.__version__, np.__version__, cornac]).encode())
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


def data_key(data: Any, shape: tuple[int, int] = (0, 0)) -> str | None:
    """The key of the data a result is computed from, or None if it has none.

    Parameters
    ----------
    data : FeedbackData, DataFrame, mapping, None, str or list of them
        A :class:`~recbias_tutorial.data.FeedbackData` (every frame, its true propensity if
        any, its sizes and threshold); a feedback frame (``user``, ``item``, ``rating`` in
        row order); a mapping of label -> frame (``'label'=<digest>;...``) or of name ->
        numeric array (dtype, shape and sha256 of each); ``None`` (``"-"``); a ready key
        string (as it is); or a list or tuple of these (joined by ``|``).
    shape : (int, int), default (0, 0)
        ``(n_users, n_items)`` written into the key of each frame.

    Returns
    -------
    str or None
        None if a part has no faithful key (a frame without the three columns, a mapping
        that mixes frames and arrays, anything else): such a result is computed, not stored.

    Raises
    ------
    AttributeError
        If ``data`` is none of the above and not a FeedbackData either (as before: every
        caller checks its data first).

    Examples
    --------
    >>> frame = pd.DataFrame({"user": [0, 1], "item": [1, 0], "rating": [5.0, 1.0]})
    >>> data_key([{"test": frame}, None], shape=(2, 2)).startswith("'test'=")
    True
    >>> data_key({"scores": np.zeros((2, 2))})[:17]  # then the sha256 of the bytes
    'scores=<f8(2, 2):'
    >>> data_key({"test": frame, "scores": np.zeros(2)}) is None  # mixed: no key
    True
    """
    n_users, n_items = shape
    if data is None:
        return "-"
    if isinstance(data, str):
        return data
    if isinstance(data, (list, tuple)):
        parts = [data_key(part, shape) for part in data]
        return None if None in parts else "|".join(parts)
    try:
        if isinstance(data, pd.DataFrame):
            return data_digest(data, n_users, n_items)
        if isinstance(data, Mapping):
            values = list(data.values())
            if all(isinstance(v, pd.DataFrame) for v in values):
                return ";".join(f"{label!r}={data_digest(f, n_users, n_items)}"
                                for label, f in data.items())
            if all(isinstance(v, np.ndarray) and v.dtype.kind in "biuf" for v in values):
                return arrays_key(data)
            return None
    except (KeyError, TypeError, ValueError):  # a frame without user / item / rating
        return None
    return _data_key(data)


def cache_enabled(cache: bool | None = None) -> bool:
    """Whether results are cached: ``cache`` if given, else ``$RECBIAS_FIT_CACHE``.

    The one switch of the result cache and of the fit cache (the same as
    :func:`cached_result`'s ``cache=``): resolve it once in the parent process where worker
    processes must see the same answer.

    Parameters
    ----------
    cache : bool or None, default None
        True or False decide; None reads ``RECBIAS_FIT_CACHE`` (``0`` / ``false`` / ``off``
        / ``no``: off; anything else: on), else the default (on).

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        If ``cache`` is not True, False or None.

    Examples
    --------
    >>> cache_enabled(False), cache_enabled(True)
    (False, True)
    """
    return fit_cache_enabled(cache)


def _table_hash(table: pd.DataFrame) -> str:
    h = hashlib.sha256(pd.util.hash_pandas_object(table, index=True).to_numpy().tobytes())
    h.update(repr((list(table.columns), list(table.dtypes.astype(str)), table.attrs)).encode())
    return h.hexdigest()


def _payload_hash(payload: dict) -> str:
    """One hash over named tables and numeric arrays (what an entry may hold)."""
    h = hashlib.sha256()
    for name in sorted(payload):
        value = payload[name]
        part = _table_hash(value) if isinstance(value, pd.DataFrame) else _array_key(value)
        h.update(f"{name}={part};".encode())
    return h.hexdigest()


def _storable(payload: Any) -> bool:
    return isinstance(payload, dict) and all(
        isinstance(v, pd.DataFrame) or (isinstance(v, np.ndarray) and v.dtype.kind in "biuf")
        for v in payload.values())


def argument_key(value: Any) -> str | None:
    """A faithful text key of an argument value, or None if it has none.

    Numbers, strings, None and (nested) tuples, lists and dicts of them are written out
    with ``repr`` (never truncated); numeric arrays by dtype, shape and sha256. Anything else
    (a Generator, a model object, an array of objects) has no stable key.
    """
    if value is None or isinstance(value, (bool, int, float, str, np.integer, np.floating)):
        return repr(value.item() if isinstance(value, np.generic) else value)
    if isinstance(value, (tuple, list)):
        parts = [argument_key(v) for v in value]
        return None if None in parts else f"{type(value).__name__}({','.join(parts)})"
    if isinstance(value, dict):
        parts = [(argument_key(k), argument_key(v)) for k, v in value.items()]
        if any(None in pair for pair in parts):
            return None
        return "dict(" + ",".join(sorted(f"{k}:{v}" for k, v in parts)) + ")"
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return "array:" + _array_key(value)
    return None


def _load(path: Path, key: str) -> dict | None:
    """The stored payload, or None if absent; raises ValueError if unreadable or mismatching."""
    import joblib

    if not path.exists():
        return None
    try:
        entry = joblib.load(path)
        payload = _decoded(entry.get("payload")) if isinstance(entry, dict) else None
    except FileNotFoundError:  # trimmed by another process meanwhile: a miss
        return None
    except Exception as err:  # truncated, garbage, an unpicklable class: never trusted
        raise ValueError(f"unreadable ({type(err).__name__})") from None
    if not (isinstance(entry, dict) and entry.get("key") == key and _storable(payload)
            and entry.get("hash") == _payload_hash(payload)):
        raise ValueError("key or hash mismatch")
    return payload


def _encoded(payload: dict) -> dict:
    """Tables as pickle bytes: joblib's own unpickler is pure Python, and reading back a table
    of 4 x 10^5 rows of text took it a second (the C unpickler: 0.06 s); arrays as they are."""
    return {name: pickle.dumps(v, protocol=5) if isinstance(v, pd.DataFrame) else v
            for name, v in payload.items()}


def _decoded(stored: Any) -> Any:
    if not isinstance(stored, dict):
        return stored
    return {name: pickle.loads(v) if isinstance(v, bytes) else v for name, v in stored.items()}


def _store(path: Path, key: str, payload: dict) -> None:
    """Written whole or not at all: a temporary file in the same folder, then a rename."""
    import joblib

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            joblib.dump({"key": key, "hash": _payload_hash(payload),
                         "payload": _encoded(payload)}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def cached_result(function: str, data: Any, arguments: dict | None,
                  compute: Callable[[], dict], *, cache: bool | None, models: Any = None,
                  shape: tuple[int, int] = (0, 0)) -> tuple[dict, bool]:
    """``(compute(), False)``, or ``(its stored result, True)`` for the same key.

    ``compute`` returns a dict of DataFrames and numeric arrays. ``data`` is what the result
    is computed from, keyed by :func:`data_key` (with ``shape``): a :class:`FeedbackData`,
    frames, arrays or a ready key string. ``models`` (a mapping name -> unfitted model)
    joins the arguments as ``models``, each keyed by its class and pre-fit state (the fit
    cache's ``model_token``). ``arguments=None``, an argument without a faithful key
    (:func:`argument_key`), data without a key, or a model its parameters do not describe,
    means the call is computed and never stored.
    """
    keys = None if arguments is None else {name: argument_key(v) for name, v in arguments.items()}
    if models is not None and arguments is not None and "models" in arguments:
        raise ValueError(f"{function}: pass the models as models=, not as an argument too")
    if not available("joblib"):  # the store is joblib's (extra `models`); without it, computed
        return compute(), False
    if not fit_cache_enabled(cache) or keys is None or None in keys.values():
        return compute(), False
    if models is not None:  # before compute(): fitting changes a model's state
        tokens = model_tokens(models)
        if tokens is None:
            return compute(), False
        keys["models"] = argument_key(tokens)
    data_part = data_key(data, shape)
    if data_part is None:
        return compute(), False
    key = hashlib.sha256("|".join([function, data_part, repr(sorted(keys.items())),
                                   _environment()]).encode()).hexdigest()
    path = fit_cache_dir() / "results" / f"{function}-{key[:32]}.joblib"
    try:
        payload = _load(path, key)
    except ValueError as why:
        warnings.warn(f"result-cache entry {path.name} was {why}: recomputed and replaced",
                      FitCacheWarning, stacklevel=3)
        payload = None
    if payload is not None:
        with contextlib.suppress(OSError):
            os.utime(path)  # last use: trimming removes the least recently used first
        return payload, True
    payload = compute()
    if not _storable(payload):
        raise TypeError(f"{function}: a cached result must be a dict of tables and numeric arrays")
    try:
        _store(path, key, payload)
        trim(path.parent)
    except OSError as err:  # an unwritable cache folder: the result is still good
        warnings.warn(f"result cache unusable ({err}); not stored", FitCacheWarning, stacklevel=3)
    return payload, False


def trim(folder: Path) -> None:
    """Keep the result store within ``$RECBIAS_RESULT_CACHE_LIMIT_MB`` (default 1,000 MB):
    remove the least recently used entries first. Every edit of the package's code leaves
    its old entries behind (they are keyed by the code), so without a limit it only grows."""
    from .models._cache import _megabytes

    limit = _megabytes("RECBIAS_RESULT_CACHE_LIMIT_MB", 1000.0) * 2**20
    entries = []
    for entry in os.scandir(folder):
        if entry.name.endswith(".joblib") and entry.is_file():
            stat = entry.stat()
            entries.append((stat.st_mtime, stat.st_size, entry.path))
    total = sum(size for _, size, _ in entries)
    for _, size, name in sorted(entries):
        if total <= limit:
            break
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)
        total -= size


def cached_table(function: str, data: Any, arguments: dict | None,
                 compute: Callable[[], pd.DataFrame], *, cache: bool | None, models: Any = None,
                 shape: tuple[int, int] = (0, 0)) -> pd.DataFrame:
    """``compute()``, or its stored result for the same data, arguments, models and code.

    ``data``, ``models`` and ``shape`` are keyed as by :func:`cached_result`.
    ``arguments=None`` means the call has no stable key (e.g. a Generator's state): it is
    computed, never stored. ``attrs["cached"]`` of the returned table says whether it was
    read back (the stored table keeps the ``attrs`` of the run that computed it, e.g. its
    wall times).
    """
    def job() -> dict:
        table = compute()
        table.attrs.pop("cached", None)
        return {"table": table}

    payload, cached = cached_result(function, data, arguments, job, cache=cache, models=models,
                                    shape=shape)
    table = payload["table"]
    table.attrs["cached"] = cached
    return table
