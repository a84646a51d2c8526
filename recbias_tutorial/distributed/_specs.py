"""The estimators one evaluation computes: names of the registry with their options, checked
once on the client by the rules of the in-process functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._estimator_registry import lookup, registered
from .._params import declared
from .._ranking import GAINS
from .._stratification import STRATA_ROWS, _edges, stratified
from .._validation import check_choice, check_k
from .._random_exposure import recall_at_kbar, ure_recall
from ..estimators import user_values
from ..sampling import intervene

#: Registered estimators without per-user terms that have a kernel here.
KERNELS = ("stratified", "intervene", "ure_recall", "recall_at_kbar")
_OPTIONS = {
    "terms": ("metric", "k", "clip"),
    "stratified": ("metric", "k", "n_strata", "binning", "bins_from", "weights_from"),
    "intervene": ("metric", "k", "strategy", "size", "item_power", "smoothing", "seed"),
    "ure_recall": ("k",),
    "recall_at_kbar": ("k_bar",),
}
_DEFAULTS = {"stratified": {"n_strata": 2, "binning": "quantile", "bins_from": "relevant",
                            "weights_from": "relevant"},
             "intervene": {"item_power": 2.0, "smoothing": 1.0}}
_RULES = {"terms": declared(user_values), "stratified": declared(stratified),
          "intervene": declared(intervene), "ure_recall": declared(ure_recall),
          "recall_at_kbar": declared(recall_at_kbar)}


def distributable() -> tuple[str, ...]:
    """Registered estimators this module evaluates: those with per-user terms and those with
    a kernel here."""
    return tuple(e.name for e in registered() if e.per_user or e.name in KERNELS)


def _label(name: str, opts: dict) -> str:
    if not opts:
        return name
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in opts.items() if k != 'seed')})"


def check_specs(estimators: Any, *, metric: str, k: int | None, clip: float | None,
                n_items: int) -> list[dict]:
    """Each estimator as a dict: ``label``, ``name``, ``kind`` and its options, checked."""
    if isinstance(estimators, str) or (isinstance(estimators, tuple) and len(estimators) == 2
                                       and isinstance(estimators[1], Mapping)):
        estimators = [estimators]  # one estimator
    if not isinstance(estimators, (list, tuple)) or not estimators:
        raise ValueError("estimators must be a non-empty list of names or (name, options) "
                         f"pairs, got {estimators!r:.80}")
    names = distributable()
    specs, labels = [], set()
    for item in estimators:
        name, opts = (item, {}) if isinstance(item, str) else (item if isinstance(item, tuple)
                                                                and len(item) == 2 else (None, None))
        if not isinstance(opts, Mapping):
            raise ValueError(f"estimators: each entry is a name or a (name, options) pair, "
                             f"got {item!r:.80}")
        if name not in names:
            raise ValueError(f"estimators: {name!r} is not an estimator evaluated here; "
                             f"choose from {names}")
        kind = "terms" if lookup(name).per_user else name
        unknown = set(opts) - set(_OPTIONS[kind]) - {"label"}
        if unknown:
            raise ValueError(f"estimators: {name!r} takes options {_OPTIONS[kind]}, got "
                             f"{sorted(unknown)}")
        opts = dict(opts)
        label = opts.pop("label", None) or _label(name, opts)
        if label in labels:
            raise ValueError(f"estimators: {label!r} is listed twice (give a 'label' option)")
        labels.add(label)
        spec = {"label": label, "name": name, "kind": kind, **_DEFAULTS.get(kind, {})}
        spec.update({"metric": metric, "k": k, "clip": clip} if kind == "terms" else {})
        if kind in ("stratified", "intervene"):
            spec.update(metric=metric, k=k)
        spec.update(opts)
        rules = _RULES[kind]
        for key in _OPTIONS[kind]:
            if key in rules and (key in opts or key in spec):
                try:
                    spec[key] = rules[key].check(spec.get(key), key)
                except ValueError as err:
                    raise ValueError(f"estimators[{label!r}]: {err}") from None
        if kind == "intervene" and "seed" not in spec:
            raise ValueError(f"estimators[{label!r}]: seed must be given (intervene draws the "
                             "sample)")
        if kind == "intervene" and "strategy" not in spec:
            raise ValueError(f"estimators[{label!r}]: strategy must be given (reg, skew, wtd, "
                             "wtd_h or full)")
        if kind == "intervene" and "size" not in spec:
            raise ValueError(f"estimators[{label!r}]: size must be given (the share of rows kept)")
        if kind == "stratified":
            for key in ("bins_from", "weights_from"):
                check_choice(spec[key], key, STRATA_ROWS)
        if kind == "recall_at_kbar" and "k_bar" not in spec:
            raise ValueError(f"estimators[{label!r}]: k_bar must be given")
        metric_ = spec.get("metric")
        if kind == "ure_recall":
            if spec.get("k") is None:
                spec["k"] = k
            spec["k"] = check_k(spec["k"], n_items)
        elif metric_ == "auc":
            spec["k"] = None
        elif kind == "stratified" and spec["k"] is None:
            spec["k"] = n_items
        elif kind != "recall_at_kbar":
            if spec["k"] is None:
                raise ValueError(f"estimators[{label!r}]: k must be an integer cut-off for "
                                 f"metric={metric_!r}, got None")
            spec["k"] = check_k(spec["k"], n_items)
        if kind in ("terms", "intervene") and metric_ not in GAINS:
            raise ValueError(f"estimators[{label!r}]: metric must be one of {GAINS}, got "
                             f"{metric_!r}")
        specs.append(spec)
    return specs


def quantile_of_counts(values: np.ndarray, counts: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``np.quantile(np.repeat(values, counts), q)`` (linear) without the repeat: the order
    statistics are found in the cumulative counts and interpolated as numpy does."""
    n = int(counts.sum())
    cum = np.cumsum(counts)

    def order(j):
        return values[np.searchsorted(cum, j, side="right")]

    vi = (n - 1) * q
    prev = np.floor(vi)
    nxt = prev + 1
    top = vi >= n - 1
    prev_i = np.where(top, n - 1, prev).astype(np.int64)
    next_i = np.where(top, n - 1, nxt).astype(np.int64)
    gamma = vi - np.where(top, -1, prev)
    a, b = order(prev_i), order(next_i)
    diff = b - a
    out = a + diff * gamma
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), out)


def merge_counts(pairs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Value counts of several blocks as one (sorted values, counts)."""
    values = np.concatenate([v for v, _ in pairs])
    counts = np.concatenate([c for _, c in pairs])
    uniq, inv = np.unique(values, return_inverse=True)
    return uniq, np.bincount(inv, weights=counts, minlength=len(uniq)).astype(np.int64)


def strata_edges(spec: dict, ref: tuple) -> np.ndarray:
    """The strata's edges of :func:`~recbias_tutorial.estimators.assign_strata` from the
    reference rows' value counts."""
    values, counts = ref
    if not (np.isfinite(values).all() and (values > 0).all()):
        raise ValueError("reference must hold finite propensities > 0")
    n = spec["n_strata"]
    if spec["binning"] == "quantile":
        return quantile_of_counts(values, counts, np.linspace(0, 1, n + 1))
    return _edges(values, n, spec["binning"])  # width / cut read only min and max


def shares(spec: dict, edges: np.ndarray, weights: tuple) -> np.ndarray:
    values, counts = weights
    side = "left" if spec["binning"] == "cut" else "right"
    s = np.clip(np.searchsorted(edges[1:-1], values, side=side), 0, spec["n_strata"] - 1)
    return np.bincount(s, weights=counts, minlength=spec["n_strata"]) / int(counts.sum())
