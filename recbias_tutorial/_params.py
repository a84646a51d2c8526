"""Declared argument rules: each public function states its constraints once.

Model: scikit-learn's ``validate_params`` (``Interval``, ``StrOptions``,
``prefer_skip_nested_validation``). A public function is decorated with :func:`declare`,
mapping argument names to rules; the decorator checks them before the body runs, with the
messages of :mod:`recbias_tutorial._validation` (they name the argument and what is wrong).
A declared function called by another declared function while that one runs does not check
again (its arguments were validated at the boundary). Rules only say what can be said
without the data (a cut-off is declared an integer: its range 1..n_items, which the message
states, depends on the scores and is checked in the body); the bad-input tests are generated
from the declarations (:meth:`Rule.bad_values`).
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

from ._validation import check_choice, check_int, check_real, check_seed

_NESTED = threading.local()  # set while a declared function runs in this thread


class Rule:
    """A constraint on one argument; ``None`` is accepted when ``optional``."""

    optional: bool = False

    def check(self, value: Any, name: str) -> Any:
        if value is None and self.optional:
            return None
        return self._check(value, name)

    def _check(self, value: Any, name: str) -> Any:
        raise NotImplementedError

    def bad_values(self) -> list:
        """Values this rule refuses (the generated bad-input tests use them)."""
        return [] if self.optional else [None]


class Interval(Rule):
    """An integer (``kind=int``) or finite real (``kind=float``) between ``low`` and ``high``
    (None: unbounded); ``open`` names the excluded ends: ``"low"``, ``"high"`` or ``"both"``."""

    def __init__(self, kind: type, low: float | None = None, high: float | None = None, *,
                 open: str = "", optional: bool = False):
        if kind not in (int, float):
            raise ValueError(f"kind must be int or float, got {kind!r}")
        self.kind, self.low, self.high, self.optional = kind, low, high, optional
        self.low_open = open in ("low", "both")
        self.high_open = open in ("high", "both")

    def _check(self, value, name):
        if self.kind is int:
            return check_int(value, name, self.low, self.high)
        return check_real(value, name, low=self.low, high=self.high, low_open=self.low_open,
                          high_open=self.high_open)

    def bad_values(self):
        bad = [*super().bad_values(), "1", True, float("nan")]
        if self.kind is int:
            bad.append(1.5)
        if self.low is not None:
            bad.append(self.low - 1 if not self.low_open else self.low)
        if self.high is not None:
            bad.append(self.high + 1 if not self.high_open else self.high)
        return bad


class Options(Rule):
    """One of a fixed tuple of values, or of those a callable returns when the call is made
    (e.g. the registered estimators)."""

    def __init__(self, choices: tuple | Callable[[], tuple], *, optional: bool = False):
        self.choices, self.optional = choices, optional

    def _check(self, value, name):
        return check_choice(value, name, self.choices() if callable(self.choices) else self.choices)

    def bad_values(self):
        return [*super().bad_values(), "no such option", 3.5]


class Either(Rule):
    """A value that one of several rules accepts (the first that does gives the value)."""

    def __init__(self, *rules: Rule, optional: bool = False):
        if not rules:
            raise ValueError("Either needs at least one rule")
        self.rules, self.optional = rules, optional

    def _check(self, value, name):
        errors = []
        for rule in self.rules:
            try:
                return rule.check(value, name)
            except ValueError as err:
                errors.append(str(err))
        raise ValueError("; or ".join(errors))

    def bad_values(self):
        def refused(value) -> bool:
            try:
                self._check(value, "x")
            except ValueError:
                return True
            return False

        union = [v for rule in self.rules for v in rule.bad_values()]
        return [v for i, v in enumerate(union) if refused(v) and not any(
            v is w or (type(v) is type(w) and v == w) for w in union[:i])]


class Seed(Rule):
    """A seed: a non-negative int or a :class:`numpy.random.Generator` (required)."""

    def _check(self, value, name):
        return check_seed(value, name)

    def bad_values(self):
        return [None, -1, 1.5, "0", True]


def declare(*, skip_nested: bool = True, **rules: Rule) -> Callable:
    """Check the arguments named in ``rules`` on every call from outside another declared
    function; the rules are kept as ``function.__rules__``.

    ``skip_nested=False`` for a function that forwards arguments it does not declare (e.g.
    ``**kwargs``) to another declared function: that one then checks them.
    """

    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)
        unknown = set(rules) - set(signature.parameters)
        if unknown:
            raise ValueError(f"rules name arguments {sorted(unknown)} that "
                             f"{function.__qualname__} does not have")

        @functools.wraps(function)
        def checked(*args, **kwargs):
            if getattr(_NESTED, "active", False):
                return function(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            for name, rule in rules.items():
                bound.arguments[name] = rule.check(bound.arguments[name], name)
            if not skip_nested:
                return function(*bound.args, **bound.kwargs)
            _NESTED.active = True
            try:
                return function(*bound.args, **bound.kwargs)
            finally:
                _NESTED.active = False

        checked.__rules__ = dict(rules)
        return checked

    return decorate


def check_forwarded(function: Callable, kwargs: dict) -> dict:
    """``kwargs`` that a declared function forwards to the declared ``function`` (e.g. its
    ``**kwargs``), checked by ``function``'s rules, so that the nested call need not."""
    rules = declared(function)
    return {name: rules[name].check(value, name) if name in rules else value
            for name, value in kwargs.items()}


def declared(function: Callable) -> dict[str, Rule]:
    """The rules ``function`` declares (empty if none); for a class, its ``__init__``'s."""
    if isinstance(function, type):
        function = function.__dict__.get("__init__", None)
    return dict(getattr(function, "__rules__", {}))
