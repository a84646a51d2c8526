"""Optional dependencies: imported where they are used, with a message naming the extra.

The core (estimators, metrics, propensities, sampling, statistics, simulated worlds, charts)
needs NumPy, SciPy, pandas and Altair only, the packages the browser edition's Python (Pyodide)
ships. The rest is an extra of the package:

=============  ===========================================================================
``models``     Cornac, Numba, joblib, tqdm: Cornac models, their compiled training loops,
               the on-disk caches of fitted scores and results
``data``       pooch: downloading Coat, MovieLens-100K and KuaiRec
``replicate``  powerlaw (and ``models``, ``data``): the full-scale replications
``export``     vl-convert: the charts' static SVG beside their Vega-Lite spec
=============  ===========================================================================

Examples
--------
>>> require("numpy", "the estimators").__name__
'numpy'
>>> require("no_such_module_xyz", "a chart")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
recbias_tutorial._optional.MissingDependency: a chart needs no_such_module_xyz, ...
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from types import ModuleType

#: import name -> (distribution name, the extra of recbias_tutorial that installs it)
EXTRAS = {
    "cornac": ("cornac", "models"),
    "numba": ("numba", "models"),
    "joblib": ("joblib", "models"),
    "tqdm": ("tqdm", "models"),
    "pooch": ("pooch", "data"),
    "powerlaw": ("powerlaw", "replicate"),
    "vl_convert": ("vl-convert-python", "export"),
}


class MissingDependency(ModuleNotFoundError):
    """An optional library is not installed; the message names the extra that installs it."""


def available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def install_hint(module: str) -> str:
    """``pip install 'recbias_tutorial[<extra>]'`` for an optional module (or the module itself)."""
    dist, extra = EXTRAS.get(module, (module, None))
    return f"pip install 'recbias_tutorial[{extra}]'" if extra else f"pip install {dist}"


def require(module: str, purpose: str) -> ModuleType:
    """``import module``, or :class:`MissingDependency` saying that ``purpose`` needs it and
    which extra installs it. tqdm's notice that ipywidgets is missing ("IProgress not found",
    raised by ``tqdm.auto``, which Cornac and pooch import) is silenced: bars are off."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="IProgress not found")
            return importlib.import_module(module)
    except ModuleNotFoundError as err:
        top = module.split(".")[0]
        if err.name is not None and err.name.split(".")[0] != top:
            raise  # the module is there but one of its own dependencies is missing
        raise MissingDependency(
            f"{purpose} needs {top}, which is not installed here (the core of recbias_tutorial "
            f"runs without it, e.g. in the browser edition): {install_hint(top)}",
            name=top) from None
