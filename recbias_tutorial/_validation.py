"""Boundary checks shared by every public function: one copy of each.

Each check raises :class:`ValueError` whose message names the argument and what is wrong.
Public functions validate their inputs once, here, and pass validated values to private
kernels that do not check again.
"""

from __future__ import annotations

import keyword
import numbers
import os
from collections.abc import Hashable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

FEEDBACK_COLUMNS = ("user", "item", "rating")
_MAX_ID = np.iinfo(np.int64).max  # "no upper bound" for ids of frames checked without a matrix
#: Largest id accepted when no id space is given: ids are contiguous 0..n-1 (``FeedbackData``), and
#: kernels allocate arrays of length max id + 1, so a stray huge id must not reach them.
MAX_IMPLICIT_ID = 100_000_000


# --------------------------------------------------------------------------------------
# numbers and choices
# --------------------------------------------------------------------------------------
def check_int(value: Any, name: str, low: int | None = 1, high: int | None = None) -> int:
    """An integer (not a bool) in ``[low, high]`` (either bound may be None)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        if high is None:
            bound = f">= {low}"
        elif low is None:
            bound = f"<= {high}"
        else:
            bound = f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return int(value)


def check_real(value: Any, name: str, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False) -> float:
    """A finite real number (not a bool) in the interval given by the bounds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        lo = "(-inf" if low is None else ("(" if low_open else "[") + f"{low}"
        hi = "inf)" if high is None else f"{high}" + (")" if high_open else "]")
        raise ValueError(f"{name} must be in {lo}, {hi}, got {value}")
    return float(value)


def check_choice(value: Any, name: str, choices: Iterable[Any]) -> Any:
    """One of ``choices``."""
    choices = tuple(choices)
    if not isinstance(value, str | int) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_identifier(value: Any, name: str) -> str:
    """A Python identifier that is not a keyword (prose and conditions can then name it)."""
    if not isinstance(value, str) or not value.isidentifier() or keyword.iskeyword(value):
        why = " (a Python keyword)" if isinstance(value, str) and keyword.iskeyword(value) else ""
        raise ValueError(f"{name} must be a Python identifier that is not a keyword, got "
                         f"{value!r}{why}")
    return value


def check_cutoffs(ks: Any, n_items: int, name: str) -> np.ndarray:
    """A non-empty 1-D int64 array of cut-offs in ``1..n_items``."""
    arr = np.atleast_1d(np.asarray(ks))
    flags = arr.dtype == bool or (arr.dtype == object) or any(
        isinstance(v, (bool, np.bool_)) for v in (ks if isinstance(ks, (list, tuple)) else ()))
    if flags or arr.ndim != 1 or len(arr) == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be a non-empty list of integers, got {ks!r}")
    if arr.min() < 1 or arr.max() > n_items:
        raise ValueError(f"{name} must lie in 1..{n_items} (the catalogue size), got {arr.tolist()}")
    if len(np.unique(arr)) != len(arr):  # each cut-off is a column: two would be one twice
        raise ValueError(f"{name} has repeated cut-offs, got {arr.tolist()}")
    return arr.astype(np.int64)


def check_k(k: Any, n_items: int, name: str = "k") -> int:
    """A cut-off in ``1..n_items``."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {k!r}")
    if k < 1 or k > n_items:
        raise ValueError(f"{name} must be in 1..{n_items} (the catalogue size), got {k}")
    return int(k)


def check_fractions(fractions: Any, name: str, n_parts: int | None = None) -> np.ndarray:
    """Shares of a split: ``n_parts`` (or >= 2) positive finite numbers summing to 1."""
    try:
        fr = np.asarray(fractions, dtype=float)
    except (TypeError, ValueError):
        fr = np.empty(0)
    parts = f"{n_parts}" if n_parts else ">= 2"
    if fr.ndim != 1 or len(fr) < 2 or (n_parts and len(fr) != n_parts) \
            or not np.isfinite(fr).all() or (fr <= 0).any() or not np.isclose(fr.sum(), 1.0):
        raise ValueError(f"{name} must be {parts} positive numbers summing to 1, got {fractions!r}")
    return fr


def as_real_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float array; text, objects, booleans and complex numbers are refused."""
    if isinstance(value, (Mapping, str, bytes)):
        raise ValueError(f"{name} must be a number or an array of numbers, got "
                         f"{type(value).__name__}")
    raw = np.asarray(value)
    if raw.dtype == object:
        try:
            raw = raw.astype(float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold numbers, got {value!r:.60}") from None
    if raw.dtype == bool or not (np.issubdtype(raw.dtype, np.integer)
                                 or np.issubdtype(raw.dtype, np.floating)):
        raise ValueError(f"{name} must hold real numbers, got dtype {raw.dtype}")
    return raw.astype(float)


def check_column_name(value: Any, name: str) -> Any:
    """A column label: a string or another hashable scalar (not a list, frame or mapping)."""
    if isinstance(value, (list, tuple, set, dict, np.ndarray, pd.DataFrame, pd.Series)) \
            or not isinstance(value, Hashable):
        raise ValueError(f"{name} must be one column name, got {type(value).__name__}")
    return value


def check_frame(frame: Any, name: str, columns: Iterable[str]) -> pd.DataFrame:
    """A DataFrame with the given columns (used for tidy result frames)."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} is missing column(s) {missing}")
    return frame


def check_unique_rows(frame: pd.DataFrame, name: str, keys: list[str]) -> pd.DataFrame:
    """A tidy frame with one row per combination of ``keys`` (it is about to be pivoted)."""
    dup = frame.duplicated(keys, keep=False)
    if dup.any():
        first = tuple(frame.loc[dup, keys].iloc[0])
        raise ValueError(f"{name} has {int(dup.sum())} rows that repeat a ({', '.join(keys)}) "
                         f"combination, e.g. {first}: one value each is expected")
    return frame


def check_mapping(value: Any, name: str, what: str) -> Mapping:
    """A non-empty mapping (``what`` describes its values for the message)."""
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"{name} must be a non-empty mapping name -> {what}, "
                         f"got {type(value).__name__}")
    return value


def check_finite_column(frame: pd.DataFrame, name: str, column: str) -> np.ndarray:
    """The column ``column`` of a tidy result frame as finite floats (NaN, inf, text refused)."""
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any() or frame[column].dtype == bool:
        example = frame[column].to_numpy()[bad][0] if bad.any() else True
        raise ValueError(f"{name}.{column} has {int(bad.sum()) or len(values)} NaN, infinite or "
                         f"non-numeric values (e.g. {example!r:.40}): a missing value must be "
                         "left out, not counted")
    return values


# --------------------------------------------------------------------------------------
# randomness
# --------------------------------------------------------------------------------------
def check_seed(seed: Any, name: str = "seed") -> int | np.random.Generator:
    """A non-negative int or a :class:`numpy.random.Generator`; ``None`` is refused."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        raise ValueError(f"{name} must be given (a non-negative int or a numpy Generator) "
                         "so that results are reproducible")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{name} must be a non-negative int or a numpy Generator, got {seed!r}")
    return int(seed)


def check_seeds(seeds: Any, name: str = "seeds") -> list[int]:
    """A non-empty sequence of distinct non-negative int seeds (each labels its own rows)."""
    if isinstance(seeds, (str, bytes, np.random.Generator)) or not isinstance(seeds, Iterable):
        raise ValueError(f"{name} must be a sequence of non-negative ints, got {seeds!r:.60}")
    out = []
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 0:
            raise ValueError(f"{name} must hold non-negative ints, got {s!r:.60}")
        out.append(int(s))
    if not out or len(set(out)) != len(out):
        raise ValueError(f"{name} must be a non-empty sequence of distinct ints, got {out!r:.80}")
    return out


def int_seed(seed: Any, name: str = "seed") -> int:
    """A seed that must be an int: code that combines it with other numbers (e.g. a
    ``[seed, draw]`` entropy pair or numpy's legacy ``RandomState``) cannot use a Generator."""
    seed = check_seed(seed, name)
    if isinstance(seed, np.random.Generator):
        raise ValueError(f"{name} must be a non-negative int here, not a Generator: it seeds "
                         "several streams (or numpy's legacy permutation) by its value")
    return seed


def as_generator(seed: Any, name: str = "seed") -> np.random.Generator:
    """A Generator from a validated seed (a Generator is used as is, not copied)."""
    seed = check_seed(seed, name)
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def seed_int(seed: Any, name: str = "seed") -> int:
    """An int seed for code that needs one (Cornac models): the int, or one drawn from a Generator."""
    seed = check_seed(seed, name)
    return int(seed.integers(2**31 - 1)) if isinstance(seed, np.random.Generator) else seed


# --------------------------------------------------------------------------------------
# scores, feedback, propensities
# --------------------------------------------------------------------------------------
def check_feedback(frame: Any, name: str, n_users: int = _MAX_ID, n_items: int = _MAX_ID, *,
                   require_rating: bool = True, allow_empty: bool = False,
                   unique: bool = True) -> pd.DataFrame:
    """A user/item(/rating) frame with integer ids inside the id spaces and no duplicate pairs."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame with columns user, item, rating, "
                         f"got {type(frame).__name__}")
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
        if len(ids) and ids.min() < 0:
            raise ValueError(f"{name}.{col} holds negative ids")
        if len(ids) and ids.max() >= n:
            raise ValueError(f"{name}.{col} has ids outside 0..{n - 1} (the id space of {n:,} "
                             f"{col}s, e.g. the score matrix's size)")
        if len(ids) and n == _MAX_ID and ids.max() >= MAX_IMPLICIT_ID:
            raise ValueError(f"{name}.{col} has id {ids.max()}: ids must be contiguous 0..n-1 "
                             f"(below {MAX_IMPLICIT_ID:,}); re-index them")
    if require_rating:
        try:
            ratings = frame["rating"].to_numpy(dtype=float)
        except (TypeError, ValueError):
            example = next((v for v in frame["rating"] if not _is_number(v)), None)
            raise ValueError(f"{name}.rating must hold numbers, got {example!r:.40} (dtype "
                             f"{frame['rating'].dtype})") from None
        if not np.isfinite(ratings).all():
            raise ValueError(f"{name}.rating has NaN or infinite values")
    if unique and len(frame) and has_duplicate_pairs(users, items):
        raise ValueError(f"{name} has duplicate (user, item) pairs")
    return frame


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def has_duplicate_pairs(users: np.ndarray, items: np.ndarray) -> bool:
    """Whether some (user, item) pair occurs twice (no int64 overflow, whatever the ids)."""
    users = np.asarray(users, dtype=np.int64)
    items = np.asarray(items, dtype=np.int64)
    if len(users) < 2:
        return False
    width = int(items.max()) + 1
    space = (int(users.max()) + 1) * width
    if space <= 8 * len(users) and users.min() >= 0 and items.min() >= 0:  # a dense id space: mark each key, O(n), one byte per key
        seen = np.zeros(space, dtype=bool)
        seen[users * np.int64(width) + items] = True
        return int(np.count_nonzero(seen)) != len(users)
    if int(users.max()) < np.iinfo(np.int64).max // width:  # the key u * width + i fits
        keys = users * np.int64(width) + items
        return len(np.unique(keys)) != len(keys)
    order = np.lexsort((items, users))  # ids too large for one key: compare sorted neighbours
    u, i = users[order], items[order]
    return bool(((u[1:] == u[:-1]) & (i[1:] == i[:-1])).any())


def check_sequence(value: Any, name: str, what: str = "values") -> tuple:
    """A sequence of ``what`` given as a list or tuple (not a string, a mapping, a frame or a
    lone scalar, which iteration would misread or refuse in its own words)."""
    if isinstance(value, (str, bytes, Mapping, pd.DataFrame)) or not isinstance(value, Iterable):
        raise ValueError(f"{name} must be a sequence of {what}, got {value!r:.60}")
    return tuple(value)


def check_names(names: Any, name: str) -> list:
    """A non-empty list of names (not a single string), none twice (it would merge two rows)."""
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise ValueError(f"{name} must be a list of names, got {names!r:.60}")
    names = list(names)
    if not names:
        raise ValueError(f"{name} is empty")
    seen: set = set()
    twice = [n for n in names if n in seen or seen.add(n)]
    if twice:
        raise ValueError(f"{name} has {sorted(set(map(str, twice)))} twice: each entry becomes "
                         "its own rows, so two entries of one name would be merged")
    return names


def named_items(value: Any, name: str) -> Iterator[tuple[Any, Any]]:
    """``(name, value)`` pairs of a mapping or an iterable of pairs; a repeated name raises.

    An iterable (e.g. :func:`recbias_tutorial.models.iter_scores`, which keeps one score
    matrix in memory at a time) is checked lazily, pair by pair, so it is never materialised.
    """
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValueError(f"{name} must be a mapping name -> value or an iterable of "
                         f"(name, value) pairs, got {type(value).__name__}")
    pairs = value.items() if isinstance(value, Mapping) else value
    seen: set = set()
    for entry in pairs:
        if not isinstance(entry, tuple) or len(entry) != 2:
            raise ValueError(f"{name} must hold (name, value) pairs, got {entry!r:.60}")
        if entry[0] in seen:
            raise ValueError(f"{name} has the name {entry[0]!r} twice: each entry becomes its "
                             "own rows, so two entries of one name would be merged; rename one")
        seen.add(entry[0])
        yield entry
    if not seen:
        raise ValueError(f"{name} is empty")


def check_fits_in_memory(n_bytes: float, name: str, what: str) -> None:
    """Refuse up front a result or working set larger than the memory this machine has.

    ``name`` names the argument(s) that set the size, ``what`` says what would be allocated.
    """
    available = _available_memory()
    if available is not None and n_bytes > available:
        raise ValueError(f"{name} too large: {what} would need {_human_bytes(n_bytes)}, more "
                         f"than the {_human_bytes(available)} of memory available")


def _available_memory() -> int | None:
    """Bytes of memory available (MemAvailable on Linux, else physical memory), or None."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def _human_bytes(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} PB"


def check_propensity_shape(propensity: Any, shape: tuple[int, int]) -> np.ndarray:
    """A real per-item (1-D, length n_items) or users x items (2-D) propensity array.

    Only the shape and the dtype: the values are checked where they are looked up
    (:func:`check_propensity`), for the test pairs only.
    """
    if propensity is None:
        raise ValueError("propensity is required (per-item 1-D or users x items 2-D array)")
    raw = np.asarray(propensity)
    if raw.dtype == bool or not (np.issubdtype(raw.dtype, np.integer)
                                 or np.issubdtype(raw.dtype, np.floating)):
        raise ValueError(f"propensity must hold real probabilities, got dtype {raw.dtype}")
    p = raw.astype(float, copy=False)
    if p.ndim == 1:
        if p.shape[0] != shape[1]:
            raise ValueError(f"propensity (1-D, per item) must have length {shape[1]}, got {p.shape[0]}")
    elif p.ndim == 2:
        if p.shape != shape:
            raise ValueError(f"propensity (2-D) must have shape {shape}, got {p.shape}")
    else:
        raise ValueError(f"propensity must be 1-D (items) or 2-D (users x items), got {p.ndim}-D")
    return p


def check_n_relevant(n_relevant: Any, n_users: int) -> np.ndarray:
    """The true number of relevant items of each user: ``n_users`` whole non-negative counts."""
    if n_relevant is None:
        raise ValueError("n_relevant (true number of relevant items per user) is required for ips")
    raw = np.asarray(n_relevant)
    if raw.dtype == bool or not np.issubdtype(raw.dtype, np.number) \
            or np.issubdtype(raw.dtype, np.complexfloating):
        raise ValueError(f"n_relevant must hold counts (integers), got dtype {raw.dtype}")
    n_rel = raw.astype(float)
    if (n_rel.shape != (n_users,) or not np.isfinite(n_rel).all() or (n_rel < 0).any()
            or (n_rel != np.round(n_rel)).any()):
        raise ValueError(f"n_relevant must be {n_users} non-negative whole counts, one per user, "
                         f"got shape {n_rel.shape}")
    return n_rel


def check_propensity(propensity: Any, users: np.ndarray, items: np.ndarray,
                     shape: tuple[int, int], *, upper_one: bool,
                     clip: float | None = None) -> np.ndarray:
    """Look up P_ui for the given rows from a per-item (1-D) or users x items (2-D) array."""
    p = check_propensity_shape(propensity, shape)
    vals = p[items] if p.ndim == 1 else p[users, items]
    if clip is not None:
        clip = check_real(clip, "clip", low=0.0, low_open=True, high=1.0 if upper_one else None)
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
