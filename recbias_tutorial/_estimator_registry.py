r"""The one list of offline estimators that the package reads; home: ``estimators``.

Every estimator is an :class:`Estimator` registered here, in the order the capstone
comparison reports them. Everything that enumerates estimators reads this list:

* the flat API (``rb.<name>`` is the registered ``function``),
* :func:`~recbias_tutorial.estimators.user_values`, :func:`~recbias_tutorial.estimators.bootstrap_ci`
  and :func:`~recbias_tutorial.distributed.estimate` (the estimators with per-user ``terms``),
* :func:`~recbias_tutorial.comparison.compare_methods` (every estimator's ``compare``).

Adding an estimator is one subclass and one :func:`register` call. A subclass that defines
only :meth:`Estimator.terms` is compared with a generic kernel (one pass per model); the
built-in ones override :meth:`Estimator.compare` with kernels vectorised over models
(:mod:`recbias_tutorial._comparison_methods`). Model: Open Bandit Pipeline's
``obp/ope/estimators.py`` (a small base class) and ``obp/ope/meta.py`` (a list keyed by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from . import _comparison_methods as _k
from ._ranking import dcg_gain, ideal_dcg


@dataclass
class Redraw:
    """One redraw of :func:`~recbias_tutorial.comparison.compare_methods`: a test log, a random
    sample and the stream of the interventions, with what several estimators read."""

    test: pd.DataFrame
    random: pd.DataFrame
    int_rng: np.random.Generator
    threshold: float

    @cached_property
    def relevant(self) -> np.ndarray:
        return np.flatnonzero(self.test["rating"].to_numpy() >= self.threshold)

    @cached_property
    def u(self) -> np.ndarray:  # users of the relevant test rows
        return self.test["user"].to_numpy()[self.relevant]

    @cached_property
    def i(self) -> np.ndarray:  # items of the relevant test rows
        return self.test["item"].to_numpy()[self.relevant]


class Estimator:
    """Base class of the package's estimators: subclass it and :func:`register` an instance.

    A subclass sets these class attributes and defines :meth:`terms` (per-user terms whose
    mean is the estimate), :meth:`compare` (its estimates in the comparison), or both:

    * ``name``: its key (``estimator=name``), and ``rb.<name>`` when it has a function;
    * ``family`` and ``label``: its rows in :func:`~recbias_tutorial.comparison.compare_methods`
      (a subclass with several rows overrides :meth:`methods`);
    * ``function``: its public function, or the name of the package module (e.g.
      ``"estimators"``) that defines a function called ``name``; None when there is none;
    * ``propensity``: None, ``"relative"`` (propensities of any positive scale) or
      ``"absolute"`` (probabilities in (0, 1]);
    * ``needs_n_relevant``: whether it needs the true number of relevant items of each user.

    Examples
    --------
    >>> from recbias_tutorial import estimators
    >>> type(estimators.registered()[0]).__name__, estimators.registered()[0].per_user
    ('AOA', True)
    """

    name: ClassVar[str] = ""
    family: ClassVar[str] = "other"
    label: ClassVar[str] = ""
    function: ClassVar[Any] = None
    propensity: ClassVar[str | None] = None
    needs_n_relevant: ClassVar[bool] = False

    def public_function(self) -> Any:
        """The public function of this estimator, or None."""
        function = type(self).function  # a plain function, not bound to the instance
        if isinstance(function, str):
            import importlib

            return getattr(importlib.import_module(f"recbias_tutorial.{function}"), self.name)
        return function

    @property
    def per_user(self) -> bool:
        """Whether it has per-user terms (:func:`~recbias_tutorial.estimators.user_values`)."""
        return type(self).terms is not Estimator.terms

    def terms(self, gain: np.ndarray, users: np.ndarray, p: np.ndarray | None,
              n_relevant: np.ndarray | None, n_users: int) -> pd.Series:
        """Per-user terms (indexed by ``user``) whose mean is the estimate, from the gains of
        the relevant test rows, their users, their propensities and the true counts."""
        raise NotImplementedError

    def methods(self, options: _k.Options) -> list[str]:
        """Labels of its rows in the comparison, in the order of :meth:`compare`."""
        return [self.label or self.name]

    def compare(self, s: _k.Setup, o: _k.Options, d: Redraw) -> list[np.ndarray]:
        """Its estimates of every model on one redraw: one (n_models, 2) array per label.

        Generic kernel from :meth:`terms`: recall gains :math:`1[Z<k]` and nDCG gains
        :math:`\\mathrm{dcg}(Z)\\, n_u / \\mathrm{IDCG}(\\min(k, n_u))` of the relevant rows of the
        test log, with the true propensities.
        """
        if not self.per_user:
            raise NotImplementedError(f"{type(self).__name__} defines neither terms nor compare")
        u, i = d.u, d.i
        out = np.full((s.z.shape[0], 2), np.nan)
        if len(u) == 0:
            return [out]
        p = s.propensity[u, i] if self.propensity else None
        n_rel = s.n_true if self.needs_n_relevant else None
        n_rows = np.bincount(u, minlength=s.n_users)[u]
        norm = n_rows / ideal_dcg(s.k, n_rows)
        for m in range(s.z.shape[0]):
            z = s.z[m, u, i].astype(np.int64)
            for col, gain in enumerate(((z < s.k).astype(float), dcg_gain(z, s.k) * norm)):
                out[m, col] = float(self.terms(gain, u, p, n_rel, s.n_users).mean())
        return [out]

    def key(self) -> tuple[str, str] | None:
        """What identifies it in a cache key; None for a class defined outside the package,
        whose code the package's fingerprint does not cover (its results are not stored)."""
        cls = type(self)
        if not cls.__module__.startswith("recbias_tutorial."):
            return None
        return cls.__module__, cls.__qualname__


_REGISTRY: dict[str, Estimator] = {}


def register(estimator: Estimator, *, replace: bool = False) -> Estimator:
    """Add an estimator to the package's list, after the others.

    From then on it is an ``estimator=`` choice of
    :func:`~recbias_tutorial.estimators.user_values`, :func:`~recbias_tutorial.estimators.bootstrap_ci`
    and :func:`~recbias_tutorial.distributed.estimate` (if it defines ``terms``), a row of
    :func:`~recbias_tutorial.comparison.compare_methods`, and ``rb.<name>`` if it has a
    ``function``. No other edit is needed.

    Parameters
    ----------
    estimator : Estimator
        An instance of a subclass of :class:`Estimator` that defines ``terms`` (per-user
        terms; compared with a generic kernel) or ``compare`` (its own comparison kernel).
    replace : bool, default False
        Replace an estimator registered under the same name (it keeps its place).

    Returns
    -------
    Estimator
        ``estimator``, registered.

    Raises
    ------
    ValueError
        If ``estimator`` is not an :class:`Estimator` instance, defines neither ``terms``
        nor ``compare``, its ``name`` is not a Python identifier, or the name is taken and
        ``replace`` is False.

    See Also
    --------
    recbias_tutorial.estimators.unregister : remove it again.
    recbias_tutorial.estimators.registered : the list, in order.

    Examples
    --------
    >>> import pandas as pd
    >>> from recbias_tutorial import estimators
    >>> class BestItem(estimators.Estimator):
    ...     name, family, label = "best_item", "log", "best item (log)"
    ...     def terms(self, gain, users, p, n_relevant, n_users):
    ...         return pd.Series(gain).groupby(users).max().rename_axis("user")
    >>> _ = estimators.register(BestItem())
    >>> "best_item" in estimators.ESTIMATORS
    True
    >>> _ = estimators.unregister("best_item")
    """
    if not isinstance(estimator, Estimator):
        raise ValueError(f"estimator must be an Estimator instance, got {type(estimator).__name__}")
    if not estimator.per_user and type(estimator).compare is Estimator.compare:
        raise ValueError(f"estimator must define terms or compare; {type(estimator).__name__} "
                         "defines neither")
    name = estimator.name
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"estimator.name must be a Python identifier, got {name!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"estimator.name {name!r} is already registered (pass replace=True)")
    _REGISTRY[name] = estimator
    return estimator


def unregister(name: str) -> Estimator:
    """Remove an estimator from the package's list.

    Parameters
    ----------
    name : str
        The name it was registered under.

    Returns
    -------
    Estimator
        The estimator removed.

    Raises
    ------
    ValueError
        If no estimator is registered under ``name``.

    Examples
    --------
    >>> from recbias_tutorial import estimators
    >>> estimators.unregister("no_such_estimator")
    Traceback (most recent call last):
    ...
    ValueError: name must be a registered estimator ('aoa', 'ips', 'snips', 'stratified', 'intervene', 'ure_recall', 'recall_at_kbar'), got 'no_such_estimator'
    """
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(f"name must be a registered estimator {tuple(_REGISTRY)}, got {name!r}")
    return _REGISTRY.pop(name)


def registered() -> tuple[Estimator, ...]:
    """Every registered estimator, in the order the comparison reports them.

    Returns
    -------
    tuple of Estimator
        The package's own (``aoa``, ``ips``, ``snips``, ``stratified``, ``intervene``,
        ``ure_recall``, ``recall_at_kbar``), then any added with :func:`register`.

    Examples
    --------
    >>> from recbias_tutorial import estimators
    >>> [e.name for e in estimators.registered()][:3]
    ['aoa', 'ips', 'snips']
    """
    return tuple(_REGISTRY.values())


def per_user_names() -> tuple[str, ...]:
    """Names of the estimators with per-user terms."""
    return tuple(name for name, e in _REGISTRY.items() if e.per_user)


def lookup(name: str) -> Estimator:
    """The estimator registered as ``name``; the callers declare ``estimator`` as one of the
    registered names (``Options(per_user_names)``), so it is not checked again."""
    return _REGISTRY[name]


def method_names(o: _k.Options) -> list[tuple[str, str]]:
    """(family, label) of every comparison row, in the order of :func:`run_redraw`."""
    return [(e.family, label) for e in registered() for label in e.methods(o)]


def run_redraw(s: _k.Setup, o: _k.Options, test: pd.DataFrame, random: pd.DataFrame,
               int_rng: np.random.Generator) -> np.ndarray:
    """Every estimator's estimates on one redraw: array (n_methods, n_models, 2)."""
    d = Redraw(test, random, int_rng, threshold=s.threshold)
    out: list[np.ndarray] = []
    for e in registered():
        values = e.compare(s, o, d)
        if len(values) != len(e.methods(o)):
            raise ValueError(f"{type(e).__name__}.compare returned {len(values)} arrays for "
                             f"{len(e.methods(o))} labels")
        out += values
    return np.stack(out)


def cache_key() -> list | None:
    """The registry in a result-cache key; None when an estimator cannot be keyed."""
    keys = [(e.name, e.key()) for e in registered()]
    return None if any(k is None for _, k in keys) else [[n, *k] for n, k in keys]
