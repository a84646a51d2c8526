"""The intervened test sets of :func:`~recbias_tutorial.sampling.intervene`, block by block.

``intervene`` keeps the ``m`` held-out rows with the smallest keys ``log E - log w``
(Efraimidis-Spirakis), ``E`` the exponentials its seed draws in the rows' order and ``w``
the strategy's weight of each row. Here the weights come from counts reduced over the blocks
(a user's counts are inside its block; the items' counts and the sizes of the id spaces are
summed), the client walks the seed's stream once, keeping only the generator's state at the
start of each partition, and each worker redraws its partition's exponentials from that
state: the keys are the in-process ones, bit for bit. The ``m``-th smallest key is found by
a few rounds of histograms of the keys, then the keys of one narrow bin; the sample is the
rows whose key is at most that one, the very rows ``intervene`` returns.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..sampling import NOTEBOOK_SMOOTHING, NOTEBOOK_ZERO_SHARE
from ..sampling import _NOTEBOOK_ABSENT_SKEW

_BINS = 1024  # bins of a histogram round
_VALUES = 65_536  # at most this many keys in the bin: send them and pick the m-th exactly
_ROUNDS = 40


# ------------------------------------------------------------------ on the workers
def _bits(items: np.ndarray, n_items: int) -> np.ndarray:
    seen = np.zeros(n_items, dtype=bool)
    seen[items] = True
    return np.packbits(seen)


def block_counts(block: Any) -> dict:
    """What the weights need from one block: rows, distinct users, items seen and counted."""
    test = block.frames["test"]
    train, mar = block.frames.get("train"), block.frames.get("mar")
    held_u = test["user"].to_numpy(np.int64)
    out = {"held": len(test), "held_items": _bits(test["item"].to_numpy(np.int64), block.n_items)}
    users = [held_u]
    for name, frame in (("train", train), ("mar", mar)):
        if frame is None:
            continue
        items = frame["item"].to_numpy(np.int64)
        users.append(frame["user"].to_numpy(np.int64))
        out[name] = len(frame)
        out[f"{name}_items"] = _bits(items, block.n_items)
        out[f"{name}_item_counts"] = np.bincount(items, minlength=block.n_items)
        out[f"users_with_{name}"] = int(len(np.unique(np.concatenate(users))))
    return out


def _shares(counts: np.ndarray, ref_size: int, n_ids: int, alpha: Any, ref_name: str,
            col: str, held: np.ndarray) -> np.ndarray:
    """``sampling._row_shares`` from the reduced counts (the same arithmetic)."""
    if alpha == NOTEBOOK_SMOOTHING:
        return np.where(counts == 0, NOTEBOOK_ZERO_SHARE, counts / ref_size)
    if alpha == 0 and (counts == 0).any():
        absent = np.unique(held[counts == 0])[:5].tolist()
        raise ValueError(f"smoothing=0 but some heldout {col} ids are absent from {ref_name} "
                         f"(e.g. {absent}); use smoothing > 0")
    return (counts + alpha) / (ref_size + alpha * n_ids)


def log_weights(block: Any, stats: dict) -> np.ndarray:
    """log w of the block's held-out rows (``sampling._log_weights``, from reduced counts)."""
    test = block.frames["test"]
    strategy, alpha = stats["strategy"], stats["smoothing"]
    h_users = test["user"].to_numpy(np.int64)
    h_items = test["item"].to_numpy(np.int64)
    if strategy in ("full", "reg"):
        return np.zeros(len(test))
    if strategy == "skew":
        counts = stats["train_item_counts"][h_items].astype(float)
        if alpha == NOTEBOOK_SMOOTHING:
            return np.where(counts == 0, np.log(_NOTEBOOK_ABSENT_SKEW),
                            -np.log(np.maximum(counts, 1.0)))
        if alpha == 0 and (counts == 0).any():
            absent = np.unique(h_items[counts == 0])[:5].tolist()
            raise ValueError(f"smoothing=0 but some heldout item ids are absent from train "
                             f"(e.g. {absent}); use smoothing > 0")
        return -np.log(counts + alpha)
    with_mar = strategy == "wtd"
    n_u, n_i = stats["n_user_ids"], stats["n_item_ids"]
    tr_u = np.bincount(block.frames["train"]["user"].to_numpy(np.int64), minlength=block.n)
    log_mnar_u = np.log(_shares(tr_u[h_users].astype(float), stats["train"], n_u, alpha,
                                "train", "user", h_users + block.lo))
    log_mnar_i = np.log(_shares(stats["train_item_counts"][h_items].astype(float),
                                stats["train"], n_i, alpha, "train", "item", h_items))
    if with_mar:
        mar_u = np.bincount(block.frames["mar"]["user"].to_numpy(np.int64), minlength=block.n)
        log_wu = np.log(_shares(mar_u[h_users].astype(float), stats["mar"], n_u, alpha, "mar",
                                "user", h_users + block.lo)) - log_mnar_u
        log_wi = np.log(_shares(stats["mar_item_counts"][h_items].astype(float), stats["mar"],
                                n_i, alpha, "mar", "item", h_items)) - log_mnar_i
    else:
        log_wu = -np.log(n_u) - log_mnar_u
        log_wi = -np.log(n_i) - log_mnar_i
    return log_wu + stats["item_power"] * log_wi


def exponentials(e: tuple) -> np.ndarray:
    """The block's exponentials: shipped (``("array", E)``) or redrawn from a state."""
    if e[0] == "array":
        return e[1]
    _, kind, state, n = e
    rng = np.random.Generator(getattr(np.random, kind)())
    rng.bit_generator.state = state
    return rng.standard_exponential(n)


def log_keys(block: Any, stats: dict, e: tuple) -> np.ndarray:
    """``intervene``'s keys of the block's held-out rows."""
    return np.log(exponentials(e)) - log_weights(block, stats)


def answer(keys: np.ndarray, query: tuple) -> Any:
    """One block's answer to a query of :func:`select` about its keys."""
    if query[0] == "range":
        return (float(keys.min()), float(keys.max())) if len(keys) else None
    if query[0] == "hist":
        _, lo, hi = query
        return np.searchsorted(np.sort(keys), np.linspace(lo, hi, _BINS + 1), side="right")
    if query[0] == "values":
        _, lo, hi = query
        return np.sort(keys[(keys > lo) & (keys <= hi)])
    raise ValueError(f"unknown query {query[0]!r}")


# ------------------------------------------------------------------ on the client
def global_stats(spec: dict, counts: list[dict]) -> dict:
    """Sizes and item counts of the whole log, from the blocks' counts."""
    def total(key):
        return int(sum(c.get(key, 0) for c in counts))

    def union(*keys):
        bits = None
        for c in counts:
            for key in keys:
                bits = c[key] if bits is None else bits | c[key]
        return int(np.unpackbits(bits).sum())

    strategy = spec["strategy"]
    stats = {"strategy": strategy, "smoothing": spec["smoothing"],
             "item_power": float(spec["item_power"]), "held": total("held")}
    if strategy in ("skew", "wtd", "wtd_h"):
        stats["train"] = total("train")
        if stats["train"] == 0:
            raise ValueError("train is empty (the intervention's MNAR training data)")
        stats["train_item_counts"] = sum(c["train_item_counts"] for c in counts)
    if strategy == "wtd":
        stats["mar"] = total("mar")
        if stats["mar"] == 0:
            raise ValueError("mar is empty (the MAR weight split of strategy='wtd')")
        stats["mar_item_counts"] = sum(c["mar_item_counts"] for c in counts)
        stats["n_user_ids"] = total("users_with_mar")
        stats["n_item_ids"] = union("held_items", "train_items", "mar_items")
    elif strategy == "wtd_h":
        stats["n_user_ids"] = total("users_with_train")
        stats["n_item_ids"] = union("held_items", "train_items")
    return stats


def stream(seed: Any, rows: list[int]) -> tuple[str, list[dict]]:
    """Walk ``intervene``'s stream of exponentials over partitions of ``rows`` rows (in the
    rows' order), keeping the generator's state at the start of each; the generator ends
    where ``intervene`` leaves it."""
    from .._validation import as_generator

    rng = as_generator(seed)
    states = []
    for n in rows:
        states.append(copy.deepcopy(rng.bit_generator.state))
        left = n
        while left:  # drawn and dropped a million at a time: the client's memory stays small
            step = min(left, 1 << 20)
            rng.standard_exponential(step)
            left -= step
    return type(rng.bit_generator).__name__, states


def select(ask, wanted: dict[str, int], n: int) -> dict[str, float]:
    """The m-th smallest key of all blocks for every label of ``wanted`` (label -> m), in
    rounds shared by the labels; ``ask({label: query})`` returns every block's answers."""
    spans = ask({label: ("range",) for label in wanted})
    state = {}
    for label, answers in spans.items():
        answers = [a for a in answers if a is not None]
        lo = np.nextafter(min(a for a, _ in answers), -np.inf)
        state[label] = [lo, max(b for _, b in answers), 0, n]  # lo, hi, keys <= lo, in (lo, hi]
    for _ in range(_ROUNDS):
        todo = {label: s for label, s in state.items() if s[3] > _VALUES and s[0] < s[1]}
        if not todo:
            break
        answers = ask({label: ("hist", s[0], s[1]) for label, s in todo.items()})
        for label, s in todo.items():
            cum = sum(answers[label])
            edges = np.linspace(s[0], s[1], _BINS + 1)
            j = max(int(np.searchsorted(cum, wanted[label], side="left")), 1)
            state[label] = [edges[j - 1], edges[j], int(cum[j - 1]), int(cum[j] - cum[j - 1])]
    answers = ask({label: ("values", s[0], s[1]) for label, s in state.items()})
    out = {}
    for label, s in state.items():
        values = np.sort(np.concatenate([np.asarray(a, float) for a in answers[label]]))
        rank = wanted[label] - s[2]
        if not 0 < rank <= len(values):
            raise RuntimeError("the search for the m-th key lost it: please report this")
        out[label] = float(values[rank - 1])
    return out
