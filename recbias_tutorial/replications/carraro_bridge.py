"""Deprecated: renamed :mod:`recbias_tutorial.replications.carraro2022` (after the journal paper
whose tables it reproduces, bibliography key ``carraro2022sampling``). This alias keeps homework
that imports the old name working for one release, with a ``FutureWarning``."""

from __future__ import annotations

import warnings

from .carraro2022 import *  # noqa: F403  (the same objects under the old name)
from .carraro2022 import __all__  # noqa: F401

warnings.warn("recbias_tutorial.replications.carraro_bridge is renamed "
              "recbias_tutorial.replications.carraro2022; the old name will be removed in the "
              "next release", FutureWarning, stacklevel=2)
