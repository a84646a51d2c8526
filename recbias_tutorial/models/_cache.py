"""On-disk cache of fitted score matrices, so that re-running a chapter does not refit.

:func:`fit_scores`, :func:`iter_scores` and :func:`score_models` look a model's dense score
matrix up here before fitting it, and store it after. The store is a
:class:`joblib.Memory` in ``$RECBIAS_FIT_CACHE_DIR``, else ``<user cache>/fitted`` (the user
cache is ``$RECBIAS_CACHE``, else ``pooch.os_cache("recbias_tutorial")``, the same folder the
datasets are downloaded to). ``make clean-cache`` or :func:`clear_fit_cache` empties it.

**Key.** One entry per (training data, model, seed, dtype, code): the sha256 of the training
data exactly as passed (user, item and rating arrays in row order, ``n_users``, ``n_items``),
the model's class and complete pre-fit state (see :func:`model_token`), the dataset seed, the
dtype, and the versions of the package, Cornac and NumPy plus a fingerprint of this
subpackage's source, so that an edit of the fitting or scoring code never serves old scores.

**Integrity.** joblib writes every file to a temporary name and renames it into place, so an
entry written by a killed process is either absent or whole. Each entry also stores the
sha256 of its score matrix, its key, dtype and shape; on every hit they are checked. An entry
that cannot be read (garbage, truncated) or does not match is refitted and overwritten, with
a :class:`FitCacheWarning`; it is never used.

**What is not cached.** Models whose pre-fit state does not follow from their constructor
parameters (an already fitted model, a model changed after construction, attributes stored
under other names), models with ``seed=None`` (a fresh fit would differ), score matrices
larger than ``$RECBIAS_FIT_CACHE_MAX_MB`` unless ``cache=True`` is passed explicitly
(default 64 MB: a Coat or MovieLens-100K matrix,
not a 123 MB Yahoo! R3 one), and anything when ``RECBIAS_FIT_CACHE=0`` or ``cache=False``.
The whole store is trimmed to ``$RECBIAS_FIT_CACHE_LIMIT_MB`` (default 2,000 MB), least
recently used first.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import inspect
import io
import os
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["FitCacheWarning", "cached_scores", "clear_fit_cache", "data_digest",
           "fit_cache_dir", "fit_cache_enabled", "model_token", "model_tokens"]

_FORMAT = 1  # bump when the layout of an entry changes
#: Whether the cache is on when neither ``cache=`` nor ``RECBIAS_FIT_CACHE`` says; the test
#: suite sets it False in-process, so that servers it starts (JupyterLab) keep the default.
ENABLED_BY_DEFAULT = True
_TRIM_EVERY = 100  # stores between two trims of the whole store to its size limit
_stores = 0


class FitCacheWarning(UserWarning):
    """A fit-cache entry was unreadable or did not match its key, and was refitted."""


# --------------------------------------------------------------------------------------
# settings
# --------------------------------------------------------------------------------------
def fit_cache_dir() -> Path:
    """``$RECBIAS_FIT_CACHE_DIR``, else ``<user cache>/fitted``."""
    value = os.environ.get("RECBIAS_FIT_CACHE_DIR", "").strip()
    if value:
        return Path(value).expanduser()
    from ..data._files import cache_root  # the datasets' user cache

    return cache_root() / "fitted"


def fit_cache_enabled(cache: bool | None = None) -> bool:
    """``cache`` if given, else ``RECBIAS_FIT_CACHE`` (``0`` / ``false`` / ``off`` / ``no``:
    off; anything else: on) if set, else :data:`ENABLED_BY_DEFAULT`."""
    if cache is not None:
        if not isinstance(cache, (bool, np.bool_)):
            raise ValueError(f"cache must be True, False or None, got {cache!r}")
        return bool(cache)
    value = os.environ.get("RECBIAS_FIT_CACHE", "").strip().lower()
    if not value:
        return ENABLED_BY_DEFAULT
    return value not in {"0", "false", "off", "no"}


def _megabytes(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    try:
        return float(value) if value else default
    except ValueError:
        raise ValueError(f"{name} must be a number of megabytes, got {value!r}") from None


def clear_fit_cache() -> Path:
    """Delete every cached score matrix (what ``make clean-cache`` runs).

    Returns
    -------
    pathlib.Path
        The folder that was removed (``fit_cache_dir()``); it need not have existed.

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["RECBIAS_FIT_CACHE_DIR"] = tempfile.mkdtemp()
    >>> clear_fit_cache().exists()
    False
    >>> del os.environ["RECBIAS_FIT_CACHE_DIR"]
    """
    folder = fit_cache_dir()
    shutil.rmtree(folder, ignore_errors=True)
    return folder


# --------------------------------------------------------------------------------------
# key
# --------------------------------------------------------------------------------------
def data_digest(train: pd.DataFrame, n_users: int, n_items: int) -> str:
    """sha256 of the training data as Cornac receives it (row order matters to Cornac)."""
    h = hashlib.sha256(f"{int(n_users)}x{int(n_items)};{len(train)}".encode())
    for column, dtype in (("user", np.int64), ("item", np.int64), ("rating", np.float64)):
        h.update(np.ascontiguousarray(train[column].to_numpy(dtype=dtype)).tobytes())
    return h.hexdigest()


def _state_hash(model: Any) -> str:
    import joblib

    return joblib.hash((type(model).__module__, type(model).__qualname__, vars(model)))


def model_token(model: Any) -> str | None:
    """A hash of the model's class and pre-fit state, or None if it must not be cached.

    The constructor parameters are read back from the attributes of the same names
    (``inspect.signature``, as Cornac's own ``Recommender.clone`` does) and a fresh model is
    built from them; only if its whole state (``vars``) hashes equal to the model's is the
    model fully described by them, and fresh. Models with ``seed=None`` (or
    ``random_state=None``) are not cached: a fresh fit would differ.
    """
    cls = type(model)
    try:
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    params = {}
    for p in parameters:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or not hasattr(model, p.name):
            return None
        params[p.name] = getattr(model, p.name)
    if any(name in params and params[name] is None for name in ("seed", "random_state")):
        return None
    try:
        state = _state_hash(model)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            fresh = cls(**copy.deepcopy(params))
        return state if _state_hash(fresh) == state else None
    except Exception:  # unpicklable state, a constructor that rejects its own values, ...
        return None


def model_tokens(models: Any) -> dict | None:
    """``{name: model_token(model)}``, or None if some model cannot be keyed (then a result
    computed from these models must not be cached at all)."""
    tokens = {name: model_token(model) for name, model in models.items()}
    return None if None in tokens.values() else tokens


@functools.lru_cache(maxsize=1)
def _environment() -> tuple[str, ...]:
    """Versions and a fingerprint of this subpackage's source (edits invalidate entries)."""
    import cornac

    from .. import __version__

    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return (str(_FORMAT), __version__, cornac.__version__, np.__version__, h.hexdigest())


def entry_key(token: str, digest: str, seed: int, dtype: np.dtype) -> str:
    """The cache key of one fit: model token, data digest, seed, dtype and environment."""
    parts = "|".join([token, digest, str(int(seed)), np.dtype(dtype).str, *_environment()])
    return hashlib.sha256(parts.encode()).hexdigest()


# --------------------------------------------------------------------------------------
# store
# --------------------------------------------------------------------------------------
def _entry(key: str, job: Callable[[], np.ndarray]) -> dict:
    """What joblib stores (``job`` is not part of joblib's key: ``key`` is the whole key)."""
    scores = job()
    return {"key": key, "sha256": _array_sha(scores), "dtype": scores.dtype.str,
            "shape": scores.shape, "scores": scores}


def _array_sha(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).data).hexdigest()


@functools.lru_cache(maxsize=8)
def _memorized(location: str):
    """``(joblib.Memory, the memorized _entry)`` in ``location``."""
    import joblib

    memory = joblib.Memory(location, verbose=0)
    return memory, memory.cache(_entry, ignore=["job"])


def _valid(entry: Any, key: str, dtype: np.dtype, shape: tuple[int, int]) -> bool:
    if not isinstance(entry, dict) or entry.get("key") != key:
        return False
    scores = entry.get("scores")
    return (isinstance(scores, np.ndarray) and scores.dtype == dtype and scores.shape == shape
            and entry.get("dtype") == dtype.str and tuple(entry.get("shape", ())) == shape
            and entry.get("sha256") == _array_sha(scores))


def _trim(memory) -> None:
    """After the first store of a process and every ``_TRIM_EVERY``-th: least recent go first."""
    global _stores
    _stores += 1
    if _stores % _TRIM_EVERY == 1:
        limit = int(_megabytes("RECBIAS_FIT_CACHE_LIMIT_MB", 2000.0) * 2**20)
        with contextlib.suppress(OSError):
            memory.reduce_size(bytes_limit=limit)


def cached_scores(model: Any, compute: Callable[[], np.ndarray], *, digest: str, seed: int,
                  shape: tuple[int, int], dtype: np.dtype, cache: bool | None,
                  any_size: bool = False) -> np.ndarray:
    """``compute()`` (fit + score ``model``), or its stored result for the same key.

    Falls back to ``compute()`` without storing when the cache is off, the matrix is larger
    than ``$RECBIAS_FIT_CACHE_MAX_MB`` (unless ``any_size``: the user passed ``cache=True``)
    or the model cannot be keyed (:func:`model_token`).
    An unreadable or mismatching entry is refitted with a :class:`FitCacheWarning`.
    """
    dtype = np.dtype(dtype)
    too_big = (not any_size  # the caller's explicit cache=True: stored whatever its size
               and shape[0] * shape[1] * dtype.itemsize
               > _megabytes("RECBIAS_FIT_CACHE_MAX_MB", 64.0) * 2**20)
    if not fit_cache_enabled(cache) or too_big:
        return compute()
    token = model_token(model)  # before the fit: the fit changes the state
    if token is None:
        return compute()
    key = entry_key(token, digest, seed, dtype)
    result: list[np.ndarray] = []

    def job() -> np.ndarray:
        result.append(compute())
        return result[-1]

    try:
        memory, memorized = _memorized(str(fit_cache_dir()))
        was_stored = memorized.check_call_in_cache(key, job)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            entry = memorized(key, job)
    except OSError as err:  # an unwritable cache folder: fit without it
        warnings.warn(f"fit cache unusable ({err}); fitting without it", FitCacheWarning,
                      stacklevel=3)
        return result[-1] if result else compute()
    for w in caught:  # joblib's own note on an unreadable entry becomes ours, below
        if "Exception while loading results" not in str(w.message):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if was_stored and result:
        warnings.warn(f"unreadable fit-cache entry for {model.name!r} (key {key[:12]}) was "
                      "refitted and replaced", FitCacheWarning, stacklevel=3)
    if not _valid(entry, key, dtype, shape):
        if result:  # just computed: the store is what failed, the scores are good
            return result[-1]
        warnings.warn(f"corrupt fit-cache entry for {model.name!r} (key {key[:12]}: checksum, "
                      "key, dtype or shape mismatch) was refitted and replaced",
                      FitCacheWarning, stacklevel=3)
        out = memorized.call(key, job)
        entry = out[0] if isinstance(out, tuple) else out
        return result[-1]
    if result:
        _trim(memory)
    return entry["scores"]
