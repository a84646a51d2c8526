"""The margins verdicts are decided against: each row's smallest difference that matters (private).

Re-exported by :mod:`recbias_tutorial.replications.report`. A margin is never smaller than the
paper's rounding (half a unit of its last printed digit, summed over the printed values a
number is computed from), and for a number the paper draws a conclusion from it is half the
gap to the nearest value the paper sets it against: another model's value when the paper
ranks models, another evaluation's when it compares evaluations, no effect for a change or a
gain, τ one swap away. Inside ``paper ± m`` a value is closer to the paper's number than to
anything the paper tells it apart from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from ._params import Interval, declare
from ._validation import check_int, check_real


class Margin(NamedTuple):
    """A declared margin: its value and the reason for it, in words for the report."""

    value: float
    reason: str


@declare(decimals=Interval(int, 0, 12), terms=Interval(int, 1))
def half_unit(decimals: int, *, terms: int = 1) -> float:
    """The rounding of a number printed with ``decimals`` decimals: half a unit of its last
    digit, times the ``terms`` printed values it is computed from (a difference of two: one
    unit).

    Raises
    ------
    ValueError
        If ``decimals`` is not an int in 0..12 or ``terms`` not an int >= 1.

    Examples
    --------
    >>> half_unit(3), half_unit(1, terms=2)
    (0.0005, 0.1)
    """
    return round(terms * 0.5 * 10.0 ** -decimals, decimals + 2)


@declare(paper=Interval(float), rounding=Interval(float, 0.0, open="low"))
def distinction_margin(paper: float, against: Mapping[str, float], *, rounding: float) -> Margin:
    """Half the gap from the paper's number to the nearest value it is set against, never less
    than its rounding.

    Parameters
    ----------
    paper : float
        The paper's number.
    against : mapping of str to float
        The values the paper tells this number apart from, by what they are (e.g. ``{"DR":
        0.7195, "IPS": 0.6572}`` for a model it ranks, ``{"no effect": 0.0}`` for a gain).
    rounding : float
        The paper's rounding of the number (:func:`half_unit`), > 0.

    Returns
    -------
    Margin
        ``value = max(rounding, min |paper - v| / 2)`` and its ``reason``.

    Raises
    ------
    ValueError
        If ``paper`` or ``rounding`` (> 0) is not a finite number, or ``against`` is not a
        non-empty mapping of names to finite numbers, none equal to ``paper`` (a number is
        not told apart from itself).

    Examples
    --------
    >>> distinction_margin(0.0095, {"MF": 0.0131, "DR": 0.0075}, rounding=half_unit(4)).value
    0.001
    >>> distinction_margin(0.4, {"no effect": 0.0}, rounding=half_unit(1, terms=2)).reason
    'half the gap to no effect (0)'
    """
    if not isinstance(against, Mapping) or not against:
        raise ValueError(f"against must be a non-empty mapping of names to the values the paper "
                         f"sets its number against, got {against!r:.60}")
    values = {}
    for name, value in against.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"against must name each value with a non-empty string, got "
                             f"{name!r}")
        values[name] = check_real(value, f"against[{name!r}]")
    nearest = min(values, key=lambda k: (abs(values[k] - paper), k))
    gap = abs(values[nearest] - paper)
    if gap <= 1e-12:
        raise ValueError(f"against[{nearest!r}] equals the paper's number {paper:g}: a number "
                         "is not told apart from itself")
    half = round(gap / 2, 12)
    shown = f"{nearest} ({values[nearest]:.4g})"
    if half >= rounding:
        return Margin(float(half), f"half the gap to {shown}")
    return Margin(float(rounding), f"the paper's rounding, {rounding:g} (half the gap to "
                                   f"{shown} is {half:.2g})")


def ratio_rounding(numerator: float, denominator: float, *, decimals: int) -> float:
    """The rounding of ``numerator / denominator - 1`` when both are printed with ``decimals``
    decimals: the largest change of the ratio within half a unit of each (to first order)."""
    check_int(decimals, "decimals", 0, 12)
    num, den = check_real(numerator, "numerator"), check_real(denominator, "denominator")
    if den == 0:
        raise ValueError("denominator must not be 0")
    u = 0.5 * 10.0 ** -decimals
    return float(u / abs(den) + u * abs(num) / den ** 2)

