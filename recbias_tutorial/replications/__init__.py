"""Each module reproduces one paper's protocol as its authors ran it, and returns tidy frames.

* :mod:`~recbias_tutorial.replications.yang2018` — Yang et al., RecSys 2018: IPS / SNIPS with
  popularity propensities;
* :mod:`~recbias_tutorial.replications.carraro2022` — Carraro & Bridge, J. Intell. Inf. Syst.
  2022 (and SAC 2020): intervened test sets (FULL, REG, SKEW, WTD, WTD_H) against MAR ground
  truth (``carraro_bridge``, its old name, still imports, with a warning);
* :mod:`~recbias_tutorial.replications.jadidinejad2021` — Jadidinejad, Macdonald & Ounis,
  SIGIR 2021: propensity-stratified evaluation over a model zoo (Simpson's paradox);
* :mod:`~recbias_tutorial.replications.wang2025` — Wang et al., WWW 2025: Recall@K̄ on randomly
  exposed data against URE;
* :mod:`~recbias_tutorial.replications.report` — the four papers' headline numbers beside our
  stored runs, each graded on one scale (the book's Replication report page).

Every paper is one subpackage of one shape: a public front (``<paper>/__init__.py``: the
paper's entry points, with numpydoc) over private modules named by role (``_protocol.py``,
``_tables.py``, the course's own ``_extensions.py``, labelled as such, ...). Within a paper,
calls go one way: tables and extensions call the protocol, the protocol calls the package's
kernels, and nothing calls back up. Where a paper and its authors' code differ, the
code is followed and the docstring says so.
Modules load on first use (some import Cornac).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["carraro2022", "jadidinejad2021", "report", "wang2025", "yang2018"]
#: Old names kept for one release (importing one warns; see each alias module).
DEPRECATED = {"carraro_bridge": "carraro2022"}


def __getattr__(name: str) -> Any:
    if name not in __all__ and name not in DEPRECATED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f".{name}", __name__)
    globals()[name] = module
    return module


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
