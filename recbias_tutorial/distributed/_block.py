"""What one task does with one block of users: load its rows, check them, compute sums.

A block holds every row of its users (ids ``lo..hi``) in every frame, so each estimator's
per-user terms are complete inside it and the block's partial sums add up to the in-process
estimate. The stages (:func:`run`): ``plan`` counts what needs no model (rows, users per
estimator, the strata's reference propensities, the intervention's counts); ``keys``
answers a query about the intervention's sampling keys; ``sampled`` counts the users of the
sampled rows; ``score`` scores the block once per model and evaluates every estimator.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pandas as pd

from .. import _ranking
from .._estimator_registry import lookup
from .._ranking import dcg_gain, ideal_dcg, positions, recall_per_user, within_user_positions
from .._ranking import gains as _gains
from .._validation import check_feedback, check_propensity
from . import _intervention, _models, _sources
from ._bootstrap import block_sums as _boot_sums


@contextlib.contextmanager
def _serial():
    """One thread per task: a worker's threads already run one task each."""
    before = getattr(_ranking._IN_POOL, "active", False)
    _ranking._IN_POOL.active = True
    try:
        yield
    finally:
        _ranking._IN_POOL.active = before


class Block:
    """The rows of users ``lo..hi`` of every frame, users renumbered from 0, checked."""

    def __init__(self, info: dict, frames: dict[str, list]):
        self.info = info
        self.lo, self.hi, self.n_items = info["lo"], info["hi"], info["n_items"]
        self.n = self.hi - self.lo + 1
        self.frames: dict[str, pd.DataFrame] = {}
        for name, parts in frames.items():
            loaded = [_sources.load(_sources.Part(d, None, None), info["columns"][name],
                                    self.lo, self.hi, name) for d in parts]
            frame = (pd.concat(loaded, ignore_index=True) if len(loaded) != 1
                     else loaded[0].reset_index(drop=True)) if loaded else None
            if frame is None:
                frame = pd.DataFrame({"user": np.empty(0, np.int64), "item": np.empty(0, np.int64)})
            frame = frame.assign(user=frame["user"].to_numpy(np.int64) - self.lo)
            rated = name in ("test", "random")
            if rated or len(frame):
                check_feedback(frame, name, self.n, self.n_items, require_rating=rated,
                               allow_empty=name != "test", unique=rated)
            self.frames[name] = frame
        for alias, name in info.get("aliases", {}).items():  # train read as exclude: once
            self.frames[alias] = self.frames[name]
        self.threshold = info["threshold"]
        self._rel: dict[str, pd.DataFrame] = {}

    def relevant(self, name: str) -> pd.DataFrame:
        if name not in self._rel:
            f = self.frames[name]
            self._rel[name] = f[f["rating"].to_numpy(dtype=float) >= self.threshold]
        return self._rel[name]

    def propensity(self, plan: dict, rows: pd.DataFrame, *, upper_one: bool,
                   clip: float | None = None) -> np.ndarray:
        """P of the given rows: the per-item array, the block's rows of a 2-D array, or the
        frame's own propensity column."""
        users, items = rows["user"].to_numpy(np.int64), rows["item"].to_numpy(np.int64)
        column = plan.get("propensity_column")
        if column is not None:
            if column not in rows.columns:
                raise ValueError(f"propensity names column {column!r}, which test lacks")
            vals = rows[column].to_numpy(dtype=float)
            return check_propensity(vals, users, np.arange(len(vals)), (self.n, len(vals)),
                                    upper_one=upper_one, clip=clip)
        return check_propensity(plan["propensity"], users, items, (self.n, self.n_items),
                                upper_one=upper_one, clip=clip)


def _terms(block: Block, plan: dict, spec: dict, gain: np.ndarray) -> pd.Series:
    """The registered estimator's per-user terms of the block (users renumbered from 0)."""
    est = lookup(spec["name"])
    rel = block.relevant("test")
    users = rel["user"].to_numpy(np.int64)
    p = n_rel = None
    if est.propensity is not None:
        p = block.propensity(plan, rel, upper_one=est.propensity == "absolute",
                             clip=spec.get("clip"))
    if est.needs_n_relevant:
        n_rel = plan["n_relevant"]
        if (np.bincount(users, minlength=block.n) > n_rel).any():
            raise ValueError("n_relevant is smaller than the observed relevant test items of "
                             "some user")
    if len(users) == 0 and not est.needs_n_relevant:
        return pd.Series(dtype=float)
    return est.terms(gain, users, p, n_rel, block.n)


def _strata_p(block: Block, plan: dict, spec: dict, which: str) -> np.ndarray:
    rows = block.relevant("test") if which == "relevant" else block.frames["test"]
    return block.propensity(plan, rows, upper_one=False)


def _plan(block: Block, plan: dict) -> dict:
    test = block.frames["test"]
    out: dict[str, Any] = {"rows": len(test), "users": {}, "strata": {}}
    rel = block.relevant("test")
    for spec in plan["specs"]:
        label, kind = spec["label"], spec["kind"]
        if kind == "terms":
            out["users"][label] = len(_terms(block, plan, spec, np.zeros(len(rel))))
        elif kind in ("ure_recall", "recall_at_kbar"):
            out["users"][label] = int(block.relevant("random")["user"].nunique())
        elif kind == "stratified":
            ref = np.unique(_strata_p(block, plan, spec, spec["bins_from"]), return_counts=True)
            w = np.unique(_strata_p(block, plan, spec, spec["weights_from"]), return_counts=True)
            out["strata"][label] = (ref, w, len(rel))
    if any(s["kind"] == "intervene" for s in plan["specs"]):
        out["intervention"] = _intervention.block_counts(block)
    return out


def _keys(block: Block, plan: dict) -> dict:
    out = {}
    for label, query in plan["queries"].items():
        keys = _intervention.log_keys(block, plan["intervene"][label], block.info["e"][label])
        out[label] = _intervention.answer(keys, query)
    return out


def _sampled(block: Block, plan: dict) -> dict:
    """Per intervened set: the block's sampled rows, and the users of its relevant ones."""
    return {label: (int(_sampled_mask(block, plan, label).sum()),
                    int(_sample_rows(block, plan, label)["user"].nunique()))
            for label in plan["thresholds"]}


def _sampled_mask(block: Block, plan: dict, label: str) -> np.ndarray:
    """Which of the block's test rows the intervened sample of ``label`` keeps."""
    t = plan["thresholds"][label]
    if t is None:  # strategy "full": every row
        return np.ones(len(block.frames["test"]), dtype=bool)
    return _intervention.log_keys(block, plan["intervene"][label], block.info["e"][label]) <= t


def _sample_rows(block: Block, plan: dict, label: str) -> pd.DataFrame:
    """The block's relevant test rows in the intervened sample of ``label``."""
    test = block.frames["test"]
    keep = _sampled_mask(block, plan, label)
    return test[keep & (test["rating"].to_numpy(dtype=float) >= block.threshold)]


def _per_user_mean(gain: np.ndarray, users: np.ndarray) -> pd.Series:
    return pd.Series(gain).groupby(users).mean().rename_axis("user")


def _score_model(block: Block, plan: dict, model: tuple, first: bool) -> dict:
    name, kind, part, shared = model
    scores = _models.block_scores(kind, part, shared, block.lo, block.hi, block.n_items)
    exclude = _ranking.exclude_matrix(block.frames.get("exclude"), (block.n, block.n_items))
    cache: dict[tuple, np.ndarray] = {}

    def gain(frame: str, metric: str, k: int | None) -> np.ndarray:
        if (frame, metric, k) not in cache:
            rel = block.relevant(frame)
            if len(rel) == 0:
                cache[frame, metric, k] = np.empty(0)
            elif metric == "ndcg":
                cache[frame, metric, k] = dcg_gain(positions(scores, rel, exclude, k), k)
            elif metric == "recall@pos":  # capped positions, for URE
                cache[frame, metric, k] = positions(scores, rel, exclude, k)
            else:
                cache[frame, metric, k] = _gains(scores, rel, metric, k, exclude)
        return cache[frame, metric, k]

    out: dict[str, Any] = {}
    for spec in plan["specs"]:
        label, kind = spec["label"], spec["kind"]
        if kind == "terms":
            values = _terms(block, plan, spec, gain("test", spec["metric"], spec["k"]))
        elif kind == "ure_recall":
            rel = block.relevant("random")
            z = gain("random", "recall@pos", spec["k"])
            values = (recall_per_user(rel["user"].to_numpy(np.int64), z, np.array([spec["k"]]))
                      [spec["k"]] if len(rel) else pd.Series(dtype=float))
        elif kind == "recall_at_kbar":
            values = _kbar(block, scores, spec["k_bar"])
        elif kind == "intervene":  # the relevant test rows' gains, on the sampled ones
            test = block.frames["test"]
            keep = _sampled_mask(block, plan, label)[
                test["rating"].to_numpy(dtype=float) >= block.threshold]
            users = block.relevant("test")["user"].to_numpy(np.int64)[keep]
            values = (_per_user_mean(gain("test", spec["metric"], spec["k"])[keep], users)
                      if len(users) else pd.Series(dtype=float))
        else:  # stratified
            out[label] = _strata_sums(block, plan, spec, gain, first)
            continue
        values = values.sort_index()
        if plan.get("boot") and label in plan["boot"]["expected"]:
            expected = plan["boot"]["expected"][label]
            if len(values) != expected:
                raise ValueError(f"estimator {spec['name']!r} gave {len(values)} per-user "
                                 f"terms in users {block.lo}..{block.hi}, {expected} without "
                                 "a model: its users must not depend on the scores to bootstrap")
        out[label] = (float(values.sum()), int(len(values)), values.to_numpy(dtype=float))
    return out


def _kbar(block: Block, scores: Any, k_bar: int) -> pd.Series:
    random = block.frames["random"]
    users = random["user"].to_numpy(np.int64)
    is_rel = random["rating"].to_numpy(dtype=float) >= block.threshold
    if not is_rel.any():
        return pd.Series(dtype=float)
    pos = within_user_positions(scores, users, random["item"].to_numpy(np.int64))
    return recall_per_user(users[is_rel], pos[is_rel], np.array([k_bar]))[k_bar]


def _strata_sums(block: Block, plan: dict, spec: dict, gain, first: bool) -> dict:
    """Per stratum: the sum of the users' values, the users, the relevant rows (and, once
    per block, the items present, as a bitset)."""
    rel = block.relevant("test")
    edges, n_strata = plan["strata"][spec["label"]], spec["n_strata"]
    n = n_strata
    out = {"sum": np.zeros(n), "users": np.zeros(n, np.int64), "rows": np.zeros(n, np.int64),
           "all_users": int(rel["user"].nunique())}
    if len(rel) == 0:
        if first:
            out["items"] = np.zeros((n, (block.n_items + 7) // 8), np.uint8)
        return out
    p = block.propensity(plan, rel, upper_one=False)
    side = "left" if spec["binning"] == "cut" else "right"
    stratum = np.clip(np.searchsorted(edges[1:-1], p, side=side), 0, n - 1)
    users = rel["user"].to_numpy(np.int64)
    metric, k = spec["metric"], spec["k"]
    g = gain("test", metric, k)
    items_seen = np.zeros((n, block.n_items), dtype=bool) if first else None
    for s in range(n):
        mask = stratum == s
        if not mask.any():
            continue
        u = users[mask]
        if metric == "ndcg":
            dcg = pd.Series(g[mask]).groupby(u).sum()
            counts = pd.Series(u).value_counts().reindex(dcg.index).to_numpy()
            per_user = dcg.to_numpy() / ideal_dcg(k, counts)
        else:
            per_user = _per_user_mean(g[mask], u).to_numpy()
        out["sum"][s] = float(per_user.sum())
        out["users"][s] = len(per_user)
        out["rows"][s] = int(mask.sum())
        if first:
            items_seen[s, rel["item"].to_numpy(np.int64)[mask]] = True
    if first:
        out["items"] = np.packbits(items_seen, axis=1)
    return out


def _score(block: Block, plan: dict, models: list) -> dict:
    out = {"models": {}}
    for i, model in enumerate(models):
        out["models"][model[0]] = _score_model(block, plan, model, i == 0)
    boot = plan.get("boot")
    if boot:
        out["boot"] = _boot_sums(out["models"], boot, block.info["index"])
    for sums in out["models"].values():  # the per-user values stay on the worker
        for label, value in sums.items():
            if isinstance(value, tuple):
                sums[label] = value[:2]
    return out


def run(stage: str, info: dict, frames: dict[str, list], models: list, shared: dict,
        local: dict) -> dict:
    """One task: ``stage`` of the block ``info`` (see the module docstring); ``shared`` is
    what every block reads (sent once to each worker), ``local`` this block's own part."""
    plan = {**shared, **local}
    with _serial():
        block = Block(info, frames)
        if stage == "plan":
            return _plan(block, plan)
        if stage == "keys":
            return _keys(block, plan)
        if stage == "sampled":
            return _sampled(block, plan)
        return _score(block, plan, models)
