"""Power-law propensities as two versions of the ``powerlaw`` package fit them (private kernel).

The public entry is :func:`recbias_tutorial.propensity.powerlaw_propensity`. Jadidinejad et
al.'s ``StratifiedEvaluation._estimate_propensities`` calls ``powerlaw.Fit(counts, discrete=True,
fit_method="Likelihood")``. What that call returns depends on the package's version:

* ``"powerlaw2"`` (powerlaw 2.x, the version installed): the exponent is confined to
  ``[0, 3]`` (``Power_Law.DEFAULT_PARAMETER_RANGES``), a fit that ends near that bound is
  flagged as noise, and the search for :math:`x_{\\min}` skips flagged fits.
* ``"powerlaw1"`` (powerlaw 1.4.x and 1.5, the version the authors ran: both print their log's
  ``4.014793, min=28`` on Coat): no bound; at every candidate :math:`x_{\\min}` the exponent is
  Clauset et al.'s discrete approximation :math:`1 + n / \\sum \\ln(x / (x_{\\min} - 1/2))`,
  and :math:`x_{\\min}` minimises the Kolmogorov-Smirnov distance.

The two agree whenever the best fit has :math:`\\alpha \\le 3` (Yahoo! R3), and differ when it
does not (Coat).
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings

import numpy as np

from ._optional import require

#: The fits of :func:`fit_powerlaw`: the installed package's (2.x) and the authors' (1.x).
POWERLAW_FITS = ("powerlaw2", "powerlaw1")


@contextlib.contextmanager
def _quiet():
    """powerlaw prints progress, warns and logs on every fit; none of it concerns the caller."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            yield
        finally:
            logging.disable(logging.NOTSET)


def _fit_version1(seen: np.ndarray) -> tuple[float, float]:
    """powerlaw 1.x's ``Fit(discrete=True)``: approximate alpha per x_min, the smallest KS."""
    powerlaw = require("powerlaw", "the authors' power-law propensities")

    x = np.sort(seen)
    candidates = np.unique(x)[:-1]  # 1.x skips the largest value (no tail left to fit)
    if len(candidates) == 0:
        raise ValueError("fewer than two distinct values")
    # the approximation at every candidate at once: n_tail / sum(log(x) - log(x_min - 1/2))
    logs = np.log(x)
    suffix = np.concatenate([np.cumsum(logs[::-1])[::-1], [0.0]])
    start = np.searchsorted(x, candidates, side="left")
    n_tail = len(x) - start
    alphas = 1.0 + n_tail / (suffix[start] - n_tail * np.log(candidates - 0.5))
    # the KS distance by powerlaw's own code, at the given alpha (a loop over distinct counts)
    distances = np.empty(len(candidates))
    for j, (xmin, alpha) in enumerate(zip(candidates, alphas)):
        law = powerlaw.Power_Law(xmin=xmin, discrete=True, parameters=[alpha],
                                 parameter_ranges={"alpha": [None, None]}, verbose=0)
        law.compute_distance_metrics(x)
        distances[j] = law.D
    best = int(np.nanargmin(distances))  # the first of ties, as 1.x's argmin
    return float(alphas[best]), float(candidates[best])


def fit_powerlaw(counts: np.ndarray, fit: str = "powerlaw2") -> tuple[np.ndarray, float, float]:
    """``StratifiedEvaluation._estimate_propensities``: n^alpha above x_min, n at or below."""
    powerlaw = require("powerlaw", "the authors' power-law propensities")

    counts = np.asarray(counts, dtype=float)
    seen = counts[counts > 0]
    with _quiet():
        try:
            if fit == "powerlaw1":
                alpha, xmin = _fit_version1(seen)
            else:
                law = powerlaw.Fit(seen, discrete=True, fit_method="Likelihood",
                                   verbose=False).power_law
                alpha, xmin = float(law.alpha), float(law.xmin)
        except ValueError as err:  # powerlaw's own message names none of our arguments
            raise ValueError(f"counts cannot be fitted by a power law ({err}); they need "
                             "more, and more varied, positive counts") from None
    p = np.where(counts > xmin, counts ** alpha, counts)
    return p, alpha, xmin
