"""The models of one evaluation: what is sent once to every worker, what each block gets.

A model is a dense score matrix (each block gets its users' rows), a
:class:`~recbias_tutorial.Scorer` (sent once to every worker; a block reads its users' rows
from it) or factor matrices ``(user_factors, item_factors)`` (or a mapping with the
``user_bias`` / ``item_bias`` of :meth:`~recbias_tutorial.Scorer.from_factors`): the item
side is sent once to every worker and each block gets only its users' factors, so a model of
a billion users never travels whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..scorer import Scorer, check_scores

_FACTOR_KEYS = ("user_factors", "item_factors", "user_bias", "item_bias")


@dataclass(frozen=True)
class Model:
    """A validated model: ``kind`` is ``"dense"``, ``"scorer"`` or ``"factors"``."""

    name: str
    kind: str
    shape: tuple[int, int]
    users: Any  # dense: the matrix; scorer: the Scorer; factors: (U, user_bias or None)
    items: Any = None  # factors: (V^T contiguous, item_bias or None), shared by every block


def _factors(name: str, value: Any) -> Model:
    if isinstance(value, Mapping):
        unknown = set(value) - set(_FACTOR_KEYS)
        if unknown or not {"user_factors", "item_factors"} <= set(value):
            raise ValueError(f"models[{name!r}] as a mapping must have keys user_factors, "
                             f"item_factors (and optionally user_bias, item_bias), got "
                             f"{sorted(map(str, value))}")
        kw = dict(value)
    else:
        kw = dict(zip(("user_factors", "item_factors"), value))
    try:  # the checks of Scorer.from_factors (finite, matching widths, bias lengths)
        Scorer.from_factors(kw["user_factors"], kw["item_factors"],
                            user_bias=kw.get("user_bias"), item_bias=kw.get("item_bias"))
    except (TypeError, ValueError) as err:  # TypeError: numbers that are not numbers
        raise ValueError(f"models[{name!r}]: factor matrices must be finite real arrays "
                         f"({err})") from None
    U = np.asarray(kw["user_factors"], dtype=np.float64)
    V = np.asarray(kw["item_factors"], dtype=np.float64)
    bu = None if kw.get("user_bias") is None else np.asarray(kw["user_bias"], dtype=np.float64)
    bi = None if kw.get("item_bias") is None else np.asarray(kw["item_bias"], dtype=np.float64)
    return Model(name, "factors", (len(U), len(V)), (U, bu), (np.ascontiguousarray(V.T), bi))


def check_models(models: Any, n_users: int | None = None,
                 n_items: int | None = None) -> list[Model]:
    """Validate the mapping of models; they must all score the same users and catalogue (and
    the data's, when its writer recorded the sizes)."""
    if not isinstance(models, Mapping) or len(models) == 0:
        raise ValueError("models must be a non-empty mapping name -> scores (a dense array, a "
                         f"Scorer, or factor matrices), got {type(models).__name__}")
    out = []
    for name, value in models.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"models must be keyed by non-empty names (str), got {name!r}")
        if isinstance(value, Scorer):
            out.append(Model(name, "scorer", value.shape, value))
        elif isinstance(value, Mapping) or (isinstance(value, tuple) and len(value) == 2):
            out.append(_factors(name, value))
        else:
            try:
                dense = check_scores(value)
            except ValueError as err:
                raise ValueError(f"models[{name!r}]: {err}") from None
            out.append(Model(name, "dense", dense.shape, dense))
    first = out[0]
    for m in out:
        if n_items is not None and m.shape[1] != n_items:
            raise ValueError(f"models[{m.name!r}] scores {m.shape[1]:,} items, but the "
                             f"catalogue has {n_items:,}: every model must score every item "
                             "(one column per item id)")
        if n_users is not None and m.shape[0] < n_users:
            raise ValueError(f"models[{m.name!r}] scores {m.shape[0]:,} users, but the data "
                             f"has {n_users:,}: every model must score every user")
        if m.shape != first.shape:
            raise ValueError(f"models[{m.name!r}] has shape {m.shape}, models[{first.name!r}] "
                             f"{first.shape}: every model must score the same users and the "
                             "whole catalogue")
    return out


def block_part(model: Model, lo: int, hi: int) -> Any:
    """What a block of users ``lo..hi`` gets of a model (beside what every worker holds)."""
    if model.kind == "dense":
        return model.users[lo:hi + 1]
    if model.kind == "factors":
        U, bu = model.users
        return U[lo:hi + 1], None if bu is None else bu[lo:hi + 1]
    return None


def block_scores(kind: str, part: Any, shared: Any, lo: int, hi: int, n_items: int) -> Any:
    """The scores of users ``lo..hi`` as an array or a Scorer of local ids ``0..hi-lo``
    (run on the worker; the arithmetic of :meth:`Scorer.from_factors`, so the scores are
    the in-process ones)."""
    n = hi - lo + 1
    if kind == "dense":
        return part
    if kind == "scorer":
        fn = shared

        return Scorer(lambda users: fn(users + lo), n_users=n, n_items=n_items)
    U, bu = part
    Vt, bi = shared

    def fn(users: np.ndarray) -> np.ndarray:
        out = U[users] @ Vt
        if bu is not None:
            out += bu[users, None]
        if bi is not None:
            out += bi[None, :]
        return out

    return Scorer(fn, n_users=n, n_items=n_items)


def shared_part(model: Model) -> Any:
    """What every worker holds of a model (sent once)."""
    if model.kind == "scorer":
        return model.users
    if model.kind == "factors":
        return model.items
    return None
