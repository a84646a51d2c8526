"""Root conftest (tests and doctests): the on-disk fit cache is off unless a test turns it on.

Off in this process only (not through the environment), so tests that rely on a model being
fitted in place, and the user's cache folder, stay untouched, while servers the tests start
(JupyterLab) read the cache as a student's would. tests/models/test_fit_cache.py turns it
on, in a temporary folder.
"""

import pytest

# scripts that made a test's reference data (they need what CI has not: TensorFlow), not tests
collect_ignore_glob = ["tests/fixtures/*"]


@pytest.fixture(autouse=True, scope="session")
def _fit_cache_off():
    from recbias_tutorial.models import _cache

    _cache.ENABLED_BY_DEFAULT = False
    yield
    _cache.ENABLED_BY_DEFAULT = True
