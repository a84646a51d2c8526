"""The client's side of :func:`~recbias_tutorial.distributed.evaluate`: check, plan, reduce."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._estimator_registry import lookup
from .._validation import check_n_relevant, check_propensity_shape
from . import _bootstrap, _intervention, _models, _sources, _specs
from ._runner import Runner, _resolve

_FRAMES = ("test", "exclude", "random", "train", "mar")


def _check_client(client: Any) -> None:
    if client is not None and not (callable(getattr(client, "submit", None))
                                   and callable(getattr(client, "gather", None))):
        raise ValueError("client must be a dask.distributed.Client (e.g. Client() locally, or "
                         f"Client('tcp://scheduler:8786')) or None, got {type(client).__name__}")


def _measure_ranges(src: _sources.Source, client: Any) -> _sources.Source:
    """Fill in the user ranges a footer or a writer did not record (one small task each)."""
    todo = [i for i, p in enumerate(src.parts) if p.lo is None and p.rows != 0]
    if not todo:
        return src
    if client is None:
        found = [_sources.user_range(_sources.load(src.parts[i], ["user", "item"], 0,
                                                   np.iinfo(np.int64).max, src.name)
                                     if isinstance(src.parts[i].data, str)
                                     else _resolve(src.parts[i].data)) for i in todo]
    else:
        futures = [client.submit(_range_of, src.parts[i].data, src.name, pure=False)
                   if isinstance(src.parts[i].data, str) else
                   client.submit(_sources.user_range, client.compute(src.parts[i].data),
                                 pure=False) for i in todo]
        found = client.gather(futures)
    parts = list(src.parts)
    for i, (lo, hi, rows) in zip(todo, found):
        parts[i] = _sources.Part(parts[i].data, lo, hi, rows)
    return _sources.Source(src.name, tuple(parts), src.n_users, src.n_items, src.frame)


def _range_of(path: str, name: str):
    frame = _sources.load(_sources.Part(path, None, None), ["user", "item"], 0,
                          np.iinfo(np.int64).max, name)
    return _sources.user_range(frame)


def _blocks(test: _sources.Source, n_users: int) -> list[int]:
    """Indices of the test parts with rows, by their first user: block b covers users from
    its part's first one to the next part's first one (the first block from user 0, the last
    to the last user), so every user of every frame is in exactly one block."""
    _sources.check_partitioned(test)
    order = sorted((p.lo, i) for i, p in enumerate(test.parts) if p.lo is not None and p.rows)
    if not order:
        raise ValueError("test is empty")
    if max(test.parts[i].hi for _, i in order) >= n_users:
        raise ValueError(f"test.user has ids outside 0..{n_users - 1} (the models' "
                         f"{n_users:,} users)")
    return [i for _, i in order]


def evaluate(models, test, *, client, estimators, propensity, n_relevant, exclude, random,
             train, mar, metric, k, threshold, clip, n_resamples, confidence, seed,
             users_per_task) -> pd.DataFrame:
    """See :func:`recbias_tutorial.distributed.evaluate` (validated arguments)."""
    _check_client(client)
    given = {"test": test, "exclude": exclude, "random": random, "train": train, "mar": mar}
    sources: dict[str, _sources.Source] = {}
    for name, frame in given.items():
        if frame is None:
            continue
        if name == "train" and frame is exclude:
            continue  # read once, as the exclusions
        sources[name] = _measure_ranges(_sources.source(frame, name,
                                                        users_per_task=users_per_task), client)
    test_src = sources["test"]
    checked = _models.check_models(models, test_src.n_users, test_src.n_items)
    n_users, n_items = checked[0].shape
    specs = _specs.check_specs(estimators, metric=metric, k=k, clip=clip, n_items=n_items)
    kinds = {s["kind"] for s in specs}
    needs_p = "stratified" in kinds or any(
        s["kind"] == "terms" and lookup(s["name"]).propensity for s in specs)
    needs_n = any(s["kind"] == "terms" and lookup(s["name"]).needs_n_relevant for s in specs)
    if kinds & {"ure_recall", "recall_at_kbar"} and random is None:
        raise ValueError("random is required for ure_recall and recall_at_kbar (the randomly "
                         "exposed feedback)")
    strategies = {s["strategy"] for s in specs if s["kind"] == "intervene"}
    if strategies & {"skew", "wtd", "wtd_h"} and train is None:
        raise ValueError("train is required for the interventions skew, wtd and wtd_h (the "
                         "MNAR training data)")
    if "wtd" in strategies and mar is None:
        raise ValueError("mar is required for the intervention wtd (the MAR weight split)")
    p_column = p = None
    if needs_p:
        if isinstance(propensity, str):
            p_column = propensity
        else:
            p = check_propensity_shape(propensity, (n_users, n_items))
    n_rel = check_n_relevant(n_relevant, n_users) if needs_n else None
    if n_resamples is not None and seed is None:
        raise ValueError("seed must be given with n_resamples (the bootstrap's resamples)")

    order = _blocks(test_src, n_users)
    starts = [0] + [test_src.parts[i].lo for i in order[1:]]
    ends = [s - 1 for s in starts[1:]] + [n_users - 1]
    cols = {"test": ["user", "item", "rating"] + ([p_column] if p_column else []),
            "exclude": ["user", "item"], "random": ["user", "item", "rating"],
            "train": ["user", "item"], "mar": ["user", "item"]}
    blocks, frames = [], []
    for b, (i, lo, hi) in enumerate(zip(order, starts, ends)):
        info = {"index": b, "lo": lo, "hi": hi, "n_items": n_items, "threshold": threshold,
                "columns": cols, "e": {}}
        if train is not None and train is exclude:
            info["aliases"] = {"train": "exclude"}
        blocks.append(info)
        f = {"test": [test_src.parts[i].data]}
        for name, src in sources.items():
            if name != "test":
                f[name] = [p_.data for p_ in _sources.covering(src.parts, lo, hi)]
        frames.append(f)
    model_rows = [(m.name, m.kind, None, _models.shared_part(m)) for m in checked]
    runner = Runner(client, blocks, frames, model_rows)
    model_parts = [[_models.block_part(m, lo, hi) for lo, hi in zip(starts, ends)]
                   for m in checked]

    def local(b: int, **extra) -> dict:
        out = dict(extra)
        if p is not None and p.ndim == 2:
            out["propensity"] = p[starts[b]:ends[b] + 1]
        if n_rel is not None:
            out["n_relevant"] = n_rel[starts[b]:ends[b] + 1]
        return out

    shared = {"specs": specs, "propensity_column": p_column,
              "propensity": p if p is not None and p.ndim == 1 else None}
    planned = runner.run("plan", shared, [local(b) for b in range(len(blocks))])

    users = {s["label"]: np.array([r["users"][s["label"]] for r in planned])
             for s in specs if s["kind"] in ("terms", "ure_recall", "recall_at_kbar")}
    for s in specs:
        if s["label"] in users and users[s["label"]].sum() == 0:
            where = "random" if s["kind"] in ("ure_recall", "recall_at_kbar") else "test"
            raise ValueError(f"{where} has no relevant items (rating >= threshold={threshold})"
                             f" for {s['label']}")
    strata = {}
    for s in specs:
        if s["kind"] == "stratified":
            if sum(r["strata"][s["label"]][2] for r in planned) == 0:
                raise ValueError(f"test has no relevant items (rating >= threshold={threshold})")
            ref = _specs.merge_counts([r["strata"][s["label"]][0] for r in planned])
            w = _specs.merge_counts([r["strata"][s["label"]][1] for r in planned])
            edges = _specs.strata_edges(s, ref)
            strata[s["label"]] = (edges, _specs.shares(s, edges, w))
    shared["strata"] = {label: e for label, (e, _) in strata.items()}

    thresholds = _intervene(specs, planned, runner, blocks, shared, local, test_src, order)
    sampled = None
    if thresholds:
        shared["thresholds"] = thresholds
        sampled = runner.run("sampled", shared, [local(b) for b in range(len(blocks))])
        for s in specs:
            if s["kind"] == "intervene":
                users[s["label"]] = np.array([r[s["label"]][1] for r in sampled])
                kept = sum(r[s["label"]][0] for r in sampled)
                wanted = shared["wanted"].get(s["label"])
                if wanted is not None and kept != wanted:  # only tied keys could do this
                    raise ValueError(f"{s['label']}: {kept} rows have a key at or below the "
                                     f"{wanted}-th smallest (tied keys); intervene would keep "
                                     f"{wanted}")
    boot_plan = None
    if n_resamples is not None:
        counts = {label: c for label, c in users.items()}
        boot_plan = _bootstrap.plan(counts, n_resamples, seed)
    scored = runner.run("score", shared,
                        [local(b, boot=None if boot_plan is None else
                               _bootstrap.for_block(boot_plan, users, b))
                         for b in range(len(blocks))], model_parts)
    return _assemble(checked, specs, scored, strata, n_resamples, confidence, users)


def _intervene(specs, planned, runner, blocks, shared, local, test_src, order) -> dict:
    """Each intervention's threshold key (None for ``full``); the stream states in blocks."""
    specs = [s for s in specs if s["kind"] == "intervene"]
    if not specs:
        return {}
    counts = [r["intervention"] for r in planned]
    rows = [r["rows"] for r in planned]
    n = int(sum(rows))
    stats, thresholds, wanted = {}, {}, {}
    for s in specs:
        stats[s["label"]] = _intervention.global_stats(s, counts)
        if s["strategy"] == "full":
            thresholds[s["label"]] = None
            continue
        m = round(s["size"] * n)
        if m == 0:
            raise ValueError(f"size={s['size']!r} keeps round({s['size']!r} * {n}) = 0 rows of "
                             "heldout; increase size")
        wanted[s["label"]] = m
        if test_src.frame is not None:  # pandas: the exponentials in the frame's row order
            from .._validation import as_generator

            e_all = as_generator(s["seed"]).standard_exponential(len(test_src.frame))
            for b, i in enumerate(order):
                blocks[b]["e"][s["label"]] = ("array", e_all[test_src.parts[i].positions])
        else:  # partitions: the rows' order is the partitions' order
            part_rows = {i: rows[b] for b, i in enumerate(order)}
            in_order = sorted(part_rows)
            kind, states = _intervention.stream(s["seed"], [part_rows[i] for i in in_order])
            state_of = dict(zip(in_order, states))
            for b, i in enumerate(order):
                blocks[b]["e"][s["label"]] = ("state", kind, state_of[i], part_rows[i])
    shared["intervene"] = stats
    if wanted:
        def ask(queries):
            res = runner.run("keys", {**shared, "queries": queries},
                             [local(b) for b in range(len(blocks))])
            return {label: [r[label] for r in res] for label in queries}

        thresholds.update(_intervention.select(ask, wanted, n))
    shared["wanted"] = wanted
    return thresholds


def _assemble(checked, specs, scored, strata, n_resamples, confidence, users) -> pd.DataFrame:
    rows, strata_rows = [], []
    for m in checked:
        for s in specs:
            label = s["label"]
            parts = [r["models"][m.name][label] for r in scored]
            if s["kind"] == "stratified":
                value, table = _strata_table(s, parts, [r["models"][checked[0].name][label]
                                                        for r in scored], strata[label])
                strata_rows.append(table.assign(model=m.name, estimator=label))
                row = {"model": m.name, "estimator": label, "value": value,
                       "users": int(table["users"].iloc[-1])}
                if n_resamples is not None:
                    row.update(low=np.nan, high=np.nan)
                rows.append(row)
                continue
            total = sum(x[0] for x in parts)
            count = sum(x[1] for x in parts)
            row = {"model": m.name, "estimator": label,
                   "value": total / count if count else np.nan, "users": int(count)}
            if n_resamples is not None:
                sums = sum(r["boot"][(m.name, label)] for r in scored)
                row["low"], row["high"] = _bootstrap.interval(sums, count, confidence)
            rows.append(row)
    out = pd.DataFrame(rows)
    if strata_rows:
        table = pd.concat(strata_rows, ignore_index=True)
        lead = ["model", "estimator"]
        out.attrs["strata"] = table[lead + [c for c in table.columns if c not in lead]]
    return out


def _strata_table(spec, parts, first, strata) -> tuple[float, pd.DataFrame]:
    """A model's :func:`~recbias_tutorial.estimators.stratified` frame from the blocks' sums."""
    edges, shares = strata
    n = spec["n_strata"]
    total = sum(x["sum"] for x in parts)
    users = sum(x["users"] for x in parts)
    rows = sum(x["rows"] for x in parts)
    bits = first[0]["items"]
    for x in first[1:]:
        bits = bits | x["items"]
    items_seen = np.unpackbits(bits, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(users > 0, total / np.maximum(users, 1), np.nan)
    table = pd.DataFrame({"stratum": [f"Q{s + 1}" for s in range(n)], "p_low": edges[:-1],
                          "p_high": edges[1:], "interactions": rows.astype(int),
                          "users": users.astype(int), "items": items_seen.sum(axis=1),
                          "share": shares.astype(float), "value": values})
    combined = float(np.nansum(table["share"] * table["value"]))
    table.loc[len(table)] = {"stratum": "combined", "p_low": edges[0], "p_high": edges[-1],
                             "interactions": int(rows.sum()),
                             "users": int(sum(x["all_users"] for x in parts)),
                             "items": int(items_seen.max(axis=0).sum()), "share": 1.0,
                             "value": combined}
    return combined, table
