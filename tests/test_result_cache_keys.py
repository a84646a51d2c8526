"""The result cache's keys do not move when the callers stop deriving them (issue 58).

Every caller of :mod:`recbias_tutorial._result_cache` used to build its own key parts from the
private ``models._cache`` (``model_tokens``, ``data_digest``); now they pass the models and the
frames and the cache derives the keys. A stored entry stays valid only if the key is the same
string, so the file names (``<function>-<key[:32]>.joblib``) and the full keys the calls
produce are compared with those the code before the change produced (recorded at commit
e21cb27 by running :func:`_entries`). The package's source fingerprint is held fixed: it is
part of every key, and any edit of the code changes it (as it should).

If a model class, ``simulate`` or a protocol's arguments change on purpose, these keys change
with them: record them again with the new code (``python tests/test_result_cache_keys.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("joblib")
pytest.importorskip("cornac")


def _entries(folder) -> dict:
    """``{file name: full key}`` of the entries the keyed call sites write into ``folder``."""
    import joblib

    import recbias_tutorial as rb
    from recbias_tutorial.debiased_mf import fit_mf
    from recbias_tutorial.models import PosPop
    from recbias_tutorial.replications import carraro2022, jadidinejad2021, wang2025, yang2018

    world = rb.simulate(60, 40, seed=0, mean_ratings_per_user=12)
    fit_mf(world.mnar, n_users=world.n_users, n_items=world.n_items, seed=1, epochs=2,
           factors=2, cache=True)
    carraro2022.run_protocol(world, {"PosPop": PosPop}, seeds=[0], sizes=(1.0,), cache=True)
    carraro2022.tune(world, {"PosPop": {"t=4": PosPop, "t=3": lambda: PosPop(threshold=3.0)}},
                     seed=0, cache=True)
    yang2018.split_user_table({"PosPop": PosPop(threshold=4.0)}, world, seed=0, cache=True)
    scores = {"a": np.random.default_rng(0).random((world.n_users, world.n_items))}
    sets = {"full": world.full, "mar": world.mar}
    for exclude in (world.mnar, None):
        list(wang2025.model_curves(scores, sets, [1, 5], random_sets={"mar": world.mar},
                                   k_bars=[1, 2], threshold=4.0, exclude=exclude, cache=True))
    jadidinejad2021.protocol_values(world, seeds=[0], sizes=(10,), ks=(None,),
                                    families=("MostPop",), cache=True)
    return {path.name: joblib.load(path)["key"]
            for path in sorted((folder / "results").glob("*.joblib"))}


#: What the code before the change wrote (commit e21cb27, source fingerprint "fixed").
BEFORE = {
    "carraro2022.run_protocol-87630df0976eba402fd04233d85c6ffa.joblib":
        "87630df0976eba402fd04233d85c6ffa65b8b15d5e1c98544341d75320c84f05",
    "carraro2022.tune-f378a6c4ff2137a5254b3c0c30ad61f6.joblib":
        "f378a6c4ff2137a5254b3c0c30ad61f6341329d83d5daff588a58034d4225e32",
    "debiased_mf.fit_mf-b5ada2c3a9ef884a9be8ef3e33b4eff1.joblib":
        "b5ada2c3a9ef884a9be8ef3e33b4eff127f52194cff3100d1256e6435f43b58c",
    "jadidinejad2021.protocol_values-e3006568c165ce7a6dc748713cff7d7c.joblib":
        "e3006568c165ce7a6dc748713cff7d7c08c418b845482a90d55b9d1c15340c40",
    "jadidinejad2021.unit_values-26340badcf3bbd01eb8e313276d7db27.joblib":
        "26340badcf3bbd01eb8e313276d7db2788d84d670b376f85512a1760e2a45c9c",
    "jadidinejad2021.unit_values-54d3cfcf3f453a2d0987f5715dab48a8.joblib":
        "54d3cfcf3f453a2d0987f5715dab48a8cb659c457bebd79e48b304548000820a",
    "wang2025.model_curves-3d40ff936abfe3aaa748ef31fda38627.joblib":
        "3d40ff936abfe3aaa748ef31fda38627ebc881e1e4adb4b072af36043ad7a43c",
    "wang2025.model_curves-857730728a2da5c99078155411373670.joblib":
        "857730728a2da5c99078155411373670f9eadc1149902d0eef81da3a8db1cc80",
    "yang2018.split_user_table-377c65d2463252a15c6dc161607f10e6.joblib":
        "377c65d2463252a15c6dc161607f10e6e5021a2f3df7a3f2043736c7521e251a",
}


@pytest.fixture
def fixed_environment(tmp_path, monkeypatch):
    from recbias_tutorial import _result_cache

    monkeypatch.setenv("RECBIAS_FIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_result_cache, "_environment", lambda: "fixed")
    return tmp_path


def test_every_call_site_writes_the_keys_it_wrote_before(fixed_environment):
    assert _entries(fixed_environment) == BEFORE


def test_data_key_rules():
    import pandas as pd

    from recbias_tutorial._result_cache import data_key
    from recbias_tutorial.models._cache import data_digest

    frame = pd.DataFrame({"user": [0, 1], "item": [1, 0], "rating": [5.0, 1.0]})
    assert data_key(frame, (2, 3)) == data_digest(frame, 2, 3)
    assert data_key({"a": frame}) == f"'a'={data_digest(frame, 0, 0)}"
    assert data_key([None, "ready", {"a": frame}]) == f"-|ready|'a'={data_digest(frame, 0, 0)}"
    assert data_key({"s": np.zeros(3)}).startswith("s=<f8(3,):")
    # no faithful key: computed, never stored
    assert data_key({"a": frame, "s": np.zeros(3)}) is None  # frames mixed with arrays
    assert data_key({"a": frame.drop(columns="rating")}) is None  # a frame without ratings
    assert data_key(frame.drop(columns="item")) is None
    assert data_key({"s": np.array(["x"])}) is None  # not numeric
    assert data_key(["ok", {"a": frame.drop(columns="user")}]) is None  # one part without


def test_models_are_keyed_by_the_cache_and_never_twice(fixed_environment):
    from recbias_tutorial._result_cache import cache_enabled, cached_result
    from recbias_tutorial.models import PosPop

    runs = []

    def compute():
        runs.append(1)
        return {"x": np.arange(3)}

    model = PosPop()
    assert cached_result("test.models", "d", {}, compute, cache=True, models={"m": model})[1] is False
    assert cached_result("test.models", "d", {}, compute, cache=True, models={"m": model})[1] is True
    other = PosPop(threshold=3.0)  # another pre-fit state: another key
    assert cached_result("test.models", "d", {}, compute, cache=True, models={"m": other})[1] is False
    tampered = PosPop()
    tampered.extra = 1  # a state its parameters do not describe: computed, never stored
    for _ in range(2):
        assert cached_result("test.models", "d", {}, compute, cache=True,
                             models={"m": tampered})[1] is False
    assert len(runs) == 4
    with pytest.raises(ValueError, match="models"):
        cached_result("test.models", "d", {"models": 1}, compute, cache=True, models={"m": model})
    for bad in ("yes", 1, 0.5):
        with pytest.raises(ValueError, match="cache"):
            cache_enabled(bad)


if __name__ == "__main__":  # record the keys of the code as it is
    import pprint
    import tempfile
    from pathlib import Path

    from recbias_tutorial import _result_cache

    _result_cache._environment = lambda: "fixed"
    with tempfile.TemporaryDirectory() as folder:
        import os

        os.environ["RECBIAS_FIT_CACHE_DIR"] = folder
        pprint.pprint(_entries(Path(folder)), width=100)
